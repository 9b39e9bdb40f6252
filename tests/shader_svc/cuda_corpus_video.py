"""shader-video (issue 31): corpus kernels of PTX's scalar video instructions (vadd, vsub,
vabsdiff, vmin, vmax, vshl, vshr, vset, vmad) with their saturation, byte/half selectors,
secondary operations (.add/.min/.max) and sub-word merges, written as inline PTX so that ptxas
12.9 emits SM53's VADD/VABSDIFF/VMNMX/VSHL/VSHR/VSET/VMAD (on sm_86 it emulates them).

The reference is the PTX ISA's definition ("Scalar Video Instructions"), written here on Python
integers from the manual's pseudocode (partSelectSignExtend, optSaturate, optSecondaryOp,
optMerge; vmad's negation/.po/scale rules): each source's byte/half/word extended by its type's
sign; the primary result as PTX's .s34 intermediate (bits 0..33 sign-extended: vshl's may be
wider); .sat clamps it to the destination type's range (the merged field's with a d.dsel); then
added or compared with c extended by the destination's sign, or merged; vset's result and c are
unsigned.  That is SM53's reference (real video instructions).  SM86 has none: its reference is
``ref_emulated``, the model of what ptxas's emulation computes, checked on an H100 (below)."""

from __future__ import annotations

import numpy as np

M32 = 0xFFFFFFFF


def _part(v: int, typ: str, sel: str | None) -> int:
    if sel is None:
        x, w = v, 32
    elif sel[0] == "b":
        x, w = (v >> (8 * int(sel[1]))) & 0xFF, 8
    else:
        x, w = (v >> (16 * int(sel[1]))) & 0xFFFF, 16
    if typ == "s32" and x >> (w - 1):
        x -= 1 << w
    return x


def _sext32(v: int) -> int:
    return v - (1 << 32) if v >> 31 else v


def _sat(t: int, signed: bool, dsel: str | None) -> int:
    w = 32 if dsel is None else 8 if dsel[0] == "b" else 16
    lo, hi = (-(1 << (w - 1)), (1 << (w - 1)) - 1) if signed else (0, (1 << w) - 1)
    return min(max(t, lo), hi)


def _s34(t: int) -> int:
    t &= (1 << 34) - 1
    return t - (1 << 34) if t >> 33 else t


def _finish(t: int, s: dict, c: int, signed: bool) -> int:
    t = _s34(t)  # the .s34 intermediate (vshl's exact value may be wider)
    if s.get("sat"):
        t = _sat(t, signed, s.get("dsel"))
    op2, dsel = s.get("op2"), s.get("dsel")
    cc = _sext32(c) if signed else c
    if op2 == "add":
        t = t + cc
    elif op2 == "min":
        t = min(t, cc)
    elif op2 == "max":
        t = max(t, cc)
    if dsel is not None:
        if dsel[0] == "h":
            sh, m = 16 * int(dsel[1]), 0xFFFF
        else:
            sh, m = 8 * int(dsel[1]), 0xFF
        t = ((t & m) << sh) | (c & ~(m << sh) & M32)
    return t & M32


CMPS = {
    "eq": lambda x, y: x == y,
    "ne": lambda x, y: x != y,
    "lt": lambda x, y: x < y,
    "le": lambda x, y: x <= y,
    "gt": lambda x, y: x > y,
    "ge": lambda x, y: x >= y,
}


