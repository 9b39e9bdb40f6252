"""Guest memory for the renderer, read and written in place (guest addresses are host
addresses) after the kernel confirms the range is mapped with the permission needed; a range
that is not raises ``ValueError`` naming it (the renderer counts it as a voice error and plays
silence: never a fault of the host)."""

from __future__ import annotations

from typing import Any

PERM_R, PERM_W = 1, 2


class GuestMemory:
    def __init__(self, ffi: Any, lib: Any) -> None:
        self.ffi, self.lib = ffi, lib

    def _check(self, address: int, size: int, perm: int) -> None:
        if size and (address <= 0 or address + size > 1 << 64 or not self.lib.nx_hz_range_ok(address, size, perm)):
            raise ValueError(
                f"{size:#x} bytes at {address:#x} are not {'writable' if perm & PERM_W else 'readable'} guest memory"
            )

    def read(self, address: int, size: int) -> bytes:
        self._check(address, size, PERM_R)
        return bytes(self.ffi.buffer(self.ffi.cast("char *", address), size)) if size else b""

    def write(self, address: int, data: bytes) -> None:
        self._check(address, len(data), PERM_W)
        if data:
            self.ffi.memmove(self.ffi.cast("char *", address), data, len(data))
