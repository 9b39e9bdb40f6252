"""What is left to clean after the IR's one lowering to SPIR-V (``ir/to_spirv.emit_function``).

The IR optimiser (``ir/optimize.py``) folds and removes IR operations, but one IR operation may
become many SPIR-V instructions (PTX bfe, PRMT, the exact FFMA...), and the constants inside such
an expansion are only visible once it is written.  Two cheap local steps, no control-flow
analysis:

- ``fold``: while the body is written, an integer, bitwise, shift, comparison, logical, select or
  width instruction whose operands are all constants is not written: its constant is used
  (``Module.const``); ``select(c, x, y)`` with a constant ``c`` is ``x`` or ``y``.  Floating point
  is never folded (the device's rounding and denormals are the device's).
- ``sweep``: one backward pass drops instructions without effects whose results nobody names.
  The body is in dominance order (a value is written before every use; no ``OpPhi``), so one pass
  sees every use of a result before its definition.  Any operand equal to a result counts as a
  use (a literal of the same number only keeps an instruction: no grammar needed).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the builder is the caller's; no run-time import needed
    from shader_svc.spirv.builder import Module

# removable when their result is unused
PURE = set(
    (
        "OpLoad OpAccessChain OpIAdd OpISub OpIMul OpUDiv OpUMod OpFAdd OpFSub OpFMul OpFDiv "
        "OpFNegate OpSNegate OpNot OpBitwiseAnd OpBitwiseOr OpBitwiseXor OpShiftLeftLogical "
        "OpShiftRightLogical OpShiftRightArithmetic OpBitFieldInsert OpBitFieldSExtract "
        "OpBitFieldUExtract OpBitReverse OpBitCount OpBitcast OpUConvert OpSConvert OpFConvert "
        "OpConvertFToU OpConvertFToS OpConvertUToF OpConvertSToF OpSelect OpIEqual OpINotEqual "
        "OpUGreaterThan OpSGreaterThan OpUGreaterThanEqual OpSGreaterThanEqual OpULessThan "
        "OpSLessThan OpULessThanEqual OpSLessThanEqual OpFOrdEqual OpFUnordEqual OpFOrdNotEqual "
        "OpFUnordNotEqual OpFOrdLessThan OpFUnordLessThan OpFOrdGreaterThan OpFUnordGreaterThan "
        "OpFOrdLessThanEqual OpFUnordLessThanEqual OpFOrdGreaterThanEqual OpFUnordGreaterThanEqual "
        "OpLogicalEqual OpLogicalNotEqual OpLogicalOr OpLogicalAnd OpLogicalNot OpIsNan OpIsInf "
        "OpCompositeConstruct OpCompositeExtract OpCompositeInsert OpVectorShuffle OpCopyObject "
        "OpExtInst OpConvertUToPtr OpConvertPtrToU OpIAddCarry OpISubBorrow OpUMulExtended "
        "OpSMulExtended"
    ).split()
)


def _s(x: int, bits: int) -> int:
    return x - (1 << bits) if x >> (bits - 1) & 1 else x


_CMP = {
    "OpIEqual": lambda a, b: a == b,
    "OpINotEqual": lambda a, b: a != b,
    "OpULessThan": lambda a, b: a < b,
    "OpULessThanEqual": lambda a, b: a <= b,
    "OpUGreaterThan": lambda a, b: a > b,
    "OpUGreaterThanEqual": lambda a, b: a >= b,
}
_SCMP = {
    "OpSLessThan": lambda a, b: a < b,
    "OpSLessThanEqual": lambda a, b: a <= b,
    "OpSGreaterThan": lambda a, b: a > b,
    "OpSGreaterThanEqual": lambda a, b: a >= b,
}
_BIN = {
    "OpIAdd": lambda a, b: a + b,
    "OpISub": lambda a, b: a - b,
    "OpIMul": lambda a, b: a * b,
    "OpBitwiseAnd": lambda a, b: a & b,
    "OpBitwiseOr": lambda a, b: a | b,
    "OpBitwiseXor": lambda a, b: a ^ b,
    "OpLogicalAnd": lambda a, b: int(bool(a and b)),
    "OpLogicalOr": lambda a, b: int(bool(a or b)),
    "OpLogicalEqual": lambda a, b: int(bool(a) == bool(b)),
    "OpLogicalNotEqual": lambda a, b: int(bool(a) != bool(b)),
}
FOLDABLE = (
    set(_CMP)
    | set(_SCMP)
    | set(_BIN)
    | {
        "OpSelect",
        "OpNot",
        "OpSNegate",
        "OpLogicalNot",
        "OpShiftLeftLogical",
        "OpShiftRightLogical",
        "OpShiftRightArithmetic",
        "OpUConvert",
        "OpSConvert",
        "OpBitcast",
    }
)


def fold(m: Module, name: str, ty: int, args: tuple) -> int | None:
    """The constant (or operand) ``name`` computes when its operands are constants; None when it
    must be written."""
    vals = m.const_values
    if name == "OpSelect":
        c = vals.get(args[0])
        if c is not None:
            return args[1] if c[1] else args[2]
        return args[1] if args[1] == args[2] else None
    known = [vals.get(a) for a in args]
    if None in known:
        return None
    w = m.int_width(ty)
    if w is None:  # a float or another type: not folded
        return None
    v = [k[1] for k in known]
    wa = m.int_width(known[0][0])
    if name in _BIN:
        r = _BIN[name](v[0], v[1])
    elif name in _CMP:
        r = int(_CMP[name](v[0], v[1]))
    elif name in _SCMP:
        r = int(_SCMP[name](_s(v[0], wa), _s(v[1], m.int_width(known[1][0]))))
    elif name == "OpNot":
        r = ~v[0]
    elif name == "OpSNegate":
        r = -v[0]
    elif name == "OpLogicalNot":
        r = int(not v[0])
    elif name in ("OpShiftLeftLogical", "OpShiftRightLogical", "OpShiftRightArithmetic"):
        if v[1] >= wa:
            return None  # undefined in SPIR-V: left to the device
        r = (
            v[0] << v[1]
            if name == "OpShiftLeftLogical"
            else v[0] >> v[1]
            if name == "OpShiftRightLogical"
            else _s(v[0], wa) >> v[1]
        )
    elif name == "OpUConvert":
        r = v[0]
    elif name == "OpSConvert":
        r = _s(v[0], wa)
    elif name == "OpBitcast" and wa == w:
        r = v[0]
    else:
        return None
    if w == 1:
        return m.const_bool(bool(r))
    r &= (1 << w) - 1
    return m.const(ty, r) if w <= 32 else m.const(ty, r & 0xFFFFFFFF, r >> 32)


def sweep(body: list[tuple]) -> tuple[list[tuple], set[int]]:
    """``body`` without the pure instructions whose results nobody names (module docstring), and
    those results (their decorations go with them)."""
    used: set[int] = set()
    keep, gone = [], set()
    for t in reversed(body):
        if t[0] in PURE and t[2] not in used:
            gone.add(t[2])
            continue
        used.update(t[1:])
        keep.append(t)
    keep.reverse()
    return keep, gone