def ref_one(s: dict, a: int, b: int, c: int) -> int:
    """One video instruction of spec ``s`` on a, b, c (u32 words), by the PTX definition."""
    op = s["op"]
    ta = _part(a, s.get("at", "u32"), s.get("asel"))
    if op in ("vshl", "vshr"):
        n = _part(b, "u32", s.get("bsel"))
        n = min(n, 32) if s["mode"] == "clamp" else n & 31
        return _finish(ta << n if op == "vshl" else ta >> n, s, c, s["dt"] == "s32")
    tb = _part(b, s.get("bt", "u32"), s.get("bsel"))
    if op == "vset":
        return _finish(1 if CMPS[s["cmp"]](ta, tb) else 0, s, c, False)
    if op == "vmad":
        na, nb, nc, po = s.get("na", False), s.get("nb", False), s.get("nc", False), s.get("po", False)
        signed = s.get("at") == "s32" or s.get("bt") == "s32" or na != nb or nc
        t, lsb = ta * tb, 0
        if po:
            lsb = 1
        elif na != nb:
            t, lsb = ~t, 1
        elif nc:
            c, lsb = ~c & M32, 1
        t = t + (_sext32(c) if signed else c) + lsb
        t >>= {None: 0, "shr7": 7, "shr15": 15}[s.get("scale")]
        if s.get("sat"):
            t = min(max(t, -(2**31)), 2**31 - 1) if signed else min(max(t, 0), M32)
        return t & M32
    t = {
        "vadd": lambda: ta + tb,
        "vsub": lambda: ta - tb,
        "vabsdiff": lambda: abs(ta - tb),
        "vmin": lambda: min(ta, tb),
        "vmax": lambda: max(ta, tb),
    }[op]()
    return _finish(t, s, c, s["dt"] == "s32")


# --- What ptxas's emulation computes (SM86, and sm_90 alike) ------------------------------------
# No NVIDIA GPU since Volta has video instructions: ptxas emulates them with PRMT, IADD3,
# IMAD.WIDE, SHF, ISETP and SEL, and for some forms that code departs from the PTX ISA's text.
# The model below is what an H100 computed (native CUDA, the same PTX assembled for sm_90 by
# nvcc 13 and by ptxas 12.9: 240 of 240 runs equal) and what our translation of the sm_86 code
# computes on lavapipe and on the NVIDIA Vulkan driver (bench/video_nvidia.py: all 1,701 forms of
# the corpus and the script's probe, 326,592 words, equal; the figures are in shader_svc/README.md).  SM53 has real video instructions (VADD, VMNMX, VSHL, VSET, VMAD...): its
# reference stays ``ref_one``.  Departures, each seen in the SASS and on the hardware:
#  1. a .h1 merge writes the result's own HIGH half (PRMT 0x3254), where .b0-.b3 and .h0 move its
#     low byte/half into the field (0x7650, 0x7604, 0x7054, 0x0654, 0x7610) as PTX says;
#  2. .sat with a sub-word merge (vadd/vsub/vabsdiff/vmin/vmax) clamps only from above, as an
#     unsigned word: a result outside 0..2^32-1 (the IADD3's high word not 0) becomes
#     0xffffffff, then min(.., the field's maximum) (ISETP.GT.U32 + SEL): s16 -125 gives 0x7fff,
#     u8 -20 gives 0xff (PTX: the field's signed/unsigned range); with .h1 (1.) that writes 0;
#  3. an unsigned vmad (no negation) is a signed IMAD.WIDE: a whole-word operand is taken as
#     signed, c is sign-extended (SHF.R.S32.HI); with .shr7/.shr15 the 64-bit sum is shifted
#     logically (SHF.R.U64) and .sat gives 0xffffffff where the shifted high word is not 0
#     (a negative sum too); without a scale .sat clamps the signed sum to 0..2^32-1 (PTX:
#     (u32 * u32) + u32, final unsigned);
#  4. vset's .min/.max compare with c extended by the sign of a's type (.s32: SHF.R.S32.HI + a
#     64-bit signed ISETP; PTX: the comparison's result and c are unsigned);
#  5. vshl/vshr's .min/.max compare the whole 64-bit shifted value with c, both taken by the
#     destination's sign (0x7fff << 32 is then larger than any c and writes 0; PTX: the .s34
#     intermediate, whose bits 0..33 are 0 there); with .sat, the clamped word sign-extended;
#  6. vadd/vsub/vabsdiff/vmin/vmax .u32 with .min/.max compare the 64-bit two's complement
#     result with c as unsigned 64-bit values (a negative result is the larger); with .sat the
#     result is only clamped below (a negative one to 0: ISETP.GE + SEL + LOP3), not above, and
#     vadd/vsub compare its low word sign-extended (SHF.R.S32.HI; PTX: clamped to 0..2^32-1).
#  7. vshl/vshr with .sat under a merge clamp PTX's .s34 intermediate to the destination WORD's
#     range (0x7fff << 32 is -2^32 there: .s32 gives 0x80000000), then move its low byte/half
#     into the field (PTX: clamped to the field's range).
# Every form of the corpus's six video kernels follows the model on the H100 (the 12 of
# video_ptxas86 depart from PTX, the other 41 agree with it); of bench/video_nvidia.py's probe
# (1,648 more forms) the model misses 44, all vmad with a signed type or a negation, left to
# PTX's text here (ptxas multiplies whole-word operands as signed and saturates by other rules).


