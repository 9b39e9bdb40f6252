"""fsp-srv IFileSystem commands homebrew asks past start-up (nx.js 0.0.69 asks 14 right after
mounting the SD card): 14 GetFileTimeStampRaw (libnx ``fs.h`` FsTimeStampRaw: u64 created,
modified, accessed as POSIX times, u8 is_valid, 7 pad; the path an X pointer of 0x301 bytes) and
13 CleanDirectoryRecursively (the directory stays, its contents go); a missing path is fs
PathNotFound (module 2, description 1 = 0x202); 3 DeleteDirectory of a directory with something
in it is DirectoryNotEmpty (Atmosphère's fs results: module 2, description 8 = 0x1002), an answer,
not a host error out of the service."""

from __future__ import annotations

import os
import struct
from pathlib import Path

from cpu_host.horizon.ipc import cmif, hipc
from cpu_host.horizon.ipc.dispatcher import Server
from cpu_host.horizon.services.fsp import FileSystem, SdRoot
from tests.horizon.guest_memory import BytesMemory
from tests.horizon.test_ipc_codec import memory, reply_result


def call(srv: Server, mem: BytesMemory, sid: int, cmd: int, path: str) -> bytes:
    mem.write(0x2000, path.encode().ljust(0x301, b"\0"))
    raw = hipc.build_request(4, cmif.request_payload(cmd), x=[hipc.Static(0, 0x2000, 0x301)])
    rc, reply = srv.handle(mem, sid, raw + bytes(0x100 - len(raw)))
    assert rc == 0
    return reply


def test_timestamp_and_clean(tmp_path: Path) -> None:
    (tmp_path / "switch" / "sub").mkdir(parents=True)
    f = tmp_path / "switch" / "app.nro"
    f.write_bytes(b"x")
    os.utime(f, (1_700_000_000, 1_600_000_000))  # atime, mtime
    (tmp_path / "switch" / "sub" / "inner.txt").write_text("y")
    srv, mem = Server(), memory()
    sid = srv.open(FileSystem(SdRoot(tmp_path)))
    reply = call(srv, mem, sid, 14, "/switch/app.nro")
    assert reply_result(reply) == 0
    body = cmif.payload(hipc.parse(reply + bytes(0x100 - len(reply))))[16:48]
    _created, modified, accessed, valid = struct.unpack("<QQQB7x", body)
    assert (modified, accessed, valid) == (1_600_000_000, 1_700_000_000, 1)
    assert reply_result(call(srv, mem, sid, 14, "/switch/none.nro")) == 0x202
    assert reply_result(call(srv, mem, sid, 3, "/switch")) == 0x1002
    assert reply_result(call(srv, mem, sid, 13, "/switch")) == 0
    assert (tmp_path / "switch").is_dir() and not any((tmp_path / "switch").iterdir())
