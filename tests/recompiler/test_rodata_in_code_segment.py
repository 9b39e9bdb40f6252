"""Words of read-only data mapped executable are no code (``Memory.code_ranges``): a ``BL`` is
read in the program's sections of code only, and an address in its rodata is no entry.

Debian 12's arm64 libraries (libm, libmpfr, libjq, libc) are linked without separate code
pages: one ``R E`` segment holds ``.text``, ``.rodata`` and ``.eh_frame``.  Analysis read every
word of an executable segment as an instruction and every address in one as code, so in gawk's
image six words of libm's ``.eh_frame`` decoded as ``BL``s into libmpfr's
``mpfr_vasnprintf_aux``: six false entries split that function, and the pieces holding its
format switch (``cmp w5, #12; b.hi; ldrh; adr; add; br``) had no table; gawk ``-M`` stopped in
``printf``.  Strings that ``adrp``+``add`` address became functions too (libc: 1,481 such
entries, 140 in code).

``programs/rodata_bl_word.c`` has that shape: a ``const`` word that is a ``BL`` to the ``br`` of
``step``'s switch (its value set from a first build's addresses, the second build checked to
keep them), and the segment holding ``.rodata`` made executable afterwards (its program
header's ``p_flags``, as a library linked without separate code pages maps it).  On the code
before, the ``br`` was an entry of its own: ``step`` fell into it, its table unknown there, and
each case ran through a lift at run time (a notice on stderr that qemu does not print)."""

from __future__ import annotations

import struct

from tests.cpu_host import aarch64_programs

PF_X = 1


def _symbols(program) -> dict[str, tuple[int, int]]:
    from elftools.elf.elffile import ELFFile

    with open(program, "rb") as f:
        return {s.name: (s["st_value"], s["st_size"]) for s in ELFFile(f).get_section_by_name(".symtab").iter_symbols()}


def _sections(program) -> list[tuple[str, int, int]]:
    from elftools.elf.elffile import ELFFile

    with open(program, "rb") as f:
        return [(s.name, s["sh_addr"], s["sh_addr"] + s["sh_size"]) for s in ELFFile(f).iter_sections() if s["sh_addr"]]


def _make_segment_executable(program, addr: int) -> None:
    """Set PF_X on the PT_LOAD holding ``addr`` (an ELF64 little-endian file)."""
    data = bytearray(program.read_bytes())
    phoff, phentsize, phnum = struct.unpack_from("<Q", data, 32)[0], *struct.unpack_from("<HH", data, 54)
    for k in range(phnum):
        o = phoff + k * phentsize
        p_type, p_flags = struct.unpack_from("<II", data, o)
        vaddr, memsz = struct.unpack_from("<Q", data, o + 16)[0], struct.unpack_from("<Q", data, o + 40)[0]
        if p_type == 1 and vaddr <= addr < vaddr + memsz:
            assert not p_flags & PF_X, "the rodata segment is executable already"
            struct.pack_into("<I", data, o + 4, p_flags | PF_X)
            program.write_bytes(bytes(data))
            return
    raise AssertionError(f"{addr:#x} in no PT_LOAD")


