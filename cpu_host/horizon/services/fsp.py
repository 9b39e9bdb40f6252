"""fsp-srv (IFileSystemProxy; switchbrew Filesystem services, libnx ``fs.c``): the SD card as a
host folder (settings ``cpu_host.sd_dir``) and the program's RomFS as a storage.

IFileSystemProxy: 1 SetCurrentProcess(u64, PID sent), 18 OpenSdCardFileSystem -> IFileSystem,
200 OpenDataStorageByCurrentProcess -> IStorage (the bundle's RomFS image), 1003
DisableAutoSaveDataCreation.  IFileSystem (paths: X descriptor 0, NUL-terminated, at most 0x301
bytes): 0 CreateFile(u32 option, s64 size), 1 DeleteFile, 2 CreateDirectory, 3 DeleteDirectory,
4 DeleteDirectoryRecursively, 5 RenameFile / 6 RenameDirectory (X 0 -> X 1), 7 GetEntryType (-> u32:
0 directory, 1 file), 8 OpenFile(u32 mode: 1 read, 2 write, 4 append) -> IFile, 9 OpenDirectory(u32)
-> IDirectory, 10 Commit, 11 GetFreeSpaceSize / 12 GetTotalSpaceSize (-> s64), 13
CleanDirectoryRecursively, 14 GetFileTimeStampRaw (-> FsTimeStampRaw, 0x20 bytes: u64 created,
modified, accessed as POSIX times, u8 is_valid = 1, 7 pad; the host file's ctime/mtime/atime).  IFile: 0 Read(u32
option, pad, s64 offset, s64 size; B 0) -> s64 read, 1 Write(same; A 0), 2 Flush, 3 SetSize(s64),
4 GetSize -> s64.  IDirectory: 0 Read (B 0: entries of 0x310 bytes: name[0x301], 3 pad, type s8,
3 pad, size s64) -> s64 count, 1 GetEntryCount -> s64.  IStorage: 0 Read(s64 offset, s64 size;
B 0), 4 GetSize -> s64.

Results (Atmosphère fs_results, module 2): PathNotFound 0x202, PathAlreadyExists 0x402,
OutOfRange (3005) 0x177A02 for a negative offset or size; a path that leaves the SD folder
('..') is PathNotFound; a host error maps to the fs result for it (ENOTEMPTY: DirectoryNotEmpty
0x1002, ENOSPC: UsableSpaceNotEnough 0x3C02, EBUSY: TargetLocked 0xE02)."""

from __future__ import annotations

import errno
import logging
import os
import shutil
import struct
from pathlib import Path

from cpu_host.horizon.hle.fs import FsService
from cpu_host.horizon.ipc.dispatcher import Context, Interface, Server, command
from cpu_host.horizon.ipc.results import IpcError, result

log = logging.getLogger("cpu_host.ipc.fsp")
PATH_NOT_FOUND = result(2, 1)
PATH_ALREADY_EXISTS = result(2, 2)
OUT_OF_RANGE = result(2, 3005)
MODE_READ, MODE_WRITE, MODE_APPEND = 1, 2, 4
ENTRY_DIR, ENTRY_FILE = 0, 1
DIR_ENTRY = struct.Struct("<769s3xb3xq")  # 0x310 bytes
TIMESTAMP = struct.Struct("<QQQB7x")  # FsTimeStampRaw: created, modified, accessed (POSIX), is_valid
SD_SIZE = 32 << 30


# host errno -> fs result (Atmosphère's fs results, module 2: PathNotFound 1, PathAlreadyExists 2,
# TargetLocked 7, DirectoryNotEmpty 8, UsableSpaceNotEnough 30)
HOST_ERRORS = {
    errno.ENOENT: PATH_NOT_FOUND,
    errno.ENOTDIR: PATH_NOT_FOUND,
    errno.EEXIST: PATH_ALREADY_EXISTS,
    errno.EBUSY: result(2, 7),
    errno.ETXTBSY: result(2, 7),
    errno.ENOTEMPTY: result(2, 8),
    errno.ENOSPC: result(2, 30),
}


def fs_host_error(e: OSError) -> int | None:
    return HOST_ERRORS.get(e.errno)


