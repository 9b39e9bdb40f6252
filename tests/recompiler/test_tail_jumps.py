"""A jump out through a register with the entry's SP and X30 is a tail call (facts._tail_jumps).

musl's ``__fwritex`` ends in ``f->write(f, s, l)`` as ``ldp x29, x30, [sp], #N; br x3``: the
target is a function entered as the caller's callee, which returns to the caller, and the caller
keeps X19-X28 in its own locals.  Such a jump stores no callee-saved register
(``STORE_INDIRECT``), so the function is not opaque and its save of X19 is dropped (the entry
value it would store comes only back to that exit).  Here on a hand-encoded function that saves
X19, uses it, restores it and jumps through a register to a second function: the built C has no
X19 in ``STORE_INDIRECT`` and no save store, and the lifted run leaves in X0 and X19 what Unicorn
running the same AArch64 code leaves, and comes back to the caller's X30."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from recompiler.analyse import Memory, analyse
from recompiler.build import build
from recompiler.lift.emitter import SIG

if str(Path(__file__).resolve().parent) not in sys.path:
    sys.path.insert(0, str(Path(__file__).resolve().parent))
from bundle_driver import RET, STACK_TOP, run_function  # noqa: E402

unicorn = pytest.importorskip("unicorn", reason="the Unicorn oracle (pip package unicorn) is not installed")
from unicorn import arm64_const as U  # noqa: E402

BASE = 0x400000
FUNC, G = BASE, BASE + 0x100
X0_IN, X19_IN = 0x1234, 0x77


def _program() -> dict[int, int]:
    """func(x0, x1 = g): x19 = x0; x0 = x19 + 5; return g(x0) as a tail jump through x3.
    g: x0 += x0."""
    f = FUNC
    return {
        f: 0xA9BE7BFD,  # stp x29, x30, [sp, #-32]!
        f + 4: 0xF9000BF3,  # str x19, [sp, #16]
        f + 8: 0xAA0003F3,  # mov x19, x0
        f + 12: 0x91001660,  # add x0, x19, #5
        f + 16: 0xF9400BF3,  # ldr x19, [sp, #16]
        f + 20: 0xA8C27BFD,  # ldp x29, x30, [sp], #32
        f + 24: 0xAA0103E3,  # mov x3, x1
        f + 28: 0xD61F0060,  # br x3
        G: 0x8B000000,  # add x0, x0, x0
        G + 4: RET,
    }


def _image() -> bytes:
    data = bytearray(0x1000)
    for a, v in _program().items():
        data[a - BASE : a - BASE + 4] = v.to_bytes(4, "little")
    return bytes(data)


def _unicorn() -> tuple[int, int]:
    """X0 and X19 after FUNC's tail jump returns, run by Unicorn (the oracle)."""
    mu = unicorn.Uc(unicorn.UC_ARCH_ARM64, unicorn.UC_MODE_ARM)
    mu.mem_map(BASE, 0x1000)
    mu.mem_write(BASE, _image())
    mu.mem_map(0x10000000, 0x10000)
    done = 0x500000
    mu.mem_map(done, 0x1000)
    mu.reg_write(U.UC_ARM64_REG_SP, STACK_TOP)
    mu.reg_write(U.UC_ARM64_REG_X0, X0_IN)
    mu.reg_write(U.UC_ARM64_REG_X1, G)
    mu.reg_write(U.UC_ARM64_REG_X19, X19_IN)
    mu.reg_write(U.UC_ARM64_REG_X30, done)
    mu.emu_start(FUNC, done, count=1000)
    return mu.reg_read(U.UC_ARM64_REG_X0), mu.reg_read(U.UC_ARM64_REG_X19)


def _function_text(text: str, entry: int) -> str:
    f = text[text.index(f"NxRet F_{entry:x}{SIG} {{") :]
    return f[: f.index("\n}\n")]


def test_a_tail_jump_through_a_register_stores_no_callee_saved_register(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("NXRECOMP_NXRECOMP_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("NXRECOMP_RECOMPILER_JOBS", "2")
    prog = analyse(Memory([(BASE, 0x1000, _image(), True)]), FUNC, {FUNC, G}, [], {})
    build(prog, tmp_path / "bundle")
    text = "".join(p.read_text() for p in (tmp_path / "bundle" / "src").glob("*.c"))
    body = _function_text(text, FUNC)
    assert "@@" not in text, "a placeholder was left unfilled"
    indirect = next(line for line in body.splitlines() if line.startswith("#define STORE_INDIRECT"))
    assert "s->x[3] = x3;" in indirect and "s->x[19]" not in indirect, indirect
    assert "nx_ic_empty_jump" in body, "the jump is no jump out through the inline cache"
    assert "S64(sp + 0x10ull, (u64)x19)" not in body, "the save of X19 stayed"

    driver = r"""
    static NxCpu s;
    s.x[0] = %#x; s.x[1] = %#x; s.x[19] = %#x; s.x[30] = 0x1234; s.sp = 0x10008000;
    nx_enter(&s, fn);
    printf("%%llx %%llx %%llx\n", (unsigned long long)s.pc, (unsigned long long)s.x[0], (unsigned long long)s.x[19]);
""" % (X0_IN, G, X19_IN)
    pc, x0, x19 = run_function(tmp_path, tmp_path / "bundle", FUNC, driver)[0].split()
    assert int(pc, 16) == 0x1234
    assert (int(x0, 16), int(x19, 16)) == _unicorn()
