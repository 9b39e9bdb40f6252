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


from recompiler.analyse import Memory, analyse

if str(Path(__file__).resolve().parent) not in sys.path:
    sys.path.insert(0, str(Path(__file__).resolve().parent))
from bundle_driver import RET, build_bundle, function_text, image, run_function, unicorn_regs, unicorn_run  # noqa: E402

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


def _unicorn() -> tuple[int, int]:
    """X0 and X19 after FUNC's tail jump returns, run by Unicorn (the oracle)."""
    done = 0x500000
    mu = unicorn_run(image(_program(), BASE), BASE, FUNC, done, X0=X0_IN, X1=G, X19=X19_IN, X30=done)
    x0, x19 = unicorn_regs(mu, "X0", "X19")
    return x0, x19


def test_a_tail_jump_through_a_register_stores_no_callee_saved_register(tmp_path: Path) -> None:
    prog = analyse(Memory([(BASE, 0x1000, image(_program(), BASE), True)]), FUNC, {FUNC, G}, [], {})
    bundle = build_bundle(tmp_path, prog)
    body = function_text(bundle, f"F_{FUNC:x}")
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
    pc, x0, x19 = run_function(tmp_path, bundle, FUNC, driver)[0].split()
    assert int(pc, 16) == 0x1234
    assert (int(x0, 16), int(x19, 16)) == _unicorn()
