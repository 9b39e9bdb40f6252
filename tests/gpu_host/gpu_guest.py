"""A fake guest for the GPU tests: draws through the real CPU-host client (real ring, real
memfds, real gRPC) and computes the pixels it expects independently with numpy.

Geometry is axis-aligned rectangles whose edges fall on pixel boundaries, so which pixel
centres are covered is unambiguous and the expected image is plain array slicing.
"""

from __future__ import annotations

import contextlib
import itertools
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import numpy as np

from cpu_host.gpu_client.client import GpuClient, GpuUnavailable
from cpu_host.gpu_client.shaders import GlslSource
from gpu_host import packets as P

COLOR_VS = """#version 450
layout(location=0) in vec2 pos;
layout(set=0, binding=0) uniform U { vec4 color; vec4 offset; vec4 step; } u;
layout(location=0) out vec4 c;
void main() {
    gl_Position = vec4(pos + u.offset.xy + u.step.xy * float(gl_InstanceIndex), 0.0, 1.0);
    c = u.color;
}"""
COLOR_FS = """#version 450
layout(location=0) in vec4 c;
layout(location=0) out vec4 o;
void main() { o = c; }"""
TEX_VS = """#version 450
layout(location=0) in vec2 pos;
layout(location=1) in vec2 uv;
layout(location=0) out vec2 t;
void main() { gl_Position = vec4(pos, 0.0, 1.0); t = uv; }"""
TEX_FS = """#version 450
layout(location=0) in vec2 t;
layout(set=0, binding=4) uniform sampler2D tex;
layout(location=0) out vec4 o;
void main() { o = texture(tex, t); }"""


def rect_px(x0: int, y0: int, x1: int, y1: int, w: int, h: int) -> np.ndarray:
    """Two triangles (6 vertices, vec2) covering pixels [x0,x1) x [y0,y1) of a w x h target."""
    a, b = 2 * x0 / w - 1, 2 * x1 / w - 1
    c, d = 2 * y0 / h - 1, 2 * y1 / h - 1
    return np.array([[a, c], [b, c], [b, d], [a, c], [b, d], [a, d]], np.float32)


def rect_uv_px(x0: int, y0: int, x1: int, y1: int, w: int, h: int) -> np.ndarray:
    """Like rect_px with uv 0..1 across the rectangle (vec2 pos, vec2 uv)."""
    p = rect_px(x0, y0, x1, y1, w, h)
    uv = np.array([[0, 0], [1, 0], [1, 1], [0, 0], [1, 1], [0, 1]], np.float32)
    return np.hstack([p, uv]).astype(np.float32)


def ubo(color, offset=(0.0, 0.0), step=(0.0, 0.0)) -> bytes:
    return np.array([*color, *offset, 0, 0, *step, 0, 0], np.float32).tobytes()


def to8(c) -> np.ndarray:
    return np.round(np.clip(np.asarray(c, np.float64), 0, 1) * 255).astype(np.uint8)


def unorm8(c) -> np.ndarray:
    """The exact 8-bit UNORM value of colour ``c`` before rounding: c x 255 in single precision
    (the precision the colour has in a uniform block or a clear value), as float64."""
    c = np.clip(np.asarray(c, np.float32), 0, 1)
    return (c * np.float32(255)).astype(np.float64)


def assert_unorm(img: np.ndarray, exact: np.ndarray, what: str = "frame") -> None:
    """Every channel of ``img`` is what Vulkan allows for a float written to an 8-bit UNORM
    target (spec, "Conversion from Floating-Point to Normalized Fixed-Point": one of the two
    integers closest to c x 255, "should" round to nearest; an integer must come out exactly).
    So 0.5 (127.5) may be 127 (NVIDIA) or 128 (lavapipe); 0.2 (51.0 in single precision) only 51.
    A failure lists the distinct (exact value, got) pairs."""
    assert img.shape == exact.shape, f"{what}: shape {img.shape}, expected {exact.shape}"
    got = img.astype(np.float64)
    bad = (got != np.floor(exact)) & (got != np.ceil(exact))
    if bad.any():
        pairs = sorted({(float(e), int(g)) for e, g in zip(exact[bad][:4096], got[bad][:4096])})[:8]
        raise AssertionError(f"{what}: {int(bad.sum())} channels outside the two nearest integers; (exact, got): {pairs}")
    ties = (got != np.round(exact)) & (exact != np.round(exact))
    if ties.any():  # said, not failed: the device rounded a non-integer the other way
        print(
            f"{what}: {int(ties.sum())} channels rounded away from the nearest integer "
            f"(exact {sorted({float(e) for e in exact[ties][:4096]})[:4]})"
        )


