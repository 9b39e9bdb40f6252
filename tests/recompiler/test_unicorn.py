"""The lifter against Unicorn, one instruction class at a time (docs/ARCHITECTURE.md, "How we
know it works": each lifted instruction class against Unicorn, random operands and flags).

Each class of ``recompiler/isa.py`` gets random instruction words of its forms and random
registers, flags and scratch memory; the lifted one-instruction function and Unicorn 2.1.4's
single step must leave the same X, SP, PC, NZCV, V registers and memory.  See
``unicorn_harness.py`` for how cases are drawn, filtered and compared.

- default run: ``CI_CASES`` per class;  ``-m heavy``: ``HEAVY_CASES`` per class.
- seed: ``NXRECOMP_TEST_UNICORN_SEED`` (default 1); failure messages name the word, its
  disassembly and the operands, so a case is reproduced from the message alone.
- Lifter bugs found here are listed in ``KNOWN_BUGS``: their cases are counted apart in the
  summary table and each has an ``xfail(strict=True)`` test on one example word, which turns
  into a failure (XPASS) once the lifter is fixed: then delete the entry.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

pytest.importorskip("unicorn", reason="unicorn (a test dependency in pyproject.toml) is not installed")

# The harness lives beside this file; --import-mode=importlib puts no test folder on sys.path.
if str(Path(__file__).resolve().parent) not in sys.path:
    sys.path.insert(0, str(Path(__file__).resolve().parent))
import unicorn_harness as H  # noqa: E402
from recompiler.isa import FORMS  # noqa: E402
from recompiler.lift import HANDLERS  # noqa: E402

CI_CASES = 120
HEAVY_CASES = 2000
SEED = int(os.environ.get("NXRECOMP_TEST_UNICORN_SEED", "1"))


KB = H.KnownBug
KNOWN_BUGS: list[H.KnownBug] = []  # lifter bugs this test found are fixed; add new ones here
_KB_REGS = {0xD51B4400: {"x0": 0xFFFFFFFFFFFFFFFF}, 0x1E61C231: {"v17": 0xBFF0000000000000}}


def _report(res: H.ClassResult, record_property) -> None:
    record_property("unicorn_class", [res.cls, res.run, res.passed, res.known, res.candidates, round(res.seconds, 1)])


def _check_class(cls: str, n: int, tmp_path, record_property) -> None:
    table_cls = "ldst_excl" if cls == H.EXCL_PAIR else cls
    if not any(f.name in HANDLERS for f in FORMS if f.cls == table_cls):
        pytest.xfail(f"the lifter has no handler for any form of class {cls!r}")
    res = H.run_class(cls, n, SEED, tmp_path, KNOWN_BUGS)
    _report(res, record_property)
    assert res.run >= n // 2, (
        f"{cls}: only {res.run} of {n} cases found in {res.candidates} candidate words "
        f"(filters: same form on decode, lifted without nx_unimplemented, Unicorn executes it)"
    )
    assert not res.failures, f"{cls}: {len(res.failures)} of {res.run} cases differ from Unicorn (seed {SEED}):\n" + "\n".join(
        res.failures[:25]
    )


@pytest.mark.parametrize("cls", H.classes())
def test_class_against_unicorn(cls, tmp_path, record_property):
    _check_class(cls, CI_CASES, tmp_path, record_property)


@pytest.mark.heavy
@pytest.mark.parametrize("cls", H.classes())
def test_class_against_unicorn_heavy(cls, tmp_path, record_property):
    _check_class(cls, HEAVY_CASES, tmp_path, record_property)


@pytest.mark.parametrize(
    "bug",
    [
        pytest.param(b, id=f"{b.forms[0]}-{b.example_word:08x}", marks=pytest.mark.xfail(strict=True, reason=b.reason))
        for b in KNOWN_BUGS
    ],
)
def test_known_lifter_bug(bug, tmp_path):
    ((case, diffs),) = H.run_words([bug.example_word], SEED, tmp_path, _KB_REGS.get(bug.example_word))
    assert case.form.name in bug.forms
    assert not diffs, f"{case.describe()}: {'; '.join(diffs)}"


def test_harness_sees_differences(tmp_path):
    """The comparison is live: the lifted results of ADD and STR match Unicorn, and one bit
    changed in an expected register, vector register or memory byte is reported."""
    import random

    from recompiler.decode import decode

    base = H.pick_base()
    bg = H.background(SEED)
    cpu = H.UnicornCpu(base, bg, H.A.UC_CPU_ARM64_MAX)
    rng = random.Random(SEED)
    cases = []
    for k, word in enumerate((0x8B020020, 0xF9000041, 0x4EA21C20)):  # add x0,x1,x2; str x1,[x2]; mov v0.16b,v1.16b
        insn = decode(word, base + H.CODE_OFF + 4 * k)
        code, errors = H.lift_one(insn)
        assert not errors and "nx_unimplemented" not in code
        c = H.Case(k, insn.form, insn, H.make_input(insn.form, insn, rng, base), code)
        c.inp.x[2] = H.scratch_ptr(rng, base, 8)
        off = c.inp.x[2] - base
        c.inp.x[1] = int.from_bytes(bytes(b ^ 0xFF for b in bg[off : off + 8]), "little")  # every byte changes
        c.expected, c.exp_mem = cpu.run(word, c.inp)
        cases.append(c)
    results = H.execute(cases, base, bg, tmp_path)
    assert [H.compare(c, *results[c.index]) for c in cases] == [[], [], []]
    add, store, mov = cases
    add.expected.x[0] ^= 1 << 63
    assert H.compare(add, *results[0]) == [f"x0: expected {add.expected.x[0]:#x} got {add.expected.x[0] ^ 1 << 63:#x}"]
    stored = store.inp.x[2] - base
    assert set(range(stored, stored + 8)) <= set(H.np.frombuffer(store.exp_mem[0], dtype=H.np.uint32).tolist())
    store.exp_mem = (store.exp_mem[0], bytes([store.exp_mem[1][0] ^ 1]) + store.exp_mem[1][1:])
    assert [d.split(":")[0] for d in H.compare(store, *results[1])] == ["memory"]
    mov.expected.v[0] ^= 1
    assert [d.split(":")[0] for d in H.compare(mov, *results[2])] == ["v0"]
