"""The one table of which handler lifts each instruction form: one row per form of
``recompiler/isa.py`` (the decoder's table), one handler per row, nothing chosen by the order
in which modules are merged.  The lifter (``lift_function``), the Unicorn differential test
(``tests/recompiler/test_unicorn.py``) and the scan of unimplemented instructions read it;
``tests/recompiler/test_forms.py`` checks that every decodable form has exactly one row.

A handler is ``h(em, insn)``: it writes the instruction's C through the emitter's API
(``FunctionEmitter``) and returns False where control never goes on to the next address.  Its
effects end up in a ``result.Lifted`` record (``result.py``).

Handlers live in files named after the Arm ARM's encoding groups.  Where one form's encodings
are split between a core handler and a later, more exact or faster one, the row names the
later one, which handles its encodings and calls the core handler for the rest (``DELEGATES``
lists those rows; splitting them into one row per encoding group is the next step).
"""
from __future__ import annotations

from typing import Callable

from recompiler.decode import Insn
from recompiler.lift import (control, crypto, fp_across, fp_f16, fp_fixed, fp_fpsr, fp_half, fp_recip, fp_round,
                             fp_simd, integer, memory, simd_bits, simd_dot, simd_int, simd_vec)

Handler = Callable[..., "bool | None"]

ROWS: list[tuple[str, Handler]] = [
    ("ADR", integer.h_pcrel),
    ("ADRP", integer.h_pcrel),
    ("ADDSUB_imm", integer.h_addsub_imm),
    ("LOGIC_imm", integer.h_logic_imm),
    ("MOVW", integer.h_movw),
    ("BITFIELD", integer.h_bitfield),
    ("EXTR", integer.h_extr),
    ("B", control.h_b),
    ("BL", control.h_bl),
    ("CBZ", control.h_cbz),
    ("TBZ", control.h_tbz),
    ("BCOND", control.h_bcond),
    ("SVC", control.h_svc),
    ("BRK", control.h_brk),
    ("UDF", control.h_brk),
    ("HINT", control.h_hint),
    ("CLREX", control.h_clrex),
    ("BARRIER", control.h_barrier),
    ("MSR_imm", control.h_msr_imm),
    ("SYS", control.h_sys),
    ("MRS", fp_fpsr.h_mrs),
    ("MSR_reg", fp_fpsr.h_msr),
    ("BR", control.h_br),
    ("BLR", control.h_blr),
    ("RET", control.h_ret),
    ("LDR_lit", memory.h_lit),
    ("LDSTX", memory.h_excl),
    ("LDST_pair", memory.h_pair),
    ("LDST_atomic", memory.h_atomic),
    ("LDST_regoff", memory.h_regoff),
    ("LDST_rcpc2", memory.h_rcpc2),
    ("LDST_imm9", memory.h_imm9),
    ("LDST_uimm", memory.h_uimm),
    ("LDST_multi", memory.h_simd_multi),
    ("LDST_multi_post", memory.h_simd_multi),
    ("LDST_single", memory.h_simd_single),
    ("LDST_single_post", memory.h_simd_single),
    ("LOGIC_sreg", integer.h_logic_sreg),
    ("ADDSUB_sreg", integer.h_addsub_sreg),
    ("ADDSUB_ereg", integer.h_addsub_ereg),
    ("ADC", integer.h_adc),
    ("CCMP_reg", integer.h_ccmp),
    ("CCMP_imm", integer.h_ccmp),
    ("CSEL", integer.h_csel),
    ("DP3", integer.h_dp3),
    ("DP2", integer.h_dp2),
    ("DP1", integer.h_dp1),
    ("FP_RINT_N", fp_round.h_frint_n),
    ("FJCVTZS", fp_round.h_fjcvtzs),
    ("FCVT_from_half", fp_half.h_fcvt_from_half),
    ("FCVT_to_half", fp_half.h_fcvt_to_half),
    ("FP_INT_H", fp_f16.h_fp_int_h),
    ("FP_DP1_H", fp_f16.h_dp1_h),
    ("FP_CMP_H", fp_f16.h_cmp_h),
    ("FMOV_imm_H", fp_f16.h_fmov_imm_h),
    ("FP_CCMP_H", fp_f16.h_ccmp_h),
    ("FP_DP2_H", fp_f16.h_dp2_h),
    ("FCSEL_H", fp_f16.h_fcsel_h),
    ("FP_DP3_H", fp_f16.h_dp3_h),
    ("FP_INT", fp_simd.h_fp_int),
    ("FP_DP1", fp_simd.h_fp_dp1),
    ("FP_CMP", fp_simd.h_fp_cmp),
    ("FMOV_imm", fp_simd.h_fmov_imm),
    ("FP_CCMP", fp_simd.h_fp_ccmp),
    ("FP_DP2", fp_simd.h_fp_dp2),
    ("FCSEL", fp_simd.h_fcsel),
    ("FP_DP3", fp_simd.h_fp_dp3),
    ("SIMD_frint_n", fp_round.h_simd_frint_n),
    ("SIMD_fcvt_nl", fp_half.h_fcvt_nl),
    ("SIMD_scalar_fcvtxn", fp_half.h_scalar_fcvtxn),
    ("SIMD_recip_est", fp_recip.h_recip_est),
    ("SIMD_scalar_recip_est", fp_recip.h_scalar_recip_est),
    ("SIMD_recip_step", fp_recip.h_recip_step),
    ("SIMD_scalar_recip_step", fp_recip.h_recip_step),
    ("SIMD_fp_across", fp_across.h_fp_across),
    ("SIMD_three_same_fp16", fp_f16.h_three_same_fp16),
    ("SIMD_two_reg_fp16", fp_f16.h_two_reg_fp16),
    ("SIMD_scalar_three_same_fp16", fp_f16.h_three_same_fp16),
    ("SIMD_scalar_two_reg_fp16", fp_f16.h_two_reg_fp16),
    ("SIMD_movi", fp_simd.h_movi),
    ("SIMD_shift_ins", simd_bits.h_shift_ins),
    ("SIMD_scalar_shift_ins", simd_bits.h_shift_ins),
    ("SIMD_shift_imm", simd_vec.h_shift_imm),
    ("SIMD_copy", simd_vec.h_copy),
    ("SIMD_dot", simd_dot.h_dot),
    ("SIMD_rdm", simd_int.h_rdm),
    ("SIMD_scalar_rdm", simd_int.h_rdm),
    ("SIMD_three_same", simd_vec.h_three_same),
    ("PMULL", crypto.h_pmull),
    ("SIMD_three_diff", simd_vec.h_three_diff),
    ("SIMD_bitcount", simd_bits.h_bitcount),
    ("SIMD_addlp", simd_bits.h_addlp),
    ("SIMD_two_reg", simd_vec.h_two_reg),
    ("SIMD_across", fp_simd.h_across),
    ("SIMD_ext", simd_vec.h_ext),
    ("SIMD_tbl", fp_simd.h_tbl),
    ("SIMD_perm", simd_vec.h_perm),
    ("SIMD_scalar_copy", fp_simd.h_scalar_copy),
    ("SIMD_scalar_pair", fp_simd.h_across),
    ("SIMD_scalar_three_same", simd_int.h_scalar_three_same),
    ("SIMD_scalar_three_diff", simd_int.h_scalar_three_diff),
    ("SIMD_scalar_two_reg", simd_int.h_scalar_two_reg),
    ("SIMD_scalar_shift_imm", simd_int.h_shift_imm),
    ("SIMD_dot_elem", simd_dot.h_dot_elem),
    ("SIMD_elem", simd_int.h_elem),
    ("SIMD_scalar_elem", simd_int.h_elem),
    ("AES", crypto.h_aes),
    ("SHA_3reg", crypto.h_sha3reg),
    ("SHA_2reg", crypto.h_sha2reg),
    ("SHA512_3reg", crypto.h_sha512),
    ("SHA512SU0", crypto.h_sha512su0),
    ("SHA3_4reg", crypto.h_sha3_4reg),
    ("XAR", crypto.h_xar),
    ("FP_FIX_CONV", fp_fixed.h_fp_fix),
]

