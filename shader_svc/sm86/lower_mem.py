"""SM86 compute memory and warp instructions beyond LDG/STG of 32 bits: indexed constant loads
(LDC), shared memory (LDS/STS with .X4/.X8/.X16 index scaling), global loads/stores of 64 and
128 bits, generic LD/ST/ATOM (shared memory through the window at c[0x0][0x18], see
``sm86/cbank.py``), local memory, atomics (ATOMG/RED, 32-bit), BAR, MEMBAR, SHFL/VOTE on the
emulated 32-lane warp (``lower/memory.py``), the lane id."""

from __future__ import annotations

from shader_svc.ir import to_spirv as ir_spirv
from shader_svc.ir.block import Block, Value, global_words_ir
from shader_svc.lower.base import TranslateError
from shader_svc.sm86.decode import Inst
from shader_svc.sm86.lower import Lower86

SIZES = {4: 1, 5: 2, 6: 4}
ATOMIC_OPS = {
    0: "OpAtomicIAdd",
    1: ("OpAtomicUMin", "OpAtomicSMin"),
    2: ("OpAtomicUMax", "OpAtomicSMax"),
    5: "OpAtomicAnd",
    6: "OpAtomicOr",
    7: "OpAtomicXor",
    8: "OpAtomicExchange",
}


