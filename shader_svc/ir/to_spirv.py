"""The one lowering of IR to SPIR-V, both ISAs.  ``emit``/``emit_value``: a handler's block
joins the IR function the driver is building (``lower/base.py``'s build mode); after the
optimiser (``ir/optimize.py``), ``emit_function`` lowers the whole function once: each basic
block's label, its operations in order (each through its function in ``LOWER``), its merge and
its terminator.  The SPIR-V of an
operation is the one ``lower/semantics.py`` defines for it (the exact FFMA, .FTZ, .SAT), so a
machine instruction means the same on SM53 and SM86."""

from __future__ import annotations

from typing import Callable

from shader_svc.ir import spaces as _spaces
from shader_svc.ir.block import Block, Function, Op, Value
from shader_svc.ir.ops import OPS
from shader_svc.ir.types import Type
from shader_svc.lower.base import GLSL
from shader_svc.lower.semantics import Semantics


ROUND = ("RoundEven", "Floor", "Ceil", "Trunc")  # an operation's ``rnd`` -> GLSL.std.450


def _get_reg(lw: Semantics, o: Op, a: list[int]) -> int:
    return lw.reg(o.attrs["reg"], o.attrs["file"])


def _set_reg(lw: Semantics, o: Op, a: list[int]) -> None:
    lw.set_reg(o.attrs["reg"], a[0], o.attrs["file"])


def _u32(name: str) -> Callable[[Semantics, Op, list[int]], int]:
    return lambda lw, o, a: lw.op(name, lw.u32, *a)


def _u64(name: str) -> Callable[[Semantics, Op, list[int]], int]:
    return lambda lw, o, a: lw.op(name, lw.u64, *a)


def _glsl_f32(name: str) -> Callable[[Semantics, Op, list[int]], int]:
    return lambda lw, o, a: lw.op("OpExtInst", lw.f32, lw.glsl, GLSL[name], a[0])


def _i2f(o: Op) -> str:
    return "OpConvertSToF" if o.attrs["signed"] else "OpConvertUToF"


def _glsl_u32(name: str) -> Callable[[Semantics, Op, list[int]], int]:
    return lambda lw, o, a: lw.op("OpExtInst", lw.u32, lw.glsl, GLSL[name], *a)


