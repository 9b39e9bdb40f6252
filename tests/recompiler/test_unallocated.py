"""Encodings the Arm ARM leaves unallocated or reserved are refused by the lifter, as Unicorn and
capstone (oracles we did not write) refuse them.

A split group's last row (``<group>_unlifted``, ``recompiler/isa.py``) takes the encodings none
of its forms takes, and a form's ``!`` clauses hand it the values its instruction page reserves
(``size:Q == '110'``...).  Each such word must lift to the one fatal trap the lifter writes for
every encoding it does not implement (``nx_unimplemented``), never to C that runs: Unicorn raises
UNDEFINED on it (an exception at the instruction) and capstone has no text for it.  The named
cases were lifted as instructions before (issue 33: FP compare with opc<2:0> != 0, FMOV Wd,
Vn.D[1], INS (general) with Q = 0; reserved sizes of SMOV/UMOV/DUP and of the vector forms).
"""

from __future__ import annotations

import random
import sys
from pathlib import Path

import pytest

pytest.importorskip("unicorn", reason="unicorn (a test dependency in pyproject.toml) is not installed")
from unicorn import UC_ARCH_ARM64, UC_ERR_EXCEPTION, UC_MODE_ARM, Uc, UcError  # noqa: E402
from unicorn import arm64_const as A  # noqa: E402

if str(Path(__file__).resolve().parent) not in sys.path:
    sys.path.insert(0, str(Path(__file__).resolve().parent))
import unicorn_harness as H  # noqa: E402
from recompiler import isa  # noqa: E402
from recompiler.decode import decode, disasm  # noqa: E402
from recompiler.lift import forms  # noqa: E402

ADDR = 0x10000

# word -> what it is (each checked against capstone and Unicorn below, not against our table)
NAMED = {
    0x1E202021: "FCMP Sn, Sm with opc<2:0> = 001",
    0x1E602034: "FCMP Dn, Dm with opc<2:0> = 100",
    0x1EE02001: "FCMP Hn, Hm with opc<2:0> = 001",
    0x1EAE0020: "FMOV Wd, Vn.D[1] (sf = 0)",
    0x1EAF0020: "FMOV Vd.D[1], Wn (sf = 0)",
    0x0E031C20: "INS Vd.B[1], Wn with Q = 0",
    0x0E041C20: "INS Vd.S[0], Wn with Q = 0",
    0x0E042C20: "SMOV Wd, Vn.S[0] (Q = 0, size = 10)",
    0x4E082C20: "SMOV Xd, Vn.D[0] (size = 11)",
    0x4E013C20: "UMOV Xd, Vn.B[0] (Q = 1 with a byte)",
    0x0E083C20: "UMOV Wd, Vn.D[0] (Q = 0 with a doubleword)",
    0x0E080420: "DUP Vd.1D, Vn.D[0] (Q = 0, size = 11)",
    0x4EE16420: "SMAX Vd.2D (size = 11)",
    0x0EE08820: "CMGT Vd.1D, #0 (size:Q = 110)",
    0x0EB1B820: "ADDV Sd, Vn.2S (size:Q = 100)",
    0x0F400420: "SSHR Vd.1D, #64 (immh<3>:Q = 10)",
    # the load/store groups split in session 26 (each lifted before as its mode's neighbour)
    0x3C036BF9: "STTR of a SIMD&FP register (V = 1 with the unprivileged idx 10)",
    0x68405C00: "LDNP with opc = 01 (LDPSW has no no-allocate form)",
    0x08B1E021: "CASB/CASLB with Rt2 != 11111",
    0xD50337FF: "SB with CRm != 0000",
    # Advanced SIMD modified immediate, split in session 26 (arch-lift2; refused before too)
    0x2F00F400: "FMOV Vd.1D, #imm (op = 1, cmode = 1111, Q = 0)",
    0x2F00BC00: "BIC (vector, immediate) with o2 = 1",
    # single-row groups whose reserved values the table now refuses (their handlers did before)
    0x1EA01000: "FMOV Sd, #imm with ftype = 10",
    0x1EA00C00: "FCSEL with ftype = 10",
    0x7E216800: "FCVTXN (scalar) with sz = 0",
    0x0E60E000: "PMULL with size = 01",
    0x2E004000: "EXT with Q = 0, imm4 = 1000",
    0x5E100400: "DUP (element, scalar) with imm5 = 10000",
    0x52C00000: "MOVZ Wd with hw = 10",
    0x13400000: "SBFM Wd with N = 1",
    0x13009000: "SBFM Wd with imms = 100100",
    # (op = 1, o2 = 1, cmode = 1111, e.g. 0x2F00FC00: unallocated to the Arm ARM's table and
    # capstone, refused by the lifter, but Unicorn 2.1.4 runs it as FMOV (half precision): its
    # decoder checks o2 and cmode there, not op)
    0x0F00BC00: "ORR (vector, immediate) with o2 = 1",
}


