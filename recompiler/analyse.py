"""Find the functions of a linked image and the body and jump tables of each.

Entries come from the program entry, the linker's hints (symbols, relocation targets, init
arrays), `.eh_frame` FDEs (static glibc has one for nearly every function) and every `BL`
target of a linear sweep over the executable segments.  A false entry is harmless: a branch
into it becomes a tail call.  A body is what its entry reaches by fall-through and direct
branches, stopping at other entries.
"""

from __future__ import annotations

import bisect
import struct
from dataclasses import dataclass, field

from recompiler.analysis import pointers, stats
from recompiler.analysis.stats import AnalysisStats
from recompiler.analysis.tables import Recovered, recover
from recompiler.analysis.transfer import Transfer
from recompiler.analysis.values import FunctionValues
from recompiler.decode import Insn, decode
from recompiler.lift.control import branch_target
from recompiler.lift.emitter import DirectTable, FunctionPlan
from recompiler.lift.integer import pcrel_value, sext

M64 = (1 << 64) - 1
_ENDS = {"B", "BR", "RET", "BRK", "UDF"}
POINTER_ROUNDS = 8  # rounds of pointer discovery (each lifts what the last one found)
MAX_ROUNDS = 32  # value analysis reruns per function as its jump tables grow its body


@dataclass
class Memory:
    """Read-only view of the image's initialised bytes, by guest address."""

    segments: list[tuple[int, int, bytes, bool]]  # (vaddr, memsz, data, executable)
    # (vaddr, memsz) of what the program cannot write at run time (segments without write
    # permission): tables read from there may be read once, here, instead of at each dispatch
    read_only: list[tuple[int, int]] = field(default_factory=list)

    def is_read_only(self, addr: int, n: int) -> bool:
        return any(va <= addr and addr + n <= va + m for va, m in self.read_only)

    def read(self, addr: int, n: int) -> bytes | None:
        for va, memsz, data, _x in self.segments:
            if va <= addr and addr + n <= va + memsz:
                off = addr - va
                chunk = data[off : off + n]
                return chunk + b"\0" * (n - len(chunk))
        return None

    def is_code(self, addr: int) -> bool:
        ranges = self.__dict__.get("_code")
        if ranges is None:  # (asked once per instruction and candidate: kept as plain ranges)
            ranges = self.__dict__["_code"] = [(va, va + len(data)) for va, _m, data, x in self.segments if x]
        for lo, hi in ranges:
            if lo <= addr < hi:
                return True
        return False


@dataclass
class Program:
    functions: dict[int, FunctionPlan]
    entry: int
    unresolved_br: list[int] = field(default_factory=list)
    stats: AnalysisStats | None = None  # what analysis found (recompile --stats)


def _loads(i: Insn) -> bool:
    """A load/store instruction that writes its Rt (a load, an atomic's old value), not a store."""
    f = i.f
    if "L" in f:
        return bool(f["L"])
    return i.name in ("LDR_lit", "LDST_atomic") or f.get("opc", 1) != 0


def eh_frame_starts(addr: int, data: bytes) -> list[int]:
    """pc_begin of every FDE in an .eh_frame section (pointer encoding from each CIE)."""
    out: list[int] = []
    cie_enc: dict[int, int] = {}
    off = 0
    while off + 8 <= len(data):
        (length,) = struct.unpack_from("<I", data, off)
        if length == 0:
            break
        hdr = 4
        if length == 0xFFFFFFFF:
            (length,) = struct.unpack_from("<Q", data, off + 4)
            hdr = 12
        body = off + hdr
        end = body + length
        if end > len(data):
            break
        (cie_id,) = struct.unpack_from("<I", data, body)
        if cie_id == 0:
            cie_enc[off] = _cie_fde_encoding(data, body + 4, end)
        else:
            cie_off = body - cie_id
            enc = cie_enc.get(cie_off, 0x1B)
            p = body + 4
            v = _read_enc(data, p, enc, addr + p)
            if v is not None and v:
                out.append(v)
        off = end
    return out


def _uleb(data: bytes, p: int) -> tuple[int, int]:
    v = shift = 0
    while p < len(data):
        b = data[p]
        p += 1
        v |= (b & 0x7F) << shift
        shift += 7
        if not b & 0x80:
            break
    return v, p


