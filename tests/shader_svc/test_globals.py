"""shader-ctl2 (issue 31): ``__device__`` globals placed as a loader would (``cuda_globals.py``)
and the clock special registers.  The corpus group ``ctl2_globals`` (test_cuda_corpus.py) runs
the kernels exactly; these check the placement against the cubin's own ELF facts and the
SR_CLOCK/SR_GLOBALTIMER decoding against nvdisasm."""

from __future__ import annotations

import io
import struct

import pytest

import cuda_build
import cuda_corpus as cc
import cuda_globals


@pytest.fixture(scope="module")
def cub86():
    try:
        return cuda_build.compile_cubin(cc.group_source("ctl2_globals"), 86, "O3")
    except cuda_build.NoCompiler as e:
        pytest.skip(f"LOUD SKIP: {e}")


def test_bank4_holds_each_global_address(cub86):
    """Every relocated slot of bank 4 is the placed address of its symbol (region base + the
    section's offset + st_value), and the pointer held in global data points into g2_tab."""
    from elftools.elf.elffile import ELFFile

    elf = ELFFile(io.BytesIO(cub86))
    base = 0x7F00_0000_0000
    p = cuda_globals.place(cub86, "g2_device_data", 86, base)
    sym = {s.name: s for s in elf.get_section_by_name(".symtab").iter_symbols()}
    slots = {
        r["r_offset"]: sym_name
        for r in cuda_globals._relocs(elf, ".nv.constant4")
        for sym_name in [elf.get_section_by_name(".symtab").get_symbol(r["r_info_sym"]).name]
    }
    assert {"g2_tab", "g2_scratch", "g2_ptr"} <= set(slots.values())
    for off, name in slots.items():
        s = sym[name]
        sec = elf.get_section(s["st_shndx"]).name
        assert struct.unpack_from("<Q", p.bank4, off)[0] == base + p.offsets[sec] + s["st_value"], name
    ptr = struct.unpack_from("<Q", p.image, p.offsets[".nv.global.init"] + sym["g2_ptr"]["st_value"])[0]
    assert ptr == base + p.offsets[".nv.global.init"] + sym["g2_tab"]["st_value"] + 16  # &g2_tab[4]
    tab = p.offsets[".nv.global.init"] + sym["g2_tab"]["st_value"]
    assert list(struct.unpack_from("<16I", p.image, tab)) == [3, 1, 4, 1, 5, 9, 2, 6, 5, 3, 5, 8, 9, 7, 9, 3]


def test_without_bank4_the_global_read_is_refused_by_name(cub86):
    """The old path (no bank 4): the read of a global's address names c[0x4]."""
    from nxrecomp.common.errors import NxError

    code = cuda_globals.place(cub86, "g2_device_data", 86, 0).code
    with pytest.raises(NxError, match=r"c\[0x4\]"):
        cc.translate(86, code)


def test_clock_registers_decode_as_nvdisasm_prints(nv_tools):
    """CS2R / S2UR with SR field 0x50..0x53 (bits 72..79): nvdisasm's names, ours equal."""
    import nvtools
    from shader_svc.sm86 import decode as dec

    words = [(lo, 0xFCA0000000000 | sr << 8) for lo in (0x47805, 0x679C3) for sr in range(0x50, 0x54)]
    ref = nvtools.nvdisasm_raw(words)
    ours = [dec.decode_stream(struct.pack("<QQ", *w))[0].text() for w in words]
    assert [r.text for r in ref] == ours
    assert {t.split(", ")[1].rstrip(" ;") for t in ours} == {"SR_CLOCKLO", "SR_CLOCKHI", "SR_GLOBALTIMERLO", "SR_GLOBALTIMERHI"}


def test_clock_read_refused_by_name():
    """A clock read is not translated (no device clock in the translation yet): refused, naming it."""
    from shader_svc.sm86 import decode as dec
    from shader_svc.sm86.to_spirv import ComputeSpec, translate_compute
    from nxrecomp.common.errors import NxError

    exit_w = (0x000000000000794D, 0x000FEA0003800000)
    code = struct.pack("<QQ", 0x47805, 0xFCA0000015000) + struct.pack("<QQ", *exit_w)
    insts = dec.decode_stream(code)
    assert insts[0].text().startswith("CS2R R4, SR_CLOCKLO")
    with pytest.raises(NxError, match="SR_CLOCKLO"):
        translate_compute(insts, ComputeSpec())