def guest_path(ctx: Context, index: int = 0) -> str:
    raw = ctx.read_x(index)
    z = raw.find(b"\0")
    return (raw[:z] if z >= 0 else raw).decode("utf-8", "replace")


class SdRoot:
    def __init__(self, root: Path) -> None:
        self.root = root

    def host(self, path: str) -> Path:
        parts = [p for p in path.split("/") if p and p != "."]
        if ".." in parts:
            raise IpcError(PATH_NOT_FOUND, f"path {path!r} leaves the SD card")
        return self.root.joinpath(*parts)


class File(Interface):
    name = "nn::fssrv::sf::IFile"
    service = "fsp-srv"
    host_error = staticmethod(fs_host_error)

    def __init__(self, path: Path, mode: int) -> None:
        self.path, self.mode = path, mode
        self.f = open(path, "r+b" if mode & (MODE_WRITE | MODE_APPEND) else "rb")

    def _range(self, ctx: Context) -> tuple[int, int]:
        ctx.u32()
        ctx.u32()
        off, size = ctx.i64(), ctx.i64()
        if off < 0 or size < 0:
            raise IpcError(OUT_OF_RANGE, f"offset {off} size {size}")
        return off, size

    @command(0)
    def read(self, ctx: Context) -> None:
        off, size = self._range(ctx)
        self.f.seek(off)
        data = self.f.read(min(size, ctx.b_size(0)))
        ctx.write_b(0, data)
        ctx.push("q", len(data))

    @command(1)
    def write(self, ctx: Context) -> None:
        off, size = self._range(ctx)
        data = ctx.read_a(0)[:size]
        self.f.seek(off)
        self.f.write(data)

    @command(2)
    def flush(self, ctx: Context) -> None:
        self.f.flush()

    @command(3)
    def set_size(self, ctx: Context) -> None:
        self.f.truncate(ctx.i64())

    @command(4)
    def get_size(self, ctx: Context) -> None:
        self.f.flush()
        ctx.push("q", os.fstat(self.f.fileno()).st_size)

    def closed(self) -> None:
        self.f.close()


