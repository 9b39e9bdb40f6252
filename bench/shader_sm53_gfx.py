"""SM53 (Maxwell) vertex/fragment programs: assemble, decode and translate speed of the guest
shaders' Maxwell listings (examples/demo/shaders/*.sm53), next to the same programs' SM86
listings, as ratios (CPU only: no Vulkan, no NVIDIA tools needed).

    .venv/bin/python bench/shader_sm53_gfx.py [--repeat 50]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.shader_sm53 import rate  # noqa: E402 (items per second, as the compute bench measures)
from examples.demo.shaders import build as shaders  # noqa: E402
from shader_svc import translate as tr  # noqa: E402

STAGES = {"vertex": 2, "fragment": 3}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=50)
    r = ap.parse_args().repeat
    pairs = [(n, s) for n in shaders.PROGRAMS for s in STAGES]
    progs = {
        arch: [
            tr.make_program(int(arch[2:]), STAGES[s], shaders.assemble_listing(shaders.listing(n, s, arch), arch))
            for n, s in pairs
        ]
        for arch in ("sm53", "sm86")
    }
    n_inst = {arch: sum(len(shaders.listing(n, s, arch).text.splitlines()) for n, s in pairs) for arch in progs}
    rows = []
    for what, fn, reps in (
        (
            "assemble (programs/s)",
            lambda arch: [shaders.assemble_listing(shaders.listing(n, s, arch), arch) for n, s in pairs],
            max(1, r // 10),
        ),
        ("translate cold (programs/s)", lambda arch: [tr.translate_full(p) for p in progs[arch]], r),
    ):
        rows.append((what, rate(lambda: fn("sm53"), len(pairs), reps), rate(lambda: fn("sm86"), len(pairs), reps)))
    print(
        f"{len(pairs)} programs (scene, color, tex; vertex + fragment), listing lines: "
        f"SM53 {n_inst['sm53']}, SM86 {n_inst['sm86']}"
    )
    print(f"{'':30s} {'SM53':>10s} {'SM86':>10s} {'SM53/SM86':>10s}")
    for name, a, b in rows:
        print(f"{name:30s} {a:10.1f} {b:10.1f} {a / b:10.2f}")


if __name__ == "__main__":
    main()
