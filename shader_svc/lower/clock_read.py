"""``ReadClock``'s SPIR-V (``ir/to_spirv.py``; the clock registers' translation and its facts:
``lower/clock.py``): ``OpReadClockKHR`` of SPV_KHR_shader_clock, its capability and extension
declared on first use."""

from __future__ import annotations


def read_clock(lw, scope: str) -> int:
    """``ReadClock``'s SPIR-V: the 64-bit clock of ``scope`` (Subgroup / Device)."""
    m = lw.m
    if not lw.__dict__.get("_shader_clock_cap"):
        m.emit("cap", "OpCapability", m.E("Capability", "ShaderClockKHR"))
        m.emit("ext", "OpExtension", "SPV_KHR_shader_clock")
        lw._shader_clock_cap = True
    return lw.op("OpReadClockKHR", lw.u64, lw.c(m.E("Scope", scope)))