def start_gpu(extra_env: dict | None = None, args: list[str] = ()) -> tuple[subprocess.Popen, str]:
    """A real GPU process on a fresh socket folder (short path: UNIX socket names are limited)."""
    d = tempfile.mkdtemp(prefix="nxg")
    # No window unless a test asks for one (a developer's DISPLAY must not pop windows up).
    env = {**os.environ, "NXRECOMP_GPU_HOST_WINDOW": "off", **(extra_env or {})}
    # stderr to a file, not a pipe: a pipe nobody drains would block the process once full.
    with open(Path(d) / "gpu.log", "w") as logf:
        proc = subprocess.Popen([sys.executable, "-m", "gpu_host.server", "--socket-dir", d, *args], env=env, stderr=logf)
    return proc, d


def attach(client, proc: subprocess.Popen, timeout: float = 300.0) -> None:
    """Connect ``client`` to the GPU process ``proc`` that was just started.  Its start-up
    (Python, Vulkan on lavapipe, gRPC) once took over the client's 15 s on a loaded CI machine:
    this waits as long as the process lives (bounded by ``timeout``) and fails at once, with
    the process's log, if it exits instead."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            client.connect(timeout=5)
            return
        except GpuUnavailable:
            if proc.poll() is not None:
                raise AssertionError(
                    f"GPU process exited with {proc.returncode} before serving: {gpu_log(str(client.dir))[-2000:]}"
                ) from None
            if time.monotonic() > deadline:
                raise


def gpu_log(d: str) -> str:
    return (Path(d) / "gpu.log").read_text()


def stop_gpu(proc: subprocess.Popen) -> None:
    proc.terminate()
    try:
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def replayed_frames(rec: Path, out: Path, timeout: float = 300) -> list[list[str]]:
    """``nxrecomp replay`` (a process of its own) of the recording ``rec`` into ``out``, which
    must succeed: its frames.txt's rows, each [frame number, SHA-256 of the frame's pixels]."""
    r = subprocess.run(
        [sys.executable, "-m", "nxrecomp", "replay", str(rec), "--out", str(out)], capture_output=True, text=True, timeout=timeout
    )
    assert r.returncode == 0, r.stderr
    return [line.split() for line in (out / "frames.txt").read_text().splitlines()]


def frame_image(client, n: int) -> np.ndarray:
    f = client.frame(n)
    return np.frombuffer(f.rgba, np.uint8).reshape(f.height, f.width, 4)


class Scene:
    """Uploads vertex data and uniform blocks into one pool and hands out ranges."""

    def __init__(self, pool, base: int = 0) -> None:
        self.pool, self.off = pool, base

    def put(self, data: bytes, align: int = 256) -> tuple[int, int, int]:
        off = self.off
        self.pool.write(off, data)
        self.off = (off + len(data) + align - 1) & ~(align - 1)
        return (self.pool.id, off, len(data))

    def reset(self, base: int = 0) -> None:
        self.off = base


__all__ = ["P"]  # tests take the packet table from here


class BoxGame:
    """A deterministic little game: boxes bouncing in integer pixel space.  Its state checksum
    depends only on the frame number, whatever the GPU process does."""

    W, H, N = 64, 64, 6

    def __init__(self, seed: int = 5) -> None:
        rng = np.random.default_rng(seed)
        self.pos = rng.integers(0, 48, (self.N, 2))
        self.vel = rng.integers(-3, 4, (self.N, 2))
        self.vel[self.vel == 0] = 1
        self.col = rng.integers(40, 256, (self.N, 4))
        self.col[:, 3] = 255

    def step(self) -> str:
        import hashlib

        self.pos += self.vel
        for axis in (0, 1):
            out = (self.pos[:, axis] < 0) | (self.pos[:, axis] > 48)
            self.vel[out, axis] *= -1
            self.pos[:, axis] = np.clip(self.pos[:, axis], 0, 48)
        return hashlib.sha256(self.pos.tobytes() + self.vel.tobytes()).hexdigest()

    def commands(self, pool, frame: int, target: int) -> list[tuple]:
        """This frame's draws; its data lives in slot frame % 4 of the pool (at most 2 frames are
        in flight, so a resubmitted frame still finds its bytes)."""
        sc = Scene(pool, (frame % 4) * 65536)
        cmds = [
            (P.OP_TARGET, target),
            (P.OP_CLEAR, 0.1, 0.1, 0.1, 1.0),
            (P.OP_PROGRAM, 1),
            (P.OP_VERTEX_LAYOUT, 8, 0, [[0, 2, 0]]),
        ]
        for (x, y), c in zip(self.pos, self.col):
            cmds += [
                (P.OP_VERTEX, *sc.put(rect_px(int(x), int(y), int(x) + 16, int(y) + 16, self.W, self.H).tobytes())),
                (P.OP_UNIFORM, 0, *sc.put(ubo(c / 255.0))),
                (P.OP_DRAW, 6, 1, 0, 0),
            ]
        return cmds + [(P.OP_SIGNAL, 0, frame), (P.OP_PRESENT, frame, target)]


class Gpu:
    """A real GPU process plus a connected client; ids are handed out so tests don't collide."""

    def __init__(self, env: dict | None = None) -> None:
        self.frames_dir = Path(tempfile.mkdtemp(prefix="nxgf"))
        self.proc, self.dir = start_gpu({"NXRECOMP_GPU_HOST_FRAMES_DIR": str(self.frames_dir), **(env or {})})
        self.client = GpuClient(self.dir, ring_capacity=1 << 22)
        attach(self.client, self.proc)
        self.ids = itertools.count(100)
        self.frames = itertools.count(1)
        self.pool = self.client.create_pool(1, 8 << 20)
        self.client.register_program(1, GlslSource(COLOR_VS, COLOR_FS))
        self.client.register_program(2, GlslSource(TEX_VS, TEX_FS))

    def id(self) -> int:
        return next(self.ids)

    def log(self) -> str:
        return gpu_log(self.dir)

    def submit_to_a_replaced_process(self, cmds: list, timeout: float = 120) -> None:
        """``cmds`` submitted while the GPU process is stopped (SIGSTOP), which is then killed
        (SIGKILL) and replaced by another on the same sockets (same frames folder, its log
        appended); returns once the client has re-attached (exactly once) and the pending
        submission has run on the new process."""
        c = self.client
        os.kill(self.proc.pid, signal.SIGSTOP)
        seq = c.submit(cmds)
        os.kill(self.proc.pid, signal.SIGKILL)
        self.proc.wait()
        env = {**os.environ, "NXRECOMP_GPU_HOST_WINDOW": "off", "NXRECOMP_GPU_HOST_FRAMES_DIR": str(self.frames_dir)}
        with open(os.path.join(self.dir, "gpu.log"), "a") as logf:
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "gpu_host.server", "--socket-dir", self.dir], env=env, stderr=logf
            )
        reconnects = c.reconnects
        c.wait(seq, timeout=timeout)
        assert c.reconnects == reconnects + 1

    def close(self) -> None:
        self.client.close()
        stop_gpu(self.proc)
        shutil.rmtree(self.frames_dir, ignore_errors=True)
        shutil.rmtree(self.dir, ignore_errors=True)


