"""Our SM86 decoder + text against NVIDIA's nvdisasm, on ptxas-built kernels of our PTX corpus
and on randomly mutated instruction words (same text, or a clear refusal)."""

from __future__ import annotations

from pathlib import Path

import pytest

import listings
import nvtools
from shader_svc.sm86 import decode as dec
from shader_svc.sm86.table import MORE_FROM, ROWS

# the same corpus the conftest builds (tests/shader_svc is not a package: a package of that
# name would shadow the real shader_svc)
PTX_FILES = sorted((Path(__file__).parent / "ptx").glob("*.ptx"))


@pytest.mark.parametrize("ptx", PTX_FILES, ids=lambda p: p.stem)
def test_every_instruction_matches_nvdisasm(ptx, corpus_sm86):
    kernel = corpus_sm86[ptx.stem]
    words = listings.sm86_words(kernel.code)
    ref = nvdisasm = nvtools.nvdisasm_raw(words, "SM86")
    assert len(ref) == len(words) and all(r is not None for r in nvdisasm)
    mismatches = []
    for i, (w, r) in enumerate(zip(words, ref)):
        ours = dec.decode(*w, addr=i * 16).text()
        if ours != r.text:
            mismatches.append((hex(i * 16), r.text, ours))
    assert not mismatches, mismatches[:10]


def test_corpus_covers_the_instruction_classes(corpus_sm86):
    seen = set()
    for k in corpus_sm86.values():
        for inst in dec.decode_stream(k.code):
            seen.add(inst.row.ir)
    for need in (
        "IADD3",
        "IMAD",
        "IMAD.WIDE",
        "LOP3",
        "SHF",
        "PRMT",
        "FFMA",
        "FMUL",
        "FADD",
        "FSETP",
        "ISETP",
        "MUFU",
        "I2F",
        "F2I",
        "LDG",
        "STG",
        "LDS",
        "STS",
        "ATOMG",
        "RED",
        "BAR",
        "BRA",
        "EXIT",
        "SHFL",
        "VOTE",
        "S2R",
        "SEL",
    ):
        assert need in seen, need


def test_mutated_words_decode_like_nvdisasm_or_are_refused(corpus_sm86):
    base = [lo | hi << 64 for k in corpus_sm86.values() for lo, hi in listings.sm86_words(k.code) if (lo & 0xFFF) != 0x918]
    muts = listings.sm86_mutations(base, 2500, seed=1234, flips=(1, 1, 2, 3))
    ref = nvtools.nvdisasm_raw(muts, "SM86")
    agree = refused = 0
    wrong = []
    for i, (w, r) in enumerate(zip(muts, ref)):
        try:
            ours = dec.decode(*w, addr=i * 16).text()
        except dec.DecodeError as e:
            assert "refused" in str(e) or "unknown opcode" in str(e)
            refused += 1
            continue
        if r is None or ours != r.text:
            wrong.append((f"{w[1]:016x}{w[0]:016x}", r.text if r else "REFUSED", ours))
        else:
            agree += 1
    assert not wrong, wrong[:10]
    # A decoder that refused everything would pass the check above: demand real coverage.
    assert agree > 600, (agree, refused)


def test_control_bits_are_decoded():
    # 'IMAD.WIDE.U32 R4, R6.reuse, R7.reuse, c[0x0][0x168]' with its scheduling word
    inst = dec.decode(0x00005A0006047625, 0x0C0FE400078E0007)
    assert inst.control.reuse == 0b0011 and inst.control.stall == 2 and inst.control.yield_ == 1
    assert inst.text() == "IMAD.WIDE.U32 R4, R6.reuse, R7.reuse, c[0x0][0x168]"


def test_bad_input_is_refused_clearly():
    with pytest.raises(dec.DecodeError, match="unknown opcode"):
        dec.decode(0xFFF, 0)
    with pytest.raises(dec.DecodeError, match=r"offset 0x20.*refused"):
        dec.decode(0x0000000502097221, 0x040FE20000000000 | (1 << 27), addr=0x20)  # bit 91 set
    with pytest.raises(dec.DecodeError, match="multiple of 16"):
        dec.decode_stream(b"\0" * 24)


