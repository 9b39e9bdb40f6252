"""Compute dispatches through the real processes (issue 31; gpu_host/compute.py, PROTOCOL.md
"Compute"): a CUDA-style kernel compiled by the shader corpus's tools for SM86 and SM53
(tests/shader_svc/cuda_build.py: nvcc/NVRTC + ptxas from PyPI, a loud skip where they cannot be
fetched), translated by a real shader service, bound and dispatched through the NVN front end
(cpu_host/horizon/hle/nvn/compute.py, its Python recorder called as a guest's calls reach it), and
replayed by a real GPU process on lavapipe: the kernel writes a storage buffer (read back from
guest memory after the fence) and a surface (sampled by a draw after the dispatch and presented),
both exact against numpy.  Hostile packets are dropped with a named error while the process goes
on serving; a GPU process killed before it read a dispatch is replaced and the client's replay of
its registrations and pending submission gives the same words.

The kernel (``fill``): thread i < n reads a[i], writes v = a[i] * 3 + 0x01020304 to o[i] and, as a
32-bit texel, to the surface whose handle is b's first 64-bit word at column i % 16, row i / 16
(a 2D surface of an RGBA8 render target: the texel's bytes are v's little-endian bytes).
"""

from __future__ import annotations

import struct
import sys
import time
import types
from pathlib import Path

import cffi
import numpy as np
import pytest

from cpu_host.gpu_client.registry import ProgramDesc, SamplerDesc, TextureDesc
from gpu_guest import P, Gpu, frame_image, gpu_log, rect_uv_px, replayed_frames, shader_service_env

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "shader_svc"))  # the corpus tools

W, H = 16, 12  # the surface: one texel per thread
N = W * H  # threads: three groups of 64
BLOCK = 64
A_OFF, B_OFF, O_OFF, PAR_OFF, VTX_OFF = 0x400000, 0x410000, 0x420000, 0x430000, 0x440000
SURF_OFF, SHOW_OFF = 0x500000, 0x510000
CODE_OFF = 0x10000  # the kernel's code in the front end's view of the pool
SRC_BODY = r"""
K(fill) {
  int i = TID; if (i >= n) return;
  uint32_t v = a[i] * 3u + 0x01020304u;
  o[i] = v;
  cudaSurfaceObject_t s = ((const unsigned long long *)b)[0];
  surf2Dwrite(v, s, (i & 15) * 4, i >> 4);
}
"""


def expected(a: np.ndarray) -> np.ndarray:
    return (a.astype(np.uint64) * 3 + 0x01020304).astype(np.uint32)


@pytest.fixture(scope="module")
def kernels():
    """{isa: cubin.Kernel} of ``fill`` for SM86 and SM53 (O3)."""
    import cuda_build
    import cuda_corpus
    import nvtools

    out = {}
    for isa in (86, 53):
        try:
            out[isa] = cuda_build.build(cuda_corpus.HEADER + SRC_BODY, isa, "O3")["fill"]
        except (cuda_build.NoCompiler, nvtools.ToolUnavailable) as e:
            pytest.skip(f"LOUD SKIP: no CUDA compiler/ptxas from PyPI: {e}")
    return out


@pytest.fixture(scope="module")
def shader_service(tmp_path_factory):
    """A real shader service on a loopback port; the front end's translate_shader reaches it."""
    with shader_service_env(tmp_path_factory.mktemp("shcache")):
        yield


@pytest.fixture(scope="module")
def env(kernels, shader_service):
    g = Gpu()
    c = g.client
    c.register(SamplerDesc(62))
    g.pool.write(VTX_OFF, rect_uv_px(0, 0, W, H, W, H).tobytes())
    yield g
    g.close()


class Guest:
    """The NVN front end with its Python recorder, called as a guest's calls reach it (a CPU record
    whose X registers hold the arguments; guest structures in this process's memory), connected to
    the real GPU process's client.  The front end's memory pool object is the client's pool 1: its
    GPU addresses map to pool offsets, the packets name pool 1."""

    def __init__(self, gpu: Gpu, monkeypatch) -> None:
        from cpu_host.horizon.hle.abi import Call
        from cpu_host.horizon.hle.nvn.frontend import NvnService
        from cpu_host.horizon.hle.nvn.objects import MemoryPool, Texture
        from cpu_host.horizon.hle.services import translate_shader

        monkeypatch.setenv("NXRECOMP_CPU_HOST_NVN_RECORDER", "python")
        self.Call = Call
        self.ffi = ffi = cffi.FFI()
        ffi.cdef("typedef struct { uint64_t x[32]; } GuestCpu;")  # X registers first, as NxCpu
        self.cpu = ffi.new("GuestCpu *")
        self.lib = types.SimpleNamespace(nx_hz_range_ok=lambda addr, size, perm: 1)
        self.mem = ffi.new("uint64_t[64]")  # NVN structures, 8 bytes each
        self.view = ffi.new("uint8_t[]", 1 << 23)  # the front end's view of pool 1 (code lives here)
        self.base = int(ffi.cast("uintptr_t", self.view))
        self.svc = svc = NvnService(connect=lambda: gpu.client, translate=translate_shader)
        svc.next_id = 1000  # object ids clear of the fixture's programs and textures
        svc.objects[1] = MemoryPool(1, self.base, 1 << 23, False)
        self.texture = Texture  # the texture pool's entries are registered by the tests
        self.cb = self.at(0)
        self.call(svc.cb_initialize, self.cb)

    def at(self, k: int) -> int:
        return int(self.ffi.cast("uintptr_t", self.mem)) + 8 * k

    def call(self, fn, *args: int):
        for i, a in enumerate(args):
            self.cpu.x[i] = a
        return fn(self.Call(self.cpu, self.ffi, self.lib))

    def program(self, slot: int, arch: int, code: bytes, bank: int, banks=(), table: list | None = None) -> int:
        """nvnProgramInitialize + nvnProgramSetShaders of one compute stage; ``banks``: the
        program's constant banks ((number, bytes), each copied into the pool after the code) as
        nvn.h's NVNconstantBank table, or ``table``: raw (number, size, address) entries."""
        from cpu_host.horizon.hle.nvn.tables import SHADER_MAGIC

        s = self.svc
        ptr = self.at(slot)
        self.call(s.program_initialize, ptr)
        self.view[CODE_OFF : CODE_OFF + len(code)] = code
        at, rows = CODE_OFF + ((len(code) + 255) & ~255), []
        for num, data in banks:
            self.view[at : at + len(data)] = data
            rows.append((num, len(data), self.base + at))
            at += (len(data) + 255) & ~255
        rows = rows if table is None else table
        tab = self.ffi.new("uint64_t[]", [w for n, sz, a in rows for w in (n | sz << 32, a)] or [0])
        tab_at = int(self.ffi.cast("uintptr_t", tab))
        ctrl = self.ffi.new(
            "uint32_t[12]", [SHADER_MAGIC, 1, arch, len(code), BLOCK, 1, 1, bank, len(rows), 0, tab_at & 0xFFFFFFFF, tab_at >> 32]
        )
        data = self.ffi.new("uint64_t[2]", [self.base + CODE_OFF, int(self.ffi.cast("uintptr_t", ctrl))])
        self._keep = (ctrl, data, tab)
        assert self.call(s.program_set_shaders, ptr, 1, int(self.ffi.cast("uintptr_t", data))) == 1
        return ptr


