"""Branch recovery by data flow (``recompiler.analysis``) on the shapes the fixed windows of the
earlier analysis missed, each hand-written in assembly (``flow_shapes.py``) inside a static
musl program built here with zig's clang:

- ``far_base``: a table base set in x19 at the entry, a call and a side path that writes x19
  between it and the ``br`` (in address order);
- ``spilled``: -O0 style, index and base spilled to the frame, the compare on one reload and
  the dispatch in another block on other reloads;
- ``big_open``: a 100-entry table with no bound in the code (the old search stopped at 64);
- ``big_bounded``: 200 byte entries relative to an ``adr`` base, bounded by the compare;
- ``sort_far``: ``qsort``'s comparator built by ``adrp`` and ``add`` eight instructions apart,
  named by nothing else (no symbol type, no call, no unwind entry): never lifted before.

Analysis must find every table with its exact targets and the comparator as an entry, and the
recompiled program must print what qemu-aarch64 prints (a missed target is a fatal error at
run time).  Checked on the code before this analysis: the first test fails (no table for
``far_base`` and ``spilled``, 64 targets of ``big_open``, no ``cmp_desc``)."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from recompiler.link import link_program
from recompiler.pipeline import analyse_image

sys.path.insert(0, str(Path(__file__).resolve().parent))
import flow_shapes  # noqa: E402

ENV = {"PATH": "/usr/bin:/bin", "LC_ALL": "C", "HOME": "/nonexistent"}


@pytest.fixture(scope="module")
def shapes(tmp_path_factory) -> tuple[Path, dict[str, int]]:
    d = tmp_path_factory.mktemp("flow")
    (d / "shapes.c").write_text(flow_shapes.source())
    r = subprocess.run(
        [
            sys.executable,
            "-m",
            "ziglang",
            "cc",
            "-target",
            "aarch64-linux-musl",
            "-static",
            "-O2",
            str(d / "shapes.c"),
            "-o",
            str(d / "shapes"),
        ],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert r.returncode == 0, r.stderr
    from elftools.elf.elffile import ELFFile

    with open(d / "shapes", "rb") as fh:
        syms = {s.name: s["st_value"] for s in ELFFile(fh).get_section_by_name(".symtab").iter_symbols()}
    return d / "shapes", syms


def _br(plan) -> int:
    brs = [i.addr for i in plan.insns if i.name == "BR"]
    assert len(brs) == 1, [hex(a) for a in brs]
    return brs[0]


def test_analysis_finds_every_shape(shapes) -> None:
    path, sym = shapes
    prog = analyse_image(link_program(path))
    f = prog.functions
    expect = {"far_base": 10, "spilled": 10, "big_open": 100, "big_bounded": 100}
    for name, n in expect.items():
        plan = f[sym[name]]
        br = _br(plan)
        targets = plan.jump_tables.get(br)
        assert targets is not None, f"{name}: no table for the br at {br:#x}"
        assert len(set(targets)) == n, (name, len(set(targets)))
        body = {i.addr for i in plan.insns}
        assert set(targets) <= body, f"{name}: every case is this function's own code"
    # the comparator: an entry of its own, found from the adrp+add pair
    assert sym["cmp_desc"] in f, "qsort's comparator was not lifted"
    assert prog.stats is not None and prog.stats.entries_by_source.get("adrp+add", 0) >= 1
    assert br not in prog.unresolved_br


@pytest.mark.parametrize("arg", ["4", "0", "13"])
def test_recompiled_prints_what_qemu_prints(shapes, arg, tmp_path_factory) -> None:
    if not shutil.which("qemu-aarch64"):
        pytest.skip("LOUD SKIP: qemu-aarch64 (apt qemu-user) is not installed")
    path, _sym = shapes
    bundle = path.parent / "bundle"
    if not (bundle / "manifest.json").exists():
        r = subprocess.run(
            [sys.executable, "-m", "nxrecomp", "recompile", str(path), "-o", str(bundle)],
            capture_output=True,
            text=True,
            timeout=1800,
        )
        assert r.returncode == 0, r.stderr[-3000:]
    ours = subprocess.run(
        [sys.executable, "-m", "nxrecomp", "exec", str(bundle), "--", "shapes", arg], capture_output=True, env=ENV, timeout=300
    )
    ref = subprocess.run(["qemu-aarch64", "-0", "shapes", str(path), arg], capture_output=True, env=ENV, timeout=300)
    assert (ours.returncode, ours.stdout, ours.stderr) == (ref.returncode, ref.stdout, ref.stderr)
