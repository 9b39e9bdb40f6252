"""A program with a geometry stage through the real GPU process on lavapipe (gfx-geom): guest
machine code (SM86 and SM53 geometry programs that turn points into squares, written as nvdisasm
prints them: tests/shader_svc/geometry_programs.py) translated by the shader service for every
input primitive, registered with its vertex and fragment programs, drawn as a point list; the
frame equals the numpy reference on every pixel whose centre is not on a square's edge.  A
registration the GPU process cannot run is refused by name: a module that is not a geometry
shader, an unknown input primitive, a draw whose topology has no module, a device without
geometryShader (``gpu_host.geometry_shader = off``)."""

from __future__ import annotations

import struct
import sys
import time
from types import SimpleNamespace
from pathlib import Path

import numpy as np
import pytest

from cpu_host.gpu_client.registry import ProgramDesc, TextureDesc
from gpu_guest import P, Gpu, Scene, frame_image
from nxrecomp.common.errors import NxError

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "shader_svc"))  # the test programs
from geometry_programs import POINT_QUAD53, POINT_QUAD86, POINT_QUAD_GEO, POINT_QUAD_HDR, header, points_to_quads  # noqa: E402
from quad_draw import VS_PASS, VS_PASS_HDR, spirv  # noqa: E402

from shader_svc import translate as tr  # noqa: E402
from shader_svc.request import GEOMETRY_STAGES  # noqa: E402

W, H = 32, 32
FS_QUAD = "IPA.PASS R0, a[0x80]\nIPA.PASS R1, a[0x84]\nIPA.PASS R2, a[0x94]\nMOV R3, 0x3f800000\nEXIT\n"
FS_QUAD_HDR = dict(inputs={0x80: "perspective", 0x84: "perspective", 0x94: "perspective"}, targets=(0xF,))


def geometry_modules(arch: int) -> tuple[tuple[int, bytes], ...]:
    """The point-to-square program translated for every input primitive (what the NVN front end
    registers)."""
    from shader_svc.sm53.assemble import assemble_program as asm53
    from shader_svc.sm86.assemble import assemble_program as asm86

    h = header(POINT_QUAD_GEO, POINT_QUAD_HDR, version=4 if arch == 86 else 3)
    code = h + (asm86(POINT_QUAD86, base=len(h)) if arch == 86 else asm53(POINT_QUAD53, base_addr=len(h)))
    return tuple((s, tr.translate(tr.make_program(arch, s, code))) for s in GEOMETRY_STAGES)


def draw_points(gpu: Gpu, prog: int, pts: np.ndarray, cols: np.ndarray, half: float, topology: int = 3, frame: bool = True):
    t = gpu.id()
    gpu.client.register(TextureDesc(t, 0, 0, W, H, "RGBA8", render_target=True))
    sc = Scene(gpu.pool, 0)
    verts = np.zeros((len(pts), 4, 4), np.float32)
    verts[:, 0] = np.c_[pts, np.zeros(len(pts)), np.ones(len(pts))]
    verts[:, 1, :2] = cols
    n = next(gpu.frames)
    cmds = [
        (P.OP_TARGET, t),
        (P.OP_CLEAR, 0, 0, 0, 0),
        (P.OP_PROGRAM, prog),
        (P.OP_VERTEX_LAYOUT, 64, topology, [[i, 4, 16 * i] for i in range(4)]),
        (P.OP_VERTEX, *sc.put(verts.tobytes())),
        (P.OP_UNIFORM, 0, *sc.put(struct.pack("<f", half) + bytes(60))),
        (P.OP_DRAW, len(pts), 1, 0, 0),
        (P.OP_PRESENT, n, t),
    ]
    seq = gpu.client.submit(cmds)
    gpu.client.wait(seq)
    return frame_image(gpu.client, n).astype(int) if frame else None


@pytest.fixture(scope="module")
def gpu():
    g = Gpu()
    yield g
    g.close()


@pytest.mark.parametrize("arch", [86, 53])
def test_points_become_squares_through_the_gpu_process(gpu, arch):
    prog = gpu.id()
    vs, fs = spirv("vertex", VS_PASS, VS_PASS_HDR), spirv("fragment", FS_QUAD, FS_QUAD_HDR)
    gpu.client.register(ProgramDesc(prog, vs, fs, geometry=geometry_modules(arch)))
    half = 0.25
    pts = np.array([[-0.5, -0.5], [0.5, -0.5], [0.0, 0.5], [0.625, 0.625], [-0.75, 0.25]])
    cols = np.random.default_rng(7).uniform(0.1, 0.9, (len(pts), 2))
    img = draw_points(gpu, prog, pts, cols, half)
    assert gpu.client.dropped() == 0, gpu.log()[-2000:]
    covered, ambiguous, ref = points_to_quads(pts, cols, half, (W, H))
    sure = ~ambiguous
    assert covered.sum() > 250 and (~covered & sure).sum() > 300
    want = np.round(np.clip(ref, 0, 1) * 255).astype(int)
    want[~covered] = 0
    diff = np.abs(img - want)[sure]
    assert diff.max() <= 1, (diff.max(), np.argwhere(np.abs(img - want).max(axis=2) > 1)[:5])


