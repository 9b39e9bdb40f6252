"""Text forms both ISAs' printers and assemblers share: doubles as nvdisasm prints them
(``%.20g``, ``%.20e`` from 1e9 up, ``+INF ``/``-QNAN `` with their trailing space, ``-0.0``)
and read back."""

from __future__ import annotations

import struct


# width: (exponent bits, fraction bits, struct formats of the value and of its bits)
_IEEE = {64: (11, 52, "<d", "<Q"), 32: (8, 23, "<f", "<I")}


def _fmt(bits: int, width: int, neg_zero: str, snan: bool) -> str:
    """The IEEE value of ``width`` bits as nvdisasm prints it; -0.0 as ``neg_zero``."""
    ebits, mbits, vfmt, bfmt = _IEEE[width]
    if bits == 1 << (width - 1):
        return neg_zero
    exp, frac, sign = (bits >> mbits) & ((1 << ebits) - 1), bits & ((1 << mbits) - 1), "-" if bits >> (width - 1) else "+"
    if exp == (1 << ebits) - 1:
        return f"{sign}INF " if frac == 0 else f"{sign}{'Q' if frac >> (mbits - 1) or not snan else 'S'}NAN "
    v = struct.unpack(vfmt, struct.pack(bfmt, bits))[0]
    if v != 0 and abs(v) >= 1e9:
        return f"{v:.20e}"
    return f"{v:.20g}"


def _parse(s: str, width: int, what: str) -> int:
    """The bits of an IEEE value of ``width`` bits written as nvdisasm prints one (``what``
    names it in the error); ValueError if it is none."""
    ebits, mbits, vfmt, bfmt = _IEEE[width]
    t = s.strip()
    neg, inf = 1 << (width - 1), ((1 << ebits) - 1) << mbits
    qnan = inf | 1 << (mbits - 1)
    specials = {"+INF": inf, "-INF": neg | inf, "+QNAN": qnan, "-QNAN": neg | qnan, "-0.0": neg}
    if t in specials:
        return specials[t]
    try:
        return struct.unpack(bfmt, struct.pack(vfmt, float(t)))[0]
    except OverflowError:
        raise ValueError(f"{what} {s!r} out of range") from None


def fmt_f64(bits: int) -> str:
    """The double with these 64 bits as nvdisasm prints it."""
    return _fmt(bits, 64, "-0.0", True)


def parse_f64(s: str) -> int:
    """The 64 bits of a double written as nvdisasm prints one; ValueError if it is none."""
    return _parse(s, 64, "double")


def fmt_f32(bits: int, snan: bool = True) -> str:
    """The float with these 32 bits as nvdisasm prints it (special values and -0.0 followed by
    nvdisasm's space).  ``snan``: signalling NaNs print as SNAN (nvdisasm 13; 11.8 prints every
    NaN as QNAN)."""
    return _fmt(bits, 32, "-0.0 ", snan)


def parse_f32(s: str) -> int:
    """The 32 bits of a float written as nvdisasm prints one; ValueError if it is none."""
    return _parse(s, 32, "float")


def spaced(s: str) -> str:
    """A double's text as it stands among operands: nvdisasm follows -0.0 with a space, as its
    other special values ('-0.0 , P0'; at the end of a line the space is trimmed)."""
    return "-0.0 " if s == "-0.0" else s


def f16_to_f64_bits(h: int) -> int:
    """The 64 bits of the double equal to the half with bits ``h``."""
    return struct.unpack("<Q", struct.pack("<d", struct.unpack("<e", struct.pack("<H", h))[0]))[0]


def f16_to_f32_bits(h: int) -> int:
    """The 32 bits of the float equal to the half with bits ``h``."""
    return struct.unpack("<I", struct.pack("<f", struct.unpack("<e", struct.pack("<H", h))[0]))[0]


def f64_text_to_f16(s: str) -> int:
    """The half equal to a double written as nvdisasm prints one (rounded to the nearest half);
    ValueError if the text is no double or out of the half's range."""
    try:
        return struct.unpack("<H", struct.pack("<e", struct.unpack("<d", struct.pack("<Q", parse_f64(s)))[0]))[0]
    except (OverflowError, struct.error):
        raise ValueError(f"half {s!r} out of range") from None


def hex_signed(v: int) -> str:
    """An integer as nvdisasm prints one: '0x10', '-0x10'."""
    return f"-{-v:#x}" if v < 0 else f"{v:#x}"


def reg_name(n: int, file: str = "R") -> str:
    """A register's name: file 'R' (255 = RZ), 'UR' (63 = URZ), 'B' (convergence barriers)."""
    if file == "R":
        return "RZ" if n == 255 else f"R{n}"
    if file == "B":
        return f"B{n}"
    return "URZ" if n == 63 else f"UR{n}"


def pred_name(p: int, neg: bool, file: str = "P") -> str:
    """A predicate's text: '!P3', 'PT' (7), SM86's uniform 'UP0'/'UPT'."""
    return ("!" if neg else "") + (f"{file}T" if p == 7 else f"{file}{p}")
