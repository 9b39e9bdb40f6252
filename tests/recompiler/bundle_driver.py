"""Running one lifted function of a built bundle from a small C driver, for tests that check
what a call leaves in ``NxCpu`` (test_quiet_returns, test_return_results), and the pieces those
tests share: a hand-encoded program's image, a lifted function's C, the same bytes run in
Unicorn (the oracle).

The driver maps a guest stack at 0x10000000 (SP starts at 0x10008000), loads the bundle's
``game.so``, looks the function up in its entry table and runs ``body`` (C statements with
``fn``, the function, and ``NxCpu`` in scope; it prints what the test compares)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from recompiler import cc
from recompiler.analyse import Program
from recompiler.build import RUNTIME_DIR, build
from recompiler.lift.emitter import SIG

STACK_TOP = 0x10008000
RET = 0xD65F03C0


def movz(rd: int, imm: int) -> int:
    """MOVZ Xrd, #imm: the encoding, for hand-encoded test programs."""
    return 0xD2800000 | (imm << 5) | rd


def image(words: dict[int, int], base: int, size: int = 0x1000) -> bytes:
    """``size`` bytes at ``base`` holding ``words`` (address -> 32-bit instruction word)."""
    data = bytearray(size)
    for a, v in words.items():
        data[a - base : a - base + 4] = v.to_bytes(4, "little")
    return bytes(data)


def function_text(bundle: Path, name: str) -> str:
    """The C of lifted function ``name`` (``F_<addr>``, ``R_<addr>``) in ``bundle``'s sources;
    no ``@@`` slot may be left unfilled in them."""
    text = "".join(p.read_text() for p in sorted((bundle / "src").glob("*.c")))
    assert "@@" not in text, "a placeholder was left unfilled"
    f = text[text.index(f"NxRet {name}{SIG} {{") :]
    return f[: f.index("\n}\n")]


def unicorn_run(code: bytes, base: int, entry: int, stop: int, **regs: int):
    """Unicorn (the oracle) after running ``code`` (mapped at ``base``) from ``entry`` until the
    pc reaches ``stop``, with the guest stack at ``STACK_TOP`` and ``regs`` (``X0=...``,
    ``SP=...``; SP defaults to ``STACK_TOP``) set first.  Returns the ``Uc``."""
    unicorn = pytest.importorskip("unicorn", reason="the Unicorn oracle (pip package unicorn) is not installed")
    from unicorn import arm64_const

    mu = unicorn.Uc(unicorn.UC_ARCH_ARM64, unicorn.UC_MODE_ARM)
    mu.mem_map(base, len(code))
    mu.mem_write(base, code)
    mu.mem_map(STACK_TOP - 0x8000, 0x10000)
    mu.mem_map(stop & ~0xFFF, 0x1000)  # (the stop's page: Unicorn stops there before fetching)
    for reg, v in {"SP": STACK_TOP, **regs}.items():
        mu.reg_write(getattr(arm64_const, f"UC_ARM64_REG_{reg}"), v)
    mu.emu_start(entry, stop, count=10_000)
    return mu


def unicorn_regs(mu, *names: str) -> list[int]:
    """The values of registers ``names`` (``"X0"``, ``"PC"``...) in Unicorn ``mu``."""
    from unicorn import arm64_const

    return [mu.reg_read(getattr(arm64_const, f"UC_ARM64_REG_{n}")) for n in names]


_MAIN = r"""
#include "nxrt.h"
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
int main(int argc, char **argv) {
    unsigned long long func = strtoull(argv[2], 0, 0), stack = 0x10000000ull;
    (void)argc;
    if (mmap((void *)stack, 0x10000, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0) != (void *)stack)
        return 3;
    void *h = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
    if (!h) { fprintf(stderr, "%s\n", dlerror()); return 2; }
    NxFn (*lookup)(uint64_t, uint32_t *) = (NxFn (*)(uint64_t, uint32_t *))dlsym(h, "nx_lookup");
    uint32_t kind = 0;
    NxFn fn = lookup ? lookup(func, &kind) : 0;
    if (!fn) return 4;
BODY
    return 0;
}
"""


def run_function(tmp_path: Path, bundle: Path, func: int, body: str) -> list[str]:
    """The lines ``body`` printed, run on ``func`` of ``bundle``."""
    src, exe = tmp_path / "driver.c", tmp_path / "driver"
    src.write_text(_MAIN.replace("BODY", body))
    # (the lifted code's defines, recompiler.call_abi's NX_PRESERVE_NONE: the driver's NxFn
    # must be the convention game.so's functions have)
    defines = [f for f in cc.arch_flags() if f.startswith("-D")]
    r = subprocess.run(
        [*cc.compiler(), str(src), "-o", str(exe), f"-I{RUNTIME_DIR}", *defines, "-ldl"], capture_output=True, text=True
    )
    assert r.returncode == 0, r.stderr[-2000:]
    r = subprocess.run([str(exe), str(bundle / "game.so"), hex(func)], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, (r.stdout, r.stderr)
    return r.stdout.splitlines()


def build_bundle(tmp: Path, program: Program) -> Path:
    """``program`` built into ``tmp/bundle`` with an object cache of its own, on two jobs."""
    mp = pytest.MonkeyPatch()
    mp.setenv("NXRECOMP_NXRECOMP_CACHE_DIR", str(tmp / "cache"))
    mp.setenv("NXRECOMP_RECOMPILER_JOBS", "2")
    try:
        build(program, tmp / "bundle")
    finally:
        mp.undo()
    return tmp / "bundle"
