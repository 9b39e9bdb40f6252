"""Surfaces (issue 31): SULD/SUST/SUATOM/SURED of both ISAs, the ``.D`` (raw data) forms with
the handle in a register (SM53's SUATOM.D: an immediate handle), into the IR rows
``SurfaceLoad32``/``SurfaceStore32``/``SurfaceAtomic32`` (``ir/ops.py``), and their SPIR-V.

Meaning (the convention of this translation, stated in shader_svc/README.md "Surfaces"):

- A surface handle is a 32-bit register.  CUDA passes a surface object as a 64-bit kernel
  parameter and nvcc/ptxas give SULD/SUST its low word (``LDG`` of 32 bits, then the handle
  register).  Its low ``HANDLE_SURFACE_BITS`` bits index the **surface pool**: descriptor set
  ``POOL_SET`` (1, as the bindless texture pools), binding ``SURFACE_BINDING`` (2), an array of
  ``SURFACE_POOL`` 2D storage images of format R32ui (one 32-bit unsigned texel each).  A handle
  outside the pool reads 0 and writes nothing.
- The address operand [Ra] is the coordinate pair Ra (x), Ra+1 (y) as PTX's ``suld.b``/
  ``sust.b`` give it: x in bytes with ``.BA`` (PTX surface instructions always address x in
  bytes; the texel is x / 4 for 32-bit data, the low two bits ignored), y in rows.
- The out-of-range mode (both ISAs: 0 ``.IGN``, 1 printed as nothing, 2 ``.TRAP``; read off
  nvcc's code for cudaBoundaryModeZero / Clamp / Trap, PTX ``.zero``/``.clamp``/``.trap``):
  with the middle one the (signed) texel coordinates are clamped into the image (the size the
  descriptor gives, ``OpImageQuerySize``); with the others, outside the image a load reads 0
  and a store or atomic does nothing.  ``.TRAP`` would stop the kernel there; that trap is not
  emulated (a correct kernel does not reach it).

Translated: 2D (``.2D``), 32-bit data (size field ``.32``, atomic type ``.U32``/``.S32``),
``.BA``, any cache and (SM86) memory-order hint, SULD/SUATOM's fault predicate absent (PT).
Refused by name (offset, word, form): other dimensions, sizes and types, element addressing
(no ``.BA``), a fault predicate, SUATOM.CAS, SUQUERY.

The pool's entries are picked by a switch whose cases index the array with constants (valid
whether or not the handle is the same in every invocation; lavapipe has no dynamic indexing
of storage image arrays), as ``lower/graphics.py``'s bindless textures do.
"""

from __future__ import annotations

from shader_svc.ir import to_spirv as ir_spirv
from shader_svc.ir.block import Block, Value
from shader_svc.isa.inst import Inst
from shader_svc.lower.base import GLSL, LowerBase, TranslateError
from shader_svc.lower.memory import ATOMIC_OPS

POOL_SET = 1
SURFACE_BINDING = 2  # set 1 binding 2: storage images (2D, R32ui), pool entries 0..7
SURFACE_POOL = 8
HANDLE_SURFACE_BITS = 20

DIM_2D = 3  # the dimension field's .2D, both ISAs
SIZE_32 = 4  # the size field's .32 (printed as nothing), both ISAs
CLAMP = 1  # the out-of-range field's clamp mode (printed as nothing), both ISAs

SURFACE_RULES = {"SULD": "op_surface", "SUST": "op_surface", "SUATOM": "op_surface", "SURED": "op_surface"}


