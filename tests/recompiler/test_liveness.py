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
    after_call = code.split("_r = F_400000(s, x0, x1, x30);", 1)[1]
    reload = after_call.split("\n")[2]
    # X0 is the callee's C result; X0, X1 and X30 go in as C arguments, not through NxCpu
    assert reload.startswith("  x0 = _r.x0;") and "x9" not in reload and "s->x[0]" not in reload
    store = code.split("x30 = 0x400008ull;", 1)[1].split("\n")[0]
    assert "s->x[9]" not in store and "s->x[30]" not in store and "s->x[0]" not in store


def _lift_program(funcs: dict[int, list[int]]) -> dict[int, str]:
    """Each function's C with its call sites' lists written from whole-program summaries."""
    from recompiler import interproc
    from recompiler.lift import lift_function
    plans = {a: FunctionPlan(a, [decode(w, a + 4 * k) for k, w in enumerate(ws)]) for a, ws in funcs.items()}
    lifted = {a: lift_function(p, set(funcs), defer=True) for a, p in plans.items()}
    summ = interproc.summarize([facts for _c, _called, facts in lifted.values()])
    return {a: interproc.place(c, [facts], summ) for a, (c, _called, facts) in lifted.items()}


def test_call_to_a_leaf_stores_only_what_it_reads():
    # caller: mov x19, #1 ; mov x9, #2 ; mov x0, #3 ; mov x1, #4 ; bl leaf ; add x0, x0, x19 ; ret
    # leaf:   add x0, x0, x1 ; ret     (reads X0-X1, writes X0)
    caller, leaf = 0x400000, 0x400100
    code = _lift_program({caller: [0xD2800033, 0xD2800049, 0xD2800060, 0xD2800081, 0x9400003C, 0x8B130000,
                                    0xD65F03C0],
                          leaf: [0x8B010000, 0xD65F03C0]})[caller]
    store = code.split("x30 = 0x400014ull;", 1)[1].split("\n")[0]
    # the arguments X0-X1 and the return address travel in host registers
    assert "_r = F_400100(s, x0, x1, x30);" in code
    assert "s->x[0]" not in store and "s->x[1]" not in store and "s->x[30]" not in store
    assert "s->x[19]" not in store and "s->x[9]" not in store and "s->sp" not in store
    reload = code.split("_r = F_400100(s, x0, x1, x30);", 1)[1].split("\n")[2]
    assert reload.startswith("  x0 = _r.x0;") and "x19" not in reload and "s->x[0]" not in reload


def test_unknown_callee_keeps_the_abi_worst_case():
    # the same caller calling an address that is no lifted function: X19 is stored (a callee may
    # save it), nothing callee-saved is reloaded
    caller = 0x400000
    code = _lift_program({caller: [0xD2800033, 0xD2800049, 0xD2800060, 0xD2800081, 0x9400003C, 0x8B130000,
                                    0xD65F03C0]})[caller]
    store = code.split("x30 = 0x400014ull;", 1)[1].split("\n")[0]
    # X0 and X30 go in host registers; X1 is stored too (an unknown callee's return stores X1
    # only if it may write it, and a helper with its own convention may keep it)
    assert "s->x[19] = x19;" in store and "s->x[1] = x1;" in store
    assert "s->x[0]" not in store and "s->x[30]" not in store


def test_v4_to_v7_are_no_result_of_a_return():
    # caller: movi v5.2d, #0 ; bl leaf ; ret — leaf: movi v5.16b, #1 ; ret.  A result goes where
    # an argument of its type would (AAPCS64): at most V0-V3 (a four-member HFA), so V5 is dead
    # after the call and not reloaded; the caller's return does not store its own V5 either,
    # which leaves the leaf's V5 in NxCpu.  (V5 is stored before the call: the leaf's lane-wise
    # write counts as a read.)
    caller, leaf = 0x400000, 0x400100
    code = _lift_program({caller: [0x6F00E405, 0x9400003F, 0xD65F03C0],
                          leaf: [0x4F00E425, 0xD65F03C0]})[caller]
    reload = code.split("_r = F_400100(s, x0, x1, x30);", 1)[1].split("\n")[2]
    assert "v5" not in reload, reload
    ret = next(line for line in code.splitlines() if "return (NxRet)" in line)
    assert "s->v[5]" not in ret, ret
