"""Text forms both ISAs' printers and assemblers share: doubles as nvdisasm prints them
(``%.20g``, ``%.20e`` from 1e9 up, ``+INF ``/``-QNAN `` with their trailing space, ``-0.0``)
and read back."""

from __future__ import annotations

import struct


def fmt_f64(bits: int) -> str:
    """The double with these 64 bits as nvdisasm prints it."""
    if bits == 1 << 63:
        return "-0.0"
    exp, frac, sign = (bits >> 52) & 0x7FF, bits & ((1 << 52) - 1), "-" if bits >> 63 else "+"
    if exp == 0x7FF:
        return f"{sign}INF " if frac == 0 else f"{sign}{'Q' if frac >> 51 else 'S'}NAN "
    v = struct.unpack("<d", struct.pack("<Q", bits))[0]
    if v != 0 and abs(v) >= 1e9:
        return f"{v:.20e}"
    return f"{v:.20g}"


def parse_f64(s: str) -> int:
    """The 64 bits of a double written as nvdisasm prints one; ValueError if it is none."""
    t = s.strip()
    specials = {"+INF": 0x7FF << 52, "-INF": 0xFFF << 52, "+QNAN": 0xFFF << 51, "-QNAN": 0x1FFF << 51, "-0.0": 1 << 63}
    if t in specials:
        return specials[t]
    try:
        return struct.unpack("<Q", struct.pack("<d", float(t)))[0]
    except OverflowError:
        raise ValueError(f"double {s!r} out of range") from None


def fmt_f32(bits: int, snan: bool = True) -> str:
    """The float with these 32 bits as nvdisasm prints it (special values and -0.0 followed by
    nvdisasm's space).  ``snan``: signalling NaNs print as SNAN (nvdisasm 13; 11.8 prints every
    NaN as QNAN)."""
    if bits == 0x80000000:
        return "-0.0 "
    exp, frac, sign = (bits >> 23) & 0xFF, bits & 0x7FFFFF, "-" if bits >> 31 else "+"
    if exp == 0xFF:
        return f"{sign}INF " if frac == 0 else f"{sign}{'Q' if frac >> 22 or not snan else 'S'}NAN "
    v = struct.unpack("<f", struct.pack("<I", bits))[0]
    if v != 0 and abs(v) >= 1e9:
        return f"{v:.20e}"
    return f"{v:.20g}"


def parse_f32(s: str) -> int:
    """The 32 bits of a float written as nvdisasm prints one; ValueError if it is none."""
    t = s.strip()
    specials = {"+INF": 0x7F800000, "-INF": 0xFF800000, "+QNAN": 0x7FC00000, "-QNAN": 0xFFC00000, "-0.0": 0x80000000}
    if t in specials:
        return specials[t]
    try:
        return struct.unpack("<I", struct.pack("<f", float(t)))[0]
    except OverflowError:
        raise ValueError(f"float {s!r} out of range") from None


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
