"""An indirect jump with an unexpected X30 keeps the frame stores of the functions it may reach,
not of every function (``interproc.frame_keepers`` with the closed functions,
``interproc.narrow_frames``).

Hand-encoded AArch64: FUNC (the entry: open) calls NORMAL (closed: entered only by that direct
call), which calls LEAF; JUMPER loads X30 from memory and jumps through X1 (a jump out whose X30
is not surely its entry's: ``FnLive.jump_abnormal``), which made every function's returns store
SP and X29.  With the closed functions known NORMAL's returns leave them out (a lifted caller
keeps them in its locals) while FUNC's, which an indirect jump may reach, keep them; with
``recompiler.no_opt = frames`` both keep them.  The registers after the return are Unicorn's
either way."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

from recompiler.analyse import Memory, analyse
from recompiler.analysis.callers import closed_entries
from recompiler.lift.emitter import SIG

if str(Path(__file__).resolve().parent) not in sys.path:
    sys.path.insert(0, str(Path(__file__).resolve().parent))
from bundle_driver import RET, STACK_TOP, build_bundle, image, run_function, unicorn_regs, unicorn_run  # noqa: E402

BASE = 0x400000
FUNC, NORMAL, LEAF, JUMPER = (BASE + n * 0x100 for n in range(4))
LR, FP = 0x1234, 0x2929
STP_FP, MOV_FP, LDP_FP = 0xA9BF7BFD, 0x910003FD, 0xA8C17BFD  # stp x29, x30, [sp, #-16]! ; mov x29, sp ; ldp


def _bl(at: int, to: int) -> int:
    return 0x94000000 | (((to - at) >> 2) & 0x3FFFFFF)


PROG = {
    FUNC: [STP_FP, MOV_FP, _bl(FUNC + 8, NORMAL), LDP_FP, RET],
    NORMAL: [STP_FP, MOV_FP, _bl(NORMAL + 8, LEAF), LDP_FP, RET],
    LEAF: [0x91000400, RET],  # add x0, x0, #1
    JUMPER: [0xF940001E, 0xF9400401, 0xD61F0020],  # ldr x30, [x0] ; ldr x1, [x0, #8] ; br x1
}
WORDS = {a + 4 * i: w for a, ws in PROG.items() for i, w in enumerate(ws)}


def _unicorn(x0: int) -> list[str]:
    mu = unicorn_run(image(WORDS, BASE), BASE, FUNC, LR, X0=x0, X29=FP, X30=LR)
    return [" ".join(f"{v:x}" for v in unicorn_regs(mu, "PC", "X0", "X29", "SP"))]


DRIVER = f"""
    static NxCpu s;
    s.x[0] = 40; s.x[29] = {FP:#x}ull; s.x[30] = {LR:#x}ull; s.sp = {STACK_TOP:#x}ull;
    nx_enter(&s, fn);
    printf("%llx %llx %llx %llx\\n", (unsigned long long)s.pc, (unsigned long long)s.x[0],
           (unsigned long long)s.x[29], (unsigned long long)s.sp);
"""


def _returns(text: str, entry: int) -> list[str]:
    f = text[text.index(f"NxRet F_{entry:x}{SIG} {{") :]
    f = f[: f.index("\n}\n")]
    # (NX_RF: the resume twin's stores, empty in F_x)
    return [re.sub(r"NX_RF\([^)]*\)", "", line) for line in f.splitlines() if "return (NxRet){" in line]


@pytest.mark.parametrize("off", [False, True], ids=["closed", "no_opt"])
def test_an_abnormal_jump_keeps_only_the_open_functions_frame_stores(tmp_path: Path, monkeypatch, off: bool) -> None:
    if off:
        monkeypatch.setenv("NXRECOMP_RECOMPILER_NO_OPT", "frames")
    mem = Memory([(BASE, 0x1000, image(WORDS, BASE), True)])
    program = analyse(mem, FUNC, set(PROG), [], {})
    assert set(PROG) <= set(program.functions)
    program.closed = closed_entries(mem, program.functions, {FUNC})
    assert NORMAL in program.closed and FUNC not in program.closed
    bundle = build_bundle(tmp_path, program)
    text = "".join(p.read_text() for p in (bundle / "src").glob("shard_*.c"))
    normal, func = _returns(text, NORMAL), _returns(text, FUNC)
    assert normal and func
    assert all("s->sp = sp;" in r and "s->x[29] = x29;" in r for r in func), func
    assert all(("s->sp =" in r) == off and ("s->x[29] =" in r) == off for r in normal), normal
    assert run_function(tmp_path, bundle, FUNC, DRIVER) == _unicorn(40) == [f"{LR:x} 29 {FP:x} {STACK_TOP:x}"]
