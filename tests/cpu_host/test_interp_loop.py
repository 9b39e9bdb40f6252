"""Callee-saved registers kept in ``NxCpu`` in an interpreter's loop (``recompiler/lift/mem_regs.py``).

``programs/interp_loop.c`` is a computed-goto bytecode interpreter with more values live across
its loop than x86-64 has callee-saved registers, calls out of some handlers, a call through a
pointer, a recursive call of the interpreter and a longjmp out of nested interpreter frames.
Lifted, some of its X19-X28 live in their ``NxCpu`` slots (the C names them through a
``#define``), and it must print what qemu-aarch64 prints for the same binary, with the
optimisation and without it (``recompiler.no_opt=mem_regs``)."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

from tests.cpu_host import aarch64_programs


@pytest.fixture(scope="module")
def program(tmp_path_factory) -> Path:
    return aarch64_programs.build_for_qemu("interp_loop", tmp_path_factory.mktemp("interp_loop"))


def _interp_entry(program: Path) -> int:
    r = subprocess.run(["nm", str(program)], capture_output=True, text=True, check=True)
    return next(int(p[0], 16) for line in r.stdout.splitlines() if len(p := line.split()) == 3 and p[2] == "interp")


def _run(cmd: list[str]) -> subprocess.CompletedProcess:
    return subprocess.run(cmd, capture_output=True, text=True, timeout=300)


@pytest.mark.parametrize("off", [False, True], ids=["mem_regs", "no_opt"])
def test_an_interpreter_with_registers_in_nxcpu_runs_like_qemu(program, tmp_path, off) -> None:
    want = _run(["qemu-aarch64", str(program), "700"])
    assert want.returncode == 0 and "interp total" in want.stdout, want.stderr[-500:]
    settings = {"NXRECOMP_RECOMPILER_NO_OPT": "mem_regs"} if off else {}
    bundle = aarch64_programs.recompile(program, tmp_path / "b", **settings)
    entry = _interp_entry(program)
    text = "".join(p.read_text() for p in (bundle / "src").glob("shard_*.c"))
    start = text.index(f"NxRet F_{entry:x}(NxCpu *s, u64 a0, u64 a1, u64 a30, u64 asp, u64 a29) {{")
    body = text[start : text.index("\n}\n", start)]
    kept = re.findall(r"#define x(\d+) \(s->x\[\d+\]\)", body)
    if off:
        assert not kept
    else:  # the values used only around its calls: at least two of X19-X28
        assert len(kept) >= 2 and all(19 <= int(r) <= 28 for r in kept), kept
    got = _run([str(bundle / "nxrun"), str(program), "700"])
    assert (got.returncode, got.stdout) == (want.returncode, want.stdout), got.stderr[-1000:]


def test_a_giant_function_keeps_its_registers_in_locals() -> None:
    """Over ``FRAME_SAVES_MAX_INSNS`` instructions the rule does not apply (clang's allocation of
    such a function moves unpredictably: QuickJS's JS_CallInternal lost 48 M instructions with it
    on the merged lifter of session 30); the same loop in a smaller function gets it."""
    from recompiler.decode import decode
    from recompiler.lift import mem_regs
    from recompiler.lift.frame_facts import FRAME_SAVES_MAX_INSNS

    def add1(r: int) -> int:  # add xr, xr, #1
        return 0x91000400 | r << 5 | r

    base = 0x10000
    # a call-free cycle using X19..X27 (9 > MAX_HOT): X19-X25 busy, X26 and X27 once each
    body = [add1(19 + k % 7) for k in range(7 * 80)] + [add1(26), add1(27)]
    loop = [*body, 0x14000000 | (-len(body) & 0x3FFFFFF)]  # b back to the top
    table = {base: [base + 4 * k for k in range(16)]}  # a 16-way computed goto: an interpreter

    def rule(words: list[int]) -> list[int]:
        insns = [decode(w, base + 4 * k) for k, w in enumerate(words)]
        return mem_regs.cold_saved(insns, {i.addr for i in insns}, table, {})

    assert sorted(rule(loop)) == [26, 27]
    assert rule(loop + [0xD503201F] * (FRAME_SAVES_MAX_INSNS + 1 - len(loop))) == []  # nop padding
