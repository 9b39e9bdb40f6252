"""Whole programs in lockstep with Unicorn (tests/recompiler/lockstep.py): a bundle built with
``recompiler.trace`` logs every general register, SP and NZCV at each lifted function's entry;
Unicorn runs the same aarch64 program from the same initial state through the same Linux
personality (NXRECOMP_DETERMINISTIC: the same random bytes, clock and mmap addresses) and logs
at the same addresses.  Every record both logged must be equal: the
lifted code's state at each call equals the oracle's, not only the program's output.

The programs: the longjmp/callee-saved one (tests/cpu_host/programs/unwind_regs.c: calls, tail
calls, longjmps through several frames, a switch-dispatched loop) and the feature probe
(cpu_features.c: it reads ID registers with MRS and passes them to fprintf, so both runs must
answer them alike, cpu_host/runtime/core/id_regs.h); in the heavy suite, Debian's busybox applets
(glibc's IFUNC resolvers, the shell's interpreter, awk's) and issue 7's real programs (Lua's
float formatting, math library and coroutines, zstd, xxHash), V0-V31 compared as well."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.cpu_host import aarch64_programs
from tests.recompiler import lockstep


def _recompile_traced(program: Path, out: Path) -> Path:
    """``program`` recompiled into ``out`` with ``recompiler.trace`` (registers logged at every
    function entry)."""
    env = {**os.environ, "NXRECOMP_RECOMPILER_TRACE": "1"}
    r = subprocess.run(
        [sys.executable, "-m", "nxrecomp", "recompile", str(program), "-o", str(out)],
        capture_output=True,
        text=True,
        timeout=3600,
        env=env,
    )
    assert r.returncode == 0, r.stderr[-2000:]
    return out


def _matched(report: str, least: int) -> None:
    """The report says no record differs, at least ``least`` were compared and every record
    Unicorn logged was matched (the lifted run may log more, an entry reached by running on into
    it from the code before; never fewer)."""
    m = re.search(r"no difference in (\d+) matched records \(lifted (\d+), unicorn (\d+)\)", report)
    assert m, report[-3000:]
    matched, n_lifted, n_unicorn = map(int, m.groups())
    assert matched >= least and matched == n_unicorn and n_lifted >= n_unicorn, report[-3000:]


@pytest.mark.parametrize("name,args,least", [("unwind_regs", ["3"], 1000), ("cpu_features", [], 20)])
def test_lifted_state_at_every_function_entry_equals_unicorns(name, args, least, tmp_path):
    pytest.importorskip("unicorn")
    bundle = _recompile_traced(aarch64_programs.build(name, tmp_path), tmp_path / "bundle")
    work = tmp_path / "work"
    work.mkdir()
    _matched(lockstep.lockstep(bundle, [name, *args], work), least)


@pytest.fixture(scope="module")
def traced_busybox(tmp_path_factory):
    from tests.cpu_host.busybox_cases import fetch_busybox

    return _recompile_traced(fetch_busybox(), tmp_path_factory.mktemp("bbtrace") / "bundle")


_APPLETS = {
    "echo": (["busybox", "echo", "hi"], 200),
    "md5sum": (["busybox", "md5sum", "{f}"], 300),
    "sort": (["busybox", "sort", "{f}"], 400),
    "awk": (
        [
            "busybox",
            "awk",
            'BEGIN { s = 0; for (i = 1; i <= 9; i++) s += i * 1.5; printf "%d %s %.3f\\n", 7 * 6, toupper("ab"), s }',
        ],
        2000,
    ),
    "sh": (["busybox", "sh", "-c", "x=0; for i in 1 2 3 4 5; do x=$((x+i*i)); done; f() { echo $1$x; }; f v"], 3000),
    "gzip": (["busybox", "gzip", "-c", "{big}"], 20000),
    "bzip2": (["busybox", "bzip2", "-c", "{big}"], 20000),
}


@pytest.mark.heavy
@pytest.mark.network
@pytest.mark.parametrize("applet", list(_APPLETS))
def test_busybox_applets_in_lockstep_with_unicorn(traced_busybox, applet, tmp_path):
    pytest.importorskip("unicorn")
    argv, least = _APPLETS[applet]
    from tests.realprogs.test_xxhash_zstd import text_data

    f, big = tmp_path / "in.txt", tmp_path / "big.txt"
    f.write_bytes(b"pear\napple\nfig\n" * 20)
    big.write_bytes(text_data(50_000, 9))
    work = tmp_path / "work"
    work.mkdir()
    argv = [a.replace("{f}", str(f)).replace("{big}", str(big)) for a in argv]
    _matched(lockstep.lockstep(traced_busybox, argv, work), least)


def test_compare_realigns_on_entries_only_one_side_logged(tmp_path):
    """The report skips a re-entry only the lifted run logged and still finds a register that
    differs after it."""

    def rec(entry: int, x0: int) -> bytes:
        return lockstep.REC.pack(entry, x0, *([0] * (lockstep.REC.size // 8 - 2)))

    a = tmp_path / "a"
    b = tmp_path / "b"
    a.write_bytes(rec(0x100, 1) + rec(0x200, 2) + rec(0x180, 9) + rec(0x300, 3) + rec(0x400, 4))
    b.write_bytes(rec(0x100, 1) + rec(0x200, 2) + rec(0x300, 3) + rec(0x400, 5))
    report = lockstep.compare(str(a), str(b))
    assert "entries only the lifted run logged at its record 2: 0x180" in report
    assert "first difference at record 4 of the lifted trace, 3 of Unicorn's (function entry 0x400)" in report
    assert re.search(r"x0 +lifted 0x0+4 +unicorn 0x0+5", report)
    b.write_bytes(rec(0x100, 1) + rec(0x200, 2) + rec(0x300, 3) + rec(0x400, 4))
    assert "no difference in 4 matched records (lifted 5, unicorn 4)" in lockstep.compare(str(a), str(b))


@pytest.fixture(scope="module")
def traced(tmp_path_factory):
    """name -> the traced bundle of that real program (tests/realprogs/sources.py), built once
    per module."""
    from tests.realprogs import sources

    built: dict[str, Path] = {}

    def get(name: str) -> Path:
        if name not in built:
            built[name] = _recompile_traced(sources.build(name), tmp_path_factory.mktemp(f"{name}trace") / "bundle")
        return built[name]

    return get


@pytest.mark.heavy
@pytest.mark.network
@pytest.mark.parametrize(
    "script,args,least",
    [
        ("format.lua", [], 20000),
        ("coro.lua", [], 20000),
        ("mathlib.lua", [], 20000),
        ("nbody.lua", ["200"], 20000),
        ("spectral.lua", ["20"], 20000),
    ],
)
def test_lua_scripts_in_lockstep_with_unicorn(script, args, least, traced, tmp_path):
    """Float formatting, the math library, coroutines (a yield is a longjmp) and the two
    benchmarks' float loops: every general and vector register at every function entry equals
    Unicorn's (issue 7's programs)."""
    pytest.importorskip("unicorn")
    bundle = traced("lua")
    script_path = Path(__file__).resolve().parents[1] / "realprogs" / "lua" / script
    work = tmp_path / "work"
    work.mkdir()
    _matched(lockstep.lockstep(bundle, ["lua", str(script_path), *args], work), least)


@pytest.mark.heavy
@pytest.mark.network
def test_zstd_and_xxhsum_in_lockstep_with_unicorn(traced, tmp_path):
    """zstd's compressor and decompressor and xxHash's NEON paths on 200 KB of text."""
    pytest.importorskip("unicorn")
    from tests.realprogs.test_xxhash_zstd import text_data

    data = tmp_path / "in.txt"
    data.write_bytes(text_data(200_000, 5))
    zstd, xxhsum = traced("zstd"), traced("xxhsum")
    packed = tmp_path / "in.zst"
    with open(data, "rb") as fin, open(packed, "wb") as fout:
        r = subprocess.run(
            [sys.executable, "-m", "nxrecomp", "exec", str(zstd), "--", "zstd", "-3"],
            stdin=fin,
            stdout=fout,
            stderr=subprocess.PIPE,
            timeout=600,
        )
    assert r.returncode == 0, r.stderr[-1000:]
    for k, (bundle, argv, stdin) in enumerate(
        [(zstd, ["zstd", "-3"], data), (zstd, ["zstd", "-d"], packed), (xxhsum, ["xxhsum", str(data)], None)]
    ):
        work = tmp_path / f"work{k}"
        work.mkdir()
        _matched(lockstep.lockstep(bundle, argv, work, stdin=stdin), 250)
