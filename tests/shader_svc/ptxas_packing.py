"""Reading back how ptxas packs a texture instruction's operands: a one-instruction PTX kernel
to build, and, from nvdisasm's listing of it, which kernel parameter each register holds."""

from __future__ import annotations

import re
import struct
from dataclasses import dataclass

# the destination vector of every ptx_kernel instruction
V = "{%f10,%f11,%f12,%f13}"


def ptx_kernel(ins: str) -> str:
    """A PTX kernel k(out, a, b, c, d, e) for sm_53 whose body is the texture instruction ``ins``
    (reading texref t into V, stored to out); a..e loaded as both .f32 and .u32."""
    return f""".version 7.0
.target sm_53
.address_size 64
.global .texref t;
.visible .entry k(.param .u64 out, .param .f32 a, .param .f32 b, .param .f32 c, .param .f32 d, .param .f32 e)
{{
  .reg .f32 %f<20>; .reg .u64 %rd<4>; .reg .b32 %r<8>;
  ld.param.u64 %rd1, [out]; ld.param.f32 %f1, [a]; ld.param.f32 %f2, [b]; ld.param.f32 %f3, [c];
  ld.param.f32 %f4, [d]; ld.param.f32 %f5, [e];
  ld.param.u32 %r1, [a]; ld.param.u32 %r2, [b]; ld.param.u32 %r3, [c]; ld.param.u32 %r4, [d];
  ld.param.u32 %r5, [e];
  {ins}
  st.global.v4.f32 [%rd1], {V};
  ret;
}}
"""


def register_sources(lines: list) -> dict[int, object]:
    """Register -> what the listing loaded into it last: a parameter's offset (MOV / IMAD.MOV / I2I from the
    constant bank; FMUL by it, ptxas's cube-coordinate scaling; SEL of it and 0xffff, its layer
    clamp), 0 (MOV RZ) or 'bfi' (offsets packed by BFI)."""
    out: dict[int, object] = {}
    for ln in lines:
        m = re.match(r"(R\d+), (.*)", ln.operands)
        if not m or ln.pred:
            continue
        reg, src = int(m.group(1)[1:]), m.group(2)
        c = re.search(r"c\[0x0\] ?\[(0x[0-9a-f]+)\]", src)
        sel = re.fullmatch(r"R(\d+), 0xffff, !?P\d", src)
        if ln.opcode == "BFI" or (ln.opcode.startswith("LOP3") and re.search(r", 0x(3f00|f0|f00), ", src)):
            out[reg] = "bfi"  # offsets packed (sm_53 BFI, sm_86 LOP3 of y << 8 / 4, z << 8)
        elif ln.opcode == "SEL" and sel:  # ptxas's clamp of a layer to 16 bits (sm_86)
            out[reg] = out.get(int(sel.group(1)), "other")
        elif ln.opcode.startswith(("MOV", "IMAD.MOV", "I2I", "FMUL")) and c:
            out[reg] = int(c.group(1), 16)
        elif ln.opcode == "MOV" and src == "RZ":
            out[reg] = 0
        else:
            out[reg] = "other"
    return out


@dataclass(frozen=True)
class Packed:
    """The one instruction ptxas made of a PTX texture instruction, as our decoder reads it, and
    what the listing had loaded into each register before it (register_sources)."""

    ins: str
    inst: object
    sources: dict
    listing: dict  # address -> nvdisasm 11.8's line, the whole kernel
    at: int  # the instruction's address

    def check_roles(self, regs_roles: list[tuple[int, str]], want: dict) -> None:
        """Each (register, role): the listing loaded ``want[role]`` into the register."""
        for reg, role in regs_roles:
            assert self.sources.get(reg) == want[role], (self.ins, self.inst.text(), role, reg, self.sources.get(reg))


def packed_sm53(ins: str, opcode: str) -> Packed:
    """ptx_kernel(ins) built by ptxas for sm_53 and listed by nvdisasm 11.8: its one instruction
    whose opcode starts with ``opcode``."""
    import cubin
    import nvtools
    from shader_svc.sm53 import decode as dec53
    import sm53_tools as tools

    cub = nvtools.ptxas(ptx_kernel(ins), "sm_53")
    listing = tools.nvdisasm53_cubin(cub)["k"]
    addrs = sorted(listing)
    at = [a for a in addrs if listing[a].opcode.startswith(opcode)]
    assert len(at) == 1, (ins, [listing[a].opcode for a in addrs])
    inst = dec53.decode(struct.unpack_from("<Q", cubin.kernels(cub)["k"].code, at[0])[0])
    return Packed(ins, inst, register_sources([listing[a] for a in addrs if a < at[0]]), listing, at[0])
