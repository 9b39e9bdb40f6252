"""Pipeline creation in the GPU process, three ways, in one run (each in a fresh process):

- whole: every (program, vertex layout, target format, blend) combination compiled as one
  pipeline (gpu_host.pipeline_library = off), no disk cache;
- linked: the same combinations linked from graphics-pipeline-library parts, each part built
  once (a new combination of known parts is a link);
- warm: whole pipelines again in a new process whose disk pipeline cache the first run filled
  (what a restarted GPU process pays).

    .venv/bin/python bench/gpu_pipelines.py [--programs 12]

Prints seconds per pipeline and the ratios linked/whole and warm/whole.  The programs are GLSL
fragment shaders that differ in a few constants and instructions (compiled once by glslang).
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests" / "gpu_host"))

LAYOUTS = [(6, 8, 0, ((0, 2, 0),)), (6, 16, 0, ((0, 2, 0), (1, 2, 8))), (6, 12, 1, ((0, 3, 0),))]
FORMATS = ["VK_FORMAT_R8G8B8A8_UNORM", "VK_FORMAT_B8G8R8A8_UNORM"]


def fragment(k: int) -> str:
    return f"""#version 450
layout(location=0) in vec4 c;
layout(location=0) out vec4 o;
void main() {{
    vec4 v = c * {1.0 + k * 0.125:.3f} + vec4({k % 7} * 0.01);
    for (int i = 0; i < {2 + k % 5}; i++) v = fract(v * {1.5 + k * 0.01:.3f} + v.yzwx);
    o = v;
}}"""


def worker(programs: int, library: bool) -> dict:
    """Runs in its own process (settings from the environment): creates every combination."""
    import vulkan as vk
    from cpu_host.gpu_client.shaders import GlslSource
    from gpu_guest import COLOR_VS
    from gpu_host.objects import Objects
    from gpu_host.pipelines import Pipelines, cache_file
    from gpu_host.vkdevice import Device
    from nxrecomp import settings

    progs = [GlslSource(COLOR_VS, fragment(k)).spirv() for k in range(programs)]     # outside the timing
    dev = Device()
    objs = Objects(memory=None)
    cache = cache_file(dev, settings.get("nxrecomp", "cache_dir"))
    pipes = Pipelines(dev, cache, library)
    programs_ = [objs.add_program(i + 1, v, f) for i, (v, f) in enumerate(progs)]
    t = time.perf_counter()
    n = 0
    for p in programs_:
        for layout in LAYOUTS:
            for fmt in FORMATS:
                for blend in (False, True):
                    pipes.get(p, layout, getattr(vk, fmt), blend)
                    n += 1
    dt = time.perf_counter() - t
    out = {"device": dev.name, "library": pipes.library, "pipelines": n, "seconds": dt,
           "parts": len(pipes.parts)}
    pipes.close()
    dev.close()
    return out


def run(programs: int, cache_dir: str, library: bool) -> dict:
    env = {**os.environ, "NXRECOMP_NXRECOMP_CACHE_DIR": cache_dir}
    r = subprocess.run([sys.executable, __file__, "--worker", str(programs), "1" if library else "0"],
                       capture_output=True, text=True, env=env, timeout=1200)
    if r.returncode != 0:
        raise SystemExit(f"worker failed: {r.stderr[-2000:]}")
    return json.loads(r.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--programs", type=int, default=12)
    ap.add_argument("--worker", nargs=2)
    a = ap.parse_args()
    if a.worker:
        print(json.dumps(worker(int(a.worker[0]), a.worker[1] == "1")))
        return
    glsl = os.environ.get("NXRECOMP_NXRECOMP_CACHE_DIR")   # glslang results may be shared
    with tempfile.TemporaryDirectory() as d1, tempfile.TemporaryDirectory() as d2:
        if glsl:
            for d in (d1, d2):
                if (Path(glsl) / "glsl").exists():
                    os.symlink(Path(glsl) / "glsl", Path(d) / "glsl")
        whole = run(a.programs, d1, False)          # fills d1's disk cache
        linked = run(a.programs, d2, True)
        warm = run(a.programs, d1, False)           # a new process, d1's cache warm
    per = {k: r["seconds"] / r["pipelines"] * 1000 for k, r in (("whole", whole), ("linked", linked), ("warm", warm))}
    print(f"device {whole['device']}: {whole['pipelines']} pipelines ({a.programs} programs x {len(LAYOUTS)} layouts "
          f"x {len(FORMATS)} formats x 2 blend states); linked from {linked['parts']} parts"
          + ("" if linked["library"] else " [the driver has no pipeline library: linked = whole]"))
    for k in ("whole", "linked", "warm"):
        print(f"  {k:7s} {per[k]:8.2f} ms per pipeline")
    print(f"  linked/whole {per['linked'] / per['whole']:.3f}   warm/whole {per['warm'] / per['whole']:.3f}")


if __name__ == "__main__":
    main()
