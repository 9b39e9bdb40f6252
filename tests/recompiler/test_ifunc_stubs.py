"""PLT stubs of IFUNCs (recompiler/analyse.py ifunc_slot/ifunc_candidates, lift/control.py h_br).

A static glibc program calls memcpy, strlen and the other IFUNC'd string functions through
stubs that load a slot filled at startup by the function's resolver and branch to it.  Analysis
reads the resolver's possible answers; the lifted stub tail-calls each directly, so that its
callers get a register summary instead of an opaque call.  Here on hand-encoded A64: a stub
whose resolver picks between two constants is resolved to exactly those two, the build's C
tests the slot against both and ends in ``nx_ifunc_miss``; a resolver that answers a pointer
read from memory, a slot that is no IFUNC's and the setting turned off all leave the stub an
unresolved BR (through the runtime's lookup).  A small C driver loads the built ``game.so``
and calls the stub with each answer in the slot (it returns that answer's X0) and with another
function's address (a fatal error naming the stub and the value, exit 134).  Busybox and the real programs run with these
stubs against qemu (tests/recompiler/test_busybox_recompiled.py, tests/realprogs)."""

from __future__ import annotations

import re

from pathlib import Path

import pytest

from recompiler.analyse import Memory, analyse
from recompiler.build import build
from recompiler.lift.emitter import ARGS, SIG

BASE = 0x400000
RESOLVER, STUB, MAIN, IMPL_A, IMPL_B = BASE, BASE + 0x100, BASE + 0x200, BASE + 0x1000, BASE + 0x1100
SLOT = BASE + 0x2010
RET = 0xD65F03C0


def _adrp(at: int, rd: int, target: int) -> int:
    pages = ((target >> 12) - (at >> 12)) & 0x1FFFFF
    return 0x90000000 | ((pages & 3) << 29) | ((pages >> 2) << 5) | rd


def _add(rd: int, rn: int, imm: int) -> int:
    return 0x91000000 | (imm << 10) | (rn << 5) | rd


