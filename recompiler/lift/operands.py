"""What each instruction form reads and writes, declared from its decoded fields.

One function per ``recompiler/isa.py`` form (``EFFECTS``: form -> function of the ``Insn``)
says which general registers (X0-X30, SP), vector registers (V0-V31) and NZCV the encoding
reads and writes, and whether it loads or stores guest memory.  The lifter's records
(``result.Lifted``) take these as the instruction's own effects (``declare``); liveness
(``liveness.py``), the function's facts (``facts.py``) and the interprocedural summaries read
them, never the C.  How control leaves (a call, an SVC, an exit that writes every register
back) is the emitter's part of the record; ``FunctionFacts.effects`` (``facts.py``) adds what
such exits read.

The meaning is the architecture's (Arm ARM, the instruction pages of the A64 encoding index),
register-granular: a write of part of a register (a lane, D[1], a narrowing "2" form, MOVK, BFM)
reads the rest of it; a write of a whole register (a scalar FP/SIMD result zeroes the upper
bits, as does a 64-bit vector form: Q = 0) kills it.  Register 31 is SP where the form says so,
else the zero register (no read, no write).  The Unicorn test
(``tests/recompiler/test_declared_effects.py``) checks each form's declaration against the
architecture: every register that changed is declared written, every register declared killed
ends the same whatever it held, and perturbing a register not declared read changes nothing
else; memory is touched only where declared.

Registers are bits as in ``liveness``: X0-X30 bits 0-30, SP bit 31, V0-V31 bits 32-63.  An
encoding the lifter does not lift (a ``LiftError``: a fatal trap) needs no exact declaration:
the trap's effects replace it (``facts``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from recompiler.decode import Insn
from recompiler.lift.liveness import SP_BIT, vbit, xbit
from recompiler.lift.result import Mem


@dataclass(frozen=True)
class Effects:
    """One instruction's declared effects (register bits as in ``liveness``)."""

    reads: int = 0  # registers whose value before the instruction it may use
    kills: int = 0  # registers it surely overwrites in full without using them first
    writes: int = 0  # registers it may write (the kills included)
    flags_read: bool = False  # may read NZCV
    flags_set: bool = False  # writes all four of NZCV
    memory: Mem = Mem.NONE


class _E:
    """A builder of ``Effects``: ``r``/``w`` name general registers, ``rv``/``wv`` vector ones."""

    def __init__(self) -> None:
        self.reads = self.full = self.part = 0
        self.flags_read = self.flags_set = False
        self.mem = Mem.NONE

    @staticmethod
    def _x(n: int, sp: bool) -> int:
        if n == 31:
            return xbit(SP_BIT) if sp else 0
        return xbit(n)

    def r(self, *ns: int, sp: bool = False) -> _E:
        for n in ns:
            self.reads |= self._x(n, sp)
        return self

    def w(self, n: int, sp: bool = False) -> _E:
        self.full |= self._x(n, sp)
        return self

    def rw(self, n: int, sp: bool = False) -> _E:
        """A register read and written back (a base register's write-back, MOVK)."""
        return self.r(n, sp=sp).w(n, sp=sp)

    def rv(self, *ns: int) -> _E:
        for n in ns:
            self.reads |= vbit(n % 32)
        return self

    def wv(self, n: int, part: bool = False) -> _E:
        """Vector register ``n`` written: in full, or only a part of it (which reads the rest)."""
        if part:
            self.reads |= vbit(n % 32)
        self.full |= vbit(n % 32)
        return self

    def flags(self, read: bool = False, set_: bool = False) -> _E:
        self.flags_read |= read
        self.flags_set |= set_
        return self

    def load(self) -> _E:
        self.mem |= Mem.LOAD
        return self

    def store(self) -> _E:
        self.mem |= Mem.STORE
        return self

    def done(self) -> Effects:
        return Effects(self.reads, self.full & ~self.reads, self.full, self.flags_read, self.flags_set, self.mem)


NONE = Effects()
Declare = Callable[[Insn], Effects]


