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
