"""The SM86 compute lowering of what nvcc 13 emits beyond the base subset (issue 31): carries
(IADD3/LEA carry-out and .X carry-in), LEA family, IMAD.HI, IABS, 64-bit funnel shifts, FP64
(DADD/DMUL/DFMA/DSETP), I2F/F2I between every width with directed rounding, MUFU, shared
memory (LDS/STS with .X4/.X8/.X16 index scaling), global loads/stores of 64 and 128 bits,
atomics (ATOMG/RED/ATOMS, 32-bit), BAR, SHFL/VOTE on the emulated 32-lane warp, the uniform
datapath (S2UR, UMOV), convergence barriers and calls.

Semantics (one SPIR-V invocation runs one thread, so the machine's reconvergence points are
no-ops for it): BSSY/BSYNC/WARPSYNC do nothing; CALL.REL jumps (the caller has put the return
address in a register pair with MOV, as nvcc does), RET.REL jumps to that register + its
target field (the code start), resolved against the block table in the dispatcher loop.
Carries: IADD3's total carry t = (sum >> 32) splits as CO0 = t >= 1, CO1 = t >= 2 so that
IADD3.X with both carry-ins adds t back; a negated operand without .X is ~x + 1 (its +1 reaches
the carry), with .X it is ~x (nvdisasm prints '~').  DFMA is GLSL's Fma on doubles (lavapipe
lowers it to llvm.fma, a fused operation; a device with an unfused Fma would round twice).
"""
from __future__ import annotations

import struct

from shader_svc.sm86.decode import Inst
from shader_svc.sm86.to_spirv import DONE, GLSL, LOWERED, ComputeSpec, TranslateError, _Lower
from shader_svc.spirv.structure import RET, Unstructured

EXT = {"LEA", "IMAD.HI", "IABS", "DADD", "DMUL", "DFMA", "DSETP", "MUFU", "LDS", "STS", "ATOMG", "ATOMG.CAS",
       "RED", "BAR", "SHFL", "VOTE", "BSSY", "BSYNC", "CALL", "RET", "MEMBAR", "POPC", "BREV", "FLO", "PRMT", "LDC", "R2UR", "STL", "LDL", "BPT",
       "CALL.ABS", "RET.ABS", "SGXT", "FRND", "F2F", "CS2R", "BREAK"}
WARP = {"SHFL", "VOTE"}
SIZES = {4: 1, 5: 2, 6: 4}
ATOMIC_OPS = {0: "OpAtomicIAdd", 1: ("OpAtomicUMin", "OpAtomicSMin"), 2: ("OpAtomicUMax", "OpAtomicSMax"),
              5: "OpAtomicAnd", 6: "OpAtomicOr", 7: "OpAtomicXor", 8: "OpAtomicExchange"}


def _f(v: float) -> int:
    return struct.unpack("<I", struct.pack("<f", v))[0]


