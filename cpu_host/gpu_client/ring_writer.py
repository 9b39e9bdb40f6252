"""Producer side of the command ring (layout in ``gpu_host.ring_layout``)."""

from __future__ import annotations

import os
import time
from typing import Callable

from gpu_host.ring_layout import HEADER_SIZE, MAX_PACKET, REC_HDR, TAG_PACKET, TAG_PAD, RingView, align8


class RingFull(TimeoutError):
    pass


class RingWriter:
    def __init__(self, view: RingView, doorbell_fd: int) -> None:
        self.view = view
        self.doorbell = doorbell_fd
        self.cap = view.capacity
        self.wpos = view.write.value

    def reset(self) -> None:
        """Start over on an empty ring (after the consumer was replaced)."""
        self.view.read.value = 0
        self.view.write.value = 0
        self.view.completed.value = 0
        self.wpos = 0

    def write(
        self,
        payload: bytes | tuple[bytes, ...],
        wait: Callable[[], None] | None = None,
        timeout: float = 5.0,
        tag: int = TAG_PACKET,
    ) -> None:
        """Append one record: ``payload`` is its bytes, or parts written back to back (no joined
        copy).  When the ring is full, waits for the consumer (calling ``wait`` between polls so
        the caller can notice a dead consumer) up to ``timeout`` seconds."""
        parts = (payload,) if isinstance(payload, (bytes, bytearray, memoryview)) else payload
        n = sum(map(len, parts))
        if n > MAX_PACKET:
            raise ValueError(f"packet of {n} bytes exceeds the ring's {MAX_PACKET}-byte limit")
        need = REC_HDR.size + align8(n)
        off = self.wpos % self.cap
        pad = self.cap - off if off + need > self.cap else 0
        self._wait_space(need + pad, wait, timeout)
        mm = self.view.mm
        if pad:
            REC_HDR.pack_into(mm, HEADER_SIZE + off, pad - REC_HDR.size, TAG_PAD)
            self.wpos += pad
            off = 0
        base = HEADER_SIZE + off
        at = base + REC_HDR.size
        for p in parts:
            mm[at : at + len(p)] = p
            at += len(p)
        REC_HDR.pack_into(mm, base, n, tag)
        self.wpos += need

    def publish(self) -> None:
        """Make everything written visible, then ring the doorbell (one syscall per batch)."""
        self.view.write.value = self.wpos
        os.eventfd_write(self.doorbell, 1)

    def _wait_space(self, need: int, wait: Callable[[], None] | None, timeout: float) -> None:
        if need > self.cap:
            raise ValueError(f"record of {need} bytes cannot fit a ring of {self.cap}")
        if self.cap - (self.wpos - self.view.read.value) >= need:
            return
        self.publish()  # the consumer may be waiting for exactly these bytes
        deadline = time.monotonic() + timeout
        delay = 1e-5
        while self.cap - (self.wpos - self.view.read.value) < need:
            if wait:
                wait()
            if time.monotonic() > deadline:
                raise RingFull(f"command ring full for {timeout}s (consumer stalled)")
            time.sleep(delay)
            delay = min(delay * 2, 2e-3)