class Directory(Interface):
    name = "nn::fssrv::sf::IDirectory"
    service = "fsp-srv"
    host_error = staticmethod(fs_host_error)

    def __init__(self, path: Path, mode: int) -> None:
        want_dirs, want_files = mode & 1, mode & 2
        self.entries = [e for e in sorted(path.iterdir()) if (e.is_dir() and want_dirs) or (e.is_file() and want_files)]

    @command(0)
    def read(self, ctx: Context) -> None:
        n = min(len(self.entries), ctx.b_size(0) // DIR_ENTRY.size)
        out = b"".join(
            DIR_ENTRY.pack(
                e.name.encode()[:0x300], ENTRY_DIR if e.is_dir() else ENTRY_FILE, 0 if e.is_dir() else e.stat().st_size
            )
            for e in self.entries[:n]
        )
        del self.entries[:n]
        ctx.write_b(0, out)
        ctx.push("q", n)

    @command(1)
    def get_entry_count(self, ctx: Context) -> None:
        ctx.push("q", len(self.entries))


class FileSystem(Interface):
    name = "nn::fssrv::sf::IFileSystem"
    service = "fsp-srv"
    host_error = staticmethod(fs_host_error)

    def __init__(self, sd: SdRoot) -> None:
        self.sd = sd

    def _existing(self, ctx: Context, index: int = 0) -> Path:
        p = self.sd.host(guest_path(ctx, index))
        if not p.exists():
            raise IpcError(PATH_NOT_FOUND, f"{p} does not exist")
        return p

    def _new(self, ctx: Context, index: int = 0) -> Path:
        p = self.sd.host(guest_path(ctx, index))
        if p.exists():
            raise IpcError(PATH_ALREADY_EXISTS, f"{p} exists")
        if not p.parent.is_dir():
            raise IpcError(PATH_NOT_FOUND, f"{p.parent} is no directory")
        return p

    @command(0)
    def create_file(self, ctx: Context) -> None:
        ctx.u32()
        size = ctx.i64()
        p = self._new(ctx)
        with open(p, "wb") as f:
            f.truncate(max(size, 0))

    @command(1)
    def delete_file(self, ctx: Context) -> None:
        p = self._existing(ctx)
        if not p.is_file():
            raise IpcError(PATH_NOT_FOUND, f"{p} is no file")
        p.unlink()

    @command(2)
    def create_directory(self, ctx: Context) -> None:
        self._new(ctx).mkdir()

    @command(3)
    def delete_directory(self, ctx: Context) -> None:
        self._existing(ctx).rmdir()

    @command(4)
    def delete_directory_recursively(self, ctx: Context) -> None:
        shutil.rmtree(self._existing(ctx))

    def _rename(self, ctx: Context) -> None:
        src = self._existing(ctx, 0)
        src.rename(self._new(ctx, 1))

    rename_file = command(5)(_rename)
    rename_directory = command(6)(_rename)

    @command(7)
    def get_entry_type(self, ctx: Context) -> None:
        ctx.push("I", ENTRY_DIR if self._existing(ctx).is_dir() else ENTRY_FILE)

    @command(8)
    def open_file(self, ctx: Context) -> None:
        mode = ctx.u32()
        p = self._existing(ctx)
        if not p.is_file():
            raise IpcError(PATH_NOT_FOUND, f"{p} is no file")
        ctx.out_objects.append(File(p, mode))

    @command(9)
    def open_directory(self, ctx: Context) -> None:
        mode = ctx.u32()
        p = self._existing(ctx)
        if not p.is_dir():
            raise IpcError(PATH_NOT_FOUND, f"{p} is no directory")
        ctx.out_objects.append(Directory(p, mode))

    @command(10)
    def commit(self, ctx: Context) -> None:
        pass

    @command(11)
    def get_free_space_size(self, ctx: Context) -> None:
        ctx.push("q", shutil.disk_usage(self.sd.root).free)

    @command(12)
    def get_total_space_size(self, ctx: Context) -> None:
        ctx.push("q", SD_SIZE)

    @command(13)
    def clean_directory_recursively(self, ctx: Context) -> None:
        p = self._existing(ctx)
        if not p.is_dir():
            raise IpcError(PATH_NOT_FOUND, f"{p} is no directory")
        for child in p.iterdir():
            shutil.rmtree(child) if child.is_dir() and not child.is_symlink() else child.unlink()

    @command(14)
    def get_file_time_stamp_raw(self, ctx: Context) -> None:
        st = self._existing(ctx).stat()
        ctx.push_bytes(TIMESTAMP.pack(int(st.st_ctime), int(st.st_mtime), int(st.st_atime), 1))


class RomStorage(Interface):
    name = "nn::fssrv::sf::IStorage"
    service = "fsp-srv"

    def __init__(self, path: Path | None) -> None:
        self.path = path

    @command(0)
    def read(self, ctx: Context) -> None:
        off, size = ctx.i64(), ctx.i64()
        if off < 0 or size < 0:
            raise IpcError(OUT_OF_RANGE, f"offset {off} size {size}")
        with open(self.path, "rb") as f:
            f.seek(off)
            ctx.write_b(0, f.read(min(size, ctx.b_size(0))))

    @command(4)
    def get_size(self, ctx: Context) -> None:
        ctx.push("q", self.path.stat().st_size if self.path else 0)


class FileSystemProxy(Interface):
    name = "nn::fssrv::sf::IFileSystemProxy"
    service = "fsp-srv"

    def __init__(self, fs: FsService, sd: SdRoot) -> None:
        self.fs, self.sd = fs, sd

    @command(1)
    def set_current_process(self, ctx: Context) -> None:
        ctx.u64()

    @command(18)
    def open_sd_card_file_system(self, ctx: Context) -> None:
        self.sd.root.mkdir(parents=True, exist_ok=True)
        ctx.out_objects.append(FileSystem(self.sd))

    @command(200)
    def open_data_storage_by_current_process(self, ctx: Context) -> None:
        if self.fs.romfs_path is None:
            raise IpcError(PATH_NOT_FOUND, "the bundle has no RomFS")
        ctx.out_objects.append(RomStorage(self.fs.romfs_path))

    @command(1003)
    def disable_auto_save_data_creation(self, ctx: Context) -> None:
        pass


def register(server: Server, fs: FsService, sd_dir: Path) -> None:
    sd = SdRoot(sd_dir)
    server.services["fsp-srv"] = lambda: FileSystemProxy(fs, sd)
