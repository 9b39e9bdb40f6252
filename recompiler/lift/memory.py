"""Loads and stores: every addressing mode of LDR/STR, pairs, literals, exclusives,
acquire/release, LSE atomics, and the SIMD LD1/ST1 forms compiled C uses."""

from __future__ import annotations

from recompiler.decode import Insn
from recompiler.lift.emitter import FunctionEmitter, LiftError
from recompiler.lift.integer import sext
from recompiler.lift import vector
from recompiler.lift.liveness import vbit, xbit

_LD = {1: "L8", 2: "L16", 4: "L32", 8: "L64", 16: "L128"}
_ST = {1: "S8", 2: "S16", 4: "S32", 8: "S64", 16: "S128"}
_UT = {1: "u8", 2: "u16", 4: "u32", 8: "u64"}
_ST_T = {1: "i8", 2: "i16", 4: "i32", 8: "i64"}


def _gp_load(em: FunctionEmitter, rt: int, size: int, signed: bool, to64: bool, addr: str) -> str:
    v = f"{_LD[size]}({addr})"
    if signed:
        v = f"(u64)(i64)({_ST_T[size]}){v}" if to64 else f"(u32)(i32)({_ST_T[size]}){v}"
    else:
        v = f"(u64){v}"
    if rt == 31:
        return f"(void){v};"
    return f"x{rt} = {v};"


def _gp_store(em: FunctionEmitter, rt: int, size: int, addr: str) -> str:
    text = f"{_ST[size]}({addr}, ({_UT[size]}){em.x(rt)});"
    return em.reg_store(xbit(rt), text) if size == 8 and rt != 31 else text


def _v_load(em: FunctionEmitter, rt: int, size: int, addr: str) -> str:
    if size == 16:
        return vector.load_q(em, rt, addr)
    return vector.low(em, rt, f"{_LD[size]}({addr})")


def _v_store(em: FunctionEmitter, rt: int, size: int, addr: str) -> str:
    if size == 16:
        return vector.store_q(addr, rt)
    text = f"{_ST[size]}({addr}, {vector.low64(rt) if size == 8 else f'({_UT[size]})v{rt}.q'});"
    return em.reg_store(vbit(rt), text) if size == 8 else text


def _single(em: FunctionEmitter, f: dict, addr: str) -> str:
    """One LDR/STR of the load/store-register group at ``addr`` (a C expression).  The rows
    (isa.py's ``_LDST_REG_PAGES``) leave out the unallocated size/V/opc values: SIMD&FP size != 00
    with opc 1x, size 1x with opc 11, size 11 with opc 10 but PRFM."""
    size_f, opc, V = f["size"], f["opc"], f["V"]
    rt = f["Rt"]
    if V:
        size = 16 if (size_f == 0 and opc & 2) else 1 << size_f
        return _v_load(em, rt, size, addr) if opc & 1 else _v_store(em, rt, size, addr)
    size = 1 << size_f
    if opc == 0:
        return _gp_store(em, rt, size, addr)
    if opc == 1:
        return _gp_load(em, rt, size, False, True, addr)
    if size == 8:  # opc 10: PRFM (PRFUM)
        return ";"
    return _gp_load(em, rt, size, True, opc == 2, addr)


def _scale(f: dict) -> int:
    if f["V"] and f["size"] == 0 and f["opc"] & 2:
        return 4
    return f["size"]


def h_uimm(em: FunctionEmitter, i: Insn) -> None:
    f = i.f
    off = f["imm12"] << _scale(f)
    base = em.x(f["Rn"], 1, sp=True)
    em.out(_single(em, f, f"{base} + {off:#x}ull" if off else base))


