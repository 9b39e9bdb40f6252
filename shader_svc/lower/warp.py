"""The barriers and NVIDIA's 32-lane warp, both ISAs: the IR both ISA parts build for SHFL and
VOTE (``shfl_ir``, ``vote_ir``), and the SPIR-V of the barrier and warp rows (``Warp``, called
from ``ir/to_spirv.py``): the warp is emulated through a workgroup exchange array between
barriers, so results do not depend on the device's subgroup size.  The semantics of each IR
operation are written in ``ir/ops.py``; PTX ISA (shfl.sync, vote.sync, redux.sync) is the source
of the shuffle's clamp/segment rule and the votes."""

from __future__ import annotations

from typing import Any

from shader_svc.ir import to_spirv as ir_spirv
from shader_svc.ir.block import Block, Value
from shader_svc.isa.inst import Inst
from shader_svc.lower.fence import device_fence
from shader_svc.lower.base import GLSL, LowerBase


def shfl_ir(b: Block, inst: Inst, pred: str) -> None:
    """SHFL d, pred, a, b, c (``pred``: the ISA's name of the predicate result): b and c are
    registers or immediates."""
    ops = inst.ops
    lane, clamp = (b.const_u32(ops[k]["imm"]) if "imm" in ops[k] else b.get_reg(ops[k]["reg"]) for k in ("b", "c"))
    v = b.emit("ShflWarp", b.get_reg(ops["a"]["reg"]), lane, clamp, mode=inst.mods["mode"])
    b.set_reg(ops["d"]["reg"], v)
    b.set_pred(ops[pred]["pred"], b.op("ShflInRange", v))


def vote_ir(b: Block, inst: Inst, p: Value, pred: str) -> None:
    """VOTE d, pred, p: the ballot of ``p`` into d, the vote of the mode into ``pred``."""
    ballot = b.op("WarpBallot", p)
    r = b.emit("WarpVote", ballot, mode=inst.mods["mode"])
    b.set_reg(inst.ops["d"]["reg"], ballot)
    if inst.ops[pred]["pred"] != 7:  # PT: the write is discarded (both ISAs the same IR)
        b.set_pred(inst.ops[pred]["pred"], r)


# SHFL's mode -> (the source lane j from this lane and b, the test of j against the segment's
# bound: UP may not go below its first lane, the others not past its last); PTX shfl.sync
SHFL_MODES = {
    0: ("OpBitwiseOr", "OpSLessThanEqual"),  # IDX
    1: ("OpISub", "OpSGreaterThanEqual"),  # UP
    2: ("OpIAdd", "OpSLessThanEqual"),  # DOWN
    3: ("OpBitwiseXor", "OpSLessThanEqual"),  # BFLY
}