def _cie_fde_encoding(data: bytes, p: int, end: int) -> int:
    p += 1  # version
    z = data.index(b"\0", p, end)
    aug = data[p:z].decode("ascii", "replace")
    p = z + 1
    _, p = _uleb(data, p)  # code alignment
    _, p = _uleb(data, p)  # data alignment (sleb, same length)
    p += 1  # return register (version 1: one byte)
    enc = 0
    if aug.startswith("z"):
        _, p = _uleb(data, p)
        for ch in aug[1:]:
            if ch == "R":
                enc = data[p]
                p += 1
            elif ch == "P":
                penc = data[p]
                p += 1
                p += {0x00: 8, 0x03: 4, 0x0B: 4, 0x04: 8, 0x0C: 8}.get(penc & 0x0F, 4)
            elif ch == "L":
                p += 1
    return enc


def _read_enc(data: bytes, p: int, enc: int, field_addr: int) -> int | None:
    fmt = enc & 0x0F
    if fmt == 0x0B:
        (v,) = struct.unpack_from("<i", data, p)
    elif fmt == 0x03:
        (v,) = struct.unpack_from("<I", data, p)
    elif fmt in (0x00, 0x04, 0x0C):
        (v,) = struct.unpack_from("<Q" if fmt != 0x0C else "<q", data, p)
    else:
        return None
    if enc & 0x70 == 0x10:
        v += field_addr
    return v & M64


