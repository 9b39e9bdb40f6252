"""Each form's declared effects (recompiler/lift/effects.py) against Unicorn 2.1.4, and the
records liveness reads taking them (see ``effects_oracle.py`` for the checks).

- default run: ``CI_CASES`` random encodings of every form against Unicorn, and the lifted C of
  ``LIFTED_CLASSES`` run on perturbed inputs;  ``-m heavy``: ``HEAVY_CASES`` of every form and
  the lifted C of every instruction class.
- seed: ``NXRECOMP_TEST_UNICORN_SEED`` (default 1), as test_unicorn.py.
Instruction words below are from the Arm ARM's encodings, each checked against capstone's
disassembly in the test itself.
"""

from __future__ import annotations

import dataclasses
import os
import sys
from pathlib import Path

import pytest

pytest.importorskip("unicorn", reason="unicorn (a test dependency in pyproject.toml) is not installed")

if str(Path(__file__).resolve().parent) not in sys.path:
    sys.path.insert(0, str(Path(__file__).resolve().parent))
import effects_oracle as O  # noqa: E402
import unicorn_harness as H  # noqa: E402
from recompiler import isa  # noqa: E402
from recompiler.decode import decode, disasm  # noqa: E402
from recompiler.lift import HANDLERS, effects, liveness as L  # noqa: E402
from recompiler.lift.emitter import FunctionEmitter, FunctionPlan  # noqa: E402
from recompiler.lift.result import Mem  # noqa: E402

CI_CASES = 3
HEAVY_CASES = 200
LIFTED_CI = 12
LIFTED_CLASSES = ["movewide", "ldst_atomic", "fp_cmp", "simd_ldst"]
SEED = int(os.environ.get("NXRECOMP_TEST_UNICORN_SEED", "1"))
BASE = 0x400000


def test_every_form_declares_its_effects():
    assert set(effects.EFFECTS) == {f.name for f in isa.FORMS}


