"""Bounds-checked little-endian reads over a byte buffer.

Every loader reads through a ``BinReader`` so that an offset or size taken from the file can
never index past the data: a read outside the buffer raises ``NxError`` naming the file, the
field being read and its offset, instead of a Python ``IndexError``/``struct.error``."""

from __future__ import annotations

import struct
from dataclasses import dataclass

from nxrecomp.common.errors import NxError

_U8, _U16, _U32, _U64 = struct.Struct("<B"), struct.Struct("<H"), struct.Struct("<I"), struct.Struct("<Q")
_S32, _S64 = struct.Struct("<i"), struct.Struct("<q")


@dataclass(frozen=True)
class BinReader:
    """A view of ``data`` (a file or a region of one) whose positions are reported as
    ``base + offset`` so errors name offsets in the whole file."""

    data: bytes | bytearray | memoryview
    path: str
    base: int = 0

    def __len__(self) -> int:
        return len(self.data)

    def error(self, field: str, offset: int, message: str) -> NxError:
        return NxError(message, path=self.path, field=field, offset=self.base + offset)

    def check(self, field: str, offset: int, size: int) -> None:
        """Raise unless ``[offset, offset+size)`` lies inside the buffer."""
        if offset < 0 or size < 0 or offset + size > len(self.data):
            raise self.error(
                field,
                offset,
                f"{size:#x} bytes at {self.base + offset:#x} run past the end of the data (size {self.base + len(self.data):#x})",
            )

    def bytes(self, field: str, offset: int, size: int) -> bytes:
        self.check(field, offset, size)
        return bytes(self.data[offset : offset + size])

    def _read(self, st: struct.Struct, field: str, offset: int) -> int:
        self.check(field, offset, st.size)
        return st.unpack_from(self.data, offset)[0]

    def u8(self, field: str, offset: int) -> int:
        return self._read(_U8, field, offset)

    def u16(self, field: str, offset: int) -> int:
        return self._read(_U16, field, offset)

    def u32(self, field: str, offset: int) -> int:
        return self._read(_U32, field, offset)

    def u64(self, field: str, offset: int) -> int:
        return self._read(_U64, field, offset)

    def s32(self, field: str, offset: int) -> int:
        return self._read(_S32, field, offset)

    def s64(self, field: str, offset: int) -> int:
        return self._read(_S64, field, offset)

    def magic(self, field: str, offset: int, expected: bytes) -> None:
        got = self.bytes(field, offset, len(expected))
        if got != expected:
            raise self.error(field, offset, f"bad magic {got!r}, expected {expected!r}")

    def cstr(self, field: str, offset: int, size: int) -> str:
        """A fixed-size, NUL-padded text field (UTF-8; undecodable bytes are replaced so a
        name never stops a load)."""
        raw = self.bytes(field, offset, size)
        return raw.split(b"\0", 1)[0].decode("utf-8", "replace")

    def strz(self, field: str, offset: int, limit: int) -> str:
        """The NUL-terminated string at ``offset``; its NUL must come before ``limit``."""
        self.check(field, offset, max(0, limit - offset))
        d = self.data
        if isinstance(d, memoryview):
            # memoryview has no find(): search in growing chunks so a long table is not copied whole.
            pos, step = offset, 64
            while pos < limit:
                chunk = bytes(d[pos : min(limit, pos + step)])
                k = chunk.find(b"\0")
                if k >= 0:
                    return bytes(d[offset : pos + k]).decode("utf-8", "replace")
                pos += len(chunk)
                step *= 2
            nul = -1
        else:
            nul = d.find(b"\0", offset, limit)
        if nul < 0:
            raise self.error(field, offset, f"string is not NUL-terminated before {self.base + limit:#x}")
        return bytes(d[offset:nul]).decode("utf-8", "replace")

    def sub(self, field: str, offset: int, size: int) -> "BinReader":
        """A reader over ``[offset, offset+size)`` whose errors still name whole-file offsets."""
        self.check(field, offset, size)
        return BinReader(memoryview(self.data)[offset : offset + size], self.path, self.base + offset)


def align_up(value: int, alignment: int) -> int:
    return (value + alignment - 1) // alignment * alignment