def test_bad_geometry_registrations_refused_by_name(gpu):
    vs, fs = spirv("vertex", VS_PASS, VS_PASS_HDR), spirv("fragment", FS_QUAD, FS_QUAD_HDR)
    good = geometry_modules(86)
    with pytest.raises(NxError, match=r"geometry\[4\]: execution model 0, expected geometry \(3\)"):
        gpu.client.register(ProgramDesc(gpu.id(), vs, fs, geometry=((4, vs),)))
    with pytest.raises(NxError, match=r"geometry\[9\]: input primitive 9 is not one of \[4, 5, 6, 7, 8\]"):
        gpu.client.register(ProgramDesc(gpu.id(), vs, fs, geometry=((9, good[0][1]),)))
    # a program with a module for points only, drawn as triangles: refused by name, nothing drawn
    prog = gpu.id()
    gpu.client.register(ProgramDesc(prog, vs, fs, geometry=good[:1]))
    dropped = gpu.client.dropped()
    draw_points(gpu, prog, np.zeros((3, 2)), np.zeros((3, 2)), 0.25, topology=0, frame=False)
    want = "dropped program %d: its geometry stage has modules for points, a draw of topology 0 needs one for triangles" % prog
    end = time.monotonic() + 10  # the log line may land just after the wait returns
    while want not in gpu.log() and time.monotonic() < end:
        time.sleep(0.1)
    assert want in gpu.log()
    assert gpu.client.dropped() == dropped + 1  # the submission refused whole, the process alive
    img = draw_points(gpu, prog, np.array([[0.0, 0.0]]), np.array([[1.0, 1.0]]), 0.25)  # and points still draw
    assert (img[..., 0] == 255).sum() == 64


def test_device_without_geometry_refuses_by_name():
    g = Gpu({"NXRECOMP_GPU_HOST_GEOMETRY_SHADER": "off"})
    try:
        vs, fs = spirv("vertex", VS_PASS, VS_PASS_HDR), spirv("fragment", FS_QUAD, FS_QUAD_HDR)
        with pytest.raises(NxError, match=r"a geometry stage needs the geometryShader feature, which .* lacks"):
            g.client.register(ProgramDesc(g.id(), vs, fs, geometry=geometry_modules(86)[:1]))
        assert "geometry_shader" not in g.client.features
    finally:
        g.close()


# --- through the NVN front end: nvnProgramSetShaders with a geometry stage ---------------------------
@pytest.fixture(scope="module")
def nvn(gpu, tmp_path_factory, monkeypatch_module):
    """The NVN front end (Python recorder) connected to the GPU process's client, translating
    through a real shader service on loopback (test_compute_dispatch's harness)."""
    from test_compute_dispatch import Guest

    from shader_svc import service

    srv, port, t = service.start("127.0.0.1:0", tmp_path_factory.mktemp("shcache"), workers=1)
    monkeypatch_module.setenv("NXRECOMP_SHADER_SVC_LISTEN", f"127.0.0.1:{port}")
    yield Guest(gpu, monkeypatch_module)
    srv.stop(grace=None)
    t.close()


@pytest.fixture(scope="module")
def monkeypatch_module():
    mp = pytest.MonkeyPatch()
    yield mp
    mp.undo()


def set_shaders(g, slot: int, stages: list[tuple[int, int, bytes]]) -> int:
    """nvnProgramInitialize + nvnProgramSetShaders of (stage, arch, code) shaders, each code in the
    front end's view of the pool; the call's result."""
    from cpu_host.horizon.hle.nvn.tables import SHADER_MAGIC

    s, ptr = g.svc, g.at(slot)
    g.call(s.program_initialize, ptr)
    at, words, ctrls = 0x10000, [], []
    for stage, arch, code in stages:
        g.view[at : at + len(code)] = code
        ctrl = g.ffi.new("uint32_t[4]", [SHADER_MAGIC, stage, arch, len(code)])
        ctrls.append(ctrl)
        words += [g.base + at, int(g.ffi.cast("uintptr_t", ctrl))]
        at += (len(code) + 255) & ~255
    data = g.ffi.new("uint64_t[]", words)
    g._keep = (ctrls, data)
    return g.call(s.program_set_shaders, ptr, len(stages), int(g.ffi.cast("uintptr_t", data)))


def guest_code(arch: int) -> dict[int, bytes]:
    """Vertex (2), fragment (3) and geometry (4) machine code with their headers, as a guest holds it."""
    from quad_draw import program, program53
    from shader_svc.sm53.assemble import assemble_program as asm53
    from shader_svc.sm86.assemble import assemble_program as asm86

    if arch == 86:
        h = header(POINT_QUAD_GEO, POINT_QUAD_HDR)
        return {
            2: program("vertex", VS_PASS, VS_PASS_HDR),
            3: program("fragment", FS_QUAD, FS_QUAD_HDR),
            4: h + asm86(POINT_QUAD86, base=len(h)),
        }
    from shader_svc import sph

    vh, h = sph.build("vertex", version=3, **VS_PASS_HDR), header(POINT_QUAD_GEO, POINT_QUAD_HDR, version=3)
    from geometry_programs import FS_QUAD53, FS_QUAD53_HDR, VS_PASS53

    return {
        2: vh + asm53(VS_PASS53, base_addr=len(vh)),
        3: program53(FS_QUAD53, FS_QUAD53_HDR),
        4: h + asm53(POINT_QUAD53, base_addr=len(h)),
    }


