"""NZCV handed on at a direct jump into a false entry (interproc ``Summary.flags_in``).

Analysis takes every aligned data word that names code for a function pointer, so a label in
the middle of a function can become a function of its own (zsh's lexer: the string "LFD" in
its rodata read as the address of a ``b.eq`` right after a ``cmp``).  The function before it
then falls into it as a tail call.  A whole-program build hands a callee no flags (AAPCS64
leaves them undefined at a true entry), so the false entry read stale flags from ``NxCpu``,
took the wrong way, and zsh ignored every redirection with a descriptor number (``2> err``).

Here on hand-encoded code of that shape: ``main`` compares X0 with X1 and falls into
``inner`` (a hint, as a data word's target is), whose ``b.eq`` picks the result.  The built
C stores the flags before that tail call, and a C driver running the built code gets the
right result on both paths with ``NxCpu``'s flags set the other way beforehand (the old code
returned 1 for equal arguments).  A tail call of a true function (``truef``, which sets the
flags itself before reading them) stores none."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

from recompiler.analyse import Memory, analyse
from recompiler.build import build
from recompiler.lift.emitter import SIG

if str(Path(__file__).resolve().parent) not in sys.path:
    sys.path.insert(0, str(Path(__file__).resolve().parent))
from bundle_driver import RET, movz, run_function  # noqa: E402

BASE = 0x400000
MAIN, INNER = BASE, BASE + 4
MAIN2, TRUEF = BASE + 0x100, BASE + 0x200
CMP_X0_X1 = 0xEB01001F  # cmp x0, x1


def _bcond(at: int, to: int, cond: int) -> int:
    return 0x54000000 | ((((to - at) >> 2) & 0x7FFFF) << 5) | cond


def _program() -> dict[int, int]:
    """main: cmp x0, x1, then (inner) b.eq to x0 = 2, else x0 = 1.  main2: cmp x0, x1; b.ne
    truef (a tail call of a function that sets its own flags); else x0 = 7.  truef: x0 == 5."""
    return {
        MAIN: CMP_X0_X1,
        INNER: _bcond(INNER, MAIN + 16, 0),  # b.eq main+16
        MAIN + 8: movz(0, 1),
        MAIN + 12: RET,
        MAIN + 16: movz(0, 2),
        MAIN + 20: RET,
        MAIN2: CMP_X0_X1,
        MAIN2 + 4: _bcond(MAIN2 + 4, TRUEF, 1),  # b.ne truef
        MAIN2 + 8: movz(0, 7),
        MAIN2 + 12: RET,
        TRUEF: 0xF100141F,  # cmp x0, #5
        TRUEF + 4: 0x9A9F17E0,  # cset x0, eq
        TRUEF + 8: RET,
    }


def _memory() -> Memory:
    size = 0x1000
    data = bytearray(size)
    for a, v in _program().items():
        data[a - BASE : a - BASE + 4] = v.to_bytes(4, "little")
    return Memory([(BASE, size, bytes(data), True)])


def _function(text: str, entry: int) -> str:
    f = text[text.index(f"NxRet F_{entry:x}{SIG} {{") :]
    return f[: f.index("\n}\n")]


def _tail_stores(fn: str, callee: int) -> list[str]:
    """The store list before each direct tail call of ``callee`` in one function's C."""
    return re.findall(r"do \{([^}]*)\} while \(0\); MUSTTAIL return F_" + f"{callee:x}", fn)


@pytest.fixture(scope="module")
def bundle(tmp_path_factory) -> Path:
    tmp = tmp_path_factory.mktemp("false_entry")
    mp = pytest.MonkeyPatch()
    mp.setenv("NXRECOMP_NXRECOMP_CACHE_DIR", str(tmp / "cache"))
    mp.setenv("NXRECOMP_RECOMPILER_JOBS", "2")
    try:
        prog = analyse(_memory(), MAIN, {MAIN, INNER, MAIN2, TRUEF}, [], {})
        assert INNER in prog.functions and [i.addr for i in prog.functions[MAIN].insns] == [MAIN]
        out = tmp / "bundle"
        build(prog, out)
    finally:
        mp.undo()
    return out


def test_a_fall_into_a_false_entry_stores_the_flags(bundle: Path) -> None:
    text = "".join(p.read_text() for p in (bundle / "src").glob("*.c"))
    falls = _tail_stores(_function(text, MAIN), INNER)
    assert falls and all("FLAGS_STORE" in s for s in falls), falls
    calls = _tail_stores(_function(text, MAIN2), TRUEF)
    assert calls and not any("FLAGS_STORE" in s for s in calls), calls


@pytest.mark.parametrize("x0,x1,nzcv,want", [(3, 3, 0, 2), (3, 4, 0x40000000, 1), (5, 5, 0x40000000, 2)])
def test_the_false_entry_branches_on_the_callers_flags(bundle: Path, tmp_path: Path, x0, x1, nzcv, want) -> None:
    body = (
        f"    static NxCpu s; s.x[0] = {x0}; s.x[1] = {x1}; s.x[30] = 0x1234; s.sp = 0x10008000; "
        f"s.nzcv = {nzcv:#x};\n"
        "    nx_enter(&s, fn);\n"
        '    printf("%llx %llx\\n", (unsigned long long)s.pc, (unsigned long long)s.x[0]);\n'
    )
    (line,) = run_function(tmp_path, bundle, MAIN, body)
    assert line.split() == ["1234", f"{want:x}"], line


@pytest.mark.parametrize("x0,x1,want", [(3, 3, 7), (5, 4, 1), (6, 4, 0)])
def test_a_true_tail_call_still_runs_right(bundle: Path, tmp_path: Path, x0, x1, want) -> None:
    body = (
        f"    static NxCpu s; s.x[0] = {x0}; s.x[1] = {x1}; s.x[30] = 0x1234; s.sp = 0x10008000;\n"
        "    nx_enter(&s, fn);\n"
        '    printf("%llx %llx\\n", (unsigned long long)s.pc, (unsigned long long)s.x[0]);\n'
    )
    (line,) = run_function(tmp_path, bundle, MAIN2, body)
    assert line.split() == ["1234", f"{want:x}"], line


def test_a_data_word_naming_code_that_is_fallen_into_is_no_function() -> None:
    """Analysis itself (``analyse._merge_fallen_into``): a data word naming the ``b.eq`` that
    ``main``'s ``cmp`` falls into is no function entry (``main`` walks through it); one naming
    code after a ``nop`` (padding) or after a ``ret`` still is."""
    code = {
        **_program(),
        MAIN + 24: 0xD503201F,  # nop (padding)
        MAIN + 28: movz(0, 5),
        MAIN + 32: RET,
    }  # a function a data word names
    size = 0x1000
    text = bytearray(size)
    for a, v in code.items():
        text[a - BASE : a - BASE + 4] = v.to_bytes(4, "little")
    words = [INNER, MAIN + 28, MAIN + 16]  # after cmp, after nop, after ret
    data = b"".join(w.to_bytes(8, "little") for w in words)
    mem = Memory([(BASE, size, bytes(text), True), (BASE + 0x10000, 0x1000, data, False)])
    prog = analyse(mem, MAIN, {MAIN}, [], {})
    assert INNER not in prog.functions
    assert [i.addr for i in prog.functions[MAIN].insns][:2] == [MAIN, INNER]
    assert MAIN + 28 in prog.functions and MAIN + 16 in prog.functions
