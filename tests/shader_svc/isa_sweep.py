"""nvdisasm as an oracle over many single words, with a cache: the tool the instruction tables
were written with, and the source of the coverage tests' words.

``oracle(isa, words)`` gives nvdisasm's text of each word (None where nvdisasm refuses it),
remembering every answer in ``<cache_dir>/shader_corpus/sweep_<isa>_<nvdisasm>.json`` (git-
ignored, never committed: the texts are regenerated from NVIDIA's wheel / Debian package on a
fresh machine).  ``flips(word)`` is the word with each of its non-control bits flipped in turn.

As a program it prints what each bit of a seed word does to nvdisasm's text (the field layout
of an instruction, read off the differences):

    python tests/shader_svc/isa_sweep.py 86 0x000fc00000000000000000000000722c
    python tests/shader_svc/isa_sweep.py 53 0x5c98078000070000 [--bits 20-47]
"""

from __future__ import annotations

import fcntl
import json
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

import nvtools  # noqa: E402
import sm53_tools  # noqa: E402
from nxrecomp.common import settings  # noqa: E402

# bits that are never an instruction's operand or opcode: SM86's scheduling field (105..127);
# SM53's control words are separate words
CONTROL = {86: (105, 128), 53: (64, 64)}
WIDTH = {86: 128, 53: 64}
_MEM: dict[int, dict[str, str | None]] = {}


def _cache_path(isa: int) -> Path:
    ver = nvtools.NVDISASM_WHEEL[0].split("==")[1] if isa == 86 else "11.8"
    p = Path(settings.get("nxrecomp", "cache_dir")) / "shader_corpus" / f"sweep_{isa}_{ver}.json"
    p.parent.mkdir(parents=True, exist_ok=True)
    return p


def _load(isa: int) -> dict[str, str | None]:
    if isa not in _MEM:
        p = _cache_path(isa)
        try:
            _MEM[isa] = json.loads(p.read_text()) if p.is_file() else {}
        except ValueError:  # a damaged cache is only a cache: start again
            _MEM[isa] = {}
    return _MEM[isa]


def _save(isa: int) -> None:
    p = _cache_path(isa)
    with open(p.with_suffix(".lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        merged = {}
        if p.is_file():
            try:
                merged = json.loads(p.read_text())
            except ValueError:
                merged = {}
        merged.update(_MEM[isa])
        _MEM[isa] = merged
        tmp = p.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_text(json.dumps(merged))
        os.replace(tmp, p)


def oracle_at(isa: int, words: list[int]) -> list[tuple[str | None, int]]:
    """nvdisasm's text of each word (guard included; None where it refuses the word) and the
    byte address it was disassembled at (branch targets count from it)."""
    mem = _load(isa)
    todo = sorted({w for w in words if f"{w:x}" not in mem})
    if todo:
        if isa == 86:
            ref = nvtools.nvdisasm_raw([(w & (2**64 - 1), w >> 64) for w in todo], "SM86")
            addrs = [16 * i for i in range(len(todo))]
        else:
            ref = sm53_tools.nvdisasm53_raw(todo)
            addrs = [sm53_tools.raw_addr(i) for i in range(len(todo))]
        for w, r, a in zip(todo, ref, addrs):
            mem[f"{w:x}"] = [None if r is None else r.text, a]
        _save(isa)
    return [tuple(mem[f"{w:x}"]) for w in words]


def oracle(isa: int, words: list[int]) -> list[str | None]:
    """nvdisasm's text of each word (guard included), None where it refuses the word."""
    return [t for t, _ in oracle_at(isa, words)]


def flips(isa: int, word: int, lo: int = 0) -> list[int]:
    """The word with each bit from ``lo`` up (control bits excluded) flipped, one at a time."""
    c0, c1 = CONTROL[isa]
    return [word ^ (1 << b) for b in range(lo, WIDTH[isa]) if not c0 <= b < c1]


def main(argv: list[str]) -> int:
    isa, word = int(argv[0]), int(argv[1], 16)
    lo, hi = (12, 105) if isa == 86 else (0, 64)
    if "--bits" in argv:
        a, b = argv[argv.index("--bits") + 1].split("-")
        lo, hi = int(a), int(b) + 1
    words = [word] + [word ^ (1 << b) for b in range(lo, hi)]
    texts = oracle(isa, words)
    print(f"base: {texts[0]}")
    base = (texts[0] or "").replace(",", " ").split()
    # consecutive bits with the same effect (the same tokens changed, digits aside) print as one
    # line: a register or immediate field reads as 'lo..hi: token 2 R*'
    runs: list[tuple[int, int, str, str]] = []
    for b, t in zip(range(lo, hi), texts[1:]):
        if t is None:
            key, show = "REFUSED", "REFUSED"
        elif t == texts[0]:
            key, show = "=", "="
        else:
            toks = t.replace(",", " ").split()
            diff = [f"{i}:{x}" for i, x in enumerate(toks) if i >= len(base) or base[i] != x]
            if len(toks) < len(base):
                diff.append(f"(-{len(base) - len(toks)} tokens)")
            show = f"{' '.join(diff)}    | {t}"
            key = "".join(c for c in " ".join(diff) if not c.isdigit() or c == diff[0][0])
        if runs and runs[-1][2] == key and runs[-1][1] == b - 1:
            runs[-1] = (runs[-1][0], b, key, runs[-1][3])
        else:
            runs.append((b, b, key, show))
    for a, b, _, show in runs:
        print(f"{a:3}..{b:<3}: {show}" if a != b else f"{a:8}: {show}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
