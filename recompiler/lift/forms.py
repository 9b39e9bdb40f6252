"""The one table of which handler lifts each instruction form: rows for each form of
``recompiler/isa.py`` (the decoder's table), one handler per row, nothing chosen by the order
in which modules are merged.  The lifter (``lift_function``), the Unicorn differential test
(``tests/recompiler/test_unicorn.py``) and the scan of unimplemented instructions read it
(``HANDLERS``: form -> the one callable that lifts it); ``tests/recompiler/test_forms.py``
checks that every decodable encoding gets exactly one handler and that none hands it on.

A handler is ``h(em, insn)``: it writes the instruction's C through the emitter's API
(``FunctionEmitter``) and returns False where control never goes on to the next address.  Its
effects end up in a ``result.Lifted`` record (``result.py``): the exits through the emitter's
API, the registers, NZCV and memory it reads and writes from its form's declaration
(``effects.EFFECTS``, one function per form, shared by the form's rows).

Handlers live in files named after the Arm ARM's encoding groups.  A group whose class row had
a chain of handlers (the vector-typed ``simd_vec``, the exact ``simd_int``, the general
``fp_simd``) gives each of its forms only the handlers that take some of its encodings
(``_route``): every Advanced SIMD form has one.  Every form has exactly one row (MRS/MSR's
FPSR and FPCR accesses are forms of their own, ``MRS_fpsr`` and ``MSR_fp``), so no handler is
chosen by a predicate at lift time and no handler calls another.  A split group's ``_unlifted``
row (``isa.py``) is refused: ``h_unallocated``.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import Callable

from recompiler.decode import Insn, decode
from recompiler.isa import GROUPS
from recompiler.lift import (
    control,
    crypto,
    fp_across,
    fp_f16,
    fp_fixed,
    fp_fpsr,
    fp_half,
    fp_recip,
    fp_round,
    fp_simd,
    integer,
    memory,
    modified_imm,
    simd_bits,
    simd_dot,
    simd_int,
    simd_vec,
)
from recompiler.lift.emitter import LiftError

Handler = Callable[..., "bool | None"]


@dataclass(frozen=True)
class Row:
    form: str  # the isa.py form
    handler: Handler


def h_unallocated(em, insn: Insn) -> None:
    """The row of the encodings a split group's forms leave (``<group>_unlifted``): unallocated
    or reserved to the Arm ARM, or an extension's instruction the lifter does not implement."""
    raise LiftError(f"unallocated encoding ({insn.group})")


# fields no handler's ``takes`` reads: a shift's low bits, a by-element form's lane index
_NOT_SELECTORS = {"immb", "L", "M", "H"}


def _route(group: str, *chain: tuple[Handler, Callable[[Insn], bool] | None]) -> list[Row]:
    """Rows for the forms of an ``isa.py`` group whose class row had a chain of handlers
    (``chain``: (handler, takes) in order, the last taking the rest): each form gets only the
    handlers that take some of its encodings, found by trying every value of its free fields
    but the registers and lane or shift bits (``R*``, ``_NOT_SELECTORS``: no predicate reads
    them): every form has one (a form two handlers shared would be an error here: split it in
    ``isa.py``), and each encoding keeps the handler the class row's chain gave it."""
    out: list[Row] = []
    for f in GROUPS[group]:
        if f.unlifted:  # unallocated (reserved values included), or not implemented
            out.append(Row(f.name, h_unallocated))
            continue
        free = [(n, w) for n, _l, w in f.fields if not n.startswith("R") and n not in _NOT_SELECTORS]
        used: list[int] = []
        for vals in itertools.product(*(range(1 << w) for _n, w in free)):
            insn = decode(f.encode(**dict(zip((n for n, _w in free), vals))), 0)
            if insn.form is not f:  # a row before it takes the word
                continue
            k = next(k for k, (_h, takes) in enumerate(chain) if takes is None or takes(insn))
            if k not in used:
                used.append(k)
        if len(used) > 1:
            raise ValueError(f"form {f.name} of {group} is split between handlers {sorted(used)}")
        out.append(Row(f.name, chain[used[0] if used else -1][0]))
    return out


