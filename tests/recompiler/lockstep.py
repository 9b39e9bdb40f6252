"""Lockstep debugging of a recompiled Linux program against Unicorn (a developer tool, used by
tests/recompiler/test_lockstep.py too).

    python tests/recompiler/lockstep.py [--stdin=FILE] [--args-only] BUNDLE ARGV0 ARGS...

The bundle must be built with NXRECOMP_RECOMPILER_TRACE=1: each lifted function logs the
registers at its entry.  A wrong result that only optimised builds show: build with
NXRECOMP_RECOMPILER_ENTRY_LOG=1 instead (every optimisation kept, each function logs its C
arguments X0, X1, X29, X30 and SP) and pass ``--args-only``.  Unicorn runs the same program from the same initial state (same stack,
same AT_RANDOM, the same answers to ID-register reads) through the same system-call personality
and logs the registers at the same addresses.  The first record that differs names the function
where the lifted code went wrong (the one entered before it).  Entries only one side logs
(labels the lifted code reaches inside a function's C, loop heads at a function's first
instruction that Unicorn's block hook sees) are noted and skipped (``compare``)."""

from __future__ import annotations

import fcntl
import json
import os
import struct
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

# entry, X0-X30, SP, NZCV, then V0-V31 as (low 64 bits, high 64 bits)
REC = struct.Struct("<98Q")
# the fields a bundle built with recompiler.entry_log logs (X0, X1, X29, X30, SP: its C arguments)
ARGS_ONLY = (1, 2, 30, 31, 32)
NAMES = [f"x{i}" for i in range(31)] + ["sp", "nzcv"] + [f"v{i}.{h}" for i in range(32) for h in ("lo", "hi")]


def unicorn_trace(harness_so: str, program: str, argv: list[str], entries: set[int], out: str, limit: int = 2_000_000) -> None:
    """Run ``program`` under Unicorn and write a record at every entry of ``entries``."""
    import tests.cpu_host.test_linux_busybox as drv
    from unicorn import UC_HOOK_BLOCK
    from unicorn.arm64_const import (
        UC_ARM64_REG_NZCV,
        UC_ARM64_REG_Q0,
        UC_ARM64_REG_SP,
        UC_ARM64_REG_X0,
        UC_ARM64_REG_X29,
        UC_ARM64_REG_X30,
    )

    fd = os.open(out, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_APPEND, 0o644)
    # out of the guest's sight, as the lifted run's (dispatch.c nx_trace_entry)
    hi = fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, 900)
    os.close(fd)
    fd = hi
    left = [limit]
    xregs = [UC_ARM64_REG_X0 + i for i in range(29)] + [UC_ARM64_REG_X29, UC_ARM64_REG_X30]

    # NXRECOMP_LOCKSTEP_BLOCKS=N: after N records, also list every block Unicorn runs
    blocks_after = int(os.environ.get("NXRECOMP_LOCKSTEP_BLOCKS", "-1"))
    blocks = open(out + ".blocks", "w") if blocks_after >= 0 else None

    def block(uc, addr, _size, _data):
        if left[0] == limit:  # the lifted run starts with NZCV = 0
            uc.reg_write(UC_ARM64_REG_NZCV, 0)
        if blocks and limit - left[0] >= blocks_after and limit - left[0] < blocks_after + 20:
            blocks.write(f"{addr:#x}\n")
            blocks.flush()
        if addr in entries and left[0] > 0:
            left[0] -= 1
            vals = [addr] + [uc.reg_read(r) for r in xregs] + [uc.reg_read(UC_ARM64_REG_SP), uc.reg_read(UC_ARM64_REG_NZCV)]
            for q in range(32):
                v = uc.reg_read(UC_ARM64_REG_Q0 + q)
                vals += [v & (1 << 64) - 1, v >> 64]
            os.write(fd, REC.pack(*vals))

    drv.drive(harness_so, program, argv, extra_hooks=[(UC_HOOK_BLOCK, block)], random=bytes(16))