def h_imm9(em: FunctionEmitter, i: Insn) -> None:
    f = i.f
    imm = sext(f["imm9"], 9)
    n = f["Rn"]
    base = em.x(n, 1, sp=True)
    idx = f["idx"]
    if idx in (0, 2):  # unscaled / unprivileged
        em.out(_single(em, f, f"{base} + {imm & (2**64 - 1):#x}ull"))
        return
    # post (1) / pre (3) index: address computed before the access, base written back
    wb = f"{base} = {base} + {imm & (2**64 - 1):#x}ull;"
    if not f["V"] and f["Rt"] == n and n != 31 and f["opc"] != 0:
        # CONSTRAINED UNPREDICTABLE, not UNDEFINED (Unicorn runs it): a relation between two
        # register fields, which no field value of the table says
        raise LiftError("writeback with Rt == Rn (unpredictable)")
    if idx == 1:
        em.out(f"{{ u64 _a = {base}; {_single(em, f, '_a')} {wb} }}")
    else:
        em.out(f"{{ u64 _a = {base} + {imm & (2**64 - 1):#x}ull; {_single(em, f, '_a')} {base} = _a; }}")


def h_rcpc2(em: FunctionEmitter, i: Insn) -> None:
    """LDAPUR*/STLUR* (Armv8.4 RCPC2): LDUR/STUR with acquire/release order.  x86-64 keeps
    loads acquire and stores release by itself (TSO); only the compiler must not move other
    accesses across them, hence the signal fences."""
    f = dict(i.f, V=0)  # (size 11 with opc 1x, size 10 with opc 11: RCPC2's _unlifted row)
    addr = f"{em.x(f['Rn'], 1, sp=True)} + {sext(f['imm9'], 9) & (2**64 - 1):#x}ull"
    fence = "__atomic_signal_fence(__ATOMIC_SEQ_CST);"
    em.out(f"{{ {fence} {_single(em, f, addr)} }}" if f["opc"] == 0 else f"{{ {_single(em, f, addr)} {fence} }}")


def h_regoff(em: FunctionEmitter, i: Insn) -> None:
    f = i.f
    opt = f["option"]  # (option x0x is reserved: the rows' ``!option=x0x``)
    m = em.x(f["Rm"], 1)
    ext = {2: f"(u64)(u32){m}", 3: m, 6: f"(u64)(i64)(i32){m}", 7: m}[opt]
    sh = _scale(f) if f["S"] else 0
    off = f"({ext} << {sh})" if sh else ext
    em.out(_single(em, f, f"{em.x(f['Rn'], 1, sp=True)} + {off}"))


def h_lit(em: FunctionEmitter, i: Insn) -> None:
    f = i.f
    addr = (i.addr + sext(f["imm19"], 19) * 4) & (2**64 - 1)
    a = f"{addr:#x}ull"
    opc, rt = f["opc"], f["Rt"]
    if f["V"]:  # (opc 11 is reserved: LDR_simd_lit's ``!opc=11``)
        em.out(_v_load(em, rt, [4, 8, 16][opc], a))
    elif opc == 3:
        em.out(";")  # PRFM literal
    else:
        em.out(_gp_load(em, rt, [4, 8, 4][opc], opc == 2, True, a))


def h_pair(em: FunctionEmitter, i: Insn) -> None:
    f = i.f
    opc, V, L, idx = f["opc"], f["V"], f["L"], f["idx"]
    t, t2, n = f["Rt"], f["Rt2"], f["Rn"]
    # (opc 11 and STGP, opc 01 with L 0, are the group's _unlifted row: isa.py's _pair_rows)
    if V:
        size = 4 << opc
    else:
        size = 8 if opc == 2 else 4
    signed = (not V) and opc == 1
    off = sext(f["imm7"], 7) * size
    base = em.x(n, 1, sp=True)
    if not V and L and t == t2:
        # CONSTRAINED UNPREDICTABLE, not UNDEFINED (Unicorn runs it; capstone prints .word): a
        # relation between two register fields, which no field value of the table says
        raise LiftError("LDP with Rt == Rt2 (unpredictable)")
    addr0 = "_a" if idx in (1, 3) else f"{base} + {off & (2**64 - 1):#x}ull"
    parts = []
    if idx == 1:
        parts.append(f"u64 _a = {base};")
    elif idx == 3:
        parts.append(f"u64 _a = {base} + {off & (2**64 - 1):#x}ull;")
    else:
        parts.append(f"u64 _a = {addr0};")
    if V:
        if L:
            # load both before writing, as with the general registers
            parts.append(f"{_v_load(em, t, size, '_a')} {_v_load(em, t2, size, f'_a + {size}')}")
        else:
            parts.append(f"{_v_store(em, t, size, '_a')} {_v_store(em, t2, size, f'_a + {size}')}")
    elif L:
        ld = (lambda a: f"(u64)(i64)(i32)L32({a})") if signed else (lambda a: f"(u64){_LD[size]}({a})")
        v2 = ld(f"_a + {size}")
        parts.append(f"u64 _v1 = {ld('_a')}, _v2 = {f'NX_SPLIT({v2})' if size == 8 else v2};")
        if t != 31:
            parts.append(f"x{t} = _v1;")
        if t2 != 31:
            parts.append(f"x{t2} = _v2;")
    else:
        first = _gp_store(em, t, size, "_a")
        if size == 8 and t2 != 31:  # see NX_SPLIT (lifted.h)
            second = em.reg_store(xbit(t2), f"S64(_a + 8, NX_SPLIT({em.x(t2)}));")
        else:
            second = _gp_store(em, t2, size, f"_a + {size}")
        parts.append(first + " " + second)
    if idx == 1:
        parts.append(f"{base} = _a + {off & (2**64 - 1):#x}ull;")
    elif idx == 3:
        parts.append(f"{base} = _a;")
    em.out("{ " + " ".join(parts) + " }")