def test_table_rows_have_distinct_encodings():
    """Rows of one opcode differ in the bits they hold fixed (I2F/F2I: one row per integer
    sign and width, which nvdisasm prints as one word)."""
    keys = [
        (
            r.opcode,
            r.aliases,
            r.base & ~dec._known_mask(r) & ((1 << 105) - 1),
            tuple((m.lo, m.names) for m in r.mods_before + r.mods),
        )
        for r in ROWS
    ]
    assert len(keys) == len(set(keys))


# rows added for issue 31's larger corpus (words as nvcc 13 emitted them), each with every one of
# bits 12..104 flipped in turn: what we print equals nvdisasm, or we refuse
NEW_ROW_WORDS = {
    "FRND": 0x004E2800002050000000000200077307,
    "FRND.F64": 0x004E2800003058000000000200047313,
    "F2F.F64.F32": 0x004FF000002018000000000200067310,
    "F2F.F32.F64": 0x002E2400003010000000000600077310,
    "I2FP.RZ": 0x004FCA000020D4000000000200077245,
    "MUFU.RCP64H": 0x004E2200000018000000000500077308,
    "CS2R": 0x000FE2000001FF000000000000087805,
    "BREAK": 0x000FE200038000000000000000010942,
    "RED.F32": 0x000FE2000C10E784000000090600798E,
    "ATOMG.EXCH": 0x000EA2000C1EE1C400000007020379A8,
    "DSETP.MIN": 0x148E220003900000000000020400722A,
    # shader-gaps2: nvcc -G's 64-bit generic CAS fallback and __reduce_max_sync
    "LD.E.64 [R8]": 0x00321E0000100B0000000000080A7980,
    "ST.E.64 [R8]": 0x0033DE0000100B040000000008007385,
    "WARPSYNC.EXCLUSIVE": 0x003FDE0003C000000000000500007348,
    # shader-ndv: nvcc 13's tex3DGrad / texCubemapGrad quad loop
    "MOV R18, R4, 0x1": 0x000FE400000001000000000400127202,
    "BMOV.32 B15, MACTIVE": 0x000FE20000000000000000001A0F7F55,
    "BMOV.32.PQUAD MACTIVE, B15": 0x000FE40000100000000000001A0F7F56,
    "TEX.SCR.B.NDV 3D": 0x00014200001E2F065800000204047361,
    "TEX.B.NDV ARRAY_CUBE": 0x00014200001E2F0CE8000002080A7361,
    "DEPBAR.LE SB0, 0x0, {5}": 0x000FCA0000000000000080200000791A,
    "TEX.SCR.NDV UR6 (ptxas 12.9)": 0x000F4200081E2F045000060402027F60,
}


@pytest.mark.parametrize("name", sorted(NEW_ROW_WORDS))
def test_new_rows_every_bit_flipped(name):
    base = NEW_ROW_WORDS[name]
    words = [base] + [base ^ (1 << b) for b in range(12, 105)]
    ref = nvtools.nvdisasm_raw([(w & (2**64 - 1), w >> 64) for w in words], "SM86")
    agree = 0
    for i, (w, r) in enumerate(zip(words, ref)):
        try:
            ours = dec.decode(w & (2**64 - 1), w >> 64, addr=i * 16).text()
        except dec.DecodeError as e:
            assert i > 0, f"{name}: the word nvcc emits is refused: {e}"
            continue
        assert r is not None and ours == r.text, (f"{w:032x}", ours, r.text if r else "REFUSED")
        agree += 1
    assert agree > 8, agree  # the operand and modifier fields decode, not only the base


def test_more_rows_every_bit_flipped():
    """Issue 31's rows for the rest of nvdisasm's set: each row's reference word, that word with
    every bit 12..104 flipped in turn, and 20 words with 2-3 random bits flipped, print as
    nvdisasm prints them or are refused; every word printed equal assembles back to itself."""
    import isa_coverage as cov

    checks = cov.check_rows(86, ROWS[MORE_FROM:], multi=20)
    assert not cov.failures(checks), cov.failures(checks)[:10]
    thin = [c.row.mnemonic for c in checks if c.agree < 5 and (c.row.operands or c.row.mods)]
    assert not thin, thin  # operands and modifiers decode, not only the reference word
    assert len({cov.mnemonic(c.row) for c in checks}) >= 56


