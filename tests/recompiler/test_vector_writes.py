"""The vector-typed writes the SIMD/FP and load/store handlers note (recompiler/lift/vector.py,
``result.Lifted.vec_writes``), against the instructions' declared effects (recompiler/lift/effects/,
themselves checked against Unicorn by test_declared_effects.py), and the handlers' C naming the V
registers' locals only.

For seeded random encodings of every form of the FP, SIMD and load/store groups (each decoded
word lifted alone, as test_unicorn.py does): every record is a register the instruction's
declared effects say it writes, and nearly all of them one they say it surely overwrites
(``kills``: a scalar write zeroes the rest, a Q load writes all 128 bits), and the instruction's own C names no ``s->v[N]`` (the wrapper no longer
renames anything).  The kinds are each seen on a known encoding (words checked against
capstone's disassembly here).
"""

from __future__ import annotations

import random
import re

import pytest

from recompiler import isa
from recompiler.decode import decode, disasm
from recompiler.lift import HANDLERS, effects, liveness as L
from recompiler.lift.emitter import FunctionEmitter, FunctionPlan
from recompiler.lift.vector import VW, VecWrite

BASE = 0x400000
PER_FORM = 12
_GROUPS = re.compile(r"^(FP_|FMOV|FCSEL|FCVT|FJCVTZS|SIMD_|LDST_|LDR_lit|AES|SHA|PMULL|XAR)")
_NXCPU_V = re.compile(r"s->v\[")


def _lift(word: int) -> FunctionEmitter:
    i = decode(word, BASE)
    em = FunctionEmitter(FunctionPlan(BASE, [i]), set(), trust_abi=True, comments=False, ret_flags=True, elide_saves=False)
    em.emit(HANDLERS)
    return em


def _words() -> list[int]:
    rng = random.Random(20261206)
    out = []
    for f in isa.FORMS:
        if _GROUPS.match(getattr(f, "group", f.name)):
            out += [f.value | (rng.getrandbits(32) & ~f.mask) for _ in range(PER_FORM)]
    return out


def test_records_are_declared_overwrites() -> None:
    seen = killed = 0
    for w in _words():
        em = _lift(w)
        if getattr(em, "internal_errors", []):
            continue
        for rec in em.records:
            own = "\n".join(em.body[rec.start : rec.stop])
            assert not _NXCPU_V.search(own), f"{w:#010x} ({disasm(w, BASE)}): NxCpu's V named in the body: {own}"
            for vw in rec.vec_writes:
                seen += 1
                bit = L.vbit(vw.reg)
                # (the record's own kills are none: the one-instruction function's fall out
                # reads every register; the declaration says what the instruction itself does)
                e = effects.declare(decode(w, BASE))
                assert e.writes & bit, f"{w:#010x} ({disasm(w, BASE)}): {vw} not a declared write"
                # (a declaration may say less than "surely overwrites": a literal load's)
                killed += bool(e.kills & bit)
    assert seen > 500 and killed > 0.9 * seen, (seen, killed)


@pytest.mark.parametrize(
    ("word", "asm", "kind", "reg", "c"),
    [
        (0x1E612802, "fadd d2, d0, d1", VW.LOW_FP, 2, "NXV(NxV2f64, v2) = (NxV2f64){ "),
        (0x9E670083, "fmov d3, x4", VW.LOW, 3, "NXV(NxV2u64, v3) = (NxV2u64){ (u64)((x4)), 0 };"),
        (0x3DC00425, "ldr q5, [x1, #0x10]", VW.LOAD_Q, 5, "NXV(NxV2u64, v5) = LQ128(x1 + 0x10ull);"),
        # a store writes no register (its C a vector-typed read)
        (0x3D800025, "str q5, [x1]", None, 5, "SQ128(x1, NXV(NxV2u64, v5));"),
        (0xFD000046, "str d6, [x2]", None, 6, "S64(x2, (NXV(NxV2u64, v6)[0]));"),
    ],
)
def test_kinds(word: int, asm: str, kind: VW | None, reg: int, c: str) -> None:
    assert disasm(word, BASE) == asm
    em = _lift(word)
    recs = [vw for r in em.records for vw in r.vec_writes]
    assert recs == ([] if kind is None else [VecWrite(reg, kind)]), recs
    assert c in "\n".join(em.body), em.body
