"""The frame pointer X29 travels as a host argument (signature.SIG's ``a29``), as SP does.

Every frame record (``stp x29, x30, [sp, #-N]!``) reads X29, so before, each call site of a
function with one stored X29 to ``s->x[29]`` and the callee loaded it back (SQLite: 10,269 call
sites).  Here on a hand-encoded program (AAPCS64 frame records, Arm ARM encodings): the caller's
direct call site stores no X29 and passes it, the callee's declaration takes it from ``a29``
(no load of ``s->x[29]``), and a C driver running the built code finds the frame chain the
architecture gives (each callee reads its caller's frame pointer back from its own frame
record) and, after the return, X29 and SP as the caller left them in ``NxCpu``, also where the
function's NxCpu slots were overwritten on the way (an indirect call: nx_call_ind stores the
arguments there) and it leaves by a direct tail call to a leaf that writes neither.  (Before,
that tail call left the function's own frame SP in ``s->sp``: the call site of the indirect
call, which stored X29, and the final SP both fail on the old code.)"""

from __future__ import annotations

import re
import sys
from pathlib import Path

from recompiler.analyse import Memory, analyse
from recompiler.build import build
from recompiler.lift.emitter import ARGS, SIG

if str(Path(__file__).resolve().parent) not in sys.path:
    sys.path.insert(0, str(Path(__file__).resolve().parent))
from bundle_driver import RET, STACK_TOP, run_function  # noqa: E402

BASE = 0x400000
FUNC, CALLEE, IND, LEAF = BASE, BASE + 0x100, BASE + 0x200, BASE + 0x300
STP_FP = 0xA9BF7BFD  # stp x29, x30, [sp, #-16]!
MOV_FP = 0x910003FD  # mov x29, sp (add x29, sp, #0)
LDP_FP = 0xA8C17BFD  # ldp x29, x30, [sp], #16


def _bl(at: int, to: int) -> int:
    return 0x94000000 | (((to - at) >> 2) & 0x3FFFFFF)


def _b(at: int, to: int) -> int:
    return 0x14000000 | (((to - at) >> 2) & 0x3FFFFFF)


def _frame_fn(at: int) -> dict[int, int]:
    """A callee with a frame record that adds its caller's frame pointer (read back from its
    own record, ``ldr x1, [x29]``) to x0."""
    return {
        at: STP_FP,
        at + 4: MOV_FP,
        at + 8: 0xF94003A1,  # ldr x1, [x29]
        at + 12: 0x8B010000,  # add x0, x0, x1
        at + 16: LDP_FP,
        at + 20: RET,
    }


def _program() -> dict[int, int]:
    """func: a frame record, an indirect call (blr x2, the driver passes IND), a direct call of
    CALLEE, the frame popped, then a direct tail call of LEAF (x0 += 1, no X29 or SP write)."""
    f = FUNC
    return {
        f: STP_FP,
        f + 4: MOV_FP,
        f + 8: 0xD63F0040,  # blr x2
        f + 12: _bl(f + 12, CALLEE),
        f + 16: LDP_FP,
        f + 20: _b(f + 20, LEAF),
        **_frame_fn(CALLEE),
        **_frame_fn(IND),
        LEAF: 0x91000400,  # add x0, x0, #1
        LEAF + 4: RET,
    }


def _build(tmp_path: Path, monkeypatch) -> Path:
    monkeypatch.setenv("NXRECOMP_NXRECOMP_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("NXRECOMP_RECOMPILER_JOBS", "2")
    size = 0x1000
    data = bytearray(size)
    for a, v in _program().items():
        data[a - BASE : a - BASE + 4] = v.to_bytes(4, "little")
    prog = analyse(Memory([(BASE, size, bytes(data), True)]), FUNC, {FUNC, CALLEE, IND, LEAF}, [], {})
    build(prog, tmp_path / "bundle")
    return tmp_path / "bundle"


def _function(text: str, entry: int) -> str:
    f = text[text.index(f"NxRet F_{entry:x}{SIG} {{") :]
    return f[: f.index("\n}\n")]


DRIVER = r"""
    static NxCpu s;
    s.x[0] = 0; s.x[2] = IND; s.x[29] = 0x2929; s.x[30] = 0x1234; s.sp = STACK_TOP;
    nx_enter(&s, fn);
    printf("%llx %llx %llx %llx\n", (unsigned long long)s.pc, (unsigned long long)s.x[0],
           (unsigned long long)s.x[29], (unsigned long long)s.sp);
"""


def test_frame_pointer_is_an_argument(tmp_path: Path, monkeypatch) -> None:
    assert "u64 a29)" in SIG and ARGS.endswith("x29)")  # (SIG ends in NX_CC with call_abi = preserve_none)
    bundle = _build(tmp_path, monkeypatch)
    text = "".join(p.read_text() for p in (bundle / "src").glob("*.c"))
    func, callee = _function(text, FUNC), _function(text, CALLEE)
    # both call sites (the indirect one, the direct one) pass X29 and store none of it (the
    # old signature stored it at the first: an unknown callee may read it)
    sites = [line for line in func.splitlines() if re.match(r"  x30 = 0x4000(0c|10)ull;", line)]
    assert len(sites) == 2 and not any("s->x[29]" in line for line in sites), sites
    assert f"_r = F_{CALLEE:x}{ARGS};" in func and f"nx_call_ind{ARGS}" in func
    # the callee's frame record stores the argument: no load of the slot
    decl = [line for line in callee.splitlines() if line.startswith("  u64 x0 = a0")]
    assert decl and re.search(r"\bx29 = a29\b", decl[0]) and "s->x[29]" not in decl[0], decl
    # the driver: x0 = the callees' reads of func's frame pointer (STACK_TOP - 16) twice, plus
    # the leaf's 1; X29 and SP back as the caller had them; pc the caller's return address
    out = run_function(tmp_path, bundle, FUNC, DRIVER.replace("STACK_TOP", f"{STACK_TOP:#x}ull").replace("IND", f"{IND:#x}ull"))
    fp = STACK_TOP - 16
    assert out == [f"1234 {2 * fp + 1:x} 2929 {STACK_TOP:x}"], out
