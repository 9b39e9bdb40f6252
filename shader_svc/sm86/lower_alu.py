"""SM86 compute arithmetic beyond the shared subset (issue 31): ``Alu86``, composed of one mixin
per topic, each in a module of its own with its contract and sources: lower_alu_int (IADD3/LEA
carries, IMAD.WIDE/.HI, ISETP, 64-bit funnel shifts, IABS/POPC/BREV/FLO, PRMT, SGXT, BMSK, R2UR,
CS2R), lower_alu_fp (FP64, MUFU, FSET, FSWZADD), lower_alu_conv (I2F/F2I/I2I/I2IP/F2IP, FRND,
F2F) and lower_alu_lanes (half pairs beyond lower_half, IDP/VABSDIFF4 byte lanes, P2R/R2P).
Here: the registrations (``ALU_RULES``; ``STAGE_ALU_RULES``, every stage's ALU rows),
``StageAlu86`` (the ALU handlers for a lowering of any stage) and ``GraphicsAlu86`` (its 32-bit
forms for vertex/fragment programs, whose device has neither Int64 nor Float64).
"""

from __future__ import annotations

from shader_svc.ir import to_spirv as ir_spirv
from shader_svc.ir.block import Block, Value
from shader_svc.lower.base import TranslateError
from shader_svc.sm86.decode import Inst
from shader_svc.sm86.lower import Lower86
from shader_svc.sm86.lower_alu_int import AluInt86
from shader_svc.sm86.lower_alu_fp import FSWZ_LETTERS86, MUFU, AluFloat86  # noqa: F401 (FSWZ_LETTERS86, MUFU: their home was here)
from shader_svc.sm86.lower_alu_conv import AluConv86
from shader_svc.sm86.lower_alu_lanes import AluLanes86
from shader_svc.sm86.lower_half import HALF_RULES, Half86
from shader_svc.sm86.lower_uniform import UNIFORM_RULES, Uniform86, refuse


# issue 31's later rows (shader-alu): lowering key -> handler, merged into Compute86.RULES
ALU_RULES = {
    "HSET2": "op_hset2",
    "HMNMX2": "op_hmnmx2_nan",
    "F2FP": "op_f2fp",
    "HADD2.I": "op_half2_imm",
    "HMUL2.I": "op_half2_imm",
    "HFMA2.I": "op_half2_imm",
    # shader-u
    "BMSK": "op_bmsk",
    "I2I": "op_i2i",
    "I2IP": "op_i2ip",
    "FSET": "op_fset",
    "IDP": "op_idp",
    "VABSDIFF4": "op_vabsdiff4",
    "P2R": "op_p2r",
    "R2P": "op_r2p",
    # shader-u2
    "FSWZADD": "op_fswzadd",
    "F2IP": "op_f2ip",
}


class Alu86(AluInt86, AluFloat86, AluConv86, AluLanes86):
    """Mixin of ``to_spirv.Compute86``: the arithmetic handlers and their helpers."""


# --- every stage (issue 31, shader-u2) ------------------------------------------------------------
# The arithmetic rows that read and write only registers (R, UR), predicates (P, UP) and constant
# banks: one registration that the compute lowering (``to_spirv.Compute86``, whose RULES spread
# it) and the graphics lowering
# (``to_spirv_gfx.Gfx86``) both read, so a vertex or fragment program translates the uniform
# datapath and the ALU rows with the compute handlers.
STAGE_ALU_RULES = {
    "IADD3": "op_iadd3",
    "LEA": "op_lea",
    "IMAD.WIDE": "op_imad_wide",
    "IMAD": "op_imad",
    "IMAD.HI": "op_imad_hi",
    "ISETP": "op_isetp",
    "R2UR": "op_r2ur",
    "PRMT": "op_prmt",
    "SGXT": "op_sgxt",
    "IABS": "op_iabs",
    "POPC": "op_popc",
    "BREV": "op_brev",
    "FLO": "op_flo",
    "SHF": "op_shf",
    "DADD": "op_dadd",
    "DMUL": "op_dadd",
    "DFMA": "op_dadd",
    "DSETP": "op_dsetp",
    "I2F": "op_i2f",
    "F2I": "op_f2i",
    "MUFU": "op_mufu",
    "CS2R": "op_cs2r",
    "FRND": "op_frnd",
    "F2F": "op_f2f",
    **HALF_RULES,
    **ALU_RULES,
    **UNIFORM_RULES,
}


class StageAlu86(Alu86, Half86, Uniform86):
    """The handlers of ``STAGE_ALU_RULES`` on top of the shared subset (``RULES``: Lower86's
    table with them merged), for a lowering of any stage."""

    RULES = {**Lower86.RULES, **STAGE_ALU_RULES}

    def lowered(self, ir: str) -> bool:
        return ir in STAGE_ALU_RULES or super().lowered(ir)


