"""SM86 compute memory and warp instructions beyond LDG/STG of 32 bits: indexed constant loads
(LDC), shared memory (LDS/STS with .X4/.X8/.X16 index scaling), global loads/stores of 64 and
128 bits, generic LD/ST/ATOM (shared memory through the window at c[0x0][0x18], see
``sm86/cbank.py``), local memory, atomics (ATOMG/RED, 32-bit), BAR, MEMBAR, SHFL/VOTE on the
emulated 32-lane warp, the lane id.  This part reads SM86's fields and builds IR with the
shared builders of ``lower/memory.py``; what each operation means is written there and in
``ir/ops.py``."""

from __future__ import annotations

from shader_svc.ir import to_spirv as ir_spirv
from shader_svc.ir.block import Block, Value, global_words_ir
from shader_svc.lower.base import TranslateError
from shader_svc.lower.warp import shfl_ir
from shader_svc.lower.memory import (
    FLOAT_ATOMIC_OPS,
    SIZES,
    SUB_WORD,
    atomic64_op,
    atomic_op,
    base64_ir,
    base_ir,
    generic_sized_ir,
    ldc_ir,
    local_ir,
    pair_ir,
    put_pair_ir,
    shared_ir,
    sub_word_ir,
    words,
)
from shader_svc.sm86.decode import Inst
from shader_svc.sm86.lower import Lower86