def compare(
    a_path: str,
    b_path: str,
    context: int = 3,
    window: int = 8,
    pids: tuple[int, int] | None = None,
    only: tuple[int, ...] | None = None,
) -> str:
    """First record where the two traces differ.  Process and thread ids differ between the
    two runs: with ``pids`` (the lifted run's and Unicorn's process ids), the lifted run's pid or
    a thread id just above it (the lifted guest runs on a thread of its own) counts as the same
    as Unicorn's pid (its guest runs on the main thread), each pairing noted once.  An entry
    only one side logged (the lifted code reached a function's code without entering its C
    function: a jump to a label that is also an entry; or Unicorn's block hook did not see an
    entry that the code before it falls into) is noted and skipped: the traces are realigned
    on the nearest entry both logged, within ``window`` records.  Skipped records are counted
    in the report; every other record is compared register by register (with ``only``, just
    those fields of a record: ``ARGS_ONLY`` for a bundle built with recompiler.entry_log)."""
    a, b = Path(a_path).read_bytes(), Path(b_path).read_bytes()
    na, nb = len(a) // REC.size, len(b) // REC.size
    prev: list[int] = []
    same: dict[int, int] = {}
    notes: list[str] = []
    i = j = 0
    matched = 0

    def entry(buf: bytes, k: int) -> int:
        return REC.unpack_from(buf, k * REC.size)[0]

    # Entries the lifted run never logs are labels it reaches inside a function's own C (an
    # interpreter's computed-goto handlers, which are entries too for what jumps to them from
    # outside); Unicorn logs them at every block that starts there.  Their records are skipped.
    lifted_entries = {entry(a, k) for k in range(na)}
    labels: dict[int, int] = {}

    repeats = 0

    def activation(k: int) -> tuple:
        """Unicorn record k's function, return address and SP."""
        r = REC.unpack_from(b, k * REC.size)
        return r[0], r[31], r[32]

    while i < na and j < nb:
        if entry(b, j) not in lifted_entries:
            labels[entry(b, j)] = labels.get(entry(b, j), 0) + 1
            j += 1
            continue
        ra = list(REC.unpack_from(a, i * REC.size))
        rb = list(REC.unpack_from(b, j * REC.size))
        if ra[0] != rb[0] and j and activation(j) == activation(j - 1):
            repeats += 1  # a jump back to a loop head that is a function's first instruction
            j += 1
            continue
        if ra[0] != rb[0]:
            # the nearest pair of records with the same entry, fewest records skipped first
            best = None
            for total in range(1, 2 * window + 1):
                for di in range(max(0, total - window), min(total, window) + 1):
                    dj = total - di
                    if i + di < na and j + dj < nb and entry(a, i + di) == entry(b, j + dj):
                        best = (di, dj)
                        break
                if best:
                    break
            if best is None:
                lines = notes + [
                    f"first difference at record {i} of the lifted trace, {j} of Unicorn's: control flow went different ways"
                ]
                for p in prev[-context:]:
                    lines.append(f"  before: entry {p:#x}")
                lines.append(f"  lifted  entry {ra[0]:#x}   unicorn entry {rb[0]:#x}")
                return "\n".join(lines)
            skipped_a = [f"{entry(a, i + k):#x}" for k in range(best[0])]
            skipped_b = [f"{entry(b, j + k):#x}" for k in range(best[1])]
            if skipped_a:
                notes.append(f"note: entries only the lifted run logged at its record {i}: {' '.join(skipped_a)}")
            if skipped_b:
                notes.append(f"note: entries only Unicorn logged at its record {j}: {' '.join(skipped_b)}")
            i, j = i + best[0], j + best[1]
            continue
        if i == 0 and j == 0:  # the initial NZCV is not defined by the ABI
            ra[33] = rb[33]
        diff = []
        for k in only or range(1, REC.size // 8):
            x, y = ra[k], rb[k]
            if x == y:
                continue
            if pids and 0 <= x - pids[0] < 64 and y == pids[1] and same.get(x, y) == y:
                if x not in same:
                    same[x] = y
                    notes.append(f"note: treating {x:#x} (lifted) as {y:#x} (unicorn) from record {i}: a process id")
                continue
            diff.append(k)
        if diff and j:
            # A loop whose head is the function's first instruction: Unicorn's block hook logs
            # each jump back to it as an entry (same function, same SP and return address as the
            # record before), the lifted code loops inside its C.  Skip such records while that
            # finds the lifted record's equal.
            k = j
            while (
                k < nb
                and activation(k) == activation(j - 1)
                and b[k * REC.size : (k + 1) * REC.size] != a[i * REC.size : (i + 1) * REC.size]
            ):
                k += 1
            if k > j and k < nb and b[k * REC.size : (k + 1) * REC.size] == a[i * REC.size : (i + 1) * REC.size]:
                repeats += k - j
                j = k
                continue
        if diff:
            lines = notes + [f"first difference at record {i} of the lifted trace, {j} of Unicorn's (function entry {ra[0]:#x})"]
            for p in prev[-context:]:
                lines.append(f"  before: entry {p:#x}")
            for k in diff:
                lines.append(f"  {NAMES[k - 1]:5} lifted {ra[k]:#018x}  unicorn {rb[k]:#018x}")
            return "\n".join(lines)
        prev.append(ra[0])
        matched += 1
        i, j = i + 1, j + 1
    if repeats:
        notes.append(f"note: {repeats} Unicorn records of jumps back to a function's first instruction (a loop's head) skipped")
    if labels:
        top = sorted(labels.items(), key=lambda kv: -kv[1])[:5]
        notes.append(
            f"note: {sum(labels.values())} Unicorn records of {len(labels)} entries the lifted run "
            f"reaches as labels skipped (" + ", ".join(f"{a:#x} x{n}" for a, n in top) + ")"
        )
    return "\n".join(
        notes + [f"no difference in {matched} matched records (lifted {na}, unicorn {nb - sum(labels.values()) - repeats})"]
    )


def lockstep(
    bundle: Path, prog_argv: list[str], work: Path | None = None, stdin: Path | None = None, only: tuple[int, ...] | None = None
) -> str:
    """Run the traced ``bundle`` and Unicorn on the same program, arguments and standard input
    (a file, or none); ``compare``'s report (plus the blocks Unicorn ran, with
    NXRECOMP_LOCKSTEP_BLOCKS)."""
    bundle = bundle.resolve()
    manifest = json.loads((bundle / "manifest.json").read_text())
    tmp = work or Path(tempfile.mkdtemp(prefix="lockstep-"))
    # both runs get the very same environment and working directory (a program reads them: the
    # environment is on the guest's stack; a shell stats its directory, whose times change when a
    # file is made in it, so the runs' own files go elsewhere): the lifted run's trace file is
    # named in NXRECOMP_TRACE_FILE, Unicorn's driver takes its own as an argument
    lifted, uni = tmp / "lifted.trace", tmp / "unicorn.trace"
    run = tmp / "run"
    run.mkdir(exist_ok=True)
    env = {**os.environ, "NXRECOMP_TRACE_FILE": str(lifted), "NXRECOMP_DETERMINISTIC": "1", "PWD": str(run)}
    import tests.cpu_host.test_linux_busybox as drv

    so = drv.build_harness(tmp)
    entries_file = tmp / "entries.json"
    entries_file.write_text(json.dumps(manifest["functions"]))

    def pid_of_run(cmd: list[str]) -> int:
        """Run ``cmd`` to its end on ``stdin`` in ``run``; its process id (nxrecomp exec
        replaces itself with the bundle's launcher, so the lifted guest's pid is this one)."""
        with open(stdin or os.devnull, "rb") as fin:
            p = subprocess.Popen(cmd, env=env, stdin=fin, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=run)
            p.wait()
        return p.pid

    pa = pid_of_run([sys.executable, "-m", "nxrecomp", "exec", str(bundle), "--", *prog_argv])
    pb = pid_of_run(
        [
            sys.executable,
            str(Path(__file__).resolve()),
            "--unicorn",
            str(so),
            manifest["program"],
            str(entries_file),
            str(uni),
            *prog_argv,
        ]
    )
    report = compare(str(lifted), str(uni), pids=(pa, pb), only=only)
    if os.path.exists(str(uni) + ".blocks"):
        report += "\nunicorn blocks: " + " ".join(Path(str(uni) + ".blocks").read_text().split()[:200])
    return report


def main(argv: list[str]) -> int:
    stdin, only = None, None
    while argv and argv[0].startswith("--"):
        if argv[0].startswith("--stdin="):
            stdin = Path(argv[0].split("=", 1)[1])
        elif argv[0] == "--args-only":  # a bundle built with recompiler.entry_log
            only = ARGS_ONLY
        else:
            raise SystemExit(f"lockstep: unknown option {argv[0]}")
        argv = argv[1:]
    print(lockstep(Path(argv[0]), argv[1:], stdin=stdin, only=only))
    return 0


if __name__ == "__main__":
    if sys.argv[1] == "--unicorn":
        so, prog, entries, out = sys.argv[2:6]
        unicorn_trace(so, prog, sys.argv[6:], set(json.loads(Path(entries).read_text())), out)
    else:
        sys.exit(main(sys.argv[1:]))
