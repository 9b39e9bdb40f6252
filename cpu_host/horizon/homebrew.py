"""Start a homebrew program as its loader would, and end it with its exit code.

Two start-up forms (public facts: switchbrew "Homebrew ABI"; libnx's ``runtime/env.h`` and
``switch_crt0.s`` read for facts only):

- **NRO** (as hbloader starts one): X0 = the loader configuration, a list of 24-byte entries
  ``{u32 Key; u32 Flags; u64 Value[2]}`` ended by key 0 (EndOfList); X1 = -1 (libnx's crt0
  takes X0 != 0 with X1 != -1 for an exception entry, anything else for a normal start).
  The entries given: MainThreadHandle (key 1, Value[0] = handle), Argv (key 5, Value[1] =
  pointer to the command line, the program's path first), OverrideHeap (key 3, Value[0..1] =
  address and size of a heap the "loader" got with svcSetHeapSize, as hbloader does),
  AppletType (key 7, Value[0] = 0 Application), SyscallAvailableHint (key 6: libnx takes an
  NRO without it to have no SVC at all; every bit set, as the default NPDM allows every SVC),
  EndOfList (its Value[0..1]: the loader-info string and its length, which libnx keeps).
  Not given: HosVersion (libnx then asks set:sys, the service layer's), NextLoadPath.
- **NSO** (as the kernel starts a process): X0 = 0, X1 = the main thread's handle.

In both forms X30 (the loader's return address) is the host's **exit slot**: libnx's
``__nx_exit`` of an NRO restores the stack and branches there with the exit code in W0, and a
runtime whose crt0 returns from its entry lands there too; the process then ends through
svcExitProcess and the runner returns the code.  The configuration lives in a page of its
own right after the host slots (on the console it is hbloader's data: CodeMutable memory).

An NRO lies on the SD card at the path its argv names (hbloader loads it from there), and
programs read themselves back: libnx's ``romfsInit`` of an NRO opens ``argv[0]`` to find its
RomFS (nx.js aborts with fs PathNotFound 0x202 without it).  So before the start the host
places the program's NRO (the file it was built from, manifest ``exefs``) at that path in the
SD folder (``cpu_host.sd_dir``), copied under a temporary name and renamed, unless the same
bytes are there already.
"""

from __future__ import annotations

import ctypes
import filecmp
import logging
import os
import shutil
import struct
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from nxrecomp.bundle.memory_map import Region
from cpu_host.linux.process import _libc, map_fixed

log = logging.getLogger("cpu_host.horizon")

PAGE = 0x1000
# loader configuration keys and values (switchbrew Homebrew ABI)
KEY_END, KEY_MAIN_THREAD, KEY_OVERRIDE_HEAP, KEY_ARGV, KEY_SYSCALL_HINT, KEY_APPLET_TYPE = 0, 1, 3, 5, 6, 7
ALL_SYSCALLS = 0xFFFFFFFFFFFFFFFF  # SyscallAvailableHint: one bit per SVC 0..63, 64..127
LOADER_INFO = b"nxrecomp homebrew start-up (hbloader's configuration)\n"
APPLET_TYPE_APPLICATION = 0
ENTRY = struct.Struct("<IIQQ")
NO_HANDLE = 0xFFFFFFFFFFFFFFFF  # X1 of the NRO form
SVC_SET_HEAP_SIZE, SVC_EXIT_PROCESS = 0x01, 0x07
# heap the "loader" hands over (hbloader gives what is left of the application's memory; the
# kernel's heap region is reserved MAP_NORESERVE, so only touched pages cost)
HEAP_SIZE = 0x40000000
MEM_CODE_MUTABLE, PERM_RW = 0x04, 3
SLOTS = ("__hb_start", "__hb_exit")
CDEF = "void nx_svc(NxCpu *s, uint32_t imm);"


