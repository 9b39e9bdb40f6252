"""The lifter's structured output (recompiler/lift/result.py, template.py): each instruction's
record says what it reads, writes and how it leaves, and a whole-program build's C carries its
call sites' lists as slot records that interproc.place fills (no text placeholder left).
Instruction words are from the Arm ARM's encodings (checked with the decoder's disassembly)."""

from __future__ import annotations

from recompiler.decode import decode
from recompiler.lift import interproc, liveness as L, template as T
from recompiler.lift.emitter import FunctionEmitter, FunctionPlan
from recompiler.lift.forms import HANDLERS
from recompiler.lift.result import Exit, Mem

BASE = 0x400000
# mov x9, #5 ; ldr x2, [x1] ; bl BASE ; cbz x0, +8 ; str x9, [x1] ; ret
WORDS = [0xD28000A9, 0xF9400022, 0x97FFFFFE, 0xB4000040, 0xF9000029, 0xD65F03C0]


def _emit(defer: bool = True):
    insns = [decode(w, BASE + 4 * k) for k, w in enumerate(WORDS)]
    em = FunctionEmitter(FunctionPlan(BASE, insns), {BASE}, trust_abi=True)
    return em, em.emit(HANDLERS, defer=defer)


def test_records_say_reads_writes_and_exits():
    em, _code = _emit()
    rec = {r.addr - BASE: r for r in em.records}
    assert rec[0].kills == L.xbit(9) and rec[0].exit is Exit.FALL and rec[0].memory is Mem.NONE
    assert rec[4].reads == L.xbit(1) and rec[4].kills == L.xbit(2) and rec[4].memory is Mem.LOAD
    assert rec[8].exit is Exit.CALL and rec[8].call == 0 and rec[8].falls
    assert rec[12].exit is Exit.BRANCH and rec[12].succs == [BASE + 20] and rec[12].reads == L.xbit(0)
    assert rec[16].memory is Mem.STORE and rec[16].reads == L.xbit(1) | L.xbit(9)
    assert rec[20].exit is Exit.RETURN and rec[20].ret == 0 and not rec[20].falls


def test_call_sites_are_slots_filled_by_place():
    em, code = _emit()
    assert isinstance(code, T.CText)
    kinds = {s.kind for s in code.slots()}
    assert {T.STORE_CALL, T.RELOAD_CALL, T.STORE_RET} <= kinds
    assert all(s.entry == BASE for s in code.slots())
    placed = interproc.place(code, [em.facts], interproc.summarize([em.facts]))
    assert "@@" not in placed and "\x00" not in placed
    # X9 is live across the call (stored after it) and the callee is this function, which
    # writes X9: the call site reloads it
    after = placed.split("_r = F_400000(s, x0, x1, x30, sp, x29);", 1)[1]
    assert "x9 = s->x[9];" in after.split("\n")[2]


def test_without_defer_the_lists_are_written_at_once():
    _em, code = _emit(defer=False)
    assert isinstance(code, str) and "@@" not in code and "\x00" not in code