LOWER: dict[str, Callable[[Semantics, Op, list[int]], int | None]] = {
    "GetReg": _get_reg,
    "SetReg": _set_reg,
    "ConstU32": lambda lw, o, a: lw.c(o.attrs["value"]),
    "CBankU32": lambda lw, o, a: lw.cbank_word(o.attrs["offset"], o.attrs["bank"], o.attrs["inst"]),
    "BitcastF32": lambda lw, o, a: lw.op("OpBitcast", lw.f32, a[0]),
    "BitcastU32": lambda lw, o, a: lw.op("OpBitcast", lw.u32, a[0]),
    "INot32": lambda lw, o, a: lw.op("OpNot", lw.u32, a[0]),
    "INeg32": lambda lw, o, a: lw.op("OpSNegate", lw.u32, a[0]),
    "IShr32": lambda lw, o, a: lw.op("OpShiftRightLogical", lw.u32, *a),
    "FAbs32": lambda lw, o, a: lw.op("OpExtInst", lw.f32, lw.glsl, GLSL["FAbs"], a[0]),
    "FNeg32": lambda lw, o, a: lw.op("OpFNegate", lw.f32, a[0]),
    "FAdd32": lambda lw, o, a: lw.fop("OpFAdd", lw.f32, *a),
    "FMul32": lambda lw, o, a: lw.fop("OpFMul", lw.f32, *a),
    "FFma32": lambda lw, o, a: lw._fma(*a),
    "FFmaDevice32": lambda lw, o, a: lw.op("OpExtInst", lw.f32, lw.glsl, GLSL["Fma"], *a),
    "FFlushDenorm32": lambda lw, o, a: lw._ftz32(a[0]),
    "FSaturate32": lambda lw, o, a: lw._sat32(a[0]),
    "GetPred": lambda lw, o, a: lw.pred(o.attrs["pred"], o.attrs["not"], o.attrs["file"]),
    "SetPred": lambda lw, o, a: lw.set_pred(o.attrs["pred"], a[0]),
    "ConstBool": lambda lw, o, a: lw.m.const_bool(o.attrs["value"]),
    "LNot": lambda lw, o, a: lw.op("OpLogicalNot", lw.bool, a[0]),
    "IAdd32": _u32("OpIAdd"),
    "IMul32": _u32("OpIMul"),
    "IAnd32": _u32("OpBitwiseAnd"),
    "IOr32": _u32("OpBitwiseOr"),
    "IXor32": _u32("OpBitwiseXor"),
    "Lut3": lambda lw, o, a: lw._lut(o.attrs["lut"], *a, lw.u32, "OpBitwiseAnd", "OpBitwiseOr", "OpNot", lw.c(0)),
    "UMin32": _glsl_u32("UMin"),
    "SMin32": _glsl_u32("SMin"),
    "UMax32": _glsl_u32("UMax"),
    "SMax32": _glsl_u32("SMax"),
    "BitCount32": _u32("OpBitCount"),
    "IEq32": lambda lw, o, a: lw.op("OpIEqual", lw.bool, *a),
    "INe32": lambda lw, o, a: lw.op("OpINotEqual", lw.bool, *a),
    "Select32": _u32("OpSelect"),
    "LAnd": lambda lw, o, a: lw.op("OpLogicalAnd", lw.bool, *a),
    "LOr": lambda lw, o, a: lw.op("OpLogicalOr", lw.bool, *a),
    "LXor": lambda lw, o, a: lw.op("OpLogicalNotEqual", lw.bool, *a),
    "Lut3Bool": lambda lw, o, a: lw._lut(
        o.attrs["lut"], *a, lw.bool, "OpLogicalAnd", "OpLogicalOr", "OpLogicalNot", lw.m.const_bool(False)
    ),
    "FMinMax32": lambda lw, o, a: lw._fminmax(*a),
    "IShl32": _u32("OpShiftLeftLogical"),
    "ISar32": _u32("OpShiftRightArithmetic"),
    "UGe32": lambda lw, o, a: lw.op("OpUGreaterThanEqual", lw.bool, *a),
    "SBitExtract32": _u32("OpBitFieldSExtract"),
    "UBitExtract32": _u32("OpBitFieldUExtract"),
    "SAbs32": _glsl_u32("SAbs"),
    "BitReverse32": _u32("OpBitReverse"),
    "FindMsb32": lambda lw, o, a: lw._flo(a[0], o.attrs["signed"], o.attrs["sh"]),
    "Permute32": lambda lw, o, a: lw._prmt(*a),
    "BitFieldExtractPacked": lambda lw, o, a: lw._bfe(*a, o.attrs["signed"]),
    "BitFieldInsertPacked": lambda lw, o, a: lw._bfi(*a),
    "ConstU64": lambda lw, o, a: lw.c64(o.attrs["value"]),
    "ZExt64": _u64("OpUConvert"),
    "SExt64": _u64("OpSConvert"),
    "Trunc32": _u32("OpUConvert"),
    "Pack64": lambda lw, o, a: lw.join64(*a),
    "IAdd64": _u64("OpIAdd"),
    "IMul64": _u64("OpIMul"),
    "Shl64": _u64("OpShiftLeftLogical"),
    "Shr64": _u64("OpShiftRightLogical"),
    "Sar64": _u64("OpShiftRightArithmetic"),
    "UGe64": lambda lw, o, a: lw.op("OpUGreaterThanEqual", lw.bool, *a),
    "ULt64": lambda lw, o, a: lw.op("OpULessThan", lw.bool, *a),
    "INe64": lambda lw, o, a: lw.op("OpINotEqual", lw.bool, *a),
    "Select64": _u64("OpSelect"),
    "ICmp32": lambda lw, o, a: lw._icmp_op(o.attrs["cmp"], o.attrs["unsigned"], *a),
    "FCmp32": lambda lw, o, a: lw._fcmp(o.attrs["cmp"], *a),
    "ConstF64": lambda lw, o, a: lw.m.const(lw.f64t, o.attrs["bits"] & 0xFFFFFFFF, o.attrs["bits"] >> 32 & 0xFFFFFFFF),
    "PackF64": lambda lw, o, a: lw.op("OpBitcast", lw.f64t, lw.join64(*a)),
    "BitcastU64": _u64("OpBitcast"),
    "FAbs64": lambda lw, o, a: lw.op("OpExtInst", lw.f64t, lw.glsl, GLSL["FAbs"], a[0]),
    "FNeg64": lambda lw, o, a: lw.op("OpFNegate", lw.f64t, a[0]),
    "FAdd64": lambda lw, o, a: lw.fop("OpFAdd", lw.f64t, *a),
    "FMul64": lambda lw, o, a: lw.fop("OpFMul", lw.f64t, *a),
    "FFma64": lambda lw, o, a: lw._dfma(*a),
    "FCmp64": lambda lw, o, a: lw._fcmp(o.attrs["cmp"], *a),
    "RoundF32": lambda lw, o, a: lw.op("OpExtInst", lw.f32, lw.glsl, GLSL[ROUND[o.attrs["rnd"]]], a[0]),
    "RoundF64": lambda lw, o, a: lw.op("OpExtInst", lw.f64t, lw.glsl, GLSL[ROUND[o.attrs["rnd"]]], a[0]),
    "F2ISat32": lambda lw, o, a: lw._f2i_sat(a[0], ROUND[o.attrs["rnd"]], o.attrs["signed"]),
    "F2ISatF64To32": lambda lw, o, a: lw._f2i_sat_f64(a[0], o.attrs["signed"], False),
    "F2ISatF64To64": lambda lw, o, a: lw._f2i_sat_f64(a[0], o.attrs["signed"], True),
    "I2F32": lambda lw, o, a: lw.op(_i2f(o), lw.f32, a[0]),
    "I2F32From64": lambda lw, o, a: lw.op(_i2f(o), lw.f32, a[0]),
    "I2F64": lambda lw, o, a: lw.op(_i2f(o), lw.f64t, a[0]),
    "I2F64From64": lambda lw, o, a: lw.op(_i2f(o), lw.f64t, a[0]),
    "RoundDirectedF32": lambda lw, o, a: lw._directed(o.attrs["inst"], *a, o.attrs["signed"], False, o.attrs["rnd"]),
    "RoundDirectedF32From64": lambda lw, o, a: lw._directed(o.attrs["inst"], *a, o.attrs["signed"], True, o.attrs["rnd"]),
    "CvtF64": lambda lw, o, a: lw.op("OpFConvert", lw.f64t, a[0]),
    "CvtF32": lambda lw, o, a: lw.op("OpFConvert", lw.f32, a[0]),
    "GlobalPtr": lambda lw, o, a: lw.op("OpConvertUToPtr", lw.psb_ptr, a[0]),
    "LoadGlobal32": lambda lw, o, a: lw.op("OpLoad", lw.u32, a[0], lw.m.E("MemoryAccess", "Aligned"), 4),
    "StoreGlobal32": lambda lw, o, a: lw.do("OpStore", *a, lw.m.E("MemoryAccess", "Aligned"), 4),
    "SharedPtr": lambda lw, o, a: lw.shared_word(a[0]),
    "LoadShared32": lambda lw, o, a: lw.op("OpLoad", lw.u32, a[0]),
    "StoreShared32": lambda lw, o, a: lw.do("OpStore", *a),
    "ConstF32": lambda lw, o, a: lw.m.const(lw.f32, o.attrs["bits"]),
    "Cos32": _glsl_f32("Cos"),
    "Sin32": _glsl_f32("Sin"),
    "Exp2_32": _glsl_f32("Exp2"),
    "Log2_32": _glsl_f32("Log2"),
    "RSqrt32": _glsl_f32("InverseSqrt"),
    "Sqrt32": _glsl_f32("Sqrt"),
    "FDiv32": lambda lw, o, a: lw.fop("OpFDiv", lw.f32, *a),
    "Rcp64H": lambda lw, o, a: lw._mufu64h(6, a[0]),
    "RSqrt64H": lambda lw, o, a: lw._mufu64h(7, a[0]),
    "BuiltinU32": lambda lw, o, a: lw.op(
        "OpCompositeExtract", lw.u32, lw.op("OpLoad", lw.v3, lw.builtins[o.attrs["builtin"]]), o.attrs["comp"]
    ),
    "LocalIndex": lambda lw, o, a: lw._lid(),
    "ISub32": _u32("OpISub"),
    "GetFlag": lambda lw, o, a: lw.op("OpLoad", lw.bool, lw.var(o.attrs["flag"], lw.fn_bool)),
    "SetFlag": lambda lw, o, a: lw.do("OpStore", lw.var(o.attrs["flag"], lw.fn_bool), a[0]),
    # shader-ir
    "LoadVarU32": lambda lw, o, a: lw.op("OpLoad", lw.u32, o.attrs["var"]),
    "LoadVarBool": lambda lw, o, a: lw.op("OpLoad", lw.bool, o.attrs["var"]),
    "StoreVarU32": lambda lw, o, a: lw.do("OpStore", o.attrs["var"], a[0]),
    "StoreVarBool": lambda lw, o, a: lw.do("OpStore", o.attrs["var"], a[0]),
}


