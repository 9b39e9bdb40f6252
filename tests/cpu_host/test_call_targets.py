"""Indirect calls tried first as direct calls of the targets analysis guessed
(``recompiler/analysis/call_targets.py``, ``emitter.call``, ``control.h_br``).

``programs/callback_targets.c``: ``fold`` calls its ``f`` through a register at one site, which
``main`` reaches with ``op_add``, ``op_mul`` (constants: two known targets) and a value read from
writable data that the program overwrites first (unknown to the analysis, and a function the
guesses do not hold: the inline-cache path runs); ``run_job`` loads its callback from a struct
that ``apply_all`` fills in its frame, guessed as ``op_add`` and the word ``table[0]`` holds in the
image, which the program overwrites before the call (a wrong guess: the guard fails); qsort and bsearch call the comparator through a pointer.
Lifted with and without the guesses (``recompiler.no_opt=devirt``), it must print what
qemu-aarch64 prints, for arguments that take the table's other entry too."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

from tests.cpu_host import aarch64_programs

ARGS = [[], ["300"], ["50", "b", "c", "d", "e"]]


@pytest.fixture(scope="module")
def program(tmp_path_factory) -> Path:
    return aarch64_programs.build_for_qemu("callback_targets", tmp_path_factory.mktemp("callback_targets"))


def _run(cmd: list[str]) -> subprocess.CompletedProcess:
    return subprocess.run(cmd, capture_output=True, text=True, timeout=300)


def test_the_analysis_names_the_two_constant_targets_and_nothing_for_the_data_word(program) -> None:
    from recompiler.analysis.call_targets import guess_targets
    from recompiler.link import link_program
    from recompiler.pipeline import analyse_image, image_memory

    syms, _ = aarch64_programs.symbols_and_program(program)
    image = link_program(str(program))
    prog = analyse_image(image)
    blrs = {e: [i.addr for i in p.insns if i.name == "BLR"] for e, p in prog.functions.items()}
    fold_site = blrs[syms["fold"]]
    job_site = blrs[syms["run_job"]]
    assert len(fold_site) == 1 and len(job_site) == 1, (fold_site, job_site)
    got = prog.functions[syms["fold"]].call_guesses
    # the two constants main passes; the table's entry (op_sub at run time, op_xor in the
    # image) is no constant at the call (an index the program computes): something else
    assert got == {fold_site[0]: tuple(sorted((syms["op_add"], syms["op_mul"])))}
    found = guess_targets(image_memory(image), prog.functions, prog.closed)
    assert not found.sites[fold_site[0]].exact
    # through the struct in apply_all's frame: op_add, and table[0]'s word as the image holds
    # it (op_xor), a guess the program makes wrong before the call (it stores op_sub there)
    want = tuple(sorted((syms["op_add"], syms["op_xor"])))
    assert prog.functions[syms["run_job"]].call_guesses == {job_site[0]: want}
    assert prog.stats.devirt_calls >= 2 and prog.stats.devirt_targets >= 3


@pytest.mark.parametrize("off", [False, True], ids=["guessed", "no_opt"])
def test_guarded_direct_calls_run_like_qemu(program, tmp_path, off) -> None:
    settings = {"NXRECOMP_RECOMPILER_NO_OPT": "devirt"} if off else {}
    bundle = aarch64_programs.recompile(program, tmp_path / "b", **settings)
    syms, _ = aarch64_programs.symbols_and_program(program)
    text = "".join(p.read_text() for p in (bundle / "src").glob("shard_*.c"))
    start = text.index(f"NxRet F_{syms['fold']:x}(NxCpu *s, u64 a0, u64 a1, u64 a30, u64 asp, u64 a29) {{")
    body = text[start : text.index("\n}\n", start)]
    guarded = re.findall(r"if \(NX_GUESS\(_t, (0x[0-9a-f]+)ull\)\) \{", body)
    if off:
        assert not guarded
    else:
        assert sorted(int(a, 16) for a in guarded) == sorted((syms["op_add"], syms["op_mul"]))
        assert "NX_IC(&_ic, _t)" in body  # and any other value: the inline cache
    for args in ARGS:
        want = _run(["qemu-aarch64", str(program), *args])
        assert want.returncode == 0 and "fold add" in want.stdout, want.stderr[-500:]
        got = _run([str(bundle / "nxrun"), str(program), *args])
        assert (got.returncode, got.stdout) == (want.returncode, want.stdout), got.stderr[-1000:]
