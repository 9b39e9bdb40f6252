"""Go function tables (``recompiler/analysis/gopclntab.py``) of the layouts before Go 1.18, on a
Go program of that age nobody here wrote: Debian 11 ("bullseye") arm64's ``fzf`` 0.24, statically
linked by Go 1.15 (its table's magic 0xFFFFFFFB, the Go 1.2-1.15 layout).

The reader is checked against the Go runtime's own traceback under qemu-aarch64 (SIGQUIT with
GOTRACEBACK=system: each frame's name and entry, pc - offset, which the runtime reads from the
same table), and the recompiled program against qemu-aarch64 (``fzf --filter``: fuzzy matching
of its standard input, no terminal).  The Go 1.16-1.17 layout (0xFFFFFFFA) is read from the same
functions laid out as ``debug/gosym`` reads that layout (no Debian release that the mirror still
serves has a program built by those Go versions).  A position-independent Go program (built here
by the Go toolchain, where one is installed) is read from its relocated table.  The package is
downloaded at test time (``nxrecomp.common.debian``, suite "bullseye")."""

from __future__ import annotations

import re
import shutil
import signal
import struct
import subprocess
import time
from pathlib import Path

import pytest

from recompiler.analysis.gopclntab import MAGIC_12, MAGIC_116, PclntabError, goroutine_returns, pclntab_entries, pclntab_functions
from tests.realprogs.test_debian_static import _bundle, compare

pytestmark = pytest.mark.network

LINES = "".join(f"{w}\n" for w in ["apple", "banana", "cherry", "mango", "orange", "pineapple", "tangerine", "grape"] * 40)


def _fzf() -> Path:
    from nxrecomp.common import debian

    try:
        return debian.fetch("fzf", "arm64", "bullseye") / "usr/bin/fzf"
    except debian.RegistryUnreachable as e:
        pytest.skip(f"LOUD SKIP: Debian mirror unreachable, cannot fetch bullseye's fzf:arm64: {e}")


def _table(binary: Path) -> tuple[int, bytes]:
    """(address, bytes) of the binary's .gopclntab, where readelf (binutils) says it is."""
    out = subprocess.run(["readelf", "-SW", str(binary)], capture_output=True, text=True, check=True).stdout
    m = re.search(r"\.gopclntab\s+PROGBITS\s+([0-9a-f]+)\s+([0-9a-f]+)\s+([0-9a-f]+)", out)
    assert m, out
    addr, off, size = (int(g, 16) for g in m.groups())
    return addr, binary.read_bytes()[off : off + size]


def _traceback(binary: Path, argv: list[str]) -> list[tuple[str, int]]:
    """(name, entry) of every frame of the Go runtime's SIGQUIT traceback of ``binary`` under
    qemu-aarch64, waiting for its standard input (a signal before the runtime has installed its
    handler kills it without one: on a loaded machine it is asked again, later)."""
    for wait in (3, 10, 30):
        p = subprocess.Popen(
            ["qemu-aarch64", str(binary), *argv],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env={"GOTRACEBACK": "system", "PATH": "/usr/bin:/bin"},
        )
        time.sleep(wait)  # it waits reading stdin
        p.send_signal(signal.SIGQUIT)
        _out, err = p.communicate(timeout=60)
        frames = re.findall(rb"^(\S[^\n]*)\([^()\n]*\)\n\t.* \+0x([0-9a-f]+) .*pc=0x([0-9a-f]+)$", err, re.M)
        if len(frames) >= 10:
            return [(n.decode(), int(pc, 16) - int(off, 16)) for n, off, pc in frames]
    raise AssertionError(err[-2000:])


