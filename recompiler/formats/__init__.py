"""Loaders and builders for the Switch's file formats (NSO0, NRO0 + ASET, NPDM, PFS0/ExeFS,
RomFS), written from public descriptions of the formats.

Loaders take the whole file as bytes plus the name to put in errors, trust no field, and
return dataclass records; every bad offset or size raises ``nxrecomp.common.errors.NxError`` naming
the file, the field and the offset.  Builders (``pack_*``) write the same formats field by
field, for tests and for packaging the demo game.

``load(path)`` picks the loader from the file's magic.
"""

from __future__ import annotations

__all__ = ["detect_format", "load", "load_bytes"]


def __getattr__(name: str):
    # imported on first use: the loaders pull in numpy, which commands like `nxrecomp exec`
    # (whose start-up time counts) never need
    if name in __all__:
        from recompiler.formats import detect

        return getattr(detect, name)
    raise AttributeError(name)
