"""SM53 memory and warp instructions: LDG/STG, generic LD/ST (shared memory through the window
at c[0x0][0x0], ``sm53/cbank.py``), LDS/STS, LDL/STL, LDC, atomics (ATOMS/ATOM/ATOM.CAS/RED), BAR,
SHFL and VOTE on the emulated 32-lane warp.  This part reads SM53's fields and builds IR with
the shared builders of ``lower/memory.py``; what each operation means is written there and in
``ir/ops.py``."""

from __future__ import annotations

from shader_svc.ir import to_spirv as ir_spirv
from shader_svc.ir.block import Block, global_words_ir
from shader_svc.lower.base import TranslateError
from shader_svc.lower.warp import shfl_ir, vote_ir
from shader_svc.lower.memory import (
    FLOAT_ATOMIC_OPS,
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
from shader_svc.sm53.decode import Inst
from shader_svc.sm53.lower import Lower53


class Memory53(Lower53):
    """Mixin of ``to_spirv.Compute53``: the memory and warp handlers."""

    def _global(self, inst: Inst) -> None:
        mods = inst.mods
        if not mods["E"]:
            raise TranslateError(f"{inst.text()}: 32-bit global addresses not translated", offset=inst.addr)
        a = inst.ops["addr"]
        b = Block()
        base = b.op("Pack64", b.get_reg(a["reg"]), b.get_reg(a["reg"] + 1)) if a["reg"] != 255 else b.const_u64(0)
        addr = b.op("IAdd64", base, b.const_u64(a["off"]))
        if not sub_word_ir(b, "global", addr, mods["size"], inst.ops["d"]["reg"], inst.row.ir == "LDG"):
            global_words_ir(b, base, a["off"], words(inst), inst.ops["d"]["reg"], inst.row.ir == "LDG")
        ir_spirv.emit(self, b)

    def _generic53(self, inst: Inst) -> None:
        """LD/ST on a generic 64-bit address (register pair + signed 32-bit offset): the shared
        window (c[0x0][0x0], high word 0, 16 MiB) goes to shared memory, the rest to global
        memory.  The predicate operand at 58 is the "global" flag a LEA.HI.X left (see
        ``_lea53``): the window test on the address decides the same here."""
        mods = inst.mods
        if not mods["E"]:
            self.bad(inst, "32-bit generic addresses not translated")
        a = inst.ops["addr"]
        b = Block()
        addr = base64_ir(b, a["reg"], a["off"])
        window = b.op("ZExt64", b.cbank_u32(0, 0x0, inst))
        generic_sized_ir(b, inst, addr, window, mods["size"], inst.row.ir == "LD", inst.ops["d"]["reg"])
        ir_spirv.emit(self, b)

    def _shared(self, inst: Inst) -> None:
        a, load, reg = inst.ops["addr"], inst.row.ir == "LDS", inst.ops["d"]["reg"]
        b = Block()
        addr = base_ir(b, a["reg"], a["off"])
        if not sub_word_ir(b, "shared", addr, inst.mods["size"], reg, load):
            shared_ir(b, addr, words(inst, "shared"), reg, load)
        ir_spirv.emit(self, b)

    def _local(self, inst: Inst) -> None:
        """LDL/STL: the stack pointer comes from c[0x0][0x20] as the driver's local window top;
        local memory is ``LocalPtr``'s 4 KiB per invocation."""
        a, load, reg = inst.ops["addr"], inst.row.ir == "LDL", inst.ops["d"]["reg"]
        b = Block()
        addr = base_ir(b, a["reg"], a["off"])
        if not sub_word_ir(b, "local", addr, inst.mods["size"], reg, load):
            local_ir(b, addr, words(inst, "local"), reg, load)
        ir_spirv.emit(self, b)

    def _atomic(self, inst: Inst) -> None:
        """ATOMS (shared), ATOM/RED (global, 64-bit addresses): 32-bit integer operations
        (INC/DEC with PTX's wrap rules), .F32.FTZ.RN ADD/MIN/MAX, .U64 (``_atomic64``), CAS
        (the pair b, b+1: compare, new)."""
        ir, mods, ops = inst.row.ir, inst.mods, inst.ops
        ty = mods.get("type", 0)
        if ty in (2, 5) or "w" in mods:  # .U64, .S64, CAS.64
            self._atomic64(inst)
            return
        if ty not in (0, 1, 3) or (ty == 3 and ir == "ATOMS"):
            raise TranslateError(f"{inst.text()}: atomic type not translated yet", offset=inst.addr)
        if ir != "ATOMS" and not mods.get("E"):
            raise TranslateError(f"{inst.text()}: 32-bit global addresses not translated", offset=inst.addr)
        cas = ir == "ATOM_CAS" or "cas" in mods  # ATOM.CAS, ATOMS.CAS
        if cas:
            name = "CAS"
        elif ty == 3:
            name = FLOAT_ATOMIC_OPS.get(mods["op"])
        else:
            name = atomic_op(mods["op"], ty == 1)
        if name is None:
            raise TranslateError(f"{inst.text()}: atomic operation not translated yet", offset=inst.addr)
        a, shared = ops["addr"], ir == "ATOMS"
        b = Block()
        if shared:
            ptr = b.op("SharedPtr", base_ir(b, a["reg"], a["off"]))
        else:
            ptr = b.op("GlobalPtr", base64_ir(b, a["reg"], a["off"]))
        space = "Shared32" if shared else "Global32"
        if cas:
            r = ops["b"]["reg"]  # the pair (compare, new)
            cmp = b.get_reg(r)
            new = b.get_reg(r + 1) if r != 255 else b.const_u32(0)
            self.put_ir(b, inst, b.op("AtomicCas" + space, ptr, cmp, new))
        else:
            v = b.get_reg(ops["d" if ir == "RED" else "b"]["reg"])
            if ty == 3:
                old = b.emit("AtomicGlobalF32", ptr, b.op("BitcastF32", v), op=name)
            else:
                old = b.emit("Atomic" + space, ptr, v, op=name)
            if ir != "RED":
                self.put_ir(b, inst, old)
        ir_spirv.emit(self, b)

    def _atomic64(self, inst: Inst) -> None:
        """ATOM/RED .U64 (.S64: signed MIN/MAX) on a 64-bit global address: the pair b (RED: d) in, the old u64 to the
        pair d (``AtomicGlobal64``, the device's Int64Atomics; INC/DEC have no 64-bit form);
        ATOM.CAS.64: the pairs b, b+2 (``AtomicCasGlobal64``).  Shared-memory 64-bit atomics are
        refused (shared memory is an array of 32-bit words here)."""
        ir, mods, ops = inst.row.ir, inst.mods, inst.ops
        if ir == "ATOMS":  # the program's shared memory is then 64-bit words (lower/memory.py)
            self._atoms64(inst)
            return
        if not mods.get("E"):
            raise TranslateError(f"{inst.text()}: 32-bit global addresses not translated", offset=inst.addr)
        a = ops["addr"]
        b = Block()
        addr = base64_ir(b, a["reg"], a["off"])
        if ir == "ATOM_CAS":  # the pairs b (compare) and b+2 (new)
            r = ops["b"]["reg"]
            old = b.op("AtomicCasGlobal64", addr, pair_ir(b, r), pair_ir(b, r + 2 if r != 255 else r))
        else:
            name = atomic64_op(mods["op"], mods["type"] == 5)
            if name is None:
                raise TranslateError(f"{inst.text()}: 64-bit atomic operation not translated", offset=inst.addr)
            old = b.emit("AtomicGlobal64", addr, pair_ir(b, ops["d" if ir == "RED" else "b"]["reg"]), op=name)
        if ir != "RED":
            put_pair_ir(b, ops["d"]["reg"], old)
        ir_spirv.emit(self, b)

    def _atoms64(self, inst: Inst) -> None:
        """ATOMS .U64/.S64 (the pair b) and ATOMS.CAS.64 (the pairs b, b+2): the old u64 to the
        pair d (``AtomicShared64``/``AtomicCasShared64``)."""
        mods, ops, a = inst.mods, inst.ops, inst.ops["addr"]
        r = ops["b"]["reg"]
        b = Block()
        addr = base_ir(b, a["reg"], a["off"])
        if "cas" in mods:
            old = b.op("AtomicCasShared64", addr, pair_ir(b, r), pair_ir(b, r + 2 if r != 255 else r))
        else:
            name = atomic64_op(mods["op"], mods["type"] == 5)
            if name is None:
                raise TranslateError(f"{inst.text()}: 64-bit atomic operation not translated", offset=inst.addr)
            old = b.emit("AtomicShared64", addr, pair_ir(b, r), op=name)
        put_pair_ir(b, ops["d"]["reg"], old)
        ir_spirv.emit(self, b)

    # --- instructions (to_spirv.Compute53.RULES) ---------------------------------------------
    def op_ldg(self, inst: Inst) -> None:
        self._global(inst)

    def op_ld(self, inst: Inst) -> None:
        self._generic53(inst)

    def op_lds(self, inst: Inst) -> None:
        self._shared(inst)

    def op_ldl(self, inst: Inst) -> None:
        self._local(inst)

    def op_ldc(self, inst: Inst) -> None:
        cv = inst.ops["c"]
        n = {4: 1, 5: 2}.get(inst.mods["size"])
        if cv["bank"] != 0 or inst.mods["mode"] or n is None:
            self.bad(inst, "indexed constant load other than 32/64-bit from bank 0 not translated yet")
        b = Block()
        ldc_ir(b, inst, cv["reg"], cv["off"], 0, n, inst.ops.get("d", {}).get("reg", 255))
        ir_spirv.emit(self, b)

    def op_atoms(self, inst: Inst) -> None:
        self._atomic(inst)

    def op_bar(self, inst: Inst) -> None:
        if inst.ops["id"]["imm"] != 0:
            self.bad(inst, "barriers other than 0 not translated yet")
        b = Block()
        b.emit("Barrier")
        ir_spirv.emit(self, b)

    def op_shfl(self, inst: Inst) -> None:
        b = Block()
        shfl_ir(b, inst, "pd")
        ir_spirv.emit(self, b)

    def op_vote(self, inst: Inst) -> None:
        b = Block()
        pa = inst.ops["pa"]
        vote_ir(b, inst, b.get_pred(pa["pred"], pa["not"]), "pd")
        ir_spirv.emit(self, b)
