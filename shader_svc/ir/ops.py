"""Every IR operation, one row each: its name, result type (None: an effect only), argument
types, and the attributes it carries besides values (a register number, a constant, the
instruction it came from for error messages).  The builder checks every use against its row;
the lowering (``to_spirv.py``) has one function per row.  Semantics:

- ``GetReg``/``SetReg``: a machine register of a file ('R', 'UR') as u32; RZ/URZ read 0 and
  discard writes.  ``CBankU32``: the u32 at byte ``offset`` of constant bank ``bank``.
  ``ConstU32``: a constant.
- ``BitcastF32``/``BitcastU32``: the same 32 bits as f32 / u32.  ``INot32``: bitwise not;
  ``INeg32``: two's-complement negation; ``IShr32``: logical right shift (amount < 32).
- ``FAbs32``, ``FNeg32``: sign operations (exact, NaN payload kept).
- ``FAdd32``, ``FMul32``: one IEEE binary32 operation rounded to nearest even, never fused
  with a neighbour (NVIDIA's FADD/FMUL round each; SPIR-V NoContraction).
- ``FFma32``: a*b+c rounded once (FFMA.RN), exactly on any device.  ``FFmaDevice32``: the
  device's fused multiply-add (GLSL Fma), for stages whose device lacks the Float64 the exact
  one needs.
- ``FFlushDenorm32``: a denormal becomes a zero of its sign (.FTZ).  ``FSaturate32``: clamped
  to [+0, 1], NaN and -0 give +0 (.SAT).
- ``GetPred``/``SetPred``: a predicate register (PT reads true, writes to PT are dropped), read
  negated with ``not``.  ``ConstBool``, ``LNot``: a boolean constant, logical not.
- ``IAdd32``, ``IMul32``: modulo 2^32.  ``IAnd32``/``IOr32``/``IXor32``: bitwise.  ``Lut3``:
  LOP3's three-input truth table ``lut`` (bit i = the result for a, b, c = bits 2, 1, 0 of i).
  ``UMin32``/``SMin32``/``UMax32``/``SMax32``: unsigned / signed minimum and maximum.
  ``BitCount32``: population count.  ``IEq32``/``INe32``: comparisons to bool.
  ``Select32``: the second argument where the first holds, else the third.
- ``LAnd``/``LOr``/``LXor``: boolean and, or, exclusive or.  ``Lut3Bool``: PLOP3's truth table
  on three predicates.  ``FMinMax32``: the minimum where the predicate holds, else the maximum,
  NaN-suppressing as NVIDIA's FMNMX (a NaN operand gives the other one).
- ``IShl32``, ``ISar32``: left / arithmetic right shift (amount < 32).  ``UGe32``: unsigned >=.
  ``SBitExtract32``/``UBitExtract32``: the field of ``count`` bits at ``offset`` (second and
  third arguments), sign- / zero-extended.  ``SAbs32``: |x| of a signed word (|-2^31| = -2^31).
  ``BitReverse32``.  ``FindMsb32``: the position of the most significant set bit (``signed``:
  of the first bit unlike the sign), 0xffffffff for none; ``sh``: 31 - that position (FLO.SH).
  ``Permute32``: PRMT's byte permutation of (a, c) selected by b (the second argument).
  ``BitFieldExtractPacked``/``BitFieldInsertPacked``: PTX bfe / bfi with the position and
  length in bytes 0 and 1 of the second argument (length 0 extracts 0; ``signed`` fills with the
  last bit taken); the insert puts the first argument's low bits into the third.
- 64-bit integers (carries are the high half of a u64 sum, as the machine's carry chains mean):
  ``ConstU64``; ``ZExt64``/``SExt64``: a u32 widened with zeros / its sign; ``Trunc32``: the low
  word; ``Pack64``: (lo, hi) as one u64; ``IAdd64``/``IMul64`` modulo 2^64; ``Shl64``/``Shr64``/
  ``Sar64`` (amount < 64, as u64); ``UGe64``/``ULt64``/``INe64``: comparisons; ``Select64``.
- ``ICmp32``: the integer comparison ``cmp`` in NVIDIA's numbering, the same in both ISAs (0 F,
  1 LT, 2 EQ, 3 LE, 4 GT, 5 NE, 6 GE, 7 T), ``unsigned`` or signed.  ``FCmp32``: FSETP's 16
  comparisons ``cmp`` (1..6 ordered LT EQ LE GT NE GE, false on NaN; 9..14 the unordered ones,
  true on NaN; 7 NUM, 8 NAN; 0 F, 15 T).
- FP64: ``ConstF64`` (its ``bits``); ``PackF64``: the double whose low and high words are the
  arguments; ``BitcastU64``: its 64 bits; ``FAbs64``, ``FNeg64``; ``FAdd64``, ``FMul64``: one
  binary64 operation rounded to nearest even, never fused; ``FFma64``: a*b+c rounded once
  (DFMA), exactly on any device; ``FCmp64``: ``FCmp32``'s comparisons on doubles.
- Conversions (``rnd``: 0 to nearest even, 1 floor, 2 ceil, 3 toward zero — NVIDIA's RN/RM/RP/RZ
  numbering in both ISAs): ``RoundF32``/``RoundF64``: to an integral value of the same type;
  ``F2ISat32``: rounded, then converted to a 32-bit integer (``signed`` or not) saturating at the
  range's ends, NaN -> 0; ``F2ISatF64To32``/``F2ISatF64To64``: an integral f64 to a 32-/64-bit
  integer, saturating the same way; ``I2F32``/``I2F32From64``/``I2F64``/``I2F64From64``: a 32- or
  64-bit integer (``signed`` or not) to the nearest f32 / f64; ``RoundDirectedF32``/
  ``RoundDirectedF32From64``: that nearest f32 (first argument) of the integer (second) moved one
  ulp where ``rnd`` rounds the other way; ``CvtF64``: f32 -> f64 (exact); ``CvtF32``: f64 -> f32
  rounded to nearest even.
- Memory: ``GlobalPtr``: the u32 at a 64-bit global address; ``LoadGlobal32``/``StoreGlobal32``
  (4-byte aligned).  ``SharedPtr``: the word of shared memory at a byte address (taken modulo
  the emulated 32 KiB); ``LoadShared32``/``StoreShared32``.
- The approximate unit (MUFU; accuracy is the device's): ``Cos32``/``Sin32`` (radians),
  ``Exp2_32``, ``Log2_32``, ``RSqrt32``, ``Sqrt32``; ``FDiv32``: a / b, one rounding;
  ``Rcp64H``/``RSqrt64H``: the high word of 1/x (1/sqrt(x)) for the double whose high word is the
  argument (low word 0).  ``ConstF32``: a constant (its ``bits``).
- Special registers: ``BuiltinU32``: component ``comp`` of the compute builtin ``builtin``
  (LocalInvocationId, WorkgroupId); ``LocalIndex``: the invocation's flat index in its workgroup
  (x + y * X + z * X * Y), whose low 5 bits are its lane in the emulated 32-lane warp.
  ``ISub32``: modulo 2^32.
- ``LoadVarU32``/``LoadVarBool``/``StoreVarU32``/``StoreVarBool``: a scalar function variable
  ``var`` (a SPIR-V id) the lowering itself keeps (not a machine register).
- ``GetFlag``/``SetFlag``: SM53's condition code, one boolean per ``flag`` ('CC' the carry, 'CCZ'
  the zero flag), written by ``.CC`` and read by ``.X``.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from shader_svc.ir.types import Type

B, U32, U64, F32, F64 = Type.BOOL, Type.U32, Type.U64, Type.F32, Type.F64
GPTR, SPTR = Type.PTR_GLOBAL, Type.PTR_SHARED


@dataclass(frozen=True)
class OpDef:
    name: str
    result: Type | None
    args: tuple[Type, ...] = ()
    attrs: tuple[str, ...] = ()
    attr_set: frozenset[str] = field(default=frozenset(), compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "attr_set", frozenset(self.attrs))


OPS: dict[str, OpDef] = {
    d.name: d
    for d in (
        OpDef("GetReg", U32, (), ("reg", "file")),
        OpDef("SetReg", None, (U32,), ("reg", "file")),
        OpDef("ConstU32", U32, (), ("value",)),
        OpDef("CBankU32", U32, (), ("bank", "offset", "inst")),
        OpDef("BitcastF32", F32, (U32,)),
        OpDef("BitcastU32", U32, (F32,)),
        OpDef("INot32", U32, (U32,)),
        OpDef("INeg32", U32, (U32,)),
        OpDef("IShr32", U32, (U32, U32)),
        OpDef("FAbs32", F32, (F32,)),
        OpDef("FNeg32", F32, (F32,)),
        OpDef("FAdd32", F32, (F32, F32)),
        OpDef("FMul32", F32, (F32, F32)),
        OpDef("FFma32", F32, (F32, F32, F32)),
        OpDef("FFmaDevice32", F32, (F32, F32, F32)),
        OpDef("FFlushDenorm32", F32, (F32,)),
        OpDef("FSaturate32", F32, (F32,)),
        OpDef("GetPred", B, (), ("pred", "not", "file")),
        OpDef("SetPred", None, (B,), ("pred",)),
        OpDef("ConstBool", B, (), ("value",)),
        OpDef("LNot", B, (B,)),
        OpDef("IAdd32", U32, (U32, U32)),
        OpDef("IMul32", U32, (U32, U32)),
        OpDef("IAnd32", U32, (U32, U32)),
        OpDef("IOr32", U32, (U32, U32)),
        OpDef("IXor32", U32, (U32, U32)),
        OpDef("Lut3", U32, (U32, U32, U32), ("lut",)),
        OpDef("UMin32", U32, (U32, U32)),
        OpDef("SMin32", U32, (U32, U32)),
        OpDef("UMax32", U32, (U32, U32)),
        OpDef("SMax32", U32, (U32, U32)),
        OpDef("BitCount32", U32, (U32,)),
        OpDef("IEq32", B, (U32, U32)),
        OpDef("INe32", B, (U32, U32)),
        OpDef("Select32", U32, (B, U32, U32)),
        OpDef("LAnd", B, (B, B)),
        OpDef("LOr", B, (B, B)),
        OpDef("LXor", B, (B, B)),
        OpDef("Lut3Bool", B, (B, B, B), ("lut",)),
        OpDef("FMinMax32", F32, (F32, F32, B)),
        OpDef("IShl32", U32, (U32, U32)),
        OpDef("ISar32", U32, (U32, U32)),
        OpDef("UGe32", B, (U32, U32)),
        OpDef("SBitExtract32", U32, (U32, U32, U32)),
        OpDef("UBitExtract32", U32, (U32, U32, U32)),
        OpDef("SAbs32", U32, (U32,)),
        OpDef("BitReverse32", U32, (U32,)),
        OpDef("FindMsb32", U32, (U32,), ("signed", "sh")),
        OpDef("Permute32", U32, (U32, U32, U32)),
        OpDef("BitFieldExtractPacked", U32, (U32, U32), ("signed",)),
        OpDef("BitFieldInsertPacked", U32, (U32, U32, U32)),
        OpDef("ConstU64", U64, (), ("value",)),
        OpDef("ZExt64", U64, (U32,)),
        OpDef("SExt64", U64, (U32,)),
        OpDef("Trunc32", U32, (U64,)),
        OpDef("Pack64", U64, (U32, U32)),
        OpDef("IAdd64", U64, (U64, U64)),
        OpDef("IMul64", U64, (U64, U64)),
        OpDef("Shl64", U64, (U64, U64)),
        OpDef("Shr64", U64, (U64, U64)),
        OpDef("Sar64", U64, (U64, U64)),
        OpDef("UGe64", B, (U64, U64)),
        OpDef("ULt64", B, (U64, U64)),
        OpDef("INe64", B, (U64, U64)),
        OpDef("Select64", U64, (B, U64, U64)),
        OpDef("ICmp32", B, (U32, U32), ("cmp", "unsigned")),
        OpDef("FCmp32", B, (F32, F32), ("cmp",)),
        OpDef("ConstF64", F64, (), ("bits",)),
        OpDef("PackF64", F64, (U32, U32)),
        OpDef("BitcastU64", U64, (F64,)),
        OpDef("FAbs64", F64, (F64,)),
        OpDef("FNeg64", F64, (F64,)),
        OpDef("FAdd64", F64, (F64, F64)),
        OpDef("FMul64", F64, (F64, F64)),
        OpDef("FFma64", F64, (F64, F64, F64)),
        OpDef("FCmp64", B, (F64, F64), ("cmp",)),
        OpDef("RoundF32", F32, (F32,), ("rnd",)),
        OpDef("RoundF64", F64, (F64,), ("rnd",)),
        OpDef("F2ISat32", U32, (F32,), ("rnd", "signed")),
        OpDef("F2ISatF64To32", U32, (F64,), ("signed",)),
        OpDef("F2ISatF64To64", U64, (F64,), ("signed",)),
        OpDef("I2F32", F32, (U32,), ("signed",)),
        OpDef("I2F32From64", F32, (U64,), ("signed",)),
        OpDef("I2F64", F64, (U32,), ("signed",)),
        OpDef("I2F64From64", F64, (U64,), ("signed",)),
        OpDef("RoundDirectedF32", F32, (F32, U32), ("rnd", "signed", "inst")),
        OpDef("RoundDirectedF32From64", F32, (F32, U64), ("rnd", "signed", "inst")),
        OpDef("CvtF64", F64, (F32,)),
        OpDef("CvtF32", F32, (F64,)),
        OpDef("GlobalPtr", GPTR, (U64,)),
        OpDef("LoadGlobal32", U32, (GPTR,)),
        OpDef("StoreGlobal32", None, (GPTR, U32)),
        OpDef("SharedPtr", SPTR, (U32,)),
        OpDef("LoadShared32", U32, (SPTR,)),
        OpDef("StoreShared32", None, (SPTR, U32)),
        OpDef("ConstF32", F32, (), ("bits",)),
        OpDef("Cos32", F32, (F32,)),
        OpDef("Sin32", F32, (F32,)),
        OpDef("Exp2_32", F32, (F32,)),
        OpDef("Log2_32", F32, (F32,)),
        OpDef("RSqrt32", F32, (F32,)),
        OpDef("Sqrt32", F32, (F32,)),
        OpDef("FDiv32", F32, (F32, F32)),
        OpDef("Rcp64H", U32, (U32,)),
        OpDef("RSqrt64H", U32, (U32,)),
        OpDef("BuiltinU32", U32, (), ("builtin", "comp")),
        OpDef("LocalIndex", U32, ()),
        OpDef("ISub32", U32, (U32, U32)),
        OpDef("GetFlag", B, (), ("flag",)),
        OpDef("SetFlag", None, (B,), ("flag",)),
        # shader-ir: the lowering's own scalar function variables (SM53's stack pointer, a
        # branch's chosen block, a loop's temporaries), read and written by SPIR-V-writing code;
        # in IR so the optimiser forwards them as it does registers
        OpDef("LoadVarU32", U32, (), ("var",)),
        OpDef("LoadVarBool", B, (), ("var",)),
        OpDef("StoreVarU32", None, (U32,), ("var",)),
        OpDef("StoreVarBool", None, (B,), ("var",)),
    )
}

# --- memory spaces, atomics and the emulated warp ------------------------------------------
# Semantics (the rows below; lowered by ``to_spirv.py``'s last block through ``lower/memory.py``):
#
# - ``CBankDynU32``: the u32 of constant bank ``bank`` at a run-time byte address (LDC; the low
#   two bits are ignored; bank 0 only).
# - Local memory, one array of 4 KiB per invocation, addresses taken modulo its size (LDL/STL):
#   ``LocalPtr``: the word at byte address (argument + ``offset``); ``LoadLocal32``/
#   ``StoreLocal32``.
# - Atomics on one 32-bit word, each returning the word's old value: ``AtomicGlobal32``/
#   ``AtomicShared32`` with ``op`` one of IAdd, UMin, SMin, UMax, SMax, And, Or, Xor,
#   Exchange (the new value is the argument), Inc (old >= b ? 0 : old + 1) and Dec
#   (old == 0 || old > b ? b : old - 1), PTX's atom.inc/.dec; ``AtomicGlobalF32``: .FTZ.RN on
#   f32 — both operands' denormals flushed, FAdd rounded to nearest even and its result flushed,
#   FMin/FMax NaN-suppressing as FMNMX; ``AtomicCasGlobal32``/``AtomicCasShared32``:
#   (pointer, compare, new) stores new where the old value equals compare.  Global atomics are
#   device-scoped, shared ones workgroup-scoped; operations SPIR-V has no instruction for (Inc,
#   Dec, the float ones) are a compare-exchange loop, still one atomic step.
# - Generic 64-bit addresses (LD/ST/ATOM): an address in [window, window + 16 MiB) (the second
#   argument, the shared window's base the driver puts in constant bank 0) is shared memory at
#   the offset, one in [window - 16 MiB, window) the invocation's local memory at the offset
#   (atomics there only read: PTX leaves them undefined), any other is global memory; the
#   access goes to exactly one of them.
#   ``GenericLoad``: ``words`` consecutive u32 (1, 2, 4) loaded together, read with ``Word``
#   (its ``index``); ``GenericStore32``/``GenericStore64``/``GenericStore128``: 1, 2, 4 words
#   stored; ``GenericAtomic32``/``GenericAtomicF32``: ``AtomicGlobal32``/``AtomicGlobalF32``'s
#   operations on the space the address names.  ``inst`` names the instruction (the access's
#   temporaries).
# - ``Barrier``: the workgroup barrier of BAR.SYNC 0 (every invocation waits; shared memory
#   written before it is visible after it).  ``MemoryFence``: MEMBAR, ordering towards other
#   invocations; emits nothing yet (lavapipe 22.3 stalls at a memory barrier once some
#   invocations exited: ``lower/memory.py``), a known gap.
# - The emulated 32-lane warp (invocation i of the workgroup is lane i % 32 of warp i / 32;
#   every invocation must reach the operation, predicated warp operations are refused):
#   ``ShflWarp``: PTX's shfl.sync of the value (first argument) with the lane / offset (second)
#   and the clamp (bits 0..4) and segment mask (bits 8..12) of the third, ``mode`` 0 IDX, 1 UP,
#   2 DOWN, 3 BFLY; a lane whose source is outside its segment (or the workgroup) keeps its own
#   value; ``ShflInRange`` (the ``ShflWarp``'s result): whether the source lane was in range.
#   ``WarpBallot``: bit j set where lane j of the warp voted true (lanes past the workgroup's end
#   count as false); ``WarpVote`` (the ``WarpBallot``'s result): ``mode`` 0 ALL (every lane
#   present voted true), 1 ANY, 2 EQ (all or none).
LPTR, WORDS = Type.PTR_LOCAL, Type.WORDS
OPS.update(
    {
        d.name: d
        for d in (
            OpDef("CBankDynU32", U32, (U32,), ("bank", "inst")),
            OpDef("LocalPtr", LPTR, (U32,), ("offset",)),
            OpDef("LoadLocal32", U32, (LPTR,)),
            OpDef("StoreLocal32", None, (LPTR, U32)),
            OpDef("AtomicGlobal32", U32, (GPTR, U32), ("op",)),
            OpDef("AtomicGlobalF32", U32, (GPTR, F32), ("op",)),
            OpDef("AtomicCasGlobal32", U32, (GPTR, U32, U32)),
            OpDef("AtomicShared32", U32, (SPTR, U32), ("op",)),
            OpDef("AtomicCasShared32", U32, (SPTR, U32, U32)),
            OpDef("GenericLoad", WORDS, (U64, U64), ("words", "inst")),
            OpDef("Word", U32, (WORDS,), ("index",)),
            OpDef("GenericStore32", None, (U64, U64, U32), ("inst",)),
            OpDef("GenericStore64", None, (U64, U64, U32, U32), ("inst",)),
            OpDef("GenericStore128", None, (U64, U64, U32, U32, U32, U32), ("inst",)),
            OpDef("GenericAtomic32", U32, (U64, U64, U32), ("op", "inst")),
            OpDef("GenericAtomicF32", U32, (U64, U64, F32), ("op", "inst")),
            OpDef("Barrier", None),
            OpDef("MemoryFence", None),
            OpDef("ShflWarp", U32, (U32, U32, U32), ("mode",)),
            OpDef("ShflInRange", B, (U32,)),
            OpDef("WarpBallot", U32, (B,)),
            OpDef("WarpVote", B, (U32,), ("mode",)),
        )
    }
)


# --- half precision (issue 31; shader-half): a half is held in IR as the f32 it widens to
# exactly, so comparisons, min/max, negation and |x| are the f32 operations.
# - ``UnpackF16``: the half in bits 16*``lane``.. of a u32 as f32 (exact; NaN payload kept).
# - ``F16FromF64``: the half nearest an f64 in the direction ``rnd`` (0 nearest even, 1 down,
#   2 up, 3 toward zero), as a u32 < 0x10000; overflow gives infinity or the largest finite half
#   as the mode says, NaN the canonical 0x7fff.  ``F16FromF32``: the same from an f32, in
#   32-bit integers only (no Float64/Int64, for graphics stages too).
# - ``FFlushDenormF16``: a half (as f32) below 2^-14 in magnitude becomes a zero of its sign.
# - ``FFmaDirected32``: a*b+c rounded once to f32 in the direction ``rnd`` (1 down, 2 up, 3
#   toward zero; FFMA.RM/.RP/.RZ), exactly on any device.  ``FFmaDirected64``: the same for
#   DFMA (and DADD = a*1+c, DMUL = a*b+0 with .RM/.RP/.RZ), in ``FFma64``'s exact range.
# - ``FMinMax64``: ``FMinMax32`` on doubles (DMNMX; PTX's min/max.f64 NaN rule).
# How each is built, and why a wider type rounded once to a half is exact for HADD2/HMUL2/
# HFMA2: ``lower/half.py``.
OPS.update(
    {
        d.name: d
        for d in (
            OpDef("UnpackF16", F32, (U32,), ("lane",)),
            OpDef("F16FromF64", U32, (F64,), ("rnd",)),
            OpDef("F16FromF32", U32, (F32,), ("rnd",)),
            OpDef("FFlushDenormF16", F32, (F32,)),
            OpDef("FFmaDirected32", F32, (F32, F32, F32), ("rnd",)),
            OpDef("FFmaDirected64", F64, (F64, F64, F64), ("rnd",)),
            OpDef("FMinMax64", F64, (F64, F64, B)),
        )
    }
)

# --- textures of the graphics stages (bound slots) ------------------------------------------
# Semantics (the rows below; lowered by ``to_spirv.py``'s last block through
# ``lower/graphics.py``'s texture methods).  Each access reads the combined image sampler of the
# bound slot its instruction (``inst``) names, declared as ``dim`` ('1D', '2D', '3D', 'Cube'),
# ``arrayed`` or not; its arguments are the instruction's source registers by role (unused
# roles take any value, conventionally 0): coordinates are f32 bit patterns (sampling) or
# signed texels (fetching), the ``n`` first of x, y, z with n = 1, 2, 3, 3 by ``dim``; the
# layer an unsigned integer.  The result is the texel's four components R, G, B, A.
#
# - ``TexSample`` (layer, x, y, z, lod, dref): filtered sample; ``lod`` 0 the implicit level
#   (a fragment program's derivatives; level 0 elsewhere), 1 level 0, 2 the implicit level
#   biased by the f32 ``lod`` argument (fragment programs only), 3 the level the f32 ``lod``
#   argument names.  ``dc``: a depth comparison of the texel against the f32 ``dref`` with the
#   sampler's compare function, its result in R (G, B, A zero).
# - ``TexFetch`` (layer, x, y, z, lod, off): the unfiltered texel at integer coordinates and
#   level ``lod`` (an integer); ``aoffi``: moved by the signed 4-bit x, y, z at bits 0, 4, 8 of
#   ``off``.
# - ``TexGather`` (layer, x, y, z, off, ptp0, ptp1, dref): component ``comp`` (0..3) of the
#   four texels around the point, in the order OpImageGather gives them; ``off`` 1: moved by
#   the signed 6-bit x, y at bits 0, 8 of ``off``; 2: texel k moved by its own signed byte
#   pair (bytes 2k, 2k + 1 of ptp0:ptp1); ``dc``: each texel compared against ``dref``.
# - ``TexQueryDims`` (level): width, height, depth of the view at the level (1 for axes it
#   lacks; a layered view's layer count is not returned) and its level count.
# - ``TexelWord`` (texel): component ``comp`` as 32 bits (``float``: the f32's bit pattern).
# An access names its instruction: its lowering refuses a slot without a binding or read as
# two dimensions, so it is lowered when built (``to_spirv.emit``).
TEXEL = Type.TEXEL
OPS.update(
    {
        d.name: d
        for d in (
            OpDef("TexSample", TEXEL, (U32,) * 6, ("dim", "arrayed", "lod", "dc", "inst")),
            OpDef("TexFetch", TEXEL, (U32,) * 6, ("dim", "arrayed", "aoffi", "inst")),
            OpDef("TexGather", TEXEL, (U32,) * 8, ("dim", "arrayed", "comp", "off", "dc", "inst")),
            OpDef("TexQueryDims", TEXEL, (U32,), ("dim", "arrayed", "inst")),
            OpDef("TexelWord", U32, (TEXEL,), ("comp", "float")),
        )
    }
)

# --- sub-word generic memory (lowered by ``lower/memory.py``'s ``generic_sub``) ----------------
# - ``GenericLoadSub`` (addr, window): the ``bytes`` (1, 2) at a generic address (the shared
#   window at ``window`` or global memory, as ``GenericLoad``), zero- or (``signed``) sign-
#   extended to 32 bits (LD.U8/.S8/.U16/.S16).
# - ``GenericStoreSub`` (addr, window, value): the low ``bytes`` of ``value`` there; the other
#   bytes of the containing word are left as they are, also when neighbouring lanes store to
#   them at the same time (an atomic read-modify-write of the word).
# The address is naturally aligned (its low bits below the access size are ignored).
OPS.update(
    {
        d.name: d
        for d in (
            OpDef("GenericLoadSub", U32, (U64, U64), ("bytes", "signed", "inst")),
            OpDef("GenericStoreSub", None, (U64, U64, U32), ("bytes", "inst")),
        )
    }
)

# --- 64-bit atomics, compare-and-store, address-space query (issue 31; shader-mem; lowered by
# ``lower/memory.py``'s MemoryWarp) ---------------------------------------------------------------
# - ``AtomicGlobal64`` (addr, b): ``AtomicGlobal32``'s operations IAdd, UMin, SMin, UMax, SMax,
#   And, Or, Xor, Exchange on the u64 at the 64-bit global address (8-byte aligned), returning
#   its old value: one atomic step on all 64 bits (the device's Int64Atomics).
#   ``AtomicCasGlobal64`` (addr, compare, new): stores new where the old u64 equals compare.
# - ``AtomicCastShared32`` (pointer, compare, new): SM86's ATOMS.CAST (compare and store): new
#   stored where the shared word equals compare; 1 where it was stored, else 0.
# - ``SpaceIs`` (addr, window): whether the generic address is in ``space`` ('shared', 'local',
#   'global') as the generic rows route it (QSPC).
# - ``GenericAtomicCas32`` (addr, window, compare, new): ``AtomicCasGlobal32`` at a generic
#   address (the space it names, as ``GenericAtomic32``).
# - ``AtomicShared64`` (byte addr, b) / ``AtomicCasShared64`` (byte addr, compare, new) /
#   ``AtomicCastShared64``: ``AtomicGlobal64``'s operations, the CAS and ``AtomicCastShared32`` on
#   the 8-byte aligned u64 of shared memory at a u32 byte address (workgroup scope).  A program
#   with one keeps its shared memory as 64-bit words; its 32-bit shared accesses and atomics
#   (``SharedPtr``'s words) mean the same as before, on half of such a word.
#   ``GenericAtomic64`` (addr, window, b): ``AtomicGlobal64``'s operation at a generic address.
# - ``WarpReduce``: REDUX on the emulated warp (``WarpBallot``'s conditions): the argument of
#   every lane present combined by ``op`` 0 AND, 1 OR, 2 XOR, 3 SUM (modulo 2^32), 4 MIN, 5 MAX,
#   ``signed`` or unsigned.
# - ``LoadSub`` (addr) / ``StoreSub`` (addr, value): the ``bytes`` (1, 2) at a byte address of
#   ``space`` ('shared', 'local': a u32 address as ``SharedPtr``/``LocalPtr`` take it;
#   ``LoadSubGlobal``/``StoreSubGlobal``: 'global', a u64 address), loaded zero- or (``signed``) sign-extended, or the low bytes of value stored, the
#   other bytes of the word kept also against a concurrent neighbour's store (shared, global);
#   the address naturally aligned (low bits below the size ignored).
OPS.update(
    {
        d.name: d
        for d in (
            OpDef("AtomicGlobal64", U64, (U64, U64), ("op",)),
            OpDef("AtomicCasGlobal64", U64, (U64, U64, U64)),
            OpDef("AtomicCastShared32", U32, (SPTR, U32, U32)),
            OpDef("SpaceIs", B, (U64, U64), ("space",)),
            OpDef("GenericAtomicCas32", U32, (U64, U64, U32, U32), ("inst",)),
            OpDef("WarpReduce", U32, (U32,), ("op", "signed")),
            OpDef("AtomicShared64", U64, (U32, U64), ("op",)),
            OpDef("AtomicCasShared64", U64, (U32, U64, U64)),
            OpDef("AtomicCastShared64", U32, (U32, U64, U64)),
            OpDef("GenericAtomic64", U64, (U64, U64, U64), ("op", "inst")),
            OpDef("LoadSub", U32, (U32,), ("space", "bytes", "signed")),
            OpDef("StoreSub", None, (U32, U32), ("space", "bytes")),
            OpDef("LoadSubGlobal", U32, (U64,), ("space", "bytes", "signed")),
            OpDef("StoreSubGlobal", None, (U64, U32), ("space", "bytes")),
        )
    }
)

# --- shader-ir-gfx: the graphics stages' interface and SM53's run-time stack ------------------
# Variables (``var``) are SPIR-V ids of module-level interface variables the lowering declared
# while building (and checked against the shader program header then, so these rows never
# refuse and are lowered with the whole function).  Lowered by ``lower/graphics.py``'s
# interface methods and ``sm53/lower_control.py``.
# - ``LoadInputF32``: component ``comp`` of the vec4 f32 input ``var`` (a vertex attribute, a
#   varying as the driver interpolates it, FragCoord).  ``LoadInputIndex``: the 32 bits of the
#   i32 input builtin ``var`` (VertexIndex, InstanceIndex).
# - ``StoreOutputF32``: component ``comp`` of the vec4 f32 output ``var`` (Position, a varying).
# - ``StoreColour``: the vec4 f32 colour output ``var`` from the f32 bit patterns of the
#   arguments whose bit is set in ``mask`` (x first); the others are 0 (R, G, B) and 1 (A).
#   ``StoreSampleMask``: SampleMask[0] (``var``) from the argument's 32 bits.
#   ``StoreFragDepth``: FragDepth (``var``) from the f32 bit pattern.
# - ``FClampDevice01``: GLSL NClamp(x, 0, 1): [0, 1], NaN gives 0; the sign of a zero is the
#   device's (IPA.SAT, as the driver clamps).
# - ``StackLoad`` / ``StackStore``: entry (index mod 64) of SM53's per-invocation run-time
#   reconvergence stack (a function-local array of u32).
OPS.update(
    {
        d.name: d
        for d in (
            OpDef("LoadInputF32", F32, (), ("var", "comp")),
            OpDef("LoadInputIndex", U32, (), ("var",)),
            OpDef("StoreOutputF32", None, (F32,), ("var", "comp")),
            OpDef("StoreColour", None, (U32, U32, U32, U32), ("var", "mask")),
            OpDef("StoreSampleMask", None, (U32,), ("var",)),
            OpDef("StoreFragDepth", None, (U32,), ("var",)),
            OpDef("FClampDevice01", F32, (F32,)),
            OpDef("StackLoad", U32, (U32,)),
            OpDef("StackStore", None, (U32, U32)),
        )
    }
)

# --- bindless textures (shader-ir-gfx): the handle (first argument) picks entries of the texture
# and sampler pools (``lower/graphics.py``'s ``bindless``: a switch over the entries, or
# descriptor indexing with FEATURE_DESCRIPTOR_INDEXING), 2D views only; a handle outside the
# pools reads zeros.  Coordinates are f32 bit patterns (sampling) or signed texels (fetching).
# - ``BindlessSample`` (handle, x, y, lod): ``lod`` 0 the implicit level (a fragment program's
#   derivatives of the coordinates, taken before the pick so a quad's invocations with different
#   handles share them; level 0 elsewhere), 1 level 0, 2 the implicit level biased by the f32
#   argument (fragment programs only: refused when built), 3 the level the f32 argument names.
# - ``BindlessFetch`` (handle, x, y, level): the texel at integer coordinates and level.
# - ``BindlessGather`` (handle, x, y): component ``comp`` of the four texels around the point.
# - ``BindlessQueryDims`` (handle, level): width, height, 1 and the level count.
# Their components are read with ``TexelWord``.
OPS.update(
    {
        d.name: d
        for d in (
            OpDef("BindlessSample", TEXEL, (U32,) * 4, ("lod",)),
            OpDef("BindlessFetch", TEXEL, (U32,) * 4),
            OpDef("BindlessGather", TEXEL, (U32,) * 3, ("comp",)),
            OpDef("BindlessQueryDims", TEXEL, (U32,) * 2),
        )
    }
)

# --- surfaces (issue 31; shader-surf; lowered by ``lower/surface.py``) -------------------------
# The 32-bit ``handle`` picks an entry of the surface pool of dimension ``dim`` (the dimension
# field: 0 1D, 2 1D array, 3 2D, 4 2D array, 5 3D; storage images of 32-bit unsigned texels,
# ``lower/surface.py``); (x, y, z) are the texel's coordinates, as many as ``dim`` has (the
# layer last; the others ignored), x in bytes where ``ba`` is
# 1 (SULD/SUST .BA: the texel is x / 4).  ``clamp`` 1 (PTX .clamp, printed as nothing): the
# coordinates (signed) are clamped into the image; else (.IGN = PTX .zero, .TRAP) out of the
# image a load reads 0 and a store or atomic does nothing (.TRAP's trap is not emulated).  Out of
# the pool: the same.
# - ``SurfaceLoad32`` (handle, x, y, z): the texel's 32 bits.
# - ``SurfaceStore32`` (handle, x, y, z, value): the texel becomes ``value``.
# - ``SurfaceAtomic32`` (handle, x, y, z, value, compare): the atomic ``op`` of ``ir.ops``'s
#   ``Atomic*`` family on the texel (``lower/memory.py``'s names: "IAdd", "UMin", "SMin",
#   "UMax", "SMax", "Inc", "Dec", "And", "Or", "Xor", "Exchange", and "Cas", which alone
#   compares with ``compare``); the texel's old value (0 out of range).
# The surface is seen as 32-bit texels of its rows' bytes: the access is to the element of
# ``esize`` bytes (1, 2, 4, 8, 16) at byte x, its 32-bit word ``word`` (elements of 1 or 2 bytes:
# the byte / halfword within its texel, loaded zero- or ``signed`` sign-extended, stored
# without touching the texel's other bytes); bounds and clamping count x in elements.
# Each names its instruction (``inst``): lowered when built.
OPS.update(
    {
        d.name: d
        for d in (
            OpDef("SurfaceLoad32", U32, (U32,) * 4, ("dim", "ba", "clamp", "esize", "word", "signed", "inst")),
            OpDef("SurfaceStore32", None, (U32,) * 5, ("dim", "ba", "clamp", "esize", "word", "signed", "inst")),
            OpDef("SurfaceAtomic32", U32, (U32,) * 6, ("op", "dim", "ba", "clamp", "esize", "word", "signed", "inst")),
        )
    }
)


# --- generic 64-bit compare-exchange (issue 31; shader-gaps2; lowered by ``lower/memory.py``) ----
# - ``GenericAtomicCas64`` (addr, window, compare, new): ``AtomicCasGlobal64`` at a generic
#   address: global memory, the shared window (``AtomicCasShared64``) or the local window (one
#   invocation's own memory: a plain compare-and-replace of the two words); the old u64.
OPS.update({d.name: d for d in (OpDef("GenericAtomicCas64", U64, (U64, U64, U64, U64), ("inst",)),)})


# --- explicit gradients and the LOD query (issue 31; shader-tex; lowered by lower/graphics.py) ----
# The bound texture of ``TexSample``'s block (slot from ``inst``, ``dim``, ``arrayed``):
# - ``TexSampleGrad`` (x, y, dxx, dyx, dxy, dyy): the filtered sample at the f32 point (x, y)
#   with the explicit gradients dP/dx = (dxx, dxy), dP/dy = (dyx, dyy) (TXD; the level of detail
#   follows from them as for implicit derivatives: Vulkan's "Scale Factor Operation").
# - ``TexQueryLod`` (x, y): TMML.LOD's two words from the point's implicit derivatives (fragment
#   programs): x the computed level of detail lambda' (OpImageQueryLod's y), y the level the
#   sample reads (its x), each as 8.8 fixed point (times 256, rounded to nearest), x a signed
#   16-bit value sign-extended, y unsigned; z, w 0.
OPS.update(
    {
        d.name: d
        for d in (
            OpDef("TexSampleGrad", TEXEL, (U32,) * 6, ("dim", "arrayed", "inst")),
            OpDef("TexQueryLod", TEXEL, (U32,) * 2, ("dim", "arrayed", "inst")),
        )
    }
)
# - ``BindlessSampleGrad`` (handle, x, y, dxx, dyx, dxy, dyy): ``TexSampleGrad`` on the pool
#   entries the handle names (``BindlessSample``'s pools; lowered by lower/texture.py).
OPS.update({d.name: d for d in (OpDef("BindlessSampleGrad", TEXEL, (U32,) * 7),)})
# - ``WarpMatch`` (lo, hi): MATCH on the emulated warp (``lower/match.py``): ``all`` 0 the mask
#   of the lanes whose value equals this lane's, 1 the member mask where all are equal else 0;
#   ``wide`` compares the pair (lo, hi), else lo alone.  Exchanges through workgroup barriers.
OPS.update({d.name: d for d in (OpDef("WarpMatch", U32, (U32, U32), ("all", "wide")),)})
# --- shader-ctl ---------------------------------------------------------------------------------
# - ``BindlessSampleGradOffset`` (handle, x, y, dxx, dyx, dxy, dyy, off): ``BindlessSampleGrad``
#   moved by TXD .AOFFI's texel offsets (signed 4-bit x at bits 16..19, y at 20..23 of ``off``,
#   as ptxas packs them); ``word`` the constant a move gave it (None: ``off`` must fold to one;
#   lowered by lower/texture.py).
OPS.update({d.name: d for d in (OpDef("BindlessSampleGradOffset", TEXEL, (U32,) * 8, ("word", "inst")),)})


# --- shader-halfgfx (issue 31): half arithmetic without Float64 (graphics stages too) ----------
# - ``FAddOdd32``: a+b rounded once to f32 toward odd (the exact sum where it is an f32, else
#   whichever neighbour has an odd last bit), from TwoSum's exact error; exact for operands whose
#   sum and error stay normal (lower/half.py ``fadd_odd32``: HFMA2's product and addend).
OPS.update({d.name: d for d in (OpDef("FAddOdd32", F32, (F32, F32)),)})


# --- arch-gfx (issue 31): the pixel's values (lower/gfx_pixel.py) -------------------------------
# - ``LoadSampleMaskIn``: element 0 of the fragment's SampleMask input ``var`` (PIXLD.COVMASK:
#   bit n set when sample n of the pixel is covered), its 32 bits.
OPS.update({d.name: d for d in (OpDef("LoadSampleMaskIn", U32, (), ("var",)),)})
# - ``LoadOutputF32``: component ``comp`` of the vec4 f32 output ``var`` as this invocation last
#   wrote it (AST.PHYS rewrites the outputs its address does not pick with themselves:
#   lower/gfx_indexed.py).
OPS.update({d.name: d for d in (OpDef("LoadOutputF32", F32, (), ("var", "comp")),)})
# --- shader-ctl: barrier reductions (PTX bar.red; lower/barrier_red.py, lower/warp.py) ----------
# - ``BarrierReduce`` (p): a workgroup barrier (``Barrier``'s ordering) at which every invocation
#   contributes ``p``; the result, the same in every invocation: ``op`` 0 POPC the number of
#   invocations whose ``p`` holds, 1 AND 1 where every one holds else 0, 2 OR 1 where any holds
#   else 0 (PTX ISA "bar.red": popc.u32 / and.pred / or.pred over the CTA's threads).
OPS.update({d.name: d for d in (OpDef("BarrierReduce", U32, (B,), ("op",)),)})
# - ``AtomicSharedAddAcqRel32`` (ptr, v): ``AtomicShared32``'s IAdd with acquire-release ordering
#   of workgroup memory (an mbarrier arrival: the arriving invocation's earlier shared writes are
#   visible to one that observes the phase it completes; PTX mbarrier.arrive is .release).
OPS.update({d.name: d for d in (OpDef("AtomicSharedAddAcqRel32", U32, (SPTR, U32)),)})
# --- shader-ctl2: the device clock (lower/clock.py) ----------------------------------------------
# - ``ReadClock``: the 64-bit clock of ``scope`` ("Subgroup": the processor's counter, SR_CLOCK;
#   "Device": the device's, SR_GLOBALTIMER), read once (SPIR-V OpReadClockKHR); not pure: every
#   read is its own.
OPS.update({d.name: d for d in (OpDef("ReadClock", U64, (), ("scope",)),)})
# --- gfx-geom (issue 31): the geometry stage (lower/gfx_geometry.py) -----------------------------
# - ``LoadVertexInputF32`` (vertex): component ``comp`` of input vertex ``vertex`` (clamped to the
#   input primitive's last vertex) of the per-vertex vec4 f32 input array ``var`` (ALD with a
#   vertex register in a geometry program: a generic attribute, Position).
# - ``EmitVertex`` / ``EndPrimitive``: OUT.EMIT / OUT.CUT (SPIR-V OpEmitVertex / OpEndPrimitive):
#   the outputs as written so far become the next vertex; the strip ends.  Never dead code.
OPS.update(
    {
        d.name: d
        for d in (
            OpDef("LoadVertexInputF32", F32, (U32,), ("var", "comp", "count")),
            OpDef("EmitVertex", None, ()),
            OpDef("EndPrimitive", None, ()),
        )
    }
)
# --- gfx-layers (issue 31/32): a geometry program's render target layer --------------------------
# - ``StoreLayer``: AST of a[0x64] (the render target array index): the argument's 32 bits kept
#   for the vertices emitted from now on (lower/gfx_geometry.py: a Private variable, copied to
#   the ``Layer`` output at each EmitVertex where it is below the framebuffer's layer count).
OPS.update({d.name: d for d in (OpDef("StoreLayer", None, (U32,)),)})
# - ``StoreViewport`` (shader-tex): AST of a[0x68] (the viewport index), kept as ``StoreLayer``'s
#   value is and copied to the ``ViewportIndex`` output at each EmitVertex (lower/gfx_geometry.py).
OPS.update({d.name: d for d in (OpDef("StoreViewport", None, (U32,)),)})
# - ``BindlessSampleDim`` (handle, a, b, c, level): a kernel's TEX on a 3D (``dim`` "3d": x, y, z
#   f32) or 2D array (``dim`` "2d_array": the layer a u32, then x, y f32) texture of the pool of
#   that dimension (lower/texture.py: set 1 bindings 7 and 8); ``lod`` as ``BindlessSample``'s
#   (1 level 0, 3 the f32 level).
OPS.update({d.name: d for d in (OpDef("BindlessSampleDim", TEXEL, (U32,) * 5, ("lod", "dim")),)})

# - ``WarpLive`` (shader-assert): this invocation is running (``alive`` 1, at the program's entry)
#   or has ended (0, before each return: EXIT or a trap); the emulated warp's operations count
#   only running lanes as members (``lower/warp.py``).
OPS.update({d.name: d for d in (OpDef("WarpLive", None, (), ("alive",)),)})
# - ``BindlessFetchDim`` (handle, a, b, c, level) (tex-kernels): a kernel's TLD.B on a 3D (x, y, z)
#   or 2D array (layer, x, y) texture of the pool of that dimension, integer texel coordinates
#   and level (lower/texture.py).
OPS.update({d.name: d for d in (OpDef("BindlessFetchDim", TEXEL, (U32,) * 5, ("dim",)),)})
# - ``BindlessSampleGradArray`` (handle, x, y, layer, dP/dx.x, dP/dy.x, dP/dx.y, dP/dy.y)
#   (tex-kernels): a kernel's TXD on a 2D array texture of the 2D array pool (lower/texture.py).
OPS.update({d.name: d for d in (OpDef("BindlessSampleGradArray", TEXEL, (U32,) * 8),)})
# - ``BindlessFetchClamp`` (handle, a, b, c, level) (shader-tex): a kernel's TLD .LL.CL on a 2D
#   (``dim`` "2d": x, y; c unused), 3D or 2D array texture of the pool of that dimension, the
#   level a signed integer: one outside the texture's levels reads 0, as an H100 does (lower/texture.py).
OPS.update({d.name: d for d in (OpDef("BindlessFetchClamp", TEXEL, (U32,) * 5, ("dim",)),)})
# - ``BindlessSampleGrad3`` (handle, x, y, z, layer, dP/dx.x, .y, .z, dP/dy.x, .y, .z) (shader-ndv):
#   an explicit-gradient sample of a kernel's texture of the pool of ``dim`` ("3d", "cube"; the
#   layer unused): the virtual quad's TEX.NDV of ptxas's tex3DGrad / texCubemapGrad loop
#   (lower/quad_tex.py); pure (ir/optimize.py).
OPS.update({d.name: d for d in (OpDef("BindlessSampleGrad3", TEXEL, (U32,) * 11, ("dim",)),)})
# - ``BindlessSampleCube`` (handle, x, y, z, layer, level) (gpu-pools): a kernel's TEX on a cube
#   (``array`` 0: the direction x, y, z f32, the layer unused) or cube array (``array`` 1: the
#   layer a u32) texture of the cube / cube array pool (set 1 binding 9 / 10); ``lod`` as
#   ``BindlessSample``'s (3: the f32 level, else level 0).
OPS.update({d.name: d for d in (OpDef("BindlessSampleCube", TEXEL, (U32,) * 6, ("lod", "array")),)})
