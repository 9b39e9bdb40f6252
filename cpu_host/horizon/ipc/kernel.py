"""The kernel's side of IPC: the SVCs horizon_kernel.c hands to the host, and the handle
calls services use.

``svcConnectToNamedPort`` (0x1F: X1 = name, at most 11 characters and a NUL in 12 bytes, else
OutOfRange; unreadable: InvalidPointer; unknown: NotFound; out: W1 = session handle),
``svcSendSyncRequest`` (0x21: W0 = session; message = 0x100 bytes at TPIDRRO_EL0) and
``svcSendSyncRequestWithUserBuffer`` (0x22: X0 = buffer, page-aligned (InvalidAddress), X1 =
size, a non-zero page multiple (InvalidSize), W2 = session; the buffer must be mapped RW
(InvalidCurrentMemory)).  A handle that is no session is InvalidHandle (0xE401).  Facts:
switchbrew's SVC page, libnx ``svc.s``/``svc.h``, Atmosphère's ``kern_svc_port.cpp`` /
``kern_svc_ipc.cpp`` argument checks.

Only sessions served by the host come here: sessions and ports between guest threads
(``svcCreateSession``, ``svcCreatePort``, ``svcManageNamedPort`` and the names it registers) are
served by horizon_kernel.c itself (docs/horizon_svcs.md).

The handler runs on the guest thread without the kernel lock (the thread keeps its core).
An unserved service or command (with ``cpu_host.ipc_unknown = fatal``) or a bug of ours ends the
process with a crash report at the SVC naming it (``nx_hz_ipc_fault`` + the registry's fault
text); nothing a guest sends can raise out of the callback."""

from __future__ import annotations

import logging
import threading
import time
from contextlib import contextmanager
from typing import Any, Callable, Iterator

from cpu_host.horizon.ipc.dispatcher import PERM_R, PERM_W, Server, Unserved
from cpu_host.horizon.ipc.hipc import TLS_MESSAGE_SIZE
from cpu_host.horizon.ipc.results import (
    INVALID_ADDRESS,
    INVALID_CURRENT_MEMORY,
    INVALID_HANDLE,
    INVALID_POINTER,
    INVALID_SIZE,
    OUT_OF_HANDLES,
    OUT_OF_RANGE,
    IpcError,
)

log = logging.getLogger("cpu_host.ipc")
MASK64 = (1 << 64) - 1
PORT_NAME_MAX = 12

IPC_CDEF = """
void nx_hz_set_ipc_handler(void (*fn)(NxCpu *, uint32_t));
uint32_t nx_hz_session_new(uint64_t id);
int64_t nx_hz_session_id(uint32_t h);
int64_t nx_hz_session_closed_pop(void);
int nx_hz_handle_kind(NxCpu *s, uint32_t h);
uint64_t nx_hz_event_new(void);
uint32_t nx_hz_event_handle(uint64_t ev);
void nx_hz_event_set(uint64_t ev, int on);
uint32_t nx_hz_shmem_new(int fd, uint64_t size, uint32_t perm);
int nx_hz_tmem_info(uint32_t h, uint64_t *addr, uint64_t *size);
void nx_hz_ipc_fault(NxCpu *s, uint32_t index);
"""


