"""Bindless textures through the GPU process: SM86 programs assembled here (TEX.B with per-pixel
handles, TEX.B.LZ with a handle from constant bank 0), translated by the shader service, registered
with a real GPU process and drawn through the real client and ring; the pools they read come from
POOLS packets.  Frame pixels equal numpy's samples of the pool entries the handles name."""

from __future__ import annotations

import struct
import sys
from pathlib import Path

import numpy as np
import pytest

from cpu_host.gpu_client.registry import ProgramDesc, SamplerDesc, TextureDesc
from gpu_guest import P, Scene, frame_image

from shader_svc import sph
from shader_svc import translate as tr
from shader_svc.sm86.assemble import assemble_program

# The programs the shader service's own bindless tests draw (tests/shader_svc/test_bindless.py):
# per-pixel handles (texture x & 7, sampler y & 3) and a handle from c[0x0][0x0]
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "shader_svc"))
from quad_draw import FS_HDR, TS, VS_PASS, VS_PASS_HDR, quad  # noqa: E402
from test_bindless import FS_PER_PIXEL, FS_UNIFORM, handle  # noqa: E402
from texel_refs import sample  # noqa: E402


def spirv(stage: str, text: str, hdr: dict, features: int = 0) -> bytes:
    header = sph.build(stage, **hdr)
    code = header + assemble_program(text, base=len(header))
    return tr.translate(tr.make_program(86, 2 if stage == "vertex" else 3, code, (), features))


SHADER_NON_UNIFORM = 5301  # SPIR-V Capability ShaderNonUniform (SPIR-V 1.5 specification, 3.31)


def capabilities(spv: bytes) -> set[int]:
    """The operands of a module's OpCapability instructions (opcode 17)."""
    words = struct.unpack(f"<{len(spv) // 4}I", spv)
    out, i = set(), 5
    while i < len(words):
        if words[i] & 0xFFFF == 17:
            out.add(words[i + 1])
        i += words[i] >> 16
    return out


# Many textures per draw: texture (x + y + c[0x0][0x0]) & 15 (per pixel: every one of the 16 pool
# entries in each draw, different inside every quad), sampler y & 3; c[0x0][0x0] is the draw's base
FS_MANY = """
IPA.PASS R0, a[0x80]
IPA.PASS R1, a[0x84]
IPA.PASS R8, a[0x70]
IPA.PASS R9, a[0x74]
F2I.TRUNC.NTZ R8, R8
F2I.TRUNC.NTZ R9, R9
IADD3 R10, R8, R9, RZ
IADD3 R10, R10, c[0x0][0x0], RZ
LOP3.LUT R10, R10, 0xf, RZ, 0xc0, !PT
LOP3.LUT R11, R9, 0x3, RZ, 0xc0, !PT
IMAD R12, R11, 0x100000, R10
TEX.B R6, R4, R0, R12, 2D
MOV R0, R4
MOV R1, R5
MOV R2, R6
MOV R3, R7
EXIT
"""


W, H = 32, 16  # test_bindless's sample()/uv() geometry
LAYOUT = (P.OP_VERTEX_LAYOUT, 64, 0, [[loc, 4, 16 * loc] for loc in range(4)])  # quad(): 4 x vec4


def uv(x: int, y: int) -> tuple[float, float]:
    return (x + 0.5) / W, (y + 0.5) / H


@pytest.fixture(scope="module")
def env(gpu):
    """16 pitch-linear 4x4 RGBA8 textures and 4 samplers (nearest, linear, nearest, linear),
    registered under ids that are not their pool positions; two bindless programs."""
    rng = np.random.default_rng(77)
    texels = [rng.integers(0, 256, (TS, TS, 4), dtype=np.uint8) for _ in range(20)]
    sc = Scene(gpu.pool, 6 << 20)
    tex_ids = []
    for k, t in enumerate(texels):
        r = sc.put(t.tobytes())
        tid = gpu.id()
        gpu.client.register(TextureDesc(tid, 1, r[1], TS, TS, "RGBA8", block_linear=False, pitch=TS * 4))
        tex_ids.append(tid)
    smp_ids = []
    for linear in (False, True, False, True):
        sid = gpu.id()
        gpu.client.register(SamplerDesc(sid, linear=linear))
        smp_ids.append(sid)
    vs = spirv("vertex", VS_PASS, VS_PASS_HDR)
    progs = {}
    for name, fs in (("per_pixel", FS_PER_PIXEL), ("uniform", FS_UNIFORM)):
        progs[name] = gpu.id()
        gpu.client.register(ProgramDesc(progs[name], vs, spirv("fragment", fs, FS_HDR)))
    target = gpu.id()
    gpu.client.register(TextureDesc(target, 0, 0, W, H, "RGBA8", render_target=True))
    return dict(gpu=gpu, texels=texels, tex=tex_ids, smp=smp_ids, prog=progs, target=target, scene=sc)


