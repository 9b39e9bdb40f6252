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


# A computed goto between pieces of one function, each piece a false entry (a ``&&label`` of an
# interpreter's dispatch, as oniguruma's matcher ``match_at`` builds): MAIN sets up its frame and
# its bytecode pointer X24 and jumps to the first opcode's piece; PIECE_A advances X24 and jumps
# to the next opcode's piece with the entry's SP and X30 (it made no frame), which looks like a
# tail call; PIECE_B reads X24.  Bytecode at TABLE: [PIECE_A, 0x11, PIECE_B, 0x22].
MAIN, PIECE_A, PIECE_B = BASE + 0x200, BASE + 0x240, BASE + 0x280
TABLE, X24_IN = 0x10004000, 0x5


def _pieces() -> dict[int, int]:
    return {
        MAIN: 0xA9BE7BFD,  # stp x29, x30, [sp, #-32]!
        MAIN + 4: 0xF9000BF8,  # str x24, [sp, #16]
        MAIN + 8: 0xAA0003F8,  # mov x24, x0
        MAIN + 12: 0xF9400302,  # ldr x2, [x24]
        MAIN + 16: 0xD61F0040,  # br x2
        PIECE_A: 0x91004318,  # add x24, x24, #16
        PIECE_A + 4: 0xF9400302,  # ldr x2, [x24]
        PIECE_A + 8: 0xD61F0040,  # br x2
        PIECE_B: 0xF9400700,  # ldr x0, [x24, #8]
        PIECE_B + 4: 0xF9400BF8,  # ldr x24, [sp, #16]
        PIECE_B + 8: 0xA8C27BFD,  # ldp x29, x30, [sp], #32
        PIECE_B + 12: RET,
    }


def _table() -> bytes:
    return b"".join(v.to_bytes(8, "little") for v in (PIECE_A, 0x11, PIECE_B, 0x22))


def _unicorn_pieces() -> int:
    """X0 after MAIN returns, run by Unicorn (the oracle) with the bytecode at TABLE."""
    unicorn = pytest.importorskip("unicorn", reason="the Unicorn oracle (pip package unicorn) is not installed")
    from unicorn import arm64_const

    done = 0x500000
    code = image(_pieces(), BASE)
    mu = unicorn.Uc(unicorn.UC_ARCH_ARM64, unicorn.UC_MODE_ARM)
    mu.mem_map(BASE, len(code))
    mu.mem_write(BASE, code)
    mu.mem_map(TABLE & ~0xFFFF, 0x10000)  # (the stack below 0x10008000 and the table)
    mu.mem_write(TABLE, _table())
    mu.mem_map(done, 0x1000)
    for reg, v in {"SP": 0x10008000, "X0": TABLE, "X24": X24_IN, "X30": done}.items():
        mu.reg_write(getattr(arm64_const, f"UC_ARM64_REG_{reg}"), v)
    mu.emu_start(MAIN, done, count=1000)
    (x0,) = unicorn_regs(mu, "X0")
    return x0


def test_a_jump_that_leaves_a_callee_saved_register_changed_is_no_tail_call(tmp_path: Path) -> None:
    """PIECE_A's ``br x2`` leaves with the entry's SP and X30, but with X24 changed: no function
    hands X19-X28 on changed to a tail call, so it is a jump inside a live frame, whose target
    reads X24 from NxCpu.  Taken for a tail call (before), its STORE_INDIRECT stored no X24 and
    PIECE_B read MAIN's X24: X0 0x11 where Unicorn gives 0x22."""
    want = _unicorn_pieces()
    assert want == 0x22  # (the program does what it says)
    prog = analyse(Memory([(BASE, 0x1000, image(_pieces(), BASE), True)]), MAIN, {MAIN, PIECE_A, PIECE_B}, [], {})
    bundle = build_bundle(tmp_path, prog)
    body = function_text(bundle, f"F_{PIECE_A:x}")
    indirect = next(line for line in body.splitlines() if line.startswith("#define STORE_INDIRECT"))
    assert "s->x[24] = x24;" in indirect, indirect
    table = ", ".join(f"{b:#x}" for b in _table())
    driver = r"""
    static NxCpu s;
    static const unsigned char table[] = { %s };
    __builtin_memcpy((void *)%#xull, table, sizeof table);
    s.x[0] = %#x; s.x[24] = %#x; s.x[30] = 0x1234; s.sp = 0x10008000;
    nx_enter(&s, fn);
    printf("%%llx %%llx\n", (unsigned long long)s.pc, (unsigned long long)s.x[0]);
""" % (table, TABLE, TABLE, X24_IN)
    pc, x0 = run_function(tmp_path, bundle, MAIN, driver)[0].split()
    assert int(pc, 16) == 0x1234
    assert int(x0, 16) == want


def _changed_at_end(words: list[int]) -> int:
    """``liveness.saves_changed`` before the last instruction of ``words`` (one function at
    BASE, its graph as the lifter's frame facts build it)."""
    from recompiler.decode import decode
    from recompiler.lift import effects, liveness as L
    from recompiler.lift.edges import successors

    insns = [decode(w, BASE + 4 * k) for k, w in enumerate(words)]
    addrs = {i.addr for i in insns}
    succs, writes = {}, {}
    for i in insns:
        t, falls = successors(i)
        succs[i.addr] = [a for a in ([t] if t is not None else []) + ([i.addr + 4] if falls else []) if a in addrs]
        writes[i.addr] = effects.declare(i).writes
    frame = L.frame_offsets(insns, succs, writes, BASE)
    return L.saves_changed(insns, succs, writes, frame, BASE).get(insns[-1].addr, L.ELIDED_SAVES)


X21 = 1 << 21


@pytest.mark.parametrize(
    "case,changed",
    [
        # GCC's shrink-wrapped save inside a loop that reloads the register from it (glibc's
        # btowc before its ``br x16``): the store after the reload still stores the entry value
        ("save-in-loop", 0),
        ("written", X21),  # changed and never restored
        ("load-unsaved", X21),  # a load from a slot nothing stored the entry value to
        ("load-other-path", X21),  # restored on one path only
    ],
)
def test_which_callee_saved_registers_a_jump_leaves_changed(case: str, changed: int) -> None:
    sub, add = 0xD10083FF, 0x910083FF  # sub/add sp, sp, #32
    save, restore = 0xF9000BF5, 0xF9400BF5  # str/ldr x21, [sp, #16]
    mov, nop, br = 0xAA0003F5, 0xD503201F, 0xD61F0040  # mov x21, x0; nop; br x2
    loop = 0xB5FFFFA1  # cbnz x1, .-12 (back to the save)
    words = {
        "save-in-loop": [sub, save, mov, restore, loop, add, br],
        "written": [sub, save, mov, nop, loop, add, br],
        "load-unsaved": [sub, nop, mov, restore, loop, add, br],
        # cbz x1 skips the restore: 0xB4000041 = cbz x1, .+8
        "load-other-path": [sub, save, mov, 0xB4000041, restore, add, br],
    }[case]
    assert _changed_at_end(words) & (X21 | 1 << 19) == changed
