"""The bytes one submission reads, copied once at the start of its replay.  The replay and the
recorder both read this copy, so what is recorded is exactly what was rendered, and a guest
that rewrites a uniform block right after submitting does not change the frame."""

from __future__ import annotations

from dataclasses import dataclass

from gpu_host.objects import Memory
from gpu_host.validate import Plan

Key = tuple[int, int, int]


@dataclass
class Snapshot:
    sizes: dict[int, int]
    data: dict[Key, bytes]

    @classmethod
    def take(cls, plan: Plan, memory: Memory, textures: list | None = None) -> "Snapshot":
        """The plan's ranges and the bytes of ``textures`` (default: every texture it samples;
        the replayer names the ones it must read, ``Replayer.texture_reads``)."""
        keys = (
            list(plan.ranges)
            + list(plan.images)
            + [(t.pool, t.offset, t.byte_size) for t in (plan.uploads if textures is None else textures)]
        )
        data = {k: bytes(memory.read(*k)) for k in keys}
        sizes = {k[0]: memory.pool_size(k[0]) for k in keys}
        return cls(sizes, data)

    def pool_size(self, pool: int) -> int | None:
        return self.sizes.get(pool)

    def read(self, pool: int, offset: int, size: int) -> memoryview:
        return memoryview(self.data[(pool, offset, size)])
