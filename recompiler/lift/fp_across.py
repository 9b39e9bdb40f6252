"""FMAXV/FMINV/FMAXNMV/FMINNMV: the largest/smallest lane of Vn, for single precision (4S) and
half precision (4H/8H).  The architecture reduces as a tree of pairs (``Reduce``: the low half's
result, then the high half's), which decides which NaN comes out; the C expression is that
tree, over the scalar helpers (FMAX_S..., NX_HMINMAX)."""

from __future__ import annotations

from recompiler.decode import Insn
from recompiler.lift import vector
from recompiler.lift.emitter import FunctionEmitter


def _tree(lanes: list[str], op) -> str:
    if len(lanes) == 1:
        return lanes[0]
    half = len(lanes) // 2
    return op(_tree(lanes[:half], op), _tree(lanes[half:], op))


def h_fp_across(em: FunctionEmitter, i: Insn) -> None:
    f = i.f
    Q, U, a, o = f["Q"], f["U"], f["a"], f["o"]
    # (the rows fix sz and o; U = 1 with Q = 0 is reserved: isa.py's ``!Q=0``)
    kind = ("FMIN" if a else "FMAX") + ("NM" if o == 0 else "")
    n, d = f["Rn"], f["Rd"]
    if U:  # single precision, four lanes

        def op(x: str, y: str) -> str:
            return f"{kind}_S({x}, {y})"

        lanes = [f"FZIN_S(v{n}.f[{k}], s->fpcr)" for k in range(4)]
        em.out(f"{{ float _r = FDN_S({_tree(lanes, op)}, s->fpcr); {vector.low_fp(em, d, 'f', '_r')} }}")
        return
    mx, nm = int(not a), int(o == 0)

    def hop(x: str, y: str) -> str:
        return f"NX_HMINMAX({x}, {y}, s->fpcr, {mx}, {nm})"

    lanes = [f"v{n}.h[{k}]" for k in range(8 if Q else 4)]
    em.out(f"{{ u16 _h = {_tree(lanes, hop)}; {vector.low(em, d, '_h')} }}")
