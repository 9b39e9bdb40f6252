"""Coverage of each ISA's instruction table against nvdisasm's whole set (issue 31).

Per mnemonic nvdisasm knows (``cuda_corpus.isa_set``: every opcode enumerated through it):

- **decoded**: a row of our table has that mnemonic;
- **printed equal**: for every row of it, the row's seed word (its reference encoding, guard
  PT), that word with each non-control bit flipped in turn, the word with every predicate PT
  and register RZ, and random 2-3-bit mutations: some word of the row (the seed, or a flip of
  it where nvdisasm refuses the reference encoding itself) decodes and prints as nvdisasm
  prints it, and every word we decode prints exactly as nvdisasm prints it (a word we refuse
  is fine; a word printed differently is a failure);
- **assembled**: every such word printed equal assembles back from nvdisasm's text to itself;
- **translated**: every row of it has a lowering rule (``RULES``) in the compute or graphics
  lowering (a rule may still refuse some modifier values by name);
- **executed exactly**: the mnemonic appears in a corpus kernel that ran exactly on lavapipe
  (read from ``<cache>/shader_corpus/exact_ops_<isa>.json``, written by
  ``python tests/shader_svc/cuda_corpus.py``; "?" where that run has not happened here) or in
  a hand-written test program that ran exactly against a reference from the instructions'
  public definitions (``exact_ops_programs_<isa>.json``, written by the tests that run them:
  ``record_exact_program``; forms no compiler of the corpus writes).

nvdisasm's texts come from ``isa_sweep.oracle`` (cached, regenerated from the wheel / Debian
package on a fresh machine).  ``python tests/shader_svc/isa_coverage.py [86|53]`` prints the
table kept in shader_svc/README.md.
"""

from __future__ import annotations

import contextlib
import json
import random
import sys
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

import isa_sweep  # noqa: E402

MASK64 = 2**64 - 1


@dataclass
class RowCheck:
    """One row's sweep: ``seed`` decoded and printed equal, ``wrong`` words printed differently
    (word, ours, nvdisasm's), ``agree`` words printed equal, ``asm_wrong`` words whose text did
    not assemble back to them."""

    row: object
    seed: int
    seed_ok: bool = False
    agree: int = 0
    refused: int = 0
    wrong: list[tuple[str, str, str]] = field(default_factory=list)
    asm_wrong: list[tuple[str, str]] = field(default_factory=list)

    @property
    def equal(self) -> bool:
        return self.seed_ok and not self.wrong

    @property
    def assembled(self) -> bool:
        return self.equal and not self.asm_wrong


def rows(isa: int) -> list:
    if isa == 86:
        from shader_svc.sm86.table import ROWS
    else:
        from shader_svc.sm53.table import ROWS
    return ROWS


def seed(isa: int, row) -> int:
    """The row's reference encoding with the guard PT (SM86: opcode bits and scheduling bits
    as ptxas writes a plain instruction)."""
    if isa == 86:
        return (row.base & ((1 << 105) - 1)) | row.opcode | 0x7 << 12 | 0x000FC00000000000 << 64
    return row.base


def _decode_text(isa: int, w: int, addr: int = 0):
    """(Inst, text) or (None, reason)."""
    if isa == 86:
        from shader_svc.sm86 import decode as dec

        try:
            inst = dec.decode(w & MASK64, w >> 64, addr)
        except dec.DecodeError as e:
            return None, str(e)
    else:
        from shader_svc.sm53 import decode as dec

        try:
            inst = dec.decode(w, addr=addr)
        except dec.DecodeError as e:
            return None, str(e)
    return inst, inst.text()


def _assemble(isa: int, text: str, inst, addr: int) -> int:
    if isa == 86:
        from shader_svc.sm86.assemble import assemble_line, unshown

        return assemble_line(text, addr, inst.control, unshown(inst))
    from shader_svc.sm53.assemble import assemble

    return assemble(text, addr)[0]