def test_coverage_table_against_nvdisasm_set(corpus_sm86):
    """The coverage table kept in shader_svc/README.md, printed by the run (pytest -s): per
    mnemonic of nvdisasm's set, decoded / printed equal / assembled / translated / executed
    (every row swept; the PTX corpus's words and any cached CUDA corpus's join their rows)."""
    import isa_coverage as cov

    ptx = [lo | hi << 64 for k in corpus_sm86.values() for lo, hi in listings.sm86_words(k.code)]
    checks = cov.check_rows(86, ROWS, multi=20, extra=ptx + cov.corpus_words(86))
    assert not cov.failures(checks), cov.failures(checks)[:10]  # every row printed equal, assembled
    text = cov.table(86, checks)
    print(text)
    head = text.splitlines()[0]
    # every mnemonic nvdisasm knows is decoded, printed equal (mutated words too) and assembled
    known = int(head.split("knows ")[1].split()[0])
    for col in ("decoded", "printed equal", "assembled"):
        assert int(head.split(col + " ")[1].split(",")[0]) == known, head
    assert text.count("\n| ") >= 150
    # a new mnemonic is never counted translated without a lowering rule
    keys = cov.lowering_keys(86)
    from shader_svc.sm86.lower_extra import EXTRA_RULES  # the handlers written for these rows
    from shader_svc.sm86.lower_alu import ALU_RULES
    from shader_svc.sm86.lower_half import HALF_RULES
    from shader_svc.lower.surface import SURFACE_RULES  # surfaces (shader-surf); DEPBAR waits: NOP
    from shader_svc.sm86.lower_uniform import UNIFORM_RULES  # the uniform datapath (shader-u)
    from shader_svc.sm86.lower_async import ASYNC_RULES  # shader-mma: LDGSTS
    from shader_svc.sm86.lower_mma import MMA_RULES  # shader-mma: LDSM, MOVM, HMMA, IMMA
    from shader_svc.sm86.lower_alu import STAGE_ALU_RULES  # every stage's ALU rows (shader-u2)

    mem = {"ATOMS", "ATOMS.CAS", "ATOMS.POPC.INC", "QSPC", "ATOMG.CAS"}  # shader-mem's rows: sm86/lower_mem.py
    mem |= {"LDG", "STG", "NOP"}  # shader-gaps2's Volta-style LD/ST (sm86/lower_mem.py), WARPSYNC.EXCLUSIVE
    from shader_svc.lower.match import MATCH_RULES
    from shader_svc.lower.texture import TEXTURE_RULES

    # shader-tex: kernels' textures (lower/texture.py), MATCH (lower/match.py), fragment TXD/TMML
    TEX_RULES = set(TEXTURE_RULES) | set(MATCH_RULES) | {"TXD", "TMML"}
    from shader_svc.lower.cache import CACHE_RULES  # shader-ctl: BRX (lower/indirect.py), CCTL (lower/cache.py)
    from shader_svc.lower.indirect import INDIRECT_RULES

    from shader_svc.sm86.to_spirv import Compute86

    TEX_RULES |= set(CACHE_RULES) | set(INDIRECT_RULES) | set(Compute86.CONTROL_KEYS)
    from shader_svc.lower.barrier_red import BARRIER_RED_RULES  # shader-ctl: BAR.RED, B2R.RESULT
    from shader_svc.lower.mbarrier import MBARRIER_RULES  # shader-ctl: ATOMS.ARRIVE, ARRIVES

    TEX_RULES |= set(BARRIER_RED_RULES) | set(MBARRIER_RULES) | {"MEMBAR"}  # (MEMBAR.ALL.CTA: MEMBAR's rule)
    from shader_svc.lower.quad_tex import QUAD_KEYS  # shader-ndv: BMOV of a thread-state register, TEX 0xF60

    TEX_RULES |= QUAD_KEYS
    assert all(
        (r.ir or "") not in keys
        or r.ir in EXTRA_RULES
        or r.ir in HALF_RULES
        or r.ir in ALU_RULES
        or r.ir in mem
        or r.ir in SURFACE_RULES
        or r.ir in TEX_RULES
        or r.ir in UNIFORM_RULES
        or r.ir in ASYNC_RULES
        or r.ir in MMA_RULES
        or r.ir in STAGE_ALU_RULES  # shader-u2: F2I to 8/16 bits (lower_alu._f2i_narrow), IDP.2A
        or r.mnemonic == "DEPBAR"
        or r.ir in ("PIXLD", "AL2P", "ALD.PHYS", "AST.PHYS")  # arch-gfx: graphics rows (sm86/to_spirv_gfx.py)
        or r.ir in ("OUT", "ISBERD")  # gfx-geom: the geometry stage (sm86/to_spirv_gfx.py)
        for r in ROWS[MORE_FROM:]
    )