# ---- data processing, immediate and register ---------------------------------------------------
def _pcrel(i: Insn) -> Effects:
    return _E().w(i.f["Rd"]).done()


def _addsub_imm(i: Insn) -> Effects:
    f = i.f
    return _E().r(f["Rn"], sp=True).w(f["Rd"], sp=not f["S"]).flags(set_=bool(f["S"])).done()


def _logic_imm(i: Insn) -> Effects:
    f = i.f
    ands = f["opc"] == 3
    return _E().r(f["Rn"]).w(f["Rd"], sp=not ands).flags(set_=ands).done()


def _movw(i: Insn) -> Effects:
    f = i.f
    e = _E().w(f["Rd"])
    return (e.r(f["Rd"]) if f["opc"] == 3 else e).done()  # MOVK keeps the other halfwords


def _bitfield(i: Insn) -> Effects:
    f = i.f
    e = _E().r(f["Rn"]).w(f["Rd"])
    return (e.r(f["Rd"]) if f["opc"] == 1 else e).done()  # BFM keeps Rd's other bits


def _rn_rm_rd(i: Insn) -> Effects:
    f = i.f
    return _E().r(f["Rn"], f["Rm"]).w(f["Rd"]).done()


def _extr(i: Insn) -> Effects:
    f = i.f
    e = _E().r(f["Rm"]).w(f["Rd"])
    return (e.r(f["Rn"]) if f["imms"] else e).done()  # (Rn:Rm) >> 0 is Rm


def _logic_sreg(i: Insn) -> Effects:
    f = i.f
    return _E().r(f["Rn"], f["Rm"]).w(f["Rd"]).flags(set_=f["opc"] == 3).done()


def _addsub_sreg(i: Insn) -> Effects:
    f = i.f
    return _E().r(f["Rn"], f["Rm"]).w(f["Rd"]).flags(set_=bool(f["S"])).done()


def _addsub_ereg(i: Insn) -> Effects:
    f = i.f
    return _E().r(f["Rn"], sp=True).r(f["Rm"]).w(f["Rd"], sp=not f["S"]).flags(set_=bool(f["S"])).done()


def _adc(i: Insn) -> Effects:
    f = i.f
    return _E().r(f["Rn"], f["Rm"]).w(f["Rd"]).flags(read=True, set_=bool(f["S"])).done()


def _cond_reads(f: dict) -> bool:
    """Whether a condition field reads NZCV: AL and NV (0b111x) hold always."""
    return f["cond"] >> 1 != 7


def _ccmp_reg(i: Insn) -> Effects:
    return _E().r(i.f["Rn"], i.f["Rm"]).flags(read=_cond_reads(i.f), set_=True).done()


def _ccmp_imm(i: Insn) -> Effects:
    return _E().r(i.f["Rn"]).flags(read=_cond_reads(i.f), set_=True).done()


def _csel(i: Insn) -> Effects:
    f = i.f
    return _E().r(f["Rn"], f["Rm"]).w(f["Rd"]).flags(read=_cond_reads(f)).done()


def _dp3(i: Insn) -> Effects:
    f = i.f
    e = _E().r(f["Rn"], f["Rm"]).w(f["Rd"])
    if f["op31"] not in (2, 6):  # SMULH/UMULH have no addend
        e.r(f["Ra"])
    return e.done()


def _dp1(i: Insn) -> Effects:
    return _E().r(i.f["Rn"]).w(i.f["Rd"]).done()


# ---- branches, exceptions, system ------------------------------------------------------------
def _bl(i: Insn) -> Effects:
    return _E().w(30).done()


def _cbz(i: Insn) -> Effects:
    return _E().r(i.f["Rt"]).done()


def _bcond(i: Insn) -> Effects:
    return _E().flags(read=_cond_reads(i.f)).done()


def _br(i: Insn) -> Effects:
    return _E().r(i.f["Rn"]).done()


def _blr(i: Insn) -> Effects:
    return _E().r(i.f["Rn"]).w(30).done()


