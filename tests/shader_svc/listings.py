"""Programs written as text for the tests, checked to be what NVIDIA's disassembler reads back
(nvdisasm from PyPI for SM86, Debian's 11.8 for SM53): the text a test draws with is the
machine code it claims to be."""

from __future__ import annotations

import struct

import pytest


def _lines(text: str) -> list[str]:
    return [ln.strip() for ln in text.strip().splitlines() if ln.strip()]


def fields(text: str) -> list[str]:
    """Guard, mnemonic with modifiers, then each operand: the units two printings are compared in."""
    pred = [text.split(" ", 1)[0]] if text.startswith("@") else []
    body = text.split(" ", 1)[1] if pred else text
    op, _, rest = body.partition(" ")
    return pred + [op] + ([s.strip() for s in rest.split(",")] if rest else [])


def sm86_words(code: bytes) -> list[tuple[int, int]]:
    """SM86 code as its 128-bit instructions, (low, high) 64-bit halves."""
    return [struct.unpack_from("<QQ", code, i) for i in range(0, len(code), 16)]


def sm86_mutations(base: list[int], count: int, seed: int, flips: tuple[int, ...], low_bit: int = 0) -> list[tuple[int, int]]:
    """``count`` words made from random 128-bit words of ``base``, each with a number (a random
    choice of ``flips``) of random bits at ``low_bit``..104 flipped: (low, high) halves."""
    import random

    rng = random.Random(seed)
    out = []
    for _ in range(count):
        w = rng.choice(base)
        for _ in range(rng.choice(flips)):
            w ^= 1 << rng.randrange(low_bit, 105)
        out.append((w & (2**64 - 1), w >> 64))
    return out


def check_sm86(texts) -> None:
    """Each SM86 program text, assembled, disassembles to the same lines."""
    import nvtools
    from shader_svc.sm86.assemble import assemble_program

    for text in texts:
        assert [r.text if r else None for r in nvtools.nvdisasm_raw(sm86_words(assemble_program(text)))] == _lines(text)


def check_sm53(texts) -> None:
    """Each SM53 program text, assembled (a control word before every three instructions),
    disassembles to the same lines; a loud skip where Debian's nvdisasm 11.8 is unreachable."""
    import sm53_tools as tools
    from shader_svc.sm53.assemble import assemble_program

    try:
        tools.nvdisasm53_path()
    except tools.ToolUnavailable as e:
        pytest.skip(f"LOUD SKIP: nvdisasm 11.8 unavailable (Debian unreachable): {e}")
    for text in texts:
        code = assemble_program(text)
        q = struct.unpack(f"<{len(code) // 8}Q", code)
        lines = _lines(text)
        got = [r.text if r else None for r in tools.nvdisasm53_raw([w for i, w in enumerate(q) if i % 4])]
        assert got[: len(lines)] == lines


def sm53_mutations_agree(irs: set[str], count: int, seed: int) -> dict[str, int]:
    """``count`` words mutated from the SM53 table rows of the IR names ``irs``: every word our
    decoder reads, nvdisasm 11.8 prints the same (white space folded) and does not refuse.
    Returns how many of the words we read are of each of ``irs`` (a test asks for enough)."""
    import sm53_corpus as corpus
    import sm53_tools as tools
    from shader_svc.sm53 import decode as dec53
    from shader_svc.sm53.table import ROWS

    try:
        tools.nvdisasm53_path()
    except tools.ToolUnavailable as e:
        pytest.skip(f"LOUD SKIP: nvdisasm 11.8 unavailable (Debian unreachable): {e}")
    seeds = sorted(r.base for r in ROWS if r.ir in irs)
    words, ctl = corpus.mutations(seeds, count, seed=seed)
    ref = tools.nvdisasm53_raw(words, ctl)
    agree = dict.fromkeys(sorted(irs), 0)
    for i, (w, r) in enumerate(zip(words, ref)):
        c = dec53.Control.from_bits((ctl[i // 3] >> (i % 3 * 21)) & ((1 << 21) - 1))
        try:
            inst = dec53.decode(w, c, tools.raw_addr(i))
        except dec53.DecodeError:
            continue
        assert r is not None, f"{w:#018x}: we print {inst.text()!r}, nvdisasm refuses it"
        assert " ".join(inst.text().split()) == " ".join(r.text.split()), f"{w:#018x}"
        if inst.row.ir in agree:
            agree[inst.row.ir] += 1
    return agree
