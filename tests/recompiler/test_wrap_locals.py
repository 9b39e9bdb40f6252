"""The locals and write-back lists of a lifted function (``recompiler/lift/wrap.py``) come from
its records' declared effects (``result.Lifted.named``, ``.writes``, ``.names_flags``), not from
a scan of its C.  Instruction words are from the Arm ARM's encodings, each checked against
capstone's disassembly here; the declarations themselves are Unicorn-checked in
``test_declared_effects.py``.
"""

from __future__ import annotations

import re

from recompiler.decode import decode, disasm
from recompiler.lift import HANDLERS, effects
from recompiler.lift import liveness as L
from recompiler.lift.emitter import FunctionEmitter, FunctionPlan

BASE = 0x400000


def _c(words: list[int]) -> str:
    insns = [decode(w, BASE + 4 * k) for k, w in enumerate(words)]
    em = FunctionEmitter(FunctionPlan(BASE, insns), {BASE, BASE + 4 * len(words)}, trust_abi=True)
    return em.emit(HANDLERS)


def _macro(c: str, name: str) -> str:
    m = re.search(rf"#define {name} do \{{(.*?)\}} while \(0\)", c)
    assert m, name
    return m[1]


def test_locals_follow_the_declarations(monkeypatch):
    # add w9, w9, #1 declared (on purpose, wrongly) to read X7 and write V3: the function gets
    # the locals and the write-back the declaration names although its C names neither
    assert disasm(0x11000529, BASE) == "add w9, w9, #1"
    real = effects.EFFECTS["ADD_imm"]

    def wider(i):
        e = real(i)
        return effects.Effects(e.reads | L.xbit(7), e.kills, e.writes | L.vbit(3), e.flags_read, e.flags_set, e.memory)

    monkeypatch.setitem(effects.EFFECTS, "ADD_imm", wider)
    c = _c([0x11000529])
    assert "x7 = s->x[7]" in c and "NxVec v3;" in c
    assert "s->v[3]" in _macro(c, "STORE_ALL") and "s->x[9] = x9;" in _macro(c, "STORE_ALL")


def test_registers_only_read_through_their_address_are_not_written_back():
    # ST4 and TBL take their V sources' addresses (&vN) in the C; they only read them, so the
    # store lists write back none of them (the scan of the C this replaced took them as writes)
    st4, tbl = 0x4C000A0D, 0x4E05209A
    assert disasm(st4, BASE) == "st4 {v13.4s, v14.4s, v15.4s, v16.4s}, [x16]"
    assert disasm(tbl, BASE).startswith("tbl v26.16b, {v4.16b, v5.16b}, v5.16b")
    c = _c([st4])
    assert "&v13" in c and "NxVec v13, v14, v15, v16;" in c
    assert "s->v[" not in _macro(c, "STORE_ALL")
    c = _c([tbl])
    assert "&v4" in c and "&v5" in c
    assert re.findall(r"s->v\[(\d+)\] =|s->v\[(\d+)\]\) =", _macro(c, "STORE_ALL")) == [("", "26")]


def test_go_entry_loads_only_its_arguments():
    # add x9, x8, x7; ret: a function compiled from Go whose stack check spills X0 alone
    # (FunctionPlan.input_regs) was handed nothing in X7 or X8 (its callers store neither:
    # interproc caps its USES), so its locals start as 0 instead of loads from NxCpu; the
    # runtime's assembly (no hands_back), or one whose arguments are unknown, loads them
    words = [0x8B070109, 0xD65F03C0]
    assert disasm(words[0], BASE) == "add x9, x8, x7" and disasm(words[1], BASE + 4) == "ret"
    insns = [decode(w, BASE + 4 * k) for k, w in enumerate(words)]

    def c(hands: int | None, inputs: int | None) -> str:
        plan = FunctionPlan(BASE, insns)
        plan.hands_back, plan.input_regs = hands, inputs
        em = FunctionEmitter(plan, {BASE, BASE + 8}, trust_abi=False, abi="go")
        return em.emit(HANDLERS)

    def decl(c: str) -> str:
        m = re.search(r"u64 x0 = a0[^;]*;", c)
        assert m, c
        return m[0]

    go = decl(c(L.GO_RET_HANDED, L.GO_NOARG_INPUTS | L.xbit(0)))
    assert "x7 = 0" in go and "x8 = 0" in go and "s->x[" not in go
    for hands, inputs in ((None, None), (L.GO_RET_HANDED, None), (None, L.GO_NOARG_INPUTS)):
        assert "x7 = s->x[7]" in decl(c(hands, inputs))
