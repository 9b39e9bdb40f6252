"""Vector-typed lowering of the integer NEON forms that x86 has a direct counterpart for.

The other SIMD handlers write one C expression per lane in a loop over the NxVec union's
arrays and leave the rest to clang's SLP vectorizer.  That works for plain lane-wise
arithmetic, but it gives up on widening multiplies, narrows and permutes: XXH3's accumulate
loop (UZP1/UZP2, XTN/SHRN, UMLAL/UMLAL2, EXT) came out as scalar 64-bit code, 2.6x slower
than native.  Here those forms, and the common lane-wise ones, are written with clang's vector
types (``NXV(T, x)``: an NxVec seen as a GCC vector, lifted.h): ``__builtin_shufflevector`` for
permutes, halves and narrows, ``__builtin_convertvector`` for widening and narrowing,
``__builtin_elementwise_max/min``, and plain operators, which clang lowers to SSE/AVX
(pmuludq, pshufd, punpck, packs, pcmpeq ...).

Which forms each handler here lifts is said by forms.py's rows (``_rows``, by form name); the
other forms of the same groups are ``simd_int``'s (exact) or ``fp_simd``'s (general).  The Unicorn
differential test (tests/recompiler/test_unicorn.py) runs these classes.
"""

from __future__ import annotations

from recompiler.decode import Insn
from recompiler.lift.emitter import FunctionEmitter
from recompiler.lift.fp_simd import _LANE, _lanes


def _bits(size: int) -> int:
    return _LANE[size][3]


def _vt(size: int, signed: bool = False, half: bool = False) -> str:
    """The vector type of ``size``-lanes: 16 bytes, or 8 (``half``)."""
    bits = _bits(size)
    n = (8 if half else 16) * 8 // bits
    return f"NxV{n}{'i' if signed else 'u'}{bits}"


def V(var: str, size: int, signed: bool = False) -> str:
    return f"NXV({_vt(size, signed)}, {var})"


def _emit(em: FunctionEmitter, d: int, Q: int, size: int, expr: str, srcs: dict[str, int]) -> None:
    """Vd = ``expr`` (a 16-byte vector of ``size`` lanes); a Q=0 form clears the upper half."""
    loads = " ".join(f"NxVec {k} = v{v};" for k, v in srcs.items())
    hi = "" if Q else " _r.d[1] = 0;"
    em.out(f"{{ {loads} NxVec _r; {V('_r', size)} = ({_vt(size)})({expr});{hi} v{d} = _r; }}")


def _shuffle(a: str, b: str, idx: list[int]) -> str:
    return f"__builtin_shufflevector({a}, {b}, {', '.join(map(str, idx))})"


def _half_of(v: str, size: int, signed: bool, upper: bool) -> str:
    """The lower or upper 8 bytes of NxVec ``v`` as an 8-byte vector."""
    n = 8 >> size
    base = n if upper else 0
    return _shuffle(V(v, size, signed), V(v, size, signed), list(range(base, base + n)))


def _widen(v: str, size: int, signed: bool, upper: bool) -> str:
    """Half of ``v``, each lane sign- or zero-extended to twice its width (unsigned type)."""
    return f"({_vt(size + 1)})__builtin_convertvector({_half_of(v, size, signed, upper)}, {_vt(size + 1, signed)})"


def _put_narrow(em: FunctionEmitter, d: int, Q: int, size: int, narrow: str, srcs: dict[str, int]) -> None:
    """``narrow`` (an 8-byte vector of ``size`` lanes) into the low half of a cleared Vd, or
    (Q = 1, the "2" forms) into its upper half, keeping the lower."""
    n = 8 >> size
    if Q:
        srcs = {**srcs, "c": d}
        low = _half_of("c", size, False, False)
        expr = _shuffle(low, narrow, list(range(2 * n)))
    else:
        expr = _shuffle(narrow, f"({_vt(size, half=True)}){{0}}", list(range(2 * n)))
    _emit(em, d, 1, size, expr, srcs)


# ---- three registers, same type -------------------------------------------------------------
_LOGICAL = {
    (0, 0): "A & B",
    (0, 1): "A & ~B",
    (0, 2): "A | B",
    (0, 3): "A | ~B",
    (1, 0): "A ^ B",
    (1, 1): "(C & A) | (~C & B)",
    (1, 2): "(C & ~B) | (A & B)",
    (1, 3): "(C & B) | (A & ~B)",
}