def _each(group: str, handler: Handler) -> list[Row]:
    """One row per form of an ``isa.py`` group whose forms share one handler (the handler reads
    the form's fixed fields, as it read them when one row covered them all).  The group's
    ``_unlifted`` row is refused (``h_unallocated``)."""
    return [Row(f.name, h_unallocated) if f.unlifted else Row(f.name, handler) for f in GROUPS[group]]


ROWS: list[Row] = [
    Row("ADR", integer.h_pcrel),
    Row("ADRP", integer.h_pcrel),
    *_each("ADDSUB_imm", integer.h_addsub_imm),
    *_each("LOGIC_imm", integer.h_logic_imm),
    *_each("MOVW", integer.h_movw),
    *_each("BITFIELD", integer.h_bitfield),
    *_each("EXTR", integer.h_extr),
    Row("B", control.h_b),
    Row("BL", control.h_bl),
    *_each("CBZ", control.h_cbz),
    *_each("TBZ", control.h_tbz),
    *_each("BCOND", control.h_bcond),  # BC.cond: B.cond with a hint of consistent behaviour
    Row("SVC", control.h_svc),
    Row("BRK", control.h_brk),
    Row("UDF", control.h_brk),
    *_each("HINT", control.h_hint),
    Row("CLREX", control.h_clrex),
    *_each("BARRIER", control.h_barrier),
    Row("CFINV", control.h_cfinv),
    Row("XAFLAG", control.h_xaflag),
    Row("AXFLAG", control.h_axflag),
    Row("MSR_imm", control.h_msr_imm),
    Row("MSR_imm_unlifted", h_unallocated),
    *_each("SYS", control.h_sys),
    Row("MRS_fpsr", fp_fpsr.h_mrs),
    Row("MRS", control.h_mrs),
    Row("MSR_fp", fp_fpsr.h_msr),
    Row("MSR_reg", control.h_msr),
    Row("BR", control.h_br),
    Row("BLR", control.h_blr),
    Row("RET", control.h_ret),
    *_each("LDR_lit", memory.h_lit),
    *_each("LDSTX", memory.h_excl),
    *_each("LDST_pair", memory.h_pair),
    *_each("LDST_atomic", memory.h_atomic),
    *_each("LDST_regoff", memory.h_regoff),
    *_each("LDST_rcpc2", memory.h_rcpc2),
    *_each("LDST_imm9", memory.h_imm9),
    *_each("LDST_uimm", memory.h_uimm),
    *_each("LDST_multi", memory.h_simd_multi),
    *_each("LDST_multi_post", memory.h_simd_multi),
    *_each("LDST_single", memory.h_simd_single),
    *_each("LDST_single_post", memory.h_simd_single),
    *_each("LOGIC_sreg", integer.h_logic_sreg),
    *_each("ADDSUB_sreg", integer.h_addsub_sreg),
    *_each("ADDSUB_ereg", integer.h_addsub_ereg),
    *_each("ADC", integer.h_adc),
    *_each("CCMP_reg", integer.h_ccmp),
    *_each("CCMP_imm", integer.h_ccmp),
    *_each("CSEL", integer.h_csel),
    *_each("DP3", integer.h_dp3),
    *_each("DP2", integer.h_dp2),
    *_each("DP1", integer.h_dp1),
    *_each("FP_RINT_N", fp_round.h_frint_n),
    Row("FJCVTZS", fp_round.h_fjcvtzs),
    Row("FCVT_from_half", fp_half.h_fcvt_from_half),
    Row("FCVT_to_half", fp_half.h_fcvt_to_half),
    *_route(
        "FP_INT_H",
        (fp_f16.h_fp_int_h, None),
    ),
    *_route(
        "FP_DP1_H",
        (fp_f16.h_dp1_h, None),
    ),
    *_route(
        "FP_CMP_H",
        (fp_f16.h_cmp_h, None),
    ),
    Row("FMOV_imm_H", fp_f16.h_fmov_imm_h),
    *_route(
        "FP_CCMP_H",
        (fp_f16.h_ccmp_h, None),
    ),
    *_route(
        "FP_DP2_H",
        (fp_f16.h_dp2_h, None),
    ),
    Row("FCSEL_H", fp_f16.h_fcsel_h),
    *_route(
        "FP_DP3_H",
        (fp_f16.h_dp3_h, None),
    ),
    *_each("FP_INT", fp_simd.h_fp_int),
    *_each("FP_DP1", fp_simd.h_fp_dp1),
    *_each("FP_CMP", fp_simd.h_fp_cmp),
    Row("FMOV_imm", fp_simd.h_fmov_imm),
    Row("FMOV_imm_unlifted", h_unallocated),
    *_each("FP_CCMP", fp_simd.h_fp_ccmp),
    *_each("FP_DP2", fp_simd.h_fp_dp2),
    Row("FCSEL", fp_simd.h_fcsel),
    Row("FCSEL_unlifted", h_unallocated),
    *_each("FP_DP3", fp_simd.h_fp_dp3),
    *_each("SIMD_frint_n", fp_round.h_simd_frint_n),
    *_each("SIMD_fcvt_nl", fp_half.h_fcvt_nl),
    Row("SIMD_scalar_fcvtxn", fp_half.h_scalar_fcvtxn),
    Row("SIMD_scalar_fcvtxn_unlifted", h_unallocated),
    *_each("SIMD_recip_est", fp_recip.h_recip_est),
    *_each("SIMD_scalar_recip_est", fp_recip.h_scalar_recip_est),
    *_each("SIMD_recip_step", fp_recip.h_recip_step),
    *_each("SIMD_scalar_recip_step", fp_recip.h_recip_step),
    *_each("SIMD_fp_across", fp_across.h_fp_across),
    *_route(
        "SIMD_three_same_fp16",
        (fp_f16.h_three_same_fp16, None),
    ),
    *_route(
        "SIMD_two_reg_fp16",
        (fp_f16.h_two_reg_fp16, None),
    ),
    *_route(
        "SIMD_scalar_three_same_fp16",
        (fp_f16.h_three_same_fp16, None),
    ),
    *_route(
        "SIMD_scalar_two_reg_fp16",
        (fp_f16.h_two_reg_fp16, None),
    ),
    Row("MOVI_32", modified_imm.h_movi_32),
    Row("ORR_imm_vec_32", modified_imm.h_orr_32),
    Row("MOVI_16", modified_imm.h_movi_16),
    Row("ORR_imm_vec_16", modified_imm.h_orr_16),
    Row("MOVI_ones", modified_imm.h_movi_ones),
    Row("MOVI_8", modified_imm.h_movi_8),
    Row("FMOV_vec_imm_s", modified_imm.h_fmov_s),
    Row("FMOV_vec_imm_h", modified_imm.h_fmov_h),
    Row("MVNI_32", modified_imm.h_mvni_32),
    Row("BIC_imm_vec_32", modified_imm.h_bic_32),
    Row("MVNI_16", modified_imm.h_mvni_16),
    Row("BIC_imm_vec_16", modified_imm.h_bic_16),
    Row("MVNI_ones", modified_imm.h_mvni_ones),
    Row("MOVI_64_scalar", modified_imm.h_movi_64),
    Row("MOVI_64", modified_imm.h_movi_64),
    Row("FMOV_vec_imm_d", modified_imm.h_fmov_d),
    Row("SIMD_movi_unlifted", h_unallocated),
    *_each("SIMD_shift_ins", simd_bits.h_shift_ins),
    *_each("SIMD_scalar_shift_ins", simd_bits.h_shift_ins),
    *_route(
        "SIMD_shift_imm",
        (simd_vec.h_shift_imm, simd_vec.takes_shift_imm),
        (simd_int.h_shift_imm, simd_int.takes_shift_imm),
        (fp_simd.h_shift_imm, None),
    ),
    *_route("SIMD_copy", (simd_vec.h_copy, simd_vec.takes_copy), (fp_simd.h_copy, None)),
    *_each("SIMD_dot", simd_dot.h_dot),
    *_each("SIMD_rdm", simd_int.h_rdm),
    *_each("SIMD_scalar_rdm", simd_int.h_rdm),
    *_route(
        "SIMD_three_same",
        (simd_vec.h_three_same, simd_vec.takes_three_same),
        (simd_int.h_three_same, simd_int.takes_three_same),
        (fp_simd.h_three_same, None),
    ),
    Row("PMULL", crypto.h_pmull),
    Row("PMULL_unlifted", h_unallocated),
    *_route(
        "SIMD_three_diff",
        (simd_vec.h_three_diff, simd_vec.takes_three_diff),
        (simd_int.h_three_diff, simd_int.takes_three_diff),
        (fp_simd.h_three_diff, None),
    ),
    *_each("SIMD_bitcount", simd_bits.h_bitcount),
    *_each("SIMD_addlp", simd_bits.h_addlp),
    *_route(
        "SIMD_two_reg",
        (simd_vec.h_two_reg, simd_vec.takes_two_reg),
        (simd_int.h_two_reg, simd_int.takes_two_reg),
        (fp_simd.h_two_reg, None),
    ),
    *_route(
        "SIMD_across",
        (fp_simd.h_across, None),
    ),
    Row("SIMD_ext", simd_vec.h_ext),  # every encoding (Q = 0 with imm4 >= 8: the _unlifted row)
    Row("SIMD_ext_unlifted", h_unallocated),
    *_each("SIMD_tbl", fp_simd.h_tbl),
    *_route("SIMD_perm", (simd_vec.h_perm, simd_vec.takes_perm), (fp_simd.h_perm, None)),
    Row("SIMD_scalar_copy", fp_simd.h_scalar_copy),
    Row("SIMD_scalar_copy_unlifted", h_unallocated),
    *_route(
        "SIMD_scalar_pair",
        (fp_simd.h_across, None),
    ),
    *_route(
        "SIMD_scalar_three_same",
        (simd_int.h_scalar_three_same, simd_int.takes_scalar_three_same),
        (fp_simd.h_scalar_three_same, None),
    ),
    *_route(
        "SIMD_scalar_three_diff",
        (simd_int.h_scalar_three_diff, None),
    ),
    *_route(
        "SIMD_scalar_two_reg",
        (simd_int.h_scalar_two_reg, simd_int.takes_scalar_two_reg),
        (fp_simd.h_scalar_two_reg, None),
    ),
    *_route(
        "SIMD_scalar_shift_imm",
        (simd_int.h_shift_imm, simd_int.takes_shift_imm),
        (fp_simd.h_shift_imm, None),
    ),
    *_each("SIMD_dot_elem", simd_dot.h_dot_elem),
    *_route(
        "SIMD_elem",
        (simd_int.h_elem, simd_int.takes_elem),
        (fp_simd.h_elem, None),
    ),
    *_route(
        "SIMD_scalar_elem",
        (simd_int.h_elem, simd_int.takes_elem),
        (fp_simd.h_elem, None),
    ),
    *_each("AES", crypto.h_aes),
    *_each("SHA_3reg", crypto.h_sha3reg),
    *_each("SHA_2reg", crypto.h_sha2reg),
    *_each("SHA512_3reg", crypto.h_sha512),
    Row("SHA512SU0", crypto.h_sha512su0),
    *_each("SHA3_4reg", crypto.h_sha3_4reg),
    Row("XAR", crypto.h_xar),
    *_each("FP_FIX_CONV", fp_fixed.h_fp_fix),
]


def _handlers() -> dict[str, Handler]:
    out: dict[str, Handler] = {}
    for r in ROWS:
        if r.form in out:
            raise ValueError(f"form {r.form} has two rows")
        out[r.form] = r.handler
    return out


# form -> the one callable that lifts it (the emitter, the Unicorn harness and the scan of
# unimplemented forms look a form up here)
HANDLERS: dict[str, Handler] = _handlers()


def handler(insn: Insn) -> Handler | None:
    """The handler of ``insn``'s form (its one row), None for a form with no row."""
    return HANDLERS.get(insn.name)
