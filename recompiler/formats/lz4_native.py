"""The system's reference LZ4 library (Debian's ``liblz4.so.1``, present wherever apt is) through
ctypes: a fast path for the same block format that ``lz4.py`` implements in Python.  Absent
library -> ``None``, and callers use the Python codec."""
from __future__ import annotations

import ctypes
import ctypes.util
import functools


@functools.lru_cache(maxsize=1)
def library() -> ctypes.CDLL | None:
    name = ctypes.util.find_library("lz4") or "liblz4.so.1"
    try:
        lib = ctypes.CDLL(name)
    except OSError:
        return None
    lib.LZ4_decompress_safe.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_int, ctypes.c_int]
    lib.LZ4_decompress_safe.restype = ctypes.c_int
    lib.LZ4_compress_default.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_int, ctypes.c_int]
    lib.LZ4_compress_default.restype = ctypes.c_int
    lib.LZ4_compressBound.argtypes = [ctypes.c_int]
    lib.LZ4_compressBound.restype = ctypes.c_int
    return lib


_INT_MAX = 0x7FFFFFFF


def decompress(src: bytes, size: int) -> bytes | None:
    """Decoded bytes when ``src`` is a valid block of exactly ``size`` bytes, else None (the
    caller then decodes with the Python codec to name what is wrong)."""
    lib = library()
    if lib is None or len(src) > _INT_MAX or size > _INT_MAX:
        return None
    dst = ctypes.create_string_buffer(size)
    n = lib.LZ4_decompress_safe(src, dst, len(src), size)
    if n != size:
        return None
    return dst.raw


def compress(data: bytes) -> bytes | None:
    lib = library()
    if lib is None or len(data) > 0x7E000000:   # LZ4_MAX_INPUT_SIZE
        return None
    dst = ctypes.create_string_buffer(lib.LZ4_compressBound(len(data)))
    n = lib.LZ4_compress_default(data, dst, len(data), len(dst))
    return dst.raw[:n] if n > 0 else None
