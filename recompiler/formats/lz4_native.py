"""The reference LZ4 library (the C liblz4) through its maintained Python binding, PyPI ``lz4``
(python-lz4, which bundles liblz4's sources): the fast path for the block format that
``lz4.py`` implements in Python.  Binding not installed -> ``None``, and callers use the
Python codec.

Why the binding and not ctypes on Debian's ``liblz4.so.1`` (what this module used before):
the same C decoder with no hand-written argtypes, no dependence on a system package, and less
call overhead (bench/formats_lz4.py: see docs/PERFORMANCE.md).  Its errors are one generic
``LZ4BlockError`` ("corrupt input or insufficient space") that names no position, and with
``uncompressed_size`` it accepts a block that expands to *fewer* bytes than asked; so
``lz4.py`` checks the size here and re-decodes a refused block with its own decoder to name
the offset where the stream goes wrong."""

from __future__ import annotations

import functools
from types import ModuleType

_INT_MAX = 0x7FFFFFFF
_MAX_INPUT = 0x7E000000  # LZ4_MAX_INPUT_SIZE (lz4.h)


@functools.lru_cache(maxsize=1)
def library() -> ModuleType | None:
    """``lz4.block`` when the binding is installed, else None."""
    try:
        import lz4.block
    except ImportError:
        return None
    return lz4.block


def version() -> str | None:
    """The C liblz4 version inside the binding (e.g. ``1.9.4``)."""
    if library() is None:
        return None
    import lz4

    return lz4.library_version_string()


def decompress(src: bytes, size: int) -> bytes | None:
    """Decoded bytes when ``src`` is a valid block of exactly ``size`` bytes, else None (the
    caller then decodes with the Python codec to name what is wrong)."""
    block = library()
    if block is None or len(src) > _INT_MAX or size > _INT_MAX:
        return None
    try:
        out = block.decompress(src, uncompressed_size=size)
    except block.LZ4BlockError:
        return None
    return out if len(out) == size else None


def compress(data: bytes) -> bytes | None:
    block = library()
    if block is None or len(data) > _MAX_INPUT:
        return None
    return block.compress(data, store_size=False)
