"""Is a recompiled program's gap to its native build in the memory it is given?  Runs the same
command natively and through a bundle and prints, side by side, what the kernel gave each:

    .venv/bin/python bench/memlayout.py --native "PROG ARGS" --ours "BUNDLE/nxrun NAME ARGS" \\
        [--stdin FILE] [--cwd DIR]

- user and system CPU seconds and minor page faults (``getrusage`` of the child, one run);
- peak resident memory, and the peak of ``AnonHugePages`` (transparent huge pages: polled from
  ``/proc/PID/smaps_rollup`` every 20 ms in a second run) and the number of mappings at that peak;
- the host memory system calls made (``strace -f -c`` in a third run: mmap, munmap, mremap, brk,
  madvise, mprotect counts): for ours the guest's mmap family plus the launcher's own; the
  guest's brk never reaches the kernel (the personality moves it inside its reservation).

For ours the process is the launcher (``nxrun``), so its mappings include game.so and the host
libc; the guest's heap is the same process's anonymous memory (guest addresses are host
addresses).  Also prints the kernel's THP settings (``/sys/kernel/mm/transparent_hugepage``).
A diagnosis tool: figures for docs/PERFORMANCE.md come from ``bench/corpus.py --cpu``."""

from __future__ import annotations

import argparse
import re
import resource
import shlex
import shutil
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

THP = Path("/sys/kernel/mm/transparent_hugepage")
CALLS = ("mmap", "munmap", "mremap", "brk", "madvise", "mprotect")


@dataclass
class Usage:
    user: float
    sys: float
    minflt: int
    peak_rss_kb: int
    peak_huge_kb: int
    maps_at_peak: int
    calls: dict[str, int]


def _kb(text: str, key: str) -> int:
    m = re.search(rf"^{key}:\s+(\d+) kB", text, re.M)
    return int(m.group(1)) if m else 0


def run(cmd: list[str], cwd: Path, stdin: Path | None) -> Usage:
    """Three runs: CPU and faults (undisturbed); peaks of resident and huge-page memory (polled);
    the memory system calls (under strace)."""
    r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    with open(stdin or "/dev/null", "rb") as fin:
        done = subprocess.run(cmd, cwd=cwd, stdin=fin, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    if done.returncode:
        raise SystemExit(f"{shlex.join(cmd)} exited {done.returncode}: {done.stderr.decode(errors='replace')[-500:]}")
    r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    with open(stdin or "/dev/null", "rb") as fin:
        p = subprocess.Popen(cmd, cwd=cwd, stdin=fin, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        rss = huge = maps = 0
        while p.poll() is None:
            try:
                roll = Path(f"/proc/{p.pid}/smaps_rollup").read_text()
                n = Path(f"/proc/{p.pid}/maps").read_text().count("\n")
            except (OSError, ProcessLookupError):
                break
            if _kb(roll, "Rss") > rss:
                rss, maps = _kb(roll, "Rss"), n
            huge = max(huge, _kb(roll, "AnonHugePages"))
            time.sleep(0.02)
        p.communicate()
    calls: dict[str, int] = {}
    if shutil.which("strace"):
        with tempfile.NamedTemporaryFile("r", suffix=".strace") as out, open(stdin or "/dev/null", "rb") as fin:
            subprocess.run(
                ["strace", "-f", "-c", "-o", out.name, "-e", "trace=" + ",".join(CALLS), *cmd],
                cwd=cwd,
                stdin=fin,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                check=False,
            )
            for line in out.read().splitlines():
                f = line.split()
                if f and f[-1] in CALLS:  # % time, seconds, usecs/call, calls, [errors], syscall
                    calls[f[-1]] = int(f[3])
    return Usage(
        r1.ru_utime - r0.ru_utime,
        r1.ru_stime - r0.ru_stime,
        r1.ru_minflt - r0.ru_minflt,
        rss,
        huge,
        maps,
        calls,
    )


def thp_settings() -> str:
    out = []
    for name in ("enabled", "defrag", "hugepages-2048kB/enabled", "khugepaged/defrag"):
        f = THP / name
        if f.exists():
            out.append(f"{name}: {f.read_text().strip()}")
    return "; ".join(out) or "no transparent huge pages in this kernel"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--native", required=True, help="the native command line")
    ap.add_argument("--ours", required=True, help="the recompiled command line (BUNDLE/nxrun NAME ARGS)")
    ap.add_argument("--stdin", type=Path, help="a file both read on standard input")
    ap.add_argument("--cwd", type=Path, default=Path.cwd())
    a = ap.parse_args()
    print(f"THP: {thp_settings()}")
    ways = {"native": shlex.split(a.native), "ours": shlex.split(a.ours)}
    res = {k: run(v, a.cwd, a.stdin) for k, v in ways.items()}
    print(f"{'':22} {'native':>12} {'ours':>12}")
    rows = [
        ("user CPU s", lambda u: f"{u.user:.3f}"),
        ("system CPU s", lambda u: f"{u.sys:.3f}"),
        ("minor faults", lambda u: str(u.minflt)),
        ("peak RSS KB", lambda u: str(u.peak_rss_kb)),
        ("peak AnonHugePages KB", lambda u: str(u.peak_huge_kb)),
        ("mappings at peak", lambda u: str(u.maps_at_peak)),
        *((f"{c} calls", lambda u, c=c: str(u.calls.get(c, "-"))) for c in CALLS),
    ]
    for label, fmt in rows:
        print(f"{label:22} {fmt(res['native']):>12} {fmt(res['ours']):>12}")


if __name__ == "__main__":
    main()
