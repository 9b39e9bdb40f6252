"""Compressed texture upload: our CPU decoders (gpu_host/texdecode.c, used where the device
lacks a format) against public decoders on the same blocks, and the whole upload path in the
GPU process (deswizzle + decode or native + copy) for a 1024x1024 texture.

    .venv/bin/python bench/gpu_texdecode.py [--size 1024] [--repeat 5]

Prints megatexels per second and ratios.  The blocks are from real encoders (ARM's astcenc for
ASTC, random for BCn: every BCn block is valid, so random blocks cost what real ones do).
"""

from __future__ import annotations

import argparse
import time

import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests" / "gpu_host"))

from gpu_packets import ArrayMemory, texture  # noqa: E402


def best(fn, repeat: int) -> float:
    t = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        t.append(time.perf_counter() - t0)
    return min(t)


def astc_blocks(n: int, bw: int, bh: int, rng) -> bytes:
    from astc_encoder import (
        ASTCConfig,
        ASTCConfigFlags,
        ASTCContext,
        ASTCImage,
        ASTCProfile,
        ASTCQualityPreset,
        ASTCSwizzle,
        ASTCType,
    )

    img = rng.integers(0, 256, (n, n, 4), dtype=np.uint8)
    img[: n // 2] //= 16  # smoother half: fewer-weight modes too
    ctx = ASTCContext(
        ASTCConfig(ASTCProfile.LDR, bw, bh, 1, ASTCQualityPreset.FASTEST, ASTCConfigFlags.USE_DECODE_UNORM8), threads=2
    )
    return ctx.compress(ASTCImage(ASTCType.U8, n, n, 1, img.tobytes()), ASTCSwizzle.from_str("RGBA"))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--size", type=int, default=1024)
    ap.add_argument("--repeat", type=int, default=5)
    a = ap.parse_args()
    n = a.size
    mtex = n * n / 1e6
    rng = np.random.default_rng(1)

    from gpu_host import texdecode
    import texture2ddecoder as t2d
    from astc_encoder import (
        ASTCConfig,
        ASTCConfigFlags,
        ASTCContext,
        ASTCImage,
        ASTCProfile,
        ASTCQualityPreset,
        ASTCSwizzle,
        ASTCType,
    )

    print(f"decode {n}x{n} to RGBA8, best of {a.repeat}")
    threads = texdecode._THREADS

    def ours_both(*args) -> tuple[float, float]:
        """(seconds on one thread, seconds on the decoder's usual threads)"""
        texdecode._THREADS = 1
        one = best(lambda: texdecode.decode(*args), a.repeat)
        texdecode._THREADS = threads
        return one, best(lambda: texdecode.decode(*args), a.repeat)

    print(
        f"{'format':10} {'ours 1 thr':>11} {f'ours {threads} thr':>11} {'public 1 thr':>13} "
        f"{'ours/public (1 thr)':>20}  Mtex/s; public decoder"
    )
    for fam, fn, bsize in [
        ("BC1", t2d.decode_bc1, 8),
        ("BC3", t2d.decode_bc3, 16),
        ("BC5", t2d.decode_bc5, 16),
        ("BC7", t2d.decode_bc7, 16),
    ]:
        data = rng.integers(0, 256, (n // 4) ** 2 * bsize, dtype=np.uint8).tobytes()
        one, ours = ours_both(fam, data, n, n)
        pub = best(lambda: fn(data, n, n), a.repeat)
        print(f"{fam:10} {mtex / one:11.1f} {mtex / ours:11.1f} {mtex / pub:13.1f} {pub / one:20.2f}  texture2ddecoder")
    for bw, bh in [(4, 4), (6, 6), (8, 8)]:
        data = astc_blocks(n, bw, bh, rng)
        one, ours = ours_both("ASTC", data, n, n, bw, bh)
        ctx = ASTCContext(
            ASTCConfig(
                ASTCProfile.LDR,
                bw,
                bh,
                1,
                ASTCQualityPreset.FASTEST,
                ASTCConfigFlags.USE_DECODE_UNORM8 | ASTCConfigFlags.DECOMPRESS_ONLY,
            )
        )
        sw = ASTCSwizzle.from_str("RGBA")
        pub = best(lambda: ctx.decompress(data, ASTCImage(ASTCType.U8, n, n, 1), sw), a.repeat)
        t2 = best(lambda: t2d.decode_astc(data, n, n, bw, bh), a.repeat)
        print(
            f"ASTC {bw}x{bh:<4} {mtex / one:11.1f} {mtex / ours:11.1f} {mtex / pub:13.1f} {pub / one:20.2f}  "
            f"astcenc; texture2ddecoder {mtex / t2:.1f}"
        )

    # The whole upload in the GPU process's replayer: deswizzle (block-linear) + decode or not + copy.
    from gpu_host import blocklinear
    from gpu_host import packets as P
    from gpu_host.engine import Engine
    from gpu_host.vkdevice import Device

    dev = Device()
    print(f"\nupload of a {n}x{n} block-linear texture sampled in one draw ({dev.name}), best of {a.repeat}")
    print(f"{'format':12} {'mode':8} {'ms':>8}")
    for fmt, fam, bsize, bw in [
        ("RGBA8", None, 4, 1),
        ("BC1", "BC1", 8, 4),
        ("BC3", "BC3", 16, 4),
        ("BC7", "BC7", 16, 4),
        ("ASTC_4x4", "ASTC", 16, 4),
        ("ASTC_8x8", "ASTC", 16, 8),
    ]:
        nb = n // bw
        if fam == "ASTC":
            data = astc_blocks(n, bw, bw, rng)
        else:
            data = rng.integers(0, 256, nb * nb * bsize, dtype=np.uint8).tobytes()
        lin = np.frombuffer(data, np.uint8).reshape(nb, nb * bsize)
        sw = blocklinear.swizzle(lin, 4)
        for mode in ["auto", "always"] if fam and not fam.startswith("ASTC") else ["auto"]:
            mem = ArrayMemory({1: bytearray(sw) + bytearray(1 << 16)})
            eng = Engine(dev, mem)
            eng.replayer.decode_always = mode == "always"
            eng.register_texture(**texture(1, n, n, fmt, pool=1, block_linear=True, block_height_log2=4))
            eng.register_texture(**texture(2, 64, 64, render_target=True))
            eng.register_sampler(1, False, False)
            from cpu_host.gpu_client.shaders import GlslSource

            from gpu_guest import TEX_FS, TEX_VS

            vs, fs = GlslSource(TEX_VS, TEX_FS).spirv()
            eng.register_program(1, vs, fs)
            quad = np.array([[-1, -1, 0, 0], [1, -1, 1, 0], [1, 1, 1, 1]], np.float32).tobytes()
            mem.pools[1][len(sw) : len(sw) + len(quad)] = quad
            seq = iter(range(1, 1 << 30))

            def once() -> None:
                # a changed byte each time, so the texture is really uploaded again (CRC check)
                mem.pools[1][0] ^= 1
                pk = [
                    [P.OP_TARGET, 2],
                    [P.OP_PROGRAM, 1],
                    [P.OP_VERTEX_LAYOUT, 16, 0, [[0, 2, 0], [1, 2, 8]]],
                    [P.OP_VERTEX, 1, len(sw), len(quad)],
                    [P.OP_TEXTURE, 0, 1, 1],
                    [P.OP_DRAW, 3, 1, 0, 0],
                ]
                assert eng.submit(next(seq), pk) is not None

            once()
            t = best(once, a.repeat)
            print(f"{fmt:12} {mode:8} {t * 1000:8.1f}")
            eng.replayer.reset(eng.objects)


if __name__ == "__main__":
    main()