def _unicorn_refuses(word: int) -> bool:
    uc = Uc(UC_ARCH_ARM64, UC_MODE_ARM)
    uc.ctl_set_cpu_model(A.UC_CPU_ARM64_MAX)
    uc.mem_map(ADDR, 0x1000)
    uc.mem_write(ADDR, word.to_bytes(4, "little"))
    uc.reg_write(A.UC_ARM64_REG_CPACR_EL1, 3 << 20)  # FP/SIMD enabled (else every FP word traps)
    try:
        uc.emu_start(ADDR, ADDR + 4, count=1)
    except UcError as e:
        return e.errno == UC_ERR_EXCEPTION
    return False


# Advanced SIMD modified immediate with op = 1, cmode = 1111, o2 = 1: unallocated to the Arm ARM
# (o2 = 1 is FMOV (vector, immediate, half) only with op = 0) and .word to capstone, but Unicorn 2
# runs it (0x2f02fcf3, 0x6f02fcf3: it takes o2 = 1, cmode = 1111 as the half FMOV without
# checking op), so for these words capstone is the one oracle
_UC_RUNS_MODIMM = (0xBFF8FC00, 0x2F00FC00)


def _trap(word: int) -> str:
    return f"nx_unimplemented(s, {ADDR:#x}ull, {word:#x}u)"


def test_unicorn_runs_the_unallocated_modimm_words():
    # the exception above holds (if a later Unicorn refuses them, drop it)
    for word in (0x2F02FCF3, 0x6F02FCF3):
        assert word & _UC_RUNS_MODIMM[0] == _UC_RUNS_MODIMM[1]
        assert disasm(word, ADDR).startswith(".word") and not _unicorn_refuses(word), f"{word:#010x}"
        assert decode(word, ADDR).form.unlifted


def test_oracles_run_what_they_should():
    # the checks below can fail: an allocated neighbour of each runs in Unicorn and is lifted
    for word in (0x1E202020, 0x4E031C20, 0x0E043C20, 0x4EE18420):  # FCMP, INS .B[1], UMOV W/.S, ADD .2D
        assert not _unicorn_refuses(word), f"{word:#010x}"
        assert not disasm(word, ADDR).startswith(".word")
        code, errs = H.lift_one(decode(word, ADDR))
        assert _trap(word) not in code and not errs


@pytest.mark.parametrize("word", sorted(NAMED), ids=[f"{w:#010x}" for w in sorted(NAMED)])
def test_named_unallocated_encodings_are_refused(word):
    assert disasm(word, ADDR).startswith(".word"), f"capstone decodes {NAMED[word]}"
    assert _unicorn_refuses(word), f"Unicorn runs {NAMED[word]}"
    insn = decode(word, ADDR)
    assert insn.form is not None  # it decodes (the analysis reads what decodes) ...
    code, errs = H.lift_one(insn)
    assert _trap(word) in code and not errs, f"{NAMED[word]} ({insn.name}) is lifted"  # ... and is refused


def test_every_rest_row_is_refused():
    # random encodings of every split group's last row: the lifter's row for it refuses each
    rnd = random.Random(35)
    rest = [f for f in isa.FORMS if f.unlifted]
    assert len(rest) >= 20
    for f in rest:
        assert forms.HANDLERS[f.name] is forms.h_unallocated, f.name
        seen = 0
        for _ in range(300):
            word = f.encode(**{n: rnd.getrandbits(w) for n, _l, w in f.fields})
            insn = decode(word, ADDR)
            if insn.form is not f:
                continue
            seen += 1
            if seen <= 20:
                code, errs = H.lift_one(insn)
                assert _trap(word) in code and not errs, f"{word:#010x} ({f.name})"
        assert seen, f.name


def test_every_reserved_clause_is_undefined_to_both_oracles():
    # each ``!`` clause of each form (isa.py): words of the form's fixed bits with the clause's
    # field values, the rest random.  Those the table hands to a group's ``_unlifted`` row must be
    # ``.word`` to capstone and UNDEFINED to Unicorn (the Arm ARM's "reserved"/UNDEFINED, not a
    # value the lifter merely does not implement), and lift to the trap
    rnd = random.Random(33)
    checked, wrong = 0, []
    for f in isa.FORMS:
        for m, v in f.reserved:
            for _ in range(3):
                word = (f.value | (rnd.getrandbits(32) & ~f.mask & ~m) | v) & 0xFFFFFFFF
                if word & f.mask != f.value:  # the clause's bits overlap a fixed field (none today)
                    continue
                insn = decode(word, ADDR)
                if insn.form is None or not insn.form.unlifted:
                    continue  # another form's word (a later row of the table takes it)
                checked += 1
                text = disasm(word, ADDR)  # (capstone's generic name of an op0 = 00 word: no instruction)
                uc_runs = word & _UC_RUNS_MODIMM[0] == _UC_RUNS_MODIMM[1]
                if not (text.startswith(".word") or text.startswith("msr s0_")) or not (uc_runs or _unicorn_refuses(word)):
                    wrong.append(f"{word:#010x} ({f.name} !{m:#x}={v:#x}): {text!r}")
                elif checked % 8 == 0:  # the lifter's refusal (test_every_rest_row_is_refused for the rest)
                    code, errs = H.lift_one(insn)
                    if _trap(word) not in code or errs:
                        wrong.append(f"{word:#010x} ({f.name}): lifted")
    assert checked > 500, checked
    assert not wrong, "\n".join(wrong[:30])
