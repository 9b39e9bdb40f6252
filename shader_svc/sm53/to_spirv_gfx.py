"""Vertex and fragment programs (SM53, Maxwell) to SPIR-V.

Built from Maxwell's lowering (``to_spirv.Compute53``: ALU, carry, reconvergence stack, control
flow) and the shared graphics lowering (``lower/graphics.py``: uniform blocks at bindings 0-3,
combined image samplers at 4-7, attribute locations, FragCoord/Position/VertexIndex/
InstanceIndex, colour outputs from R0.. at EXIT per the shader program header).  The interface is the one written down in
shader_svc/README.md "Graphics-stage interface"; what differs on Maxwell is the instructions (the texture
handlers are in ``gfx_tex.py``):

- ALD/AST with a vector size (.64/.96/.128), IPA in its four modes, KIL, the full texture forms
  TEX/TLD/TXQ (consecutive destination registers for the enabled components) and the short
  forms TEXS/TLDS/TLD4S (two destination pairs; the component mask depends on whether the
  second pair is RZ; which register holds what per target in TEXS_FORMS / TLDS_FORMS, as ptxas
  packs them); TLD4 / TLD4S / TLD with offsets, TLD4 / TLD4S / TEXS with a depth comparison;
- IPA follows the hardware: a perspective-interpolated attribute read with IPA.PASS is
  ``value / w`` (the plane equation interpolates attr/w), position w (a[0x7c]) is the
  interpolated 1/w (Vulkan's FragCoord.w), and the multiply mode (``IPA R1, a[0x80], R0``)
  multiplies by its register.  Compilers recover the value with ``IPA.PASS Rw, a[0x7c];
  MUFU.RCP Rw, Rw; IPA Rd, a[...], Rw``; that idiom is recognised along straight-line code
  (through blocks entered only by falling through, as after a KIL) and lowered to the perspective-correct input itself, so the result is exactly the driver's
  interpolated value (multiplying by w then 1/w would differ by an ulp).  Any other multiplier
  is honoured as written: value * FragCoord.w * R.

Float math is the driver's (FFMA = GLSL Fma), as in the SM86 graphics lowering: the GPU
process's device enables neither Float64 nor Int64, so Maxwell's 64-bit helpers (carries with
.CC, PRMT, SHF, IADD3.RS) are refused in these stages with a clear error.
"""

from __future__ import annotations

from shader_svc.ir import to_spirv as ir_spirv
from shader_svc.ir.block import Block
from shader_svc.lower.base import TranslateError
from shader_svc.lower.gfx_geometry import GEOMETRY_SREGS
from shader_svc.sm53.decode import Inst
from shader_svc.sm53.gfx_tex import GLSL_NCLAMP, TEX_DIMS, TEXS_FORMS, TLDS_FORMS, Tex53  # noqa: F401  (forms the tests read)
from shader_svc.sm53.lower import LOWERED
from shader_svc.sm53.lower_control import _code_base, _entry_addr
from shader_svc.sm53.stage_alu import STAGE_ALU53
from shader_svc.sm53.to_spirv import Compute53
from shader_svc.sph import POSITION, Header

NOT_IN_GRAPHICS = {
    "S2R",
    "LDG",
    "STG",
    "LDS",
    "STS",
    "ATOMS",
    "ATOM",
    "ATOM_CAS",
    "RED",
    "BAR",
    "VOTE",
    "SHFL",
    "LDL",
    "STL",
    "LDC",
}
GFX_LOWERED = (LOWERED - NOT_IN_GRAPHICS) | {
    "ALD",
    "AST",
    "IPA",
    "KIL",
    "TEXS",
    "TLDS",
    "TLD4S",
    "TEX",
    "TLD",
    "TXQ",
    "TEX.B",
    "TLD.B",
    "TLD4.B",
    "TXQ.B",
    "TLD4",
    "TXD",
    "TMML",
    "PIXLD",  # arch-gfx
    "AL2P",
    "ALD.PHYS",
    "AST.PHYS",
    "OUT",  # gfx-geom: the geometry stage (lower/gfx_geometry.py)
    "ISBERD",
}
STAGE_OF = {"ALD": "vertex", "AST": "vertex", "IPA": "fragment", "KIL": "fragment", "ALD.PHYS": "vertex", "AST.PHYS": "vertex"}
POS_W = POSITION + 12


