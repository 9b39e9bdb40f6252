"""A submission with EVENT_WAITs replayed part by part (the plan, replay and snapshot stages run
once a part; ``gpu_host/events.py`` holds the event semantics these parts rely on).  Apart from
events.py so that the leaf module validate.py imports stays a leaf: no import loop between
events, validate, replay and snapshot."""

from __future__ import annotations

import logging
from typing import Any

from gpu_host import packets as P
from gpu_host.events import read_value, split, wait
from gpu_host.replay import Result
from gpu_host.snapshot import Snapshot
from gpu_host.validate import plan
from nxrecomp.common import settings

log = logging.getLogger("gpu_host.events")


def run_parts(engine: Any, pl: Any) -> Any:
    """Replay plan ``pl`` (one with EVENT_WAITs) part by part on ``engine`` (called holding
    ``engine.lock``); returns the merged ``Result`` of the parts that ran.  A wait that times out
    drops the rest of the submission with one log line; the caller still publishes `completed`."""
    objects = engine.objects
    total = Result(pl.seq)
    for w, cmds in split(pl.commands):
        if w is not None:
            _, pool, off, mode, want = pl.commands[w]

            def read() -> int | None:
                with engine.lock:
                    if engine.objects is not objects:
                        return None
                    return read_value(objects.memory, pool, off)

            timeout = settings.get("gpu_host", "event_wait_timeout_s")
            engine.lock.release()  # serve registrations while the GPU waits
            try:
                ok, seen = wait(read, mode, want, timeout)
            finally:
                engine.lock.acquire()
            if not ok:
                engine.dropped += 1
                total.dropped = True
                if ok is None:
                    log.warning(
                        "dropped the rest of submission %d at packet %d EVENT_WAIT: the session was replaced while it waited",
                        pl.seq,
                        w,
                    )
                else:
                    log.warning(
                        "dropped the rest of submission %d: packet %d EVENT_WAIT: event pool %d offset "
                        "%#x holds %d, waited %g s for %s %d",
                        pl.seq,
                        w,
                        pool,
                        off,
                        seen,
                        timeout,
                        P.EVENT_WAIT_MODES[mode],
                        want,
                    )
                return total
        # objects may have changed while it waited: planned now; in C where every packet of the part
        # is one the native replay knows (the same checks, the same commands as the Python path's)
        nat = engine.native.prepare(pl.seq, list(cmds), objects) if engine.native is not None else None
        sub = nat.plan if nat is not None else plan(pl.seq, cmds, objects)
        reads = engine.replayer.texture_reads(sub)
        snap = Snapshot.take(sub, objects.memory, reads)
        res = engine.replayer.run(sub, snap, reads, native=nat)
        total.fences += res.fences
        total.frames += res.frames
        total.draws += res.draws
        if engine.recorder:  # each part as a submission of its own, with its own snapshot
            engine.recorder.submit(pl.seq, [list(c) for c in cmds], snap.data)
    return total
