"""Room directory in Redis: which relay (HOST:PORT players send to) holds which room, so that
several relay workers and hosts serve one community, and a room whose relay died is given
to a live one.

Keys (``prefix`` default ``nxr:``; Redis keys and values are bytes, room names any UTF-8):

    <prefix>relay:<addr>#<worker>  JSON {"rooms": n, "players": n}; expires after ttl_ms.  Every
                          live relay process rewrites it every ttl_ms / 3 (``DirectoryAgent``);
                          the workers sharing one address (relay.workers) add up.
    <prefix>room:<room>   <addr> of the relay holding the room; expires after ttl_ms.  The
                          holding relay refreshes it while the room is open; matchmaking sets
                          it (``assign``) when the room is first asked for.
    <prefix>assigned:<addr>  rooms assigned to the relay within the last ttl_ms (not yet in
                          its published load), so that a burst of assignments spreads out.

A relay that dies stops refreshing: after ttl_ms both its keys are gone, ``assign`` hands its
rooms to the least loaded live relay, and the room's players (whose client timed out) look the
room up again and rejoin there with the tokens they hold (tokens name the room and player, the
directory names the relay: a room can move, a token need not be reissued).

Sources of facts: redis.io command reference (SET with NX/PX/XX, PEXPIRE, SCAN, EVAL), redis-py.
"""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Callable, Iterable

from nxrecomp.common.errors import NxError
from nxrecomp.common.log import kv

log = logging.getLogger("relay.directory")

# Claim or refresh a room for ARGV[1] unless another relay holds it: returns 1, or 0 on conflict.
_CLAIM = """
local cur = redis.call('GET', KEYS[1])
if cur == false or cur == ARGV[1] then
  redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
  return 1
end
return 0
"""
# Delete a room key only if it still names ARGV[1] (a graceful stop gives its rooms back).
_RELEASE = """
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
"""


class Directory:
    """A client of the room directory at ``url`` (``redis://HOST:PORT/DB``)."""

    def __init__(self, url: str, ttl_ms: int = 3000, prefix: str = "nxr:") -> None:
        import redis

        if ttl_ms < 300:
            raise NxError(f"relay.directory_ttl_ms {ttl_ms} is below 300")
        try:
            self.r = redis.Redis.from_url(url, socket_timeout=1.0, socket_connect_timeout=1.0)
        except ValueError as e:
            raise NxError(f"relay.directory {url!r}: {e}") from None
        self.url, self.ttl_ms, self.prefix = url, ttl_ms, prefix.encode()
        self._claim = self.r.register_script(_CLAIM)
        self._release = self.r.register_script(_RELEASE)

    def _room(self, room: str) -> bytes:
        return self.prefix + b"room:" + room.encode()

    def _relay(self, addr: str, worker: int) -> bytes:
        return self.prefix + b"relay:" + addr.encode() + b"#%d" % worker

    def relays(self) -> dict[str, dict]:
        """Live relay addresses -> their load (summed over the workers behind an address)."""
        keys = list(self.r.scan_iter(match=self.prefix + b"relay:*", count=500))
        out: dict[str, dict] = {}
        for k, v in zip(keys, self.r.mget(keys) if keys else []):
            if v is not None:
                addr = k[len(self.prefix) + 6 :].decode().rsplit("#", 1)[0]
                load = out.setdefault(addr, {"rooms": 0, "players": 0, "workers": 0})
                got = json.loads(v)
                load["rooms"] += got.get("rooms", 0)
                load["players"] += got.get("players", 0)
                load["workers"] += 1
        return out

    def lookup(self, room: str) -> str | None:
        v = self.r.get(self._room(room))
        return v.decode() if v is not None else None

    def assign(self, room: str) -> str:
        """The relay holding ``room``; if none, the least loaded live relay, claimed atomically
        (two matchmakers asking at once get the same answer)."""
        for _ in range(3):
            cur = self.lookup(room)
            if cur is not None:
                return cur
            live = self.relays()
            if not live:
                raise NxError(f"room directory {self.url}: no live relay to put room {room!r} on")
            keys = [self.prefix + b"assigned:" + a.encode() for a in live]
            recent = {a: int(v or 0) for a, v in zip(live, self.r.mget(keys))}
            # the fewest rooms per worker (then players): a host with 4 workers takes 4 rooms to a 1-worker host's one
            addr = min(
                live,
                key=lambda a: ((live[a]["rooms"] + recent[a]) / live[a]["workers"], live[a]["players"] / live[a]["workers"], a),
            )
            if self.r.set(self._room(room), addr, nx=True, px=self.ttl_ms):
                k = self.prefix + b"assigned:" + addr.encode()
                self.r.pipeline(transaction=False).incr(k).pexpire(k, self.ttl_ms).execute()
                return addr
        raise NxError(f"room directory {self.url}: room {room!r} kept changing hands")

    def publish(self, addr: str, rooms: Iterable[str], players: int, worker: int = 0) -> list[str]:
        """A relay's heartbeat: its load, and every room it holds kept mapped to it.  Returns the
        rooms another relay holds (a split the operator should hear about)."""
        rooms = list(rooms)
        self.r.set(self._relay(addr, worker), json.dumps({"rooms": len(rooms), "players": players}), px=self.ttl_ms)
        pipe = self.r.pipeline(transaction=False)
        for room in rooms:
            self._claim(keys=[self._room(room)], args=[addr, self.ttl_ms], client=pipe)
        return [room for room, ok in zip(rooms, pipe.execute()) if not ok]

    def release(self, addr: str, rooms: Iterable[str], relay_too: bool = True, worker: int = 0) -> None:
        """Rooms closed (or a graceful stop: the relay's own key too) go now, not after ttl_ms."""
        for room in rooms:
            self._release(keys=[self._room(room)], args=[addr])
        if relay_too:
            self.r.delete(self._relay(addr, worker))


