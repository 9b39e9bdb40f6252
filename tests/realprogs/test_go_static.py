"""A Go program nobody here wrote (Debian 12's arm64 ``shfmt``, statically linked by the Go
toolchain: no libc, Go's own runtime and calling convention), recompiled and run against
qemu-aarch64 with identical stdout, stderr and exit status.

Go stresses what the C corpus does not: its runtime's assembly (``gogo``/``mcall``/
``systemstack`` switch SP and X28, the goroutine), stack growth that copies a goroutine's stack
(``morestack``), functions reached only through Go's own tables (closures, itabs), many OS
threads (clone, futexes), SIGURG preemption whose handler moves the interrupted pc.  The
function table every Go binary carries (``.gopclntab``, ``recompiler/analysis/gopclntab.py``)
is checked against the Go runtime's own traceback under qemu (its names and entries, read by the
runtime from the same table).

CI runs the pclntab checks and a few shfmt cases; the rest is ``heavy``.  The package is
downloaded at test time (nxrecomp.common.debian)."""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from recompiler.analysis import go_args
from recompiler.link import link_program
from recompiler.analysis.gopclntab import PclntabError, pclntab_entries, pclntab_functions
from tests.realprogs import results_table
from tests.realprogs.test_debian_static import RESULTS, _bundle, _fetch, compare

pytestmark = pytest.mark.network

SCRIPT = """#!/bin/sh
# a comment
if [ "$a" ];then echo  hi;fi
for i in 1 2 3; do echo $i ;done
f() {  local x=$1
  case $x in a|b) echo ab;; *) echo other ;;esac
}
cat <<EOF
here $HOME
EOF
x=$(( 1+2 ))   ;   y=${x:-0}
while read -r line; do printf '%s\\n' "$line"; done < /dev/null
"""
BAD = "if true; then echo\nfi fi (\n"
# deep nesting: the parser's recursion grows the goroutine's stack (morestack copies it, and
# every frame moves); many lines: the heap grows and the collector runs
DEEP = "x=$((" + "(" * 400 + "1" + ")" * 400 + "))\n" + "if true; then\n" * 200 + "echo deep\n" + "fi\n" * 200
MANY = "".join(f"f{i}() {{ case $1 in a{i}|b) echo {i} ;; esac; x=$(( {i} * 2 )); }}\n" for i in range(3000))

# (case id, argv after "shfmt", stdin, input files); the first few run in CI
CASES = [
    ("stdin", [], SCRIPT, {}),
    ("file-indent", ["-i", "2", "script.sh"], "", {"script.sh": SCRIPT}),
    ("syntax-error", ["bad.sh"], "", {"bad.sh": BAD}),
    ("diff", ["-d", "script.sh"], "", {"script.sh": SCRIPT}),
    ("version", ["--version"], "", {}),
    ("minify", ["-mn"], SCRIPT, {}),
    ("list", ["-l", "."], "", {"script.sh": SCRIPT, "ok.sh": "echo ok\n", "bad.sh": BAD}),
    ("find", ["-f", "."], "", {"a.sh": "echo a\n", "b.bash": "echo b\n", "c.txt": "x\n"}),
    ("simplify-bash", ["-s", "-ln", "bash"], 'if [[ "$a" == "b" ]]; then echo $(( $x+1 )); fi\n', {}),
    ("to-json", ["--to-json"], "echo hi | wc -l\n", {}),
    ("posix-error", ["-ln", "posix"], "a=(1 2)\n", {}),
    ("help", ["-h"], "", {}),
    ("bad-flag", ["--nosuchflag"], "", {}),
    ("deep-nesting", [], DEEP, {}),
    ("many-lines", ["-s"], MANY, {}),
]
CI = {"stdin", "syntax-error", "version"}


def _shfmt() -> Path:
    return _fetch("shfmt", "usr/bin/shfmt")


def _table(binary: Path) -> tuple[int, bytes]:
    """(address, bytes) of the binary's .gopclntab, read with readelf (binutils) as oracle for
    where the section is."""
    out = subprocess.run(["readelf", "-SW", str(binary)], capture_output=True, text=True, check=True).stdout
    m = re.search(r"\.gopclntab\s+PROGBITS\s+([0-9a-f]+)\s+([0-9a-f]+)\s+([0-9a-f]+)", out)
    assert m, out
    addr, off, size = (int(g, 16) for g in m.groups())
    return addr, binary.read_bytes()[off : off + size]


@pytest.fixture(scope="module", autouse=True)
def table(request):
    yield
    results_table.write(request, {k: v for k, v in RESULTS.items() if k == "shfmt"})


