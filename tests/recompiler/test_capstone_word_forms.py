"""Words capstone prints as ``.word`` that are instructions of a form of ``recompiler/isa.py``
are lifted from our own decode of the fields, and each form's such words run as Unicorn runs
them (an oracle we did not write).

Capstone leaves a word undecoded where a field the Arm ARM marks "should be" (``(1)``/``(0)``)
holds another value (Rs and Rt2 of LDXR/LDAR/CAS, CRm of SB and of CFINV/XAFLAG/AXFLAG: the
``~`` fields of the table), which is CONSTRAINED UNPREDICTABLE, not UNDEFINED: Unicorn, as
hardware mostly does, executes the word as its canonical form.  It also refuses some register
combinations of the unprivileged loads and pairs (LDTR Wt with Rt = Rn, STP with writeback and
Rt = Rn, LDP of SIMD registers with Rt = Rt2) that the architecture allows or leaves
CONSTRAINED UNPREDICTABLE.  The lifter keeps refusing the CONSTRAINED UNPREDICTABLE loads that
write one register twice (LDR/LDP with writeback into Rt, LDP with Rt = Rt2); every word it
does lift is checked here, per form, against Unicorn.
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
from unicorn import UC_ARCH_ARM64, UC_ERR_EXCEPTION, UC_MODE_ARM, Uc, UcError  # noqa: E402
from unicorn import arm64_const as A  # noqa: E402
from recompiler import isa  # noqa: E402
from recompiler.decode import decode, disasm  # noqa: E402

GROUPS = ("LDSTX", "LDST_imm9", "LDST_pair", "BARRIER", "MSR_imm")
PER_FORM = 3
ADDR = 0x10000


def _unicorn_refuses(word: int) -> bool:
    uc = Uc(UC_ARCH_ARM64, UC_MODE_ARM)
    uc.ctl_set_cpu_model(A.UC_CPU_ARM64_MAX)
    uc.mem_map(ADDR, 0x1000)
    uc.mem_write(ADDR, word.to_bytes(4, "little"))
    for r in range(29):  # a base register that points into the mapped page
        uc.reg_write(getattr(A, f"UC_ARM64_REG_X{r}"), ADDR + 0x800)
    uc.reg_write(A.UC_ARM64_REG_SP, ADDR + 0x800)
    try:
        uc.emu_start(ADDR, ADDR + 4, count=1)
    except UcError as e:
        return e.errno == UC_ERR_EXCEPTION
    return False


def _capstone_words(rnd: random.Random) -> tuple[dict[str, list[int]], list[int]]:
    """form -> up to PER_FORM of its words that capstone prints as ``.word`` (or a "should be"
    field off) which the lifter lifts; and the words of the forms' encodings Unicorn refuses."""
    lifted: dict[str, list[int]] = {}
    refused = []
    for g in GROUPS:
        for f in isa.GROUPS[g]:
            if f.name in H.SKIPPED_FORMS:
                continue
            for _ in range(300):
                word = f.encode(**H.sample_fields(f, rnd))
                insn = decode(word, ADDR)
                if insn.form is not f:
                    continue
                if not disasm(word, ADDR).startswith(".word") and f.canonical(word) == word:
                    continue
                code, errors = H.lift_one(insn)
                if "nx_unimplemented" in code or errors:
                    refused.append(word)
                elif len(lifted.setdefault(f.name, [])) < PER_FORM:
                    lifted[f.name].append(word)
    return lifted, refused


def test_words_capstone_leaves_run_as_unicorn_runs_them(tmp_path):
    lifted, refused = _capstone_words(random.Random(26))
    # the forms where capstone and the architecture part (the test would pass empty otherwise)
    assert {"LDXR", "LDARB", "STLRH", "LDLAR", "STLLR", "LDAXP", "LDXRB", "LDTR", "STP_pre", "LDP_simd"} <= set(lifted), sorted(
        lifted
    )
    flat = [w for ws in lifted.values() for w in ws]
    assert len(flat) >= 60
    # every word Unicorn refuses (UNDEFINED) the lifter refuses: CAS/CASP with Rt2 != 11111, SB
    # and CFINV/XAFLAG/AXFLAG with CRm != 0000 (the table's group rows, not the forms)
    assert not [f"{w:#010x}" for w in flat if _unicorn_refuses(w)]
    assert any(_unicorn_refuses(w) for w in refused)
    failures = [f"{c.describe()}: {'; '.join(d)}" for c, d in H.run_words(flat, 26, tmp_path) if d]
    assert not failures, "\n".join(failures[:20])


@pytest.mark.parametrize(
    "word,what",
    [
        (0x08B1E021, "CAS with Rt2 = 11000"),
        (0x482C2A40, "CASP with Rt2 = 01010"),
        (0xD50337FF, "SB with CRm = 0111"),
        (0xD5004C1F, "CFINV with CRm = 1100"),
        (0xD5004F3F, "XAFLAG with CRm = 1111"),
    ],
)
def test_should_be_bits_unicorn_refuses_are_refused(word, what):
    assert _unicorn_refuses(word), what
    assert decode(word, ADDR).form.unlifted, what
    code, _errors = H.lift_one(decode(word, ADDR))
    assert "nx_unimplemented" in code, what
