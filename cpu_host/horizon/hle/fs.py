"""nn::fs served by the host: the RomFS read-only (``MountRom``), save data (``MountSaveData``,
``CommitSaveData``: all or nothing, see ``savedata``), files and directories by path
("mount:/a/b").  Results are ``nn::fs`` results (module 2); the descriptions are those of
switchbrew's public error table."""

from __future__ import annotations

import mmap
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from cpu_host.horizon.hle.abi import PERM_R, PERM_W, Call, GuestError, GuestResult, result
from cpu_host.horizon.hle.registry import HostFunction
from cpu_host.horizon.hle.savedata import SaveStore, SaveTree
from nxrecomp.common.errors import NxError
from recompiler.formats.romfs import Romfs, parse_romfs

FS = 2
R_PATH_NOT_FOUND = result(FS, 1)
R_PATH_ALREADY_EXISTS = result(FS, 2)
R_TARGET_LOCKED = result(FS, 7)  # deleting an open file
R_MOUNT_NAME_ALREADY_EXISTS = result(FS, 60)
R_TARGET_NOT_FOUND = result(FS, 1002)  # no such mount
R_OUT_OF_RANGE = result(FS, 3005)  # a read past the end of the file
R_INVALID_PATH = result(FS, 6001)
R_INVALID_OFFSET = result(FS, 6061)
R_INVALID_SIZE = result(FS, 6062)
R_NULLPTR_ARGUMENT = result(FS, 6063)
R_INVALID_MOUNT_NAME = result(FS, 6065)
R_INVALID_OPEN_MODE = result(FS, 6072)
R_EXTENSION_WITHOUT_APPEND = result(FS, 6201)  # a write past the end without OpenMode_AllowAppend
R_UNSUPPORTED_OPERATION = result(FS, 6300)  # writing to the RomFS

MODE_READ, MODE_WRITE, MODE_APPEND = 1, 2, 4
ENTRY_DIRECTORY, ENTRY_FILE = 0, 1
ROM_CACHE_SIZE = 0x4000  # what QueryMountRomCacheSize answers; the host needs no cache
MAX_MOUNT_NAME = 15


@dataclass
class Mount:
    name: str
    romfs: Romfs | None = None
    save: SaveTree | None = None  # the working copy
    save_name: str = ""


@dataclass
class OpenFile:
    mount: Mount
    path: str
    mode: int


