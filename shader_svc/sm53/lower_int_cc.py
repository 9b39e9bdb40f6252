"""The SM53 condition code as a value (a mixin of ``lower_int.Int53``): its 5-bit tests as
formulas of the Z/S/C/O flags (``CC_TESTS_IR``; CSETP, CSET and the branches' ``BRA CC.*`` of
lower_control.py), the logic results' flags (``logic_cc_ir``: LOP, LOP3, I2I, ISET set Z/S and
clear C/O) and P2R/R2P (the CC form's four flags as bits 0..3, the PR form's P0..P6 as 0..6).  Contract: flags live in the IR's
GetFlag/SetFlag rows; the CSM_* tests (24..29) are refused with a TranslateError.  Facts: Maxwell's
test field (sm53/table.CC_TESTS, checked against nvdisasm), the formulas from public descriptions
(yuzu's shader_recompiler flow-test evaluation, envytools' cc table)."""

from __future__ import annotations

from shader_svc.ir import to_spirv as ir_spirv
from shader_svc.ir.block import Block, Value
from shader_svc.sm53.decode import Inst
from shader_svc.sm53.lower import Lower53

# The condition code as this lowering keeps it: Z (CCZ), S (CCS, the result's sign), C (CC, the
# carry) and O (CCO, the signed overflow: the sum of the adder's inputs, sign-extended, out of
# the 32-bit range; logic results clear it).  Tests (Maxwell's 5-bit field, sm53/table.CC_TESTS)
# as formulas of the flags (public: yuzu's shader_recompiler flow-test evaluation, envytools' cc
# table); the CSM_* tests (24..29) are refused.
CC_TESTS_IR = {
    0: lambda z, s, c, o, b: b.const_bool(False),  # F
    1: lambda z, s, c, o, b: b.op("LXor", b.op("LAnd", s, b.op("LNot", z)), o),  # LT
    2: lambda z, s, c, o, b: b.op("LAnd", b.op("LNot", s), z),  # EQ
    3: lambda z, s, c, o, b: b.op("LXor", s, b.op("LOr", z, o)),  # LE
    4: lambda z, s, c, o, b: b.op("LAnd", b.op("LXor", b.op("LNot", s), o), b.op("LNot", z)),  # GT
    5: lambda z, s, c, o, b: b.op("LNot", z),  # NE
    6: lambda z, s, c, o, b: b.op("LNot", b.op("LXor", s, o)),  # GE
    7: lambda z, s, c, o, b: b.op("LOr", b.op("LNot", s), b.op("LNot", z)),  # NUM
    8: lambda z, s, c, o, b: b.op("LAnd", s, z),  # NAN
    9: lambda z, s, c, o, b: b.op("LXor", s, o),  # LTU
    10: lambda z, s, c, o, b: z,  # EQU
    11: lambda z, s, c, o, b: b.op("LOr", b.op("LXor", s, o), z),  # LEU
    12: lambda z, s, c, o, b: b.op("LXor", b.op("LNot", s), b.op("LOr", z, o)),  # GTU
    13: lambda z, s, c, o, b: b.op("LOr", s, b.op("LNot", z)),  # NEU
    14: lambda z, s, c, o, b: b.op("LXor", b.op("LOr", b.op("LNot", s), z), o),  # GEU
    15: lambda z, s, c, o, b: b.const_bool(True),  # T
    16: lambda z, s, c, o, b: b.op("LNot", o),  # OFF
    17: lambda z, s, c, o, b: b.op("LNot", c),  # LO
    18: lambda z, s, c, o, b: b.op("LNot", s),  # SFF
    19: lambda z, s, c, o, b: b.op("LOr", z, b.op("LNot", c)),  # LS
    20: lambda z, s, c, o, b: b.op("LAnd", c, b.op("LNot", z)),  # HI
    21: lambda z, s, c, o, b: s,  # SFT
    22: lambda z, s, c, o, b: c,  # HS
    23: lambda z, s, c, o, b: o,  # OFT
    30: lambda z, s, c, o, b: b.op("LOr", s, z),  # RLE
    31: lambda z, s, c, o, b: b.op("LAnd", b.op("LNot", s), b.op("LNot", z)),  # RGT
}
CC_FLAGS = ("CCZ", "CCS", "CC", "CCO")  # P2R/R2P CC: bits 0, 1, 2, 3


