"""Sampled 3D textures through the real GPU process on lavapipe (gfx-layers, issue 31/32): a
guest-uploaded volume (``TextureDesc.volume`` without ``render_target``), pitch-linear or
block-linear (``blocklinear.swizzle_3d`` of a random volume: the GPU process deswizzles it whole
on upload), bound at a texture slot of an SM53 or SM86 fragment program that fetches (TLD 3D) or
samples (TEX 3D, nearest) it; every pixel equals what numpy reads from the volume.  Refused by
name: a volume where the program samples 2D, a 2D texture where it samples 3D, a cube in the
texture pool, a compressed or multisampled volume.  The NVN front end registers an
NVN_TEXTURE_TARGET_3D texture without the render-target flag as such a volume and it draws the
same.  Linear filtering (trilinear across two slices) equals the reference within 2/255."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "gpu_host"))  # gpu_guest
from gpu_guest import P, Gpu, Scene, frame_image  # noqa: E402
from quad_draw import FS53_HDR, FS_HDR, H, VS_PASS, VS_PASS_HDR, W, program53, quad, spirv, uv  # noqa: E402
from test_sm53_tex_dims import FS_ARRAY, FS_FETCH_3D, FS_SAMPLE_3D  # noqa: E402
from test_tex_short_dims import FS86_TLD_3D  # noqa: E402

from cpu_host.gpu_client.registry import ProgramDesc, SamplerDesc, TextureDesc  # noqa: E402
from gpu_host import blocklinear  # noqa: E402
from nxrecomp.common.errors import NxError  # noqa: E402
from shader_svc import translate as tr  # noqa: E402

D = 4  # slices; the programs read slice (x >> 2) & 3 (SM53) or y & 3 (SM86)
TS = 4
TEX_OFF = 0x200000  # the volumes' bytes in the test pool (vertex data and uniforms below)
SAMPLER = 77


@pytest.fixture(scope="module")
def gproc():
    g = Gpu()
    g.client.register(SamplerDesc(SAMPLER))
    yield g
    g.close()


def fs53(text: str) -> bytes:
    return tr.translate(tr.make_program(53, 3, program53(text, FS53_HDR)))


def register_volume(g: Gpu, vol: np.ndarray, block_linear: bool, bhl: int = 0, bdl: int = 0, at: int = TEX_OFF) -> int:
    """``vol`` (slices, rows, texels, RGBA8) written into the pool as the guest lays it out and
    registered as a sampled volume; its id."""
    d, h, w, _ = vol.shape
    tid = g.id()
    if block_linear:
        data = blocklinear.swizzle_3d(vol.reshape(d, h, w * 4), bhl, bdl)
        g.pool.write(at, data)
        g.client.register(
            TextureDesc(tid, g.pool.id, at, w, h, "RGBA8", layers=d, volume=True, block_height_log2=bhl, block_depth_log2=bdl)
        )
    else:
        pitch = w * 4 + 32  # rows with a gap the upload must skip
        rows = np.full((d, h, pitch), 0xEE, np.uint8)
        rows[:, :, : w * 4] = vol.reshape(d, h, w * 4)
        g.pool.write(at, rows.tobytes())
        g.client.register(TextureDesc(tid, g.pool.id, at, w, h, "RGBA8", block_linear=False, pitch=pitch, layers=d, volume=True))
    return tid


def draw(g: Gpu, prog: int, tex: int, wait: bool = True) -> np.ndarray | int:
    """The screen quad drawn with ``prog`` and ``tex`` at slot 0: the frame (or the sequence
    number, ``wait`` false)."""
    t = g.id()
    g.client.register(TextureDesc(t, 0, 0, W, H, "RGBA8", render_target=True))
    sc = Scene(g.pool, 0)
    n = next(g.frames)
    cmds = [
        (P.OP_TARGET, t),
        (P.OP_CLEAR, 0, 0, 0, 0),
        (P.OP_PROGRAM, prog),
        (P.OP_VERTEX_LAYOUT, 64, 0, [[i, 4, 16 * i] for i in range(4)]),
        (P.OP_VERTEX, *sc.put(quad().tobytes())),
        (P.OP_TEXTURE, 0, tex, SAMPLER),
        (P.OP_DRAW, 6, 1, 0, 0),
        (P.OP_PRESENT, n, t),
    ]
    seq = g.client.submit(cmds)
    g.client.wait(seq)
    if not wait:
        return seq
    return frame_image(g.client, n).astype(int)


def program(g: Gpu, fs: bytes) -> int:
    pid = g.id()
    g.client.register(ProgramDesc(pid, spirv("vertex", VS_PASS, VS_PASS_HDR), fs))
    return pid


def want_fetch53(vol: np.ndarray) -> np.ndarray:
    """FS_FETCH_3D: texel (x & 3, y & 3) of slice (x >> 2) & 3."""
    return np.array([[vol[(x >> 2) & 3, y & 3, x & 3] for x in range(W)] for y in range(H)], int)


def want_sample53(vol: np.ndarray) -> np.ndarray:
    """FS_SAMPLE_3D, nearest: texel (u * TS, v * TS) of slice (x >> 2) & 3 (w at its centre)."""
    out = np.zeros((H, W, 4), int)
    for y in range(H):
        for x in range(W):
            u, v = uv(x, y)
            out[y, x] = vol[(x >> 2) & 3, int(v * TS), int(u * TS)]
    return out


def want_fetch86(vol: np.ndarray) -> np.ndarray:
    """FS86_TLD_3D: texel (x & 3, y & 3) of slice y & 3."""
    return np.array([[vol[y & 3, y & 3, x & 3] for x in range(W)] for y in range(H)], int)


LAYOUTS = [(False, 0, 0), (True, 0, 0), (True, 0, 1), (True, 1, 2)]  # (block-linear, bhl, bdl)


@pytest.mark.parametrize("layout", LAYOUTS, ids=["pitch", "bl-d1", "bl-d2", "bl-h2-d4"])
def test_sm53_fetch_and_sample_a_volume(gproc, layout):
    vol = np.random.default_rng(sum(layout) + 3).integers(0, 256, (D, TS, TS, 4), dtype=np.uint8)
    tex = register_volume(gproc, vol, *layout)
    img = draw(gproc, program(gproc, fs53(FS_FETCH_3D)), tex)
    assert gproc.client.dropped() == 0, gproc.log()[-2000:]
    assert np.array_equal(img, want_fetch53(vol))
    img = draw(gproc, program(gproc, fs53(FS_SAMPLE_3D)), tex)
    assert np.array_equal(img, want_sample53(vol))


def test_sm86_fetch_a_block_linear_volume_of_two_slabs(gproc):
    vol = np.random.default_rng(11).integers(0, 256, (D, TS, TS, 4), dtype=np.uint8)
    tex = register_volume(gproc, vol, True, 0, 1)
    img = draw(gproc, program(gproc, spirv("fragment", FS86_TLD_3D.replace("{lod}", ""), FS_HDR)), tex)
    assert gproc.client.dropped() == 0, gproc.log()[-2000:]
    assert np.array_equal(img, want_fetch86(vol))
    # the guest rewrites the volume in place: the next draw sees the new texels (CRC re-upload)
    vol2 = (255 - vol).astype(np.uint8)
    gproc.pool.write(TEX_OFF, blocklinear.swizzle_3d(vol2.reshape(D, TS, TS * 4), 0, 1))
    gproc.client.submit([(P.OP_DIRTY, gproc.pool.id, TEX_OFF, blocklinear.size_bytes_3d(TS * 4, TS, D, 0, 1))])
    img = draw(gproc, program(gproc, spirv("fragment", FS86_TLD_3D.replace("{lod}", ""), FS_HDR)), tex)
    assert np.array_equal(img, want_fetch86(vol2))


def _dropped_with(g: Gpu, seq_of, msg: str) -> None:
    import time

    before = g.client.dropped()
    seq = seq_of()
    assert g.client.dropped() == before + 1, g.log()[-2000:]
    want = f"dropped submission {seq}: "
    end = time.monotonic() + 10
    while time.monotonic() < end:
        lines = [ln for ln in g.log().splitlines() if want in ln]
        if lines:
            assert msg in lines[-1], lines[-1]
            return
        time.sleep(0.05)
    raise AssertionError(f"no log line for submission {seq}")


def test_volume_mismatches_refused_by_name(gproc):
    vol = np.random.default_rng(5).integers(0, 256, (D, TS, TS, 4), dtype=np.uint8)
    tex = register_volume(gproc, vol, True, 0, 2)
    flat = gproc.id()
    gproc.pool.write(TEX_OFF + 0x10000, vol[0].tobytes())
    gproc.client.register(TextureDesc(flat, gproc.pool.id, TEX_OFF + 0x10000, TS, TS, "RGBA8", block_linear=False, pitch=TS * 4))
    array_prog = program(gproc, fs53(FS_ARRAY))  # samples slot 0 as a 2D array
    fetch3d = program(gproc, fs53(FS_FETCH_3D))
    _dropped_with(gproc, lambda: draw(gproc, array_prog, tex, wait=False), f"texture {tex} in slot 0 is a 3d texture; program")
    _dropped_with(gproc, lambda: draw(gproc, fetch3d, flat, wait=False), f"texture {flat} in slot 0 is a 2d texture; program")
    cube = gproc.id()
    gproc.pool.write(TEX_OFF + 0x20000, bytes(6 * 4 * 4 * 4))
    gproc.client.register(
        TextureDesc(cube, gproc.pool.id, TEX_OFF + 0x20000, 4, 4, "RGBA8", block_linear=False, pitch=16, layers=6, cube=True)
    )
    pools = (P.OP_POOLS, [cube] + [P.EMPTY] * (P.POOL_TEXTURES - 1), [P.EMPTY] * P.POOL_SAMPLERS)

    def pool_submit() -> int:
        s = gproc.client.submit([pools])
        gproc.client.wait(s)
        return s

    # (a volume is a POOLS entry now: kernels' 3D pool, tests/shader_svc/test_tex3d_compute.py; gpu-pools:
    # a cube too, the kernels' cube pool, tests/gpu_host/test_compute_pools.py)
    before = gproc.client.dropped()
    pool_submit()
    assert gproc.client.dropped() == before, gproc.log()[-2000:]
    for bad in (dict(format="BC1"), dict(samples=4, render_target=True)):
        kw = dict(format="RGBA8", block_linear=False, pitch=64, layers=2, volume=True) | bad
        fmt = kw.pop("format")
        with pytest.raises(NxError, match=r"a volume \(3D\) texture is a one-sample, uncompressed colour texture"):
            gproc.client.register(TextureDesc(gproc.id(), gproc.pool.id, TEX_OFF, 16, 16, fmt, **kw))
    # and a good draw still runs
    assert np.array_equal(draw(gproc, fetch3d, tex), want_fetch53(vol))


def test_nvn_front_end_registers_a_sampled_3d_texture(gproc, monkeypatch):
    """nvnTextureInitialize with NVN_TEXTURE_TARGET_3D and no render-target flag: a sampled
    volume in the guest's pool, block-linear with the block depth the front end picks; the guest
    writes the swizzled slices there and the draw reads them."""
    from test_compute_dispatch import Guest

    from cpu_host.horizon.hle.abi import GuestError
    from cpu_host.horizon.hle.nvn.tables import FLAG_DISPLAY, TARGET_3D

    g = Guest(gproc, monkeypatch)
    s = g.svc
    g.mem[20] = 1
    builder = g.at(21)
    s.builders[builder] = {"format": 1, "width": TS, "height": TS, "flags": 0, "target": TARGET_3D, "layers": D}
    s.builders[builder].update(pool=g.at(20), offset=TEX_OFF)
    size = g.call(s.texture_storage_size, builder)
    g.call(s.texture_initialize, g.at(22), builder)
    tex = int(g.mem[22])
    desc = gproc.client.registry.objects[("TextureDesc", tex)]
    assert desc.volume and not desc.render_target and desc.block_linear and desc.layers == D
    assert size == blocklinear.size_bytes_3d(TS * 4, TS, D, desc.block_height_log2, desc.block_depth_log2)
    vol = np.random.default_rng(9).integers(0, 256, (D, TS, TS, 4), dtype=np.uint8)
    gproc.pool.write(TEX_OFF, blocklinear.swizzle_3d(vol.reshape(D, TS, TS * 4), desc.block_height_log2, desc.block_depth_log2))
    assert np.array_equal(draw(gproc, program(gproc, fs53(FS_FETCH_3D)), tex), want_fetch53(vol))
    s.builders[builder].update(flags=FLAG_DISPLAY)
    with pytest.raises(GuestError, match="a 3D texture is an uncompressed colour texture, not display"):
        g.call(s.texture_initialize, g.at(23), builder)


def trilinear(vol: np.ndarray, u: float, v: float, w: float) -> np.ndarray:
    """Vulkan's LINEAR filtering of ``vol`` (slices, rows, texels, 4) at normalised (u, v, w) with
    CLAMP_TO_EDGE, in floats (unorm8 texels as /255)."""
    d, h, wd, _ = vol.shape
    out = np.zeros(4)
    idx, wts = [], []
    for c, n in ((u, wd), (v, h), (w, d)):
        x = c * n - 0.5
        i0 = int(np.floor(x))
        a = x - i0
        idx.append((min(max(i0, 0), n - 1), min(max(i0 + 1, 0), n - 1)))
        wts.append((1 - a, a))
    for k in range(2):
        for j in range(2):
            for i in range(2):
                out += wts[2][k] * wts[1][j] * wts[0][i] * vol[idx[2][k], idx[1][j], idx[0][i]] / 255
    return out


def test_sm86_samples_a_volume_with_linear_filtering_within_a_bound(gproc):
    """TEX 3D with a LINEAR sampler at w a quarter texel past slice (y & 3)'s centre (so every
    pixel blends two slices, the last clamped) and u, v between texel centres: equal to the
    trilinear reference within 2/255.  The bound: Vulkan computes the filter weights with
    subTexelPrecisionBits (lavapipe 8) bits, and the frame rounds to unorm8."""
    from test_tex_short_dims import FS86_TEX_3D

    vol = np.random.default_rng(12).integers(0, 256, (D, TS, TS, 4), dtype=np.uint8)
    tex = register_volume(gproc, vol, True, 0, 1)
    smp = gproc.id()
    gproc.client.register(SamplerDesc(smp, linear=True))
    text = FS86_TEX_3D.format(lod=".LZ").replace("FADD R2, R2, 0.5", "FADD R2, R2, 0.75")
    assert text != FS86_TEX_3D.format(lod=".LZ")
    prog = program(gproc, spirv("fragment", text, FS_HDR))
    t = gproc.id()
    gproc.client.register(TextureDesc(t, 0, 0, W, H, "RGBA8", render_target=True))
    sc = Scene(gproc.pool, 0)
    n = next(gproc.frames)
    cmds = [
        (P.OP_TARGET, t),
        (P.OP_PROGRAM, prog),
        (P.OP_VERTEX_LAYOUT, 64, 0, [[i, 4, 16 * i] for i in range(4)]),
        (P.OP_VERTEX, *sc.put(quad().tobytes())),
        (P.OP_TEXTURE, 0, tex, smp),
        (P.OP_DRAW, 6, 1, 0, 0),
        (P.OP_PRESENT, n, t),
    ]
    gproc.client.wait(gproc.client.submit(cmds))
    img = frame_image(gproc.client, n).astype(int)
    want = np.zeros((H, W, 4))
    for y in range(H):
        for x in range(W):
            u, v = uv(x, y)
            want[y, x] = trilinear(vol, u, v, ((y & 3) + 0.75) / 4)
    diff = np.abs(img - want * 255)
    assert diff.max() <= 2, (diff.max(), np.unravel_index(diff.argmax(), diff.shape))
    # and it is not nearest sampling: the blend differs from every texel somewhere
    assert (np.abs(img - want_fetch86(vol)).max(axis=2) > 8).mean() > 0.5