def mutations(isa: int, word: int, count: int, rng: random.Random) -> list[int]:
    """``count`` copies of the word with 2 or 3 random non-control bits flipped."""
    lo, c0, c1 = (12, *isa_sweep.CONTROL[isa]) if isa == 86 else (0, 64, 64)
    bits = [b for b in range(lo, isa_sweep.WIDTH[isa]) if not c0 <= b < c1]
    out = []
    for _ in range(count):
        w = word
        for b in rng.sample(bits, rng.choice((2, 3))):
            w ^= 1 << b
        out.append(w)
    return out


def alt_seed(isa: int, row) -> int:
    """The seed with every predicate operand PT and every register operand RZ/URZ: the values
    nvdisasm may leave out of the text (optional carry-outs, hidden RZ)."""
    from shader_svc.isa.bits import put

    w = seed(isa, row)
    for o in row.operands:
        width = {"Pred": 3, "Reg": getattr(o, "width", 8)}.get(type(o).__name__)
        if width:
            w = put(w, o.lo, width, (1 << width) - 1)
    return w


def corpus_words(isa: int) -> list[int]:
    """Instruction words of every cubin of this ISA in the corpus cache (what nvcc/ptxas emitted
    on this machine: ``cuda_corpus`` builds; none on a fresh one), SM53's control words left
    out."""
    import io
    import struct

    import cubin
    import cuda_build
    from elftools.elf.elffile import ELFFile

    out: set[int] = set()
    for p in sorted(cuda_build._cache_dir().glob("*.cubin")):
        try:
            elf = ELFFile(io.BytesIO(p.read_bytes()))
            sm = cubin.sm_of(elf)
            if sm != isa:
                continue
            for sec in elf.iter_sections():
                if not sec.name.startswith(".text."):
                    continue
                code = sec.data()
                if isa == 86:
                    out.update(lo | hi << 64 for lo, hi in struct.iter_unpack("<QQ", code[: len(code) // 16 * 16]))
                else:
                    out.update(w for i, (w,) in enumerate(struct.iter_unpack("<Q", code[: len(code) // 8 * 8])) if i % 4)
        except Exception:  # a damaged cache file is only a cache
            continue
    return sorted(out)


def check_rows(
    isa: int,
    rs: list,
    flip: bool = True,
    asm: bool = True,
    multi: int = 0,
    seed_rng: int = 31,
    extra: list[int] = (),
) -> list[RowCheck]:
    """Sweep each row (its seed, with ``flip`` every single-bit flip of it, and ``multi`` random
    2-3-bit mutations) against nvdisasm; with ``asm`` also assemble every word printed equal
    back.  ``extra``: words compilers emitted; each joins the words of the row it decodes to
    (up to 8 a row), a real encoding where the row's reference word is one nvdisasm refuses."""
    rng = random.Random(seed_rng)
    words_of = {}
    by_row: dict[int, list[int]] = {}
    for w in extra:
        inst, _ = _decode_text(isa, w)
        if inst is not None and len(by_row.setdefault(id(inst.row), [])) < 8:
            by_row[id(inst.row)].append(w)
    for r in rs:
        s = seed(isa, r)
        words_of[id(r)] = [s] + (isa_sweep.flips(isa, s, 12 if isa == 86 else 0) if flip else [])
        words_of[id(r)] += mutations(isa, s, multi, rng)
        if multi:  # the values a text may leave out, and mutations of that word
            alt = alt_seed(isa, r)
            words_of[id(r)] += [alt] + mutations(isa, alt, multi // 2, rng)
        if multi and isa == 86:  # each operand-reuse flag (bits 122..124), with a schedule
            # ptxas writes (stall 2, yield: nvdisasm refuses reuse under the seed's schedule)
            ctl = (0x000FE40000000000 << 64) & ~((1 << 105) - 1)
            words_of[id(r)] += [(s & ((1 << 105) - 1)) | ctl | 1 << b for b in (122, 123, 124)]
        words_of[id(r)] += by_row.get(id(r), [])
    allw = sorted({w for ws in words_of.values() for w in ws})
    ref = dict(zip(allw, isa_sweep.oracle_at(isa, allw)))
    out = []
    for r in rs:
        ws = words_of[id(r)]
        c = RowCheck(r, ws[0])
        for i, w in enumerate(ws):
            theirs, addr = ref[w]
            inst, ours = _decode_text(isa, w, addr)
            if inst is None:
                c.refused += 1
                continue
            if theirs != ours:
                c.wrong.append((f"{w:#x}", ours, theirs or "REFUSED"))
                continue
            if i == 0 or inst.row is r:  # a word of this row printed equal (the seed, or a flip
                c.seed_ok = True  # of a reference encoding nvdisasm itself refuses)
            c.agree += 1
            if asm:
                try:
                    back = _assemble(isa, theirs, inst, addr)
                except Exception as e:  # an assembler refusal is a failure of this column
                    c.asm_wrong.append((theirs, str(e)[:120]))
                    continue
                if back != w and not ("NAN" in theirs and _decode_text(isa, back, addr)[1] == ours):
                    # (a NaN immediate's payload is not in the text: any word printing it will do)
                    c.asm_wrong.append((theirs, f"{back ^ w:#x}"))
        out.append(c)
    return out


def lowering_keys(isa: int) -> set[str]:
    """Lowering keys the compute and graphics translators have a rule for (QUAD_KEYS: the quad
    loop's bracket and TEX forms, lowered by the ``QuadTex`` mixin of both compute lowerings)."""
    from shader_svc.lower.quad_tex import QUAD_KEYS

    if isa == 86:
        from shader_svc.sm86.to_spirv import Compute86
        from shader_svc.sm86.to_spirv_gfx import Gfx86

        return set(Compute86.RULES) | set(Gfx86.RULES) | set(Compute86.CONTROL_KEYS) | QUAD_KEYS
    from shader_svc.sm53.to_spirv import Compute53
    from shader_svc.sm53.to_spirv_gfx import Gfx53

    # (CONTROL_KEYS: branches and the reconvergence stack, lowered by the control flow itself)
    return set(Compute53.RULES) | set(Gfx53.RULES) | set(Compute53.CONTROL_KEYS) | QUAD_KEYS


def exact_ops(isa: int) -> set[str] | None:
    """Mnemonics seen in corpus kernels that ran exactly, with those of the hand-written test
    programs that ran exactly (``record_exact_program``) (None: no corpus run recorded here)."""
    import cuda_build

    p = cuda_build._cache_dir() / f"exact_ops_{isa}.json"
    if not p.is_file():
        return None
    return set(json.loads(p.read_text())) | set().union(*map(set, _exact_programs(isa).values()))


def _exact_programs_path(isa: int) -> Path:
    import cuda_build

    return cuda_build._cache_dir() / f"exact_ops_programs_{isa}.json"


def _exact_programs(isa: int) -> dict[str, list[str]]:
    p = _exact_programs_path(isa)
    return json.loads(p.read_text()) if p.is_file() else {}


def record_exact_program(isa: int, name: str, texts: list[str], ok: bool) -> None:
    """Record the opcodes of a hand-written test program (nvdisasm's text, checked by the test
    file's heavy test) that ran on lavapipe and equalled a reference written from the
    instructions' public definitions (``ok``), or withdraw the program's record (not ``ok``):
    the table's last column counts them beside the corpus kernels' (tests/shader_svc/
    test_alu_forms.py records its kernels and fragment programs)."""
    import cuda_corpus

    progs = _exact_programs(isa)
    if ok:
        progs[name] = sorted({cuda_corpus.opcode_of(t.strip()) for t in texts if t.strip()})
    else:
        progs.pop(name, None)
    path = _exact_programs_path(isa)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(progs, sort_keys=True))
    tmp.replace(path)  # (never half-written)


@contextlib.contextmanager
def exact_program(name: str, *programs: tuple[int, str]):
    """Around the lines of a test that draws (or dispatches) ``programs`` (``(isa, text)`` pairs,
    nvdisasm's text: a listing check of the same file reads each back through nvdisasm) and
    compares the result exactly with its reference: records them (``record_exact_program``,
    each as ``name`` with its ISA) when the block ends without an exception, withdraws the
    records when it raises (a failed comparison, a skip).  The graphics tests (vk_graphics
    draws against numpy) count this way in the table's last column."""
    ok = False
    try:
        yield
        ok = True
    finally:
        for isa in sorted({isa for isa, _ in programs}):
            texts = [ln for i, t in programs if i == isa for ln in t.splitlines()]
            record_exact_program(isa, name, texts, ok)


def record_exact_ops(results: list) -> None:
    """Write the mnemonics of the corpus kernels that ran exactly, per ISA (``cuda_corpus``'s
    results of a whole run: a kernel's ``ops`` are nvdisasm's opcodes in it), for the table's
    last column."""
    import cuda_build

    for isa in sorted({r.isa for r in results}):
        seen = sorted({o for r in results if r.isa == isa and r.ok for o, _, _ in r.ops})
        (cuda_build._cache_dir() / f"exact_ops_{isa}.json").write_text(json.dumps(seen))


def mnemonic(row) -> str:
    return row.mnemonic.split(".")[0]


def table(isa: int, checks: list[RowCheck] | None = None) -> str:
    """The coverage table (markdown): a summary line and one line per mnemonic of nvdisasm's
    set."""
    import cuda_corpus

    known = sorted(cuda_corpus.isa_set(isa))
    checks = checks if checks is not None else check_rows(isa, rows(isa), multi=20)
    keys = lowering_keys(isa)
    exact = exact_ops(isa)
    by = {}
    for c in checks:
        by.setdefault(mnemonic(c.row), []).append(c)
    lines = [
        f"| SM{isa} mnemonic | rows | decoded | printed equal | assembled | translated | executed exactly |",
        "| --- | --- | --- | --- | --- | --- | --- |",
    ]
    tot = [0] * 5
    for m in known:
        cs = by.get(m, [])
        dec = bool(cs)
        eq = dec and all(c.equal for c in cs)
        asm = eq and all(c.assembled for c in cs)
        tr = [(c.row.ir or "") in keys for c in cs]
        trans = "yes" if tr and all(tr) else ("part" if any(tr) else "-")
        ex = "?" if exact is None else ("yes" if m in exact else "-")
        for i, v in enumerate((dec, eq, asm, trans == "yes", ex == "yes")):
            tot[i] += bool(v)
        yn = lambda v: "yes" if v else "-"  # noqa: E731
        lines.append(f"| {m} | {len(cs)} | {yn(dec)} | {yn(eq)} | {yn(asm)} | {trans} | {ex} |")
    ex_tot = "?" if exact is None else str(tot[4])
    lines.insert(
        0,
        f"SM{isa}: nvdisasm knows {len(known)} mnemonics; decoded {tot[0]}, printed equal {tot[1]}, "
        f"assembled {tot[2]}, translated {tot[3]}, executed exactly {ex_tot}\n",
    )
    return "\n".join(lines)


def failures(checks: list[RowCheck]) -> list[str]:
    """One line per row whose sweep found a word printed differently or not assembled back."""
    out = []
    for c in checks:
        if not c.seed_ok:
            out.append(f"{c.row.mnemonic} {c.seed:#x}: seed not printed equal")
        for w, ours, theirs in c.wrong[:3]:
            out.append(f"{c.row.mnemonic} {w}: ours {ours!r} nvdisasm {theirs!r}")
        for t, why in c.asm_wrong[:3]:
            out.append(f"{c.row.mnemonic}: {t!r} did not assemble back ({why})")
    return out


def main(argv: list[str]) -> int:
    for isa in [int(a) for a in argv] or [86, 53]:
        checks = check_rows(isa, rows(isa), multi=20, extra=corpus_words(isa))
        print(table(isa, checks))
        for line in failures(checks):
            print("  " + line)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
