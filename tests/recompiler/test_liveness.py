"""Liveness over the lifted instructions' records (recompiler/lift/liveness.py, facts.py): the
call sites' store and reload lists, the registers live at the entry.  The records' effects are
declared per form (recompiler/lift/effects/, checked against Unicorn by
test_declared_effects.py).  (Whole programs against qemu-aarch64 are the real check of the
call-site lists built on it: tests/realprogs, tests/recompiler/test_busybox_recompiled.py.)"""

from __future__ import annotations

import pytest

from recompiler.lift import liveness as L
from recompiler.lift.emitter import SIG, FunctionEmitter, FunctionPlan
from recompiler.decode import decode
from recompiler.lift import HANDLERS
from recompiler.lift.frame_facts import FRAME_SAVES_MAX_INSNS


def x(n: int) -> int:
    return L.xbit(n)


def _lift(words: list[int], base: int = 0x400000, functions: set[int] | None = None) -> str:
    insns = [decode(w, base + 4 * k) for k, w in enumerate(words)]
    em = FunctionEmitter(FunctionPlan(base, insns), functions or {base}, trust_abi=True)
    return em.emit(HANDLERS)


def test_call_site_reloads_only_what_is_read_after():
    # mov x9, #5 ; bl self ; add x0, x0, #1 ; ret: x9 is dead after the call, x0 is live
    code = _lift([0xD28000A9, 0x97FFFFFF, 0x91000400, 0xD65F03C0])
    after_call = code.split("_r = F_400000(s, x0, x1, x30, sp, x29);", 1)[1]
    reload = after_call.split("\n")[2]
    # X0 is the callee's C result; X0, X1 and X30 go in as C arguments, not through NxCpu
    assert reload.startswith("  x0 = _r.x0;") and "x9" not in reload and "s->x[0]" not in reload
    store = code.split("x30 = 0x400008ull;", 1)[1].split("\n")[0]
    assert "s->x[9]" not in store and "s->x[30]" not in store and "s->x[0]" not in store


def _lift_program(funcs: dict[int, list[int]], elide_saves: bool = True, results_only: bool = False) -> dict[int, str]:
    """Each function's C with its call sites' lists written from whole-program summaries
    (``results_only``: as a whole-program build places them, AAPCS64 trusted)."""
    from recompiler.lift import interproc
    from recompiler.lift import lift_function

    plans = {a: FunctionPlan(a, [decode(w, a + 4 * k) for k, w in enumerate(ws)]) for a, ws in funcs.items()}
    lifted = {a: lift_function(p, set(funcs), defer=True, elide_saves=elide_saves) for a, p in plans.items()}
    summ = interproc.summarize([facts for _c, _called, facts in lifted.values()])
    return {a: interproc.place(c, [facts], summ, results_only) for a, (c, _called, facts) in lifted.items()}


def test_call_to_a_leaf_stores_only_what_it_reads():
    # caller: mov x19, #1 ; mov x9, #2 ; mov x0, #3 ; mov x1, #4 ; bl leaf ; add x0, x0, x19 ; ret
    # leaf:   add x0, x0, x1 ; ret     (reads X0-X1, writes X0)
    caller, leaf = 0x400000, 0x400100
    code = _lift_program(
        {
            caller: [0xD2800033, 0xD2800049, 0xD2800060, 0xD2800081, 0x9400003C, 0x8B130000, 0xD65F03C0],
            leaf: [0x8B010000, 0xD65F03C0],
        }
    )[caller]
    store = code.split("x30 = 0x400014ull;", 1)[1].split("\n")[0]
    # the arguments X0-X1 and the return address travel in host registers
    assert "_r = F_400100(s, x0, x1, x30, sp, x29);" in code
    assert "s->x[0]" not in store and "s->x[1]" not in store and "s->x[30]" not in store
    assert "s->x[19]" not in store and "s->x[9]" not in store and "s->sp" not in store
    reload = code.split("_r = F_400100(s, x0, x1, x30, sp, x29);", 1)[1].split("\n")[2]
    assert reload.startswith("  x0 = _r.x0;") and "x19" not in reload and "s->x[0]" not in reload