class Surface(LowerBase):
    """Mixin of both ISAs' compute lowering: the handlers of ``SURFACE_RULES`` and the SPIR-V of
    the surface IR rows (``ir/to_spirv.py`` calls ``surface_access``)."""

    def lowered(self, ir: str) -> bool:
        return ir in SURFACE_RULES or super().lowered(ir)

    # --- the instructions -------------------------------------------------------------------
    def _surface_form(self, inst: Inst) -> None:
        """Refuse, naming the form, what this translation does not cover (module docstring)."""
        mods, ir = inst.mods, inst.row.ir

        def no(what: str) -> None:
            raise TranslateError(f"{inst.text()} (word {inst.word:#x}): {what} not translated", offset=inst.addr)

        if mods.get("dim") != DIM_2D:
            no("a surface dimension other than .2D")
        if not mods.get("BA"):
            no("surface element addressing (no .BA)")
        if ir in ("SULD", "SUST") and mods.get("size") != SIZE_32:
            no("a surface access size other than 32 bits")
        if ir in ("SUATOM", "SURED") and mods.get("type", 0) not in (0, 1):
            no("a surface atomic type other than .U32/.S32")
        p = inst.ops.get("p")
        if p is not None and (p["pred"] != 7 or p["not"]):
            no("a surface fault predicate")

    def op_surface(self, inst: Inst) -> None:
        """SULD/SUST/SUATOM/SURED .D.BA.2D of 32-bit data: the IR surface rows."""
        self._surface_form(inst)
        ir = inst.row.ir
        op = None
        if ir in ("SUATOM", "SURED"):
            op = ATOMIC_OPS.get(inst.mods["op"])
            if op is None:
                raise TranslateError(
                    f"{inst.text()} (word {inst.word:#x}): this surface atomic operation not translated", offset=inst.addr
                )
            if isinstance(op, tuple):
                op = op[1 if inst.mods.get("type") == 1 else 0]
        clamp = int(inst.mods.get("clamp") == CLAMP)
        b = Block()
        a = inst.ops["addr"]["reg"]
        x, y = (b.const_u32(0), b.const_u32(0)) if a == 255 else (b.get_reg(a), b.get_reg(a + 1))
        hv = inst.ops["h"] if "h" in inst.ops else inst.ops["c"]
        if "imm" in hv:
            handle = b.const_u32(hv["imm"])
        else:
            handle = b.get_reg(hv["reg"]) if hv["reg"] != 255 else b.const_u32(0)
        if ir == "SULD":
            self._surface_dest(b, inst, b.emit("SurfaceLoad32", handle, x, y, ba=1, clamp=clamp, inst=inst))
        else:
            r = inst.ops["b"]["reg"]
            val = b.get_reg(r) if r != 255 else b.const_u32(0)
            if ir == "SUST":
                b.emit("SurfaceStore32", handle, x, y, val, ba=1, clamp=clamp, inst=inst)
            else:
                old = b.emit("SurfaceAtomic32", handle, x, y, val, b.const_u32(0), op=op, ba=1, clamp=clamp, inst=inst)
                if ir == "SUATOM":
                    self._surface_dest(b, inst, old)
        ir_spirv.emit(self, b)

    @staticmethod
    def _surface_dest(b: Block, inst: Inst, v: Value) -> None:
        d = inst.ops["d"]["reg"]
        if d != 255:
            b.set_reg(d, v)

    # --- SPIR-V -----------------------------------------------------------------------------
    def surface_pool(self) -> int:
        """The surface pool variable (declared on first use, with the ImageQuery capability)."""
        if getattr(self, "_surface_pool", None) is None:
            m, E = self.m, self.m.E
            img = m.type("OpTypeImage", self.u32, E("Dim", "2D"), 0, 0, 0, 2, E("ImageFormat", "R32ui"))
            arr = m.type("OpTypeArray", img, self.c(SURFACE_POOL))
            uc = E("StorageClass", "UniformConstant")
            v = m.id()
            m.emit("types", "OpVariable", m.type("OpTypePointer", uc, arr), v, uc)
            m.emit("annot", "OpDecorate", v, E("Decoration", "DescriptorSet"), POOL_SET)
            m.emit("annot", "OpDecorate", v, E("Decoration", "Binding"), SURFACE_BINDING)
            if not getattr(self, "_image_query_cap", False):
                m.emit("cap", "OpCapability", E("Capability", "ImageQuery"))
                self._image_query_cap = True
            self.interface.append(v)
            self._surface_pool = (v, img, m.type("OpTypePointer", uc, img))
        return self._surface_pool

    def surface_access(
        self, attrs: dict, kind: str, handle: int, x: int, y: int, value: int | None = None, cmp: int | None = None
    ) -> int | None:
        """``kind`` "load", "store" or an atomic op: a switch over the pool's entries, each
        checking (x, y) against its image's size (or clamping them into it); the loaded / old
        value (0 where nothing was read), None for a store."""
        m, E, u32, b_ = self.m, self.m.E, self.u32, self.bool
        pool, img_t, img_ptr = self.surface_pool()
        v2 = m.type("OpTypeVector", u32, 2)
        v4 = m.type("OpTypeVector", u32, 4)
        tx = self.op("OpShiftRightArithmetic", u32, x, self.c(2)) if attrs["ba"] else x
        idx = self.op("OpBitwiseAnd", u32, handle, self.c((1 << HANDLE_SURFACE_BITS) - 1))
        sel = self.op("OpSelect", u32, self.op("OpULessThan", b_, idx, self.c(SURFACE_POOL)), idx, self.c(0xFFFFFFFF))
        res = None
        if kind != "store":
            res = self.var(f"surf{len(self.vars)}", self.fn_u32)
            self.do("OpStore", res, self.c(0))
        merge = self.label()
        labels = [self.label() for _ in range(SURFACE_POOL)]
        self.do("OpSelectionMerge", merge, 0)
        self.do("OpSwitch", sel, merge, *[x_ for k, lab in enumerate(labels) for x_ in (k, lab)])
        for k, lab in enumerate(labels):
            self.put_label(lab)
            img = self.op("OpLoad", img_t, self.op("OpAccessChain", img_ptr, pool, self.c(k)))
            size = self.op("OpImageQuerySize", v2, img)
            w, h = self.op("OpCompositeExtract", u32, size, 0), self.op("OpCompositeExtract", u32, size, 1)
            if attrs["clamp"]:  # into [0, size - 1], signed (an empty image: nothing happens)
                cx, cy = (
                    self.op(
                        "OpExtInst",
                        u32,
                        self.glsl,
                        GLSL["SMax"],
                        self.op("OpExtInst", u32, self.glsl, GLSL["SMin"], v, self.op("OpISub", u32, n, self.c(1))),
                        self.c(0),
                    )
                    for v, n in ((tx, w), (y, h))
                )
                inside = self.op(
                    "OpLogicalAnd", b_, self.op("OpINotEqual", b_, w, self.c(0)), self.op("OpINotEqual", b_, h, self.c(0))
                )
            else:
                cx, cy = tx, y
                inside = self.op("OpLogicalAnd", b_, self.op("OpULessThan", b_, tx, w), self.op("OpULessThan", b_, y, h))
            coord = self.op("OpCompositeConstruct", v2, cx, cy)
            body, inner = self.label(), self.label()
            self.do("OpSelectionMerge", inner, 0)
            self.do("OpBranchConditional", inside, body, inner)
            self.put_label(body)
            if kind == "load":
                texel = self.op("OpImageRead", v4, img, coord)
                self.do("OpStore", res, self.op("OpCompositeExtract", u32, texel, 0))
            elif kind == "store":
                self.do("OpImageWrite", img, coord, self.op("OpCompositeConstruct", v4, value, self.c(0), self.c(0), self.c(0)))
            else:
                ptr = self.op(
                    "OpImageTexelPointer",
                    m.type("OpTypePointer", E("StorageClass", "Image"), u32),
                    pool_texel(self, k),
                    coord,
                    self.c(0),
                )
                scope = self.c(E("Scope", "Device"))
                sem = self.c(E("MemorySemantics", "ImageMemory"))
                if kind == "Cas":
                    old = self.op("OpAtomicCompareExchange", u32, ptr, scope, sem, sem, value, cmp)
                else:
                    old = self._atomic_at(ptr, scope, sem, kind, value)
                self.do("OpStore", res, old)
            self.do("OpBranch", inner)
            self.put_label(inner)
            self.do("OpBranch", merge)
        self.put_label(merge)
        return None if res is None else self.op("OpLoad", u32, res)


def pool_texel(lw: Surface, k: int) -> int:
    """The pointer to pool entry ``k`` (OpImageTexelPointer takes the image variable's pointer)."""
    pool, _, img_ptr = lw.surface_pool()
    return lw.op("OpAccessChain", img_ptr, pool, lw.c(k))