def _ret(i: Insn) -> Effects:
    # the lifted return hands X0 on in its C result (NxRet) as well as the target
    return _E().r(i.f["Rn"], 0).done()


_SYSREG_NZCV = (1, 3, 4, 2, 0)  # (o0, op1, CRn, CRm, op2)


def _sysreg(f: dict) -> tuple[int, int, int, int, int]:
    return (f["o0"], f["op1"], f["CRn"], f["CRm"], f["op2"])


def _mrs(i: Insn) -> Effects:
    return _E().w(i.f["Rt"]).flags(read=_sysreg(i.f) == _SYSREG_NZCV).done()


def _msr_reg(i: Insn) -> Effects:
    return _E().r(i.f["Rt"]).flags(set_=_sysreg(i.f) == _SYSREG_NZCV).done()


def _sys(i: Insn) -> Effects:
    f = i.f
    if (f["op1"], f["CRn"], f["CRm"], f["op2"]) == (3, 7, 4, 1) and not f["L"]:  # DC ZVA
        return _E().r(f["Rt"]).store().done()
    return NONE


# ---- loads and stores --------------------------------------------------------------------------
def _ldr_lit(i: Insn) -> Effects:
    f = i.f
    if f["V"]:
        return _E().wv(f["Rt"]).load().done()
    if f["opc"] == 3:  # PRFM
        return NONE
    return _E().w(f["Rt"]).load().done()


def _transfer(e: _E, f: dict, load: bool, vector: bool, *regs: int) -> _E:
    """The data registers of a load (written) or a store (read)."""
    for t in regs:
        if vector:
            e.wv(t) if load else e.rv(t)
        else:
            e.w(t) if load else e.r(t)
    return e.load() if load else e.store()


def _single_kind(f: dict) -> str:
    """'load', 'store' or 'none' (PRFM) of the load/store-register group's size/opc/V."""
    if f["V"]:
        return "load" if f["opc"] & 1 else "store"
    if f["opc"] == 0:
        return "store"
    if f["size"] == 3 and f["opc"] == 2:
        return "none"
    return "load"


def _ldst_single(f: dict, wb: bool = False, rm: bool = False) -> Effects:
    """One register loaded or stored at [Rn (+ Rm)], Rn written back with ``wb``."""
    kind = _single_kind(f)
    e = _E()
    if kind == "none" and not wb:  # PRFM: a hint, lifted as nothing
        return NONE
    e.r(f["Rn"], sp=True)
    if rm:
        e.r(f["Rm"])
    if kind != "none":
        _transfer(e, f, kind == "load", bool(f["V"]), f["Rt"])
    if wb:
        e.w(f["Rn"], sp=True)
    return e.done()


def _imm9(i: Insn) -> Effects:
    return _ldst_single(i.f, wb=i.f["idx"] in (1, 3))


def _uimm(i: Insn) -> Effects:
    return _ldst_single(i.f)


def _regoff(i: Insn) -> Effects:
    return _ldst_single(i.f, rm=True)


def _rcpc2(i: Insn) -> Effects:
    return _ldst_single(dict(i.f, V=0))  # LDAPUR*/STLUR*: general registers only


def _pair(i: Insn) -> Effects:
    f = i.f
    e = _E().r(f["Rn"], sp=True)
    _transfer(e, f, bool(f["L"]), bool(f["V"]), f["Rt"], f["Rt2"])
    if f["idx"] in (1, 3):
        e.w(f["Rn"], sp=True)
    return e.done()