def _emu_merge(t: int, c: int, dsel: str) -> int:
    """Departure 1: .h1 keeps the result's high half in place; the rest as PTX."""
    if dsel == "h1":
        return (t & 0xFFFF0000) | (c & 0xFFFF)
    sh, m = (16 * int(dsel[1]), 0xFFFF) if dsel[0] == "h" else (8 * int(dsel[1]), 0xFF)
    return ((t & m) << sh) | (c & ~(m << sh) & M32)


def _emu_sat_field(t: int, signed: bool, dsel: str) -> int:
    """Departure 2: an unsigned clamp from above to the field's maximum."""
    w = 8 if dsel[0] == "b" else 16
    u = t if 0 <= t <= M32 else M32
    return min(u, (1 << (w - 1)) - 1 if signed else (1 << w) - 1)


def _emu_minmax(op2: str, t: int, c: int, signed: bool) -> int:
    """min/max of the 64-bit value t and c, both as ``signed`` says (64-bit two's complement)."""
    m64 = (1 << 64) - 1
    x, y = t & m64, (_sext32(c) if signed else c) & m64
    if signed:
        x, y = (x - (1 << 64) if x >> 63 else x), (y - (1 << 64) if y >> 63 else y)
    return (min if op2 == "min" else max)(x, y)