@pytest.mark.parametrize("elide", [True, False])
def test_unknown_callee_keeps_the_abi_worst_case(elide):
    # the same caller calling an address that is no lifted function: nothing callee-saved is
    # reloaded; X19 is stored only with recompiler.elide_saves off (a callee may save it; with
    # it on, a save is no read and the caller keeps X19 in its local)
    caller = 0x400000
    code = _lift_program(
        {caller: [0xD2800033, 0xD2800049, 0xD2800060, 0xD2800081, 0x9400003C, 0x8B130000, 0xD65F03C0]}, elide_saves=elide
    )[caller]
    store = code.split("x30 = 0x400014ull;", 1)[1].split("\n")[0]
    # X0 and X30 go in host registers; X1 is stored too (an unknown callee's return stores X1
    # only if it may write it, and a helper with its own convention may keep it)
    assert ("s->x[19] = x19;" in store) == (not elide) and "s->x[1] = x1;" in store
    assert "s->x[0]" not in store and "s->x[30]" not in store
    # X19 is live after the call: with elide_saves the twin's resume switch stops there
    twin = code[code.index(f"NxRet R_{caller:x}{SIG} {{") :]
    assert ("nx_elided_resume(s)" in twin.split("L_400000:;")[0]) == elide


def test_v4_to_v7_are_no_result_of_a_return():
    # caller: movi v5.2d, #0 ; bl leaf ; ret — leaf: movi v5.16b, #1 ; ret.  A result goes where
    # an argument of its type would (AAPCS64): at most V0-V3 (a four-member HFA), so V5 is dead
    # after the call and not reloaded; the caller's return does not store its own V5 either,
    # which leaves the leaf's V5 in NxCpu.  (V5 is stored before the call: the leaf's lane-wise
    # write counts as a read.)
    caller, leaf = 0x400000, 0x400100
    code = _lift_program({caller: [0x6F00E405, 0x9400003F, 0xD65F03C0], leaf: [0x4F00E425, 0xD65F03C0]})[caller]
    reload = code.split("_r = F_400100(s, x0, x1, x30, sp, x29);", 1)[1].split("\n")[2]
    assert "v5" not in reload, reload
    ret = next(line for line in code.splitlines() if "return (NxRet)" in line)
    assert "s->v[5]" not in ret, ret


@pytest.mark.parametrize(
    "word,saved",
    [
        (0xA90E5BF5, ["x21", "x22"]),  # stp x21, x22, [sp, #0xe0]
        (0xA9BF7BFD, []),  # stp x29, x30, [sp, #-0x10]!: a frame record (X29 kept: the chain)
        (0x6DBF27E8, ["v8", "v9"]),  # stp d8, d9, [sp, #-0x10]!
        (0xF9000BF3, ["x19"]),  # str x19, [sp, #0x10]
        (0xF81F0FF3, ["x19"]),  # str x19, [sp, #-0x10]!
        (0xFC1F0FE8, ["v8"]),  # str d8, [sp, #-0x10]!
        (0xA9005013, []),  # stp x19, x20, [x0]: setjmp's store into a jmp_buf, a true read
        (0xF9000033, []),  # str x19, [x1]
        (0xA8C153F3, []),  # ldp x19, x20, [sp], #0x10: a restore, no store
        (0xF90003E0, []),  # str x0, [sp]: not callee-saved
    ],
)
def test_save_reads_are_stores_of_callee_saved_registers_into_stack_slots(word, saved):
    from recompiler.decode import disasm

    m = L.save_reads(word)
    got = [f"x{i}" for i in range(31) if m >> i & 1] + [f"v{i}" for i in range(32) if m >> (32 + i) & 1]
    assert got == saved, disasm(word, 0x1000)


def test_a_caller_keeps_callee_saved_registers_in_locals_across_a_callee_that_only_saves_them():
    # caller: mov x19, #1 ; mov x0, #3 ; bl callee ; add x0, x0, x19 ; ret
    # callee: stp x19, x20, [sp, #-16]! ; mov x19, x0 ; add x0, x19, #1 ; ldp x19, x20, [sp], #16 ; ret
    caller, callee = 0x400000, 0x400100
    prog = {
        caller: [0xD2800033, 0xD2800060, 0x9400003E, 0x8B130000, 0xD65F03C0],
        callee: [0xA9BF53F3, 0xAA0003F3, 0x91000660, 0xA8C153F3, 0xD65F03C0],
    }
    for elide in (True, False):
        code = _lift_program(prog, elide_saves=elide)[caller]
        store = code.split("x30 = 0x40000cull;", 1)[1].split("\n")[0]
        assert "_r = F_400100(s, x0, x1, x30, sp, x29);" in code
        assert ("s->x[19] = x19;" in store) == (not elide), (elide, store)