def _excl(i: Insn) -> Effects:
    f = i.f
    o2, L, o1, size = f["o2"], f["L"], f["o1"], f["size"]
    t, t2, rs = f["Rt"], f["Rt2"], f["Rs"]
    e = _E().r(f["Rn"], sp=True)
    if o1 == 1 and (o2 == 1 or size < 2):  # CAS, CASP: compare Rs(+1), swap in Rt(+1)
        pair = o2 == 0
        e.r(rs, t, *((rs + 1, t + 1) if pair else ())).w(rs)
        if pair and rs != 31:
            e.w(rs + 1)
        return e.load().store().done()
    regs = (t, t2) if o1 == 1 else (t,)  # LDXP/STXP; LDXR/STXR, LDAR/STLR
    if L:
        return _transfer(e, f, True, False, *regs).done()
    _transfer(e, f, False, False, *regs)
    if o2 == 0:  # a store-exclusive's status
        e.w(rs)
    return e.done()


def _atomic(i: Insn) -> Effects:
    f = i.f
    e = _E().r(f["Rn"], sp=True).w(f["Rt"]).load()
    if f["o3"] == 1 and f["opc"] == 4:  # LDAPR
        return e.done()
    return e.r(f["Rs"]).store().done()


def _simd_regs(t: int, n: int) -> list[int]:
    return [(t + k) % 32 for k in range(n)]


def _ldst_multi(i: Insn) -> Effects:
    f = i.f
    n = {7: 1, 10: 2, 6: 3, 2: 4, 0: 4, 4: 3, 8: 2}.get(f["opcode"], 1)
    e = _E().r(f["Rn"], sp=True)
    for r in _simd_regs(f["Rt"], n):
        e.wv(r) if f["L"] else e.rv(r)
    e.load() if f["L"] else e.store()
    if i.name == "LDST_multi_post":
        e.r(f["Rm"]).w(f["Rn"], sp=True)
    return e.done()


def _ldst_single_lane(i: Insn) -> Effects:
    f = i.f
    n = ((f["opcode"] & 1) << 1 | f["R"]) + 1
    e = _E().r(f["Rn"], sp=True)
    replicate = f["opcode"] >> 1 == 3
    for r in _simd_regs(f["Rt"], n):
        # a load of one lane keeps the others; LDnR writes every lane
        e.wv(r, part=not replicate) if f["L"] else e.rv(r)
    e.load() if f["L"] else e.store()
    if i.name == "LDST_single_post":
        e.r(f["Rm"]).w(f["Rn"], sp=True)
    return e.done()


# ---- scalar floating point -------------------------------------------------------------------
def _v1(i: Insn) -> Effects:
    """Vd = op(Vn)."""
    return _E().rv(i.f["Rn"]).wv(i.f["Rd"]).done()


def _v2(i: Insn) -> Effects:
    """Vd = op(Vn, Vm)."""
    return _E().rv(i.f["Rn"], i.f["Rm"]).wv(i.f["Rd"]).done()


def _v3(i: Insn) -> Effects:
    """Vd = op(Vn, Vm, Va)."""
    return _E().rv(i.f["Rn"], i.f["Rm"], i.f["Ra"]).wv(i.f["Rd"]).done()


def _v_acc(i: Insn) -> Effects:
    """Vd = op(Vd, Vn, Vm): an accumulation (dot products, SQRDMLAH, SHA)."""
    return _E().rv(i.f["Rn"], i.f["Rm"], i.f["Rd"]).wv(i.f["Rd"]).done()


def _fmov_imm(i: Insn) -> Effects:
    return _E().wv(i.f["Rd"]).done()


def _fp_cmp(i: Insn) -> Effects:
    f = i.f
    e = _E().rv(f["Rn"]).flags(set_=True)
    if not f["opc"] & 8:  # FCMP Vn, #0.0 reads no Vm
        e.rv(f["Rm"])
    return e.done()


def _fp_ccmp(i: Insn) -> Effects:
    return _E().rv(i.f["Rn"], i.f["Rm"]).flags(read=_cond_reads(i.f), set_=True).done()


def _fcsel(i: Insn) -> Effects:
    return _E().rv(i.f["Rn"], i.f["Rm"]).wv(i.f["Rd"]).flags(read=_cond_reads(i.f)).done()


