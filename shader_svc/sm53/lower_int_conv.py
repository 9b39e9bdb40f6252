"""SM53 integer conversions and VABSDIFF4 (a mixin of ``lower_int.Int53``): I2I between
8/16/32-bit types (byte select, |x|/-x, .SAT) and VABSDIFF4 (four byte lanes); the scalar video
ops are ``lower_video``'s.  Contract: each ``op_*`` lowers one decoded instruction into IR rows
and emits them; VABSDIFF4's .SAT and .CC destination are refused.  Facts: the PTX ISA's cvt and
vabsdiff4; field layouts from sm53/table.py (checked against nvdisasm)."""

from __future__ import annotations

from shader_svc.ir import to_spirv as ir_spirv
from shader_svc.ir.block import Block, Value
from shader_svc.sm53.decode import Inst
from shader_svc.sm53.lower import Lower53


class IntConv53(Lower53):
    """Mixin of ``lower_int.Int53`` (see the module's docstring)."""

    def _i2i(self, inst: Inst) -> None:
        """I2I between 8/16/32-bit integer types: the source field (byte select .B1..B3) extended
        by its sign, |x| / -x, then the destination width, saturated with .SAT."""
        mods, v = inst.mods, inst.ops["b"]
        widths = {0: 8, 1: 16, 2: 32, 4: 8, 5: 16, 6: 32}
        if mods["src"] not in widths or mods["dst"] not in widths:
            self.bad(inst, "64-bit I2I not translated yet")
        sw, ssig = widths[mods["src"]], mods["src"] >= 4
        dw, dsig = widths[mods["dst"]], mods["dst"] >= 4
        b = Block()
        raw = b.get_reg(v["reg"]) if "reg" in v else b.cbank_u32(v["bank"], v["off"], inst)
        x = self._int_field(b, raw, v, sw, ssig)
        if v.get("abs") and ssig:
            x = b.op("SAbs32", x)
        if v.get("neg"):
            x = b.op("INeg32", x)
        signed_val = ssig or bool(v.get("neg"))
        if mods["SAT"]:
            lo, hi = (-(1 << (dw - 1)), (1 << (dw - 1)) - 1) if dsig else (0, (1 << dw) - 1)
            if signed_val:
                x = b.op("SMax32", x, b.const_u32(lo))
                if not (dsig and dw == 32) and hi < 2**31:
                    x = b.op("SMin32", x, b.const_u32(hi))
            else:
                x = b.op("UMin32", x, b.const_u32(hi))
        if dw < 32:
            z = b.const_u32(0)
            x = b.op("SBitExtract32" if dsig else "UBitExtract32", x, z, b.const_u32(dw))
        self.put_ir(b, inst, x)
        if inst.ops["d"].get("cc"):
            self.logic_cc_ir(b, x)
        ir_spirv.emit(self, b)

    def op_i2i(self, inst: Inst) -> None:
        self._i2i(inst)

    def op_vabsdiff4(self, inst: Inst) -> None:
        """VABSDIFF4 (PTX vabsdiff4): per byte |Va - Vb| of the bytes a's and b's selectors pick
        from the eight bytes of {b, a} (a's bytes 0..3, b's 4..7; a selector's digits name the
        source of result bytes 3..0, defaults .3210 and .7654), each extended by its operand's
        sign (.U8/.S8); .ACC adds the bytes the mask (.X = byte 0 ... .W = byte 3) selects to c,
        without it those bytes are written and the others come from c (PTX's SIMD merge).
        Refused: .SAT and the .CC destination."""
        mods, ops = inst.mods, inst.ops
        self.need(inst, SAT=0)
        if ops["d"].get("cc"):
            self.bad(inst, "VABSDIFF4 with the condition code not translated yet")
        row = {o.name: o for o in inst.row.operands}
        b = Block()
        x, y, c = self.val_ir(b, inst, "a"), self.val_ir(b, inst, "b"), self.val_ir(b, inst, "c")

        def picked(name: str, signed: bool) -> list[Value]:
            text = dict(row[name].sel4[1])[ops[name]["sel4"]] or (".3210" if name == "a" else ".7654")
            src = [int(ch) for ch in text[1:]][::-1]  # result byte 0 first
            op = "SBitExtract32" if signed else "UBitExtract32"
            return [b.op(op, x if k < 4 else y, b.const_u32(8 * (k & 3)), b.const_u32(8)) for k in src]

        va, vb = picked("a", bool(mods["signs"] & 1)), picked("b", bool(mods["signs"] & 2))
        diffs = [b.op("SAbs32", b.op("ISub32", p, q)) for p, q in zip(va, vb)]
        mask = mods["mask"]
        if mods["red"]:
            r = c
            for k, dk in enumerate(diffs):
                if mask >> k & 1:
                    r = b.op("IAdd32", r, dk)
        else:
            keep = sum(0xFF << (8 * k) for k in range(4) if not mask >> k & 1)
            r = b.op("IAnd32", c, b.const_u32(keep))
            for k, dk in enumerate(diffs):
                if mask >> k & 1:
                    r = b.op("IOr32", r, b.op("IShl32", b.op("IAnd32", dk, b.const_u32(0xFF)), b.const_u32(8 * k)))
        self.put_ir(b, inst, r)
        ir_spirv.emit(self, b)
