"""recompiler.build on a small program of hand-encoded A64: lifting and compiling share one
worker pool (no barrier between them), each unit's compiler CPU time reaches the stats, an
unchanged rebuild takes every shard's C and object from the caches, a one-function change
lifts exactly its shard and recompiles it and the shard holding a copy of it (a small leaf,
recompiler/inline_leaves.py), and a compiler failure is one NxError naming the
file.  The linked ``game.so`` is read back with pyelftools: each lifted function is a defined
symbol in it.  Buckets split into parts by instruction count (``split_bucket``).  With
``recompiler.debug_info`` its line tables lead from a lifted function's host addresses to the
C under the guest instruction's comment; without it there are none for the shards."""

from __future__ import annotations

import random
import re
from pathlib import Path

import pytest
from elftools.elf.elffile import ELFFile

from nxrecomp.common.errors import NxError
from recompiler.analyse import Memory, analyse
from recompiler.build import build, split_bucket
from recompiler.inline_leaves import COPY_SIG

BASE = 0x400000
SHARD = 4096


def _bl(at: int, to: int) -> int:
    return 0x94000000 | (((to - at) >> 2) & 0x3FFFFFF)


def _movz(rd: int, imm: int) -> int:
    return 0xD2800000 | (imm << 5) | rd


RET = 0xD65F03C0


def _program(imms: list[int]):
    """An entry at BASE calling one leaf per following page (each page its own shard); the
    leaves return their immediates."""
    words = {BASE + 4 * i: _bl(BASE + 4 * i, BASE + SHARD * (i + 1)) for i in range(len(imms))}
    words[BASE + 4 * len(imms)] = RET
    for i, imm in enumerate(imms):
        leaf = BASE + SHARD * (i + 1)
        words[leaf], words[leaf + 4] = _movz(0, imm), RET
    size = SHARD * (len(imms) + 1)
    data = bytearray(size)
    for a, w in words.items():
        data[a - BASE : a - BASE + 4] = w.to_bytes(4, "little")
    return analyse(Memory([(BASE, size, bytes(data), True)]), BASE, set(), [])


def _symbols(so: Path) -> set[str]:
    with open(so, "rb") as f:
        elf = ELFFile(f)
        return {s.name for s in elf.get_section_by_name(".symtab").iter_symbols() if s["st_shndx"] != "SHN_UNDEF"}


