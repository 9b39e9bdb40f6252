"""Surfaces (issue 31): SULD/SUST/SUATOM/SURED of both ISAs, the ``.D`` (raw data) forms with
the handle in a register (SM53's SUATOM.D: an immediate handle), into the IR rows
``SurfaceLoad32``/``SurfaceStore32``/``SurfaceAtomic32`` (``ir/ops.py``), and their SPIR-V.

Meaning (the convention of this translation, stated in shader_svc/README.md "Surfaces"):

- A surface handle is a 32-bit register.  CUDA passes a surface object as a 64-bit kernel
  parameter and nvcc/ptxas give SULD/SUST its low word (``LDG`` of 32 bits, then the handle
  register).  Its low ``HANDLE_SURFACE_BITS`` bits index the **surface pools**: descriptor set
  ``POOL_SET`` (1, as the bindless texture pools), one binding per dimension (``BINDINGS``: 2D
  2, 1D 3, 1D array 4, 2D array 5, 3D 6), each an array of ``SURFACE_POOL`` storage images of
  format R32ui (one 32-bit unsigned texel each); an instruction reads the pool of its
  dimension (a surface descriptor knows its own).  A handle outside the pool reads 0 and
  writes nothing.
- The address operand [Ra] is the coordinates Ra (x), Ra+1, Ra+2 as nvcc/ptxas pack PTX's
  ``suld.b``/``sust.b`` operands (read off their code): 1D x; 1D array x, layer; 2D x, y; 2D
  array x, y, layer; 3D x, y, z.  x is in bytes with ``.BA`` (PTX surface instructions always
  address x in bytes; the texel is x / 4 for 32-bit data, the low two bits ignored).
- The out-of-range mode (both ISAs: 0 ``.IGN``, 1 printed as nothing, 2 ``.TRAP``; read off
  nvcc's code for cudaBoundaryModeZero / Clamp / Trap, PTX ``.zero``/``.clamp``/``.trap``):
  with the middle one the (signed) texel coordinates are clamped into the image (the size the
  descriptor gives, ``OpImageQuerySize``); with the others, outside the image a load reads 0
  and a store or atomic does nothing.  ``.TRAP`` would stop the kernel there; that trap is not
  emulated (a correct kernel does not reach it).

Translated: 1D, 1D array, 2D, 2D array and 3D; loads and stores of every size (``.U8`` ...
``.128``: ``_surface_data``), atomics of ``.U32``/``.S32``,
``.BA``, any cache and (SM86) memory-order hint, SULD/SUATOM's fault predicate absent (PT).
Refused by name (offset, word, form): .1D_BUFFER, other sizes and types, element addressing
(no ``.BA``), a fault predicate, SUATOM.CAS, SUQUERY.

The pool's entries are picked by a switch whose cases index the array with constants (valid
whether or not the handle is the same in every invocation; lavapipe has no dynamic indexing
of storage image arrays), as ``lower/graphics.py``'s bindless textures do.
"""

from __future__ import annotations

from nxrecomp.common import kernel_pools
from shader_svc.ir import to_spirv as ir_spirv
from shader_svc.ir.block import Block, Value
from shader_svc.isa.inst import Inst
from shader_svc.lower.base import GLSL, LowerBase, TranslateError
from shader_svc.lower.memory import ATOMIC_OPS

POOL_SET = kernel_pools.POOL_SET
SURFACE_BINDING = kernel_pools.SURFACE_BINDINGS["2d"]  # 2D storage images (R32ui), pool entries 0..7; others: BINDINGS
SURFACE_POOL = kernel_pools.SURFACE_POOL
HANDLE_SURFACE_BITS = 20

