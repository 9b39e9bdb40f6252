"""Integer data processing: add/sub, logical, moves, bitfields, shifts, multiply/divide,
conditional select/compare, bit manipulation, CRC32."""

from __future__ import annotations

from recompiler.decode import Insn
from recompiler.lift.emitter import FunctionEmitter


def sext(v: int, bits: int) -> int:
    return v - (1 << bits) if v & (1 << (bits - 1)) else v


def ones(n: int) -> int:
    return (1 << n) - 1


def decode_bit_masks(n: int, imms: int, immr: int, datasize: int) -> int:
    """The A64 logical-immediate decoding (DecodeBitMasks, immediate form).  Its UNDEFINED values
    are the LOGIC_imm rows' ``!`` clauses (isa.py), so the lifter never passes one; the analysis
    (``analysis/transfer.py``) also reads the group's ``_unlifted`` words and gets ValueError."""
    combined = (n << 6) | (~imms & 0x3F)
    if combined == 0:
        raise ValueError("reserved logical immediate (DecodeBitMasks: UNDEFINED)")
    length = combined.bit_length() - 1
    if length < 1:
        raise ValueError("reserved logical immediate (DecodeBitMasks: UNDEFINED)")
    levels = ones(length)
    s, r = imms & levels, immr & levels
    if s == levels:
        raise ValueError("reserved logical immediate (DecodeBitMasks: UNDEFINED)")
    esize = 1 << length
    welem = ones(s + 1)
    rot = ((welem >> r) | (welem << (esize - r))) & ones(esize) if r else welem
    out = 0
    for i in range(0, datasize, esize):
        out |= rot << i
    return out & ones(datasize)


def _u(sf: int) -> str:
    return "u64" if sf else "u32"


def _shifted(em: FunctionEmitter, rm: int, sf: int, shift: int, amt: int) -> str:
    v = em.x(rm, sf)
    if amt == 0:
        return v
    size = 64 if sf else 32  # (sf 0 with imm6<5> 1 is reserved: the rows' ``!sf=0,imm6=1xxxxx``)
    t = _u(sf)
    if shift == 0:
        return f"(({t}){v} << {amt})"
    if shift == 1:
        return f"(({t}){v} >> {amt})"
    if shift == 2:
        return f"ASR{size}({v}, {amt})"
    return f"ROR{size}({v}, {amt})"


def _extended(em: FunctionEmitter, rm: int, sf: int, option: int, amt: int) -> str:
    v = em.x(rm, 1)
    ext = ["(u64)(u8)", "(u64)(u16)", "(u64)(u32)", "(u64)", "(u64)(i64)(i8)", "(u64)(i64)(i16)", "(u64)(i64)(i32)", "(u64)"][
        option
    ]
    e = f"({ext}{v})"  # (imm3 > 4 is reserved: the rows' ``!imm3=101 !imm3=11x``)
    if amt:
        e = f"({e} << {amt})"
    return e if sf else f"(u32){e}"


def _addsub(em: FunctionEmitter, sf: int, op: int, S: int, rd: int, a: str, b: str, rd_sp: bool, k: int | None = None) -> None:
    """ADD/SUB/ADDS/SUBS of ``a`` and ``b`` (``k``: b's value where it is an immediate)."""
    size = 64 if sf else 32
    if S:
        em.flags_touched()
        std = f"SUBC{size}(_r, {a}, {b})" if op else f"ADDC{size}(_r, {a}, {b}, 0)"
        fs = em.flag_op("sub" if op else "add", size, a, b, std, k)
        em.out(f"{{ u64 _r; {fs}; {_set(em, rd, sf, '_r', False)} }}")
        return
    expr = f"({_u(sf)})({a}) {'-' if op else '+'} ({_u(sf)})({b})"
    em.setx(rd, expr, sf, sp=rd_sp)


def _set(em: FunctionEmitter, rd: int, sf: int, expr: str, sp: bool) -> str:
    if rd == 31 and not sp:
        return ""
    name = "sp" if rd == 31 else f"x{rd}"
    return f"{name} = {expr};" if sf else f"{name} = (u32)({expr});"