def _three_same(f: dict) -> tuple[str, int, bool] | None:
    """(expression, lane size, reads Vd) of a three-same form, None for the other handler's."""
    Q, U, size, op = f["Q"], f["U"], f["size"], f["opcode"]
    if op == 3:
        e = _LOGICAL[(U, size)]
        return e.replace("A", V("a", 3)).replace("B", V("b", 3)).replace("C", V("c", 3)), 3, "C" in e
    if size == 3 and not Q:
        return None
    a, b = V("a", size), V("b", size)
    sa, sb = V("a", size, True), V("b", size, True)
    x, y = (a, b) if U else (sa, sb)
    if op == 16:
        return f"{a} {'-' if U else '+'} {b}", size, False
    if op == 19 and not U and size < 3:
        return f"{a} * {b}", size, False
    if op == 17:
        return (f"{a} == {b}" if U else f"({a} & {b}) != 0"), size, False
    if op in (6, 7):
        return f"{x} {'>' if op == 6 else '>='} {y}", size, False
    if op in (12, 13) and size < 3:
        return f"__builtin_elementwise_{'max' if op == 12 else 'min'}({x}, {y})", size, False
    if op in (20, 21) and size < 3 or op == 23 and not U:
        # [SU]MAXP, [SU]MINP, ADDP: lane j of the result pairs lanes 2j and 2j+1 of Vn's and
        # Vm's lanes side by side (the low halves for an 8-byte form); glibc's strlen and
        # memchr reduce with UMAXP/UMINP in their loops
        lanes = 128 // _bits(size)
        h = lanes if Q else lanes // 2  # lanes taken from each operand = result lanes

        def pick(k: int) -> int:  # lane k of the two side by side, as a shuffle index
            return k if k < h else lanes + k - h

        evens = [pick(2 * j) for j in range(h)] + [0] * (lanes - h)
        odds = [pick(2 * j + 1) for j in range(h)] + [0] * (lanes - h)
        p, q = _shuffle(x, y, evens), _shuffle(x, y, odds)
        if op == 23:
            p, q = _shuffle(a, b, evens), _shuffle(a, b, odds)
            return f"{p} + {q}", size, False
        return f"__builtin_elementwise_{'max' if op == 20 else 'min'}({p}, {q})", size, False
    return None


def h_three_same(em: FunctionEmitter, i: Insn) -> None:
    f = i.f
    e, size, reads_d = _three_same(f)
    srcs = {"a": f["Rn"], "b": f["Rm"], **({"c": f["Rd"]} if reads_d else {})}
    _emit(em, f["Rd"], f["Q"], size, e, srcs)


# ---- three registers, different types: the long and wide forms ------------------------------
def h_three_diff(em: FunctionEmitter, i: Insn) -> None:
    """[SU]ADDL/SUBL/MULL/MLAL/MLSL and [SU]ADDW/SUBW (+2): the narrow half widened by
    ``__builtin_convertvector``, the arithmetic in the wide lanes (a product of two extended
    lanes fits them, so its low half is the whole product)."""
    f = i.f
    Q, U, size, op = f["Q"], f["U"], f["size"], f["opcode"]
    signed, upper = not U, bool(Q)
    nb = _widen("b", size, signed, upper)
    na = V("a", size + 1) if op in (1, 3) else _widen("a", size, signed, upper)
    c = V("c", size + 1)
    e = {
        0: f"{na} + {nb}",
        1: f"{na} + {nb}",
        2: f"{na} - {nb}",
        3: f"{na} - {nb}",
        12: f"{na} * {nb}",
        8: f"{c} + {na} * {nb}",
        10: f"{c} - {na} * {nb}",
    }[op]
    srcs = {"a": f["Rn"], "b": f["Rm"], **({"c": f["Rd"]} if op in (8, 10) else {})}
    _emit(em, f["Rd"], 1, size + 1, e, srcs)


# ---- shifts by an immediate -----------------------------------------------------------------
def h_shift_imm(em: FunctionEmitter, i: Insn) -> None:
    """SSHR/USHR, SSRA/USRA, SHL, SHRN(2), SSHLL/USHLL(2) (vector forms)."""
    f = i.f
    immh, immb, op, U, Q = f["immh"], f["immb"], f["opcode"], f["U"], f["Q"]
    size = immh.bit_length() - 1
    bits = _bits(size)
    imm = (immh << 3) | immb
    rshift, lshift = 2 * bits - imm, imm - bits
    n, d = f["Rn"], f["Rd"]
    if op in (16, 20):
        if op == 16:  # SHRN: the wide lanes shifted, each narrowed to its low half
            wide = f"{V('a', size + 1)} >> {rshift}"
            _put_narrow(em, d, Q, size, f"__builtin_convertvector({wide}, {_vt(size, half=True)})", {"a": n})
        else:  # SSHLL/USHLL (SXTL/UXTL)
            _emit(em, d, 1, size + 1, f"{_widen('a', size, not U, bool(Q))} << {lshift}", {"a": n})
        return
    if op == 10:
        _emit(em, d, Q, size, f"{V('a', size)} << {lshift}", {"a": n})
        return
    # a shift by the whole lane is defined on Arm (0, or the sign) but not in C
    if U:
        sh = f"({_vt(size)}){{0}}" if rshift == bits else f"{V('a', size)} >> {rshift}"
    else:
        sh = f"({_vt(size)})({V('a', size, True)} >> {min(rshift, bits - 1)})"
    if op == 0:
        _emit(em, d, Q, size, sh, {"a": n})
    else:
        _emit(em, d, Q, size, f"{V('c', size)} + ({sh})", {"a": n, "c": d})


