"""The on-disk translation cache.

Layout under the root: ``programs/<key>.prog`` (each program seen, so a later boot can prepare
it again with a newer translator) and ``<translator id>/<key>.spv`` (its translation).  Files
are written to a temporary name in the same folder and renamed (``os.replace``), so a crash
never leaves a half file; each translation carries a sha256 of its payload, so a damaged file
is noticed, dropped and translated again instead of being served."""

from __future__ import annotations

import hashlib
import logging
import os
import tempfile
from pathlib import Path

log = logging.getLogger("shader_svc.cache")
MAGIC_V1 = b"NXSPV1\0\0"  # payload = SPIR-V
MAGIC = b"NXSPV2\0\0"  # payload = u32 SPIR-V size, SPIR-V, metadata (reflection JSON)


def write_atomic(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise


def _valid_key(key: str) -> bool:
    return len(key) == 64 and all(c in "0123456789abcdef" for c in key)


def _is_id(name: str) -> bool:
    return len(name) == 32 and all(c in "0123456789abcdef" for c in name)


class DiskCache:
    def __init__(self, root: Path, translator: str) -> None:
        self.root, self.translator = Path(root), translator
        self.dir = self.root / translator
        self.programs = self.root / "programs"

    def spv_path(self, key: str) -> Path:
        return self.dir / f"{key}.spv"

    def get(self, key: str) -> bytes | None:
        e = self.get_entry(key)
        return None if e is None else e[0]

    def get_entry(self, key: str) -> tuple[bytes, bytes] | None:
        """(SPIR-V, metadata) of a stored translation; metadata is b"" in version-1 files."""
        if not _valid_key(key):
            return None
        p = self.spv_path(key)
        try:
            data = p.read_bytes()
        except FileNotFoundError:
            return None
        body = data[len(MAGIC) + 32 :]
        magic = data[: len(MAGIC)]
        ok = magic in (MAGIC, MAGIC_V1) and hashlib.sha256(body).digest() == data[len(MAGIC) : len(MAGIC) + 32]
        if ok and magic == MAGIC:
            n = int.from_bytes(body[:4], "little") if len(body) >= 4 else -1
            ok = 0 <= n <= len(body) - 4
        if not ok:
            log.warning("%s: damaged cache entry dropped", p)
            p.unlink(missing_ok=True)
            return None
        if magic == MAGIC_V1:
            return body, b""
        return body[4 : 4 + n], body[4 + n :]

    def put(self, key: str, spirv: bytes, meta: bytes = b"") -> None:
        body = len(spirv).to_bytes(4, "little") + spirv + meta
        write_atomic(self.spv_path(key), MAGIC + hashlib.sha256(body).digest() + body)

    def put_program(self, key: str, program: bytes) -> None:
        p = self.programs / f"{key}.prog"
        if not p.exists():
            write_atomic(p, program)

    def get_program(self, key: str) -> bytes | None:
        if not _valid_key(key):
            return None
        try:
            return (self.programs / f"{key}.prog").read_bytes()
        except FileNotFoundError:
            return None

    def previous(self, key: str) -> tuple[str, bytes, bytes] | None:
        """(translator, SPIR-V, metadata): the newest valid translation of ``key`` by another
        (older) translator, if any."""
        if not self.root.is_dir():
            return None
        others = [d for d in self.root.iterdir() if d.is_dir() and d != self.dir and _is_id(d.name)]
        for d in sorted(others, key=lambda d: d.stat().st_mtime, reverse=True):
            if (d / f"{key}.spv").exists():
                e = DiskCache(self.root, d.name).get_entry(key)
                if e is not None:
                    return d.name, e[0], e[1]
        return None

    def program_keys(self) -> list[str]:
        """Keys of every program ever stored (all seen in play), sorted."""
        if not self.programs.is_dir():
            return []
        return sorted(k for k in (f.stem for f in self.programs.glob("*.prog")) if _valid_key(k))

    def entries(self) -> int:
        return sum(1 for _ in self.dir.glob("*.spv")) if self.dir.is_dir() else 0
