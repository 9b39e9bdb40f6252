"""Addresses: ``HOST:PORT`` text as users write it, and raw ``sockaddr`` bytes as the kernel gives them."""

from __future__ import annotations

import ipaddress
import socket
import struct

from nxrecomp.common.errors import NxError


def parse_hostport(text: str, what: str = "address") -> tuple[int, str, int]:
    """``"1.2.3.4:7788"`` / ``"[::1]:7788"`` / ``"host:7788"`` -> (family, host, port)."""
    t = text.strip()
    if t.startswith("["):
        host, sep, port = t[1:].partition("]:")
    else:
        host, sep, port = t.rpartition(":")
    if not sep or not host or not port.isdigit() or not 0 <= int(port) <= 65535:
        raise NxError(f"{what} {text!r} is not HOST:PORT (use [ADDR]:PORT for IPv6)")
    try:
        family = socket.AF_INET6 if ipaddress.ip_address(host).version == 6 else socket.AF_INET
    except ValueError:
        try:
            info = socket.getaddrinfo(host, int(port), type=socket.SOCK_DGRAM)
        except socket.gaierror as e:
            raise NxError(f"{what} {text!r}: cannot resolve {host!r}: {e}") from None
        family, host = info[0][0], info[0][4][0]
    return family, host, int(port)


def sockaddr_text(raw: bytes) -> str:
    """Raw sockaddr_in / sockaddr_in6 -> ``"ip:port"`` (for logs)."""
    if len(raw) >= 8 and struct.unpack_from("<H", raw)[0] == socket.AF_INET:
        return f"{socket.inet_ntop(socket.AF_INET, raw[4:8])}:{struct.unpack_from('>H', raw, 2)[0]}"
    if len(raw) >= 24 and struct.unpack_from("<H", raw)[0] == socket.AF_INET6:
        return f"[{socket.inet_ntop(socket.AF_INET6, raw[8:24])}]:{struct.unpack_from('>H', raw, 2)[0]}"
    return raw.hex()
