"""The lowering's ground floor: the SPIR-V module being written, the register model (machine
registers and predicates are function-local variables, RZ/PT constants), constant bank 0 of a
compute kernel (a read-only storage buffer, set 0 binding 0), the builtins, and the function's
emission.  ISA-neutral: operands are read by the ISA parts (``sm86/to_spirv.py``,
``sm53/to_spirv.py``).

Two modes.  While the driver (``lower/control.py``) lowers the program (build mode), everything
goes into the IR function ``self.fn`` (``ir/block.py``): a handler's IR blocks are appended to
the current basic block; the driver's own register, predicate and scalar-variable accesses
become IR operations (their results handed out as placeholder ids); labels, merges and
terminators open and close basic blocks; any other SPIR-V instruction is refused (``IRError``:
every instruction is lowered through IR rows).  Then the optimiser (``ir/optimize.py``) runs and
``ir/to_spirv.emit_function`` lowers the IR (emission mode): ``self._out`` is the SPIR-V body
and the helpers below write instructions into it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from nxrecomp.common.errors import NxError
from shader_svc.ir.block import Function, IRError, Merge, Op, Term, Value
from shader_svc.ir.ops import OPS
from shader_svc.ir.types import Type
from shader_svc.isa.inst import Inst
from shader_svc.spirv import peephole
from shader_svc.spirv.builder import Module
from shader_svc.spirv.ids import id_slots
from shader_svc.request import FEATURES

FEATURE_DENORM_PRESERVE32 = FEATURES["denorm_preserve32"]

DONE = 0xFFFFFFFF  # the dispatcher loop's "block" value after the program's end
GLSL = {
    "RoundEven": 2,
    "Trunc": 3,
    "FAbs": 4,
    "SAbs": 5,
    "Floor": 8,
    "Ceil": 9,
    "UMin": 38,
    "SMin": 39,
    "UMax": 41,
    "Fma": 50,
    "SMax": 42,
    "NMin": 79,
    "NMax": 80,
    "Sin": 13,
    "Cos": 14,
    "Exp2": 29,
    "Log2": 30,
    "Sqrt": 31,
    "InverseSqrt": 32,
}
# FSETP comparisons: ordered ones are false when an operand is NaN, the U forms true
ICMP_NAMES = {1: "LessThan", 2: "Equal", 3: "LessThanEqual", 4: "GreaterThan", 5: "NotEqual", 6: "GreaterThanEqual"}

FCMP_OPS = {
    1: "OpFOrdLessThan",
    2: "OpFOrdEqual",
    3: "OpFOrdLessThanEqual",
    4: "OpFOrdGreaterThan",
    5: "OpFOrdNotEqual",
    6: "OpFOrdGreaterThanEqual",
    9: "OpFUnordLessThan",
    10: "OpFUnordEqual",
    11: "OpFUnordLessThanEqual",
    12: "OpFUnordGreaterThan",
    13: "OpFUnordNotEqual",
    14: "OpFUnordGreaterThanEqual",
}


SHARED_WORDS = 8192  # 32 KiB of shared memory: lavapipe's limit (Maxwell has 48 KiB)


LOCAL_WORDS = 1024  # local memory per invocation: 4 KiB (addresses are taken modulo)


class TranslateError(NxError):
    pass


# the SPIR-V instructions the driver writes while building: they end a basic block, or head a
# structured construct (``ir.block.Term``, ``ir.block.Merge``)
TERMINATORS = {"OpBranch", "OpBranchConditional", "OpSwitch", "OpReturn", "OpKill", "OpUnreachable", "OpTerminateInvocation"}
MERGES = {"OpSelectionMerge", "OpLoopMerge"}


@dataclass(frozen=True)
class ComputeSpec:
    local_size: tuple[int, int, int] = (64, 1, 1)
    # constant banks that are part of the program, (bank, contents): ptxas's literal pool for
    # SM5x (c[0x2], the cubin's .nv.constant2.<kernel>), read as constants of the module
    banks: tuple[tuple[int, bytes], ...] = ()
    features: int = 0  # request.Program.features (lower/fence.py: memory_barrier)
    # shader-ctl2: the program's initialised global data as placed by its loader, ((device
    # address, bytes), ...): the code addresses it holds (vtables, tables of function pointers)
    # are the possible callees of a call through a register loaded from memory (lower/indirect.py)
    data: tuple[tuple[int, bytes], ...] = ()


class LowerBase:
    """State and helpers of one program's lowering (see the module docstring)."""

    # the IR optimiser and the SPIR-V peephole (off: every variable access stays a load/store,
    # for tests and the bench's comparison)
    OPTIMIZE = True

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
        self.fn = Function()  # the program in IR, built by the driver (module docstring)
        self._out: list[tuple] | None = None  # the SPIR-V body while the IR is lowered
        self._scalars: dict[int, Type] = {}  # function variables of one u32/bool: IR-visible
        self.interface: list[int] = []  # global variables the entry point lists
        self.vars_global: dict[str, tuple[int, int]] = {}  # shared memory, the warp exchange array
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
        m.emit("memmodel", "OpMemoryModel", E("AddressingModel", "PhysicalStorageBuffer64"), E("MemoryModel", "GLSL450"))
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
        if self.spec.features & FEATURE_DENORM_PRESERVE32:  # CUDA keeps f32 denormals (no .FTZ)
            self.m.emit("cap", "OpCapability", E("Capability", "DenormPreserve"))
            self.m.emit("execmode", "OpExecutionMode", main, E("ExecutionMode", "DenormPreserve"), 32)

    def _epilogue(self) -> None:
        """Code after the program's last EXIT (fragment outputs are read from registers here)."""

    def lowered(self, ir: str) -> bool:
        return False

    # --- helpers ---------------------------------------------------------------------------
    def c(self, v: int) -> int:
        return self.m.const(self.u32, v & 0xFFFFFFFF)

    def c64(self, v: int) -> int:
        v &= 2**64 - 1
        return self.m.const(self.u64, v & 0xFFFFFFFF, v >> 32)

    def op(self, name: str, ty: int, *args) -> int:
        if name in peephole.FOLDABLE and self.OPTIMIZE:
            k = peephole.fold(self.m, name, ty, args)
            if k is not None:
                return k
        r = self.m.id()
        if self._out is not None:
            self._out.append((name, ty, r) + args)
        elif name == "OpLoad" and len(args) == 1 and args[0] in self._scalars:
            t = self._scalars[args[0]]
            return self._ir("LoadVarU32" if t == Type.U32 else "LoadVarBool", (), {"var": args[0]}, r)
        else:
            self._building(name)
        return r

    def do(self, name: str, *args) -> None:
        if self._out is not None:
            self._out.append((name,) + args)
        elif name == "OpStore" and len(args) == 2 and args[0] in self._scalars:
            t = self._scalars[args[0]]
            v = self.fn.fixed_value(args[1], t)
            self._ir("StoreVarU32" if t == Type.U32 else "StoreVarBool", (v,), {"var": args[0]})
        elif name in TERMINATORS:
            self.fn.current.term = Term(name, args)
        elif name in MERGES:
            self.fn.current.merge = Merge(name, args)
        else:
            self._building(name)

    @staticmethod
    def _building(name: str) -> None:
        raise IRError(f"{name}: SPIR-V written while the IR function is built (a lowering bug: build IR rows)")

    # the IR function's control flow, as the driver writes it (build mode; ``do`` turns the same
    # SPIR-V instructions into these)
    def end(self, kind: str, *args: int) -> None:
        """End the current basic block with its terminator (``ir.block.Term``)."""
        self.fn.current.term = Term(kind, args)

    def merge(self, kind: str, *args: int) -> None:
        """The current block heads a structured construct (``ir.block.Merge``)."""
        self.fn.current.merge = Merge(kind, args)

    def _ir(self, name: str, args: tuple[Value, ...], attrs: dict, placeholder: int | None = None) -> int | None:
        """An IR operation appended to the current basic block (built in build mode); the
        placeholder id of its result for SPIR-V-writing code."""
        d = OPS[name]
        res = self.fn.new_value(d.result) if d.result is not None else None
        self.fn.current.items.append(Op(d, args, attrs, res))
        if res is None:
            return None
        return self.placeholder(res, placeholder)

    def placeholder(self, v: Value, pid: int | None = None) -> int:
        """The id SPIR-V-writing code uses for the IR value ``v`` (resolved when lowered)."""
        if pid is None:
            pid = self.m.id()
        self.fn.placeholders[pid] = v
        return pid

    def label(self) -> int:
        return self.m.id()

    def put_label(self, lab: int) -> None:
        if self._out is not None:
            self._out.append(("OpLabel", lab))
        else:
            self.fn.start(lab)

    def var(self, key: str, ty_ptr: int) -> int:
        if key not in self.vars:
            vid = self.m.id()
            self.vars[key] = (vid, ty_ptr)
            if ty_ptr == self.fn_u32:
                self._scalars[vid] = Type.U32
            elif ty_ptr == self.fn_bool:
                self._scalars[vid] = Type.BOOL
        return self.vars[key][0]

    def temp_var(self, ty_ptr: int) -> int:
        """A new function variable of pointer type ``ty_ptr``, for one row's lowering."""
        return self.var(f"tmp{len(self.vars)}", ty_ptr)

    def reg(self, n: int, file: str = "R") -> int:
        if (file == "R" and n == 255) or (file == "UR" and n == 63):
            return self.c(0)
        if self._out is None:
            return self._ir("GetReg", (), {"reg": n, "file": file})
        return self.op("OpLoad", self.u32, self.var(f"{file}{n}", self.fn_u32))

    def set_reg(self, n: int, val: int, file: str = "R") -> None:
        if (file == "R" and n == 255) or (file == "UR" and n == 63):
            return
        if self._out is None:
            self._ir("SetReg", (self.fn.fixed_value(val, Type.U32),), {"reg": n, "file": file})
            return
        self.do("OpStore", self.var(f"{file}{n}", self.fn_u32), val)

    def pred(self, p: int, neg: bool = False, file: str = "P") -> int:
        if self._out is None and p != 7:
            return self._ir("GetPred", (), {"pred": p, "not": bool(neg), "file": file})
        v = self.m.const_bool(True) if p == 7 else self.op("OpLoad", self.bool, self.var(f"{file}{p}", self.fn_bool))
        return self.op("OpLogicalNot", self.bool, v) if neg else v

    def set_pred(self, p: int, val: int) -> None:
        if p == 7:
            return
        if self._out is None:
            self._ir("SetPred", (self.fn.fixed_value(val, Type.BOOL),), {"pred": p})
            return
        self.do("OpStore", self.var(f"P{p}", self.fn_bool), val)

    def cbank_const(self, off: int, bank: int, inst: Inst) -> int | None:
        """A constant-bank word checked: its value where the bank is part of the program
        (``ComputeSpec.banks``), None for a word of bank 0 (read from the buffer); any other
        bank or an unaligned offset is refused, naming the instruction."""
        data = dict(getattr(self.spec, "banks", ())).get(bank) if bank else None
        if data is not None and off % 4 == 0 and 0 <= off <= len(data) - 4:  # a program constant
            return int.from_bytes(data[off : off + 4], "little")
        if bank != 0 or off % 4 or off < 0:
            raise TranslateError(f"constant bank c[{bank:#x}][{off:#x}] not supported", offset=inst.addr)
        return None

    def check_late(self, o: Op) -> bool:
        """``ir/to_spirv.emit``: a row that names its instruction is checked when built (its
        refusal raised in program order, whatever the optimiser removes later) and lowered with
        the function.  ``LATE_CHECKS``: the rows that may be refused, by name; the others
        (generic memory, surfaces: their sizes and forms were checked when the row was built)
        have nothing to refuse here.  A generic access's selection over the address spaces
        opens SPIR-V blocks inside its IR block when lowered, which is never a loop header
        (those hold only their merge and branch)."""
        check = LATE_CHECKS.get(o.op.name)
        if check is not None:
            check(self, o.attrs)
        return True

    def cbank_word(self, off: int, bank: int, inst: Inst) -> int:
        k = self.cbank_const(off, bank, inst)
        if k is not None:
            return self.c(k)
        p = self.op("OpAccessChain", self.cb_ptr, self.cbank, self.c(0), self.c(off // 4))
        return self.op("OpLoad", self.u32, p)

    def join64(self, lo: int, hi: int) -> int:
        lo64, hi64 = self.op("OpUConvert", self.u64, lo), self.op("OpUConvert", self.u64, hi)
        return self.op("OpBitwiseOr", self.u64, lo64, self.op("OpShiftLeftLogical", self.u64, hi64, self.c64(32)))

    def set64(self, d: int, v64: int) -> None:
        self.set_reg(d, self.op("OpUConvert", self.u32, v64))
        if d != 255:
            self.set_reg(d + 1, self.op("OpUConvert", self.u32, self.op("OpShiftRightLogical", self.u64, v64, self.c64(32))))

    def require(self, inst: Inst, **mods: int) -> None:
        for k, want in mods.items():
            if inst.mods.get(k, want) != want:
                raise TranslateError(f"{inst.text()}: modifier {k} not supported", offset=inst.addr)

    def kill(self, ins: Inst) -> None:
        raise TranslateError(f"{ins.text()}: KILL outside a fragment program", offset=ins.addr)

    def fop(self, name: str, ty: int, *args: int) -> int:
        """A floating-point operation the driver must do exactly as written: NoContraction keeps
        it from being fused with its neighbours (FMUL then FADD are two roundings on NVIDIA)
        or re-associated (the error terms of ``_fma`` would vanish)."""
        r = self.op(name, ty, *args)
        self.m.emit("annot", "OpDecorate", r, self.m.E("Decoration", "NoContraction"))
        return r

    def _guard(self, ins: Inst) -> int:
        return self.pred(ins.pred, ins.pred_not, "UP" if getattr(ins.row, "uniform", False) else "P")

    def _emit_function(self, entry: int, body: list[tuple]) -> bytes:
        """The function: header, the entry block's label and the variables the body names, the
        rest of the body (``body[0]`` is the entry label); the entry point; the module's binary."""
        m, E = self.m, self.m.E
        void = m.type("OpTypeVoid")
        fnty = m.type("OpTypeFunction", void)
        main = m.id()
        fn = E("StorageClass", "Function")
        body, gone = peephole.sweep(body) if self.OPTIMIZE else (body, set())
        if gone:  # decorations of results that are gone (NoContraction) go with them
            m.sec["annot"] = [w for w in m.sec["annot"] if len(w) < 2 or w[1] not in gone]
        named = {vid for vid, _ in self.vars.values()}
        used = set()
        for t in body:  # the variables the body names in id operands (a literal may equal an id)
            pos = id_slots(t)
            used.update(t[p] for p in (range(1, len(t)) if pos is None else pos) if t[p] in named)
        m.function = [
            ("OpFunction", void, main, 0, fnty),
            ("OpLabel", entry),
            *[("OpVariable", ptr, vid, fn) for vid, ptr in self.vars.values() if vid in used],
            *body[1:],
            ("OpFunctionEnd",),
        ]
        self._entry(main)
        return m.binary()


def _check_cbank(lw: LowerBase, at: dict) -> None:
    lw.cbank_const(at["offset"], at["bank"], at["inst"])


def _check_cbank_dyn(lw: LowerBase, at: dict) -> None:
    """A word of bank 0 at a run-time address (``lower/memory.py``); no other bank."""
    if at["bank"] != 0:
        inst = at["inst"]
        raise TranslateError(f"{inst.text()}: constant bank {at['bank']:#x} not supported", offset=inst.addr)


def _check_directed64(lw: LowerBase, at: dict) -> None:
    """Directed rounding's one refusal (``semantics._directed``): from S64."""
    if at["signed"]:
        inst = at["inst"]
        raise TranslateError(f"{inst.text()}: directed rounding of S64 not translated", offset=inst.addr)


# a row naming its instruction -> its check when built (``LowerBase.check_late``)
LATE_CHECKS: dict[str, Callable[[LowerBase, dict], None]] = {
    "CBankU32": _check_cbank,
    "CBankDynU32": _check_cbank_dyn,
    "RoundDirectedF32From64": _check_directed64,
}
