"""SM86 compute kernels to SPIR-V: the shared subset (``lower.Lower86``) plus what nvcc 13
emits beyond it (issue 31), grouped by topic: arithmetic (``lower_alu``), memory and the warp
(``lower_mem``), calls and convergence barriers (``lower_control``).  ``RULES`` extends
the shared table; a handler that covers only some forms of an instruction hands the others to
the shared one (``super()``), which refuses what nothing translates.
"""

from __future__ import annotations

from shader_svc.lower.base import ComputeSpec, TranslateError  # noqa: F401  (TranslateError: what callers catch)
from shader_svc.lower.clock import Clock86  # shader-ctl2: SR_CLOCK / SR_GLOBALTIMER
from shader_svc.lower.waterfall import Waterfall86  # shader-ctl2: R2UR's predicate output
from shader_svc.sm86.lower_alu import ALU_RULES, Alu86
from shader_svc.sm86.lower_extra import EXTRA_RULES, Extra86
from shader_svc.sm86.lower_half import HALF_RULES, Half86
from shader_svc.sm86.lower_control import WARP, Control86  # noqa: F401  (WARP: the emulated warp's operations)
from shader_svc.sm86.lower_mem import Memory86
from shader_svc.sm86.decode import Inst
from shader_svc.sm86.lower import LOWERED, Lower86
from shader_svc.lower.surface import SURFACE_RULES, Surface
from shader_svc.lower.texture import TEXTURE_RULES, ComputeTextures
from shader_svc.lower.quad_tex import QUAD_KEYS, QuadTex
from shader_svc.sm86.lower_alu_fp import FSWZ_LETTERS86
from shader_svc.lower.match import MATCH_RULES, WarpMatch
from shader_svc.sm86.lower_alu import STAGE_ALU_RULES
from shader_svc.sm86.lower_uniform import UNIFORM_RULES, Uniform86
from shader_svc.sm86.lower_async import ASYNC_RULES, Async86  # shader-mma
from shader_svc.sm86.lower_mma import MMA_RULES, Mma86  # shader-mma
from shader_svc.lower.cache import CACHE_RULES
from shader_svc.lower.indirect import INDIRECT_RULES
from shader_svc.lower.barrier_red import BARRIER_RED_RULES
from shader_svc.lower.mbarrier import MBARRIER_RULES

EXT = {
    "LEA",
    "IMAD.HI",
    "IABS",
    "DADD",
    "DMUL",
    "DFMA",
    "DSETP",
    "MUFU",
    "LDS",
    "STS",
    "ATOMG",
    "ATOMG.CAS",
    "RED",
    "BAR",
    "SHFL",
    "VOTE",
    "BSSY",
    "BSYNC",
    "CALL",
    "RET",
    "MEMBAR",
    "POPC",
    "BREV",
    "FLO",
    "PRMT",
    "LDC",
    "R2UR",
    "STL",
    "LDL",
    "BPT",
    "CALL.ABS",
    "RET.ABS",
    "SGXT",
    "FRND",
    "F2F",
    "CS2R",
    "BREAK",
    # shader-mem
    "ATOMS",
    "ATOMS.CAS",
    "ATOMS.POPC.INC",
    "QSPC",
    "REDUX",
}


class Compute86(
    QuadTex,  # shader-ndv: ptxas's tex3DGrad quad loop (before the classes defining ``lower``)
    Clock86,
    Waterfall86,
    Control86,
    Memory86,
    Alu86,
    Half86,
    Extra86,
    Surface,
    ComputeTextures,
    WarpMatch,
    Uniform86,
    Async86,
    Mma86,
):
    QUAD_ISA, FSWZ_LETTERS = 86, FSWZ_LETTERS86  # shader-ndv (lower/quad_tex.py)
    RULES = {
        **Lower86.RULES,
        **STAGE_ALU_RULES,  # the arithmetic rows every stage shares (lower_alu.py)
        "BSSY": "op_bssy",
        "BSYNC": "op_bssy",
        "MEMBAR": "op_bssy",
        "LDC": "op_ldc",
        "LDS": "op_lds",
        "STS": "op_lds",
        "LDG": "op_ldg",
        "STG": "op_ldg",
        "ATOMG": "op_atomg",
        "ATOMG.CAS": "op_atomg",
        "RED": "op_atomg",
        "BAR": "op_bar",
        "SHFL": "op_shfl",
        "VOTE": "op_vote",
        "S2R": "op_s2r",
        "LDL": "op_ldl",
        "STL": "op_ldl",
        **HALF_RULES,
        **EXTRA_RULES,
        # shader-mem
        "ATOMS": "op_atoms",
        "ATOMS.CAS": "op_atoms",
        "ATOMS.POPC.INC": "op_atoms",
        "QSPC": "op_qspc",
        "REDUX": "op_redux",
        **ALU_RULES,
        **SURFACE_RULES,
        **TEXTURE_RULES,  # shader-tex
        **MATCH_RULES,  # shader-tex
        **UNIFORM_RULES,  # shader-u
        **ASYNC_RULES,  # shader-mma
        **MMA_RULES,  # shader-mma
        **INDIRECT_RULES,  # shader-ctl
        **CACHE_RULES,  # shader-ctl
        **BARRIER_RED_RULES,  # shader-ctl
        **MBARRIER_RULES,  # shader-ctl
    }

    def lowered(self, ir: str) -> bool:
        return (
            ir in LOWERED
            or ir in EXT
            or ir in HALF_RULES
            or ir in EXTRA_RULES
            or ir in ALU_RULES
            or ir in SURFACE_RULES
            or ir in TEXTURE_RULES
            or ir in MATCH_RULES
            or ir in UNIFORM_RULES
            or ir in ASYNC_RULES
            or ir in MMA_RULES
            or ir in INDIRECT_RULES
            or ir in CACHE_RULES
            or ir in BARRIER_RED_RULES
            or ir in MBARRIER_RULES
            or ir in QUAD_KEYS  # shader-ndv
        )

    def lower(self, inst: Inst) -> None:
        # the 64-bit integer type is declared when the first instruction is lowered, before its
        # code (kernels have the Int64 capability): keeps the module's type ids where they were
        self.u64
        super().lower(inst)


def translate_compute(insts: list[Inst], spec: ComputeSpec = ComputeSpec()) -> bytes:
    """SPIR-V binary of an SM86 compute kernel."""
    return Compute86(insts, spec).build()