def test_a_direct_tail_call_stores_what_its_callee_reads_and_a_return_would():
    # caller: mov x5, #1 ; mov x9, #2 ; mov x19, #3 ; b leaf
    # leaf:   add x0, x0, x1 ; ret     (reads X0-X1, the caller's arguments, passed in host registers)
    # The tail call is the call and the return in one: X5 and X9 are caller-saved registers the
    # caller changed (its own caller may reload them), X19 a callee-saved one it keeps nowhere
    # (AAPCS64 would have it saved; a return would not store it either).
    caller, leaf = 0x400000, 0x400100
    b = 0x14000000 | ((leaf - (caller + 12)) >> 2)
    code = _lift_program({caller: [0xD2800025, 0xD2800049, 0xD2800073, b], leaf: [0x8B010000, 0xD65F03C0]})[caller]
    tail = next(line for line in code.splitlines() if "MUSTTAIL return F_400100" in line)
    assert "STORE_ALL" not in tail and "@@" not in tail, tail
    assert "s->x[5] = x5;" in tail and "s->x[9] = x9;" in tail, tail
    assert "s->x[19]" not in tail and "s->x[0]" not in tail and "s->x[30]" not in tail, tail


def _prologue_saves_x19(code: str, entry: int) -> bool:
    body = code[code.index(f"NxRet F_{entry:x}(") :]
    first = body[body.index(f"L_{entry:x}:;") :].split("\n")[1]  # stp x19, x30, [sp, #-16]!
    return "(u64)x19)" in first


def test_a_save_that_nothing_reads_back_is_dropped_unless_an_exit_hands_the_register_back():
    # keep:  stp x19, x30, [sp, #-16]! ; mov x19, #5 ; bl capture ; ldp x19, x30, [sp], #16 ; b other
    #        (capture stores x19 into memory, a true read: the call site stores x19, so the tail
    #        call must hand the caller's x19 back, restored from the slot)
    # drop:  stp x19, x30, [sp, #-16]! ; mov x19, #5 ; bl other ; add x0, x0, x19 ;
    #        ldp x19, x30, [sp], #16 ; ret   (nothing reads x19 but this function)
    keep, drop, capture, other = 0x400000, 0x400040, 0x400100, 0x400200
    prog = {
        keep: [0xA9BF7BF3, 0xD28000B3, 0x9400003E, 0xA8C17BF3, 0x1400007C],
        drop: [0xA9BF7BF3, 0xD28000B3, 0x94000000 | ((other - (drop + 8)) >> 2), 0x8B130000, 0xA8C17BF3, 0xD65F03C0],
        capture: [0xF9000013, 0xD65F03C0],
        other: [0xD65F03C0],
    }
    code = _lift_program(prog)
    assert _prologue_saves_x19(code[keep], keep), code[keep]
    assert not _prologue_saves_x19(code[drop], drop), code[drop]
    assert _prologue_saves_x19(_lift_program(prog, elide_saves=False)[drop], drop)


@pytest.mark.parametrize("reg,stored", [(30, False), (9, True)])
def test_a_jump_through_the_link_register_reads_what_a_return_hands_on(reg, stored):
    # caller: mov x2, #7 ; bl jumper ; ret — jumper: ldr xN, [x0] ; br xN.  A BR through X30 is a
    # return to wherever X30 points (longjmp's): a tail call keeps X30 for its callee, so the
    # target of one is never there.  It reads results and callee-saved registers, not X2, so
    # the caller stores no X2 for it; through X9 it may be a tail call, which reads arguments.
    caller, jumper = 0x400000, 0x400100
    code = _lift_program({caller: [0xD28000E2, 0x9400003F, 0xD65F03C0], jumper: [0xF9400000 | reg, 0xD61F0000 | reg << 5]})[
        caller
    ]
    # X2 reaches NxCpu at the call site or where it is written (interproc.write_through)
    before = "\n".join(line for line in code.split("_r = F_400100", 1)[0].splitlines() if not line.startswith("#"))
    assert ("s->x[2] = x2;" in before) == stored, before


def test_the_fall_past_a_call_at_a_function_end_reads_no_arguments():
    # caller: mov x3, #5 ; bl f ; ret — f: bl spin (its last instruction) — spin: b .
    # The guest compiler put nothing after f's call: spin does not return.  Were it to, what
    # runs there could rely only on what a return hands on, so f does not read X3 and the
    # caller stores no X3 for it.
    caller, f, spin = 0x400000, 0x400100, 0x400200
    code = _lift_program({caller: [0xD28000A3, 0x9400003F, 0xD65F03C0], f: [0x94000040], spin: [0x14000000]})[caller]
    store = code.split("x30 = 0x400008ull;", 1)[1].split("\n")[0]
    assert "_r = F_400100(s, x0, x1, x30, sp, x29);" in code
    assert "s->x[3]" not in store, store


