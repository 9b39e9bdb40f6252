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
"""
from __future__ import annotations

from dataclasses import dataclass, field

from shader_svc.ir.types import Type

B, U32, U64, F32, F64 = Type.BOOL, Type.U32, Type.U64, Type.F32, Type.F64


@dataclass(frozen=True)
class OpDef:
    name: str
    result: Type | None
    args: tuple[Type, ...] = ()
    attrs: tuple[str, ...] = ()
    attr_set: frozenset[str] = field(default=frozenset(), compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "attr_set", frozenset(self.attrs))


OPS: dict[str, OpDef] = {d.name: d for d in (
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
)}