def run(env, cmds: list) -> np.ndarray:
    gpu = env["gpu"]
    n = next(gpu.frames)
    before = gpu.client.dropped()
    seq = gpu.client.submit([(P.OP_TARGET, env["target"]), (P.OP_CLEAR, 0, 0, 0, 0), *cmds, (P.OP_PRESENT, n, env["target"])])
    gpu.client.wait(seq)
    assert gpu.client.dropped() == before, gpu.log()[-2000:]
    return frame_image(gpu.client, n).astype(int)


def pools_packet(tex_ids: list[int], smp_ids: list[int]) -> tuple:
    return (P.OP_POOLS, list(tex_ids) + [P.EMPTY] * (16 - len(tex_ids)), list(smp_ids) + [P.EMPTY] * (4 - len(smp_ids)))


def vertices(env, verts: np.ndarray) -> tuple:
    return (P.OP_VERTEX, *env["scene"].put(verts.tobytes()))


def test_pool_sizes_match_the_shader_service():
    from shader_svc.sm86.to_spirv_gfx import SAMPLER_POOL, TEXTURE_POOL

    assert (P.POOL_TEXTURES, P.POOL_SAMPLERS) == (TEXTURE_POOL, SAMPLER_POOL)


def test_reflection_reports_pools_and_refuses_other_set1_bindings():
    from gpu_host.spirv_reflect import SpirvError, reflect

    fs = spirv("fragment", FS_PER_PIXEL, FS_HDR)
    assert reflect(fs, "fs").pools and not reflect(spirv("vertex", VS_PASS, VS_PASS_HDR), "vs").pools
    # move the sampler pool to binding 5 of set 1: refused, by name
    words = list(struct.unpack(f"<{len(fs) // 4}I", fs))
    i = 5
    while i < len(words):
        wc, op = words[i] >> 16, words[i] & 0xFFFF
        if op == 71 and words[i + 2] == 33 and words[i + 3] == 1:  # OpDecorate Binding 1
            words[i + 3] = 5
        i += wc
    with pytest.raises(SpirvError, match="set 1 at binding 5"):
        reflect(struct.pack(f"<{len(words)}I", *words), "fs")


def test_per_pixel_handles_through_the_gpu_process(env):
    """Each pixel's handle (texture x & 7, sampler y & 3) picks from the pools the POOLS packet
    filled, in pool order (pool entry t holds registered texture tex[19 - t])."""
    order = [19 - t for t in range(16)]
    img = run(
        env,
        [
            (P.OP_PROGRAM, env["prog"]["per_pixel"]),
            LAYOUT,
            vertices(env, quad()),
            pools_packet([env["tex"][k] for k in order], env["smp"]),
            (P.OP_DRAW, 6, 1, 0, 0),
        ],
    )
    linear = [False, True, False, True]
    want = np.array([[sample(env["texels"][order[x & 7]], *uv(x, y), linear[y & 3]) for x in range(W)] for y in range(H)])
    diff = np.abs(img - np.round(want))
    assert diff.max() <= 1, np.argwhere(diff > 1)[:5]
    # the pools' order matters: the textures by registration order would not match
    wrong = np.array([[sample(env["texels"][x & 7], *uv(x, y), linear[y & 3]) for x in range(W)] for y in range(H)])
    assert np.abs(img - wrong).max() > 32


