"""mbarriers on SM86 (issue 31; shader-ctl): ``ATOMS.ARRIVE.64`` (PTX ``mbarrier.arrive``) and
``ARRIVES.LDGSTSBAR.64`` (PTX ``cp.async.mbarrier.arrive``), what nvcc 13 emits for
``cuda::barrier`` / ``cuda::memcpy_async`` and the mbarrier PTX instructions on sm_86.

The PTX ISA ("Parallel Synchronization and Communication Instructions: mbarrier") defines an
mbarrier as an opaque 64-bit shared-memory object with a current phase, an expected arrival
count and a pending count: an arrive decrements the pending count; the arrive that brings it to
0 completes the phase, which flips the phase and reloads the pending count with the expected
count; ``test_wait`` / ``try_wait`` test whether the phase of a state returned by an arrive has
completed.  The word layout is not documented, but ptxas writes it out in the code it emits
around these two instructions (nvdisasm 13.5 of nvcc 13's code, ``tests/shader_svc/
cuda_corpus_ctl.py`` ``define_mbarrier``): ``mbarrier.init [m], n`` is ``STS.64 [m], {2^30 - n,
2^31 - n}``; the default ``cp.async.mbarrier.arrive`` first adds -k to the high word (a leader
lane's ``ATOMS.ADD [m+4]`` for the k threads of its warp: the pending count up by k);
``arrive_drop`` adds 1 to the low word (``ATOMS.POPC.INC [m]``: the expected count down by one);
``test_wait`` compares bit 31 of the high word with bit 31 of the state's high word;
``test_wait.parity`` tests bit 31 against the parity; ``pending_count`` of a state is
``2^31 - (its high word & 0x7fffffff)``.  So the high word holds the phase's parity in bit 31
and ``2^31 - pending`` below it, the low word ``2^30 - expected``.

An arrival is then: add 1 to the high word (the pending count down by one); the arrival whose
sum has 0 in bits 0..30 completes the phase (the carry has flipped bit 31) and reloads the
pending count, adding ``(low + 2^30) & 0x7fffffff`` (= ``2^31 - expected``) to the high word —
an addition, so arrivals of the next phase that come first are kept.  ``ATOMS.ARRIVE.64 d, [m]``
returns the state: d = the low word, d+1 = the high word before the arrival.  ``ARRIVES`` is the
same arrival without a result, made at once: LDGSTS copies synchronously here
(``sm86/lower_async.py``), so the copies it waits for are done.  It first waits at a workgroup
barrier: ptxas raises the pending count once per warp (the leader lane found with VOTE adds -k
for its k threads), which the machine orders before the warp's own ARRIVES by running the warp
in lockstep; the emulated warp's lanes run in the device's smaller subgroups, so without the
barrier one warp's arrivals could reach 0 before another warp's leader raised the count (a
phase completed early: seen on lavapipe).  Every invocation must therefore reach an ARRIVES, as
the emulated VOTE before it already requires (a guarded ARRIVES is refused, but for nvcc -G's
``@!P0`` of an R2UR's predicate output, which holds in every invocation: ``lower/waterfall.py``).  Each step is a 32-bit shared
atomic, the high word's with acquire-release ordering (``AtomicSharedAddAcqRel32``: PTX's
arrive is a release, so a thread's shared writes before it are seen by whoever observes the
phase complete; relaxed atomics let the compiler sink those writes past the arrival: a stale word
seen on lavapipe); the program's own words are 32-bit shared words (STS.64 / LDS).
"""

from __future__ import annotations

from shader_svc.ir import to_spirv as ir_spirv
from shader_svc.ir.block import Block, Value
from shader_svc.isa.inst import Inst
from shader_svc.lower.base import LowerBase, TranslateError
from shader_svc.lower.waterfall import served_guard

MBARRIER_RULES = {"ATOMS.ARRIVE": "op_mbarrier_arrive", "ARRIVES": "op_mbarrier_arrive"}


class MBarrier(LowerBase):
    """Mixin of the SM86 compute lowering: the two arrivals (module docstring)."""

    def _mbarrier_addr(self, b: Block, inst: Inst) -> Value:
        a = inst.ops["addr"]
        base = b.get_reg(a["reg"]) if a["reg"] != 255 else b.const_u32(0)
        if a.get("ur", 63) != 63:
            base = b.op("IAdd32", base, b.get_reg(a["ur"], "UR"))
        return b.op("IAdd32", base, b.const_u32(a["off"]))

    def op_mbarrier_arrive(self, inst: Inst) -> None:
        if inst.mods.get("size", 5) != 5 or inst.mods.get("width", 2) != 2:
            raise TranslateError(f"{inst.text()}: an mbarrier arrival other than .64 not translated", offset=inst.addr)
        b = Block()
        if inst.row.ir == "ARRIVES":
            if (inst.pred != 7 or inst.pred_not) and not served_guard(self.insts, self.insts.index(inst)):
                raise TranslateError(
                    f"{inst.text()}: guarded ARRIVES not translated (its workgroup barrier needs every invocation)",
                    offset=inst.addr,
                )
            b.emit("Barrier")
        m = self._mbarrier_addr(b, inst)
        hi_ptr = b.op("SharedPtr", b.op("IAdd32", m, b.const_u32(4)))
        old_hi = b.emit("AtomicSharedAddAcqRel32", hi_ptr, b.const_u32(1))
        done = b.op("IEq32", b.op("IAnd32", b.op("IAdd32", old_hi, b.const_u32(1)), b.const_u32(0x7FFFFFFF)), b.const_u32(0))
        lo = b.emit("AtomicShared32", b.op("SharedPtr", m), b.const_u32(0), op="IAdd")  # an atomic read
        reload = b.op("IAnd32", b.op("IAdd32", lo, b.const_u32(0x40000000)), b.const_u32(0x7FFFFFFF))
        b.emit("AtomicSharedAddAcqRel32", hi_ptr, b.op("Select32", done, reload, b.const_u32(0)))
        d = inst.ops.get("d", {}).get("reg", 255)
        if d != 255:
            b.set_reg(d, lo)
            b.set_reg(d + 1, old_hi)
        ir_spirv.emit(self, b)

    def atomic_add_acq_rel(self, ptr, v: int) -> int:
        """``AtomicSharedAddAcqRel32``: OpAtomicIAdd, workgroup scope, AcquireRelease |
        WorkgroupMemory; on a program whose shared memory is 64-bit words (``Half``: it also has
        64-bit shared atomics, as libcu++'s cuda::barrier at -G) the compare-exchange loop on
        the whole word with the same scope and semantics (shader-assert)."""
        E = self.m.E
        sem = E("MemorySemantics", "AcquireRelease") | E("MemorySemantics", "WorkgroupMemory")
        if not isinstance(ptr, int):
            read = self.c(E("MemorySemantics", "Acquire") | E("MemorySemantics", "WorkgroupMemory"))
            add = lambda old: self.op("OpIAdd", self.u32, old, v)  # noqa: E731
            return self._atomic_loop(ptr, self.c(E("Scope", "Workgroup")), self.c(sem), add, read)
        return self.op("OpAtomicIAdd", self.u32, ptr, self.c(E("Scope", "Workgroup")), self.c(sem), v)
