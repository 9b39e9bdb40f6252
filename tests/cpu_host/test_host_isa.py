"""Lifted code compiled for an x86-64 level (recompiler.march): the level chosen, and a game.so
that refuses, naming what is missing, to start on a CPU without it (cpu_host/runtime/core/host_isa.c).

The refusal is shown on this very CPU by compiling the check for an extension it lacks
(AVX-512, absent from the machines this project runs on; skipped loudly where present)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from recompiler import cc
from recompiler.build import FLAGS, RUNTIME_DIR

CHECK_C = RUNTIME_DIR / "host_isa.c"


def load(so: Path) -> subprocess.CompletedProcess:
    """dlopen ``so`` in a fresh process (the check runs as its constructor)."""
    return subprocess.run(
        [sys.executable, "-c", f"import ctypes; ctypes.CDLL({str(so)!r}); print('loaded')"],
        capture_output=True,
        text=True,
        timeout=60,
    )


def build(tmp_path: Path, extra: list[str]) -> Path:
    so = tmp_path / "check.so"
    cc.run(["-shared", "-o", str(so), str(CHECK_C), "-O2", *FLAGS, *extra], "host_isa.c")
    return so


def test_the_build_level_follows_the_cpu():
    flags = cc.host_cpu_flags()
    v3 = all(f in flags for f in ("avx2", "fma", "bmi2", "movbe", "abm", "f16c"))
    cc.march.cache_clear()
    try:
        assert cc.march() == ("x86-64-v3" if v3 else "x86-64")
        arch = cc.arch_flags()
        assert arch[1:] == ["-ffp-contract=off", "-mprefer-vector-width=128"]  # no FMA contraction, no ymm
        assert arch[0] in (f"-march={cc.march()}", f"-march={cc.march().replace('-', '_')}")
    finally:
        cc.march.cache_clear()


def test_explicit_level_is_spelled_for_the_compiler(monkeypatch):
    monkeypatch.setenv("NXRECOMP_RECOMPILER_MARCH", "x86-64")
    cc.march.cache_clear()
    try:
        zig = cc.compiler()[1:3] == ("-m", "ziglang")
        assert cc.arch_flags()[0] == ("-march=x86_64" if zig else "-march=x86-64")
    finally:
        cc.march.cache_clear()


def test_game_so_compiled_for_this_cpu_loads(tmp_path):
    r = load(build(tmp_path, cc.arch_flags()))
    assert r.returncode == 0 and r.stdout.strip() == "loaded", r.stderr


def test_game_so_for_an_extension_the_cpu_lacks_refuses_by_name(tmp_path):
    if "avx512f" in cc.host_cpu_flags():
        pytest.skip("this CPU has AVX-512F: no extension left to show the refusal with")
    r = load(build(tmp_path, [*cc.arch_flags(), "-mavx512f"]))
    assert r.returncode == 70, (r.returncode, r.stdout, r.stderr)
    assert "loaded" not in r.stdout  # stopped before anything of it ran
    assert "lacks (AVX512F)" in r.stderr, r.stderr  # only what is missing is named
    assert "NXRECOMP_RECOMPILER_MARCH=x86-64" in r.stderr
