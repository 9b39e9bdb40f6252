"""The liveness reading of lifted C (recompiler/liveness.py) stays on the safe side: a register
counts as overwritten only by an unconditional full assignment that does not read it; anything
else that names it reads it.  (Whole programs against qemu-aarch64 are the real check of the
call-site lists built on it: tests/realprogs, tests/recompiler/test_busybox_recompiled.py.)"""
from __future__ import annotations

from recompiler import liveness as L
from recompiler.lift.emitter import FunctionEmitter, FunctionPlan
from recompiler.decode import decode
from recompiler.lift import HANDLERS


def x(n: int) -> int:
    return L.xbit(n)


def test_full_assignment_kills_and_reads_are_gen():
    gen, kill = L.effects("x0 = (u64)L64(x1 + 0x8ull);")
    assert kill == x(0) and gen == x(1)


def test_assignment_reading_itself_is_a_read():
    gen, kill = L.effects("x9 = (u32)((u32)((u32)x9) + (u32)(0x1));")
    assert gen == x(9) and kill == 0


def test_conditional_assignment_is_not_a_kill():
    for text in ("if (Z) x3 = x4;", "{ u64 _t = C ? 1 : 2; x3 = _t; }", "switch (x2) { case 1: x3 = 0; }"):
        gen, kill = L.effects(text)
        assert kill & x(3) == 0 and gen & x(3), text


def test_partial_vector_write_is_a_read():
    gen, kill = L.effects("v3.d[1] = x2;")
    assert gen & L.vbit(3) and not kill & L.vbit(3)
    gen, kill = L.effects("{ double _r = v1.fd[0] + v2.fd[0]; v0.q = 0; v0.fd[0] = _r; }")
    assert kill == L.vbit(0) and gen == L.vbit(1) | L.vbit(2)


def test_store_all_reads_everything():
    gen, kill = L.effects("x0 = 1; STORE_ALL; return;")
    assert gen == L.ALL and kill == 0


def test_fields_and_hex_are_not_registers():
    gen, kill = L.effects("S64(s->sp, 0x30ull); s->x[5] = 0x1ull;")
    assert gen == 0 and kill == 0


def _lift(words: list[int], base: int = 0x400000, functions: set[int] | None = None) -> str:
    insns = [decode(w, base + 4 * k) for k, w in enumerate(words)]
    em = FunctionEmitter(FunctionPlan(base, insns), functions or {base}, trust_abi=True)
    return em.emit(HANDLERS)


def test_call_site_reloads_only_what_is_read_after():
    # mov x9, #5 ; bl self ; add x0, x0, #1 ; ret: x9 is dead after the call, x0 is live
    code = _lift([0xD28000A9, 0x97FFFFFF, 0x91000400, 0xD65F03C0])
    after_call = code.split("F_400000(s);", 1)[1]
    reload = after_call.split("\n")[2]
    assert "x0 = s->x[0];" in reload and "x9" not in reload
    store = code.split("x30 = 0x400008ull;", 1)[1].split("\n")[0]
    assert "s->x[9]" not in store and "s->x[30] = x30;" in store
