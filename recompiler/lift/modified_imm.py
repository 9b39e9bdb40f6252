"""Advanced SIMD modified immediate: MOVI, MVNI, ORR (vector, immediate), BIC (vector,
immediate) and FMOV (vector, immediate), one handler per encoding of each page
(``recompiler/isa.py``'s ``_modimm_rows``: the row fixes op, cmode's selecting bits and o2).

Each handler expands the eight immediate bits a:b:c:d:e:f:g:h as its encoding's
AdvSIMDExpandImm case says (Arm ARM, shared pseudocode ``AdvSIMDExpandImm``): the byte shifted
into a 32-bit or 16-bit element (cmode<2:1> or cmode<1> the byte's place), shifted in with ones
(MSL: cmode<0> picks 8 or 16 ones), repeated bytes, the byte's bits each widened to a byte
(64-bit MOVI), or ``VFPExpandImm`` of a single, double or half-precision value (FMOV).  MVNI writes
the inverse, ORR and BIC combine the element-replicated value with Vd; Q = 0 zeroes Vd's upper
64 bits.  The reserved encodings (o2 = 1 other than FMOV half, FMOV double with Q = 0) are the
group's last row, refused (``forms.h_unallocated``)."""

from __future__ import annotations

from recompiler.decode import Insn
from recompiler.lift.emitter import FunctionEmitter
from recompiler.lift.fp_f16 import expand_imm16
from recompiler.lift.fp_simd import vfp_expand_imm

M64 = (1 << 64) - 1


def _imm8(f: dict) -> int:
    return (f["a"] << 7) | (f["b"] << 6) | (f["c"] << 5) | (f["d"] << 4) | (f["e"] << 3) | (f["f"] << 2) | (f["g"] << 1) | f["h"]


def _rep32(v: int) -> int:
    return v | (v << 32)


def _shifted32(f: dict) -> int:
    """32-bit shifted immediate: the byte at bits 8 * cmode<2:1>, in each 32-bit element."""
    return _rep32(_imm8(f) << (8 * (f["cmode"] >> 1 & 3)))


def _shifted16(f: dict) -> int:
    """16-bit shifted immediate: the byte at bits 8 * cmode<1>, in each 16-bit element."""
    v = _imm8(f) << (8 * (f["cmode"] >> 1 & 1))
    return v * 0x0001000100010001


def _ones32(f: dict) -> int:
    """32-bit shifting ones (MSL #8 for cmode<0> = 0, #16 for 1)."""
    v = (_imm8(f) << 8 | 0xFF) if f["cmode"] & 1 == 0 else (_imm8(f) << 16 | 0xFFFF)
    return _rep32(v)


def _set(em: FunctionEmitter, i: Insn, imm64: int) -> None:
    """Vd = the 64-bit pattern in each half (Q = 1) or the low half, upper half zero."""
    d = i.f["Rd"]
    em.out(f"v{d}.d[0] = {imm64:#x}ull; v{d}.d[1] = {imm64 if i.f['Q'] else 0:#x}ull;")


def _orr(em: FunctionEmitter, i: Insn, imm64: int) -> None:
    d = i.f["Rd"]
    em.out(f"v{d}.d[0] |= {imm64:#x}ull; v{d}.d[1] = {'v%d.d[1] | %#xull' % (d, imm64) if i.f['Q'] else '0'};")


def _bic(em: FunctionEmitter, i: Insn, imm64: int) -> None:
    d = i.f["Rd"]
    em.out(f"v{d}.d[0] &= ~{imm64:#x}ull; v{d}.d[1] = {'v%d.d[1] & ~%#xull' % (d, imm64) if i.f['Q'] else '0'};")


def h_movi_32(em: FunctionEmitter, i: Insn) -> None:
    _set(em, i, _shifted32(i.f))


def h_movi_16(em: FunctionEmitter, i: Insn) -> None:
    _set(em, i, _shifted16(i.f))


def h_movi_ones(em: FunctionEmitter, i: Insn) -> None:
    _set(em, i, _ones32(i.f))


def h_movi_8(em: FunctionEmitter, i: Insn) -> None:
    _set(em, i, _imm8(i.f) * 0x0101010101010101)


def h_movi_64(em: FunctionEmitter, i: Insn) -> None:
    """MOVI Dd / Vd.2D: each bit of the byte widened to a byte of ones or zeros."""
    imm8 = _imm8(i.f)
    _set(em, i, sum(0xFF << (8 * k) for k in range(8) if imm8 >> k & 1))


def h_mvni_32(em: FunctionEmitter, i: Insn) -> None:
    _set(em, i, _shifted32(i.f) ^ M64)


def h_mvni_16(em: FunctionEmitter, i: Insn) -> None:
    _set(em, i, _shifted16(i.f) ^ M64)


def h_mvni_ones(em: FunctionEmitter, i: Insn) -> None:
    _set(em, i, _ones32(i.f) ^ M64)


def h_orr_32(em: FunctionEmitter, i: Insn) -> None:
    _orr(em, i, _shifted32(i.f))


def h_orr_16(em: FunctionEmitter, i: Insn) -> None:
    _orr(em, i, _shifted16(i.f))


def h_bic_32(em: FunctionEmitter, i: Insn) -> None:
    _bic(em, i, _shifted32(i.f))


def h_bic_16(em: FunctionEmitter, i: Insn) -> None:
    _bic(em, i, _shifted16(i.f))


def h_fmov_s(em: FunctionEmitter, i: Insn) -> None:
    _set(em, i, _rep32(vfp_expand_imm(_imm8(i.f), 32)))


def h_fmov_d(em: FunctionEmitter, i: Insn) -> None:
    _set(em, i, vfp_expand_imm(_imm8(i.f), 64))


def h_fmov_h(em: FunctionEmitter, i: Insn) -> None:
    _set(em, i, expand_imm16(_imm8(i.f)) * 0x0001000100010001)