def h_addsub_imm(em: FunctionEmitter, i: Insn) -> None:
    f = i.f
    imm = f["imm12"] << (12 if f["sh"] else 0)
    a = em.x(f["Rn"], f["sf"], sp=True)
    _addsub(em, f["sf"], f["op"], f["S"], f["Rd"], a, f"{imm:#x}", rd_sp=not f["S"], k=imm)


def h_addsub_sreg(em: FunctionEmitter, i: Insn) -> None:
    f = i.f  # (shift 11 is reserved: the rows' ``!shift=11``)
    b = _shifted(em, f["Rm"], f["sf"], f["shift"], f["imm6"])
    _addsub(em, f["sf"], f["op"], f["S"], f["Rd"], em.x(f["Rn"], f["sf"]), b, rd_sp=False)


def h_addsub_ereg(em: FunctionEmitter, i: Insn) -> None:
    f = i.f
    b = _extended(em, f["Rm"], f["sf"], f["option"], f["imm3"])
    a = em.x(f["Rn"], f["sf"], sp=True)
    _addsub(em, f["sf"], f["op"], f["S"], f["Rd"], a, b, rd_sp=not f["S"])


def h_adc(em: FunctionEmitter, i: Insn) -> None:
    f = i.f
    sf, size = f["sf"], 64 if f["sf"] else 32
    a, b = em.x(f["Rn"], sf), em.x(f["Rm"], sf)
    if f["op"]:
        b = f"~({_u(sf)})({b})"
    if f["S"]:
        em.flags_touched()
        em.out(f"{{ u64 _r; ADDC{size}(_r, {a}, {b}, C); {_set(em, f['Rd'], sf, '_r', False)} }}")
    else:
        em.setx(f["Rd"], f"({_u(sf)})({a}) + ({_u(sf)})({b}) + C", sf)


def _logic(em: FunctionEmitter, sf: int, opc: int, rd: int, a: str, b: str, rd_sp: bool) -> None:
    """AND/ORR/EOR/ANDS of ``a`` and ``b``; ANDS sets N and Z and clears C and V."""
    expr = f"({_u(sf)})({a} {['&', '|', '^', '&'][opc]} {b})"
    if opc == 3:
        em.flags_touched()
        size = 64 if sf else 32
        fs = em.flag_op("and", size, a, b, f"LOGICF{size}(_r)")
        em.out(f"{{ {_u(sf)} _r = {expr}; {fs}; {_set(em, rd, sf, '_r', False)} }}")
    else:
        em.setx(rd, expr, sf, sp=rd_sp)


def h_logic_imm(em: FunctionEmitter, i: Insn) -> None:
    f = i.f
    sf = f["sf"]  # (sf 0 with N 1 and DecodeBitMasks' UNDEFINED values: the rows' ``!`` clauses)
    imm = decode_bit_masks(f["N"], f["imms"], f["immr"], 64 if sf else 32)
    _logic(em, sf, f["opc"], f["Rd"], em.x(f["Rn"], sf), f"{imm:#x}ull", rd_sp=True)


def h_logic_sreg(em: FunctionEmitter, i: Insn) -> None:
    f = i.f
    sf = f["sf"]
    b = _shifted(em, f["Rm"], sf, f["shift"], f["imm6"])
    if f["N"]:
        b = f"~({_u(sf)}){b}"
    _logic(em, sf, f["opc"], f["Rd"], em.x(f["Rn"], sf), b, rd_sp=False)