def _fp_int(i: Insn) -> Effects:
    """FP_INT(_H): conversions and moves between a general and a vector register."""
    f = i.f
    op, rmode = f["opcode"], f["rmode"]
    if op in (2, 3) or op == 7:  # SCVTF/UCVTF, FMOV to the vector register
        top = op == 7 and rmode == 1  # FMOV Vd.D[1], Xn keeps D[0]
        return _E().r(f["Rn"]).wv(f["Rd"], part=top).done()
    return _E().rv(f["Rn"]).w(f["Rd"]).done()  # FCVT*, FMOV to the general register


def _fp_fix(i: Insn) -> Effects:
    f = i.f
    if f["opcode"] in (2, 3):  # SCVTF/UCVTF (fixed point)
        return _E().r(f["Rn"]).wv(f["Rd"]).done()
    return _E().rv(f["Rn"]).w(f["Rd"]).done()


def _fjcvtzs(i: Insn) -> Effects:
    return _E().rv(i.f["Rn"]).w(i.f["Rd"]).flags(set_=True).done()


# ---- advanced SIMD ---------------------------------------------------------------------------
def _vec(i: Insn, acc: bool, two: bool = False) -> Effects:
    """A vector result into Vd from Vn (and Vm where the form has it): ``acc`` where the
    operation reads Vd (an accumulation, a narrowing "2" form's kept low half, an insert)."""
    f = i.f
    e = _E().rv(f["Rn"])
    if "Rm" in f and not two:
        e.rv(f["Rm"])
    return e.wv(f["Rd"], part=acc).done()


def _three_same(i: Insn) -> Effects:
    f = i.f
    U, size, op = f["U"], f["size"], f["opcode"]
    acc = op in (0b10010, 0b01111) or (op == 0b00011 and U and size) or (op == 0b11001 and not U)
    return _vec(i, bool(acc))


def _three_same_fp16(i: Insn) -> Effects:
    f = i.f
    return _vec(i, f["opcode"] == 1 and not f["U"])  # FMLA/FMLS (half precision)


def _scalar_three_same(i: Insn) -> Effects:
    return _vec(i, False)


def _three_diff(i: Insn) -> Effects:
    f = i.f
    op = f["opcode"]
    acc = op in (0b0101, 0b1000, 0b1001, 0b1010, 0b1011) or (op in (0b0100, 0b0110) and f["Q"])
    return _vec(i, acc)


def _scalar_three_diff(i: Insn) -> Effects:
    return _vec(i, i.f["opcode"] in (0b1001, 0b1011))  # SQDMLAL/SQDMLSL


def _two_reg(i: Insn) -> Effects:
    f = i.f
    op = f["opcode"]
    acc = op in (0b00011, 0b00110) or (op in (0b10010, 0b10100) and f["Q"])  # S/USQADD, S/UADALP, XTN2...
    return _vec(i, acc)


def _scalar_two_reg(i: Insn) -> Effects:
    return _vec(i, i.f["opcode"] == 0b00011)  # SUQADD/USQADD


def _addlp(i: Insn) -> Effects:
    return _vec(i, bool(i.f["op"]))  # SADALP/UADALP


def _shift_imm(i: Insn) -> Effects:
    f = i.f
    op = f["opcode"]
    acc = op in (0b00010, 0b00110) or (f["U"] and op in (0b01000, 0b01010))  # S/USRA, S/URSRA, SRI, SLI
    if i.name == "SIMD_shift_imm" and 0b10000 <= op <= 0b10011 and f["Q"]:  # narrowing "2"
        acc = True
    return _vec(i, bool(acc))


def _shift_ins(i: Insn) -> Effects:
    return _vec(i, True)  # SRI/SLI keep the bits they do not shift in


def _fcvt_nl(i: Insn) -> Effects:
    f = i.f
    return _vec(i, not f["o"] and bool(f["Q"]))  # FCVTN2/FCVTXN2 keep the low half


