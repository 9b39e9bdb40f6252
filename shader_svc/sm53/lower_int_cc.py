"""The SM53 condition code as a value (a mixin of ``lower_int.Int53``): its 5-bit tests as
formulas of the Z/S/C/O flags (``CC_TESTS_IR``; CSETP, CSET and the branches' ``BRA CC.*`` of
lower_control.py), the logic results' flags (``logic_cc_ir``: LOP, LOP3, I2I, ISET set Z/S and
clear C/O) and P2R/R2P's CC form (the four flags as bits 0..3).  Contract: flags live in the IR's
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

    def op_p2r(self, inst: Inst) -> None:
        """P2R Rd, CC, Ra, mask: Ra with the bits of ``mask << 8*bsel`` replaced by the flags
        (Z 1, S 2, C 4, O 8) masked and shifted alike.  The PR form is refused."""
        if inst.ops["pr"]["sym"] != 1:
            self.bad(inst, "P2R PR not translated yet")
        b = Block()
        bits = b.const_u32(0)
        for i, n in enumerate(CC_FLAGS):
            bits = b.op("IOr32", bits, b.op("Select32", b.emit("GetFlag", flag=n), b.const_u32(1 << i), b.const_u32(0)))
        sh = b.const_u32(8 * inst.mods["bsel"])
        mask = b.op("IShl32", self.val_ir(b, inst, "b"), sh)
        keep = b.op("IAnd32", self.val_ir(b, inst, "a"), b.op("INot32", mask))
        self.put_ir(b, inst, b.op("IOr32", keep, b.op("IAnd32", b.op("IShl32", bits, sh), mask)))
        ir_spirv.emit(self, b)

    def op_r2p(self, inst: Inst) -> None:
        """R2P CC, Ra, mask: each flag whose mask bit is set (Z 1, S 2, C 4, O 8) takes Ra's
        bit.  The PR form is refused."""
        if inst.ops["pr"]["sym"] != 1:
            self.bad(inst, "R2P PR not translated yet")
        b = Block()
        a, mask = self.val_ir(b, inst, "a"), self.val_ir(b, inst, "b")
        for i, n in enumerate(CC_FLAGS):
            bit = b.const_u32(1 << i)
            on = b.op("INe32", b.op("IAnd32", mask, bit), b.const_u32(0))
            v = b.op("INe32", b.op("IAnd32", a, bit), b.const_u32(0))
            b.emit("SetFlag", b.op("LOr", b.op("LAnd", on, v), b.op("LAnd", b.op("LNot", on), b.emit("GetFlag", flag=n))), flag=n)
        ir_spirv.emit(self, b)
