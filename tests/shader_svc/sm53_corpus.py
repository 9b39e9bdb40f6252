"""Test helpers shared by the SM53 tests and benches: the PTX corpus built by ptxas for sm_53,
instruction words with their control bits, and mutated words for oracle comparisons."""

from __future__ import annotations

import random
import struct
from dataclasses import dataclass
from pathlib import Path

import cubin

import nvtools
from shader_svc.sm53.decode import Control
from shader_svc.sm53.fields import CTRL_BITS


@dataclass(frozen=True)
class Kernel53:
    name: str
    code: bytes
    cbank0_size: int

    def slots(self) -> list[tuple[int, int, Control]]:
        """(byte address, instruction word, its control) for every instruction slot."""
        words = struct.unpack(f"<{len(self.code) // 8}Q", self.code)
        out = []
        for i, w in enumerate(words):
            if i % 4:
                c = (words[i - i % 4] >> ((i % 4 - 1) * CTRL_BITS)) & ((1 << CTRL_BITS) - 1)
                out.append((i * 8, w, Control.from_bits(c)))
        return out


def build(ptx_dir: Path) -> dict[str, Kernel53]:
    """{kernel name: Kernel53} for every .ptx file of a folder, built by ptxas for sm_53."""
    out: dict[str, Kernel53] = {}
    for f in sorted(Path(ptx_dir).glob("*.ptx")):
        for name, k in cubin.kernels(nvtools.ptxas(f.read_text(), "sm_53"), str(f)).items():
            out[name] = Kernel53(name, k.code, k.cbank0_size)
    return out


def mutations(seeds: list[int], n: int, seed: int = 53) -> tuple[list[int], list[int]]:
    """``n`` words made by flipping 1-3 random bits of random seed words, and control words
    (one per group of three) where about a third of the instructions carry random reuse flags."""
    rng = random.Random(seed)
    words = []
    for _ in range(n):
        w = rng.choice(seeds)
        for _ in range(rng.choice((1, 1, 2, 3))):
            w ^= 1 << rng.randrange(64)
        words.append(w)
    per = [((rng.getrandbits(3) if rng.random() < 0.3 else 0) << 17) | 0x7F6 for _ in range(n + 3)]
    ctl = [per[3 * k] | per[3 * k + 1] << CTRL_BITS | per[3 * k + 2] << (2 * CTRL_BITS) for k in range(n // 3 + 1)]
    return words, ctl