def _dst_regs(inst: Inst) -> set[int]:
    """Registers an instruction writes (for the block-local idiom tracking): ALD its vector,
    the full texture forms one per enabled component, the short forms a pair per destination,
    everything else lowered in these stages one register."""
    ir, ops = inst.row.ir, inst.ops
    widths = {"d": 1}
    if ir in ("ALD", "ALD.PHYS"):
        widths = {"d": inst.mods["size"] + 1}
    elif ir in ("TEX", "TLD", "TXQ", "TEX.B", "TLD.B", "TLD4.B", "TXQ.B", "TLD4", "TXD", "TMML"):
        widths = {"d": bin(ops["mask"]["imm"]).count("1")}
    elif ir in ("TEXS", "TLDS", "TLD4S"):
        widths = {"d": 2, "d2": 2}
    elif ir in ("AST", "AST.PHYS"):
        widths = {}
    out: set[int] = set()
    for name, n in widths.items():
        r = ops.get(name, {}).get("reg", 255)
        if r != 255:
            out |= set(range(r, min(r + n, 255)))
    return out


class Gfx53(Tex53):
    RULES = {
        **Compute53.RULES,
        "ALD": "ald53",
        "AST": "ast53",
        "IPA": "ipa53",
        "TEXS": "tex_short",
        "TLDS": "tex_short",
        "TLD4S": "tex_short",
        "TEX": "tex_full",
        "TLD": "tex_full",
        "TLD4": "tld4_53",
        "TEX.B": "tex_bindless53",
        "TLD.B": "tex_bindless53",
        "TLD4.B": "tex_bindless53",
        "TXQ.B": "txq_bindless53",
        "TXQ": "txq53",
        "FFMA": "op_ffma_glsl",
        # shader-tex
        "TXD": "txd53",
        "TMML": "tmml53",
        "KIL": "kill",  # the control driver calls ``kill`` for it (a terminator of its block)
        "PIXLD": "pixld53",  # arch-gfx
        "AL2P": "al2p53",
        "ALD.PHYS": "ald53_phys",
        "AST.PHYS": "ast53_phys",
        # gfx-geom: the geometry stage (lower/gfx_geometry.py)
        "OUT": "out53",
        "ISBERD": "isberd53",
        "S2R": "s2r53_gfx",
    }

    def __init__(self, insts: list[Inst], header: Header, features: int = 0) -> None:
        self.w_regs: set[int] = set()  # registers holding FragCoord.w (IPA.PASS a[0x7c])
        self.rcpw_regs: set[int] = set()  # registers holding MUFU.RCP of such a register
        super().__init__(insts, header, features)

    def lowered(self, ir: str) -> bool:
        # compute-only and geometry instructions pass here so that lower() names the stage
        return (
            ir in GFX_LOWERED
            or ir in NOT_IN_GRAPHICS
            or ir == "OUT"
            or ir in ("PCNT", "CONT", "MEMBAR")  # shader-ctl: the stack's continue entries
            or ir in STAGE_ALU53  # shader-u2: the ALU rows
        )

    @property
    def u64(self) -> int:
        raise TranslateError(
            "64-bit integer arithmetic (carry chains, PRMT, SHF, IADD3.RS) is not translated in "
            "graphics stages (the GPU process's device has no Int64)",
            field="code",
        )

    @property
    def f64t(self) -> int:  # (shader-u2)
        raise TranslateError(
            "FP64 arithmetic is not translated in graphics stages (the GPU process's device has no Float64)", field="code"
        )

    def block_list(self) -> list[list[Inst]]:
        """The blocks, and which of them other blocks may enter (branch, SSY/PBK/CAL targets,
        CAL return points): only those lose what the IPA idiom tracks.  A block reached by
        falling through alone (after a KIL, or a guarded branch) keeps its predecessor's."""
        blocks = super().block_list()
        base = _code_base(self.insts)
        self.joins = {
            _entry_addr(i.ops["t"]["target"], base) for i in self.insts if i.row.ir in ("BRA", "SSY", "PBK", "PCNT", "CAL")
        }
        self.joins |= {blocks[k + 1][0].addr for k in range(len(blocks) - 1) if blocks[k][-1].row.ir == "CAL"}
        self._prev = {blocks[k + 1][0].addr: blocks[k][0].addr for k in range(len(blocks) - 1)}
        self._after: dict[int, tuple[set[int], set[int]]] = {}
        return blocks

    def _block_start(self, block: list[Inst]) -> None:
        """A join forgets what the idiom tracks; a block entered only by falling through starts
        from its predecessor's state (saved by ``_block_end``: the structured lowering does not
        emit blocks in address order)."""
        if block[0].addr in self.joins:
            self.w_regs, self.rcpw_regs = set(), set()
        else:
            w, r = self._after.get(self._prev.get(block[0].addr), (set(), set()))
            self.w_regs, self.rcpw_regs = set(w), set(r)

    def _block_end(self, block: list[Inst]) -> None:
        self._after[block[0].addr] = (set(self.w_regs), set(self.rcpw_regs))

    def al2p53(self, inst: Inst) -> None:
        """AL2P (lower/gfx_indexed.py): the 32-bit form with no predicate destination (what
        ALD.PHYS / AST.PHYS of one word read; nouveau emits these)."""
        if inst.mods["size"] or inst.ops["p"]["pred"] != 7:
            self.bad(inst, "only AL2P of one word with no predicate destination is translated")
        self.al2p_ir(inst, inst.ops["d"]["reg"], inst.ops["a"]["reg"], inst.ops["b"]["imm"])

    def ald53_phys(self, inst: Inst) -> None:
        if inst.ops["vtx"]["reg"] != 255 or inst.mods["O"]:
            self.bad(inst, "only vertex inputs of the current vertex are translated")
        self.attr_phys_ir(inst, inst.ops["a"]["attr"], inst.mods["size"] + 1, inst.ops["d"]["reg"], True)

    def ast53_phys(self, inst: Inst) -> None:
        if inst.ops["vtx"]["reg"] != 255:
            self.bad(inst, "only outputs of the current vertex are translated")
        self.attr_phys_ir(inst, inst.ops["a"]["attr"], inst.mods["size"] + 1, inst.ops["b"]["reg"], False)

    # --- gfx-geom: the geometry stage (lower/gfx_geometry.py) -------------------------------------------
    def out53(self, inst: Inst) -> None:
        """OUT.EMIT / .CUT / .EMIT_THEN_CUT Rd, Ra (handle), Rb (stream)."""
        self.out_ir(inst, inst.mods["type"], inst.ops["d"]["reg"], inst.ops["a"]["reg"], inst.ops["b"]["reg"] == 255)

    def isberd53(self, inst: Inst) -> None:
        """ISBERD Rd, [Ra], the plain form (NAK's only one for geometry inputs)."""
        a = inst.ops["a"]
        if inst.mods["mode"] or inst.mods["size"] or a.get("off"):
            self.bad(inst, "only the plain ISBERD Rd, [Ra] is translated")
        self.isberd_ir(inst, inst.ops["d"]["reg"], a["reg"])

    def s2r53_gfx(self, inst: Inst) -> None:
        """S2R in graphics stages: the geometry stage's SR_INVOCATION_INFO / SR_INVOCATION_ID
        (``lower`` refuses the rest)."""
        self.geometry_sreg_ir(inst, inst.ops["sr"]["sr"], inst.ops["d"]["reg"])

    def pixld53(self, inst: Inst) -> None:
        """PIXLD (lower/gfx_pixel.py); the address operand [Ra + imm], whose use no public source
        here gives, must be [RZ]."""
        a = inst.ops["a"]
        if a["reg"] != 255 or a["off"]:
            self.bad(inst, "PIXLD with an address other than [RZ] is not translated")
        self.pixld_ir(inst, inst.mods["mode"], inst.ops["d"]["reg"], inst.ops["p"]["pred"])

    def kill(self, ins: Inst) -> None:
        if self.header.stage != "fragment":
            raise TranslateError(f"{ins.text()}: KIL does not exist in a {self.header.stage} program", offset=ins.addr)
        dead, after = self.label(), self.label()
        p = self.pred(ins.pred, ins.pred_not)  # loaded before the merge instruction
        self.do("OpSelectionMerge", after, 0)
        self.do("OpBranchConditional", p, dead, after)
        self.put_label(dead)
        self.do("OpKill")
        self.put_label(after)

    # --- instructions ----------------------------------------------------------------------------
    def lower(self, inst: Inst) -> None:
        ir = inst.row.ir
        stage = STAGE_OF.get(ir)
        if stage == "vertex" and ir in ("ALD", "AST") and self.header.stage == "geometry":  # gfx-geom
            stage = "geometry"
        if stage and stage != self.header.stage:
            raise TranslateError(
                f"{inst.text()}: {inst.mnemonic} does not exist in a {self.header.stage} program", offset=inst.addr
            )
        geometry_ok = self.header.stage == "geometry" and (
            ir == "OUT" or (ir == "S2R" and inst.ops["sr"]["sr"] in GEOMETRY_SREGS)
        )  # gfx-geom
        if (ir in NOT_IN_GRAPHICS or ir == "OUT") and not geometry_ok:
            raise TranslateError(f"{inst.text()}: not translated in a {self.header.stage} program", offset=inst.addr)
        guarded = not (inst.pred == 7 and not inst.pred_not)
        written = _dst_regs(inst)
        w_src = inst.ops.get("a", {}).get("reg", 255) if ir == "MUFU" else 255
        rcp_of_w = (
            ir == "MUFU"
            and inst.mods["op"] == 4
            and w_src in self.w_regs
            and not any(inst.ops["a"].get(k) for k in ("neg", "abs"))
            and not inst.mods.get("SAT")
        )
        super().lower(inst)
        # what the IPA idiom needs to know, updated after the instruction (a guarded one may not
        # have written: its destinations are forgotten, never added)
        self.w_regs -= written
        self.rcpw_regs -= written
        if not guarded:
            if ir == "IPA" and inst.ops["attr"]["attr"] == POS_W and inst.mods["mode"] == 0 and not inst.mods["SAT"]:
                self.w_regs.add(inst.ops["d"]["reg"])
            if rcp_of_w:
                self.rcpw_regs.add(inst.ops["d"]["reg"])

    def op_ffma_glsl(self, inst: Inst) -> None:
        """FFMA as the device's fused multiply-add (no Float64 for the exact one)."""
        self.need(inst, ftz=0, rnd=0, SAT=0)
        if inst.ops["d"].get("cc"):
            self.bad(inst, "condition code from FP not translated yet")
        self.fp32_ir(inst, "FFmaDevice32", 0)

    # --- attributes ----------------------------------------------------------------------------
    def _word(self, a: int, inst: Inst) -> int:
        if a % 4:
            self.bad(inst, f"attribute address a[{a:#x}] is not word-aligned")
        return a

    def ald53(self, inst: Inst) -> None:
        ops = inst.ops
        if self.header.stage == "geometry" and not inst.mods["P"] and not inst.mods["O"]:  # gfx-geom: an input vertex
            self._word(ops["attr"]["attr"], inst)
            self.geom_attr_ir(inst, ops["attr"]["attr"], inst.mods["size"] + 1, ops["d"]["reg"], ops["vtx"]["reg"])
            return
        if ops["vtx"]["reg"] != 255 or inst.mods["P"] or inst.mods["O"]:
            self.bad(inst, "only vertex inputs of the current vertex are translated")
        self._word(ops["attr"]["attr"], inst)
        self.attr_ir(inst, ops["attr"]["attr"], inst.mods["size"] + 1, ops["d"]["reg"], True)

    def ast53(self, inst: Inst) -> None:
        ops = inst.ops
        # a geometry program's vertex register is the output vertex handle: the current vertex
        if (ops["vtx"]["reg"] != 255 and self.header.stage != "geometry") or inst.mods["P"]:
            self.bad(inst, "only outputs of the current vertex are translated")
        self._word(ops["attr"]["attr"], inst)
        self.attr_ir(inst, ops["attr"]["attr"], inst.mods["size"] + 1, ops["b"]["reg"], False)

    def ipa53(self, inst: Inst) -> None:
        ops, mods = inst.ops, inst.mods
        if mods["mode"] == 3 or mods["loc"] == 2 or ops["p"]["pred"] != 7 or ops["p"]["not"]:
            self.bad(inst, "only IPA.PASS, IPA (multiply) and IPA.CONSTANT, optionally .CENTROID / .SAT, are translated")
        a = self._word(ops["attr"]["attr"], inst)
        if POSITION <= a < POSITION + 16:
            self._need(self.header.inputs, a, "interpolates", inst)
        var, comp, how = self.fragment_input_ref(a, mods["mode"] == 2, mods["loc"] == 1, inst)
        b = Block()
        val = b.emit("LoadInputF32", var=var, comp=comp)
        multiply, rb = mods["mode"] == 1, ops["b"]["reg"]
        if how == "perspective":  # the hardware interpolates value/w
            if multiply and rb in self.rcpw_regs:
                multiply = False  # value/w * w: the perspective-correct input itself
            else:
                frag = self.builtin("FragCoord", "Input", self.v4f)
                val = b.op("FMul32", val, b.emit("LoadInputF32", var=frag, comp=3))
        if multiply:
            val = b.op("FMul32", val, b.op("BitcastF32", b.get_reg(rb)))
        if mods["SAT"]:  # the final value clamped to [0, 1], NaN to 0 (NClamp's NaN rule)
            val = b.op("FClampDevice01", val)
        if ops["d"]["reg"] != 255:
            b.set_reg(ops["d"]["reg"], b.op("BitcastU32", val))
        ir_spirv.emit(self, b)


def translate_graphics(insts: list[Inst], header: Header, features: int = 0) -> bytes:
    """SPIR-V binary of an SM53 vertex, geometry or fragment program (instructions after its header);
    ``features``: ``lower.graphics.FEATURE_*`` bits the device has."""
    return Gfx53(insts, header, features).build()
