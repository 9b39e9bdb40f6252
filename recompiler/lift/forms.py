"""The one table of which handler lifts each instruction form: rows for each form of
``recompiler/isa.py`` (the decoder's table), one handler per row, nothing chosen by the order
in which modules are merged.  The lifter (``lift_function``), the Unicorn differential test
(``tests/recompiler/test_unicorn.py``) and the scan of unimplemented instructions read it
(``HANDLERS``: form -> the one callable that lifts it); ``tests/recompiler/test_forms.py``
checks that every decodable encoding gets exactly one handler, that none hands it on and that
the handler a form's row names lifts every encoding of the form.

A handler is ``h(em, insn)``: it writes the instruction's C through the emitter's API
(``FunctionEmitter``) and returns False where control never goes on to the next address.  Its
effects end up in a ``result.Lifted`` record (``result.py``): the exits through the emitter's
API, the registers, NZCV and memory it reads and writes from its form's declaration
(``effects.EFFECTS``, one function per form, shared by the form's rows).

Handlers live in files named after the Arm ARM's encoding groups.  Where several handlers
lift one ``isa.py`` group (the vector-typed ``simd_vec``, the exact ``simd_int``, the general
``fp_simd``), the group's rows name, for each handler, the forms it lifts (``_rows``): a plain
form -> handler map, like dynarmic's table, where each form's fixed fields (``isa.py``) say
which handler takes it; nothing is decided by a predicate over the decoded instruction, at
import or at lift time, and no handler calls another or hands a word back.  MRS/MSR's FPSR and
FPCR accesses are forms of their own (``MRS_fpsr``, ``MSR_fp``).  A split group's ``_unlifted``
row (``isa.py``) is refused (``h_unallocated``), and so is SYSL, a form the lifter does not
implement (``h_not_lifted``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from recompiler.decode import Insn
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


def h_not_lifted(em, insn: Insn) -> None:
    """The row of a form the lifter implements no operation for: SYSL (a system instruction with
    a result; none is lifted, so the word is a fatal trap, as an unallocated one)."""
    raise LiftError(f"{insn.name} is not lifted")


def _rows(group: str, *by_handler: tuple[Handler, str]) -> list[Row]:
    """One row per form of an ``isa.py`` group whose forms several handlers lift (the
    vector-typed ``simd_vec``, the exact ``simd_int``, the general ``fp_simd``): ``by_handler``
    names, for each handler, the forms it lifts (``isa.py`` names, space-separated).  Every form
    of the group but its ``_unlifted`` row is named exactly once (ValueError at import
    otherwise); the rows come out in the table's order and the ``_unlifted`` row is refused."""
    owner: dict[str, Handler] = {}
    for h, names in by_handler:
        for n in names.split():
            if n in owner:
                raise ValueError(f"form {n} of {group} is named for two handlers")
            owner[n] = h
    lifted = {f.name for f in GROUPS[group] if not f.unlifted}
    if owner.keys() != lifted:
        raise ValueError(
            f"rows of {group}: no handler for {sorted(lifted - owner.keys())}, "
            f"not forms of the group {sorted(owner.keys() - lifted)}"
        )
    return [Row(f.name, h_unallocated if f.unlifted else owner[f.name]) for f in GROUPS[group]]


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
    Row("SYS", control.h_sys),
    Row("SYSL", h_not_lifted),
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
    *_each("FP_INT_H", fp_f16.h_fp_int_h),
    *_each("FP_DP1_H", fp_f16.h_dp1_h),
    *_each("FP_CMP_H", fp_f16.h_cmp_h),
    Row("FMOV_imm_H", fp_f16.h_fmov_imm_h),
    *_each("FP_CCMP_H", fp_f16.h_ccmp_h),
    *_each("FP_DP2_H", fp_f16.h_dp2_h),
    Row("FCSEL_H", fp_f16.h_fcsel_h),
    *_each("FP_DP3_H", fp_f16.h_dp3_h),
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
    *_each("SIMD_three_same_fp16", fp_f16.h_three_same_fp16),
    *_each("SIMD_two_reg_fp16", fp_f16.h_two_reg_fp16),
    *_each("SIMD_scalar_three_same_fp16", fp_f16.h_three_same_fp16),
    *_each("SIMD_scalar_two_reg_fp16", fp_f16.h_two_reg_fp16),
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
    *_rows(
        "SIMD_shift_imm",
        (simd_vec.h_shift_imm, "SSHR_vec SSRA_vec SHL_vec SHRN_vec SSHLL_vec USHR_vec USRA_vec USHLL_vec"),
        (
            fp_simd.h_shift_imm,
            "SRSHR_vec SRSRA_vec SCVTF_fix_vec FCVTZS_fix_vec URSHR_vec URSRA_vec UCVTF_fix_vec FCVTZU_fix_vec",
        ),
        (
            simd_int.h_shift_imm,
            "SQSHL_imm_vec RSHRN_vec SQSHRN_vec SQRSHRN_vec SQSHLU_vec UQSHL_imm_vec SQSHRUN_vec SQRSHRUN_vec "
            "UQSHRN_vec UQRSHRN_vec",
        ),
    ),
    *_rows(
        "SIMD_copy",
        (simd_vec.h_copy, "DUP_elem DUP_gen"),
        (fp_simd.h_copy, "INS_gen SMOV UMOV INS_elem"),
    ),
    *_each("SIMD_dot", simd_dot.h_dot),
    *_each("SIMD_rdm", simd_int.h_rdm),
    *_each("SIMD_scalar_rdm", simd_int.h_rdm),
    *_rows(
        "SIMD_three_same",
        (
            simd_int.h_three_same,
            "SHADD_vec SRHADD_vec SHSUB_vec SQSHL_vec SRSHL_vec SQRSHL_vec SABD_vec SABA_vec SQDMULH_vec "
            "UHADD_vec URHADD_vec UHSUB_vec UQSHL_vec URSHL_vec UQRSHL_vec UABD_vec UABA_vec PMUL_vec "
            "SQRDMULH_vec",
        ),
        (
            fp_simd.h_three_same,
            "SQADD_vec SQSUB_vec SSHL_vec MLA_vec FMAXNM_vec FMLA_vec FADD_vec FMULX_vec FCMEQ_vec FMAX_vec "
            "FMINNM_vec FMLS_vec FSUB_vec FMIN_vec UQADD_vec UQSUB_vec USHL_vec MLS_vec FMAXNMP_vec FADDP_vec "
            "FMUL_vec FCMGE_vec FACGE_vec FMAXP_vec FDIV_vec FMINNMP_vec FABD_vec FCMGT_vec FACGT_vec "
            "FMINP_vec",
        ),
        (
            simd_vec.h_three_same,
            "AND_vec BIC_vec ORR_vec ORN_vec CMGT_vec CMGE_vec SMAX_vec SMIN_vec ADD_vec CMTST_vec MUL_vec "
            "SMAXP_vec SMINP_vec ADDP_vec EOR_vec BSL_vec BIT_vec BIF_vec CMHI_vec CMHS_vec UMAX_vec UMIN_vec "
            "SUB_vec CMEQ_vec UMAXP_vec UMINP_vec",
        ),
    ),
    Row("PMULL", crypto.h_pmull),
    Row("PMULL_unlifted", h_unallocated),
    *_rows(
        "SIMD_three_diff",
        (
            simd_vec.h_three_diff,
            "SADDL_vec SADDW_vec SSUBL_vec SSUBW_vec SMLAL_vec SMLSL_vec SMULL_vec UADDL_vec UADDW_vec "
            "USUBL_vec USUBW_vec UMLAL_vec UMLSL_vec UMULL_vec",
        ),
        (fp_simd.h_three_diff, "ADDHN_vec SUBHN_vec"),
        (
            simd_int.h_three_diff,
            "SABAL_vec SABDL_vec SQDMLAL_vec SQDMLSL_vec SQDMULL_vec UABAL_vec UABDL_vec",
        ),
        (simd_int.h_rounding_narrow_high, "RADDHN_vec RSUBHN_vec"),
    ),
    *_each("SIMD_bitcount", simd_bits.h_bitcount),
    *_each("SIMD_addlp", simd_bits.h_addlp),
    *_rows(
        "SIMD_two_reg",
        (
            fp_simd.h_two_reg,
            "REV64_vec REV16_vec CLS_vec SQXTN_vec FRINTN_vec FRINTM_vec FCVTNS_vec FCVTMS_vec FCVTAS_vec "
            "SCVTF_vec FCMGT_zero_vec FCMEQ_zero_vec FCMLT_zero_vec FABS_vec FRINTP_vec FRINTZ_vec FCVTPS_vec "
            "FCVTZS_vec REV32_vec CLZ_vec SQXTUN_vec UQXTN_vec FRINTA_vec FRINTX_vec FCVTNU_vec FCVTMU_vec "
            "FCVTAU_vec UCVTF_vec FCMGE_zero_vec FCMLE_zero_vec FNEG_vec FRINTI_vec FCVTPU_vec FCVTZU_vec "
            "FSQRT_vec",
        ),
        (simd_int.h_two_reg, "SUQADD_vec SQABS_vec USQADD_vec SQNEG_vec"),
        (simd_vec.h_two_reg, "CMGT_zero_vec CMEQ_zero_vec CMLT_zero_vec ABS_vec XTN_vec CMGE_zero_vec CMLE_zero_vec NEG_vec"),
    ),
    *_each("SIMD_across", fp_simd.h_across),
    Row("SIMD_ext", simd_vec.h_ext),  # every encoding (Q = 0 with imm4 >= 8: the _unlifted row)
    Row("SIMD_ext_unlifted", h_unallocated),
    *_each("SIMD_tbl", fp_simd.h_tbl),
    *_each("SIMD_perm", simd_vec.h_perm),
    Row("SIMD_scalar_copy", fp_simd.h_scalar_copy),
    Row("SIMD_scalar_copy_unlifted", h_unallocated),
    *_each("SIMD_scalar_pair", fp_simd.h_across),
    *_rows(
        "SIMD_scalar_three_same",
        (
            simd_int.h_scalar_three_same,
            "SQADD_scalar SQSUB_scalar SSHL_scalar SQSHL_scalar SRSHL_scalar SQRSHL_scalar SQDMULH_scalar "
            "UQADD_scalar UQSUB_scalar USHL_scalar UQSHL_scalar URSHL_scalar UQRSHL_scalar SQRDMULH_scalar",
        ),
        (
            fp_simd.h_scalar_three_same,
            "CMGT_scalar CMGE_scalar ADD_scalar CMTST_scalar FMULX_scalar FCMEQ_scalar CMHI_scalar "
            "CMHS_scalar SUB_scalar CMEQ_scalar FCMGE_scalar FACGE_scalar FABD_scalar FCMGT_scalar "
            "FACGT_scalar",
        ),
    ),
    *_each("SIMD_scalar_three_diff", simd_int.h_scalar_three_diff),
    *_rows(
        "SIMD_scalar_two_reg",
        (
            simd_int.h_scalar_two_reg,
            "SUQADD_scalar SQABS_scalar USQADD_scalar SQNEG_scalar",
        ),
        (simd_int.h_scalar_xtn, "SQXTN_scalar SQXTUN_scalar UQXTN_scalar"),
        (
            fp_simd.h_scalar_two_reg,
            "CMGT_zero_scalar CMEQ_zero_scalar CMLT_zero_scalar FCVTNS_scalar FCVTMS_scalar FCVTAS_scalar "
            "SCVTF_scalar FCMGT_zero_scalar FCMEQ_zero_scalar FCMLT_zero_scalar FCVTPS_scalar FCVTZS_scalar "
            "CMGE_zero_scalar NEG_scalar FCVTNU_scalar FCVTMU_scalar FCVTAU_scalar UCVTF_scalar "
            "FCMGE_zero_scalar FCMLE_zero_scalar FCVTPU_scalar FCVTZU_scalar",
        ),
    ),
    *_rows(
        "SIMD_scalar_shift_imm",
        (
            fp_simd.h_shift_imm,
            "SSHR_scalar SSRA_scalar SRSHR_scalar SRSRA_scalar SHL_scalar SCVTF_fix_scalar FCVTZS_fix_scalar "
            "USHR_scalar USRA_scalar URSHR_scalar URSRA_scalar UCVTF_fix_scalar FCVTZU_fix_scalar",
        ),
        (
            simd_int.h_shift_imm,
            "SQSHL_imm_scalar SQSHRN_scalar SQRSHRN_scalar SQSHLU_scalar UQSHL_imm_scalar SQSHRUN_scalar "
            "SQRSHRUN_scalar UQSHRN_scalar UQRSHRN_scalar",
        ),
    ),
    *_each("SIMD_dot_elem", simd_dot.h_dot_elem),
    *_rows(
        "SIMD_elem",
        (fp_simd.h_elem, "FMLA_elem FMLS_elem MUL_elem FMUL_elem MLA_elem MLS_elem FMULX_elem"),
        (
            simd_int.h_long_elem,
            "SMLAL_elem SQDMLAL_elem SMLSL_elem SQDMLSL_elem SMULL_elem SQDMULL_elem UMLAL_elem UMLSL_elem UMULL_elem",
        ),
        (simd_int.h_dmulh_elem, "SQDMULH_elem SQRDMULH_elem"),
        (simd_int.h_rdm_elem, "SQRDMLAH_elem SQRDMLSH_elem"),
    ),
    *_rows(
        "SIMD_scalar_elem",
        (fp_simd.h_elem, "FMLA_elem_scalar FMLS_elem_scalar FMUL_elem_scalar FMULX_elem_scalar"),
        (
            simd_int.h_long_elem,
            "SQDMLAL_elem_scalar SQDMLSL_elem_scalar SQDMULL_elem_scalar",
        ),
        (simd_int.h_dmulh_elem, "SQDMULH_elem_scalar SQRDMULH_elem_scalar"),
        (simd_int.h_rdm_elem, "SQRDMLAH_elem_scalar SQRDMLSH_elem_scalar"),
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
