"""Inline caches of indirect call sites (lifted.h NX_IC, dispatch.c nx_ic_fill).

A site remembers one target.  Filled by its first call, it used to keep that target for good:
Lua's call of C functions was first taken by a library's initialisation, so every later
math.sqrt call missed and went through the runtime's lookup.  Now a full cache is retargeted
on every NX_IC_RETARGET-th miss of a thread.  On a hand-encoded program built with the real
runtime, a small C driver checks the policy through ``nx_ic_fill`` itself (first fill, the
retarget after exactly 16 misses, never to an address that is no function entry) and runs the
lifted caller through the targets in turn: each call returns its own target's X0 whatever
the cache holds."""

from __future__ import annotations

import subprocess
from pathlib import Path

from recompiler import cc
from recompiler.analyse import Memory, analyse
from recompiler.build import RUNTIME_DIR, build

BASE = 0x400000
CALLER, IMPL_A, IMPL_B = BASE, BASE + 0x100, BASE + 0x200
RET = 0xD65F03C0


def _movz(rd: int, imm: int) -> int:
    return 0xD2800000 | (imm << 5) | rd


def _program() -> dict[int, int]:
    """caller: blr x1 inside a frame; A and B return 1 and 2 in x0."""
    return {
        CALLER: 0xA9BF7BFD,  # stp x29, x30, [sp, #-16]!
        CALLER + 4: 0xD63F0020,  # blr x1
        CALLER + 8: 0xA8C17BFD,  # ldp x29, x30, [sp], #16
        CALLER + 12: RET,
        IMPL_A: _movz(0, 1),
        IMPL_A + 4: RET,
        IMPL_B: _movz(0, 2),
        IMPL_B + 4: RET,
    }


DRIVER = r"""
#include "nxrt.h"
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
/* driver GAME.SO CALLER A B STACK_BASE: prints one line per check */
int main(int argc, char **argv) {
    unsigned long long caller = strtoull(argv[2], 0, 0), a = strtoull(argv[3], 0, 0), b = strtoull(argv[4], 0, 0);
    unsigned long long stack = strtoull(argv[5], 0, 0);
    if (mmap((void *)stack, 0x10000, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0) != (void *)stack)
        return 3;
    void *h = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
    if (!h) { fprintf(stderr, "%s\n", dlerror()); return 2; }
    NxFn (*lookup)(uint64_t, uint32_t *) = (NxFn (*)(uint64_t, uint32_t *))dlsym(h, "nx_lookup");
    NxCpu *(*fill)(NxCpu *, const NxEntry **) = (NxCpu *(*)(NxCpu *, const NxEntry **))dlsym(h, "nx_ic_fill");
    if (!lookup || !fill) return 4;
    static NxCpu s;
    const NxEntry *ic = NULL;
    s.pc = a + 4;                                     /* no function entry: an empty cache stays empty */
    fill(&s, &ic);
    printf("not-an-entry %s\n", ic ? "filled" : "empty");
    s.pc = a;
    fill(&s, &ic);
    printf("first %llx\n", ic ? (unsigned long long)ic->addr : 0ull);
    int n = 0;
    s.pc = b;
    while (ic->addr != b && n < 100) { fill(&s, &ic); n++; }
    printf("retargeted-after %d\n", n);
    for (int i = 0; i < 64; i++) { s.pc = b + 4; fill(&s, &ic); }
    printf("after-non-entries %llx\n", (unsigned long long)ic->addr);
    /* the lifted caller: A once, B many times, then A again; each call answers its own target */
    uint32_t kind = 0;
    NxFn fn = lookup(caller, &kind);
    if (!fn || kind != NX_ENTRY_FUNC) return 5;
    unsigned long long seq[] = {a, b, b, b, b, b, b, b, b, b, b, b, b, b, b, b, b, b, b, b, b, a, b, a};
    int bad = 0;
    for (unsigned i = 0; i < sizeof seq / sizeof *seq; i++) {
        s.sp = stack + 0x8000; s.x[1] = seq[i]; s.x[30] = 0x1234; s.x[0] = 0;
        nx_enter(&s, fn);
        if (s.x[0] != (seq[i] == a ? 1u : 2u) || s.pc != 0x1234) bad++;
    }
    printf("calls-wrong %d\n", bad);
    return 0;
}
"""


def test_a_full_cache_is_retargeted_and_calls_stay_right(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("NXRECOMP_NXRECOMP_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("NXRECOMP_RECOMPILER_JOBS", "2")
    words = _program()
    size = 0x1000
    data = bytearray(size)
    for a, v in words.items():
        data[a - BASE : a - BASE + 4] = v.to_bytes(4, "little")
    prog = analyse(Memory([(BASE, size, bytes(data), True)]), CALLER, {CALLER, IMPL_A, IMPL_B}, [], {})
    build(prog, tmp_path / "bundle")
    src = "".join(p.read_text() for p in (tmp_path / "bundle" / "src").glob("*.c"))
    assert "NX_IC(&_ic" in src
    driver = tmp_path / "driver"
    (tmp_path / "driver.c").write_text(DRIVER)
    r = subprocess.run(
        [*cc.compiler(), str(tmp_path / "driver.c"), "-o", str(driver), f"-I{RUNTIME_DIR}", "-ldl"],
        capture_output=True,
        text=True,
    )
    assert r.returncode == 0, r.stderr[-2000:]
    r = subprocess.run(
        [str(driver), str(tmp_path / "bundle" / "game.so"), hex(CALLER), hex(IMPL_A), hex(IMPL_B), "0x10000000"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert r.returncode == 0, (r.returncode, r.stdout, r.stderr)
    got = dict(line.split(" ", 1) for line in r.stdout.splitlines())
    assert got == {
        "not-an-entry": "empty",
        "first": f"{IMPL_A:x}",
        "retargeted-after": "16",
        "after-non-entries": f"{IMPL_B:x}",
        "calls-wrong": "0",
    }, r.stdout
