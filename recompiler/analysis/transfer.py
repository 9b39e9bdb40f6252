"""What one A64 instruction does to the value analysis's state (``recompiler.analysis.values``).

The state holds a symbolic value (``recompiler.analysis.expr``) for X0-X30 and SP (index 31),
for each stack slot (keyed by its offset from the stack pointer at the function's entry: a slot
addressed from SP or from X29 after ``mov x29, sp`` is the same slot), the last compare
(``cmp Xn, #imm`` as ``(value, imm)``) and the bounds learned on the path (value -> largest
unsigned value it may have).  The rule that keeps it sound: every general register an
instruction may write gets a new value, the exact one for the forms modelled below (address
arithmetic, moves, masks and extends, loads) and an opaque ``("def", addr, reg)`` otherwise;
a call (``BL``/``BLR``) and an ``SVC`` leave X0-X18 and X30 opaque (AAPCS64: X19-X28 and SP
survive a call).  Stack slots survive calls and stores through other pointers (the program's
own spills and reloads are what is tracked): a constant read back from a slot is a ``cslot``,
which a jump that skips the guest's own computation must not trust.  A slot below the entry
SP that the state does not hold is one no instruction on the path wrote (a store the state
cannot keep the value of leaves the slot marked ``TOP``): the join then takes the values of
the paths that wrote it, as a merge that something else reaches too (never exact).

Encodings: the Arm Architecture Reference Manual's A64 index (fields as in ``recompiler/isa.py``).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from recompiler.analysis import expr as E
from recompiler.decode import Insn
from recompiler.lift.edges import ENDS, branch_target, successors  # noqa: F401 (ENDS, successors: re-exported)
from recompiler.lift.integer import decode_bit_masks, ones, pcrel_value, sext

SP = 31
CALL_CLOBBERS = tuple(range(19)) + (30,)
# forms outside the integer groups that write a general register (conversions, UMOV/SMOV)
_FP_TO_GPR = {"FP_INT", "FP_INT_H", "FJCVTZS", "FP_FIX_CONV", "SIMD_copy", "MRS"}
_FLAG_SETTERS = {"CCMP_reg", "CCMP_imm", "FP_CMP", "FP_CCMP", "FP_CMP_H", "FP_CCMP_H", "MSR_reg", "MSR_imm"}


@dataclass
class State:
    regs: list
    slots: dict = field(default_factory=dict)  # offset -> (size, value)
    flags: tuple | None = None  # (compared value, immediate) of the last cmp
    bounds: dict = field(default_factory=dict)  # stripped value -> inclusive unsigned bound

    @staticmethod
    def entry() -> "State":
        return State([("in", r) for r in range(32)])

    def copy(self) -> "State":
        return State(list(self.regs), dict(self.slots), self.flags, dict(self.bounds))

    def __eq__(self, o: object) -> bool:
        return (
            isinstance(o, State)
            and self.regs == o.regs
            and self.slots == o.slots
            and self.flags == o.flags
            and self.bounds == o.bounds
        )


def slot_of(addr: tuple) -> int | None:
    """The entry-SP offset ``addr`` names, if it is one."""
    if addr == ("in", SP):
        return 0
    if addr[0] == "add" and addr[1] == ("in", SP) and addr[2][0] == "const":
        return sext(addr[2][1], 64)
    return None


class Transfer:
    """Applies instructions to a ``State``; ``mem`` is the image (``analyse.Memory``)."""

    def __init__(self, mem) -> None:
        self.mem = mem

    # ---- helpers ----------------------------------------------------------------------
    def _r(self, st: State, n: int, sf: int = 1, sp: bool = False) -> tuple:
        """Register ``n`` as an operand (31: SP if ``sp`` else XZR), W-view if not ``sf``."""
        if n == 31 and not sp:
            return E.const(0)
        v = st.regs[n]
        return v if sf else E.w32(v)

    @staticmethod
    def _set(st: State, n: int, v: tuple, sf: int = 1, sp: bool = False) -> None:
        if n == 31 and not sp:
            return
        st.regs[n] = E.w32(v) if not sf else v

    @staticmethod
    def _def(st: State, i: Insn, n: int) -> None:
        if n is not None and n != 31:
            st.regs[n] = ("def", i.addr, n)

    def read_const(self, addr: int, size: int) -> int | None:
        """A value of memory the program cannot write, else None."""
        if not self.mem.is_read_only(addr, size):
            return None
        b = self.mem.read(addr, size)
        return None if b is None else int.from_bytes(b, "little")

    def _load(self, st: State, i: Insn, addr: tuple, size: int, signed: bool) -> tuple:
        off = slot_of(addr)
        if off is not None:
            s = st.slots.get(off)
            if s is not None and 8 >= s[0] >= size and s[1] != E.TOP:
                v = s[1] if s[0] == size else E.ext((0, 1, 2)[size.bit_length() - 1], s[1])
                if signed and size < 8:
                    v = E.ext(4 + size.bit_length() - 1, v)
                c = E.cval(v)
                return E.const(c, "cslot") if c is not None else v
            return ("def", i.addr, "slot")
        a = E.cval(addr)
        if a is not None and addr[0] == "const":
            v = self.read_const(a, size)
            if v is not None:
                return E.ext(4 + size.bit_length() - 1, E.const(v)) if signed and size < 8 else E.const(v)
        return E.load(size, signed, addr)

    @staticmethod
    def _store(st: State, addr: tuple, size: int, v: tuple) -> None:
        off = slot_of(addr)
        if off is None:
            return
        # a slot the store overlaps keeps a mark (TOP: written, value not known), never vanishes:
        # a missing slot is one no path wrote (``values.FunctionValues``' join)
        for k in [k for k, (n, _v) in st.slots.items() if k < off + size and off < k + n]:
            st.slots[k] = (st.slots[k][0], E.TOP)
        if size in (1, 2, 4, 8) and v != E.TOP:
            st.slots[off] = (size, E.ext((0, 1, 2, 3)[size.bit_length() - 1], v))
        else:
            st.slots[off] = (size, E.TOP)

    # ---- one instruction --------------------------------------------------------------
    def step(self, st: State, i: Insn) -> None:
        n = i.name
        f = i.f
        h = getattr(self, "_" + i.group, None)  # by isa.py group: one method for MOVN/MOVZ/MOVK...
        if h is not None:
            h(st, i, f)
            return
        if n in ("BL", "BLR", "SVC"):
            for r in CALL_CLOBBERS:
                st.regs[r] = ("def", i.addr, r)
            st.flags = None
            return
        if i.group in _FLAG_SETTERS:  # by isa.py group: FCMP/FCMPE/FCCMP... set NZCV
            st.flags = None
        if i.group in _FP_TO_GPR:  # by isa.py group, as the forms split from FP_INT/FP_FIX_CONV
            self._def(st, i, f.get("Rd", f.get("Rt")))
            return
        cls = i.form.cls if i.form else ""
        if cls.startswith(("fp", "simd", "crypto")) or cls in (
            "system",
            "exception",
            "branch",
            "branch_reg",
            "condcmp",
            "sysreg",
        ):
            return
        # any other integer form: what it writes is not modelled
        if f.get("S"):
            st.flags = None
        for key in ("Rd", "Rt", "Rt2", "Rs"):
            if key in f and not (key in ("Rt", "Rt2") and cls.startswith("ldst") and not self._loads(i)):
                self._def(st, i, f[key])

    @staticmethod
    def _loads(i: Insn) -> bool:
        f = i.f
        if "L" in f:
            return bool(f["L"])
        return i.group in ("LDR_lit", "LDST_atomic") or f.get("opc", 1) != 0

    # ---- data processing --------------------------------------------------------------
    def _ADR(self, st, i, f):
        st.regs[f["Rd"]] = E.const(pcrel_value(i)) if f["Rd"] != 31 else st.regs[31]

    _ADRP = _ADR

    def _ADDSUB_imm(self, st, i, f):
        sf = f["sf"]
        a = self._r(st, f["Rn"], sf, sp=True)
        imm = f["imm12"] << (12 if f["sh"] else 0)
        v = E.add(a, E.const(-imm if f["op"] else imm))
        if f["S"]:
            st.flags = (a, imm) if f["op"] else None
            self._set(st, f["Rd"], v, sf)
        else:
            self._set(st, f["Rd"], v, sf, sp=True)

    def _ADDSUB_sreg(self, st, i, f):
        sf = f["sf"]
        a, b = self._r(st, f["Rn"], sf), self._r(st, f["Rm"], sf)
        b = E.shl(b, f["imm6"]) if f["shift"] == 0 else ("def", i.addr, "sh")  # (LSR/ASR: not modelled)
        v = self._addsub(i, a, b, f["op"], f["Rd"])
        if f["S"]:
            st.flags = (a, E.cval(b)) if f["op"] and b[0] == "const" else None
        self._set(st, f["Rd"], v, sf)

    def _ADDSUB_ereg(self, st, i, f):
        sf = f["sf"]
        a = self._r(st, f["Rn"], sf, sp=True)
        b = E.shl(E.ext(f["option"], self._r(st, f["Rm"], 1)), f["imm3"])
        v = self._addsub(i, a, b, f["op"], f["Rd"])
        if f["S"]:
            st.flags = None
            self._set(st, f["Rd"], v, sf)
        else:
            self._set(st, f["Rd"], v, sf, sp=True)

    @staticmethod
    def _addsub(i: Insn, a: tuple, b: tuple, op: int, rd: int) -> tuple:
        if not op:
            v = E.add(a, b)
        elif E.cval(b) is not None:
            v = E.add(a, E.const(-E.cval(b), b[0]))
        else:
            v = E.TOP
        return v if v != E.TOP else ("def", i.addr, rd)

    def _LOGIC_imm(self, st, i, f):
        sf, opc = f["sf"], f["opc"]
        try:
            imm = decode_bit_masks(f["N"], f["imms"], f["immr"], 64 if sf else 32)
        except Exception:  # a reserved immediate: the lifter reports it
            self._def(st, i, f["Rd"])
            return
        a = self._r(st, f["Rn"], sf)
        c = E.cval(a)
        if opc in (0, 3):
            v = E.mask(a, imm)
        elif c is not None:
            v = E.const(c | imm if opc == 1 else c ^ imm, a[0])
        else:
            v = E.TOP
        if v == E.TOP:
            v = ("def", i.addr, f["Rd"])
        if opc == 3:
            st.flags = None
            self._set(st, f["Rd"], v, sf)
        else:
            self._set(st, f["Rd"], v, sf, sp=True)

    def _LOGIC_sreg(self, st, i, f):
        sf, opc = f["sf"], f["opc"]
        a, b = self._r(st, f["Rn"], sf), self._r(st, f["Rm"], sf)
        if opc == 3:
            st.flags = None
        if opc == 1 and not f["N"] and f["Rn"] == 31 and f["imm6"] == 0:
            self._set(st, f["Rd"], b, sf)  # mov
            return
        x, y = E.cval(a), E.cval(b)
        if x is not None and y is not None and f["shift"] == 0:
            y = (y << f["imm6"]) & (ones(64) if sf else ones(32))
            if f["N"]:
                y = ~y & (ones(64) if sf else ones(32))
            v = E.const((x & y, x | y, x ^ y, x & y)[opc])
        else:
            v = ("def", i.addr, f["Rd"])
        self._set(st, f["Rd"], v, sf)

    def _MOVW(self, st, i, f):
        sf, opc = f["sf"], f["opc"]
        imm = f["imm16"] << (16 * f["hw"])
        if opc == 0:
            v = E.const(~imm)
        elif opc == 2:
            v = E.const(imm)
        elif opc == 3 and E.cval(st.regs[f["Rd"]] if f["Rd"] != 31 else E.const(0)) is not None:
            old = E.cval(st.regs[f["Rd"]]) if f["Rd"] != 31 else 0
            v = E.const((old & ~(0xFFFF << (16 * f["hw"]))) | imm)
        else:
            v = ("def", i.addr, f["Rd"])
        self._set(st, f["Rd"], v, sf)

    def _BITFIELD(self, st, i, f):
        sf, opc, r, s = f["sf"], f["opc"], f["immr"], f["imms"]
        size = 64 if sf else 32
        a = self._r(st, f["Rn"], sf)
        v = None
        if opc == 2:  # UBFM: lsr, ubfx, uxtb/uxth, lsl, ubfiz
            v = E.mask(E.lsr(a, r), ones(s - r + 1)) if s >= r else E.shl(E.mask(a, ones(s + 1)), size - r)
        elif opc == 0 and r == 0 and s in (7, 15, 31):  # sxtb, sxth, sxtw
            v = E.ext(4 + (7, 15, 31).index(s), a)
        if v is None or v == E.TOP:
            v = ("def", i.addr, f["Rd"])
        self._set(st, f["Rd"], v, sf)

    def _CSEL(self, st, i, f):
        sf = f["sf"]
        a, b = self._r(st, f["Rn"], sf), self._r(st, f["Rm"], sf)
        if not f["op"] and not f["o2"] and a == b:
            self._set(st, f["Rd"], a, sf)
            return
        v = ("def", i.addr, f["Rd"])
        bound = self._csel_bound(st, f, a, b)
        self._set(st, f["Rd"], v, sf)
        if bound is not None and f["Rd"] != 31:
            st.bounds[E.strip(st.regs[f["Rd"]])] = bound

    @staticmethod
    def _csel_bound(st: State, f: dict, a: tuple, b: tuple) -> int | None:
        """``cmp x, #n; csel d, x, c, ls`` (or the inverse condition with the operands swapped)
        leaves d at most max(n, c): a clamped index."""
        if st.flags is None or f["op"] or f["o2"]:
            return None
        x, n = st.flags
        t, fl = cond_bounds(f["cond"], n)
        if t is not None and E.strip(a) == E.strip(x) and E.cval(b) is not None:
            return max(t, E.cval(b))
        if fl is not None and E.strip(b) == E.strip(x) and E.cval(a) is not None:
            return max(fl, E.cval(a))
        return None

    # ---- loads and stores ---------------------------------------------------------------
    def _LDR_lit(self, st, i, f):
        if f["V"] or f["opc"] == 3:
            return
        addr = (i.addr + sext(f["imm19"], 19) * 4) & E.M64
        size, signed = ((4, False), (8, False), (4, True))[f["opc"]]
        self._set(st, f["Rt"], self._load(st, i, E.const(addr), size, signed))

    def _ldst(self, st: State, i: Insn, f: dict, addr: tuple, wb: tuple | None) -> None:
        """A single-register load or store at ``addr``; ``wb``: the base's new value."""
        size = 1 << f["size"]
        if f["V"]:
            if not f["opc"] & 1 and slot_of(addr) is not None:  # a vector spill: the slot is written
                self._store(st, addr, 16 if f["opc"] & 2 else size, E.TOP)
            if wb is not None:
                self._set(st, f["Rn"], wb, sp=True)
            return
        opc = f["opc"]
        if opc == 0:
            self._store(st, addr, size, self._r(st, f["Rt"]))
        elif not (opc == 2 and f["size"] == 3):  # (PRFM writes nothing)
            v = self._load(st, i, addr, size, opc >= 2)
            self._set(st, f["Rt"], v, 0 if opc == 3 else 1)
        if wb is not None:
            self._set(st, f["Rn"], wb, sp=True)

    def _LDST_uimm(self, st, i, f):
        scale = f["size"] if not f["V"] else (4 if f["opc"] >= 2 else f["size"])
        self._ldst(st, i, f, E.add(self._r(st, f["Rn"], sp=True), E.const(f["imm12"] << scale)), None)

    def _LDST_imm9(self, st, i, f):
        base = self._r(st, f["Rn"], sp=True)
        moved = E.add(base, E.const(sext(f["imm9"], 9)))
        idx = f["idx"]
        self._ldst(st, i, f, base if idx == 1 else moved, moved if idx in (1, 3) else None)

    def _LDST_regoff(self, st, i, f):
        scale = f["size"] if not f["V"] else (4 if f["opc"] >= 2 else f["size"])
        off = E.shl(E.ext(f["option"], self._r(st, f["Rm"])), scale if f["S"] else 0)
        self._ldst(st, i, f, E.add(self._r(st, f["Rn"], sp=True), off), None)

    def _LDST_rcpc2(self, st, i, f):
        self._ldst(st, i, {**f, "V": 0}, E.add(self._r(st, f["Rn"], sp=True), E.const(sext(f["imm9"], 9))), None)

    def _LDST_pair(self, st, i, f):
        opc, idx = f["opc"], f["idx"]
        scale = 2 + (opc if f["V"] else opc >> 1)
        base = self._r(st, f["Rn"], sp=True)
        moved = E.add(base, E.const(sext(f["imm7"], 7) << scale))
        addr = base if idx == 1 else moved
        size = 1 << scale
        if not f["V"]:
            for k, rt in enumerate((f["Rt"], f["Rt2"])):
                at = E.add(addr, E.const(k * size))
                if f["L"]:
                    self._set(st, rt, self._load(st, i, at, size, opc == 1), 1 if size == 8 or opc == 1 else 0)
                else:
                    self._store(st, at, size, self._r(st, rt))
        elif not f["L"] and slot_of(addr) is not None:
            for k in range(2):  # a vector spill over tracked slots: forget them
                self._store(st, E.add(addr, E.const(k * size)), size, E.TOP)
        if idx in (1, 3):
            self._set(st, f["Rn"], moved, sp=True)

    def _LDST_multi_post(self, st, i, f):
        st.regs[f["Rn"]] = ("def", i.addr, f["Rn"])  # the base moves (Rn 31 is SP here)

    _LDST_single_post = _LDST_multi_post


