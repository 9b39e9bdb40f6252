"""Indirect branches through a jump table (BRX on SM86 and SM53), bounded from the program.

How ptxas emits PTX ``brx.idx`` (seen with ptxas 12.9 for sm_86 and sm_53, -O3 and -O0 -g; the
corpus kernels ``brx_*`` in ``tests/shader_svc/cuda_corpus_ctl.py``): the table of targets is
in constant bank 2 (the cubin's ``.nv.constant2.<kernel>``), one 32-bit word per target: the
target's byte offset from the code's start; the index is scaled by 4 and read with an indexed
``LDC Rt, c[0x2][Ri (+off)]``, then ``BRX Rt off`` jumps to ``next + Rt + off`` (``next``: the
address after the BRX, ``off`` its field, which ptxas sets to ``-next``; SM86 sign-extends Rt
into Rt+1 as a 64-bit target, whose high word is 0 here).

What the decoder can bound: the BRX's register is written, last before the BRX in its block, by
such an ``LDC`` from a bank that is part of the program (``ComputeSpec.banks``); then the
possible targets are the words of that bank that land on an instruction of the code (every one
of them: an over-approximation is safe, a spurious one only splits a block).  Anything else (the
target computed otherwise, a bank not known) is refused by name.  A program with a BRX runs in
the dispatcher loop (``lower/control.py``): its ``OpSwitch`` over the block numbers is the
structured switch, the BRX's next block a selection among the bounded targets (an address none
of them has ends the invocation: PTX leaves an index out of the table undefined).

The indexed read of a program bank (``CBankDynU32`` of bank 2) is a selection over the bank's
words (out of the bank: 0)."""

from __future__ import annotations

from shader_svc.ir import to_spirv as ir_spirv
from shader_svc.ir.block import Block
from shader_svc.isa.inst import Inst
from shader_svc.lower.base import DONE, LowerBase, TranslateError
from shader_svc.spirv.structure import Unstructured

# CALL.IND: SM86 CALL.REL through a register (function pointers; target next + Rn + field, the
# field -next, the table of callees' offsets in bank 2 as BRX's: ``sm86/table.py``'s last rows)
# CALL.ABS.R: SM86 CALL.ABS through a register (nvcc -G's function pointers: absolute addresses,
# which the linker writes into MOV immediates; ``call_abs_targets``)
# JMX: SM53's jump to Rn + field (an absolute address), ptxas -O0's indirect call (PRET ret + JMX
# Rn, the callee's address from linker-patched MOV32I immediates; SM53 lower_control.py)
INDIRECT = ("BRX", "CALL.IND", "CALL.ABS.R", "JMX")
INDIRECT_RULES = {
    "BRX": "op_indirect",
    "CALL.IND": "op_indirect",
    "CALL.ABS.R": "op_indirect",
    "JMX": "op_indirect",
    "LEPC": "op_lepc",
}
ABSOLUTE = ("CALL.ABS.R", "JMX")  # the register holds an address from the code's start
# instructions after which the code is not straight-line (either ISA)
ENDS = {"BRA", "EXIT", "RET", "RET.ABS", "CALL", "CALL.ABS", "CAL", "JCAL", "SYNC", "BRK", "BPT", "KIL", "KILL", *INDIRECT}


def _ldc_bank(ins: Inst) -> int | None:
    """The constant bank an indexed LDC reads (either ISA's operand name), else None."""
    if ins.row.ir != "LDC":
        return None
    cb = ins.ops.get("cb") or ins.ops.get("c")
    return None if cb is None else cb.get("bank")


def last_writer(insts: list[Inst], at: int, reg: int) -> Inst | None:
    """The unguarded instruction that last wrote R``reg`` before ``insts[at]`` on the straight
    line of code leading to it (no branch in between, no branch target after it: every path to
    ``insts[at]`` ran it); None where there is none or the writer is guarded.  (SM53: a branch
    to a group's control word enters the instruction after it.)"""
    entered = {t["target"] + e for i in insts for t in i.ops.values() if isinstance(t, dict) and "target" in t for e in (0, 8)}
    if insts[at].addr in entered:
        return None
    for prev in reversed(insts[:at]):
        d = prev.ops.get("d", {})
        if d.get("reg") == reg and d.get("file", "R") == "R":
            return prev if prev.pred == 7 and not prev.pred_not else None
        if prev.row.ir in ENDS or prev.addr in entered:  # another path joins here
            return None
    return None


