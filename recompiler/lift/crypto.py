"""The Armv8 cryptography extension: AESE/AESD/AESMC/AESIMC, SHA1C/P/M/H/SU0/SU1,
SHA256H/H2/SU0/SU1 and PMULL/PMULL2 (8x8 -> 16 and 64x64 -> 128 bits).  Each is one call
of a helper in ``cpu_host/runtime/core/lifted.h`` on ``NxVec`` copies of the operands."""

from __future__ import annotations

from recompiler.decode import Insn
from recompiler.lift import vector
from recompiler.lift.emitter import FunctionEmitter


def _set(em: FunctionEmitter, d: int, expr: str) -> None:
    em.out(f"{{ NxVec _r = {expr}; v{d} = _r; }}")


def h_aes(em: FunctionEmitter, i: Insn) -> None:
    f = i.f
    n, d = f["Rn"], f["Rd"]
    op = f["op"]
    if op == 0:
        _set(em, d, f"NX_AESE(v{d}, v{n})")
    elif op == 1:
        _set(em, d, f"NX_AESD(v{d}, v{n})")
    else:
        _set(em, d, f"NX_AES{'MC' if op == 2 else 'IMC'}(v{n})")


def h_sha3reg(em: FunctionEmitter, i: Insn) -> None:
    f = i.f
    n, m, d, op = f["Rn"], f["Rm"], f["Rd"], f["opcode"]
    if op in (0, 1, 2):  # SHA1C / SHA1P / SHA1M: Qd, Sn, Vm.4S
        _set(em, d, f"NX_SHA1HASH(v{d}, v{n}.s[0], v{m}, {op})")
    elif op == 3:
        _set(em, d, f"NX_SHA1SU0(v{d}, v{n}, v{m})")
    elif op == 4:  # SHA256H: X = Qd, Y = Qn
        _set(em, d, f"NX_SHA256HASH(v{d}, v{n}, v{m}, 1)")
    elif op == 5:  # SHA256H2: X = Qn, Y = Qd
        _set(em, d, f"NX_SHA256HASH(v{n}, v{d}, v{m}, 0)")
    else:  # 6: SHA256SU1 (opcode 7 is reserved: SHA_3reg_unlifted)
        _set(em, d, f"NX_SHA256SU1(v{d}, v{n}, v{m})")


def h_sha2reg(em: FunctionEmitter, i: Insn) -> None:
    f = i.f
    n, d, op = f["Rn"], f["Rd"], f["opcode"]
    if op == 0:  # SHA1H: Sd = ROL(Sn, 30)
        em.out(f"{{ u32 _e = v{n}.s[0]; {vector.low(em, d, '((_e << 30) | (_e >> 2))')} }}")
    elif op == 1:
        _set(em, d, f"NX_SHA1SU1(v{d}, v{n})")
    else:  # 2: SHA256SU0 (other opcodes are reserved: SHA_2reg_unlifted)
        _set(em, d, f"NX_SHA256SU0(v{d}, v{n})")


def h_pmull(em: FunctionEmitter, i: Insn) -> None:
    f = i.f
    Q, size, n, m, d = f["Q"], f["size"], f["Rn"], f["Rm"], f["Rd"]
    if size == 3:  # PMULL{2} Vd.1Q, Vn.{1,2}D, Vm.{1,2}D
        em.out(f"{{ u128 _p = NX_CLMUL64(v{n}.d[{Q}], v{m}.d[{Q}]); v{d}.q = _p; }}")
    else:  # size 00: PMULL{2} Vd.8H, Vn.{8,16}B, Vm.{8,16}B (01 and 10 are reserved: isa.py)
        em.out(
            f"{{ NxVec a = v{n}, b = v{m}, _r; for (int i = 0; i < 8; i++) "
            f"_r.h[i] = NX_CLMUL8(a.b[{8 * Q} + i], b.b[{8 * Q} + i]); v{d} = _r; }}"
        )


