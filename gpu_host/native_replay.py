"""Native replay of a submission (setting ``gpu_host.native_replay``: auto | on | off).

The per-packet work runs in C (``gpu_host/nxreplay.c``, which includes the decoder/validator
``nxpkt.c``): the submission's packets as a binary blob (``binpackets``) are format-checked and
validated against the registered objects in one call, planned in a second (the memory ranges to
snapshot, the pipelines its draws need, its PRESENTs and SIGNALs), and recorded in a third,
calling ``vkCmd*`` directly through the entry points of the VkDevice the Python side created.
Python keeps object creation, pipelines (created here for the planned keys, before recording),
the snapshot and texture uploads, submission, read-back, write-backs and frames: the replay
path of ``Replayer.run`` with ``_record`` swapped for ``NativeSubmission.record``.

A submission holding an op the C path does not replay (the list in PROTOCOL.md "Binary
packets") goes whole to the Python replay, so behaviour stays exact (programs reading the bindless
pools replay here: their set-1 descriptor sets are written per POOLS content, only for a
submission that draws with such a program).  ``auto``: native where the library builds and the device has every
entry point, else Python (said once in the log); ``on``: the same, but failing to build or load
is an error at start; ``off``: Python only.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

import msgpack
import vulkan as vk

from gpu_host import binpackets, nxpkt, present_image
from gpu_host import packets as P
from gpu_host.objects import Objects
from gpu_host.replay import ALIGN, EMPTY_POOLS, Replayer, Result
from gpu_host.validate import Plan, SubmissionError

log = logging.getLogger("gpu_host.native_replay")
MODES = ("auto", "on", "off")
NO_FRAME = (1 << 64) - 1  # nxreplay.c's presents[] frame of a WRITEBACK
EVENT_FRAME = (1 << 64) - 2  # ... of an EVENT_SIGNAL (the packet's byte offset beside it)
IMAGE_FRAME = (1 << 64) - 3  # ... of a PRESENT_IMAGE (likewise)
DECODED_MAX = 4096  # NativeReplay.decoded's bound (packets)


def h(x: Any) -> int:
    """A Vulkan handle of the ``vulkan`` binding (a cffi pointer) as an integer."""
    return int(vk.ffi.cast("uintptr_t", x)) if x is not None else 0


@dataclass
class NativeSubmission:
    """One planned submission: the blob, the C plan and the Plan the snapshot is taken from."""

    blob: bytes
    cplan: Any
    keep: tuple
    plan: Plan
    packets: list
    presents: list[tuple[int | None, int]]  # PRESENT (frame, texture), WRITEBACK (None, texture), EVENT_SIGNAL
    #                                            (EVENT_FRAME, packet offset), in order
    frame_ids: list[int]


class NativeReplay:
    def __init__(self, replayer: Replayer, mode: str) -> None:
        if mode not in MODES:
            raise ValueError(f"gpu_host.native_replay = {mode!r} is not one of {', '.join(MODES)}")
        self.replayer = replayer
        self.ffi, self.lib = nxpkt.lib()
        rc = self.lib.nx_vk_init(h(replayer.dev.device))
        if rc:
            raise RuntimeError("no Vulkan loader" if rc < 0 else f"the device lacks vkCmd entry point {rc}")
        self._tables: tuple[int, Any] | None = None
        self.generation = 0  # bumped by every registration: the C tables are rebuilt then
        self.native = self.fallback = self.refused = 0  # submissions replayed in C / sent to Python
        self.plan_bufs: tuple = ()
        self.plan_cap = self.hash_cap = 0
        # Decoded packets by their bytes: the few packets Python reads per submission (a pipeline
        # key's VERTEX_LAYOUT, RENDER_TARGETS and BLEND_STATE, a POOLS packet's ids) are the same
        # bytes frame after frame, so each is decoded once, not once a submission (a decode is a
        # format check, a buffer and a tuple conversion: ~0.1 ms of Python).  Bounded: cleared
        # when it holds DECODED_MAX packets.
        self.decoded: dict[bytes, tuple] = {}

    @classmethod
    def create(cls, replayer: Replayer, mode: str) -> "NativeReplay | None":
        if mode not in MODES:
            raise ValueError(f"gpu_host.native_replay = {mode!r} is not one of {', '.join(MODES)}")
        if mode == "off":
            return None
        try:
            return cls(replayer, mode)
        except Exception as e:
            if mode == "on":
                raise
            log.warning("native replay unavailable (%s): replaying in Python", e)
            return None

    def changed(self) -> None:
        self.generation += 1

    def tables(self, objects: Objects) -> Any:
        if self._tables is None or self._tables[0] != self.generation or self._tables[2] is not objects:
            mem = objects.memory
            pools = {p: mem.pool_size(p) for p in _pool_ids(mem)}
            tabs = nxpkt.tables(objects, pools)
            dev = self.replayer.dev
            tabs.c.max_colors = min(P.MAX_COLOR_TARGETS, dev.limits.maxColorAttachments)
            tabs.c.independent_blend = 1 if dev.independent_blend else 0
            tabs.c.raster_features = (1 if "fillModeNonSolid" in dev.raster_features else 0) | (
                2 if "depthBiasClamp" in dev.raster_features else 0
            )
            self._tables = (self.generation, tabs, objects, self._handles(objects))
        return self._tables

    def _handles(self, objects: Objects) -> tuple:
        """Sampler handles and each program's handles for unbound texture slots (as replay._writes
        makes them), as C tables."""
        rp, ffi = self.replayer, self.ffi
        ss = sorted(objects.samplers.items())
        cs = ffi.new("nx_sampler_h[]", max(1, len(ss)))
        for i, (sid, s) in enumerate(ss):
            cs[i].id, cs[i].sampler = sid, h(rp.sampler(s.linear, s.repeat, s.compare))
        ps = sorted(objects.programs.items())
        cp = ffi.new("nx_progdef[]", max(1, len(ps)))
        for i, (pid, prog) in enumerate(ps):
            cp[i].id, cp[i].pools = pid, 1 if prog.pools else 0
            for s in range(4):
                kind = prog.sampler_kinds.get(4 + s, "2d")
                if prog.lookups.get(4 + s) in ("dref", "both") and kind not in ("other", "3d"):
                    view, smp = rp.dummy(kind, depth=True).view, rp.sampler(False, False, 1)
                else:
                    view, smp = rp.dummy(kind).view, rp.sampler(False, False)
                cp[i].views[s], cp[i].samplers[s] = h(view), h(smp)
        return cs, len(ss), cp, len(ps)

    def prepare(self, seq: int, packets: list, objects: Objects) -> NativeSubmission | None:
        """The planned native submission, or None: it goes to the Python path (an op the C path
        does not replay).  A bad packet raises SubmissionError naming it, as the Python path does."""
        try:  # msgpack again (one C call), then to binary in C: no Python per packet
            blob = nxpkt.from_msgpack(msgpack.packb(packets, use_bin_type=True))
        except (ValueError, TypeError, OverflowError):
            blob = None
        if blob is None:  # a value of another type: the Python converter names it
            try:
                blob = binpackets.convert(packets)
            except P.PacketError as e:
                raise SubmissionError(f"submission {seq}: {e}") from None
        return self.prepare_blob(seq, blob, objects, packets)

    def prepare_blob(
        self, seq: int, blob: bytes, objects: Objects, packets: list | None = None, formatted: bool = False
    ) -> NativeSubmission | None:
        """``prepare`` for a blob (from the ring's binary records when ``packets`` is None): None
        sends it to the Python path (decoded with ``nxpkt.decode`` when it came as a blob).
        ``formatted``: its packets' fields were checked already (``nxpkt.check``'s flag)."""
        tabs = self.tables(objects)
        try:
            got = nxpkt.check(blob, tabs[1], formatted)
        except nxpkt.NativePacketError as e:
            if packets is None:  # the binary format's own named error is the message
                raise SubmissionError(f"submission {seq}: {e}") from None
            # Refused: the Python path validates it again and drops it with its own message, so
            # a dropped submission's log line is the same whichever path runs (rare: no cost).
            log.debug("submission %d refused natively (%s); the Python path names it", seq, e)
            self.refused += 1
            return None
        if got.fallback_op:
            self.fallback += 1
            return None
        ffi, n = self.ffi, max(1, got.packets)
        if n > self.plan_cap:
            # The plan's arrays, reused by every submission that fits (one is planned and recorded
            # at a time, under the engine's lock): no megabytes allocated and zeroed per frame
            # (nx_plan writes each entry before reading it and clears its hash table itself).
            n = max(n, 2 * self.plan_cap, 1024)
            cap = 1 << max(4, (2 * n - 1).bit_length())
            self.plan_bufs = (
                ffi.new("nx_range[]", n),
                ffi.new("nx_pipekey[]", n),
                ffi.new("uint32_t[]", n),
                ffi.new("uint32_t[]", cap),
                ffi.new("uint32_t[]", n),
                ffi.new("uint64_t[]", 2 * n),
                ffi.new("uint64_t[]", 2 * n),
                ffi.new("uint32_t[]", n),
                ffi.new("nx_range[]", n),
                ffi.new("uint32_t[]", n),
            )
            self.plan_cap, self.hash_cap = n, cap
        keep = self.plan_bufs
        pl = ffi.new("nx_plan_t *")
        (pl.ranges, pl.pipes, pl.aux, pl.hash, pl.textures, pl.presents, pl.signals, pl.targets, pl.dirty, pl.poolsets) = keep
        pl.hash_cap, pl.cap = self.hash_cap, self.plan_cap
        err = ffi.new("nx_error *")
        if self.lib.nx_plan(ffi.from_buffer(blob), len(blob), pl, err):
            raise SubmissionError(f"submission {seq}: native plan failed: {ffi.string(err.message).decode()}")
        ranges = [(r.pool, r.offset, r.size) for r in ffi.unpack(pl.ranges, pl.nranges)]
        uploads = []
        for tid in ffi.unpack(pl.textures, pl.ntextures):
            t = objects.textures[tid]
            if not t.render_target:
                uploads.append(t)
        # (frame, texture) of each PRESENT and WRITEBACK in order (a WRITEBACK's frame: None), an
        # EVENT_SIGNAL's (EVENT_FRAME, its packet's byte offset) among them
        presents = [
            (None if pl.presents[2 * i] == NO_FRAME else int(pl.presents[2 * i]), int(pl.presents[2 * i + 1]))
            for i in range(pl.npresents)
        ]
        tex = objects.textures
        frame_tids = [t for f, t in presents if f not in (EVENT_FRAME, IMAGE_FRAME)]
        named = (*ffi.unpack(pl.targets, pl.ntargets), *frame_tids, *ffi.unpack(pl.textures, pl.ntextures))
        if any(tid in tex and (tex[tid].layers > 1 and tex[tid].render_target or tex[tid].volume) for tid in named):
            # a layered or volume target (a surface, gpu_host/compute.py): nxreplay.c copies one
            # 2D layer and draws into one; the Python path writes back every layer or slice and
            # refuses it as a draw target, a PRESENT or (a volume) a sampled texture by name
            self.fallback += 1
            return None
        progs = objects.programs
        if any(getattr(progs.get(pl.pipes[i].program), "writes_viewport", False) for i in range(pl.npipes)):
            # shader-tex: a geometry stage writing ViewportIndex draws with the device's viewports,
            # which nxreplay.c does not set (it sets viewport 0): the Python path replays it
            self.fallback += 1
            return None
        plan = Plan(seq, packets, ranges, uploads)
        plan.dirty = [(r.pool, r.offset, r.size) for r in ffi.unpack(pl.dirty, pl.ndirty)]
        for f, at in presents:  # PRESENT_IMAGE: its range snapshotted, its frame made after the run
            if f == IMAGE_FRAME:
                c = self._packet_at(blob, at)
                plan.image_cmds.append(c)
                if present_image.key(c) not in plan.images:
                    plan.images.append(present_image.key(c))
        self.native += 1
        return NativeSubmission(blob, pl, keep, plan, packets, presents, frame_tids)

    def _layout(self, sub: NativeSubmission, index: int) -> tuple:
        """The VERTEX_LAYOUT packet ``index`` of ``sub`` as a checked tuple (nx_plan left its byte
        offset in the blob in ``aux``)."""
        if sub.packets is not None:
            return P.check(sub.packets[index])
        return self._packet(sub, sub.cplan.aux[index])

    def _packet(self, sub: NativeSubmission, at: int) -> tuple:
        """The packet at byte ``at`` of ``sub``'s blob, decoded (the tuple packets.check gives;
        shared through ``decoded``: callers read it, never change it)."""
        return self._packet_at(sub.blob, at)

    def _packet_at(self, blob: Any, at: int) -> tuple:
        size = blob[at + 2] | blob[at + 3] << 8
        raw = bytes(blob[at : at + size])
        got = self.decoded.get(raw)
        if got is None:
            if len(self.decoded) >= DECODED_MAX:
                self.decoded.clear()
            got = self.decoded[raw] = nxpkt.decode(binpackets.blob([raw]))[0]
        return got

    def _blend(self, sub: NativeSubmission, at: int) -> tuple:
        """A colour target's BLEND_STATE from the BLEND or BLEND_STATE packet at byte ``at`` of the
        blob (EMPTY: none sent, blending off), with its target field 0 as replay_commands.blend_for gives it."""
        if at == P.EMPTY:
            return P.BLEND_OFF
        pkt = self._packet(sub, at)
        if pkt[0] == P.OP_BLEND:
            return P.BLEND_OVER if pkt[1] else P.BLEND_OFF
        return pkt if pkt[1] == 0 else (pkt[0], 0, *pkt[2:])

    def record(self, sub: NativeSubmission, cb: Any, arena: Any, where: dict, rb: Any) -> tuple[Result, list]:
        """Record ``sub`` into ``cb`` (begun, uploads done); returns (Result, reads) as
        ``Replayer._record`` does."""
        rp, objs, ffi, pl = self.replayer, self.replayer.objects, self.ffi, sub.cplan
        _, _, _, (cs, ns, cp, nprog) = self.tables(objs)
        res = Result(sub.plan.seq)
        # pipelines for the planned keys: all asked for first (made in parallel on the workers,
        # pipelines.py), then each waited for, or with the skip policy 0 where not made yet (the C
        # recorder skips those draws and counts them)
        pipes = ffi.new("uint64_t[]", max(1, pl.npipes))
        args = []
        for i in range(pl.npipes):
            k = pl.pipes[i]
            if k.rt != P.EMPTY:  # RENDER_TARGETS: its colour targets, in attachment order
                ids = [t for t in self._packet(sub, k.rt)[1] if t != P.EMPTY]
            else:
                ids = [] if k.target == P.EMPTY else [k.target]
            cimgs = [rp.image_for(objs.textures[t]) for t in ids]
            dimg = None if k.depth == P.EMPTY else rp.image_for(objs.textures[k.depth])
            stencil = dimg is not None and bool(dimg.aspect & vk.VK_IMAGE_ASPECT_STENCIL_BIT)
            samples = (cimgs[0] if cimgs else dimg).samples
            # as replay.py's _record keys them: the colour formats and each one's blend state, the
            # depth (and stencil) format, polygon mode, the targets' sample count
            args.append(
                (
                    objs.programs[k.program],
                    self._layout(sub, k.layout),
                    tuple(c.vk_format for c in cimgs),
                    tuple(self._blend(sub, k.blend[j]) for j in range(len(ids))),
                    dimg.vk_format if dimg else 0,
                    dimg.vk_format if stencil else 0,
                    k.mode,
                    samples,
                    bool(k.a2c) and samples > 1,
                )
            )  # alpha-to-coverage only where multisampled
            rp.pipes.request(*args[-1])
        for i, a in enumerate(args):
            p = rp.pipes.ready(*a) if rp.skip_not_ready else rp.pipes.get(*a)
            pipes[i] = h(p) if p is not None else 0
        rt_ids = sorted(set(ffi.unpack(pl.targets, pl.ntargets)) | set(sub.frame_ids))
        rts = ffi.new("nx_rt[]", max(1, len(rt_ids)))
        for i, tid in enumerate(rt_ids):
            t = objs.textures[tid]
            img = rp.image_for(t)
            rts[i].id, rts[i].width, rts[i].height = tid, t.width, t.height
            rts[i].flags = (1 if t.fmt.depth and img.aspect & vk.VK_IMAGE_ASPECT_STENCIL_BIT else 0) | (2 if t.fmt.depth else 0)
            rts[i].image, rts[i].view, rts[i].sample_view = h(img.handle), h(img.view), h(img.sample_view)
        tex_ids = sorted(ffi.unpack(pl.textures, pl.ntextures))
        views = ffi.new("nx_view[]", max(1, len(tex_ids)))
        for i, tid in enumerate(tex_ids):
            views[i].id, views[i].view = tid, h(rp.image_for(objs.textures[tid]).sample_view)
        range_at = ffi.new("uint64_t[]", [where[r] for r in sub.plan.ranges] or [0])
        present_at, stencil_at, reads, off = [], [], [], 0
        for frame, tid in sub.presents:
            if frame == EVENT_FRAME or frame == IMAGE_FRAME:
                present_at.append(0)
                stencil_at.append(0)
                if frame == EVENT_FRAME:  # applied after the run, in order (replay.run's step 4)
                    reads.append((None, self._packet(sub, tid), -1))
                continue
            t = objs.textures[tid]
            present_at.append(off)
            aspects = rp._aspect_copies(t)  # a depth target: depth, then stencil in its own region
            stencil_at.append(aspects[1][1] if len(aspects) > 1 else 0)
            reads.append((frame, t, off))
            off += rp._readback_size(t)
        pat = ffi.new("uint64_t[]", present_at or [0])
        sat = ffi.new("uint64_t[]", stencil_at or [0])
        # set 1 of each planned POOLS packet (one set per distinct content, as replay._record makes
        # them), then the empty pools' for draws before any POOLS; the previous submission is done.
        # Only where a planned draw's program reads the pools (nxreplay.c binds set 1 for those
        # alone): a frame without one writes no set (writing the empty set's 20 descriptors
        # through the binding cost ~1-2 ms of Python a submission).
        rp.pool_sets.reset()
        made: dict[tuple, int] = {}
        sets = []
        ats = [*ffi.unpack(pl.poolsets, pl.npoolsets), None]
        if any(getattr(objs.programs.get(pl.pipes[i].program), "pools", True) for i in range(pl.npipes)):
            for at in ats:
                key = EMPTY_POOLS if at is None else self._packet(sub, at)[1:]
                if key not in made:
                    made[key] = h(rp._pool_set(key))
                sets.append(made[key])
        else:
            sets = [0] * len(ats)  # never read: no draw's program has pools
        pool_sets = ffi.new("uint64_t[]", sets)
        r = ffi.new("nx_rec_t *")
        r.cb = ffi.cast("void *", h(cb))
        r.layout = h(rp.pipes.layout)
        r.arena = h(arena.handle)
        keep_map = vk.ffi.from_buffer(arena.mapped)
        r.arena_map = ffi.cast("const uint8_t *", int(vk.ffi.cast("uintptr_t", keep_map)))
        r.range_at, r.ranges, r.pipes, r.aux = range_at, pl.ranges, pipes, pl.aux
        r.rts, r.nrts, r.views, r.nviews = rts, len(rt_ids), views, len(tex_ids)
        r.samplers, r.nsamplers, r.progs, r.nprogs = cs, ns, cp, nprog
        r.dummy_ubo, r.dummy_ubo_range = h(rp.dummy_ubo.handle), ALIGN
        r.readback, r.present_at, r.stencil_at = (h(rb.handle) if rb is not None else 0), pat, sat
        r.pool_sets, r.npool_sets = pool_sets, len(sets)
        err = ffi.new("nx_error *")
        rc = self.lib.nx_record(ffi.from_buffer(sub.blob), len(sub.blob), r, err)
        if rc:
            e = nxpkt.NativePacketError(err.index, err.op, ffi.string(err.field).decode(), ffi.string(err.message).decode())
            raise SubmissionError(f"submission {sub.plan.seq}: {e}")
        res.draws, res.skipped = r.draws, r.skipped
        res.fences = [(int(pl.signals[2 * i]), int(pl.signals[2 * i + 1])) for i in range(pl.nsignals)]
        return res, reads


def _pool_ids(mem: Any) -> list[int]:
    """The registered pool ids of a Memory (MappedPools.maps, a Snapshot's or recording's sizes)."""
    for attr in ("maps", "sizes"):
        d = getattr(mem, attr, None)
        if isinstance(d, dict):
            return list(d)
    return []