# the dimension field (both ISAs) -> (SPIR-V Dim, arrayed, coordinates in Ra, Ra+1...: x first,
# the layer last, as nvcc/ptxas pack surf1D/1DLayered/2D/2DLayered/3D's) and the pool binding;
# .1D_BUFFER (1) is refused
DIMS = {0: ("1D", 0, 1), 2: ("1D", 1, 2), 3: ("2D", 0, 2), 4: ("2D", 1, 3), 5: ("3D", 0, 3)}
KINDS = {0: "1D", 2: "1D_ARRAY", 3: "2D", 4: "2D_ARRAY", 5: "3D"}  # the harness's names
# the dimension field -> its pool's binding (gpu-pools: kernel_pools.SURFACE_BINDINGS, one table
# with the GPU process)
BINDINGS = {dim: kernel_pools.SURFACE_BINDINGS[kind.lower()] for dim, kind in KINDS.items()}
SIZE_32 = 4  # the size field's .32 (printed as nothing), both ISAs
# the size field (both ISAs) -> (bytes, signed): .U8 .S8 .U16 .S16, 32 bits, .64, .128
SIZES = {0: (1, False), 1: (1, True), 2: (2, False), 3: (2, True), 4: (4, False), 5: (8, False), 6: (16, False)}
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

        if mods.get("dim") not in DIMS:
            no("a surface dimension other than .1D/.1D_ARRAY/.2D/.2D_ARRAY/.3D")
        if not mods.get("BA"):
            no("surface element addressing (no .BA)")
        if ir in ("SULD", "SUST") and mods.get("size") not in SIZES:
            no("this surface access size")
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
        n = DIMS[inst.mods["dim"]][2]  # coordinates in Ra, Ra+1, Ra+2 (the rest: 0)
        x, y, z = (b.get_reg(a + i) if a != 255 and i < n else b.const_u32(0) for i in range(3))
        kw = {"dim": inst.mods["dim"], "ba": 1, "clamp": clamp, "inst": inst}
        hv = inst.ops["h"] if "h" in inst.ops else inst.ops["c"]
        if "imm" in hv:
            handle = b.const_u32(hv["imm"])
        else:
            handle = b.get_reg(hv["reg"]) if hv["reg"] != 255 else b.const_u32(0)
        if ir in ("SULD", "SUST"):
            self._surface_data(b, inst, handle, x, y, z, kw)
        else:
            r = inst.ops["b"]["reg"]
            val = b.get_reg(r) if r != 255 else b.const_u32(0)
            old = b.emit("SurfaceAtomic32", handle, x, y, z, val, b.const_u32(0), op=op, esize=4, word=0, signed=0, **kw)
            if ir == "SUATOM":
                self._surface_dest(b, inst, old)
        ir_spirv.emit(self, b)

    def _surface_data(self, b: Block, inst: Inst, handle: Value, x: Value, y: Value, z: Value, kw: dict) -> None:
        """SULD/SUST of each size on the pool's 32-bit texels (the byte address x names texel
        x / 4): 32 bits one texel; .64/.128 the 2/4 texels of the element, one register each
        (Rd.., Rb..); .U8/.S8/.U16/.S16 the byte / halfword at x & 3 of its texel, zero- or sign-
        extended when loaded, stored by clearing then setting its bits with two atomics (the
        texel's other bytes may be stored by other invocations at the same time)."""
        nbytes, signed = SIZES[inst.mods["size"]]
        load = inst.row.ir == "SULD"
        r = inst.ops["d" if load else "b"]["reg"]
        for k in range(max(1, nbytes // 4)):
            at = dict(kw, esize=nbytes, word=k, signed=int(signed))
            if load:
                v = b.emit("SurfaceLoad32", handle, x, y, z, **at)
                if r != 255:
                    b.set_reg(r + k, v)
            else:
                b.emit("SurfaceStore32", handle, x, y, z, b.get_reg(r + k) if r != 255 else b.const_u32(0), **at)

    @staticmethod
    def _surface_dest(b: Block, inst: Inst, v: Value) -> None:
        d = inst.ops["d"]["reg"]
        if d != 255:
            b.set_reg(d, v)

    # --- SPIR-V -----------------------------------------------------------------------------
    def surface_pool(self, dim: int) -> tuple[int, int, int]:
        """(variable, image type, pointer type) of the pool of dimension field ``dim`` (declared
        on first use, with the ImageQuery capability, and Image1D for 1D ones)."""
        pools = self.__dict__.setdefault("_surface_pools", {})
        if dim not in pools:
            m, E = self.m, self.m.E
            sdim, arrayed, _ = DIMS[dim]
            if sdim == "1D" and not getattr(self, "_image1d_cap", False):
                m.emit("cap", "OpCapability", E("Capability", "Image1D"))
                self._image1d_cap = True
            img = m.type("OpTypeImage", self.u32, E("Dim", sdim), 0, arrayed, 0, 2, E("ImageFormat", "R32ui"))
            arr = m.type("OpTypeArray", img, self.c(SURFACE_POOL))
            uc = E("StorageClass", "UniformConstant")
            v = m.id()
            m.emit("types", "OpVariable", m.type("OpTypePointer", uc, arr), v, uc)
            m.emit("annot", "OpDecorate", v, E("Decoration", "DescriptorSet"), POOL_SET)
            m.emit("annot", "OpDecorate", v, E("Decoration", "Binding"), BINDINGS[dim])
            if not getattr(self, "_image_query_cap", False):
                m.emit("cap", "OpCapability", E("Capability", "ImageQuery"))
                self._image_query_cap = True
            self.interface.append(v)
            pools[dim] = (v, img, m.type("OpTypePointer", uc, img))
        return pools[dim]

    def surface_access(
        self, attrs: dict, kind: str, handle: int, x: int, y: int, z: int, value: int | None = None, cmp: int | None = None
    ) -> int | None:
        """``kind`` "load", "store" or an atomic op on word ``word`` of the element of
        ``esize`` bytes at byte x (module docstring): a switch over the pool's entries, each
        checking the element's coordinates against its image's size (x in elements of the
        texel row's bytes) or clamping them into it; the loaded (sub-words extracted) / old
        value (0 where nothing was read), None for a store."""
        m, E, u32, b_ = self.m, self.m.E, self.u32, self.bool
        pool, img_t, img_ptr = self.surface_pool(attrs["dim"])
        n = DIMS[attrs["dim"]][2]
        vn = m.type("OpTypeVector", u32, n) if n > 1 else u32
        v4 = m.type("OpTypeVector", u32, 4)
        es, word = attrs["esize"], attrs["word"]
        lg = es.bit_length() - 1
        ex = self.op("OpShiftRightArithmetic", u32, x, self.c(lg)) if attrs["ba"] else x  # element index
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
            size = self.op("OpImageQuerySize", vn, img)  # (width, height, depth | layers)
            sizes = [self.op("OpCompositeExtract", u32, size, i) for i in range(n)] if n > 1 else [size]
            # x in elements: a row holds width * 4 bytes
            sizes[0] = self.op("OpShiftRightLogical", u32, self.op("OpShiftLeftLogical", u32, sizes[0], self.c(2)), self.c(lg))
            coords = [ex, y, z][:n]
            if attrs["clamp"]:  # into [0, size - 1], signed (an empty image: nothing happens)
                cs = [
                    self.op(
                        "OpExtInst",
                        u32,
                        self.glsl,
                        GLSL["SMax"],
                        self.op("OpExtInst", u32, self.glsl, GLSL["SMin"], v, self.op("OpISub", u32, sz, self.c(1))),
                        self.c(0),
                    )
                    for v, sz in zip(coords, sizes)
                ]
                tests = [self.op("OpINotEqual", b_, sz, self.c(0)) for sz in sizes]
            else:
                cs = list(coords)
                tests = [self.op("OpULessThan", b_, v, sz) for v, sz in zip(coords, sizes)]
            inside = tests[0]
            for t in tests[1:]:
                inside = self.op("OpLogicalAnd", b_, inside, t)
            xb = self.op("OpShiftLeftLogical", u32, cs[0], self.c(lg))  # the element's byte address
            cs[0] = self.op("OpIAdd", u32, self.op("OpShiftRightLogical", u32, xb, self.c(2)), self.c(word))
            shift = self.op("OpShiftLeftLogical", u32, self.op("OpBitwiseAnd", u32, xb, self.c(3)), self.c(3))
            coord = self.op("OpCompositeConstruct", vn, *cs) if n > 1 else cs[0]
            body, inner = self.label(), self.label()
            self.do("OpSelectionMerge", inner, 0)
            self.do("OpBranchConditional", inside, body, inner)
            self.put_label(body)
            scope = self.c(E("Scope", "Device"))
            sem = self.c(E("MemorySemantics", "ImageMemory"))

            def texel_ptr() -> int:
                ptr_t = m.type("OpTypePointer", E("StorageClass", "Image"), u32)
                return self.op("OpImageTexelPointer", ptr_t, pool_texel(self, attrs["dim"], k), coord, self.c(0))

            if kind == "load":
                t = self.op("OpCompositeExtract", u32, self.op("OpImageRead", v4, img, coord), 0)
                if es < 4:
                    ext = "OpBitFieldSExtract" if attrs["signed"] else "OpBitFieldUExtract"
                    t = self.op(ext, u32, t, shift, self.c(8 * es))
                self.do("OpStore", res, t)
            elif kind == "store" and es < 4:  # clear the bytes, then set them: two atomics
                mask = self.c((1 << 8 * es) - 1)
                bits = self.op("OpShiftLeftLogical", u32, self.op("OpBitwiseAnd", u32, value, mask), shift)
                ptr = texel_ptr()
                keep = self.op("OpNot", u32, self.op("OpShiftLeftLogical", u32, mask, shift))
                self.op("OpAtomicAnd", u32, ptr, scope, sem, keep)
                self.op("OpAtomicOr", u32, ptr, scope, sem, bits)
            elif kind == "store":
                self.do("OpImageWrite", img, coord, self.op("OpCompositeConstruct", v4, value, self.c(0), self.c(0), self.c(0)))
            else:
                ptr = texel_ptr()
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


def pool_texel(lw: Surface, dim: int, k: int) -> int:
    """The pointer to pool entry ``k`` (OpImageTexelPointer takes the image variable's pointer)."""
    pool, _, img_ptr = lw.surface_pool(dim)
    return lw.op("OpAccessChain", img_ptr, pool, lw.c(k))
