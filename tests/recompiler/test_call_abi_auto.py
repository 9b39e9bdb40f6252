"""``recompiler.call_abi = auto`` (recompiler/lift/call_abi.py): dispatch loops that make calls
and their direct callees get SysV bodies (``Fs_x``) behind preserve_none entries (``F_x``).

The choice (``sysv_set``) and the rewrite (``apply``) on a small shard, which clang then
compiles: clang refuses a musttail between two conventions and a call through a declaration
of the other convention's name would not link, so a rewrite that left one behind fails here.
Then Lua (a dispatch loop, luaV_execute, calling luaD_precall and ~100 others) built with the
setting and run on the realprogs scripts against qemu-aarch64 (tests/realprogs/test_lua.py in a
process of its own: signature.SIG is fixed at import), its C holding SysV bodies and thunks."""

from __future__ import annotations

import re
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from recompiler import cc
from recompiler.lift import call_abi
from recompiler.lift.signature import PARAMS
from tests.recompiler.test_call_abi import pytest_with_settings

ROOT = Path(__file__).resolve().parents[2]
RUNTIME_DIR = ROOT / "cpu_host/runtime/core"
PN_SIG = PARAMS + " NX_CC"  # (what signature.SIG is under call_abi = auto)


@dataclass
class _Insn:
    addr: int
    word: int


@dataclass
class _Plan:
    entry: int
    insns: list
    tail_targets: set = field(default_factory=set)
    loop: bool = False


def _bl(at: int, to: int) -> _Insn:
    return _Insn(at, 0x94000000 | (((to - at) >> 2) & 0x3FFFFFF))


def test_sysv_set_loop_callees_and_tail_rule() -> None:
    plans = {
        0x1000: _Plan(0x1000, [_bl(0x1000, 0x2000), _bl(0x1004, 0x3000), _bl(0x1008, 0x800)], loop=True),
        0x2000: _Plan(0x2000, []),  # a callee: SysV
        0x3000: _Plan(0x3000, [], tail_targets={0x5000}),  # a callee whose tail call leaves the set
        0x800: _Plan(0x800, []),  # a callee below the loop (a backward BL)
        0x4000: _Plan(0x4000, [], loop=True),  # a loop that calls nothing: preserve_none
        0x5000: _Plan(0x5000, [_bl(0x5000, 0x2000)]),  # no loop: preserve_none
    }
    assert call_abi.sysv_set(plans, lambda p: p.loop) == {0x1000, 0x2000, 0x800}
    lib = [_bl(0x6000 + 4 * k, 0x800) for k in range(16)]  # 0x800: a library routine of 17 sites
    plans[0x6000] = _Plan(0x6000, lib)
    assert call_abi.sysv_set(plans, lambda p: p.loop, max_sites=16) == {0x1000, 0x2000}
    assert call_abi.sysv_set(plans, lambda p: p.loop, max_sites=None) == {0x1000, 0x2000, 0x800}
    plans[0x1000].tail_targets = {0x5000}  # the loop itself leaves by a tail call: left out too
    assert call_abi.sysv_set(plans, lambda p: p.loop, max_sites=16) == {0x2000}


# a shard as lift writes it under preserve_none: A (SysV by the set) calls B (SysV), tail-calls
# C (preserve_none) and B; jumps out through nx_jump and an inline cache's row; C calls B and tail-calls B (the thunk)
SHARD = f"""#include "lifted.h"
NxRet F_a{PN_SIG};
NxRet F_b{PN_SIG};
NxRet F_c{PN_SIG};
NxRet F_a{PN_SIG} {{
  u64 x0 = a0, x1 = a1, x30 = a30, sp = asp, x29 = a29; NxRet _r;
  _r = F_b(s, x0, x1, x30, sp, x29); x0 = _r.x0;
  if (x0 == 1) MUSTTAIL return F_c(s, x0, x1, x30, sp, x29);
  if (x0 == 2) MUSTTAIL return F_b(s, x0, x1, x30, sp, x29);
  if (x0 == 3) {{ s->pc = 7; MUSTTAIL return nx_jump(s, x0, x1, x30, sp, x29); }}
  if (x0 == 4) {{ const NxEntry *_e = (const NxEntry *)x1; MUSTTAIL return _e->fn(s, x0, x1, x30, sp, x29); }}
  return (NxRet){{ x30, x0 }};
}}
NxRet F_b{PN_SIG} {{
  return (NxRet){{ a30, a0 + 1 }};
}}
NxRet F_c{PN_SIG} {{
  u64 x0 = a0, x1 = a1, x30 = a30, sp = asp, x29 = a29; NxRet _r;
  _r = F_b(s, x0, x1, x30, sp, x29); x0 = _r.x0;
  MUSTTAIL return F_b(s, x0, x1, x30, sp, x29);
}}
"""


