"""SP and X29 at lifted returns, and the returned-pc check at call sites (issue 29, the return
path: ``interproc.frame_stores``, ``interproc.always_return``).

A return that surely goes back to its caller with the caller's SP and X30 (SP followed from the
entry, X30 unwritten or loaded back from its save slot) leaves SP and X29 out of ``NxCpu``: a
lifted caller has them in its locals, and the runtime that entered the function stores the ones
it passed (``nx_enter``); the function's resume twin, whose caller is the run loop, still writes
them back.  A return that is not surely normal (here a longjmp-like one that loads X30 and SP
from memory) writes them back, and the frame it lands in is found by that SP.  A direct call of
a function that surely returns to its return address has no pc check after it.

Hand-encoded AArch64 (Arm ARM encodings), run lifted from a C driver and in Unicorn from the
same bytes and registers: the registers after the return must agree."""

from __future__ import annotations

import re
import sys
from pathlib import Path

from recompiler.analyse import Memory, analyse
from recompiler.build import build
from recompiler.lift.emitter import SIG

if str(Path(__file__).resolve().parent) not in sys.path:
    sys.path.insert(0, str(Path(__file__).resolve().parent))
from bundle_driver import RET, STACK_TOP, image, run_function, unicorn_regs, unicorn_run  # noqa: E402

BASE = 0x400000
FUNC, NORMAL, LEAF, FUNC2, SAVE, JUMPER = (BASE + n * 0x100 for n in range(6))
LR, FP = 0x1234, 0x2929  # the return address and frame pointer the caller passes
STP_FP = 0xA9BF7BFD  # stp x29, x30, [sp, #-16]!
STP_FP48 = 0xA9BD7BFD  # stp x29, x30, [sp, #-48]!
MOV_FP = 0x910003FD  # mov x29, sp
LDP_FP = 0xA8C17BFD  # ldp x29, x30, [sp], #16
LDP_FP48 = 0xA8C37BFD  # ldp x29, x30, [sp], #48


def _bl(at: int, to: int) -> int:
    return 0x94000000 | (((to - at) >> 2) & 0x3FFFFFF)


def _cbnz_x0(at: int, to: int) -> int:
    return 0xB5000000 | ((((to - at) >> 2) & 0x7FFFF) << 5)


def _code(at: int, words: list) -> dict[int, int]:
    return {at + 4 * n: (w(at + 4 * n) if callable(w) else w) for n, w in enumerate(words)}


def _program() -> dict[int, int]:
    """FUNC: a frame record, calls of LEAF and of NORMAL (a frame record and a call of LEAF),
    both of which return normally.  FUNC2: a setjmp-like SAVE (stores its return address, SP
    and X29 into a buffer on FUNC2's frame, returns 0), a call of NORMAL, then of JUMPER, which
    returns to SAVE's return address with SP and X29 from the buffer and X0 = 5 (a longjmp);
    FUNC2 then returns X0 to its caller."""
    done = FUNC2 + 4 * 9
    return {
        **_code(FUNC, [STP_FP, MOV_FP, lambda a: _bl(a, LEAF), lambda a: _bl(a, NORMAL), LDP_FP, RET]),
        **_code(NORMAL, [STP_FP, MOV_FP, lambda a: _bl(a, LEAF), LDP_FP, RET]),
        **_code(LEAF, [0x91000400, RET]),  # add x0, x0, #1
        **_code(
            FUNC2,
            [
                STP_FP48,
                MOV_FP,
                0x910043E0,  # add x0, sp, #16
                lambda a: _bl(a, SAVE),
                lambda a: _cbnz_x0(a, done),
                lambda a: _bl(a, NORMAL),
                0x910043E0,  # add x0, sp, #16
                lambda a: _bl(a, JUMPER),
                0xD2800000,  # mov x0, #0 (not reached)
                LDP_FP48,  # done
                RET,
            ],
        ),
        **_code(
            SAVE,
            [
                0xF900001E,  # str x30, [x0]
                0x910003E1,  # mov x1, sp
                0xF9000401,  # str x1, [x0, #8]
                0xF900081D,  # str x29, [x0, #16]
                0xD2800000,  # mov x0, #0
                RET,
            ],
        ),
        **_code(
            JUMPER,
            [
                0xF940001E,  # ldr x30, [x0]
                0xF9400401,  # ldr x1, [x0, #8]
                0x9100003F,  # mov sp, x1
                0xF940081D,  # ldr x29, [x0, #16]
                0xD28000A0,  # mov x0, #5
                RET,
            ],
        ),
    }