def test_scalar_fp_writes_are_vector_typed():
    # ldr d1, [x1] ; fmul d0, d0, d1 ; str d0, [x2] ; ret.  A write of a V register's low lane
    # that zeroes the rest is a vector store into the local (through the union's u128 clang kept
    # the zero upper half in a general register of its own); the low lane is read as a vector's
    # lane.  Unicorn checks the values (tests/recompiler/test_unicorn.py), this the C's form.
    code = _lift_program({0x400000: [0xFD400021, 0x1E610800, 0xFD000040, 0xD65F03C0]})[0x400000]
    assert "NXV(NxV2u64, v1) = (NxV2u64){ (u64)(L64(x1)), 0 };" in code, code
    assert "NXV(NxV2f64, v0) = (NxV2f64){ " in code and "v0.q = 0;" not in code, code
    assert "S64(x2, (NXV(NxV2u64, v0)[0]));" in code, code


def _return_line(code: str) -> str:
    """The line of the lifted function's RET (not its catch's early return)."""
    return next(line for line in code.splitlines() if "return (NxRet){ x30, x0 }" in line)


def test_a_call_through_a_register_leaves_the_saves_droppable():
    # stp x19, x30, [sp, #-16]! ; mov x19, #5 ; blr x2 ; add x0, x0, x19 ; ldp x19, x30, [sp], #16 ; ret
    # The unknown callee reads no callee-saved register (elide_saves) and its site stores none,
    # so the function overwrites no NxCpu slot of X19: its return hands nothing back and the save
    # goes (stdio's _IO_file_xsputn, which calls through its FILE's jump table: 8 loads and 8
    # stores of X19-X24 and X29 at each call).  Without elide_saves the site stores X19 and the
    # return restores it.
    f = 0x400000
    prog = {f: [0xA9BF7BF3, 0xD28000B3, 0xD63F0040, 0x8B130000, 0xA8C17BF3, 0xD65F03C0]}
    code = _lift_program(prog, results_only=True)[f]
    assert not _prologue_saves_x19(code, f), code
    assert "s->x[19]" not in _return_line(code), code
    kept = _lift_program(prog, elide_saves=False, results_only=True)[f]
    assert _prologue_saves_x19(kept, f)
    assert "s->x[19] = x19;" in _return_line(kept)


def test_v8_to_v15_stay_in_the_callers_locals_across_a_call():
    # caller: fmov d8, x0 ; bl leaf ; fmov x0, d8 ; ret — leaf: fmov d8, x1 ; ret
    # With AAPCS64 trusted a callee keeps the low half of V8 and leaves the upper half undefined:
    # the call site neither stores V8 for the leaf to change nor reloads it, and the caller's
    # return does not store it (sort's key compare saved and restored D8 at every comparison).
    # Placed for a host caller that inspects every register (not results_only), V8 is stored
    # before the call and its upper half reloaded after it, as before.
    caller, leaf = 0x400000, 0x400100
    prog = {caller: [0x9E670008, 0x9400003F, 0x9E660100, 0xD65F03C0], leaf: [0x9E670028, 0xD65F03C0]}
    for results_only in (True, False):
        code = _lift_program(prog, results_only=results_only)[caller]
        store = code.split("x30 = 0x400008ull;", 1)[1].split("\n")[0]
        reload = code.split("_r = F_400100(s, x0, x1, x30, sp, x29);", 1)[1].split("\n")[2]
        ret = _return_line(code)
        assert ("s->v[8]" in store) == (not results_only), store
        assert ("s->v[8]" in reload) == (not results_only), reload
        if results_only:
            assert "s->v[8]" not in ret, ret


def test_an_fpsr_read_is_no_read_of_the_callers_callee_saved_registers():
    # caller: mov x19, #1 ; bl f ; add x0, x0, x19 ; ret — f: mrs x1, fpsr ; ret
    # The read stores every local first (to order the FP arithmetic before it), which made f
    # read every register: its callers stored X19-X28 and D8-D15 before calling anything that
    # may reach __feraiseexcept (strtod, printf's float formatting).  With elide_saves f reads
    # none of them; without it, as any function, f is assumed to.
    caller, f = 0x400000, 0x400100
    prog = {caller: [0xD2800033, 0x9400003F, 0x8B130000, 0xD65F03C0], f: [0xD53B4421, 0xD65F03C0]}
    for elide in (True, False):
        code = _lift_program(prog, elide_saves=elide, results_only=True)[caller]
        store = code.split("x30 = 0x400008ull;", 1)[1].split("\n")[0]
        assert ("s->x[19] = x19;" in store) == (not elide), (elide, store)