def test_go115_pclntab_matches_go_traceback() -> None:
    if not shutil.which("qemu-aarch64"):
        pytest.skip("LOUD SKIP: qemu-aarch64 (apt qemu-user) is not installed")
    binary = _fzf()
    addr, data = _table(binary)
    assert struct.unpack_from("<I", data)[0] == MAGIC_12, "not a Go 1.2-1.15 table: the test shows nothing"
    funcs: dict[str, set[int]] = {}
    for e, n in pclntab_functions(addr, data):
        funcs.setdefault(n, set()).add(e)
    for name, entry in _traceback(binary, ["--filter=x"]):
        assert name in funcs, f"{name} is not in our table"
        assert entry in funcs[name], f"{name}: entries {sorted(map(hex, funcs[name]))}, the traceback says {entry:#x}"
    entries = pclntab_entries(addr, data)
    assert len(entries) == struct.unpack_from("<Q", data, 8)[0] == sum(map(len, funcs.values()))
    assert entries == sorted(entries)
    assert goroutine_returns(addr, data) == [min(funcs["runtime.goexit"]) + 4]


def _as_116(data: bytes) -> bytes:
    """The Go 1.2 table ``data`` laid out as Go 1.16-1.17 lay theirs (``debug/gosym``: after the
    8 header bytes, nfunc, nfiles and the offsets of the function-name, CU, file, pc-value and
    function tables; (entry address, record offset from the function table) pairs; records
    whose name offset counts from the function-name table).  The records and names are the
    1.2 table's own bytes: the names table is the whole old section, records follow it."""
    (n,) = struct.unpack_from("<Q", data, 8)
    pairs = list(struct.iter_unpack("<QQ", data[16 : 16 + 16 * n]))
    (end,) = struct.unpack_from("<Q", data, 16 + 16 * n)
    names, pcoff = 8 + 7 * 8, 8 + 7 * 8 + len(data)
    tab_size = 16 * n + 8
    recs = bytearray(data)  # each record at the same place, after the function table
    functab = b"".join(struct.pack("<QQ", e, tab_size + f) for e, f in pairs) + struct.pack("<Q", end)
    head = struct.pack("<IBBBB", MAGIC_116, 0, 0, 4, 8) + struct.pack("<7Q", n, 0, names, 0, 0, 0, pcoff)
    return head + data + functab + recs


def test_go116_layout_reads_the_same_functions() -> None:
    binary = _fzf()
    addr, data = _table(binary)
    old = pclntab_functions(addr, data)
    assert pclntab_functions(addr, _as_116(data)) == old
    assert len(old) > 2000


def test_old_layouts_bad_tables() -> None:
    head12 = struct.pack("<IBBBB", MAGIC_12, 0, 0, 4, 8)
    with pytest.raises(PclntabError, match="runs past"):
        pclntab_entries(0x1000, head12 + struct.pack("<Q", 1 << 40))
    # one function whose record (at offset 40) names another entry than the table's
    table = head12 + struct.pack("<QQQQ", 1, 0x10000, 40, 0x10010) + struct.pack("<QiI", 0x20000, 0, 0)
    with pytest.raises(PclntabError, match="names entry 0x20000"):
        pclntab_functions(0x1000, table)
    with pytest.raises(PclntabError, match="header truncated"):
        pclntab_entries(0x1000, struct.pack("<IBBBB", MAGIC_116, 0, 0, 4, 8) + bytes(16))


@pytest.fixture(scope="module")
def fzf(tmp_path_factory) -> tuple[Path, Path]:
    binary = _fzf()
    return binary, _bundle(binary, "fzf-bullseye", tmp_path_factory)


@pytest.mark.parametrize("argv", [["--version"], ["--nosuchflag"]], ids=["version", "bad-flag"])
def test_fzf_go115_matches_qemu(fzf, tmp_path, argv) -> None:
    binary, bundle = fzf
    compare("fzf", binary, bundle, tmp_path, ["fzf", *argv])


