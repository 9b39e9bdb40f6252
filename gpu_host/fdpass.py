"""Passing file descriptors (memfds, eventfds) between processes over a UNIX socket with
SCM_RIGHTS.  Each message is one msgpack map (the *label*: what the fds are) plus its fds."""

from __future__ import annotations

import socket
from typing import Any

import msgpack

MAX_LABEL = 4096
MAX_FDS = 8


def send(sock: socket.socket, label: dict[str, Any], fds: list[int]) -> None:
    data = msgpack.packb(label)
    if len(data) > MAX_LABEL:
        raise ValueError(f"fd label of {len(data)} bytes exceeds {MAX_LABEL}")
    socket.send_fds(sock, [data], fds)


def recv(sock: socket.socket) -> tuple[dict[str, Any] | None, list[int]]:
    """One message: (label, fds), or (None, []) when the peer closed.  A label that is not a
    msgpack map raises ValueError after the fds that came with it are closed."""
    import os

    data, fds, _flags, _addr = socket.recv_fds(sock, MAX_LABEL, MAX_FDS)
    if not data and not fds:
        return None, []
    try:
        label = msgpack.unpackb(data)
        if not isinstance(label, dict):
            raise ValueError("not a map")
    except Exception as e:
        for fd in fds:
            os.close(fd)
        raise ValueError(f"fd message: label is not a msgpack map ({e})") from None
    return label, fds