def ref_emulated(s: dict, a: int, b: int, c: int) -> int:
    """One video instruction of spec ``s`` as ptxas's sm_86 (and sm_90) code computes it: ``ref_one``
    with the departures above."""
    op, op2, dsel, sat = s["op"], s.get("op2"), s.get("dsel"), s.get("sat", False)
    ta = _part(a, s.get("at", "u32"), s.get("asel"))
    if op == "vmad":
        na, nb, nc = s.get("na", False), s.get("nb", False), s.get("nc", False)
        signed = s.get("at") == "s32" or s.get("bt") == "s32" or na != nb or nc
        if signed:
            return ref_one(s, a, b, c)
        tb = _part(b, s.get("bt", "u32"), s.get("bsel"))
        ta, tb = (_sext32(ta) if s.get("asel") is None else ta), (_sext32(tb) if s.get("bsel") is None else tb)
        t = ta * tb + _sext32(c) + (1 if s.get("po") else 0)  # departure 3
        if s.get("scale") is None:
            return min(max(t, 0), M32) if sat else t & M32
        t = (t & ((1 << 64) - 1)) >> {"shr7": 7, "shr15": 15}[s["scale"]]
        return min(t, M32) if sat else t & M32
    if op in ("vshl", "vshr"):
        n = _part(b, "u32", s.get("bsel"))
        n = min(n, 32) if s["mode"] == "clamp" else n & 31
        if op2 in ("min", "max"):  # departure 5
            t = ta << n if op == "vshl" else ta >> n
            if sat:  # the .s34 intermediate clamped to the destination's range, its word sign-extended
                t = _sext32(_sat(_s34(t), s["dt"] == "s32", None) & M32)
            return _emu_minmax(op2, t, c, s["dt"] == "s32") & M32
        if dsel is not None:  # departure 7: .sat clamps to the word's range, the merge as 1.
            return _emu_merge(ref_one({k: v for k, v in s.items() if k != "dsel"}, a, b, c), c, dsel)
        return ref_one(s, a, b, c)
    if op == "vset":
        if op2 in ("min", "max"):  # departure 4
            tb = _part(b, s.get("bt", "u32"), s.get("bsel"))
            return _emu_minmax(op2, 1 if CMPS[s["cmp"]](ta, tb) else 0, c, s.get("at") == "s32") & M32
        return _emu_tail(ref_one(s, a, b, c), s, a, b, c)
    tb = _part(b, s.get("bt", "u32"), s.get("bsel"))
    t = {"vadd": ta + tb, "vsub": ta - tb, "vabsdiff": abs(ta - tb), "vmin": min(ta, tb), "vmax": max(ta, tb)}[op]
    signed = s["dt"] == "s32"
    if sat and dsel is not None:  # departure 2, then 1
        return _emu_merge(_emu_sat_field(t, signed, dsel), c, dsel)
    if op2 in ("min", "max") and not signed:  # departure 6
        if sat:  # only a negative result is clamped (to 0); vadd/vsub compare its low word sign-extended
            t = max(t, 0)
            t = _sext32(t & M32) if op in ("vadd", "vsub") else t
        return _emu_minmax(op2, t, c, False) & M32
    return _emu_tail(ref_one(s, a, b, c), s, a, b, c)


def _emu_tail(isa: int, s: dict, a: int, b: int, c: int) -> int:
    """A form whose only departure can be the .h1 merge (1.): PTX's word, its field moved."""
    if s.get("dsel") != "h1":
        return isa
    return _emu_merge(ref_one({k: v for k, v in s.items() if k != "dsel"}, a, b, c), c, "h1")


def ptx_text(s: dict) -> str:
    """The PTX instruction of spec ``s`` (operands %0 = d, %1 = a, %2 = b, %3 = c)."""
    op = s["op"]
    sel = lambda k: "." + s[k] if s.get(k) else ""  # noqa: E731
    sat = ".sat" if s.get("sat") else ""
    op2 = "." + s["op2"] if s.get("op2") else ""
    tail = ", %3" if s.get("op2") or s.get("dsel") else ""
    if op in ("vshl", "vshr"):
        name = f"{op}.{s['dt']}.{s.get('at', 'u32')}.u32{sat}.{s['mode']}{op2}"
    elif op == "vset":
        name = f"vset.{s.get('at', 'u32')}.{s.get('bt', 'u32')}.{s['cmp']}{op2}"
    elif op == "vmad":
        po = ".po" if s.get("po") else ""
        scale = "." + s["scale"] if s.get("scale") else ""
        neg = lambda k: "-" if s.get(k) else ""  # noqa: E731
        return (
            f"vmad.{s['dt']}.{s.get('at', 'u32')}.{s.get('bt', 'u32')}{po}{sat}{scale} %0, "
            f"{neg('na')}%1{sel('asel')}, {neg('nb')}%2{sel('bsel')}, {neg('nc')}%3;"
        )
    else:
        name = f"{op}.{s['dt']}.{s.get('at', 'u32')}.{s.get('bt', 'u32')}{sat}{op2}"
    return f"{name} %0{sel('dsel')}, %1{sel('asel')}, %2{sel('bsel')}{tail};"


def _S(op: str, **kw) -> dict:
    return {"op": op, **kw}