def _def(text: str, name: str) -> str:
    f = text[re.search(rf"^[^\n]*NxRet {name}\(NxCpu[^\n]*\{{\n", text, re.M).start() :]
    return f[: f.index("\n}\n")]


def test_apply_rewrites_calls_and_compiles(tmp_path: Path) -> None:
    out = call_abi.apply(SHARD, frozenset({0xA, 0xB}))
    a, c = _def(out, "Fs_a"), _def(out, "F_c")
    assert "NX_CC" not in a.splitlines()[0]  # a SysV body
    assert "_r = Fs_b(" in a and "MUSTTAIL return Fs_b(" in a  # SysV to SysV: direct, and a tail call
    # to preserve_none: a musttail of the shard's SysV trampoline, which calls it
    assert "MUSTTAIL return F_c" not in a and "MUSTTAIL return Ts_F_c(" in a
    assert "MUSTTAIL return nx_jump" not in a and "MUSTTAIL return Ts_nx_jump(" in a
    assert "MUSTTAIL return _e->fn" not in a and "return _e->fn(" in a  # (through a pointer: call + return)
    assert f"NxRet Ts_nx_jump{PARAMS} {{ return nx_jump(s, a0, a1, a30, asp, a29); }}" in out
    assert "_r = Fs_b(" in c and "MUSTTAIL return F_b(" in c  # a direct call, and a tail call of the thunk
    assert re.search(r"NxRet F_a\(NxCpu[^\n]*NX_CC \{ return Fs_a\(", out)  # the entry: a thunk
    assert f"NxRet Fs_a{PARAMS};" in out and f"NxRet Fs_b{PARAMS};" in out
    assert call_abi.apply(SHARD, frozenset()) == SHARD and call_abi.apply(SHARD, frozenset({0x99})) == SHARD
    src = tmp_path / "shard.c"
    src.write_text(out)
    # clang refuses a musttail across conventions (and a call of a name declared twice apart)
    r = subprocess.run(
        [*cc.compiler(), "-O2", "-c", str(src), "-o", str(tmp_path / "s.o"), f"-I{RUNTIME_DIR}", "-DNX_PRESERVE_NONE"],
        capture_output=True,
        text=True,
    )
    assert r.returncode == 0, r.stderr[-3000:]
    # the check itself: the unrewritten tail call of a SysV body is refused
    bad = out.replace("MUSTTAIL return Ts_F_c(", "MUSTTAIL return F_c(", 1)
    src.write_text(bad)
    r = subprocess.run(
        [*cc.compiler(), "-O2", "-c", str(src), "-o", str(tmp_path / "s.o"), f"-I{RUNTIME_DIR}", "-DNX_PRESERVE_NONE"],
        capture_output=True,
        text=True,
    )
    assert r.returncode != 0


@pytest.mark.network
@pytest.mark.heavy
def test_lua_auto_matches_qemu(tmp_path: Path) -> None:
    base = tmp_path / "run"
    r = pytest_with_settings(
        {"NXRECOMP_RECOMPILER_CALL_ABI": "auto"},
        base,
        str(ROOT / "tests/realprogs/test_lua.py"),
        "-k",
        "script_matches or nbody or spectral or error_exit",
        timeout=3000,
    )
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-2000:]
    assert " passed" in r.stdout and "skipped" not in r.stdout, r.stdout[-1000:]
    text = "".join(p.read_text() for p in base.rglob("src/shard_*.c"))
    assert len(re.findall(r"^(?:[^\n]*)NxRet Fs_[0-9a-f]+\(NxCpu[^\n]*\{$", text, re.M)) > 20
    assert re.search(r"NX_CC \{ return Fs_[0-9a-f]+\(s, a0, a1, a30, asp, a29\); \}", text)