def h_excl(em: FunctionEmitter, i: Insn) -> None:
    f = i.f
    size_f, o2, L, o1, o0 = f["size"], f["o2"], f["L"], f["o1"], f["o0"]
    t, t2, n, rs = f["Rt"], f["Rt2"], f["Rn"], f["Rs"]
    base = em.x(n, 1, sp=True)
    size = 1 << size_f
    fence = "__atomic_thread_fence(__ATOMIC_SEQ_CST); "
    if o2 == 0 and o1 == 0:  # LDXR/LDAXR / STXR/STLXR
        if L:
            tgt = f"x{t} = _v;" if t != 31 else ""
            em.out(
                f"{{ u64 _a = {base}; u64 _v = (u64){_LD[size]}(_a); EXCL_MARK(s, _a, _v, 0, {size}); {tgt} "
                f"{fence if o0 else ''}}}"
            )
        else:
            em.out(
                f"{{ {fence if o0 else ''}u32 _st = EXCL_STORE(s, {base}, ({_UT[size]}){em.x(t)}, 0, {size}); "
                f"{'' if rs == 31 else f'x{rs} = _st;'} }}"
            )
        return
    if o2 == 0 and o1 == 1 and size_f >= 2:  # LDXP/STXP
        half = 4 if size_f == 2 else 8
        if L:
            if half == 8:
                em.out(
                    f"{{ u64 _a = {base}; u128 _q = L128(_a); EXCL_MARK(s, _a, (u64)_q, (u64)(_q >> 64), 16); "
                    f"{'' if t == 31 else f'x{t} = (u64)_q;'} {'' if t2 == 31 else f'x{t2} = (u64)(_q >> 64);'} "
                    f"{fence if o0 else ''}}}"
                )
            else:
                em.out(
                    f"{{ u64 _a = {base}; u64 _q = L64(_a); EXCL_MARK(s, _a, _q, 0, 8); "
                    f"{'' if t == 31 else f'x{t} = (u32)_q;'} {'' if t2 == 31 else f'x{t2} = _q >> 32;'} "
                    f"{fence if o0 else ''}}}"
                )
        else:
            if half == 8:
                em.out(
                    f"{{ {fence if o0 else ''}u32 _st = EXCL_STORE(s, {base}, {em.x(t)}, {em.x(t2)}, 16); "
                    f"{'' if rs == 31 else f'x{rs} = _st;'} }}"
                )
            else:
                em.out(
                    f"{{ {fence if o0 else ''}u32 _st = EXCL_STORE(s, {base}, ((u64)(u32){em.x(t)}) | ((u64){em.x(t2)} << 32), 0, 8); "
                    f"{'' if rs == 31 else f'x{rs} = _st;'} }}"
                )
        return
    if o2 == 1 and o1 == 0:  # LDAR/LDLAR, STLR/STLLR
        if L:
            em.out(
                f"{{ u64 _v = (u64)__atomic_load_n(({_UT[size]} *){base}, __ATOMIC_ACQUIRE); "
                f"{'' if t == 31 else f'x{t} = _v;'} }}"
            )
        else:
            em.out(f"__atomic_store_n(({_UT[size]} *){base}, ({_UT[size]}){em.x(t)}, __ATOMIC_RELEASE);")
        return
    if o1 == 1 and o2 == 1:  # CAS / CASA / CASL / CASAL
        ut = _UT[size]
        em.out(
            f"{{ {ut} _e = ({ut}){em.x(rs)}; __atomic_compare_exchange_n(({ut} *){base}, &_e, ({ut}){em.x(t)}, 0, "
            f"__ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST); {'' if rs == 31 else f'x{rs} = (u64)_e;'} }}"
        )
        return
    # o1 = 1, o2 = 0, size 0x: CASP (the rows take no other value; an odd Rs or Rt is UNDEFINED:
    # CASP's ``!`` clauses)
    if size_f == 1:
        em.out(
            f"{{ u128 _e = (u128){em.x(rs)} | ((u128){em.x(rs + 1)} << 64); "
            f"u128 _n = (u128){em.x(t)} | ((u128){em.x(t + 1)} << 64); "
            f"__atomic_compare_exchange_n((u128 *){base}, &_e, _n, 0, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST); "
            f"{'' if rs == 31 else f'x{rs} = (u64)_e; x{rs + 1} = (u64)(_e >> 64);'} }}"
        )
    else:
        em.out(
            f"{{ u64 _e = (u64)(u32){em.x(rs)} | ((u64){em.x(rs + 1)} << 32); "
            f"u64 _n = (u64)(u32){em.x(t)} | ((u64){em.x(t + 1)} << 32); "
            f"__atomic_compare_exchange_n((u64 *){base}, &_e, _n, 0, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST); "
            f"{'' if rs == 31 else f'x{rs} = (u32)_e; x{rs + 1} = _e >> 32;'} }}"
        )


