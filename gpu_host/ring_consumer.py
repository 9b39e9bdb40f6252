"""The GPU process's ring consumer: one session's records drained from the ring (and the command
arena), joined into submissions (msgpack arrays between BEGIN and END, binary parts), replayed by
the engine, and their completions published to the client (the ring's counters, fences, the
reply eventfd).  ``RingConsumer`` is mixed into ``server.GpuServer``, which owns the session,
the engine and the settings it reads (``ring_spin``, ``timing``); PROTOCOL.md "The ring"."""

from __future__ import annotations

import contextlib
import gc
import logging
import operator
import os
import time
from dataclasses import dataclass

from gpu_host import binpackets
from gpu_host import packets as P
from gpu_host.arena_stage import StageError, StageQueue
from gpu_host.blob_assembly import Assembly, Part, RefError
from gpu_host.objects import MappedPools
from gpu_host.ring_layout import BLOB_LAST, BLOB_PART, TAG_ARRAY, TAG_BLOB, TAG_BLOB_REF, RingFormatError, RingView
from gpu_host.ring_reader import RingReader

log = logging.getLogger("gpu_host.server")


@dataclass
class Session:
    id: int
    token: str
    view: RingView
    reader: RingReader
    pools: MappedPools
    reply: int  # eventfd the client sleeps on while it waits for completions
    packets: int = 0
    closed: bool = False
    blob: tuple[int, int, list] | None = None  # open binary submission: (seq, next part, part bodies)
    arena_parts: int = 0  # reference parts (ring tag 5) taken
    assembly: Assembly | None = None  # where binary parts are copied out of the ring (blob_assembly)
    stages: StageQueue | None = None  # the command arena's stage queue (PROTOCOL.md "Staged chunks")
    stage_rejected: int = 0  # stage queue entries refused


_first = operator.itemgetter(0)
# While a binary submission is open (parts published as the client writes them), the consumer
# polls the ring this long after the last record before it sleeps on the doorbell: the next part
# follows within a part's write time (~0.04 ms for 128 KiB), well under a wake-up's latency.
OPEN_PART_SPIN_S = 0.002
# After it staged chunks of a recording (PROTOCOL.md "Staged chunks") the consumer polls the ring
# and the stage queue this long before it sleeps: the recorder's next chunk, or the submission
# that follows the recording's last chunk (the client's end of recording and submit call, tens
# of microseconds), is then seen without a doorbell wake-up on the frame's path.
STAGED_SPIN_S = 0.0003


@contextlib.contextmanager
def gc_paused():
    """No cyclic garbage collection while submissions are unpacked and replayed.  A frame unpacks
    one tuple per packet (10,000 draws: ~11,000), and each collection that finds them alive
    traverses them; they hold no cycles and are freed by their reference counts as soon as their
    submission is replayed, so the collection that runs after this block no longer sees them."""
    if not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


def _is_marker(o) -> bool:
    return (type(o) is tuple or type(o) is list) and len(o) > 0 and type(o[0]) is int and (o[0] == P.OP_BEGIN or o[0] == P.OP_END)


def _markers(objs: list) -> list[int]:
    """Indices of the BEGIN/END packets among unpacked packets.  The ops are gathered and searched
    in C (list.index); a packet that is not a non-empty array makes it fall back to a loop.  Only
    an int op counts (1.0 and True compare equal to 1)."""
    try:
        ops = list(map(_first, objs))
    except Exception:
        return [
            i
            for i, o in enumerate(objs)
            if type(o) in (list, tuple) and o and type(o[0]) is int and (o[0] == P.OP_BEGIN or o[0] == P.OP_END)
        ]
    marks = []
    for op in (P.OP_BEGIN, P.OP_END):
        i = -1
        while True:
            try:
                i = ops.index(op, i + 1)
            except ValueError:
                break
            if type(ops[i]) is int:
                marks.append(i)
    marks.sort()
    return marks