def _check_forms(n: int) -> None:
    failures, short = [], []
    for name in O.forms():
        st = O.check_form(name, n, SEED)
        failures += st.failures
        if st.cases < max(1, n // 2):
            short.append(f"{name} ({st.cases})")
    assert not short, f"too few encodings Unicorn runs for: {short}"
    assert not failures, f"{len(failures)} declarations disagree with Unicorn (seed {SEED}):\n" + "\n".join(failures[:30])


def test_declared_effects_against_unicorn():
    _check_forms(CI_CASES)


@pytest.mark.heavy
def test_declared_effects_against_unicorn_heavy():
    _check_forms(HEAVY_CASES)


def _check_lifted(cls: str, n: int, tmp_path) -> None:
    st = O.check_lifted(cls, n, SEED, tmp_path)
    assert st.cases >= n // 2, f"{cls}: only {st.cases} cases ran"
    assert not st.failures, f"{cls}: the lifted C depends on more than the declared reads:\n" + "\n".join(st.failures[:25])


@pytest.mark.parametrize("cls", LIFTED_CLASSES)
def test_lifted_c_reads_only_the_declared_registers(cls, tmp_path):
    _check_lifted(cls, LIFTED_CI, tmp_path)


@pytest.mark.heavy
@pytest.mark.parametrize("cls", [c for c in H.classes() if c != H.EXCL_PAIR])
def test_lifted_c_reads_only_the_declared_registers_heavy(cls, tmp_path):
    _check_lifted(cls, HEAVY_CASES, tmp_path)


@pytest.mark.parametrize(
    "form,wrong",
    [
        ("MOVK", lambda e, i: dataclasses.replace(e, reads=0, kills=e.writes)),  # MOVK keeps Rd's other bits
        ("CSEL", lambda e, i: dataclasses.replace(e, flags_read=False)),
        ("LDR_uimm", lambda e, i: dataclasses.replace(e, memory=Mem.NONE)),
        ("UMOV", lambda e, i: dataclasses.replace(e, writes=0, kills=0)),
    ],
)
def test_the_oracle_finds_a_wrong_declaration(form, wrong, monkeypatch):
    right = effects.EFFECTS[form]
    monkeypatch.setitem(effects.EFFECTS, form, lambda i: wrong(right(i), i))
    assert O.check_form(form, 12, SEED).failures


def _insn(word: int, text: str, addr: int = BASE):
    assert disasm(word, addr) == text
    return decode(word, addr)


def test_declarations_of_known_words():
    x, v = L.xbit, L.vbit
    e = effects.declare(_insn(0xF9400420, "ldr x0, [x1, #8]"))
    assert (e.reads, e.kills, e.memory) == (x(1), x(0), Mem.LOAD)
    e = effects.declare(_insn(0x11000529, "add w9, w9, #1"))
    assert (e.reads, e.kills, e.writes) == (x(9), 0, x(9))  # read first: no kill
    e = effects.declare(_insn(0xF2A00029, "movk x9, #1, lsl #16"))
    assert (e.reads, e.kills, e.writes) == (x(9), 0, x(9))
    e = effects.declare(_insn(0x9A850083, "csel x3, x4, x5, eq"))
    assert (e.reads, e.kills, e.flags_read) == (x(4) | x(5), x(3), True)
    e = effects.declare(_insn(0x4E181C43, "mov v3.d[1], x2"))
    assert (e.reads, e.kills, e.writes) == (x(2) | v(3), 0, v(3))  # one lane: the rest is kept
    e = effects.declare(_insn(0x1E622820, "fadd d0, d1, d2"))
    assert (e.reads, e.kills) == (v(1) | v(2), v(0))  # a scalar result zeroes the upper bits
    e = effects.declare(_insn(0x54000040, f"b.eq #{BASE + 8:#x}"))
    assert e.flags_read and not e.reads


def _records(words: list[int], functions: set[int] | None = None, **plan) -> list:
    insns = [decode(w, BASE + 4 * k) for k, w in enumerate(words)]
    em = FunctionEmitter(FunctionPlan(BASE, insns, **plan), functions or {BASE, BASE + 4 * len(words)}, trust_abi=True)
    em.emit(HANDLERS, defer=True)
    return em.records


def test_records_take_the_declarations():
    words = [0xF9400420, 0x11000529, 0x9A850083, 0x4E181C43, 0x1E622820, 0xD65F03C0]
    for rec, w in zip(_records(words), words):
        e = effects.declare(decode(w, rec.addr))
        assert (rec.reads, rec.kills, rec.writes, rec.flags_read, rec.memory) == (
            e.reads,
            e.kills,
            e.writes,
            e.flags_read,
            e.memory,
        ), hex(w)


def test_exits_that_write_every_register_back_read_them_all():
    # svc #0: a system call; udf: a fatal trap (never comes back: reads nothing a caller must
    # provide, liveness zeroes it); b.eq to an address that is no function: a jump out
    # through nx_jump that stores every local
    svc, udf, beq = _records([0xD4000001, 0x11000529]), _records([0x00000000]), _records([0x54000040], {BASE})
    assert svc[0].svc and svc[0].reads == L.ALL and svc[0].kills == 0
    assert udf[0].fatal and udf[0].reads == L.ALL and udf[0].writes == 0
    assert beq[0].exit_all and beq[0].reads == L.ALL and beq[0].flags_read


def test_a_direct_table_dispatch_reads_its_guards_and_index():
    # br x1 through a table analysis read from memory the program cannot write, its base
    # assumed in x2: the C jumps through a label array indexed by x1 while x2 holds the base
    from recompiler.lift.emitter import DirectTable

    targets = [BASE + 4 * k for k in range(16)]
    words = [0xD61F0020] + [0xD503201F] * 15  # br x1; nop...
    d = DirectTable(reg=1, mask=15, guards=((2, 0x1000),), targets=tuple(targets))
    rec = _records(words, jump_tables={BASE: targets}, direct_tables={BASE: d})[0]
    assert rec.uses == L.xbit(1) | L.xbit(2) and rec.reads & L.xbit(2)


def test_handlers_set_the_flags_their_form_declares():
    # the handler's own note that it writes NZCV (FunctionEmitter.flags_touched, which the
    # flags' liveness and the wrapper read) agrees with its form's declaration
    import random

    rnd = random.Random(SEED)
    checked = 0
    for f in isa.FORMS:
        for _ in range(20):
            insn = decode(f.encode(**{n: rnd.getrandbits(w) for n, _l, w in f.fields}), BASE)
            if insn.form is not f:
                continue
            em = FunctionEmitter(FunctionPlan(BASE, [insn]), {BASE, BASE + 4}, trust_abi=True)
            em.emit(HANDLERS, defer=True)
            rec = em.records[0]
            if not rec.fatal:
                assert rec.flags_set == effects.declare(insn).flags_set, f"{insn.word:#010x} {disasm(insn.word, BASE)}"
                checked += 1
    assert checked > 1000


def test_a_declaration_that_fails_is_on_the_safe_side(monkeypatch):
    def broken(i):
        raise KeyError("imm12")

    monkeypatch.setitem(effects.EFFECTS, "ADD_imm", broken)
    insns = [decode(0x11000529, BASE)]  # add w9, w9, #1
    em = FunctionEmitter(FunctionPlan(BASE, insns), {BASE, BASE + 4}, trust_abi=True)
    em.emit(HANDLERS, defer=True)
    rec = em.records[0]
    assert rec.reads == L.ALL and rec.kills == 0 and rec.writes == L.ALL and rec.flags_read
    assert any("declaring effects" in e for e in em.internal_errors)