def h_atomic(em: FunctionEmitter, i: Insn) -> None:
    f = i.f  # (the rows fix V = 0; o3 = 1 with opc other than SWP's and LDAPR's: the group's _unlifted row)
    size = 1 << f["size"]
    ut = _UT[size]
    st = _ST_T[size]
    o3, opc, rs, t = f["o3"], f["opc"], f["Rs"], f["Rt"]
    base = em.x(f["Rn"], 1, sp=True)
    if o3 == 1 and opc == 4 and f["A"] and not f["R"] and rs == 31:  # LDAPR
        em.out(f"{{ u64 _v = (u64)__atomic_load_n(({ut} *){base}, __ATOMIC_ACQUIRE); {'' if t == 31 else f'x{t} = _v;'} }}")
        return
    v = f"({ut}){em.x(rs)}"
    p = f"({ut} *){base}"
    if o3 == 1:  # SWP
        e = f"__atomic_exchange_n({p}, {v}, __ATOMIC_SEQ_CST)"
    elif opc <= 3:
        fn = ["__atomic_fetch_add", "__atomic_fetch_and", "__atomic_fetch_xor", "__atomic_fetch_or"][opc]
        arg = f"({ut})~{v}" if opc == 1 else v
        e = f"{fn}({p}, {arg}, __ATOMIC_SEQ_CST)"
    else:
        cmp_t = st if opc in (4, 5) else ut
        better = ">" if opc in (4, 6) else "<"
        em.out(
            f"{{ {ut} _o = __atomic_load_n({p}, __ATOMIC_RELAXED), _m = {v}; "
            f"while (!__atomic_compare_exchange_n({p}, &_o, (({cmp_t})_m {better} ({cmp_t})_o) ? _m : _o, 1, "
            f"__ATOMIC_SEQ_CST, __ATOMIC_RELAXED)) {{}} {'' if t == 31 else f'x{t} = (u64)_o;'} }}"
        )
        return
    em.out(f"{{ u64 _o = (u64){e}; {'' if t == 31 else f'x{t} = _o;'} }}")


