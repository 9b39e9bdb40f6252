"""The forms split from the last two multi-form rows of ``recompiler/isa.py`` (issue 33 item 1),
each against Unicorn on its own: MOVI, MVNI, ORR/BIC (vector, immediate) and FMOV (vector,
immediate), one row per encoding of each page, and B.cond.

The class test (``test_unicorn.py``) draws a class's forms at random; here every form gets its
own words (random immediate bits, Q, cmode's free bits, condition, offset), run once in Unicorn
2.1.4 and once lifted, with the same registers, flags and memory.  BC.cond (FEAT_HBC, Armv8.8)
is UNDEFINED to Unicorn 2.1.4 (its CPU predates the extension); the Arm ARM makes it B.cond with
a hint of consistent behaviour, so each word must lift to the C of the B.cond word that differs
only in bit 4 (o0), the form Unicorn checks.
"""

from __future__ import annotations

import random
import sys
from pathlib import Path

import pytest

pytest.importorskip("unicorn", reason="unicorn (a test dependency in pyproject.toml) is not installed")

if str(Path(__file__).resolve().parent) not in sys.path:
    sys.path.insert(0, str(Path(__file__).resolve().parent))
import unicorn_harness as H  # noqa: E402
from recompiler import isa  # noqa: E402
from recompiler.decode import decode  # noqa: E402

WORDS_PER_FORM = 12
SEED = 26


def _words(form: isa.Form, rnd: random.Random, n: int) -> list[int]:
    out = []
    while len(out) < n:
        word = form.encode(**{name: rnd.getrandbits(w) for name, _l, w in form.fields})
        if decode(word, 0).form is form and not (form.group == "BCOND" and word >> 5 & 0x7FFFF == 0):
            out.append(word)  # (a branch to itself would be a loop)
    return out


def test_each_split_form_against_unicorn(tmp_path):
    rnd = random.Random(SEED)
    names = [f.name for f in isa.GROUPS["SIMD_movi"] if not f.unlifted] + ["B_cond"]
    assert len(names) == 17
    words = [w for name in names for w in _words(isa.BY_NAME[name], rnd, WORDS_PER_FORM)]
    results = H.run_words(words, SEED, tmp_path)
    assert len(results) == len(words)
    seen: dict[str, int] = {}
    bad = []
    for case, diffs in results:
        seen[case.form.name] = seen.get(case.form.name, 0) + 1
        if diffs or getattr(case, "lift_error", ""):
            bad.append(f"{case.describe()}: {'; '.join(diffs) or case.lift_error}")
    assert seen == {n: WORDS_PER_FORM for n in names}
    assert not bad, "\n".join(bad[:20])


def test_bc_cond_lifts_as_b_cond():
    rnd = random.Random(SEED + 1)
    bc = isa.BY_NAME["BC_cond"]
    for word in _words(bc, rnd, 40):
        addr = 0x10000
        b = decode(word & ~0x10, addr)
        assert b.name == "B_cond"
        got, errs = H.lift_one(decode(word, addr))
        want, errs_b = H.lift_one(b)
        assert not errs and not errs_b
        assert got.replace(f"{word:#x}", "W") == want.replace(f"{word & ~0x10:#x}", "W"), f"{word:#010x}"