# issue 31: the mnemonics of nvdisasm 13.5's set added last (surfaces, TMML/TXD, tensor cores,
# FOOTPRINT, CSMTEST, CCTLT, UCLEA, UF2FP, asynchronous copies, LDTRAM) and the F2I forms
# without a lowering rule
DECODE_ONLY = (
    "SULD.D SUST.D SURED.D SUATOM.D SUQUERY TMML.LOD TXD DMMA.884 HMMA IMMA.8816 BMMA FOOTPRINT CSMTEST "
    "CCTLT UCLEA UF2FP LDGSTS.E ARRIVES.LDGSTSBAR LDTRAM"
).split()


def test_decode_only_rows_every_bit_flipped():
    """The rows of DECODE_ONLY (and F2I's 16-bit and F16 forms): reference word, every bit flip,
    random 2-3-bit mutations print as nvdisasm prints them or are refused, and assemble back."""
    import isa_coverage as cov

    rows = [r for r in ROWS if r.mnemonic in DECODE_ONLY or r.ir in ("F2I.16", "F2I.F16")]
    assert {r.mnemonic for r in rows} >= set(DECODE_ONLY)
    checks = cov.check_rows(86, rows, multi=20)
    assert not cov.failures(checks), cov.failures(checks)[:10]
    thin = [c.row.mnemonic for c in checks if c.agree < 5]
    assert not thin, thin


# lowered since: UF2FP.PACK_AB (shader-u; its .MERGE_C is refused by name)
# translated since (shader-mma: sm86/lower_async.py, sm86/lower_mma.py): not refused any more
TRANSLATED_SINCE = {"HMMA", "IMMA.8816", "LDGSTS.E", "DMMA.884", "BMMA", "ARRIVES.LDGSTSBAR"}  # (ARRIVES: shader-ctl)


@pytest.mark.parametrize(
    "mnemonic", [m for m in DECODE_ONLY if m != "UF2FP" and m not in TRANSLATED_SINCE] + ["F2I.16", "F2I.F16"]
)
def test_decoded_but_untranslated_is_refused_naming_offset_word_and_form(mnemonic):
    """A form the table decodes but no lowering rule handles: the translator refuses it naming
    the offset, the instruction word and its text."""
    import isa_coverage as cov
    from shader_svc.sm86 import assemble as asm
    from shader_svc.sm86.to_spirv import TranslateError, translate_compute

    row = next(r for r in ROWS if mnemonic in (r.mnemonic, r.ir))
    inst = dec.decode(*divmod(cov.seed(86, row), 1 << 64)[::-1], addr=0x10)
    code = asm.assemble_program(f"S2R R0, SR_TID.X\n{inst.text()}\nEXIT\n")
    insts = dec.decode_stream(code)
    assert insts[1].text() == inst.text()
    with pytest.raises(TranslateError) as e:
        translate_compute(insts)
    msg = str(e.value)
    assert "offset 0x10" in msg and f"(word {insts[1].word:#x})" in msg and inst.text() in msg, msg
