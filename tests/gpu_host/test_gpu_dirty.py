"""What the CPU wrote reaches the GPU process's own copies (its Vulkan images of textures) as
the client says: a pool registered with ``flushed_writes`` is re-read only where a DIRTY packet
names a range (the game's nvnMemoryPoolFlushMappedRange); any other pool is re-read at every
submission that samples it.  Observed on the frames a real GPU process renders on lavapipe."""

from __future__ import annotations

import numpy as np

from cpu_host.gpu_client.registry import SamplerDesc, TextureDesc
from gpu_guest import P, Scene, frame_image, rect_uv_px
from gpu_host import blocklinear
from test_gpu_draws import W, H, run, target
from test_gpu_hostile import expect_dropped

TW, TH = 16, 8


def solid(rgba: tuple[int, int, int, int]) -> bytes:
    lin = np.empty((TH, TW, 4), np.uint8)
    lin[:] = rgba
    return blocklinear.swizzle(lin.reshape(TH, TW * 4), 0)


def draw(gpu, sc: Scene, tex: int, smp: int, extra: list[tuple] = ()) -> list[tuple]:
    t = target(gpu)
    return [
        (P.OP_TARGET, t),
        *extra,
        (P.OP_CLEAR, 0, 0, 0, 0),
        (P.OP_PROGRAM, 2),
        (P.OP_VERTEX_LAYOUT, 16, 0, [[0, 2, 0], [1, 2, 8]]),
        (P.OP_VERTEX, *sc.put(rect_uv_px(0, 0, TW, TH, W, H).tobytes())),
        (P.OP_TEXTURE, 0, tex, smp),
        (P.OP_DRAW, 6, 1, 0, 0),
    ]


def textured_frame(gpu, sc: Scene, tex: int, smp: int, extra: list[tuple] = ()) -> np.ndarray:
    return run(gpu, draw(gpu, sc, tex, smp, extra))[0][:TH, :TW]


def setup(gpu, pool, pool_id: int) -> tuple[Scene, int, int, int]:
    sc = Scene(pool, 0)
    off = sc.put(solid((255, 0, 0, 255)))[1]
    tex, smp = gpu.id(), gpu.id()
    gpu.client.register(TextureDesc(tex, pool_id, off, TW, TH, "RGBA8", block_height_log2=0))
    gpu.client.register(SamplerDesc(smp))
    return sc, tex, smp, off


def test_flushed_pool_rereads_only_dirty_ranges(gpu):
    pool = gpu.client.create_pool(7, 1 << 20, flushed_writes=True)
    sc, tex, smp, off = setup(gpu, pool, 7)
    size = len(solid((0, 0, 0, 0)))
    assert (textured_frame(gpu, sc, tex, smp) == (255, 0, 0, 255)).all()  # first use: read
    pool.write(off, solid((0, 255, 0, 255)))  # written, not flushed
    assert (textured_frame(gpu, sc, tex, smp) == (255, 0, 0, 255)).all(), "a write nobody flushed reached the GPU process's copy"
    far = (P.OP_DIRTY, 7, off + size, 4096)  # a flush elsewhere
    assert (textured_frame(gpu, sc, tex, smp, [far]) == (255, 0, 0, 255)).all()
    touch = (P.OP_DIRTY, 7, off + size - 1, 1)  # its last byte
    assert (textured_frame(gpu, sc, tex, smp, [touch]) == (0, 255, 0, 255)).all(), (
        "a flushed range over the texture did not re-read it"
    )


def test_scanned_pool_sees_every_write(gpu):
    pool = gpu.client.create_pool(8, 1 << 20)
    sc, tex, smp, off = setup(gpu, pool, 8)
    assert (textured_frame(gpu, sc, tex, smp) == (255, 0, 0, 255)).all()
    pool.write(off, solid((0, 0, 255, 255)))
    assert (textured_frame(gpu, sc, tex, smp) == (0, 0, 255, 255)).all()


def test_dirty_range_past_the_pool_drops_the_submission(gpu):
    pool = gpu.client.create_pool(9, 1 << 16, flushed_writes=True)
    sc, tex, smp, off = setup(gpu, pool, 9)
    assert (textured_frame(gpu, sc, tex, smp) == (255, 0, 0, 255)).all()
    before = gpu.client.dropped()
    seq = gpu.client.submit([(P.OP_DIRTY, 9, (1 << 16) - 8, 16)])
    expect_dropped(gpu, seq, "packet 0 DIRTY: range 0xfff8+0x10 is empty or runs past pool 9's end", before)
    pool.write(off, solid((9, 9, 9, 255)))  # after a dropped submission every texture is re-read
    n = next(gpu.frames)
    cmds = draw(gpu, sc, tex, smp)
    gpu.client.wait(gpu.client.submit(cmds + [(P.OP_PRESENT, n, cmds[0][1])]))
    assert gpu.client.dropped() == before + 1
    assert (frame_image(gpu.client, n)[:TH, :TW] == (9, 9, 9, 255)).all()
