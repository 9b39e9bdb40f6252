"""SM53 memory and warp instructions: LDG/STG, generic LD/ST (shared memory through the window
at c[0x0][0x0], ``sm53/cbank.py``), LDS/STS, LDL/STL, LDC, atomics (ATOMS/ATOM/ATOM.CAS/RED), BAR,
SHFL and VOTE on the emulated 32-lane warp (``lower/memory.py``)."""

from __future__ import annotations

from shader_svc.ir import to_spirv as ir_spirv
from shader_svc.ir.block import Block, global_words_ir
from shader_svc.lower.base import TranslateError
from shader_svc.sm53.decode import Inst
from shader_svc.sm53.lower import Lower53

ATOMIC_OPS = {
    0: "OpAtomicIAdd",
    1: ("OpAtomicUMin", "OpAtomicSMin"),
    2: ("OpAtomicUMax", "OpAtomicSMax"),
    5: "OpAtomicAnd",
    6: "OpAtomicOr",
    7: "OpAtomicXor",
    8: "OpAtomicExchange",
}


class Memory53(Lower53):
    """Mixin of ``to_spirv.Compute53``: the memory and warp handlers and their helpers."""

    def _global(self, inst: Inst) -> None:
        mods = inst.mods
        if not mods["E"]:
            raise TranslateError(f"{inst.text()}: 32-bit global addresses not translated", offset=inst.addr)
        n = {4: 1, 5: 2, 6: 4}.get(mods["size"])
        if n is None:
            raise TranslateError(f"{inst.text()}: sub-word access not translated yet", offset=inst.addr)
        a = inst.ops["addr"]
        b = Block()
        base = b.op("Pack64", b.get_reg(a["reg"]), b.get_reg(a["reg"] + 1)) if a["reg"] != 255 else b.const_u64(0)
        global_words_ir(b, base, a["off"], n, inst.ops["d"]["reg"], inst.row.ir == "LDG")
        ir_spirv.emit(self, b)

    def _generic53(self, inst: Inst) -> None:
        """LD/ST on a generic 64-bit address (register pair + signed 32-bit offset): the shared
        window (c[0x0][0x0], high word 0, 16 MiB) goes to shared memory, the rest to global
        memory (``_generic_access``).  The predicate operand at 58 is the "global" flag a LEA.HI.X
        left (see ``_lea53``): the window test on the address decides the same here."""
        mods = inst.mods
        if not mods["E"]:
            self.bad(inst, "32-bit generic addresses not translated")
        n = {4: 1, 5: 2, 6: 4}.get(mods["size"])
        if n is None:
            self.bad(inst, "sub-word access not translated yet")
        a = inst.ops["addr"]
        base = self.join64(self.reg(a["reg"]), self.reg(a["reg"] + 1)) if a["reg"] != 255 else self.c64(0)
        addr = self.op("OpIAdd", self.u64, base, self.c64(a["off"]))
        window = self.op("OpUConvert", self.u64, self.cbank_word(0x0, 0, inst))
        self._generic_access(inst, addr, window, n, "load" if inst.row.ir == "LD" else "store", inst.ops["d"]["reg"])

    # --- shared memory and atomics -----------------------------------------------------------
    def _mem_addr(self, inst: Inst) -> int:
        a = inst.ops["addr"]
        base = self.reg(a["reg"]) if a["reg"] != 255 else self.c(0)
        return self.op("OpIAdd", self.u32, base, self.c(a["off"]))

    def _shared(self, inst: Inst) -> None:
        n = {4: 1, 5: 2, 6: 4}.get(inst.mods["size"])
        if n is None:
            raise TranslateError(f"{inst.text()}: sub-word shared access not translated yet", offset=inst.addr)
        a = inst.ops["addr"]
        b = Block()
        addr = b.op("IAdd32", b.get_reg(a["reg"]) if a["reg"] != 255 else b.const_u32(0), b.const_u32(a["off"]))
        d = inst.ops["d"]["reg"]
        for i in range(n):
            p = b.op("SharedPtr", b.op("IAdd32", addr, b.const_u32(4 * i)))
            if inst.row.ir == "LDS":
                if d != 255:
                    b.set_reg(d + i, b.op("LoadShared32", p))
            else:
                b.emit("StoreShared32", p, b.get_reg(d + i) if d != 255 else b.const_u32(0))
        ir_spirv.emit(self, b)

    def _local(self, inst: Inst) -> None:
        """LDL/STL: a per-invocation array; the stack pointer comes from c[0x0][0x20] as the
        driver's local window top, and addresses are taken modulo the array's 4 KiB."""
        n = {4: 1, 5: 2, 6: 4}.get(inst.mods["size"])
        if n is None:
            raise TranslateError(f"{inst.text()}: sub-word local access not translated yet", offset=inst.addr)
        self._local_access(self._mem_addr(inst), inst.ops["d"]["reg"], n, inst.row.ir == "LDL")

    def _atomic(self, inst: Inst, put) -> None:
        """ATOMS (shared), ATOM/RED (global, 64-bit addresses): 32-bit integer operations."""
        ir, mods, ops = inst.row.ir, inst.mods, inst.ops
        E = self.m.E
        if mods.get("type", 0) not in (0, 1):
            raise TranslateError(f"{inst.text()}: atomic type not translated yet", offset=inst.addr)
        if ir != "ATOMS" and not mods.get("E"):
            raise TranslateError(f"{inst.text()}: 32-bit global addresses not translated", offset=inst.addr)
        if ir == "ATOMS":
            ptr, scope = self.shared_word(self._mem_addr(inst)), E("Scope", "Workgroup")
            sem = E("MemorySemantics", "WorkgroupMemory")
        else:
            a = ops["addr"]
            base = self.join64(self.reg(a["reg"]), self.reg(a["reg"] + 1)) if a["reg"] != 255 else self.c64(0)
            ptr = self.op("OpConvertUToPtr", self.psb_ptr, self.op("OpIAdd", self.u64, base, self.c64(a["off"])))
            scope, sem = E("Scope", "Device"), E("MemorySemantics", "UniformMemory")
        sc, sm = self.c(scope), self.c(sem)
        if ir == "ATOM_CAS":
            b = ops["b"]["reg"]
            cmp, new = self.reg(b), self.reg(b + 1) if b != 255 else self.c(0)
            put(self.op("OpAtomicCompareExchange", self.u32, ptr, sc, sm, sm, new, cmp))
            return
        name = ATOMIC_OPS.get(mods["op"])
        if name is None:
            raise TranslateError(f"{inst.text()}: atomic operation not translated yet", offset=inst.addr)
        if isinstance(name, tuple):
            name = name[1 if mods.get("type") == 1 else 0]
        src = self.reg(ops["d"]["reg"]) if ir == "RED" else self.reg(ops["b"]["reg"])
        old = self.op(name, self.u32, ptr, sc, sm, src)
        if ir != "RED":
            put(old)

    # --- 32-lane warps -----------------------------------------------------------------------
    # NVIDIA's warp is 32 invocations; Vulkan subgroups may be smaller (lavapipe: 8), so a warp
    # is emulated: invocation i of the workgroup is lane i % 32 of warp i / 32, and a warp-wide
    # operation exchanges values through a workgroup array between two workgroup barriers.  No
    # subgroup operation is used, so the result does not depend on the device's subgroup size;
    # the barriers need every invocation to reach the operation (as ptxas code does outside
    # divergent regions; predicated warp operations are refused).
    def _shfl(self, inst: Inst) -> None:
        ops = inst.ops
        opnd = [self.c(ops[k]["imm"]) if "imm" in ops[k] else self.reg(ops[k]["reg"]) for k in ("b", "c")]
        val, take = self._shfl_warp(inst.mods["mode"], self.reg(ops["a"]["reg"]), *opnd)
        self.set_reg(ops["d"]["reg"], val)
        self.set_pred(ops["pd"]["pred"], take)

    def _vote(self, inst: Inst) -> None:
        ops = inst.ops
        ballot, r = self._vote_ballot(self.pv(ops["pa"]), inst.mods["mode"])
        self.set_reg(ops["d"]["reg"], ballot)
        self.set_pred(ops["pd"]["pred"], r)

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
        ops, mods = inst.ops, inst.mods
        dv = ops.get("d", {})
        d = dv.get("reg", 255)
        u32, c = self.u32, self.c
        cv = ops["c"]
        n = {4: 1, 5: 2}.get(mods["size"])
        if cv["bank"] != 0 or mods["mode"] or n is None:
            self.bad(inst, "indexed constant load other than 32/64-bit from bank 0 not translated yet")
        idx = self.op("OpShiftRightLogical", u32, self.op("OpIAdd", u32, self.reg(cv["reg"]), c(cv["off"])), c(2))
        words = [
            self.op("OpLoad", u32, self.op("OpAccessChain", self.cb_ptr, self.cbank, c(0), self.op("OpIAdd", u32, idx, c(k))))
            for k in range(n)
        ]
        if d != 255:
            for k, w in enumerate(words):
                self.set_reg(d + k, w)

    def op_atoms(self, inst: Inst) -> None:
        put = self.dest(inst)
        self._atomic(inst, put)

    def op_bar(self, inst: Inst) -> None:
        ops = inst.ops
        if ops["id"]["imm"] != 0:
            self.bad(inst, "barriers other than 0 not translated yet")
        E = self.m.E
        sem = E("MemorySemantics", "AcquireRelease") | E("MemorySemantics", "WorkgroupMemory")
        wg = self.c(E("Scope", "Workgroup"))
        self.do("OpControlBarrier", wg, wg, self.c(sem))

    def op_shfl(self, inst: Inst) -> None:
        self._shfl(inst)

    def op_vote(self, inst: Inst) -> None:
        self._vote(inst)
