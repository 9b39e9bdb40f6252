"""A profile-guided rebuild end to end (recompiler/profile.py): ``programs/interp_loop.c`` (a
computed-goto interpreter) built with ``recompiler.profile_gen`` writes a block profile at exit;
rebuilt with that profile (``recompiler.profile``) its shards compile with clang's sample
profile, which moves its code; every build prints what qemu-aarch64 prints."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from recompiler import profile
from tests.cpu_host import aarch64_programs


@pytest.fixture(scope="module")
def program(tmp_path_factory) -> Path:
    return aarch64_programs.build_for_qemu("interp_loop", tmp_path_factory.mktemp("interp_prof"))


def _run(cmd: list[str], **env: str) -> subprocess.CompletedProcess:
    import os

    return subprocess.run(cmd, capture_output=True, text=True, timeout=300, env={**os.environ, **env})


def _stats(bundle: Path) -> dict:
    return json.loads((bundle / "manifest.json").read_text())["stats"]


def _text(so: Path) -> bytes:
    r = subprocess.run(["objdump", "-d", "--no-show-raw-insn", "-j", ".text", str(so)], capture_output=True, check=True)
    return r.stdout.split(b"\n", 3)[3]


def test_profile_round_trip_changes_code_not_output(program, tmp_path):
    want = _run(["qemu-aarch64", str(program), "700"])
    assert want.returncode == 0 and "interp total" in want.stdout, want.stderr[-500:]

    plain = aarch64_programs.recompile(program, tmp_path / "plain")
    assert "profile" not in _stats(plain)
    got = _run([str(plain / "nxrun"), str(program), "700"])
    assert (got.returncode, got.stdout) == (want.returncode, want.stdout), got.stderr[-1000:]

    gen = aarch64_programs.recompile(program, tmp_path / "gen", NXRECOMP_RECOMPILER_PROFILE_GEN="1")
    assert _stats(gen)["profile"]["counters"] > 100
    prof = tmp_path / "train.json"
    got = _run([str(gen / "nxrun"), str(program), "700"], NXRECOMP_CPU_HOST_BLOCK_PROFILE_FILE=str(prof))
    assert (got.returncode, got.stdout) == (want.returncode, want.stdout), got.stderr[-1000:]
    code_id = profile.program_id(program.read_bytes())
    blocks = profile.read(prof, program=code_id)
    entry = next(
        int(p[0], 16)
        for line in _run(["nm", str(program)]).stdout.splitlines()
        if len(p := line.split()) == 3 and p[2] == "interp"
    )
    assert blocks.get(entry, 0) >= 1, "the interpreter's entry block was not counted"
    # version 2: per C copy (the interpreter's own function F_<entry>) and segment
    assert blocks.copies is not None and blocks.copies.get(f"F{entry:#x}:{entry:#x}", 0) >= 1
    assert max(blocks.values()) > 1000  # its dispatch loop's handlers ran many times
    assert not list(tmp_path.glob("train.json.*.tmp"))

    used = aarch64_programs.recompile(program, tmp_path / "used", NXRECOMP_RECOMPILER_PROFILE=str(prof))
    st = _stats(used)["profile"]
    assert st["functions"] > 0 and st["blocks"] > 0 and st["shards"] > 0
    assert st["shards"] < _stats(used)["shards"]  # shards none of whose blocks ran keep their flags
    assert _text(used / "game.so") != _text(plain / "game.so"), "the profile changed no code"
    got = _run([str(used / "nxrun"), str(program), "700"])
    assert (got.returncode, got.stdout) == (want.returncode, want.stdout), got.stderr[-1000:]
    # the lifted C of a profile build is the plain build's
    for c in sorted((plain / "src").glob("shard_*.c")):
        assert (used / "src" / c.name).read_text() == c.read_text(), c.name


def test_profile_of_other_code_rejected(program, tmp_path):
    bad = tmp_path / "other.json"
    profile.write(bad, {0x400000: 5}, program="0" * 64)
    r = subprocess.run(
        [
            sys.executable,
            "-m",
            "nxrecomp",
            "recompile",
            str(program),
            "-o",
            str(tmp_path / "b"),
            "--profile",
            str(bad),
        ],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert r.returncode == 2, r.stderr[-1500:]
    assert str(bad) in r.stderr and "field program" in r.stderr and "other guest code" in r.stderr
