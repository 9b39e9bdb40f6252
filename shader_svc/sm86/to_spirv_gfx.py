"""Vertex and fragment programs (SM86) to SPIR-V: the shared graphics lowering
(``lower/graphics.py``: the interface, uniform blocks, texture slots and pools, outputs) on the
SM86 subset of ``lower.Lower86``, with SM86's attribute (ALD/AST/IPA), kill and texture
(TEX/TLD/TLD4/TXQ, bound and bindless) instructions.

Bound textures: the second index of TEX/TLD/TLD4/TXQ is the slot (first index 0), the
destinations are the first two enabled components to the pair at bits 16..23, the rest to the
pair at 64..71 (Mesa NAK's encoder).  FFMA is GLSL's Fma here (no Float64 on the GPU
process's device).
"""

from __future__ import annotations

from shader_svc.ir import to_spirv as ir_spirv
from shader_svc.ir.block import Block
from shader_svc.lower.base import TranslateError
from shader_svc.lower.gfx_geometry import GEOMETRY_SREGS
from shader_svc.lower.graphics import (
    SAMPLER_POOL,  # noqa: F401
    TEX_ARGS,
    TEX_SLOTS,
    TEXTURE_POOL,  # noqa: F401
    TLD4_ARGS,
    TLD_ARGS,
    TXQ_KNOWN,
    GraphicsLowering,
)
from shader_svc.sm86.decode import Inst
from shader_svc.sm86.lower import LOWERED
from shader_svc.sm86.lower_alu import STAGE_ALU_RULES, GraphicsAlu86  # shader-u2: the ALU rows of every stage
from shader_svc.sph import Header

GFX_LOWERED = (LOWERED - {"S2R", "LDG", "STG"}) | {
    "ALD",
    "AST",
    "IPA",
    "KILL",
    "TEX",
    "TLD",
    "TLD4",
    "TXQ",
    "TEX.B",
    "TLD.B",
    "TLD4.B",
    "TXQ.B",
    "TXD",
    "TMML",
    "PIXLD",  # arch-gfx
    "AL2P",
    "ALD.PHYS",
    "AST.PHYS",
    # gfx-geom: the geometry stage (lower/gfx_geometry.py)
    "OUT",
    "ISBERD",
    "S2R",
}
# TEX/TLD/TLD4 dimension field -> (SPIR-V Dim, arrayed, coordinate count)
# (1D declares the Sampled1D capability, cube arrays SampledCubeArray: Vulkan's imageCubeArray feature)
DIMS86 = {
    0: ("1D", 0, 1),
    1: ("2D", 0, 2),
    2: ("3D", 0, 3),
    3: ("Cube", 0, 3),
    4: ("1D", 1, 1),
    5: ("2D", 1, 2),
    7: ("Cube", 1, 3),
}