class Analyser:
    def __init__(self, mem: Memory, entries: set[int]) -> None:
        self.mem = mem
        self.entries = {e for e in entries if e % 4 == 0 and mem.is_code(e)}
        # entries seen only as code pointers in data (or adrp+add): possibly labels of a
        # computed goto rather than functions; a jump table of a function may take them in
        self.weak: set[int] = set()
        self._strong: list[int] | None = None
        self._cache: dict[int, Insn] = {}
        self.direct: dict[int, DirectTable] = {}  # BR address -> its table indexed directly
        self.transfer = Transfer(mem)
        self.table_kinds: dict[int, dict[int, str]] = {}  # function -> BR -> how its table was found
        self.source: dict[int, str] = {}  # entry -> how it was found first (analysis.stats)
        self.inexact: set[int] = set()  # BRs whose table rests on a guessed base

    def insn(self, addr: int) -> Insn | None:
        i = self._cache.get(addr)
        if i is None:
            b = self.mem.read(addr, 4)
            if b is None or not self.mem.is_code(addr):
                return None
            i = decode(int.from_bytes(b, "little"), addr)
            self._cache[addr] = i
        return i

    def sweep_calls(self) -> None:
        """Seed entries from every BL target, every `adrp`+`add` pair that computes a code
        address (function pointers passed in registers), and every aligned 64-bit word of
        the image that points at code (function pointers in data and rodata)."""
        for va, _memsz, data, x in self.mem.segments:
            off = -va % 8  # the first 8-aligned guest address in the segment
            if len(data) >= off + 8:
                for k, v in enumerate(struct.unpack_from(f"<{(len(data) - off) // 8}Q", data, off)):
                    if v % 4 == 0 and self.mem.is_code(v) and v not in self.entries:
                        self.entries.add(v)
                        self.weak.add(v)
                        self.source.setdefault(v, "data")
            if not x:
                continue
            words = struct.unpack_from(f"<{len(data) // 4}I", data, 0)
            for k, w in enumerate(words):
                a = va + 4 * k
                if w >> 26 == 0x25:  # BL
                    t = (a + sext(w & 0x3FFFFFF, 26) * 4) & M64
                    if self.mem.is_code(t):
                        self.entries.add(t)
                        self.weak.discard(t)
                        self.source.setdefault(t, "bl")
                elif w & 0x9F000000 == 0x90000000:  # ADRP
                    rd = w & 31
                    page = ((a & ~0xFFF) + (sext(((w >> 5) & 0x7FFFF) << 2 | ((w >> 29) & 3), 21) << 12)) & M64
                    for j in range(k + 1, min(k + 4, len(words))):
                        w2 = words[j]
                        # ADD Xd, Xn, #imm12 (no shift) with Xn == the ADRP's register
                        if w2 & 0xFFC00000 == 0x91000000 and (w2 >> 5) & 31 == rd:
                            t = page + ((w2 >> 10) & 0xFFF)
                            if t % 4 == 0 and self.mem.is_code(t) and t not in self.entries:
                                self.entries.add(t)
                                self.weak.add(t)
                                self.source.setdefault(t, "adrp+add")
                            break

    def function(self, entry: int) -> FunctionPlan:
        """The body of the function at ``entry``: what it reaches by fall-through, direct
        branches and the targets of the jump tables the value analysis finds
        (``recompiler.analysis.tables``), which is rerun on the grown body until no ``BR``
        gains targets (a computed goto's handlers end in more dispatches)."""
        seen: dict[int, Insn] = {}
        work = [entry]
        tables: dict[int, list[int]] = {}
        kinds: dict[int, str] = {}
        direct: dict[int, DirectTable] = {}
        inner: set[int] = set()  # weak entries this function's own jump tables reach: its labels
        settled = False
        for _round in range(MAX_ROUNDS):
            self._walk(entry, seen, work, inner)
            brs = [a for a, i in seen.items() if i.name == "BR"]
            if not brs:
                settled = True
                break
            # every BR again on the grown body: a path the new code adds may change a base
            # that looked constant (a direct table must hold on the final body)
            fv = FunctionValues(self.transfer, seen, entry, tables)
            grew = False
            for a in brs:
                rec = recover(fv, seen[a], self.mem, lambda v: v in seen or self._near(entry, v))
                direct.pop(a, None)
                if rec is None:
                    # what the function's own paths do not tell (a fragment entered with its
                    # parent's frame: glibc's vfprintf spills its table bases there): the
                    # pattern search in address order before the branch, kept as a fallback
                    old = self.jump_table(a)
                    if not old:
                        continue
                    rec = Recovered(old, "window", self.direct.get(a))
                tbl = list(dict.fromkeys([*tables.get(a, ()), *rec.targets]))
                tables[a], kinds[a] = tbl, rec.kind
                if not rec.exact:
                    self.inexact.add(a)
                if rec.direct is not None:
                    direct[a] = rec.direct
                # a label function (itself weak) keeps them as tail calls: else each
                # of a computed goto's labels would copy the rest of the interpreter
                own = {x for x in tbl if x in self.weak and entry not in self.weak and self._near(entry, x)}
                inner |= own
                new = [x for x in tbl if x not in seen and (x not in self.entries or x in own)]
                work.extend(new)
                grew = grew or bool(new)
            if not grew:
                settled = True
                break
        if not settled:
            direct.clear()  # the last analysis did not see the final body
        if inner:
            # an interpreter's computed goto: a dispatch whose table base was not found is
            # most likely the same table, so it gets the same label switch; the lifted BR
            # switches on the real target, so a wrong guess only costs the nx_jump it had
            main = max((t for t in tables.values() if set(t) & inner), key=len)
            for a, i in seen.items():
                if i.name == "BR" and a not in tables:
                    tables[a], kinds[a] = main, "shared"
        body = [seen[k] for k in sorted(seen)]
        self.table_kinds[entry] = kinds
        return FunctionPlan(entry, body, jump_tables=tables, direct_tables=direct)

    def _walk(self, entry: int, seen: dict[int, Insn], work: list[int], inner: set[int]) -> None:
        while work:
            a = work.pop()
            while a not in seen:
                if a != entry and a in self.entries and a not in inner:
                    break  # falls into another function: a tail call
                i = self.insn(a)
                if i is None:
                    break
                seen[a] = i
                n = i.name
                t = branch_target(i)
                if (
                    n != "BL"
                    and t is not None
                    and t not in seen
                    and (t not in self.entries or t in inner)
                    and self.mem.is_code(t)
                ):
                    work.append(t)
                if n in _ENDS or i.form is None or (n == "BCOND" and i.f["cond"] >> 1 == 7):
                    break
                a += 4

    # ---- jump tables: evaluate the BR register symbolically with one unknown index ------
    def jump_table(self, br_addr: int) -> list[int] | None:
        window = []
        a = br_addr - 4
        for _ in range(24):
            i = self.insn(a)
            if i is None or i.name in _ENDS or i.name in ("BL", "BLR", "BCOND", "CBZ", "TBZ"):
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
            n = i.name
            rd = f.get("Rd", f.get("Rt"))
            val: tuple | None = None
            if n in ("ADRP", "ADR"):
                val = ("const", pcrel_value(i))
            elif n == "ADDSUB_imm" and not f["S"] and not f["op"]:
                val = ("add", get(f["Rn"]), ("const", f["imm12"] << (12 if f["sh"] else 0)))
            elif n == "ADDSUB_ereg" and not f["S"] and not f["op"]:
                val = ("add", get(f["Rn"]), ("shl", ("ext", f["option"], get(f["Rm"])), f["imm3"]))
            elif n == "ADDSUB_sreg" and not f["S"] and not f["op"] and f["shift"] == 0:
                val = ("add", get(f["Rn"]), ("shl", get(f["Rm"]), f["imm6"]))
            elif n == "LDST_regoff" and not f["V"] and f["opc"] in (1, 2, 3):
                sh = f["size"] if f["S"] else 0
                addr = ("add", get(f["Rn"]), ("shl", ("ext", f["option"], get(f["Rm"])), sh))
                val = ("load", 1 << f["size"], f["opc"] != 1, addr)
            elif (
                n == "LOGIC_imm"
                and f["opc"] == 0
                and f["immr"] == 0
                and ((f["sf"] and f["N"] and f["imms"] < 63) or (not f["sf"] and not f["N"] and f["imms"] < 31))
            ):
                val = ("mask", get(f["Rn"]), (1 << (f["imms"] + 1)) - 1)  # and xD, xN, #(2^k - 1)
            elif n == "LOGIC_sreg" and f["opc"] == 1 and not f["N"] and f["Rn"] == 31 and f["imm6"] == 0:
                val = get(f["Rm"]) if f["sf"] else ("ext", 2, get(f["Rm"]))  # mov xD, xM / mov wD, wM
            elif n == "MOVZ":
                val = ("const", f["imm16"] << (16 * f["hw"]))
            elif n == "LDST_uimm" and not f["V"] and f["opc"] == 1 and f["size"] == 3 and f["Rn"] == 31:
                val = ("spill", f["imm12"] * 8)  # a table base spilled to the stack frame
            elif n == "LDST_uimm" and not f["V"] and f["opc"] in (1, 2) and get(f["Rn"])[0] == "add":
                # an entry of a table whose address this block computed (glibc's memcpy
                # variants: adrp + add + add index + ldrsw + add + br)
                addr = ("add", get(f["Rn"]), ("const", f["imm12"] << f["size"]))
                val = ("load", 1 << f["size"], f["opc"] == 2, addr)
            elif rd is not None and n in ("LDST_uimm", "LDST_imm9", "LDST_regoff") and not f["V"] and f["opc"]:
                val = ("reg", rd)  # a value loaded here (a bytecode word): a candidate index
                loaded.add(rd)
            elif rd is not None:
                val = ("unknown",)
            if rd is not None and rd != 31:
                regs[rd] = val if val is not None else ("unknown",)
            if n == "LDST_pair" and f["L"] and f["Rt2"] != 31:
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
                u: (self._spilled_const(u[1], start) if u[0] == "spill" else self._const_before(u[1], start, 8192))
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
                i.name in ("LDST_imm9", "LDST_pair", "LDST_multi_post", "LDST_single_post")
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

    def _const_before(self, reg: int, addr: int, limit: int = 256) -> int | None:
        """Value of ``reg`` if its last write before ``addr`` (walking back in address order)
        is an `adrp`(+`add`) pair: how compilers hoist a jump table's base out of a loop."""
        a = addr - 4
        for _ in range(limit):
            i = self.insn(a)
            if i is None:
                return None
            f = i.f
            if f.get("Rd") == reg and i.group in (
                "ADRP",
                "ADR",
                "ADDSUB_imm",
                "ADDSUB_sreg",
                "ADDSUB_ereg",
                "LOGIC_imm",
                "LOGIC_sreg",
                "MOVW",
                "BITFIELD",
                "CSEL",
                "DP1",
                "DP2",
                "DP3",
                "EXTR",
                "ADC",
            ):
                if i.name in ("ADRP", "ADR"):
                    return pcrel_value(i)
                if i.name == "ADDSUB_imm" and not f["S"] and not f["op"] and f["Rn"] == reg:
                    base = self._const_before(reg, i.addr, 16)
                    return None if base is None else (base + (f["imm12"] << (12 if f["sh"] else 0))) & M64
                return None
            if (
                reg in (f.get("Rt"), f.get("Rt2"))
                and i.form is not None
                and i.form.cls.startswith("ldst")
                and not f.get("V")
                and _loads(i)
            ):
                return None  # (a store of the register leaves it as it was)
            if i.name in ("BL", "BLR") and (reg < 19 or reg == 30):
                return None  # x0-x18 and x30 do not survive a call; x19-x28 do
            a -= 4
        return None

    def ifunc_slot(self, br: Insn) -> int | None:
        """The slot a PLT stub's ``ldr xN, [xM, #off]; ...; br xN`` jumps through (xM an
        adrp constant), else None."""
        n = br.f["Rn"]
        a = br.addr - 4
        for _ in range(4):
            i = self.insn(a)
            if i is None or i.name in _ENDS or branch_target(i) is not None or i.name in ("BL", "BLR"):
                return None
            f = i.f
            if i.name == "LDST_uimm" and not f["V"] and f["size"] == 3 and f["opc"] == 1 and f["Rt"] == n:
                base = self._const_before(f["Rn"], i.addr)
                return None if base is None else (base + f["imm12"] * 8) & M64
            if n in (f.get("Rd"), f.get("Rt"), f.get("Rt2")):
                return None
            a -= 4
        return None

    def ifunc_candidates(self, resolver: int, funcs: dict[int, FunctionPlan]) -> list[int] | None:
        """The functions an IFUNC resolver may answer: every code address its body builds
        with adrp+add or adr that is a function entry.  None unless the resolver is a plain
        leaf whose branches stay inside it (glibc's are: they read the CPU features and pick
        a constant), since a call, a load of a pointer or an indirect branch could hand
        back anything; the lifted stub checks the slot against the list at run time."""
        plan = funcs.get(resolver)
        if plan is None:
            return None
        addrs = {i.addr for i in plan.insns}
        out: set[int] = set()
        for i in plan.insns:
            f = i.f
            if i.name in ("BL", "BLR", "BR", "SVC") or i.form is None:
                return None
            t = branch_target(i)
            if t is not None and t not in addrs:
                return None
            if i.name == "RET" and self._loaded_x0(i.addr, addrs):
                return None  # answers a pointer read from memory: a table could hold anything
            v = None
            if i.name == "ADR":
                v = pcrel_value(i)
            elif i.name == "ADDSUB_imm" and not f["S"] and not f["op"] and f["Rd"] != 31:
                base = self._const_before(f["Rn"], i.addr, 16)
                if base is not None:
                    v = (base + (f["imm12"] << (12 if f["sh"] else 0))) & M64
            if v is not None and v in funcs:
                out.add(v)
        return sorted(out) or None

    def _loaded_x0(self, ret: int, addrs: set[int]) -> bool:
        """Whether X0 at the RET at ``ret`` may come from memory: walking back in address order,
        a load or store naming X0 comes before any instruction writing it as Rd (a store
        counts too: either way X0 is then no constant the resolver built)."""
        a = ret - 4
        while a in addrs:
            i = self.insn(a)
            f = i.f
            if 0 in (f.get("Rt"), f.get("Rt2")) and i.form is not None and i.form.cls.startswith("ldst") and not f.get("V"):
                return True
            if f.get("Rd") == 0:
                return False
            a -= 4
        return False

    def _spilled_const(self, off: int, addr: int, limit: int = 1024) -> int | None:
        """Value stored at [sp, #off] if the last `str xN, [sp, #off]` before ``addr`` stored
        an `adrp`(+`add`) constant; stops where the frame is set up (SP written)."""
        a = addr - 4
        for _ in range(limit):
            i = self.insn(a)
            if i is None:
                return None
            f = i.f
            if i.name in ("ADDSUB_imm", "ADDSUB_sreg", "ADDSUB_ereg") and f["Rd"] == 31 and not f["S"]:
                return None
            if (
                i.name == "LDST_uimm"
                and not f["V"]
                and f["opc"] == 0
                and f["size"] == 3
                and f["Rn"] == 31
                and f["imm12"] * 8 == off
            ):
                return self._const_before(f["Rt"], i.addr)
            a -= 4
        return None

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
                i.name == "ADDSUB_imm"
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
            and m.name == "LOGIC_imm"
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

    def _near(self, entry: int, x: int) -> bool:
        """``x`` lies after ``entry`` and before the next entry that is not weak: inside the
        same function's code, as the labels of its computed gotos are."""
        if self._strong is None:  # entries are final once the analysis lifts functions
            self._strong = sorted(self.entries - self.weak)
        k = bisect.bisect_right(self._strong, entry)
        return entry <= x and (k == len(self._strong) or self._strong[k] > x)

    def _next_bcond(self, a: int, end: int) -> Insn | None:
        """The first `b.cond` from ``a`` up to ``end`` if no instruction before it sets the
        flags or branches (compilers schedule other work between the `cmp` and its `b.hi`)."""
        while a < end:
            i = self.insn(a)
            if i is None or i.form is None:
                return None
            if i.name == "BCOND":
                return i
            sets = (i.name in ("ADDSUB_imm", "ADDSUB_sreg", "ADDSUB_ereg", "ADC") and i.f["S"]) or (
                i.name in ("LOGIC_imm", "LOGIC_sreg") and i.f["opc"] == 3
            )
            if sets or i.form.cls in ("condcmp", "fp_cmp", "branch", "branch_reg", "sysreg"):
                return None
            a += 4
        return None