def h_movw(em: FunctionEmitter, i: Insn) -> None:
    f = i.f
    sf, hw, opc = f["sf"], f["hw"], f["opc"]  # (opc 01 and sf 0 with hw 1x: MOVW_unlifted)
    sh = hw * 16
    imm = f["imm16"] << sh
    if opc == 0:
        em.setx(f["Rd"], f"{(~imm) & ones(64 if sf else 32):#x}ull", sf)
    elif opc == 2:
        em.setx(f["Rd"], f"{imm:#x}ull", sf)
    else:
        keep = ones(64 if sf else 32) & ~(0xFFFF << sh)
        em.setx(f["Rd"], f"({em.x(f['Rd'], 1)} & {keep:#x}ull) | {imm:#x}ull", sf)


def h_bitfield(em: FunctionEmitter, i: Insn) -> None:
    f = i.f
    sf, opc, r, s = f["sf"], f["opc"], f["immr"], f["imms"]
    size = 64 if sf else 32  # (N != sf, opc 11, a 32-bit form's immr/imms >= 32: BITFIELD_unlifted)
    src = em.x(f["Rn"], sf)
    t, it = ("u64", "i64") if sf else ("u32", "i32")
    top = size - 1
    if opc == 2:  # UBFM
        if s >= r:
            expr = f"((({t}){src} >> {r}) & {ones(s - r + 1):#x}ull)"
        else:
            expr = f"((({t}){src} & {ones(s + 1):#x}ull) << {size - r})"
    elif opc == 0:  # SBFM
        if s >= r:
            expr = f"({t})(({it})(({t}){src} << {top - s}) >> {top - s + r})"
        else:
            expr = f"({t})((({t})(({it})(({t}){src} << {top - s}) >> {top - s})) << {size - r})"
    else:  # BFM
        if s >= r:
            width, lsb = s - r + 1, 0
            field = f"((({t}){src} >> {r}) & {ones(width):#x}ull)"
        else:
            width, lsb = s + 1, size - r
            field = f"((({t}){src} & {ones(width):#x}ull) << {lsb})"
        mask = (ones(width) << lsb) & ones(size)
        expr = f"(({t}){em.x(f['Rd'], sf)} & {(~mask) & ones(size):#x}ull) | {field}"
    em.setx(f["Rd"], expr, sf)


def h_extr(em: FunctionEmitter, i: Insn) -> None:
    f = i.f
    sf, lsb = f["sf"], f["imms"]  # (N != sf, sf 0 with imms >= 32: EXTR_unlifted)
    size = 64 if sf else 32
    t = _u(sf)
    hi, lo = em.x(f["Rn"], sf), em.x(f["Rm"], sf)
    if lsb == 0:
        em.setx(f["Rd"], lo, sf)
    else:
        em.setx(f["Rd"], f"((({t}){lo} >> {lsb}) | (({t}){hi} << {size - lsb}))", sf)


def pcrel_value(i: Insn) -> int:
    """The address ADR or ADRP ``i`` computes."""
    imm = sext((i.f["immhi"] << 2) | i.f["immlo"], 21)
    if i.name == "ADRP":
        return ((i.addr & ~0xFFF) + (imm << 12)) & ones(64)
    return (i.addr + imm) & ones(64)


def h_pcrel(em: FunctionEmitter, i: Insn) -> None:
    em.setx(i.f["Rd"], f"{pcrel_value(i):#x}ull")


def h_csel(em: FunctionEmitter, i: Insn) -> None:
    f = i.f
    sf = f["sf"]
    t = _u(sf)
    a, b = em.x(f["Rn"], sf), em.x(f["Rm"], sf)
    alt = [f"({t}){b}", f"({t})({b} + 1)", f"({t})~({t}){b}", f"({t})-({t}){b}"][f["op"] * 2 + f["o2"]]
    em.setx(f["Rd"], f"{em.cond(f['cond'])} ? ({t}){a} : {alt}", sf)