def h_simd_multi(em: FunctionEmitter, i: Insn) -> None:
    """LD1/ST1 (multiple structures, 1-4 registers) and LD2-4/ST2-4 with post-index."""
    f = i.f
    op, Q, L, size = f["opcode"], f["Q"], f["L"], f["size"]
    nregs = {7: 1, 10: 2, 6: 3, 2: 4}.get(op)
    inter = {0: 4, 4: 3, 8: 2}.get(op)
    nbytes = 16 if Q else 8
    t, n = f["Rt"], f["Rn"]
    base = em.x(n, 1, sp=True)
    parts = [f"u64 _a = {base};"]
    if nregs:
        total = nregs * nbytes
        for k in range(nregs):
            r = (t + k) % 32
            if L:
                parts.append(_v_load(em, r, nbytes, f"_a + {k * nbytes}"))
            else:
                parts.append(_v_store(em, r, nbytes, f"_a + {k * nbytes}"))
    else:  # LD2-LD4/ST2-ST4 (opcode 1000/0100/0000: the rows take no other opcode)
        esize = 1 << size  # (size:Q 110 is reserved: the rows' ``!size=11,Q=0``)
        lanes = nbytes // esize
        total = inter * nbytes
        regs = [(t + k) % 32 for k in range(inter)]
        if L:
            parts.append("NxVec _t[4]; memset(_t, 0, sizeof _t);")
            for e in range(lanes):
                for k in range(inter):
                    parts.append(f"memcpy(&_t[{k}].b[{e * esize}], (void *)(_a + {(e * inter + k) * esize}), {esize});")
            for k, r in enumerate(regs):
                parts.append(f"v{r} = _t[{k}];")
        else:
            for e in range(lanes):
                for k, r in enumerate(regs):
                    parts.append(f"memcpy((void *)(_a + {(e * inter + k) * esize}), &v{r}.b[{e * esize}], {esize});")
    if i.group == "LDST_multi_post":
        m = f["Rm"]
        inc = f"{total}" if m == 31 else em.x(m)
        parts.append(f"{base} = _a + {inc};")
    em.out("{ " + " ".join(parts) + " }")


def h_simd_single(em: FunctionEmitter, i: Insn) -> None:
    """LD1-LD4/ST1-ST4 single structure (one lane of 1-4 consecutive registers, modulo 32) and
    LD1R-LD4R (replicate to every lane), with optional post-index (immediate: the bytes moved)."""
    f = i.f
    op, Q, L, R, S, size = f["opcode"], f["Q"], f["L"], f["R"], f["S"], f["size"]
    t, n = f["Rt"], f["Rn"]
    selem = ((op & 1) << 1 | R) + 1  # structure elements: registers Rt .. Rt+selem-1
    regs = [(t + k) % 32 for k in range(selem)]
    base = em.x(n, 1, sp=True)
    parts = [f"u64 _a = {base};"]
    sc = op >> 1
    if sc == 3:  # LDnR (the rows fix L = 1, S = 0)
        esize = 1 << size
        lanes = (16 if Q else 8) // esize
        for k, r in enumerate(regs):
            parts.append(
                f"{{ u64 _e = (u64){_LD[esize]}(_a + {k * esize}); NxVec _r; _r.q = 0; "
                f"for (int _i = 0; _i < {lanes}; _i++) memcpy(&_r.b[_i * {esize}], &_e, {esize}); "
                f"v{r} = _r; }}"
            )
    else:
        # (the element sizes' reserved size/S values are the rows' ``!`` clauses: _SINGLE_RESERVED)
        if sc == 0:
            esize, idx = 1, (Q << 3) | (S << 2) | size
        elif sc == 1:
            esize, idx = 2, (Q << 2) | (S << 1) | (size >> 1)
        elif size == 0:
            esize, idx = 4, (Q << 1) | S
        else:  # size 01, S 0
            esize, idx = 8, Q
        for k, r in enumerate(regs):
            if L:
                parts.append(f"memcpy(&v{r}.b[{idx * esize}], (void *)(_a + {k * esize}), {esize});")
            else:
                parts.append(f"memcpy((void *)(_a + {k * esize}), &v{r}.b[{idx * esize}], {esize});")
    total = selem * esize
    if i.group == "LDST_single_post":
        m = f["Rm"]
        parts.append(f"{base} = _a + {total if m == 31 else em.x(m)};")
    em.out("{ " + " ".join(parts) + " }")
