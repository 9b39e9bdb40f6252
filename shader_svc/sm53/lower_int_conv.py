"""SM53 integer conversions and video ops (a mixin of ``lower_int.Int53``): I2I between
8/16/32-bit types (byte select, |x|/-x, .SAT), VABSDIFF/VMNMX (a byte/half/word of each operand,
then the second step with C: .ACC, .MIN/.MAX, .MRG_16H/L) and VABSDIFF4 (four byte lanes).
Contract: each ``op_*`` lowers one decoded instruction into IR rows and emits them; .SAT video
forms and video .CC destinations are refused.  Facts: the PTX ISA's cvt, vabsdiff/vmin/vmax
(scalar forms) and vabsdiff4; field layouts from sm53/table.py (checked against nvdisasm)."""

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

    # --- video ops (VABSDIFF, VMNMX) ------------------------------------------------------
    def _vsrc64(self, b: Block, inst: Inst, name: str, t: int) -> Value:
        """A video op's source as a 64-bit integer: the byte (sel 0..3), half (4, 5) or word (6)
        the type ``t`` selects (sel | sign << 3), extended by its sign or zeros."""
        sel, signed = t & 7, bool(t >> 3)
        x = self.raw_ir(b, inst, name)
        if sel < 6:
            off, w = (8 * sel, 8) if sel < 4 else (16 * (sel - 4), 16)
            x = b.op("SBitExtract32" if signed else "UBitExtract32", x, b.const_u32(off), b.const_u32(w))
        return b.op("SExt64" if signed else "ZExt64", x)

    @staticmethod
    def _lt64(b: Block, x: Value, y: Value) -> Value:
        """x < y for 64-bit values that are 33-bit integers (extended bytes/halves/words): the
        difference's sign."""
        d = b.op("IAdd64", x, b.op("IMul64", y, b.const_u64(2**64 - 1)))
        return b.op("INe64", b.op("Shr64", d, b.const_u64(63)), b.const_u64(0))

    def op_video(self, inst: Inst) -> None:
        """VABSDIFF (|a - b|) and VMNMX (min, or max with .MX, of a and b), each operand a
        byte/half/word of its type (PTX ISA: vabsdiff / vmin / vmax, scalar forms), then the
        second step with C: .ACC adds it, .MIN/.MAX compare with it (unsigned with .UD, or
        without VABSDIFF's .SD), .MRG_16H/.MRG_16L write the result's low half into C's high or
        low half; no step: the result alone.  Refused: .SAT and the .CC destination."""
        mods = inst.mods
        self.need(inst, SAT=0)
        if inst.ops["d"].get("cc"):
            self.bad(inst, "video op with the condition code not translated yet")
        b = Block()
        x, y = self._vsrc64(b, inst, "a", mods["ta"]), self._vsrc64(b, inst, "b", mods["tb"])
        lt = self._lt64(b, x, y)
        if inst.row.ir == "VABSDIFF":
            neg1 = b.const_u64(2**64 - 1)
            d = b.op("Select64", lt, b.op("IAdd64", y, b.op("IMul64", x, neg1)), b.op("IAdd64", x, b.op("IMul64", y, neg1)))
            signed_d = bool(mods["SD"])
        else:
            d = b.op("Select64", b.op("LXor", lt, b.const_bool(bool(mods["MX"]))), x, y)
            signed_d = mods["UD"] == 1
        r = b.op("Trunc32", d)
        step = mods["step"]
        c = self.val_ir(b, inst, "c")
        if step == 4:
            r = b.op("IAdd32", r, c)
        elif step in (5, 6):
            kind = ("S" if signed_d else "U") + ("Min32" if step == 5 else "Max32")
            r = b.op(kind, r, c)
        elif step == 0:
            r = b.op("IOr32", b.op("IAnd32", c, b.const_u32(0xFFFF)), b.op("IShl32", r, b.const_u32(16)))
        elif step == 1:
            r = b.op("IOr32", b.op("IAnd32", c, b.const_u32(0xFFFF0000)), b.op("IAnd32", r, b.const_u32(0xFFFF)))
        elif step != 7:
            self.bad(inst, "video op step not translated yet")
        self.put_ir(b, inst, r)
        ir_spirv.emit(self, b)

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
