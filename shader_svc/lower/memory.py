"""Memory and the warp, both ISAs: shared memory (a workgroup array), local memory (a
per-invocation array), generic addresses split between the shared window and global memory,
atomics without a SPIR-V instruction (compare-exchange loops), and NVIDIA's 32-lane warp
emulated through a workgroup exchange array between barriers (SHFL, VOTE), so results do not
depend on the device's subgroup size."""

from __future__ import annotations

from shader_svc.isa.inst import Inst
from shader_svc.lower.base import LOCAL_WORDS, SHARED_WORDS, LowerBase


class MemoryWarp(LowerBase):
    """Mixin: memory spaces and the emulated warp (module docstring)."""

    # --- shared memory and the emulated 32-lane warp (both ISAs) -------------------------------
    def shared_word(self, byte_addr: int) -> int:
        if "shared" not in self.vars_global:
            m, E = self.m, self.m.E
            wg = E("StorageClass", "Workgroup")
            arr = m.type("OpTypeArray", self.u32, self.c(SHARED_WORDS))
            v = m.id()
            m.emit("types", "OpVariable", m.type("OpTypePointer", wg, arr), v, wg)
            self.vars_global["shared"] = (v, m.type("OpTypePointer", wg, self.u32))
            self.interface.append(v)
        v, ptr = self.vars_global["shared"]
        idx = self.op(
            "OpBitwiseAnd", self.u32, self.op("OpShiftRightLogical", self.u32, byte_addr, self.c(2)), self.c(SHARED_WORDS - 1)
        )
        return self.op("OpAccessChain", ptr, v, idx)

    # NVIDIA's warp is 32 invocations; Vulkan subgroups may be smaller (lavapipe: 8), so a warp
    # is emulated: invocation i of the workgroup is lane i % 32 of warp i / 32, and a warp-wide
    # operation exchanges values through a workgroup array between two workgroup barriers.  No
    # subgroup operation is used, so the result does not depend on the device's subgroup size;
    # the barriers need every invocation to reach the operation (as ptxas code does outside
    # divergent regions; predicated warp operations are refused).
    def _lid(self) -> int:
        x, y, _ = self.spec.local_size
        v = self.op("OpLoad", self.v3, self.builtins["LocalInvocationId"])
        ids = [self.op("OpCompositeExtract", self.u32, v, i) for i in range(3)]
        r = self.op("OpIAdd", self.u32, ids[0], self.op("OpIMul", self.u32, ids[1], self.c(x)))
        return self.op("OpIAdd", self.u32, r, self.op("OpIMul", self.u32, ids[2], self.c(x * y)))

    def _xchg_ptr(self, idx: int) -> int:
        if "xchg" not in self.vars_global:
            m, E = self.m, self.m.E
            wg = E("StorageClass", "Workgroup")
            n = self.spec.local_size[0] * self.spec.local_size[1] * self.spec.local_size[2]
            arr = m.type("OpTypeArray", self.u32, self.c(n))
            v = m.id()
            m.emit("types", "OpVariable", m.type("OpTypePointer", wg, arr), v, wg)
            self.vars_global["xchg"] = (v, m.type("OpTypePointer", wg, self.u32))
            self.interface.append(v)
        v, ptr = self.vars_global["xchg"]
        return self.op("OpAccessChain", ptr, v, idx)

    def _barrier(self) -> None:
        E = self.m.E
        wg = self.c(E("Scope", "Workgroup"))
        self.do(
            "OpControlBarrier", wg, wg, self.c(E("MemorySemantics", "AcquireRelease") | E("MemorySemantics", "WorkgroupMemory"))
        )

    def _local_access(self, addr: int, reg: int, n: int, load: bool) -> None:
        """LDL/STL of ``n`` words at byte address ``addr`` into / from registers ``reg``...
        (both ISAs): a per-invocation array of LOCAL_WORDS words, addresses taken modulo its size."""
        if "local" not in self.vars:
            arr = self.m.type("OpTypeArray", self.u32, self.c(LOCAL_WORDS))
            self.vars["local"] = (self.m.id(), self.m.type("OpTypePointer", self.m.E("StorageClass", "Function"), arr))
        for i in range(n):
            w = self.op("OpIAdd", self.u32, addr, self.c(4 * i))
            idx = self.op(
                "OpBitwiseAnd", self.u32, self.op("OpShiftRightLogical", self.u32, w, self.c(2)), self.c(LOCAL_WORDS - 1)
            )
            p = self.op("OpAccessChain", self.fn_u32, self.vars["local"][0], idx)
            if load:
                if reg != 255:
                    self.set_reg(reg + i, self.op("OpLoad", self.u32, p))
            else:
                self.do("OpStore", p, self.reg(reg + i) if reg != 255 else self.c(0))

    def _vote_ballot(self, p: int, mode: int) -> tuple[int, int]:
        """VOTE over the emulated 32-lane warp (both ISAs): every lane publishes its predicate
        ``p``, then reads its warp's 32 slots (lanes past the workgroup's end count as absent).
        Returns the ballot and the mode's result (0 ALL, 1 ANY, 2 EQ: all or none)."""
        n = self.spec.local_size[0] * self.spec.local_size[1] * self.spec.local_size[2]
        lid, _lane, base = self._publish(self.op("OpSelect", self.u32, p, self.c(1), self.c(0)))
        ballot, members = self.c(0), self.c(0)
        for j in range(32):
            at = self.op("OpIAdd", self.u32, base, self.c(j))
            inside = self.op("OpULessThan", self.bool, at, self.c(n))
            v = self.op("OpLoad", self.u32, self._xchg_ptr(self.op("OpSelect", self.u32, inside, at, lid)))
            v = self.op("OpSelect", self.u32, inside, v, self.c(0))
            ballot = self.op("OpBitwiseOr", self.u32, ballot, self.op("OpShiftLeftLogical", self.u32, v, self.c(j)))
            members = self.op("OpBitwiseOr", self.u32, members, self.op("OpSelect", self.u32, inside, self.c(1 << j), self.c(0)))
        anyv = self.op("OpINotEqual", self.bool, ballot, self.c(0))
        allv = self.op("OpIEqual", self.bool, ballot, members)
        r = {0: allv, 1: anyv, 2: self.op("OpLogicalOr", self.bool, allv, self.op("OpLogicalNot", self.bool, anyv))}[mode]
        return ballot, r

    def _atomic_loop(self, ptr: int, scope: int, sem: int, fn) -> int:
        """An atomic read-modify-write SPIR-V has no instruction for (INC/DEC with their wrap
        limit, float add/min/max): a compare-exchange loop on the 32-bit word, ``fn(old) ->
        new``; returns the old value the exchange saw."""
        u32, b_ = self.u32, self.bool
        res = self.var(f"atom{len(self.body)}", self.fn_u32)
        head, body, cont, merge = (self.label() for _ in range(4))
        self.do("OpBranch", head)
        self.put_label(head)
        self.do("OpLoopMerge", merge, cont, 0)
        self.do("OpBranch", body)
        self.put_label(body)
        old = self.op("OpAtomicLoad", u32, ptr, scope, sem)
        got = self.op("OpAtomicCompareExchange", u32, ptr, scope, sem, sem, fn(old), old)
        self.do("OpStore", res, got)
        self.do("OpBranchConditional", self.op("OpIEqual", b_, got, old), merge, cont)
        self.put_label(cont)
        self.do("OpBranch", head)
        self.put_label(merge)
        return self.op("OpLoad", u32, res)

    def _rmw_fn(self, op: int, ftype: int, b: int):
        """The new-value function of an atomic op without a SPIR-V instruction: INC (3) / DEC (4)
        with PTX's wrap rules against ``b``, or, for F32 (``ftype`` 3, .FTZ.RN), ADD/MIN/MAX."""
        u32, b_, c = self.u32, self.bool, self.c
        if ftype == 3:
            bf = self._ftz32(self.op("OpBitcast", self.f32, b))

            def f(old):
                x = self._ftz32(self.op("OpBitcast", self.f32, old))
                if op == 0:
                    r = self._ftz32(self.fop("OpFAdd", self.f32, x, bf))
                else:
                    r = self._fminmax(x, bf, self.m.const_bool(op == 1))
                return self.op("OpBitcast", u32, r)

            return f
        if op == 3:
            return lambda old: self.op(
                "OpSelect", u32, self.op("OpUGreaterThanEqual", b_, old, b), c(0), self.op("OpIAdd", u32, old, c(1))
            )
        if op == 4:
            return lambda old: self.op(
                "OpSelect",
                u32,
                self.op("OpLogicalOr", b_, self.op("OpIEqual", b_, old, c(0)), self.op("OpUGreaterThan", b_, old, b)),
                b,
                self.op("OpISub", u32, old, c(1)),
            )
        return None

    def _shfl_warp(self, mode: int, a: int, b: int, cv: int) -> tuple[int, int]:
        """SHFL on the emulated warp, as the PTX ISA defines shfl.sync (both ISAs encode it the
        same way): ``a`` the value this lane offers, ``b`` the lane/offset, ``cv`` the clamp
        (bits 0..4) and segment mask (bits 8..12), any of them run-time values (-G code passes
        them through its shuffle helpers).  The source lane j is computed per mode (0 IDX, 1 UP,
        2 DOWN, 3 BFLY); where it falls outside the segment (or, here, the workgroup) the lane
        keeps its own value and the predicate is false.  Returns (value, predicate)."""
        u32, b_, c = self.u32, self.bool, self.c
        n = self.spec.local_size[0] * self.spec.local_size[1] * self.spec.local_size[2]
        b = self.op("OpBitwiseAnd", u32, b, c(31))
        clamp = self.op("OpBitwiseAnd", u32, cv, c(31))
        seg = self.op("OpBitwiseAnd", u32, self.op("OpShiftRightLogical", u32, cv, c(8)), c(31))
        lid, lane, base = self._publish(a)
        nseg = self.op("OpNot", u32, seg)
        min_lane = self.op("OpBitwiseAnd", u32, lane, seg)
        max_lane = self.op("OpBitwiseOr", u32, min_lane, self.op("OpBitwiseAnd", u32, clamp, nseg))
        if mode == 0:
            j = self.op("OpBitwiseOr", u32, min_lane, self.op("OpBitwiseAnd", u32, b, nseg))
            ok = self.op("OpSLessThanEqual", b_, j, max_lane)
        elif mode == 1:
            j = self.op("OpISub", u32, lane, b)
            ok = self.op("OpSGreaterThanEqual", b_, j, max_lane)
        elif mode == 2:
            j = self.op("OpIAdd", u32, lane, b)
            ok = self.op("OpSLessThanEqual", b_, j, max_lane)
        else:
            j = self.op("OpBitwiseXor", u32, lane, b)
            ok = self.op("OpSLessThanEqual", b_, j, max_lane)
        at = self.op("OpIAdd", u32, base, self.op("OpBitwiseAnd", u32, j, c(31)))
        take = self.op("OpLogicalAnd", b_, ok, self.op("OpULessThan", b_, at, c(n)))
        at = self.op("OpSelect", u32, take, at, lid)
        return self.op("OpLoad", u32, self._xchg_ptr(at)), take

    def _publish(self, value: int) -> tuple[int, int, int]:
        """Write this invocation's value for its warp: (linear id, lane, warp base)."""
        lid = self._lid()
        self._barrier()  # earlier readers of the array are done
        self.do("OpStore", self._xchg_ptr(lid), value)
        self._barrier()
        lane = self.op("OpBitwiseAnd", self.u32, lid, self.c(31))
        return lid, lane, self.op("OpISub", self.u32, lid, lane)

    def _generic_access(
        self,
        inst: Inst,
        addr: int,
        window: int,
        n: int,
        mode: str,
        reg: int,
        atom: tuple[str, int] | None = None,
        window_size: int = 1 << 24,
    ) -> None:
        """A load/store/atomic of ``n`` words at a generic 64-bit address: inside the shared
        window [window, window + window_size) the access goes to shared memory at the offset,
        otherwise to global memory.  The two paths are a selection, so a shared address is
        never dereferenced as a global pointer.  ``atom``: (SPIR-V atomic opcode, operand), or
        (new-value function, None) for a compare-exchange loop."""
        u32, u64, E = self.u32, self.u64, self.m.E
        rel = self.op("OpISub", u64, addr, window)
        shared = self.op("OpULessThan", self.bool, rel, self.c64(window_size))
        off = self.op("OpUConvert", u32, rel)
        res = [self.var(f"g{inst.addr}_{k}", self.fn_u32) for k in range(n)] if mode != "store" else []
        then, other, merge = self.label(), self.label(), self.label()
        self.do("OpSelectionMerge", merge, 0)
        self.do("OpBranchConditional", shared, then, other)
        for lab, sh in ((then, True), (other, False)):
            self.put_label(lab)
            for k in range(n):
                if sh:
                    p = self.shared_word(self.op("OpIAdd", u32, off, self.c(4 * k)))
                else:
                    p = self.op("OpConvertUToPtr", self.psb_ptr, self.op("OpIAdd", u64, addr, self.c64(4 * k)))
                acc = () if sh else (E("MemoryAccess", "Aligned"), 4)
                if mode == "load":
                    self.do("OpStore", res[k], self.op("OpLoad", u32, p, *acc))
                elif mode == "store":
                    self.do("OpStore", p, self.reg(reg + k) if reg != 255 else self.c(0), *acc)
                else:
                    scope = self.c(E("Scope", "Workgroup" if sh else "Device"))
                    sem = self.c(E("MemorySemantics", "WorkgroupMemory" if sh else "UniformMemory"))
                    if callable(atom[0]):  # a compare-exchange loop (_rmw_fn)
                        self.do("OpStore", res[k], self._atomic_loop(p, scope, sem, atom[0]))
                    else:
                        self.do("OpStore", res[k], self.op(atom[0], u32, p, scope, sem, atom[1]))
            self.do("OpBranch", merge)
        self.put_label(merge)
        if mode != "store" and reg != 255:
            for k in range(n):
                self.set_reg(reg + k, self.op("OpLoad", u32, res[k]))
