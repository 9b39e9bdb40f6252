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

``--first-frame``: the replay of a frame that draws with ``--programs`` programs none of whose
pipelines exist yet (no disk cache), in an Engine, three ways: pipelines made on the replay thread
one after another (``gpu_host.pipeline_threads = 0``), made by 4 workers in parallel while the
replay waits (policy ``wait``: the same frame), and the ``skip`` policy (no wait: the frame is
drawn without those draws; the next frames are replayed until every draw is drawn).
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
    from nxrecomp.common import settings

    progs = [GlslSource(COLOR_VS, fragment(k)).spirv() for k in range(programs)]  # outside the timing
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
    out = {"device": dev.name, "library": pipes.library, "pipelines": n, "seconds": dt, "parts": len(pipes.parts)}
    pipes.close()
    dev.close()
    return out


def frame_worker(programs: int) -> dict:
    """Runs in its own process (pipeline settings from the environment): the first frames."""
    from cpu_host.gpu_client.memory import Pool
    from cpu_host.gpu_client.shaders import GlslSource
    from gpu_guest import COLOR_VS, rect_px, ubo
    from gpu_packets import texture
    from gpu_host import packets as P
    from gpu_host.engine import Engine
    from gpu_host.objects import MappedPools
    from gpu_host.vkdevice import Device

    progs = [GlslSource(COLOR_VS, fragment(k)).spirv() for k in range(programs)]  # outside the timing
    pool = Pool(1, 1 << 16)
    pool.write(0, rect_px(0, 0, 4, 4, 64, 64).tobytes())
    pool.write(4096, ubo((1, 0.5, 0.25, 1)))
    mp = MappedPools()
    mp.add(1, pool.fd, pool.size)
    dev = Device()
    eng = Engine(dev, mp, keep_frames=2)
    for i, (v, f) in enumerate(progs):
        eng.register_program(1 + i, v, f)
    eng.register_texture(**texture(7, 64, 64, render_target=True))
    cmds = [
        (P.OP_TARGET, 7),
        (P.OP_CLEAR, 0, 0, 0, 1),
        (P.OP_VERTEX_LAYOUT, 8, 0, [[0, 2, 0]]),
        (P.OP_VERTEX, 1, 0, 48),
        (P.OP_UNIFORM, 0, 1, 4096, 48),
    ]
    for k in range(programs):
        cmds += [(P.OP_PROGRAM, 1 + k), (P.OP_DRAW, 6, 1, 0, 0)]
    t = time.perf_counter()
    res = eng.submit(1, cmds + [(P.OP_PRESENT, 1, 7)])
    first = time.perf_counter() - t
    out = {"device": dev.name, "first_ms": first * 1000, "skipped": res.skipped}
    n = 1
    while res.skipped and n < 100000:  # the skip policy: frames until every draw is drawn
        n += 1
        res = eng.submit(n, cmds + [(P.OP_PRESENT, n, 7)])
    out["complete_ms"] = (time.perf_counter() - t) * 1000
    out["frames"] = n
    out["sha256"] = eng.frames[-1].sha256
    eng.close()
    dev.close()
    pool.close()
    return out


def run_frames(programs: int, threads: int, policy: str) -> dict:
    env = {
        **os.environ,
        "NXRECOMP_GPU_HOST_PIPELINE_THREADS": str(threads),
        "NXRECOMP_GPU_HOST_PIPELINE_NOT_READY": policy,
        "NXRECOMP_GPU_HOST_PIPELINE_CACHE": "0",
        # the drivers' own disk caches off too (Mesa's, NVIDIA's): every run compiles
        "MESA_SHADER_CACHE_DISABLE": "true",
        "__GL_SHADER_DISK_CACHE": "0",
    }
    r = subprocess.run(
        [sys.executable, __file__, "--frame-worker", str(programs)], capture_output=True, text=True, env=env, timeout=1200
    )
    if r.returncode != 0:
        raise SystemExit(f"worker failed: {r.stderr[-2000:]}")
    return json.loads(r.stdout.strip().splitlines()[-1])


def first_frame(programs: int) -> None:
    rows = [
        ("on the replay thread", run_frames(programs, 0, "wait")),
        ("4 workers, wait", run_frames(programs, 4, "wait")),
        ("4 workers, skip", run_frames(programs, 4, "skip")),
    ]
    print(f"device {rows[0][1]['device']}: the first frame drawing with {programs} programs, no pipeline made yet")
    for name, r in rows:
        print(
            f"  {name:22s} first frame {r['first_ms']:8.1f} ms ({r['skipped']} draws skipped); every draw drawn "
            f"after {r['complete_ms']:8.1f} ms, {r['frames']} frames"
        )
    assert len({r["sha256"] for _, r in rows}) == 1, "the complete frames differ"
    print(
        f"  wait with workers / on the replay thread: {rows[1][1]['first_ms'] / rows[0][1]['first_ms']:.3f}; "
        "complete frames identical (SHA-256)"
    )


def run(programs: int, cache_dir: str, library: bool) -> dict:
    env = {**os.environ, "NXRECOMP_NXRECOMP_CACHE_DIR": cache_dir}
    r = subprocess.run(
        [sys.executable, __file__, "--worker", str(programs), "1" if library else "0"],
        capture_output=True,
        text=True,
        env=env,
        timeout=1200,
    )
    if r.returncode != 0:
        raise SystemExit(f"worker failed: {r.stderr[-2000:]}")
    return json.loads(r.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--programs", type=int, default=12)
    ap.add_argument("--worker", nargs=2)
    ap.add_argument("--frame-worker", type=int, default=0)
    ap.add_argument("--first-frame", action="store_true", help="pipelines off the replay thread: the first frame")
    a = ap.parse_args()
    if a.worker:
        print(json.dumps(worker(int(a.worker[0]), a.worker[1] == "1")))
        return
    if a.frame_worker:
        print(json.dumps(frame_worker(a.frame_worker)))
        return
    if a.first_frame:
        return first_frame(a.programs)
    glsl = os.environ.get("NXRECOMP_NXRECOMP_CACHE_DIR")  # glslang results may be shared
    with tempfile.TemporaryDirectory() as d1, tempfile.TemporaryDirectory() as d2:
        if glsl:
            for d in (d1, d2):
                if (Path(glsl) / "glsl").exists():
                    os.symlink(Path(glsl) / "glsl", Path(d) / "glsl")
        whole = run(a.programs, d1, False)  # fills d1's disk cache
        linked = run(a.programs, d2, True)
        warm = run(a.programs, d1, False)  # a new process, d1's cache warm
    per = {k: r["seconds"] / r["pipelines"] * 1000 for k, r in (("whole", whole), ("linked", linked), ("warm", warm))}
    print(
        f"device {whole['device']}: {whole['pipelines']} pipelines ({a.programs} programs x {len(LAYOUTS)} layouts "
        f"x {len(FORMATS)} formats x 2 blend states); linked from {linked['parts']} parts"
        + ("" if linked["library"] else " [the driver has no pipeline library: linked = whole]")
    )
    for k in ("whole", "linked", "warm"):
        print(f"  {k:7s} {per[k]:8.2f} ms per pipeline")
    print(f"  linked/whole {per['linked'] / per['whole']:.3f}   warm/whole {per['warm'] / per['whole']:.3f}")


if __name__ == "__main__":
    main()