def _copy(i: Insn) -> Effects:
    f = i.f
    imm4 = f["imm4"]
    if f["op"]:  # INS (element)
        return _E().rv(f["Rn"]).wv(f["Rd"], part=True).done()
    if imm4 == 0:  # DUP (element)
        return _E().rv(f["Rn"]).wv(f["Rd"]).done()
    if imm4 == 1:  # DUP (general)
        return _E().r(f["Rn"]).wv(f["Rd"]).done()
    if imm4 == 3:  # INS (general)
        return _E().r(f["Rn"]).wv(f["Rd"], part=True).done()
    return _E().rv(f["Rn"]).w(f["Rd"]).done()  # SMOV/UMOV


def _movi(i: Insn) -> Effects:
    f = i.f
    cmode = f["cmode"]
    orr_bic = cmode & 1 and cmode < 12  # ORR/BIC (immediate) keep the bits they do not set
    return _E().wv(f["Rd"], part=bool(orr_bic)).done()


def _elem(i: Insn) -> Effects:
    f = i.f
    U, op = f["U"], f["opcode"]
    m = f["Rm"] | (f["M"] << 4) if f["size"] >= 2 else f["Rm"]  # 16-bit elements: V0-V15
    if U:
        acc = op in (0b0000, 0b0100, 0b0010, 0b0110, 0b1101, 0b1111)
    else:
        acc = op in (0b0001, 0b0101, 0b0010, 0b0011, 0b0110, 0b0111)
    if i.name == "SIMD_scalar_elem" and not U:
        acc = op in (0b0001, 0b0101, 0b0011, 0b0111)
    return _E().rv(f["Rn"], m).wv(f["Rd"], part=bool(acc)).done()


def _dot_elem(i: Insn) -> Effects:
    f = i.f
    return _E().rv(f["Rn"], f["Rm"] | (f["M"] << 4), f["Rd"]).wv(f["Rd"]).done()


def _tbl(i: Insn) -> Effects:
    f = i.f
    e = _E().rv(f["Rm"], *_simd_regs(f["Rn"], f["len"] + 1))
    return e.wv(f["Rd"], part=bool(f["op"])).done()  # TBX keeps the lanes out of range


def _aes(i: Insn) -> Effects:
    return _vec(i, i.f["op"] < 2)  # AESE/AESD: Vd ^ Vn


def _sha_2reg(i: Insn) -> Effects:
    return _vec(i, i.f["opcode"] != 0)  # SHA1SU1, SHA256SU0 (SHA1H reads only Vn)


def _sha512_3reg(i: Insn) -> Effects:
    return _vec(i, i.f["opcode"] != 3)  # SHA512H/H2/SU1 (RAX1: Vn, Vm)


def _sha3_4reg(i: Insn) -> Effects:
    return _v3(i)