class IntCC53(Lower53):
    """Mixin of ``lower_int.Int53`` (see the module's docstring)."""

    # --- the condition code as a value: CSETP, CSET, P2R/R2P CC, and its logic writers --------
    def cc_test_ir(self, b: Block, inst: Inst, test: int) -> Value:
        """A condition-code test (``CC_TESTS_IR``) as a boolean; the CSM_* tests are refused."""
        f = CC_TESTS_IR.get(test)
        if f is None:
            self.bad(inst, "condition-code test CSM_* not translated")
        z, s, c, o = (b.emit("GetFlag", flag=n) for n in CC_FLAGS)
        return f(z, s, c, o, b)

    @staticmethod
    def logic_cc_ir(b: Block, r: Value) -> None:
        """.CC of a logic/conversion result (LOP, LOP3, I2I, ISET): Z and S of ``r``, C and O
        cleared."""
        b.emit("SetFlag", b.op("IEq32", r, b.const_u32(0)), flag="CCZ")
        b.emit("SetFlag", b.op("INe32", b.op("IShr32", r, b.const_u32(31)), b.const_u32(0)), flag="CCS")
        b.emit("SetFlag", b.const_bool(False), flag="CC")
        b.emit("SetFlag", b.const_bool(False), flag="CCO")

    def op_csetp(self, inst: Inst) -> None:
        b = Block()
        self.setp_ir(b, inst, self.cc_test_ir(b, inst, inst.mods["test"]))
        ir_spirv.emit(self, b)

    def op_cset(self, inst: Inst) -> None:
        if inst.ops["d"].get("cc"):
            self.bad(inst, "CSET with the condition code not translated yet")
        b = Block()
        pc = inst.ops["pc"]
        r = b.op(
            ("LAnd", "LOr", "LXor")[inst.mods["bop"]],
            self.cc_test_ir(b, inst, inst.mods["test"]),
            b.get_pred(pc["pred"], pc["not"]),
        )
        true = b.const_u32(0x3F800000 if inst.mods["BF"] else 0xFFFFFFFF)
        self.put_ir(b, inst, b.op("Select32", r, true, b.const_u32(0)))
        ir_spirv.emit(self, b)

    @staticmethod
    def _pr_cc_entries(b: Block, inst: Inst) -> list[tuple[Value, object]]:
        """P2R/R2P's file as (current value, setter) per bit: the CC form's four flags (Z 1,
        S 2, C 4, O 8), the PR form's predicates P0..P6 (bits 0..6; PT is not in the file)."""
        if inst.ops["pr"]["sym"] == 1:
            return [(b.emit("GetFlag", flag=n), lambda v, n=n: b.emit("SetFlag", v, flag=n)) for n in CC_FLAGS]
        return [(b.get_pred(i), lambda v, i=i: b.set_pred(i, v)) for i in range(7)]

    def op_p2r(self, inst: Inst) -> None:
        """P2R Rd, PR|CC, Ra, mask: Ra with the bits of ``(mask & 0xff) << 8*bsel`` replaced by
        the file's bits (``_pr_cc_entries``) shifted alike (public: Ryujinx's EmitP2r and yuzu's
        register-set-predicate decoder: the mask's low byte, the byte select at bits 41..42)."""
        b = Block()
        bits = b.const_u32(0)
        for i, (on, _) in enumerate(self._pr_cc_entries(b, inst)):
            bits = b.op("IOr32", bits, b.op("Select32", on, b.const_u32(1 << i), b.const_u32(0)))
        sh = b.const_u32(8 * inst.mods["bsel"])
        mask = b.op("IShl32", b.op("IAnd32", self.val_ir(b, inst, "b"), b.const_u32(0xFF)), sh)
        keep = b.op("IAnd32", self.val_ir(b, inst, "a"), b.op("INot32", mask))
        self.put_ir(b, inst, b.op("IOr32", keep, b.op("IAnd32", b.op("IShl32", bits, sh), mask)))
        ir_spirv.emit(self, b)

    def op_r2p(self, inst: Inst) -> None:
        """R2P PR|CC, Ra.Bn, mask: each entry of the file (``_pr_cc_entries``) whose mask bit i
        is set takes bit i of Ra's byte n (bits 8n+i; yuzu's register-set-predicate decoder);
        the others keep their value."""
        b = Block()
        a = b.op("IShr32", self.val_ir(b, inst, "a"), b.const_u32(8 * inst.ops["a"].get("bsel", 0)))
        mask = self.val_ir(b, inst, "b")
        for i, (old, put) in enumerate(self._pr_cc_entries(b, inst)):
            bit = b.const_u32(1 << i)
            on = b.op("INe32", b.op("IAnd32", mask, bit), b.const_u32(0))
            v = b.op("INe32", b.op("IAnd32", a, bit), b.const_u32(0))
            put(b.op("LOr", b.op("LAnd", on, v), b.op("LAnd", b.op("LNot", on), old)))
        ir_spirv.emit(self, b)