# Failed about every second run before session 32's go-stack: a goroutine's return to goexit+4 came
# up to the run loop's nx_enter of goexit+4 itself (entered with X30 = goexit+4 after the previous
# goroutine's return), which wrote back the SP it had passed, that dead goroutine's ("runtime:
# newstack sp=0x4000030fd0 stack=[0x4000054000, 0x4000055000]", split stack overflow).  A Go build
# has no such write-back now (build._table_source nx_returns_store_frame; test_go_stack_moves.py).
@pytest.mark.heavy
@pytest.mark.parametrize(
    "argv", [["--filter=an"], ["-e", "--no-sort", "--filter=ap"], ["--filter=zzz"]], ids=lambda a: " ".join(a)
)
def test_fzf_go115_filter_matches_qemu(fzf, tmp_path, argv) -> None:
    binary, bundle = fzf
    compare("fzf", binary, bundle, tmp_path, ["fzf", *argv], LINES.encode())


GO_PIE = """package main

import (
	"fmt"
	"os"
	"sort"
)

type shape interface{ area() float64 }
type sq struct{ s float64 }

func (q sq) area() float64 { return q.s * q.s }

func main() {
	words := os.Args[1:]
	sort.Slice(words, func(i, j int) bool { return words[i] < words[j] })
	ch := make(chan int)
	go func() { ch <- len(words); close(ch) }()
	fmt.Println(words, shape(sq{2}).area(), <-ch)
}
"""


def _go() -> str:
    for g in (shutil.which("go"), *sorted(Path("/usr/lib").glob("go-1.*/bin/go"), reverse=True)):
        if g:
            return str(g)
    pytest.skip("LOUD SKIP: no Go toolchain (apt golang-go) to build a position-independent Go program")


@pytest.mark.parametrize("strip", [False, True], ids=["symbols", "stripped"])
def test_go_pie_table_is_read_as_relocated(tmp_path, strip) -> None:
    """A position-independent Go program (``-buildmode=pie``, built here for arm64) keeps its
    table in ``.data.rel.ro.gopclntab``, whose ``textStart`` its dynamic relocations fill in (the
    file holds the link address, 0x11000): read as placed and relocated, every entry is a
    function symbol of the Go linker's ``.symtab`` where the program is placed, under the same
    name (the linker's ``.abi0`` suffixes and array lengths aside); stripped, the table finds them
    and the program follows Go's calling convention."""
    from elftools.elf.elffile import ELFFile

    from recompiler.link import link_program
    from recompiler.pipeline import analyse_image, go_pclntabs

    (tmp_path / "main.go").write_text(GO_PIE)
    (tmp_path / "go.mod").write_text("module pie\n\ngo 1.19\n")
    env = {
        "PATH": "/usr/bin:/bin",
        "HOME": str(tmp_path),
        "GOCACHE": str(tmp_path / "cache"),
        "GOPATH": str(tmp_path / "gopath"),
        "GOPROXY": "off",
        "CGO_ENABLED": "0",
        "GOOS": "linux",
        "GOARCH": "arm64",
    }
    flags = ["-ldflags=-s -w"] if strip else []
    r = subprocess.run(
        [_go(), "build", "-buildmode=pie", *flags, "-o", "pie", "."],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert r.returncode == 0, r.stderr
    binary = tmp_path / "pie"
    image = link_program(str(binary))
    ((addr, data),) = go_pclntabs(image)
    base = image.modules[0].base
    assert base != 0
    funcs = pclntab_functions(addr, data)
    assert len(funcs) > 1000
    if not strip:
        syms: dict[int, set[str]] = {}
        for s in ELFFile(open(binary, "rb")).get_section_by_name(".symtab").iter_symbols():
            if s["st_info"]["type"] == "STT_FUNC":
                syms.setdefault(base + s["st_value"], set()).add(s.name)
        for e, n in funcs:
            assert e in syms, f"{n} at {e:#x} is no function symbol"
            assert any(x.removesuffix(".abi0") == n or re.sub(r"\[\d+\]", "[...]", x) == n for x in syms[e]), (n, syms[e])
    prog = analyse_image(image)
    assert prog.abi == "go"
    if strip:
        assert prog.stats.entries_by_source.get("pclntab", 0) > 1000, prog.stats.entries_by_source
