"""A Go program built here (Go 1.19, arm64, no cgo) whose compiled code keeps NZCV live across
calls, recompiled and run against qemu-aarch64.

The Go compiler declares that its arm64 ``DUFFCOPY``/``DUFFZERO`` ops (calls into the
runtime's ``duffcopy``/``duffzero``) clobber no flags, so it may compare, call them to copy or
clear a large value, and branch on the compare afterwards: ``v, ok := err.(T); ok && ...``
with a large struct ``T`` compares the interface's itab, copies the value, then branches on
the compare's Z.  shfmt's ``formatBytes`` does that with ``syntax.LangError``; lifted with
the compare fused into its first branch (a call taken as the end of the flags), the last
branch read a Z nothing had set, and a ``ParseError`` came out as an empty ``LangError``."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.realprogs.test_debian_static import compare
from tests.realprogs.test_go_pclntab_layouts import _go

SOURCE = """package main

import (
	"fmt"
	"os"
)

type LangErr struct {
	File    string
	Pos     uint64
	Feature string
	Langs   []int
	Pad     [6]int64
}

func (e LangErr) Error() string { return fmt.Sprintf("%s:%d: %s is a feature", e.File, e.Pos, e.Feature) }

type ParseErr struct {
	File string
	Pos  uint64
	Text string
}

func (e ParseErr) Error() string { return fmt.Sprintf("%s:%d: %s", e.File, e.Pos, e.Text) }

//go:noinline
func parse(n int) error {
	switch n % 3 {
	case 0:
		return nil
	case 1:
		return ParseErr{"bad.sh", uint64(n), "syntax"}
	}
	return LangErr{File: "lang.sh", Pos: uint64(n), Feature: "arrays"}
}

var mode = 4

//go:noinline
func check(n int) error {
	err := parse(n)
	if err != nil {
		if s, ok := err.(LangErr); ok && mode == 4 {
			return fmt.Errorf("%w (parsed as bash)", s)
		}
		return err
	}
	return nil
}

func main() {
	for i := 0; i < 6; i++ {
		fmt.Fprintln(os.Stdout, i, check(i))
	}
}
"""


def _flags_across_duff(binary: Path) -> bool:
    """Whether ``main.check`` has a conditional branch after a call of duffcopy/duffzero with no
    flag-setting instruction between (llvm-objdump as the disassembler)."""
    out = subprocess.run(["llvm-objdump", "-d", "--no-show-raw-insn", str(binary)], capture_output=True, text=True).stdout
    body = out.split("<main.check>:", 1)[1].split("\n\n", 1)[0]
    after_duff = False
    for line in body.splitlines():
        if re.search(r"\bbl\s.*<runtime\.duff(copy|zero)", line):
            after_duff = True
        elif re.search(r"\s(cmp|cmn|tst|subs|adds|ands|ccmp|bl)\s", line):
            after_duff = False
        elif after_duff and re.search(r"\sb\.(eq|ne)\s", line):
            return True
    return False


@pytest.fixture(scope="module")
def program(tmp_path_factory) -> tuple[Path, Path]:
    if not shutil.which("qemu-aarch64"):
        pytest.skip("LOUD SKIP: qemu-aarch64 (apt qemu-user) is not installed")
    d = tmp_path_factory.mktemp("goflags")
    (d / "main.go").write_text(SOURCE)
    (d / "go.mod").write_text("module goflags\n\ngo 1.19\n")
    env = {
        "PATH": "/usr/bin:/bin",
        "HOME": str(d),
        "GOCACHE": str(d / "cache"),
        "GOPATH": str(d / "gopath"),
        "GOPROXY": "off",
        "CGO_ENABLED": "0",
        "GOOS": "linux",
        "GOARCH": "arm64",
    }
    r = subprocess.run([_go(), "build", "-o", "goflags", "."], cwd=d, env=env, capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr
    binary = d / "goflags"
    out = d / "bundle"
    # (Go call sites from liveness: the setting this guards, on whatever its default)
    benv = {**os.environ, "NXRECOMP_RECOMPILER_GO_LIVENESS": "1"}
    cmd = [sys.executable, "-m", "nxrecomp", "recompile", str(binary), "-o", str(out)]
    r = subprocess.run(cmd, capture_output=True, text=True, env=benv, timeout=5400)
    assert r.returncode == 0, r.stderr[-3000:]
    return binary, out


def test_flags_live_across_duffcopy_match_qemu(program, tmp_path) -> None:
    """The program's output (an error's type tested after copies of a large value) is
    qemu's; the compiled code does keep the flags across a duffcopy/duffzero call (else the
    test would not test it)."""
    binary, bundle = program
    if shutil.which("llvm-objdump"):
        assert _flags_across_duff(binary), "main.check no longer branches on flags set before a duffcopy call"
    compare("goflags", binary, bundle, tmp_path, ["goflags"])
