"""SDOT/UDOT (Armv8.2 dot product, FEAT_DotProd): each 32-bit lane of Vd accumulates the sum
of four byte products of Vn and Vm (vector form) or of Vn and one 32-bit element of Vm (by
element form).  Compilers emit them for int8 dot products (image filters, quantised mixing)
when the target has +dotprod; the feature table (cpu_host/runtime/core/cpu_features.h) claims them."""

from __future__ import annotations

from recompiler.decode import Insn
from recompiler.lift.emitter import FunctionEmitter
from recompiler.lift.fp_simd import _vop


def _dot(em: FunctionEmitter, i: Insn, m: int, elem: str) -> None:
    f = i.f
    t = "u8" if f["U"] else "i8"
    # four products in 32-bit signed arithmetic (|p| <= 65025 each, no overflow), summed, then
    # added to the lane modulo 2^32 as the architecture does
    terms = " + ".join(f"(i32)({t})a.b[4*i+{j}] * (i32)({t})b.b[{elem}+{j}]" for j in range(4))
    _vop(em, f["Rd"], f["Q"], 2, f"(u32)(c.s[i] + (u32)({terms}))", {"a": f["Rn"], "b": m, "c": f["Rd"]})


def h_dot(em: FunctionEmitter, i: Insn) -> None:
    _dot(em, i, i.f["Rm"], "4*i")


def h_dot_elem(em: FunctionEmitter, i: Insn) -> None:
    f = i.f
    index = f["H"] << 1 | f["L"]
    _dot(em, i, f["M"] << 4 | f["Rm"], str(4 * index))