def compute_kernels(source: str, block: int, opt: str = "O3") -> dict[tuple[int, str], tuple[bytes, int, int]]:
    """{(isa, kernel name): (SPIR-V, bank 0 size rounded up to 16, the parameters' offset in it)} of
    every kernel of the CUDA ``source``, built for SM86 and SM53 by the corpus tools
    (tests/shader_svc/cuda_build.py: nvcc/ptxas from PyPI) and translated for ``block`` x 1 x 1
    threads; skips loudly where no CUDA compiler or ptxas can be had."""
    import pytest

    tools = str(Path(__file__).resolve().parents[1] / "shader_svc")  # the corpus tools
    if tools not in sys.path:
        sys.path.insert(0, tools)
    import cuda_build
    import nvtools

    out = {}
    for isa in (86, 53):
        try:
            built = cuda_build.build(source, isa, opt)
        except (cuda_build.NoCompiler, nvtools.ToolUnavailable) as e:
            pytest.skip(f"LOUD SKIP: no CUDA compiler/ptxas from PyPI: {e}")
        if isa == 86:
            from shader_svc.sm86 import decode
            from shader_svc.sm86.cbank import PARAMS
            from shader_svc.sm86.to_spirv import ComputeSpec, translate_compute
        else:
            from shader_svc.sm53 import decode
            from shader_svc.sm53.cbank import PARAMS
            from shader_svc.sm53.to_spirv import ComputeSpec, translate_compute
        for name, k in built.items():  # SM53 -O3: the literals in ptxas's bank c[0x2], part of the program
            spv = translate_compute(decode.decode_stream(k.code), ComputeSpec((block, 1, 1), k.banks))
            out[(isa, name)] = (spv, (k.cbank0_size + 15) & ~15, PARAMS)
    return out


@contextlib.contextmanager
def shader_service_env(cache_dir: Path) -> Iterator[None]:
    """A real shader service on a loopback port, named by NXRECOMP_SHADER_SVC_LISTEN while the
    block runs (the NVN front end's translate_shader reaches it); the variable restored after."""
    from shader_svc import service

    srv, port, t = service.start("127.0.0.1:0", cache_dir, workers=1)
    old = os.environ.get("NXRECOMP_SHADER_SVC_LISTEN")
    os.environ["NXRECOMP_SHADER_SVC_LISTEN"] = f"127.0.0.1:{port}"
    try:
        yield
    finally:
        if old is None:
            os.environ.pop("NXRECOMP_SHADER_SVC_LISTEN", None)
        else:
            os.environ["NXRECOMP_SHADER_SVC_LISTEN"] = old
        srv.stop(grace=None)
        t.close()
