"""Cold paths out of the lifted function's C (recompiler/lift/cold.py): an instruction from which
every way on ends in a call of a function that never returns (or a fatal trap) is left out of
``F_x``; a branch or fall into such a path is a cold exit that stores what is live there and
tail-calls the twin ``R_x``, which runs the path with every register loaded from ``NxCpu``.

The analysis on hand-encoded functions (which instructions are cold: a loop with only cold ways
out is not, a call whose landing pad goes back to hot code is not, a path where NZCV are live
stays in ``F_x``), and a run of both paths of one function against Unicorn: the hot path
returns, the cold path reads values the hot path computed (a callee-saved register, a
caller-saved one, a V register) and calls a "noreturn" callee that leaves to another address,
as an unwinder's jump to a landing pad does.  The whole mechanism on a C++ program built at
test time is tests/cpu_host/test_cold_paths.py."""

from __future__ import annotations

import sys
from pathlib import Path

from recompiler.analyse import Memory, analyse
from recompiler.lift import cold
from recompiler.lift.emitter import FunctionEmitter
from recompiler.lift.forms import HANDLERS

if str(Path(__file__).resolve().parent) not in sys.path:
    sys.path.insert(0, str(Path(__file__).resolve().parent))
from bundle_driver import RET, build_bundle, function_text, image, run_function, unicorn_regs, unicorn_run  # noqa: E402

BASE = 0x400000
MAIN, DIE, LOOP, PAD, FLAGS = BASE, BASE + 0x100, BASE + 0x200, BASE + 0x300, BASE + 0x400
AWAY = 0x500000  # where DIE "returns": not its caller's return address


def _bl(at: int, to: int) -> int:
    return 0x94000000 | (((to - at) >> 2) & 0x3FFFFFF)


def _b(at: int, to: int) -> int:
    return 0x14000000 | (((to - at) >> 2) & 0x3FFFFFF)


def _cbnz(at: int, to: int, rt: int) -> int:
    return 0xB5000000 | ((((to - at) >> 2) & 0x7FFFF) << 5) | rt


def _bcond(at: int, to: int, cond: int) -> int:
    return 0x54000000 | ((((to - at) >> 2) & 0x7FFFF) << 5) | cond


COLD = MAIN + 40


def _program() -> dict[int, int]:
    m = MAIN
    return {
        # main(x0, x1): x19 = x0 + 3, x2 = 2 * x0, d0 = x0; x1 == 0: return x19 + x2
        m: 0xA9BE7BFD,  # stp x29, x30, [sp, #-32]!
        m + 4: 0xF9000BF3,  # str x19, [sp, #16]
        m + 8: 0x91000C13,  # add x19, x0, #3
        m + 12: 0x8B000002,  # add x2, x0, x0
        m + 16: 0x9E670000,  # fmov d0, x0
        m + 20: _cbnz(m + 20, COLD, 1),  # cbnz x1, COLD
        m + 24: 0x8B020260,  # add x0, x19, x2
        m + 28: 0xF9400BF3,  # ldr x19, [sp, #16]
        m + 32: 0xA8C27BFD,  # ldp x29, x30, [sp], #32
        m + 36: RET,
        # the cold path: x0 = x19 + (x2 << 4) + d0, then DIE (taken for a noreturn callee)
        COLD: 0x8B021263,  # add x3, x19, x2, lsl #4
        COLD + 4: 0x9E660004,  # fmov x4, d0
        COLD + 8: 0x8B040060,  # add x0, x3, x4
        COLD + 12: _bl(COLD + 12, DIE),
        # DIE: x0 += x0, and away to AWAY (an unwinder's jump to a landing pad, in effect)
        DIE: 0x8B000000,  # add x0, x0, x0
        DIE + 4: 0xD2A00A1E,  # movz x30, #0x50, lsl #16
        DIE + 8: RET,
        # a loop whose only way out is DIE: not cold (a path may stay in it)
        LOOP: 0xB4000040,  # cbz x0, LOOP+8
        LOOP + 4: _b(LOOP + 4, LOOP),
        LOOP + 8: _bl(LOOP + 8, DIE),
        # a noreturn call whose landing pad goes back to a return: not cold; PAD+4 is
        PAD: 0xB4000080,  # cbz x0, PAD+16
        PAD + 4: _bl(PAD + 4, DIE),  # (its pad: PAD+8)
        PAD + 8: 0xD2800020,  # mov x0, #1
        PAD + 12: RET,
        PAD + 16: RET,
        # NZCV live into a path that ends in DIE: kept in F_x up to the reader
        FLAGS: 0xF100141F,  # cmp x0, #5
        FLAGS + 4: _cbnz(FLAGS + 4, FLAGS + 12, 1),  # cbnz x1, FLAGS+12
        FLAGS + 8: RET,
        FLAGS + 12: _bcond(FLAGS + 12, FLAGS + 24, 0),  # b.eq FLAGS+24 (reads the cmp's Z)
        FLAGS + 16: 0xD2800020,  # mov x0, #1
        FLAGS + 20: _bl(FLAGS + 20, DIE),
        FLAGS + 24: 0xD2800040,  # mov x0, #2
        FLAGS + 28: _bl(FLAGS + 28, DIE),
    }