class Gfx86(GraphicsLowering, GraphicsAlu86):
    RULES = {
        **GraphicsAlu86.RULES,
        "ALD": "ald",
        "AST": "ast",
        "IPA": "ipa",
        "TEX": "tex",
        "TLD": "tld",
        "TLD4": "tld4",
        "TXQ": "txq",
        "TEX.B": "tex_bindless",
        "TLD.B": "tex_bindless",
        "TLD4.B": "tex_bindless",
        "TXQ.B": "txq_bindless",
        "FFMA": "op_ffma_glsl",
        # shader-tex
        "TXD": "txd",
        "TMML": "tmml",
        "KILL": "kill",  # the control driver calls ``kill`` for it (a terminator of its block)
        "PIXLD": "pixld",  # arch-gfx
        "AL2P": "al2p",
        "ALD.PHYS": "ald_phys",
        "AST.PHYS": "ast_phys",
        # gfx-geom: the geometry stage (lower/gfx_geometry.py)
        "OUT": "out",
        "ISBERD": "isberd",
        "S2R": "s2r_gfx",
    }

    def lowered(self, ir: str) -> bool:
        return ir in GFX_LOWERED or ir in STAGE_ALU_RULES

    def image(self, inst: Inst) -> int:
        """The combined image sampler of a bound instruction's slot, declared with the dimension
        the instruction names (TXQ, which names none, the one the program samples the slot as)."""
        ops = inst.ops
        if ops["bank"]["imm"] != 0 or ops["slot"]["imm"] not in TEX_SLOTS:
            raise TranslateError(
                f"{inst.text()}: texture {ops['bank']['imm']:#x}, {ops['slot']['imm']:#x} has no "
                f"binding (slots 0..3 of index 0 are bindings 4..7)",
                offset=inst.addr,
            )
        dim, arrayed, _ = self.target(inst)
        if dim == "1D" and not getattr(self, "_sampled1d", False):
            self._sampled1d = True
            self.m.emit("cap", "OpCapability", self.m.E("Capability", "Sampled1D"))
        if dim == "Cube" and arrayed and not getattr(self, "_cube_array", False):
            self._cube_array = True
            self.m.emit("cap", "OpCapability", self.m.E("Capability", "SampledCubeArray"))
        depth = inst.mods.get("DC", 0) if "dim" in ops else self._slot_depth86.get(ops["slot"]["imm"], 0)
        try:
            return self.slot_var(ops["slot"]["imm"], dim, arrayed, depth)
        except TranslateError as e:
            raise TranslateError(f"{inst.text()}: {e}", offset=inst.addr) from None

    def target(self, inst: Inst) -> tuple[str, int, int]:
        """(SPIR-V Dim, arrayed, coordinate count) of a bound texture instruction; TXQ's is the
        slot's as the program's other texture instructions read it (2D when none does)."""
        if "dim" in inst.ops:
            if inst.ops["dim"]["sym"] not in DIMS86:
                raise TranslateError(f"{inst.text()}: this texture dimension is not translated", offset=inst.addr)
            return DIMS86[inst.ops["dim"]["sym"]]
        return self._slot_dims86.get(inst.ops["slot"]["imm"], ("2D", 0, 2))

    @property
    def _slot_dims86(self) -> dict[int, tuple[str, int, int]]:
        """Slot -> target as the program's TEX/TLD/TLD4 read it (for TXQ)."""
        if getattr(self, "_dims86", None) is None:
            self._dims86, self._depth86 = {}, {}
            for ins in self.insts:
                if ins.row.ir in ("TEX", "TLD", "TLD4") and ins.ops["dim"]["sym"] in DIMS86:
                    self._dims86.setdefault(ins.ops["slot"]["imm"], DIMS86[ins.ops["dim"]["sym"]])
                    self._depth86.setdefault(ins.ops["slot"]["imm"], ins.mods.get("DC", 0))
        return self._dims86

    @property
    def _slot_depth86(self) -> dict[int, int]:
        """Slot -> 1 where the program's TLD4 compares depths (a TXQ declares the same view)."""
        self._slot_dims86
        return self._depth86

    def sources(self, inst: Inst, roles: list[str]) -> dict[str, int]:
        """Register of each source value (``roles`` in order: the layer, the coordinates, the
        level or bias, offsets, reference).  Ampere splits them over Ra's and Rb's tuples as
        ptxas (12.9, sm_86) packs them (``source_split``).  Two values
        are ambiguous in ptxas's code (it always puts Rb at Ra+1, which reads the same as one
        pair in Ra), so only those two readings' common case is translated: Rb = RZ or Ra+1.
        A register of RZ reads 0."""
        a, b = inst.ops["a"]["reg"], inst.ops["b"]["reg"]
        n = len(roles)
        split = source_split(n, sum(r in ("layer", "x", "y", "z") for r in roles))
        if n == 2:
            if b not in (255, a + 1 if a != 255 else 255):
                raise TranslateError(
                    f"{inst.text()}: two source values with Rb other than RZ or Ra+1 are not "
                    f"translated (which tuple holds the second is not established)",
                    offset=inst.addr,
                )
        regs = [a + i if a != 255 else 255 for i in range(split)] + [b + i if b != 255 else 255 for i in range(n - split)]
        return dict(zip(roles, regs))

    def ald(self, inst: Inst) -> None:
        ops = inst.ops
        if self.header.stage == "geometry" and not inst.mods["O"]:  # an input vertex (ISBERD's result)
            self.geom_attr_ir(inst, ops["attr"]["attr"], inst.mods["comps"] + 1, ops["d"]["reg"], ops["vtx"]["reg"])
            return
        if ops["vtx"]["reg"] != 255 or inst.mods["O"]:
            raise TranslateError(f"{inst.text()}: only vertex inputs of the current vertex are translated", offset=inst.addr)
        self.attr_ir(inst, ops["attr"]["attr"], inst.mods["comps"] + 1, ops["d"]["reg"], True)

    def ast(self, inst: Inst) -> None:
        ops = inst.ops
        # a geometry program's vertex register is the output vertex handle: the current vertex
        if (ops["vtx"]["reg"] != 255 and self.header.stage != "geometry") or inst.mods["P"]:
            raise TranslateError(f"{inst.text()}: only outputs of the current vertex are translated", offset=inst.addr)
        self.attr_ir(inst, ops["attr"]["attr"], inst.mods["comps"] + 1, ops["b"]["reg"], False)

    def ipa(self, inst: Inst) -> None:
        ops, mods = inst.ops, inst.mods
        if ops["pd"]["pred"] != 7 or mods["loc"] == 2 or mods["mode"] == 2:
            raise TranslateError(
                f"{inst.text()}: only IPA.PASS/.CONSTANT (optionally .CENTROID) are translated", offset=inst.addr
            )
        var, comp, _ = self.fragment_input_ref(ops["attr"]["attr"], mods["mode"] == 1, mods["loc"] == 1, inst)
        b = Block()
        f = b.emit("LoadInputF32", var=var, comp=comp)
        if ops["d"]["reg"] != 255:
            b.set_reg(ops["d"]["reg"], b.op("BitcastU32", f))
        ir_spirv.emit(self, b)

    def al2p(self, inst: Inst) -> None:
        """AL2P (lower/gfx_indexed.py): one word (what ALD.PHYS / AST.PHYS, single-word on SM86,
        read)."""
        if inst.mods["size"]:
            raise TranslateError(f"{inst.text()}: only AL2P of one word is translated", offset=inst.addr)
        self.al2p_ir(inst, inst.ops["d"]["reg"], inst.ops["a"]["reg"], inst.ops["b"]["imm"])

    def ald_phys(self, inst: Inst) -> None:
        if inst.ops["vtx"]["reg"] != 255 or inst.mods["O"]:
            raise TranslateError(f"{inst.text()}: only vertex inputs of the current vertex are translated", offset=inst.addr)
        self.attr_phys_ir(inst, inst.ops["a"]["attr"], 1, inst.ops["d"]["reg"], True)

    def ast_phys(self, inst: Inst) -> None:
        if inst.ops["vtx"]["reg"] != 255:
            raise TranslateError(f"{inst.text()}: only outputs of the current vertex are translated", offset=inst.addr)
        self.attr_phys_ir(inst, inst.ops["a"]["attr"], 1, inst.ops["b"]["reg"], False)

    # --- gfx-geom: the geometry stage (lower/gfx_geometry.py) -------------------------------------------
    def out(self, inst: Inst) -> None:
        """OUT.EMIT / .CUT / .EMIT_THEN_CUT Rd, Ra (handle), Rb or imm (stream)."""
        b = inst.ops["b"]
        zero = b.get("reg", 255) == 255 if "reg" in b else b.get("imm", 1) == 0
        self.out_ir(inst, inst.mods["mode"], inst.ops["d"]["reg"], inst.ops["a"]["reg"], zero)

    def isberd(self, inst: Inst) -> None:
        """ISBERD Rd, [Ra], the plain form (NAK's only one for geometry inputs)."""
        a = inst.ops["a"]
        if inst.mods["mode"] or a["off"]:
            raise TranslateError(f"{inst.text()}: only the plain ISBERD Rd, [Ra] is translated", offset=inst.addr)
        self.isberd_ir(inst, inst.ops["d"]["reg"], a["reg"])

    def s2r_gfx(self, inst: Inst) -> None:
        """S2R in graphics stages: the geometry stage's SR_INVOCATION_INFO / SR_INVOCATION_ID."""
        sr = inst.ops["sr"]["sr"]
        if self.header.stage != "geometry" or sr not in GEOMETRY_SREGS:
            raise TranslateError(f"{inst.text()} (word {inst.word:#x}): not translated yet", offset=inst.addr)
        self.geometry_sreg_ir(inst, sr, inst.ops["d"]["reg"])

    def pixld(self, inst: Inst) -> None:
        """PIXLD (lower/gfx_pixel.py)."""
        self.pixld_ir(inst, inst.mods["mode"], inst.ops["d"]["reg"], inst.ops["p"]["pred"])

    def kill(self, ins: Inst) -> None:
        if self.header.stage != "fragment":
            super().kill(ins)
        dead, after = self.label(), self.label()
        # killed when both the guard and the operand predicate hold
        pp = ins.ops["pp"]
        b = Block()
        p = ir_spirv.emit_value(self, b, b.op("LAnd", b.get_pred(ins.pred, ins.pred_not), b.get_pred(pp["pred"], pp["not"])))
        self.do("OpSelectionMerge", after, 0)
        self.do("OpBranchConditional", p, dead, after)
        self.put_label(dead)
        self.do("OpKill")
        self.put_label(after)

    def _bindless_check(self, inst: Inst) -> int:
        """The handle register (2D only).  Source packing as Ryujinx documents it for Maxwell's
        bindless forms, assumed for Ampere's: the handle is the first register of the second
        source tuple (Rb), an LOD or bias follows it (Rb+1)."""
        ops = inst.ops
        if ops["dim"]["sym"] != 1:
            raise TranslateError(f"{inst.text()}: only 2D textures are translated yet", offset=inst.addr)
        return ops["b"]["reg"]

    def _bindless_dests(self, inst: Inst) -> list[int]:
        """Enabled components in order: two into the first pair, two into the second."""
        d, d2 = inst.ops["d"]["reg"], inst.ops["d2"]["reg"]
        return [r + i if r != 255 else 255 for r in (d, d2) for i in (0, 1)]

    def tex_bindless(self, inst: Inst) -> None:
        """TEX.B / TLD.B / TLD4.B: the handle in Rb picks the pool entries; coordinates in Ra, Ra+1,
        the LOD (.LL) or bias (.LB) in Rb+1 (rows ``BindlessFetch`` / ``BindlessGather`` /
        ``BindlessSample``)."""
        ir = inst.row.ir
        b = self._bindless_check(inst)
        lod = inst.mods.get("lod")
        a = inst.ops["a"]["reg"]
        xy = (a, a + 1 if a != 255 else 255)
        attrs: dict = {}
        if ir == "TLD.B":
            self._refuse_cl(inst)
            row, args = "BindlessFetch", (*xy, b + 1 if lod == 3 else None)
        elif ir == "TLD4.B":
            row, args, attrs = "BindlessGather", xy, {"comp": inst.mods["comp"]}
        elif lod in (0, 1, 3) or (lod == 2 and self.header.stage == "fragment"):
            row, args, attrs = "BindlessSample", (*xy, b + 1 if lod in (2, 3) else None), {"lod": lod}
        else:
            raise TranslateError(f"{inst.text()}: level-of-detail mode not translated here", offset=inst.addr)
        self.bindless_ir(row, b, args, inst.ops["mask"]["sym"], self._bindless_dests(inst), True, **attrs)

    def txq_bindless(self, inst: Inst) -> None:
        """TXQ.B TEX_HEADER_DIMENSION: the handle in Ra, the level in Ra+1 (Ryujinx's Maxwell
        packing); width, height, depth 1 and the level count of the pool entry."""
        if inst.ops["query"]["sym"] != 0:
            raise TranslateError(f"{inst.text()}: only TEX_HEADER_DIMENSION is translated", offset=inst.addr)
        a = inst.ops["a"]["reg"]
        level = a + 1 if a != 255 else None
        self.bindless_ir("BindlessQueryDims", a, (level,), inst.ops["mask"]["sym"], self._bindless_dests(inst), False)

    @staticmethod
    def _roles(arrayed: int, n: int, lod: bool) -> list[str]:
        return (["layer"] if arrayed else []) + ["x", "y", "z"][:n] + (["lod"] if lod else [])

    def tex_var(self, at: dict, depth: int | None) -> int:
        return self.image(at["inst"])  # image() reads the depth comparison from the instruction

    def _tex_ir(self, inst: Inst, row: str, regs: dict[str, int], args: tuple[str, ...], fl: bool, **attrs) -> None:
        """``tex_ir`` with the destinations of a bound instruction: the first two enabled
        components to the pair d, the rest to the pair d2."""
        d, d2 = inst.ops["d"]["reg"], inst.ops["d2"]["reg"]
        dests = [r + i if r != 255 else 255 for r in (d, d2) for i in (0, 1)]
        self.tex_ir(inst, row, regs, args, fl, inst.ops["mask"]["sym"], dests, **attrs)

    def tex(self, inst: Inst) -> None:
        dim, arrayed, n = self.target(inst)
        lod, dc = inst.mods["lod"], inst.mods.get("DC", 0)
        if lod not in (0, 1, 2, 3):
            raise TranslateError(f"{inst.text()}: level-of-detail mode not translated here", offset=inst.addr)
        if dc and (dim in ("1D", "3D") or inst.ops["mask"]["sym"] != 0x1 or lod == 2):
            raise TranslateError(
                f"{inst.text()}: a depth comparison is translated on 2D (array) and cube (array) "
                f"textures, without .LB, with the mask 0x1 (its other components depend on the "
                f"texture header's swizzle)",
                offset=inst.addr,
            )
        self.image(inst)  # the slot's refusals before the sources'
        regs = self.sources(inst, self._roles(arrayed, n, lod in (2, 3)) + ["dref"] * dc)
        self._tex_ir(inst, "TexSample", regs, TEX_ARGS, True, dim=dim, arrayed=arrayed, lod=lod, dc=dc)

    @staticmethod
    def _refuse_cl(inst: Inst) -> None:
        """TLD .CL (shader-tex: decoded since ptxas writes it on TLD.LL; translated in kernels,
        lower/texture.py) is refused in the graphics stages, naming the instruction."""
        if inst.mods.get("CL"):
            raise TranslateError(f"{inst.text()}: TLD .CL (level clamp) not translated in graphics stages", offset=inst.addr)

    def tld(self, inst: Inst) -> None:
        self._refuse_cl(inst)
        dim, arrayed, n = self.target(inst)
        self.image(inst)
        aoffi = inst.mods.get("AOFFI", 0)
        regs = self.sources(inst, self._roles(arrayed, n, inst.mods["lod"] == 3) + ["off"] * aoffi)
        self._tex_ir(inst, "TexFetch", regs, TLD_ARGS, True, dim=dim, arrayed=arrayed, aoffi=aoffi)

    def tld4(self, inst: Inst) -> None:
        """TLD4.R/G/B/A: one component of the four texels around the point, in the order
        Vulkan's OpImageGather gives them (the same as NVIDIA's); .AOFFI's offsets word (or
        .PTP's two words) and .DC's reference follow the coordinates in the source list
        (ptxas's packing; .PTP's two words where Mesa NAK puts them)."""
        dim, arrayed, n = self.target(inst)
        off, dc = inst.mods.get("off", 0), inst.mods.get("DC", 0)
        if off and dim == "Cube":
            raise TranslateError(
                f"{inst.text()}: offsets on a cube texture (Vulkan has no gather offsets for cubes)", offset=inst.addr
            )
        self.image(inst)
        offs = {1: ["off"], 2: ["ptp0", "ptp1"]}.get(off, [])
        regs = self.sources(inst, self._roles(arrayed, n, False) + offs + ["dref"] * dc)
        attrs = {"dim": dim, "arrayed": arrayed, "comp": inst.mods["comp"], "off": off, "dc": dc}
        self._tex_ir(inst, "TexGather", regs, TLD4_ARGS, True, **attrs)

    def txq(self, inst: Inst) -> None:
        """TXQ TEX_HEADER_DIMENSION of the slot's view: width, height, depth and the level count
        in x, y, z, w (the components in TXQ_KNOWN; others refused)."""
        if inst.ops["query"]["sym"] != 0:
            raise TranslateError(f"{inst.text()}: only TEX_HEADER_DIMENSION is translated", offset=inst.addr)
        dim, arrayed, n = self.target(inst)
        mask = inst.ops["mask"]["sym"]
        if mask & ~TXQ_KNOWN[dim, arrayed]:
            raise TranslateError(
                f"{inst.text()}: TXQ components {mask & ~TXQ_KNOWN[dim, arrayed]:#x} of a "
                f"{'array ' if arrayed else ''}{dim} texture are not translated (their meaning on "
                f"NVIDIA is not established here)",
                offset=inst.addr,
            )
        self._tex_ir(inst, "TexQueryDims", {"level": inst.ops["a"]["reg"]}, ("level",), False, dim=dim, arrayed=arrayed)

    def _tex2d_only(self, inst: Inst, what: str) -> None:
        """Refuse (offset, word, form) what TXD/TMML translate only on a bound 2D texture."""
        mods = inst.mods
        why = None
        if inst.ops["dim"]["sym"] != 1:
            why = f"{what} on a texture other than 2D (the operand packing of the others is not established)"
        elif mods.get("AOFFI") or mods.get("LC") or mods.get("NDV"):
            why = f"{what} with .AOFFI/.LC/.NDV"
        elif inst.ops.get("fault", {}).get("pred", 7) != 7:
            why = "a texture fault predicate"
        if why:
            raise TranslateError(f"{inst.text()} (word {inst.word:#x}): {why} is not translated", offset=inst.addr)

    def txd(self, inst: Inst) -> None:
        """TXD (explicit gradients, bound 2D): the point in Ra, Ra+1; the gradients in Rb..Rb+3
        as dP/dx.x, dP/dy.x, dP/dx.y, dP/dy.y (read off nvcc 13 sm_86 code of tex2DGrad: the
        derivatives interleaved by axis); components to the pairs d, d2 as TEX."""
        self._tex2d_only(inst, "TXD")
        self.image(inst)
        a, b = inst.ops["a"]["reg"], inst.ops["b"]["reg"]
        regs = {"x": a, "y": a + 1 if a != 255 else 255}
        regs.update({k: (b + i if b != 255 else 255) for i, k in enumerate(("dxx", "dyx", "dxy", "dyy"))})
        args = ("x", "y", "dxx", "dyx", "dxy", "dyy")
        self._tex_ir(inst, "TexSampleGrad", regs, args, True, dim="2D", arrayed=0)

    def tmml(self, inst: Inst) -> None:
        """TMML.LOD (bound 2D, fragment programs): the point in Ra, Ra+1 (Rb RZ: the row
        refuses another); the computed level of detail and the level read as 8.8 fixed point
        (``TexQueryLod``) in the first two enabled components."""
        self._tex2d_only(inst, "TMML")
        if inst.ops["b"]["reg"] != 255:
            raise TranslateError(f"{inst.text()} (word {inst.word:#x}): TMML with a second source", offset=inst.addr)
        self.image(inst)
        a = inst.ops["a"]["reg"]
        self._tex_ir(inst, "TexQueryLod", {"x": a, "y": a + 1 if a != 255 else 255}, ("x", "y"), False, dim="2D", arrayed=0)

    def op_ffma_glsl(self, inst: Inst) -> None:
        """FFMA as the device's fused multiply-add (no Float64 for the exact one)."""
        self.require(inst, FTZ=0, FMZ=0, rnd=0, SAT=0)
        self.fp32_ir(inst, "FFmaDevice32")

    def lower(self, inst: Inst) -> None:
        stages = inst.row.stages
        if "vertex" in stages and inst.row.ir in ("ALD", "AST"):  # gfx-geom: every vertex-processing stage
            stages = (*stages, "geometry")
        if stages and self.header.stage not in stages:
            raise TranslateError(
                f"{inst.text()}: {inst.mnemonic} does not exist in a {self.header.stage} program", offset=inst.addr
            )
        super().lower(inst)


def source_split(n: int, ncoord: int) -> int:
    """How many of a bound texture instruction's ``n`` source values Ra's tuple holds (Rb's
    holds the rest), as ptxas packs them for sm_86 (tests/shader_svc/test_tex_short_dims.py and
    test_tld4_offsets.py read it back): up to four values by count — one in Ra, three or four
    2 + the rest —; more than four: the ``ncoord`` layer and coordinate values in Ra, the level,
    offsets and reference in Rb (a cube array's layer, x, y, z + level is 4 + 1, a 3D fetch's
    x, y, z + level, offsets 3 + 2: Mesa NAK's two source vectors).  Two values: read as Ra's
    pair (``sources`` admits only Rb = RZ or Ra+1, where that and 1 + 1 agree)."""
    return {1: 1, 2: 2, 3: 2, 4: 2}[n] if n <= 4 else ncoord


def translate_graphics(insts: list[Inst], header: Header, features: int = 0) -> bytes:
    """SPIR-V binary of a vertex, geometry or fragment program (instructions after its header);
    ``features``: ``lower.graphics.FEATURE_*`` bits the device has."""
    return Gfx86(insts, header, features).build()
