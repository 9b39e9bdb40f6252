"""SM53 texture instructions in vertex and fragment programs: the short forms TEXS/TLDS/TLD4S
(two destination pairs, the component mask depending on whether the second pair is RZ, the
registers per target in TEXS_FORMS / TLDS_FORMS as ptxas packs them), the full forms TEX/TLD/
TLD4/TXQ (consecutive destination registers for the enabled components), and the bindless
forms (.B: the handle register picks the pool entries), on the shared graphics interface
(``lower/graphics.py``: slots, pools, gathers)."""

from __future__ import annotations

from shader_svc.lower.base import TranslateError
from shader_svc.lower.graphics import (
    GLSL_NCLAMP,  # noqa: F401  (the tests read it here)
    LOD_MODES,
    TEX_ARGS,
    TEX_SLOTS,
    TLD4_ARGS,
    TLD_ARGS,
    TXQ_KNOWN,
    GraphicsLowering,
)
from shader_svc.sm53.decode import Inst
from shader_svc.sm53.table import TEXS_DIM, TEXS_LOD, TLDS_DIM, TLDS_LOD
from shader_svc.sm53.to_spirv import Compute53

# TEXS / TLDS target -> (SPIR-V Dim, arrayed, LOD, Ra's registers, Rb's registers), each register
# named by its role: x/y/z (float coordinates for TEXS, integer texels for TLDS), "layer" (an
# integer), "lod", "off" (texel offsets).  The packing is the one ptxas (12.9, sm_53) makes
# (tests/shader_svc/test_tex_short_dims.py reads it back from ptxas's own output); the 2D rows
# are the ones this lowering had before.  TEXS .DC (implicit LOD: .LZ.DC's registers, as every
# implicit / .LZ pair ptxas makes shares them) compares with the reference; its result is R (what
# G, B, A hold depends on the texture header's swizzle, so masks other than R are refused).
# Targets ptxas was not seen to use (TEXS 1D, TLDS 1D.LL, TLDS .LL.AOFFI) and multisample (.MS)
# stay refused.
TEXS_FORMS = {
    1: ("2D", 0, "implicit", ("x",), ("y",)),
    2: ("2D", 0, "zero", ("x",), ("y",)),
    3: ("2D", 0, "level", ("x", "y"), ("lod",)),
    7: ("2D", 1, "implicit", ("layer", "x"), ("y",)),
    8: ("2D", 1, "zero", ("layer", "x"), ("y",)),
    10: ("3D", 0, "implicit", ("x", "y"), ("z",)),
    11: ("3D", 0, "zero", ("x", "y"), ("z",)),
    12: ("Cube", 0, "implicit", ("x", "y"), ("z",)),
    13: ("Cube", 0, "level", ("x", "y"), ("z", "lod")),
    # depth compare (.DC): the reference last; only the R result is translated
    4: ("2D", 0, "implicit", ("x", "y"), ("dref",)),
    5: ("2D", 0, "level", ("x", "y"), ("lod", "dref")),
    6: ("2D", 0, "zero", ("x", "y"), ("dref",)),
    9: ("2D", 1, "zero", ("layer", "x"), ("y", "dref")),
}
TLDS_FORMS = {
    0: ("1D", 0, "zero", ("x",), ()),
    2: ("2D", 0, "zero", ("x",), ("y",)),
    4: ("2D", 0, "zero", ("x", "y"), ("off",)),
    5: ("2D", 0, "level", ("x", "y"), ("lod",)),
    7: ("3D", 0, "zero", ("x", "y"), ("z",)),
    8: ("2D", 1, "zero", ("layer",), ("x", "y")),
}


def _form_names(forms: dict) -> str:
    dims, lods = (TEXS_DIM, TEXS_LOD) if forms is TEXS_FORMS else (TLDS_DIM, TLDS_LOD)
    return ", ".join(f"{lods[t] or '(implicit)'} {dims[t]}" for t in sorted(forms))


