"""The native decoder/validator of binary packet blobs (``gpu_host/nxpkt.c``, built inside
``gpu_host/nxreplay.c``, the native replay; format in ``gpu_host/binpackets.py`` and PROTOCOL.md "Binary packets").

Built like ``texdecode``: compiled once with the ``ziglang`` wheel's clang into
``<nxrecomp.cache_dir>/gpu_host/`` (content-hashed over the C source, the op table generated from
``packets.OPS`` and the flags; written to a temporary name and renamed) and called through cffi in
ABI mode.  ``check`` runs the format pass and, given an ``ObjectTables``, the validation pass
against the registered objects; a bad blob raises ``NativePacketError`` naming the packet index,
op and field.  Nothing is Python per packet: one call per blob.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any


from gpu_host import binpackets
from gpu_host import packets as P
from gpu_host.objects import Objects
from nxrecomp.common import clib

HERE = Path(__file__).resolve().parent
SOURCE = HERE / "nxreplay.c"  # includes nxpkt.c: one library for decode, validate and record
DECODER = HERE / "nxpkt.c"
FLAGS = ["-O2", *clib.SHARED_FLAGS, "-Wall", "-Werror", "-ldl"]
OK, BAD, FALLBACK = 0, 1, 2
FORMATTED = 1  # nx_pkt_check's flag: pass 1 done already (format_body)
# view kinds as nxpkt.c's NX_KIND_* ("3d": a sampled volume, gfx-layers)
KINDS = {"2d": 1, "2d_array": 2, "cube": 3, "cube_array": 4, "other": 5, "3d": 6}
LOOKUPS = {"plain": 1, "dref": 2, "both": 3}
CDEF = """
typedef struct { uint32_t id; uint32_t flags; uint64_t size; } nx_pool;
typedef struct { uint32_t id; uint32_t flags; uint32_t kind; uint32_t width, height, samples, format, pad; } nx_tex;
typedef struct { uint32_t id; uint32_t compare; } nx_smp;
typedef struct { uint32_t id; uint32_t input_mask; uint32_t flags; uint8_t kinds[4]; uint8_t lookups[4]; } nx_prog;
typedef struct {
    const nx_pool *pools; uint32_t npools;
    const nx_tex *texs; uint32_t ntexs;
    const nx_smp *smps; uint32_t nsmps;
    const nx_prog *progs; uint32_t nprogs;
    uint32_t max_colors;
    uint32_t independent_blend;
    uint32_t raster_features;
} nx_objects;
typedef struct { int32_t index; int32_t op; char field[32]; char message[224]; } nx_error;
int nx_pkt_check(const uint8_t *buf, size_t len, const nx_objects *objs, uint32_t flags, uint32_t *count, uint64_t *draws,
                 int32_t *fallback_op, nx_error *e);