# operations with a u64 value: the u64 type is asked for when they are built (a graphics stage's
# lowering refuses it), as it was when each instruction was lowered at once, dead code included
_U64_OPS = frozenset(n for n, d in OPS.items() if d.result == Type.U64 or Type.U64 in d.args)


def emit(lw: Semantics, block: Block) -> None:
    """``block``'s operations join the basic block the driver is building; they are lowered
    later, with the whole function (``emit_function``).  An operation that names its
    instruction (``inst``: its lowering may refuse it, e.g. a constant bank the stage does not
    have) is checked now by the lowering's ``check_late(op)``, so refusals come in program order,
    the first one reported, whatever the optimiser later removes (``lower/base.py``,
    ``lower/graphics.py``)."""
    items = lw.fn.current.items
    for o in block.ops:
        if o.op.name in _U64_OPS:
            lw.u64  # noqa: B018 -- a stage without 64-bit integers refuses it here, in program order
        if "inst" in o.op.attr_set:
            lw.check_late(o)
        items.append(o)


def emit_value(lw: Semantics, block: Block, v: Value) -> int:
    """``emit``, and the id the driver uses for ``v`` (a terminator's condition, a value it
    stores): a placeholder, resolved when the function is lowered."""
    emit(lw, block)
    return lw.placeholder(v)