@dataclass
class HomebrewStart:
    """The host side of one homebrew start: its slots, configuration page and exit code."""

    abi: str  # "nro" or "nso"
    entry: int
    argv: str
    config_page: int
    slots: dict[str, int]
    exit_code: int | None = None
    heap: tuple[int, int] | None = None
    _callbacks: list[Any] = field(default_factory=list)

    def map_config(self, lib: Any) -> None:
        map_fixed(_libc(), Region(self.config_page, self.config_page + PAGE, "rw-"))
        lib.nx_hz_add_region(self.config_page, PAGE, MEM_CODE_MUTABLE, PERM_RW)

    def bind(self, ffi: Any, lib: Any) -> None:
        start = ffi.callback("void(NxCpu *)", self._start)
        exit_ = ffi.callback("void(NxCpu *)", self._exit)
        self._callbacks += [start, exit_]
        self._lib = lib
        for name, fn in (("__hb_start", start), ("__hb_exit", exit_)):
            if lib.nx_host_bind(self.slots[name], fn) != 0:
                raise RuntimeError(f"cannot bind the homebrew slot {name}")

    def _set_heap(self, cpu: Any) -> tuple[int, int] | None:
        """svcSetHeapSize on the main thread before the program runs, as hbloader does."""
        saved = [cpu.x[i] for i in range(2)]
        cpu.x[1] = HEAP_SIZE
        self._lib.nx_svc(cpu, SVC_SET_HEAP_SIZE)
        rc, addr = cpu.x[0] & 0xFFFFFFFF, cpu.x[1]
        cpu.x[0], cpu.x[1] = saved
        if rc != 0:
            log.warning("homebrew start: svcSetHeapSize(%#x) failed with %#x: no OverrideHeap entry", HEAP_SIZE, rc)
            return None
        return addr, HEAP_SIZE

    def config_bytes(self, handle: int) -> bytes:
        """The entries, then the strings they point at (command line, loader info)."""
        count = 6 if self.heap is not None else 5  # EndOfList included
        argv = self.argv.encode() + b"\0"
        argv_at = self.config_page + ENTRY.size * count
        info_at = argv_at + len(argv)
        entries = [(KEY_MAIN_THREAD, 0, handle, 0), (KEY_ARGV, 0, 0, argv_at)]
        if self.heap is not None:
            entries.append((KEY_OVERRIDE_HEAP, 0, *self.heap))
        entries.append((KEY_APPLET_TYPE, 0, APPLET_TYPE_APPLICATION, 0))
        entries.append((KEY_SYSCALL_HINT, 0, ALL_SYSCALLS, ALL_SYSCALLS))
        entries.append((KEY_END, 0, info_at, len(LOADER_INFO)))  # EndOfList carries the loader info
        if len(entries) != count:
            raise AssertionError("loader configuration layout")
        blob = b"".join(ENTRY.pack(*e) for e in entries) + argv + LOADER_INFO + b"\0"
        if len(blob) > PAGE:
            raise ValueError("homebrew command line does not fit the configuration page")
        return blob

    def _start(self, cpu: Any) -> None:
        try:
            handle = cpu.x[1] & 0xFFFFFFFF
            if self.abi == "nro":
                self.heap = self._set_heap(cpu)
                blob = self.config_bytes(handle)
                ctypes.memmove(self.config_page, blob, len(blob))
                cpu.x[0], cpu.x[1] = self.config_page, NO_HANDLE
            else:
                cpu.x[0], cpu.x[1] = 0, handle
            cpu.x[30] = self.slots["__hb_exit"]
            cpu.pc = self.entry
            log.info("homebrew start (%s form): X0=%#x X1=%#x, entry %#x", self.abi, cpu.x[0], cpu.x[1], self.entry)
        except Exception:  # never unwind into C: end the process as a crash at the entry
            log.exception("homebrew start failed")
            cpu.x[0] = 0
            self._lib.nx_svc(cpu, 0x26)

    def _exit(self, cpu: Any) -> None:
        self.exit_code = struct.unpack("<i", struct.pack("<I", cpu.x[0] & 0xFFFFFFFF))[0]
        log.info("homebrew returned to its loader with exit code %#x", self.exit_code & 0xFFFFFFFF)
        self._lib.nx_svc(cpu, SVC_EXIT_PROCESS)

    def status(self) -> int:
        """Process status for the exit code: 0 for 0, else its low byte (1 where that is 0)."""
        if not self.exit_code:
            return 0
        return (self.exit_code & 0xFF) or 1


def plan(manifest: dict, slots: dict[str, int], entry: int) -> HomebrewStart | None:
    """The start for a bundle whose manifest says it is homebrew, else None."""
    hb = manifest.get("homebrew") or {}
    abi = hb.get("abi")
    if abi not in ("nro", "nso"):
        return None
    last = max(slots.values()) + 16
    page = (last + 0x10000 + PAGE - 1) // PAGE * PAGE  # past the symbolizer's host range
    name = (hb.get("title") or manifest["process"].get("name") or "homebrew").replace(" ", "_")
    return HomebrewStart(abi, entry, f"sdmc:/switch/{name}.nro", page, slots)


def sd_path(start: HomebrewStart, sd_dir: Path) -> Path:
    """The host path of the program's argv path (``sdmc:/...``) in the SD folder."""
    return Path(sd_dir) / start.argv.split(":/", 1)[1]


def place_nro(start: HomebrewStart, manifest: dict, sd_dir: Path) -> Path | None:
    """Put the NRO the bundle was built from at its argv path in the SD folder (as hbloader
    finds it there); returns that path, or None (a warning names why) when there is no NRO."""
    if start.abi != "nro":
        return None
    src = Path(manifest.get("exefs") or "")
    dst = sd_path(start, sd_dir)
    if not src.is_file():
        log.warning(
            "the NRO this bundle was built from (%s) is gone: %s is not placed on the SD card, so the "
            "program cannot read itself (its RomFS) back",
            src,
            dst,
        )
        return None
    if dst.is_file() and filecmp.cmp(src, dst, shallow=False):
        return dst
    dst.parent.mkdir(parents=True, exist_ok=True)
    tmp = dst.with_name(f".{dst.name}.{os.getpid()}")
    shutil.copyfile(src, tmp)
    os.replace(tmp, dst)
    log.info("placed %s at %s (its argv path %s)", src.name, dst, start.argv)
    return dst
