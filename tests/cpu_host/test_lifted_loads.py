"""A Q register's load in lifted code (cpu_host/runtime/core/lifted.h ``LQ128``) and store
(``SQ128``), compiled with the flags of lifted shards.

x86 forwards a store to a later load only when the load lies within that one store (Intel's
optimization manual, "Store Forwarding"; AMD's software optimization guides say the same), so a
16-byte load of bytes that two 8-byte stores had just written stalls until both stores retire:
~25 % of QuickJS's interpreter loop was that one load (docs/PERFORMANCE.md).  ``LQ128`` is
therefore two 8-byte loads joined in the vector register.  Checked here, on the compiler's
real output: the compiled ``LQ128`` holds no load wider than 8 bytes (the build with
``-DNX_LQ128_WHOLE``, the old form, does, so the check can fail), and both forms move the same
16 bytes at every alignment, after 8-byte stores and after 16-byte stores, with the halves in
the right lanes."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

from recompiler import cc
from recompiler.build import RUNTIME_DIR, SHARD_FLAGS

SRC = r"""
#include "lifted.h"
#include <stdio.h>
/* a JSValue made by two 8-byte stores, then copied by a Q load and store */
__attribute__((noinline)) NxV2u64 made_then_loaded(u64 a, u64 lo, u64 hi) {
    S64(a, lo); S64(a + 8, hi);
    __asm__ volatile("" ::: "memory");
    return LQ128(a);
}
__attribute__((noinline)) void copy_q(u64 dst, u64 src) { SQ128(dst, LQ128(src)); }
int main(void) {
    static u8 buf[96] __attribute__((aligned(64)));
    int bad = 0;
    for (int off = 0; off < 24; off++) {
        u64 a = (u64)buf + off, lo = 0x0123456789abcdefull ^ (u64)off, hi = 0xfedcba9876543210ull + (u64)off;
        NxV2u64 v = made_then_loaded(a, lo, hi);
        if (v[0] != lo || v[1] != hi) { printf("off %d: %llx %llx\n", off, (unsigned long long)v[0], (unsigned long long)v[1]); bad++; }
        for (int i = 0; i < 16; i++) buf[48 + i] = (u8)(off * 16 + i);
        copy_q(a, (u64)buf + 48);
        for (int i = 0; i < 16; i++) if (buf[off + i] != (u8)(off * 16 + i)) { printf("copy off %d byte %d\n", off, i); bad++; }
    }
    printf("bad %d\n", bad);
    return bad != 0;
}
"""

# a load from memory into a vector register wider than 8 bytes: (v)movups/movupd/movdqu/movaps/
# movdqa/lddqu of an xmm or ymm from a memory operand, or a 128-bit integer load pair's vector
# form; the 8-byte vmovq/vmovsd/vmovhps/vpinsrq loads do not match
_WIDE_LOAD = re.compile(r"\bv?(?:movup[sd]|movap[sd]|movdq[ua]|movdqu8|movdqu64|lddqu)\s+[^,]*\([^)]*\)\s*,\s*%[xy]mm")


def _compile(tmp: Path, extra: list[str], what: str) -> Path:
    src = tmp / "loads.c"
    src.write_text(SRC)
    out = tmp / what
    flags = ["-O2", *SHARD_FLAGS, *cc.arch_flags(), f"-I{RUNTIME_DIR}", *extra]
    cc.run([str(src), "-o", str(out), *flags], "tests/cpu_host/test_lifted_loads.py")
    return out


def _function_asm(asm: str, name: str) -> str:
    m = re.search(rf"^{name}:.*?(?=^\s*\.cfi_endproc|^\s*retq)", asm, re.S | re.M)
    assert m, f"{name} not found in the compiler's assembly"
    return m.group(0)


@pytest.mark.parametrize("define", [[], ["-DNX_LQ128_WHOLE"]], ids=["split", "whole"])
def test_q_load_values(tmp_path, define):
    """Both forms load the 16 bytes two 8-byte stores or one 16-byte store wrote, at every
    alignment from 0 to 23."""
    exe = _compile(tmp_path, define, "loads")
    r = subprocess.run([str(exe)], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0 and r.stdout.strip().endswith("bad 0"), r.stdout + r.stderr


def test_q_load_is_two_8_byte_loads(tmp_path):
    """The Q load after two 8-byte stores is no 16-byte load (it would not forward from them);
    the old form is, on the same compiler and flags."""
    split = _compile(tmp_path, ["-S"], "split.s").read_text()
    whole = _compile(tmp_path, ["-S", "-DNX_LQ128_WHOLE"], "whole.s").read_text()
    for name in ("made_then_loaded", "copy_q"):
        assert not _WIDE_LOAD.search(_function_asm(split, name)), _function_asm(split, name)
        assert _WIDE_LOAD.search(_function_asm(whole, name)), _function_asm(whole, name)