def test_sp_travels_as_an_argument_and_a_return_stores_it_where_the_function_moved_it():
    # caller: stp x29, x30, [sp, #-16]! ; bl leaf ; ldp x29, x30, [sp], #16 ; ret — leaf: ldr x0, [sp] ; ret
    # The leaf reads SP, which the call passes in a host register (emitter.ARGS): the site
    # stores no SP.  The caller moved SP, so its return stores it back: a frame re-entered from
    # NxCpu after a return to somewhere else (a longjmp below it) finds its SP only there.
    caller, leaf = 0x400000, 0x400100
    prog = {caller: [0xA9BF7BFD, 0x9400003F, 0xA8C17BFD, 0xD65F03C0], leaf: [0xF94003E0, 0xD65F03C0]}
    code = _lift_program(prog, results_only=True)
    store = code[caller].split("x30 = 0x400008ull;", 1)[1].split("\n")[0]
    assert "_r = F_400100(s, x0, x1, x30, sp, x29);" in code[caller]
    assert "s->sp" not in store, store
    assert "s->sp = sp;" in _return_line(code[caller])
    assert "u64 sp = asp;" in code[leaf] and "s->sp" not in _return_line(code[leaf])


# stp d15, d14, [sp, #-160]! ; stp d13, d12 / d11, d10 / d9, d8 ; stp x29, x30 ; stp x28, x27 ...
# x20, x19 (every callee-saved register saved, as big functions and __builtin_unwind_init do)
_SAVE_ALL = [
    0x6DB63BEF,
    0x6D0133ED,
    0x6D022BEB,
    0x6D0323E9,
    0xA9047BFD,
    0xA9056FFC,
    0xA90667FA,
    0xA9075FF8,
    0xA90857F6,
    0xA9094FF4,
]
_WRITE_X19_X28 = [0xAA0003F3 + k for k in range(10)]  # mov x19..x28, x0
_WRITE_D8_D14 = [0x9E670008 + k for k in range(7)]  # fmov d8..d14, x0
_RESTORE_ALL = [
    0xA9494FF4,
    0xA94857F6,
    0xA9475FF8,
    0xA94667FA,
    0xA9456FFC,
    0xA9447BFD,
    0x6D4323E9,
    0x6D422BEB,
    0x6D4133ED,
    0x6CCA3BEF,
]


@pytest.mark.parametrize("writes_d15", [True, False])
def test_a_function_that_saves_and_uses_every_callee_saved_register_is_no_unwinder(writes_d15):
    # caller: mov x19, #1 ; bl f ; add x0, x0, x19 ; ret.  f saves all of X19-X28 and D8-D15,
    # writes X19-X28 and D8-D14, and D15 too or not (fmov d15, x0), restores them and returns.
    # Writing every one it saves, f saves them to use them (SQLite's printf, sqlite3_str_vappendf):
    # its saves are no reads, and its callers keep X19 in their locals (before, every caller of
    # SQLite's printf stored all eighteen at each call).  One saved and never written is what
    # __builtin_unwind_init's prologue looks like (an unwinder reads its callers' values back from
    # its own slots): then its saves are reads, and the caller stores X19.  (The first case failed
    # before: every function that saves all eighteen was taken for an unwinder.)
    caller, f = 0x400000, 0x400100
    body = [*_SAVE_ALL, *_WRITE_X19_X28, *_WRITE_D8_D14, *([0x9E67000F] if writes_d15 else []), *_RESTORE_ALL, 0xD65F03C0]
    prog = {caller: [0xD2800033, 0x9400003F, 0x8B130000, 0xD65F03C0], f: body}
    code = _lift_program(prog, results_only=True)[caller]
    store = code.split("x30 = 0x400008ull;", 1)[1].split("\n")[0]
    assert ("s->x[19] = x19;" in store) == (not writes_d15), (writes_d15, store)


