"""SM53 (Maxwell) compute kernels to SPIR-V: the shared lowering (``shader_svc/lower``) with
SM53's operands (``lower``), its instructions grouped by topic (``lower_int``, ``lower_float``,
``lower_mem``) and its control flow (``lower_control``: the reconvergence stack), joined here
with the table ``RULES`` from each row's lowering key to its handler.

Registers are function variables, the CFG structured SPIR-V or a dispatcher loop (as SM86's);
constant bank 0 as the driver fills it for SM5x (``sm53/cbank.py``).  Warp-wide operations
(VOTE, SHFL) run on an emulated 32-lane warp without subgroup operations; shared memory is a
workgroup array of 32 KiB (lavapipe's limit); BAR.SYNC is a workgroup control barrier, which
needs the barrier to be reached by every invocation on the same path, as on the hardware.
"""

from __future__ import annotations

from shader_svc.lower.base import ComputeSpec, TranslateError
from shader_svc.lower.clock import Clock53  # shader-ctl2: SR_CLOCK / SR_GLOBALTIMER
from shader_svc.sm53.cbank import PARAMS, cbank0
from shader_svc.sm53.decode import Inst
from shader_svc.lower.cache import CACHE_RULES, FENCE_RULES53
from shader_svc.lower.indirect import INDIRECT_RULES
from shader_svc.lower.barrier_red import BARRIER_RED_RULES
from shader_svc.sm53.lower_control import Control53
from shader_svc.sm53.lower_extra import EXTRA_RULES, Extra53
from shader_svc.sm53.lower_float import FLOAT_RULES, FSWZ_LETTERS53, Float53
from shader_svc.lower.quad_tex import QuadTex
from shader_svc.sm53.lower_half import HALF_RULES, Half53
from shader_svc.sm53.lower_int import INT_RULES, Int53
from shader_svc.sm53.lower_mem import Memory53
from shader_svc.lower.surface import SURFACE_RULES, Surface
from shader_svc.lower.texture import TEXTURE_RULES53, ComputeTextures53

__all__ = ["ComputeSpec", "TranslateError", "translate_compute", "cbank0", "PARAMS", "Compute53"]


class Compute53(QuadTex, Clock53, ComputeTextures53, Surface, Control53, Memory53, Float53, Int53, Half53, Extra53):
    QUAD_ISA, FSWZ_LETTERS = 53, FSWZ_LETTERS53  # shader-ndv (lower/quad_tex.py)
    RULES = {
        **INDIRECT_RULES,  # shader-ctl: BRX (lower/indirect.py)
        **CACHE_RULES,  # shader-ctl: CCTL (lower/cache.py)
        **BARRIER_RED_RULES,  # shader-ctl: BAR.RED / B2R.RESULT (lower/barrier_red.py)
        **FENCE_RULES53,  # shader-ctl: MEMBAR (lower/fence.py)
        "NOP": "op_nop",
        "SHFL": "op_shfl",
        "VOTE": "op_vote",
        "MOV": "op_mov",
        "S2R": "op_s2r",
        "IADD": "op_iadd",
        "IADD3": "op_iadd3",
        "ISCADD": "op_iscadd",
        "XMAD": "op_xmad",
        "SHL": "op_shl",
        "SHR": "op_shl",
        "SHF": "op_shf",
        "LOP": "op_lop",
        "LOP3": "op_lop3",
        "ISETP": "op_isetp",
        "ICMP": "op_icmp",
        "PSETP": "op_psetp",
        "IMNMX": "op_imnmx",
        "SEL": "op_sel",
        "BFE": "op_bfe",
        "BFI": "op_bfi",
        "PRMT": "op_prmt",
        "POPC": "op_popc",
        "FLO": "op_flo",
        "FFMA": "op_fp32",
        "FMUL": "op_fp32",
        "FADD": "op_fp32",
        "FMNMX": "op_fmnmx",
        "FSETP": "op_fsetp",
        "I2F": "op_i2f",
        "IMUL": "op_imul",
        "IMAD": "op_imad",
        "LEA": "op_lea",
        "LEA_HI": "op_lea",
        "I2I": "op_i2i",
        "DADD": "op_dadd",
        "DMUL": "op_dadd",
        "DFMA": "op_dadd",
        "DSETP": "op_dsetp",
        "F2I": "op_f2i",
        "F2F": "op_f2f",
        "RRO": "op_rro",
        "MUFU": "op_mufu",
        "LDG": "op_ldg",
        "STG": "op_ldg",
        "LD": "op_ld",
        "ST": "op_ld",
        "LDS": "op_lds",
        "STS": "op_lds",
        "LDL": "op_ldl",
        "STL": "op_ldl",
        "LDC": "op_ldc",
        "ATOMS": "op_atoms",
        "ATOM": "op_atoms",
        "ATOM_CAS": "op_atoms",
        "RED": "op_atoms",
        "BAR": "op_bar",
        **HALF_RULES,
        **EXTRA_RULES,
        **INT_RULES,
        **FLOAT_RULES,
        **SURFACE_RULES,
        **TEXTURE_RULES53,  # shader-tex
    }


def translate_compute(insts: list[Inst], spec: ComputeSpec = ComputeSpec()) -> bytes:
    """SPIR-V binary of an SM53 compute kernel."""
    return Compute53(insts, spec).build()