HANDLERS: dict[str, Handler] = dict(ROWS)

# Rows whose handler lifts some encodings itself and calls another module's handler for the
# rest (form -> the handlers it may call, in order)
DELEGATES: dict[str, tuple[Handler, ...]] = {
    "MRS": (control.h_mrs,), "MSR_reg": (control.h_msr,),   # FPSR/FPCR here, other registers there
    "SIMD_three_same": (simd_int.h_three_same, fp_simd.h_three_same),
    "SIMD_three_diff": (simd_int.h_three_diff, fp_simd.h_three_diff),
    "SIMD_shift_imm": (simd_int.h_shift_imm, fp_simd.h_shift_imm),
    "SIMD_two_reg": (simd_int.h_two_reg, fp_simd.h_two_reg),
    "SIMD_perm": (fp_simd.h_perm,), "SIMD_ext": (fp_simd.h_ext,), "SIMD_copy": (fp_simd.h_copy,),
    "SIMD_scalar_three_same": (fp_simd.h_scalar_three_same,),
    "SIMD_scalar_two_reg": (fp_simd.h_scalar_two_reg,),
    "SIMD_scalar_shift_imm": (fp_simd.h_shift_imm,),
    "SIMD_elem": (fp_simd.h_elem,), "SIMD_scalar_elem": (fp_simd.h_elem,),
}


def handler(insn: Insn) -> Handler | None:
    """The handler of ``insn``'s form, None for a form with no row."""
    return HANDLERS.get(insn.name)