@pytest.mark.parametrize("results_only", [True, False])
def test_what_a_later_direct_callee_reads_decides_what_is_live_after_a_call(results_only):
    # caller: bl a ; bl b ; fmov d2, x0 ; ret — a: movi v2.2d, #0 ; ret — b: add x0, x0, #1 ; ret
    # V2 (a result register) is live after the call of a only if b may read it.  As the lifter
    # saw each call site, every callee read V0-V7, so V2 was reloaded after a; placed with b's
    # summary (it reads X0 alone) V2 is dead there (interproc.site_liveness).  (Fails before it.)
    caller, a, b = 0x400000, 0x400100, 0x400200
    prog = {caller: [0x94000040, 0x9400007F, 0x9E670002, 0xD65F03C0], a: [0x6F00E402, 0xD65F03C0], b: [0x91000400, 0xD65F03C0]}
    code = _lift_program(prog, results_only=results_only)[caller]
    reload = code.split(f"_r = F_{a:x}(s, x0, x1, x30, sp, x29);", 1)[1].split("\n")[2]
    assert reload.startswith("  x0 = _r.x0;") and "s->v[2]" not in reload, reload
    # with b reading V2 (fmov x0, d2 in place of its add), V2 stays live and is reloaded
    prog[b] = [0x9E660040, 0xD65F03C0]
    code = _lift_program(prog, results_only=results_only)[caller]
    reload = code.split(f"_r = F_{a:x}(s, x0, x1, x30, sp, x29);", 1)[1].split("\n")[2]
    assert "s->v[2]" in reload, reload


def test_a_caller_keeps_non_result_caller_saved_registers_in_locals_across_a_call():
    # caller: mov x2, #7 ; bl a ; add x0, x0, x2 ; ret — a: mov x2, #9 ; ret
    # AAPCS64 leaves X2 undefined after the call; the caller reads it anyway (as a caller the
    # guest compiler knew a callee not to clobber would).  Trusting AAPCS64 (results_only) the
    # call site neither stores X2 nor reloads it: the local keeps 7, which is also what the
    # reload found, since a's return stores no X2 (interproc._ret_mask).  For a host caller that
    # inspects every register (not results_only) X2 is stored before the call and reloaded.
    caller, a = 0x400000, 0x400100
    prog = {caller: [0xD28000E2, 0x9400003F, 0x8B020000, 0xD65F03C0], a: [0xD2800122, 0xD65F03C0]}
    for results_only in (True, False):
        code = _lift_program(prog, results_only=results_only)[caller]
        store = code.split("x30 = 0x400008ull;", 1)[1].split("\n")[0]
        reload = code.split(f"_r = F_{a:x}(s, x0, x1, x30, sp, x29);", 1)[1].split("\n")[2]
        assert ("s->x[2]" in store) == (not results_only), store
        assert ("s->x[2]" in reload) == (not results_only), reload
        ret = next(line for line in code.splitlines() if "return (NxRet)" in line)
        assert "s->x[2]" not in ret or not results_only, ret


def test_a_kept_register_stays_clean_or_dirty_across_a_call():
    # caller: mov x2, #7 ; add x2, x2, #1 (twice) ; bl b ; bl a ; bl b ; ret — a: mov x3, #1 ;
    # mov x2, #9 ; ret — b: add x0, x0, x2 ; ret (reads X2).  (Three writes of X2 against two
    # call sites that read it: X2 is not written through, interproc.write_through.)  The first
    # call of b stores X2 (9).  Trusting AAPCS64, X2 stays in the caller's local across the call
    # of a, and clean: a truly keeping X2 (-fipa-ra) leaves its slot as it was, and one that
    # changes it leaves X2 undefined, so the second call of b stores nothing.  (Fails where a
    # kept register is taken as dirty after every call that may change it.)
    caller, a, b = 0x400000, 0x400100, 0x400200
    prog = {
        caller: [0xD28000E2, 0x91000442, 0x91000442, 0x9400007D, 0x9400003C, 0x9400007B, 0xD65F03C0],
        a: [0xD2800023, 0xD2800122, 0xD65F03C0],
        b: [0x8B020000, 0xD65F03C0],
    }
    code = _lift_program(prog, results_only=True)[caller]
    stores = [code.split(f"x30 = {r:#x}ull;", 1)[1].split("\n")[0] for r in (0x400010, 0x400014, 0x400018)]
    assert "s->x[2] = x2;" in stores[0], stores  # (not written through)
    assert "s->x[2]" not in stores[1], stores
    assert "s->x[2]" not in stores[2], stores
    reload = code.split(f"_r = F_{a:x}(s, x0, x1, x30, sp, x29);", 1)[1].split("\n")[2]
    assert "s->x[2]" not in reload, reload


