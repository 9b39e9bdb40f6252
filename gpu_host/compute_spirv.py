"""What the GPU process and the NVN front end read off a compute program's SPIR-V (no Vulkan
here, so the CPU host may import it): its execution model, LocalSize and the (set, binding)
pairs it declares, which say what a dispatch must bind (gpu_host/compute.py; PROTOCOL.md
"Compute").

Sources of facts: the SPIR-V 1.6 specification (the module's header of five words; OpEntryPoint
15, OpExecutionMode 16 with LocalSize 17, OpDecorate 71 with Binding 33 and DescriptorSet 34;
execution model GLCompute 5; OpVariable 59, OpTypePointer 32, OpTypeArray 28, OpTypeImage 25 with
its Dim (0: 1D, 1: 2D, 2: 3D, 3: Cube), Arrayed and Sampled (2: a storage image) operands); the
bindings are nxrecomp/common/kernel_pools.py's, which the shader service declares."""

from __future__ import annotations

import struct

from gpu_host.objects import ObjectError
from nxrecomp.common import kernel_pools

SPIRV_MAGIC = 0x07230203
OP_ENTRY_POINT, OP_EXECUTION_MODE, OP_DECORATE = 15, 16, 71
OP_TYPE_IMAGE, OP_TYPE_ARRAY, OP_TYPE_POINTER, OP_VARIABLE = 25, 28, 32, 59
MODEL_GLCOMPUTE, MODE_LOCAL_SIZE = 5, 17
DEC_BINDING, DEC_SET = 33, 34
# set 1: the kernel texture pools (one per view kind: 2D, 2D array, 3D, cube, cube array) and the
# sampler pool (nxrecomp/common/kernel_pools.py, the numbering the shader service declares)
POOL_BINDINGS = frozenset(
    {(kernel_pools.POOL_SET, b) for b in (*kernel_pools.TEXTURE_BINDINGS.values(), kernel_pools.SAMPLER_BINDING)}
)


def reads_pools(code: bytes) -> bool:
    """Whether a compute module declares the texture or sampler pool (a dispatch of it needs a
    POOLS packet in force)."""
    return bool(scan(code, "compute program")[2] & POOL_BINDINGS)


def scan(code: bytes, what: str) -> tuple[int, tuple[int, int, int] | None, set[tuple[int, int]]]:
    """(execution model, LocalSize, the (set, binding) pairs decorated) of a SPIR-V module."""
    if len(code) < 20 or len(code) % 4:
        raise ObjectError(f"{what}: {len(code)} bytes is not a SPIR-V module")
    words = struct.unpack(f"<{len(code) // 4}I", code)
    if words[0] != SPIRV_MAGIC:
        raise ObjectError(f"{what}: bad SPIR-V magic {words[0]:#x}")
    model, local = -1, None
    sets: dict[int, int] = {}
    binds: dict[int, int] = {}
    i = 5
    while i < len(words):
        n, op = words[i] >> 16, words[i] & 0xFFFF
        if n == 0 or i + n > len(words):
            raise ObjectError(f"{what}: instruction at word {i} has a bad word count {n}")
        if op == OP_ENTRY_POINT and model < 0:
            model = words[i + 1]
        elif op == OP_EXECUTION_MODE and n >= 6 and words[i + 2] == MODE_LOCAL_SIZE:
            local = (words[i + 3], words[i + 4], words[i + 5])
        elif op == OP_DECORATE and n >= 4 and words[i + 2] in (DEC_SET, DEC_BINDING):
            (sets if words[i + 2] == DEC_SET else binds)[words[i + 1]] = words[i + 3]
        i += n
    pairs = {(sets.get(v, 0), b) for v, b in binds.items()}
    return model, local, pairs


def image_kinds(code: bytes) -> dict[tuple[int, int], tuple[int, int, int]]:
    """(set, binding) -> (Dim, Arrayed, Sampled) of each decorated variable whose type is an image
    or an array of images (a module ``scan`` has accepted).  What a storage image pool's binding
    must declare is checked against this (gpu_host/compute.py)."""
    words = struct.unpack(f"<{len(code) // 4}I", code)
    sets: dict[int, int] = {}
    binds: dict[int, int] = {}
    images: dict[int, tuple[int, int, int]] = {}
    through: dict[int, int] = {}  # pointer and array types -> the type they hold
    var_type: dict[int, int] = {}
    i = 5
    while i < len(words):
        n, op = words[i] >> 16, words[i] & 0xFFFF
        if n == 0:
            break
        if op == OP_DECORATE and n >= 4 and words[i + 2] in (DEC_SET, DEC_BINDING):
            (sets if words[i + 2] == DEC_SET else binds)[words[i + 1]] = words[i + 3]
        elif op == OP_TYPE_IMAGE and n >= 9:
            images[words[i + 1]] = (words[i + 3], words[i + 5], words[i + 7])
        elif op == OP_TYPE_ARRAY and n >= 4:
            through[words[i + 1]] = words[i + 2]
        elif op == OP_TYPE_POINTER and n >= 4:
            through[words[i + 1]] = words[i + 3]
        elif op == OP_VARIABLE and n >= 4:
            var_type[words[i + 2]] = words[i + 1]
        i += n
    out = {}
    for v, b in binds.items():
        t, hops = var_type.get(v), 0
        while t in through and hops < 8:
            t, hops = through[t], hops + 1
        if t in images:
            out[(sets.get(v, 0), b)] = images[t]
    return out
