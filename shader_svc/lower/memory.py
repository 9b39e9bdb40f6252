"""Memory, both ISAs, in two halves (the warp and barriers: ``lower/warp.py``):

- the IR both ISA parts build for their memory instructions (module functions: ``local_ir``,
  ``shared_ir``, ``ldc_ir``, ``generic_ir`` and the atomic-operation tables), so an SM53 and an
  SM86 instruction of the same meaning become the same IR and each ISA part only reads its
  fields;
- the SPIR-V of those IR operations (``Memory``, called from ``ir/to_spirv.py``'s rows): shared
  memory (a workgroup array), local memory (a per-invocation array), constant bank 0 at
  run-time addresses, generic addresses split between the shared window and global memory,
  atomics (a compare-exchange loop where SPIR-V has no instruction).

The semantics of each IR operation are written in ``ir/ops.py``; PTX ISA (atom) is the source
of the atomic wrap rules."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from shader_svc.ir.block import Block, Value
from shader_svc.isa.inst import Inst
from shader_svc.lower.base import GLSL, LOCAL_WORDS, SHARED_WORDS, LowerBase, TranslateError

SIZES = {4: 1, 5: 2, 6: 4}  # both ISAs' LD*/ST* size field (.32, .64, .128) -> words
# the atomic operation field, numbered the same in both ISAs' tables -> the IR ``op``
ATOMIC_OPS: dict[int, str | tuple[str, str]] = {
    0: "IAdd",
    1: ("UMin", "SMin"),
    2: ("UMax", "SMax"),
    3: "Inc",
    4: "Dec",
    5: "And",
    6: "Or",
    7: "Xor",
    8: "Exchange",
}
FLOAT_ATOMIC_OPS = {0: "FAdd", 1: "FMin", 2: "FMax"}  # .F32.FTZ.RN
GENERIC_STORES = {1: "GenericStore32", 2: "GenericStore64", 4: "GenericStore128"}
# the size field's sub-word values (both ISAs: .U8 .S8 .U16 .S16) -> (bytes, signed)
SUB_WORD = {0: (1, False), 1: (1, True), 2: (2, False), 3: (2, True)}


# --- the IR of memory and warp instructions (both ISA parts build it) ------------------------
def atomic_op(op: int, signed: bool, wrap: bool = True) -> str | None:
    """The IR ``op`` of an integer atomic's operation field (None: not translated); ``wrap``:
    INC/DEC are translated (SM53's encodings of them are not verified yet)."""
    name = ATOMIC_OPS.get(op)
    if name is None or (not wrap and op in (3, 4)):
        return None
    return name[1 if signed else 0] if isinstance(name, tuple) else name


def words(inst: Inst, space: str = "", size: int | None = None) -> int:
    """The words an access of the size field moves (``size``: the field where the row's mods
    lack one); sub-word sizes are refused naming the instruction and the memory ``space``."""
    n = SIZES.get(inst.mods["size"] if size is None else size)
    if n is None:
        raise TranslateError(f"{inst.text()}: sub-word {space + ' ' if space else ''}access not translated yet", offset=inst.addr)
    return n


def base_ir(b: Block, reg: int, off: int) -> Value:
    """A 32-bit address: register ``reg`` (RZ: 0) plus ``off``."""
    return b.op("IAdd32", b.get_reg(reg) if reg != 255 else b.const_u32(0), b.const_u32(off))


def base64_ir(b: Block, reg: int, off: int) -> Value:
    """A 64-bit address: the register pair reg, reg+1 (RZ: 0) plus ``off``."""
    base = b.op("Pack64", b.get_reg(reg), b.get_reg(reg + 1)) if reg != 255 else b.const_u64(0)
    return b.op("IAdd64", base, b.const_u64(off))


def local_ir(b: Block, addr: Value, n: int, reg: int, load: bool) -> None:
    """LDL/STL: ``n`` words at byte address ``addr`` of local memory into / from registers
    reg, reg+1... (RZ: loads discarded, zeros stored)."""
    for i in range(n):
        p = b.emit("LocalPtr", addr, offset=4 * i)
        if load:
            if reg != 255:
                b.set_reg(reg + i, b.op("LoadLocal32", p))
        else:
            b.emit("StoreLocal32", p, b.get_reg(reg + i) if reg != 255 else b.const_u32(0))


def shared_ir(b: Block, addr: Value, n: int, reg: int, load: bool) -> None:
    """LDS/STS: ``n`` words at byte address ``addr`` of shared memory, as ``local_ir``."""
    for i in range(n):
        p = b.op("SharedPtr", b.op("IAdd32", addr, b.const_u32(4 * i)))
        if load:
            if reg != 255:
                b.set_reg(reg + i, b.op("LoadShared32", p))
        else:
            b.emit("StoreShared32", p, b.get_reg(reg + i) if reg != 255 else b.const_u32(0))


def ldc_ir(b: Block, inst: Inst, reg: int, off: int, bank: int, n: int, d: int, file: str = "R") -> None:
    """LDC of ``n`` words of constant bank ``bank`` at register ``reg`` + ``off`` into d, d+1...
    (RZ: read and discarded); ``file`` "UR": SM86 ULDC's indexed form (index and destination
    uniform registers, URZ = 63)."""
    zero = 255 if file == "R" else 63
    base = b.get_reg(reg, file) if reg != zero else b.const_u32(0)
    for k in range(n):
        at = b.op("IAdd32", base, b.const_u32(off + 4 * k))
        b.set_reg(d + k if d != zero else zero, b.emit("CBankDynU32", at, bank=bank, inst=inst), file)


def generic_ir(b: Block, inst: Inst, addr: Value, window: Value, n: int, load: bool, reg: int) -> None:
    """LD/ST of ``n`` words at the generic address ``addr`` (``window``: the shared window's
    base) into / from registers reg, reg+1... (RZ: loads discarded, zeros stored)."""
    if load:
        words = b.emit("GenericLoad", addr, window, words=n, inst=inst)
        if reg != 255:
            for k in range(n):
                b.set_reg(reg + k, b.emit("Word", words, index=k))
        return
    vals = [b.get_reg(reg + k) if reg != 255 else b.const_u32(0) for k in range(n)]
    b.emit(GENERIC_STORES[n], addr, window, *vals, inst=inst)


def generic_sized_ir(b: Block, inst: Inst, addr: Value, window: Value, size: int, load: bool, reg: int) -> None:
    """LD/ST at a generic address of the size field ``size``: whole words (``generic_ir``) or a
    sub-word byte / half, zero- or sign-extended by a load (``GenericLoadSub``/
    ``GenericStoreSub``); the low register only (RZ: load discarded, zero stored)."""
    sub = SUB_WORD.get(size)
    if sub is None:
        generic_ir(b, inst, addr, window, words(inst, size=size), load, reg)
        return
    nbytes, signed = sub
    if load:
        v = b.emit("GenericLoadSub", addr, window, bytes=nbytes, signed=signed, inst=inst)
        if reg != 255:
            b.set_reg(reg, v)
        return
    val = b.get_reg(reg) if reg != 255 else b.const_u32(0)
    b.emit("GenericStoreSub", addr, window, val, bytes=nbytes, inst=inst)


def sub_word_ir(b: Block, space: str, addr: Value, size: int, reg: int, load: bool) -> bool:
    """LDS/STS/LDL/STL/LDG/STG of a sub-word size field (.U8 .S8 .U16 .S16) at ``addr`` (u32 for
    'shared'/'local', u64 for 'global'): the low register loaded (zero- / sign-extended) or
    stored (RZ: load discarded, zero stored).  False where ``size`` is a whole-word size."""
    sub = SUB_WORD.get(size)
    if sub is None:
        return False
    nbytes, signed = sub
    g = "Global" if space == "global" else ""
    if load:
        v = b.emit("LoadSub" + g, addr, space=space, bytes=nbytes, signed=signed)
        if reg != 255:
            b.set_reg(reg, v)
    else:
        b.emit("StoreSub" + g, addr, b.get_reg(reg) if reg != 255 else b.const_u32(0), space=space, bytes=nbytes)
    return True


class Shared64(LowerBase):
    """Mixin of ``Memory``: shared memory as 64-bit words, for programs with a 64-bit shared
    atomic (the comment below)."""

    # --- 64-bit words of shared memory (issue 31; shader-mem) ----------------------------------
    # A program with a 64-bit shared-memory atomic declares its shared memory as 64-bit words
    # (Vulkan has no aliasing of workgroup memory without VK_KHR_workgroup_memory_explicit_layout,
    # which lavapipe 22.3 lacks), so that atomic is the device's own (shaderSharedInt64Atomics).
    # Its 32-bit accesses then reach half a word (``Half``): a load reads the u64 and takes the
    # half; a store or a 32-bit atomic is a compare-exchange loop on the u64 that replaces only
    # that half (a neighbour's concurrent store to the other half lands too).  Programs without
    # one keep 32-bit words.
    def _wide_shared(self) -> bool:
        got = self.__dict__.get("_wide_shared_v")
        if got is None:
            got = self._wide_shared_v = any(wide_shared_atomic(i) for i in self.insts)
        return got

    def _shared64_var(self) -> tuple[int, int]:
        if "shared64" not in self.vars_global:
            m, E = self.m, self.m.E
            wg = E("StorageClass", "Workgroup")
            arr = m.type("OpTypeArray", self.u64, self.c(SHARED_WORDS // 2))
            v = m.id()
            m.emit("types", "OpVariable", m.type("OpTypePointer", wg, arr), v, wg)
            self.vars_global["shared64"] = (v, m.type("OpTypePointer", wg, self.u64))
            self.interface.append(v)
        return self.vars_global["shared64"]

    def shared_word64(self, byte_addr: int) -> int:
        """A pointer to the u64 of shared memory holding byte address ``byte_addr`` (modulo the
        emulated 32 KiB)."""
        v, ptr = self._shared64_var()
        idx = self.op(
            "OpBitwiseAnd",
            self.u32,
            self.op("OpShiftRightLogical", self.u32, byte_addr, self.c(3)),
            self.c(SHARED_WORDS // 2 - 1),
        )
        return self.op("OpAccessChain", ptr, v, idx)

    def _shared_half(self, byte_addr: int) -> "Half":
        bit = self.op("OpShiftLeftLogical", self.u32, self.op("OpBitwiseAnd", self.u32, byte_addr, self.c(4)), self.c(3))
        return Half(self.shared_word64(byte_addr), self.op("OpUConvert", self.u64, bit))

    def shared_load32(self, p: "int | Half") -> int:
        """``LoadShared32``: the word (or the half of a 64-bit word) ``SharedPtr`` named."""
        if isinstance(p, Half):
            v = self.op("OpLoad", self.u64, p.ptr)
            return self.op("OpUConvert", self.u32, self.op("OpShiftRightLogical", self.u64, v, p.shift))
        return self.op("OpLoad", self.u32, p)

    def shared_store32(self, p: "int | Half", value: int) -> None:
        """``StoreShared32``."""
        if isinstance(p, Half):
            sc, sm = self._scope(True)
            self._atomic_loop(p, sc, sm, lambda old: value)
            return
        self.do("OpStore", p, value)

    def atomic64_shared(self, byte_addr: int, op: str, b: int) -> int:
        """``AtomicShared64``: the old u64 (OpAtomic* on the 64-bit word, workgroup scope)."""
        if op not in ATOMIC64_OPS:
            raise TypeError(f"IR: 64-bit atomic {op}")
        self._int64_atomics()
        sc, sm = self._scope(True)
        return self.op(f"OpAtomic{op}", self.u64, self.shared_word64(byte_addr), sc, sm, b)

    def atomic64_cas_shared(self, byte_addr: int, cmp: int, new: int) -> int:
        self._int64_atomics()
        sc, sm = self._scope(True)
        return self.op("OpAtomicCompareExchange", self.u64, self.shared_word64(byte_addr), sc, sm, sm, new, cmp)

    def atomic64_cast_shared(self, byte_addr: int, cmp: int, new: int) -> int:
        """``AtomicCastShared64``: ``AtomicCastShared32`` on a 64-bit word."""
        old = self.atomic64_cas_shared(byte_addr, cmp, new)
        return self.op("OpSelect", self.u32, self.op("OpIEqual", self.bool, old, cmp), self.c(1), self.c(0))


class Memory(Shared64):
    """Mixin: the SPIR-V of the memory spaces and the atomics (module docstring);
    ``ir/to_spirv.py`` calls these for the IR rows."""

    # --- shared, local and constant memory ----------------------------------------------------
    def shared_word(self, byte_addr: int) -> "int | Half":
        if self._wide_shared():
            return self._shared_half(byte_addr)
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

    def local_word(self, addr: int, offset: int) -> int:
        """A pointer to the local word at byte address ``addr`` + ``offset``: a per-invocation
        array of LOCAL_WORDS words, addresses taken modulo its size."""
        if "local" not in self.vars:
            arr = self.m.type("OpTypeArray", self.u32, self.c(LOCAL_WORDS))
            self.vars["local"] = (self.m.id(), self.m.type("OpTypePointer", self.m.E("StorageClass", "Function"), arr))
        w = self.op("OpIAdd", self.u32, addr, self.c(offset))
        idx = self.op("OpBitwiseAnd", self.u32, self.op("OpShiftRightLogical", self.u32, w, self.c(2)), self.c(LOCAL_WORDS - 1))
        return self.op("OpAccessChain", self.fn_u32, self.vars["local"][0], idx)

    def cbank_dyn(self, bank: int, byte_addr: int, inst: Inst) -> int:
        """The word of constant bank ``bank`` at a run-time byte address."""
        if bank != 0:
            raise TranslateError(f"{inst.text()}: constant bank {bank:#x} not supported", offset=inst.addr)
        idx = self.op("OpShiftRightLogical", self.u32, byte_addr, self.c(2))
        return self.op("OpLoad", self.u32, self.op("OpAccessChain", self.cb_ptr, self.cbank, self.c(0), idx))

    # --- atomics ------------------------------------------------------------------------------
    def _scope(self, shared: bool) -> tuple[int, int]:
        """Scope and memory semantics of an atomic on shared (workgroup) or global memory."""
        E = self.m.E
        scope = self.c(E("Scope", "Workgroup" if shared else "Device"))
        return scope, self.c(E("MemorySemantics", "WorkgroupMemory" if shared else "UniformMemory"))

    def atomic(self, ptr: int, shared: bool, op: str, b: int) -> int:
        """``AtomicGlobal32``/``AtomicShared32``/``AtomicGlobalF32``: the old value."""
        sc, sm = self._scope(shared)
        return self._atomic_at(ptr, sc, sm, op, self._ftz32(b) if op in FLOAT_ATOMIC_OPS.values() else b)

    def atomic_cas(self, ptr: "int | Half", shared: bool, cmp: int, new: int) -> int:
        sc, sm = self._scope(shared)
        if isinstance(ptr, Half):  # the old half back; the new one stored where it equals cmp
            return self._atomic_loop(
                ptr, sc, sm, lambda old: self.op("OpSelect", self.u32, self.op("OpIEqual", self.bool, old, cmp), new, old)
            )
        return self.op("OpAtomicCompareExchange", self.u32, ptr, sc, sm, sm, new, cmp)

    def _atomic_at(self, ptr: "int | Half", sc: int, sm: int, op: str, b) -> int:
        if op == "CAS":  # b: (compare, new)
            if isinstance(ptr, Half):
                return self.atomic_cas(ptr, True, b[0], b[1])
            return self.op("OpAtomicCompareExchange", self.u32, ptr, sc, sm, sm, b[1], b[0])
        fn = self._rmw_fn(op, b)
        if fn is None and isinstance(ptr, Half):  # an operation SPIR-V has, on half a u64 word
            fn = self._native_fn(op, b)
        if fn is not None:
            return self._atomic_loop(ptr, sc, sm, fn)
        return self.op(f"OpAtomic{op}", self.u32, ptr, sc, sm, b)

    def _native_fn(self, op: str, b: int) -> Callable[[int], int]:
        """The new value of a 32-bit atomic SPIR-V has an instruction for, as a function of the
        old one (for the compare-exchange loop on half a 64-bit shared word)."""
        u32 = self.u32
        if op == "Exchange":
            return lambda old: b
        if op in ("UMin", "SMin", "UMax", "SMax"):
            return lambda old: self.op("OpExtInst", u32, self.glsl, GLSL[op], old, b)
        name = {"IAdd": "OpIAdd", "And": "OpBitwiseAnd", "Or": "OpBitwiseOr", "Xor": "OpBitwiseXor"}[op]
        return lambda old: self.op(name, u32, old, b)

    def _atomic_loop(self, ptr: "int | Half", scope: int, sem: int, fn: Callable[[int], int], read_sem: int | None = None) -> int:
        """An atomic read-modify-write SPIR-V has no instruction for (INC/DEC with their wrap
        limit, float add/min/max): a compare-exchange loop on the 32-bit word, ``fn(old) ->
        new``; returns the old value the exchange saw.  On half a 64-bit shared word (``Half``)
        the loop exchanges the whole u64, the other half kept as it was.  ``read_sem``: the
        semantics of the loads and of the exchange's unequal case where ``sem`` has a release
        part, which Vulkan forbids there (shader-assert; default ``sem``)."""
        if isinstance(ptr, Half):
            u32, u64 = self.u32, self.u64
            low = self.op("OpIEqual", self.bool, ptr.shift, self.c64(0))
            keep = self.op("OpSelect", u64, low, self.c64(0xFFFFFFFF00000000), self.c64(0xFFFFFFFF))

            def fn64(old64: int) -> int:
                half = self.op("OpUConvert", u32, self.op("OpShiftRightLogical", u64, old64, ptr.shift))
                put = self.op("OpShiftLeftLogical", u64, self.op("OpUConvert", u64, fn(half)), ptr.shift)
                return self.op("OpBitwiseOr", u64, self.op("OpBitwiseAnd", u64, old64, keep), put)

            got = self._cas_loop(ptr.ptr, u64, scope, sem, fn64, read_sem)
            return self.op("OpUConvert", u32, self.op("OpShiftRightLogical", u64, got, ptr.shift))
        return self._cas_loop(ptr, self.u32, scope, sem, fn, read_sem)

    def _cas_loop(self, ptr: int, ty: int, scope: int, sem: int, fn: Callable[[int], int], read_sem: int | None = None) -> int:
        """``_atomic_loop``'s compare-exchange loop on a word of type ``ty`` (u32, u64)."""
        b_ = self.bool
        head, body, cont, merge = (self.label() for _ in range(4))
        # the loop inside a selection on a condition that always holds (x != x ^ 1): at a
        # function's top level after an early return, lavapipe 22.3 lost the invocations that
        # left the loop in an earlier iteration than the last one (their later stores were not
        # done: tests/shader_svc/cuda_corpus_more.py atom_incdec_wrap); inside a selection, as
        # -G code has it, every invocation carries on after the loop
        rsem = sem if read_sem is None else read_sem
        first = self.op("OpAtomicLoad", ty, ptr, scope, rsem)
        sel_in, sel_merge = self.label(), self.label()
        one = self.c(1) if ty == self.u32 else self.c64(1)
        always = self.op("OpINotEqual", b_, first, self.op("OpBitwiseXor", ty, first, one))
        self.do("OpSelectionMerge", sel_merge, 0)
        self.do("OpBranchConditional", always, sel_in, sel_merge)
        self.put_label(sel_in)
        self.do("OpBranch", head)
        self.put_label(head)
        self.do("OpLoopMerge", merge, cont, 0)
        self.do("OpBranch", body)
        self.put_label(body)
        old = self.op("OpAtomicLoad", ty, ptr, scope, rsem)
        got = self.op("OpAtomicCompareExchange", ty, ptr, scope, sem, rsem, fn(old), old)
        self.do("OpBranchConditional", self.op("OpIEqual", b_, got, old), merge, cont)
        self.put_label(cont)
        self.do("OpBranch", head)
        self.put_label(merge)
        fn_ty = self.fn_u32 if ty == self.u32 else self.m.type("OpTypePointer", self.m.E("StorageClass", "Function"), ty)
        res = self.temp_var(fn_ty)
        self.do("OpStore", res, got)
        self.do("OpBranch", sel_merge)
        self.put_label(sel_merge)
        return self.op("OpLoad", ty, res)

    def _rmw_fn(self, op: str, b: int) -> Callable[[int], int] | None:
        """The new-value function of an atomic op without a SPIR-V instruction: Inc / Dec with
        PTX's wrap rules against ``b``; FAdd/FMin/FMax of the f32 ``b`` (already flushed: .FTZ.RN)."""
        u32, b_, c = self.u32, self.bool, self.c
        if op in FLOAT_ATOMIC_OPS.values():

            def f(old: int) -> int:
                x = self._ftz32(self.op("OpBitcast", self.f32, old))
                if op == "FAdd":
                    r = self._ftz32(self.fop("OpFAdd", self.f32, x, b))
                else:
                    r = self._fminmax(x, b, self.m.const_bool(op == "FMin"))
                return self.op("OpBitcast", u32, r)

            return f
        if op == "Inc":
            return lambda old: self.op(
                "OpSelect", u32, self.op("OpUGreaterThanEqual", b_, old, b), c(0), self.op("OpIAdd", u32, old, c(1))
            )
        if op == "Dec":
            return lambda old: self.op(
                "OpSelect",
                u32,
                self.op("OpLogicalOr", b_, self.op("OpIEqual", b_, old, c(0)), self.op("OpUGreaterThan", b_, old, b)),
                b,
                self.op("OpISub", u32, old, c(1)),
            )
        return None

    # --- generic addresses ----------------------------------------------------------------------
    def generic_access(
        self,
        inst: Inst,
        addr: int,
        window: int,
        n: int,
        mode: str,
        values: tuple[int, ...] = (),
        atom: tuple[str, int] | None = None,
        window_size: int = 1 << 24,
    ) -> list[int]:
        """A load/store/atomic of ``n`` words at a generic 64-bit address: inside the shared
        window [window, window + window_size) the access goes to shared memory at the offset,
        inside the local window below it to the invocation's local memory, otherwise to global
        memory (``_generic_paths``).  The paths are a selection, so a shared or local address is
        never dereferenced as a global pointer.  ``values``: the words a store writes; ``atom``:
        (IR atomic op, operand).  Returns the function variables holding the loaded words / the
        atomic's old value."""
        u32, u64, E = self.u32, self.u64, self.m.E
        res = [self.var(f"g{inst.addr}_{k}", self.fn_u32) for k in range(n)] if mode != "store" else []

        def path(space: str, off: int) -> None:
            if space == "shared" and mode != "atomic" and n % 2 == 0 and self._wide_shared():
                # 64-bit shared words: a 64/128-bit access (naturally aligned, as the hardware
                # requires) is one u64 load or store per pair of words, no half-word loops
                for k in range(0, n, 2):
                    p = self.shared_word64(self.op("OpIAdd", u32, off, self.c(4 * k)))
                    if mode == "load":
                        v = self.op("OpLoad", u64, p)
                        self.do("OpStore", res[k], self.op("OpUConvert", u32, v))
                        self.do(
                            "OpStore",
                            res[k + 1],
                            self.op("OpUConvert", u32, self.op("OpShiftRightLogical", u64, v, self.c64(32))),
                        )
                    else:
                        lo, hi = (self.op("OpUConvert", u64, x) for x in values[k : k + 2])
                        self.do(
                            "OpStore", p, self.op("OpBitwiseOr", u64, lo, self.op("OpShiftLeftLogical", u64, hi, self.c64(32)))
                        )
                return
            for k in range(n):
                if space == "shared":
                    p = self.shared_word(self.op("OpIAdd", u32, off, self.c(4 * k)))
                elif space == "local":
                    p = self.local_word(off, 4 * k)
                else:
                    p = self.op("OpConvertUToPtr", self.psb_ptr, self.op("OpIAdd", u64, addr, self.c64(4 * k)))
                acc = (E("MemoryAccess", "Aligned"), 4) if space == "global" else ()
                if mode == "load":
                    self.do("OpStore", res[k], self.shared_load32(p) if space == "shared" else self.op("OpLoad", u32, p, *acc))
                elif mode == "store":
                    if space == "shared":
                        self.shared_store32(p, values[k])
                    else:
                        self.do("OpStore", p, values[k], *acc)
                elif space == "local":  # PTX: atom on a local address is undefined; reads only
                    self.do("OpStore", res[k], self.op("OpLoad", u32, p))
                else:
                    sc, sm = self._scope(space == "shared")
                    self.do("OpStore", res[k], self._atomic_at(p, sc, sm, *atom))

        self._generic_paths(addr, window, window_size, path)
        return res

    # The tests' oracle of the proofs (tests/shader_svc/test_ir_spaces.py): (the global address
    # of a u32 array, a list).  Each generic access first ORs the space its address is in at run
    # time (1 shared, 2 local, 4 global: the selection's own tests, as selects, no blocks) into
    # its word, numbered in emission order, and the list gets (instruction address, proved space
    # or None); then it is lowered as without the hook.
    TRACE_SPACES: tuple[int, list] | None = None

    def _trace(self, addr: int, window: int, window_size: int, proven: str | None) -> None:
        u32, u64, b_ = self.u32, self.u64, self.bool
        base, log = self.TRACE_SPACES
        at = base + 4 * len(log)
        log.append((getattr(self, "_trace_inst", None), proven))
        rel = self.op("OpISub", u64, addr, window)
        lrel = self.op("OpISub", u64, addr, self.op("OpISub", u64, window, self.c64(window_size)))
        shared = self.op("OpULessThan", b_, rel, self.c64(window_size))
        local = self.op("OpULessThan", b_, lrel, self.c64(window_size))
        bit = self.op("OpSelect", u32, shared, self.c(1), self.op("OpSelect", u32, local, self.c(2), self.c(4)))
        sc, sm = self._scope(False)
        self.op("OpAtomicOr", u32, self.op("OpConvertUToPtr", self.psb_ptr, self.c64(at)), sc, sm, bit)

    def _generic_paths(self, addr: int, window: int, window_size: int, path: Callable[[str, int], None]) -> None:
        """The three destinations of a generic address as a structured selection: the shared
        window [window, window + window_size), the local window just below it [window -
        window_size, window) (both ISAs' constant bank 0 puts it there,
        ``sm53/cbank.py``, ``sm86/cbank.py``), else global memory.  ``path(space, offset)``
        emits one destination's access (``offset``: the u32 offset in the window; for global
        memory the low word of the address)."""
        u32, u64, b_ = self.u32, self.u64, self.bool
        proven = getattr(self, "proven_space", None)
        if self.TRACE_SPACES is not None:  # the tests' oracle of ir/spaces.py (TRACE_SPACES)
            self._trace(addr, window, window_size, proven)
        if proven is not None:  # the space ir/spaces.py proved: that path alone
            if proven == "shared":
                path(proven, self.op("OpUConvert", u32, self.op("OpISub", u64, addr, window)))
            elif proven == "local":
                base = self.op("OpISub", u64, window, self.c64(window_size))
                path(proven, self.op("OpUConvert", u32, self.op("OpISub", u64, addr, base)))
            else:
                path(proven, self.op("OpUConvert", u32, addr))
            return
        rel = self.op("OpISub", u64, addr, window)
        lrel = self.op("OpISub", u64, addr, self.op("OpISub", u64, window, self.c64(window_size)))
        shared = self.op("OpULessThan", b_, rel, self.c64(window_size))
        local = self.op("OpULessThan", b_, lrel, self.c64(window_size))
        sh_lab, rest, merge = self.label(), self.label(), self.label()
        self.do("OpSelectionMerge", merge, 0)
        self.do("OpBranchConditional", shared, sh_lab, rest)
        self.put_label(sh_lab)
        path("shared", self.op("OpUConvert", u32, rel))
        self.do("OpBranch", merge)
        self.put_label(rest)
        loc_lab, gl_lab, merge2 = self.label(), self.label(), self.label()
        self.do("OpSelectionMerge", merge2, 0)
        self.do("OpBranchConditional", local, loc_lab, gl_lab)
        self.put_label(loc_lab)
        path("local", self.op("OpUConvert", u32, lrel))
        self.do("OpBranch", merge2)
        self.put_label(gl_lab)
        path("global", self.op("OpUConvert", u32, addr))
        self.do("OpBranch", merge2)
        self.put_label(merge2)
        self.do("OpBranch", merge)
        self.put_label(merge)

    def generic_sub(
        self, inst: Inst, addr: int, window: int, nbytes: int, signed: bool, value: int | None, window_size: int = 1 << 24
    ) -> int | None:
        """A load (``value`` None: the byte / half zero- or sign-extended) or store of ``nbytes``
        (1, 2) at a generic address, shared / local window or global memory as
        ``generic_access``.  The
        access works on its containing 32-bit word (the buffers are arrays of words; 8/16-bit
        storage capabilities are not required); the address is taken as naturally aligned (the
        hardware requires it), its low bits below the access size ignored.  A store is a
        compare-exchange loop on that word replacing only its bytes: a plain load-modify-store
        would lose a neighbouring lane's concurrent store to the other bytes of the same word
        (CUDA guarantees both land: distinct bytes are distinct locations), and an atomic
        AND-then-OR pair would let two lanes storing the same byte leave the OR of both values
        instead of one of them."""
        u64 = self.u64
        res = self.var(f"gs{inst.addr}", self.fn_u32) if value is None else None

        def path(space: str, lo: int) -> None:
            if space == "shared":
                p = self.shared_word(lo)
            elif space == "local":
                p = self.local_word(lo, 0)
            else:
                p = self.op("OpConvertUToPtr", self.psb_ptr, self.op("OpBitwiseAnd", u64, addr, self.c64((1 << 64) - 4)))
            got = self.sub_word(space, p, lo, nbytes, signed, value)
            if res is not None:
                self.do("OpStore", res, got)

        self._generic_paths(addr, window, window_size, path)
        return self.op("OpLoad", self.u32, res) if res is not None else None

    def sub_word(self, space: str, p: int, lo: int, nbytes: int, signed: bool, value: int | None) -> int | None:
        """The byte / half at the word ``p`` points to, its place in the word given by the low
        bits of the byte address ``lo`` (little-endian): loaded (``value`` None; zero- or sign-
        extended) or stored.  A store to ``space`` 'local' (one invocation's own memory) is a
        plain read-modify-write of the word; to shared or global memory a compare-exchange
        loop (``generic_sub``'s reasons)."""
        u32, c, E = self.u32, self.c, self.m.E
        bits = 8 * nbytes
        acc = (E("MemoryAccess", "Aligned"), 4) if space == "global" else ()
        shift = self.op("OpShiftLeftLogical", u32, self.op("OpBitwiseAnd", u32, lo, c(4 - nbytes)), c(3))
        if value is None:
            word = self.shared_load32(p) if space == "shared" else self.op("OpLoad", u32, p, *acc)
            return self.op("OpBitFieldSExtract" if signed else "OpBitFieldUExtract", u32, word, shift, c(bits))
        keep = self.op("OpNot", u32, self.op("OpShiftLeftLogical", u32, c((1 << bits) - 1), shift))
        put = self.op("OpShiftLeftLogical", u32, self.op("OpBitwiseAnd", u32, value, c((1 << bits) - 1)), shift)
        if space == "local":  # one invocation's own memory: no other writer
            old = self.op("OpLoad", u32, p)
            self.do("OpStore", p, self.op("OpBitwiseOr", u32, self.op("OpBitwiseAnd", u32, old, keep), put))
            return None
        sc, sm = self._scope(space == "shared")
        self._atomic_loop(p, sc, sm, lambda old: self.op("OpBitwiseOr", u32, self.op("OpBitwiseAnd", u32, old, keep), put))
        return None

    def sub_at(self, space: str, addr: int, nbytes: int, signed: bool, value: int | None) -> int | None:
        """``LoadSub``/``StoreSub``: ``sub_word`` at a shared / local byte address (u32) or a
        global one (u64)."""
        if space == "shared":
            return self.sub_word(space, self.shared_word(addr), addr, nbytes, signed, value)
        if space == "local":
            return self.sub_word(space, self.local_word(addr, 0), addr, nbytes, signed, value)
        p = self.op("OpConvertUToPtr", self.psb_ptr, self.op("OpBitwiseAnd", self.u64, addr, self.c64((1 << 64) - 4)))
        return self.sub_word(space, p, self.op("OpUConvert", self.u32, addr), nbytes, signed, value)

    def generic_atomic(self, inst: Inst, addr: int, window: int, op: str, b: int) -> int:
        if op in FLOAT_ATOMIC_OPS.values():
            b = self._ftz32(b)
        (res,) = self.generic_access(inst, addr, window, 1, "atomic", atom=(op, b))
        return self.op("OpLoad", self.u32, res)

    def generic_cas(self, inst: Inst, addr: int, window: int, cmp: int, new: int) -> int:
        """``GenericAtomicCas32``: compare-exchange at a generic address; the old word."""
        (res,) = self.generic_access(inst, addr, window, 1, "atomic", atom=("CAS", (cmp, new)))
        return self.op("OpLoad", self.u32, res)

    # --- 64-bit atomics, compare-and-store, the address-space query (ir/ops.py's last memory
    # block; issue 31, shader-mem) --------------------------------------------------------------

    def _int64_atomics(self) -> None:
        if not self.__dict__.get("_int64_atomics_cap"):
            self.m.emit("cap", "OpCapability", self.m.E("Capability", "Int64Atomics"))
            self._int64_atomics_cap = True

    def _global64(self, addr: int) -> int:
        ptr = self.m.type("OpTypePointer", self.m.E("StorageClass", "PhysicalStorageBuffer"), self.u64)
        return self.op("OpConvertUToPtr", ptr, addr)

    def atomic64_global(self, addr: int, op: str, b: int) -> int:
        """``AtomicGlobal64``: the old u64 (OpAtomic* on a 64-bit pointer, device scope)."""
        if op not in ATOMIC64_OPS:
            raise TypeError(f"IR: 64-bit atomic {op}")
        self._int64_atomics()
        sc, sm = self._scope(False)
        return self.op(f"OpAtomic{op}", self.u64, self._global64(addr), sc, sm, b)

    def atomic64_cas_global(self, addr: int, cmp: int, new: int) -> int:
        self._int64_atomics()
        sc, sm = self._scope(False)
        return self.op("OpAtomicCompareExchange", self.u64, self._global64(addr), sc, sm, sm, new, cmp)

    def atomic_cast_shared(self, ptr: int, cmp: int, new: int) -> int:
        """``AtomicCastShared32``: stores ``new`` where the word equals ``cmp``; 1 where it did,
        else 0."""
        old = self.atomic_cas(ptr, True, cmp, new)
        return self.op("OpSelect", self.u32, self.op("OpIEqual", self.bool, old, cmp), self.c(1), self.c(0))

    def generic_atomic64(self, inst: Inst, addr: int, window: int, op: str, b: int) -> int:
        """``GenericAtomic64``: ``AtomicGlobal64``'s operation at a generic address: global or
        shared memory (``AtomicShared64``), local memory only read (as ``generic_access``)."""
        u64 = self.u64
        res = self.var(f"g64_{inst.addr}", self.m.type("OpTypePointer", self.m.E("StorageClass", "Function"), u64))

        def path(space: str, off: int) -> None:
            if space == "shared":
                v = self.atomic64_shared(off, op, b)
            elif space == "local":
                v = self.join64(
                    self.op("OpLoad", self.u32, self.local_word(off, 0)), self.op("OpLoad", self.u32, self.local_word(off, 4))
                )
            else:
                v = self.atomic64_global(addr, op, b)
            self.do("OpStore", res, v)

        self._generic_paths(addr, window, 1 << 24, path)
        return self.op("OpLoad", u64, res)

    def generic_cas64(self, inst: Inst, addr: int, window: int, cmp: int, new: int) -> int:
        """``GenericAtomicCas64``: the 64-bit compare-exchange at a generic address, routed as
        ``generic_atomic64``; in local memory (no other writer) the two words are read, and
        replaced where they equal ``cmp``."""
        u32, u64 = self.u32, self.u64
        res = self.var(f"gcas64_{inst.addr}", self.m.type("OpTypePointer", self.m.E("StorageClass", "Function"), u64))

        def path(space: str, off: int) -> None:
            if space == "shared":
                v = self.atomic64_cas_shared(off, cmp, new)
            elif space == "local":
                lo, hi = self.local_word(off, 0), self.local_word(off, 4)
                v = self.join64(self.op("OpLoad", u32, lo), self.op("OpLoad", u32, hi))
                put = self.op("OpSelect", u64, self.op("OpIEqual", self.bool, v, cmp), new, v)
                self.do("OpStore", lo, self.op("OpUConvert", u32, put))
                self.do("OpStore", hi, self.op("OpUConvert", u32, self.op("OpShiftRightLogical", u64, put, self.c64(32))))
            else:
                v = self.atomic64_cas_global(addr, cmp, new)
            self.do("OpStore", res, v)

        self._generic_paths(addr, window, 1 << 24, path)
        return self.op("OpLoad", u64, res)

    def space_is(self, addr: int, window: int, space: str, window_size: int = 1 << 24) -> int:
        """``SpaceIs``: whether the generic address lies in the shared window, the local window
        below it, or neither (global), as ``_generic_paths`` routes it (a constant where
        ``ir/spaces.py`` proved the address's space)."""
        u64, b_ = self.u64, self.bool
        proven = getattr(self, "proven_space", None)
        if proven is not None:
            return self.m.const_bool(proven == space)
        rel = self.op("OpISub", u64, addr, window)
        lrel = self.op("OpISub", u64, addr, self.op("OpISub", u64, window, self.c64(window_size)))
        shared = self.op("OpULessThan", b_, rel, self.c64(window_size))
        local = self.op("OpULessThan", b_, lrel, self.c64(window_size))
        if space == "shared":
            return shared
        if space == "local":
            return local
        return self.op("OpLogicalNot", b_, self.op("OpLogicalOr", b_, shared, local))


# --- 64-bit atomics, compare-and-store, address-space queries (issue 31; shader-mem) ---------
# A 64-bit atomic is the device's own (SPIR-V Int64Atomics, Vulkan shaderBufferInt64Atomics:
# lavapipe, and the desktop drivers, have it): exact by definition.  No exact emulation on the
# 32-bit halves exists for every operation — a compare-exchange loop per half lets another
# invocation's update land between the two halves (MIN/MAX/EXCH/CAS then mix two values), and a
# lock needs a forward-progress guarantee Vulkan does not give — so a module with a 64-bit
# atomic declares Int64Atomics and needs a device with that feature.
@dataclass(frozen=True)
class Half:
    """Half of a 64-bit shared word: ``ptr`` the u64's pointer, ``shift`` (a u64 id) 0 or 32."""

    ptr: int
    shift: int


def wide_shared_atomic(inst: Inst) -> bool:
    """Whether an instruction is a 64-bit atomic that may reach shared memory: ATOMS .64/.U64/
    .S64 or a 64-bit CAS (both ISAs), or SM86's generic ATOM .64/.S64."""
    m, mods = inst.row.mnemonic, inst.mods
    if m != "ATOMS" and not (m == "ATOM" and inst.row.ir.startswith("ATOMG")):
        return False
    return mods.get("type", 0) in (2, 5) or "w" in mods


ATOMIC64_OPS = frozenset({"IAdd", "UMin", "SMin", "UMax", "SMax", "And", "Or", "Xor", "Exchange"})


def atomic64_op(op: int, signed: bool) -> str | None:
    """The IR ``op`` of a 64-bit atomic's operation field (INC/DEC have no 64-bit form: None)."""
    name = atomic_op(op, signed)
    return name if name in ATOMIC64_OPS else None


def pair_ir(b: Block, reg: int) -> Value:
    """The u64 of the register pair reg, reg+1 (RZ: 0)."""
    return b.op("Pack64", b.get_reg(reg), b.get_reg(reg + 1)) if reg != 255 else b.const_u64(0)


def put_pair_ir(b: Block, reg: int, v: Value) -> None:
    """Write the u64 ``v`` to the register pair reg, reg+1 (RZ discards both)."""
    if reg != 255:
        b.set_reg(reg, b.op("Trunc32", v))
        b.set_reg(reg + 1, b.op("Trunc32", b.op("Shr64", v, b.const_u64(32))))
