"""Lua 5.4.8 (from the lupa sdist), built for aarch64 with clang -O2, recompiled by nxrecomp:
our scripts (float formatting %g/%a/%.17g, the math library, integer/float conversion,
string.format, coroutines, n-body, spectral-norm) give byte-identical output to qemu-aarch64.
n-body and spectral-norm also match the values the Benchmarks Game publishes for those sizes."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from tests.realprogs import sources
from tests.realprogs.conftest import bundle, run_both

pytestmark = pytest.mark.network
SCRIPTS = Path(__file__).resolve().parent / "lua"


@pytest.fixture(scope="module")
def lua(tmp_path_factory) -> Path:
    return bundle("lua", tmp_path_factory)


@pytest.mark.parametrize("script", ["format.lua", "mathlib.lua", "coro.lua"])
def test_lua_script_matches_qemu(lua, script):
    r = run_both("lua", lua, ["lua", script], SCRIPTS)
    assert r.returncode == 0 and len(r.stdout) > 300


def test_lua_nbody_matches_qemu_and_published_energy(lua):
    r = run_both("lua", lua, ["lua", "nbody.lua", "1000"], SCRIPTS)
    # the Benchmarks Game's published output for n = 1000
    assert r.stdout.decode().split()[:2] == ["-0.169075164", "-0.169087605"]


def test_lua_spectral_norm_matches_qemu_and_published_value(lua):
    r = run_both("lua", lua, ["lua", "spectral.lua", "100"], SCRIPTS)
    assert r.stdout.decode().split()[0] == "1.274219991"  # published for n = 100


def test_lua_error_exit_matches_qemu(lua, tmp_path):
    (tmp_path / "bad.lua").write_text("local x = 1.5\nprint(string.format('%d', x))\n")
    r = run_both("lua", lua, ["lua", "bad.lua"], tmp_path)
    assert r.returncode == 1 and b"number has no integer representation" in r.stderr


@pytest.mark.heavy
def test_lua_nbody_long_matches_qemu_and_native_build(lua):
    r = run_both("lua", lua, ["lua", "nbody.lua", "200000"], SCRIPTS, timeout=3000)
    native = subprocess.run(
        [str(sources.build("lua", "x86_64")), "nbody.lua", "200000"], cwd=SCRIPTS, capture_output=True, check=True
    )
    # the energies (9 decimals) of the same sources built for x86-64 by the same clang
    assert r.stdout.split()[:2] == native.stdout.split()[:2]