def test_uniform_handle_and_pools_changing_between_draws(env):
    """The handle from c[0x0][0x0] names pool entry 5 / sampler 2 (nearest); the left half is
    drawn with one POOLS packet, the right half after a second one put another texture at entry 5
    and a linear sampler at entry 2: each half equals numpy's sample of its own pool's entry."""
    ub = env["scene"].put(struct.pack("<I", handle(5, 2)) + bytes(252))
    left, right = quad(), quad()
    left[:, 0, 0] = np.where(left[:, 0, 0] > 0, 0.0, -1.0)
    left[:, 1, 0] = np.where(left[:, 1, 0] > 0, 0.5, 0.0)
    right[:, 0, 0] = np.where(right[:, 0, 0] > 0, 1.0, 0.0)
    right[:, 1, 0] = np.where(right[:, 1, 0] > 0, 1.0, 0.5)
    tex, smp = env["tex"], env["smp"]
    first = pools_packet(tex[:16], smp)  # entry 5: tex[5]; sampler 2: nearest
    second = pools_packet(tex[:5] + [tex[17]] + tex[6:16], smp[:2] + [smp[1], smp[3]])  # 5: tex[17]; 2: linear
    img = run(
        env,
        [
            (P.OP_PROGRAM, env["prog"]["uniform"]),
            LAYOUT,
            (P.OP_UNIFORM, 0, *ub),
            first,
            vertices(env, left),
            (P.OP_DRAW, 6, 1, 0, 0),
            second,
            vertices(env, right),
            (P.OP_DRAW, 6, 1, 0, 0),
        ],
    )
    want = np.array(
        [
            [
                sample(env["texels"][5], *uv(x, y), False) if x < W // 2 else sample(env["texels"][17], *uv(x, y), True)
                for x in range(W)
            ]
            for y in range(H)
        ]
    )
    diff = np.abs(img - np.round(want))
    assert diff.max() <= 1, np.argwhere(diff > 1)[:5]