def _analysed():
    prog = analyse(Memory([(BASE, 0x1000, image(_program(), BASE), True)]), MAIN, {MAIN, DIE, LOOP, PAD, FLAGS}, [], {})
    # DIE returns (to AWAY): taken here for a function that never returns, as analysis takes
    # __cxa_throw, whose unwinding also leaves to another address
    for f in (MAIN, LOOP, PAD, FLAGS):
        plan = prog.functions[f]
        plan.noreturn_calls = {i.addr for i in plan.insns if i.name == "BL"}
    prog.functions[PAD].landing_pads = {PAD + 4: PAD + 8}
    return prog


def _cold(prog, entry: int) -> tuple[set[int], list[int], str]:
    """(cold addresses, cold entries, the function's C) of ``entry`` lifted for a whole program;
    not the zero word after its last call (analysis took the call for one that returns: a fatal
    trap, cold, that nothing reaches)."""
    em = FunctionEmitter(prog.functions[entry], set(prog.functions))
    text = em.emit(HANDLERS, defer=True).render()
    addr = [r.addr for r in em.records]
    last = max(i.addr for i in prog.functions[entry].insns if i.name == "BL")
    return {addr[j] for j in em.cold if addr[j] <= last}, [addr[j] for j in em.cold_entries if addr[j] <= last], text


def test_paths_that_end_in_noreturn_calls_are_cold():
    prog = _analysed()
    cold_addrs, entries, text = _cold(prog, MAIN)
    assert cold_addrs == {COLD, COLD + 4, COLD + 8, COLD + 12}
    assert entries == [COLD]
    f_x = text[text.index(f"NxRet F_{MAIN:x}(") :]
    f_x = f_x[: f_x.index("\n}\n")]
    assert f"MUSTTAIL return R_{MAIN:x}(s, x0, x1, x30, sp, x29)" in f_x and f"s->pc = {COLD:#x}ull" in f_x
    assert f"F_{DIE:x}(" not in f_x, "the cold path's call stayed in F_x"
    assert f"case {COLD:#x}ull: goto L_{COLD:x};" in text, "the twin has no case for the cold path"


def test_a_loop_or_a_pad_back_to_hot_code_is_not_cold():
    prog = _analysed()
    assert _cold(prog, LOOP)[0] == {LOOP + 8}  # the loop itself stays in F_x
    assert _cold(prog, PAD)[0] == set()  # the call's pad returns: no cold path


def test_a_path_with_nzcv_live_stays_in_f_x_up_to_the_reader():
    cold_addrs, entries, _text = _cold(_analysed(), FLAGS)
    assert FLAGS + 12 not in cold_addrs
    assert cold_addrs == {FLAGS + 16, FLAGS + 20, FLAGS + 24, FLAGS + 28}
    assert entries == [FLAGS + 16, FLAGS + 24]


def test_no_opt_cold_keeps_every_path(monkeypatch):
    monkeypatch.setenv("NXRECOMP_RECOMPILER_NO_OPT", "cold")
    assert _cold(_analysed(), MAIN)[0] == set()


def test_the_records_without_a_cold_path_are_unchanged():
    # the entry itself cold: nothing to keep apart (every path would go to the twin)
    prog = _analysed()
    em = FunctionEmitter(prog.functions[DIE], set(prog.functions))
    em.emit(HANDLERS, defer=True)
    assert cold.cold_records(em) == set()


def _unicorn(x0: int, x1: int) -> tuple[int, int]:
    mu = unicorn_run(image(_program(), BASE), BASE, MAIN, AWAY if x1 else 0x600000, X0=x0, X1=x1, X19=0x77, X30=0x600000)
    return tuple(unicorn_regs(mu, "PC", "X0"))


def test_both_paths_run_as_unicorn_runs_them(tmp_path: Path) -> None:
    prog = _analysed()
    bundle = build_bundle(tmp_path, prog)
    assert f"F_{DIE:x}(" not in function_text(bundle, f"F_{MAIN:x}")
    for x0, x1 in ((0x1234, 0), (0x1234, 1), (0x55, 7)):
        driver = r"""
    static NxCpu s;
    s.x[0] = %#x; s.x[1] = %#x; s.x[19] = 0x77; s.x[30] = 0x600000; s.sp = 0x10008000;
    nx_enter(&s, fn);
    printf("%%llx %%llx\n", (unsigned long long)s.pc, (unsigned long long)s.x[0]);
""" % (x0, x1)
        pc, r0 = run_function(tmp_path, bundle, MAIN, driver)[0].split()
        assert (int(pc, 16), int(r0, 16)) == _unicorn(x0, x1), (x0, x1)
