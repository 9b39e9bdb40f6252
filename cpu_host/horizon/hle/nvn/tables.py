"""The NVN front end's tables: our nvn.h's format codes, flags, defaults and enumerations, and
the small helpers that turn recorded state into packets (blend state, render targets), shared by
the front end's parts (frontend.py and the modules it is mixed from)."""

from __future__ import annotations


from cpu_host.horizon.hle.abi import GuestError
from cpu_host.horizon.hle.nvn.objects import (
    Recording,
)
from gpu_host import blocklinear
from gpu_host import packets as P


FORMATS = {
    1: ("RGBA8", 4, 1),
    2: ("BGRA8", 4, 1),
    3: ("R8", 1, 1),
    4: ("RG8", 2, 1),
    5: ("RGB565", 2, 1),
    6: ("RGBA16F", 8, 1),
    7: ("RGBA32F", 16, 1),
    8: ("BC1", 8, 4),
    9: ("BC3", 16, 4),
    10: ("BC7", 16, 4),
    11: ("ASTC_4x4", 16, 4),
    12: ("ASTC_8x8", 16, 8),  # code -> (name, bytes per element, block size)
    13: ("D16", 2, 1),
    14: ("D24S8", 4, 1),
    15: ("D32F", 4, 1),
    16: ("D32F_S8", 8, 1),
}
DEPTH_FORMATS = {"D16", "D24S8", "D32F", "D32F_S8"}
FACE_FRONT, FACE_BACK = 1, 2
POLYGON_OFFSET_LINE, POLYGON_OFFSET_FILL = 2, 4
MAX_TARGETS = 8  # colour targets a colour/blend/channel-mask state may name (RENDER_TARGETS draws up to 8)
# Defaults of our state structures (nvn.h), as words: depth test off, depth writes on, LESS,
# stencil off, KEEP ops and ALWAYS on both faces; no culling, CCW front, fill; blending ONE/ZERO/ADD.
DS_DEFAULTS = (0, 1, 1, 0, 0, 0, 0, 7, 0, 0, 0, 7, 0, 0, 0, 0)
POLYGON_DEFAULTS = (0, 0, 0, 0)
BLEND_DEFAULTS = (0, 1, 0, 1, 0, 0, 0, 0)
FLAG_DISPLAY, FLAG_RENDER_TARGET, FLAG_LINEAR = 1, 2, 4
TARGET_3D = 4  # nvn.h NVN_TEXTURE_TARGET_3D (0..3: 2D, 2D array, cube, cube array)
TARGET_1D, TARGET_1D_ARRAY = 5, 6  # nvn.h NVN_TEXTURE_TARGET_1D / _1D_ARRAY (the last target kinds)
POOL_CPU_CACHED = 4  # nvn.h NVN_MEMORY_POOL_FLAGS_CPU_CACHED: writes reach the GPU by flushes
SHADER_MAGIC = 0x4853584E
STAGE_VERTEX, STAGE_FRAGMENT = 2, 3
# gfx-geom: our nvn.h's NVN_STAGE_GEOMETRY (the shader service's first geometry stage number; the
# front end has the program translated for every input primitive: shader.proto Stage 4..8)
STAGE_GEOMETRY = 4
ARCH_SPIRV = 0
SYNC_ALREADY, SYNC_SATISFIED, SYNC_TIMEOUT = 0, 1, 2
HANDLE_SAMPLER_SHIFT = 20
MAX_SLOTS = 4


def block_height_log2(height_elements: int) -> int:
    """The block height (in GOBs, log2) a 2D surface gets: the smallest power of two of GOBs
    that covers its height, at most 16 GOBs (the usual choice of Maxwell-era drivers)."""
    gobs = -(-height_elements // blocklinear.GOB_H)
    log2 = 0
    while (1 << log2) < gobs and log2 < 4:
        log2 += 1
    return log2


def block_depth_log2(depth: int) -> int:
    """The block depth (in slices, log2) a block-linear 3D texture gets in this model: the
    smallest power of two covering its depth, at most 16 slices (as block heights stop at 16
    GOBs).  The guest learns the size it implies from nvnTextureBuilderGetStorageSize."""
    log2 = 0
    while (1 << log2) < depth and log2 < 4:
        log2 += 1
    return log2


def _enum(what: str, name: str, v: int, limit: int) -> None:
    if not 0 <= v <= limit:
        raise GuestError(f"{what}: {name} {v} is not in 0..{limit}")


def _faces(what: str, faces: int) -> tuple[int, ...]:
    """NVN_FACE_FRONT (1), NVN_FACE_BACK (2) or both (3) as the faces 1 and 2 it names."""
    if faces not in (1, 2, 3):
        raise GuestError(f"{what}: faces {faces} is not front (1), back (2) or both (3)")
    return tuple(f for f in (FACE_FRONT, FACE_BACK) if faces & f)


def _blend_packet(rec: Recording, k: int = 0) -> tuple:
    """BLEND_STATE of colour target ``k`` from what the recording bound: the colour state's enable
    bit, the blend state's factors (ONE/ZERO/ADD without one), the channel mask (all without one)."""
    sc, dc, sa, da, ce, ae = (rec.blend if k == 0 else rec.blends.get(k)) or (1, 0, 1, 0, 0, 0)
    if k and rec.blend is None and rec.channel_mask is None and k not in rec.blends:
        sc, dc, ce, sa, da, ae = P.BLEND_OVER[3:9]  # the older meaning of a bare colour state
    mask = 0xF if rec.channel_mask is None else rec.channel_mask >> 4 * k & 0xF
    return (P.OP_BLEND_STATE, k, bool(rec.color_blend >> k & 1), sc, dc, ce, sa, da, ae, mask)


def _extra_blend_packets(rec: Recording) -> list[tuple]:
    """BLEND_STATE of colour targets 1..7 where it is not the default or was recorded before (so
    a return to the default is recorded too); a single-target game records none of them, so its
    command stream is what it was before MRT."""
    out = []
    for k in range(1, MAX_TARGETS):
        pkt = _blend_packet(rec, k)
        if k in rec.extra_sent or pkt != (P.OP_BLEND_STATE, k, *P.BLEND_OFF[2:]):
            rec.extra_sent.add(k)
            out.append(pkt)
    return out


def _targets(cmds: list) -> list[int]:
    """Texture ids the commands render into (TARGET, both of DEPTH_TARGET's, RENDER_TARGETS') or
    a dispatch writes (COMPUTE_SURFACE): the queue writes back those with pool storage."""
    out = []
    for c in cmds:
        if c[0] == P.OP_TARGET:
            out.append(c[1])
        elif c[0] == P.OP_DEPTH_TARGET:
            out += [t for t in c[1:3] if t != P.EMPTY]
        elif c[0] == P.OP_RENDER_TARGETS:
            out += [t for t in (*c[1], c[2]) if t != P.EMPTY]
        elif c[0] == P.OP_COMPUTE_SURFACE and c[2] != P.EMPTY:  # a dispatch writes it (nvn/compute.py)
            out.append(c[2])
    return out