@pytest.mark.parametrize("mode", ["switch", "indexed"])
def test_many_textures_per_draw_by_non_uniform_handles(env, mode):
    """Four draws (strips a quarter of the target wide), each with its own base from c[0x0][0x0]:
    every pixel's handle names texture (x + y + base) & 15 and sampler y & 3, so each draw reads
    all 16 pool entries and neighbouring pixels of a quad read different ones.  ``switch``: the
    translation for any device (a switch over the pool entries); ``indexed``: the translation with
    descriptor indexing (NonUniform indices into the pools), where the GPU process's device
    reports it.  Each pixel equals numpy's sample of the entries its handle names."""
    from shader_svc.request import FEATURES, feature_bits

    gpu = env["gpu"]
    features = feature_bits(gpu.client.features)
    if mode == "indexed" and not features & FEATURES["descriptor_indexing"]:
        pytest.skip(
            f"the GPU process's device ({gpu.client.device}) has no non-uniform descriptor indexing: only the switch runs there"
        )
    prog = gpu.id()
    fs = spirv("fragment", FS_MANY, FS_HDR, features if mode == "indexed" else 0)
    assert (SHADER_NON_UNIFORM in capabilities(fs)) == (mode == "indexed")
    gpu.client.register(ProgramDesc(prog, spirv("vertex", VS_PASS, VS_PASS_HDR), fs))
    order = [(3 * t + 1) % 16 for t in range(16)]  # pool entry t holds registered texture order[t]
    bases = [0, 5, 9, 14]
    cmds = [(P.OP_PROGRAM, prog), LAYOUT, pools_packet([env["tex"][k] for k in order], env["smp"])]
    for k, base in enumerate(bases):
        strip = quad()
        x0, x1 = k / 4, (k + 1) / 4
        strip[:, 0, 0] = np.where(strip[:, 0, 0] > 0, 2 * x1 - 1, 2 * x0 - 1)
        strip[:, 1, 0] = np.where(strip[:, 1, 0] > 0, x1, x0)
        cmds += [(P.OP_UNIFORM, 0, *env["scene"].put(struct.pack("<I", base) + bytes(252))), vertices(env, strip)]
        cmds.append((P.OP_DRAW, 6, 1, 0, 0))
    img = run(env, cmds)
    linear = [False, True, False, True]
    want = np.array(
        [
            [sample(env["texels"][order[(x + y + bases[x * 4 // W]) & 15]], *uv(x, y), linear[y & 3]) for x in range(W)]
            for y in range(H)
        ]
    )
    diff = np.abs(img - np.round(want))
    assert diff.max() <= 1, np.argwhere(diff > 1)[:5]
    # the per-draw base matters: the same handles without it would not match
    no_base = np.array(
        [[sample(env["texels"][order[(x + y) & 15]], *uv(x, y), linear[y & 3]) for x in range(W)] for y in range(H)]
    )
    assert np.abs(img[:, W // 4 :] - no_base[:, W // 4 :]).max() > 32


def test_pool_texture_as_current_target_is_dropped(env):
    gpu = env["gpu"]
    before = gpu.client.dropped()
    seq = gpu.client.submit(
        [
            (P.OP_TARGET, env["target"]),
            (P.OP_PROGRAM, env["prog"]["per_pixel"]),
            LAYOUT,
            vertices(env, quad()),
            pools_packet([env["target"]], env["smp"]),
            (P.OP_DRAW, 6, 1, 0, 0),
        ]
    )
    gpu.client.wait(seq)
    assert gpu.client.dropped() == before + 1
    import time

    deadline = time.monotonic() + 60  # a bound, not a speed check (a loaded machine is slow)
    msg = f"dropped submission {seq}: packet 5 DRAW: texture {env['target']} in the texture pool is the current render target"
    while msg not in gpu.log() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert msg in gpu.log(), gpu.log()[-2000:]


def test_front_end_records_the_pools_at_record_time():
    """The NVN front end's POOLS packets: only before draws of a program that reads the pools,
    with the entries registered when the draw was recorded, again only when they changed; each
    one passes the GPU process's packet check."""
    from cpu_host.horizon.hle.nvn.frontend import NvnService
    from cpu_host.horizon.hle.nvn.objects import Program, Recording, Sampler, Texture

    svc = NvnService(connect=lambda: None, translate=lambda a, s, c, f: b"")
    tex = [Texture(10 + i, 4, 4, "RGBA8", 0, None, 0, 0) for i in range(3)]
    svc.texture_slots.update({0: tex[0], 7: tex[1], 200: tex[2]})  # 200: outside the pool
    svc.sampler_slots.update({1: Sampler(30, True, False)})
    rec = Recording()
    rec.program = Program(1, registered=True, pools=False)
    svc._pools(rec)
    assert rec.commands == []  # no pools read, none sent
    rec.program = Program(2, registered=True, pools=True)
    svc._pools(rec)
    svc._pools(rec)  # unchanged: not repeated
    want_t = [10] + [P.EMPTY] * 6 + [11] + [P.EMPTY] * 8
    assert rec.commands == [(P.OP_POOLS, want_t, [P.EMPTY, 30, P.EMPTY, P.EMPTY])]
    assert P.check(rec.commands[0]) == (P.OP_POOLS, tuple(want_t), (P.EMPTY, 30, P.EMPTY, P.EMPTY))
    svc.texture_slots[7] = tex[2]  # re-registered entry 7
    svc._pools(rec)
    assert len(rec.commands) == 2 and rec.commands[1][1][7] == 12


def test_recorded_pools_replay_to_the_same_frames(tmp_path):
    """The pools travel in the stream: a recording of pool draws (the pools changed between two
    frames) renders alone under ``nxrecomp replay`` to the live frames."""
    import shutil
    import subprocess

    from cpu_host.gpu_client.client import GpuClient
    from gpu_guest import start_gpu, attach, stop_gpu

    rec = tmp_path / "pools.nxgpu"
    proc, d = start_gpu(args=["--record", str(rec)])
    live: dict[int, str] = {}
    try:
        c = GpuClient(d, ring_capacity=1 << 20)
        attach(c, proc)
        pool = c.create_pool(1, 1 << 20)
        rng = np.random.default_rng(5)
        for k in range(17):
            pool.write(4096 + 64 * k, rng.integers(0, 256, (TS, TS, 4), dtype=np.uint8).tobytes())
            c.register(TextureDesc(20 + k, 1, 4096 + 64 * k, TS, TS, "RGBA8", block_linear=False, pitch=TS * 4))
        for k, linear in enumerate((False, True, False, True)):
            c.register(SamplerDesc(40 + k, linear=linear))
        c.register(ProgramDesc(1, spirv("vertex", VS_PASS, VS_PASS_HDR), spirv("fragment", FS_PER_PIXEL, FS_HDR)))
        c.register(TextureDesc(7, 0, 0, W, H, "RGBA8", render_target=True))
        pool.write(0, quad().tobytes())
        for frame, first in ((1, 20), (2, 21)):
            c.wait(
                c.submit(
                    [
                        (P.OP_TARGET, 7),
                        (P.OP_CLEAR, 0, 0, 0, 0),
                        (P.OP_PROGRAM, 1),
                        LAYOUT,
                        (P.OP_VERTEX, 1, 0, quad().nbytes),
                        pools_packet(list(range(first, first + 16)), [40, 41, 42, 43]),
                        (P.OP_DRAW, 6, 1, 0, 0),
                        (P.OP_PRESENT, frame, 7),
                    ]
                )
            )
            live[frame] = c.frame(frame).sha256
        assert c.dropped() == 0
        c.close()
    finally:
        stop_gpu(proc)
        shutil.rmtree(d, ignore_errors=True)
    assert live[1] != live[2]
    out = tmp_path / "out"
    r = subprocess.run(
        [sys.executable, "-m", "nxrecomp", "replay", str(rec), "--out", str(out)], capture_output=True, text=True, timeout=300
    )
    assert r.returncode == 0, r.stderr
    got = dict(line.split()[::-1] for line in (out / "frames.txt").read_text().splitlines())
    assert {int(v): k for k, v in got.items()} == live


def test_pools_replayed_in_c_equal_python(monkeypatch):
    """The same bindless submissions through in-process Engines with gpu_host.native_replay on and
    off: equal frames, and the native one replayed them in C (POOLS and a program reading the
    pools are C ops; set 1 written per distinct pool content, bound where the pools changed)."""
    from cpu_host.gpu_client.memory import Pool
    from gpu_host.engine import Engine
    from gpu_host.objects import MappedPools
    from gpu_host.vkdevice import Device

    rng = np.random.default_rng(78)
    texels = [rng.integers(0, 256, (TS, TS, 4), dtype=np.uint8) for _ in range(18)]
    vs = spirv("vertex", VS_PASS, VS_PASS_HDR)
    fss = [spirv("fragment", fs, FS_HDR) for fs in (FS_PER_PIXEL, FS_UNIFORM)]
    q = quad()
    left, right = q.copy(), q.copy()
    left[:, 0, 0] = np.where(left[:, 0, 0] > 0, 0.0, -1.0)
    right[:, 0, 0] = np.where(right[:, 0, 0] > 0, 1.0, 0.0)
    VB, VB_L, VB_R, UB, TX = 0, 1024, 2048, 3072, 4096

    def frames(mode: str) -> tuple[list, int]:
        monkeypatch.setenv("NXRECOMP_GPU_HOST_NATIVE_REPLAY", mode)
        pool = Pool(1, 1 << 16)
        for at, v in ((VB, q), (VB_L, left), (VB_R, right)):
            pool.write(at, v.tobytes())
        pool.write(UB, struct.pack("<I", handle(5, 2)) + bytes(252))
        for k, t in enumerate(texels):
            pool.write(TX + k * TS * TS * 4, t.tobytes())
        mp = MappedPools()
        mp.add(1, pool.fd, pool.size)
        dev = Device()
        eng = Engine(dev, mp, keep_frames=8)
        try:
            for k in range(len(texels)):
                eng.register_texture(
                    id=100 + k,
                    pool=1,
                    offset=TX + k * TS * TS * 4,
                    width=TS,
                    height=TS,
                    format="RGBA8",
                    block_linear=False,
                    block_height_log2=0,
                    pitch=TS * 4,
                    render_target=False,
                )
            for k, linear in enumerate((False, True, False, True)):
                eng.register_sampler(200 + k, linear, False)
            for k, fs in enumerate(fss):
                eng.register_program(1 + k, vs, fs)
            eng.register_texture(
                id=7,
                pool=0,
                offset=0,
                width=W,
                height=H,
                format="RGBA8",
                block_linear=False,
                block_height_log2=0,
                pitch=0,
                render_target=True,
            )
            smp = [200, 201, 202, 203]
            first = pools_packet([100 + (15 - k) for k in range(16)], smp)
            second = pools_packet([100 + k for k in range(16)][:5] + [117] + [106 + k for k in range(10)], [200, 201, 201, 203])
            subs = [
                [
                    (P.OP_TARGET, 7),
                    (P.OP_CLEAR, 0, 0, 0, 0),
                    (P.OP_PROGRAM, 1),
                    LAYOUT,
                    (P.OP_VERTEX, 1, VB, 384),
                    first,
                    (P.OP_DRAW, 6, 1, 0, 0),
                    (P.OP_PRESENT, 1, 7),
                ],
                [
                    (P.OP_TARGET, 7),
                    (P.OP_CLEAR, 0, 0, 0, 0),
                    (P.OP_PROGRAM, 2),
                    LAYOUT,
                    (P.OP_UNIFORM, 0, 1, UB, 256),
                    first,
                    (P.OP_VERTEX, 1, VB_L, 384),
                    (P.OP_DRAW, 6, 1, 0, 0),
                    second,
                    (P.OP_VERTEX, 1, VB_R, 384),
                    (P.OP_DRAW, 6, 1, 0, 0),
                    first,
                    (P.OP_PRESENT, 2, 7),
                ],
            ]
            out = []
            for seq, cmds in enumerate(subs, 1):
                res = eng.submit(seq, [list(c) for c in cmds])
                out += [(f.frame, f.sha256) for f in res.frames]
            return out, eng.native.native if eng.native else 0
        finally:
            eng.close()
            dev.close()
            pool.close()

    py, _ = frames("off")
    nat, n = frames("on")
    assert nat == py and len({sha for _, sha in py}) == 2
    assert n == 2


def _opcodes(spv: bytes) -> set[int]:
    words = struct.unpack(f"<{len(spv) // 4}I", spv)
    out, i = set(), 5
    while i < len(words):
        out.add(words[i] & 0xFFFF)
        i += words[i] >> 16
    return out


OP_SWITCH = 251  # SPIR-V OpSwitch


def test_indexed_translations_are_valid_spirv(tmp_path):
    """Every bindless program of the shader tests (SM86 TEX.B/TLD.B/TLD4.B/TXQ.B in fragment and
    vertex programs, the .LB/.LL forms, SM53 TEX.B/TLD.B.LL/TLD4.B/TXQ.B) translated with
    descriptor indexing passes spirv-val with the capabilities it declares, indexes the pools
    with no switch, and differs from the plain translation, which keeps its switch; a program's
    key depends on its features; unknown feature bits are refused by name."""
    from spirv_checks import spirv_val
    from test_bindless import FS53_FETCH, FS53_PER_PIXEL, FS_FETCH_GATHER, FS_LEVEL, FS_SIZE, VS_SAMPLE, VS_SAMPLE_HDR
    from test_sm53_bindless import FS53_GATHER, FS53_SIZE
    from quad_draw import FS53_HDR, program53

    from shader_svc.request import FEATURES

    idx = FEATURES["descriptor_indexing"]
    progs = {
        "per_pixel": (86, 3, FS_PER_PIXEL, FS_HDR),
        "uniform": (86, 3, FS_UNIFORM, FS_HDR),
        "many": (86, 3, FS_MANY, FS_HDR),
        "fetch_gather": (86, 3, FS_FETCH_GATHER, FS_HDR),
        "level": (86, 3, FS_LEVEL, FS_HDR),
        "size": (86, 3, FS_SIZE, dict(inputs={0x70: "perspective"}, targets=(0xF,))),
        "vertex": (86, 2, VS_SAMPLE, VS_SAMPLE_HDR),
        "sm53_per_pixel": (53, 3, FS53_PER_PIXEL, FS53_HDR),
        "sm53_fetch": (53, 3, FS53_FETCH, FS53_HDR),
        "sm53_gather": (53, 3, FS53_GATHER.format(comp="G"), FS53_HDR),
        "sm53_size": (53, 3, FS53_SIZE, FS53_HDR),
    }
    for line in ("TEX.B.LB R6, R4, R0, R12, 2D", "TEX.B.LL R6, R4, R0, R12, 2D", "TLD4.A.B R6, R4, R0, R12, 2D, 0x3"):
        text = f"IPA.PASS R0, a[0x80]\nIPA.PASS R1, a[0x84]\nMOV R12, c[0x0][0x0]\nMOV R13, c[0x0][0x4]\n{line}\nEXIT\n"
        progs[line.split()[0]] = (86, 3, text, FS_HDR)
    for name, (arch, stage, text, hdr) in progs.items():
        if arch == 53:
            code = program53(text, hdr)
        else:
            header = sph.build("vertex" if stage == 2 else "fragment", **hdr)
            code = header + assemble_program(text, base=len(header))
        plain, indexed = tr.make_program(arch, stage, code), tr.make_program(arch, stage, code, (), idx)
        assert plain.key() != indexed.key() and tr.Program.deserialize(indexed.serialize()) == indexed, name
        a, b = tr.translate(plain), tr.translate(indexed)
        spirv_val(b, tmp_path, name)
        assert SHADER_NON_UNIFORM in capabilities(b) and SHADER_NON_UNIFORM not in capabilities(a), name
        assert OP_SWITCH in _opcodes(a) and OP_SWITCH not in _opcodes(b), name
    from shader_svc.request import KNOWN_FEATURES

    unknown = 0x30  # bits no feature names (request.FEATURES), beside a known one
    assert not unknown & KNOWN_FEATURES
    with pytest.raises(tr.ProgramError, match=f"unknown feature bits {unknown:#x}"):
        tr.make_program(86, 3, code, (), unknown | 0x1)
