"""Registers written through to ``NxCpu`` (interproc.write_through, the ``@@WT@@`` points).

A caller-saved register that call sites store only because their callees may read it is kept
current in ``NxCpu`` where the function writes it, when such call sites are at least as many as
the writes: the call sites then store nothing of it and the C local dies after its own last
read.  Here on a hand-encoded loop that writes X2 once and calls two functions that read it,
and X3 (the loop counter: written twice, read by one callee) which stays a plain local: the
built C stores X2 after its write and at no call site, still stores X3 at its call site, and
the lifted loop leaves in X0 what Unicorn running the same AArch64 code leaves."""

from __future__ import annotations

import re
import sys
from pathlib import Path


from recompiler.analyse import Memory, analyse

if str(Path(__file__).resolve().parent) not in sys.path:
    sys.path.insert(0, str(Path(__file__).resolve().parent))
from bundle_driver import RET, build_bundle, function_text, image, movz, run_function, unicorn_regs, unicorn_run  # noqa: E402

BASE = 0x400000
FUNC, A, B = BASE, BASE + 0x100, BASE + 0x200
X0_IN = 0x1234


def _bl(at: int, to: int) -> int:
    return 0x94000000 | (((to - at) >> 2) & 0x3FFFFFF)


def _b_ne(at: int, to: int) -> int:
    return 0x54000001 | ((((to - at) >> 2) & 0x7FFFF) << 5)


def _program() -> dict[int, int]:
    """func: for x3 = 5..1 { x2 = x0 + x3; A(); B(); }.  A: x0 += x2.  B: x0 ^= x2 << 1, x0 += x3."""
    f = FUNC
    return {
        f: 0xA9BF7BFD,  # stp x29, x30, [sp, #-16]!
        f + 4: movz(3, 5),  # mov x3, #5
        f + 8: 0x8B030002,  # loop: add x2, x0, x3
        f + 12: _bl(f + 12, A),
        f + 16: _bl(f + 16, B),
        f + 20: 0xF1000463,  # subs x3, x3, #1
        f + 24: _b_ne(f + 24, f + 8),  # b.ne loop
        f + 28: 0xA8C17BFD,  # ldp x29, x30, [sp], #16
        f + 32: RET,
        A: 0x8B020000,  # add x0, x0, x2
        A + 4: RET,
        B: 0xCA020400,  # eor x0, x0, x2, lsl #1
        B + 4: 0x8B030000,  # add x0, x0, x3
        B + 8: RET,
    }


def _unicorn_x0() -> int:
    """X0 after FUNC returns, run by Unicorn (the oracle) from X0 = X0_IN."""
    done = 0x500000
    return unicorn_regs(unicorn_run(image(_program(), BASE), BASE, FUNC, done, X0=X0_IN, X30=done), "X0")[0]


def test_a_register_read_only_by_callees_is_written_through(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("NXRECOMP_RECOMPILER_COMMENTS", "1")
    prog = analyse(Memory([(BASE, 0x1000, image(_program(), BASE), True)]), FUNC, {FUNC, A, B}, [], {})
    bundle = build_bundle(tmp_path, prog)
    body = function_text(bundle, f"F_{FUNC:x}")
    # the write of X2 stores it at once ...
    write = [line for line in body.splitlines() if re.match(r"  x2 = (?!s->)", line)]
    assert write and all("s->x[2] = x2;" in line for line in write), write
    # ... so neither call site stores it; X3 (two writes, one reading call site) is stored at B's
    calls = {int(m.group(1), 16): m.group(2) for m in re.finditer(r"x30 = (0x[0-9a-f]+)ull; (do \{.*?\} while \(0\));", body)}
    assert set(calls) == {FUNC + 16, FUNC + 20}, calls
    assert all("s->x[2]" not in st for st in calls.values()), calls
    assert "s->x[3] = x3;" in calls[FUNC + 20], calls
    assert not any(re.search(r"\bx3 = [^;]*; s->x\[3\] = x3;", line) for line in body.splitlines()), body

    driver = (
        r"""
    static NxCpu s;
    s.x[0] = %#x; s.x[30] = 0x1234; s.sp = 0x10008000;
    nx_enter(&s, fn);
    printf("%%llx %%llx\n", (unsigned long long)s.pc, (unsigned long long)s.x[0]);
"""
        % X0_IN
    )
    pc, x0 = run_function(tmp_path, bundle, FUNC, driver)[0].split()
    assert int(pc, 16) == 0x1234
    assert int(x0, 16) == _unicorn_x0()