class GraphicsAlu86(StageAlu86):
    """``StageAlu86`` for vertex and fragment programs: the GPU process's device enables neither
    Int64 nor Float64 (lower/graphics.py), so a row whose handler needs a 64-bit type (carry
    chains, LEA, 64-bit funnel shifts and conversions, IMAD.WIDE/.HI, FP64, UIMAD.WIDE) is
    refused by name instead of declaring a type the module may not use."""

    @property
    def u64(self) -> int:
        raise TranslateError(
            "64-bit integer arithmetic (carries, LEA, IMAD.WIDE/.HI, 64-bit shifts and "
            "conversions) is not translated in graphics stages (the GPU process's device has no Int64)",
            field="code",
        )

    @property
    def f64t(self) -> int:
        raise TranslateError(
            "FP64 arithmetic is not translated in graphics stages (the GPU process's device has no Float64)",
            field="code",
        )

    def op_fswzadd(self, inst: Inst) -> None:
        refuse(inst, "FSWZADD in a graphics stage (the quad's lane order is not established here)")

    # 32-bit forms of the shifts the compute handlers write with 64-bit types (shader-u2)
    @staticmethod
    def _shl(b: Block, x: Value, n: Value) -> Value:
        """x << n for n in 0..32 (32: 0), without a shift by 32 (undefined in SPIR-V)."""
        return b.op(
            "Select32", b.op("UGe32", n, b.const_u32(32)), b.const_u32(0), b.op("IShl32", x, b.op("UMin32", n, b.const_u32(31)))
        )

    @staticmethod
    def _shr(b: Block, x: Value, n: Value) -> Value:
        """x >> n (logical) for n in 0..32 (32: 0)."""
        return b.op(
            "Select32", b.op("UGe32", n, b.const_u32(32)), b.const_u32(0), b.op("IShr32", x, b.op("UMin32", n, b.const_u32(31)))
        )

    def _shf_any(self, inst: Inst, d: int) -> None:
        """SHF of a 32-bit type (.U32/.S32) in 32-bit words: the count wraps (.W) or clamps to
        32; the words of (c:a) shifted left are c << s | a >> (32 - s) (.HI) and a << s, shifted
        right a >> s | c << (32 - s) and c >> s (arithmetic for .S32, a count of 32 giving the
        sign).  64-bit types are refused (no Int64)."""
        mods = inst.mods
        if mods["type"] in (0, 1):
            super()._shf_any(inst, d)
            return
        b = Block()
        a, c = self.src_ir(b, inst, "a"), self.src_ir(b, inst, "c")
        s = self.src_ir(b, inst, "b")
        s = b.op("IAnd32", s, b.const_u32(31)) if mods["W"] else b.op("UMin32", s, b.const_u32(32))
        rest = b.op("ISub32", b.const_u32(32), s)
        if mods["dir"] == 0:
            r = b.op("IOr32", self._shl(b, c, s), self._shr(b, a, rest)) if mods["HI"] else self._shl(b, a, s)
        elif mods["HI"]:
            r = b.op("ISar32", c, b.op("UMin32", s, b.const_u32(31))) if mods["type"] == 2 else self._shr(b, c, s)
        else:
            r = b.op("IOr32", self._shr(b, a, s), self._shl(b, c, rest))
        b.set_reg(d, r, inst.ops.get("d", {}).get("file", "R"))  # (USHF: UR)
        ir_spirv.emit(self, b)

    def _lea(self, inst: Inst) -> None:
        """LEA / LEA.HI without a carry in or out, in 32-bit words: (a << s) + b, or the high
        word of (hi:a) << s (hi = c, or a's sign with .SX32) plus b; -b is ~b + 1.  The carry
        forms are refused (no Int64)."""
        ops, mods = inst.ops, inst.mods
        if mods["X"] or ops.get("co", {}).get("pred", 7) != 7:
            super()._lea(inst)
            return
        sh = ops["s"]["imm"]
        b = Block()
        a = self.src_ir(b, inst, "a")  # -a / ~a applied
        if mods["HI"]:
            hi = b.op("ISar32", a, b.const_u32(31)) if mods["SX32"] else self.src_ir(b, inst, "c")
            shifted = b.op("IOr32", self._shl(b, hi, b.const_u32(sh)), self._shr(b, a, b.const_u32(32 - sh)))
        else:
            shifted = b.op("IShl32", a, b.const_u32(sh))
        y = self.plain_ir(b, inst, "b")
        if ops["b"].get("neg"):
            y = b.op("IAdd32", b.op("INot32", y), b.const_u32(1))
        self.put_ir(b, inst, b.op("IAdd32", shifted, y))  # (ULEA: a uniform register)
        ir_spirv.emit(self, b)
