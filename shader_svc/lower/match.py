"""MATCH (SM86; issue 31, shader-tex): PTX match.any.sync / match.all.sync on the emulated 32-lane
warp of ``lower/memory.py`` (a workgroup array between workgroup barriers: the device's
subgroups may be smaller than a warp, lavapipe's are 8 lanes), not subgroup operations.

PTX ISA, "match.sync": ``match.any`` gives each thread the mask of the threads (of membermask)
whose operand equals its own; ``match.all`` gives membermask where every thread's operand is the
same, else 0, and the predicate says which.  ptxas compiles ``__match_any_sync`` /
``__match_all_sync`` on the full warp to ``MATCH.ANY`` / ``MATCH.ALL`` (.U64 for 64-bit operands:
the pair Ra, Ra+1), the mask left to WARPSYNC.  Here the warp's members are the lanes the
workgroup has (the emulated warp's rule: a warp operation runs where every lane reaches it).
IR row ``WarpMatch`` (lo, hi): ``all`` 0 the any-mask, 1 the all-result; ``wide`` compares the
64-bit pair.
"""

from __future__ import annotations

from shader_svc.ir import to_spirv as ir_spirv
from shader_svc.ir.block import Block
from shader_svc.isa.inst import Inst
from shader_svc.lower.base import LowerBase

MATCH_RULES = {"MATCH": "op_match"}


class WarpMatch(LowerBase):
    """Mixin of SM86's compute lowering (after the memory mixin, whose exchange it uses)."""

    def lowered(self, ir: str) -> bool:
        return ir in MATCH_RULES or super().lowered(ir)

    def op_match(self, inst: Inst) -> None:
        """MATCH.ANY / MATCH.ALL (.U64): Rd the mask; MATCH.ALL's predicate 'all equal'."""
        ops, mods = inst.ops, inst.mods
        a = ops["a"]["reg"]
        wide = bool(mods.get("U64"))
        b = Block()
        lo = b.get_reg(a) if a != 255 else b.const_u32(0)
        hi = (b.get_reg(a + 1) if a != 255 else b.const_u32(0)) if wide else b.const_u32(0)
        everyone = mods["mode"] == 0  # 0 .ALL, 1 .ANY
        r = b.emit("WarpMatch", lo, hi, all=int(everyone), wide=int(wide))
        if ops["d"]["reg"] != 255:
            b.set_reg(ops["d"]["reg"], r)
        p = ops.get("p")
        if everyone and p is not None and p["pred"] != 7:
            b.set_pred(p["pred"], b.op("INe32", r, b.const_u32(0)))
        ir_spirv.emit(self, b)

    def warp_match(self, lo: int, hi: int, everyone: int, wide: int) -> int:
        """``WarpMatch``: each lane compares the warp's published values with its own."""
        u32, b_ = self.u32, self.bool
        n = self.spec.local_size[0] * self.spec.local_size[1] * self.spec.local_size[2]
        lid, _lane, base = self._publish(lo)
        xs = []
        for j in range(32):
            at = self.op("OpIAdd", u32, base, self.c(j))
            inside = self._lane_in(at, n, j)  # ended lanes are not members (lower/warp.py)
            xs.append((inside, self.op("OpLoad", u32, self._xchg_ptr(self.op("OpSelect", u32, inside, at, lid)))))
        his = None
        if wide:
            _, _, _ = self._publish(hi)
            his = [
                self.op(
                    "OpLoad", u32, self._xchg_ptr(self.op("OpSelect", u32, ins, self.op("OpIAdd", u32, base, self.c(j)), lid))
                )
                for j, (ins, _x) in enumerate(xs)
            ]
        mask, members = self.c(0), self.c(0)
        for j, (inside, x) in enumerate(xs):
            eq = self.op("OpIEqual", b_, x, lo)
            if his is not None:
                eq = self.op("OpLogicalAnd", b_, eq, self.op("OpIEqual", b_, his[j], hi))
            eq = self.op("OpLogicalAnd", b_, eq, inside)
            mask = self.op("OpBitwiseOr", u32, mask, self.op("OpSelect", u32, eq, self.c(1 << j), self.c(0)))
            members = self.op("OpBitwiseOr", u32, members, self.op("OpSelect", u32, inside, self.c(1 << j), self.c(0)))
        if not everyone:
            return mask
        return self.op("OpSelect", u32, self.op("OpIEqual", b_, mask, members), members, self.c(0))
