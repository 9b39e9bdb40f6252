"""The NVN front end's queues, syncs and windows: submitting recordings, fences, presenting.
``NvnQueues`` is mixed into ``frontend.NvnService``, whose state and helpers (``_obj``,
``_new``, ``_gpu``, the lock) its methods use."""

from __future__ import annotations

import logging
import struct
import time

from cpu_host.horizon.hle.abi import Call, GuestError
from cpu_host.horizon.hle.nvn.objects import (
    Queue,
    Sync,
    Texture,
    Window,
)
from gpu_host import packets as P

from cpu_host.horizon.hle.nvn.tables import (
    FLAG_DISPLAY,
    FLAG_RENDER_TARGET,
    SYNC_ALREADY,
    SYNC_SATISFIED,
    SYNC_TIMEOUT,
    _targets,
)

log = logging.getLogger("cpu_host.nvn")


class NvnQueues:
    # -- queues, syncs, windows ---------------------------------------------------------------
    def queue_initialize(self, c: Call) -> int:
        with self.lock:
            self._new(c, 0, lambda i: Queue(i))
        return 1

    def queue_submit(self, c: Call) -> None:
        with self.lock:
            q = self._obj(c, 0, Queue, "nvnQueueSubmitCommands")
            n = c.sarg32(1)
            if not 0 <= n <= 4096:
                raise GuestError(f"nvnQueueSubmitCommands: count {n}")
            for h in struct.unpack(f"<{n}Q", c.read(c.arg(2), 8 * n, "command handles")):
                rec = self.handles.use(h)
                if isinstance(rec, str):
                    raise GuestError(f"nvnQueueSubmitCommands: {h:#x} is not a command handle ({rec})")
                q.pending.append(rec.encoded)
                q.targets |= rec.targets

    def _flush(self, q: Queue) -> int:
        if not q.pending and not q.syncs:
            return 0
        if self.flushed:  # what the CPU wrote before these commands, ahead of them
            q.pending[:0] = [(P.OP_DIRTY, *r) for r in self.flushed]
            self.flushed = []
        # Render targets with storage in a memory pool are the game's to read: their pixels are
        # written back into the pool before this submission's fences signal.
        targets = q.targets | set(_targets([c for c in q.pending if type(c) is tuple]))
        for tid in sorted(targets):
            tex = self.objects.get(tid)
            if isinstance(tex, Texture) and tex.pool is not None:
                q.pending.append((P.OP_WRITEBACK, tid))
        seq = self._gpu().submit(q.pending)
        for s in q.syncs:
            s.seq = seq
        q.pending, q.syncs, q.targets = [], [], set()
        q.last_seq = seq
        return seq

    def queue_flush(self, c: Call) -> None:
        with self.lock:
            self._flush(self._obj(c, 0, Queue, "nvnQueueFlush"))

    def queue_finish(self, c: Call) -> None:
        """Flush, then wait until everything the queue ever sent has been done (not only what
        this call flushed: a present sent earlier must be on screen before Finish returns)."""
        with self.lock:
            q = self._obj(c, 0, Queue, "nvnQueueFinish")
            self._flush(q)
            seq = q.last_seq
        if seq:
            self._gpu().wait(seq)

    def queue_fence(self, c: Call) -> None:
        with self.lock:
            q = self._obj(c, 0, Queue, "nvnQueueFenceSync")
            s = self._obj(c, 1, Sync, "nvnQueueFenceSync")
            s.seq = 0
            q.syncs.append(s)

    def sync_initialize(self, c: Call) -> int:
        with self.lock:
            self._new(c, 0, lambda i: Sync(i))
        return 1

    def sync_wait(self, c: Call) -> int:
        with self.lock:
            s = self._obj(c, 0, Sync, "nvnSyncWait")
            for q in self.objects.values():  # a fence not flushed yet is flushed by the wait
                if isinstance(q, Queue) and s in q.syncs:
                    self._flush(q)
            seq = s.seq
        if seq == 0:
            return SYNC_ALREADY
        gpu = self._gpu()
        if gpu.completed() >= seq:
            return SYNC_ALREADY
        timeout = c.arg(1)
        try:
            gpu.wait(seq, timeout=min(timeout / 1e9, 3600.0))
        except TimeoutError:
            return SYNC_TIMEOUT
        return SYNC_SATISFIED

    def window_initialize(self, c: Call) -> int:
        with self.lock:
            b = self.builders.get(c.arg(1), {})
            n, arr = b.get("count", 0), b.get("textures", 0)
            if not 1 <= n <= 4:
                raise GuestError(f"nvnWindowInitialize: {n} textures (1..4)")
            texs = []
            for i in range(n):
                oid = c.read_u64(c.read_u64(arr + 8 * i, "window texture array"), "window texture")
                t = self.objects.get(oid)
                if not isinstance(t, Texture) or not t.flags & (FLAG_DISPLAY | FLAG_RENDER_TARGET):
                    raise GuestError(f"nvnWindowInitialize: texture {i} is not a display texture")
                texs.append(t)
            self._new(c, 0, lambda i: Window(i, texs))
        return 1

    def window_acquire(self, c: Call) -> int:
        with self.lock:
            w = self._obj(c, 0, Window, "nvnWindowAcquireTexture")
            c.u32(c.arg(2), w.next, "acquired index")
            w.next = (w.next + 1) % len(w.textures)
        return 0

    def queue_present(self, c: Call) -> None:
        with self.lock:
            q = self._obj(c, 0, Queue, "nvnQueuePresentTexture")
            w = self._obj(c, 1, Window, "nvnQueuePresentTexture")
            i = c.sarg32(2)
            if not 0 <= i < len(w.textures):
                raise GuestError(f"nvnQueuePresentTexture: index {i} of {len(w.textures)} textures")
            self.frame += 1
            self.present_times.append(time.monotonic())
            q.pending.append((P.OP_PRESENT, self.frame, w.textures[i].id))
            self._flush(q)
        self.on_present()
