"""The clock special registers as a real device clock (shader-ctl2, issue 31).

Facts (nvdisasm 13 names the SR field values, ``sm86/table.py``'s last rows; PTX ISA "Special
Registers"): ``SR_CLOCKLO``/``SR_CLOCKHI`` (0x50/0x51) are the SM's cycle counter, PTX
``%clock`` / ``%clock64`` (nvcc's ``clock()``: ``CS2R.32 Rd, SR_CLOCKLO``; ``clock64()``:
``CS2R Rd, SR_CLOCKLO``, the 64-bit pair Rd, Rd+1 read at once); ``SR_GLOBALTIMERLO``/``HI``
(0x52/0x53) the global nanosecond timer, PTX ``%globaltimer`` (cuda::barrier's back-off reads
it).  ``S2R``/``S2UR`` read one 32-bit half.

Translation: SPIR-V ``OpReadClockKHR`` (SPV_KHR_shader_clock, capability ShaderClockKHR; Vulkan
VK_KHR_shader_clock) — the SM counter as the subgroup-scope clock (shaderSubgroupClock: a
counter of the invocation's processor, like the SM's), the global timer as the device-scope
clock (shaderDeviceClock: one counter for the device).  Vulkan leaves both clocks' units
unspecified, so the global timer is not in nanoseconds here; what a real clock has is kept:
a later read in an invocation never gives less (64 bits; a 32-bit half wraps), and the two
halves of a 64-bit pair come from one read.  The device must have the extension:
``request.FEATURES["shader_clock"]``, a ``Program.features`` bit the GPU process sets where the
device has both clocks; without it a clock read is refused by name (never a made-up value)."""

from __future__ import annotations

from shader_svc.ir import to_spirv as ir_spirv
from shader_svc.ir.block import Block
from shader_svc.isa.inst import Inst
from shader_svc.lower.base import TranslateError
from shader_svc.lower.fence import features_of
from shader_svc.request import FEATURES

FEATURE_SHADER_CLOCK = FEATURES["shader_clock"]
# SR field -> (name, SPIR-V scope of the clock, which half)
CLOCK_SREGS = {
    0x50: ("SR_CLOCKLO", "Subgroup", 0),
    0x51: ("SR_CLOCKHI", "Subgroup", 1),
    0x52: ("SR_GLOBALTIMERLO", "Device", 0),
    0x53: ("SR_GLOBALTIMERHI", "Device", 1),
}


class Clock53:
    """Mixin of the compute lowerings (first among their bases): S2R / S2UR / CS2R of one clock
    half (SM53's CS2R reads one register); every other special register goes on to the next
    lowering."""

    def _clock_allowed(self, inst: Inst, name: str) -> None:
        if not features_of(self) & FEATURE_SHADER_CLOCK:
            raise TranslateError(
                f"{inst.text()}: {name} needs a device clock (VK_KHR_shader_clock; the program's features lack shader_clock)",
                offset=inst.addr,
            )

    def op_s2r(self, inst: Inst) -> None:
        sr = inst.ops["sr"]["sr"]
        if sr not in CLOCK_SREGS:
            return super().op_s2r(inst)  # type: ignore[misc]
        name, scope, half = CLOCK_SREGS[sr]
        self._clock_allowed(inst, name)
        b = Block()
        t = b.emit("ReadClock", scope=scope)
        v = b.op("Trunc32", b.op("Shr64", t, b.const_u64(32))) if half else b.op("Trunc32", t)
        self.put_ir(b, inst, v)
        ir_spirv.emit(self, b)

    def op_cs2r(self, inst: Inst) -> None:
        if inst.ops["sr"]["sr"] not in CLOCK_SREGS:
            return super().op_cs2r(inst)  # type: ignore[misc]
        self.op_s2r(inst)


class Clock86(Clock53):
    """SM86: CS2R also reads a 64-bit pair (Rd, Rd+1) from one clock read (``clock64()``)."""

    def op_cs2r(self, inst: Inst) -> None:
        sr = inst.ops["sr"]["sr"]
        if sr not in CLOCK_SREGS:
            return super().op_cs2r(inst)
        if not inst.mods["w32"]:  # CS2R.32 (bit 80 clear, the table's ``w32`` 0): one half, as S2R
            return self.op_s2r(inst)
        name, scope, half = CLOCK_SREGS[sr]
        if half:  # a pair from the high half would take the next register's value
            raise TranslateError(f"{inst.text()}: a 64-bit pair starting at {name} not translated", offset=inst.addr)
        self._clock_allowed(inst, name)
        d = inst.ops.get("d", {}).get("reg", 255)
        b = Block()
        t = b.emit("ReadClock", scope=scope)
        if d != 255:
            b.set_reg(d, b.op("Trunc32", t))
            b.set_reg(d + 1, b.op("Trunc32", b.op("Shr64", t, b.const_u64(32))))
        ir_spirv.emit(self, b)
