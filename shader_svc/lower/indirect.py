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
    """The constant bank an indexed LDC (SM86: or ULDC, BRXU's table read) reads (either ISA's
    operand name), else None."""
    if ins.row.ir != "LDC" and not (ins.row.ir == "ULDC" and "reg" in ins.ops.get("cb", {})):
        return None
    cb = ins.ops.get("cb") or ins.ops.get("c")
    return None if cb is None else cb.get("bank")


def last_writer(insts: list[Inst], at: int, reg: int, file: str = "R") -> Inst | None:
    """The unguarded instruction that last wrote R``reg`` (``file`` "UR": UR``reg``) before
    ``insts[at]`` on the straight line of code leading to it (no branch in between, no branch
    target after it: every path to ``insts[at]`` ran it); None where there is none or the writer
    is guarded.  (SM53: a branch to a group's control word enters the instruction after it.)"""
    entered = {t["target"] + e for i in insts for t in i.ops.values() if isinstance(t, dict) and "target" in t for e in (0, 8)}
    if insts[at].addr in entered:
        return None
    for prev in reversed(insts[:at]):
        d = prev.ops.get("d", {})
        if d.get("reg") == reg and d.get("file", "R") == file:
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
        reg, file = ins.ops["a"]["reg"], ins.ops["a"].get("file", "R")  # SM86 BRXU: a uniform register
        if ins.row.ir in ABSOLUTE:
            return self.call_abs_targets(insts, at, entry)
        prev = last_writer(insts, at, reg, file)
        bank = _ldc_bank(prev) if prev is not None else None
        data = self._program_bank(bank) if bank is not None else None
        if data is None:
            raise TranslateError(
                f"{ins.text()} (word {ins.word:#x}): indirect branch whose targets are not bounded "
                f"(its register {file}{reg} is not read by an {'U' if file == 'UR' else ''}LDC from a constant "
                "bank of the program)",
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
            what = " (the kernel's parameters)" if bank == 0 else ""
            raise TranslateError(
                f"{ins.text()} (word {ins.word:#x}): call to an address read from constant bank {bank:#x}{what}, "
                "which is not part of the program (an external function, or a pointer the program does not make)",
                offset=ins.addr,
            )
        self._refuse_unbounded_source(insts, at)  # indirect-refuse (issue 31)
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

    # indirect-refuse (issue 31): where the called register's value comes from, over every path
    # that reaches the call (``reaching_writers``), copies followed, and whether the program's own
    # words bound it.  A constant, a bank word or a load from memory that only the program writes
    # (its local memory: -G keeps a function-pointer array on its stack and reads it with generic
    # loads) is bounded; a load from global memory is bounded by the program's placed data only;
    # a load of memory the translator has no image of (global memory without data, shared memory,
    # attributes) or arithmetic on the value (no word of the program need equal the sum) is not.
    LOADS = {
        # generic addressing (SM86's LD decodes to the LDG row's IR): the pointer's provenance
        # says local or global memory
        "LD": None,
        "LDG": None,
        "LDL": "local memory",
        "LDS": "shared memory",
        "ATOMG": "global memory",
        "ATOMG.CAS": "global memory",
        "ATOM": None,
        "ATOMS": "shared memory",
        "ALD": "an attribute",
        "LDTRAM": "an attribute",
    }
    BOUNDED = {"MOV", "LDC", "LEPC"}  # a move (of an immediate: the linker's address), a bank word, the PC
    # the stack pointer's initial value: ``MOV R1, c[0x0][STACK]`` opens every -G kernel
    # (nvdisasm of the ctl_call -G kernels: SM86 c[0x0][0x28], SM53 c[0x0][0x20])
    STACK_CBANK = {16: 0x28, 8: 0x20}
    # control leaves here for good (a guarded one falls through too)
    NO_FALL = {"BRA", "EXIT", "RET", "RET.ABS", "BRX", "JMX", "CALL.IND", "KIL", "KILL", "SYNC", "BRK"}

    def _preds(self, insts: list[Inst]) -> list[list[int]]:
        """Each instruction's predecessors: the one before it where that falls through (a call
        returns to the next instruction), every branch whose target enters it (SM53: a group's
        control word enters the instruction after it) and every call of an absolute address
        (SM86 CALL.ABS, SM53 JCAL: a callee's argument registers come from its callers).  A
        callee's writes are not followed into its return point (left: a function pointer
        returned by a callee is traced past the call into the caller's earlier writers)."""
        at = {ins.addr: n for n, ins in enumerate(insts)}
        out: list[list[int]] = [[] for _ in insts]
        for n, ins in enumerate(insts):
            if n and not (insts[n - 1].row.ir in self.NO_FALL and insts[n - 1].pred == 7 and not insts[n - 1].pred_not):
                out[n].append(n - 1)
            dests = [t["target"] for t in ins.ops.values() if isinstance(t, dict) and "target" in t]
            if ins.row.ir in ("CALL.ABS", "JCAL"):  # an absolute callee: its arguments come from here
                t = ins.ops.get("target", ins.ops.get("t", {}))
                dests += [t["imm"]] if "imm" in t else []
            for t in dests:
                for e in (0, 8):
                    if t + e in at:
                        out[at[t + e]].append(n)
        return out

    def _preds_memo(self, insts: list[Inst]) -> list[list[int]]:
        memo = getattr(self, "_preds_now", None)
        if memo is None or memo[0] is not insts:
            memo = self._preds_now = (insts, self._preds(insts))  # held with the list: no id reuse
        return memo[1]

    def reaching_writers(self, insts: list[Inst], at: int, reg: int) -> list[int]:
        """The indexes of the instructions whose write of R``reg`` may reach ``insts[at]``
        over any path (a guarded writer, and the paths around it)."""
        preds, seen, out = self._preds_memo(insts), set(), []
        work = list(preds[at])
        while work:
            n = work.pop()
            if n in seen:
                continue
            seen.add(n)
            d = insts[n].ops.get("d", {})
            if d.get("reg") == reg and d.get("file", "R") == "R":
                out.append(n)
                if insts[n].pred == 7 and not insts[n].pred_not:
                    continue
            work.extend(preds[n])
        return sorted(out)

    CALLS = ("CALL", "CALL.ABS", "CALL.IND", "CALL.ABS.R", "CAL", "JCAL")

    def known_values(self, insts: list[Inst], at: int, reg: int) -> set[int] | None:
        """The values R``reg`` may hold before ``insts[at]`` where every write of it that may
        reach there (plain copies followed) is a move of an immediate: those immediates (nvcc
        -G's return addresses and function pointers, ``MOV R20, 0x440`` before ``CALL.ABS``);
        None where anything else may reach it: another write (a wider one starting below it
        too), a call through a register, the program's entry (no write at all).  Where a direct
        call returns, the value at each of its callee's returns is followed into the callee and
        out of its entry to that same call only (the calls entered so far are a stack: a
        function called from several places keeps its callers apart); from a function's entry
        with no call entered, to every caller."""
        preds, seen, vals = self._preds_memo(insts), set(), set()
        work: list[tuple[int, int, tuple]] = [(at, reg, ())]
        while work:
            n, r, stack = work.pop()
            if r == 255:
                vals.add(0)
                continue
            if (n, r, stack) in seen:
                continue
            if len(seen) > 20000 or len(stack) > 32:
                return None  # too far to follow
            seen.add((n, r, stack))
            if n == 0:
                return None  # the value the program starts with
            # (an instruction nothing reaches, the padding after a function: no value)
            for p in preds[n]:
                ip = insts[p]
                st = stack
                if ip.row.ir in self.CALLS:
                    if p == n - 1:
                        # the callee returns here: its value at each of the callee's returns
                        rets = self._returns_of(insts, p)
                        if rets is None:
                            return None
                        work.extend((k, r, stack + (p,)) for k in rets)
                        continue
                    if stack:  # a callee's entry: back to the call that entered it only
                        if p != stack[-1]:
                            continue
                        st = stack[:-1]
                hit = False
                for name, d in ip.ops.items():
                    if name.startswith("d") and isinstance(d, dict) and d.get("file", "R") == "R" and "reg" in d:
                        if d["reg"] == r:
                            hit = True
                        elif d["reg"] < r <= d["reg"] + 3 and d["reg"] != 255 and self._wide(ip):
                            return None  # a wide write covers R<reg>
                if not hit:
                    work.append((p, r, st))
                    continue
                b = ip.ops.get("b", {})
                if ip.row.ir == "MOV" and "imm" in b:
                    vals.add(b["imm"] & 0xFFFFFFFF)
                elif ip.row.ir == "MOV" and "reg" in b and b.get("file", "R") == "R" and not b.get("neg"):
                    work.append((p, b["reg"], st))
                else:
                    return None
                if ip.pred != 7 or ip.pred_not:
                    work.append((p, r, st))  # a guarded write: the value from before it as well
        return vals

    # instructions whose register result is one 32-bit register (either ISA): any other writer
    # may write the registers after its destination too (.64/.128 loads, IMAD.WIDE, doubles,
    # CS2R, texture fetches...)
    NARROW = frozenset(
        "MOV MOV32I IADD3 IADD IADD32I LOP3 LOP LOP32I SHF SHL SHR IMAD ISCADD LEA SEL FSEL PRMT S2R "
        "FADD FADD32I FMUL FFMA FMNMX IMNMX POPC FLO BREV BFE BFI I2F F2I MUFU IABS P2R XMAD ICMP "
        "FSET ISET SHFL".split()
    )

    @classmethod
    def _wide(cls, ins: Inst) -> bool:
        """Whether an instruction may write more than its destination register: anything but
        the one-register forms of ``NARROW`` (judged by the printed form, so an unknown form
        counts as wide)."""
        words = ins.text().split(" ")
        op = words[1] if words[0].startswith("@") else words[0]
        if op.split(".")[0] not in cls.NARROW:
            return True
        return any(m in op for m in (".64", ".128", "WIDE", "F64", "S64", "U64"))

    def _returns_of(self, insts: list[Inst], call: int) -> list[int] | None:
        """The return instructions (RET, RET.ABS) of the function the direct call ``insts[call]``
        enters, found along its code from its entry (its own calls stepped over); None for a
        call through a register or a target outside the code."""
        ins = insts[call]
        t = ins.ops.get("target", {})
        dest = t.get("target", t.get("imm")) if ins.row.ir in ("CALL", "CALL.ABS", "JCAL", "CAL") else None
        memo = self.__dict__.setdefault("_returns_memo", {})
        key = (id(insts), dest)
        if key in memo:
            return memo[key]
        at = {x.addr: k for k, x in enumerate(insts)} if dest is not None else {}
        out: list[int] | None = [] if dest in at else None
        seen, work = set(), [at[dest]] if out is not None else []
        while work:
            k = work.pop()
            if k in seen or k >= len(insts):
                continue
            seen.add(k)
            x = insts[k]
            if x.row.ir in ("RET", "RET.ABS"):
                out.append(k)
                if x.pred == 7 and not x.pred_not:
                    continue
            if x.row.ir in INDIRECT:
                out = None
                break
            if x.row.ir not in self.CALLS:
                for v in x.ops.values():
                    if isinstance(v, dict) and "target" in v:
                        for e in (0, 8):
                            if v["target"] + e in at:
                                work.append(at[v["target"] + e])
            if not (x.row.ir in self.NO_FALL and x.pred == 7 and not x.pred_not):
                work.append(k + 1)
        memo[key] = out
        return out

    def _value_sources(self, insts: list[Inst], at: int, reg: int) -> list[int]:
        """The writers of R``reg``'s value at ``insts[at]`` over every path, plain copies
        (``MOV Rd, Rs``, -G's ``MOV Rd, Rd`` too) followed."""
        seen, out, work = set(), [], [(at, reg)]
        while work:
            k, r = work.pop()
            if (k, r) in seen or r == 255:
                continue
            seen.add((k, r))
            for w in self.reaching_writers(insts, k, r):
                b = insts[w].ops.get("b", {})
                if insts[w].row.ir == "MOV" and "reg" in b and b.get("file", "R") == "R":
                    work.append((w, b["reg"]))
                elif w not in out:
                    out.append(w)
        return out

    def _is_local_pointer(self, insts: list[Inst], at: int, reg: int) -> bool:
        """Whether R``reg`` at ``insts[at]`` is derived from the stack pointer (a local or
        generic-to-local address: -G adds the local window to it): some value on its data flow
        (copies and arithmetic, not loads) is the stack pointer's initial bank word.  A pointer
        plus an offset stays in its pointer's memory."""
        stack = self.STACK_CBANK.get(self.INST_BYTES)
        seen, work = set(), [(at, reg)]
        while work and len(seen) < 4096:
            k, r = work.pop()
            if (k, r) in seen or r == 255:
                continue
            seen.add((k, r))
            for w in self.reaching_writers(insts, k, r):
                ins = insts[w]
                if ins.row.ir in self.LOADS or ins.row.ir == "LDC":
                    continue  # a pointer read from memory: not the stack
                for o in ins.ops.values():
                    if not isinstance(o, dict) or o is ins.ops.get("d"):
                        continue
                    if o.get("bank") == 0 and o.get("off") == stack and "reg" not in o:
                        return True
                    if "reg" in o and o.get("file", "R") == "R" and "bank" not in o:
                        work.append((w, o["reg"]))
        return False

    def _memory_of(self, insts: list[Inst], n: int) -> str:
        """Which memory the load ``insts[n]`` reads: its own kind, or for a generic load the
        provenance of its address register."""
        ins = insts[n]
        where = self.LOADS[ins.row.ir]
        if where is not None:
            return where
        a = next((o for k, o in ins.ops.items() if k != "d" and isinstance(o, dict) and "reg" in o), None)
        return "local memory" if a is not None and self._is_local_pointer(insts, n, a["reg"]) else "global memory"

    def _refuse_unbounded_source(self, insts: list[Inst], at: int) -> None:
        """Refuse by name a call through a register whose possible values the program's words do
        not bound (comment above): every writer that may reach the call is checked."""
        ins = insts[at]
        reg = ins.ops["a"]["reg"]
        for n in self._value_sources(insts, at, reg):
            prev = insts[n]
            if prev.row.ir in self.BOUNDED:
                continue
            if prev.row.ir in self.LOADS:
                where = self._memory_of(insts, n)
                if where == "local memory":
                    continue  # the program's own stores (what is left: README)
                if where == "global memory":
                    if getattr(self.spec, "data", ()):
                        continue  # the placed data's words are among the targets (call_abs_targets)
                    why = "call target loaded from global memory with no program data"
                else:
                    why = f"call target loaded from {where}, of which the translator has no image"
            else:
                why = f"call target computed by {prev.mnemonic}, which the analysis cannot bound"
            raise TranslateError(
                f"{ins.text()} (word {ins.word:#x}): call through R{reg}: {why} (written at {prev.addr:#x} by {prev.text()})",
                offset=ins.addr,
            )

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
        a = ins.ops["a"]
        t = b.op(
            "IAdd32", b.get_reg(a["reg"], a.get("file", "R")), b.const_u32(ins.addr + self.INST_BYTES + self._indirect_off(ins))
        )
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
