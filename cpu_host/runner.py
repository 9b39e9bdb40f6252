"""Run a recompiled Linux AArch64 program: map the image at its own addresses, build the
initial stack, load ``game.so`` with cffi and run the guest on a host thread with a deep stack.
The process exits with the guest's exit status (exit_group ends it from C)."""
from __future__ import annotations

import json
import os
from pathlib import Path

import cffi

from nxrecomp.errors import NxError
from recompiler.link import LinkedImage

PAGE = 4096
STACK_TOP = 0x7F_F000_0000          # below 2^39, far from the image and the brk range
STACK_SIZE = 8 << 20
BRK_RESERVE = 1 << 32
HOST_STACK = 1 << 30                 # host stack of the guest thread: deep guest recursion runs on it
HWCAP_FP, HWCAP_ASIMD = 1 << 0, 1 << 1

CDEF = """
typedef union { uint8_t b[16]; uint64_t d[2]; } NxVec;
typedef struct NxCpu {
    uint64_t x[31]; uint64_t sp; uint64_t pc; uint64_t nzcv; uint64_t fpcr, fpsr;
    uint64_t tpidr_el0, tpidrro_el0; uint64_t resume;
    uint64_t excl_addr, excl_lo, excl_hi; uint64_t excl_size;
    NxVec v[32]; void *thread; uint64_t host_sp_limit;
} NxCpu;
int nx_run_on_thread(NxCpu *s, uint64_t host_stack_bytes);
int nx_linux_set_brk(uint64_t start, uint64_t reserve);
void nx_linux_set_exe(const char *path);
void nx_linux_add_mapping(uint64_t addr, uint64_t len);
void *mmap(void *addr, size_t length, int prot, int flags, int fd, long offset);
int mprotect(void *addr, size_t len, int prot);
"""
PROT_R, PROT_W, PROT_X = 1, 2, 4
MAP_PRIVATE, MAP_ANON, MAP_FIXED_NOREPLACE, MAP_NORESERVE = 0x02, 0x20, 0x100000, 0x4000


def _pages(image: LinkedImage) -> list[tuple[int, int, int]]:
    """Page ranges (start, end, prot) covering every segment; pages shared by two segments
    get the union of their protections."""
    prot: dict[int, int] = {}
    for s in image.segments:
        p = (PROT_R if "r" in s.prot else 0) | (PROT_W if "w" in s.prot else 0)
        for pg in range(s.vaddr // PAGE, (s.vaddr + s.memsz + PAGE - 1) // PAGE):
            prot[pg] = prot.get(pg, 0) | p | PROT_R
    out: list[tuple[int, int, int]] = []
    for pg in sorted(prot):
        if out and out[-1][1] == pg * PAGE and out[-1][2] == prot[pg]:
            out[-1] = (out[-1][0], (pg + 1) * PAGE, prot[pg])
        else:
            out.append((pg * PAGE, (pg + 1) * PAGE, prot[pg]))
    return out


def run(bundle: str | Path, argv: list[str], env: dict[str, str] | None = None) -> int:
    from cpu_host.linux.stack import ProgramInfo, initial_stack

    bundle = Path(bundle)
    try:
        manifest = json.loads((bundle / "manifest.json").read_text())
    except (OSError, ValueError) as e:
        raise NxError(f"not a bundle: {e}", path=str(bundle / "manifest.json")) from None
    image = LinkedImage.from_json(manifest["image"], bundle)
    ffi = cffi.FFI()
    ffi.cdef(CDEF)
    lib = ffi.dlopen(str(bundle / "game.so"))
    libc = ffi.dlopen(None)

    def fixed_map(addr: int, length: int) -> None:
        p = libc.mmap(ffi.cast("void *", addr), length, PROT_R | PROT_W,
                      MAP_PRIVATE | MAP_ANON | MAP_FIXED_NOREPLACE | MAP_NORESERVE, -1, 0)
        if int(ffi.cast("uintptr_t", p)) != addr:
            raise NxError(f"cannot map guest memory at {addr:#x} (+{length:#x}): address taken in this process")
        lib.nx_linux_add_mapping(addr, length)

    ranges = _pages(image)
    for start, end, _p in ranges:
        fixed_map(start, end - start)
    for s in image.segments:
        ffi.memmove(ffi.cast("void *", s.vaddr), s.data, len(s.data))
    for start, end, p in ranges:
        libc.mprotect(ffi.cast("void *", start), end - start, p)

    fixed_map(STACK_TOP - STACK_SIZE, STACK_SIZE)
    prog = manifest.get("program", argv[0] if argv else "program")
    envp = [f"{k}={v}".encode() for k, v in (env if env is not None else os.environ).items()]
    info = ProgramInfo(phdr=image.phdr, phent=image.phent, phnum=image.phnum, entry=image.entry)
    sp, blob = initial_stack(STACK_TOP, [a.encode() for a in argv], envp, info,
                             hwcap=HWCAP_FP | HWCAP_ASIMD, execfn=prog.encode())
    ffi.memmove(ffi.cast("void *", sp), blob, len(blob))

    rc = lib.nx_linux_set_brk(image.brk_start, BRK_RESERVE)
    if rc != 0:
        raise NxError(f"cannot reserve the program break at {image.brk_start:#x} ({rc})")
    lib.nx_linux_set_exe(prog.encode())
    cpu = ffi.new("NxCpu *")
    cpu.sp = sp
    cpu.pc = image.entry
    if lib.nx_run_on_thread(cpu, HOST_STACK) != 0:
        raise NxError("cannot start the guest thread")
    return 0