# one kernel per instruction family; every spec one output word per element
SPECS = {
    "video_add": [
        _S("vadd", dt="u32"),
        _S("vadd", dt="u32", asel="b1", bsel="h1", sat=True),
        _S("vadd", dt="s32", at="s32", bt="s32", asel="b2", bsel="b3", sat=True, op2="add"),
        _S("vsub", dt="s32", at="s32", asel="h0", bsel="b1", op2="min"),
        _S("vsub", dt="u32", asel="h0", bsel="b1", sat=True, op2="max"),
        _S("vadd", dt="u32", asel="h1", bsel="b3", dsel="b2"),
        _S("vsub", dt="s32", bt="s32", sat=True),
        _S("vadd", dt="s32", at="s32", bt="s32"),
    ],
    "video_absminmax": [
        _S("vabsdiff", dt="s32", at="s32", bt="s32", sat=True),
        _S("vabsdiff", dt="u32", at="s32", bt="s32", asel="h1", bsel="h0", sat=True, op2="add"),
        _S("vabsdiff", dt="u32", asel="b1", bsel="b2", dsel="b1"),
        _S("vabsdiff", dt="u32", asel="b3", bsel="h1", op2="max"),
        _S("vmin", dt="s32", at="s32", bt="s32", asel="h1", sat=True),
        _S("vmax", dt="u32", at="s32", asel="b0", bsel="b0", op2="max"),
        _S("vmin", dt="u32", dsel="h0"),
        _S("vmax", dt="s32", at="s32", asel="b2", bsel="h1", op2="min"),
        _S("vmin", dt="s32", at="s32", bt="s32", op2="add"),
        _S("vmax", dt="u32", bt="s32", asel="h0", sat=True, dsel="b2"),
    ],
    "video_shift": [
        _S("vshl", dt="u32", mode="clamp"),
        _S("vshl", dt="u32", mode="wrap"),
        _S("vshl", dt="s32", at="s32", asel="h1", bsel="b0", sat=True, mode="clamp"),
        _S("vshl", dt="u32", asel="b1", mode="wrap", op2="add"),
        _S("vshr", dt="u32", mode="clamp"),
        _S("vshr", dt="s32", at="s32", mode="wrap"),
        _S("vshr", dt="s32", at="s32", asel="h1", mode="clamp", op2="min"),
        _S("vshl", dt="u32", asel="b2", bsel="b1", mode="clamp", dsel="b3"),
        _S("vshl", dt="s32", at="s32", bsel="b0", sat=True, mode="clamp"),
        _S("vshr", dt="u32", at="s32", asel="b3", bsel="b1", sat=True, mode="wrap", dsel="h0"),
    ],
    "video_set": [
        _S("vset", cmp="lt"),
        _S("vset", at="s32", cmp="ge", asel="b1", bsel="h0"),
        _S("vset", at="s32", bt="s32", cmp="ne", asel="b1", bsel="b2", op2="add"),
        _S("vset", bt="s32", cmp="eq", asel="h1", bsel="b2", op2="max"),
        _S("vset", at="s32", bt="s32", cmp="gt", dsel="b1"),
        _S("vset", bt="s32", cmp="gt", asel="b0", bsel="b0", dsel="b2"),
    ],
    "video_mad": [
        _S("vmad", dt="u32"),
        _S("vmad", dt="s32", at="s32", bt="s32", asel="h1", bsel="b2", nc=True),
        _S("vmad", dt="s32", at="s32", bt="s32", na=True, bsel="h0", sat=True),
        _S("vmad", dt="s32", bt="s32", asel="h0", bsel="h1", sat=True, scale="shr15"),
        _S("vmad", dt="u32", asel="b0", bsel="b1", po=True),
        _S("vmad", dt="s32", at="s32", bt="s32", sat=True),
        _S("vmad", dt="s32", at="s32", asel="b3", bsel="h0", na=True, scale="shr15"),
    ],
    # the forms where ptxas 12.9's sm_86 emulation departs from PTX's definition (cuda_gaps.txt):
    # a d.h1 merge, an unsigned vmad with a scale or .sat (c sign-extended there), .sat with a
    # sub-word merge (only an unsigned upper bound), vset's .min (signed), vshl.clamp.max
    "video_ptxas86": [
        _S("vadd", dt="s32", at="s32", bt="s32", asel="b0", bsel="b3", sat=True, dsel="h0"),
        _S("vadd", dt="s32", at="s32", bt="s32", asel="h1", bsel="b3", sat=True, dsel="b0"),
        _S("vsub", dt="u32", at="s32", bsel="b1", sat=True, dsel="b1"),
        _S("vshl", dt="u32", bsel="b3", mode="clamp", op2="max"),
        _S("vset", at="s32", cmp="lt", asel="h0", bsel="h0", op2="min"),
        _S("vadd", dt="u32", asel="b0", bsel="b3", dsel="h1"),
        _S("vshr", dt="u32", mode="wrap", dsel="h1"),
        _S("vset", cmp="le", asel="b3", bsel="b2", dsel="h1"),
        _S("vmad", dt="u32", asel="b0", bsel="b1", scale="shr7"),
        _S("vmad", dt="u32", asel="h1", bsel="h1", sat=True, scale="shr7"),
        _S("vmad", dt="u32", asel="h0", bsel="b2", po=True, sat=True, scale="shr7"),
        _S("vmin", dt="u32", at="s32", asel="b1", sat=True, dsel="h1"),
    ],
}
N = 192


