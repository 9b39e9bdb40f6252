"""Recording of a GPU command stream (like Dolphin's FIFO logs): registrations, every replayed
submission's packets and the memory it read.  ``replay_file`` renders a recording alone.

File: msgpack objects back to back.  First ``{"nxgpu_recording": 1}``, then events:
``["pool", id, size]``, ``["texture", {TextureDesc fields}]``, ``["sampler", id, linear, repeat]``,
``["program", id, vertex_spirv, fragment_spirv]`` (a fifth field: the placements a compute
program addresses, PROTOCOL.md "Global data"; a sixth: a geometry stage's modules
``[[input, spirv], ...]``, the fifth then written even when empty),
``["submit", seq, [packet, ...], [[pool, offset, size, bytes], ...]]`` (packets as unpacked
msgpack arrays).
The file is appended to as submissions complete (flushed after each), so a recording survives
the GPU process being killed: the reader stops at a torn last event, and the GPU process the
supervisor starts next appends to the same file (its re-registrations and resubmissions come
again; replaying them draws the same frames again).  Nothing is created until the first
event, so a warm standby that never takes over leaves no file behind.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator

import msgpack

from nxrecomp.common.errors import NxError

VERSION = 1


class Recorder:
    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self.f: Any = None
        self.packer = msgpack.Packer(use_bin_type=True)

    def _w(self, obj: Any) -> None:
        if self.f is None:
            self.f = open(self.path, "ab")
            if self.f.tell() == 0:
                self.f.write(self.packer.pack({"nxgpu_recording": VERSION}))
        self.f.write(self.packer.pack(obj))

    def pool(self, id: int, size: int, flushed_writes: bool = False) -> None:
        self._w(["pool", id, size, flushed_writes])

    def texture(self, desc: dict) -> None:
        self._w(["texture", desc])

    def sampler(self, id: int, linear: bool, repeat: bool, compare: int = 0) -> None:
        # a compare field only when there is one: recordings without it read as before
        self._w(["sampler", id, linear, repeat, *([compare] if compare else [])])

    def program(self, id: int, vertex: bytes, fragment: bytes, data: tuple[int, ...] = (), geometry=()) -> None:
        # the placements a compute program's code addresses, only when there are any: a replay
        # has none, so it refuses such a program by name (PROTOCOL.md "Global data"); gfx-geom:
        # a geometry stage's modules after them, [[input, spirv], ...]
        tail = [list(data)] if data or geometry else []
        self._w(["program", id, vertex, fragment, *tail, *([[list(g) for g in geometry]] if geometry else [])])

    def submit(self, seq: int, packets: list, data: dict[tuple[int, int, int], bytes]) -> None:
        self._w(["submit", seq, packets, [[p, o, s, b] for (p, o, s), b in data.items()]])
        self.f.flush()

    def close(self) -> None:
        if self.f is not None:
            self.f.close()
            self.f = None


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