# ---- Armv8.2 SHA512 and SHA3 (optional features; Switch 1's Cortex-A57 has neither, so
# HWCAP does not claim them, but programs built for newer cores use them unconditionally) ----
def _s512(e: str, a: int, b: int, c: int, shift: bool) -> str:
    last = f"({e} >> {c})" if shift else f"ROR64({e}, {c})"
    return f"(ROR64({e}, {a}) ^ ROR64({e}, {b}) ^ {last})"


def h_sha512(em: FunctionEmitter, i: Insn) -> None:
    f = i.f
    n, m, d, op = f["Rn"], f["Rm"], f["Rd"], f["opcode"]
    pre = f"NxVec X = v{n}, Y = v{m}, W = v{d}, T; u64 t;"
    if op == 0:  # SHA512H
        body = (
            f"t = (Y.d[1] & X.d[0]) ^ (~Y.d[1] & X.d[1]); T.d[1] = t + {_s512('Y.d[1]', 14, 18, 41, False)} + W.d[1]; "
            f"t = T.d[1] + Y.d[0]; T.d[0] = ((t & Y.d[1]) ^ (~t & X.d[0])) + {_s512('t', 14, 18, 41, False)} + W.d[0];"
        )
    elif op == 1:  # SHA512H2
        body = (
            f"T.d[1] = ((X.d[0] & Y.d[1]) ^ (X.d[0] & Y.d[0]) ^ (Y.d[1] & Y.d[0])) + {_s512('Y.d[0]', 28, 34, 39, False)} + W.d[1]; "
            f"t = T.d[1]; T.d[0] = ((t & Y.d[0]) ^ (t & Y.d[1]) ^ (Y.d[1] & Y.d[0])) + {_s512('t', 28, 34, 39, False)} + W.d[0];"
        )
    elif op == 2:  # SHA512SU1
        body = (
            f"T.d[1] = W.d[1] + {_s512('X.d[1]', 19, 61, 6, True)} + Y.d[1]; "
            f"T.d[0] = W.d[0] + {_s512('X.d[0]', 19, 61, 6, True)} + Y.d[0]; (void)t;"
        )
    else:  # RAX1: Vd.2D = Vn ^ ROL(Vm, 1)
        body = "T.d[0] = X.d[0] ^ ROR64(Y.d[0], 63); T.d[1] = X.d[1] ^ ROR64(Y.d[1], 63); (void)t; (void)W;"
    em.out(f"{{ {pre} {body} v{d} = T; }}")


def h_sha512su0(em: FunctionEmitter, i: Insn) -> None:
    n, d = i.f["Rn"], i.f["Rd"]
    em.out(
        f"{{ NxVec W = v{d}, X = v{n}, T; T.d[0] = W.d[0] + {_s512('W.d[1]', 1, 8, 7, True)}; "
        f"T.d[1] = W.d[1] + {_s512('X.d[0]', 1, 8, 7, True)}; v{d} = T; }}"
    )


def h_sha3_4reg(em: FunctionEmitter, i: Insn) -> None:
    f = i.f
    n, m, a, d = f["Rn"], f["Rm"], f["Ra"], f["Rd"]
    if f["op"] == 0:  # EOR3
        e = f"v{n}.q ^ v{m}.q ^ v{a}.q"
    else:  # op 01: BCAX (1x are reserved: SHA3_4reg_unlifted)
        e = f"v{n}.q ^ (v{m}.q & ~v{a}.q)"
    em.out(f"{{ u128 _q = {e}; v{d}.q = _q; }}")


def h_xar(em: FunctionEmitter, i: Insn) -> None:
    f = i.f
    n, m, d, r = f["Rn"], f["Rm"], f["Rd"], f["imm6"]
    em.out(f"{{ NxVec a = v{n}, b = v{m}, T; for (int i = 0; i < 2; i++) T.d[i] = ROR64(a.d[i] ^ b.d[i], {r}); v{d} = T; }}")
