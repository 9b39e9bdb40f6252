"""Recording of a GPU command stream (like Dolphin's FIFO logs): registrations, every replayed
submission's packets and the memory it read.  ``replay_file`` renders a recording alone.

File: msgpack objects back to back.  First ``{"nxgpu_recording": 1}``, then events:
``["pool", id, size]``, ``["texture", {TextureDesc fields}]``, ``["sampler", id, linear, repeat]``,
``["program", id, vertex_spirv, fragment_spirv]``,
``["submit", seq, [packet, ...], [[pool, offset, size, bytes], ...]]`` (packets as unpacked
msgpack arrays).
Written to a temporary file and renamed into place when the recording is closed.
"""
from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator

import msgpack

from nxrecomp.errors import NxError

VERSION = 1


class Recorder:
    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self.tmp = self.path.with_name(f".{self.path.name}.tmp{os.getpid()}")
        self.f = open(self.tmp, "wb")
        self.packer = msgpack.Packer(use_bin_type=True)
        self._w({"nxgpu_recording": VERSION})

    def _w(self, obj: Any) -> None:
        self.f.write(self.packer.pack(obj))

    def pool(self, id: int, size: int) -> None:
        self._w(["pool", id, size])

    def texture(self, desc: dict) -> None:
        self._w(["texture", desc])

    def sampler(self, id: int, linear: bool, repeat: bool) -> None:
        self._w(["sampler", id, linear, repeat])

    def program(self, id: int, vertex: bytes, fragment: bytes) -> None:
        self._w(["program", id, vertex, fragment])

    def submit(self, seq: int, packets: list, data: dict[tuple[int, int, int], bytes]) -> None:
        self._w(["submit", seq, packets, [[p, o, s, b] for (p, o, s), b in data.items()]])
        self.f.flush()

    def close(self) -> None:
        self.f.close()
        os.replace(self.tmp, self.path)


@dataclass
class Event:
    kind: str
    args: list


def read(path: Path) -> Iterator[Event]:
    """Events of a recording; a bad file raises NxError naming the file and the event."""
    path = Path(path)
    try:
        f = open(path, "rb")
    except OSError as e:
        raise NxError(f"cannot open recording: {e.strerror}", path=str(path)) from None
    with f:
        up = msgpack.Unpacker(f, raw=False, max_buffer_size=1 << 30)
        try:
            head = next(up)
        except (StopIteration, Exception):
            raise NxError("not a GPU recording (empty or not msgpack)", path=str(path)) from None
        if not isinstance(head, dict) or head.get("nxgpu_recording") != VERSION:
            raise NxError(f"not a GPU recording of version {VERSION}", path=str(path), field="header")
        n = 0
        while True:
            try:
                ev = next(up)
            except StopIteration:
                return
            except Exception as e:
                raise NxError(f"event {n}: corrupt ({type(e).__name__})", path=str(path)) from None
            n += 1
            if not isinstance(ev, list) or not ev or not isinstance(ev[0], str):
                raise NxError(f"event {n}: not [kind, ...]", path=str(path))
            yield Event(ev[0], ev[1:])