class Ext86(_Lower):
    def lowered(self, ir: str) -> bool:
        return ir in LOWERED or ir in EXT

    # --- calls inlined for the structuriser (spirv/expand.py) ----------------------------------
    STRUCT_BRANCH = ("BRA", "EXIT", "BPT", "CALL", "CALL.ABS", "RET", "RET.ABS")

    def _step(self, blocks: list[list[Inst]], target):
        """States are the calls in progress (a tuple of (call block, return block)): CALL goes
        to the callee with its return block pushed, RET to the innermost return block.  RET
        jumps to a register (+ its field): it is taken to return to the block after the call
        only when the caller's block put exactly that address in that register with a MOV (as
        nvcc and ptxas do; the callee keeps it, saving it on its stack where it calls on);
        anything else — a guarded CALL/RET, another return address, a RET with no call in
        progress — is refused here and runs in the dispatcher loop, which follows the register."""
        base = super()._step(blocks, target)

        def ret_addr(call_block: int, ra: int) -> int | None:
            for ins in reversed(blocks[call_block][:-1]):
                d = ins.ops.get("d", {})
                if d.get("reg") == ra and d.get("file", "R") == "R":
                    b = ins.ops.get("b", {})
                    return b["imm"] if ins.row.ir == "MOV" and ins.pred == 7 and "imm" in b else None
            return None

        def step(i: int, st: tuple) -> list:
            last = blocks[i][-1]
            ir = last.row.ir
            if ir not in ("CALL", "CALL.ABS", "RET", "RET.ABS", "BPT"):
                return base(i, st)
            if not self._unconditional(last):
                raise Unstructured(f"offset {last.addr:#x}: guarded {ir}")
            if ir == "BPT":
                return [(RET, st)]
            if ir in ("CALL", "CALL.ABS"):
                if i + 1 >= len(blocks):
                    raise Unstructured(f"offset {last.addr:#x}: a call with no code after it")
                return [(self._block_at(last.ops["target"]["target"] if ir == "CALL" else last.ops["target"]["imm"],
                                        last), st + ((i, i + 1),))]
            if not st:
                raise Unstructured(f"offset {last.addr:#x}: {ir} with no call in progress")
            call_block, back = st[-1]
            rt = last.ops["rt"]["target"] if ir == "RET" else last.ops["rt"]["imm"]
            ra = ret_addr(call_block, last.ops["ra"]["reg"])
            if ra is None or (ra + rt) & 0xFFFFFFFF != blocks[back][0].addr:
                raise Unstructured(f"offset {last.addr:#x}: {ir} to an address the caller did not set")
            return [(back, st[:-1])]
        return step

    def _block_at(self, addr: int, ins: Inst) -> int:
        t = next((k for k, a in enumerate(self._starts) if a == addr), None)
        if t is None:
            raise TranslateError(f"{ins.text()}: call target outside the program (an unlinked call?)", offset=ins.addr)
        return t

    def build(self) -> bytes:
        for ins in self.insts:
            if ins.row.ir in WARP and (ins.pred != 7 or ins.pred_not):
                raise TranslateError(f"{ins.text()}: predicated warp-wide operation not translated (the 32-lane "
                                     f"warp is emulated with workgroup barriers, which every invocation must "
                                     f"reach)", offset=ins.addr)
        return super().build()

    # --- control flow -------------------------------------------------------------------------
    STRUCT_SKIP = ("BSSY", "BSYNC", "BREAK")

    def block_list(self) -> list[list[Inst]]:
        leaders = {self.insts[0].addr} if self.insts else set()
        for i, ins in enumerate(self.insts):
            if ins.row.ir in ("BRA", "EXIT", "CALL", "RET", "CALL.ABS", "RET.ABS", "BPT"):
                if i + 1 < len(self.insts):
                    leaders.add(self.insts[i + 1].addr)
                if ins.row.ir in ("BRA", "CALL"):
                    leaders.add(ins.ops["target"]["target"])
                if ins.row.ir == "CALL.ABS":
                    leaders.add(ins.ops["target"]["imm"])
        blocks, cur = [], []
        for ins in self.insts:
            if ins.addr in leaders and cur:
                blocks.append(cur)
                cur = []
            cur.append(ins)
        if cur:
            blocks.append(cur)
        self._starts = [b[0].addr for b in blocks]
        return blocks

    def _control(self, ins: Inst, i: int, nxt: int, target) -> int | None:
        ir = ins.row.ir
        if ir in ("BSSY", "BSYNC", "BREAK"):
            return nxt
        if ir == "CALL":
            tgt = self.c(target(ins))
        elif ir == "CALL.ABS":
            tgt = self.c(self._block_at(ins.ops["target"]["imm"], ins))
        elif ir == "BPT":
            # a trap ends the kernel on the machine; here it ends the invocation
            tgt = self.c(DONE)
        elif ir in ("RET", "RET.ABS"):
            # the return address (a byte offset from the code start) + the target field
            rt = ins.ops["rt"]["target"] if ir == "RET" else ins.ops["rt"]["imm"]
            ra = self.op("OpIAdd", self.u32, self.reg(ins.ops["ra"]["reg"]), self.c(rt))
            tgt = self.c(DONE)
            for k, start in enumerate(self._starts):
                tgt = self.op("OpSelect", self.u32, self.op("OpIEqual", self.bool, ra, self.c(start)), self.c(k), tgt)
        else:
            return super()._control(ins, i, nxt, target)
        if self._unconditional(ins):
            return tgt
        return self.op("OpSelect", self.u32, self._branch_guard(ins), tgt, nxt)

    # --- instructions -------------------------------------------------------------------------
    def lower(self, inst: Inst) -> None:  # noqa: C901
        ir, ops, mods = inst.row.ir, inst.ops, inst.mods
        d = ops.get("d", {}).get("reg", 255)
        dfile = ops.get("d", {}).get("file", "R")
        u32, u64, c = self.u32, self.u64, self.c

        def put(v: int) -> None:
            self.set_reg(d, v, dfile)

        if ir == "IADD3" and (mods["X"] or ops["co0"]["pred"] != 7 or ops["co1"]["pred"] != 7):
            self._iadd3_carry(inst)
        elif ir in ("BSSY", "BSYNC", "MEMBAR"):
            if ir == "MEMBAR":
                self._fence()
        elif ir == "LEA":
            self._lea(inst)
        elif ir == "IMAD.WIDE" and (mods["X"] or ops["co"]["pred"] != 7):
            conv = "OpUConvert" if mods["U32"] == 0 else "OpSConvert"
            p = self.op("OpIMul", u64, self.op(conv, u64, self.src(inst, "a")), self.op(conv, u64, self.src(inst, "b")))
            cc = self.src64(inst, "c")
            s = self.op("OpIAdd", u64, p, cc)
            out = self.op("OpULessThan", self.bool, s, cc)
            if mods["X"]:
                s2 = self.op("OpIAdd", u64, s, self._carry_in(inst, "ci"))
                out = self.op("OpLogicalOr", self.bool, out, self.op("OpULessThan", self.bool, s2, s))
                s = s2
            if ops["co"]["pred"] != 7:
                self.set_pred(ops["co"]["pred"], out)
            self.set64(d, s)
        elif ir == "IMAD" and mods["X"]:
            p = self.op("OpIMul", u32, self.src(inst, "a"), self.src(inst, "b"))
            s = self.op("OpIAdd", u32, self.op("OpIAdd", u32, p, self.src(inst, "c")),
                        self.op("OpUConvert", u32, self._carry_in(inst, "ci")))
            put(s)
        elif ir == "IMAD.HI":
            # the high half of IMAD.WIDE: (a * b + the pair c+1:c) >> 32, as the 32-bit division
            # sequence shows (IMAD.HI.U32 q, q, e, r with q = r+1's copy: q + hi(q * e)); the
            # 64-bit add's carry goes out, .X adds the carry-in
            self.require(inst, X=0)
            conv = "OpUConvert" if mods["U32"] == 0 else "OpSConvert"
            p = self.op("OpIMul", u64, self.op(conv, u64, self.src(inst, "a")), self.op(conv, u64, self.src(inst, "b")))
            cc = self.src64(inst, "c")
            s = self.op("OpIAdd", u64, p, cc)
            if ops["co"]["pred"] != 7:
                self.set_pred(ops["co"]["pred"], self.op("OpULessThan", self.bool, s, cc))
            put(self.op("OpUConvert", u32, self.op("OpShiftRightLogical", u64, s, self.c64(32))))
        elif ir == "ISETP" and mods["EX"]:
            # the high words of a 64-bit comparison: where they are equal the low words' result
            # (the ex predicate) decides (EQ: both equal; NE: either differs)
            a, b = self.src(inst, "a"), self.src(inst, "b")
            cmp, uns = mods["cmp"], mods["U32"] == 0
            ex = self.pred(ops["ex"]["pred"], ops["ex"]["not"])
            eq = self.op("OpIEqual", self.bool, a, b)
            if cmp in (1, 3, 4, 6):
                strict = self._icmp_op(1 if cmp in (1, 3) else 4, uns, a, b)
                r = self.op("OpLogicalOr", self.bool, strict, self.op("OpLogicalAnd", self.bool, eq, ex))
            elif cmp == 2:
                r = self.op("OpLogicalAnd", self.bool, eq, ex)
            elif cmp == 5:
                r = self.op("OpLogicalOr", self.bool, self.op("OpLogicalNot", self.bool, eq), ex)
            else:
                r = self.m.const_bool(cmp == 7)
            self._set_bop(inst, r)
        elif ir == "LDC":
            cb = ops["cb"]
            if mods["mode"] or mods["size"] not in (4, 5):
                raise TranslateError(f"{inst.text()}: LDC form not translated yet", offset=inst.addr)
            base = self.reg(cb["reg"]) if cb["reg"] != 255 else c(0)
            for k in range(1 if mods["size"] == 4 else 2):
                at = self.op("OpIAdd", u32, base, c(cb["off"] + 4 * k))
                self.set_reg(d + k if d != 255 else 255, self.cbank_dyn(cb["bank"], at, inst))
        elif ir == "R2UR":
            if ops["p"]["pred"] != 7:
                raise TranslateError(f"{inst.text()}: predicate out not translated", offset=inst.addr)
            self.set_reg(d, self.src(inst, "a"), "UR")
        elif ir == "PRMT":
            self.require(inst, mode=0)
            put(self._prmt(self.src(inst, "a"), self.src(inst, "b"), self.src(inst, "c")))
        elif ir == "SGXT":
            # extend the low b bits (b clamped to 32; .W: b modulo 32) with the sign or zeros
            self.require(inst, W=0)
            n = self.op("OpExtInst", u32, self.glsl, GLSL["UMin"], self.src(inst, "b"), c(32))
            ext = "OpBitFieldUExtract" if mods["U32"] == 0 else "OpBitFieldSExtract"
            put(self.op(ext, u32, self.src(inst, "a"), c(0), n))
        elif ir == "IABS":
            put(self.op("OpExtInst", u32, self.glsl, 5, self.src(inst, "b")))       # SAbs
        elif ir == "POPC":
            put(self.op("OpBitCount", u32, self.src(inst, "b")))
        elif ir == "BREV":
            put(self.op("OpBitReverse", u32, self.src(inst, "b")))
        elif ir == "FLO":
            if ops["pd"]["pred"] != 7:
                raise TranslateError(f"{inst.text()}: predicate out not supported", offset=inst.addr)
            put(self._flo(self.src(inst, "b"), mods["U32"] != 0, mods["SH"]))
        elif ir == "SHF":
            self._shf_any(inst, d)
        elif ir in ("DADD", "DMUL", "DFMA"):
            self.require(inst, rnd=0)
            a, b = self.f64src(inst, "a"), self.f64src(inst, "b")
            if ir == "DFMA":
                r = self._dfma(a, b, self.f64src(inst, "c"))
            else:
                r = self.fop("OpFAdd" if ir == "DADD" else "OpFMul", self.f64t, a, b)
            self.set64(d, self.op("OpBitcast", u64, r))
        elif ir == "DSETP":
            if mods["cmp"] in (0, 15):
                raise TranslateError(f"{inst.text()}: DSETP.MIN/MAX not translated (the second predicate's "
                                     f"NaN rule is not documented)", offset=inst.addr)
            self._set_bop(inst, self._fcmp(mods["cmp"], self.f64src(inst, "a"), self.f64src(inst, "b")))
        elif ir == "I2F" and inst.row.opcode & 0x1FF in (0x106, 0x112):
            self._i2f(inst, d)
        elif ir == "F2I" and inst.row.opcode & 0x1FF == 0x111:
            self._f2i64(inst, d)
        elif ir == "MUFU":
            self._mufu86(inst, put)
        elif ir == "CS2R":
            # one invocation is one thread: only the zero register pair has a meaning here
            if inst.ops["sr"]["sr"] != 0xFF:
                raise TranslateError(f"{inst.text()}: special register pair not translated", offset=inst.addr)
            for k in range(2 if inst.mods["w32"] else 1):
                if d != 255:
                    self.set_reg(d + k, c(0))
        elif ir == "FRND":
            self._frnd(inst, d)
        elif ir == "F2F":
            self._f2f86(inst, d)
        elif ir in ("LDS", "STS"):
            self._lds_sts(inst)
        elif inst.row.mnemonic in ("LD", "ST", "ATOM"):
            self._generic(inst, put)
        elif ir in ("LDG", "STG") and mods["size"] in (4, 5, 6):
            self._wide_global(inst)
        elif ir in ("ATOMG", "ATOMG.CAS", "RED"):
            self._atomic86(inst, put)
        elif ir == "BAR":
            # .DEFER_BLOCKING is __syncthreads on Volta+ (the same workgroup barrier here)
            if ops["id"]["imm"] != 0:
                raise TranslateError(f"{inst.text()}: barriers other than BAR.SYNC 0x0 not translated", offset=inst.addr)
            self._barrier()
        elif ir == "SHFL":
            self._shfl86(inst)
        elif ir == "VOTE":
            self._vote86(inst)
        elif ir == "S2R" and ops["sr"]["sr"] == 0x00:      # lane id in the emulated warp
            put(self.op("OpBitwiseAnd", u32, self._lid(), c(31)))
        elif ir == "S2R" and ops["sr"]["sr"] == 0x37:
            # the local window's low end: 0 (local addresses wrap in the 4 KiB array), so the
            # stack check of -G code (R1 >= SR_LMEMHIOFF, unsigned) always passes
            put(c(0))
        elif ir in ("LDL", "STL"):
            self._local86(inst)
        else:
            super().lower(inst)

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

    # --- integer ------------------------------------------------------------------------------
    def _term64(self, inst: Inst, name: str, x_mode: bool) -> int:
        """An IADD3/LEA operand as u64 for a carry-exact sum: -x is ~x + 1 (without .X) or ~x."""
        v = inst.ops[name]
        raw = dict(v)
        if v.get("neg"):
            raw["neg"] = False
        val = self._plain(inst, name, raw)
        if v.get("neg"):
            val = self.op("OpNot", self.u32, val)
        t = self.op("OpUConvert", self.u64, val)
        if v.get("neg") and not x_mode:
            t = self.op("OpIAdd", self.u64, t, self.c64(1))
        return t

    def _plain(self, inst: Inst, name: str, v: dict) -> int:
        if "imm" in v:
            return self.c(v["imm"])
        if "bank" in v:
            return self.cbank_word(v["off"], v["bank"], inst)
        return self.reg(v["reg"], v.get("file", "R"))

    def _carry_in(self, inst: Inst, name: str) -> int:
        p = inst.ops[name]
        return self.op("OpSelect", self.u64, self.pred(p["pred"], p["not"]), self.c64(1), self.c64(0))

    def _iadd3_carry(self, inst: Inst) -> None:
        x = bool(inst.mods["X"])
        s = self._term64(inst, "a", x)
        for n in ("b", "c"):
            s = self.op("OpIAdd", self.u64, s, self._term64(inst, n, x))
        if x:
            s = self.op("OpIAdd", self.u64, s, self._carry_in(inst, "ci0"))
            s = self.op("OpIAdd", self.u64, s, self._carry_in(inst, "ci1"))
        self._carry_out(inst, s, ("co0", "co1"))
        self.set_reg(inst.ops["d"]["reg"], self.op("OpUConvert", self.u32, s), inst.ops["d"].get("file", "R"))

    def _carry_out(self, inst: Inst, s: int, names: tuple[str, ...]) -> None:
        t = self.op("OpShiftRightLogical", self.u64, s, self.c64(32))
        for k, n in enumerate(names):
            p = inst.ops[n]["pred"]
            if p != 7:
                self.set_pred(p, self.op("OpUGreaterThanEqual", self.bool, t, self.c64(k + 1)))

    def _lea(self, inst: Inst) -> None:
        """LEA: (a << s) + b; LEA.HI: high word of (hi:a) << s, plus b; .X adds the carry-in."""
        ops, mods = inst.ops, inst.mods
        u32, u64 = self.u32, self.u64
        x = bool(mods["X"])
        sh = ops["s"]["imm"]
        a = self.src(inst, "a")         # -a / ~a applied
        if mods["HI"]:
            hi = self.op("OpShiftRightArithmetic", u32, a, self.c(31)) if mods["SX32"] else self.src(inst, "c")
            v = self.join64(a, hi)
            shifted = self.op("OpUConvert", u32, self.op("OpShiftRightLogical", u64, self.op(
                "OpShiftLeftLogical", u64, v, self.c64(sh)), self.c64(32)))
        else:
            shifted = self.op("OpShiftLeftLogical", u32, a, self.c(sh))
        s = self.op("OpIAdd", u64, self.op("OpUConvert", u64, shifted), self._term64(inst, "b", x))
        if x:
            s = self.op("OpIAdd", u64, s, self._carry_in(inst, "ci"))
        self._carry_out(inst, s, ("co",))
        self.set_reg(ops["d"]["reg"], self.op("OpUConvert", u32, s))

    def _shf_any(self, inst: Inst, d: int) -> None:
        """SHF of the pair (c:a) (c high) by b: .L keeps the low or (.HI) high word of the left
        shift, .R of the right shift (arithmetic for .S32/.S64).  The count wraps (.W: modulo 32
        for 32-bit types, 64 for 64-bit ones) or clamps (32 / 64)."""
        mods = inst.mods
        u32, u64, c = self.u32, self.u64, self.c
        t = mods["type"]                     # 0 S64, 1 U64, 2 S32, 3 U32
        wide = t in (0, 1)
        v = self.join64(self.src(inst, "a"), self.src(inst, "c"))
        s = self.src(inst, "b")
        lim = 64 if wide else 32
        s = self.op("OpBitwiseAnd", u32, s, c(lim - 1)) if mods["W"] else \
            self.op("OpExtInst", u32, self.glsl, GLSL["UMin"], s, c(lim))
        big = self.op("OpUGreaterThanEqual", self.bool, s, c(64))
        s64 = self.op("OpUConvert", u64, self.op("OpExtInst", u32, self.glsl, GLSL["UMin"], s, c(63)))
        signed = t in (0, 2)
        if mods["dir"] == 0:
            r = self.op("OpShiftLeftLogical", u64, v, s64)
            r = self.op("OpSelect", u64, big, self.c64(0), r)
        elif signed:                         # a shift by 64 leaves the sign, as a shift by 63 does
            r = self.op("OpShiftRightArithmetic", u64, v, s64)
        else:
            r = self.op("OpSelect", u64, big, self.c64(0), self.op("OpShiftRightLogical", u64, v, s64))
        if mods["HI"]:
            r = self.op("OpShiftRightLogical", u64, r, self.c64(32))
        self.set_reg(d, self.op("OpUConvert", u32, r))

    # --- FP64 and conversions -----------------------------------------------------------------
    def f64src(self, inst: Inst, name: str) -> int:
        v = inst.ops[name]
        if "imm" in v:
            bits = v["imm"] << 32
            val = self.m.const(self.f64t, bits & 0xFFFFFFFF, bits >> 32)
        else:
            raw = dict(v, neg=False, abs=False)
            inst2 = inst
            if "bank" in v:
                lo, hi = self.cbank_word(v["off"], v["bank"], inst2), self.cbank_word(v["off"] + 4, v["bank"], inst2)
            elif v["reg"] == 255:
                lo = hi = self.c(0)
            else:
                lo, hi = self.reg(raw["reg"]), self.reg(raw["reg"] + 1)
            val = self.op("OpBitcast", self.f64t, self.join64(lo, hi))
        if v.get("abs"):
            val = self.op("OpExtInst", self.f64t, self.glsl, GLSL["FAbs"], val)
        if v.get("neg"):
            val = self.op("OpFNegate", self.f64t, val)
        return val

    def _int_src(self, inst: Inst, signed: bool, size: int) -> tuple[int, bool]:
        """The integer source of I2F as (value, is64): 8/16-bit sources are extended."""
        if size == 3:
            v = inst.ops["b"]
            lo = self._plain(inst, "b", v)
            hi = self.reg(v["reg"] + 1) if "reg" in v and v["reg"] != 255 else self.c(0)
            return self.join64(lo, hi), True
        x = self.src(inst, "b")
        if size in (0, 1):
            w = 8 if size == 0 else 16
            x = self.op("OpBitFieldSExtract" if signed else "OpBitFieldUExtract", self.u32, x, self.c(0), self.c(w))
        return x, False

    def _i2f(self, inst: Inst, d: int) -> None:
        mods = inst.mods
        size = (inst.row.base >> 84) & 3
        signed = bool((inst.row.base >> 74) & 1)
        if mods["dst"] == 1:
            raise TranslateError(f"{inst.text()}: F16 results not translated yet", offset=inst.addr)
        x, is64 = self._int_src(inst, signed, size)
        conv = "OpConvertSToF" if signed else "OpConvertUToF"
        rnd = mods["rnd"]
        if mods["dst"] == 3:                                  # F64
            if rnd and is64:
                raise TranslateError(f"{inst.text()}: directed rounding of a 64-bit integer to F64 not translated",
                                     offset=inst.addr)
            self.set64(d, self.op("OpBitcast", self.u64, self.op(conv, self.f64t, x)))
            return
        f = self.op(conv, self.f32, x)
        if rnd:
            f = self._directed(inst, f, x, signed, is64, rnd)
        self.set_reg(d, self.op("OpBitcast", self.u32, f))

    def _f2i64(self, inst: Inst, d: int) -> None:
        """F2I from F32 or F64 to 32- or 64-bit integers: rounded as the modifier says, saturated,
        NaN -> 0."""
        mods = inst.mods
        self.require(inst, FTZ=0)
        signed = bool((inst.row.base >> 72) & 1)
        src64 = mods["src"] == 3
        ty = self.f64t if src64 else self.f32
        if src64:
            x = self.f64src(inst, "b")
        else:
            x = self.op("OpBitcast", self.f32, self.src(inst, "b", True))
        x = self.op("OpExtInst", ty, self.glsl, GLSL[("RoundEven", "Floor", "Ceil", "Trunc")[mods["rnd"]]], x)
        x = self.op("OpFConvert", self.f64t, x) if not src64 else x
        wide = mods["size"] == 3
        bits = 64 if wide else 32
        lo = -(2.0 ** (bits - 1)) if signed else 0.0
        top = 2.0 ** (bits - 1) if signed else 2.0 ** bits
        f64c = lambda v: self.m.const(self.f64t, *struct.unpack("<II", struct.pack("<d", v)))  # noqa: E731
        ity = self.u64 if wide else self.u32
        sat_hi = ((1 << (bits - 1)) - 1) if signed else (1 << bits) - 1
        sat_lo = (1 << (bits - 1)) if signed else 0
        cst = (lambda v: self.c64(v)) if wide else (lambda v: self.c(v))
        safe = self.op("OpExtInst", self.f64t, self.glsl, GLSL["NMax"], x, f64c(lo))
        safe = self.op("OpSelect", self.f64t, self.op("OpFOrdGreaterThanEqual", self.bool, safe, f64c(top)), f64c(lo), safe)
        v = self.op("OpConvertFToS" if signed else "OpConvertFToU", ity, safe)
        v = self.op("OpSelect", ity, self.op("OpFOrdGreaterThanEqual", self.bool, x, f64c(top)), cst(sat_hi), v)
        v = self.op("OpSelect", ity, self.op("OpFOrdLessThan", self.bool, x, f64c(lo)), cst(sat_lo), v)
        v = self.op("OpSelect", ity, self.op("OpIsNan", self.bool, x), cst(0), v)
        if wide:
            self.set64(d, v)
        else:
            self.set_reg(d, v)

    def _mufu86(self, inst: Inst, put) -> None:
        """MUFU: the approximate unit, as the device's GLSL functions (accuracy is the device's:
        the corpus compares these within an ulp bound).  SIN/COS take turns (x * 2 pi), as on
        Volta+, where the compiler scales by 1/(2 pi) first."""
        o = inst.mods["op"]
        f32 = self.f32
        if o in (6, 7):
            put(self._mufu64h(o, self.src(inst, "b", True)))
            return
        x = self.op("OpBitcast", f32, self.src(inst, "b", True))
        if o in (0, 1):
            t = self.fop("OpFMul", f32, x, self.m.const(f32, _f(6.283185307179586)))
            r = self.op("OpExtInst", f32, self.glsl, 14 if o == 0 else 13, t)
        elif o == 2:
            r = self.op("OpExtInst", f32, self.glsl, 29, x)
        elif o == 3:
            r = self.op("OpExtInst", f32, self.glsl, 30, x)
        elif o == 4:
            r = self.fop("OpFDiv", f32, self.m.const(f32, _f(1.0)), x)
        elif o == 5:
            r = self.op("OpExtInst", f32, self.glsl, 32, x)
        elif o == 8:
            r = self.op("OpExtInst", f32, self.glsl, 31, x)
        else:
            raise TranslateError(f"{inst.text()}: MUFU function not translated", offset=inst.addr)
        put(self.op("OpBitcast", self.u32, r))

    def _frnd(self, inst: Inst, d: int) -> None:
        """FRND: to an integral value, nearest-even / floor / ceil / trunc, F32 or F64."""
        fn = {0: 2, 1: 8, 2: 9, 3: 3}[inst.mods["rnd"]]          # GLSL RoundEven, Floor, Ceil, Trunc
        if "f64" in inst.mods:
            self.require(inst, FTZ=0)
            self.set64(d, self.op("OpBitcast", self.u64, self.op("OpExtInst", self.f64t, self.glsl, fn,
                                                                  self.f64src(inst, "b"))))
            return
        x = self._ftz32(self.op("OpBitcast", self.f32, self.src(inst, "b", True)), inst.mods["FTZ"])
        self.set_reg(d, self.op("OpBitcast", self.u32, self.op("OpExtInst", self.f32, self.glsl, fn, x)))

    def _f2f86(self, inst: Inst, d: int) -> None:
        """F2F between F32 and F64: widening is exact; narrowing rounds to nearest even (OpFConvert
        is correctly rounded in Vulkan); directed narrowing is refused."""
        self.require(inst, FTZ=0)
        if inst.row.base >> 84 & 1:                          # .F32.F64
            self.require(inst, rnd=0)
            f = self.op("OpFConvert", self.f32, self.f64src(inst, "b"))
            self.set_reg(d, self.op("OpBitcast", self.u32, f))
        else:
            x = self.op("OpBitcast", self.f32, self.src(inst, "b", True))
            self.set64(d, self.op("OpBitcast", self.u64, self.op("OpFConvert", self.f64t, x)))

    # --- memory -------------------------------------------------------------------------------
    def _smem_addr(self, inst: Inst) -> int:
        a = inst.ops["addr"]
        base = self.reg(a["reg"]) if a["reg"] != 255 else self.c(0)
        if a["scale"]:
            base = self.op("OpIMul", self.u32, base, self.c((1, 4, 8, 16)[a["scale"]]))
        return self.op("OpIAdd", self.u32, base, self.c(a["off"]))

    def _lds_sts(self, inst: Inst) -> None:
        n = SIZES.get(inst.mods["size"])
        if n is None:
            raise TranslateError(f"{inst.text()}: sub-word shared access not translated yet", offset=inst.addr)
        addr = self._smem_addr(inst)
        reg = inst.ops["d"]["reg"] if inst.row.ir == "LDS" else inst.ops["b"]["reg"]
        for i in range(n):
            p = self.shared_word(self.op("OpIAdd", self.u32, addr, self.c(4 * i)))
            if inst.row.ir == "LDS":
                if reg != 255:
                    self.set_reg(reg + i, self.op("OpLoad", self.u32, p))
            else:
                self.do("OpStore", p, self.reg(reg + i) if reg != 255 else self.c(0))

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
        n = SIZES[inst.mods["size"]]
        a = inst.ops["addr"]
        base = self.join64(self.reg(a["reg"]), self.reg(a["reg"] + 1)) if a["reg"] != 255 else self.c64(0)
        reg = inst.ops["d"]["reg"] if inst.row.ir == "LDG" else inst.ops["b"]["reg"]
        for i in range(n):
            ptr = self.op("OpConvertUToPtr", self.psb_ptr, self.op("OpIAdd", self.u64, base, self.c64(a["off"] + 4 * i)))
            if inst.row.ir == "LDG":
                if reg != 255:
                    self.set_reg(reg + i, self.op("OpLoad", self.u32, ptr, self.m.E("MemoryAccess", "Aligned"), 4))
            else:
                self.do("OpStore", ptr, self.reg(reg + i) if reg != 255 else self.c(0),
                        self.m.E("MemoryAccess", "Aligned"), 4)

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


def translate_compute(insts: list[Inst], spec: ComputeSpec = ComputeSpec()) -> bytes:
    """SPIR-V binary of an SM86 compute kernel: the base lowering (``to_spirv._Lower``) with the
    forms of this module."""
    return Ext86(insts, spec).build()