@dataclass
class FsService:
    program_id: int
    romfs_path: Path | None
    saves: SaveStore
    mounts: dict[str, Mount] = field(default_factory=dict)
    files: dict[int, OpenFile] = field(default_factory=dict)
    next_handle: int = 1
    lock: threading.Lock = field(default_factory=threading.Lock)
    _rom: Romfs | None = None
    _rom_map: mmap.mmap | None = None

    # -- paths ----------------------------------------------------------------------------
    def _split(self, c: Call, arg: int) -> tuple[Mount, str]:
        if c.arg(arg) == 0:
            raise GuestResult(R_NULLPTR_ARGUMENT)
        text = c.cstr(c.arg(arg), "path")
        name, sep, rest = text.partition(":")
        if not sep or not rest.startswith("/"):
            raise GuestResult(R_INVALID_PATH, f"path {text!r} is not mount:/path")
        m = self.mounts.get(name)
        if m is None:
            raise GuestResult(R_TARGET_NOT_FOUND, f"{name!r} is not mounted")
        parts = [p for p in rest.split("/") if p]
        if any(p in (".", "..") for p in parts):
            raise GuestResult(R_INVALID_PATH, f"path {text!r} has . or ..")
        return m, "/" + "/".join(parts)

    def _mount_name(self, c: Call, arg: int) -> str:
        if c.arg(arg) == 0:
            raise GuestResult(R_NULLPTR_ARGUMENT)
        name = c.cstr(c.arg(arg), "mount name", MAX_MOUNT_NAME + 1 + 1)
        if not name or len(name) > MAX_MOUNT_NAME or ":" in name or "/" in name:
            raise GuestResult(R_INVALID_MOUNT_NAME, f"mount name {name!r}")
        if name in self.mounts:
            raise GuestResult(R_MOUNT_NAME_ALREADY_EXISTS, f"{name!r} is already mounted")
        return name

    def _romfs(self) -> Romfs:
        if self._rom is None:
            if self.romfs_path is None:
                raise GuestResult(R_TARGET_NOT_FOUND, "the bundle names no RomFS")
            with open(self.romfs_path, "rb") as f:
                self._rom_map = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
            self._rom = parse_romfs(memoryview(self._rom_map), str(self.romfs_path))
        return self._rom

    # -- mounts ---------------------------------------------------------------------------
    def query_rom_cache_size(self, c: Call) -> int:
        c.u64(c.arg(0), ROM_CACHE_SIZE, "QueryMountRomCacheSize out")
        return 0

    def mount_rom(self, c: Call) -> int:
        with self.lock:
            name = self._mount_name(c, 0)
            try:
                rom = self._romfs()
            except NxError as e:
                raise GuestError(f"the RomFS cannot be read: {e}") from None
            self.mounts[name] = Mount(name, romfs=rom)
        return 0

    def _mount_save(self, name: str, save_name: str) -> int:
        tree = self.saves.load(self.program_id, save_name)
        self.mounts[name] = Mount(name, save=tree, save_name=save_name)
        return 0

    def mount_save_debug(self, c: Call) -> int:
        with self.lock:
            return self._mount_save(self._mount_name(c, 0), "debug")

    def mount_save(self, c: Call) -> int:
        with self.lock:
            name = self._mount_name(c, 0)
            uid = c.read(c.arg(1), 16, "MountSaveData uid")
            return self._mount_save(name, "user-" + uid[::-1].hex())

    def ensure_save(self, c: Call) -> int:
        c.read(c.arg(0), 16, "EnsureSaveData uid")
        return 0

    def unmount(self, c: Call) -> None:
        with self.lock:
            name = c.cstr(c.arg(0), "mount name", MAX_MOUNT_NAME + 2)
            m = self.mounts.get(name)
            if m is None:
                raise GuestError(f"Unmount of {name!r}, which is not mounted")
            if any(f.mount is m for f in self.files.values()):
                raise GuestError(f"Unmount of {name!r} while files on it are open")
            del self.mounts[name]  # uncommitted save changes are dropped

    def commit(self, c: Call) -> int:
        with self.lock:
            name = c.cstr(c.arg(0), "mount name", MAX_MOUNT_NAME + 2)
            m = self.mounts.get(name)
            if m is None:
                return R_TARGET_NOT_FOUND
            if m.save is None:
                return R_UNSUPPORTED_OPERATION
            self.saves.commit(self.program_id, m.save_name, m.save)
            m.save = m.save.copy()
        return 0

    # -- entries --------------------------------------------------------------------------
    def _exists(self, m: Mount, path: str) -> int | None:
        if m.save is not None:
            if path in m.save.files:
                return ENTRY_FILE
            return ENTRY_DIRECTORY if path in m.save.dirs else None
        assert m.romfs is not None
        if path == "/" or path in m.romfs.list_dirs():
            return ENTRY_DIRECTORY
        try:
            m.romfs.lookup(path)
            return ENTRY_FILE
        except KeyError:
            return None

    def get_entry_type(self, c: Call) -> int:
        with self.lock:
            m, path = self._split(c, 1)
            kind = self._exists(m, path)
            if kind is None:
                return R_PATH_NOT_FOUND
            c.u32(c.arg(0), kind, "GetEntryType out")
        return 0

    def _writable(self, m: Mount) -> SaveTree:
        if m.save is None:
            raise GuestResult(R_UNSUPPORTED_OPERATION, "the RomFS is read-only")
        return m.save

    @staticmethod
    def _parent_ok(tree: SaveTree, path: str) -> bool:
        return (path.rsplit("/", 1)[0] or "/") in tree.dirs

    def create_file(self, c: Call) -> int:
        with self.lock:
            m, path = self._split(c, 0)
            size = c.sarg(1)
            tree = self._writable(m)
            if size < 0:
                return R_INVALID_SIZE
            if self._exists(m, path) is not None:
                return R_PATH_ALREADY_EXISTS
            if not self._parent_ok(tree, path):
                return R_PATH_NOT_FOUND
            tree.files[path] = bytearray(size)
        return 0

    def delete_file(self, c: Call) -> int:
        with self.lock:
            m, path = self._split(c, 0)
            tree = self._writable(m)
            if path not in tree.files:
                return R_PATH_NOT_FOUND
            if any(f.mount is m and f.path == path for f in self.files.values()):
                return R_TARGET_LOCKED
            del tree.files[path]
        return 0

    def create_directory(self, c: Call) -> int:
        with self.lock:
            m, path = self._split(c, 0)
            tree = self._writable(m)
            if self._exists(m, path) is not None:
                return R_PATH_ALREADY_EXISTS
            if not self._parent_ok(tree, path):
                return R_PATH_NOT_FOUND
            tree.dirs.add(path)
        return 0

    # -- files ----------------------------------------------------------------------------
    def open_file(self, c: Call) -> int:
        with self.lock:
            m, path = self._split(c, 1)
            mode = c.sarg32(2)
            if mode & ~(MODE_READ | MODE_WRITE | MODE_APPEND) or not mode & (MODE_READ | MODE_WRITE):
                return R_INVALID_OPEN_MODE
            if m.save is None and mode & (MODE_WRITE | MODE_APPEND):
                return R_UNSUPPORTED_OPERATION
            if self._exists(m, path) != ENTRY_FILE:
                return R_PATH_NOT_FOUND
            h = self.next_handle
            c.u64(c.arg(0), h, "OpenFile handle out")
            self.next_handle += 1
            self.files[h] = OpenFile(m, path, mode)
        return 0

    def _file(self, c: Call, arg: int) -> OpenFile:
        f = self.files.get(c.arg(arg))
        if f is None:
            raise GuestError(f"file handle {c.arg(arg):#x} is not open")
        return f

    def close_file(self, c: Call) -> None:
        with self.lock:
            self._file(c, 0)
            del self.files[c.arg(0)]

    def _data(self, f: OpenFile) -> bytes | bytearray | memoryview:
        if f.mount.save is not None:
            return f.mount.save.files[f.path]
        assert f.mount.romfs is not None
        rom = f.mount.romfs
        e = rom.lookup(f.path)
        start = rom.data_offset + e.data_offset
        return memoryview(rom.r.data)[start : start + e.size]

    def _read(self, c: Call, first: int, out_size: int | None) -> int:
        with self.lock:
            f = self._file(c, first)
            offset, buf, size = c.sarg(first + 1), c.arg(first + 2), c.arg(first + 3)
            if not f.mode & MODE_READ:
                return R_INVALID_OPEN_MODE
            if offset < 0:
                return R_INVALID_OFFSET
            if size >> 62:
                return R_INVALID_SIZE
            data = self._data(f)
            if offset > len(data) or (out_size is None and offset + size > len(data)):
                return R_OUT_OF_RANGE
            chunk = data[offset : offset + size]
            if size and buf == 0:
                return R_NULLPTR_ARGUMENT
            c.view(buf, len(chunk), PERM_W, "ReadFile buffer")[:] = chunk
            if out_size is not None:
                c.u64(out_size, len(chunk), "ReadFile out size")
        return 0

    def read_file(self, c: Call) -> int:
        return self._read(c, 0, None)

    def read_file_sized(self, c: Call) -> int:
        return self._read(c, 1, c.arg(0))

    def write_file(self, c: Call) -> int:
        with self.lock:
            f = self._file(c, 0)
            offset, buf, size = c.sarg(1), c.arg(2), c.arg(3)
            if not f.mode & MODE_WRITE:
                return R_INVALID_OPEN_MODE
            if offset < 0:
                return R_INVALID_OFFSET
            if size >> 40:
                return R_INVALID_SIZE
            data = f.mount.save.files[f.path]  # type: ignore[union-attr]
            if offset + size > len(data):
                if not f.mode & MODE_APPEND:
                    return R_EXTENSION_WITHOUT_APPEND
                data.extend(bytes(offset + size - len(data)))
            data[offset : offset + size] = c.view(buf, size, PERM_R, "WriteFile buffer")
        return 0

    def flush_file(self, c: Call) -> int:
        with self.lock:
            self._file(c, 0)
        return 0

    def get_file_size(self, c: Call) -> int:
        with self.lock:
            f = self._file(c, 1)
            c.u64(c.arg(0), len(self._data(f)), "GetFileSize out")
        return 0

    def set_file_size(self, c: Call) -> int:
        with self.lock:
            f = self._file(c, 0)
            size = c.sarg(1)
            if not f.mode & MODE_WRITE:
                return R_INVALID_OPEN_MODE
            if size < 0 or size >> 40:
                return R_INVALID_SIZE
            data = f.mount.save.files[f.path]  # type: ignore[union-attr]
            if size < len(data):
                del data[size:]
            else:
                data.extend(bytes(size - len(data)))
        return 0

    def functions(self) -> list[HostFunction]:
        F = HostFunction
        rows: list[tuple[str, str, Callable[[Call], int | None], bool]] = [
            ("_ZN2nn2fs22QueryMountRomCacheSizeEPm", "nn::fs::QueryMountRomCacheSize(size_t*)", self.query_rom_cache_size, False),
            ("_ZN2nn2fs8MountRomEPKcPvm", "nn::fs::MountRom(const char*, void*, size_t)", self.mount_rom, True),
            ("_ZN2nn2fs21MountSaveDataForDebugEPKc", "nn::fs::MountSaveDataForDebug(const char*)", self.mount_save_debug, True),
            (
                "_ZN2nn2fs13MountSaveDataEPKcRKNS_7account3UidE",
                "nn::fs::MountSaveData(const char*, const nn::account::Uid&)",
                self.mount_save,
                True,
            ),
            (
                "_ZN2nn2fs14EnsureSaveDataERKNS_7account3UidE",
                "nn::fs::EnsureSaveData(const nn::account::Uid&)",
                self.ensure_save,
                False,
            ),
            ("_ZN2nn2fs7UnmountEPKc", "nn::fs::Unmount(const char*)", self.unmount, False),
            ("_ZN2nn2fs14CommitSaveDataEPKc", "nn::fs::CommitSaveData(const char*)", self.commit, True),
            (
                "_ZN2nn2fs12GetEntryTypeEPNS0_18DirectoryEntryTypeEPKc",
                "nn::fs::GetEntryType(DirectoryEntryType*, const char*)",
                self.get_entry_type,
                False,
            ),
            ("_ZN2nn2fs10CreateFileEPKcl", "nn::fs::CreateFile(const char*, int64_t)", self.create_file, False),
            ("_ZN2nn2fs10DeleteFileEPKc", "nn::fs::DeleteFile(const char*)", self.delete_file, False),
            ("_ZN2nn2fs15CreateDirectoryEPKc", "nn::fs::CreateDirectory(const char*)", self.create_directory, False),
            (
                "_ZN2nn2fs8OpenFileEPNS0_10FileHandleEPKci",
                "nn::fs::OpenFile(FileHandle*, const char*, int)",
                self.open_file,
                False,
            ),
            ("_ZN2nn2fs9CloseFileENS0_10FileHandleE", "nn::fs::CloseFile(FileHandle)", self.close_file, False),
            (
                "_ZN2nn2fs8ReadFileENS0_10FileHandleElPvm",
                "nn::fs::ReadFile(FileHandle, int64_t, void*, size_t)",
                self.read_file,
                True,
            ),
            (
                "_ZN2nn2fs8ReadFileEPmNS0_10FileHandleElPvm",
                "nn::fs::ReadFile(size_t*, FileHandle, int64_t, void*, size_t)",
                self.read_file_sized,
                True,
            ),
            (
                "_ZN2nn2fs9WriteFileENS0_10FileHandleElPKvmRKNS0_11WriteOptionE",
                "nn::fs::WriteFile(FileHandle, int64_t, const void*, size_t, const WriteOption&)",
                self.write_file,
                False,
            ),
            ("_ZN2nn2fs9FlushFileENS0_10FileHandleE", "nn::fs::FlushFile(FileHandle)", self.flush_file, False),
            (
                "_ZN2nn2fs11GetFileSizeEPlNS0_10FileHandleE",
                "nn::fs::GetFileSize(int64_t*, FileHandle)",
                self.get_file_size,
                False,
            ),
            ("_ZN2nn2fs11SetFileSizeENS0_10FileHandleEl", "nn::fs::SetFileSize(FileHandle, int64_t)", self.set_file_size, False),
        ]
        return [F(n, sig, fn, blocking) for n, sig, fn, blocking in rows]
