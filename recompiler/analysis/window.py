"""The older jump-table search, kept as the fallback of the value analysis (``tables.py``):
the instructions of the ``BR``'s block, in address order before it, evaluated symbolically
with one unknown index; the bound from the ``cmp`` + ``b.hi``/``b.hs`` before it, a mask, or
entries read while they land on code near the branch.  Used where the function's own paths do
not tell the table (a fragment entered with its parent's frame: glibc's vfprintf spills its
table bases there), and records a masked table the lifted ``BR`` may index directly
(``DirectTable``, in the analyser's ``direct``)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from recompiler.analysis import backscan
from recompiler.analysis.image import Memory
from recompiler.analysis.transfer import ENDS
from recompiler.decode import Insn
from recompiler.lift.emitter import DirectTable
from recompiler.lift.integer import pcrel_value, sext

if TYPE_CHECKING:
    from recompiler.analysis.bodies import Analyser

M64 = (1 << 64) - 1


class WindowSearch:
    """The pattern search over one analyser's image (its decoder, memory and direct tables)."""

    def __init__(self, an: Analyser) -> None:
        self.insn = an.insn
        self.mem: Memory = an.mem
        self.direct: dict[int, DirectTable] = an.direct

    def jump_table(self, br_addr: int) -> list[int] | None:
        window = []
        a = br_addr - 4
        for _ in range(24):
            i = self.insn(a)
            if i is None or i.name in ENDS or i.group in ("BL", "BLR", "BCOND", "CBZ", "TBZ"):
                break  # the index register is defined at the start of the block
            window.append(i)
            a -= 4
        window.reverse()
        regs: dict[int, tuple] = {}
        loaded: set[int] = set()

        def get(n: int) -> tuple:
            return regs.get(n, ("reg", n))

        for i in window:
            f = i.f
            n, g = i.name, i.group  # g: the isa.py group, for the split class rows
            rd = f.get("Rd", f.get("Rt"))
            val: tuple | None = None
            if n in ("ADRP", "ADR"):
                val = ("const", pcrel_value(i))
            elif g == "ADDSUB_imm" and not f["S"] and not f["op"]:
                val = ("add", get(f["Rn"]), ("const", f["imm12"] << (12 if f["sh"] else 0)))
            elif g == "ADDSUB_ereg" and not f["S"] and not f["op"]:
                val = ("add", get(f["Rn"]), ("shl", ("ext", f["option"], get(f["Rm"])), f["imm3"]))
            elif g == "ADDSUB_sreg" and not f["S"] and not f["op"] and f["shift"] == 0:
                val = ("add", get(f["Rn"]), ("shl", get(f["Rm"]), f["imm6"]))
            elif g == "LDST_regoff" and not f["V"] and f["opc"] in (1, 2, 3):
                sh = f["size"] if f["S"] else 0
                addr = ("add", get(f["Rn"]), ("shl", ("ext", f["option"], get(f["Rm"])), sh))
                val = ("load", 1 << f["size"], f["opc"] != 1, addr)
            elif (
                g == "LOGIC_imm"
                and f["opc"] == 0
                and f["immr"] == 0
                and ((f["sf"] and f["N"] and f["imms"] < 63) or (not f["sf"] and not f["N"] and f["imms"] < 31))
            ):
                val = ("mask", get(f["Rn"]), (1 << (f["imms"] + 1)) - 1)  # and xD, xN, #(2^k - 1)
            elif g == "LOGIC_sreg" and f["opc"] == 1 and not f["N"] and f["Rn"] == 31 and f["imm6"] == 0:
                val = get(f["Rm"]) if f["sf"] else ("ext", 2, get(f["Rm"]))  # mov xD, xM / mov wD, wM
            elif n == "MOVZ":
                val = ("const", f["imm16"] << (16 * f["hw"]))
            elif g == "LDST_uimm" and not f["V"] and f["opc"] == 1 and f["size"] == 3 and f["Rn"] == 31:
                val = ("spill", f["imm12"] * 8)  # a table base spilled to the stack frame
            elif g == "LDST_uimm" and not f["V"] and f["opc"] in (1, 2) and get(f["Rn"])[0] == "add":
                # an entry of a table whose address this block computed (glibc's memcpy
                # variants: adrp + add + add index + ldrsw + add + br)
                addr = ("add", get(f["Rn"]), ("const", f["imm12"] << f["size"]))
                val = ("load", 1 << f["size"], f["opc"] == 2, addr)
            elif rd is not None and g in ("LDST_uimm", "LDST_imm9", "LDST_regoff") and not f["V"] and f["opc"]:
                val = ("reg", rd)  # a value loaded here (a bytecode word): a candidate index
                loaded.add(rd)
            elif rd is not None:
                val = ("unknown",)
            if rd is not None and rd != 31:
                regs[rd] = val if val is not None else ("unknown",)
            if g == "LDST_pair" and f["L"] and f["Rt2"] != 31:
                regs[f["Rt2"]] = ("unknown",)
        target = get(self.insn(br_addr).f["Rn"])
        unknowns = set()
        self._unknowns(target, unknowns)
        if ("unknown",) in unknowns:
            return None
        subst: dict[tuple, int] = {}
        if len(unknowns) > 1:  # a loop-invariant table base set up before the block
            start = window[0].addr if window else br_addr
            # the base may be set at the function's entry, thousands of instructions before an
            # interpreter's last handlers (a wrong guess costs the lookup of the real target,
            # and a DirectTable checks it at run time)
            consts = {
                u: (
                    backscan.spilled_const(self.insn, u[1], start)
                    if u[0] == "spill"
                    else backscan.const_before(self.insn, u[1], start, 8192)
                )
                for u in unknowns
                if not (u[0] == "reg" and u[1] in loaded)
            }
            subst = {u: c for u, c in consts.items() if c is not None}
            target = self._subst(target, subst)
            unknowns = set()
            self._unknowns(target, unknowns)
            if len(unknowns) != 1:
                return None
        if not unknowns:  # a constant target (e.g. adr + br to a fixed label): one entry
            v = self._eval(target, -1, 0)
            return [v] if v is not None and self.mem.is_code(v) else None
        idx_reg = next(iter(unknowns))[1]
        bound = self._bound(br_addr, idx_reg, len(window))
        if bound is None and self._mask_of(target, idx_reg):
            # an index masked to k bits (a computed goto's `op & mask`): up to 2^k entries, the
            # table being the ones that land on code (fewer opcodes than the mask allows; a
            # value past them goes through nx_jump like any unknown target)
            out = []
            for k in range(self._mask_of(target, idx_reg) + 1):
                v = self._eval(target, idx_reg, k)
                if v is None or not self.mem.is_code(v) or v % 4:
                    break
                out.append(v)
            if out:
                self._direct(br_addr, window, regs, target, idx_reg, subst, out)
            return out or None
        if bound is None:
            return self._open_table(target, idx_reg, br_addr)
        out = []
        for k in range(bound):
            v = self._eval(target, idx_reg, k)
            if v is None or not self.mem.is_code(v):
                return None
            out.append(v)
        return out

    def _direct(
        self,
        br_addr: int,
        window: list[Insn],
        regs: dict[int, tuple],
        target: tuple,
        idx_reg: int,
        subst: dict[tuple, int],
        out: list[int],
    ) -> None:
        """Record a masked table (``out``: its first entries, up to one that is not code) as indexed directly by
        the masked register (``DirectTable``) where that is the same jump: the register is
        the expression's one use of the index and holds that value at the BR (``regs``: the
        block's symbolic register file; a writeback or SVC in the block gives up),
        every entry lies in memory the program cannot write, and each base register guessed
        from before the block (``_const_before``) is checked at run time and kept by the
        block too.  A stack spill's value is not checked: such tables stay as they are."""
        mask = self._mask_of(target, idx_reg)
        if self._count_reg(target, idx_reg) != 1 or any(u[0] != "reg" for u in subst):
            return
        guards = tuple(sorted((u[1], c) for u, c in subst.items()))
        for r in (idx_reg, *(r for r, _ in guards)):
            if regs.get(r, ("reg", r)) != ("reg", r):
                return  # the block changed it after its value was taken
        kept = {idx_reg, *(r for r, _ in guards)}
        for i in window:
            f = i.f
            # what the symbolic pass does not follow: a base register's writeback, an
            # exclusive's status, an SVC's results
            if (
                i.group in ("LDST_imm9", "LDST_pair", "LDST_multi_post", "LDST_single_post")
                and f.get("idx", 1) in (1, 3)
                and f["Rn"] in kept
            ):
                return
            if "Rs" in f and f["Rs"] in kept or i.name in ("SVC", "HVC", "SMC"):
                return
        slots = []
        for k in range(mask + 1):
            if not self._loads_read_only(target, idx_reg, k):
                return
            v = self._eval(target, idx_reg, k)
            # None: the guest would branch to what is not code (a fault there as here)
            slots.append(v if v is not None and self.mem.is_code(v) and v % 4 == 0 else None)
        self.direct[br_addr] = DirectTable(idx_reg, mask, guards, tuple(slots), target)

    def _count_reg(self, e: tuple, reg: int) -> int:
        if e == ("reg", reg):
            return 1
        return sum(self._count_reg(x, reg) for x in e[1:] if isinstance(x, tuple))

    def _loads_read_only(self, e: tuple, idx_reg: int, k: int) -> bool:
        """Every load of ``e`` for index ``k`` reads memory the program cannot write."""
        if e[0] == "load":
            addr = self._eval(e[3], idx_reg, k)
            return addr is not None and self.mem.is_read_only(addr, e[1]) and self._loads_read_only(e[3], idx_reg, k)
        return all(self._loads_read_only(x, idx_reg, k) for x in e[1:] if isinstance(x, tuple))

    def _subst(self, e: tuple, consts: dict) -> tuple:
        if e in consts:
            return ("const", consts[e])
        if e[0] == "reg":
            return e
        if e[0] == "add":
            return ("add", self._subst(e[1], consts), self._subst(e[2], consts))
        if e[0] in ("shl", "mask"):
            return (e[0], self._subst(e[1], consts), e[2])
        if e[0] == "ext":
            return ("ext", e[1], self._subst(e[2], consts))
        if e[0] == "load":
            return ("load", e[1], e[2], self._subst(e[3], consts))
        return e

    def _open_table(self, target: tuple, idx_reg: int, br_addr: int) -> list[int] | None:
        """A table whose bound was not found (computed index, as in glibc's memcpy): take
        entries while they land on code near the branch.  An extra entry only adds a label."""
        out = []
        for k in range(64):
            v = self._eval(target, idx_reg, k)
            if v is None or not self.mem.is_code(v) or abs(v - br_addr) > 0x4000 or v % 4:
                if k == 0:
                    continue  # an unused first slot (glibc's memcpy: index 0 is handled before)
                break
            out.append(v)
        return out or None

    def _unknowns(self, e: tuple, acc: set) -> None:
        if e[0] == "spill":
            acc.add(e)
        elif e[0] in ("reg", "unknown"):
            acc.add(e if e[0] == "reg" else ("unknown",))
        elif e[0] == "add":
            self._unknowns(e[1], acc)
            self._unknowns(e[2], acc)
        elif e[0] in ("shl", "mask"):
            self._unknowns(e[1], acc)
        elif e[0] == "ext":
            self._unknowns(e[2], acc)
        elif e[0] == "load":
            self._unknowns(e[3], acc)

    def _eval(self, e: tuple, idx_reg: int, k: int) -> int | None:
        kind = e[0]
        if kind == "const":
            return e[1]
        if kind == "reg":
            return k if e[1] == idx_reg else None
        if kind == "add":
            a, b = self._eval(e[1], idx_reg, k), self._eval(e[2], idx_reg, k)
            return None if a is None or b is None else (a + b) & M64
        if kind == "shl":
            a = self._eval(e[1], idx_reg, k)
            return None if a is None else (a << e[2]) & M64
        if kind == "mask":
            a = self._eval(e[1], idx_reg, k)
            return None if a is None else a & e[2]
        if kind == "ext":
            a = self._eval(e[2], idx_reg, k)
            if a is None:
                return None
            bits = [8, 16, 32, 64][e[1] & 3]
            a &= (1 << bits) - 1
            if e[1] & 4 and bits < 64:
                a = sext(a, bits) & M64
            return a
        if kind == "load":
            addr = self._eval(e[3], idx_reg, k)
            if addr is None:
                return None
            b = self.mem.read(addr, e[1])
            if b is None:
                return None
            v = int.from_bytes(b, "little", signed=e[2])
            return v & M64
        return None

    def _bound(self, br_addr: int, reg: int, window: int) -> int | None:
        """Number of table entries, from the `cmp reg, #imm` + `b.hi`/`b.hs` guarding it (or the
        `cmp` of a byte-masked copy of ``reg``, see ``_byte_of``)."""
        a = br_addr - 4
        for _ in range(window + 24):
            i = self.insn(a)
            if i is None:
                return None
            f = i.f
            if (
                i.group == "ADDSUB_imm"
                and f["S"]
                and f["op"]
                and f["Rd"] == 31
                and (f["Rn"] == reg or self._byte_of(a - 4, f["Rn"], reg))
            ):
                imm = f["imm12"] << (12 if f["sh"] else 0)
                nxt = self._next_bcond(a + 4, br_addr)
                if nxt is not None:
                    c = nxt.f["cond"]
                    n = imm + 1 if c == 8 else imm if c == 2 else None
                    return n if n is not None and 0 < n <= 4096 else None
                return None
            a -= 4
        return None

    def _byte_of(self, at: int, rk: int, reg: int) -> bool:
        """The instruction at ``at`` is `and wK, wReg, #0xff`: glibc's vfprintf classes a format
        byte so (`and w1, w0, #0xff; cmp w1, #90; b.hi`, the index being the byte - ' '
        unmasked).  A wider index would pass the compare too; the table only names labels, and
        the lifted BR switches on the real target."""
        m = self.insn(at)
        return (
            m is not None
            and m.group == "LOGIC_imm"
            and m.f["opc"] == 0
            and m.f["Rd"] == rk
            and m.f["Rn"] == reg
            and not m.f["sf"]
            and not m.f["N"]
            and m.f["immr"] == 0
            and m.f["imms"] == 7
        )

    def _mask_of(self, e: tuple, idx_reg: int) -> int | None:
        """The mask of a ``("mask", reg idx_reg, m)`` node inside ``e`` (bound of a masked index)."""
        if e[0] == "mask" and e[1] == ("reg", idx_reg) and e[2] < 4096:
            return e[2]
        for sub in e[1:]:
            if isinstance(sub, tuple):
                m = self._mask_of(sub, idx_reg)
                if m is not None:
                    return m
        return None

    def _next_bcond(self, a: int, end: int) -> Insn | None:
        """The first `b.cond` from ``a`` up to ``end`` if no instruction before it sets the
        flags or branches (compilers schedule other work between the `cmp` and its `b.hi`)."""
        while a < end:
            i = self.insn(a)
            if i is None or i.form is None:
                return None
            if i.group == "BCOND":
                return i
            sets = (i.group in ("ADDSUB_imm", "ADDSUB_sreg", "ADDSUB_ereg", "ADC") and i.f["S"]) or (
                i.group in ("LOGIC_imm", "LOGIC_sreg") and i.f["opc"] == 3
            )
            if sets or i.form.cls in ("condcmp", "fp_cmp", "branch", "branch_reg", "sysreg"):
                return None
            a += 4
        return None