def _inputs(rng: np.random.Generator, Inputs, specs: list) -> object:
    """a: random words and edge values; b: shift-sized bytes for half the elements, then c."""
    a = rng.integers(0, 2**32, N + 1, dtype=np.uint64).astype(np.uint32)
    edges = np.array([0, 1, 0x7F, 0x80, 0xFF, 0x7FFF, 0x8000, 0xFFFF, 0x7FFFFFFF, 0x80000000, M32, 0x80808080], np.uint32)
    a[: len(edges)] = edges
    b = rng.integers(0, 2**32, 2 * N, dtype=np.uint64).astype(np.uint32)
    small = rng.integers(0, 40, (N // 2, 4), dtype=np.uint64).astype(np.uint32)
    b[: N // 2] = small[:, 0] | small[:, 1] << 8 | small[:, 2] << 16 | small[:, 3] << 24
    b[N // 2 : N // 2 + len(edges)] = edges
    return Inputs(a, b, N, N, np.zeros(N * len(specs), np.uint32))


def _ref(specs: list, one=ref_one):
    """The kernel's words by ``one`` (``ref_one``: PTX's definition; ``ref_emulated``: ptxas's
    emulation, the SM86 reference)."""

    def ref(x) -> np.ndarray:
        out = np.zeros(N * len(specs), np.uint32)
        for i in range(N):
            a, b, c = int(x.a[i]), int(x.b[i]), int(x.b[N + i])
            for k, s in enumerate(specs):
                out[i * len(specs) + k] = one(s, a, b, c)
        return out

    return ref


def _src(name: str, specs: list) -> str:
    body = "".join(
        f'    asm volatile("{ptx_text(s)}" : "=r"(r) : "r"(x), "r"(y), "r"(z)); o[i * {len(specs)} + {k}] = r;\n'
        for k, s in enumerate(specs)
    )
    return f"""
K({name}) {{
  int i = TID;
  if (i < n) {{
    uint32_t x = a[i], y = b[i], z = b[n + i], r;
{body}  }}
}}"""


def define(case, Inputs) -> None:
    """Register the video kernels (group ``video``) with the corpus."""
    for name, specs in SPECS.items():
        case(
            name=name,
            style="video",
            group="video",
            src=_src(name, specs),
            inputs=lambda r, specs=specs: _inputs(r, Inputs, specs),
            ref=_ref(specs),
            ref86=_ref(specs, ref_emulated),  # SM86 has no video instructions: ptxas's emulation
        )