EFFECTS: dict[str, Declare] = {
    "ADR": _pcrel,
    "ADRP": _pcrel,
    "ADDSUB_imm": _addsub_imm,
    "LOGIC_imm": _logic_imm,
    "MOVW": _movw,
    "BITFIELD": _bitfield,
    "EXTR": _extr,
    "B": lambda i: NONE,
    "BL": _bl,
    "CBZ": _cbz,
    "TBZ": _cbz,
    "BCOND": _bcond,
    "SVC": lambda i: NONE,  # (an exit: every register, exits.py)
    "BRK": lambda i: NONE,
    "UDF": lambda i: NONE,
    "HINT": lambda i: NONE,
    "CLREX": lambda i: NONE,
    "BARRIER": lambda i: NONE,
    "MSR_imm": lambda i: NONE,
    "SYS": _sys,
    "MRS": _mrs,
    "MSR_reg": _msr_reg,
    "BR": _br,
    "BLR": _blr,
    "RET": _ret,
    "LDR_lit": _ldr_lit,
    "LDSTX": _excl,
    "LDST_pair": _pair,
    "LDST_atomic": _atomic,
    "LDST_regoff": _regoff,
    "LDST_rcpc2": _rcpc2,
    "LDST_imm9": _imm9,
    "LDST_uimm": _uimm,
    "LDST_multi": _ldst_multi,
    "LDST_multi_post": _ldst_multi,
    "LDST_single": _ldst_single_lane,
    "LDST_single_post": _ldst_single_lane,
    "LOGIC_sreg": _logic_sreg,
    "ADDSUB_sreg": _addsub_sreg,
    "ADDSUB_ereg": _addsub_ereg,
    "ADC": _adc,
    "CCMP_reg": _ccmp_reg,
    "CCMP_imm": _ccmp_imm,
    "CSEL": _csel,
    "DP3": _dp3,
    "DP2": _rn_rm_rd,
    "DP1": _dp1,
    "FP_RINT_N": _v1,
    "FJCVTZS": _fjcvtzs,
    "FCVT_from_half": _v1,
    "FCVT_to_half": _v1,
    "FP_INT_H": _fp_int,
    "FP_DP1_H": _v1,
    "FP_CMP_H": _fp_cmp,
    "FMOV_imm_H": _fmov_imm,
    "FP_CCMP_H": _fp_ccmp,
    "FP_DP2_H": _v2,
    "FCSEL_H": _fcsel,
    "FP_DP3_H": _v3,
    "FP_INT": _fp_int,
    "FP_DP1": _v1,
    "FP_CMP": _fp_cmp,
    "FMOV_imm": _fmov_imm,
    "FP_CCMP": _fp_ccmp,
    "FP_DP2": _v2,
    "FCSEL": _fcsel,
    "FP_DP3": _v3,
    "SIMD_frint_n": _v1,
    "SIMD_fcvt_nl": _fcvt_nl,
    "SIMD_scalar_fcvtxn": _v1,
    "SIMD_recip_est": _v1,
    "SIMD_scalar_recip_est": _v1,
    "SIMD_recip_step": _v2,
    "SIMD_scalar_recip_step": _v2,
    "SIMD_fp_across": _v1,
    "SIMD_three_same_fp16": _three_same_fp16,
    "SIMD_two_reg_fp16": _v1,
    "SIMD_scalar_three_same_fp16": _v2,
    "SIMD_scalar_two_reg_fp16": _v1,
    "SIMD_movi": _movi,
    "SIMD_shift_ins": _shift_ins,
    "SIMD_scalar_shift_ins": _shift_ins,
    "SIMD_shift_imm": _shift_imm,
    "SIMD_copy": _copy,
    "SIMD_dot": _v_acc,
    "SIMD_rdm": _v_acc,
    "SIMD_scalar_rdm": _v_acc,
    "SIMD_three_same": _three_same,
    "PMULL": _v2,
    "SIMD_three_diff": _three_diff,
    "SIMD_bitcount": _v1,
    "SIMD_addlp": _addlp,
    "SIMD_two_reg": _two_reg,
    "SIMD_across": _v1,
    "SIMD_ext": _v2,
    "SIMD_tbl": _tbl,
    "SIMD_perm": _v2,
    "SIMD_scalar_copy": _v1,
    "SIMD_scalar_pair": _v1,
    "SIMD_scalar_three_same": _scalar_three_same,
    "SIMD_scalar_three_diff": _scalar_three_diff,
    "SIMD_scalar_two_reg": _scalar_two_reg,
    "SIMD_scalar_shift_imm": _shift_imm,
    "SIMD_dot_elem": _dot_elem,
    "SIMD_elem": _elem,
    "SIMD_scalar_elem": _elem,
    "AES": _aes,
    "SHA_3reg": _v_acc,
    "SHA_2reg": _sha_2reg,
    "SHA512_3reg": _sha512_3reg,
    "SHA512SU0": lambda i: _vec(i, True),
    "SHA3_4reg": _sha3_4reg,
    "XAR": _v2,
    "FP_FIX_CONV": _fp_fix,
}


def declare(insn: Insn) -> Effects:
    """``insn``'s declared effects (nothing for an encoding not in the table: a trap)."""
    fn = EFFECTS.get(insn.name)
    return fn(insn) if fn is not None else NONE
