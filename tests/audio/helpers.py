"""Shared builders for the audio tests: a renderer with guest memory and captured sink output."""

from __future__ import annotations

import numpy as np

from cpu_host.horizon.audio import client as C
from cpu_host.horizon.audio.renderer import AudioRenderer, BytesMemory
from cpu_host.horizon.audio.request import RendererParameter


class Rig:
    def __init__(self, **param) -> None:
        self.p = RendererParameter(**param)
        self.mem = BytesMemory()
        self.out: list[np.ndarray] = []
        self.r = AudioRenderer(self.p.pack(), self.mem, lambda i, pcm: self.out.append(pcm))
        self.next_addr = 0x100000

    def put(self, data: bytes) -> tuple[int, int]:
        addr = self.next_addr
        self.mem.map(addr, data)
        self.next_addr += (len(data) + 0xFFF) & ~0xFFF
        return addr, len(data)

    def update(self, u: C.Update) -> tuple[int, bytes]:
        return self.r.update(u.pack())

    def run(self, frames: int) -> np.ndarray:
        start = len(self.out)
        for _ in range(frames):
            self.r.render_frame()
        return np.concatenate(self.out[start:]) if len(self.out) > start else np.zeros((0, 2), np.int16)
