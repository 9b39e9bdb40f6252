"""Memory pools the GPU process maps: memfds created here, sealed against shrinking (so the GPU
process can never fault on a mapping), mapped read-write on this side."""

from __future__ import annotations

import fcntl
import mmap
import os
from dataclasses import dataclass, field


@dataclass
class Pool:
    id: int
    size: int
    fd: int = -1
    flushed_writes: bool = False  # CPU writes reach the GPU process only as DIRTY ranges
    mm: mmap.mmap = field(init=False, repr=False)

    def __post_init__(self) -> None:
        if self.size <= 0:
            raise ValueError(f"pool {self.id}: size {self.size} must be positive")
        if self.fd < 0:
            self.fd = os.memfd_create(f"nx-pool-{self.id}", os.MFD_CLOEXEC | os.MFD_ALLOW_SEALING)
            os.ftruncate(self.fd, self.size)
            fcntl.fcntl(self.fd, fcntl.F_ADD_SEALS, fcntl.F_SEAL_SHRINK | fcntl.F_SEAL_SEAL)
        # else: a memfd made elsewhere (guest pages, cpu_host/horizon/hle/nvn), already sealed
        self.mm = mmap.mmap(self.fd, self.size, mmap.MAP_SHARED, mmap.PROT_READ | mmap.PROT_WRITE)

    def write(self, offset: int, data: bytes | memoryview) -> None:
        if offset < 0 or offset + len(data) > self.size:
            raise ValueError(f"pool {self.id}: write {offset:#x}+{len(data):#x} past its end {self.size:#x}")
        self.mm[offset : offset + len(data)] = data

    def close(self) -> None:
        self.mm.close()
        os.close(self.fd)