def test_pclntab_matches_go_traceback(tmp_path) -> None:
    """Every frame of the Go runtime's own traceback (SIGQUIT with GOTRACEBACK=system under
    qemu-aarch64: ``name(...)`` then ``+0xOFF ... pc=0xPC``) names a function whose entry,
    PC - OFF, our reader lists under that name."""
    if not shutil.which("qemu-aarch64"):
        pytest.skip("LOUD SKIP: qemu-aarch64 (apt qemu-user) is not installed")
    binary = _shfmt()
    funcs: dict[str, set[int]] = {}  # (a name may have two entries: an ABI wrapper's and its own)
    for e, n in pclntab_functions(*_table(binary)):
        funcs.setdefault(n, set()).add(e)
    p = subprocess.Popen(
        ["qemu-aarch64", str(binary)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env={"GOTRACEBACK": "system", "PATH": "/usr/bin:/bin"},
    )
    time.sleep(2)  # it waits reading stdin
    p.send_signal(signal.SIGQUIT)
    _out, err = p.communicate(timeout=60)
    frames = re.findall(rb"^(\S[^\n]*)\([^()\n]*\)\n\t.* \+0x([0-9a-f]+) .*pc=0x([0-9a-f]+)$", err, re.M)
    assert len(frames) >= 10, err[-2000:]
    for name, off, pc in frames:
        n = name.decode()
        assert n in funcs, f"{n} is not in our table"
        entry = int(pc, 16) - int(off, 16)
        assert entry in funcs[n], f"{n}: entries {sorted(map(hex, funcs[n]))}, the traceback says {entry:#x}"
    assert len(pclntab_entries(*_table(binary))) == sum(map(len, funcs.values()))


def test_go_args_kinds() -> None:
    """``analysis.go_args``: functions compiled from Go with no parameter (their ``_func.args``
    0), against the Go 1.19 runtime's source: ``newstack()``, ``schedule()``, ``main()`` take
    none; ``gopanic(e any)`` and ``throw(s string)`` take one; ``morestack``, ``memmove`` and
    ``gcWriteBarrier`` are assembly (``funcFlag_ASM``), neither compiled nor capped."""
    addr, data = _table(_shfmt())
    by_name: dict[str, set[int]] = {}
    for e, n in pclntab_functions(addr, data):
        by_name.setdefault(n, set()).add(e)
    argless, compiled = go_args.kinds(addr, data)
    assert argless <= compiled
    for n in ("runtime.newstack", "runtime.schedule", "runtime.main", "runtime.mallocgc"):
        assert by_name[n] <= compiled, n
    for n in ("runtime.newstack", "runtime.schedule", "runtime.main"):
        assert by_name[n] <= argless, n
    for n in ("runtime.gopanic", "runtime.throw", "runtime.mallocgc"):
        assert not by_name[n] & argless, n
    for n in ("runtime.morestack", "runtime.memmove", "runtime.gcWriteBarrier"):
        assert not by_name[n] & compiled, n


def test_go_args_stub_spills() -> None:
    """``analysis.go_args.stub_spills``: a function's register arguments as its morestack stub
    spills them, against the Go 1.19 sources' signatures: ``mallocgc(size uintptr, typ *_type,
    needzero bool)`` X0-X2, ``bufio.(*Writer).WriteByte(c byte)`` X0 (the receiver) and X1,
    ``syntax.(*Parser).rune()`` X0; and against the linker's ``_func.args`` everywhere: each
    spilled register has a slot of at least one byte in the argument area."""
    binary = _shfmt()
    addr, data = _table(binary)
    from recompiler import pipeline

    program = pipeline.analyse_image(pipeline.link_program(binary, []), set())
    morestack = go_args.morestack_entries(addr, data)
    names = dict(pclntab_functions(addr, data))
    by_name = {n: e for e, n in names.items()}
    want = {"runtime.mallocgc": 0b111, "bufio.(*Writer).WriteByte": 0b11, "mvdan.cc/sh/v3/syntax.(*Parser).rune": 0b1}
    for n, regs in want.items():
        assert go_args.stub_spills(program.functions[by_name[n]].insns, morestack) == regs, n
    _argless, compiled = go_args.kinds(addr, data)
    args = go_args.arg_sizes(addr, data)
    seen = 0
    for e in compiled & program.functions.keys():
        regs = go_args.stub_spills(program.functions[e].insns, morestack)
        if regs is not None:
            seen += 1
            assert bin(regs).count("1") <= args[e], f"{names[e]}: spills {regs:#x}, args {args[e]}"
    assert seen > 2000


def test_go_method_results() -> None:
    """``analysis.go_args.method_results``: the result registers of methods from their types'
    method tables, against the Go sources' signatures: ``Write(p []byte) (n int, err error)``
    X0-X2, ``WriteByte(c byte) error`` X0-X1, ``Error() string`` X0-X1, ``rune() rune`` X0; a
    method whose record has no type (``Parser.regToken``: the linker kept none, no interface or
    reflect reaches it) none; every text offset of the type data is explained by a record."""
    binary = _shfmt()
    addr, data = _table(binary)
    from recompiler.pipeline import image_memory

    image = link_program(binary, [])
    names = dict(pclntab_functions(addr, data))
    by_name = {n: e for e, n in names.items()}
    opened, results = go_args.method_results(image_memory(image), addr, data, set(names))
    assert not opened
    for n in ("bufio.(*Writer).Write", "bytes.(*Buffer).Write", "text/tabwriter.(*Writer).Write"):
        assert results[by_name[n]] == 0b111, n
    for n in ("bufio.(*Writer).WriteByte", "runtime.errorString.Error"):
        assert results[by_name[n]] == 0b11, n
    assert results[by_name["mvdan.cc/sh/v3/syntax.(*Parser).rune"]] == 0b1
    assert results[by_name["mvdan.cc/sh/v3/syntax.(*Parser).regToken"]] == 0


def test_pclntab_bad_header() -> None:
    with pytest.raises(PclntabError, match="magic 0x12345678 is no Go pclntab magic"):
        pclntab_entries(0x1000, bytes.fromhex("78563412") + bytes([0, 0, 4, 8]) + bytes(72))
    with pytest.raises(PclntabError, match="fewer than its 16-byte header"):
        pclntab_entries(0x1000, b"\xf0\xff\xff\xff")
    with pytest.raises(PclntabError, match="runs past"):
        pclntab_entries(0x1000, bytes.fromhex("f0ffffff00000408") + (1000).to_bytes(8, "little") + bytes(64))


@pytest.fixture(scope="module")
def shfmt(tmp_path_factory) -> tuple[Path, Path]:
    binary = _shfmt()
    return binary, _bundle(binary, "shfmt", tmp_path_factory)


def _params():
    for name, argv, stdin, files in CASES:
        marks = [] if name in CI else [pytest.mark.heavy]
        yield pytest.param(argv, stdin, files, marks=marks, id=name)


@pytest.mark.parametrize("argv,stdin,files", list(_params()))
def test_shfmt_matches_qemu(shfmt, tmp_path, argv, stdin, files) -> None:
    binary, bundle = shfmt
    compare("shfmt", binary, bundle, tmp_path, ["shfmt", *argv], stdin.encode(), files)


@pytest.mark.heavy
def test_shfmt_lift_on_miss_with_go_abi(tmp_path) -> None:
    """A Go function hidden from the build (``recompiler.hide_entries``: main.formatStdin, found
    by name in the pclntab) is lifted at run time with the build's assumptions (the manifest's
    ``abi``: Go's), the output is qemu's, and the rebuild takes it (0 lifts)."""
    if not shutil.which("qemu-aarch64"):
        pytest.skip("LOUD SKIP: qemu-aarch64 (apt qemu-user) is not installed")
    binary = _shfmt()
    entry = next(e for e, n in pclntab_functions(*_table(binary)) if n == "main.formatStdin")
    out = tmp_path / "bundle"
    env = {**os.environ, "NXRECOMP_RECOMPILER_HIDE_ENTRIES": f"{entry:#x}"}
    cmd = [sys.executable, "-m", "nxrecomp", "recompile", str(binary), "-o", str(out)]
    assert subprocess.run(cmd, capture_output=True, env=env, timeout=5400).returncode == 0
    ref = subprocess.run(["qemu-aarch64", str(binary)], input=SCRIPT.encode(), capture_output=True, timeout=120)
    for lifts in (1, 0):
        ours = subprocess.run([str(out / "nxrun"), "shfmt"], input=SCRIPT.encode(), capture_output=True, timeout=120)
        assert (ours.returncode, ours.stdout) == (ref.returncode, ref.stdout), ours.stderr[-2000:]
        assert len(results_table.LIFT_NOTICE.findall(ours.stderr)) == lifts, ours.stderr[-2000:]
        if lifts:
            assert f"function at {entry:#x}".encode() in ours.stderr
            assert subprocess.run(cmd, capture_output=True, env=env, timeout=5400).returncode == 0
