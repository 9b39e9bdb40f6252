"""Decode block-compressed textures (BC1-BC5, BC7, ASTC LDR) to RGBA8 on the CPU, for devices that
cannot sample them natively.  The decoder is C (``texdecode.c``), compiled once with the
``ziglang`` wheel's clang into ``<nxrecomp.cache_dir>/gpu_host/`` (content-hashed name, written
to a temporary name and renamed) and called through cffi in ABI mode; cffi drops the GIL for it.
"""

from __future__ import annotations

import functools
import logging
import os
import threading
from pathlib import Path

import numpy as np

from nxrecomp.common import clib

log = logging.getLogger("gpu_host.texdecode")
HERE = Path(__file__).resolve().parent
SOURCE = HERE / "texdecode.c"
TABLES = HERE / "bptc_tables.h"
FLAGS = ["-O2", *clib.SHARED_FLAGS, "-Wall"]
CODES = {"BC1": 1, "BC1_RGB": 2, "BC2": 3, "BC3": 4, "BC4": 5, "BC5": 6, "ASTC": 7, "BC7": 8}


def _build() -> Path:
    return clib.build_shared("texdecode", [SOURCE], FLAGS, "gpu_host", inputs=(TABLES,))


_lib = clib.Loaded(
    "int nx_texdecode(int fmt, const uint8_t *src, int width, int height, int bw, int bh, uint8_t *out);", _build
)  # one build per process, whichever thread asks first


def prepare() -> None:
    """Build/load the decoder in the background now (a cold compiler cache can take tens of
    seconds), so the first compressed upload does not stall a submission."""

    def go() -> None:
        try:
            _lib()
        except Exception as e:  # reported again, with its reason, at the first real use
            log.warning("texture decoder not ready: %s", e)

    threading.Thread(target=go, name="texdecode-build", daemon=True).start()


def decode(
    family: str, blocks: bytes | memoryview | np.ndarray, width: int, height: int, block_w: int = 4, block_h: int = 4
) -> tuple[np.ndarray, int]:
    """RGBA8 image (height x width x 4) from row-major blocks, and the number of ASTC error
    blocks (decoded as opaque magenta).  ``family`` is one of ``CODES``."""
    code = CODES[family]
    bsize = 8 if family in ("BC1", "BC1_RGB", "BC4") else 16
    need = -(-width // block_w) * -(-height // block_h) * bsize
    src = np.ascontiguousarray(
        np.frombuffer(blocks, np.uint8) if not isinstance(blocks, np.ndarray) else blocks, dtype=np.uint8
    ).reshape(-1)
    if src.size < need:
        raise ValueError(f"{family} {width}x{height} needs {need} bytes of blocks, got {src.size}")
    out = np.empty((height, width, 4), np.uint8)
    ffi, lib = _lib()
    nx, ny = -(-width // block_w), -(-height // block_h)
    # Bands of block rows on several threads: cffi drops the GIL for the C call.
    bands = max(1, min(_THREADS, ny, width * height // (256 * 256)))
    edges = [ny * i // bands for i in range(bands + 1)]

    def band(i: int) -> int:
        r0, r1 = edges[i], edges[i + 1]
        h = min(height, r1 * block_h) - r0 * block_h
        return lib.nx_texdecode(
            code,
            ffi.from_buffer("uint8_t[]", src[r0 * nx * bsize : r1 * nx * bsize]),
            width,
            h,
            block_w,
            block_h,
            ffi.from_buffer("uint8_t[]", out[r0 * block_h : r0 * block_h + h]),
        )

    if bands == 1:
        results = [band(0)]
    else:
        results = list(_pool().map(band, range(bands)))
    if min(results) < 0:
        raise ValueError(f"{family}: block {block_w}x{block_h} is not decodable")
    return out, sum(results)


_THREADS = max(1, min(8, os.cpu_count() or 1))


@functools.lru_cache(maxsize=1)
def _pool():
    from concurrent.futures import ThreadPoolExecutor

    return ThreadPoolExecutor(_THREADS, thread_name_prefix="texdecode")