def const_reg(insts: list[Inst], at: int, reg: int) -> int | None:
    """R``reg``'s value before ``insts[at]`` where ``last_writer`` is a move of an immediate
    (SM86 MOV, SM53 MOV32I: how compilers materialise a constant operand), else None."""
    w = last_writer(insts, at, reg) if reg != 255 else None
    if w is not None and w.row.ir == "MOV" and "imm" in w.ops.get("b", {}):
        return w.ops["b"]["imm"] & 0xFFFFFFFF
    return None


class IndirectBranch(LowerBase):
    """Mixin of the compute lowerings (before the memory mixins): BRX bounded by its jump table."""

    # the address after an instruction (SM53: the next 8-byte slot, a control word or not)
    INST_BYTES = 16

    def _program_bank(self, bank: int) -> bytes | None:
        return dict(getattr(self.spec, "banks", ())).get(bank) if bank else None

    def jump_targets(self, insts: list[Inst], at: int, entry) -> list[tuple[int, int]]:
        """(value of ``next + Rt + off``, the instruction address it enters) for each bounded
        target of the BRX ``insts[at]``; ``entry(addr)`` maps a raw address to the instruction
        it enters (None: no instruction there).  Refused by name where the targets are not
        bounded (module docstring)."""
        ins = insts[at]
        reg = ins.ops["a"]["reg"]
        if ins.row.ir in ABSOLUTE:
            return self.call_abs_targets(insts, at, entry)
        prev = last_writer(insts, at, reg)
        bank = _ldc_bank(prev) if prev is not None else None
        data = self._program_bank(bank) if bank is not None else None
        if data is None:
            raise TranslateError(
                f"{ins.text()} (word {ins.word:#x}): indirect branch whose targets are not bounded "
                f"(its register R{reg} is not read by an LDC from a constant bank of the program)",
                offset=ins.addr,
            )
        k = ins.addr + self.INST_BYTES + self._indirect_off(ins)
        out = []
        for o in range(0, len(data) - 3, 4):
            raw = (int.from_bytes(data[o : o + 4], "little") + k) & 0xFFFFFFFF
            a = entry(raw)
            if a is not None and (raw, a) not in out:
                out.append((raw, a))
        if not out:
            raise TranslateError(
                f"{ins.text()} (word {ins.word:#x}): no word of constant bank {bank:#x} is a target in the code",
                offset=ins.addr,
            )
        return out

    def call_abs_targets(self, insts: list[Inst], at: int, entry) -> list[tuple[int, int]]:
        """The possible callees of SM86 CALL.ABS Rn and SM53 JMX Rn (+ its field): every address
        the program itself puts in a
        register that lands on one of its instructions — a move of an immediate (how nvcc -G
        materialises a function's address, patched by the linker: the program's start is address
        0, as for CALL.ABS's immediate), a word of a program bank or of the program's global data
        (``ComputeSpec.data``: -G's vtables and ``__device__`` tables of function pointers, relocated
        by the loader) (an over-approximation: a spurious one only splits a block).  An address the program does not make itself cannot
        be a target of its own code; where the register comes from a constant bank that is not
        part of the program (nvcc reads external functions such as __assertfail's address from
        bank 4) the callee is outside the program: refused by name."""
        ins = insts[at]
        reg, k = ins.ops["a"]["reg"], at
        prev = last_writer(insts, k, reg)
        while (
            prev is not None
            and prev.row.ir == "MOV"
            and prev.ops.get("b", {}).get("file", "R") == "R"
            and "reg" in prev.ops.get("b", {})
        ):
            # follow plain copies (-G's MOV Rd, Rs, its MOV Rd, Rd too: the value is Rs's before it)
            k, reg = insts.index(prev), prev.ops["b"]["reg"]
            prev = last_writer(insts, k, reg) if reg != 255 else None
        bank = _ldc_bank(prev) if prev is not None else None
        if bank is not None and self._program_bank(bank) is None:
            what = "the kernel's parameters" if bank == 0 else "a constant bank that is not part of the program"
            raise TranslateError(
                f"{ins.text()} (word {ins.word:#x}): call to an address read from constant bank {bank:#x}, "
                f"{what} (an external function or a pointer the program does not make)",
                offset=ins.addr,
            )
        self._refuse_unbounded_source(ins, prev, reg)  # indirect-refuse (issue 31)
        fixed = self._bank_word_read(insts, k, prev)  # shader-ctl2: one known word of a program bank
        if fixed is not None:
            (fb, off), raw = fixed
            a = entry(raw)
            if a is None:
                raise TranslateError(
                    f"{ins.text()} (word {ins.word:#x}): call to {raw:#x} (c[{fb:#x}][{off:#x}]), an address "
                    "outside the program (an external function)",
                    offset=ins.addr,
                )
            return [(raw, a)]
        out: list[tuple[int, int]] = []
        words = [i.ops["b"]["imm"] & 0xFFFFFFFF for i in insts if i.row.ir == "MOV" and "imm" in i.ops.get("b", {})]
        for _, data in (*getattr(self.spec, "banks", ()), *getattr(self.spec, "data", ())):
            words += [int.from_bytes(data[o : o + 4], "little") for o in range(0, len(data) - 3, 4)]
        for raw in words:
            a = entry(raw)
            if a is not None and (raw, a) not in out:
                out.append((raw, a))
        if not out:
            raise TranslateError(
                f"{ins.text()} (word {ins.word:#x}): no address of the code is made by the program", offset=ins.addr
            )
        return out

    # indirect-refuse (issue 31): where the called register's value comes from, by the straight
    # line's data flow, and whether the program's own words bound it.  A load from memory the
    # translator has an image of (global memory when the program carries its placed data) or a
    # constant is bounded; a load of memory it has no image of, or arithmetic on a value (an
    # offset added to a pointer: no word of the program need equal the sum), is not.
    LOADS = {
        "LD": "global memory",  # generic addressing: -G's loads of vtables and __device__ tables
        "LDG": "global memory",
        "LDL": "local memory",
        "LDS": "shared memory",
        "ATOMG": "global memory",
        "ATOMG.CAS": "global memory",
        "ATOM": "global memory",
        "ATOMS": "shared memory",
        "ALD": "an attribute",
        "LDTRAM": "an attribute",
    }
    BOUNDED = {"MOV", "LDC", "LEPC"}  # a move (of an immediate: the linker's address), a bank word, the PC

    def _refuse_unbounded_source(self, ins: Inst, prev: Inst | None, reg: int) -> None:
        """Refuse by name a call through R``reg`` whose possible values the program's words do not
        bound: ``prev`` (its last writer on the straight line, copies followed) loads memory the
        translator has no image of (global memory without ``ComputeSpec.data``, local / shared
        memory, attributes), or computes it otherwise than by a move or a bank read.  No writer on
        the straight line (the value joins from several paths): the program's words are taken
        (an over-approximation; the module docstring says what is left)."""
        if prev is None or prev.row.ir in self.BOUNDED:
            return
        head = f"{ins.text()} (word {ins.word:#x}): call through R{reg}"
        where = self.LOADS.get(prev.row.ir)
        if where == "global memory":
            if getattr(self.spec, "data", ()):
                return  # the placed data's words are among the targets (call_abs_targets)
            why = "call target loaded from global memory with no program data"
        elif where is not None:
            why = f"call target loaded from {where}, of which the translator has no image"
        else:
            why = f"call target computed by {prev.mnemonic}, which the analysis cannot bound"
        raise TranslateError(f"{head}: {why} (written at {prev.addr:#x} by {prev.text()})", offset=ins.addr)

    def _bank_word_read(self, insts: list[Inst], at: int, prev: Inst | None) -> tuple[tuple[int, int], int] | None:
        """((bank, offset), value) where ``prev`` (the writer of the called register before
        ``insts[at]``) reads one word of a program bank at an offset known here: an LDC / ULDC /
        MOV of ``c[bank][off]``, an indexed LDC whose index register holds a constant
        (``const_reg``: SM53's ``MOV32I R3, 0x48; LDC R3, c[0x4][R3]``); else None.  (The low
        word: code addresses are below 2^32 here.)"""
        if prev is None:
            return None
        cb = prev.ops.get("cb") or prev.ops.get("c") or prev.ops.get("b")
        if not isinstance(cb, dict) or "bank" not in cb:
            return None
        off = cb.get("off", 0)
        ix = cb.get("reg", 255)
        if ix != 255:
            v = const_reg(insts, insts.index(prev), ix)
            if v is None:
                return None
            off += v
        data = self._program_bank(cb["bank"])
        if data is None or off % 4 or not 0 <= off <= len(data) - 4:
            return None
        return (cb["bank"], off), int.from_bytes(data[off : off + 4], "little")

    def _indirect_off(self, ins: Inst) -> int:
        if ins.row.ir in ABSOLUTE:  # the register (+ JMX's field) is the address itself
            return ins.ops.get("t", {}).get("imm", 0) - (ins.addr + self.INST_BYTES)
        t = ins.ops["rt"] if "rt" in ins.ops else ins.ops["t"]
        # an immediate offset (BRX), or a decoded target (CALL.IND: next + field, as an address)
        return t["imm"] if "imm" in t else t["target"] - ins.addr - self.INST_BYTES

    def indirect_step(self, ins: Inst) -> None:
        """The structuriser's answer to a BRX: the dispatcher loop runs the program."""
        raise Unstructured(f"offset {ins.addr:#x}: indirect branch (dispatcher loop)")

    def indirect_next(self, ins: Inst, targets: list[tuple[int, int]], block_of) -> int:
        """The dispatcher's next block after a taken BRX: ``next + Rt + off`` matched against
        the bounded targets (``block_of(addr)``: the block an address starts); no match: DONE."""
        b = Block()
        t = b.op("IAdd32", b.get_reg(ins.ops["a"]["reg"]), b.const_u32(ins.addr + self.INST_BYTES + self._indirect_off(ins)))
        res = b.const_u32(DONE)
        for raw, a in targets:
            res = b.op("Select32", b.op("IEq32", t, b.const_u32(raw)), b.const_u32(block_of(a)), res)
        return ir_spirv.emit_value(self, b, res)

    def op_lepc(self, inst: Inst) -> None:
        """SM86 LEPC Rd: the instruction's own address as a 64-bit pair (nvcc's code computes a
        return address as LEPC's value - LEPC's offset + the return point's offset: nvdisasm of
        ``assert``'s call to __assertfail), from the code's start — the addresses CALL.ABS,
        RET.ABS and the linker-patched immediates use here.  SM53 LEPC (not emitted by ptxas
        12.9; which address it gives is not known here) is refused by name."""
        if self.INST_BYTES != 16:
            raise TranslateError(f"{inst.text()}: SM53 LEPC not translated (ptxas does not emit it)", offset=inst.addr)
        d = inst.ops["d"]["reg"]
        b = Block()
        if d != 255:
            b.set_reg(d, b.const_u32(inst.addr))
            b.set_reg(d + 1, b.const_u32(0))
        ir_spirv.emit(self, b)

    def op_indirect(self, inst: Inst) -> None:  # never reached: BRX picks the next block
        raise TranslateError(f"{inst.text()}: indirect branch outside the dispatcher", offset=inst.addr)

    # --- an indexed read of a program bank (the jump table) ----------------------------------
    def check_late(self, o) -> bool:
        if o.op.name == "CBankDynU32" and self._program_bank(o.attrs["bank"]) is not None:
            return True
        return super().check_late(o)

    def cbank_dyn(self, bank: int, byte_addr: int, inst: Inst) -> int:
        data = self._program_bank(bank)
        if data is None:
            return super().cbank_dyn(bank, byte_addr, inst)
        idx = self.op("OpShiftRightLogical", self.u32, byte_addr, self.c(2))
        res = self.c(0)
        for k in range(len(data) // 4):
            w = int.from_bytes(data[4 * k : 4 * k + 4], "little")
            res = self.op("OpSelect", self.u32, self.op("OpIEqual", self.bool, idx, self.c(k)), self.c(w), res)
        return res