class Memory86(Lower86):
    """Mixin of ``to_spirv.Compute86``: the memory and warp handlers."""

    # --- memory -------------------------------------------------------------------------------
    @staticmethod
    def _smem_addr_ir(b: Block, inst: Inst) -> Value:
        """A shared address: the register times the .X4/.X8/.X16 scale, plus the offset."""
        a = inst.ops["addr"]
        base = b.get_reg(a["reg"]) if a["reg"] != 255 else b.const_u32(0)
        if a["scale"]:
            base = b.op("IMul32", base, b.const_u32((1, 4, 8, 16)[a["scale"]]))
        return b.op("IAdd32", base, b.const_u32(a["off"]))

    def _lds_sts(self, inst: Inst) -> None:
        load = inst.row.ir == "LDS"
        reg = inst.ops["d" if load else "b"]["reg"]
        b = Block()
        addr = self._smem_addr_ir(b, inst)
        if not sub_word_ir(b, "shared", addr, inst.mods["size"], reg, load):
            shared_ir(b, addr, words(inst, "shared"), reg, load)
        ir_spirv.emit(self, b)

    def _local86(self, inst: Inst) -> None:
        """LDL/STL: R1, the stack pointer, starts at c[0x0][0x28]; local memory is
        ``LocalPtr``'s 4 KiB per invocation."""
        a, load = inst.ops["addr"], inst.row.ir == "LDL"
        reg = inst.ops["d" if load else "b"]["reg"]
        b = Block()
        addr = base_ir(b, a["reg"], a["off"])
        if not sub_word_ir(b, "local", addr, inst.mods["size"], reg, load):
            local_ir(b, addr, words(inst, "local"), reg, load)
        ir_spirv.emit(self, b)

    def _atomic_operand(self, b: Block, inst: Inst) -> tuple[str, str, Value]:
        """An atomic's (IR op, operand type suffix, operand b)."""
        mods = inst.mods
        if mods.get("type", 0) == 3:
            name = FLOAT_ATOMIC_OPS.get(mods["op"])
            if name is None:
                raise TranslateError(f"{inst.text()}: atomic operation not translated yet", offset=inst.addr)
            return name, "F32", b.op("BitcastF32", self.src_ir(b, inst, "b"))
        name = atomic_op(mods["op"], mods.get("type") == 1)
        if name is None:
            raise TranslateError(f"{inst.text()}: atomic operation not translated yet", offset=inst.addr)
        return name, "32", self.src_ir(b, inst, "b")

    def _generic(self, inst: Inst) -> None:
        """LD/ST/ATOM on a generic address: the shared window's 64-bit base is c[0x0][0x18], as
        the CUDA driver lays bank 0 out."""
        mods, ops = inst.mods, inst.ops
        atom = inst.row.mnemonic == "ATOM"
        if not atom:
            self.require(inst, cache=1)
            # .STRONG.SM/.GPU/.SYS (volatile): each access is done, in program order; ordering towards
            # other invocations is not kept (MEMBAR's gap, lower/memory.py _fence)
            if mods["order"] not in (0, 4, 5, 7, 10):  # (5 .STRONG.SM: shader-assert)
                raise TranslateError(f"{inst.text()}: memory order not translated", offset=inst.addr)
        wide = atom and mods.get("type", 0) in (2, 5)  # .64, .S64
        if atom and mods.get("type", 0) not in (0, 1, 3) and not wide:
            raise TranslateError(f"{inst.text()}: atomic form not translated yet", offset=inst.addr)
        a = ops["addr"]
        b = Block()
        addr = base64_ir(b, a["reg"], a["off"])
        window = b.op("Pack64", b.cbank_u32(0, 0x18, inst), b.cbank_u32(0, 0x1C, inst))
        if atom:
            if wide and inst.row.ir == "ATOMG.CAS":  # the pairs b (compare) and c (new)
                old = b.emit(
                    "GenericAtomicCas64", addr, window, pair_ir(b, ops["b"]["reg"]), pair_ir(b, ops["c"]["reg"]), inst=inst
                )
            elif wide:
                name = atomic64_op(mods["op"], mods["type"] == 5)
                if name is None:
                    raise TranslateError(f"{inst.text()}: 64-bit atomic operation not translated", offset=inst.addr)
                old = b.emit("GenericAtomic64", addr, window, pair_ir(b, ops["b"]["reg"]), op=name, inst=inst)
            elif inst.row.ir == "ATOMG.CAS":
                old = b.emit("GenericAtomicCas32", addr, window, self.src_ir(b, inst, "b"), self.src_ir(b, inst, "c"), inst=inst)
            else:
                name, ty, v = self._atomic_operand(b, inst)
                old = b.emit("GenericAtomic" + ty, addr, window, v, op=name, inst=inst)
            if wide:
                put_pair_ir(b, ops["d"]["reg"], old)
            else:
                self.put_ir(b, inst, old)
            # P: the operation was done (ptxas's -G code branches to its own shared-memory loop
            # where it is clear); here every space is handled by the operation itself
            b.set_pred(ops["p"]["pred"], b.const_bool(True))
        else:
            load = inst.row.mnemonic == "LD"
            generic_sized_ir(b, inst, addr, window, mods.get("size", 4), load, ops["d" if load else "b"]["reg"])
        ir_spirv.emit(self, b)

    def _wide_global(self, inst: Inst) -> None:
        """LDG/STG of 32, 64 or 128 bits; .CONSTANT (a load through the read-only path) is a
        plain load here."""
        self.require(inst, cache=1)
        if inst.mods["order"] not in (0, 4):
            raise TranslateError(f"{inst.text()}: memory order not translated", offset=inst.addr)
        reg = inst.ops["d"]["reg"] if inst.row.ir == "LDG" else inst.ops["b"]["reg"]
        b = Block()
        global_words_ir(b, self.base64_ir(b, inst), inst.ops["addr"]["off"], SIZES[inst.mods["size"]], reg, inst.row.ir == "LDG")
        ir_spirv.emit(self, b)

    def _atomic86(self, inst: Inst) -> None:
        ir, mods, ops = inst.row.ir, inst.mods, inst.ops
        ftype = mods.get("type", 0)
        if ftype in (2, 5):  # .64, .S64
            self._atomic86_64(inst)
            return
        if ftype not in (0, 1, 3) or (ftype == 3 and mods["op"] not in (0, 1, 2)):
            raise TranslateError(f"{inst.text()}: atomic type not translated yet", offset=inst.addr)
        a = ops["addr"]
        # ATOMG.CAS prints no .64 on its address where ptxas gives it a 64-bit pointer (.E)
        if not a["wide"] and not (ir == "ATOMG.CAS" and mods.get("E")):
            raise TranslateError(f"{inst.text()}: 32-bit global addresses not translated", offset=inst.addr)
        if ops.get("p", {}).get("pred", 7) != 7:
            raise TranslateError(f"{inst.text()}: atomic predicate result not translated", offset=inst.addr)
        b = Block()
        ptr = b.op("GlobalPtr", base64_ir(b, a["reg"], a["off"]))
        if ir == "ATOMG.CAS":
            new = self.src_ir(b, inst, "c")
            self.put_ir(b, inst, b.op("AtomicCasGlobal32", ptr, self.src_ir(b, inst, "b"), new))
        else:
            name, ty, v = self._atomic_operand(b, inst)
            old = b.emit("AtomicGlobal" + ty, ptr, v, op=name)
            if ir != "RED":
                self.put_ir(b, inst, old)
        ir_spirv.emit(self, b)

    def _atomic86_64(self, inst: Inst) -> None:
        """ATOMG/RED/ATOMG.CAS .64 (.S64: signed MIN/MAX) on a 64-bit global address: register pairs b (and c: CAS's
        new value) in, the old u64 to the pair d (``AtomicGlobal64``; INC/DEC have no 64-bit
        form)."""
        ir, mods, ops = inst.row.ir, inst.mods, inst.ops
        a = ops["addr"]
        if not a["wide"] and not (ir == "ATOMG.CAS" and mods.get("E")):
            raise TranslateError(f"{inst.text()}: 32-bit global addresses not translated", offset=inst.addr)
        if ops.get("p", {}).get("pred", 7) != 7:
            raise TranslateError(f"{inst.text()}: atomic predicate result not translated", offset=inst.addr)
        b = Block()
        addr = base64_ir(b, a["reg"], a["off"])
        if ir == "ATOMG.CAS":
            old = b.op("AtomicCasGlobal64", addr, pair_ir(b, ops["b"]["reg"]), pair_ir(b, ops["c"]["reg"]))
        else:
            name = atomic64_op(mods["op"], mods["type"] == 5)
            if name is None:
                raise TranslateError(f"{inst.text()}: 64-bit atomic operation not translated", offset=inst.addr)
            old = b.emit("AtomicGlobal64", addr, pair_ir(b, ops["b"]["reg"]), op=name)
        if ir != "RED":
            put_pair_ir(b, ops["d"]["reg"], old)
        ir_spirv.emit(self, b)

    def op_atoms(self, inst: Inst) -> None:
        """ATOMS (shared memory, 32-bit): the operations of ``ATOMIC_OPS`` (.S32: signed MIN/MAX),
        CAS (old value) and CAST (compare and store, .SPIN or not: 1 where stored, else 0 — the
        flag ptxas's -G code tests against 1 before retrying), and ATOMS.POPC.INC (each
        invocation adds 1; its result, the warp-combined one, is not translated: RZ only);
        .64: ``_atoms64``."""
        mods, ops = inst.mods, inst.ops
        if mods.get("type", 0) == 2:
            self._atoms64(inst)
            return
        b = Block()
        if inst.row.ir == "ATOMS.POPC.INC":  # '[Ra+URZ]': the register alone
            r = ops["addr"]["sym"]
            ptr = b.op("SharedPtr", b.get_reg(r) if r != 255 else b.const_u32(0))
        else:
            ptr = b.op("SharedPtr", self._smem_addr_ir(b, inst))
        if inst.row.ir == "ATOMS.CAS":
            cmp, new = self.src_ir(b, inst, "b"), self.src_ir(b, inst, "c")
            old = b.op("AtomicCastShared32" if mods["op"] else "AtomicCasShared32", ptr, cmp, new)
        elif inst.row.ir == "ATOMS.POPC.INC":
            if ops["d"]["reg"] != 255:
                raise TranslateError(f"{inst.text()}: ATOMS.POPC.INC's result not translated", offset=inst.addr)
            old = b.emit("AtomicShared32", ptr, b.const_u32(1), op="IAdd")
        else:
            name = atomic_op(mods["op"], mods.get("type") == 1)
            if name is None:
                raise TranslateError(f"{inst.text()}: atomic operation not translated yet", offset=inst.addr)
            old = b.emit("AtomicShared32", ptr, self.src_ir(b, inst, "b"), op=name)
        self.put_ir(b, inst, old)
        ir_spirv.emit(self, b)

    def _atoms64(self, inst: Inst) -> None:
        """ATOMS .64 (the program's shared memory is then 64-bit words, ``lower/memory.py``):
        the operations on the pair b (old value to the pair d), CAS / CAST(.SPIN) with the pairs
        b (compare) and c (new); CAST's flag (1 where stored) to the pair d."""
        mods, ops = inst.mods, inst.ops
        b = Block()
        addr = self._smem_addr_ir(b, inst)
        d = ops["d"]["reg"]
        if inst.row.ir == "ATOMS.CAS":
            cmp, new = pair_ir(b, ops["b"]["reg"]), pair_ir(b, ops["c"]["reg"])
            if mods["op"]:  # CAST
                put_pair_ir(b, d, b.op("ZExt64", b.op("AtomicCastShared64", addr, cmp, new)))
            else:
                put_pair_ir(b, d, b.op("AtomicCasShared64", addr, cmp, new))
        else:
            name = atomic64_op(mods["op"], False)
            if name is None:
                raise TranslateError(f"{inst.text()}: 64-bit atomic operation not translated", offset=inst.addr)
            put_pair_ir(b, d, b.emit("AtomicShared64", addr, pair_ir(b, ops["b"]["reg"]), op=name))
        ir_spirv.emit(self, b)

    def op_qspc(self, inst: Inst) -> None:
        """QSPC.E.<space> P, RZ, [Ra.64]: P = whether the generic address is in the space (the
        windows of ``_generic``); the register result is not translated (RZ only)."""
        ops, mods = inst.ops, inst.mods
        if not mods.get("E") or ops["d"]["reg"] != 255:
            raise TranslateError(f"{inst.text()}: QSPC form not translated", offset=inst.addr)
        a = ops["addr"]
        b = Block()
        addr = base64_ir(b, a["reg"], a["off"])
        window = b.op("Pack64", b.cbank_u32(0, 0x18, inst), b.cbank_u32(0, 0x1C, inst))
        b.set_pred(ops["p"]["pred"], b.emit("SpaceIs", addr, window, space=("global", "local", "shared")[mods["space"]]))
        ir_spirv.emit(self, b)

    # --- instructions (Compute86.RULES) -------------------------------------------------------
    def op_ldc(self, inst: Inst) -> None:
        ops, mods = inst.ops, inst.mods
        cb = ops["cb"]
        if mods["mode"] or mods["size"] not in (4, 5):
            raise TranslateError(f"{inst.text()}: LDC form not translated yet", offset=inst.addr)
        b = Block()
        ldc_ir(b, inst, cb["reg"], cb["off"], cb["bank"], 1 if mods["size"] == 4 else 2, ops.get("d", {}).get("reg", 255))
        ir_spirv.emit(self, b)

    def op_lds(self, inst: Inst) -> None:
        self._lds_sts(inst)

    def op_ldg(self, inst: Inst) -> None:
        if inst.row.mnemonic in ("LD", "ST"):  # generic addresses (-G code)
            self._generic(inst)
        elif inst.mods["size"] in (4, 5, 6):
            self._wide_global(inst)
        elif inst.mods["size"] in SUB_WORD:  # .U8 .S8 .U16 .S16
            self.require(inst, cache=1)
            if inst.mods["order"] not in (0, 4):
                raise TranslateError(f"{inst.text()}: memory order not translated", offset=inst.addr)
            load = inst.row.ir == "LDG"
            b = Block()
            addr = b.op("IAdd64", self.base64_ir(b, inst), b.const_u64(inst.ops["addr"]["off"]))
            sub_word_ir(b, "global", addr, inst.mods["size"], inst.ops["d" if load else "b"]["reg"], load)
            ir_spirv.emit(self, b)
        else:
            if inst.row.ir == "LDG":
                super().op_ldg(inst)
            else:
                super().op_stg(inst)

    def op_atomg(self, inst: Inst) -> None:
        if inst.row.mnemonic == "ATOM":  # generic addresses (-G code)
            self._generic(inst)
        else:
            self._atomic86(inst)

    def op_bar(self, inst: Inst) -> None:
        # .DEFER_BLOCKING is __syncthreads on Volta+ (the same workgroup barrier here)
        if inst.ops["id"]["imm"] != 0:
            raise TranslateError(f"{inst.text()}: barriers other than BAR.SYNC 0x0 not translated", offset=inst.addr)
        b = Block()
        b.emit("Barrier")
        ir_spirv.emit(self, b)

    def op_shfl(self, inst: Inst) -> None:
        b = Block()
        shfl_ir(b, inst, "p")
        ir_spirv.emit(self, b)

    def op_vote(self, inst: Inst) -> None:
        """VOTE / VOTEU: the ballot into d and the vote into p, each in its row's register file
        (shader-assert: VOTEU's are a uniform register and predicate, 'VOTEU.ANY UR6, UPT, PT'
        of ptxas's warp-aggregated atomics; written as R6 / P, the ballot clobbered R6)."""
        from shader_svc.sm86.lower_uniform import pred_out

        b = Block()
        pp = inst.ops["pp"]
        ballot = b.op("WarpBallot", b.get_pred(pp["pred"], pp["not"]))
        vote = b.emit("WarpVote", ballot, mode=inst.mods["mode"])
        self.put_ir(b, inst, ballot)
        pred_out(self, b, inst, "p", vote)
        ir_spirv.emit(self, b)

    def op_redux(self, inst: Inst) -> None:
        """REDUX UR, R: the warp's reduction of R into a uniform register (``WarpReduce``; ptxas
        uses it for a warp-combined atomic: VOTEU.ANY, UFLO, REDUX.SUM, the leader's RED)."""
        b = Block()
        v = b.emit("WarpReduce", b.get_reg(inst.ops["a"]["reg"]), op=inst.mods["op"], signed=bool(inst.mods["S32"]))
        self.put_ir(b, inst, v)
        ir_spirv.emit(self, b)

    def op_s2r(self, inst: Inst) -> None:
        sr = inst.ops["sr"]["sr"]
        if sr not in (0x00, 0x37):
            super().op_s2r(inst)
            return
        b = Block()
        if sr == 0x00:  # lane id in the emulated warp
            self.put_ir(b, inst, b.op("IAnd32", b.emit("LocalIndex"), b.const_u32(31)))
        else:
            # the local window's low end: 0 (local addresses wrap in the 4 KiB array), so the
            # stack check of -G code (R1 >= SR_LMEMHIOFF, unsigned) always passes
            self.put_ir(b, inst, b.const_u32(0))
        ir_spirv.emit(self, b)

    def op_ldl(self, inst: Inst) -> None:
        self._local86(inst)

    def op_bssy(self, inst: Inst) -> None:
        """BSSY/BSYNC: one invocation is one thread, nothing to reconverge; MEMBAR: a fence
        (``MemoryFence``)."""
        if inst.row.ir == "MEMBAR":
            b = Block()
            b.emit("MemoryFence")
            ir_spirv.emit(self, b)