class _Ids(dict):
    """Value index -> SPIR-V id; a folded constant becomes a module constant when first used."""

    def __missing__(self, k: int) -> int:
        t, x = self.consts[k]
        lw = self.lw
        r = self[k] = lw.c(x) if t == Type.U32 else lw.c64(x) if t == Type.U64 else lw.m.const_bool(bool(x))
        return r


def emit_function(lw: Semantics, fn: Function, consts: dict[int, tuple[Type, int]]) -> list[tuple]:
    """The SPIR-V body of ``fn`` (after the optimiser: ``consts`` are the values it folded):
    each basic block's label, its operations in order (each through its function in
    ``LOWER``), its merge and its terminator (whose condition or selector may be a placeholder);
    the first block's label comes first."""
    ids = _Ids(fn.fixed)
    ids.lw, ids.consts = lw, consts
    ph = fn.placeholders
    out = lw._out = []
    lower = LOWER
    try:
        for b in fn.blocks:
            out.append(("OpLabel", b.label))
            for it in b.items:
                r = lower[it.op.name](lw, it, [ids[a.index] for a in it.args])
                if it.result is not None:
                    ids[it.result.index] = r
            if b.merge is not None:
                out.append((b.merge.kind, *b.merge.args))
            t = b.term
            # OpBranchConditional's condition, OpSwitch's selector: the one id operand that is a
            # value (the others are labels and literals)
            if t.kind in ("OpBranchConditional", "OpSwitch") and t.args[0] in ph:
                t = t._replace(args=(ids[ph[t.args[0]].index], *t.args[1:]))
            out.append((t.kind, *t.args))
    finally:
        lw._out = None
    return out


# --- memory spaces, atomics and the emulated warp (their SPIR-V: lower/memory.py) ------------
def _generic_store(lw: Semantics, o: Op, a: list[int]) -> None:
    lw.generic_access(o.attrs["inst"], a[0], a[1], len(a) - 2, "store", values=tuple(a[2:]))