class Memory86(Lower86):
    """Mixin of ``to_spirv.Compute86``: the memory and warp handlers and their helpers."""

    def cbank_dyn(self, bank: int, byte_addr: int, inst: Inst) -> int:
        """A word of constant bank ``bank`` at a run-time byte address."""
        if bank != 0:
            raise TranslateError(f"{inst.text()}: constant bank {bank:#x} not supported", offset=inst.addr)
        idx = self.op("OpShiftRightLogical", self.u32, byte_addr, self.c(2))
        return self.op("OpLoad", self.u32, self.op("OpAccessChain", self.cb_ptr, self.cbank, self.c(0), idx))

    def _fence(self) -> None:
        """MEMBAR: emits nothing.  Each invocation's own accesses stay in program order, which is
        all a single thread observes; ordering towards other invocations (__threadfence) is NOT
        kept (a known gap).  The faithful OpMemoryBarrier (Device, AcquireRelease) stalls
        lavapipe 22.3: once some invocations of a workgroup have exited, the others stop at any
        memory barrier and write nothing (seen on -G code, which fences before every EXIT;
        with or without WorkgroupMemory, and as an atomic with those semantics)."""

    # --- memory -------------------------------------------------------------------------------
    def _smem_addr(self, inst: Inst) -> int:
        b = Block()
        return ir_spirv.emit_value(self, b, self._smem_addr_ir(b, inst))

    @staticmethod
    def _smem_addr_ir(b: Block, inst: Inst) -> Value:
        """A shared (or local) address: the register times the .X4/.X8/.X16 scale, plus the offset."""
        a = inst.ops["addr"]
        base = b.get_reg(a["reg"]) if a["reg"] != 255 else b.const_u32(0)
        if a["scale"]:
            base = b.op("IMul32", base, b.const_u32((1, 4, 8, 16)[a["scale"]]))
        return b.op("IAdd32", base, b.const_u32(a["off"]))

    def _lds_sts(self, inst: Inst) -> None:
        n = SIZES.get(inst.mods["size"])
        if n is None:
            raise TranslateError(f"{inst.text()}: sub-word shared access not translated yet", offset=inst.addr)
        b = Block()
        addr = self._smem_addr_ir(b, inst)
        reg = inst.ops["d"]["reg"] if inst.row.ir == "LDS" else inst.ops["b"]["reg"]
        for i in range(n):
            p = b.op("SharedPtr", b.op("IAdd32", addr, b.const_u32(4 * i)))
            if inst.row.ir == "LDS":
                if reg != 255:
                    b.set_reg(reg + i, b.op("LoadShared32", p))
            else:
                b.emit("StoreShared32", p, b.get_reg(reg + i) if reg != 255 else b.const_u32(0))
        ir_spirv.emit(self, b)

    def _local86(self, inst: Inst) -> None:
        """LDL/STL: a per-invocation array of 4 KiB; addresses (R1, the stack pointer, starts at
        c[0x0][0x28]) are taken modulo its size."""
        n = SIZES.get(inst.mods["size"])
        if n is None:
            raise TranslateError(f"{inst.text()}: sub-word local access not translated yet", offset=inst.addr)
        a = inst.ops["addr"]
        addr = self.op("OpIAdd", self.u32, self.reg(a["reg"]) if a["reg"] != 255 else self.c(0), self.c(a["off"]))
        load = inst.row.ir == "LDL"
        self._local_access(addr, inst.ops["d"]["reg"] if load else inst.ops["b"]["reg"], n, load)

    def _generic(self, inst: Inst, put) -> None:
        """LD/ST/ATOM on a generic address: inside the shared window (its 64-bit base is
        c[0x0][0x18], as the CUDA driver lays bank 0 out; the window is 16 MiB) the access goes
        to shared memory at the offset, otherwise to global memory.  The two paths are a
        selection, so a shared address is never dereferenced as a global pointer."""
        mods, ops = inst.mods, inst.ops
        u64 = self.u64
        if inst.row.mnemonic != "ATOM":
            self.require(inst, cache=1)
            if mods["order"] not in (0, 4):
                raise TranslateError(f"{inst.text()}: memory order not translated", offset=inst.addr)
        n = SIZES.get(mods.get("size", 4)) if inst.row.mnemonic != "ATOM" else 1
        if n is None:
            raise TranslateError(f"{inst.text()}: sub-word access not translated yet", offset=inst.addr)
        if inst.row.mnemonic == "ATOM" and (mods.get("type", 0) not in (0, 1, 3) or ops["p"]["pred"] != 7):
            raise TranslateError(f"{inst.text()}: atomic form not translated yet", offset=inst.addr)
        a = ops["addr"]
        base = self.join64(self.reg(a["reg"]), self.reg(a["reg"] + 1)) if a["reg"] != 255 else self.c64(0)
        addr = self.op("OpIAdd", u64, base, self.c64(a["off"]))
        window = self.join64(self.cbank_word(0x18, 0, inst), self.cbank_word(0x1C, 0, inst))
        mode = {"LD": "load", "ST": "store"}.get(inst.row.mnemonic, "atomic")
        atom = None
        if mode == "atomic" and (fn := self._rmw_fn(mods["op"], mods.get("type", 0), self.src(inst, "b"))):
            atom = (fn, None)
        elif mode == "atomic":
            name = ATOMIC_OPS.get(mods["op"])
            if name is None:
                raise TranslateError(f"{inst.text()}: atomic operation not translated yet", offset=inst.addr)
            atom = (name[1 if mods.get("type") == 1 else 0] if isinstance(name, tuple) else name, self.src(inst, "b"))
        reg = ops["d"]["reg"] if mode != "store" else ops["b"]["reg"]
        self._generic_access(inst, addr, window, n, mode, reg, atom)

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

    def _atomic86(self, inst: Inst, put) -> None:
        ir, mods, ops = inst.row.ir, inst.mods, inst.ops
        E = self.m.E
        ftype = mods.get("type", 0)
        if ftype not in (0, 1, 3) or (ftype == 3 and mods["op"] not in (0, 1, 2)):
            raise TranslateError(f"{inst.text()}: atomic type not translated yet", offset=inst.addr)
        a = ops["addr"]
        # ATOMG.CAS prints no .64 on its address where ptxas gives it a 64-bit pointer (.E)
        if not a["wide"] and not (ir == "ATOMG.CAS" and mods.get("E")):
            raise TranslateError(f"{inst.text()}: 32-bit global addresses not translated", offset=inst.addr)
        base = self.join64(self.reg(a["reg"]), self.reg(a["reg"] + 1)) if a["reg"] != 255 else self.c64(0)
        ptr = self.op("OpConvertUToPtr", self.psb_ptr, self.op("OpIAdd", self.u64, base, self.c64(a["off"])))
        sc, sm = self.c(E("Scope", "Device")), self.c(E("MemorySemantics", "UniformMemory"))
        if ops.get("p", {}).get("pred", 7) != 7:
            raise TranslateError(f"{inst.text()}: atomic predicate result not translated", offset=inst.addr)
        if ir == "ATOMG.CAS":
            put(self.op("OpAtomicCompareExchange", self.u32, ptr, sc, sm, sm, self.src(inst, "c"), self.src(inst, "b")))
            return
        fn = self._rmw_fn(mods["op"], ftype, self.src(inst, "b"))
        if fn is not None:
            old = self._atomic_loop(ptr, sc, sm, fn)
        else:
            name = ATOMIC_OPS.get(mods["op"])
            if name is None:
                raise TranslateError(f"{inst.text()}: atomic operation not translated yet", offset=inst.addr)
            if isinstance(name, tuple):
                name = name[1 if mods.get("type") == 1 else 0]
            old = self.op(name, self.u32, ptr, sc, sm, self.src(inst, "b"))
        if ir != "RED":
            put(old)

    # --- warp ---------------------------------------------------------------------------------
    def _shfl86(self, inst: Inst) -> None:
        ops = inst.ops
        opnd = [self.c(ops[k]["imm"]) if "imm" in ops[k] else self.reg(ops[k]["reg"]) for k in ("b", "c")]
        val, take = self._shfl_warp(inst.mods["mode"], self.reg(ops["a"]["reg"]), *opnd)
        self.set_reg(ops["d"]["reg"], val)
        self.set_pred(ops["p"]["pred"], take)

    def _vote86(self, inst: Inst) -> None:
        ops = inst.ops
        ballot, r = self._vote_ballot(self.pred(ops["pp"]["pred"], ops["pp"]["not"]), inst.mods["mode"])
        self.set_reg(ops["d"]["reg"], ballot)
        self.set_pred(ops["p"]["pred"], r)

    # --- instructions (Compute86.RULES) -------------------------------------------------------
    def op_ldc(self, inst: Inst) -> None:
        ops, mods = inst.ops, inst.mods
        d = ops.get("d", {}).get("reg", 255)
        u32, c = self.u32, self.c
        cb = ops["cb"]
        if mods["mode"] or mods["size"] not in (4, 5):
            raise TranslateError(f"{inst.text()}: LDC form not translated yet", offset=inst.addr)
        base = self.reg(cb["reg"]) if cb["reg"] != 255 else c(0)
        for k in range(1 if mods["size"] == 4 else 2):
            at = self.op("OpIAdd", u32, base, c(cb["off"] + 4 * k))
            self.set_reg(d + k if d != 255 else 255, self.cbank_dyn(cb["bank"], at, inst))

    def op_lds(self, inst: Inst) -> None:
        self._lds_sts(inst)

    def op_ldg(self, inst: Inst) -> None:
        if inst.row.mnemonic in ("LD", "ST"):  # generic addresses (-G code)
            self._generic(inst, self.dest(inst))
        elif inst.mods["size"] in (4, 5, 6):
            self._wide_global(inst)
        else:
            if inst.row.ir == "LDG":
                super().op_ldg(inst)
            else:
                super().op_stg(inst)

    def op_atomg(self, inst: Inst) -> None:
        if inst.row.mnemonic == "ATOM":  # generic addresses (-G code)
            self._generic(inst, self.dest(inst))
        else:
            self._atomic86(inst, self.dest(inst))

    def op_bar(self, inst: Inst) -> None:
        ops = inst.ops
        # .DEFER_BLOCKING is __syncthreads on Volta+ (the same workgroup barrier here)
        if ops["id"]["imm"] != 0:
            raise TranslateError(f"{inst.text()}: barriers other than BAR.SYNC 0x0 not translated", offset=inst.addr)
        self._barrier()

    def op_shfl(self, inst: Inst) -> None:
        self._shfl86(inst)

    def op_vote(self, inst: Inst) -> None:
        self._vote86(inst)

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
        """BSSY/BSYNC: one invocation is one thread, nothing to reconverge; MEMBAR: a fence."""
        if inst.row.ir == "MEMBAR":
            self._fence()