def h_ccmp(em: FunctionEmitter, i: Insn) -> None:
    f = i.f
    sf = f["sf"]
    size = 64 if sf else 32
    a = em.x(f["Rn"], sf)
    imm = i.group == "CCMP_imm"
    b = f"{f['imm5']}" if imm else em.x(f["Rm"], sf)
    em.flags_touched()
    if f["op"]:
        cmp = f"SUBC{size}(_r, {a}, {b})"
    else:
        cmp = f"ADDC{size}(_r, {a}, {b}, 0)"
    cc = em.cond(f["cond"])
    std = f"if ({cc}) {{ u64 _r; {cmp}; (void)_r; }} else FLAGS_SET({f['nzcv']});"
    em.out(em.flag_op("sub" if f["op"] else "add", size, a, b, std, f["imm5"] if imm else None, (cc, f["nzcv"])))


def h_dp3(em: FunctionEmitter, i: Insn) -> None:
    f = i.f
    sf, op31, o0 = f["sf"], f["op31"], f["o0"]
    t = _u(sf)
    n, m, a = f["Rn"], f["Rm"], f["Ra"]
    if op31 == 0:
        prod = f"({t}){em.x(n, sf)} * ({t}){em.x(m, sf)}"
        em.setx(f["Rd"], f"({t}){em.x(a, sf)} {'-' if o0 else '+'} {prod}", sf)
        return
    # (the long and high forms fix sf = 1; other op31/o0 values: DP3_unlifted)
    if op31 in (1, 5):
        cast = "(u64)(i64)(i32)" if op31 == 1 else "(u64)(u32)"
        prod = f"({cast}{em.x(n, 1)} * {cast}{em.x(m, 1)})"
        em.setx(f["Rd"], f"{em.x(a, 1)} {'-' if o0 else '+'} {prod}")
    elif op31 == 2:
        em.setx(f["Rd"], f"SMULH({em.x(n)}, {em.x(m)})")
    else:  # op31 110: UMULH
        em.setx(f["Rd"], f"UMULH({em.x(n)}, {em.x(m)})")


def h_dp2(em: FunctionEmitter, i: Insn) -> None:
    f = i.f
    sf, op = f["sf"], f["opcode"]
    size = 64 if sf else 32
    a, b = em.x(f["Rn"], sf), em.x(f["Rm"], sf)
    if op == 2:
        em.setx(f["Rd"], f"UDIV{size}({a}, {b})", sf)
    elif op == 3:
        em.setx(f["Rd"], f"SDIV{size}({a}, {b})", sf)
    elif op == 8:
        em.setx(f["Rd"], f"LSLV{size}({a}, {em.x(f['Rm'])})", sf)
    elif op == 9:
        em.setx(f["Rd"], f"LSRV{size}({a}, {em.x(f['Rm'])})", sf)
    elif op == 10:
        em.setx(f["Rd"], f"ASR{size}({a}, {em.x(f['Rm'])})", sf)
    elif op == 11:
        em.setx(f["Rd"], f"ROR{size}({a}, {em.x(f['Rm'])})", sf)
    else:  # CRC32/CRC32C: opcode 010xxx, sf = 1 exactly with sz 11 (the rows fix sf; others: DP2_unlifted)
        sz = op & 3
        poly = "0x82F63B78u" if op & 4 else "0xEDB88320u"
        em.setx(f["Rd"], f"CRC32X((u32){em.x(f['Rn'])}, {em.x(f['Rm'])}, {1 << sz}, {poly})", 0)


def h_dp1(em: FunctionEmitter, i: Insn) -> None:
    f = i.f
    sf, op = f["sf"], f["opcode"]
    a = em.x(f["Rn"], sf)
    if op == 0:
        e = f"RBIT64({a})" if sf else f"RBIT32({a})"
    elif op == 1:
        e = f"REV16_64({a})"
    elif op == 2:
        e = f"REV32_64({a})" if sf else f"__builtin_bswap32({a})"
    elif op == 3:  # (REV_x fixes sf = 1)
        e = f"__builtin_bswap64({a})"
    elif op == 4:
        e = f"CLZ64({a})" if sf else f"CLZ32({a})"
    else:  # opcode 000101: CLS (other opcodes: DP1_unlifted)
        e = f"CLS64x({a})" if sf else f"CLS32x({a})"
    em.setx(f["Rd"], e, sf)