def test_a_rodata_word_that_decodes_as_a_bl_is_no_entry(tmp_path) -> None:
    from recompiler.decode import decode

    first = aarch64_programs.build_for_qemu("rodata_bl_word", tmp_path, "-DBLWORD=0u", out_name="first")
    syms = _symbols(first)
    step, size = syms["step"]
    words = first.read_bytes()
    # step's code from the file (static, linked at its addresses: .text's offset from the ELF)
    from elftools.elf.elffile import ELFFile

    with open(first, "rb") as f:
        text = ELFFile(f).get_section_by_name(".text")
        off = text["sh_offset"] + step - text["sh_addr"]
    brs = [
        step + 4 * k
        for k in range(size // 4)
        if decode(int.from_bytes(words[off + 4 * k : off + 4 * k + 4], "little"), step + 4 * k).name == "BR"
    ]
    assert len(brs) == 1, [hex(a) for a in brs]
    at = syms["words_in_rodata"][0] + 4  # the second word
    bl = 0x94000000 | ((brs[0] - at) >> 2 & 0x3FFFFFF)
    assert decode(bl, at).name == "BL"
    program = aarch64_programs.build("rodata_bl_word", tmp_path, f"-DBLWORD={bl:#x}u")
    assert _symbols(program)["step"] == (step, size) and _symbols(program)["words_in_rodata"][0] == at - 4
    _make_segment_executable(program, at)

    _syms, prog = aarch64_programs.symbols_and_program(program)
    assert brs[0] not in prog.functions, "the rodata word's BL target is an entry"
    plan = prog.functions[step]
    assert sorted(i.addr for i in plan.insns)[-1] >= step + size - 4
    assert len(set(plan.jump_tables.get(brs[0], ()))) == 10, plan.jump_tables  # cases 0-9
    data = [(lo, hi) for n, lo, hi in _sections(program) if n in (".rodata", ".eh_frame", ".eh_frame_hdr")]
    assert len(data) == 3
    assert not [hex(e) for e in prog.functions if any(lo <= e < hi for lo, hi in data)], "a function in rodata"

    stdout = aarch64_programs.exec_matches_qemu(program, aarch64_programs.recompile(program, tmp_path / "bundle"))
    assert stdout.endswith(b"word 0badf00d\n") and stdout.count(b"k=") == 4, stdout


# glibc's unaligned memmove (libc.so.6 + 0x9d800, Debian 12 arm64): ``and x14, x3, #0xf; cbnz
# x14`` before a table of 16 offsets whose entry 0 is 0 (index 0 never reaches it), so index 0
# names the table itself, in rodata.  While rodata counted as code that entry passed for a
# target; once it was not code, the masked table's read stopped at index 0 and the branch lost
# its 15 cases (248 instructions of libc unlifted).  An unused first slot is passed over, as an
# open table's is.  Below: one executable segment holding the table (not code) and the code.
SEG = 0x1000000
CODE = SEG + 0x100
MASKED = [
    (0x92400C6E, "and x14, x3, #0xf"),
    (0xB500004E, "cbnz x14, #0x100010c"),
    (0xD65F03C0, "ret"),
    (0x90000006, "adrp x6, #0x1000000"),
    (0x910040C6, "add x6, x6, #0x10"),
    (0x8B0E08C6, "add x6, x6, x14, lsl #2"),
    (0xB94000C7, "ldr w7, [x6]"),
    (0x8B27C0C6, "add x6, x6, w7, sxtw"),
    (0xD61F00C0, "br x6"),
]


def test_a_masked_tables_unused_first_slot_naming_rodata_is_passed_over() -> None:
    from recompiler.analyse import Memory, analyse
    from recompiler.decode import disasm

    cases = [CODE + 4 * len(MASKED) + 8 * k for k in range(15)]
    words = [w for w, _t in MASKED] + [x for k in range(15) for x in (0xD2800000 | (k + 1) << 5, 0xD65F03C0)]
    assert [disasm(w, CODE + 4 * k) for k, (w, _t) in enumerate(MASKED)] == [t for _w, t in MASKED]
    table = [0] + [(cases[k - 1] - (SEG + 0x10 + 4 * k)) & 0xFFFFFFFF for k in range(1, 16)]
    data = bytearray(0x100 + 4 * len(words))
    struct.pack_into("<16I", data, 0x10, *table)
    struct.pack_into(f"<{len(words)}I", data, 0x100, *words)
    mem = Memory([(SEG, len(data), bytes(data), True)], [(SEG, len(data))], [(CODE, SEG + len(data))])
    assert not mem.is_code(SEG + 0x10) and mem.is_code(CODE)
    prog = analyse(mem, CODE, set(), [], {})
    br = CODE + 4 * (len(MASKED) - 1)
    assert sorted(prog.functions[CODE].jump_tables.get(br, ())) == cases, prog.functions[CODE].jump_tables
    assert prog.stats.tables_by_kind == {"masked": 1}, prog.stats.tables_by_kind