@pytest.fixture
def env(tmp_path, monkeypatch):
    monkeypatch.setenv("NXRECOMP_NXRECOMP_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("NXRECOMP_RECOMPILER_SHARD_BYTES", str(SHARD))
    monkeypatch.setenv("NXRECOMP_RECOMPILER_JOBS", "2")
    return tmp_path


def test_build_caches_and_rebuilds_one_shard(env):
    imms = [random.randrange(1 << 16) for _ in range(3)]
    out = env / "bundle"
    first = build(_program(imms), out)
    src_first = {p.name: p.read_text() for p in (out / "src").glob("*.c")}
    assert first["shards"] == 4 and first["functions"] == 4
    assert first["objects_cached"] == 0
    # every unit was compiled here (zig's own cache may make some of them quick)
    assert first["cpu_seconds"]["compile"] > 0 and first["cpu_seconds"]["lift"] >= 0
    assert len(first["slowest"]) == 5
    syms = _symbols(out / "game.so")
    for addr in [BASE] + [BASE + SHARD * (i + 1) for i in range(3)]:
        assert f"F_{addr:x}" in syms
    assert {"nx_entries", "nx_entry_count", "nx_program_entry"} <= syms

    again = build(_program(imms), out)
    assert again["objects_cached"] == again["objects"] == first["objects"]
    assert again["cpu_seconds"]["compile"] == 0 and again["slowest"] == []
    assert again["shards_lift_cached"] == again["shards"] and first["shards_lift_cached"] == 0
    # C from the lift cache is the C lifting made
    assert {p.name: p.read_text() for p in (out / "src").glob("*.c")} == src_first

    # the entry's shard holds a static copy of each leaf it calls (recompiler/inline_leaves.py)
    entry_c = src_first[f"shard_{BASE // SHARD:05d}_0.c"]
    assert all(f"static u64 I_{BASE + SHARD * (i + 1):x}{COPY_SIG} {{" in entry_c for i in range(3))
    imms[1] ^= 1  # one leaf changes: its shard alone is lifted; it and the copy's shard compiled
    third = build(_program(imms), env / "bundle2")
    assert third["objects_cached"] == third["objects"] - 2
    assert third["shards_lift_cached"] == third["shards"] - 1
    assert sorted(name for name, _s in third["slowest"]) == [
        f"shard_{BASE // SHARD:05d}_0.c",
        f"shard_{(BASE + 2 * SHARD) // SHARD:05d}_0.c",
    ]


def test_object_cache_key_holds_the_compiler_command_line(env, monkeypatch):
    """A build whose compiler command carries a define (bench/corpus.py --ab-define) compiles
    every unit again instead of taking the objects built without it, and its own rebuild takes
    them all from the cache: the whole command line is in the key, not just the version."""
    from recompiler import cc

    imms = [random.randrange(1 << 16) for _ in range(2)]
    plain = build(_program(imms), env / "plain")
    base = " ".join(cc.compiler())
    monkeypatch.setenv("NXRECOMP_RECOMPILER_CC", f"{base} -DNX_CACHE_KEY_TEST=1")
    cc.compiler.cache_clear()
    try:
        defined = build(_program(imms), env / "defined")
        again = build(_program(imms), env / "defined")
    finally:
        monkeypatch.delenv("NXRECOMP_RECOMPILER_CC")
        cc.compiler.cache_clear()
    assert plain["objects_cached"] == 0 and defined["objects"] == plain["objects"]
    assert defined["objects_cached"] == 0, "an object compiled without the define was reused"
    assert again["objects_cached"] == again["objects"]


class _Plan:
    def __init__(self, n: int) -> None:
        self.insns = [None] * n


@pytest.mark.parametrize("sizes", [[100, 200, 3000, 50, 60, 1100, 10, 4000, 5000, 1, 1], [900] * 10, [5000], []])
def test_split_bucket_keeps_order_bounds_parts_and_isolates_big_functions(sizes):
    plans = [_Plan(n) for n in sizes]
    parts = split_bucket(plans, 4096)
    assert [p for part in parts for p in part] == plans  # every function once, in order
    for part in parts:
        total = sum(len(p.insns) for p in part)
        assert total <= 4096 or len(part) == 1
        if any(len(p.insns) > 1024 for p in part):
            assert len(part) == 1
    # consecutive small parts are only split when the next would overflow
    for a, b in zip(parts, parts[1:]):
        if all(len(p.insns) <= 1024 for p in a + b):
            assert sum(len(p.insns) for p in a + b) > 4096


def test_compiler_failure_names_the_file(env):
    bad = env / "broken_runtime_part.c"
    bad.write_text("int f(void) { return syntax error here; }\n")
    with pytest.raises(NxError) as e:
        build(_program([7]), env / "bundle", extra_c=[bad])
    assert str(bad) in str(e.value) and "error" in str(e.value)
    assert not (env / "bundle" / "game.so").exists()


def test_prune_removes_least_recently_used_entries_first(tmp_path):
    import os
    from recompiler.build import prune

    for i in range(6):
        p = tmp_path / f"e{i}.o"
        p.write_bytes(b"x" * 100)
        os.utime(p, (1000 + i, 1000 + i))  # e0 the least recently used
    (tmp_path / "tmpabc.o.tmp").write_bytes(b"y" * 500)  # a running build's object: not an entry
    os.utime(tmp_path / "e1.o", (2000, 2000))  # a cache hit made e1 recent
    assert prune(tmp_path, 350) == 3
    left = sorted(p.name for p in tmp_path.iterdir())
    assert left == ["e1.o", "e4.o", "e5.o", "tmpabc.o.tmp"]
    assert prune(tmp_path, 10_000) == 0


def _line_rows(so: Path) -> dict[int, tuple[str, int]]:
    """address -> (file name, line) of every row of game.so's DWARF line tables."""
    rows = {}
    with open(so, "rb") as f:
        dwarf = ELFFile(f).get_dwarf_info()
        for cu in dwarf.iter_CUs():
            lp = dwarf.line_program_for_CU(cu)
            if lp is None:
                continue
            files = lp["file_entry"]
            for e in lp.get_entries():
                s = e.state
                if s is not None and not s.end_sequence:
                    rows.setdefault(s.address, (files[s.file - 1].name.decode(), s.line))
    return rows


def test_debug_info_maps_a_lifted_function_to_its_guest_instruction(env, monkeypatch):
    """recompiler.debug_info (with comments): a lifted function's host addresses have
    line-table rows in its shard's C, and the line above one names its guest instruction."""
    monkeypatch.setenv("NXRECOMP_RECOMPILER_DEBUG_INFO", "1")
    monkeypatch.setenv("NXRECOMP_RECOMPILER_COMMENTS", "1")
    # add x0, x0, x1; eor x0, x0, x2; mul x0, x0, x2; ret: work that stays on its own lines
    # (a leaf's `mov x0, #imm; ret` becomes two register moves on the function's closing line)
    words = [0x8B010000, 0xCA020000, 0x9B027C00, RET]
    data = b"".join(w.to_bytes(4, "little") for w in words).ljust(SHARD, b"\0")
    out = env / "bundle"
    build(analyse(Memory([(BASE, SHARD, data, True)]), BASE, set(), []), out)
    with open(out / "game.so", "rb") as f:
        sym = next(s for s in ELFFile(f).get_section_by_name(".symtab").iter_symbols() if s.name == f"F_{BASE:x}")
        addr = sym["st_value"]
    rows = _line_rows(out / "game.so")
    near = [rows[a] for a in sorted(rows) if addr <= a < addr + sym["st_size"]]
    assert near, "no line-table row inside the function"
    name, _ = near[0]
    assert Path(name).name.startswith("shard_"), near
    text = (out / "src" / Path(name).name).read_text().splitlines()
    lines = {ln for n, ln in near if Path(n).name == Path(name).name}
    shown = "\n".join(text[ln - 2] for ln in lines if ln >= 2)
    assert re.search(
        rf"/\* {BASE:x}: add x0, x0, x1 \*/|/\* {BASE + 4:x}: eor x0, x0, x2 \*/|"
        rf"/\* {BASE + 8:x}: mul x0, x0, x2 \*/",
        shown,
    ), shown


def test_no_debug_info_by_default(env):
    out = env / "bundle"
    build(_program([7]), out)
    with open(out / "game.so", "rb") as f:
        assert ELFFile(f).get_section_by_name(".debug_line") is None or not any(
            n.startswith("shard_") for n, _ in _line_rows(out / "game.so").values()
        )
