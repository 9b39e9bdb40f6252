"""Computed gotos through a table the program cannot write (``analyse.Analyser._direct``,
``FunctionEmitter.direct_goto``): Lua's interpreter loads each handler's address from a
``const`` array indexed by a masked opcode register; the lifted BR indexes a host label array
with that register instead, while the table base register still holds the value analysis
found for it, and takes the guest's own load and address lookup otherwise.

Here on a hand-encoded dispatcher: ``x28`` set to a read-only table at entry, a block that
masks ``x27`` and branches through ``[x28, x9, lsl #3]``, one handler that points ``x28`` at a
writable table and dispatches again.  Analysis records the direct table only for the read-only
one; the built code, run from a C driver, reaches every handler through both paths, and the
entry that is not code stops with a fatal error naming the entry and the address."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from recompiler import cc
from recompiler.analyse import Memory, analyse
from recompiler.build import RUNTIME_DIR

if str(Path(__file__).resolve().parent) not in sys.path:
    sys.path.insert(0, str(Path(__file__).resolve().parent))
from bundle_driver import _MAIN, RET, build_bundle, run_function  # noqa: E402

BASE = 0x30000000  # far from the driver's own image
CODE, RODATA, DATA = BASE, BASE + 0x1000, BASE + 0x2000
TABLE, TABLE2 = RODATA + 0x10, DATA
F = CODE
DISPATCH, RELOAD = F + 0x10, F + 0x9C
H = [F + 0x1C + 8 * k for k in range(16)]  # handler k: x0 += k + 1; return
NOT_CODE = RODATA  # a table entry pointing into data
# index -> target: 16 handlers (so the BR takes a label array), the reload, then data
ENTRIES = (*H, RELOAD, *[NOT_CODE] * 15)
ENTRIES2 = (*reversed(H), *[NOT_CODE] * 16)


def _b(at: int, to: int) -> int:
    return 0x14000000 | (((to - at) >> 2) & 0x3FFFFFF)


def _program() -> dict[int, int]:
    prog = {
        F: 0xB000001C,  # adrp x28, RODATA (one page up)
        F + 4: 0x9100439C,  # add x28, x28, #0x10: TABLE
        F + 8: _b(F + 8, DISPATCH),
        F + 12: 0xD503201F,  # nop
        DISPATCH: 0x92401369,  # and x9, x27, #0x1f
        DISPATCH + 4: 0xF8697B88,  # ldr x8, [x28, x9, lsl #3]
        DISPATCH + 8: 0xD61F0100,  # br x8
        RELOAD: 0xAA0303FC,  # mov x28, x3: another table
        RELOAD + 4: 0xAA0403FB,  # mov x27, x4
        RELOAD + 8: _b(RELOAD + 8, DISPATCH),
    }
    for k, h in enumerate(H):
        prog[h], prog[h + 4] = 0x91000000 | (k + 1) << 10, RET  # add x0, x0, #k+1
    return prog


def _tables() -> bytes:
    """RODATA and DATA as the driver maps them."""
    out = bytearray(0x2000)
    for at, entries in ((TABLE, ENTRIES), (TABLE2, ENTRIES2)):
        for k, v in enumerate(entries):
            out[at - RODATA + 8 * k : at - RODATA + 8 * k + 8] = v.to_bytes(8, "little")
    return bytes(out)


def _memory(read_only: bool) -> Memory:
    code = bytearray(0x1000)
    for a, v in _program().items():
        code[a - CODE : a - CODE + 4] = v.to_bytes(4, "little")
    t = _tables()
    segs = [(CODE, 0x1000, bytes(code), True), (RODATA, 0x1000, t[:0x1000], False), (DATA, 0x1000, t[0x1000:], False)]
    return Memory(segs, [(CODE, 0x1000), (RODATA, 0x1000)] if read_only else [(CODE, 0x1000)])


def test_analysis_indexes_only_a_read_only_table_directly() -> None:
    plan = analyse(_memory(True), F, {F}, [], {}).functions[F]
    br = DISPATCH + 8
    assert plan.jump_tables[br] == [*H, RELOAD]
    d = plan.direct_tables[br]
    # every index the mask allows, those into data as None; the base checked at run time
    assert (d.reg, d.mask, d.targets, d.guards) == (27, 0x1F, (*H, RELOAD, *[None] * 15), ((28, TABLE),))
    plan = analyse(_memory(False), F, {F}, [], {}).functions[F]
    assert plan.jump_tables[br] == [*H, RELOAD] and not plan.direct_tables


DRIVER = r"""
    void *m = mmap((void *)0x%xull, 0x2000, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
    if (m != (void *)0x%xull) return 5;
    static const unsigned char tables[] = { %s };
    __builtin_memcpy(m, tables, sizeof tables);
    unsigned long long cases[][3] = { %s };
    for (unsigned k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        static NxCpu s;
        s.x[0] = 10; s.x[27] = cases[k][0]; s.x[3] = cases[k][1]; s.x[4] = cases[k][2];
        s.x[30] = 0x1234; s.sp = 0x10008000;
        nx_enter(&s, fn);
        printf("%%llu\n", (unsigned long long)s.x[0]);
        fflush(stdout);
    }
"""


def _driver(cases: list[tuple[int, int, int]]) -> str:
    body = DRIVER % (RODATA, RODATA, ", ".join(str(b) for b in _tables()), ", ".join("{%#x, %#x, %#x}" % c for c in cases))
    return body


@pytest.fixture(scope="module")
def bundle(tmp_path_factory) -> Path:
    return build_bundle(tmp_path_factory.mktemp("direct"), analyse(_memory(True), F, {F}, [], {}))


def test_the_lifted_jump_takes_the_label_array_while_the_base_holds(bundle: Path, tmp_path: Path) -> None:
    text = "".join(p.read_text() for p in (bundle / "src").glob("*.c"))
    assert f"if (LIKELY(x28 == {TABLE:#x}ull)) goto *_dtab0[x27 & 0x1full];" in text
    assert "[31] = &&JF_0" in text and "nx_bad_table_entry(s, x27 & 0x1full" in text
    # x27 (masked), then the writable table through the general path: the reload sets x28 = x3
    # and x27 = x4 (the second table holds the handlers in reverse)
    cases = [(0, 0, 0), (7, 0, 0), (0x23, 0, 0), (16, TABLE2, 0), (16, TABLE2, 5), (0x30, TABLE2, 0x22)]
    got = run_function(tmp_path, bundle, F, _driver(cases))
    assert got == ["11", "18", "14", "26", "21", "24"], got


def test_an_entry_that_is_not_code_is_a_fatal_error(bundle: Path, tmp_path: Path) -> None:
    src, exe = tmp_path / "d.c", tmp_path / "d"
    src.write_text(_MAIN.replace("BODY", _driver([(20, 0, 0)])))
    r = subprocess.run([*cc.compiler(), str(src), "-o", str(exe), f"-I{RUNTIME_DIR}", "-ldl"], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr[-2000:]
    r = subprocess.run([str(exe), str(bundle / "game.so"), hex(F)], capture_output=True, text=True, timeout=60)
    assert r.returncode == 134 and r.stdout == "", (r.returncode, r.stdout, r.stderr)
    first = r.stderr.splitlines()[0]
    assert "no lifted code (entry 20 of a computed goto's table" in first and f"guest pc {NOT_CODE:#x}" in first, first