LOWER.update(
    {
        "CBankDynU32": lambda lw, o, a: lw.cbank_dyn(o.attrs["bank"], a[0], o.attrs["inst"]),
        "LocalPtr": lambda lw, o, a: lw.local_word(a[0], o.attrs["offset"]),
        "LoadLocal32": lambda lw, o, a: lw.op("OpLoad", lw.u32, a[0]),
        "StoreLocal32": lambda lw, o, a: lw.do("OpStore", *a),
        "AtomicGlobal32": lambda lw, o, a: lw.atomic(a[0], False, o.attrs["op"], a[1]),
        "AtomicGlobalF32": lambda lw, o, a: lw.atomic(a[0], False, o.attrs["op"], a[1]),
        "AtomicCasGlobal32": lambda lw, o, a: lw.atomic_cas(a[0], False, a[1], a[2]),
        "AtomicShared32": lambda lw, o, a: lw.atomic(a[0], True, o.attrs["op"], a[1]),
        "AtomicCasShared32": lambda lw, o, a: lw.atomic_cas(a[0], True, a[1], a[2]),
        # a GenericLoad lowers to the function variables holding its words; Word reads one
        "GenericLoad": lambda lw, o, a: lw.generic_access(o.attrs["inst"], a[0], a[1], o.attrs["words"], "load"),
        "Word": lambda lw, o, a: lw.op("OpLoad", lw.u32, a[0][o.attrs["index"]]),
        "GenericStore32": _generic_store,
        "GenericStore64": _generic_store,
        "GenericStore128": _generic_store,
        "GenericAtomic32": lambda lw, o, a: lw.generic_atomic(o.attrs["inst"], a[0], a[1], o.attrs["op"], a[2]),
        "GenericAtomicF32": lambda lw, o, a: lw.generic_atomic(o.attrs["inst"], a[0], a[1], o.attrs["op"], a[2]),
        "Barrier": lambda lw, o, a: lw._barrier(),
        "MemoryFence": lambda lw, o, a: lw._fence(),
        "ShflWarp": lambda lw, o, a: lw.shfl_warp(o.attrs["mode"], *a),
        "ShflInRange": lambda lw, o, a: lw.warp_second(a[0], "ShflInRange"),
        "WarpBallot": lambda lw, o, a: lw.warp_ballot(a[0]),
        "WarpVote": lambda lw, o, a: lw.warp_vote(a[0], o.attrs["mode"]),
    }
)


# --- half precision (issue 31; shader-half): the functions of lower/half.py
from shader_svc.lower import half  # noqa: E402  (this block's own import, kept with it)

LOWER.update(
    {
        "UnpackF16": lambda lw, o, a: half.unpack_f16(lw, a[0], o.attrs["lane"]),
        "F16FromF64": lambda lw, o, a: half.f16_from_f64(lw, a[0], o.attrs["rnd"]),
        "F16FromF32": lambda lw, o, a: half.f16_from_f32(lw, a[0], o.attrs["rnd"]),
        "FFlushDenormF16": lambda lw, o, a: half.flush_denorm_f16(lw, a[0]),
        "FFmaDirected32": lambda lw, o, a: half.ffma_directed32(lw, *a, o.attrs["rnd"]),
        "FFmaDirected64": lambda lw, o, a: half.dfma_directed64(lw, *a, o.attrs["rnd"]),
        "FMinMax64": lambda lw, o, a: half.fminmax64(lw, *a),
    }
)


# --- textures of the graphics stages (their SPIR-V: lower/graphics.py) ------------------------
LOWER.update(
    {
        "TexSample": lambda lw, o, a: lw.tex_sample(o.attrs, *a),
        "TexFetch": lambda lw, o, a: lw.tex_fetch(o.attrs, *a),
        "TexGather": lambda lw, o, a: lw.tex_gather(o.attrs, *a),
        "TexQueryDims": lambda lw, o, a: lw.tex_query_dims(o.attrs, a[0]),
        "TexelWord": lambda lw, o, a: lw.texel_word(a[0], o.attrs["comp"], o.attrs["float"]),
    }
)


# --- sub-word generic memory (lower/memory.py's generic_sub) -----------------------------------
LOWER.update(
    {
        "GenericLoadSub": lambda lw, o, a: lw.generic_sub(o.attrs["inst"], a[0], a[1], o.attrs["bytes"], o.attrs["signed"], None),
        "GenericStoreSub": lambda lw, o, a: lw.generic_sub(o.attrs["inst"], a[0], a[1], o.attrs["bytes"], False, a[2]),
    }
)


