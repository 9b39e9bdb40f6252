"""Consumer side of the command ring: yields raw packet payloads, trusting nothing the producer
wrote (positions and record lengths are checked before any byte is read)."""

from __future__ import annotations

import os
import select
import time
from typing import Any, Callable

from gpu_host.ring_layout import (
    HEADER_SIZE,
    MAX_PACKET,
    REC_HDR,
    TAG_ARRAY,
    TAG_BLOB,
    TAG_BLOB_REF,
    TAG_PACKET,
    TAG_PAD,
    RingFormatError,
    RingView,
    align8,
)


class RingReader:
    def __init__(self, view: RingView, doorbell_fd: int, arena: memoryview | None = None) -> None:
        """``arena``: the client's command arena (read-only view), which tag-5 records reference."""
        self.view = view
        self.doorbell = doorbell_fd
        self.cap = view.capacity
        self.arena = arena

    def wait(self, timeout: float, spin_until: float = 0.0, more: Callable[[], bool] | None = None) -> None:
        """Sleep until the producer rings the doorbell (or ``timeout`` seconds pass).  Before
        sleeping, poll the write position until ``spin_until`` (``time.perf_counter()``): a
        consumer that polls sees a record without the doorbell's wake-up (an eventfd, a
        ``select`` return and a thread switch: tens of microseconds, more in a VM).  Each poll
        yields the CPU and the GIL (``os.sched_yield``), so gRPC threads keep being served.
        ``more``: polled with the write position while spinning, True where other work came that
        rings the same doorbell (the command arena's stage queue)."""
        v = self.view
        if v.write.value != v.read.value:
            return
        while spin_until and time.perf_counter() < spin_until:
            os.sched_yield()
            if v.write.value != v.read.value or (more is not None and more()):
                return
        r, _, _ = select.select([self.doorbell], [], [], timeout)
        if r:
            try:
                os.eventfd_read(self.doorbell)
            except BlockingIOError:
                pass

    def drain(self, limit: int = 4096) -> list[bytes]:
        """Up to ``limit`` record payloads published so far, consumed (the read position moves on)."""
        return [p for _, p in self.records(limit)]

    def records(
        self,
        limit: int = 4096,
        blob_sink: Callable[[memoryview], Any] | None = None,
        ref_sink: Callable[[memoryview, memoryview | None], Any] | None = None,
    ) -> list[tuple[int, Any]]:
        """Up to ``limit`` records ``(tag, payload)`` published so far, consumed: each payload
        copied out of the ring as ``bytes``, or, for a binary part record (tag 4) when
        ``blob_sink`` is given, what ``blob_sink`` returns for a view of the record in the ring
        (it must copy what it keeps: the view dies and the bytes may change once consumed);
        likewise ``ref_sink`` for a reference part (tag 5), with the command arena's view."""
        if blob_sink is not None or ref_sink is not None:
            with memoryview(self.view.mm) as ring:
                return self._records(limit, blob_sink, ring, ref_sink)
        return self._records(limit, None, None)

    def _records(self, limit: int, blob_sink, ring, ref_sink=None) -> list[tuple[int, Any]]:
        v, cap, mm = self.view, self.cap, self.view.mm
        out: list[tuple[int, bytes]] = []
        rpos = v.read.value
        wpos = v.write.value
        if wpos < rpos or wpos - rpos > cap:
            raise RingFormatError(f"ring positions: write {wpos} read {rpos} capacity {cap} are inconsistent")
        while rpos < wpos and len(out) < limit:
            off = rpos % cap
            if cap - off < REC_HDR.size:
                raise RingFormatError(f"ring record at position {rpos}: header crosses the end of the ring")
            length, tag = REC_HDR.unpack_from(mm, HEADER_SIZE + off)
            if tag == TAG_PAD:
                nxt = rpos + (cap - off)
            elif tag == TAG_PACKET or tag == TAG_ARRAY or tag == TAG_BLOB or tag == TAG_BLOB_REF:
                if length > MAX_PACKET or off + REC_HDR.size + length > cap:
                    raise RingFormatError(f"ring record at position {rpos}: length {length} runs past the ring")
                start = HEADER_SIZE + off + REC_HDR.size
                if tag == TAG_BLOB and blob_sink is not None:
                    out.append((tag, blob_sink(ring[start : start + length])))
                elif tag == TAG_BLOB_REF and ref_sink is not None:
                    out.append((tag, ref_sink(ring[start : start + length], self.arena)))
                else:
                    out.append((tag, mm[start : start + length]))
                nxt = rpos + REC_HDR.size + align8(length)
            else:
                raise RingFormatError(f"ring record at position {rpos}: unknown tag {tag}")
            if nxt > wpos:
                raise RingFormatError(f"ring record at position {rpos}: extends past the write position {wpos}")
            rpos = nxt
        v.read.value = rpos
        return out