def test_a_tables_case_in_another_function_reads_what_that_function_reads():
    # caller: mov x19, #1 ; mov x0, #3 ; bl f ; add x0, x0, x19 ; ret
    # f:      br x0 (a table of 16 cases, dispatched through a shared block: 15 of its own
    #         labels, each a ret, and g, another function) ; ret x 15
    # g:      ret
    # A case in another function is a tail call into it (the table's shared block tail-calls
    # it), which reads what g reads and what a return hands on: no callee-saved register of
    # the caller, which keeps X19 in its local across the call.  As "reads everything" (the old
    # rule), every caller of busybox's memcpy stored X19-X28 at each call reaching it.
    from recompiler.lift import interproc, lift_function

    caller, f, g = 0x400000, 0x400100, 0x400200
    words = {
        caller: [0xD2800033, 0xD2800060, 0x9400003E, 0x8B130000, 0xD65F03C0],
        f: [0xD61F0000] + [0xD65F03C0] * 15,
        g: [0xD65F03C0],
    }
    plans = {a: FunctionPlan(a, [decode(w, a + 4 * k) for k, w in enumerate(ws)]) for a, ws in words.items()}
    plans[f].jump_tables[f] = [*range(f + 4, f + 64, 4), g]
    lifted = {a: lift_function(p, set(words), defer=True) for a, p in plans.items()}
    summ = interproc.summarize([facts for _c, _called, facts in lifted.values()])
    assert not summ[f].uses & L.ELIDED_SAVES, hex(summ[f].uses)
    assert g in lifted[f][2].tail_target
    code = {a: interproc.place(c, [facts], summ, True) for a, (c, _called, facts) in lifted.items()}
    store = code[caller].split("x30 = 0x40000cull;", 1)[1].split("\n")[0]
    assert "_r = F_400100(s, x0, x1, x30, sp, x29);" in code[caller]
    assert "s->x[19]" not in store, store
    # the case in g still tail-calls it with every local stored
    assert "MUSTTAIL return F_400200" in code[f] and "STORE_ALL" in code[f]


# f: stp x29, x30, [sp, #-48]! ; stp x20, x19, [sp, #32] (the saves: entry SP -16 and -8) ;
#    mov x29, sp ; mov x19, x0 ; mov x20, x1 ; stp x19, x20, [sp, #16] (a spill: -32, -24) ;
#    bl other ; ldp x19, x20, [x29, #16] (its reload) ; add x0, x0, x19 ; add x0, x0, x20 ;
#    ldp x20, x19, [sp, #32] ; ldp x29, x30, [sp], #48 ; ret
_SPILLS = [0xA9BD7BFD, 0xA9024FF4, 0x910003FD, 0xAA0003F3, 0xAA0103F4, 0xA90153F3, None, 0xA94153B3]
_SPILLS += [0x8B130000, 0x8B140000, 0xA9424FF4, 0xA8C37BFD, 0xD65F03C0]


@pytest.mark.parametrize(
    "case,kept",
    [
        ("spill", []),
        # ldr x19, [sp, #40] instead of the reload: X19's own save slot, read (its entry value)
        ("reads its save slot", [19]),
        # mov sp, x2 before the spill (an alloca): the spill's slot unknown, but a store of a
        # written value is never a save; its reload from X29 (still known) no restore
        ("sp unknown", []),
        # the same with the reload from SP (ldp x19, x20, [sp, #16]): its slot unknown, it may
        # read the save slots, and its values are read
        ("sp unknown, reload from sp", [19, 20]),
        # the spill of the first case in a function of over 4,096 instructions (nops after the
        # spill): there every spill still counts (frame_facts.FRAME_SAVES_MAX_INSNS)
        ("huge", [19, 20]),
    ],
)
def test_a_spill_of_a_callee_saved_register_is_no_save_and_its_reload_no_restore(case, kept):
    # An interpreter keeps its own values in X19-X28 and spills and reloads them in its frame
    # (QuickJS's JS_CallInternal: ldp x26, x21, [x29, #-0x48]).  Only a store of the entry value
    # is a save and only a load from that slot a restore (liveness.frame_offsets follows SP and
    # X29 from the entry): a spill and its reload kept every save of the register before.
    f, other = 0x400000, 0x400200
    body = list(_SPILLS)
    if case == "reads its save slot":
        body[7] = 0xF94017F3
    elif case.startswith("sp unknown"):
        if case.endswith("from sp"):
            body[7] = 0xA94153F3
        body.insert(5, 0x9100005F)
    elif case == "huge":
        body[6:6] = [0xD503201F] * FRAME_SAVES_MAX_INSNS
    at = body.index(None)
    body[at] = 0x94000000 | ((other - (f + 4 * at)) >> 2)  # bl other
    code = _lift_program({f: body, other: [0xD65F03C0]})[f]
    fn = code[code.index(f"NxRet F_{f:x}(") :]
    save = fn[fn.index(f"L_{f:x}:;") :].split("\n")[2]  # stp x20, x19, [sp, #32]
    assert [r for r in (19, 20) if f"x{r})" in save] == kept, save
    spill = next(line for line in fn.split("\n") if "sp + 0x10ull; S64(_a, (u64)x19)" in line)
    assert "NX_SPLIT(x20)" in spill  # the spill is stored whatever happens to the saves


