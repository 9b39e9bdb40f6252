"""Dump what the SM53/SM86 decoders, printers and assemblers make of every word they are tested
on, one line a word, so a refactoring of the ISA machinery can be checked byte for byte
(``diff`` two dumps).  Not a test: a tool.

The words: every word of every cached corpus cubin (``<cache_dir>/shader_corpus/*.cubin``, at
its address in its kernel, SM53 words with their control bits), every word nvdisasm was asked
about by the sweeps and coverage tests (``sweep_<isa>_*.json``, at the address it was
disassembled at), and the random mutations the disasm tests make of the corpus words.  Per
word: the decoded text (or the refusal), the decoded fields (modifiers, operands, control,
alias), and what the assembler makes of the text (the word, or its refusal); per kernel the
bytes ``assemble_program`` makes of the whole listing.

    python tests/shader_svc/isa_roundtrip.py OUT.txt [--asm-every N] [--cache DIR]
"""

from __future__ import annotations

import hashlib
import io
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

import cubin  # noqa: E402
import listings  # noqa: E402
import sm53_corpus  # noqa: E402
from elftools.elf.elffile import ELFFile  # noqa: E402
from nxrecomp.common import settings  # noqa: E402
from shader_svc.sm53 import assemble as asm53  # noqa: E402
from shader_svc.sm53 import decode as dec53  # noqa: E402
from shader_svc.sm86 import assemble as asm86  # noqa: E402
from shader_svc.sm86 import decode as dec86  # noqa: E402


def _fields(inst) -> str:
    c = inst.control
    ops = {k: sorted(v.items()) if isinstance(v, dict) else v for k, v in inst.ops.items()}
    return (
        f"{sorted(inst.mods.items())} {sorted(ops.items())} {(c.stall, c.yield_, c.wbar, c.rbar, c.wait, c.reuse)} {inst.alias!r}"
    )


def one86(word: int, addr: int, assemble: bool) -> str:
    try:
        inst = dec86.decode(word & (2**64 - 1), word >> 64, addr)
    except dec86.DecodeError as e:
        return f"86 {word:032x}@{addr:#x} REFUSED {e}"
    out = f"86 {word:032x}@{addr:#x} {inst.text()!r} {_fields(inst)}"
    if assemble:
        try:
            back = asm86.assemble_line(inst.text(), addr, inst.control, asm86.unshown(inst))
            out += f" ASM {back:032x}"
        except asm86.AsmError as e:
            out += f" ASMERR {e}"
    return out


def one53(word: int, ctrl, addr: int, assemble: bool) -> str:
    try:
        inst = dec53.decode(word, ctrl, addr)
    except dec53.DecodeError as e:
        return f"53 {word:016x}@{addr:#x}/{ctrl.bits():x} REFUSED {e}"
    out = f"53 {word:016x}@{addr:#x}/{ctrl.bits():x} {inst.text()!r} {_fields(inst)}"
    if assemble:
        try:
            w, reuse = asm53.assemble(inst.text(), addr)
            out += f" ASM {w:016x}/{reuse:x}"
        except asm53.AsmError as e:
            out += f" ASMERR {e}"
    return out


def _cubins(cache: Path):
    for p in sorted(cache.glob("*.cubin")):
        data = p.read_bytes()
        try:
            sm = cubin.sm_of(ELFFile(io.BytesIO(data)))
        except Exception:
            continue
        try:
            ks = cubin.kernels(data, str(p))
        except Exception as e:  # a cubin the reader refuses: say so, the same before and after
            yield p.name, sm, None, str(e)
            continue
        for name, k in sorted(ks.items()):
            yield p.name, sm, name, k.code


def main(argv: list[str]) -> int:
    out_path = Path(argv[0])
    every = int(argv[argv.index("--asm-every") + 1]) if "--asm-every" in argv else 1
    cache = Path(settings.get("nxrecomp", "cache_dir")) / "shader_corpus"
    if "--cache" in argv:  # a frozen copy: the shared cache grows while others run tests
        cache = Path(argv[argv.index("--cache") + 1])
    lines: list[str] = []
    n = {53: 0, 86: 0}
    seeds = {53: set(), 86: set()}
    for fname, sm, kname, code in _cubins(cache):
        if kname is None:
            lines.append(f"cubin {fname} sm{sm} unreadable: {code}")
            continue
        lines.append(f"kernel {fname} {kname} sm{sm} {len(code)} bytes")
        if sm == 53:
            k = sm53_corpus.Kernel53(kname, code, 0)
            texts = []
            for addr, word, ctrl in k.slots():
                lines.append(one53(word, ctrl, addr, True))
                seeds[53].add(word)
                n[53] += 1
                try:
                    if texts is not None:
                        texts.append(dec53.decode(word, ctrl, addr).text())
                except dec53.DecodeError:
                    texts = None
            if texts is not None:
                try:
                    prog = asm53.assemble_program("\n".join(texts))
                    lines.append(f"program53 {hashlib.sha256(prog).hexdigest()}")
                except asm53.AsmError as e:
                    lines.append(f"program53 ASMERR {e}")
        elif sm == 86:
            texts = []
            for i, (lo, hi) in enumerate(listings.sm86_words(code)):
                word = lo | hi << 64
                lines.append(one86(word, 16 * i, True))
                seeds[86].add(word)
                n[86] += 1
                try:
                    if texts is not None:
                        texts.append(dec86.decode(lo, hi, 16 * i).text())
                except dec86.DecodeError:
                    texts = None
            if texts is not None:
                try:
                    prog = asm86.assemble_program("\n".join(texts))
                    lines.append(f"program86 {hashlib.sha256(prog).hexdigest()}")
                except asm86.AsmError as e:
                    lines.append(f"program86 ASMERR {e}")
    for isa in (53, 86):
        sweep = sorted(cache.glob(f"sweep_{isa}_*.json"))
        for p in sweep:
            mem = json.loads(p.read_text())
            for i, (key, (_, addr)) in enumerate(sorted(mem.items())):
                word = int(key, 16)
                asm = i % every == 0
                lines.append(one86(word, addr, asm) if isa == 86 else one53(word, dec53.NO_CONTROL, addr, asm))
                n[isa] += 1
    # the disasm tests' random mutations of the corpus words
    if seeds[53]:
        words, ctl = sm53_corpus.mutations(sorted(seeds[53]), 3000)
        for i, w in enumerate(words):
            c = dec53.Control.from_bits((ctl[i // 3] >> (21 * (i % 3))) & ((1 << 21) - 1))
            lines.append(one53(w, c, 8 * (i + 1 + i // 3), i % every == 0))
            n[53] += 1
    if seeds[86]:
        for i, (lo, hi) in enumerate(listings.sm86_mutations(sorted(seeds[86]), 3000, seed=1234, flips=(1, 1, 2, 3))):
            lines.append(one86(lo | hi << 64, 16 * i, i % every == 0))
            n[86] += 1
    out_path.write_text("\n".join(lines) + "\n")
    print(f"words: sm53 {n[53]}, sm86 {n[86]}, lines {len(lines)}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
