"""Each form's declared effects (recompiler/lift/effects/) against Unicorn 2.1.4.

For a random encoding of a form (drawn as the lifter's differential test draws them,
``unicorn_harness.draw``) and random registers, flags and scratch memory, Unicorn single-steps
the word once as it is and twice more with every register the declaration says is NOT read
(and NZCV where it says they are not read) set to other random values.  Then:

- every register (X0-X30, SP, V0-V31) and NZCV that the first run changed is declared written;
- in the perturbed runs every register not perturbed, PC and the memory end as in the first
  run (the result depends only on the declared reads);
- a perturbed register ends either as it was given (not written) or as in the first run
  (written, whatever it held); one declared killed ends as in the first run; NZCV declared set
  end as in the first run;
- memory is written only where a store is declared, read (Unicorn's data-read hook) only where
  a load is.

The same perturbation runs the lifted C of the one-instruction function (``check_lifted``):
its output may depend only on the declared reads too.  That is what makes a declared kill safe
for liveness (a register the C reads although the declaration says it is overwritten would be
left stale after a call, its reload dropped), and a register the C writes undeclared shows.

A register declared read but that did not matter is not an error (a declaration may be on the
safe side).
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

from unicorn import UC_ARCH_ARM64, UC_ERR_FETCH_UNMAPPED, UC_HOOK_MEM_READ, UC_HOOK_MEM_WRITE, UC_MODE_ARM, Uc, UcError
from unicorn import arm64_const as A

import unicorn_harness as H
from recompiler.decode import Insn, disasm
from recompiler.isa import FORMS
from recompiler.lift import liveness as L
from recompiler.lift.effects import Effects, declare
from recompiler.lift.result import Mem

# forms whose effects are the emitter's exits, not the form's own (every register: SVC, BRK,
# UDF), or privileged PSTATE writes Unicorn runs at EL1 (MSR_imm; the harness skips it too)
# SYSL: lifted as a fatal trap (no SYSL operation at EL0); BC_cond: Unicorn 2.1.4 has no FEAT_HBC
# (B_cond's declaration is BC_cond's: effects/__init__.py)
SKIPPED = {"SVC", "BRK", "UDF", "MSR_imm", "SYSL", "BC_cond"}
NREG = 64  # X0-X30, SP, V0-V31 as liveness bits


def _get(st: H.State, b: int) -> int:
    if b < 31:
        return st.x[b]
    if b == L.SP_BIT:
        return st.sp
    return st.v[b - 32]


def _set(st: H.State, b: int, val: int) -> None:
    if b < 31:
        st.x[b] = val
    elif b == L.SP_BIT:
        st.sp = val
    else:
        st.v[b - 32] = val


def _copy(st: H.State) -> H.State:
    return H.State(list(st.x), st.sp, st.pc, st.nzcv, list(st.v), st.fpcr, st.fpsr, st.tpidr, st.tpidrro)


def _name(b: int) -> str:
    return f"x{b}" if b < 31 else "sp" if b == L.SP_BIT else f"v{b - 32}"


@dataclass
class Stats:
    cases: int = 0
    perturbed: int = 0  # perturbed runs compared
    failures: list[str] = field(default_factory=list)


class Oracle:
    """A Unicorn CPU on the harness's scratch area (its background written once) with hooks on
    data reads and writes: after each step only the bytes written are read back and restored."""

    def __init__(self, base: int, bg: bytes, model: int) -> None:
        self.base, self.bg = base, bg
        self.uc = Uc(UC_ARCH_ARM64, UC_MODE_ARM)
        self.uc.ctl_set_cpu_model(model)
        self.uc.mem_map(base, H.SCRATCH_SIZE)
        self.uc.mem_write(base, bg)
        self.reads: list[int] = []
        self.written: list[tuple[int, int]] = []
        self.uc.hook_add(UC_HOOK_MEM_READ, lambda uc, acc, addr, size, val, ud: self.reads.append(addr))
        self.uc.hook_add(UC_HOOK_MEM_WRITE, lambda uc, acc, addr, size, val, ud: self.written.append((addr, size)))

    def _restore(self, addr: int, size: int) -> None:
        off = addr - self.base
        if 0 <= off and off + size <= H.SCRATCH_SIZE:
            self.uc.mem_write(addr, self.bg[off : off + size])

    def run(self, insn: Insn, st: H.State) -> tuple[H.State, tuple] | None:
        """The state after one step of ``insn`` from ``st`` and the bytes it wrote ((address,
        bytes) pairs, in order), or None if Unicorn raised an exception."""
        uc = self.uc
        if insn.group == "LDSTX":  # no reservation left by an earlier run
            uc.mem_write(insn.addr, (0xD503305F).to_bytes(4, "little"))  # CLREX
            uc.ctl_remove_cache(insn.addr, insn.addr + 4)
            uc.emu_start(insn.addr, insn.addr + 4, count=1)
        uc.mem_write(insn.addr, insn.word.to_bytes(4, "little"))
        uc.ctl_remove_cache(insn.addr, insn.addr + 4)
        for r, val in zip(H._X_REGS, st.x):
            uc.reg_write(r, val)
        for r, val in zip(H._Q_REGS, st.v):
            uc.reg_write(r, val)
        for r, val in ((A.UC_ARM64_REG_SP, st.sp), (A.UC_ARM64_REG_NZCV, st.nzcv), (A.UC_ARM64_REG_FPCR, st.fpcr)):
            uc.reg_write(r, val)
        for r, val in ((A.UC_ARM64_REG_FPSR, st.fpsr), (A.UC_ARM64_REG_TPIDR_EL0, st.tpidr)):
            uc.reg_write(r, val)
        uc.reg_write(A.UC_ARM64_REG_TPIDRRO_EL0, st.tpidrro)
        self.reads, self.written = [], []
        ok = True
        try:
            uc.emu_start(insn.addr, 1, count=1)
        except UcError as e:
            # a branch out of the mapped area completes, then the fetch of its target fails
            ok = e.errno == UC_ERR_FETCH_UNMAPPED and uc.reg_read(A.UC_ARM64_REG_PC) != insn.addr
        inside = [(a, n) for a, n in self.written if self.base <= a and a + n <= self.base + H.SCRATCH_SIZE]
        mem = tuple((a, bytes(uc.mem_read(a, n))) for a, n in inside)
        for a, n in inside:
            self._restore(a, n)
        self._restore(insn.addr, 4)
        if not ok or len(inside) != len(self.written):  # (a write outside faults)
            return None
        out = H.State(
            x=[uc.reg_read(r) for r in H._X_REGS],
            sp=uc.reg_read(A.UC_ARM64_REG_SP),
            pc=uc.reg_read(A.UC_ARM64_REG_PC),
            nzcv=uc.reg_read(A.UC_ARM64_REG_NZCV),
            v=[uc.reg_read(r) for r in H._Q_REGS],
        )
        return out, mem


def _compare(e: Effects, out: H.State, mem, p: H.State, bits: int, o2: H.State, mem2) -> list[str]:
    """What differs between the run of the input (``out``, ``mem``) and the run of its
    perturbation ``p`` (``bits``: the registers changed) beyond what ``e`` allows."""
    bad = []
    for b in range(NREG):
        got, want = _get(o2, b), _get(out, b)
        if not bits >> b & 1:
            if got != want:
                bad.append(f"{_name(b)} depends on an undeclared read ({want:#x} -> {got:#x})")
        elif e.kills >> b & 1 and got != want:
            bad.append(f"{_name(b)} declared killed, but its result depends on what it held")
        elif got not in (want, _get(p, b)):
            bad.append(f"{_name(b)} depends on an undeclared read")
    if o2.pc != out.pc:
        bad.append(f"pc depends on an undeclared read ({out.pc:#x} -> {o2.pc:#x})")
    if e.flags_set or e.flags_read:
        if o2.nzcv != out.nzcv:
            bad.append("NZCV depend on an undeclared read")
    elif o2.nzcv not in (out.nzcv, p.nzcv):
        bad.append("NZCV depend on an undeclared read")
    if mem2 != mem:
        bad.append("memory depends on an undeclared read")
    return bad


def _changed(e: Effects, inp: H.State, out: H.State) -> list[str]:
    """The registers and flags that changed from ``inp`` to ``out`` but ``e`` does not write."""
    bad = [
        f"{_name(b)} changed but is not declared written"
        for b in range(NREG)
        if _get(out, b) != _get(inp, b) and not e.writes >> b & 1
    ]
    if out.nzcv != inp.nzcv and not e.flags_set:
        bad.append("NZCV changed but are not declared set")
    return bad


def _perturb(st: H.State, e: Effects, rng: random.Random, base: int) -> tuple[H.State, int]:
    """``st`` with every register outside ``e.reads`` (and NZCV unless read) changed."""
    p = _copy(st)
    bits = 0
    for b in range(NREG):
        if e.reads >> b & 1:
            continue
        old = _get(st, b)
        new = old
        while new == old:
            if b < 32:
                new = H.rand_x(rng) if b != L.SP_BIT else H.scratch_ptr(rng, base, 16)
            else:
                new = rng.getrandbits(128)
        _set(p, b, new)
        bits |= 1 << b
    if not e.flags_read:
        p.nzcv = (st.nzcv ^ (rng.randrange(1, 16) << 28)) & 0xF0000000
    return p, bits


def check_case(oracle: Oracle, insn: Insn, inp: H.State, rng: random.Random, base: int, stats: Stats, runs: int = 2) -> None:
    e = declare(insn)
    res = oracle.run(insn, inp)
    if res is None:
        return  # Unicorn takes an exception on this word or these operands: nothing to compare
    out, mem = res
    loaded = bool(oracle.reads)
    stats.cases += 1
    where = f"{insn.name} {insn.word:#010x} '{disasm(insn.word, insn.addr)}'"
    bad = _changed(e, inp, out)
    if mem and Mem.STORE not in e.memory:
        bad.append("memory written but no store declared")
    if loaded and Mem.LOAD not in e.memory:
        bad.append("memory read but no load declared")
    for _ in range(runs):
        p, bits = _perturb(inp, e, rng, base)
        r2 = oracle.run(insn, p)
        stats.perturbed += 1
        if r2 is None:
            bad.append("an undeclared register's value made Unicorn take an exception")
            break
        o2, mem2 = r2
        bad += _compare(e, out, mem, p, bits, o2, mem2)
        if bad:
            break
    if bad:
        stats.failures.append(f"{where}: {'; '.join(sorted(set(bad)))}")


_ORACLES: dict[tuple[int, int], Oracle] = {}


def check_form(name: str, n: int, seed: int) -> Stats:
    """``n`` random encodings of form ``name`` (fewer where its words rarely decode to it)."""
    form = next(f for f in FORMS if f.name == name)
    rng = random.Random(f"effects:{name}:{seed}")
    model = A.UC_CPU_ARM64_A57 if form.cls in H.A57_CLASSES else A.UC_CPU_ARM64_MAX
    if (seed, model) not in _ORACLES:  # one per seed and CPU model: mapping 1 MiB costs
        base = H.pick_base()
        _ORACLES[(seed, model)] = Oracle(base, H.background(seed), model)
    oracle = _ORACLES[(seed, model)]
    base = oracle.base
    stats = Stats()
    tries = 0
    while stats.cases < n and tries < n * 40:
        tries += 1
        insn = H.decode(form.encode(**H.sample_fields(form, rng)), base + H.CODE_OFF)
        if insn.form is not form:
            continue
        code, _errors = H.lift_one(insn)
        if "nx_unimplemented" in code:  # a fatal trap: its effects are the trap's
            continue
        check_case(oracle, insn, H.make_input(form, insn, rng, base), rng, base, stats)
    return stats


def forms() -> list[str]:
    return [f.name for f in FORMS if f.name not in SKIPPED and not f.unlifted]


def check_lifted(cls: str, n: int, seed: int, work) -> Stats:
    """The lifted C of ``n`` cases of instruction class ``cls`` (the harness's cases: Unicorn
    runs them, so the words and operands are valid), each run on its input and on a
    perturbation of the registers its declaration does not read."""
    base = H.pick_base()
    bg = H.background(seed)
    rng = random.Random(f"effects-lifted:{cls}:{seed}")
    cases, _tried, _known = H.generate(cls, n, seed, base, bg)
    cases = [c for c in cases if c.insn.name not in SKIPPED and not c.lift_error and not c.prefix]
    stats = Stats()
    if not cases:
        return stats
    so, bad = H.build_library(cases, work, {})
    cases = [c for c in cases if c.index not in bad]
    first = H.run_lifted(so, base, bg, cases)
    pert = []
    for c in cases:
        p, bits = _perturb(c.inp, declare(c.insn), rng, base)
        pert.append((H.Case(c.index, c.form, c.insn, p, c.c_code), bits))
    second = H.run_lifted(so, base, bg, [pc for pc, _b in pert])
    for c, (pc, bits) in zip(cases, pert):
        a, b = first[c.index], second[c.index]
        if isinstance(a, str) or isinstance(b, str):
            continue  # a crash or hang is the differential test's to report
        stats.cases += 1
        stats.perturbed += 1
        e = declare(c.insn)
        diffs = _changed(e, c.inp, a[0]) + _compare(e, a[0], a[1], pc.inp, bits, b[0], b[1])
        if diffs:
            stats.failures.append(f"{c.describe()}: {'; '.join(sorted(set(diffs)))}")
    return stats
