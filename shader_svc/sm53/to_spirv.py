"""Translate a decoded SM53 (Maxwell) compute kernel into a SPIR-V compute shader.

The structure is the SM86 lowering's (``sm86.to_spirv``, whose register/predicate/constant-bank
helpers and exactly rounded FFMA this reuses): registers are function variables, the CFG a
dispatcher loop.  Maxwell adds:
- the condition-code carry (``.CC`` writes it, ``.X`` reads it: IADD, IADD3, XMAD, SHL/SHR.X
  are 64-bit arithmetic split in two), kept in a boolean variable;
- XMAD, the 16x16-bit multiply-add ptxas builds 32-bit multiplies from;
- the reconvergence stack: SSY/PBK push a target, SYNC/BRK pop and jump there, CAL pushes its
  return point and RET pops it.  Each invocation runs alone in SPIR-V, so a per-invocation
  stack (64 entries, typed: SYNC/BRK/RET unwind to their own kind) gives exactly the single-thread semantics;
- constant bank 0 as the driver fills it for SM5x: block size at 0x8, grid size at 0x14, kernel
  parameters at 0x140.
Warp-wide operations (VOTE, SHFL) assume 32 lanes while lavapipe's subgroups have 8: they run
on an emulated 32-lane warp (see ``_shfl_warp``), without subgroup operations.  Shared memory is a workgroup
array of 32 KiB (lavapipe's limit); BAR.SYNC is a workgroup control barrier, which needs the
barrier to be reached by every invocation on the same path, as on the hardware.
"""
from __future__ import annotations

import struct

from shader_svc.sm53.decode import Inst
from shader_svc.sm86.to_spirv import DONE, GLSL, ComputeSpec, TranslateError, _Lower  # noqa: F401
from shader_svc.spirv.structure import RET, Unstructured

__all__ = ["ComputeSpec", "TranslateError", "translate_compute", "cbank0", "PARAMS"]

PARAMS = 0x140
SHARED_WINDOW = 0xFF000000    # generic base of shared memory (cbank0's word 0x0); 16 MiB below 4 GiB
STACK = 64                  # entries of the emulated reconvergence stack (the machine spills its own to memory)
ENTRY_KIND = {"SSY": 1, "SYNC": 1, "PBK": 2, "BRK": 2, "CAL": 3, "JCAL": 3, "RET": 3}   # run-time stack entries' kinds
BRANCHES = {"BRA", "SSY", "PBK", "CAL", "JCAL", "SYNC", "BRK", "RET", "EXIT", "BPT"}
LOWERED = {"MOV", "S2R", "NOP", "IADD", "IADD3", "ISCADD", "XMAD", "SHL", "SHR", "SHF", "LOP", "LOP3", "ISETP",
           "ICMP", "PSETP", "IMNMX", "SEL", "BFE", "BFI", "PRMT", "POPC", "FLO", "FADD", "FMUL", "FFMA", "FMNMX",
           "FSETP", "I2F", "F2I", "F2F", "MUFU", "RRO", "LDG", "STG", "LDS", "STS", "ATOMS", "ATOM", "ATOM_CAS",
           "RED", "BAR", "VOTE", "SHFL", "LDL", "STL", "LDC", "LEA", "LEA_HI", "I2I", "IMUL", "DADD", "DMUL", "DFMA",
           "DSETP", "LD", "ST", "BPT", "IMAD"} | BRANCHES
ATOMIC_OPS = {0: "OpAtomicIAdd", 1: ("OpAtomicUMin", "OpAtomicSMin"), 2: ("OpAtomicUMax", "OpAtomicSMax"),
              5: "OpAtomicAnd", 6: "OpAtomicOr", 7: "OpAtomicXor", 8: "OpAtomicExchange"}
WARP = {"VOTE", "SHFL"}
STRUCT_ENDS = ("BRA", "EXIT", "SYNC", "BRK", "RET", "BPT")


def cbank0(size: int, block: tuple[int, int, int], grid: tuple[int, int, int], params: bytes) -> bytes:
    """Constant bank 0 as the CUDA driver fills it for SM5x: block dims at 0x8, grid dims at
    0x14, kernel parameters at 0x140; at 0x0 the shared window's 32-bit generic base (ptxas
    makes a shared variable's generic address as c[0x0][0x0] + offset with a high word of 0):
    ``SHARED_WINDOW``, an address no host allocation of the GPU process may take (**the GPU
    process must write the same**)."""
    img = bytearray(max(size, PARAMS + len(params)))
    struct.pack_into("<I", img, 0x0, SHARED_WINDOW)
    struct.pack_into("<3I", img, 0x8, *block)
    struct.pack_into("<3I", img, 0x14, *grid)
    img[PARAMS:PARAMS + len(params)] = params
    return bytes(img)


def _entry_addr(t: int, base: int = 0) -> int:
    """A branch to a group's control word resumes at the group's first instruction (groups
    count from the code's start ``base``: graphics code starts after its header)."""
    return t + 8 if (t - base) % 32 == 0 else t


def _code_base(insts: list[Inst]) -> int:
    return insts[0].addr - 8 if insts else 0


def _target(ins: Inst, base: int) -> int:
    """Where a branch goes: relative targets are decoded as addresses; JCAL's is an offset from
    the code's start (the linked program's first byte)."""
    if ins.row.ir == "JCAL":
        return _entry_addr(base + ins.ops["t"]["imm"], base)
    return _entry_addr(ins.ops["t"]["target"], base)


def _blocks(insts: list[Inst]) -> list[list[Inst]]:
    leaders = {insts[0].addr} if insts else set()
    base = _code_base(insts)
    for i, ins in enumerate(insts):
        ir = ins.row.ir
        if ir in ("BRA", "EXIT", "SYNC", "BRK", "RET", "CAL", "JCAL", "KIL", "BPT") and i + 1 < len(insts):
            leaders.add(insts[i + 1].addr)
        if ir in ("BRA", "SSY", "PBK", "CAL", "JCAL"):
            leaders.add(_target(ins, base))
    blocks, cur = [], []
    for ins in insts:
        if ins.addr in leaders and cur:
            blocks.append(cur)
            cur = []
        cur.append(ins)
    if cur:
        blocks.append(cur)
    return blocks


