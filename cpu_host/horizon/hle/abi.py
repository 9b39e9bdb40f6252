"""Arguments, results and guest memory for host functions.

A host function receives the calling thread's ``NxCpu`` (cffi pointer): integer and pointer
arguments in X0..X7, small structs passed by value in registers (a ``FileHandle`` is one
X register), results in X0 (an ``nn::Result`` is 0 on success, ``module | description << 9``
otherwise).  Guest addresses are host addresses (the runner maps the guest at its own
addresses), so memory is read in place — after the kernel confirms the range is mapped with
the permission needed, so a bad guest pointer becomes a clear guest-side error, never a
fault of the host process."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from cpu_host import abi
from cpu_host.horizon.ipc.kernel import IPC_CDEF

# NxCpu whole, as nxrt.h declares it (cpu_host/abi.py generates it; tests/cpu_host/test_abi_layout.py
# checks every offset): host functions may read any register, vector ones included
NXCPU_CDEF = (
    abi.nxcpu_cdef()
    + """
int nx_host_bind(uint64_t addr, void (*fn)(NxCpu *));
int nx_hz_range_ok(uint64_t addr, uint64_t len, uint32_t perm);
void nx_hz_host_begin(NxCpu *s);
void nx_hz_host_end(NxCpu *s);
void nx_hz_host_yield(NxCpu *s);
void nx_hz_host_fault(NxCpu *s, uint32_t index);
void (*nx_os_native(const char *name, uint32_t *index))(NxCpu *);
const char *nx_os_fault_why(void);
"""
    + IPC_CDEF
)
PERM_R, PERM_W = 1, 2
MAX_PATH = 0x301  # nn::fs paths: at most 0x300 characters and the NUL


class GuestError(Exception):
    """The guest passed something the function cannot accept and has no result code for:
    the process ends with a crash report naming the function and this message."""


class GuestResult(Exception):
    """Answer the call with this ``nn::Result`` (for functions that return one)."""

    def __init__(self, code: int, why: str = "") -> None:
        super().__init__(why or f"result {code:#x}")
        self.code = code


def result(module: int, description: int) -> int:
    return (module & 0x1FF) | (description & 0x1FFF) << 9


@dataclass
class Call:
    """One call of a host function: its NxCpu, the cffi FFI and the runtime library."""

    cpu: Any
    ffi: Any
    lib: Any

    def arg(self, i: int) -> int:
        return int(self.cpu.x[i])

    def sarg(self, i: int) -> int:
        v = int(self.cpu.x[i])
        return v - (1 << 64) if v >> 63 else v

    def arg32(self, i: int) -> int:
        return int(self.cpu.x[i]) & 0xFFFFFFFF

    def sarg32(self, i: int) -> int:
        v = int(self.cpu.x[i]) & 0xFFFFFFFF
        return v - (1 << 32) if v >> 31 else v

    # -- guest memory ---------------------------------------------------------------------
    def check(self, addr: int, size: int, perm: int, what: str) -> None:
        if size and (addr == 0 or not self.lib.nx_hz_range_ok(addr, size, perm)):
            kind = "writable" if perm & PERM_W else "readable"
            raise GuestError(f"{what}: {size:#x} bytes at {addr:#x} are not {kind} guest memory")

    def read(self, addr: int, size: int, what: str) -> bytes:
        self.check(addr, size, PERM_R, what)
        return bytes(self.ffi.buffer(self.ffi.cast("char *", addr), size)) if size else b""

    def write(self, addr: int, data: bytes, what: str) -> None:
        self.check(addr, len(data), PERM_W, what)
        if data:
            self.ffi.memmove(self.ffi.cast("char *", addr), data, len(data))

    def view(self, addr: int, size: int, perm: int, what: str) -> memoryview:
        """The guest bytes in place (for large reads and writes without a copy)."""
        self.check(addr, size, perm, what)
        return memoryview(self.ffi.buffer(self.ffi.cast("char *", addr), size)) if size else memoryview(b"")

    def cstr(self, addr: int, what: str, limit: int = MAX_PATH) -> str:
        """A NUL-terminated UTF-8 string of at most ``limit`` bytes (NUL included)."""
        if addr == 0:
            raise GuestError(f"{what}: null pointer")
        out = bytearray()
        page = 0x1000
        while len(out) < limit:
            n = min(page - (addr + len(out)) % page, limit - len(out))
            chunk = self.read(addr + len(out), n, what)
            z = chunk.find(b"\0")
            if z >= 0:
                out += chunk[:z]
                try:
                    return out.decode()
                except UnicodeDecodeError:
                    raise GuestError(f"{what}: string at {addr:#x} is not UTF-8") from None
            out += chunk
        raise GuestError(f"{what}: string at {addr:#x} is longer than {limit - 1} bytes")

    def u32(self, addr: int, value: int, what: str) -> None:
        self.write(addr, (value & 0xFFFFFFFF).to_bytes(4, "little"), what)

    def u64(self, addr: int, value: int, what: str) -> None:
        self.write(addr, (value & 0xFFFFFFFFFFFFFFFF).to_bytes(8, "little"), what)

    def read_u64(self, addr: int, what: str) -> int:
        return int.from_bytes(self.read(addr, 8, what), "little")

    def read_u32(self, addr: int, what: str) -> int:
        return int.from_bytes(self.read(addr, 4, what), "little")
