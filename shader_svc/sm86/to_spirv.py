"""Translate a decoded SM86 compute kernel into a SPIR-V compute shader.

Machine registers become function-local variables.  The control-flow graph becomes SPIR-V's
structured selections and loops where ``spirv/structure.py`` can recover them (reducible graphs
of the shapes it knows), otherwise a dispatcher loop (``loop { switch (block) { case N: ... }
}``): structured for any CFG the machine code has, which spirv-val and Vulkan require.
Constant bank 0 is a read-only storage buffer (set 0, binding 0) laid out as the NVIDIA driver
lays it out (block size at 0x0, kernel parameters at 0x160); global memory is reached through 64-bit physical storage buffer pointers
built from the register pairs, exactly as the machine code computes its addresses.

Covered: the integer/FP ALU subset listed in ``LOWERED`` with predication, BRA/EXIT, LDG/STG.
Anything else raises ``TranslateError`` naming the instruction and its address.

``_Lower`` is also the shared base of the SM53 (Maxwell) lowerings and of both graphics
lowerings: register/predicate variables, the control flow (``build``: structured from the
plan, or the dispatcher loop; hooks for an architecture's blocks, branch targets and
control-flow instructions), the function emission,
and the semantics both encodings share (FP comparisons, NaN-suppressing min/max, saturating
F2I, integer comparisons, LOP3-style truth tables, exactly rounded FFMA).
"""
from __future__ import annotations

import logging
import struct
from dataclasses import dataclass

from nxrecomp.common.errors import NxError
from shader_svc.sm86.decode import Inst
from shader_svc.spirv import structure
from shader_svc.spirv.expand import Step, expand
from shader_svc.spirv.builder import Module

log = logging.getLogger(__name__)

DONE = 0xFFFFFFFF
LOWERED = {"MOV", "S2R", "NOP", "IMAD", "IMAD.WIDE", "IADD3", "ISETP", "LOP3", "PLOP3", "SHF", "FFMA", "FMUL",
           "FADD", "IMNMX", "SEL", "ULDC", "LDG", "STG", "BRA", "EXIT", "F2I", "I2F", "FSETP", "FMNMX"}
GLSL = {"RoundEven": 2, "Trunc": 3, "FAbs": 4, "Floor": 8, "Ceil": 9, "UMin": 38, "SMin": 39, "UMax": 41,
        "SMax": 42, "NMin": 79, "NMax": 80}
# FSETP comparisons: ordered ones are false when an operand is NaN, the U forms true
ICMP_NAMES = {1: "LessThan", 2: "Equal", 3: "LessThanEqual", 4: "GreaterThan", 5: "NotEqual", 6: "GreaterThanEqual"}
FCMP_OPS = {1: "OpFOrdLessThan", 2: "OpFOrdEqual", 3: "OpFOrdLessThanEqual", 4: "OpFOrdGreaterThan",
            5: "OpFOrdNotEqual", 6: "OpFOrdGreaterThanEqual", 9: "OpFUnordLessThan", 10: "OpFUnordEqual",
            11: "OpFUnordLessThanEqual", 12: "OpFUnordGreaterThan", 13: "OpFUnordNotEqual",
            14: "OpFUnordGreaterThanEqual"}


SHARED_WORDS = 8192          # 32 KiB of shared memory: lavapipe's limit (Maxwell has 48 KiB)


LOCAL_WORDS = 1024           # local memory per invocation: 4 KiB (addresses are taken modulo)

class TranslateError(NxError):
    pass


@dataclass(frozen=True)
class ComputeSpec:
    local_size: tuple[int, int, int] = (64, 1, 1)


def _blocks(insts: list[Inst]) -> list[list[Inst]]:
    leaders = {insts[0].addr} if insts else set()
    for i, ins in enumerate(insts):
        if ins.row.ir in ("BRA", "EXIT"):
            if i + 1 < len(insts):
                leaders.add(insts[i + 1].addr)
            if ins.row.ir == "BRA":
                leaders.add(ins.ops["target"]["target"])
    blocks, cur = [], []
    for ins in insts:
        if ins.addr in leaders and cur:
            blocks.append(cur)
            cur = []
        cur.append(ins)
    if cur:
        blocks.append(cur)
    return blocks