class DirectoryAgent:
    """Publishes one relay to the directory every ttl_ms / 3 from its own thread (``snapshot``
    is a plain attribute read, as for /metrics); a Redis outage is logged and the relay goes on
    serving its rooms."""

    def __init__(self, directory: Directory, addr: str, snapshot: Callable[[], object], worker: int = 0) -> None:
        self.d, self.addr, self.snapshot, self.worker = directory, addr, snapshot, worker
        self._stop = threading.Event()
        self.thread = threading.Thread(target=self._run, name="relay-directory", daemon=True)
        self.failures = 0
        self._held: set[str] = set()  # rooms published last time

    def start(self) -> DirectoryAgent:
        self.thread.start()
        return self

    def _run(self) -> None:
        while not self._stop.is_set():
            snap = self.snapshot()
            if not snap.draining:
                try:
                    rooms = set(snap.room_names)
                    self.d.release(self.addr, self._held - rooms, relay_too=False)  # closed rooms: free now
                    conflicts = self.d.publish(self.addr, rooms, snap.players, self.worker)
                    self._held = rooms
                    if self.failures:
                        kv(log, logging.WARNING, "room directory reachable again", url=self.d.url, after=self.failures)
                    self.failures = 0
                    for room in conflicts:
                        kv(log, logging.WARNING, "room held by another relay in the directory", room=room)
                except Exception as e:  # noqa: BLE001 - redis errors of every kind: keep serving
                    if self.failures == 0:
                        kv(log, logging.WARNING, "room directory unreachable", url=self.d.url, error=str(e))
                    self.failures += 1
            self._stop.wait(self.d.ttl_ms / 3000)

    def stop(self, release: bool = True) -> None:
        self._stop.set()
        self.thread.join(timeout=5)
        if release:
            try:
                self.d.release(self.addr, self._held | set(self.snapshot().room_names), worker=self.worker)
            except Exception as e:  # noqa: BLE001
                kv(log, logging.WARNING, "room directory release failed", url=self.d.url, error=str(e))
