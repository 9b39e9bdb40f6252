"""What the nn:: co-op shim will call: integer handles and result codes, no exceptions.

A guest cannot hold a Python object or catch a Python exception, so the Horizon layer keeps
one ``CoopHandles`` per guest process and maps each guest call onto one method here; every
method returns a result code (0 = success, else ``CoopError.code``) first.
"""

from __future__ import annotations

import threading

from cpu_host.coop.client import CoopClient, CoopError

OK = 0
E_BAD_HANDLE = 9


class CoopHandles:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._clients: dict[int, CoopClient] = {}
        self._next = 1

    def _get(self, handle: int) -> CoopClient | None:
        with self._lock:
            return self._clients.get(handle)

    def connect(self, host: str, port: int, token: bytes, password: bytes, create: bool) -> tuple[int, int, int]:
        """Open (``create``) or join the token's room -> (result, handle, our slot)."""
        try:
            client = CoopClient((host, port))
        except CoopError as e:
            return e.code, 0, -1
        try:
            slot = (client.open if create else client.join)(token, password.decode(errors="replace"))
        except CoopError as e:
            client.close()
            return e.code, 0, -1
        with self._lock:
            handle, self._next = self._next, self._next + 1
            self._clients[handle] = client
        return OK, handle, slot

    def send(self, handle: int, dst: int, channel: int, payload: bytes, reliable: bool) -> int:
        c = self._get(handle)
        if c is None:
            return E_BAD_HANDLE
        try:
            c.send(dst, channel, payload, reliable)
        except CoopError as e:
            return e.code
        return OK

    def receive(self, handle: int, timeout_s: float = 0) -> tuple[int, int, int, bytes]:
        """-> (result, source slot, channel, payload); source -1 when nothing is waiting."""
        c = self._get(handle)
        if c is None:
            return E_BAD_HANDLE, -1, 0, b""
        m = c.recv(timeout=timeout_s)
        return (OK, m.src, m.channel, m.payload) if m else (OK, -1, 0, b"")

    def roster(self, handle: int) -> tuple[int, dict[int, str]]:
        c = self._get(handle)
        return (E_BAD_HANDLE, {}) if c is None else (OK, c.roster)

    def close(self, handle: int) -> int:
        with self._lock:
            c = self._clients.pop(handle, None)
        if c is None:
            return E_BAD_HANDLE
        c.close()
        return OK
