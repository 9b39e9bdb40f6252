"""Lockstep debugging of a recompiled Linux program against Unicorn (a developer tool, used by
tests/recompiler/test_lockstep.py too).

    python tests/recompiler/lockstep.py BUNDLE ARGV0 ARGS...

The bundle must be built with NXRECOMP_RECOMPILER_TRACE=1: each lifted function logs the
registers at its entry.  Unicorn runs the same program from the same initial state (same
stack, same AT_RANDOM) through the same system-call personality and logs the registers at the
same addresses.  The first record that differs names the function where the lifted code went
wrong (the one entered before it)."""
from __future__ import annotations

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

REC = struct.Struct("<34Q")
NAMES = [f"x{i}" for i in range(31)] + ["sp", "nzcv"]


def unicorn_trace(harness_so: str, program: str, argv: list[str], entries: set[int], out: str,
                  limit: int = 2_000_000) -> None:
    """Run ``program`` under Unicorn and write a record at every entry of ``entries``."""
    import tests.cpu_host.test_linux_busybox as drv
    from unicorn import UC_HOOK_BLOCK
    from unicorn.arm64_const import UC_ARM64_REG_NZCV, UC_ARM64_REG_SP, UC_ARM64_REG_X0, UC_ARM64_REG_X29, \
        UC_ARM64_REG_X30

    fd = os.open(out, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_APPEND, 0o644)
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
            vals = [addr] + [uc.reg_read(r) for r in xregs] + [uc.reg_read(UC_ARM64_REG_SP),
                                                                 uc.reg_read(UC_ARM64_REG_NZCV)]
            os.write(fd, REC.pack(*vals))

    drv.drive(harness_so, program, argv, extra_hooks=[(UC_HOOK_BLOCK, block)], random=bytes(16))


def compare(a_path: str, b_path: str, context: int = 3) -> str:
    """First record where the two traces differ.  Process and thread ids differ between the
    two runs: a first difference where both values look like ids (0 < v < pid_max) is noted
    and the pair is treated as equal from then on."""
    a, b = Path(a_path).read_bytes(), Path(b_path).read_bytes()
    n = min(len(a), len(b)) // REC.size
    prev: list[int] = []
    same: dict[int, int] = {}
    notes: list[str] = []
    for k in range(n):
        ra = list(REC.unpack_from(a, k * REC.size))
        rb = list(REC.unpack_from(b, k * REC.size))
        if k == 0:  # the initial NZCV is not defined by the ABI
            ra[33] = rb[33]
        diff = []
        for i in range(34):
            x, y = ra[i], rb[i]
            if x == y or same.get(x) == y:
                continue
            if 0 < x < 4194304 and 0 < y < 4194304 and i > 0 and x not in same:
                same[x] = y
                notes.append(f"note: treating {x:#x} (lifted) as {y:#x} (unicorn) from record {k}: a process id")
                continue
            diff.append(i)
        if diff:
            lines = notes + [f"first difference at record {k} (function entry #{k})"]
            for p in prev[-context:]:
                lines.append(f"  before: entry {p:#x}")
            lines.append(f"  lifted  entry {ra[0]:#x}   unicorn entry {rb[0]:#x}")
            for i in diff:
                if i:
                    lines.append(f"  {NAMES[i - 1]:5} lifted {ra[i]:#018x}  unicorn {rb[i]:#018x}")
            return "\n".join(lines)
        prev.append(ra[0])
    return "\n".join(notes + [f"no difference in {n} records (lifted {len(a) // REC.size}, unicorn {len(b) // REC.size})"])


def main(argv: list[str]) -> int:
    bundle, prog_argv = Path(argv[0]).resolve(), argv[1:]
    manifest = json.loads((bundle / "manifest.json").read_text())
    tmp = Path(tempfile.mkdtemp(prefix="lockstep-"))
    lifted, uni = tmp / "a.trace", tmp / "b.trace"
    # both runs get the very same environment (it is on the guest's stack)
    env = {**os.environ, "NXRECOMP_TRACE_FILE": str(lifted), "NXRECOMP_DETERMINISTIC": "1"}
    subprocess.run([sys.executable, "-m", "nxrecomp", "exec", str(bundle), "--", *prog_argv], env=env,
                   stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL)
    import tests.cpu_host.test_linux_busybox as drv
    so = drv.build_harness(tmp)
    entries_file = tmp / "entries.json"
    entries_file.write_text(json.dumps(manifest["functions"]))
    env_b = {**env, "NXRECOMP_TRACE_FILE": str(uni)}
    subprocess.run([sys.executable, __file__, "--unicorn", str(so), manifest["program"], str(entries_file), str(uni),
                    *prog_argv], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, env=env_b)
    print(compare(str(lifted), str(uni)))
    if os.path.exists(str(uni) + ".blocks"):
        print("unicorn blocks:", " ".join(Path(str(uni) + ".blocks").read_text().split()[:200]))
    return 0


if __name__ == "__main__":
    if sys.argv[1] == "--unicorn":
        so, prog, entries, out = sys.argv[2:6]
        unicorn_trace(so, prog, sys.argv[6:], set(json.loads(Path(entries).read_text())), out)
    else:
        sys.exit(main(sys.argv[1:]))
