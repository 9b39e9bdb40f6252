"""Translator identity: a hash of the source files that decide what a translation contains.

Cached translations are filed under it, so changing the decoder, the lowering or the SPIR-V
writer makes the service treat every program as untranslated (the old files stay for the old
identity).  The service and cache layers are not part of it: they do not change the output."""

from __future__ import annotations

import hashlib
from pathlib import Path

PKG = Path(__file__).resolve().parent
# Folders/files whose content is the translator.  Sorted walk so the hash is stable.
SOURCES = ("isa", "ir", "lower", "sm86", "sm53", "spirv", "reflection.py", "translate.py", "sph.py")


def source_files(root: Path = PKG) -> list[Path]:
    out: list[Path] = []
    for name in SOURCES:
        p = root / name
        out.extend(sorted(p.rglob("*.py")) if p.is_dir() else [p])
    return out


def translator_id(root: Path = PKG) -> str:
    """Hex digest (16 bytes) over the relative path and content of every translator source."""
    h = hashlib.sha256()
    for f in source_files(root):
        rel = f.relative_to(root).as_posix().encode()
        data = f.read_bytes()
        h.update(len(rel).to_bytes(4, "little") + rel + len(data).to_bytes(8, "little") + data)
    return h.hexdigest()[:32]