@pytest.mark.parametrize(
    "case,owned",
    [
        ("below the entry's sp", True),  # sub sp, sp, #16 first: a save into its own frame
        ("above the entry's sp", False),  # [sp, #8] at the entry: the frame above
        ("through the entry's x29", False),  # [x29, #8], X29 as it came: the caller's frame record
        ("huge, above", False),  # (frame_facts.FRAME_SAVES_MAX_INSNS: the rule still holds)
    ],
)
def test_a_store_outside_the_functions_own_frame_is_no_save(case, owned):
    # f: str x19, [sp, #8] ; mov x19, x0 ; bl other ; add x0, x0, x19 ; ldr x19, [sp, #8] ; ret
    # (with the variants of ``case``).  A false entry (a label inside another function that
    # analysis took for one: libjq's yyparse, 11 fragments) stores the working values of the
    # function it lies in into that function's frame, above its own entry's SP; taken for saves,
    # they made the fragment own the registers (its reads of them no input), its summary left
    # them out, and the fragments' tail calls into each other stored none of them.
    from recompiler.lift import interproc, lift_function

    f, other = 0x400000, 0x400200
    body = [0xF90007F3, 0xAA0003F3, None, 0x8B130000, 0xF94007F3, 0xD65F03C0]
    if case == "below the entry's sp":
        body = [0xD10043FF, *body[:-1], 0x910043FF, 0xD65F03C0]  # sub sp, sp, #16 ... add sp, sp, #16
    elif case == "through the entry's x29":
        body[0], body[4] = 0xF90007B3, 0xF94007B3  # str / ldr x19, [x29, #8]
    elif case.startswith("huge"):
        body[1:1] = [0xD503201F] * FRAME_SAVES_MAX_INSNS
    at = body.index(None)
    body[at] = 0x94000000 | ((other - (f + 4 * at)) >> 2)
    words = {f: body, other: [0xD65F03C0]}
    plans = {a: FunctionPlan(a, [decode(w, a + 4 * k) for k, w in enumerate(ws)]) for a, ws in words.items()}
    lifted = {a: lift_function(p, set(words), defer=True) for a, p in plans.items()}
    summ = interproc.summarize([facts for _c, _called, facts in lifted.values()])
    assert bool(summ[f].uses & L.xbit(19)) != owned, hex(summ[f].uses)


@pytest.mark.parametrize("above", [True, False])
def test_a_save_above_the_entrys_sp_is_never_dropped(above):
    # f: str x19, [sp, #8] (above: the caller's frame; else sub sp, sp, #16 first: its own) ;
    #    mov x19, x0 ; bl other ; add x0, x0, x19 ; ldr x19, [sp, #8] ; (add sp, sp, #16) ; ret.
    # A real prologue saves into the frame it made, below the entry's SP.  A store of a
    # register's entry value above it is what a false entry (a label inside another function
    # that analysis took for one) makes of that function's spill, whose reload may lie in
    # another fragment: its "save" stays.
    f, other = 0x400000, 0x400200
    body = [0xF90007F3, 0xAA0003F3, None, 0x8B130000, 0xF94007F3, 0xD65F03C0]
    if not above:
        body = [0xD10043FF, *body[:-1], 0x910043FF, 0xD65F03C0]  # sub sp, sp, #16 ... add sp, sp, #16
    at = body.index(None)
    body[at] = 0x94000000 | ((other - (f + 4 * at)) >> 2)
    code = _lift_program({f: body, other: [0xD65F03C0]})[f]
    fn = code[code.index(f"NxRet F_{f:x}(") :]
    assert ("S64(sp + 0x8ull, (u64)x19)" in fn) == above, fn[:1500]