def _unicorn(entry: int, x0: int) -> list[str]:
    """pc, X0, X29 and SP when ``entry`` comes back to LR, run in Unicorn."""
    mu = unicorn_run(image(_program(), BASE), BASE, entry, LR, X0=x0, X29=FP, X30=LR)
    return [" ".join(f"{v:x}" for v in unicorn_regs(mu, "PC", "X0", "X29", "SP"))]


def _build(tmp_path: Path, monkeypatch) -> Path:
    monkeypatch.setenv("NXRECOMP_NXRECOMP_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("NXRECOMP_RECOMPILER_JOBS", "2")
    prog = analyse(
        Memory([(BASE, 0x1000, image(_program(), BASE), True)]), FUNC, {FUNC, NORMAL, LEAF, FUNC2, SAVE, JUMPER}, [], {}
    )
    build(prog, tmp_path / "bundle")
    return tmp_path / "bundle"


def _function(text: str, name: str) -> str:
    f = text[text.index(f"NxRet {name}{SIG} {{") :]
    return f[: f.index("\n}\n")]


def _returns(fn: str) -> list[str]:
    return [line for line in fn.splitlines() if "return (NxRet){" in line]


DRIVER = r"""
    static NxCpu s;
    s.x[0] = X0; s.x[29] = FP; s.x[30] = LR; s.sp = STACK_TOP;
    nx_enter(&s, fn);
    printf("%llx %llx %llx %llx\n", (unsigned long long)s.pc, (unsigned long long)s.x[0],
           (unsigned long long)s.x[29], (unsigned long long)s.sp);
"""


def _run(tmp_path: Path, bundle: Path, entry: int, x0: int) -> list[str]:
    body = DRIVER
    for k, v in (("STACK_TOP", STACK_TOP), ("X0", x0), ("FP", FP), ("LR", LR)):
        body = body.replace(k, f"{v:#x}ull")
    return run_function(tmp_path, bundle, entry, body)


def test_normal_returns_leave_sp_and_x29_to_the_caller(tmp_path: Path, monkeypatch) -> None:
    bundle = _build(tmp_path, monkeypatch)
    text = "".join(p.read_text() for p in (bundle / "src").glob("*.c"))
    normal, twin = _function(text, f"F_{NORMAL:x}"), _function(text, f"R_{NORMAL:x}")
    # NORMAL moves SP and writes X29 (its frame record), and returns normally: F_x stores
    # neither at its return, its twin (entered from the run loop) both
    plain = [re.sub(r"NX_RF\([^)]*\)", "", r) for r in _returns(normal)]
    assert plain and not any("s->sp =" in r or "s->x[29] =" in r for r in plain), plain
    assert "#define NX_RF(...) __VA_ARGS__" in twin and "#define NX_RF(...)\n" in normal
    assert all("NX_RF(s->sp = sp; s->x[29] = x29;)" in r for r in _returns(normal))
    # JUMPER's return is not surely normal (X30 and SP loaded from memory): it writes them back
    jumper = _function(text, f"F_{JUMPER:x}")
    assert all("s->sp = sp;" in r and "s->x[29] = x29;" in r for r in _returns(jumper)), _returns(jumper)
    # no pc check after the calls of LEAF, NORMAL and SAVE; the one after JUMPER's stays
    func, func2 = _function(text, f"F_{FUNC:x}"), _function(text, f"F_{FUNC2:x}")
    checks = re.findall(r"_r\.pc != (0x[0-9a-f]+)ull", func + func2)
    assert [int(c, 16) for c in checks] == [FUNC2 + 4 * 8], checks
    # run: the registers the caller finds after the return are the architecture's
    assert _run(tmp_path, bundle, FUNC, 40) == _unicorn(FUNC, 40) == [f"{LR:x} 2a {FP:x} {STACK_TOP:x}"]
    assert _run(tmp_path, bundle, FUNC2, 0) == _unicorn(FUNC2, 0) == [f"{LR:x} 5 {FP:x} {STACK_TOP:x}"]