int64_t nx_pkt_format_body(const uint8_t *buf, size_t len);
int64_t nx_pkt_copy_format_body(uint8_t *dst, const uint8_t *src, size_t len);
int64_t nx_pkt_decode(const uint8_t *buf, size_t len, uint64_t *out, size_t cap);
int64_t nx_from_msgpack(const uint8_t *src, size_t len, uint8_t *out, size_t cap);
typedef struct { uint32_t pool; uint32_t pad; uint64_t offset, size; } nx_range;
typedef struct { uint32_t program, layout, target, depth, rt, mode, a2c, blend[8]; } nx_pipekey;
typedef struct {
    nx_range *ranges; uint32_t nranges;
    nx_pipekey *pipes; uint32_t npipes;
    uint32_t *aux;
    uint32_t *hash; uint32_t hash_cap;
    uint32_t *textures; uint32_t ntextures;
    uint64_t *presents; uint32_t npresents;
    uint64_t *signals; uint32_t nsignals;
    uint32_t *targets; uint32_t ntargets;
    nx_range *dirty; uint32_t ndirty;
    uint32_t *poolsets; uint32_t npoolsets;
    uint32_t cap;
    uint32_t cur_prog, cur_layout, cur_target, have;
    uint32_t cur_depth, cur_rt, cur_mode, cur_a2c, cur_blend[8];
    const uint8_t *base;
    uint32_t blends[64], nblends;
} nx_plan_t;
typedef struct { uint32_t id, width, height, flags; uint64_t image, view, sample_view; } nx_rt;
typedef struct { uint32_t id, pad; uint64_t view; } nx_view;
typedef struct { uint32_t id, pad; uint64_t sampler; } nx_sampler_h;
typedef struct { uint32_t id, pools; uint64_t views[4]; uint64_t samplers[4]; } nx_progdef;
typedef struct {
    void *cb; uint64_t layout;
    uint64_t arena; const uint8_t *arena_map;
    const uint64_t *range_at;
    const nx_range *ranges;
    const uint64_t *pipes;
    const nx_rt *rts; uint32_t nrts;
    const nx_view *views; uint32_t nviews;
    const nx_sampler_h *samplers; uint32_t nsamplers;
    const nx_progdef *progs; uint32_t nprogs;
    uint64_t dummy_ubo; uint64_t dummy_ubo_range;
    uint64_t readback; const uint64_t *present_at;
    const uint64_t *stencil_at;
    const uint32_t *aux;
    const uint64_t *pool_sets;
    uint32_t npool_sets;
    uint64_t draws;
    uint64_t skipped;
} nx_rec_t;
int nx_vk_init(uint64_t device);
int nx_plan(const uint8_t *buf, size_t len, nx_plan_t *pl, nx_error *e);
int nx_record(const uint8_t *buf, size_t len, nx_rec_t *r, nx_error *e);
uint32_t nx_vk_layout(uint32_t *out);
"""


class NativePacketError(P.PacketError):
    """A blob the native decoder refused: ``index`` (-1: the blob's header), ``op``, ``field``."""

    def __init__(self, index: int, op: int, field: str, message: str) -> None:
        self.index, self.op, self.field = index, op, field
        name = P.OPS[op].name if op in P.OPS else f"op {op}"
        where = "blob header" if index < 0 else f"packet {index} {name}"
        if message.startswith(name + ": "):  # the C message names the op itself
            message = message[len(name) + 2 :]
        super().__init__(f"{where}: {message}")


def _build() -> Path:
    return clib.build_shared(
        "nxpkt",
        [SOURCE],
        FLAGS,
        "gpu_host",
        inputs=(DECODER,),
        includes=(HERE,),
        generated={"nxpkt_ops.h": binpackets.c_header()},
    )


lib = clib.Loaded(CDEF, _build)  # () -> (ffi, lib) of the built decoder, built at the first call


@dataclass
class ObjectTables:
    """The registered objects as the C validator reads them (sorted C arrays, kept alive here)."""

    c: Any
    keep: tuple


def tables(objects: Objects, pools: dict[int, int]) -> ObjectTables:
    """C tables of ``objects`` and of ``pools`` (pool id -> size)."""
    ffi, _ = lib()
    pl = sorted(pools.items())
    cp = ffi.new("nx_pool[]", max(1, len(pl)))
    can_write = getattr(objects.memory, "can_write", None)
    for i, (pid, size) in enumerate(pl):
        cp[i].id, cp[i].size = pid, size
        cp[i].flags = 1 if can_write is None or can_write(pid) else 0
    ts = sorted(objects.textures.items())
    ct = ffi.new("nx_tex[]", max(1, len(ts)))
    for i, (tid, t) in enumerate(ts):
        present = t.render_target and not t.fmt.depth and t.samples == 1 and t.fmt.name in ("RGBA8", "BGRA8")
        # WRITEBACK in C: what validate.plan accepts
        back = (
            t.render_target
            and t.samples == 1
            and (t.block_linear or t.pitch >= t.row_bytes)
            and t.pool in pools
            and t.offset + t.byte_size <= pools[t.pool]
            and (can_write is None or can_write(t.pool))
        )
        ct[i].id = tid
        ct[i].flags = (
            (1 if t.render_target else 0)
            | (2 if t.fmt.depth else 0)
            | (4 if t.samples > 1 else 0)
            | (8 if present else 0)
            | (16 if back else 0)
        )
        ct[i].kind = KINDS[t.view_kind]
        ct[i].width, ct[i].height, ct[i].samples = t.width, t.height, t.samples
        ct[i].format = binpackets.FORMAT_CODES[t.fmt.name]
    ss = sorted(objects.samplers.items())
    cs = ffi.new("nx_smp[]", max(1, len(ss)))
    for i, (sid, s) in enumerate(ss):
        cs[i].id, cs[i].compare = sid, 1 if s.compare else 0
    ps = sorted(objects.programs.items())
    cg = ffi.new("nx_prog[]", max(1, len(ps)))
    for i, (pid, p) in enumerate(ps):
        cg[i].id = pid
        cg[i].input_mask = sum(1 << loc for loc in p.vertex.input_locations if loc < 32)
        cg[i].flags = 1 if p.pools else 0
        kinds, looks = p.sampler_kinds, p.lookups
        for k in range(P.TEXTURE_SLOTS):
            cg[i].kinds[k] = KINDS.get(kinds.get(4 + k, ""), 0)
            cg[i].lookups[k] = LOOKUPS.get(looks.get(4 + k, ""), 0)
    o = ffi.new("nx_objects *")
    o.pools, o.npools, o.texs, o.ntexs = cp, len(pl), ct, len(ts)
    o.smps, o.nsmps, o.progs, o.nprogs = cs, len(ss), cg, len(ps)
    # the device's limits as the native replay sets them (NativeReplay.tables); here the protocol's
    o.max_colors, o.independent_blend, o.raster_features = P.MAX_COLOR_TARGETS, 1, 0
    return ObjectTables(o, (cp, ct, cs, cg))


@dataclass(frozen=True)
class Checked:
    packets: int
    draws: int
    fallback_op: int  # 0, or the first op only the Python path replays (the blob goes there whole)


def check(data: bytes, objects: ObjectTables | None = None, formatted: bool = False) -> Checked:
    """Format-check ``data`` (a blob) and, with ``objects``, validate it against them; raises
    NativePacketError naming the packet index, op and field.  ``formatted``: every packet's fields
    were checked by ``format_body`` on these very bytes (the GPU process's own copy): that pass is
    not repeated (the validation's walk checks the structure again)."""
    ffi, L = lib()
    count, draws, fb = ffi.new("uint32_t *"), ffi.new("uint64_t *"), ffi.new("int32_t *")
    err = ffi.new("nx_error *")
    flags = FORMATTED if formatted else 0
    rc = L.nx_pkt_check(ffi.from_buffer(data), len(data), objects.c if objects else ffi.NULL, flags, count, draws, fb, err)
    if rc == BAD:
        raise NativePacketError(err.index, err.op, ffi.string(err.field).decode(), ffi.string(err.message).decode())
    return Checked(count[0], draws[0], fb[0] if rc == FALLBACK else 0)


def format_body(data: Any) -> int:
    """The packets in ``data`` (bare packet bodies back to back: a recorder chunk) where each is
    well formed (pass 1 of ``check``), else -1: the blob that holds them is then checked whole."""
    ffi, L = lib()
    return int(L.nx_pkt_format_body(ffi.from_buffer(data), len(data)))


def copy_format_body(dst: bytearray, at: int, src: Any, off: int, size: int) -> int:
    """``size`` bytes of ``src`` from ``off`` copied to ``dst`` at ``at``, then ``format_body`` on
    the copy (the GPU process's own bytes): one C call (the assembly's copy step of a staged chunk).
    Both ranges are checked here again; one that does not fit raises ValueError, nothing copied."""
    if at < 0 or off < 0 or size < 0 or at + size > len(dst) or off + size > len(src):
        raise ValueError(f"copy of {size} bytes from offset {off} of {len(src)} to {at} of {len(dst)} does not fit")
    ffi, L = lib()
    return int(L.nx_pkt_copy_format_body(ffi.from_buffer(dst) + at, ffi.from_buffer(src) + off, size))


def decode(data: bytes) -> list[tuple]:
    """Packet tuples of a blob, decoded in C (format-checked first)."""
    check(data)
    ffi, L = lib()
    cap = len(data)  # at most one word per 4 bytes of blob, plus the (op, count) pair per packet
    buf = ffi.new("uint64_t[]", cap)
    n = L.nx_pkt_decode(ffi.from_buffer(data), len(data), buf, cap)
    if n < 0:
        raise AssertionError("decode buffer too small")
    return binpackets.from_words(list(ffi.unpack(buf, n)))


def from_msgpack(raw: bytes) -> bytes | None:
    """The blob of ``raw`` (one msgpack array of packets, as the ring carries them), converted in
    C byte for byte as ``binpackets.convert`` would; None where a value is not of the exact type
    ``packets.check`` accepts (``convert`` then names it).  Ranges are left to ``check``."""
    ffi, L = lib()
    out = bytearray(4 * len(raw) + 64)  # a packet's binary form is at most 4x its msgpack bytes
    n = L.nx_from_msgpack(ffi.from_buffer(raw), len(raw), ffi.from_buffer(out), len(out))
    return bytes(out[:n]) if n >= 0 else None
