"""NACP builder: a 0x4000-byte control property with the fields ``nacp.py`` reads."""

from __future__ import annotations

import struct

from nxrecomp.common.errors import NxError
from recompiler.formats import nacp as N


def _field(text: str, size: int, what: str) -> bytes:
    raw = text.encode()
    if len(raw) >= size:
        raise NxError(f"pack_nacp: {what} {text!r} is {len(raw)} bytes, at most {size - 1}")
    return raw + b"\0" * (size - len(raw))


def pack_nacp(
    name: str,
    publisher: str,
    display_version: str = "1.0.0",
    *,
    languages: tuple[str, ...] | None = None,
    presence_group_id: int = 0,
    save_data_owner_id: int = 0,
) -> bytes:
    """The same title in every language of ``languages`` (default: all 16)."""
    out = bytearray(N.NACP_SIZE)
    for i, lang in enumerate(N.LANGUAGES):
        if languages is None or lang in languages:
            at = i * N.TITLE_SIZE
            out[at : at + N.NAME_SIZE] = _field(name, N.NAME_SIZE, "name")
            out[at + N.NAME_SIZE : at + N.TITLE_SIZE] = _field(publisher, N.PUBLISHER_SIZE, "publisher")
    out[N.DISPLAY_VERSION : N.DISPLAY_VERSION + N.DISPLAY_VERSION_SIZE] = _field(
        display_version, N.DISPLAY_VERSION_SIZE, "display version"
    )
    struct.pack_into("<Q", out, N.PRESENCE_GROUP_ID, presence_group_id)
    struct.pack_into("<Q", out, N.SAVE_DATA_OWNER_ID, save_data_owner_id)
    return bytes(out)