class KernelBridge:
    """horizon_kernel.c's handles and guest memory, for the dispatcher and the services."""

    def __init__(self, ffi: Any, lib: Any, server: Server, fault: Callable[[str], int]) -> None:
        self.ffi, self.lib, self.server = ffi, lib, server
        self._fault = fault  # message -> fault index (the registry's describe_fault names it)
        self._cb = None
        self._local = threading.local()  # the calling guest thread's NxCpu, per host thread

    @property
    def cpu(self) -> Any:
        """The NxCpu of the guest thread whose SVC is being served on this host thread."""
        return getattr(self._local, "cpu", None)

    def install(self) -> None:
        self._cb = self.ffi.callback("void(NxCpu *, uint32_t)", self._svc)
        self.lib.nx_hz_set_ipc_handler(self._cb)

    # -- Kernel protocol (dispatcher.Kernel) -------------------------------------------------
    def mapped(self, addr: int, size: int, perm: int) -> bool:
        return addr + size <= MASK64 and bool(self.lib.nx_hz_range_ok(addr, size, perm))

    def read(self, addr: int, size: int) -> bytes:
        if not self.mapped(addr, size, PERM_R):
            raise IpcError(INVALID_CURRENT_MEMORY, f"{size:#x} bytes at {addr:#x} are not readable")
        return bytes(self.ffi.buffer(self.ffi.cast("char *", addr), size))

    def write(self, addr: int, data: bytes) -> None:
        if not self.mapped(addr, len(data), PERM_W):
            raise IpcError(INVALID_CURRENT_MEMORY, f"{len(data):#x} bytes at {addr:#x} are not writable")
        self.ffi.memmove(self.ffi.cast("char *", addr), data, len(data))

    def handle_kind(self, handle: int) -> int:
        return int(self.lib.nx_hz_handle_kind(self.cpu if self.cpu is not None else self.ffi.NULL, handle))

    def session_handle(self, session_id: int) -> int:
        return int(self.lib.nx_hz_session_new(session_id))

    def wait(self, seconds: float) -> None:
        """Block the calling guest thread without holding its core (a service's pacing)."""
        if seconds > 0:
            with self.unlocked():
                time.sleep(seconds)

    @contextmanager
    def unlocked(self) -> Iterator[None]:
        """Run a host call that may block (a socket's recv, poll) with the calling guest
        thread's core given back, so the process's other threads run meanwhile."""
        cpu = self.cpu
        if cpu is None:
            yield
            return
        self.lib.nx_hz_host_begin(cpu)
        try:
            yield
        finally:
            self.lib.nx_hz_host_end(cpu)

    # -- kernel objects for services ---------------------------------------------------------
    def event(self) -> int:
        ev = int(self.lib.nx_hz_event_new())
        if not ev:
            raise MemoryError("no memory for a kernel event")
        return ev

    def event_handle(self, ev: int) -> int:
        h = int(self.lib.nx_hz_event_handle(ev))
        if not h:
            raise IpcError(OUT_OF_HANDLES, "the handle table is full")
        return h

    def signal(self, ev: int, on: bool = True) -> None:
        self.lib.nx_hz_event_set(ev, 1 if on else 0)

    def shared_memory_handle(self, fd: int, size: int, perm: int) -> int:
        h = int(self.lib.nx_hz_shmem_new(fd, size, perm))
        if not h:
            raise IpcError(OUT_OF_HANDLES, "the handle table is full")
        return h

    def transfer_memory(self, handle: int) -> tuple[int, int]:
        a, s = self.ffi.new("uint64_t *"), self.ffi.new("uint64_t *")
        if self.lib.nx_hz_tmem_info(handle, a, s) != 0:
            raise IpcError(INVALID_HANDLE, f"handle {handle:#x} is no transfer memory")
        return int(a[0]), int(s[0])

    # -- the SVCs ----------------------------------------------------------------------------
    def _svc(self, cpu: Any, svc: int) -> None:
        self._local.cpu = cpu
        try:
            self._release_closed()
            if svc == 0x1F:
                self._connect(cpu)
            else:
                self._request(cpu, svc)
        except Unserved as e:
            self._die(cpu, str(e))
        except Exception as e:  # a bug of ours: a report at the SVC, never a dead host
            log.exception("IPC SVC %#x raised", svc)
            self._die(cpu, f"IPC layer raised {type(e).__name__}: {e}")
        finally:
            self._local.cpu = None

    def _release_closed(self) -> None:
        """Sessions whose handles the guest closed since the last SVC: their server side goes."""
        for _ in range(256):
            sid = int(self.lib.nx_hz_session_closed_pop())
            if sid < 0:
                return
            self.server.release(sid)

    def _die(self, cpu: Any, why: str) -> None:
        self.lib.nx_hz_ipc_fault(cpu, self._fault(why))

    def _connect(self, cpu: Any) -> None:
        addr = int(cpu.x[1])
        raw = b""
        for i in range(PORT_NAME_MAX):  # byte by byte: the name may end just before unmapped memory
            if not self.mapped(addr + i, 1, PERM_R):
                cpu.x[0] = INVALID_POINTER
                return
            ch = self.read(addr + i, 1)
            if ch == b"\0":
                break
            raw += ch
        else:
            cpu.x[0] = OUT_OF_RANGE
            return
        try:
            sid = self.server.connect(raw.decode("ascii", "replace"))
        except IpcError as e:
            cpu.x[0] = e.code
            return
        h = self.session_handle(sid)
        cpu.x[0] = 0 if h else OUT_OF_HANDLES
        cpu.x[1] = h

    def _request(self, cpu: Any, svc: int) -> None:
        if svc == 0x21:
            handle, addr, size = int(cpu.x[0]) & 0xFFFFFFFF, int(cpu.tpidrro_el0), TLS_MESSAGE_SIZE
        else:
            addr, size, handle = int(cpu.x[0]), int(cpu.x[1]), int(cpu.x[2]) & 0xFFFFFFFF
            if addr & 0xFFF:
                cpu.x[0] = INVALID_ADDRESS
                return
            if size == 0 or size & 0xFFF:
                cpu.x[0] = INVALID_SIZE
                return
            if not self.mapped(addr, size, PERM_R | PERM_W):
                cpu.x[0] = INVALID_CURRENT_MEMORY
                return
        sid = int(self.lib.nx_hz_session_id(handle))
        if sid < 0:
            cpu.x[0] = INVALID_HANDLE
            return
        buf = bytes(self.ffi.buffer(self.ffi.cast("char *", addr), size))
        rc, reply = self.server.handle(self, sid, buf)
        if reply is not None:
            if len(reply) > size:
                raise RuntimeError(f"reply of {len(reply):#x} bytes does not fit the {size:#x}-byte message buffer")
            self.ffi.memmove(self.ffi.cast("char *", addr), reply, len(reply))
        cpu.x[0] = rc
