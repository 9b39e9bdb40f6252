"""Build a Linux AArch64 process image in this (host) process: map a linked program's segments,
its stack and its program break at their guest addresses (guest address == host address), copy
the relocated bytes in, write the initial stack, and tell the personality (linux_syscalls.c)
which memory is the guest's.  Used by the runner; tests use it with Unicorn as the CPU."""

from __future__ import annotations

import ctypes
import errno
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from nxrecomp.bundle.memory_map import (
    BRK_RESERVE,
    PAGE,
    STACK_SIZE,
    STACK_TOP,
    Region,
    brk_region,
    check_disjoint,
    segment_regions,
    stack_region,
)
from cpu_host.linux.stack import HWCAP2_DEFAULT, HWCAP_DEFAULT, ProgramInfo, initial_stack
from nxrecomp.common.errors import NxError

PROT_READ, PROT_WRITE = 1, 2
MAP_PRIVATE, MAP_ANONYMOUS, MAP_NORESERVE, MAP_FIXED_NOREPLACE = 0x02, 0x20, 0x4000, 0x100000


@dataclass
class GuestProcess:
    entry: int
    sp: int
    regions: list[Region]  # segments and stack, as mapped
    brk: Region  # reserved for the program break (the personality opens it)


def _libc() -> ctypes.CDLL:
    libc = ctypes.CDLL(None, use_errno=True)
    libc.mmap.restype = ctypes.c_void_p
    libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_long]
    libc.mprotect.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
    return libc


def map_fixed(libc: ctypes.CDLL, region: Region) -> None:
    """Map ``region`` read-write at exactly its address, or raise NxError naming it."""
    r = libc.mmap(
        region.start,
        region.size,
        PROT_READ | PROT_WRITE,
        MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED_NOREPLACE,
        -1,
        0,
    )
    if r is None or r == ctypes.c_void_p(-1).value or r != region.start:
        err = ctypes.get_errno()
        raise NxError(
            f"cannot map guest region [{region.start:#x}, {region.end:#x}): {os.strerror(err) if err else 'placed elsewhere'}",
            field="guest memory",
        )


def setup_process(
    image: Any,
    argv: list[bytes],
    envp: list[bytes],
    *,
    personality: Any = None,
    exe_path: str | None = None,
    hwcap: int = HWCAP_DEFAULT,
    hwcap2: int = HWCAP2_DEFAULT,
    stack_top: int = STACK_TOP,
    stack_size: int = STACK_SIZE,
    brk_reserve: int = BRK_RESERVE,
    random: bytes | None = None,
    dynamic: dict | None = None,
    bundle: str | None = None,
) -> GuestProcess:
    """Map ``image`` (a recompiler.link.LinkedImage) and its stack here.  ``personality`` is the
    loaded runtime (cffi lib with nx_linux_add_mapping / nx_linux_set_brk / nx_linux_set_exe);
    without it, only the memory is prepared.  ``dynamic``: the manifest's entry of a dynamically
    linked program (``recompiler/dynamic.py``) in the bundle folder ``bundle``: only the
    executable and its interpreter are mapped, from start.bin's file bytes, and the guest starts
    in the interpreter (AT_BASE its base, AT_ENTRY the program's entry)."""
    libc = _libc()
    mapped = [s for s in image.segments if not dynamic or s.module in dynamic["start_modules"]]
    segs = segment_regions(mapped)
    stack = stack_region(stack_top, stack_size)
    brk = brk_region(image.brk_start, brk_reserve)
    check_disjoint(segs + [stack, brk])
    for r in segs + [stack]:
        map_fixed(libc, r)
    if dynamic:
        blob = (Path(bundle) / dynamic["start_file"]).read_bytes()
        for vaddr, off, n in dynamic["start"]:
            if off + n > len(blob):
                raise NxError(f"range [{off:#x}, +{n:#x}) is past its end", path=str(Path(bundle) / dynamic["start_file"]))
            ctypes.memmove(vaddr, blob[off : off + n], n)
    else:
        for s in image.segments:
            ctypes.memmove(s.vaddr, s.data, len(s.data))
    # final protections: read-only text/rodata stays read-only (guest code is never executed
    # natively, so no page needs PROT_EXEC)
    for r in segs:
        prot = (PROT_READ if "r" in r.prot or "x" in r.prot else 0) | (PROT_WRITE if "w" in r.prot else 0)
        if prot != PROT_READ | PROT_WRITE:
            libc.mprotect(r.start, r.size, prot)
    sp, data = initial_stack(
        stack.end,
        argv,
        envp,
        ProgramInfo(
            image.phdr,
            image.phent,
            image.phnum,
            dynamic["entry"] if dynamic else image.entry,
            dynamic["interp_base"] if dynamic else 0,
        ),
        hwcap=hwcap,
        hwcap2=hwcap2,
        random=random,
        execfn=os.fsencode(exe_path) if exe_path else None,
    )
    ctypes.memmove(sp, data, len(data))
    if personality is not None:
        for r in segs + [stack]:
            personality.nx_linux_add_mapping(r.start, r.size)
        rc = personality.nx_linux_set_brk(brk.start, brk.size)
        if rc != 0:
            raise NxError(f"cannot reserve the program break at {brk.start:#x}: {os.strerror(-rc)}", field="brk")
        if exe_path:
            personality.nx_linux_set_exe(os.fsencode(exe_path))
        if dynamic:
            root = Path(bundle) / dynamic["sysroot"]
            if personality.nx_linux_set_sysroot(os.fsencode(root)) != 0:
                raise NxError("the bundle's sysroot is not a folder", path=str(root))
            for lib in dynamic["libs"]:
                f = os.fsencode(root) + os.fsencode(lib["path"])
                e = personality.nx_linux_add_library(lib["base"], lib["span"], lib["align"], lib["size"], f)
                if e == -errno.EBADF:
                    raise NxError(f"not the library the bundle lifted (not {lib['size']} bytes)", path=os.fsdecode(f))
                if e != 0:
                    raise NxError(f"library: {os.strerror(-e)}", path=os.fsdecode(f))
    return GuestProcess(dynamic["interp_entry"] if dynamic else image.entry, sp, segs + [stack], brk)


def page_up(v: int) -> int:
    return (v + PAGE - 1) // PAGE * PAGE
