"""Constant bank 0 of an SM53 compute kernel as the CUDA driver lays it out, and the generic
base of the shared-memory window: a contract between the translation (which reads these words)
and whoever dispatches it (the GPU process, the tests' Vulkan harness) — both must write
exactly this image.

Offsets from the SM5x kernels ptxas emits (``c[0x0][0x8]`` block dims, ``0x14`` grid dims,
``0x140`` the parameters; ``c[0x0][0x0]`` the shared window's 32-bit generic base: ptxas makes
a shared variable's generic address as c[0x0][0x0] + offset with a high word of 0)."""

from __future__ import annotations

import struct

from shader_svc.lower.base import LOCAL_WORDS

PARAMS = 0x140
SHARED_WINDOW = 0xFF000000  # generic base of shared memory (cbank0's word 0x0); 16 MiB below 4 GiB
# generic base of local memory (word 0x4: -G code ORs a local offset into it): the 16 MiB just
# below the shared window, where ``lower/memory.py``'s generic accesses look for it
LOCAL_WINDOW = SHARED_WINDOW - (1 << 24)
STACK_TOP = 4 * LOCAL_WORDS  # word 0x20, R1's start: local offsets stay inside the window


def cbank0(size: int, block: tuple[int, int, int], grid: tuple[int, int, int], params: bytes) -> bytes:
    """Constant bank 0 as the CUDA driver fills it for SM5x: block dims at 0x8, grid dims at
    0x14, kernel parameters at 0x140; at 0x0 the shared window's 32-bit generic base
    ``SHARED_WINDOW``, an address no host allocation of the GPU process may take, at 0x4 the
    local window's ``LOCAL_WINDOW``, at 0x20 the stack top ``STACK_TOP`` (**the GPU process
    must write the same**)."""
    img = bytearray(max(size, PARAMS + len(params)))
    struct.pack_into("<2I", img, 0x0, SHARED_WINDOW, LOCAL_WINDOW)
    struct.pack_into("<I", img, 0x20, STACK_TOP)
    struct.pack_into("<3I", img, 0x8, *block)
    struct.pack_into("<3I", img, 0x14, *grid)
    img[PARAMS : PARAMS + len(params)] = params
    return bytes(img)
