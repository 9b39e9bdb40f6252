"""What each instruction form reads and writes, declared from its decoded fields.

One function per ``recompiler/isa.py`` form (``EFFECTS``: form -> function of the ``Insn``)
says which general registers (X0-X30, SP), vector registers (V0-V31) and NZCV the encoding
reads and writes, and whether it loads or stores guest memory.  The lifter's records
(``result.Lifted``) take these as the instruction's own effects (``declare``); liveness
(``liveness.py``), the function's facts (``facts.py``) and the interprocedural summaries read
them, never the C.  How control leaves (a call, an SVC, an exit that writes every register
back) is the emitter's part of the record; ``FunctionFacts.exit_effects`` (``facts.py``) adds what
such exits read.

The meaning is the architecture's (Arm ARM, the instruction pages of the A64 encoding index),
register-granular: a write of part of a register (a lane, D[1], a narrowing "2" form, MOVK, BFM)
reads the rest of it; a write of a whole register (a scalar FP/SIMD result zeroes the upper
bits, as does a 64-bit vector form: Q = 0) kills it.  Register 31 is SP where the form says so,
else the zero register (no read, no write).  The Unicorn test
(``tests/recompiler/test_declared_effects.py``) checks each form's declaration against the
architecture: every register that changed is declared written, every register declared killed
ends the same whatever it held, and perturbing a register not declared read changes nothing
else; memory is touched only where declared.

Registers are bits as in ``liveness``: X0-X30 bits 0-30, SP bit 31, V0-V31 bits 32-63.  An
encoding the lifter does not lift (a ``LiftError``: a fatal trap) needs no exact declaration:
the trap's effects replace it (``facts``).
"""

from __future__ import annotations

from recompiler.decode import Insn
from recompiler.isa import GROUPS
from recompiler.lift.effects import fp_simd as F, integer as I, memory as M
from recompiler.lift.effects.base import NONE, Declare, Effects

__all__ = ["EFFECTS", "Effects", "declare"]


def _each(group: str, fn: Declare) -> dict[str, Declare]:
    """The forms of an ``isa.py`` group whose declarations are one function of the fields."""
    return {f.name: fn for f in GROUPS[group]}