def cond_bounds(cond: int, n: int) -> tuple[int | None, int | None]:
    """After ``cmp x, #n``: the bound on x (unsigned, inclusive) where ``b.cond`` is taken, and
    where it is not (None: no bound).  HI/LS/HS/LO are the unsigned conditions."""
    if cond == 8:  # HI: x > n
        return None, n
    if cond == 9:  # LS: x <= n
        return n, None
    if cond == 2:  # HS: x >= n
        return None, (n - 1 if n > 0 else None)
    if cond == 3:  # LO: x < n
        return (n - 1 if n > 0 else None), None
    if cond == 0 and n >= 0:  # EQ: x == n
        return n, None
    return None, None


def edge_feasible(st: State, i: Insn, taken: bool) -> bool:
    """Whether a path may take this edge of a conditional branch (``taken`` or the
    fall-through): False only where the edge implies a bound (``cond_bounds``: ``cmp x, #n``
    with an unsigned or equality condition) that the compared value, a known constant,
    violates: ``cmp w4, #13; b.hi`` with ``w4 = -1`` never falls into the switch's table read
    (whose address would lie outside the image).  Nothing else is decided: a constant of a
    body whose edges are not all known yet (tables found in later rounds, a label function's
    callers) may be the only value seen so far, and pruning every edge it decides hid code
    whose tables would have brought the other values (busybox's vfprintf, flags reset to 0
    before its step table's ``br``).  Constants read back from a stack slot (``cslot``) decide
    nothing: a store through an escaped pointer may have changed the slot."""
    if i.group != "BCOND" or st.flags is None or st.flags[1] is None or st.flags[0][0] != "const":
        return True
    b = cond_bounds(i.f["cond"], st.flags[1])[0 if taken else 1]
    return b is None or st.flags[0][1] <= b


def edge_refine(st: State, i: Insn, taken: bool) -> None:
    """The bound a conditional branch's edge implies (``taken`` or the fall-through)."""
    if i.group == "BCOND" and st.flags is not None and st.flags[1] is not None:
        x, n = st.flags
        b = cond_bounds(i.f["cond"], n)[0 if taken else 1]
        if b is not None and E.TOP not in E.leaves(x):
            k = E.strip(x)
            st.bounds[k] = min(b, st.bounds.get(k, b))
    elif i.group == "CBZ" and taken != bool(i.f["op"]):
        v = E.strip(st.regs[i.f["Rt"]] if i.f["Rt"] != 31 else E.const(0))
        if E.cval(v) is None and E.TOP not in E.leaves(v):
            st.bounds[v] = 0
