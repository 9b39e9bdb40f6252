"""Debian 12's arm64 ``grep -P``: libpcre2-8 10.42 compiles the pattern with its JIT (sljit) into
an anonymous 64 KiB RWX mapping and calls the code it wrote there (docs/ARCHITECTURE.md, "Code
generated at run time (Linux)").  Recompiled grep against ``qemu-aarch64 -L SYSROOT``: stdout,
the exit status and the guest's stderr identical (our own notice lines, each starting with
``nxrecomp: ``, are left out of the comparison and checked on their own: the JIT's code is lifted
at run time, named as generated code, and nothing is noted for the next build; grep closes its
stderr before it exits, so the exit summary never shows).

The bundle and the sysroot are made as ``test_dynamic_debian.py`` makes them (Debian's packages
from the mirror, cached).  Every case is ``heavy``: a cold build of libc and libpcre2 is long, and
CI runs the mechanism on a small program (``tests/cpu_host/test_generated_code.py``)."""

from __future__ import annotations

import re

import pytest

from tests.realprogs.test_dynamic_debian import TEXT, WORDS, bundle, run_both

pytestmark = [pytest.mark.network, pytest.mark.heavy]

GENERATED = re.compile(rb"^nxrecomp: lifted at run time: code generated at run time, the function at ", re.M)
REPEATS = "the the cat\nno repeat here\nis is it\nabc abc abc\n"

CASES = [
    ("digits-at-end", ["grep", "-P", "-o", r"\d{3}$"], TEXT.encode(), {}),
    ("lookbehind", ["grep", "-P", "-n", r"(?<=line )1\d\b", "a.txt"], b"", {"a.txt": TEXT}),
    ("backreference-count", ["grep", "-P", "-c", r"^(\w+)\s+\1\b", "r.txt"], b"", {"r.txt": REPEATS}),
    ("caseless-words", ["grep", "-P", "-i", "-w", "APPLE|F[aeiou]g", "w.txt"], b"", {"w.txt": WORDS}),
    ("lazy-only-matching", ["grep", "-P", "-o", r"l.*?\d", "a.txt"], b"", {"a.txt": TEXT[:400]}),
    # recursion and possessive groups: the JIT's code calls its own helper (two lifts)
    ("recursion", ["grep", "-P", "-o", r"\((?:[^()]++|(?R))*\)"], b"a (b (c) d) e\n((x)(y)) (\n)(\n", {}),
    ("no-match", ["grep", "-P", r"zebra\d+", "w.txt"], b"", {"w.txt": WORDS}),
    ("bad-pattern", ["grep", "-P", "(unclosed"], b"x\n", {}),
]


@pytest.mark.parametrize("argv,stdin,files", [pytest.param(a, s, f, id=i) for i, a, s, f in CASES])
def test_grep_perl_regex_runs_pcre2_jit_code_as_qemu_does(tmp_path_factory, tmp_path, argv, stdin, files) -> None:
    binary, b, top = bundle("grep", tmp_path_factory)
    ours, ref = run_both(binary, b, top, tmp_path, argv, stdin, files)
    guest_err = b"".join(ln for ln in ours.stderr.splitlines(keepends=True) if not ln.startswith(b"nxrecomp: "))
    why = f"{argv}: ours exit {ours.returncode} stderr {ours.stderr[-1500:]!r}; qemu exit {ref.returncode} stderr {ref.stderr[-300:]!r}"
    assert (ours.returncode, guest_err) == (ref.returncode, ref.stderr), why
    assert ours.stdout == ref.stdout, f"{argv}: stdout ours {ours.stdout[-600:]!r}\nqemu {ref.stdout[-600:]!r}"
    ours_lines = [ln for ln in ours.stderr.splitlines() if ln.startswith(b"nxrecomp: ")]
    lifts = [ln for ln in ours_lines if ln.startswith(b"nxrecomp: lifted at run time: ")]
    if "(unclosed" not in argv:  # (a pattern pcre2 refuses is never JIT-compiled)
        # the pattern's code is pcre2's JIT output: lifted as generated code, and only that
        # (no exit summary: grep closes its stderr before it exits, gnulib's close_stdout)
        assert lifts and all(GENERATED.match(ln) for ln in lifts), ours_lines
    noted = (b / "discovered_entries.txt").read_text().split() if (b / "discovered_entries.txt").exists() else []
    lifted = {int(m, 16) for m in re.findall(rb"the function at (0x[0-9a-f]+)", b"".join(lifts))}
    assert not lifted & {int(a, 16) for a in noted if a.startswith("0x")}, "generated code was noted for the next build"