class Warp(LowerBase):
    """Mixin: the SPIR-V of the barriers and the emulated warp (module docstring)."""

    # --- barriers -----------------------------------------------------------------------------
    def _barrier(self) -> None:
        """BAR.SYNC / __syncthreads: PTX's bar.sync orders every memory access of the CTA's threads
        before it against those after it (PTX ISA, "bar, barrier": membar.cta semantics), so the
        barrier's memory semantics cover shared (WorkgroupMemory), global through buffer
        addresses (UniformMemory: StorageBuffer / PhysicalStorageBuffer) and surfaces
        (ImageMemory) at workgroup scope (shader-tex; SPIR-V "Memory Semantics")."""
        E = self.m.E
        wg = self.c(E("Scope", "Workgroup"))
        sem = E("MemorySemantics", "AcquireRelease") | E("MemorySemantics", "WorkgroupMemory")
        sem |= E("MemorySemantics", "UniformMemory") | E("MemorySemantics", "ImageMemory")
        self.do("OpControlBarrier", wg, wg, self.c(sem))

    def _fence(self) -> None:
        """MEMBAR: emits nothing.  Each invocation's own accesses stay in program order, which is
        all a single thread observes; ordering towards other invocations (__threadfence) is NOT
        kept (a known gap).  The faithful OpMemoryBarrier (Device, AcquireRelease) stalls
        lavapipe 22.3: once some invocations of a workgroup have exited, the others stop at any
        memory barrier and write nothing (seen on -G code, which fences before every EXIT;
        with or without WorkgroupMemory, and as an atomic with those semantics).  Where the
        device has the feature memory_barrier: OpMemoryBarrier (lower/fence.py, shader-ctl)."""
        device_fence(self)

    # --- the emulated 32-lane warp --------------------------------------------------------------
    # NVIDIA's warp is 32 invocations; Vulkan subgroups may be smaller (lavapipe: 8), so a warp
    # is emulated: invocation i of the workgroup is lane i % 32 of warp i / 32, and a warp-wide
    # operation exchanges values through a workgroup array between two workgroup barriers.  No
    # subgroup operation is used, so the result does not depend on the device's subgroup size;
    # the barriers need every invocation to reach the operation (as ptxas code does outside
    # divergent regions; predicated warp operations are refused).
    def _lid(self) -> int:
        x, y, _ = self.spec.local_size
        v = self.op("OpLoad", self.v3, self.builtins["LocalInvocationId"])
        ids = [self.op("OpCompositeExtract", self.u32, v, i) for i in range(3)]
        r = self.op("OpIAdd", self.u32, ids[0], self.op("OpIMul", self.u32, ids[1], self.c(x)))
        return self.op("OpIAdd", self.u32, r, self.op("OpIMul", self.u32, ids[2], self.c(x * y)))

    def _xchg_ptr(self, idx: int) -> int:
        if "xchg" not in self.vars_global:
            m, E = self.m, self.m.E
            wg = E("StorageClass", "Workgroup")
            n = self.spec.local_size[0] * self.spec.local_size[1] * self.spec.local_size[2]
            arr = m.type("OpTypeArray", self.u32, self.c(n))
            v = m.id()
            m.emit("types", "OpVariable", m.type("OpTypePointer", wg, arr), v, wg)
            self.vars_global["xchg"] = (v, m.type("OpTypePointer", wg, self.u32))
            self.interface.append(v)
        v, ptr = self.vars_global["xchg"]
        return self.op("OpAccessChain", ptr, v, idx)

    # --- which lanes are still running (shader-assert) ----------------------------------------
    # A lane that has ended (EXIT, or a trap) is not a member of its warp any more: PTX's
    # activemask / vote.ballot count the active threads, and ptxas's warp-aggregated atomics
    # elect the highest lane of VOTE.ANY's mask (FLO) to add the warp's POPC.  Its slot of the
    # exchange array holds whatever it (or an earlier workgroup) wrote last, so the emulated warp
    # keeps one mask word per warp in workgroup memory: each invocation sets its lane's bit as it
    # starts and clears it as it ends (atomic OR / AND, ``warp_live``, from the control-flow
    # lowering's entry and every return), and ``_publish`` reads the word between its barriers.
    # Only the lane's own bit is ever written, so a stale bit of an earlier workgroup is set
    # again by its lane's entry before any barrier; bits of lanes past the workgroup's end are
    # masked by the workgroup bound.  Programs without warp rows (and graphics stages, which
    # have no workgroup) keep no mask.
    WARP_IRS = frozenset({"VOTE", "SHFL", "REDUX", "MATCH"})

    def _tracks_lanes(self) -> bool:
        got = self.__dict__.get("_lanes_tracked")
        if got is None:
            compute = getattr(getattr(self, "spec", None), "local_size", None) is not None
            got = compute and any(i.row.ir in self.WARP_IRS for i in getattr(self, "insts", ()))
            self.__dict__["_lanes_tracked"] = got
        return got

    def warp_live(self, alive: bool) -> None:
        """Mark this invocation running (at its start) or ended (before each return): the IR
        row ``WarpLive``, written as SPIR-V by ``warp_live_spv``."""
        if self._tracks_lanes():
            b = Block()
            b.emit("WarpLive", alive=int(alive))
            ir_spirv.emit(self, b)

    def _live_word(self, lid: int) -> int:
        """A pointer to the running-lanes word of invocation ``lid``'s warp."""
        if "live" not in self.vars_global:
            m, E = self.m, self.m.E
            wg = E("StorageClass", "Workgroup")
            n = self.spec.local_size[0] * self.spec.local_size[1] * self.spec.local_size[2]
            arr = m.type("OpTypeArray", self.u32, self.c((n + 31) // 32))
            v = m.id()
            m.emit("types", "OpVariable", m.type("OpTypePointer", wg, arr), v, wg)
            self.vars_global["live"] = (v, m.type("OpTypePointer", wg, self.u32))
            self.interface.append(v)
        v, ptr = self.vars_global["live"]
        return self.op("OpAccessChain", ptr, v, self.op("OpShiftRightLogical", self.u32, lid, self.c(5)))

    def warp_live_spv(self, alive: int) -> None:
        E = self.m.E
        lid = self._lid()
        bit = self.op("OpShiftLeftLogical", self.u32, self.c(1), self.op("OpBitwiseAnd", self.u32, lid, self.c(31)))
        scope, sem = self.c(E("Scope", "Workgroup")), self.c(0)
        if alive:
            self.op("OpAtomicOr", self.u32, self._live_word(lid), scope, sem, bit)
        else:
            self.op("OpAtomicAnd", self.u32, self._live_word(lid), scope, sem, self.op("OpNot", self.u32, bit))

    def _lane_in(self, at: int, n: int, j: int | None) -> int:
        """Whether lane ``j`` of this warp (slot ``at``, a linear invocation index; ``j`` None:
        a run-time lane, ``at``'s low five bits) is a lane of the workgroup still running at the
        last ``_publish`` (its live mask, where kept)."""
        inside = self.op("OpULessThan", self.bool, at, self.c(n))
        mask = self.__dict__.get("_live_mask")
        if mask is None:
            return inside
        if j is None:
            bit = self.op("OpShiftRightLogical", self.u32, mask, self.op("OpBitwiseAnd", self.u32, at, self.c(31)))
            bit = self.op("OpBitwiseAnd", self.u32, bit, self.c(1))
        else:
            bit = self.op("OpBitwiseAnd", self.u32, mask, self.c(1 << j))
        return self.op("OpLogicalAnd", self.bool, inside, self.op("OpINotEqual", self.bool, bit, self.c(0)))

    def _warp_aux(self) -> dict[int, Any]:
        """The second results of warp operations (SHFL's in-range predicate, a ballot's member
        mask), by the SPIR-V id of the first, for ``ShflInRange`` / ``WarpVote``."""
        return self.__dict__.setdefault("_warp_second", {})

    def warp_second(self, first: int, what: str) -> Any:
        got = self._warp_aux().get(first)
        if got is None or got[0] != what:
            raise TypeError(f"IR: {what} of a value that is not its operation's result")
        return got[1]

    def warp_ballot(self, p: int) -> int:
        """``WarpBallot``: every lane publishes its predicate ``p``, then reads its warp's 32
        slots (lanes past the workgroup's end count as absent)."""
        n = self.spec.local_size[0] * self.spec.local_size[1] * self.spec.local_size[2]
        lid, _lane, base = self._publish(self.op("OpSelect", self.u32, p, self.c(1), self.c(0)))
        ballot, members = self.c(0), self.c(0)
        for j in range(32):
            at = self.op("OpIAdd", self.u32, base, self.c(j))
            inside = self._lane_in(at, n, j)
            v = self.op("OpLoad", self.u32, self._xchg_ptr(self.op("OpSelect", self.u32, inside, at, lid)))
            v = self.op("OpSelect", self.u32, inside, v, self.c(0))
            ballot = self.op("OpBitwiseOr", self.u32, ballot, self.op("OpShiftLeftLogical", self.u32, v, self.c(j)))
            members = self.op("OpBitwiseOr", self.u32, members, self.op("OpSelect", self.u32, inside, self.c(1 << j), self.c(0)))
        self._warp_aux()[ballot] = ("WarpVote", members)
        return ballot

    def warp_reduce(self, v: int, op: int, signed: bool) -> int:
        """``WarpReduce`` (REDUX): every lane publishes ``v``, then combines its warp's 32 slots
        (lanes past the workgroup's end are absent) with ``op`` 0 AND, 1 OR, 2 XOR, 3 SUM
        (modulo 2^32), 4 MIN, 5 MAX (``signed`` or unsigned)."""
        u32 = self.u32
        n = self.spec.local_size[0] * self.spec.local_size[1] * self.spec.local_size[2]
        lid, _lane, base = self._publish(v)
        ident = (0xFFFFFFFF, 0, 0, 0, 0x7FFFFFFF if signed else 0xFFFFFFFF, 0x80000000 if signed else 0)[op]
        glsl = ("SMin" if signed else "UMin", "SMax" if signed else "UMax")
        acc = self.c(ident)
        for j in range(32):
            at = self.op("OpIAdd", u32, base, self.c(j))
            inside = self._lane_in(at, n, j)
            x = self.op("OpLoad", u32, self._xchg_ptr(self.op("OpSelect", u32, inside, at, lid)))
            x = self.op("OpSelect", u32, inside, x, self.c(ident))
            if op < 4:
                acc = self.op(("OpBitwiseAnd", "OpBitwiseOr", "OpBitwiseXor", "OpIAdd")[op], u32, acc, x)
            else:
                acc = self.op("OpExtInst", u32, self.glsl, GLSL[glsl[op - 4]], acc, x)
        return acc

    def warp_vote(self, ballot: int, mode: int) -> int:
        """``WarpVote``: 0 ALL, 1 ANY, 2 EQ (all or none) of the lanes present."""
        members = self.warp_second(ballot, "WarpVote")
        anyv = self.op("OpINotEqual", self.bool, ballot, self.c(0))
        allv = self.op("OpIEqual", self.bool, ballot, members)
        eq = self.op("OpLogicalOr", self.bool, allv, self.op("OpLogicalNot", self.bool, anyv))  # all three always (ids kept)
        return (allv, anyv, eq)[mode]

    def shfl_warp(self, mode: int, a: int, b: int, cv: int) -> int:
        """SHFL on the emulated warp, as the PTX ISA defines shfl.sync (both ISAs encode it the
        same way): ``a`` the value this lane offers, ``b`` the lane/offset, ``cv`` the clamp
        (bits 0..4) and segment mask (bits 8..12), any of them run-time values (-G code passes
        them through its shuffle helpers).  The source lane j is computed per mode (0 IDX, 1 UP,
        2 DOWN, 3 BFLY); where it falls outside the segment (or, here, the workgroup) the lane
        keeps its own value and the predicate (``ShflInRange``) is false."""
        u32, b_, c = self.u32, self.bool, self.c
        n = self.spec.local_size[0] * self.spec.local_size[1] * self.spec.local_size[2]
        b = self.op("OpBitwiseAnd", u32, b, c(31))
        clamp = self.op("OpBitwiseAnd", u32, cv, c(31))
        seg = self.op("OpBitwiseAnd", u32, self.op("OpShiftRightLogical", u32, cv, c(8)), c(31))
        lid, lane, base = self._publish(a)
        nseg = self.op("OpNot", u32, seg)
        min_lane = self.op("OpBitwiseAnd", u32, lane, seg)
        max_lane = self.op("OpBitwiseOr", u32, min_lane, self.op("OpBitwiseAnd", u32, clamp, nseg))
        source, bound = SHFL_MODES[mode]
        if mode == 0:  # IDX: lane b within this lane's segment
            j = self.op(source, u32, min_lane, self.op("OpBitwiseAnd", u32, b, nseg))
        else:
            j = self.op(source, u32, lane, b)
        ok = self.op(bound, b_, j, max_lane)
        at = self.op("OpIAdd", u32, base, self.op("OpBitwiseAnd", u32, j, c(31)))
        take = self.op("OpLogicalAnd", b_, ok, self._lane_in(at, n, None))
        at = self.op("OpSelect", u32, take, at, lid)
        val = self.op("OpLoad", u32, self._xchg_ptr(at))
        self._warp_aux()[val] = ("ShflInRange", take)
        return val

    def _publish(self, value: int) -> tuple[int, int, int]:
        """Write this invocation's value for its warp: (linear id, lane, warp base).  Where the
        running lanes are kept, their mask is read between the two barriers (``_lane_in``): a
        lane that ended before the operation cleared its bit before the first barrier; one that
        ends after it cannot do so before every lane has reached the second."""
        lid = self._lid()
        lane = self.op("OpBitwiseAnd", self.u32, lid, self.c(31))
        base = self.op("OpISub", self.u32, lid, lane)
        self._barrier()  # earlier readers of the array are done
        self.do("OpStore", self._xchg_ptr(lid), value)
        self.__dict__["_live_mask"] = None
        if self._tracks_lanes():
            self.__dict__["_live_mask"] = self.op("OpLoad", self.u32, self._live_word(lid))
        self._barrier()
        return lid, lane, base

    # --- barrier reductions (shader-ctl) -----------------------------------------------------
    def _bar_red_ptr(self) -> int:
        """The workgroup counter of ``BarrierReduce`` (one u32, declared on first use)."""
        if "bar_red" not in self.vars_global:
            m, E = self.m, self.m.E
            wg = E("StorageClass", "Workgroup")
            v = m.id()
            ptr = m.type("OpTypePointer", wg, self.u32)
            m.emit("types", "OpVariable", ptr, v, wg)
            self.vars_global["bar_red"] = (v, ptr)
            self.interface.append(v)
        return self.vars_global["bar_red"][0]

    def barrier_reduce(self, p: int, op: int) -> int:
        """``BarrierReduce`` (PTX bar.red over the whole CTA): three workgroup barriers around a
        workgroup counter.  Barrier 1 (also the barrier's own ordering, as BAR.SYNC's) ends the
        previous reduction's reads; every invocation then stores 0 (the same value, atomically);
        barrier 2; each invocation counts itself atomically (POPC and OR where ``p`` holds, AND
        where it does not); barrier 3; every invocation reads the total.  The next reduction's
        barrier 1 orders these reads before its zeroing, so the counter needs no other state."""
        E, u32 = self.m.E, self.u32
        ctr = self._bar_red_ptr()
        wg = self.c(E("Scope", "Workgroup"))
        sem = self.c(E("MemorySemantics", "Relaxed"))
        self._barrier()
        self.do("OpAtomicStore", ctr, wg, sem, self.c(0))
        self._barrier()
        count = p if op != 1 else self.op("OpLogicalNot", self.bool, p)
        self.op("OpAtomicIAdd", u32, ctr, wg, sem, self.op("OpSelect", u32, count, self.c(1), self.c(0)))
        self._barrier()
        total = self.op("OpAtomicLoad", u32, ctr, wg, sem)
        if op == 0:
            return total
        hit = self.op("OpIEqual" if op == 1 else "OpINotEqual", self.bool, total, self.c(0))
        return self.op("OpSelect", u32, hit, self.c(1), self.c(0))