def _returns_in_span(mem: Memory, funcs: dict[int, FunctionPlan]) -> set[int]:
    """The functions with a RET (or a ``br x30``) anywhere between their lowest instruction and
    the next function's entry: code their branches do not reach may still return (a landing pad
    the unwinder enters)."""
    starts = sorted(funcs)
    out: set[int] = set()
    for k, e in enumerate(starts):
        body = funcs[e].insns
        lo = min(body[0].addr, e)
        if k + 1 < len(starts):
            hi = max(body[-1].addr + 4, starts[k + 1])
        else:  # the last function: up to the end of its code segment
            hi = max([body[-1].addr + 4, *(va + len(d) for va, _m, d, x in mem.segments if x and va <= e < va + len(d))])
        data = mem.read(lo, hi - lo) if hi > lo else None
        if data is None:
            out.add(e)
            continue
        for (w,) in struct.iter_unpack("<I", data[: len(data) // 4 * 4]):
            if w & 0xFFFFFC1F == 0xD65F0000 or w in (0xD65F0BFF, 0xD65F0FFF, 0xD61F03C0):
                out.add(e)
                break
    return out


def noreturn_functions(funcs: dict[int, FunctionPlan], mem: Memory | None = None, inexact: set[int] = frozenset()) -> set[int]:
    """The functions that never return to their caller: no RET, no jump out through a register
    (a jump table's targets and an IFUNC stub's candidates count as tail calls), and every tail
    call (a branch out, the fall into the next function) goes to such a function.  What runs
    after a call of one is never reached by that call (a non-local exit lands elsewhere: at a
    setjmp's return, a landing pad): the lifter ends such a call with a fatal error instead of
    falling into the code after it, so neither liveness nor clang sees a path from the call on.
    ``inexact``: BRs whose table rests on a guess (``analysis.tables.Recovered.exact``), which
    may go elsewhere.  Least fixed point: mutual tail recursion with no other way out is left out; so is a
    function with a RET anywhere in its span of the image (``_returns_in_span``)."""
    tails: dict[int, set[int]] = {}
    returning = _returns_in_span(mem, funcs) if mem is not None else set()
    for e, plan in funcs.items():
        if e in returning:
            continue
        addrs = {i.addr for i in plan.insns}
        out: set[int] | None = set()
        for i in plan.insns:
            n = i.name
            if n == "RET" or (
                n == "BR" and (i.addr not in plan.jump_tables or i.addr in inexact) and i.addr not in plan.ifunc_targets
            ):
                out = None
                break
            targets = [*plan.jump_tables.get(i.addr, ()), *plan.ifunc_targets.get(i.addr, ())]
            t = branch_target(i) if n != "BL" else None
            if t is not None:
                targets.append(t)
            falls = i.form is not None and n not in _ENDS and not (n == "BCOND" and i.f["cond"] >> 1 == 7)
            if falls and i.addr + 4 not in addrs and n not in ("BL", "BLR"):
                targets.append(i.addr + 4)  # the fall into the next function
            out |= {x for x in targets if x not in addrs}
        if out is not None:
            tails[e] = out
    noret: set[int] = set()
    changed = True
    while changed:
        changed = False
        for e, out in tails.items():
            if e not in noret and all(x == e or x in noret for x in out):
                noret.add(e)
                changed = True
    return noret


def _falls_through(i: Insn | None) -> bool:
    """``i`` is code that runs on into the next instruction: not a branch, call, return, trap,
    system call (``exit``'s ends a function) or hint (``nop`` pads between functions)."""
    if i is None or i.form is None or i.name in _ENDS or i.name in ("BL", "BLR", "HINT"):
        return False
    return i.form.cls != "exception" and not (i.name == "BCOND" and i.f["cond"] >> 1 == 7)


def _merge_fallen_into(an: Analyser, funcs: dict[int, FunctionPlan]) -> None:
    """Drop the weak entries (a data word's or an ``adrp``+``add``'s target, which no call or
    unwind table names) that another function's code falls into: the instruction before one is
    in that function's body and runs on into it, which no compiler does at a function's
    start.  Such a word is something else that looks like a code address: zsh's rodata holds
    the string "LFD", read as a word 0x44464c, the address of the ``b.eq`` after a ``cmp`` in its
    lexer, which then fell into a function of its own at every token.  The functions that fell
    or branched into one are walked again, through it."""
    covered = {i.addr for p in funcs.values() for i in p.insns}
    fallen = {x for x in funcs if x in an.weak and x - 4 in covered and _falls_through(an.insn(x - 4))}
    if not fallen:
        return
    for x in fallen:
        an.entries.discard(x)
        an.weak.discard(x)
        an.source.pop(x, None)
        del funcs[x]
    an._strong = None
    touched = {e for e, p in funcs.items() if any(i.addr + 4 in fallen or branch_target(i) in fallen for i in p.insns)}
    for e in touched:
        plan = an.function(e)
        if plan.insns:
            funcs[e] = plan


def analyse(
    mem: Memory,
    entry: int,
    hints: set[int],
    eh_frames: list[tuple[int, bytes]],
    ifunc_slots: dict[int, int] | None = None,
    noreturn: bool = True,
) -> Program:
    """``ifunc_slots``: IFUNC slot -> resolver (``LinkedImage.ifunc_slots``), for PLT stubs;
    ``noreturn``: mark the calls of functions that never return (``recompiler.noreturn_calls``)."""
    an = Analyser(mem, set())
    an.source[entry] = "entry"
    seeds = {entry} | set(hints)
    for h in hints:
        an.source.setdefault(h, "hint")
    for addr, data in eh_frames:
        for e in eh_frame_starts(addr, data):
            seeds.add(e)
            an.source.setdefault(e, "eh_frame")
    an.entries = {e for e in seeds if e % 4 == 0 and mem.is_code(e)}
    an.sweep_calls()
    funcs: dict[int, FunctionPlan] = {}
    unresolved: list[int] = []
    for e in sorted(an.entries):
        plan = an.function(e)
        if not plan.insns:
            continue
        funcs[e] = plan
    # function pointers the code builds at any distance (analysis.pointers): new weak entries,
    # then the bodies they fall in are recomputed (they stop there) and the new ones lifted
    which = sorted(funcs)
    for _round in range(POINTER_ROUNDS):
        new = pointers.scan(an, funcs, which)
        if not new:
            break
        for v, src in new.items():
            an.entries.add(v)
            an.weak.add(v)
            an.source.setdefault(v, src)
        an._strong = None
        touched = {e for e, plan in funcs.items() if any(i.addr in new for i in plan.insns[1:])}
        which = sorted(touched | set(new))
        for e in which:
            plan = an.function(e)
            if plan.insns:
                funcs[e] = plan
            else:
                funcs.pop(e, None)
        which = [e for e in which if e in funcs]
    _merge_fallen_into(an, funcs)
    for plan in funcs.values():
        for i in plan.insns:
            if i.name == "BR" and i.addr not in plan.jump_tables:
                resolver = ifunc_slots.get(an.ifunc_slot(i)) if ifunc_slots else None
                cands = an.ifunc_candidates(resolver, funcs) if resolver is not None else None
                if cands:
                    plan.ifunc_targets[i.addr] = cands
                else:
                    unresolved.append(i.addr)
    noret = noreturn_functions(funcs, mem, an.inexact) if noreturn else set()
    for plan in funcs.values():
        plan.noreturn_calls = {i.addr for i in plan.insns if i.name == "BL" and branch_target(i) in noret}
    program = Program(funcs, entry, sorted(set(unresolved)))
    program.stats = stats.collect(funcs, an.source, an.table_kinds, program.unresolved_br)
    return program