@pytest.mark.parametrize("arch", [86, 53])
def test_nvn_program_with_a_geometry_stage_draws_squares(gpu, nvn, arch):
    code = guest_code(arch)
    ptr = 10 + arch % 10
    assert set_shaders(nvn, ptr, [(st, arch, c) for st, c in code.items()]) == 1
    pid = nvn.mem[ptr]  # nvnProgramInitialize wrote the object's id there (the GPU process's program id)
    half = 0.25
    pts = np.array([[-0.5, -0.5], [0.5, 0.0], [0.125, 0.625]])
    cols = np.random.default_rng(arch).uniform(0.1, 0.9, (len(pts), 2))
    img = draw_points(gpu, pid, pts, cols, half)
    covered, ambiguous, ref = points_to_quads(pts, cols, half, (W, H))
    sure = ~ambiguous
    want = np.round(np.clip(ref, 0, 1) * 255).astype(int)
    want[~covered] = 0
    assert covered.sum() > 150
    diff = np.abs(img - want)[sure]
    assert diff.max() <= 1, (diff.max(), np.argwhere(np.abs(img - want).max(axis=2) > 1)[:5])


def test_nvn_geometry_stage_refused_by_name(nvn):
    from cpu_host.horizon.hle.abi import GuestError

    code = guest_code(86)
    with pytest.raises(GuestError, match=r"shader 2: a SPIR-V geometry stage is not served"):
        set_shaders(nvn, 20, [(2, 86, code[2]), (3, 86, code[3]), (4, 0, b"\x03\x02\x23\x07" * 8)])
    with pytest.raises(GuestError, match=r"shader 3: a second shader of stage 4"):
        set_shaders(nvn, 21, [(2, 86, code[2]), (3, 86, code[3]), (4, 86, code[4]), (4, 86, code[4])])


def test_recorded_geometry_draw_replays_to_the_same_frame(tmp_path):
    """The recording carries the geometry modules (record.py's program event): ``nxrecomp replay``
    renders the same frame."""
    import shutil
    import subprocess

    from cpu_host.gpu_client.client import GpuClient
    from gpu_guest import start_gpu, stop_gpu

    rec = tmp_path / "geo.nxgpu"
    proc, d = start_gpu(args=["--record", str(rec)])
    try:
        c = GpuClient(d, ring_capacity=1 << 20)
        c.connect(timeout=30)
        ids = iter(range(200, 300))
        g = SimpleNamespace(client=c, pool=c.create_pool(1, 1 << 20), frames=iter(range(1, 100)), id=lambda: next(ids))
        vs, fs = spirv("vertex", VS_PASS, VS_PASS_HDR), spirv("fragment", FS_QUAD, FS_QUAD_HDR)
        c.register(ProgramDesc(5, vs, fs, geometry=geometry_modules(86)))
        img = draw_points(g, 5, np.array([[-0.5, 0.0], [0.5, 0.25]]), np.array([[0.2, 0.4], [0.6, 0.8]]), 0.25)
        assert (img[..., 3] == 255).sum() == 2 * 64  # two 8x8 squares
        live = c.frame(1).sha256
        c.close()
    finally:
        stop_gpu(proc)
        shutil.rmtree(d, ignore_errors=True)
    out = tmp_path / "out"
    r = subprocess.run(
        [sys.executable, "-m", "nxrecomp", "replay", str(rec), "--out", str(out)], capture_output=True, text=True, timeout=300
    )
    assert r.returncode == 0, r.stderr
    assert dict(line.split() for line in (out / "frames.txt").read_text().splitlines()) == {"1": live}


def test_whole_pipelines_carry_the_geometry_stage_too():
    """Without graphics pipeline libraries (``gpu_host.pipeline_library = off``) the whole
    pipeline gets the geometry stage: the same squares."""
    g = Gpu({"NXRECOMP_GPU_HOST_PIPELINE_LIBRARY": "off"})
    try:
        vs, fs = spirv("vertex", VS_PASS, VS_PASS_HDR), spirv("fragment", FS_QUAD, FS_QUAD_HDR)
        g.client.register(ProgramDesc(5, vs, fs, geometry=geometry_modules(86)))
        pts, cols = np.array([[-0.5, 0.0], [0.5, 0.25]]), np.array([[0.2, 0.4], [0.6, 0.8]])
        img = draw_points(g, 5, pts, cols, 0.25)
        covered, ambiguous, ref = points_to_quads(pts, cols, 0.25, (W, H))
        want = np.round(np.clip(ref, 0, 1) * 255).astype(int)
        want[~covered] = 0
        assert covered.sum() == 2 * 64 and np.abs(img - want)[~ambiguous].max() <= 1
    finally:
        g.close()
