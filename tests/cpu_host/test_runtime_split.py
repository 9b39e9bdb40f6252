"""The C runtime is linked per personality (recompiler/build.py ``runtime_sources``): the core
and the Linux folder make a complete library with no Horizon code in it, the core and the
Horizon folder one with no Linux code.  The linker is the oracle: each set is linked with
``-z defs`` (every symbol must be defined; the generated entry table is the only thing the
runtime takes from a game) and its exported symbols are listed with ``nm``."""

from __future__ import annotations

import shutil
import subprocess

import pytest

from recompiler import cc
from recompiler.build import FLAGS, PERSONALITIES, RUNTIME_ROOT, runtime_sources
from nxrecomp.common.errors import NxError

TABLE_C = '#include "nxrt.h"\nconst NxEntry nx_entries[1];\nconst uint64_t nx_entry_count = 0;\n'
PREFIX = {"linux": "nx_linux_", "horizon": "nx_hz"}


def _link(personality: str, tmp_path) -> set[str]:
    table = tmp_path / "table.c"
    table.write_text(TABLE_C)
    so = tmp_path / f"{personality}.so"
    srcs = [str(p) for p in runtime_sources(personality)]
    cc.run(
        [
            "-shared",
            "-O0",
            *FLAGS,
            f"-I{RUNTIME_ROOT / 'core'}",
            f"-I{RUNTIME_ROOT / personality}",
            *srcs,
            str(table),
            "-o",
            str(so),
            "-Wl,-z,defs",
            "-lpthread",
            "-ldl",
            "-lm",
        ],
        f"the {personality} runtime",
    )
    out = subprocess.run(["nm", "-D", "--defined-only", str(so)], capture_output=True, text=True, check=True).stdout
    return {line.split()[-1] for line in out.splitlines() if line.strip()}


@pytest.mark.skipif(shutil.which("nm") is None, reason="LOUD SKIP: nm (binutils) is not installed")
@pytest.mark.parametrize("personality", PERSONALITIES)
def test_each_personality_links_alone_and_carries_none_of_the_other(personality, tmp_path):
    names = _link(personality, tmp_path)
    assert "nx_run" in names and "nx_lift_miss" in names  # the core is there
    assert any(n.startswith(PREFIX[personality]) for n in names), sorted(names)
    other = next(p for p in PERSONALITIES if p != personality)
    assert not [n for n in names if n.startswith(PREFIX[other])]


def test_the_personalities_share_no_file_but_the_core():
    linux, horizon = (set(runtime_sources(p)) for p in ("linux", "horizon"))
    core = set((RUNTIME_ROOT / "core").glob("*.c"))
    assert linux & horizon == core and core
    assert all(p.parent.name == "linux" for p in linux - core)
    assert all(p.parent.name == "horizon" for p in horizon - core)


def test_a_c_file_left_in_the_runtime_top_folder_is_named(tmp_path, monkeypatch):
    from recompiler import build

    root = tmp_path / "runtime"
    for d in ("core", "linux", "horizon"):
        (root / d).mkdir(parents=True)
    (root / "horizon_new.c").write_text("")
    monkeypatch.setattr(build, "RUNTIME_ROOT", root)
    monkeypatch.setattr(build, "RUNTIME_DIR", root / "core")
    with pytest.raises(NxError, match="core/.*linux/.*horizon/") as e:
        build.runtime_sources("horizon")
    assert "horizon_new.c" in str(e.value)
    with pytest.raises(NxError, match="unknown personality"):
        build.runtime_sources("windows")