def record_dispatch(g: Guest, prog: int, tex_id: int, out_off: int) -> list[tuple]:
    """The front end's packets for: bind program, parameters, a/b/o, image 0, dispatch."""
    from cpu_host.horizon.hle.nvn.compute import ComputeFunctions

    s = g.svc
    cf = ComputeFunctions(s)
    s.texture_slots[5] = g.texture(tex_id, W, H, "RGBA8", 0, None, 0, 0)
    g.call(s.cb_begin, g.cb)
    g.call(s.cb_program, g.cb, prog, 1)
    g.call(s.cb_uniform, g.cb, 1, 0, g.base + PAR_OFF, 28)
    for k, off in enumerate((A_OFF, B_OFF, out_off)):
        g.call(cf.bind_storage, g.cb, 1, k, g.base + off, N * 4 if k != 1 else 64)
    handle = g.call(cf.image_handle, g.at(9), 5)
    g.call(cf.bind_image, g.cb, 1, 0, handle)
    g.call(cf.dispatch, g.cb, N // BLOCK, 1, 1)
    return list(g.call(lambda c: s._rec(c, "test"), g.cb).commands)


def draw_surface(tex: int, show: int, frame: int) -> list[tuple]:
    """A draw after the dispatch sampling the surface 1:1 (nearest) into ``show``, presented."""
    return [
        (P.OP_TARGET, show),
        (P.OP_CLEAR, 0, 0, 0, 1),
        (P.OP_PROGRAM, 2),
        (P.OP_VERTEX_LAYOUT, 16, 0, [[0, 2, 0], [1, 2, 8]]),
        (P.OP_VERTEX, 1, VTX_OFF, 96),
        (P.OP_TEXTURE, 0, tex, 62),
        (P.OP_DRAW, 6, 1, 0, 0),
        (P.OP_WRITEBACK, tex),
        (P.OP_PRESENT, frame, show),
    ]


def inputs(gpu: Gpu, seed: int, out_off: int) -> np.ndarray:
    a = np.random.default_rng(seed).integers(0, 2**32, N, dtype=np.uint64).astype(np.uint32)
    gpu.pool.write(A_OFF, a.tobytes())
    gpu.pool.write(B_OFF, bytes(64))  # b[0]: surface handle 0 = surface pool entry 0
    gpu.pool.write(out_off, bytes(4 * N))
    gpu.pool.write(PAR_OFF, struct.pack("<QQQi", 0xA, 0xB, 0xC, N))  # guest addresses: replaced
    return a


def words(gpu: Gpu, off: int, n: int = N) -> np.ndarray:
    return np.frombuffer(bytes(gpu.pool.mm[off : off + 4 * n]), np.uint32)


def targets(gpu: Gpu, k: int) -> tuple[int, int]:
    tex, show = 300 + 2 * k, 301 + 2 * k
    c = gpu.client
    c.register(TextureDesc(tex, 1, SURF_OFF + k * 0x1000, W, H, "RGBA8", block_linear=False, pitch=W * 4, render_target=True))
    c.register(TextureDesc(show, 1, SHOW_OFF, W, H, "RGBA8", block_linear=False, pitch=W * 4, render_target=True))
    return tex, show


@pytest.mark.parametrize("isa", [86, 53])
def test_front_end_dispatch_writes_a_buffer_and_a_surface_a_draw_samples(env, kernels, isa, monkeypatch):
    k = kernels[isa]
    g = Guest(env, monkeypatch)
    prog = g.program(10, isa, k.code, k.cbank0_size)
    tex, show = targets(env, isa)
    a = inputs(env, isa, O_OFF)
    cmds = record_dispatch(g, prog, tex, O_OFF)
    ops = [c[0] for c in cmds]
    assert ops.count(P.OP_DISPATCH) == 1 and ops.count(P.OP_COMPUTE_BUFFER) == 3
    for c in cmds:
        assert P.check(c)  # every recorded packet passes the GPU process's format check
    frame = next(env.frames)
    before = env.client.dropped()
    env.client.wait(env.client.submit(cmds + draw_surface(tex, show, frame)))
    assert env.client.dropped() == before, gpu_log(env.dir)[-2000:]
    want = expected(a)
    assert np.array_equal(words(env, O_OFF), want)  # the storage buffer, written back
    assert np.array_equal(words(env, SURF_OFF + isa * 0x1000), want)  # the surface, WRITEBACK
    shown = frame_image(env.client, frame).reshape(-1, 4).copy().view(np.uint32).ravel()
    assert np.array_equal(shown, want)  # the draw after the dispatch sampled what it wrote


def _dispatch_packets(prog: int, tex: int, out_off: int, bank: int, params_at: int, x: int = N // BLOCK) -> list[tuple]:
    return [
        (P.OP_COMPUTE_BUFFER, 0, 1, A_OFF, 4 * N, params_at, False),
        (P.OP_COMPUTE_BUFFER, 1, 1, B_OFF, 64, params_at + 8, False),
        (P.OP_COMPUTE_BUFFER, 2, 1, out_off, 4 * N, params_at + 16, True),
        (P.OP_COMPUTE_SURFACE, 0, tex),
        (P.OP_DISPATCH, prog, x, 1, 1, bank, 7, 1, PAR_OFF, 28, params_at),
    ]


def _registered(env, kernels) -> tuple[int, int, int]:
    """Compute program 90 (SM86, registered straight through the client) and its bank layout."""
    from cpu_host.horizon.hle.nvn.compute import ComputeInfo, driver_words
    from shader_svc.sm86.cbank import PARAMS
    from shader_svc.sm86.to_spirv import ComputeSpec, translate_compute
    from shader_svc.sm86 import decode

    k = kernels[86]
    spv = translate_compute(decode.decode_stream(k.code), ComputeSpec((BLOCK, 1, 1), ()))
    env.client.register(ProgramDesc(90, spv, b""))
    bank = (k.cbank0_size + 15) & ~15
    env.consts = [(P.OP_COMPUTE_CONST, at, v) for at, v in driver_words(ComputeInfo(86, (BLOCK, 1, 1), bank), (N // BLOCK, 1, 1))]
    return 90, bank, PARAMS


def _dropped_with(env, cmds: list, msg: str) -> None:
    c = env.client
    before = c.dropped()
    seq = c.submit(cmds)
    c.wait(seq)
    assert c.dropped() == before + 1, f"not dropped: {cmds[-1]}"
    want = f"dropped submission {seq}: "
    deadline = time.monotonic() + 60  # a bound, not a speed check (a loaded machine is slow)
    while time.monotonic() < deadline:
        lines = [ln for ln in gpu_log(env.dir).splitlines() if want in ln]
        if lines:
            assert msg in lines[-1], lines[-1]
            return
        time.sleep(0.05)
    raise AssertionError(f"no log line for submission {seq}: {gpu_log(env.dir)[-1500:]}")


def test_hostile_dispatch_packets_are_dropped_by_name_and_serving_goes_on(env, kernels):
    prog, bank, pat = _registered(env, kernels)
    tex, show = targets(env, 7)
    env.client.register(TextureDesc(320, 1, 0x600000, W, H, "RGBA8", block_linear=False, pitch=W * 4))  # sampled, not a target
    ok = [*env.consts, *_dispatch_packets(prog, tex, O_OFF, bank, pat)]
    cases = [
        (
            [*ok[:-1], (P.OP_DISPATCH, 999, 3, 1, 1, bank, 7, 1, PAR_OFF, 28, pat)],
            "field program 999 is not a registered compute program",
        ),
        ([*env.consts, *_dispatch_packets(prog, tex, O_OFF, bank, pat, x=1 << 31)], "DISPATCH: field x = 2147483648 exceeds"),
        ([*ok[:-1], (P.OP_DISPATCH, prog, 3, 1, 1, bank, 0xF, 1, PAR_OFF, 28, pat)], "storage buffer slot 3 is not bound"),
        ([(P.OP_COMPUTE_BUFFER, 0, 1, (8 << 20) - 16, 64, pat, False)], "runs past pool 1's end"),
        ([(P.OP_COMPUTE_SURFACE, 0, 320)], "field texture 320 (RGBA8, 1 sample(s), 1 layer(s)) is not a one-sample"),
        ([(P.OP_COMPUTE_SURFACE, 0, 4242)], "field texture 4242 is not a registered texture"),
        ([*ok[:-1], (P.OP_DISPATCH, prog, 3, 1, 1, 8, 0, P.EMPTY, 0, 0, 0)], "field bank_size = 8"),
        (
            [(P.OP_COMPUTE_CONST, 0x1000, 1), (P.OP_DISPATCH, prog, 1, 1, 1, 256, 0, P.EMPTY, 0, 0, 0)],
            "COMPUTE_CONST at 0x1000 lies past the 256-byte bank",
        ),
        ([(P.OP_COMPUTE_BUFFER, 16, 1, A_OFF, 64, pat, False)], "COMPUTE_BUFFER: field slot = 16 is not in 0..15"),
        ([(P.OP_TARGET, show), (P.OP_PROGRAM, prog)], f"field program {prog} is not a registered program"),
        ([*ok[:-1], (P.OP_DISPATCH, prog, 3, 1, 1, bank, 7, 1, PAR_OFF, 28, bank - 4)], "fields params_at/params_size"),
    ]
    for cmds, msg in cases:
        _dropped_with(env, cmds, msg)
    # and the process still serves a good dispatch, exactly
    a = inputs(env, 99, O_OFF)
    frame = next(env.frames)
    env.client.wait(env.client.submit(ok + draw_surface(tex, show, frame)))
    assert np.array_equal(words(env, O_OFF), expected(a))
    assert np.array_equal(frame_image(env.client, frame).reshape(-1, 4).copy().view(np.uint32).ravel(), expected(a))


def test_a_killed_gpu_process_is_replaced_and_the_dispatch_replayed(env, kernels):
    """SIGSTOP the GPU process, submit a dispatch, SIGKILL it, start another on the same sockets:
    the client re-attaches, registers the compute program again (a GLCompute module with no
    fragment stage) and rewrites the pending submission, which runs exactly."""
    prog, bank, pat = _registered(env, kernels)
    tex, show = targets(env, 8)
    out = O_OFF + 0x8000
    a = inputs(env, 123, out)
    frame = next(env.frames)
    c = env.client
    env.submit_to_a_replaced_process(
        [*env.consts, *_dispatch_packets(prog, tex, out, bank, pat), *draw_surface(tex, show, frame)]
    )
    assert np.array_equal(words(env, out), expected(a))
    assert np.array_equal(frame_image(c, frame).reshape(-1, 4).copy().view(np.uint32).ravel(), expected(a))


def test_compute_packets_have_one_binary_form():
    """The four packets convert to the binary blob (issue 32's format) and decode back in C
    (gpu_host/nxpkt.c, its op table generated from packets.OPS) to what packets.check gives; a
    slot beyond its range is refused by the C format pass by name."""
    from gpu_host import binpackets, nxpkt

    cmds = [
        (P.OP_COMPUTE_BUFFER, 15, 1, 1 << 33, 4096, 0x160, True),
        (P.OP_COMPUTE_CONST, 0xFFFC, 0xDEADBEEF),
        (P.OP_COMPUTE_SURFACE, 7, P.EMPTY),
        (P.OP_DISPATCH, 9, 65535, 2, 3, 65536, 0xFFFF, P.EMPTY, 0, 0, 0),
    ]
    assert nxpkt.decode(binpackets.convert(cmds)) == [P.check(c) for c in cmds]
    blob = bytearray(binpackets.convert([(P.OP_COMPUTE_SURFACE, 7, 1)]))
    blob[16 + 4] = 8  # slot 8: past the surface pool
    with pytest.raises(nxpkt.NativePacketError, match="COMPUTE_SURFACE: field slot"):
        nxpkt.decode(bytes(blob))


def test_a_recording_of_a_dispatch_replays_to_the_same_frame(kernels, tmp_path):
    """``--record`` holds the compute program (a GLCompute module, no fragment stage) and the
    dispatch's snapshot; ``nxrecomp replay`` renders the frame the live process presented."""
    from cpu_host.gpu_client.client import GpuClient
    from cpu_host.gpu_client.shaders import GlslSource
    from gpu_guest import TEX_FS, TEX_VS, start_gpu, stop_gpu

    rec = tmp_path / "compute.nxgpu"
    proc, d = start_gpu(args=["--record", str(rec)])
    try:
        c = GpuClient(d, ring_capacity=1 << 20)
        c.connect(timeout=30)
        g = types.SimpleNamespace(client=c, pool=c.create_pool(1, 8 << 20))
        c.register_program(2, GlslSource(TEX_VS, TEX_FS))
        c.register(SamplerDesc(62))
        g.pool.write(VTX_OFF, rect_uv_px(0, 0, W, H, W, H).tobytes())
        prog, bank, pat = _registered(g, kernels)
        tex, show = targets(g, 0)
        a = inputs(g, 5, O_OFF)
        c.wait(c.submit([*g.consts, *_dispatch_packets(prog, tex, O_OFF, bank, pat), *draw_surface(tex, show, 1)]))
        assert c.dropped() == 0
        live = c.frame(1).sha256
        assert np.array_equal(np.frombuffer(c.frame(1).rgba, np.uint32), expected(a))
        c.close()
    finally:
        stop_gpu(proc)
    assert replayed_frames(rec, tmp_path / "out") == [["1", live]]


def test_native_recorder_leaves_compute_binds_to_the_compute_module(monkeypatch):
    """With the C recorder (cpu_host.nvn_recorder = native): a compute-stage uniform bind is not
    recorded in C (it would become a graphics UNIFORM) but left to Python, which keeps it as the
    kernel's parameters; binding a compute program likewise (the C recorder knows graphics
    programs only).  The front end's retry serves both (SERVED); the dispatch's packets go into the
    C recorder's stream and decode (C) to what the Python recorder makes."""
    from cpu_host.gpu_client import blob
    from cpu_host.horizon.hle.nvn.compute import ComputeFunctions, ComputeInfo
    from cpu_host.horizon.hle.nvn.native import NativeRecorder
    from cpu_host.horizon.hle.nvn.objects import Program
    from gpu_host import binpackets, nxpkt

    r = NativeRecorder()
    r.L.nxr_bench_init()
    try:
        g = Guest(types.SimpleNamespace(client=None), monkeypatch)
        s = g.svc
        s.native = r
        prog_ptr = g.at(12)
        prog = Program(777)
        prog.compute = ComputeInfo(86, (BLOCK, 1, 1), 384)
        s.objects[777] = prog
        g.mem[12] = 777
        g.call(s.cb_begin, g.cb)
        names = r.names()
        retry = {
            n: s._native_retry(names.index(n), f)
            for n, f in (
                ("nvnCommandBufferBindProgram", s.cb_program),
                ("nvnCommandBufferBindUniformBuffer", s.cb_uniform),
            )
        }
        cpu_addr = int(g.ffi.cast("uintptr_t", g.cpu))
        for i, v in enumerate((g.cb, 1, 0, g.base + PAR_OFF, 28)):
            g.cpu.x[i] = v
        assert r.try_call(names.index("nvnCommandBufferBindUniformBuffer"), cpu_addr) == ""  # Python's turn
        g.cpu.x[1] = 2  # the same call at the vertex stage: C's (its pool is unknown to C here: named)
        assert "lies in no memory pool" in r.try_call(names.index("nvnCommandBufferBindUniformBuffer"), cpu_addr)
        g.call(retry["nvnCommandBufferBindProgram"], g.cb, prog_ptr, 1)
        g.call(retry["nvnCommandBufferBindUniformBuffer"], g.cb, 1, 0, g.base + PAR_OFF, 28)
        cf = ComputeFunctions(s)
        g.call(cf.bind_storage, g.cb, 1, 0, g.base + A_OFF, 4 * N)
        g.call(cf.dispatch, g.cb, 3, 1, 1)
        rec = g.call(lambda c: s._rec(c, "test"), g.cb)
        block = r.end(rec.commands.cb)
        body = b"".join(bytes(b) for b, _ in block.chunks)
        got = nxpkt.decode(binpackets.blob_header(sum(n for _, n in block.chunks), len(body)) + body)
        assert isinstance(block, blob.Block)
        disp = [p for p in got if p[0] == P.OP_DISPATCH]
        assert disp == [(P.OP_DISPATCH, 777, 3, 1, 1, 384, 1, 1, PAR_OFF, 28, 0x160)]
        assert (P.OP_COMPUTE_BUFFER, 0, 1, A_OFF, 4 * N, 0x160, True) in got
        assert not [p for p in got if p[0] in (P.OP_UNIFORM, P.OP_PROGRAM)]  # nothing for the graphics stages
    finally:
        r.L.nxr_reset()


def test_a_dispatch_reads_what_an_earlier_one_wrote_through_an_overlapping_range(env, kernels):
    """Dispatch 1 writes o1; dispatch 2 reads its ``a`` through a different range that overlaps
    it (o1 .. o1 + 4N + 64: another size, so another copy in the snapshot) and writes o2:
    o2 = f(f(a)), pool memory as dispatch 1 left it (before the overlap copy, dispatch 2 read the
    snapshot's zeros)."""
    prog, bank, pat = _registered(env, kernels)
    tex, show = targets(env, 9)
    o1, o2 = O_OFF + 0x10000, O_OFF + 0x18000
    a = inputs(env, 7, o1)
    env.pool.write(o2, bytes(4 * N))
    second = [
        (P.OP_COMPUTE_BUFFER, 0, 1, o1, 4 * N + 64, pat, False),  # overlaps o1's range, longer
        (P.OP_COMPUTE_BUFFER, 2, 1, o2, 4 * N, pat + 16, True),
        (P.OP_DISPATCH, prog, N // BLOCK, 1, 1, bank, 7, 1, PAR_OFF, 28, pat),
    ]
    env.pool.write(o1 + 4 * N, bytes(64))
    c = env.client
    before = c.dropped()
    seq = c.submit([*env.consts, *_dispatch_packets(prog, tex, o1, bank, pat), *second])
    c.wait(seq)
    assert c.dropped() == before, gpu_log(env.dir)[-1500:]
    assert np.array_equal(words(env, o1), expected(a))
    assert np.array_equal(words(env, o2), expected(expected(a)))


def test_front_end_refuses_bad_compute_programs_and_binds_by_name(env, kernels, monkeypatch):
    """The NVN front end names a guest's mistakes in compute calls (GuestError: the process ends
    with the report): a bank smaller than the ISA's parameter offset, storage buffers of a graphics
    stage, an index past the slots, an image handle of no texture, a dispatch with no program."""
    from cpu_host.horizon.hle.abi import GuestError
    from cpu_host.horizon.hle.nvn.compute import ComputeFunctions

    g = Guest(env, monkeypatch)
    with pytest.raises(GuestError, match=r"bank_size 64 ends before the SM86 parameters at 0x160"):
        g.program(11, 86, kernels[86].code, 64)
    s, cf = g.svc, ComputeFunctions(g.svc)
    g.call(s.cb_begin, g.cb)
    with pytest.raises(GuestError, match=r"stage 2 \(storage buffers and images are served for the compute stage"):
        g.call(cf.bind_storage, g.cb, 2, 0, g.base + A_OFF, 64)
    with pytest.raises(GuestError, match=r"storage buffer index 16 \(0\.\.15\)"):
        g.call(cf.bind_storage, g.cb, 1, 16, g.base + A_OFF, 64)
    with pytest.raises(GuestError, match=r"image handle 0x63 names no texture"):
        g.call(cf.bind_image, g.cb, 1, 0, 99)
    with pytest.raises(GuestError, match=r"no compute program bound"):
        g.call(cf.dispatch, g.cb, 1, 1, 1)


# -- gpu-compute2: a program's own constant banks (ptxas's SM5x literal pool, c[0x2]) ----------------
# ``lit``: two fused multiply-adds whose float literals ptxas -O3 for SM53 keeps in c[0x2] (the
# cubin's .nv.constant2.lit: FFMA R0, R2, c[0x2][0x0], R7).
SRC_LIT = r"""
K(lit) {
  int i = TID; if (i >= n) return;
  float x = __uint_as_float(a[i]);
  float y = __fmaf_rn(x, 0.3f, 0.7f);
  o[i] = __float_as_uint(__fmaf_rn(y, 1.1f, -0.9f));
}
"""


def fma32(x: np.ndarray, y: float, z: float) -> np.ndarray:
    """x * y + z rounded once to the nearest float32 (ties to even), from exact rationals."""
    from fractions import Fraction

    out = []
    for p in x:
        v = Fraction(float(p)) * Fraction(float(np.float32(y))) + Fraction(float(np.float32(z)))
        f = np.float32(float(v))  # nearest float64, then float32: the candidates around it
        cands = (f, np.nextafter(f, np.float32(-np.inf)), np.nextafter(f, np.float32(np.inf)))
        out.append(min(cands, key=lambda c: (abs(Fraction(float(c)) - v), int(np.float32(c).view(np.uint32)) & 1)))
    return np.array(out, np.float32)


@pytest.fixture(scope="module")
def lit53():
    import cuda_build
    import cuda_corpus
    import nvtools
    from shader_svc.sm53 import decode as dec

    try:
        k = cuda_build.build(cuda_corpus.HEADER + SRC_LIT, 53, "O3")["lit"]
    except (cuda_build.NoCompiler, nvtools.ToolUnavailable) as e:
        pytest.skip(f"LOUD SKIP: no CUDA compiler/ptxas from PyPI: {e}")
    assert [n for n, _ in k.banks] == [2], k.banks
    assert any("c[0x2]" in i.text() for i in dec.decode_stream(k.code)), "ptxas no longer reads c[0x2] here: pick other literals"
    return k


def test_sm53_literal_pool_kernel_runs_exactly_with_its_bank(env, lit53, monkeypatch):
    """The front end passes the program's NVNconstantBank table to the shader service
    (Program.banks): the SM53 -O3 kernel reading its literals from c[0x2] is translated and its
    dispatch through the GPU process is exact (bit for bit) against an exact-rational fused
    multiply-add.  Without the table the service refuses it naming c[0x2] (what the front end did
    before: it passed no banks)."""
    from cpu_host.horizon.hle.abi import GuestError

    k = lit53
    g = Guest(env, monkeypatch)
    with pytest.raises(GuestError, match=r"c\[0x2\]"):
        g.program(13, 53, k.code, k.cbank0_size)
    prog = g.program(14, 53, k.code, k.cbank0_size, k.banks)
    tex, _ = targets(env, 11)
    inputs(env, 53, O_OFF)
    x = np.random.default_rng(2).uniform(-1000, 1000, N).astype(np.float32)
    env.pool.write(A_OFF, x.tobytes())
    cmds = record_dispatch(g, prog, tex, O_OFF)
    before = env.client.dropped()
    env.client.wait(env.client.submit(cmds))
    assert env.client.dropped() == before, gpu_log(env.dir)[-2000:]
    want = fma32(fma32(x, 0.3, 0.7), 1.1, -0.9).view(np.uint32)
    assert np.array_equal(words(env, O_OFF), want)


def test_front_end_refuses_bad_program_banks_by_name(env, lit53, monkeypatch):
    """A bank table the front end cannot read is named by the entry (count, size, pool); one the
    shader service refuses (bank 0, the parameter bank) comes back with the service's field."""
    from cpu_host.horizon.hle.abi import GuestError

    k = lit53
    g = Guest(env, monkeypatch)
    good = g.base + CODE_OFF + 0x8000
    cases = [
        ([(2, 8, good)] * 32, r"compute bank_count 32 is more than 31"),
        ([(2, 0, good)], r"compute constant bank 0 \(c\[0x2\]\) of 0 bytes"),
        (
            [(2, 8, good), (3, 8, 0x1234)],
            r"compute constant bank 1 \(c\[0x3\]\): GPU address range 0x1234\+0x8 lies in no memory pool",
        ),
        ([(0, 8, good)], r"banks\[0\]\.bank: constant bank number 0"),
    ]
    for table, msg in cases:
        with pytest.raises(GuestError, match=msg):
            g.program(15, 53, k.code, k.cbank0_size, table=table)


# -- gpu-compute2: kernel texture pools (TEX.B through a handle sampler << 20 | texture) --------------
# ``texr``: thread i samples the texture object in b[0] (nearest) at texel (i % 16, i / 16)'s
# centre of a 16x16 RGBA32F texture and writes v.x - 2 v.w (texels multiples of 1/8: exact).
SRC_TEX = r"""
K(texr) {
  int i = TID; if (i >= n) return;
  cudaTextureObject_t t = ((const unsigned long long *)b)[0];
  float4 v = tex2D<float4>(t, ((i & 15) + 0.5f) * 0.0625f, ((i >> 4) + 0.5f) * 0.0625f);
  o[i] = __float_as_uint(v.x - 2.0f * v.w);
}
"""
TEX_OFF, DECOY_OFF = 0x600000, 0x608000
TEX_SLOT, SAMPLER_SLOT = 3, 2


@pytest.fixture(scope="module")
def texr():
    """{isa: Kernel} of ``texr`` (O3): SM86 TEX.SCR.B.LL, SM53 TEX.B.P."""
    import cuda_build
    import cuda_corpus
    import nvtools

    try:
        return {isa: cuda_build.build(cuda_corpus.HEADER + SRC_TEX, isa, "O3")["texr"] for isa in (86, 53)}
    except (cuda_build.NoCompiler, nvtools.ToolUnavailable) as e:
        pytest.skip(f"LOUD SKIP: no CUDA compiler/ptxas from PyPI: {e}")


@pytest.mark.parametrize("isa", [86, 53])
def test_kernel_samples_the_registered_texture_pool_exactly(env, texr, isa, monkeypatch):
    """A kernel sampling a texture object: the front end records the texture/sampler pools as
    registered (a POOLS packet before the DISPATCH, as before a draw of a bindless program), the
    GPU process binds them in set 1 (bindings 0, 1) beside the bank and surfaces; the words equal
    numpy's texel arithmetic, and a decoy texture in another pool entry shows a wrong pick.
    Before, the program was refused at registration (set 1 binding 0 not bound)."""
    from cpu_host.horizon.hle.nvn.objects import Sampler

    k = texr[isa]
    g = Guest(env, monkeypatch)
    prog = g.program(16, isa, k.code, k.cbank0_size)
    assert g.svc.objects[g.mem[16]].compute.pools  # read off the translated module's bindings
    r = np.random.default_rng(isa)
    texels = (r.integers(-1000, 1000, (16, 16, 4)) / 8).astype(np.float32)
    decoy = (r.integers(-1000, 1000, (16, 16, 4)) / 8).astype(np.float32)
    tid, did, sid = 340 + isa, 440 + isa, 70
    for t, off, px in ((tid, TEX_OFF, texels), (did, DECOY_OFF, decoy)):
        env.pool.write(off, px.tobytes())
        env.client.register(TextureDesc(t, 1, off, 16, 16, "RGBA32F", block_linear=False, pitch=16 * 16))
    env.client.register(SamplerDesc(sid))
    s = g.svc
    s.texture_slots[TEX_SLOT] = g.texture(tid, 16, 16, "RGBA32F", 0, None, 0, 0)
    s.texture_slots[TEX_SLOT - 1] = g.texture(did, 16, 16, "RGBA32F", 0, None, 0, 0)
    s.sampler_slots[SAMPLER_SLOT] = Sampler(sid, False, False)
    surf, _ = targets(env, 12)
    inputs(env, 0, O_OFF)
    env.pool.write(B_OFF, struct.pack("<Q", SAMPLER_SLOT << 20 | TEX_SLOT))
    cmds = record_dispatch(g, prog, surf, O_OFF)
    pools = [c for c in cmds if c[0] == P.OP_POOLS]
    assert len(pools) == 1 and pools[0][1][TEX_SLOT] == tid and pools[0][2][SAMPLER_SLOT] == sid
    assert [c[0] for c in cmds].index(P.OP_POOLS) < [c[0] for c in cmds].index(P.OP_DISPATCH)
    before = env.client.dropped()
    env.client.wait(env.client.submit(cmds))
    assert env.client.dropped() == before, gpu_log(env.dir)[-2000:]
    i = np.arange(N)
    px = texels[i >> 4, i & 15]
    want = (px[:, 0] - np.float32(2) * px[:, 3]).astype(np.float32).view(np.uint32)
    assert np.array_equal(words(env, O_OFF), want)


def _rebind(spv: bytes, old: tuple[int, int], new: tuple[int, int]) -> bytes:
    """The module with the variable decorated (set, binding) ``old`` moved to ``new``."""
    w = list(struct.unpack(f"<{len(spv) // 4}I", spv))
    i, sets, binds = 5, {}, {}
    while i < len(w):
        n, op = w[i] >> 16, w[i] & 0xFFFF
        if op == 71 and w[i + 2] in (33, 34):
            (sets if w[i + 2] == 34 else binds)[w[i + 1]] = i + 3
        i += n
    (var,) = [v for v in binds if w[sets[v]] == old[0] and w[binds[v]] == old[1]]
    w[sets[var]], w[binds[var]] = new
    return struct.pack(f"<{len(w)}I", *w)


def test_compute_programs_with_unbound_descriptors_and_bad_pools_are_refused_by_name(env, kernels, texr):
    """What the GPU process does not bind (another set) is refused at registration naming the set
    and binding; a sampled image declared at a surface pool's binding (2D: 2, 1D: 3, 1D array: 4,
    2D array: 5, 3D: 6) is refused naming the image kind the pool has; a
    POOLS packet naming an unregistered texture before a dispatch drops the submission by name."""
    from nxrecomp.common.errors import NxError
    from shader_svc.sm86 import decode
    from shader_svc.sm86.to_spirv import ComputeSpec, translate_compute

    spv = translate_compute(decode.decode_stream(texr[86].code), ComputeSpec((BLOCK, 1, 1), ()))
    pools = [(2, "2D", r"\(1, 0, 2\)"), (3, "1D", r"\(0, 0, 2\)"), (4, "1D array", r"\(0, 1, 2\)")]
    for binding, pool, want in (*pools, (5, "2D array", r"\(1, 1, 2\)"), (6, "3D", r"\(2, 0, 2\)")):
        with pytest.raises(
            NxError,
            match=rf"compute program 91: set 1 binding {binding} is the {pool} surface pool: storage images "
            rf"\(Dim, Arrayed, Sampled\) = {want}, but the module declares \(1, 0, 1\) there",
        ):
            env.client.register(ProgramDesc(91, _rebind(spv, (1, 0), (1, binding)), b""))
    with pytest.raises(NxError, match=r"compute program 91: uses descriptor set 2 binding 0"):
        env.client.register(ProgramDesc(91, _rebind(spv, (1, 0), (2, 0)), b""))
    env.client.register(ProgramDesc(92, spv, b""))  # as translated: served
    prog, bank, pat = _registered(env, kernels)
    tex, _ = targets(env, 13)
    bad = (P.OP_POOLS, [4242] + [P.EMPTY] * (P.POOL_TEXTURES - 1), [P.EMPTY] * P.POOL_SAMPLERS)
    _dropped_with(
        env,
        [bad, *env.consts, *_dispatch_packets(prog, tex, O_OFF, bank, pat)],
        "field textures[0] = 4242 is not a registered texture",
    )


def test_native_recorder_sends_its_pools_again_after_a_dispatchs(monkeypatch):
    """A dispatch's POOLS packet goes into the C recorder's stream from Python (the compute module);
    the C recorder's own last POOLS is then stale, so its next draw of a pool-reading program sends
    its POOLS again even though its slots did not change (recorder.c nxr_append).  Without that the
    draw would sample the dispatch's entries."""
    from cpu_host.horizon.hle.nvn.native import NativeRecorder
    from gpu_host import binpackets, nxpkt

    r = NativeRecorder()
    r.L.nxr_bench_init()
    try:
        r.program(6, True)  # a graphics program reading the bindless pools
        r.texture_slot(0, 100)
        r.sampler_slot(1, 200)
        ffi = r.ffi
        cpu = ffi.new("uint64_t[64]")
        prog = ffi.new("uint64_t *", 6)
        cb = ffi.new("uint64_t *", 41)
        addr = lambda p: int(ffi.cast("uintptr_t", p))  # noqa: E731
        names = r.names()

        def call(name: str, *args: int) -> None:
            cpu[0] = addr(cb)
            for i, a in enumerate(args, 1):
                cpu[i] = a
            assert r.try_call(names.index(name), addr(cpu)) is None, name

        cmds = r.begin(41, addr(cb))
        attrs, stream = ffi.new("uint32_t[]", [2, 0, 0, 0]), ffi.new("uint32_t[]", [16, 0])
        call("nvnCommandBufferBindVertexAttribState", 1, addr(attrs))
        call("nvnCommandBufferBindVertexStreamState", 1, addr(stream))
        call("nvnCommandBufferBindProgram", addr(prog))
        call("nvnCommandBufferDrawArrays", 0, 0, 3)
        E = P.EMPTY
        mine = (P.OP_POOLS, [7] + [E] * (P.POOL_TEXTURES - 1), [E] * P.POOL_SAMPLERS)
        cmds.append(mine)  # what ComputeFunctions.dispatch appends before a DISPATCH
        call("nvnCommandBufferDrawArrays", 0, 0, 3)
        block = r.end(41)
        body = b"".join(bytes(b) for b, _ in block.chunks)
        got = nxpkt.decode(binpackets.blob_header(sum(n for _, n in block.chunks), len(body)) + body)
        c_pools = (P.OP_POOLS, (100, *[E] * (P.POOL_TEXTURES - 1)), (E, 200, E, E))
        pools = [p for p in got if p[0] == P.OP_POOLS]
        assert pools == [c_pools, P.check(mine), c_pools], pools
        assert got[-1][0] == P.OP_DRAW and got[-2] == c_pools
    finally:
        r.L.nxr_reset()


# -- gpu-compute2: compute bindings carried across EVENT_WAIT, recorded where they change ---------------
EV_OFF = 0x7F0000


def test_compute_bindings_are_carried_across_an_event_wait(env, kernels):
    """The part after an EVENT_WAIT starts with the compute bindings current at the wait
    (events.carried_state): the second dispatch rebinds only its output buffer and reads its input
    through the carried slot 0 (the first dispatch's output), the bank words and surface carried
    too: o2 = f(f(a)), exact.  Before, the part started with no bindings (dropped: slot 0 unbound)."""
    prog, bank, pat = _registered(env, kernels)
    tex, _ = targets(env, 14)
    o1, o2 = O_OFF + 0x30000, O_OFF + 0x38000
    a = inputs(env, 31, o1)
    env.pool.write(o2, bytes(4 * N))
    env.pool.write(EV_OFF, struct.pack("<I", 5))  # the wait is satisfied at once
    first = _dispatch_packets(prog, tex, o1, bank, pat)
    cmds = [
        *env.consts,
        *first,
        (P.OP_EVENT_WAIT, 1, EV_OFF, 0, 5),
        (P.OP_COMPUTE_BUFFER, 0, 1, o1, 4 * N, pat, False),  # a = the first dispatch's output
        (P.OP_COMPUTE_BUFFER, 2, 1, o2, 4 * N, pat + 16, True),
        first[-1],  # the same DISPATCH: slot 1, the bank words and the surface from before the wait
    ]
    c = env.client
    before = c.dropped()
    c.wait(c.submit(cmds))
    assert c.dropped() == before, gpu_log(env.dir)[-1500:]
    assert np.array_equal(words(env, o1), expected(a))
    assert np.array_equal(words(env, o2), expected(expected(a)))


def test_front_end_records_compute_bindings_where_they_change(env, kernels, monkeypatch):
    """A second dispatch with the same bindings records only its DISPATCH; one with another
    output buffer and grid records that buffer and the changed grid word; both recorded streams
    run exactly (the GPU process keeps the bindings for the submission)."""
    from cpu_host.horizon.hle.nvn.compute import ComputeFunctions

    k = kernels[86]
    g = Guest(env, monkeypatch)
    prog = g.program(17, 86, k.code, k.cbank0_size)
    tex, _ = targets(env, 15)
    o2 = O_OFF + 0x40000
    a = inputs(env, 41, O_OFF)
    env.pool.write(o2, bytes(4 * N))
    first = record_dispatch(g, prog, tex, O_OFF)
    s, cf = g.svc, ComputeFunctions(g.svc)
    g.call(cf.dispatch, g.cb, N // BLOCK, 1, 1)  # nothing changed
    g.call(cf.bind_storage, g.cb, 1, 2, g.base + o2, N * 4)
    g.call(cf.dispatch, g.cb, N // BLOCK // 3, 1, 1)  # one group: threads 0..63 of o2
    cmds = list(g.call(lambda c: s._rec(c, "test"), g.cb).commands)
    rest = cmds[len(first) :]
    assert [p[0] for p in rest[:1]] == [P.OP_DISPATCH]
    assert [p[0] for p in rest[1:]] == [P.OP_COMPUTE_BUFFER, P.OP_COMPUTE_CONST, P.OP_DISPATCH], rest
    assert rest[1][1] == 2 and rest[2][2] == 1  # slot 2; grid x 1 (SM86: c[0x0][0xc])
    before = env.client.dropped()
    env.client.wait(env.client.submit(cmds))
    assert env.client.dropped() == before, gpu_log(env.dir)[-2000:]
    assert np.array_equal(words(env, O_OFF), expected(a))
    got = words(env, o2)
    assert np.array_equal(got[:BLOCK], expected(a)[:BLOCK]) and not got[BLOCK:].any()