# --- 64-bit atomics, compare-and-store, address-space query (lower/memory.py; shader-mem) -----
LOWER.update(
    {
        "AtomicGlobal64": lambda lw, o, a: lw.atomic64_global(a[0], o.attrs["op"], a[1]),
        "AtomicCasGlobal64": lambda lw, o, a: lw.atomic64_cas_global(*a),
        "AtomicCastShared32": lambda lw, o, a: lw.atomic_cast_shared(*a),
        "SpaceIs": lambda lw, o, a: lw.space_is(a[0], a[1], o.attrs["space"]),
        "GenericAtomicCas32": lambda lw, o, a: lw.generic_cas(o.attrs["inst"], *a),
        "WarpReduce": lambda lw, o, a: lw.warp_reduce(a[0], o.attrs["op"], o.attrs["signed"]),
        "AtomicShared64": lambda lw, o, a: lw.atomic64_shared(a[0], o.attrs["op"], a[1]),
        "AtomicCasShared64": lambda lw, o, a: lw.atomic64_cas_shared(*a),
        "AtomicCastShared64": lambda lw, o, a: lw.atomic64_cast_shared(*a),
        "GenericAtomic64": lambda lw, o, a: lw.generic_atomic64(o.attrs["inst"], a[0], a[1], o.attrs["op"], a[2]),
        # a shared word may be half a 64-bit word (lower/memory.py "64-bit words of shared memory")
        "LoadShared32": lambda lw, o, a: lw.shared_load32(a[0]),
        "StoreShared32": lambda lw, o, a: lw.shared_store32(a[0], a[1]),
        "LoadSub": lambda lw, o, a: lw.sub_at(o.attrs["space"], a[0], o.attrs["bytes"], o.attrs["signed"], None),
        "StoreSub": lambda lw, o, a: lw.sub_at(o.attrs["space"], a[0], o.attrs["bytes"], False, a[1]),
        "LoadSubGlobal": lambda lw, o, a: lw.sub_at("global", a[0], o.attrs["bytes"], o.attrs["signed"], None),
        "StoreSubGlobal": lambda lw, o, a: lw.sub_at("global", a[0], o.attrs["bytes"], False, a[1]),
    }
)


# --- shader-ir-gfx: the graphics interface (lower/graphics.py) and SM53's run-time stack ------
LOWER.update(
    {
        "LoadInputF32": lambda lw, o, a: lw.load_input(o.attrs["var"], o.attrs["comp"]),
        "LoadInputIndex": lambda lw, o, a: lw.load_input_index(o.attrs["var"]),
        "StoreOutputF32": lambda lw, o, a: lw.store_output(o.attrs["var"], o.attrs["comp"], a[0]),
        "StoreColour": lambda lw, o, a: lw.store_colour(o.attrs["var"], o.attrs["mask"], a),
        "StoreSampleMask": lambda lw, o, a: lw.store_sample_mask(o.attrs["var"], a[0]),
        "StoreFragDepth": lambda lw, o, a: lw.store_frag_depth(o.attrs["var"], a[0]),
        "FClampDevice01": lambda lw, o, a: lw.clamp01(a[0]),
        "StackLoad": lambda lw, o, a: lw.stack_load(a[0]),
        "StackStore": lambda lw, o, a: lw.stack_store(a[0], a[1]),
        "BindlessSample": lambda lw, o, a: lw.bindless_sample(o.attrs["lod"], *a),
        "BindlessFetch": lambda lw, o, a: lw.bindless_fetch(*a),
        "BindlessGather": lambda lw, o, a: lw.bindless_gather(o.attrs["comp"], *a),
        "BindlessQueryDims": lambda lw, o, a: lw.bindless_query_dims(*a),
    }
)


# --- surfaces (issue 31; shader-surf): the SPIR-V of lower/surface.py ----------------------------
LOWER.update(
    {
        "SurfaceLoad32": lambda lw, o, a: lw.surface_access(o.attrs, "load", *a),
        "SurfaceStore32": lambda lw, o, a: lw.surface_access(o.attrs, "store", *a),
        "SurfaceAtomic32": lambda lw, o, a: lw.surface_access(o.attrs, o.attrs["op"], *a),
    }
)

# --- generic 64-bit compare-exchange (lower/memory.py; shader-gaps2) ---------------------------
LOWER.update({"GenericAtomicCas64": lambda lw, o, a: lw.generic_cas64(o.attrs["inst"], *a)})

# --- explicit gradients and the LOD query (lower/graphics.py; shader-tex) ----------------------
LOWER.update(
    {
        "TexSampleGrad": lambda lw, o, a: lw.tex_sample_grad(o.attrs, *a),
        "TexQueryLod": lambda lw, o, a: lw.tex_query_lod(o.attrs, *a),
    }
)
LOWER.update({"BindlessSampleGrad": lambda lw, o, a: lw.bindless_sample_grad(*a)})
LOWER.update({"WarpMatch": lambda lw, o, a: lw.warp_match(*a, o.attrs["all"], o.attrs["wide"])})