class _Lower:
    def __init__(self, insts: list[Inst], spec) -> None:
        self.insts, self.spec = insts, spec
        m = self.m = Module((1, 5))
        self.u32 = m.type("OpTypeInt", 32, 0)
        self.f32 = m.type("OpTypeFloat", 32)
        self.bool = m.type("OpTypeBool")
        self.glsl = m.id()
        fn = m.E("StorageClass", "Function")
        self.fn_u32, self.fn_bool = m.type("OpTypePointer", fn, self.u32), m.type("OpTypePointer", fn, self.bool)
        self.vars: dict[str, int] = {}
        self.f64: int | None = None
        self.body: list[tuple] = []   # function body instructions, emitted after the variables
        self.interface: list[int] = []  # global variables the entry point lists
        self.vars_global: dict[str, tuple[int, int]] = {}   # shared memory, the warp exchange array
        self._setup()
        m.emit("import", "OpExtInstImport", self.glsl, "GLSL.std.450")

    @property
    def u64(self) -> int:
        # declared on first use: a 64-bit type needs the Int64 capability (graphics stages avoid it)
        return self.m.type("OpTypeInt", 64, 0)

    def _setup(self) -> None:
        """Compute: capabilities, memory model, constant bank 0 and the builtins."""
        m, E = self.m, self.m.E
        self.v3 = m.type("OpTypeVector", self.u32, 3)
        for cap in ("Shader", "Int64", "PhysicalStorageBufferAddresses"):
            m.emit("cap", "OpCapability", E("Capability", cap))
        m.emit("memmodel", "OpMemoryModel", E("AddressingModel", "PhysicalStorageBuffer64"),
               E("MemoryModel", "GLSL450"))
        # constant bank 0: struct { uint data[]; } as a read-only storage buffer
        rt = m.id()
        m.emit("types", "OpTypeRuntimeArray", rt, self.u32)
        m.emit("annot", "OpDecorate", rt, E("Decoration", "ArrayStride"), 4)
        st = m.id()
        m.emit("types", "OpTypeStruct", st, rt)
        m.emit("annot", "OpDecorate", st, E("Decoration", "Block"))
        m.emit("annot", "OpMemberDecorate", st, 0, E("Decoration", "Offset"), 0)
        m.emit("annot", "OpMemberDecorate", st, 0, E("Decoration", "NonWritable"))
        sb = E("StorageClass", "StorageBuffer")
        self.cb_ptr = m.type("OpTypePointer", sb, self.u32)
        self.cbank = m.id()
        m.emit("types", "OpVariable", m.type("OpTypePointer", sb, st), self.cbank, sb)
        m.emit("annot", "OpDecorate", self.cbank, E("Decoration", "DescriptorSet"), 0)
        m.emit("annot", "OpDecorate", self.cbank, E("Decoration", "Binding"), 0)
        inp = E("StorageClass", "Input")
        self.builtins = {}
        for name in ("LocalInvocationId", "WorkgroupId"):
            v = m.id()
            m.emit("types", "OpVariable", m.type("OpTypePointer", inp, self.v3), v, inp)
            m.emit("annot", "OpDecorate", v, E("Decoration", "BuiltIn"), E("BuiltIn", name))
            self.builtins[name] = v
        self.psb_ptr = m.type("OpTypePointer", E("StorageClass", "PhysicalStorageBuffer"), self.u32)
        self.interface = [self.cbank] + list(self.builtins.values())

    def _entry(self, main: int) -> None:
        E = self.m.E
        self.m.emit("entry", "OpEntryPoint", E("ExecutionModel", "GLCompute"), main, "main", *self.interface)
        self.m.emit("execmode", "OpExecutionMode", main, E("ExecutionMode", "LocalSize"), *self.spec.local_size)

    def _epilogue(self) -> None:
        """Code after the program's last EXIT (fragment outputs are read from registers here)."""

    def lowered(self, ir: str) -> bool:
        return ir in LOWERED

    # --- helpers ---------------------------------------------------------------------------
    def c(self, v: int) -> int:
        return self.m.const(self.u32, v & 0xFFFFFFFF)

    def _prmt(self, a: int, sel: int, cv: int) -> int:
        """PRMT default mode (both ISAs): byte i of the result is byte sel[4i+2:4i] of {c, a}, replaced by its
        sign when sel bit 4i+3 is set."""
        u32, u64, c, op = self.u32, self.u64, self.c, self.op
        both = op("OpBitwiseOr", u64, op("OpUConvert", u64, a),
                  op("OpShiftLeftLogical", u64, op("OpUConvert", u64, cv), self.c64(32)))
        r = c(0)
        for i in range(4):
            nib = op("OpBitwiseAnd", u32, op("OpShiftRightLogical", u32, sel, c(4 * i)), c(0xF))
            idx = op("OpBitwiseAnd", u32, nib, c(7))
            byte = op("OpUConvert", u32, op("OpBitwiseAnd", u64, op("OpShiftRightLogical", u64, both,
                                                                    op("OpUConvert", u64, op("OpIMul", u32, idx, c(8)))),
                                           self.c64(0xFF)))
            neg = op("OpINotEqual", self.bool, op("OpBitwiseAnd", u32, byte, c(0x80)), c(0))
            rep = op("OpINotEqual", self.bool, op("OpBitwiseAnd", u32, nib, c(8)), c(0))
            byte = op("OpSelect", u32, rep, op("OpSelect", u32, neg, c(0xFF), c(0)), byte)
            r = op("OpBitwiseOr", u32, r, op("OpShiftLeftLogical", u32, byte, c(8 * i)))
        return r

    def c64(self, v: int) -> int:
        v &= 2**64 - 1
        return self.m.const(self.u64, v & 0xFFFFFFFF, v >> 32)

    def op(self, name: str, ty: int, *args) -> int:
        r = self.m.id()
        self.body.append((name, ty, r) + args)
        return r

    def do(self, name: str, *args) -> None:
        self.body.append((name,) + args)

    def label(self) -> int:
        return self.m.id()

    def put_label(self, lab: int) -> None:
        self.body.append(("OpLabel", lab))

    def var(self, key: str, ty_ptr: int) -> int:
        if key not in self.vars:
            self.vars[key] = (self.m.id(), ty_ptr)
        return self.vars[key][0]

    def reg(self, n: int, file: str = "R") -> int:
        if (file == "R" and n == 255) or (file == "UR" and n == 63):
            return self.c(0)
        return self.op("OpLoad", self.u32, self.var(f"{file}{n}", self.fn_u32))

    def set_reg(self, n: int, val: int, file: str = "R") -> None:
        if (file == "R" and n == 255) or (file == "UR" and n == 63):
            return
        self.do("OpStore", self.var(f"{file}{n}", self.fn_u32), val)

    def pred(self, p: int, neg: bool = False, file: str = "P") -> int:
        v = self.m.const_bool(True) if p == 7 else self.op("OpLoad", self.bool, self.var(f"{file}{p}", self.fn_bool))
        return self.op("OpLogicalNot", self.bool, v) if neg else v

    def set_pred(self, p: int, val: int) -> None:
        if p != 7:
            self.do("OpStore", self.var(f"P{p}", self.fn_bool), val)

    def cbank_word(self, off: int, bank: int, inst: Inst) -> int:
        if bank != 0 or off % 4 or off < 0:
            raise TranslateError(f"constant bank c[{bank:#x}][{off:#x}] not supported", offset=inst.addr)
        p = self.op("OpAccessChain", self.cb_ptr, self.cbank, self.c(0), self.c(off // 4))
        return self.op("OpLoad", self.u32, p)

    def src(self, inst: Inst, name: str, fp: bool = False) -> int:
        """Value of a source operand as u32 (neg/abs applied, as integer or float)."""
        o = next(x for x in inst.row.operands if x.name == name)
        v = inst.ops[name]
        if "imm" in v:
            return self.c(v["imm"])
        if "bank" in v:
            val = self.cbank_word(v["off"], v["bank"], inst)
        else:
            val = self.reg(v["reg"], v.get("file", "R"))
        if v.get("abs") or v.get("neg"):
            if fp:
                f = self.op("OpBitcast", self.f32, val)
                if v.get("abs"):
                    f = self.op("OpExtInst", self.f32, self.glsl, GLSL["FAbs"], f)
                if v.get("neg"):
                    f = self.op("OpFNegate", self.f32, f)
                val = self.op("OpBitcast", self.u32, f)
            else:
                if v.get("abs"):
                    raise TranslateError("integer |x| not supported", offset=inst.addr)
                if inst.mods.get("X") == 1 or o.neg_sym == "~":
                    val = self.op("OpNot", self.u32, val)
                else:
                    val = self.op("OpSNegate", self.u32, val)
        return val

    def src64(self, inst: Inst, name: str) -> int:
        v = inst.ops[name]
        if "bank" in v:
            lo, hi = self.cbank_word(v["off"], v["bank"], inst), self.cbank_word(v["off"] + 4, v["bank"], inst)
        elif "imm" in v:
            return self.c64(v["imm"])
        elif v["reg"] == 255:
            return self.c64(0)
        else:
            lo, hi = self.reg(v["reg"]), self.reg(v["reg"] + 1)
        if v.get("neg"):
            raise TranslateError("negated 64-bit operand not supported", offset=inst.addr)
        return self.join64(lo, hi)

    def join64(self, lo: int, hi: int) -> int:
        lo64, hi64 = self.op("OpUConvert", self.u64, lo), self.op("OpUConvert", self.u64, hi)
        return self.op("OpBitwiseOr", self.u64, lo64, self.op("OpShiftLeftLogical", self.u64, hi64, self.c64(32)))

    def set64(self, d: int, v64: int) -> None:
        self.set_reg(d, self.op("OpUConvert", self.u32, v64))
        if d != 255:
            self.set_reg(d + 1, self.op("OpUConvert", self.u32, self.op("OpShiftRightLogical", self.u64, v64, self.c64(32))))

    def addr(self, inst: Inst) -> int:
        a = inst.ops["addr"]
        base = self.join64(self.reg(a["reg"]), self.reg(a["reg"] + 1)) if a["reg"] != 255 else self.c64(0)
        a64 = self.op("OpIAdd", self.u64, base, self.c64(a["off"]))
        return self.op("OpConvertUToPtr", self.psb_ptr, a64)

    def require(self, inst: Inst, **mods: int) -> None:
        for k, want in mods.items():
            if inst.mods.get(k, want) != want:
                raise TranslateError(f"{inst.text()}: modifier {k} not supported", offset=inst.addr)

    # --- instructions ----------------------------------------------------------------------
    def lower(self, inst: Inst) -> None:
        ir, ops = inst.row.ir, inst.ops
        d = ops.get("d", {}).get("reg", 255)
        dfile = ops.get("d", {}).get("file", "R")   # uniform instructions (UIADD3...) write UR registers

        def put(val: int) -> None:
            self.set_reg(d, val, dfile)

        if ir == "NOP":
            return
        if ir == "MOV":
            put(self.src(inst, "b"))
        elif ir == "S2R":
            sr = ops["sr"]["sr"]
            names = {0x21: ("LocalInvocationId", 0), 0x22: ("LocalInvocationId", 1), 0x23: ("LocalInvocationId", 2),
                     0x25: ("WorkgroupId", 0), 0x26: ("WorkgroupId", 1), 0x27: ("WorkgroupId", 2)}
            if sr not in names:
                raise TranslateError(f"{inst.text()}: special register not supported", offset=inst.addr)
            bi, comp = names[sr]
            vec = self.op("OpLoad", self.v3, self.builtins[bi])
            put(self.op("OpCompositeExtract", self.u32, vec, comp))
        elif ir == "IMAD":
            self.require(inst, X=0)
            a, b, c = self.src(inst, "a"), self.src(inst, "b"), self.src(inst, "c")
            put(self.op("OpIAdd", self.u32, self.op("OpIMul", self.u32, a, b), c))
        elif ir == "IMAD.WIDE":
            self.require(inst, X=0)
            if ops["co"]["pred"] != 7:
                raise TranslateError(f"{inst.text()}: carry out not supported", offset=inst.addr)
            conv = "OpUConvert" if inst.mods["U32"] == 0 else "OpSConvert"
            a = self.op(conv, self.u64, self.src(inst, "a"))
            b = self.op(conv, self.u64, self.src(inst, "b"))
            self.set64(d, self.op("OpIAdd", self.u64, self.op("OpIMul", self.u64, a, b), self.src64(inst, "c")))
        elif ir == "IADD3":
            self.require(inst, X=0)
            if ops["co0"]["pred"] != 7 or ops["co1"]["pred"] != 7:
                raise TranslateError(f"{inst.text()}: carry out not supported", offset=inst.addr)
            s = self.op("OpIAdd", self.u32, self.src(inst, "a"), self.src(inst, "b"))
            put(self.op("OpIAdd", self.u32, s, self.src(inst, "c")))
        elif ir == "ISETP":
            self.require(inst, EX=0)
            a, b = self.src(inst, "a"), self.src(inst, "b")
            if inst.mods["cmp"] not in ICMP_NAMES:
                raise TranslateError(f"{inst.text()}: comparison not supported", offset=inst.addr)
            self._set_bop(inst, self._icmp_op(inst.mods["cmp"], inst.mods["U32"] == 0, a, b))
        elif ir == "LOP3":
            self.require(inst, PAND=0)
            a, b, c = self.src(inst, "a"), self.src(inst, "b"), self.src(inst, "c")
            r = self._lut(ops["lut"]["imm"], a, b, c, self.u32, "OpBitwiseAnd", "OpBitwiseOr", "OpNot", self.c(0))
            put(r)
            if ops["pd"]["pred"] != 7:
                pp = ops["pp"]
                if not (pp["pred"] == 7 and pp["not"]):
                    raise TranslateError(f"{inst.text()}: predicate combine not supported", offset=inst.addr)
                self.set_pred(ops["pd"]["pred"], self.op("OpINotEqual", self.bool, r, self.c(0)))
        elif ir == "PLOP3":
            a = self.pred(ops["a"]["pred"], ops["a"]["not"])
            b = self.pred(ops["b"]["pred"], ops["b"]["not"])
            c = self.pred(ops["c"]["pred"], ops["c"]["not"])
            f = self.m.const_bool(False)
            self.set_pred(ops["p"]["pred"], self._lut(ops["lut"]["imm"], a, b, c, self.bool, "OpLogicalAnd",
                                                      "OpLogicalOr", "OpLogicalNot", f))
            self.set_pred(ops["q"]["pred"], self._lut(ops["lut2"]["imm"], a, b, c, self.bool, "OpLogicalAnd",
                                                      "OpLogicalOr", "OpLogicalNot", f))
        elif ir == "SHF":
            self._shf(inst, d)
        elif ir in ("FFMA", "FMUL", "FADD"):
            self.require(inst, FMZ=0, rnd=0, scale=4)
            ftz = inst.mods.get("FTZ", 0)
            a = self._ftz32(self.op("OpBitcast", self.f32, self.src(inst, "a", True)), ftz)
            b = self._ftz32(self.op("OpBitcast", self.f32, self.src(inst, "b", True)), ftz)
            if ir == "FFMA":
                c = self._ftz32(self.op("OpBitcast", self.f32, self.src(inst, "c", True)), ftz)
                r = self._fma(a, b, c)
            elif ir == "FMUL":
                r = self.fop("OpFMul", self.f32, a, b)
            else:
                r = self.fop("OpFAdd", self.f32, a, b)
            r = self._ftz32(r, ftz)
            if inst.mods.get("SAT", 0):
                r = self._sat32(r)
            put(self.op("OpBitcast", self.u32, r))
        elif ir == "F2I":
            put(self._f2i(inst))
        elif ir == "I2F":
            self.require(inst, dst=2)
            signed = inst.mods["sign"] == 1
            x = self.src(inst, "b")
            f = self.op("OpConvertSToF" if signed else "OpConvertUToF", self.f32, x)
            if inst.mods["rnd"]:
                f = self._directed(inst, f, x, signed, False, inst.mods["rnd"])
            put(self.op("OpBitcast", self.u32, f))
        elif ir == "FSETP":
            ftz = inst.mods.get("FTZ", 0)
            a = self._ftz32(self.op("OpBitcast", self.f32, self.src(inst, "a", True)), ftz)
            b = self._ftz32(self.op("OpBitcast", self.f32, self.src(inst, "b", True)), ftz)
            self._set_bop(inst, self._fcmp(inst.mods["cmp"], a, b))
        elif ir == "FMNMX":
            self.require(inst, FTZ=0, NAN=0, XORSIGN=0)
            a = self.op("OpBitcast", self.f32, self.src(inst, "a", True))
            b = self.op("OpBitcast", self.f32, self.src(inst, "b", True))
            pp = ops["pp"]
            put(self.op("OpBitcast", self.u32, self._fminmax(a, b, self.pred(pp["pred"], pp["not"]))))
        elif ir == "IMNMX":
            pp = ops["pp"]
            if pp["pred"] != 7:
                raise TranslateError(f"{inst.text()}: predicate-selected min/max not supported", offset=inst.addr)
            u = inst.mods["U32"] == 0
            fn = ("UMax" if u else "SMax") if pp["not"] else ("UMin" if u else "SMin")
            put(self.op("OpExtInst", self.u32, self.glsl, GLSL[fn], self.src(inst, "a"),
                                    self.src(inst, "b")))
        elif ir == "SEL":
            p = self.pred(ops["pp"]["pred"], ops["pp"]["not"])
            put(self.op("OpSelect", self.u32, p, self.src(inst, "a"), self.src(inst, "b")))
        elif ir == "ULDC":
            cb = ops["cb"]
            n = 2 if inst.mods["size"] == 5 else 1
            for i in range(n):
                self.set_reg(d + i if d != 63 else 63, self.cbank_word(cb["off"] + 4 * i, cb["bank"], inst), "UR")
        elif ir == "LDG":
            self.require(inst, size=4, order=0, cache=1)
            if ops["d"]["reg"] != 255:
                ptr = self.addr(inst)
                put(self.op("OpLoad", self.u32, ptr, self.m.E("MemoryAccess", "Aligned"), 4))
        elif ir == "STG":
            self.require(inst, size=4, order=0, cache=1)
            ptr = self.addr(inst)
            self.do("OpStore", ptr, self.src(inst, "b"), self.m.E("MemoryAccess", "Aligned"), 4)
        else:
            raise TranslateError(f"{inst.text()}: not translated yet", offset=inst.addr)

    def kill(self, ins: Inst) -> None:
        raise TranslateError(f"{ins.text()}: KILL outside a fragment program", offset=ins.addr)

    def fop(self, name: str, ty: int, *args: int) -> int:
        """A floating-point operation the driver must do exactly as written: NoContraction keeps
        it from being fused with its neighbours (FMUL then FADD are two roundings on NVIDIA)
        or re-associated (the error terms of ``_fma`` would vanish)."""
        r = self.op(name, ty, *args)
        self.m.emit("annot", "OpDecorate", r, self.m.E("Decoration", "NoContraction"))
        return r

    def _fma(self, a: int, b: int, c: int) -> int:
        """FFMA.RN: a*b+c with one rounding to f32.  GLSL's Fma may be unfused (lavapipe), so:
        the f64 product of two f32 is exact (48 significant bits); the f64 sum is rounded, its
        exact error comes from TwoSum; turning that sum into round-to-odd (an inexact sum with
        an even last bit moves one ulp toward the error) makes the final f64 -> f32 rounding
        exact, since 53 >= 2*24 + 2 (Boldo & Melquiond, "Emulation of FMA and correctly
        rounded sums: proved algorithms using rounding to odd")."""
        m = self.m
        if self.f64 is None:   # only modules with an FFMA need the Float64 feature
            m.emit("cap", "OpCapability", m.E("Capability", "Float64"))
            self.f64 = m.type("OpTypeFloat", 64)
        f64 = self.f64
        a, b, c = (self.op("OpFConvert", f64, x) for x in (a, b, c))
        p = self.fop("OpFMul", f64, a, b)
        s = self.fop("OpFAdd", f64, p, c)
        bb = self.fop("OpFSub", f64, s, p)
        e = self.fop("OpFAdd", f64, self.fop("OpFSub", f64, p, self.fop("OpFSub", f64, s, bb)),
                     self.fop("OpFSub", f64, c, bb))
        zero = m.const(f64, 0, 0)
        inexact = self.op("OpFOrdNotEqual", self.bool, e, zero)    # false for NaN/inf sums too
        bits = self.op("OpBitcast", self.u64, s)
        even = self.op("OpIEqual", self.bool, self.op("OpBitwiseAnd", self.u64, bits, self.c64(1)), self.c64(0))
        toward_up = self.op("OpLogicalEqual", self.bool, self.op("OpFOrdLessThan", self.bool, e, zero),
                            self.op("OpFOrdLessThan", self.bool, s, zero))   # |s| grows when e has s's sign
        step = self.op("OpSelect", self.u64, toward_up, self.c64(1), self.c64(-1))
        fix = self.op("OpLogicalAnd", self.bool, inexact, even)
        odd = self.op("OpSelect", self.u64, fix, self.op("OpIAdd", self.u64, bits, step), bits)
        return self.op("OpFConvert", self.f32, self.op("OpBitcast", f64, odd))

    def _ftz32(self, x: int, on: int = 1) -> int:
        """.FTZ: a denormal f32 (exponent field 0) becomes a zero of its sign."""
        if not on:
            return x
        bits = self.op("OpBitcast", self.u32, x)
        den = self.op("OpIEqual", self.bool, self.op("OpBitwiseAnd", self.u32, bits, self.c(0x7F800000)), self.c(0))
        zero = self.op("OpBitcast", self.f32, self.op("OpBitwiseAnd", self.u32, bits, self.c(0x80000000)))
        return self.op("OpSelect", self.f32, den, zero, x)

    def _flo(self, x: int, signed: bool, sh: int) -> int:
        """FLO: the position of the most significant set bit (of the first bit unlike the sign
        for signed), 0xffffffff when there is none; .SH: 31 - that position (PTX bfind.shiftamt)."""
        r = self.op("OpExtInst", self.u32, self.glsl, 74 if signed else 75, x)
        if not sh:
            return r
        none = self.op("OpIEqual", self.bool, r, self.c(0xFFFFFFFF))
        return self.op("OpSelect", self.u32, none, r, self.op("OpISub", self.u32, self.c(31), r))

    def _mufu64h(self, o: int, hi: int) -> int:
        """MUFU.RCP64H (6) / RSQ64H (7): the high word of 1/x (1/sqrt(x)) for the double whose
        high word is ``hi`` (low word 0); the compilers' Newton steps (DFMA) refine it."""
        f64 = self.f64t
        x = self.op("OpBitcast", f64, self.join64(self.c(0), hi))
        if o == 6:
            r = self.op("OpFDiv", f64, self.m.const(f64, 0, 0x3FF00000), x)
        else:
            r = self.op("OpExtInst", f64, self.glsl, 32, x)
        return self.op("OpUConvert", self.u32, self.op("OpShiftRightLogical", self.u64, self.op("OpBitcast", self.u64, r),
                                                       self.c64(32)))

    def _sat32(self, x: int) -> int:
        """.SAT: clamped to [+0, 1]; NaN (and -0) give +0."""
        one, zero = self.m.const(self.f32, 0x3F800000), self.m.const(self.f32, 0)
        r = self.op("OpSelect", self.f32, self.op("OpFOrdGreaterThan", self.bool, x, zero), x, zero)
        return self.op("OpSelect", self.f32, self.op("OpFOrdGreaterThanEqual", self.bool, x, one), one, r)

    def _f2i(self, inst: Inst) -> int:
        """F2I: round as the modifier says, then saturate to the integer range; NaN gives 0
        (SPIR-V leaves out-of-range conversions undefined, NVIDIA saturates)."""
        self.require(inst, size=2)
        x = self.op("OpBitcast", self.f32, self.src(inst, "b", True))
        return self._f2i_sat(x, ("RoundEven", "Floor", "Ceil", "Trunc")[inst.mods["rnd"]], inst.mods["sign"] == 1)

    # --- semantics both encodings share ------------------------------------------------------
    def _f2i_sat(self, x: int, rnd: str, signed: bool) -> int:
        """Round ``x`` (GLSL.std.450 ``rnd``), then convert saturating to the 32-bit range; NaN
        gives 0 (SPIR-V leaves out-of-range conversions undefined, NVIDIA saturates)."""
        r = self.op("OpExtInst", self.f32, self.glsl, GLSL[rnd], x)
        f = lambda v: self.m.const(self.f32, struct.unpack("<I", struct.pack("<f", v))[0])  # noqa: E731
        if signed:
            lo, hi, top, conv, sat = -2147483648.0, 2147483520.0, 2147483648.0, "OpConvertFToS", 0x7FFFFFFF
        else:
            lo, hi, top, conv, sat = 0.0, 4294967040.0, 4294967296.0, "OpConvertFToU", 0xFFFFFFFF
        c = self.op("OpExtInst", self.f32, self.glsl, GLSL["NMax"], self.op("OpExtInst", self.f32, self.glsl,
                                                                            GLSL["NMin"], r, f(hi)), f(lo))
        v = self.op(conv, self.u32, c)
        v = self.op("OpSelect", self.u32, self.op("OpFOrdGreaterThanEqual", self.bool, r, f(top)), self.c(sat), v)
        return self.op("OpSelect", self.u32, self.op("OpIsNan", self.bool, r), self.c(0), v)

    def _fcmp(self, cmp: int, a: int, b: int) -> int:
        """FSETP's 16 comparisons: ordered ones false on NaN, the U forms true, NUM/NAN, F/T."""
        if cmp in FCMP_OPS:
            return self.op(FCMP_OPS[cmp], self.bool, a, b)
        if cmp in (0, 15):
            return self.m.const_bool(cmp == 15)
        nan = self.op("OpLogicalOr", self.bool, self.op("OpIsNan", self.bool, a), self.op("OpIsNan", self.bool, b))
        return nan if cmp == 8 else self.op("OpLogicalNot", self.bool, nan)

    def _fminmax(self, a: int, b: int, p: int) -> int:
        """FMNMX: min when ``p`` holds, else max; NaN-suppressing like NVIDIA's (NMin/NMax
        return the other operand)."""
        lo = self.op("OpExtInst", self.f32, self.glsl, GLSL["NMin"], a, b)
        hi = self.op("OpExtInst", self.f32, self.glsl, GLSL["NMax"], a, b)
        return self.op("OpSelect", self.f32, p, lo, hi)

    def _icmp_op(self, cmp: int, unsigned: bool, a: int, b: int) -> int:
        """Integer comparison 0..7 (F, LT, EQ, LE, GT, NE, GE, T) as a bool."""
        name = ICMP_NAMES.get(cmp)
        if name is None:
            return self.m.const_bool(cmp == 7)
        op = {"Equal": "OpIEqual", "NotEqual": "OpINotEqual"}.get(name) or ("OpU" if unsigned else "OpS") + name
        return self.op(op, self.bool, a, b)

    def _set_bop(self, inst: Inst, r: int) -> None:
        pp = inst.ops["pp"]
        c = self.pred(pp["pred"], pp["not"])
        bop = {0: "OpLogicalAnd", 1: "OpLogicalOr", 2: "OpLogicalNotEqual"}[inst.mods["bop"]]
        self.set_pred(inst.ops["p"]["pred"], self.op(bop, self.bool, r, c))
        if inst.ops["q"]["pred"] != 7:
            self.set_pred(inst.ops["q"]["pred"], self.op(bop, self.bool, self.op("OpLogicalNot", self.bool, r), c))

    def _lut(self, lut: int, a: int, b: int, c: int, ty: int, AND: str, OR: str, NOT: str, zero: int) -> int:
        nots = {}

        def lit(x, pos):
            if pos:
                return x
            if x not in nots:
                nots[x] = self.op(NOT, ty, x)
            return nots[x]

        r = None
        for i in range(8):
            if lut >> i & 1:
                t = self.op(AND, ty, self.op(AND, ty, lit(a, i & 4), lit(b, i & 2)), lit(c, i & 1))
                r = t if r is None else self.op(OR, ty, r, t)
        return zero if r is None else r

    def _shf(self, inst: Inst, d: int) -> None:
        mods = inst.mods
        wide = {1: False, 2: True, 3: True}[mods["type"]]  # .U64 uses 64-bit shifts; S32/U32 32-bit ones
        if not wide:
            raise TranslateError(f"{inst.text()}: 64-bit funnel shift not supported", offset=inst.addr)
        v = self.join64(self.src(inst, "a"), self.src(inst, "c"))
        s = self.src(inst, "b")
        s = self.op("OpBitwiseAnd", self.u32, s, self.c(31)) if mods["W"] else \
            self.op("OpExtInst", self.u32, self.glsl, GLSL["UMin"], s, self.c(32))
        s64 = self.op("OpUConvert", self.u64, s)
        if mods["dir"] == 0:
            r = self.op("OpShiftLeftLogical", self.u64, v, s64)
        else:
            r = self.op("OpShiftRightArithmetic" if mods["type"] == 2 else "OpShiftRightLogical", self.u64, v, s64)
        if mods["HI"]:
            r = self.op("OpShiftRightLogical", self.u64, r, self.c64(32))
        self.set_reg(d, self.op("OpUConvert", self.u32, r))

    # --- FP64 and directed rounding (both ISAs) ----------------------------------------------
    @property
    def f64t(self) -> int:
        if self.f64 is None:
            self.m.emit("cap", "OpCapability", self.m.E("Capability", "Float64"))
            self.f64 = self.m.type("OpTypeFloat", 64)
        return self.f64

    def _two_sum(self, a: int, b: int) -> tuple[int, int]:
        t, f = self.f64t, self.fop
        s = f("OpFAdd", t, a, b)
        bb = f("OpFSub", t, s, a)
        return s, f("OpFAdd", t, f("OpFSub", t, a, f("OpFSub", t, s, bb)), f("OpFSub", t, b, bb))

    def _split(self, a: int) -> tuple[int, int]:
        t, f = self.f64t, self.fop
        k = self.m.const(t, *struct.unpack("<II", struct.pack("<d", 134217729.0)))   # 2^27 + 1 (Veltkamp)
        c = f("OpFMul", t, k, a)
        hi = f("OpFSub", t, c, f("OpFSub", t, c, a))
        return hi, f("OpFSub", t, a, hi)

    def _dfma(self, a: int, b: int, c: int) -> int:
        """DFMA.RN without relying on the device's Fma being fused: the exact product as
        ph + pl (Dekker's TwoProduct), then the correctly rounded sum of ph, pl, c by Boldo and
        Melquiond's algorithm (TwoSum twice, the small parts added with rounding to odd, one
        final rounding).  Exact for products and sums away from the overflow and denormal
        ranges (|a|, |b| < 2^996, |a*b| > 2^-969); inf/NaN inputs take the plain product."""
        t, f = self.f64t, self.fop
        ph = f("OpFMul", t, a, b)
        ah, al = self._split(a)
        bh, bl = self._split(b)
        pl = f("OpFAdd", t, f("OpFAdd", t, f("OpFAdd", t, f("OpFSub", t, f("OpFMul", t, ah, bh), ph),
                                                    f("OpFMul", t, ah, bl)), f("OpFMul", t, al, bh)),
               f("OpFMul", t, al, bl))
        uh, ul = self._two_sum(c, pl)
        th, tl = self._two_sum(uh, ph)
        v, e = self._two_sum(tl, ul)
        zero = self.m.const(t, 0, 0)
        bits = self.op("OpBitcast", self.u64, v)
        even = self.op("OpIEqual", self.bool, self.op("OpBitwiseAnd", self.u64, bits, self.c64(1)), self.c64(0))
        inexact = self.op("OpFOrdNotEqual", self.bool, e, zero)
        grow = self.op("OpLogicalEqual", self.bool, self.op("OpFOrdLessThan", self.bool, e, zero),
                       self.op("OpFOrdLessThan", self.bool, v, zero))
        step = self.op("OpSelect", self.u64, grow, self.c64(1), self.c64(-1))
        odd = self.op("OpSelect", self.u64, self.op("OpLogicalAnd", self.bool, inexact, even),
                      self.op("OpIAdd", self.u64, bits, step), bits)
        r = f("OpFAdd", t, th, self.op("OpBitcast", t, odd))
        finite = self.op("OpLogicalNot", self.bool, self.op("OpLogicalOr", self.bool, self.op("OpIsInf", self.bool, ph),
                                                                 self.op("OpIsNan", self.bool, ph)))
        plain = f("OpFAdd", t, ph, c)
        return self.op("OpSelect", t, finite, r, plain)

    def _directed(self, inst: Inst, f: int, x: int, signed: bool, is64: bool, rnd: int) -> int:
        """The round-to-nearest conversion ``f`` of the integer ``x`` moved one ulp where the
        mode (1 RM, 2 RP, 3 RZ) rounds the other way: compared exactly against ``x`` (through
        f64 for 32-bit sources, as an integer for unsigned 64-bit ones)."""
        u32, b = self.u32, self.bool
        if is64:
            if signed:
                raise TranslateError(f"{inst.text()}: directed rounding of S64 not translated", offset=inst.addr)
            top = self.m.const(self.f32, struct.unpack("<I", struct.pack("<f", 2.0 ** 64))[0])
            fi = self.op("OpConvertFToU", self.u64, f)
            over = self.op("OpFOrdGreaterThanEqual", b, f, top)
            below = self.op("OpLogicalAnd", b, self.op("OpLogicalNot", b, over), self.op("OpULessThan", b, fi, x))
            above = self.op("OpLogicalOr", b, over, self.op("OpUGreaterThan", b, fi, x))
        else:
            e = self.op("OpConvertSToF" if signed else "OpConvertUToF", self.f64t, x)
            back = self.op("OpFConvert", self.f64t, f)
            below, above = self.op("OpFOrdLessThan", b, back, e), self.op("OpFOrdGreaterThan", b, back, e)
        bits = self.op("OpBitcast", u32, f)
        neg = self.op("OpSLessThan", b, bits, self.c(0))
        # toward +inf: +1 ulp of magnitude for positives, -1 for negatives; toward -inf the opposite
        up = self.op("OpSelect", u32, neg, self.op("OpISub", u32, bits, self.c(1)), self.op("OpIAdd", u32, bits, self.c(1)))
        dn = self.op("OpSelect", u32, neg, self.op("OpIAdd", u32, bits, self.c(1)), self.op("OpISub", u32, bits, self.c(1)))
        if rnd == 2:
            r = self.op("OpSelect", u32, below, up, bits)
        elif rnd == 1:
            r = self.op("OpSelect", u32, above, dn, bits)
        else:   # toward zero: shrink the magnitude when it grew
            grew = self.op("OpSelect", b, neg, below, above)
            r = self.op("OpSelect", u32, grew, self.op("OpISub", u32, bits, self.c(1)), bits)
        return self.op("OpBitcast", self.f32, r)

    # --- shared memory and the emulated 32-lane warp (both ISAs) -------------------------------
    def shared_word(self, byte_addr: int) -> int:
        if "shared" not in self.vars_global:
            m, E = self.m, self.m.E
            wg = E("StorageClass", "Workgroup")
            arr = m.type("OpTypeArray", self.u32, self.c(SHARED_WORDS))
            v = m.id()
            m.emit("types", "OpVariable", m.type("OpTypePointer", wg, arr), v, wg)
            self.vars_global["shared"] = (v, m.type("OpTypePointer", wg, self.u32))
            self.interface.append(v)
        v, ptr = self.vars_global["shared"]
        idx = self.op("OpBitwiseAnd", self.u32, self.op("OpShiftRightLogical", self.u32, byte_addr, self.c(2)),
                      self.c(SHARED_WORDS - 1))
        return self.op("OpAccessChain", ptr, v, idx)

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

    def _barrier(self) -> None:
        E = self.m.E
        wg = self.c(E("Scope", "Workgroup"))
        self.do("OpControlBarrier", wg, wg,
                self.c(E("MemorySemantics", "AcquireRelease") | E("MemorySemantics", "WorkgroupMemory")))

    def _local_access(self, addr: int, reg: int, n: int, load: bool) -> None:
        """LDL/STL of ``n`` words at byte address ``addr`` into / from registers ``reg``...
        (both ISAs): a per-invocation array of LOCAL_WORDS words, addresses taken modulo its size."""
        if "local" not in self.vars:
            arr = self.m.type("OpTypeArray", self.u32, self.c(LOCAL_WORDS))
            self.vars["local"] = (self.m.id(), self.m.type("OpTypePointer", self.m.E("StorageClass", "Function"), arr))
        for i in range(n):
            w = self.op("OpIAdd", self.u32, addr, self.c(4 * i))
            idx = self.op("OpBitwiseAnd", self.u32, self.op("OpShiftRightLogical", self.u32, w, self.c(2)),
                          self.c(LOCAL_WORDS - 1))
            p = self.op("OpAccessChain", self.fn_u32, self.vars["local"][0], idx)
            if load:
                if reg != 255:
                    self.set_reg(reg + i, self.op("OpLoad", self.u32, p))
            else:
                self.do("OpStore", p, self.reg(reg + i) if reg != 255 else self.c(0))

    def _vote_ballot(self, p: int, mode: int) -> tuple[int, int]:
        """VOTE over the emulated 32-lane warp (both ISAs): every lane publishes its predicate
        ``p``, then reads its warp's 32 slots (lanes past the workgroup's end count as absent).
        Returns the ballot and the mode's result (0 ALL, 1 ANY, 2 EQ: all or none)."""
        n = self.spec.local_size[0] * self.spec.local_size[1] * self.spec.local_size[2]
        lid, _lane, base = self._publish(self.op("OpSelect", self.u32, p, self.c(1), self.c(0)))
        ballot, members = self.c(0), self.c(0)
        for j in range(32):
            at = self.op("OpIAdd", self.u32, base, self.c(j))
            inside = self.op("OpULessThan", self.bool, at, self.c(n))
            v = self.op("OpLoad", self.u32, self._xchg_ptr(self.op("OpSelect", self.u32, inside, at, lid)))
            v = self.op("OpSelect", self.u32, inside, v, self.c(0))
            ballot = self.op("OpBitwiseOr", self.u32, ballot, self.op("OpShiftLeftLogical", self.u32, v, self.c(j)))
            members = self.op("OpBitwiseOr", self.u32, members,
                              self.op("OpSelect", self.u32, inside, self.c(1 << j), self.c(0)))
        anyv = self.op("OpINotEqual", self.bool, ballot, self.c(0))
        allv = self.op("OpIEqual", self.bool, ballot, members)
        r = {0: allv, 1: anyv, 2: self.op("OpLogicalOr", self.bool, allv, self.op("OpLogicalNot", self.bool, anyv))}[mode]
        return ballot, r

    def _atomic_loop(self, ptr: int, scope: int, sem: int, fn) -> int:
        """An atomic read-modify-write SPIR-V has no instruction for (INC/DEC with their wrap
        limit, float add/min/max): a compare-exchange loop on the 32-bit word, ``fn(old) ->
        new``; returns the old value the exchange saw."""
        u32, b_ = self.u32, self.bool
        res = self.var(f"atom{len(self.body)}", self.fn_u32)
        head, body, cont, merge = (self.label() for _ in range(4))
        self.do("OpBranch", head)
        self.put_label(head)
        self.do("OpLoopMerge", merge, cont, 0)
        self.do("OpBranch", body)
        self.put_label(body)
        old = self.op("OpAtomicLoad", u32, ptr, scope, sem)
        got = self.op("OpAtomicCompareExchange", u32, ptr, scope, sem, sem, fn(old), old)
        self.do("OpStore", res, got)
        self.do("OpBranchConditional", self.op("OpIEqual", b_, got, old), merge, cont)
        self.put_label(cont)
        self.do("OpBranch", head)
        self.put_label(merge)
        return self.op("OpLoad", u32, res)

    def _rmw_fn(self, op: int, ftype: int, b: int):
        """The new-value function of an atomic op without a SPIR-V instruction: INC (3) / DEC (4)
        with PTX's wrap rules against ``b``, or, for F32 (``ftype`` 3, .FTZ.RN), ADD/MIN/MAX."""
        u32, b_, c = self.u32, self.bool, self.c
        if ftype == 3:
            bf = self._ftz32(self.op("OpBitcast", self.f32, b))

            def f(old):
                x = self._ftz32(self.op("OpBitcast", self.f32, old))
                if op == 0:
                    r = self._ftz32(self.fop("OpFAdd", self.f32, x, bf))
                else:
                    r = self._fminmax(x, bf, self.m.const_bool(op == 1))
                return self.op("OpBitcast", u32, r)
            return f
        if op == 3:
            return lambda old: self.op("OpSelect", u32, self.op("OpUGreaterThanEqual", b_, old, b), c(0),
                                       self.op("OpIAdd", u32, old, c(1)))
        if op == 4:
            return lambda old: self.op("OpSelect", u32, self.op("OpLogicalOr", b_, self.op("OpIEqual", b_, old, c(0)),
                                                                 self.op("OpUGreaterThan", b_, old, b)),
                                       b, self.op("OpISub", u32, old, c(1)))
        return None

    def _shfl_warp(self, mode: int, a: int, b: int, cv: int) -> tuple[int, int]:
        """SHFL on the emulated warp, as the PTX ISA defines shfl.sync (both ISAs encode it the
        same way): ``a`` the value this lane offers, ``b`` the lane/offset, ``cv`` the clamp
        (bits 0..4) and segment mask (bits 8..12), any of them run-time values (-G code passes
        them through its shuffle helpers).  The source lane j is computed per mode (0 IDX, 1 UP,
        2 DOWN, 3 BFLY); where it falls outside the segment (or, here, the workgroup) the lane
        keeps its own value and the predicate is false.  Returns (value, predicate)."""
        u32, b_, c = self.u32, self.bool, self.c
        n = self.spec.local_size[0] * self.spec.local_size[1] * self.spec.local_size[2]
        b = self.op("OpBitwiseAnd", u32, b, c(31))
        clamp = self.op("OpBitwiseAnd", u32, cv, c(31))
        seg = self.op("OpBitwiseAnd", u32, self.op("OpShiftRightLogical", u32, cv, c(8)), c(31))
        lid, lane, base = self._publish(a)
        nseg = self.op("OpNot", u32, seg)
        min_lane = self.op("OpBitwiseAnd", u32, lane, seg)
        max_lane = self.op("OpBitwiseOr", u32, min_lane, self.op("OpBitwiseAnd", u32, clamp, nseg))
        if mode == 0:
            j = self.op("OpBitwiseOr", u32, min_lane, self.op("OpBitwiseAnd", u32, b, nseg))
            ok = self.op("OpSLessThanEqual", b_, j, max_lane)
        elif mode == 1:
            j = self.op("OpISub", u32, lane, b)
            ok = self.op("OpSGreaterThanEqual", b_, j, max_lane)
        elif mode == 2:
            j = self.op("OpIAdd", u32, lane, b)
            ok = self.op("OpSLessThanEqual", b_, j, max_lane)
        else:
            j = self.op("OpBitwiseXor", u32, lane, b)
            ok = self.op("OpSLessThanEqual", b_, j, max_lane)
        at = self.op("OpIAdd", u32, base, self.op("OpBitwiseAnd", u32, j, c(31)))
        take = self.op("OpLogicalAnd", b_, ok, self.op("OpULessThan", b_, at, c(n)))
        at = self.op("OpSelect", u32, take, at, lid)
        return self.op("OpLoad", u32, self._xchg_ptr(at)), take

    def _publish(self, value: int) -> tuple[int, int, int]:
        """Write this invocation's value for its warp: (linear id, lane, warp base)."""
        lid = self._lid()
        self._barrier()                    # earlier readers of the array are done
        self.do("OpStore", self._xchg_ptr(lid), value)
        self._barrier()
        lane = self.op("OpBitwiseAnd", self.u32, lid, self.c(31))
        return lid, lane, self.op("OpISub", self.u32, lid, lane)

    def _generic_access(self, inst: Inst, addr: int, window: int, n: int, mode: str, reg: int,
                        atom: tuple[str, int] | None = None, window_size: int = 1 << 24) -> None:
        """A load/store/atomic of ``n`` words at a generic 64-bit address: inside the shared
        window [window, window + window_size) the access goes to shared memory at the offset,
        otherwise to global memory.  The two paths are a selection, so a shared address is
        never dereferenced as a global pointer.  ``atom``: (SPIR-V atomic opcode, operand), or
        (new-value function, None) for a compare-exchange loop."""
        u32, u64, E = self.u32, self.u64, self.m.E
        rel = self.op("OpISub", u64, addr, window)
        shared = self.op("OpULessThan", self.bool, rel, self.c64(window_size))
        off = self.op("OpUConvert", u32, rel)
        res = [self.var(f"g{inst.addr}_{k}", self.fn_u32) for k in range(n)] if mode != "store" else []
        then, other, merge = self.label(), self.label(), self.label()
        self.do("OpSelectionMerge", merge, 0)
        self.do("OpBranchConditional", shared, then, other)
        for lab, sh in ((then, True), (other, False)):
            self.put_label(lab)
            for k in range(n):
                if sh:
                    p = self.shared_word(self.op("OpIAdd", u32, off, self.c(4 * k)))
                else:
                    p = self.op("OpConvertUToPtr", self.psb_ptr, self.op("OpIAdd", u64, addr, self.c64(4 * k)))
                acc = () if sh else (E("MemoryAccess", "Aligned"), 4)
                if mode == "load":
                    self.do("OpStore", res[k], self.op("OpLoad", u32, p, *acc))
                elif mode == "store":
                    self.do("OpStore", p, self.reg(reg + k) if reg != 255 else self.c(0), *acc)
                else:
                    scope = self.c(E("Scope", "Workgroup" if sh else "Device"))
                    sem = self.c(E("MemorySemantics", "WorkgroupMemory" if sh else "UniformMemory"))
                    if callable(atom[0]):                       # a compare-exchange loop (_rmw_fn)
                        self.do("OpStore", res[k], self._atomic_loop(p, scope, sem, atom[0]))
                    else:
                        self.do("OpStore", res[k], self.op(atom[0], u32, p, scope, sem, atom[1]))
            self.do("OpBranch", merge)
        self.put_label(merge)
        if mode != "store" and reg != 255:
            for k in range(n):
                self.set_reg(reg + k, self.op("OpLoad", u32, res[k]))

    # --- whole function ----------------------------------------------------------------------
    # The dispatcher loop is shared with the SM53 lowering; an architecture supplies its basic
    # blocks, where a branch goes, and how its control-flow instructions pick the next block.
    def block_list(self) -> list[list[Inst]]:
        return _blocks(self.insts)

    def branch_target(self, ins: Inst) -> int:
        """Address a branch instruction goes to."""
        return ins.ops["target"]["target"]

    def _prologue(self) -> None:
        """Stores at the function's start (SM53: its reconvergence stack pointer, carry flag)."""

    def _block_start(self, block: list[Inst]) -> None:
        """Called at the start of every basic block (its instructions), in block order."""

    def _guard(self, ins: Inst) -> int:
        return self.pred(ins.pred, ins.pred_not, "UP" if getattr(ins.row, "uniform", False) else "P")

    # A branch (BRA, EXIT, CALL, RET on SM86) may carry a second predicate operand besides its
    # guard (``@P0 BRA P1, target``): it is taken when both hold.
    @staticmethod
    def _unconditional(ins: Inst) -> bool:
        pp = ins.ops.get("pp")
        return ins.pred == 7 and not ins.pred_not and (pp is None or (pp["pred"] == 7 and not pp["not"]))

    def _branch_guard(self, ins: Inst) -> int:
        g = self._guard(ins)
        pp = ins.ops.get("pp")
        if pp is not None and not (pp["pred"] == 7 and not pp["not"]):
            g = self.op("OpLogicalAnd", self.bool, g, self.pred(pp["pred"], pp["not"]))
        return g

    def _control(self, ins: Inst, i: int, nxt: int, target) -> int | None:
        """A control-flow instruction of block ``i``: the next block's number (an id) after it,
        given the one so far (``nxt``); None when ``ins`` is not control flow.  ``target(ins)``
        is the block number its branch target starts."""
        ir = ins.row.ir
        if ir not in ("BRA", "EXIT"):
            return None
        tgt = self.c(DONE if ir == "EXIT" else target(ins))
        if self._unconditional(ins):
            return tgt
        return self.op("OpSelect", self.u32, self._branch_guard(ins), tgt, nxt)

    # structured lowering: instructions that end a block with its (guarded) branch, and those
    # that only feed the static successors (SM53's SSY/PBK) and emit nothing
    STRUCT_BRANCH = ("BRA", "EXIT")
    STRUCT_SKIP: tuple[str, ...] = ()

    def structure_ok(self) -> bool:
        """Whether the structuriser may try this program (SM53: not with CAL/RET, whose return
        targets are run-time values)."""
        return True

    def _block_end(self, block: list[Inst]) -> None:
        """Called after the instructions of every basic block."""

    def build(self) -> bytes:
        for ins in self.insts:
            if not self.lowered(ins.row.ir):
                raise TranslateError(f"{ins.text()}: not translated yet", offset=ins.addr)
        blocks = self.block_list()
        index = {b[0].addr: i for i, b in enumerate(blocks)}

        def target(ins: Inst) -> int:
            t = index.get(self.branch_target(ins))
            if t is None:
                raise TranslateError(f"{ins.text()}: branch target outside the kernel", offset=ins.addr)
            return t

        self.structured = False
        steps = None
        if self.structure_ok():
            try:
                nodes, succ = expand(len(blocks), self._step(blocks, target))
                steps = structure.plan(succ)
            except structure.Unstructured as e:
                log.debug("dispatcher loop: %s", e)
        entry = self.label()
        self._prologue()
        if steps is not None:
            self.structured = True
            self._cond: dict[int, int | None] = {}
            self._emit_plan(steps, [blocks[n] for n in nodes], {})
            return self._emit_function(entry)
        return self._build_dispatcher(blocks, target, entry)

    # --- structured control flow (spirv/structure.py's plan) -------------------------------------
    def _step(self, blocks: list[list[Inst]], target) -> Step:
        """The transfer function ``spirv.expand`` walks: here the state never changes (an
        architecture with calls or a reconvergence stack keeps them in it)."""
        succ = self._successors(blocks, target)
        return lambda i, st: [(t, st) for t in succ[i]]

    def _successors(self, blocks: list[list[Inst]], target) -> list[list[int]]:
        """Per block: [next] or [taken, fallthrough] for its guarded branch; structure.RET = leaves
        the program (EXIT, or the end of the code)."""
        out = []
        for i, b in enumerate(blocks):
            nxt = i + 1 if i + 1 < len(blocks) else structure.RET
            last = b[-1]
            ir = last.row.ir
            if ir in ("BRA", "EXIT"):
                t = structure.RET if ir == "EXIT" else target(last)
                out.append([t] if self._unconditional(last) else [t, nxt])
            else:
                out.append([nxt])
        return out

    def _lower_guarded(self, ins: Inst) -> None:
        if not (ins.pred == 7 and not ins.pred_not):
            then, after = self.label(), self.label()
            p = self._guard(ins)
            self.do("OpSelectionMerge", after, 0)
            self.do("OpBranchConditional", p, then, after)
            self.put_label(then)
            self.lower(ins)
            self.do("OpBranch", after)
            self.put_label(after)
        else:
            self.lower(ins)

    def _emit_block(self, i: int, b: list[Inst]) -> None:
        self._block_start(b)
        cond = None
        for ins in b:
            if ins.row.ir in ("KILL", "KIL"):
                self.kill(ins)
            elif ins.row.ir in self.STRUCT_BRANCH:
                if not self._unconditional(ins):
                    cond = self._branch_guard(ins)
            elif ins.row.ir in self.STRUCT_SKIP:
                continue
            else:
                self._lower_guarded(ins)
        self._block_end(b)
        self._cond[i] = cond

    def _emit_plan(self, steps: list, blocks: list[list[Inst]], ctx: dict) -> None:
        """Emit a plan (see spirv/structure.py) into the open block; ``ctx``: the labels of the
        innermost selection merge ('stop'), loop continue ('cont') and loop merge ('break')."""
        for st in steps:
            kind = st[0]
            if kind == "block":
                self._emit_block(st[1], blocks[st[1]])
            elif kind == "if":
                merge, then, other = self.label(), self.label(), self.label()
                self.do("OpSelectionMerge", merge, 0)
                self.do("OpBranchConditional", self._cond[st[1]], then, other)
                for lab, arm in ((then, st[2]), (other, st[3])):
                    self.put_label(lab)
                    self._emit_plan(arm, blocks, {**ctx, "stop": merge})
                self.put_label(merge)
            elif kind == "loop":
                head, body, cont, merge = (self.label() for _ in range(4))
                self.do("OpBranch", head)
                self.put_label(head)
                self.do("OpLoopMerge", merge, cont, 0)
                self.do("OpBranch", body)
                self.put_label(body)
                self._emit_plan(st[2], blocks, {"cont": cont, "break": merge})
                self.put_label(cont)
                self.do("OpBranch", head)
                self.put_label(merge)
            elif kind in ("stop", "cont", "break"):
                self.do("OpBranch", ctx[kind])
            elif kind == "ret":
                self._epilogue()
                self.do("OpReturn")
            else:
                self.do("OpUnreachable")

    # --- the dispatcher loop: any CFG ------------------------------------------------------------
    def _build_dispatcher(self, blocks: list[list[Inst]], target, entry: int) -> bytes:
        blk = self.var("block", self.fn_u32)
        header, sw, swmerge, cont, merge = (self.label() for _ in range(5))
        self.do("OpStore", blk, self.c(0))
        self.do("OpBranch", header)
        self.put_label(header)
        self.do("OpLoopMerge", merge, cont, 0)
        self.do("OpBranch", sw)
        self.put_label(sw)
        cur = self.op("OpLoad", self.u32, blk)
        case_labels = [self.label() for _ in blocks]
        self.do("OpSelectionMerge", swmerge, 0)
        self.do("OpSwitch", cur, swmerge, *[x for i, lab in enumerate(case_labels) for x in (i, lab)])
        for i, (b, lab) in enumerate(zip(blocks, case_labels)):
            self.put_label(lab)
            self._block_start(b)
            nxt = self.c(i + 1 if i + 1 < len(blocks) else DONE)
            for ins in b:
                if ins.row.ir in ("KILL", "KIL"):     # a terminator: always in its own conditional block
                    self.kill(ins)
                    continue
                after_ctl = self._control(ins, i, nxt, target)
                if after_ctl is not None:
                    nxt = after_ctl
                    continue
                self._lower_guarded(ins)
            self._block_end(b)
            self.do("OpStore", blk, nxt)
            self.do("OpBranch", swmerge)
        self.put_label(swmerge)
        self.do("OpBranch", cont)
        self.put_label(cont)
        again = self.op("OpINotEqual", self.bool, self.op("OpLoad", self.u32, blk), self.c(DONE))
        self.do("OpBranchConditional", again, header, merge)
        self.put_label(merge)
        self._epilogue()
        self.do("OpReturn")
        return self._emit_function(entry)

    def _emit_function(self, entry: int) -> bytes:
        """The function: header, the variables in the first block, then the body; the entry
        point; the module's binary."""
        m, E = self.m, self.m.E
        void = m.type("OpTypeVoid")
        fnty = m.type("OpTypeFunction", void)
        main = m.id()
        fn = E("StorageClass", "Function")
        m.function = [("OpFunction", void, main, 0, fnty), ("OpLabel", entry),
                      *[("OpVariable", ptr, vid, fn) for vid, ptr in self.vars.values()], *self.body,
                      ("OpFunctionEnd",)]
        self._entry(main)
        return m.binary()
