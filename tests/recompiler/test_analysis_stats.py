"""What ``nxrecomp recompile --stats`` prints of the analysis (``analysis.stats``): functions,
entries by how each was found, the total of entries first found as a code pointer (a data word,
or an address the code builds at any distance: issue 29 asks how many pointers were found),
jump tables and the branches left unresolved.

The program: ``main`` builds ``f``'s address with an ``adrp`` and an ``add`` eleven instructions
apart (beyond the entry sweep's pairing window: found by ``analysis.pointers``), calls ``g``
and ends in ``br x1`` (a register it was entered with: unresolved); ``h`` is named only by a
word of read-only data.  The code-pointer line fails on the code before it (no such field)."""

from __future__ import annotations

from recompiler.analyse import Memory, analyse
from recompiler.analysis.stats import AnalysisStats
from recompiler.decode import disasm

BASE = 0x30000000
RODATA = BASE + 0x2000
NOPS = 10
MAIN = BASE
BR = BASE + 4 * (NOPS + 3)
G, F, H = BR + 4, BR + 8, BR + 12
NOP, RET = 0xD503201F, 0xD65F03C0

CODE = (
    [0x90000000]  # adrp x0, BASE
    + [NOP] * NOPS
    + [0x91000000 | ((F & 0xFFF) << 10), 0x94000000 | ((G - (BR - 4)) // 4), 0xD61F0020]  # add x0, x0, #f; bl g; br x1
    + [RET, RET, RET]  # g, f, h
)
TEXT = ["adrp x0, #0x30000000", *["nop"] * NOPS, "add x0, x0, #0x3c", "bl #0x30000038", "br x1", "ret", "ret", "ret"]


def test_stats_count_tables_pointers_and_unresolved_branches() -> None:
    assert [disasm(w, BASE + 4 * k) for k, w in enumerate(CODE)] == TEXT
    code = b"".join(w.to_bytes(4, "little") for w in CODE)
    rodata = bytearray(0x100)
    rodata[0x10:0x18] = H.to_bytes(8, "little")
    mem = Memory([(BASE, 0x1000, code, True), (RODATA, 0x100, bytes(rodata), False)], read_only=[(BASE, 0x1000), (RODATA, 0x100)])
    prog = analyse(mem, MAIN, set(), [], {})
    s = prog.stats
    assert sorted(prog.functions) == [MAIN, G, F, H]
    assert s.entries_by_source == {"entry": 1, "bl": 1, "adrp+add": 1, "data": 1}, s.entries_by_source
    assert s.code_pointers == 2
    assert s.unresolved_br == [BR] and s.tables == 0
    lines = s.text().splitlines()
    assert "code pointers    2 entries first found as a code pointer (adrp+add 1, data 1)" in lines, lines
    assert f"unresolved BR    1: {BR:#x}" in lines, lines
    # the manifest keeps the stats as JSON; ``--stats`` prints them from there
    back = s.to_json()
    again = AnalysisStats.from_json(back)
    assert again.text() == s.text()