# --- shader-ctl: TXD .AOFFI in kernels (lower/texture.py) ---------------------------------------
LOWER.update(
    {"BindlessSampleGradOffset": lambda lw, o, a: lw.bindless_sample_grad(*a, word=o.attrs["word"], inst=o.attrs["inst"])}
)

# --- shader-halfgfx (issue 31): HFMA2's round-to-odd sum (lower/half.py) ---------------------------
LOWER.update({"FAddOdd32": lambda lw, o, a: half.fadd_odd32(lw, a[0], a[1])})

# --- arch-gfx (issue 31): the pixel's values (lower/gfx_pixel.py) -------------------------------
LOWER.update({"LoadSampleMaskIn": lambda lw, o, a: lw.load_sample_mask_in(o.attrs["var"])})
LOWER.update({"LoadOutputF32": lambda lw, o, a: lw.load_output(o.attrs["var"], o.attrs["comp"])})
# --- shader-ctl: barrier reductions (lower/warp.py) -----------------------------------------------
LOWER.update({"BarrierReduce": lambda lw, o, a: lw.barrier_reduce(a[0], o.attrs["op"])})
LOWER.update({"AtomicSharedAddAcqRel32": lambda lw, o, a: lw.atomic_add_acq_rel(a[0], a[1])})
# --- shader-ctl2: the device clock (lower/clock.py) ----------------------------------------------
from shader_svc.lower import clock_read  # noqa: E402  (this block's own import, kept with it)

LOWER.update({"ReadClock": lambda lw, o, a: clock_read.read_clock(lw, o.attrs["scope"])})
# --- gfx-geom (issue 31): the geometry stage (lower/gfx_geometry.py) ---------------------------
LOWER.update(
    {
        "LoadVertexInputF32": lambda lw, o, a: lw.load_vertex_input(o.attrs["var"], o.attrs["comp"], o.attrs["count"], a[0]),
        "EmitVertex": lambda lw, o, a: lw.emit_vertex(),
        "EndPrimitive": lambda lw, o, a: lw.end_primitive(),
    }
)
# --- gfx-layers (issue 31/32): a geometry program's render target layer ----------------------------
LOWER.update({"StoreLayer": lambda lw, o, a: lw.store_layer(a[0])})
LOWER.update({"StoreViewport": lambda lw, o, a: lw.store_viewport(a[0])})  # shader-tex
LOWER.update({"BindlessSampleDim": lambda lw, o, a: lw.bindless_sample_dim(o.attrs["dim"], o.attrs["lod"], *a)})
LOWER.update({"WarpLive": lambda lw, o, a: lw.warp_live_spv(o.attrs["alive"])})  # shader-assert
LOWER.update({"BindlessFetchDim": lambda lw, o, a: lw.bindless_fetch_dim(o.attrs["dim"], *a)})
LOWER.update({"BindlessSampleGradArray": lambda lw, o, a: lw.bindless_sample_grad_array(*a)})
LOWER.update({"BindlessFetchClamp": lambda lw, o, a: lw.bindless_fetch_clamp(o.attrs["dim"], *a)})  # shader-tex
LOWER.update({"BindlessSampleGrad3": lambda lw, o, a: lw.bindless_sample_grad3(o.attrs["dim"], *a)})  # shader-ndv
LOWER.update({"BindlessSampleCube": lambda lw, o, a: lw.bindless_sample_cube(o.attrs["array"], o.attrs["lod"], *a)})  # gpu-pools


# --- generic accesses whose space ir/spaces.py proved (the operation's ``proven`` attribute) ---
def _routed(f: Callable[[Semantics, Op, list[int]], object]) -> Callable[[Semantics, Op, list[int]], object]:
    def lower(lw: Semantics, o: Op, a: list[int]) -> object:
        lw.proven_space = o.attrs.get("proven")
        lw._trace_inst = o.attrs["inst"].addr if "inst" in o.attrs else None
        try:
            return f(lw, o, a)
        finally:
            lw.proven_space = None

    return lower


LOWER.update({name: _routed(LOWER[name]) for name in _spaces.GENERIC})