def _ldr(rt: int, rn: int, off: int) -> int:
    return 0xF9400000 | ((off // 8) << 10) | (rn << 5) | rt


def _bl(at: int, to: int) -> int:
    return 0x94000000 | (((to - at) >> 2) & 0x3FFFFFF)


def _movz(rd: int, imm: int) -> int:
    return 0xD2800000 | (imm << 5) | rd


def _program(load_answer: bool = False) -> dict[int, int]:
    """resolver: A or B by its argument (or, with ``load_answer``, a pointer read from memory);
    stub: adrp x16 / ldr x17, [x16, #slot] / add x16 / br x17; main calls the stub."""
    w = {}
    r = RESOLVER
    if load_answer:
        w.update({r: _adrp(r, 1, SLOT), r + 4: _ldr(0, 1, SLOT & 0xFFF), r + 8: RET})
    else:
        w.update(
            {
                r: _adrp(r, 1, IMPL_A),
                r + 4: _add(1, 1, IMPL_A & 0xFFF),
                r + 8: _adrp(r + 8, 2, IMPL_B),
                r + 12: _add(2, 2, IMPL_B & 0xFFF),
                r + 16: 0xF100001F,  # cmp x0, #0
                r + 20: 0x9A821020,  # csel x0, x1, x2, ne
                r + 24: RET,
            }
        )
    s = STUB
    w.update(
        {s: _adrp(s, 16, SLOT), s + 4: _ldr(17, 16, SLOT & 0xFFF), s + 8: _add(16, 16, SLOT & 0xFFF), s + 12: 0xD61F0220}
    )  # br x17
    # main keeps a value in x2 across the call (as GCC's -fipa-ra may, knowing the callee)
    w.update(
        {
            MAIN: 0xA9BF7BFD,  # stp x29, x30, [sp, #-16]!
            MAIN + 4: _movz(2, 7),
            MAIN + 8: _bl(MAIN + 8, STUB),
            MAIN + 12: 0x8B020000,  # add x0, x0, x2
            MAIN + 16: 0xA8C17BFD,
            MAIN + 20: RET,
        }
    )  # ldp x29, x30, [sp], #16
    w.update({IMPL_A: _movz(0, 1), IMPL_A + 4: RET, IMPL_B: _movz(0, 2), IMPL_B + 4: RET})
    return w


def _analyse(words: dict[int, int], slots: dict[int, int]):
    size = 0x3000
    data = bytearray(size)
    for a, v in words.items():
        data[a - BASE : a - BASE + 4] = v.to_bytes(4, "little")
    hints = {RESOLVER, STUB, MAIN, IMPL_A, IMPL_B}
    return analyse(Memory([(BASE, size, bytes(data), True)]), MAIN, hints, [], slots)


def test_a_stub_is_resolved_to_its_resolvers_answers() -> None:
    prog = _analyse(_program(), {SLOT: RESOLVER})
    assert prog.functions[STUB].ifunc_targets == {STUB + 12: [IMPL_A, IMPL_B]}
    assert STUB + 12 not in prog.unresolved_br


@pytest.mark.parametrize("case", ["resolver loads its answer", "slot is no IFUNC's", "no slots given"])
def test_a_stub_left_unresolved(case: str) -> None:
    words = _program(load_answer=case == "resolver loads its answer")
    slots = {SLOT + 8: RESOLVER} if case == "slot is no IFUNC's" else {} if case == "no slots given" else {SLOT: RESOLVER}
    prog = _analyse(words, slots)
    assert prog.functions[STUB].ifunc_targets == {}
    assert STUB + 12 in prog.unresolved_br


def _built(tmp_path: Path, monkeypatch, slots: dict[int, int]) -> str:
    monkeypatch.setenv("NXRECOMP_NXRECOMP_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("NXRECOMP_RECOMPILER_JOBS", "2")
    build(_analyse(_program(), slots), tmp_path / "bundle")
    return "".join(p.read_text() for p in (tmp_path / "bundle" / "src").glob("*.c"))


def _function(text: str, entry: int) -> str:
    """Its C without the macro lines (STORE_ALL and the like name every register)."""
    f = text[text.index(f"NxRet F_{entry:x}{SIG} {{") :]
    return "\n".join(line for line in f[: f.index("\n}\n")].splitlines() if not line.startswith("#"))


def _call_site(text: str) -> str:
    """main's call of the stub: its store list, the call, its reload list."""
    main = _function(text, MAIN)
    return main[main.index(f"x30 = {MAIN + 12:#x}ull;") : main.index(f"L_{MAIN + 12:x}:;")]


def test_the_built_stub_tail_calls_each_answer_and_its_caller_keeps_x2(tmp_path: Path, monkeypatch) -> None:
    text = _built(tmp_path, monkeypatch, {SLOT: RESOLVER})
    stub = _function(text, STUB)
    for impl in (IMPL_A, IMPL_B):
        # a direct tail call: the stub stores what a return of it would (its own x16/x17)
        tail = re.search(
            re.escape(f"if (_t == {impl:#x}ull) {{ ")
            + r"do \{ ([^}]*) \} while \(0\); "
            + re.escape(f"MUSTTAIL return F_{impl:x}{ARGS}; }}"),
            stub,
        )
        assert tail and set(tail.group(1).split()) <= {"s->x[16]", "=", "x16;", "s->x[17]", "x17;"}, stub
    assert f"nx_ifunc_miss(s, {STUB + 12:#x}ull, _t);" in stub
    assert "nx_jump" not in stub
    # the answers write only x0 (the stub x16/x17): main neither stores nor reloads x2
    call = _call_site(text)
    assert "s->x[2] = x2" not in call and "x2 = s->x[2]" not in call, call


def test_an_unresolved_stub_makes_its_caller_store_and_keep_its_own(tmp_path: Path, monkeypatch) -> None:
    text = _built(tmp_path, monkeypatch, {})
    call = _call_site(text)
    # x2 reaches the unknown callee through NxCpu: stored at the call, or where main writes it
    # (interproc.write_through: one write, one call site that may read it)
    written = re.search(r"x2 = [^;]*; s->x\[2\] = x2;", _function(text, MAIN))
    assert ("s->x[2] = x2" in call) != bool(written), (call, _function(text, MAIN))
    # after the call main reads its own x2 (AAPCS64 trusted, results_only: a caller-saved register
    # that is no result stays in the caller's local; a lifted return stores none of them, so a
    # reload could only find this value or what a deeper call site stored: interproc.site_liveness)
    assert "x2 = s->x[2]" not in call, call


DRIVER = r"""
#include "nxrt.h"
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
/* driver GAME.SO BASE SIZE SLOT VALUE STUB: the slot at its guest address holds VALUE; call
 * the lifted stub as a caller would and print X0 and the PC it returned to */
int main(int argc, char **argv) {
    unsigned long long base = strtoull(argv[2], 0, 0), size = strtoull(argv[3], 0, 0);
    unsigned long long slot = strtoull(argv[4], 0, 0), value = strtoull(argv[5], 0, 0), stub = strtoull(argv[6], 0, 0);
    if (mmap((void *)base, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0) != (void *)base)
        return 3;
    memcpy((void *)slot, &value, 8);
    void *h = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
    if (!h) { fprintf(stderr, "%s\n", dlerror()); return 2; }
    NxFn (*lookup)(uint64_t, uint32_t *) = (NxFn (*)(uint64_t, uint32_t *))dlsym(h, "nx_lookup");
    uint32_t kind = 0;
    NxFn fn = lookup ? lookup(stub, &kind) : 0;
    if (!fn || kind != NX_ENTRY_FUNC) return 4;
    static NxCpu s;
    s.x[30] = 0x1234;
    nx_enter(&s, fn);
    printf("%llx %llx\n", (unsigned long long)s.x[0], (unsigned long long)s.pc);
    return 0;
}
"""


def test_the_stub_runs_its_answer_and_a_value_outside_the_list_is_a_fatal_error(tmp_path: Path, monkeypatch) -> None:
    import subprocess

    from recompiler import cc
    from recompiler.build import RUNTIME_DIR

    _built(tmp_path, monkeypatch, {SLOT: RESOLVER})
    driver = tmp_path / "driver"
    (tmp_path / "driver.c").write_text(DRIVER)
    r = subprocess.run(
        [*cc.compiler(), str(tmp_path / "driver.c"), "-o", str(driver), f"-I{RUNTIME_DIR}", "-ldl"],
        capture_output=True,
        text=True,
    )
    assert r.returncode == 0, r.stderr[-2000:]

    def run(value: int) -> subprocess.CompletedProcess:
        return subprocess.run(
            [str(driver), str(tmp_path / "bundle" / "game.so"), hex(BASE), "0x3000", hex(SLOT), hex(value), hex(STUB)],
            capture_output=True,
            text=True,
            timeout=60,
        )

    for impl, x0 in ((IMPL_A, 1), (IMPL_B, 2)):
        r = run(impl)
        assert r.returncode == 0, r.stderr
        assert r.stdout.split() == [f"{x0:x}", "1234"]
    r = run(MAIN)  # a function, but not one of the resolver's answers
    assert r.returncode == 134, (r.returncode, r.stdout, r.stderr)
    assert "IFUNC slot" in r.stderr and f"guest pc {STUB + 12:#x}" in r.stderr and f"({MAIN:#x})" in r.stderr, r.stderr