EFFECTS: dict[str, Declare] = {
    "ADR": I.pcrel,
    "ADRP": I.pcrel,
    **_each("ADDSUB_imm", I.addsub_imm),
    **_each("LOGIC_imm", I.logic_imm),
    **_each("MOVW", I.movw),
    **_each("BITFIELD", I.bitfield),
    **_each("EXTR", I.extr),
    "B": lambda i: NONE,
    "BL": I.bl,
    **_each("CBZ", I.cbz),
    **_each("TBZ", I.cbz),
    **_each("BCOND", I.bcond),
    "SVC": lambda i: NONE,  # (an exit: every register, FunctionFacts.exit_effects)
    "BRK": lambda i: NONE,
    "UDF": lambda i: NONE,
    **_each("HINT", lambda i: NONE),
    "CLREX": lambda i: NONE,
    **_each("BARRIER", lambda i: NONE),
    **_each("MSR_imm", I.flagm),  # CFINV, XAFLAG, AXFLAG: NZCV from NZCV
    "MSR_imm": lambda i: NONE,
    **_each("SYS", I.sys),
    **_each("MRS", I.mrs),  # MRS_fpsr, MRS
    **_each("MSR_reg", I.msr_reg),  # MSR_fp, MSR_reg
    "BR": I.br,
    "BLR": I.blr,
    "RET": I.ret,
    **_each("LDR_lit", M.ldr_lit),
    **_each("LDSTX", M.excl),
    **_each("LDST_pair", M.pair),
    **_each("LDST_atomic", M.atomic),
    **_each("LDST_regoff", M.regoff),
    **_each("LDST_rcpc2", M.rcpc2),
    **_each("LDST_imm9", M.imm9),
    **_each("LDST_uimm", M.uimm),
    **_each("LDST_multi", M.ldst_multi),
    **_each("LDST_multi_post", M.ldst_multi),
    **_each("LDST_single", M.ldst_single_lane),
    **_each("LDST_single_post", M.ldst_single_lane),
    **_each("LOGIC_sreg", I.logic_sreg),
    **_each("ADDSUB_sreg", I.addsub_sreg),
    **_each("ADDSUB_ereg", I.addsub_ereg),
    **_each("ADC", I.adc),
    **_each("CCMP_reg", I.ccmp_reg),
    **_each("CCMP_imm", I.ccmp_imm),
    **_each("CSEL", I.csel),
    **_each("DP3", I.dp3),
    **_each("DP2", I.rn_rm_rd),
    **_each("DP1", I.dp1),
    **_each("FP_RINT_N", F.v1),
    "FJCVTZS": F.fjcvtzs,
    "FCVT_from_half": F.v1,
    "FCVT_to_half": F.v1,
    **_each("FP_INT_H", F.fp_int),
    **_each("FP_DP1_H", F.v1),
    **_each("FP_CMP_H", F.fp_cmp),
    "FMOV_imm_H": F.fmov_imm,
    **_each("FP_CCMP_H", F.fp_ccmp),
    **_each("FP_DP2_H", F.v2),
    "FCSEL_H": F.fcsel,
    **_each("FP_DP3_H", F.v3),
    **_each("FP_INT", F.fp_int),
    **_each("FP_DP1", F.v1),
    **_each("FP_CMP", F.fp_cmp),
    **_each("FMOV_imm", F.fmov_imm),
    **_each("FP_CCMP", F.fp_ccmp),
    **_each("FP_DP2", F.v2),
    **_each("FCSEL", F.fcsel),
    **_each("FP_DP3", F.v3),
    **_each("SIMD_frint_n", F.v1),
    **_each("SIMD_fcvt_nl", F.fcvt_nl),
    **_each("SIMD_scalar_fcvtxn", F.v1),
    **_each("SIMD_recip_est", F.v1),
    **_each("SIMD_scalar_recip_est", F.v1),
    **_each("SIMD_recip_step", F.v2),
    **_each("SIMD_scalar_recip_step", F.v2),
    **_each("SIMD_fp_across", F.v1),
    **_each("SIMD_three_same_fp16", F.three_same_fp16),
    **_each("SIMD_two_reg_fp16", F.v1),
    **_each("SIMD_scalar_three_same_fp16", F.v2),
    **_each("SIMD_scalar_two_reg_fp16", F.v1),
    **_each("SIMD_movi", F.movi),  # (the last row, refused: no declaration needed, F.movi's)
    **{n: F.orr_bic_imm for n in ("ORR_imm_vec_32", "ORR_imm_vec_16", "BIC_imm_vec_32", "BIC_imm_vec_16")},
    **_each("SIMD_shift_ins", F.shift_ins),
    **_each("SIMD_scalar_shift_ins", F.shift_ins),
    **_each("SIMD_shift_imm", F.shift_imm),
    **_each("SIMD_copy", F.copy),
    **_each("SIMD_dot", F.v_acc),
    **_each("SIMD_rdm", F.v_acc),
    **_each("SIMD_scalar_rdm", F.v_acc),
    **_each("SIMD_three_same", F.three_same),
    **_each("PMULL", F.v2),
    **_each("SIMD_three_diff", F.three_diff),
    **_each("SIMD_bitcount", F.v1),
    **_each("SIMD_addlp", F.addlp),
    **_each("SIMD_two_reg", F.two_reg),
    **_each("SIMD_across", F.v1),
    **_each("SIMD_ext", F.v2),
    **_each("SIMD_tbl", F.tbl),
    **_each("SIMD_perm", F.v2),
    **_each("SIMD_scalar_copy", F.v1),
    **_each("SIMD_scalar_pair", F.v1),
    **_each("SIMD_scalar_three_same", F.scalar_three_same),
    **_each("SIMD_scalar_three_diff", F.scalar_three_diff),
    **_each("SIMD_scalar_two_reg", F.scalar_two_reg),
    **_each("SIMD_scalar_shift_imm", F.shift_imm),
    **_each("SIMD_dot_elem", F.dot_elem),
    **_each("SIMD_elem", F.elem),
    **_each("SIMD_scalar_elem", F.elem),
    **_each("AES", F.aes),
    **_each("SHA_3reg", F.v_acc),
    **_each("SHA_2reg", F.sha_2reg),
    **_each("SHA512_3reg", F.sha512_3reg),
    "SHA512SU0": lambda i: F.vec(i, True),
    **_each("SHA3_4reg", F.sha3_4reg),
    "XAR": F.v2,
    **_each("FP_FIX_CONV", F.fp_fix),
}


def declare(insn: Insn) -> Effects:
    """``insn``'s declared effects (nothing for an encoding not in the table: a trap)."""
    fn = EFFECTS.get(insn.name)
    return fn(insn) if fn is not None else NONE
