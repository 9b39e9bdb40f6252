"""Issue 31, the last untranslated mnemonics (shader-rest): which of them ptxas 12.9 emits for
PTX we can write (``ptx_probes.py``: compiled for sm_86 and sm_53 at -O3 and -O0, read by
nvdisasm), and that every mnemonic still without a rule is refused by name — the translator's
error names the offset, the instruction word and its text.

BRXU, PMTRIG and SM53 NOP.TRIG, which ptxas does emit, are translated and run in the corpus
(``cuda_corpus_rest.py``, groups ``rest_ctl`` / ``rest_alloca``, through ``test_cuda_corpus.py``)."""

from __future__ import annotations

import re

import pytest

import isa_coverage as cov
import ptx_probes as pp

LIGHT = {"brx_uniform", "pmevent"}  # the probes whose mnemonics are translated now (CI)


@pytest.mark.parametrize(
    "probe", [pytest.param(p, id=p.name, marks=[] if p.name in LIGHT else [pytest.mark.heavy]) for p in pp.PROBES]
)
def test_ptxas_emits_no_refused_mnemonic(probe):
    """ptxas's code for the probe holds the mnemonics it is expected to make (BRXU for a uniform
    jump table, PMTRIG / NOP.TRIG for pmevent...) and none of those still refused by name."""
    for isa in probe.isas:
        if isa in probe.refuses:  # PTX of a later architecture: ptxas itself says so
            with pytest.raises(RuntimeError, match=re.escape(probe.refuses[isa])):
                pp.compile_probe(probe, isa, "O3")
            continue
        for level in pp.LEVELS:
            ops = pp.opcodes(pp.compile_probe(probe, isa, level), isa)
            want = probe.emits.get((isa, level), set())
            assert want <= ops, (isa, level, sorted(want - ops), sorted(ops))
            bad = pp.mnemonics(ops) & pp.REFUSED[isa]
            assert not bad, (isa, level, sorted(bad))


@pytest.mark.parametrize("isa", (86, 53))
def test_refused_list_is_the_rows_without_a_rule(isa):
    """``ptx_probes.REFUSED`` is exactly the set of mnemonics none of whose rows has a lowering
    rule (isa_coverage's "translated" column '-')."""
    keys = cov.lowering_keys(isa)
    ruled = {cov.mnemonic(r) for r in cov.rows(isa) if (r.ir or "") in keys}
    none = {cov.mnemonic(r) for r in cov.rows(isa)} - ruled
    assert none == pp.REFUSED[isa]
    from shader_svc.lower import refused

    # each has its reason in the translator's error (and plain B2R, whose .RESULT form has a rule)
    assert set(refused.WHY[isa]) == none | {"B2R"}


def _untranslated(isa: int) -> list:
    keys = cov.lowering_keys(isa)
    out, seen = [], set()
    for r in cov.rows(isa):
        m = cov.mnemonic(r)
        if m in pp.REFUSED[isa] and (r.ir or "") not in keys and (m, r.opcode if isa == 86 else r.base) not in seen:
            seen.add((m, r.opcode if isa == 86 else r.base))
            out.append(pytest.param(isa, r, id=f"sm{isa}-{m}-{len([x for x in out if x.values[1].mnemonic == r.mnemonic])}"))
    return out


def _plain_b2r(isa: int) -> list:
    keys = cov.lowering_keys(isa)
    return [
        pytest.param(isa, r, id=f"sm{isa}-B2R-plain") for r in cov.rows(isa) if r.mnemonic == "B2R" and (r.ir or "") not in keys
    ]


@pytest.mark.parametrize("isa, row", _untranslated(86) + _untranslated(53) + _plain_b2r(86) + _plain_b2r(53))
def test_untranslated_row_refused_naming_offset_word_and_form(isa, row):
    """Each row of a refused mnemonic, in a program (S2R; the row's reference word; EXIT): the
    translator's error names the offset, the word and the text nvdisasm would print."""
    if isa == 86:
        from shader_svc.sm86 import assemble as asm
        from shader_svc.sm86 import decode as dec
        from shader_svc.sm86.to_spirv import TranslateError, translate_compute

        inst = dec.decode(*divmod(cov.seed(86, row), 1 << 64)[::-1], addr=0x10)
    else:
        from shader_svc.sm53 import assemble as asm
        from shader_svc.sm53 import decode as dec
        from shader_svc.sm53.to_spirv import TranslateError, translate_compute

        inst = dec.decode(row.base)
    text = inst.text()
    insts = dec.decode_stream(asm.assemble_program(f"S2R R0, SR_TID.X\n{text}\nEXIT\n"))
    assert insts[1].text() == text
    with pytest.raises(TranslateError) as e:
        translate_compute(insts)
    msg = str(e.value)
    assert f"offset {insts[1].addr:#x}" in msg and f"(word {insts[1].word:#x})" in msg and text in msg, msg
    assert "ptxas 12.9 emits it for no PTX tried" in msg, msg  # the reason (shader_svc/lower/refused.py)


@pytest.mark.parametrize("isa, mnemonics", [(86, {"ULDC", "BRXU", "PMTRIG"}), (53, {"NOP"})])
def test_changed_rows_every_bit_flipped(isa, mnemonics):
    """The rows this work added or changed (SM86 ULDC's indexed form, BRXU, PMTRIG; SM53 NOP
    with .TRIG and its mask): the reference word, every bit flip and random 2-3-bit mutations
    print as nvdisasm prints them or are refused, and assemble back."""
    rows = [r for r in cov.rows(isa) if r.mnemonic in mnemonics]
    checks = cov.check_rows(isa, rows, multi=40)
    assert not cov.failures(checks), cov.failures(checks)[:10]
    if isa == 86:  # the indexed ULDC row decodes its operands, not only the reference word
        assert max(c.agree for c in checks if c.row.opcode == 0xABB) >= 20
    else:
        assert min(c.agree for c in checks) >= 20