class _Lower53(_Lower):
    def __init__(self, insts, spec) -> None:
        super().__init__(insts, spec)

    def lowered(self, ir: str) -> bool:
        return ir in LOWERED

    # --- operands ---------------------------------------------------------------------------
    def val(self, inst: Inst, name: str, fp: bool = False) -> int:
        """A source operand as u32 with its neg/abs/inv applied."""
        v = inst.ops[name]
        if "imm" in v:
            x = v["imm"]
            if fp and (v.get("neg") or v.get("abs")):
                x = (x & 0x7FFFFFFF if v.get("abs") else x) ^ (0x80000000 if v.get("neg") else 0)
            elif v.get("inv"):
                x = ~x
            return self.c(x)
        if "bank" in v:
            r = self.cbank_word(v["off"], v["bank"], inst)
        else:
            r = self.reg(v["reg"])
        if v.get("h1") and not fp:
            r = self.op("OpShiftRightLogical", self.u32, r, self.c(16))
        if v.get("inv"):
            r = self.op("OpNot", self.u32, r)
        if fp and (v.get("abs") or v.get("neg")):
            f = self.op("OpBitcast", self.f32, r)
            if v.get("abs"):
                f = self.op("OpExtInst", self.f32, self.glsl, GLSL["FAbs"], f)
            if v.get("neg"):
                f = self.op("OpFNegate", self.f32, f)
            r = self.op("OpBitcast", self.u32, f)
        elif v.get("neg"):
            r = self.op("OpSNegate", self.u32, r)
        elif v.get("abs"):
            raise TranslateError(f"{inst.text()}: integer |x| not supported", offset=inst.addr)
        return r

    def fval(self, inst: Inst, name: str) -> int:
        return self.op("OpBitcast", self.f32, self.val(inst, name, True))

    def pv(self, v: dict) -> int:
        return self.pred(v["pred"], v["not"])

    def carry(self) -> int:
        return self.op("OpLoad", self.bool, self.var("CC", self.fn_bool))

    def set_carry(self, v: int) -> None:
        self.do("OpStore", self.var("CC", self.fn_bool), v)

    def add_cc(self, inst: Inst, terms: list[int], x: bool, cc: bool) -> int:
        """Sum of 32-bit terms (+ carry-in with .X) with the carry-out written when .CC."""
        if not cc:
            s = terms[0]
            for t in terms[1:] + ([self.op("OpSelect", self.u32, self.carry(), self.c(1), self.c(0))] if x else []):
                s = self.op("OpIAdd", self.u32, s, t)
            return s
        s = self.op("OpUConvert", self.u64, terms[0])
        for t in terms[1:] + ([self.op("OpSelect", self.u32, self.carry(), self.c(1), self.c(0))] if x else []):
            s = self.op("OpIAdd", self.u64, s, self.op("OpUConvert", self.u64, t))
        self.set_carry(self.op("OpINotEqual", self.bool, self.op("OpShiftRightLogical", self.u64, s, self.c64(32)),
                               self.c64(0)))
        r = self.op("OpUConvert", self.u32, s)
        self.set_zero(r, x)
        return r

    def set_zero(self, r: int, x: bool) -> None:
        """The condition code's zero flag: the result is 0 (with .X: and the flag was already
        set, so a 64-bit chain's flag says the whole value is 0)."""
        z = self.op("OpIEqual", self.bool, r, self.c(0))
        if x:
            z = self.op("OpLogicalAnd", self.bool, z, self.op("OpLoad", self.bool, self.var("CCZ", self.fn_bool)))
        self.do("OpStore", self.var("CCZ", self.fn_bool), z)

    def need(self, inst: Inst, **mods: int) -> None:
        for k, want in mods.items():
            if inst.mods.get(k, want) != want:
                raise TranslateError(f"{inst.text()}: modifier {k} not translated yet", offset=inst.addr)

    def bad(self, inst: Inst, why: str = "not translated yet"):
        raise TranslateError(f"{inst.text()}: {why}", offset=inst.addr)

    # --- instructions -----------------------------------------------------------------------
    def lower(self, inst: Inst) -> None:  # noqa: C901  (one switch over the IR keys, as in sm86)
        ir, ops, mods = inst.row.ir, inst.ops, inst.mods
        dv = ops.get("d", {})
        d = dv.get("reg", 255)
        cc = bool(dv.get("cc"))

        def put(val: int) -> None:
            self.set_reg(d, val)

        u32, c = self.u32, self.c
        if ir == "NOP":
            return
        if ir == "SHFL":
            self._shfl(inst)
            return
        if ir == "VOTE":
            self._vote(inst)
            return
        if ir == "MOV":
            put(self.val(inst, "b"))
        elif ir == "S2R":
            names = {0x21: ("LocalInvocationId", 0), 0x22: ("LocalInvocationId", 1), 0x23: ("LocalInvocationId", 2),
                     0x25: ("WorkgroupId", 0), 0x26: ("WorkgroupId", 1), 0x27: ("WorkgroupId", 2)}
            sr = ops["sr"]["sr"]
            if sr in (0x00, 0x39):          # lane id / lanes below this one, in the emulated warp
                lane = self.op("OpBitwiseAnd", u32, self._lid(), c(31))
                put(lane if sr == 0 else self.op("OpISub", u32, self.op("OpShiftLeftLogical", u32, c(1), lane), c(1)))
                return
            if sr == 0x37:
                # the local window's low end: 0 (local addresses wrap in the per-invocation
                # array), so -G code's stack check (R1 >= SR_LMEMHIOFF, unsigned) passes
                put(c(0))
                return
            if sr not in names:
                self.bad(inst, "special register not translated yet")
            bi, comp = names[sr]
            put(self.op("OpCompositeExtract", u32, self.op("OpLoad", self.v3, self.builtins[bi]), comp))
        elif ir == "IADD":
            self.need(inst, SAT=0)
            if (ops["a"].get("neg") or ops["b"].get("neg")) and (cc or mods.get("X")):
                put(self._iadd_neg_carry(inst, cc))
            else:
                a, b = self.val(inst, "a"), self.val(inst, "b")
                put(self.add_cc(inst, [a, b], bool(mods.get("X")), cc))
        elif ir == "IADD3":
            t = [self.val(inst, n) for n in ("a", "b", "c")]
            if any(ops[n].get("neg") for n in ("a", "b", "c")) and (cc or mods.get("X")):
                self.bad(inst, "negated operand with carry not translated yet")
            if mods.get("mode", 0):     # .RS / .LS: the 33-bit a + b shifted by 16, then + c
                if cc or mods.get("X"):
                    self.bad(inst, "IADD3 shift mode with carry not translated yet")
                u64 = self.u64
                ab = self.op("OpIAdd", u64, self.op("OpUConvert", u64, t[0]), self.op("OpUConvert", u64, t[1]))
                sh = "OpShiftRightLogical" if mods["mode"] == 1 else "OpShiftLeftLogical"
                put(self.op("OpIAdd", u32, self.op("OpUConvert", u32, self.op(sh, u64, ab, self.c64(16))), t[2]))
            else:
                put(self.add_cc(inst, t, bool(mods.get("X")), cc))
        elif ir == "ISCADD":
            a = self.op("OpShiftLeftLogical", u32, self.val(inst, "a"), c(ops["s"]["imm"]))
            if ops["a"].get("neg") and cc:
                self.bad(inst, "negated operand with carry not translated yet")
            put(self.add_cc(inst, [a, self.val(inst, "b")], False, cc))
        elif ir == "XMAD":
            put(self._xmad(inst, cc))
        elif ir in ("SHL", "SHR"):
            self._shift(inst, put)
        elif ir == "SHF":
            put(self._shf53(inst))
        elif ir == "LOP":
            self.need(inst, X=0)
            a, b = self.val(inst, "a"), self.val(inst, "b")
            r = {0: lambda: self.op("OpBitwiseAnd", u32, a, b), 1: lambda: self.op("OpBitwiseOr", u32, a, b),
                 2: lambda: self.op("OpBitwiseXor", u32, a, b), 3: lambda: b}[mods["op"]]()
            put(r)
            self._pop_pred(inst, r)
        elif ir == "LOP3":
            self.need(inst, X=0)
            r = self._lut(ops["lut"]["imm"], self.val(inst, "a"), self.val(inst, "b"), self.val(inst, "c"), u32,
                          "OpBitwiseAnd", "OpBitwiseOr", "OpNot", c(0))
            put(r)
            self._pop_pred(inst, r)
        elif ir == "ISETP" and mods.get("X"):
            self._setp(inst, self._isetp_x(inst))
        elif ir == "ISETP":
            self._setp(inst, self._icmp(inst, self.val(inst, "a"), self.val(inst, "b")))
        elif ir == "ICMP":
            z = self._icmp(inst, self.val(inst, "c"), c(0))
            put(self.op("OpSelect", u32, z, self.val(inst, "a"), self.val(inst, "b")))
        elif ir == "PSETP":
            bop = {0: "OpLogicalAnd", 1: "OpLogicalOr", 2: "OpLogicalNotEqual"}
            ab = self.op(bop[mods["bop1"]], self.bool, self.pv(ops["pa"]), self.pv(ops["pb"]))
            pc = self.pv(ops["pc"])
            self.set_pred(ops["pd"]["pred"], self.op(bop[mods["bop2"]], self.bool, ab, pc))
            if ops["qd"]["pred"] != 7:
                nab = self.op("OpLogicalNot", self.bool, ab)
                self.set_pred(ops["qd"]["pred"], self.op(bop[mods["bop2"]], self.bool, nab, pc))
        elif ir == "IMNMX":
            self.need(inst, xm=0)
            u = mods["u32"] == 0
            lo = self.op("OpExtInst", u32, self.glsl, GLSL["UMin" if u else "SMin"], self.val(inst, "a"),
                         self.val(inst, "b"))
            hi = self.op("OpExtInst", u32, self.glsl, GLSL["UMax" if u else "SMax"], self.val(inst, "a"),
                         self.val(inst, "b"))
            put(self.op("OpSelect", u32, self.pv(ops["pc"]), lo, hi))
        elif ir == "SEL":
            put(self.op("OpSelect", u32, self.pv(ops["pc"]), self.val(inst, "a"), self.val(inst, "b")))
        elif ir == "BFE":
            a = self.val(inst, "a")
            if mods["BREV"]:            # the source bit-reversed before the extraction (__brev)
                a = self.op("OpBitReverse", u32, a)
            put(self._bfe(a, self.val(inst, "b"), mods["u32"] == 1))
        elif ir == "BFI":
            put(self._bfi(self.val(inst, "a"), self.val(inst, "b"), self.val(inst, "c")))
        elif ir == "PRMT":
            self.need(inst, mode=0)
            put(self._prmt(self.val(inst, "a"), self.val(inst, "b"), self.val(inst, "c")))
        elif ir == "POPC":
            put(self.op("OpBitCount", u32, self.val(inst, "b")))
        elif ir == "FLO":
            put(self._flo(self.val(inst, "b"), mods["u32"] != 0, mods["SH"]))
        elif ir in ("FFMA", "FMUL", "FADD"):
            self.need(inst, rnd=0, scale=0)
            if cc:
                self.bad(inst, "condition code from FP not translated yet")
            ftz = mods.get("ftz", mods.get("FTZ", 0))
            if ftz == 2:
                self.bad(inst, ".FMZ not translated yet")
            a, b = self._ftz32(self.fval(inst, "a"), ftz), self._ftz32(self.fval(inst, "b"), ftz)
            if ir == "FFMA":
                r = self._fma(a, b, self._ftz32(self.fval(inst, "c"), ftz))
            else:
                r = self.fop("OpFMul" if ir == "FMUL" else "OpFAdd", self.f32, a, b)
            r = self._ftz32(r, ftz)
            if mods.get("SAT", 0):
                r = self._sat32(r)
            put(self.op("OpBitcast", u32, r))
        elif ir == "FMNMX":
            self.need(inst, FTZ=0)
            a, b = self.fval(inst, "a"), self.fval(inst, "b")
            put(self.op("OpBitcast", u32, self._fminmax(a, b, self.pv(ops["pc"]))))
        elif ir == "FSETP":
            self.need(inst, FTZ=0)
            self._setp(inst, self._fcmp(mods["cmp"], self.fval(inst, "a"), self.fval(inst, "b")))
        elif ir == "I2F":
            self._i2f53(inst, d)
        elif ir == "IMUL":
            if cc:
                self.bad(inst, "IMUL with the condition code not translated yet")
            sa, sb = mods["sign"] & 1, mods["sign"] >> 1
            u64 = self.u64
            a = self.op("OpSConvert" if sa else "OpUConvert", u64, self.val(inst, "a"))
            b = self.op("OpSConvert" if sb else "OpUConvert", u64, self.val(inst, "b"))
            p = self.op("OpIMul", u64, a, b)
            if mods["HI"]:
                p = self.op("OpShiftRightLogical", u64, p, self.c64(32))
            put(self.op("OpUConvert", u32, p))
        elif ir == "IMAD":
            # the low (or .HI high) word of the 64-bit product, plus c (+ the carry with .X);
            # .CC takes the carry out of that 32-bit sum, as -G's 64-bit multiply chains need
            self.need(inst, SAT=0)
            if ops["a"].get("neg") or ops["c"].get("neg"):
                self.bad(inst, "IMAD with a negated operand not translated yet")
            sa, sb = mods["sign"] & 1, mods["sign"] >> 1
            u64 = self.u64
            p = self.op("OpIMul", u64, self.op("OpSConvert" if sa else "OpUConvert", u64, self.val(inst, "a")),
                        self.op("OpSConvert" if sb else "OpUConvert", u64, self.val(inst, "b")))
            if mods["HI"]:
                p = self.op("OpShiftRightLogical", u64, p, self.c64(32))
            put(self.add_cc(inst, [self.op("OpUConvert", u32, p), self.val(inst, "c")], bool(mods["X"]), cc))
        elif ir in ("LEA", "LEA_HI"):
            self._lea53(inst, put, cc)
        elif ir == "I2I":
            put(self._i2i(inst))
        elif ir in ("DADD", "DMUL", "DFMA"):
            self.need(inst, rnd=0)
            a, b = self.dval(inst, "a"), self.dval(inst, "b")
            if ir == "DFMA":
                r = self._dfma(a, b, self.dval(inst, "c"))
            else:
                r = self.fop("OpFAdd" if ir == "DADD" else "OpFMul", self.f64t, a, b)
            self.set64(d, self.op("OpBitcast", self.u64, r))
        elif ir == "DSETP":
            self._setp(inst, self._fcmp(mods["cmp"], self.dval(inst, "a"), self.dval(inst, "b")))
        elif ir == "F2I":
            if mods["src"] not in (2, 3):
                self.bad(inst, "F16 source not translated yet")
            if mods["dst"] not in (2, 3, 6, 7):
                self.bad(inst, "integer result type not translated yet")
            r = self._f2i53(inst)
            if mods["dst"] in (3, 7):
                self.set64(d, r)
            else:
                put(r)
        elif ir == "F2F":
            self._f2f(inst, put)
        elif ir == "RRO":
            # range reduction is folded into MUFU: RRO.SINCOS scales by 1/(2 pi), MUFU.SIN/COS undo it
            x = self.fval(inst, "b")
            if mods["mode"] == 0:
                x = self.fop("OpFMul", self.f32, x, self.m.const(self.f32, _f32(0.15915494309189535)))
            put(self.op("OpBitcast", u32, x))
        elif ir == "MUFU":
            self.need(inst, SAT=0)
            put(self.op("OpBitcast", u32, self._mufu(inst, self.fval(inst, "a"))))
        elif ir in ("LDG", "STG"):
            self._global(inst, put)
        elif ir in ("LD", "ST"):
            self._generic53(inst)
        elif ir in ("LDS", "STS"):
            self._shared(inst)
        elif ir in ("LDL", "STL"):
            self._local(inst)
        elif ir == "LDC":
            cv = ops["c"]
            n = {4: 1, 5: 2}.get(mods["size"])
            if cv["bank"] != 0 or mods["mode"] or n is None:
                self.bad(inst, "indexed constant load other than 32/64-bit from bank 0 not translated yet")
            idx = self.op("OpShiftRightLogical", u32, self.op("OpIAdd", u32, self.reg(cv["reg"]), c(cv["off"])), c(2))
            words = [self.op("OpLoad", u32, self.op("OpAccessChain", self.cb_ptr, self.cbank, c(0),
                                                    self.op("OpIAdd", u32, idx, c(k)))) for k in range(n)]
            if d != 255:
                for k, w in enumerate(words):
                    self.set_reg(d + k, w)
        elif ir in ("ATOMS", "ATOM", "ATOM_CAS", "RED"):
            self._atomic(inst, put)
        elif ir == "BAR":
            if ops["id"]["imm"] != 0:
                self.bad(inst, "barriers other than 0 not translated yet")
            E = self.m.E
            sem = E("MemorySemantics", "AcquireRelease") | E("MemorySemantics", "WorkgroupMemory")
            wg = self.c(E("Scope", "Workgroup"))
            self.do("OpControlBarrier", wg, wg, self.c(sem))
        else:
            self.bad(inst)

    def dval(self, inst: Inst, name: str) -> int:
        """A double operand: a register pair, a bank's two words, or a 20-bit immediate (the
        double's top bits), with its neg/abs."""
        v = inst.ops[name]
        t = self.f64t
        if "imm" in v:
            x = self.m.const(t, v["imm"] & 0xFFFFFFFF, v["imm"] >> 32)
        elif "bank" in v:
            x = self.op("OpBitcast", t, self.join64(self.cbank_word(v["off"], v["bank"], inst),
                                                     self.cbank_word(v["off"] + 4, v["bank"], inst)))
        elif v["reg"] == 255:
            x = self.m.const(t, 0, 0)
        else:
            x = self.op("OpBitcast", t, self.join64(self.reg(v["reg"]), self.reg(v["reg"] + 1)))
        if v.get("abs"):
            x = self.op("OpExtInst", t, self.glsl, GLSL["FAbs"], x)
        if v.get("neg"):
            x = self.op("OpFNegate", t, x)
        return x

    def _isetp_x(self, inst: Inst) -> int:
        """ISETP.X: the high words of a 64-bit comparison whose low words were subtracted with
        .CC just before (carry = no borrow = low a >= low b; zero = low words equal): the high
        words decide, equal high words defer to the low flags."""
        a, b = self.val(inst, "a"), self.val(inst, "b")
        unsigned = inst.mods["u32"] == 0
        cmp = inst.mods["cmp"]
        c_lo = self.carry()
        z_lo = self.op("OpLoad", self.bool, self.var("CCZ", self.fn_bool))
        eq_hi = self.op("OpIEqual", self.bool, a, b)
        gt_hi = self.op("OpUGreaterThan" if unsigned else "OpSGreaterThan", self.bool, a, b)
        L, O, N = "OpLogicalAnd", "OpLogicalOr", "OpLogicalNot"
        eq = self.op(L, self.bool, eq_hi, z_lo)
        ge = self.op(O, self.bool, gt_hi, self.op(L, self.bool, eq_hi, c_lo))
        gt = self.op(L, self.bool, ge, self.op(N, self.bool, eq))
        table = {1: lambda: self.op(N, self.bool, ge), 2: lambda: eq, 3: lambda: self.op(N, self.bool, gt),
                 4: lambda: gt, 5: lambda: self.op(N, self.bool, eq), 6: lambda: ge}
        if cmp in table:
            return table[cmp]()
        return self.m.const_bool(cmp == 7)

    def _iadd_neg_carry(self, inst: Inst, cc: bool) -> int:
        """IADD with a negated operand and a carry: -x is ~x + 1 (its +1 reaches the carry, so
        0 - 0 carries out, as a subtraction without borrow does); with .X, -x is ~x and the
        carry-in completes the subtraction (borrow chains of 64-bit subtractions)."""
        x_mode = bool(inst.mods.get("X"))
        u64 = self.u64
        s = self.c64(0)
        for n in ("a", "b"):
            v = dict(inst.ops[n])
            neg = v.get("neg")
            raw = self.val(inst, n) if not neg else None
            if neg:
                raw = self.reg(v["reg"]) if "reg" in v else (self.cbank_word(v["off"], v["bank"], inst) if "bank" in v
                                                              else self.c(v["imm"]))
                raw = self.op("OpNot", self.u32, raw)
            t = self.op("OpUConvert", u64, raw)
            if neg and not x_mode:
                t = self.op("OpIAdd", u64, t, self.c64(1))
            s = self.op("OpIAdd", u64, s, t)
        if x_mode:
            s = self.op("OpIAdd", u64, s, self.op("OpSelect", u64, self.carry(), self.c64(1), self.c64(0)))
        r = self.op("OpUConvert", self.u32, s)
        if cc:
            self.set_carry(self.op("OpINotEqual", self.bool, self.op("OpShiftRightLogical", u64, s, self.c64(32)),
                                   self.c64(0)))
            self.set_zero(r, x_mode)
        return r

    def _i2f53(self, inst: Inst, d: int) -> None:
        """I2F from 8/16/32/64-bit integers (byte select, |x|, -x) to F32 or F64, rounded to
        nearest or directed (.RM/.RP/.RZ: ptxas's division estimates use .RP)."""
        mods, u32 = inst.mods, self.u32
        widths = {0: 8, 1: 16, 2: 32, 3: 64, 4: 8, 5: 16, 6: 32, 7: 64}
        w, signed = widths[mods["src"]], mods["src"] >= 4
        if mods["dst"] not in (2, 3):
            self.bad(inst, "F16 result not translated yet")
        b = inst.ops["b"]
        raw = self.reg(b["reg"]) if "reg" in b else self.cbank_word(b["off"], b["bank"], inst)
        if w == 64:
            if b.get("abs") or b.get("neg") or "reg" not in b:
                self.bad(inst, "64-bit source form not translated yet")
            x = self.join64(raw, self.reg(b["reg"] + 1) if b["reg"] != 255 else self.c(0))
        else:
            x = raw
            if b.get("bsel"):
                x = self.op("OpShiftRightLogical", u32, x, self.c(8 * b["bsel"]))
            if w < 32:
                x = self.op("OpBitFieldSExtract" if signed else "OpBitFieldUExtract", u32, x, self.c(0), self.c(w))
            if b.get("abs") and signed:
                x = self.op("OpExtInst", u32, self.glsl, 5, x)      # SAbs
            if b.get("neg"):
                x = self.op("OpSNegate", u32, x)
        conv = "OpConvertSToF" if signed else "OpConvertUToF"
        if mods["dst"] == 3:
            if mods["rnd"] and w == 64:
                self.bad(inst, "directed rounding of a 64-bit integer to F64 not translated yet")
            self.set64(d, self.op("OpBitcast", self.u64, self.op(conv, self.f64t, x)))
            return
        f = self.op(conv, self.f32, x)
        if mods["rnd"]:
            f = self._directed(inst, f, x, signed, w == 64, mods["rnd"])
        self.set_reg(d, self.op("OpBitcast", u32, f))

    def _lea53(self, inst: Inst, put, cc: bool) -> None:
        """LEA: (a << s) + b; LEA.HI: the high word of (c:a) << s, plus b; .X adds the carry,
        .CC writes it (the 64-bit address pairs ptxas builds)."""
        ops, mods = inst.ops, inst.mods
        sh = ops["s"]["imm"]
        a = self.val(inst, "a")
        if inst.row.ir == "LEA_HI":
            v = self.join64(a, self.val(inst, "c"))
            t = self.op("OpUConvert", self.u32, self.op("OpShiftRightLogical", self.u64, self.op(
                "OpShiftLeftLogical", self.u64, v, self.c64(sh)), self.c64(32)))
        else:
            t = self.op("OpShiftLeftLogical", self.u32, a, self.c(sh))
        r = self.add_cc(inst, [t, self.val(inst, "b")], bool(mods["X"]), cc)
        if ops["pd"]["pred"] != 7:
            # LEA.HI's predicate: the high word of a 64-bit generic address is not 0, i.e. the
            # address is global (shared and local windows lie below 4 GiB: ptxas builds a
            # shared variable's generic address as c[0x0][0x0] + offset, high word 0).  Read from
            # ptxas's own use: a generic atomic branches on it (@!P ATOMS on the low word,
            # otherwise ATOM.E); LD/ST take it as an operand and here go by the address itself.
            if inst.row.ir != "LEA_HI":
                self.bad(inst, "LEA predicate output not translated yet")
            self.set_pred(ops["pd"]["pred"], self.op("OpINotEqual", self.bool, r, self.c(0)))
        put(r)

    def _i2i(self, inst: Inst) -> int:
        """I2I between 8/16/32-bit integer types: the source field (byte select .B1..B3) extended
        by its sign, |x| / -x, then the destination width, saturated with .SAT."""
        mods, ops, u32, c = inst.mods, inst.ops, self.u32, self.c
        widths = {0: 8, 1: 16, 2: 32, 4: 8, 5: 16, 6: 32}
        if mods["src"] not in widths or mods["dst"] not in widths:
            self.bad(inst, "64-bit I2I not translated yet")
        sw, ssig = widths[mods["src"]], mods["src"] >= 4
        dw, dsig = widths[mods["dst"]], mods["dst"] >= 4
        b = ops["b"]
        x = self.reg(b["reg"]) if "reg" in b else self.cbank_word(b["off"], b["bank"], inst)
        if b.get("bsel"):
            x = self.op("OpShiftRightLogical", u32, x, c(8 * b["bsel"]))
        if sw < 32:
            x = self.op("OpBitFieldSExtract" if ssig else "OpBitFieldUExtract", u32, x, c(0), c(sw))
        if b.get("abs"):
            x = self.op("OpExtInst", u32, self.glsl, 5, x) if ssig else x
        if b.get("neg"):
            x = self.op("OpSNegate", u32, x)
        signed_val = ssig or bool(b.get("neg"))
        if mods["SAT"]:
            lo, hi = (-(1 << (dw - 1)), (1 << (dw - 1)) - 1) if dsig else (0, (1 << dw) - 1)
            if signed_val:
                x = self.op("OpExtInst", u32, self.glsl, GLSL["SMax"], x, c(lo))
                if not (dsig and dw == 32):
                    x = self.op("OpExtInst", u32, self.glsl, GLSL["SMin"], x, c(hi)) if hi < 2**31 else x
            else:
                x = self.op("OpExtInst", u32, self.glsl, GLSL["UMin"], x, c(hi))
        if dw < 32:
            x = self.op("OpBitFieldSExtract" if dsig else "OpBitFieldUExtract", u32, x, c(0), c(dw))
        return x

    def _pop_pred(self, inst: Inst, r: int) -> None:
        pr = inst.ops.get("pr", {}).get("pred", 7)
        pop = inst.mods.get("pop", 0)
        if pr == 7:
            return
        z = self.op("OpIEqual", self.bool, r, self.c(0))
        v = {1: self.m.const_bool(True), 2: z, 3: self.op("OpLogicalNot", self.bool, z)}.get(pop)
        if v is None:
            raise TranslateError(f"{inst.text()}: predicate result .F not translated", offset=inst.addr)
        self.set_pred(pr, v)

    def _icmp(self, inst: Inst, a: int, b: int) -> int:
        return self._icmp_op(inst.mods["cmp"], inst.mods["u32"] == 0, a, b)

    def _setp(self, inst: Inst, r: int) -> None:
        ops = inst.ops
        pc = self.pv(ops["pc"])
        bop = {0: "OpLogicalAnd", 1: "OpLogicalOr", 2: "OpLogicalNotEqual"}[inst.mods["bop"]]
        self.set_pred(ops["pd"]["pred"], self.op(bop, self.bool, r, pc))
        if ops["qd"]["pred"] != 7:
            self.set_pred(ops["qd"]["pred"], self.op(bop, self.bool, self.op("OpLogicalNot", self.bool, r), pc))

    def _half(self, full: int, h1: bool, signed: bool) -> int:
        sh = self.op("OpShiftRightLogical", self.u32, full, self.c(16)) if h1 else full
        if signed:
            return self.op("OpBitFieldSExtract", self.u32, sh, self.c(0), self.c(16))
        return self.op("OpBitwiseAnd", self.u32, sh, self.c(0xFFFF))

    def _xmad(self, inst: Inst, cc: bool) -> int:
        """XMAD: 16x16-bit product (+ shift by 16 with PSL) + C adjusted by the mode, then MRG
        puts B's low half on top (public descriptions: Ryujinx InstEmitIntegerArithmetic, NAK)."""
        ops, mods = inst.ops, inst.mods
        if mods["mode"] == 3:
            raise TranslateError(f"{inst.text()}: XMAD.CSFU not translated", offset=inst.addr)
        a_raw = self.reg(ops["a"]["reg"])
        bv = ops["b"]
        if "imm" in bv:
            b_raw = self.c(bv["imm"])
        elif "bank" in bv:
            b_raw = self.cbank_word(bv["off"], bv["bank"], inst)
        else:
            b_raw = self.reg(bv["reg"])
        a16 = self._half(a_raw, ops["a"]["h1"], mods["sign"] in (1, 3))
        b16 = self._half(b_raw, bv.get("h1", False), mods["sign"] in (2, 3))
        p = self.op("OpIMul", self.u32, a16, b16)
        if mods["PSL"]:
            p = self.op("OpShiftLeftLogical", self.u32, p, self.c(16))
        cval = self.val(inst, "c")
        mode = mods["mode"]
        if mode == 1:
            cval = self.op("OpBitwiseAnd", self.u32, cval, self.c(0xFFFF))
        elif mode == 2:
            cval = self.op("OpShiftRightLogical", self.u32, cval, self.c(16))
        elif mode == 4:
            cval = self.op("OpIAdd", self.u32, cval, self.op("OpShiftLeftLogical", self.u32, b_raw, self.c(16)))
        r = self.add_cc(inst, [p, cval], bool(mods["X"]), cc)
        if mods["MRG"]:
            r = self.op("OpBitwiseOr", self.u32, self.op("OpBitwiseAnd", self.u32, r, self.c(0xFFFF)),
                        self.op("OpShiftLeftLogical", self.u32, b_raw, self.c(16)))
        return r

    def _shift(self, inst: Inst, put) -> None:
        mods = inst.mods
        if mods.get("BREV"):
            raise TranslateError(f"{inst.text()}: SHR.BREV not translated", offset=inst.addr)
        if mods.get("X") or mods.get("x"):
            raise TranslateError(f"{inst.text()}: shift with carry not translated", offset=inst.addr)
        a, s = self.val(inst, "a"), self.val(inst, "b")
        big = self.op("OpUGreaterThanEqual", self.bool, s, self.c(32))
        if mods["W"]:
            s = self.op("OpBitwiseAnd", self.u32, s, self.c(31))
            big = self.m.const_bool(False)
        else:
            s = self.op("OpExtInst", self.u32, self.glsl, GLSL["UMin"], s, self.c(31))
        if inst.row.ir == "SHL":
            r = self.op("OpSelect", self.u32, big, self.c(0), self.op("OpShiftLeftLogical", self.u32, a, s))
        elif mods["u32"] == 0:
            r = self.op("OpSelect", self.u32, big, self.c(0), self.op("OpShiftRightLogical", self.u32, a, s))
        else:   # arithmetic: shifting by >= 32 leaves the sign everywhere, which a shift by 31 gives
            r = self.op("OpShiftRightArithmetic", self.u32, a, s)
        put(r)

    def _shf53(self, inst: Inst) -> int:
        """Funnel shift of the pair C:A (C high): SHF.L gives the high word of (C:A) << s,
        SHF.R the low word of (C:A) >> s; .W wraps s to 0..31, otherwise s is clamped to 32
        (to 64 with .U64), as PTX's shf.wrap / shf.clamp and 64-bit shifts need."""
        mods = inst.mods
        if mods["xhi"] or mods["maxshift"] not in (0, 2, 3) or inst.ops["d"].get("cc"):
            raise TranslateError(f"{inst.text()}: SHF form not translated yet", offset=inst.addr)
        u32, u64, c = self.u32, self.u64, self.c
        v = self.join64(self.val(inst, "a"), self.val(inst, "c"))
        sh = self.val(inst, "b")
        limit = 64 if mods["maxshift"] in (2, 3) else 32
        if mods["maxshift"] == 3 and inst.row.mnemonic == "SHF.R":     # .S64: arithmetic, sign-filled
            s = self.op("OpExtInst", u32, self.glsl, GLSL["UMin"], sh, c(63)) if not mods["W"] else \
                self.op("OpBitwiseAnd", u32, sh, c(31))
            r = self.op("OpShiftRightArithmetic", u64, v, self.op("OpUConvert", u64, s))
            return self.op("OpUConvert", u32, r)
        sh = self.op("OpBitwiseAnd", u32, sh, c(31)) if mods["W"] else \
            self.op("OpExtInst", u32, self.glsl, GLSL["UMin"], sh, c(limit))
        big = self.op("OpUGreaterThanEqual", self.bool, sh, c(64))
        s64 = self.op("OpUConvert", u64, self.op("OpBitwiseAnd", u32, sh, c(63)))
        if inst.row.mnemonic == "SHF.L":
            r = self.op("OpShiftRightLogical", u64, self.op("OpShiftLeftLogical", u64, v, s64), self.c64(32))
        else:
            r = self.op("OpShiftRightLogical", u64, v, s64)
        return self.op("OpSelect", u32, big, c(0), self.op("OpUConvert", u32, r))

    def _bfe(self, a: int, b: int, signed: bool) -> int:
        """BFE: position = b[7:0], length = b[15:8]; PTX bfe semantics (length 0 -> 0, the sign
        bit is the last one taken, or bit 31)."""
        u32, c, op = self.u32, self.c, self.op
        pos = op("OpBitwiseAnd", u32, b, c(0xFF))
        ln = op("OpBitwiseAnd", u32, op("OpShiftRightLogical", u32, b, c(8)), c(0xFF))
        posc = op("OpExtInst", u32, self.glsl, GLSL["UMin"], pos, c(31))
        shifted = op("OpShiftRightLogical", u32, a, posc)
        lnc = op("OpExtInst", u32, self.glsl, GLSL["UMin"], ln, c(32))
        mask = op("OpSelect", u32, op("OpUGreaterThanEqual", self.bool, lnc, c(32)), c(0xFFFFFFFF),
                  op("OpISub", u32, op("OpShiftLeftLogical", u32, c(1), op("OpExtInst", u32, self.glsl, GLSL["UMin"],
                                                                           lnc, c(31))), c(1)))
        val = op("OpBitwiseAnd", u32, shifted, mask)
        val = op("OpSelect", u32, op("OpUGreaterThanEqual", self.bool, pos, c(32)), c(0), val)
        if signed:
            last = op("OpExtInst", u32, self.glsl, GLSL["UMin"], op("OpISub", u32, op("OpIAdd", u32, pos, ln), c(1)),
                      c(31))
            sign = op("OpINotEqual", self.bool, op("OpBitwiseAnd", u32, op("OpShiftRightLogical", u32, a, last), c(1)),
                      c(0))
            val = op("OpSelect", u32, sign, op("OpBitwiseOr", u32, val, op("OpNot", u32, mask)), val)
        return op("OpSelect", u32, op("OpIEqual", self.bool, ln, c(0)), c(0), val)

    def _bfi(self, a: int, b: int, base: int) -> int:
        """BFI: insert a's low bits into ``base`` at b[7:0], length b[15:8] (clamped to the word)."""
        u32, c, op = self.u32, self.c, self.op
        pos = op("OpBitwiseAnd", u32, b, c(0xFF))
        ln = op("OpBitwiseAnd", u32, op("OpShiftRightLogical", u32, b, c(8)), c(0xFF))
        posc = op("OpExtInst", u32, self.glsl, GLSL["UMin"], pos, c(32))
        lnc = op("OpExtInst", u32, self.glsl, GLSL["UMin"], ln, op("OpISub", u32, c(32), posc))
        r = op("OpBitFieldInsert", u32, base, a, op("OpExtInst", u32, self.glsl, GLSL["UMin"], posc, c(31)), lnc)
        return op("OpSelect", u32, op("OpUGreaterThanEqual", self.bool, pos, c(32)), base, r)

    def _f2i53(self, inst: Inst) -> int:
        """F2I with FLOOR/CEIL/TRUNC from F32 or F64: round, saturate to the range, NaN -> 0 (as
        NVIDIA).  .FTZ flushes a denormal source to a zero of its sign first."""
        rnd = {0: "RoundEven", 1: "Floor", 2: "Ceil", 3: "Trunc"}[inst.mods["rnd"]]
        signed = inst.mods["dst"] == 6
        if inst.mods["src"] == 2:
            x = self.fval(inst, "b")
            if inst.mods["FTZ"]:
                tiny = self.op("OpFOrdLessThan", self.bool, self.op("OpExtInst", self.f32, self.glsl, GLSL["FAbs"], x),
                               self.m.const(self.f32, 0x00800000))
                zero = self.op("OpBitcast", self.f32, self.op("OpBitwiseAnd", self.u32, self.op("OpBitcast", self.u32, x),
                                                              self.c(0x80000000)))
                x = self.op("OpSelect", self.f32, tiny, zero, x)
            if inst.mods["dst"] in (2, 6):
                return self._f2i_sat(x, rnd, signed)
        # F64 source or 64-bit result: round, then saturate in double (the bounds are exact there)
        t = self.f64t
        wide = inst.mods["dst"] in (3, 7)
        signed = inst.mods["dst"] in (6, 7)
        if inst.mods["src"] == 2:
            x = self.op("OpFConvert", t, self.op("OpExtInst", self.f32, self.glsl, GLSL[rnd], self.fval(inst, "b")))
        else:
            x = self.op("OpExtInst", t, self.glsl, GLSL[rnd], self.dval(inst, "b"))
        dc = lambda v: self.m.const(t, *struct.unpack("<II", struct.pack("<d", v)))  # noqa: E731
        bits = 64 if wide else 32
        lo, top = (-2.0 ** (bits - 1), 2.0 ** (bits - 1)) if signed else (0.0, 2.0 ** bits)
        ity = self.u64 if wide else self.u32
        cst = self.c64 if wide else self.c
        sat_hi = (1 << (bits - 1)) - 1 if signed else (1 << bits) - 1
        sat_lo = 1 << (bits - 1) if signed else 0
        safe = self.op("OpExtInst", t, self.glsl, GLSL["NMax"], x, dc(lo))
        safe = self.op("OpSelect", t, self.op("OpFOrdGreaterThanEqual", self.bool, safe, dc(top)), dc(lo), safe)
        v = self.op("OpConvertFToS" if signed else "OpConvertFToU", ity, safe)
        v = self.op("OpSelect", ity, self.op("OpFOrdGreaterThanEqual", self.bool, x, dc(top)), cst(sat_hi), v)
        v = self.op("OpSelect", ity, self.op("OpFOrdLessThan", self.bool, x, dc(lo)), cst(sat_lo), v)
        return self.op("OpSelect", ity, self.op("OpIsNan", self.bool, x), cst(0), v)

    def _f2f(self, inst: Inst, put) -> None:
        """F32 <-> F16 through GLSL's packHalf2x16/unpackHalf2x16 (no Float16 capability needed)."""
        mods = inst.mods
        pair = (mods["dst"], mods["src"])
        if pair in ((2, 2), (3, 3), (2, 3), (3, 2)):
            self._f2f_wide(inst, put, pair)
            return
        self.need(inst, FTZ=0, rnd=0, SAT=0)
        v2 = self.m.type("OpTypeVector", self.f32, 2)
        if (mods["dst"], mods["src"]) == (1, 2):
            x = self.fval(inst, "b")
            vec = self.op("OpCompositeConstruct", v2, x, self.m.const(self.f32, 0))
            put(self.op("OpExtInst", self.u32, self.glsl, 58, vec))
        elif (mods["dst"], mods["src"]) == (2, 1):
            b = inst.ops["b"]
            raw = self.reg(b["reg"]) if "reg" in b else self.cbank_word(b["off"], b["bank"], inst)
            vec = self.op("OpExtInst", v2, self.glsl, 62, raw)
            r = self.op("OpCompositeExtract", self.f32, vec, 1 if b.get("h1") else 0)
            if b.get("abs"):
                r = self.op("OpExtInst", self.f32, self.glsl, GLSL["FAbs"], r)
            if b.get("neg"):
                r = self.op("OpFNegate", self.f32, r)
            put(self.op("OpBitcast", self.u32, r))
        else:
            raise TranslateError(f"{inst.text()}: conversion not translated yet", offset=inst.addr)

    def _f2f_wide(self, inst: Inst, put, pair: tuple[int, int]) -> None:
        """F2F between F32/F64: .ROUND/.FLOOR/.CEIL/.TRUNC (rnd 4..7) round to an integral value
        in the same type; F32 -> F64 is exact, F64 -> F32 rounds to nearest even (OpFConvert is
        correctly rounded in Vulkan); .FTZ flushes an F32 source; directed narrowing, .SAT and
        a denormal-flushing F64 are refused."""
        mods = inst.mods
        self.need(inst, SAT=0)
        fn = {4: "RoundEven", 5: "Floor", 6: "Ceil", 7: "Trunc"}.get(mods["rnd"])
        if pair[1] == 2:
            x = self._ftz32(self.fval(inst, "b"), mods["FTZ"])
        else:
            self.need(inst, FTZ=0)
            x = self.dval(inst, "b")
        if pair[0] == pair[1]:
            if fn is None:
                self.bad(inst, "F2F to the same type other than rounding to an integral value")
            r = self.op("OpExtInst", self.f32 if pair[0] == 2 else self.f64t, self.glsl, GLSL[fn], x)
        else:
            if mods["rnd"]:
                self.bad(inst, "F2F with a directed rounding between F32 and F64 not translated yet")
            r = self.op("OpFConvert", self.f32 if pair[0] == 2 else self.f64t, x)
        if pair[0] == 2:
            put(self.op("OpBitcast", self.u32, r))
        else:
            v = self.op("OpBitcast", self.u64, r)
            d = inst.ops["d"]["reg"]
            if d != 255:
                self.set_reg(d, self.op("OpUConvert", self.u32, v))
                self.set_reg(d + 1, self.op("OpUConvert", self.u32, self.op("OpShiftRightLogical", self.u64, v,
                                                                            self.c64(32))))

    def _mufu(self, inst: Inst, x: int) -> int:
        g = {2: 29, 3: 30}           # Exp2, Log2
        o = inst.mods["op"]
        two_pi = self.m.const(self.f32, _f32(6.283185307179586))
        if o in (0, 1):              # the operand was scaled by 1/(2 pi) by RRO
            t = self.fop("OpFMul", self.f32, x, two_pi)
            return self.op("OpExtInst", self.f32, self.glsl, 14 if o == 0 else 13, t)
        if o in g:
            return self.op("OpExtInst", self.f32, self.glsl, g[o], x)
        if o == 4:
            return self.fop("OpFDiv", self.f32, self.m.const(self.f32, _f32(1.0)), x)
        if o == 5:
            return self.op("OpExtInst", self.f32, self.glsl, 32, x)   # InverseSqrt
        if o in (6, 7):
            return self.op("OpBitcast", self.f32, self._mufu64h(o, self.op("OpBitcast", self.u32, x)))
        raise TranslateError(f"{inst.text()}: MUFU function not translated", offset=inst.addr)

    def _global(self, inst: Inst, put) -> None:
        mods = inst.mods
        if not mods["E"]:
            raise TranslateError(f"{inst.text()}: 32-bit global addresses not translated", offset=inst.addr)
        n = {4: 1, 5: 2, 6: 4}.get(mods["size"])
        if n is None:
            raise TranslateError(f"{inst.text()}: sub-word access not translated yet", offset=inst.addr)
        a = inst.ops["addr"]
        base = self.join64(self.reg(a["reg"]), self.reg(a["reg"] + 1)) if a["reg"] != 255 else self.c64(0)
        d = inst.ops["d"]["reg"]
        for i in range(n):
            ptr = self.op("OpConvertUToPtr", self.psb_ptr, self.op("OpIAdd", self.u64, base, self.c64(a["off"] + 4 * i)))
            if inst.row.ir == "LDG":
                if d != 255:
                    self.set_reg(d + i, self.op("OpLoad", self.u32, ptr, self.m.E("MemoryAccess", "Aligned"), 4))
            else:
                self.do("OpStore", ptr, self.reg(d + i) if d != 255 else self.c(0), self.m.E("MemoryAccess", "Aligned"), 4)

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
        self._generic_access(inst, addr, window, n, "load" if inst.row.ir == "LD" else "store",
                             inst.ops["d"]["reg"])

    # --- shared memory and atomics -----------------------------------------------------------
    def _mem_addr(self, inst: Inst) -> int:
        a = inst.ops["addr"]
        base = self.reg(a["reg"]) if a["reg"] != 255 else self.c(0)
        return self.op("OpIAdd", self.u32, base, self.c(a["off"]))

    def _shared(self, inst: Inst) -> None:
        n = {4: 1, 5: 2, 6: 4}.get(inst.mods["size"])
        if n is None:
            raise TranslateError(f"{inst.text()}: sub-word shared access not translated yet", offset=inst.addr)
        addr = self._mem_addr(inst)
        d = inst.ops["d"]["reg"]
        for i in range(n):
            p = self.shared_word(self.op("OpIAdd", self.u32, addr, self.c(4 * i)))
            if inst.row.ir == "LDS":
                if d != 255:
                    self.set_reg(d + i, self.op("OpLoad", self.u32, p))
            else:
                self.do("OpStore", p, self.reg(d + i) if d != 255 else self.c(0))

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

    # --- control flow -----------------------------------------------------------------------
    def _push(self, value: int) -> None:
        sp_var = self.var("sp", self.fn_u32)
        sp = self.op("OpLoad", self.u32, sp_var)
        slot = self.var_array()
        p = self.op("OpAccessChain", self.fn_u32, slot, self.op("OpBitwiseAnd", self.u32, sp, self.c(STACK - 1)))
        self.do("OpStore", p, value)
        self.do("OpStore", sp_var, self.op("OpIAdd", self.u32, sp, self.c(1)))

    def var_array(self) -> int:
        if "stack" not in self.vars:
            arr = self.m.type("OpTypeArray", self.u32, self.c(STACK))
            self.vars["stack"] = (self.m.id(), self.m.type("OpTypePointer", self.m.E("StorageClass", "Function"), arr))
        return self.vars["stack"][0]

    def _stack_unwind(self, kind: int) -> int:
        """SYNC/BRK/RET at run time: pop entries until one of ``kind`` (its block number in the
        low 28 bits), as the machine unwinds its typed stack (a BRK out of an if inside a loop
        drops the if's SSY entry).  A loop in SPIR-V: pop, test the kind, repeat."""
        res = self.var("unwound", self.fn_u32)
        head, body, cont, merge = (self.label() for _ in range(4))
        self.do("OpBranch", head)
        self.put_label(head)
        self.do("OpLoopMerge", merge, cont, 0)
        self.do("OpBranch", body)
        self.put_label(body)
        v = self._stack_pop()
        self.do("OpStore", res, v)
        hit = self.op("OpIEqual", self.bool, self.op("OpShiftRightLogical", self.u32, v, self.c(28)), self.c(kind))
        sp = self.op("OpLoad", self.u32, self.var("sp", self.fn_u32))
        empty = self.op("OpIEqual", self.bool, sp, self.c(0))     # nothing left: stop (a bad program)
        self.do("OpBranchConditional", self.op("OpLogicalOr", self.bool, hit, empty), merge, cont)
        self.put_label(cont)
        self.do("OpBranch", head)
        self.put_label(merge)
        return self.op("OpBitwiseAnd", self.u32, self.op("OpLoad", self.u32, res), self.c((1 << 28) - 1))

    def _stack_pop(self) -> int:
        sp_var = self.var("sp", self.fn_u32)
        sp = self.op("OpISub", self.u32, self.op("OpLoad", self.u32, sp_var), self.c(1))
        self.do("OpStore", sp_var, sp)
        p = self.op("OpAccessChain", self.fn_u32, self.var_array(), self.op("OpBitwiseAnd", self.u32, sp, self.c(STACK - 1)))
        return self.op("OpLoad", self.u32, p)

    # --- control flow through the shared dispatcher loop (sm86.to_spirv._Lower.build) ---------
    def build(self) -> bytes:
        for ins in self.insts:
            if ins.row.ir == "JCAL":
                self.need(ins, inc=1)
            if ins.row.ir == "BPT":
                self.need(ins, mode=3)      # a trap ends the kernel; here it ends the invocation
            if ins.row.ir in WARP and (ins.pred != 7 or ins.pred_not):
                raise TranslateError(f"{ins.text()}: predicated warp-wide operation not translated (the 32-lane "
                                     f"warp is emulated with workgroup barriers, which every invocation must "
                                     f"reach)", offset=ins.addr)
        return super().build()

    def block_list(self) -> list[list[Inst]]:
        return _blocks(self.insts)

    STRUCT_BRANCH = ("BRA", "EXIT", "SYNC", "BRK", "CAL", "JCAL", "RET", "BPT")
    STRUCT_SKIP = ("SSY", "PBK")

    def _step(self, blocks: list[list[Inst]], target):
        """The reconvergence stack as the state ``spirv.expand`` walks, its entries typed as on
        the machine: SSY pushes (S, target), PBK (B, target), CAL/JCAL (C, return block) and go
        to the callee; SYNC unwinds to the innermost S entry, BRK to the innermost B, RET to the
        innermost C, dropping what was pushed above it (a BRK out of an if inside a loop leaves
        the if's SSY entry behind) and going to its block.  A block entered with two different
        stacks becomes two nodes (a function called from two places is inlined twice); an
        unwind that finds no entry of its kind on the path, or a stack deeper than STACK
        entries (recursion), is refused: the dispatcher loop's run-time stack runs it."""
        n = len(blocks)
        kinds = {"SSY": "S", "PBK": "B", "CAL": "C", "JCAL": "C"}
        pops = {"SYNC": "S", "BRK": "B", "RET": "C"}

        def step(i: int, stack: tuple) -> list:
            nxt = i + 1 if i + 1 < n else RET
            for ins in blocks[i]:
                if ins.row.ir in ("SSY", "PBK"):
                    stack = stack + ((kinds[ins.row.ir], target(ins)),)
            last = blocks[i][-1]
            ir = last.row.ir
            guarded = not (last.pred == 7 and not last.pred_not)
            if ir in ("CAL", "JCAL"):
                if nxt == RET:
                    raise Unstructured(f"offset {last.addr:#x}: a call with no code after it")
                taken = (target(last), stack + (("C", nxt),))
            elif ir in ("BRA", "EXIT", "BPT"):
                taken = (target(last) if ir == "BRA" else RET, stack)
            elif ir in pops:
                j = next((k for k in range(len(stack) - 1, -1, -1) if stack[k][0] == pops[ir]), None)
                if j is None:
                    raise Unstructured(f"offset {last.addr:#x}: {ir} with nothing of its kind pushed on this path")
                taken = (stack[j][1], stack[:j])
            else:
                return [(nxt, stack)]
            if len(taken[1]) > STACK:
                raise Unstructured(f"reconvergence stack deeper than its {STACK} entries")
            return [taken, (nxt, stack)] if guarded and ir in STRUCT_ENDS else [taken]
        return step

    def branch_target(self, ins: Inst) -> int:
        return _target(ins, _code_base(self.insts))

    def _prologue(self) -> None:
        self.do("OpStore", self.var("sp", self.fn_u32), self.c(0))
        self.do("OpStore", self.var("CC", self.fn_bool), self.m.const_bool(False))
        self.do("OpStore", self.var("CCZ", self.fn_bool), self.m.const_bool(False))

    def _control(self, ins: Inst, i: int, nxt: int, target) -> int | None:
        """SSY/PBK push their target; BRA/CAL/EXIT/SYNC/BRK/RET pick the next block (CAL pushes
        its return block; SYNC/BRK/RET pop, only when taken, hence a selection, not OpSelect)."""
        ir = ins.row.ir
        if ir in ("SSY", "PBK"):
            self._push(self.c(target(ins) | ENTRY_KIND[ir] << 28))
            return nxt
        if ir not in BRANCHES:
            return None
        if ir in ("CAL", "JCAL"):
            self._push(self.c(i + 1 | ENTRY_KIND["CAL"] << 28))
        if ins.pred == 7 and not ins.pred_not:
            return self._branch_value(ins, target)
        p = self.pred(ins.pred, ins.pred_not)
        then, after = self.label(), self.label()
        res = self.var(f"t{ins.addr}", self.fn_u32)
        self.do("OpStore", res, nxt)
        self.do("OpSelectionMerge", after, 0)
        self.do("OpBranchConditional", p, then, after)
        self.put_label(then)
        self.do("OpStore", res, self._branch_value(ins, target))
        self.do("OpBranch", after)
        self.put_label(after)
        return self.op("OpLoad", self.u32, res)

    def _branch_value(self, ins: Inst, target) -> int:
        ir = ins.row.ir
        if ir in ("EXIT", "BPT"):
            return self.c(DONE)
        if ir in ("BRA", "CAL", "JCAL"):
            return self.c(target(ins))
        return self._stack_unwind(ENTRY_KIND[ir])      # SYNC, BRK, RET


def _f32(v: float) -> int:
    return struct.unpack("<I", struct.pack("<f", v))[0]


def translate_compute(insts: list[Inst], spec: ComputeSpec = ComputeSpec()) -> bytes:
    """SPIR-V binary of an SM53 compute kernel."""
    return _Lower53(insts, spec).build()