class RingConsumer:
    """The consumer thread's part of the GPU server (see the module's text)."""

    def consume(self) -> None:
        try:
            self._consume()
        except BaseException:
            # Never linger as a process that answers health checks but replays nothing:
            # exit, and let the supervisor restart us.
            log.exception("ring consumer died; exiting")
            from nxrecomp.common import log as nxlog

            nxlog.flush()
            os._exit(70)

    def _consume(self) -> None:
        cur: tuple[int, list] | None = None
        s: Session | None = None
        last = 0.0  # perf_counter() of the last record: gpu_host.ring_spin_us polls after it
        staged = 0.0  # perf_counter() when chunks were last staged: STAGED_SPIN_S polls after it
        while not self.stop.is_set():
            if self.session is not s:
                s, cur = self.session, None
            if s is None:
                time.sleep(0.01)
                continue
            spin = last + self.ring_spin if self.ring_spin else 0.0
            if s.blob is not None:  # a binary submission's next part is being written: poll for it
                spin = max(spin, last + OPEN_PART_SPIN_S)
            more = None
            if s.stages is not None:
                spin = max(spin, staged + STAGED_SPIN_S) if staged else spin
                more = s.stages.pending
            s.reader.wait(0.05, spin, more)
            if self.timing:
                self.stamps = [time.perf_counter()]
            try:
                # parts of an open binary submission still lie in the assembly buffer: kept
                s.assembly.start_drain(holding=s.blob is not None)
                if s.stages is not None and self._stage(s):
                    staged = time.perf_counter()
                batch = s.reader.records(blob_sink=s.assembly.take, ref_sink=s.assembly.take_ref)
            except RingFormatError as e:
                log.error("session %d: %s; session detached (client must re-attach)", s.id, e)
                with self.lock:
                    if self.session is s:
                        self.session = None
                    s.closed = True
                continue
            if batch:
                last = time.perf_counter()
                if self.timing:
                    self.stamps.append(last)
            with gc_paused():
                for tag, record in batch:
                    try:
                        cur = self._record(s, tag, record, cur)
                    except Exception:
                        log.exception("session %d: record failed; its submission is dropped", s.id)
                        if cur is not None and cur[0] is not None:
                            self._done(s, cur[0], None)
                        cur = (None, [])

    def _stage(self, s: Session) -> int:
        """Copy the chunks the client's recorder staged since the last wake (PROTOCOL.md "Staged
        chunks") while it goes on recording; a bad entry is named in the log (the first of each
        wake) and counted, and nothing of it is used.  Returns the entries read."""
        bad = 0
        entries = s.stages.take()
        for e in entries:
            if isinstance(e, StageError):
                s.stage_rejected += 1
                if not bad:
                    log.warning("session %d: %s; ignored", s.id, e.message)
                bad += 1
            else:
                s.assembly.stage(e.serial, e.offset, e.length, s.reader.arena)
        return len(entries)

    def _record(self, s: Session, tag: int, record: bytes, cur):
        """One ring record: whole packets (one msgpack array, or back to back).  A record that does
        not parse drops the submission it belongs to at once (its END may be in the unreadable
        part)."""
        if tag == TAG_BLOB:
            return self._blob_part(s, record, cur)
        if tag == TAG_BLOB_REF:
            if isinstance(record, RefError):
                return self._bad_ref(s, record, cur)
            s.arena_parts += 1
            if s.arena_parts == 1:
                log.info("session %d: submissions read from the command arena (ring tag 5)", s.id)
            return self._blob_part(s, record, cur)
        if s.blob is not None:  # msgpack records while a binary submission is open: drop it
            self._drop_blob(s, "a msgpack record came before its last part")
        if tag == TAG_ARRAY:
            # A BEGIN only opens an array record and an END only closes one (PROTOCOL.md): a
            # marker anywhere else stays among the packets, where validation drops its
            # submission ("nested submission marker").  So no packet but the ends is looked at.
            objs, err = P.unpack_array_record(record)
            marks = [i for i in {0, len(objs) - 1} if i >= 0 and _is_marker(objs[i])]
            marks.sort()
        else:
            objs, err = P.unpack_record(record)
            # Markers (BEGIN/END) anywhere, found by C-level searches.
            marks = _markers(objs)
        s.packets += len(objs)
        # The packets between markers move to their submission as slices: one Python call per
        # marker, not per packet (10,000 draws).
        start = 0
        for i in marks + [len(objs)]:
            if i > start:
                if cur is None:
                    log.warning("%d packets outside a submission; ignored", i - start)
                elif cur[0] is not None:
                    cur[1].extend(objs[start:i])
            if i < len(objs):
                cur = self._packet(s, objs[i], cur)
            start = i + 1
        if err is not None:
            if cur is None or cur[0] is None:
                log.warning("packet outside a submission: %s; ignored", err)
            else:
                self.engine.reject(cur[0], f"packet {len(cur[1])}: {err}")
                self._done(s, cur[0], None)
            cur = (None, [])  # skip the rest of this submission, up to the next BEGIN
        return cur

    def _bad_ref(self, s: Session, e: RefError, cur):
        """A reference part that cannot be followed drops its submission (and one left open),
        naming what is wrong."""
        if cur is not None and cur[0] is not None:
            self.engine.reject(cur[0], "no END before a binary submission")
            self._done(s, cur[0], None)
        if s.blob is not None and s.blob[0] != e.seq:
            self._drop_blob(s, f"a part of submission {e.seq} came instead of part {s.blob[1]}")
        s.blob = None
        if e.seq is None:
            log.warning("binary %s; ignored", e.message)
        else:
            self.engine.reject(e.seq, f"binary {e.message}")
            self._done(s, e.seq, None)
        return None

    def _drop_blob(self, s: Session, why: str) -> None:
        seq = s.blob[0]
        s.blob = None
        self.engine.reject(seq, f"binary submission: {why}")
        self._done(s, seq, None)

    def _blob_part(self, s: Session, record: bytes | Part, cur):
        """A part of a binary-packet submission (ring tag 4, PROTOCOL.md "Binary packets"): its
        blobs' packets are joined and replayed at the last part.  A msgpack submission still open
        is dropped (no END before it).  ``record`` is the record's bytes, or where
        ``Assembly.take`` copied it (its header bytes; its packet bodies in the session's buffer)."""
        if cur is not None and cur[0] is not None:
            self.engine.reject(cur[0], "no END before a binary submission")
            self._done(s, cur[0], None)
        if isinstance(record, Part):
            return self._assembled_part(s, record)
        if len(record) < BLOB_PART.size:
            log.warning("binary part record of %d bytes is shorter than its header; ignored", len(record))
            return None
        seq, part, flags = BLOB_PART.unpack_from(record)
        if len(record) < BLOB_PART.size + binpackets.HEADER:
            if s.blob is not None and s.blob[0] != seq:
                self._drop_blob(s, f"part {part} of submission {seq} came instead of part {s.blob[1]}")
            s.blob = None
            self.engine.reject(seq, f"binary part {part}: {len(record) - BLOB_PART.size} bytes, shorter than a blob header")
            self._done(s, seq, None)
            return None
        if s.blob is not None and (s.blob[0] != seq or s.blob[1] != part):
            self._drop_blob(s, f"part {part} of submission {seq} came instead of part {s.blob[1]}")
        if s.blob is None:
            if part != 0:
                log.warning("binary part %d of submission %d without its part 0; ignored", part, seq)
                return None
            s.blob = (seq, 0, [])
        s.blob[2].append(memoryview(record)[BLOB_PART.size :])
        s.packets += 1
        s.blob = (seq, part + 1, s.blob[2])
        if flags & BLOB_LAST:
            parts, s.blob = s.blob[2], None
            self._replay_blob(s, seq, parts)
        return None

    def _replay_blob(self, s: Session, seq: int, parts: list) -> None:
        """Join a binary submission's parts (blobs as bytes views, or ``Part``s in the session's
        assembly buffer) and replay it; a bad blob header drops it naming the part and field."""
        try:
            if all(isinstance(q, Part) for q in parts):
                count = sum(binpackets.part_count(q.head[BLOB_PART.size :], q.size, i) for i, q in enumerate(parts))
                blob = s.assembly.blob(parts, count)
            else:
                blob = None
            if blob is None:  # parts not back to back in the buffer: joined by copying
                blob = binpackets.join(
                    [bytes(q.head[BLOB_PART.size :]) + s.assembly.body(q) if isinstance(q, Part) else q for q in parts]
                )
        except ValueError as e:
            self.engine.reject(seq, str(e))
            self._done(s, seq, None)
            return
        if self.timing:
            self.stamps.append(time.perf_counter())
        # every body byte format-checked as it was staged or copied (Part.checked): the replay's
        # check leaves that pass out
        formed = all(isinstance(q, Part) and q.checked for q in parts)
        res = self.engine.submit_blob(seq, blob, formatted=formed) if formed else self.engine.submit_blob(seq, blob)
        if self.timing:
            self.stamps.append(time.perf_counter())
        self._done(s, seq, res)

    def _assembled_part(self, s: Session, p: Part):
        """``_blob_part`` for a part that ``Assembly.take`` copied: the same checks, in the same
        order, on its header bytes; at the last part the blob is a view of the assembly buffer
        (or, where its parts do not lie back to back, joined by copying)."""
        seq, part, flags = BLOB_PART.unpack_from(p.head)
        if s.blob is not None and (s.blob[0] != seq or s.blob[1] != part):
            self._drop_blob(s, f"part {part} of submission {seq} came instead of part {s.blob[1]}")
        if s.blob is None:
            if part != 0:
                log.warning("binary part %d of submission %d without its part 0; ignored", part, seq)
                return None
            s.blob = (seq, 0, [])
        s.blob[2].append(p)
        s.packets += 1
        s.blob = (seq, part + 1, s.blob[2])
        if flags & BLOB_LAST:
            parts, s.blob = s.blob[2], None
            self._replay_blob(s, seq, parts)
        return None

    def _packet(self, s: Session, obj, cur):
        marker = (
            type(obj) in (list, tuple)
            and len(obj) == 2
            and type(obj[0]) is int
            and obj[0] in (P.OP_BEGIN, P.OP_END)
            and type(obj[1]) is int
            and 0 <= obj[1] < 1 << 64
        )
        if marker and obj[0] == P.OP_BEGIN:
            if cur is not None and cur[0] is not None:
                self.engine.reject(cur[0], f"no END before BEGIN {obj[1]}")
                self._done(s, cur[0], None)
            return (obj[1], [])
        if marker:
            if cur is not None and cur[0] is None:
                return None  # the END of a submission already dropped
            if cur is None:
                log.warning("END %d without its BEGIN; ignored", obj[1])
                return None
            if cur[0] != obj[1]:  # the open submission never gets its own END: drop it
                self.engine.reject(cur[0], f"END {obj[1]} ends submission {cur[0]}")
                self._done(s, cur[0], None)
                return None
            res = self.engine.submit(cur[0], cur[1])
            self._done(s, cur[0], res)
            return None
        if cur is None:
            log.warning("packet outside a submission; ignored")
            return None
        if cur[0] is not None:
            cur[1].append(obj)
        return cur

    def _done(self, s: Session, seq: int, res) -> None:
        v = s.view
        if res is None or res.dropped:
            v.dropped.value += 1
        if res is not None:
            for fence, value in res.fences:
                v.fences[fence] = value
            if res.frames:
                v.presented.value = res.frames[-1].frame
        v.completed.value = seq
        if self.timing and len(self.stamps) == 4:
            # seq, then perf_counter() (CLOCK_MONOTONIC, one clock for all processes) when the
            # consumer woke, had copied the records out of the ring, began and ended the replay,
            # and had published the completion (before the reply eventfd is rung).
            self.stamps += [time.perf_counter(), seq]
        try:
            os.eventfd_write(s.reply, 1)
        except OSError:
            pass
        if self.timing and len(self.stamps) == 6:
            *ts, seq = self.stamps
            # and last the replay's thread CPU milliseconds (Engine.last_replay_cpu_ms)
            cpu = self.engine.last_replay_cpu_ms if res is not None else 0.0
            self.timing.write(f"{seq} {' '.join(f'{t:.7f}' for t in ts)} {cpu:.4f}\n")
            self.stamps = []
        with self.fence_cond:
            self.fence_cond.notify_all()
