"""Constant bank 0 of an SM86 compute kernel as the CUDA driver lays it out, and the generic
address of the shared-memory window: a contract between the translation (which reads these
words) and whoever dispatches it (the GPU process, the tests' Vulkan harness) — both must
write exactly this image.

Offsets from the SM86 compute kernels ptxas/nvcc emit (``c[0x0][0x0]`` block dims, ``0xc``
grid dims, ``0x160`` the parameters, ``0x18`` the shared window read by generic loads/stores
of -G code)."""

from __future__ import annotations

import struct

from shader_svc.lower.base import LOCAL_WORDS

PARAMS = 0x160
# a generic address no host allocation reaches (user space ends at 2^47 on x86-64 and arm64)
SHARED_WINDOW = 1 << 48
# generic base of local memory (0x20: -G code adds R1 to it): the 16 MiB just below the shared
# window, where ``lower/memory.py``'s generic accesses look for it
LOCAL_WINDOW = SHARED_WINDOW - (1 << 24)
STACK_TOP = 4 * LOCAL_WORDS  # 0x28, R1's start: local offsets stay inside the window


def cbank0(size: int, block: tuple[int, int, int], grid: tuple[int, int, int], params: bytes) -> bytes:
    """Constant bank 0 as the CUDA driver fills it for SM86: block dims at 0x0, grid dims at 0xc,
    the shared memory window's generic base at 0x18 (``SHARED_WINDOW``: generic loads/stores
    of -G code reach shared memory through it), the local window's ``LOCAL_WINDOW`` at 0x20 and
    the stack top ``STACK_TOP`` at 0x28, kernel parameters at 0x160."""
    img = bytearray(max(size, PARAMS + len(params)))
    struct.pack_into("<3I", img, 0x0, *block)
    struct.pack_into("<3I", img, 0xC, *grid)
    struct.pack_into("<QQI", img, 0x18, SHARED_WINDOW, LOCAL_WINDOW, STACK_TOP)
    img[PARAMS : PARAMS + len(params)] = params
    return bytes(img)
