"""SM86 asynchronous copies (issue 31; shader-mma): LDGSTS (PTX ``cp.async``: global memory to
shared memory), LDGDEPBAR (``cp.async.commit_group``) and DEPBAR.LE SB0, n (``wait_group n``).

Translated synchronously: LDGSTS performs its whole copy where it stands (global loads, then
shared stores), so every copy is complete long before any wait, and the commit/wait
instructions are no-ops (``ir="NOP"`` in the table).  That is exact by construction: PTX makes
the copied data visible to other threads only through a wait followed by a barrier
(``__syncthreads``), and those barriers are translated as workgroup barriers; a copy finished
earlier than the machine would finish it is one of the orders the machine allows.

The forms (fields in ``sm86/table.py``; meanings per PTX ISA ``cp.async``, the encodings as
ptxas 12.9 / nvcc 13 emit them, seen through nvdisasm 13.5):

- ``LDGSTS.E{.BYPASS}{.64|.128}{.ZFILL} [Rd+off], [Ra.64(+URb)+off], P``: copy 4 / 8 / 16
  bytes (cp-size) from the global address to the shared one.
- The predicate ``P`` (PT left out): where it is false the source is ignored and zeros are
  written (PTX's ``ignore-src`` predicate; ptxas also uses it for ``src-size`` 0).
- ``.ZFILL``: the low log2(cp-size) bits of the source address say how many trailing bytes are
  zero-filled (ptxas builds ``src-size`` as ``address + ((cp-size - src-size) mod cp-size)``):
  the copy reads the aligned cp-size bytes, keeps the first ``cp-size - fill`` bytes and writes
  zeros over the rest.
- ``.BYPASS`` (``.cg``: not cached in L1) and the cache hints change nothing a program sees.
- A 32-bit source register (``.U32``, bit 70 clear) is zero-extended to a 64-bit address.
"""

from __future__ import annotations

from shader_svc.ir import to_spirv as ir_spirv
from shader_svc.ir.block import Block, Value
from shader_svc.lower.base import TranslateError
from shader_svc.sm86.decode import Inst
from shader_svc.sm86.lower import Lower86

ASYNC_RULES = {"LDGSTS": "op_ldgsts"}
CP_BYTES = {4: 4, 5: 8, 6: 16}  # LDGSTS's size field -> cp-size in bytes


class Async86(Lower86):
    """Mixin of ``to_spirv.Compute86`` (module docstring)."""

    def op_ldgsts(self, inst: Inst) -> None:
        nbytes = CP_BYTES.get(inst.mods["size"])
        if nbytes is None:
            raise TranslateError(f"{inst.text()} (word {inst.word:#x}): copy size not translated", offset=inst.addr)
        pp = inst.ops["pp"]
        if pp["pred"] == 7 and not pp["not"]:
            b = Block()
            self._copy_ir(b, inst, nbytes)
            ir_spirv.emit(self, b)
            return
        # P false: zeros, the source not read (it need not be a valid address)
        p = self.pred(pp["pred"], pp["not"])
        then, other, after = self.label(), self.label(), self.label()
        self.merge("OpSelectionMerge", after, 0)
        self.end("OpBranchConditional", p, then, other)
        self.put_label(then)
        b = Block()
        self._copy_ir(b, inst, nbytes)
        ir_spirv.emit(self, b)
        self.end("OpBranch", after)
        self.put_label(other)
        b = Block()
        sh = self._shared_addr(b, inst)
        for k in range(nbytes // 4):
            b.emit("StoreShared32", b.op("SharedPtr", b.op("IAdd32", sh, b.const_u32(4 * k))), b.const_u32(0))
        ir_spirv.emit(self, b)
        self.end("OpBranch", after)
        self.put_label(after)

    @staticmethod
    def _shared_addr(b: Block, inst: Inst) -> Value:
        dst = inst.ops["dst"]
        base = b.get_reg(dst["reg"]) if dst["reg"] != 255 else b.const_u32(0)
        return b.op("IAdd32", base, b.const_u32(dst["off"] & 0xFFFFFFFF))

    @staticmethod
    def _global_addr(b: Block, inst: Inst) -> Value:
        src = inst.ops["src"]
        if src["reg"] == 255:
            ga = b.const_u64(0)
        elif src["wide"]:
            ga = b.op("Pack64", b.get_reg(src["reg"]), b.get_reg(src["reg"] + 1))
        else:
            ga = b.op("ZExt64", b.get_reg(src["reg"]))
        if "ur" in src:
            ga = b.op("IAdd64", ga, b.op("ZExt64", b.get_reg(src["ur"], "UR")))
        return b.op("IAdd64", ga, b.const_u64(src["off"] & 0xFFFFFFFFFFFFFFFF))

    def _copy_ir(self, b: Block, inst: Inst, nbytes: int) -> None:
        """The copy of ``nbytes`` from the global to the shared address (.ZFILL: the fill)."""
        sh, ga = self._shared_addr(b, inst), self._global_addr(b, inst)
        keep = None
        if inst.mods["ZFILL"]:
            fill = b.op("IAnd32", b.op("Trunc32", ga), b.const_u32(nbytes - 1))
            ga = b.op("IAdd64", ga, b.op("SExt64", b.op("INeg32", fill)))  # aligned down
            keep = b.op("ISub32", b.const_u32(nbytes), fill)  # bytes copied, 1..nbytes
        for k in range(nbytes // 4):
            v = b.op("LoadGlobal32", b.op("GlobalPtr", b.op("IAdd64", ga, b.const_u64(4 * k))))
            if keep is not None:
                # bytes of this word kept: clamp(keep - 4k, 0, 4); a mask of that many low bytes
                n = b.op("SMin32", b.op("SMax32", b.op("ISub32", keep, b.const_u32(4 * k)), b.const_u32(0)), b.const_u32(4))
                part = b.op(
                    "ISub32",
                    b.op("IShl32", b.const_u32(1), b.op("IAnd32", b.op("IShl32", n, b.const_u32(3)), b.const_u32(31))),
                    b.const_u32(1),
                )
                v = b.op("IAnd32", v, b.op("Select32", b.op("IEq32", n, b.const_u32(4)), b.const_u32(0xFFFFFFFF), part))
            b.emit("StoreShared32", b.op("SharedPtr", b.op("IAdd32", sh, b.const_u32(4 * k))), v)