# TEX/TLD dimension field -> (SPIR-V Dim, arrayed, coordinate count); 1D declares the Sampled1D
# capability, cube arrays SampledCubeArray (Vulkan's imageCubeArray feature)
TEX_DIMS = {
    0: ("1D", 0, 1),
    1: ("1D", 1, 1),
    2: ("2D", 0, 2),
    3: ("2D", 1, 2),
    4: ("3D", 0, 3),
    6: ("Cube", 0, 3),
    7: ("Cube", 1, 3),
}


class Tex53(GraphicsLowering, Compute53):
    """The texture handlers of ``to_spirv_gfx.Gfx53`` (its ``RULES`` name them)."""

    # --- textures --------------------------------------------------------------------------------
    def _slot53(self, inst: Inst, dim: str = "2D", arrayed: int = 0, depth: int = 0) -> int:
        """The combined image sampler variable of the instruction's texture index (its binding's
        SPIR-V dimension ``dim`` / ``arrayed``; ``depth`` for a depth comparison), declared on
        first use; refuses an index without a binding or read as two dimensions."""
        slot = inst.ops["tid"]["imm"]
        if slot not in TEX_SLOTS:
            self.bad(inst, f"texture {slot:#x} has no binding (indices 0..3 are bindings 4..7)")
        if dim == "1D" and not getattr(self, "_sampled1d", False):
            self._sampled1d = True
            self.m.emit("cap", "OpCapability", self.m.E("Capability", "Sampled1D"))
        if dim == "Cube" and arrayed and not getattr(self, "_cube_array", False):
            self._cube_array = True  # Vulkan's imageCubeArray feature
            self.m.emit("cap", "OpCapability", self.m.E("Capability", "SampledCubeArray"))
        try:
            return self.slot_var(slot, dim, arrayed, depth)  # declares the image types on first use
        except TranslateError as e:
            self.bad(inst, str(e))

    def tex_var(self, at: dict, depth: int | None) -> int:
        inst = at["inst"]
        if depth is None:  # a query: the view the program samples the slot as
            depth = self._slot_dims().get(inst.ops["tid"]["imm"], ("2D", 0, 0))[2]
        return self._slot53(inst, at["dim"], at["arrayed"], depth)  # sets sampled_t

    def tex_short(self, inst: Inst) -> None:
        """TEXS/TLDS/TLD4S: components 0, 1 to the pair d, 2, 3 to the pair d2."""
        ops, mods, ir = inst.ops, inst.mods, inst.row.ir
        if mods.get("f16"):
            self.bad(inst, ".F16 results not translated yet")
        ra, rb = ops["a"]["reg"], ops["b"]["reg"]
        d, d2 = ops["d"]["reg"], ops["d2"]["reg"]
        dests = [d, d + 1 if d != 255 else 255, d2, d2 + 1 if d2 != 255 else 255]
        if ir in ("TEXS", "TLDS"):
            forms = TEXS_FORMS if ir == "TEXS" else TLDS_FORMS
            form = forms.get(mods["target"])
            if form is None:
                self.bad(inst, f"this {ir} target is not translated yet (translated: {_form_names(forms)})")
            if "dref" in form[4] and ops["mask"]["mask"] != 0x1:
                self.bad(
                    inst,
                    "a depth comparison's components other than R are not translated (the texture header's swizzle decides them)",
                )
            self._short_form(inst, form, ir == "TLDS", ops["mask"]["mask"], dests)
        else:
            self._slot53(inst, depth=mods["DC"])
            regs = {"x": ra}
            if mods["AOFFI"] or mods["DC"]:
                # ptxas: coordinates in Ra's pair, Rb's tuple the offsets word then the reference
                regs["y"] = ra + 1 if ra != 255 else 255
                rb_roles = ["off"] * mods["AOFFI"] + ["dref"] * mods["DC"]
                regs.update({role: (rb + i if rb != 255 else 255) for i, role in enumerate(rb_roles)})
            else:
                regs["y"] = rb
            attrs = {"dim": "2D", "arrayed": 0, "comp": mods["comp"], "off": mods["AOFFI"], "dc": mods["DC"]}
            self.tex_ir(inst, "TexGather", regs, TLD4_ARGS, True, 0x3 if d2 == 255 else 0xF, dests, **attrs)

    def _short_form(self, inst: Inst, form: tuple, fetch: bool, mask: int, dests: list[int]) -> None:
        """TEXS / TLDS on the registers ``form`` names (see TEXS_FORMS): Ra's tuple then Rb's,
        each register by its role; coordinates float (TEXS) or integer texels (TLDS), the layer an
        integer, TLDS's .AOFFI offsets added to the texel coordinates (signed 4-bit x at bits
        0..3, y at 4..7): ``TexSample`` / ``TexFetch``."""
        dim, arrayed, lod, ra_roles, rb_roles = form
        ra, rb = inst.ops["a"]["reg"], inst.ops["b"]["reg"]
        regs = {
            role: (r + i if r != 255 else 255) for r, roles in ((ra, ra_roles), (rb, rb_roles)) for i, role in enumerate(roles)
        }
        if fetch:
            attrs = {"dim": dim, "arrayed": arrayed, "aoffi": int("off" in regs)}
            self.tex_ir(inst, "TexFetch", regs, TLD_ARGS, True, mask, dests, **attrs)
        else:
            attrs = {"dim": dim, "arrayed": arrayed, "lod": LOD_MODES[lod], "dc": int("dref" in regs)}
            self.tex_ir(inst, "TexSample", regs, TEX_ARGS, True, mask, dests, **attrs)

    def tex_full(self, inst: Inst) -> None:
        """TEX/TLD: coordinates in Ra, Ra+1; LOD or bias in Rb; results in d, d+1, ... for the
        enabled components."""
        ops, mods, ir = inst.ops, inst.mods, inst.row.ir
        if ops["pd"]["pred"] != 7:
            self.bad(inst, "a texture predicate result is not translated yet")
        if mods.get("CL"):  # shader-tex: decoded (ptxas's TLD.LL.CL), translated in kernels only
            self.bad(inst, "TLD .CL (level clamp) is not translated in graphics stages")
        dim = TEX_DIMS.get(ops["dim"]["sym"])
        if dim is None or (ir == "TLD" and dim[0] == "Cube"):
            self.bad(inst, "fetches from cubes (TLD) are not translated (Vulkan fetches no texels from cubes)")
        spv_dim, arrayed, n = dim
        dc = ir == "TEX" and mods["DC"]
        if dc and (spv_dim == "3D" or spv_dim == "1D" or ops["mask"]["imm"] != 0x1 or mods["lod"] == 2):
            self.bad(
                inst,
                "a depth comparison is translated on 2D (array) and cube (array) textures, without "
                ".LB, with the mask 0x1 (its other components depend on the texture header's swizzle)",
            )
        self._slot53(inst, spv_dim, arrayed, int(dc))  # the slot's refusals before the sources'
        ra, rb, d = ops["a"]["reg"], ops["b"]["reg"], ops["d"]["reg"]
        # Ra's tuple: the array layer (an integer) first, then the coordinates (Ryujinx's reading
        # of Maxwell's TEX/TLD sources, and ptxas's)
        ra_roles = ["layer"] * arrayed + ["x", "y", "z"][:n]
        regs = {role: (ra + i if ra != 255 else 255) for i, role in enumerate(ra_roles)}
        mask = ops["mask"]["imm"]
        dests = [d + i if d != 255 else 255 for i in range(4)]
        if ir == "TEX":
            lod = {0: "implicit", 1: "zero", 2: "bias", 3: "level"}.get(mods["lod"])
            if lod is None:
                self.bad(inst, "level-of-detail mode not translated yet")
            if lod in ("implicit", "zero") and rb != 255 and not dc:
                self.bad(inst, "a second source register without .LL/.LB is not translated yet")
            # Rb's tuple: the level or bias, then a comparison's reference (ptxas's packing)
            rb_roles = ["lod"] * (lod in ("bias", "level") and (not dc or lod == "level")) + ["dref"] * dc
            regs.update({role: (rb + i if rb != 255 else 255) for i, role in enumerate(rb_roles)})
            attrs = {"dim": spv_dim, "arrayed": arrayed, "lod": LOD_MODES[lod], "dc": int(dc)}
            self.tex_ir(inst, "TexSample", regs, TEX_ARGS, True, mask, dests, **attrs)
        else:
            # Rb's tuple: the level (.LL), then the .AOFFI offsets word (ptxas's packing): signed
            # 4-bit x, y, z at bits 0, 4, 8, added to the texel coordinates
            rb_roles = ["lod"] * (mods["lod"] == 1) + ["off"] * mods["AOFFI"]
            if not rb_roles and rb != 255:
                self.bad(inst, "a second source register with .LZ is not translated yet")
            regs.update({role: (rb + i if rb != 255 else 255) for i, role in enumerate(rb_roles)})
            attrs = {"dim": spv_dim, "arrayed": arrayed, "aoffi": mods["AOFFI"]}
            self.tex_ir(inst, "TexFetch", regs, TLD_ARGS, True, mask, dests, **attrs)

    def tld4_53(self, inst: Inst) -> None:
        """TLD4 on a bound 2D, 2D array or cube texture: Ra's tuple the layer (an integer) then
        the coordinates, Rb's the .AOFFI offsets word then the .DC reference (ptxas's packing;
        tests/shader_svc/test_tld4_offsets.py); the gathered component's four texels in d.. per
        the mask (Vulkan's and NVIDIA's gather order).  .PTP: Rb's pair holds the per-texel offsets
        (Mesa NAK's packing: ptxas makes no .PTP, PTX having no per-texel offsets), then .DC's
        reference."""
        ops, mods = inst.ops, inst.mods
        if ops["pd"]["pred"] != 7:
            self.bad(inst, "a texture predicate result is not translated yet")
        dim = TEX_DIMS.get(ops["dim"]["sym"])
        if dim is None or dim[0] not in ("2D", "Cube"):
            self.bad(inst, "TLD4 is translated on 2D, 2D array and cube textures")
        spv_dim, arrayed, n = dim
        if spv_dim == "Cube" and mods["off"]:
            self.bad(inst, "offsets on a cube texture (Vulkan has no gather offsets for cubes)")
        ra, rb, d = ops["a"]["reg"], ops["b"]["reg"], ops["d"]["reg"]
        rb_roles = {1: ["off"], 2: ["ptp0", "ptp1"]}.get(mods["off"], []) + (["dref"] if mods["DC"] else [])
        if not rb_roles and rb != 255:
            self.bad(inst, "a second source register in TLD4 without .AOFFI / .DC")
        ra_roles = ["layer"] * arrayed + ["x", "y", "z"][:n]
        regs = {role: (ra + i if ra != 255 else 255) for i, role in enumerate(ra_roles)}
        regs.update({role: (rb + i if rb != 255 else 255) for i, role in enumerate(rb_roles)})
        attrs = {"dim": spv_dim, "arrayed": arrayed, "comp": mods["comp"], "off": mods["off"], "dc": mods["DC"]}
        dests = [d + i if d != 255 else 255 for i in range(4)]
        self.tex_ir(inst, "TexGather", regs, TLD4_ARGS, True, ops["mask"]["imm"], dests, **attrs)

    def _tex2d53(self, inst: Inst, what: str) -> int:
        """The destination register of a TXD/TMML on a bound 2D texture; refuses (offset, word,
        form) the rest: other dimensions (their operand packing is not established), .AOFFI,
        .LC, .NDV, a fault predicate."""
        ops, mods = inst.ops, inst.mods
        if ops["dim"]["sym"] != 2:
            self.bad(inst, f"{what} on a texture other than 2D is not translated")
        if mods.get("AOFFI") or mods.get("LC") or mods.get("NDV"):
            self.bad(inst, f"{what} with .AOFFI/.LC/.NDV is not translated")
        if ops.get("pd", {}).get("pred", 7) != 7:
            self.bad(inst, "a texture predicate result is not translated yet")
        self._slot53(inst, "2D", 0, 0)
        return ops["d"]["reg"]

    def txd53(self, inst: Inst) -> None:
        """TXD (bound 2D): the point in Ra, Ra+1, the gradients in Rb..Rb+3 as dP/dx.x, dP/dy.x,
        dP/dx.y, dP/dy.y (read off ptxas 12.9's sm_53 code of tex2DGrad, as on SM86); the enabled
        components to d, d+1, ... (``TexSampleGrad``)."""
        d = self._tex2d53(inst, "TXD")
        a, b = inst.ops["a"]["reg"], inst.ops["b"]["reg"]
        regs = {"x": a, "y": a + 1 if a != 255 else 255}
        regs.update({k: (b + i if b != 255 else 255) for i, k in enumerate(("dxx", "dyx", "dxy", "dyy"))})
        dests = [d + i if d != 255 else 255 for i in range(4)]
        args = ("x", "y", "dxx", "dyx", "dxy", "dyy")
        self.tex_ir(inst, "TexSampleGrad", regs, args, True, inst.ops["mask"]["imm"], dests, dim="2D", arrayed=0)

    def tmml53(self, inst: Inst) -> None:
        """TMML.LOD (bound 2D, fragment programs): the point in Ra, Ra+1; TMML's two 8.8
        fixed-point words (``TexQueryLod``) in d, d+1 for the enabled components."""
        d = self._tex2d53(inst, "TMML")
        a = inst.ops["a"]["reg"]
        dests = [d + i if d != 255 else 255 for i in range(4)]
        regs = {"x": a, "y": a + 1 if a != 255 else 255}
        self.tex_ir(inst, "TexQueryLod", regs, ("x", "y"), False, inst.ops["mask"]["imm"], dests, dim="2D", arrayed=0)

    def tex_bindless53(self, inst: Inst) -> None:
        """TEX.B / TLD.B / TLD4.B: the handle in Rb (the first register of the second source tuple, as
        Ryujinx reads Maxwell's bindless forms), the level (.LL) or bias (.LB) in Rb+1,
        coordinates in Ra, Ra+1; the rows and the pools are the shared lowering's (set 1)."""
        ops, mods, ir = inst.ops, inst.mods, inst.row.ir
        if ops["dim"]["sym"] != 2:
            self.bad(inst, "only 2D textures are translated yet")
        ra, rb, d = ops["a"]["reg"], ops["b"]["reg"], ops["d"]["reg"]
        if rb == 255:
            self.bad(inst, "a bindless handle of RZ")
        xy = (ra, ra + 1 if ra != 255 else 255)
        dests = [d + i if d != 255 else 255 for i in range(4)]
        attrs: dict = {}
        if ir == "TLD.B":
            if mods.get("CL"):  # shader-tex: translated in kernels only
                self.bad(inst, "TLD .CL (level clamp) is not translated in graphics stages")
            row, args = "BindlessFetch", (*xy, rb + 1 if mods["lod"] == 1 else None)
        elif ir == "TLD4.B":
            # a gather reads level 0 whatever the derivatives, so .NDV changes nothing
            row, args, attrs = "BindlessGather", xy, {"comp": mods["comp"]}
        else:
            lod = {0: "implicit", 1: "zero", 2: "bias", 3: "level"}.get(mods["lod"])
            if lod is None or mods["NDV"]:
                self.bad(inst, "level-of-detail mode not translated yet")
            if lod == "bias" and self.header.stage != "fragment":
                self.bad(inst, "LOD bias outside a fragment program")
            row, args, attrs = "BindlessSample", (*xy, rb + 1 if lod in ("bias", "level") else None), {"lod": mods["lod"]}
        self.bindless_ir(row, rb, args, ops["mask"]["imm"], dests, True, **attrs)

    def txq_bindless53(self, inst: Inst) -> None:
        """TXQ.B TEX_HEADER_DIMENSION: the handle in Ra, the level in Ra+1 (Ryujinx's reading of
        Maxwell's bindless TXQ); width, height, depth 1 and the level count of the pool entry."""
        ops = inst.ops
        if ops["query"]["sym"] != 1:
            self.bad(inst, "only TEX_HEADER_DIMENSION is translated")
        ra = ops["a"]["reg"]
        if ra == 255:
            self.bad(inst, "a bindless handle of RZ")
        d = ops["d"]["reg"]
        self.bindless_ir(
            "BindlessQueryDims", ra, (ra + 1,), ops["mask"]["imm"], [d + i if d != 255 else 255 for i in range(4)], False
        )

    def _slot_dims(self) -> dict[int, tuple[str, int, int]]:
        """Slot -> (SPIR-V Dim, arrayed, depth comparison) as the program's sampling / fetching
        instructions read it (TXQ has no dimension of its own and queries the slot's view)."""
        if getattr(self, "_dims_seen", None) is None:
            self._dims_seen = {}
            for ins in self.insts:
                ir, ops = ins.row.ir, ins.ops
                if ir in ("TEX", "TLD", "TLD4"):
                    d = TEX_DIMS.get(ops["dim"]["sym"])
                elif ir in ("TEXS", "TLDS"):
                    d = (TEXS_FORMS if ir == "TEXS" else TLDS_FORMS).get(ins.mods["target"])
                elif ir == "TLD4S":
                    d = ("2D", 0)
                else:
                    continue
                if d is not None:
                    depth = (
                        int(bool(ins.mods.get("DC"))) if ir in ("TLD4", "TLD4S", "TEX") else int(ir == "TEXS" and "dref" in d[4])
                    )
                    self._dims_seen.setdefault(ops["tid"]["imm"], (d[0], d[1], depth))
        return self._dims_seen

    def txq53(self, inst: Inst) -> None:
        """TXQ TEX_HEADER_DIMENSION of the slot's view (the dimension the program samples it
        as, 2D when only TXQ reads it): width, height, depth, level count in x, y, z, w.  Which
        component carries what on NVIDIA is known for width, height, 3D depth (ptxas compiles
        PTX's txq.width / .height / .depth to components 0x1 / 0x2 / 0x4) and the levels as the
        2D lowering had them (a 2D view's depth 1 too); asking a 1D view for its height, a cube
        for its depth or an array for its layer count is refused (not established here)."""
        ops = inst.ops
        if ops["query"]["sym"] != 1:
            self.bad(inst, "only TEX_HEADER_DIMENSION is translated")
        dim, arrayed, _ = self._slot_dims().get(ops["tid"]["imm"], ("2D", 0, 0))
        mask = ops["mask"]["imm"]
        known = TXQ_KNOWN[dim, arrayed]
        if mask & ~known:
            self.bad(
                inst,
                f"TXQ components {mask & ~known:#x} of a {'array ' if arrayed else ''}{dim} texture are "
                f"not translated (their meaning on NVIDIA is not established here)",
            )
        d = ops["d"]["reg"]
        dests = [d + i if d != 255 else 255 for i in range(4)]
        regs = {"level": ops["a"]["reg"]}
        self.tex_ir(inst, "TexQueryDims", regs, ("level",), False, mask, dests, dim=dim, arrayed=arrayed)
