"""Results handed back only where a caller reads them (interproc.result_uses, analysis.callers).

A function entered only by direct calls and tail calls from lifted code (``Program.closed``)
stores at its returns only the results (X1, V0-V3) some caller reads after the call, or a
function tail-calling it hands back.  Here on a hand-encoded program: a caller calls ``mid``,
which tail-calls a leaf that returns X0, X1 and D0; the caller reads X0 and, per case, X1
and/or D0.  The leaf's return stores what the caller reads and nothing else, unless the leaf's
address is taken (``adr``: an unknown caller may read any result), and the built code's X0 is
Unicorn's."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from unicorn import UC_ARCH_ARM64, UC_MODE_ARM, Uc
from unicorn.arm64_const import UC_ARM64_REG_SP, UC_ARM64_REG_X0, UC_ARM64_REG_X30

from recompiler.analyse import Memory, analyse
from recompiler.analysis.callers import closed_entries
from recompiler.lift.emitter import SIG
from recompiler.lift.interproc import vcopy

if str(Path(__file__).resolve().parent) not in sys.path:
    sys.path.insert(0, str(Path(__file__).resolve().parent))
from bundle_driver import RET, STACK_TOP, build_bundle, movz, run_function  # noqa: E402

BASE = 0x400000
CALLER, MID, LEAF = BASE, BASE + 0x80, BASE + 0x100
LR = 0x1234


def _b(op: int, at: int, to: int) -> int:
    return op | (((to - at) >> 2) & 0x3FFFFFF)


def _program(reads: set[str], taken: bool) -> dict[int, int]:
    """caller: bl mid; x0 += x1 (reads "x1"), x0 += the bits of d0 (reads "d0"); ``adr x9,
    leaf`` where ``taken``; x1 = d0 = 0.  mid: b leaf.  leaf: x0 = 3, x1 = 4, d0 = 0x500."""
    c = [0xA9BF7BFD, _b(0x94000000, CALLER + 4, MID)]  # stp x29, x30, [sp, #-16]!; bl mid
    if "x1" in reads:
        c.append(0x8B010000)  # add x0, x0, x1
    if "d0" in reads:
        c += [0x9E660002, 0x8B020000]  # fmov x2, d0; add x0, x0, x2
    if taken:
        c.append(0x10000009 | (((LEAF - (CALLER + 4 * len(c))) & 3) << 29) | (((LEAF - (CALLER + 4 * len(c))) >> 2) << 5))
    # its own results are its own (it is the entry: its caller is unknown): x1 = 0, d0 = 0
    c += [movz(1, 0), 0x9E6703E0, 0xA8C17BFD, RET]  # fmov d0, xzr; ldp x29, x30, [sp], #16; ret
    prog = {CALLER + 4 * i: w for i, w in enumerate(c)}
    prog[MID] = _b(0x14000000, MID, LEAF)
    leaf = [movz(0, 3), movz(1, 4), movz(2, 0x500), 0x9E670040, RET]  # fmov d0, x2
    prog.update({LEAF + 4 * i: w for i, w in enumerate(leaf)})
    return prog


def _memory(prog: dict[int, int]) -> Memory:
    data = bytearray(0x1000)
    for a, v in prog.items():
        data[a - BASE : a - BASE + 4] = v.to_bytes(4, "little")
    return Memory([(BASE, len(data), bytes(data), True)])


def _unicorn_x0(prog: dict[int, int]) -> int:
    uc = Uc(UC_ARCH_ARM64, UC_MODE_ARM)
    uc.mem_map(0, 0x2000)
    uc.mem_map(BASE, 0x1000)
    uc.mem_map(0x10000000, 0x10000)
    for a, v in prog.items():
        uc.mem_write(a, v.to_bytes(4, "little"))
    uc.reg_write(UC_ARM64_REG_SP, STACK_TOP)
    uc.reg_write(UC_ARM64_REG_X30, LR)
    uc.emu_start(CALLER, LR)
    return uc.reg_read(UC_ARM64_REG_X0)


def _leaf_returns(text: str) -> str:
    f = text[text.index(f"NxRet F_{LEAF:x}{SIG} {{") :]
    f = f[: f.index("\n}\n")]
    rets = [line for line in f.splitlines() if line.strip().endswith("return (NxRet){ x30, x0 };")]
    assert rets, f
    return "\n".join(rets)


DRIVER = r"""
    static NxCpu s;
    s.x[30] = 0x1234; s.sp = 0x10008000;
    nx_enter(&s, fn);
    printf("%llx %llx\n", (unsigned long long)s.pc, (unsigned long long)s.x[0]);
"""


@pytest.mark.parametrize(
    "reads, taken, off",
    [
        (set(), False, False),
        ({"x1"}, False, False),
        ({"d0"}, False, False),
        ({"x1", "d0"}, False, False),
        (set(), True, False),
        (set(), False, True),
    ],
    ids=["none", "x1", "d0", "x1-d0", "taken", "no_opt"],
)
def test_leaf_hands_back_what_its_callers_read(tmp_path: Path, monkeypatch, reads: set[str], taken: bool, off: bool) -> None:
    """``off``: ``recompiler.no_opt = results`` (every result handed back, as before)."""
    if off:
        monkeypatch.setenv("NXRECOMP_RECOMPILER_NO_OPT", "results")
    prog = _program(reads, taken)
    mem = _memory(prog)
    program = analyse(mem, CALLER, {CALLER, MID, LEAF}, [], {})
    assert {CALLER, MID, LEAF} <= set(program.functions)
    program.closed = closed_entries(mem, program.functions, {CALLER})
    assert (LEAF in program.closed) == (not taken) and MID in program.closed and CALLER not in program.closed
    bundle = build_bundle(tmp_path, program)
    text = "".join(p.read_text() for p in (bundle / "src").glob("*.c"))
    rets = _leaf_returns(text)
    x1, v0 = "s->x[1] = x1" in rets, vcopy("s->v[0]", "v0") in rets
    assert (x1, v0) == (taken or off or "x1" in reads, taken or off or "d0" in reads), rets
    (line,) = run_function(tmp_path, bundle, CALLER, DRIVER)
    pc, x0 = line.split()
    assert (pc, int(x0, 16)) == (f"{LR:x}", _unicorn_x0(prog)), line


def test_data_word_and_uncovered_branch_open(tmp_path: Path) -> None:
    """A data word naming the leaf, or a ``bl`` to it from code no function covers, opens it."""
    prog = _program(set(), False)
    mem = _memory(prog)
    program = analyse(mem, CALLER, {CALLER, MID, LEAF}, [], {})
    assert LEAF in closed_entries(mem, program.functions, {CALLER})
    data = bytearray(mem.segments[0][2])
    data[0x800:0x808] = LEAF.to_bytes(8, "little")
    word_mem = Memory([(BASE, len(data), bytes(data), True)])
    assert LEAF not in closed_entries(word_mem, program.functions, {CALLER})
    data = bytearray(mem.segments[0][2])
    data[0x900:0x904] = _b(0x94000000, BASE + 0x900, LEAF).to_bytes(4, "little")
    bl_mem = Memory([(BASE, len(data), bytes(data), True)])
    assert LEAF not in closed_entries(bl_mem, program.functions, {CALLER})
