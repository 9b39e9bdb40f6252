"""Save data with all-or-nothing commits.

A mounted save is a working copy in memory (directories and files); writes change only the
copy.  ``commit`` turns the copy into the committed state in one step: the whole tree is
serialised (msgpack) with a SHA-256 of its body into ``save.nxsave.tmp``, flushed to the disk
(fsync), renamed over ``save.nxsave`` (``os.replace``: atomic on POSIX) and the folder is
flushed.  A process killed at any point leaves either the previous commit or the new one —
never a mix, never a torn file.  Unmounting without a commit drops the changes, as Horizon's
journaled save data does.  A leftover ``.tmp`` from a killed commit is ignored and removed.

Why one file and not one host file per guest file: a rename is atomic for one file only, and
game saves are small (KiB to a few MiB); rewriting them whole at each commit is cheap."""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass, field
from pathlib import Path

import msgpack

from nxrecomp.common.errors import NxError

MAGIC = b"NXSAVE01"
FILE_NAME = "save.nxsave"


@dataclass
class SaveTree:
    dirs: set[str] = field(default_factory=lambda: {"/"})
    files: dict[str, bytearray] = field(default_factory=dict)

    def copy(self) -> "SaveTree":
        return SaveTree(set(self.dirs), {k: bytearray(v) for k, v in self.files.items()})


def encode(tree: SaveTree) -> bytes:
    body = msgpack.packb(
        {"dirs": sorted(tree.dirs), "files": {k: bytes(v) for k, v in sorted(tree.files.items())}}, use_bin_type=True
    )
    return MAGIC + hashlib.sha256(body).digest() + body


def decode(data: bytes, path: str) -> SaveTree:
    if data[:8] != MAGIC:
        raise NxError("not a save data file (bad magic)", path=path, field="magic", offset=0)
    digest, body = data[8:40], data[40:]
    if len(digest) != 32 or hashlib.sha256(body).digest() != digest:
        raise NxError("save data file is damaged (its SHA-256 does not match)", path=path, field="sha256", offset=8)
    try:
        d = msgpack.unpackb(body, raw=False)
        tree = SaveTree(set(d["dirs"]), {str(k): bytearray(v) for k, v in d["files"].items()})
    except (ValueError, KeyError, TypeError, msgpack.UnpackException) as e:
        raise NxError(f"save data body does not decode: {e}", path=path, field="body", offset=40) from None
    tree.dirs.add("/")
    return tree


@dataclass
class SaveStore:
    """The committed saves of one program: ``<root>/<program id>/<save name>/save.nxsave``."""

    root: Path

    def folder(self, program_id: int, name: str) -> Path:
        return self.root / f"{program_id:016x}" / name

    def load(self, program_id: int, name: str) -> SaveTree:
        d = self.folder(program_id, name)
        tmp = d / (FILE_NAME + ".tmp")
        if tmp.exists():  # a commit killed before its rename: the old commit stands
            tmp.unlink()
        p = d / FILE_NAME
        if not p.exists():
            return SaveTree()
        return decode(p.read_bytes(), str(p))

    def commit(self, program_id: int, name: str, tree: SaveTree) -> None:
        d = self.folder(program_id, name)
        d.mkdir(parents=True, exist_ok=True)
        tmp, final = d / (FILE_NAME + ".tmp"), d / FILE_NAME
        data = encode(tree)
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view) :]
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(tmp, final)
        dfd = os.open(d, os.O_RDONLY)
        try:
            os.fsync(dfd)
        finally:
            os.close(dfd)
