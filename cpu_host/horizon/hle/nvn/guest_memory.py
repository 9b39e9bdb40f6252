"""Give a GPU memory pool's guest pages a memfd behind them, in place: the current bytes are
copied into a fresh memfd, which is then mapped over the same guest addresses (MAP_FIXED,
MAP_SHARED).  From then on the guest's CPU writes land in pages the GPU process maps too, so
nothing is copied per frame; the GPU process snapshots what a submission binds."""

from __future__ import annotations

import ctypes
import fcntl
import mmap
import os

_libc = ctypes.CDLL(None, use_errno=True)
_libc.mmap.restype = ctypes.c_void_p
_libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_long]
MAP_FAILED = ctypes.c_void_p(-1).value
PAGE = 0x1000


def back_with_memfd(addr: int, size: int, name: str) -> int:
    """Returns the memfd now backing [addr, addr + size); both must be page-aligned."""
    if addr % PAGE or size % PAGE or size <= 0:
        raise ValueError(f"pool storage {addr:#x}+{size:#x} is not page-aligned")
    fd = os.memfd_create(name, os.MFD_CLOEXEC | os.MFD_ALLOW_SEALING)
    try:
        os.ftruncate(fd, size)
        os.pwrite(fd, ctypes.string_at(addr, size), 0)
        fcntl.fcntl(fd, fcntl.F_ADD_SEALS, fcntl.F_SEAL_SHRINK | fcntl.F_SEAL_SEAL)
        r = _libc.mmap(addr, size, mmap.PROT_READ | mmap.PROT_WRITE, mmap.MAP_SHARED | 0x10, fd, 0)  # MAP_FIXED
        if r in (None, MAP_FAILED) or r != addr:
            raise OSError(ctypes.get_errno(), f"mmap of the pool memfd over {addr:#x} failed")
    except BaseException:
        os.close(fd)
        raise
    return fd
