"""The C++ exception-table reader (``recompiler.analysis.eh_frame``: ``fdes``, ``read_lsda``,
``landing_pads``) against oracles nobody here wrote.

- FDEs: every FDE's code range and LSDA pointer as ``llvm-dwarfdump --eh-frame`` prints them
  (``pc=START...END`` and ``LSDA Address:``), on our C++ probe built static with zig's clang++
  (libc++, libc++abi and libunwind linked in: their FDEs too).
- Call-site tables: the compiler's own listing.  The probe is compiled to assembly (``-S``),
  whose LSDA lines say, per call site, "Call between .LtmpA and .LtmpB", "jumps to .LtmpC" (or
  no landing pad) in terms of the function's ``.Lfunc_beginN``; the listing is assembled with
  ``llvm-mc --save-temp-labels`` and linked by zig, so the symbol table gives every such label's
  address; each function's records read from the linked image must be those.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from recompiler.analysis import eh_frame as H
from recompiler.elf import load_elf

SRC = Path(__file__).resolve().parents[1] / "realprogs" / "src" / "eh_probe.cpp"
ZIG = [sys.executable, "-m", "ziglang"]


def _need(tool: str) -> None:
    if not shutil.which(tool):
        pytest.skip(f"LOUD SKIP: {tool} (apt llvm) is not installed")


def _reader(path: Path):
    m = load_elf(str(path))

    def read(addr: int, n: int) -> bytes | None:
        for s in m.segments:
            if s.vaddr <= addr and addr + n <= s.vaddr + len(s.data):
                return s.data[addr - s.vaddr : addr - s.vaddr + n]
        return None

    return m, read


@pytest.fixture(scope="module", params=["0", "2"])
def built(request, tmp_path_factory) -> tuple[Path, Path]:
    """(the probe's assembly listing, the program linked from it) at -O<param>."""
    _need("llvm-mc")
    tmp = tmp_path_factory.mktemp(f"lsda-O{request.param}")
    asm, obj, exe = tmp / "eh_probe.s", tmp / "eh_probe.o", tmp / "eh_probe"
    flags = ["-target", "aarch64-linux-musl", f"-O{request.param}", "-g0"]
    r = subprocess.run([*ZIG, "c++", *flags, "-S", str(SRC), "-o", str(asm)], capture_output=True, text=True, timeout=1800)
    assert r.returncode == 0, r.stderr[-2000:]
    r = subprocess.run(
        ["llvm-mc", "-triple=aarch64-linux-musl", "-filetype=obj", "--save-temp-labels", str(asm), "-o", str(obj)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert r.returncode == 0, r.stderr[-2000:]
    r = subprocess.run([*ZIG, "c++", *flags, "-static", str(obj), "-o", str(exe)], capture_output=True, text=True, timeout=1800)
    assert r.returncode == 0, r.stderr[-2000:]
    return asm, exe


def test_fdes_match_llvm_dwarfdump(built) -> None:
    _need("llvm-dwarfdump")
    _asm, exe = built
    out = subprocess.run(["llvm-dwarfdump", "--eh-frame", str(exe)], capture_output=True, text=True, timeout=300).stdout
    want = set()
    for block in re.split(r"\n(?=[0-9a-f]{8} )", out):
        m = re.match(r"[0-9a-f]{8} [0-9a-f]+ [0-9a-f]+ FDE cie=\S+ pc=([0-9a-f]+)\.\.\.([0-9a-f]+)", block)
        if m:
            lsda = re.search(r"LSDA Address: ([0-9a-f]+)", block)
            want.add((int(m[1], 16), int(m[2], 16), int(lsda[1], 16) if lsda else None))
    m, _read = _reader(exe)
    got = {(f.start, f.start + f.size, f.lsda) for f in H.fdes(*m.eh_frame)}
    assert len(want) > 100 and sum(1 for w in want if w[2] is not None) >= 5, (len(want), out[:500])
    assert got == want, (sorted(got - want)[:5], sorted(want - got)[:5])


def _listing_sites(asm: Path) -> dict[str, list[tuple[str, str, str | None]]]:
    """Per ``.Lfunc_beginN`` of the listing: its call sites as (start label, end label, landing
    pad label or None), in order, from the compiler's comments."""
    sites: dict[str, list[tuple[str, str, str | None]]] = {}
    cur = None
    for line in asm.read_text().splitlines():
        m = re.search(r"\.uleb128\s+(\.L\w+)-(\.Lfunc_begin\d+)\s+// >> Call Site \d+ <<", line)
        if m:
            cur = [m[1], None, None]
            sites.setdefault(m[2], []).append(cur)
            continue
        if cur is None:
            continue
        m = re.search(r"// +Call between (\.L\w+) and (\.L\w+)", line)
        if m:
            assert m[1] == cur[0], line
            cur[1] = m[2]
        m = re.search(r"// +jumps to (\.L\w+)", line)
        if m:
            cur[2] = m[1]
        if "On action:" in line:
            cur = None
    return {f: [tuple(s) for s in ss] for f, ss in sites.items()}


def test_call_sites_match_the_compilers_listing(built) -> None:
    asm, exe = built
    listing = _listing_sites(asm)
    assert len(listing) >= 4 and any(lp for ss in listing.values() for *_x, lp in ss), listing
    syms = {}
    for line in subprocess.run(["llvm-objdump", "-t", str(exe)], capture_output=True, text=True, timeout=300).stdout.splitlines():
        parts = line.split()
        if parts and parts[-1].startswith(".L") and re.fullmatch(r"[0-9a-f]{16}", parts[0]):
            assert parts[-1] not in syms, f"label {parts[-1]} twice in the symbol table"
            syms[parts[-1]] = int(parts[0], 16)
    m, read = _reader(exe)
    by_start = {f.start: f for f in H.fdes(*m.eh_frame)}
    all_pads = H.landing_pads([m.eh_frame], read)
    for func, want_sites in listing.items():
        f = by_start[syms[func]]
        assert f.lsda is not None, func
        got = [(cs.start, cs.start + cs.length, cs.landing_pad) for cs in H.read_lsda(read, f.lsda, f.start)]
        want = [(syms[a], syms[b], syms[lp] if lp else 0) for a, b, lp in want_sites]
        assert got == want, func
        for start, end, lp in want:
            if lp and end > start:
                assert (start, end, lp) in all_pads


def test_bad_lsda_is_named() -> None:
    """A call-site encoding with no value format, and a table past the image: errors naming the
    LSDA and its function."""
    bad = bytes([0xFF, 0xFF, 0x07, 0x04, 0, 0, 0, 0])  # call-site encoding 0x07: no such format
    image = {0x1000: bad}

    def read(addr: int, n: int) -> bytes | None:
        for base, data in image.items():
            if base <= addr and addr + n <= base + len(data):
                return data[addr - base : addr - base + n]
        return None

    with pytest.raises(H.LsdaError, match=r"LSDA at 0x1000 \(function 0x4000\).*encoding 0x07"):
        H.read_lsda(read, 0x1000, 0x4000)
    image[0x1000] = bytes([0xFF, 0xFF, 0x01, 0x7F, 0, 0, 0, 0])  # a 127-byte table in 8 bytes
    with pytest.raises(H.LsdaError, match=r"LSDA at 0x1000 \(function 0x4000\): call-site table of 127 bytes runs past"):
        H.read_lsda(read, 0x1000, 0x4000)
    with pytest.raises(H.LsdaError, match=r"LSDA at 0x9000 \(function 0x4000\): outside the image"):
        H.read_lsda(read, 0x9000, 0x4000)
