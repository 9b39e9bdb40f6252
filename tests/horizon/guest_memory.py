"""Guest memory as a plain bytearray from address 0: what the IPC dispatcher
(``cpu_host.horizon.ipc.dispatcher.Server.handle``) asks of a kernel — mapped ranges, reads,
writes, handle kinds, session handles — with no kernel behind it.  Shared by the codec tests
(tests/horizon/test_ipc_codec.py) and the codec's bench (bench/hz_ipc_codec.py); test code,
so it lives under tests/, not in the package."""

from __future__ import annotations

from collections.abc import Container


class BytesMemory:
    """``size`` bytes of guest memory; [0x1000, size) is mapped.  ``handles``: the handle values
    that name a kernel object (kind 1), None for every handle."""

    def __init__(self, size: int = 0x10000, handles: Container[int] | None = None) -> None:
        self.mem = bytearray(size)
        self.handles = handles

    def mapped(self, addr: int, size: int, perm: int) -> bool:
        return 0x1000 <= addr and addr + size <= len(self.mem)

    def read(self, addr: int, size: int) -> bytes:
        return bytes(self.mem[addr : addr + size])

    def write(self, addr: int, data: bytes) -> None:
        self.mem[addr : addr + len(data)] = data

    def handle_kind(self, h: int) -> int:
        return 1 if self.handles is None or h in self.handles else 0

    def session_handle(self, sid: int) -> int:
        return 0x9000 + sid
