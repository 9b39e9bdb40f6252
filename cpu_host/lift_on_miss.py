"""The run-time lifter's helper process: ``python -m cpu_host.lift_on_miss BUNDLE ADDR
[--loaded BASE FILE PIECES]``.

Started by the runtime (``cpu_host/runtime/core/lift_miss.c``) when a branch reaches an address
with no lifted code, in either personality.  A process of its own, not Python inside the
guest's process: the native launcher runs guests with no Python in them, the analysis,
lifter and compiler are Python, and a crash or a slow import here never takes the guest with
it.  It lifts the function at ADDR (``recompiler.runtime_lift``), appends ADDR to the bundle's
discovered entries (``recompiler.discovered``; a read-only bundle only loses that note) and
prints, last, one result line the runtime reads:

With ``--loaded``, ADDR is in code the program mapped at run time (a Horizon loader's
``svcMapProcessCodeMemory``): FILE is a copy of that mapping at BASE, PIECES its parts
(``offset:size:perm``); ``cpu_host.horizon.loaded_code`` lifts it (a whole NRO at its first
miss) and nothing is noted in the bundle.

With ``--generated``, ADDR is in code the program generated at run time (a Linux program's
memory mapped executable: a JIT's output): FILE is a copy of that memory from BASE;
``cpu_host.linux.generated_code`` lifts the function at ADDR, with a check of its bytes at each
entry, and nothing is noted in the bundle.

    nxlift ok SO_PATH INSTRUCTIONS GUEST_BYTES COMPILE_SECONDS CACHED(0|1)
    nxlift notcode          (ADDR is not code of the program: the runtime's fatal error)
    nxlift error            (after the error's text, which names the function and the cause)
"""

from __future__ import annotations

import logging
import sys
from pathlib import Path

from nxrecomp.common.errors import NxError

log = logging.getLogger("cpu_host.lift_on_miss")


def main(argv: list[str]) -> int:
    loaded = len(argv) == 6 and argv[2] == "--loaded"
    generated = len(argv) == 5 and argv[2] == "--generated"
    if len(argv) != 2 and not loaded and not generated:
        print(
            "usage: python -m cpu_host.lift_on_miss BUNDLE ADDR [--loaded BASE FILE PIECES | --generated BASE FILE]\n"
            "nxlift error",
            flush=True,
        )
        return 2
    bundle = Path(argv[0])
    try:
        addr = int(argv[1], 16)
        base = int(argv[3], 16) if len(argv) > 2 else 0
    except ValueError:
        print(f"{argv[1]!r} or the base is not a hex address\nnxlift error", flush=True)
        return 2
    if generated:
        return _generated(addr, base, Path(argv[4]))
    if loaded:
        return _loaded(addr, base, Path(argv[4]), argv[5])
    from recompiler import discovered, runtime_lift

    try:
        r = runtime_lift.lift_at(bundle, addr)
    except (NxError, OSError) as e:  # a compile failure, an unusable cache folder: one clear line
        print(f"lifting the function at {addr:#x}: {e}\nnxlift error", flush=True)
        return 1
    if r.so_path is None:
        print("nxlift notcode", flush=True)
        return 0
    try:
        discovered.append(bundle, addr)
    except (OSError, NxError) as e:  # a bundle on read-only media: the run goes on
        print(f"nxrecomp: warning: cannot note {addr:#x} in {bundle / discovered.FILE}: {e}", flush=True)
    print(f"nxlift ok {r.so_path} {r.insns} {r.guest_bytes} {r.compile_s:.3f} {int(r.cached)}", flush=True)
    return 0


def _loaded(addr: int, base: int, snapshot: Path, pieces: str) -> int:
    from cpu_host.horizon.loaded_code import lift_loaded

    try:
        r = lift_loaded(addr, base, snapshot, pieces)
    except (NxError, OSError) as e:
        print(f"lifting the code loaded at {base:#x} (branch to {addr:#x}): {e}\nnxlift error", flush=True)
        return 1
    if r.so_path is None:
        print("nxlift notcode", flush=True)
        return 0
    if r.functions > 1 and not r.cached:
        print(
            f"nxrecomp: the NRO loaded at {base:#x}: {r.functions} functions lifted and compiled as one object "
            f"in {r.compile_s:.1f} s",
            flush=True,
        )
    print(f"nxlift ok {r.so_path} {r.insns} {r.guest_bytes} {r.compile_s:.3f} {int(r.cached)}", flush=True)
    return 0


def _generated(addr: int, base: int, snapshot: Path) -> int:
    from cpu_host.linux.generated_code import lift_generated

    try:
        r = lift_generated(addr, base, snapshot)
    except (NxError, OSError) as e:
        print(f"lifting the code generated at run time at {addr:#x}: {e}\nnxlift error", flush=True)
        return 1
    if r.so_path is None:
        print(f"code generated at run time at {addr:#x}: {r.why}\nnxlift notcode", flush=True)
        return 0
    print(f"nxlift ok {r.so_path} {r.insns} {r.guest_bytes} {r.compile_s:.3f} {int(r.cached)}", flush=True)
    return 0


if __name__ == "__main__":
    logging.basicConfig(level=logging.WARNING, format="nxrecomp: %(name)s: %(message)s")
    sys.exit(main(sys.argv[1:]))