# ---- two registers: XTN ---------------------------------------------------------------------
_CMP_ZERO = {(8, 0): ">", (8, 1): ">=", (9, 0): "==", (9, 1): "<=", (10, 0): "<"}


def h_two_reg(em: FunctionEmitter, i: Insn) -> None:
    f = i.f
    Q, U, size, op = f["Q"], f["U"], f["size"], f["opcode"]
    if op == 18 and U == 0 and size < 3:  # XTN/XTN2
        narrow = f"__builtin_convertvector({V('a', size + 1)}, {_vt(size, half=True)})"
        _put_narrow(em, f["Rd"], Q, size, narrow, {"a": f["Rn"]})
        return
    if op == 11 and U == 1 and not (size == 3 and not Q):  # NEG
        _emit(em, f["Rd"], Q, size, f"-{V('a', size)}", {"a": f["Rn"]})
        return
    if op == 11 and U == 0 and not (size == 3 and not Q):  # ABS (of the most negative: itself)
        _emit(em, f["Rd"], Q, size, f"__builtin_elementwise_abs({V('a', size, True)})", {"a": f["Rn"]})
        return
    # CMGT/CMGE/CMEQ/CMLE/CMLT against zero: glibc's strlen, strchr, memchr and strcpy
    # find their NUL or byte with CMEQ #0; as sixteen lanes each was ~80 scalar instructions
    _emit(em, f["Rd"], Q, size, f"{V('a', size, True)} {_CMP_ZERO[(op, U)]} 0", {"a": f["Rn"]})


# ---- permutes -------------------------------------------------------------------------------
def h_perm(em: FunctionEmitter, i: Insn) -> None:
    """UZP1/2, ZIP1/2, TRN1/2: one shuffle of the two registers' lanes."""
    f = i.f
    Q, size, op = f["Q"], f["size"], f["opcode"]
    lanes, full = _lanes(Q, size), 16 >> size
    half = lanes // 2

    def a(j: int) -> int:
        return j

    def b(j: int) -> int:
        return full + j

    if op in (1, 5):
        p = 0 if op == 1 else 1
        idx = [a(2 * k + p) if k < half else b(2 * (k - half) + p) for k in range(lanes)]
    elif op in (3, 7):
        base = 0 if op == 3 else half
        idx = [b(base + k // 2) if k & 1 else a(base + k // 2) for k in range(lanes)]
    else:
        p = 0 if op == 2 else 1
        idx = [b((k & ~1) + p) if k & 1 else a((k & ~1) + p) for k in range(lanes)]
    idx += [0] * (full - lanes)  # a Q=0 form's upper half is cleared by _emit
    _emit(em, f["Rd"], Q, size, _shuffle(V("a", size), V("b", size), idx), {"a": f["Rn"], "b": f["Rm"]})


def h_ext(em: FunctionEmitter, i: Insn) -> None:
    f = i.f
    Q, imm4 = f["Q"], f["imm4"]
    if Q:
        idx = list(range(imm4, imm4 + 16))
    else:  # bytes imm4.. of Vm[7:0]:Vn[7:0]
        idx = [t if t < 8 else 16 + t - 8 for t in range(imm4, imm4 + 8)] + [0] * 8
    _emit(em, f["Rd"], Q, 0, _shuffle(V("a", 0), V("b", 0), idx), {"a": f["Rn"], "b": f["Rm"]})


# ---- DUP ------------------------------------------------------------------------------------
def h_copy(em: FunctionEmitter, i: Insn) -> None:
    f = i.f
    Q, imm5, imm4 = f["Q"], f["imm5"], f["imm4"]
    size = (imm5 & -imm5).bit_length() - 1
    if imm4 == 0:  # DUP (element)
        e = _shuffle(V("a", size), V("a", size), [imm5 >> (size + 1)] * (16 >> size))
        _emit(em, f["Rd"], Q, size, e, {"a": f["Rn"]})
    else:  # DUP (general): a scalar added to a zero vector is splatted
        e = f"({_vt(size)}){{0}} + (u{_bits(size)}){em.x(f['Rn'])}"
        _emit(em, f["Rd"], Q, size, e, {})
