"""PRESENT_IMAGE (op 40, gpu_host/PROTOCOL.md "Presented images") through a real GPU process:
images written into pool memory in every layout and format come back from GetFrame as the RGBA8
pixels they hold.  The block-linear images are laid out here byte by byte from the public GOB
description (Tegra X1 TRM; switchbrew: a GOB is 64 bytes x 8 rows in 32-byte sectors of 16
bytes x 2 rows, blocks of 2^n GOBs stacked vertically, blocks row-major), not with
gpu_host.blocklinear, which the GPU process uses to deswizzle.  Bad packets and ranges are
dropped by name, in the msgpack path and by the native decoder."""

from __future__ import annotations

import time

import numpy as np
import pytest

from gpu_guest import P, frame_image
from gpu_host import binpackets as B
from gpu_host import nxpkt
from gpu_host.objects import Objects

POOL = 40


def gob_swizzle(img: np.ndarray, pitch: int, bh: int) -> bytes:
    """Block-linear bytes of an image (h rows of bytes), surface ``pitch`` bytes wide."""
    h = img.shape[0]
    rows = 8 << bh
    blocks_y = -(-h // rows)
    out = bytearray(blocks_y * (pitch // 64) * (512 << bh))
    lin = img.reshape(h, -1)
    for y in range(h):
        for xb in range(lin.shape[1]):
            gx, gy = xb % 64, y % 8
            in_gob = (gx // 32) * 256 + (gy // 2) * 64 + ((gx % 32) // 16) * 32 + (gy % 2) * 16 + gx % 16
            off = (y // rows) * (pitch // 64) * (512 << bh) + (xb // 64) * (512 << bh) + ((y // 8) % (1 << bh)) * 512
            out[off + in_gob] = lin[y, xb]
    return bytes(out)


@pytest.fixture(scope="module")
def pool(gpu):
    return gpu.client.create_pool(POOL, 1 << 20)


def present(gpu, pool, img: np.ndarray, layout: int, fmt: int, pitch: int, bh: int = 0, offset: int = 0x1000):
    h, w = img.shape[:2]
    if layout == 1:
        data = gob_swizzle(img, pitch, bh)
    else:
        lin = img.reshape(h, -1)
        rows = np.zeros((h, pitch), np.uint8)
        rows[:, : lin.shape[1]] = lin
        data = rows.tobytes()
    pool.write(offset, data)
    n = next(gpu.frames)
    gpu.client.wait(gpu.client.submit([(P.OP_PRESENT_IMAGE, n, POOL, offset, w, h, layout, pitch, bh, fmt)]))
    return frame_image(gpu.client, n)


@pytest.mark.parametrize(
    "layout,pitch,bh",
    [(0, 40 * 4, 0), (0, 200, 0), (1, 192, 0), (1, 192, 1), (1, 256, 4)],
    ids=["pitch-tight", "pitch-padded", "bl-1gob", "bl-2gob-partial", "bl-16gob"],
)
@pytest.mark.parametrize("fmt", [0, 1, 2, 3], ids=["RGBA8", "RGBX8", "BGRA8", "RGB565"])
def test_image_comes_back_as_its_pixels(gpu, pool, layout, pitch, bh, fmt):
    rng = np.random.default_rng(layout * 100 + pitch + bh + fmt)
    img = rng.integers(0, 256, (20, 40, 4), dtype=np.uint8)  # 20 rows: partial blocks of 16 and 128
    want = img.copy()
    if fmt == 2:
        want = want[:, :, [2, 1, 0, 3]]
    elif fmt == 1:
        want[:, :, 3] = 255
    elif fmt == 3:  # u16 little-endian r5 g6 b5 (red high); 8 bits by repeating the top bits
        px = [int(b) for b in img[:, :, :2].reshape(-1)]
        v = np.array([lo | hi << 8 for lo, hi in zip(px[0::2], px[1::2])]).reshape(20, 40)
        r, g, b = v >> 11, (v >> 5) & 0x3F, v & 0x1F
        want = np.stack([r * 8 + r // 4, g * 4 + g // 16, b * 8 + b // 4, np.full_like(v, 255)], -1).astype(np.uint8)
        img = img[:, :, :2]
    got = present(gpu, pool, img, layout, fmt, pitch, bh)
    assert got.shape == want.shape
    bad = np.argwhere((got != want).any(-1))
    assert not len(bad), f"{len(bad)} pixels differ, first (y, x) {tuple(bad[0])}: {got[tuple(bad[0])]} != {want[tuple(bad[0])]}"


def _dropped(gpu, cmds: list[tuple], message: str) -> None:
    before = gpu.client.dropped()
    gpu.client.wait(gpu.client.submit(cmds), timeout=20)
    assert gpu.client.dropped() == before + 1
    deadline = time.monotonic() + 60  # a bound, not a speed check (a loaded machine is slow)
    while message not in gpu.log() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert message in gpu.log(), (message, gpu.log()[-1500:])


def test_bad_images_are_dropped_by_name(gpu, pool):
    n = next(gpu.frames)
    # 16 rows of 16-GOB blocks cover 128 rows: 2 x 8 KiB from 1 MiB - 8 KiB runs past the pool
    _dropped(
        gpu,
        [(P.OP_PRESENT_IMAGE, n, POOL, (1 << 20) - 0x2000, 32, 16, 1, 128, 4, 0)],
        "PRESENT_IMAGE: range 0xfe000+0x4000 is empty or runs past pool 40's end 0x100000",
    )
    _dropped(
        gpu,
        [(P.OP_PRESENT_IMAGE, n, POOL, 0, 32, 16, 0, 64, 0, 0)],
        "PRESENT_IMAGE: field pitch = 64 is below a row of 128 bytes",
    )
    _dropped(
        gpu,
        [(P.OP_PRESENT_IMAGE, n, POOL, 0, 40, 16, 0, 64, 0, 3)],  # RGB565: 2 bytes a pixel
        "PRESENT_IMAGE: field pitch = 64 is below a row of 80 bytes",
    )
    _dropped(
        gpu,
        [(P.OP_PRESENT_IMAGE, n, POOL, 0, 32, 16, 1, 130, 0, 0)],
        "PRESENT_IMAGE: field pitch = 130 of a block-linear image is not a multiple of 64",
    )
    _dropped(
        gpu, [(P.OP_PRESENT_IMAGE, n, 999, 0, 32, 16, 0, 128, 0, 0)], "PRESENT_IMAGE: field pool 999 is not a registered pool"
    )
    # and the process goes on presenting
    img = np.full((4, 4, 4), 7, np.uint8)
    assert (present(gpu, pool, img, 0, 0, 16) == img).all()


def test_native_decoder_checks_the_image_range():
    """nxpkt.c's format pass applies the rules between fields, its objects pass the pool range;
    the blob is then the native replay's (the frame is made from the snapshot after the run)."""

    class Sizes:  # a Memory with pool sizes only (validation reads no bytes)
        def pool_size(self, pool: int) -> int | None:
            return 1 << 16 if pool == POOL else None

    tabs = nxpkt.tables(Objects(Sizes()), {POOL: 1 << 16})
    ok = B.convert([(P.OP_PRESENT_IMAGE, 1, POOL, 0x1000, 64, 16, 1, 256, 1, 2)])
    assert nxpkt.check(ok, tabs).fallback_op == 0
    assert nxpkt.decode(ok) == [(P.OP_PRESENT_IMAGE, 1, POOL, 0x1000, 64, 16, 1, 256, 1, 2)]
    # 16 rows of 2-GOB blocks (16 rows each): one row of 4 blocks of 1 KiB = 4 KiB
    past = B.convert([(P.OP_PRESENT_IMAGE, 1, POOL, (1 << 16) - 0x800, 64, 16, 1, 256, 1, 2)])
    with pytest.raises(nxpkt.NativePacketError, match=r"packet 0 PRESENT_IMAGE: range 0xf800\+0x1000"):
        nxpkt.check(past, tabs)
    raw = B.blob([B.pack_raw(P.OP_PRESENT_IMAGE, [1, 0, POOL, 0, 0, 16, 16, 1, 100, 0, 0])])
    with pytest.raises(nxpkt.NativePacketError, match="pitch = 100 of a block-linear image is not a multiple of 64"):
        nxpkt.check(raw)
    raw = B.blob([B.pack_raw(P.OP_PRESENT_IMAGE, [1, 0, POOL, 0, 0, 64, 0, 0, 256, 0, 0])])
    with pytest.raises(nxpkt.NativePacketError, match="PRESENT_IMAGE: size 64x0 is empty"):
        nxpkt.check(raw)
    raw = B.blob([B.pack_raw(P.OP_PRESENT_IMAGE, [1, 0, POOL, 0, 0, 64, 16, 0, 256, 0, 4])])
    with pytest.raises(nxpkt.NativePacketError, match="field format = 4 is not in 0..3"):
        nxpkt.check(raw)
