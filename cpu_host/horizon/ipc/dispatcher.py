"""Route a HIPC request on a session to the interface object behind it.

One ``Interface`` subclass per service interface; its commands are methods marked
``@command(id)``, collected into the class's ``commands`` table.  A handler reads its
parameters and buffers from the ``Context`` and writes its output there (raw bytes, copy and
move handles, output objects); raising ``IpcError`` answers with that result instead.

A session holds one object, or a domain (after ConvertCurrentObjectToDomain): a table of object
ids, the first being the session's object.  Output objects become new sessions (move handles),
or new ids in the caller's domain.  An unserved service or command is an ``Unserved`` error
naming service, interface and command id: fatal (a crash report at the SVC) unless the setting
``cpu_host.ipc_unknown`` is ``stub``, which answers it with a logged success and zeroed output.
"""

from __future__ import annotations

import logging
import struct
import threading
from dataclasses import dataclass, field
from typing import Any, Callable, Protocol

from cpu_host.horizon.ipc import cmif, hipc
from cpu_host.horizon.ipc.results import (
    CMIF_INVALID_IN_OBJECT,
    CMIF_INVALID_NUM_IN_OBJECTS,
    CMIF_UNKNOWN_COMMAND_ID,
    HIPC_DOMAIN_OBJECT_NOT_FOUND,
    HIPC_POINTER_BUFFER_TOO_SMALL,
    HIPC_TARGET_NOT_DOMAIN,
    HIPC_UNKNOWN_COMMAND_TYPE,
    INVALID_CURRENT_MEMORY,
    INVALID_HANDLE,
    OUT_OF_HANDLES,
    SESSION_CLOSED,
    IpcError,
)

log = logging.getLogger("cpu_host.ipc")
PERM_R, PERM_W = 1, 2
POINTER_BUFFER_SIZE = 0x8000  # QueryPointerBufferSize: what each session's server accepts as X/C data


class Kernel(Protocol):
    """What the IPC layer needs of the kernel (``kernel.KernelBridge`` over horizon_kernel.c)."""

    def mapped(self, addr: int, size: int, perm: int) -> bool: ...
    def read(self, addr: int, size: int) -> bytes: ...
    def write(self, addr: int, data: bytes) -> None: ...
    def handle_kind(self, handle: int) -> int: ...
    def session_handle(self, session_id: int) -> int: ...


class Unserved(Exception):
    """A service, interface or command the host does not serve."""


def command(cid: int) -> Callable[[Callable], Callable]:
    """Mark an Interface method as the handler of CMIF (or TIPC) command ``cid``."""

    def mark(fn: Callable) -> Callable:
        def handler(self: Any, ctx: "Context") -> None:  # a new function each time: one body may serve several ids
            fn(self, ctx)

        handler._ipc_command = cid
        handler.__name__ = handler.__qualname__ = fn.__name__
        handler.__doc__ = fn.__doc__
        return handler

    return mark


class Interface:
    """A service interface: ``name`` as switchbrew names it, ``service`` the sm name it came from."""

    name = "?"
    service = "?"
    commands: dict[int, Callable[[Any, "Context"], None]] = {}

    def __init_subclass__(cls, **kw: Any) -> None:
        super().__init_subclass__(**kw)
        table: dict[int, Callable] = {}
        for klass in reversed(cls.__mro__):
            for v in vars(klass).values():
                cid = getattr(v, "_ipc_command", None)
                if cid is not None:
                    table[cid] = v
        cls.commands = table

    def closed(self) -> None:
        """The last reference went away (session or domain object closed)."""

    def host_error(self, e: OSError) -> int | None:
        """The result a host OSError of one of this interface's commands answers with (a file
        system's DirectoryNotEmpty for ENOTEMPTY ...), or None: then it is a bug of ours and ends
        the program with a report naming the command."""
        return None


@dataclass
class Session:
    id: int
    obj: Interface
    domain: dict[int, Interface] | None = None
    next_object: int = 1
    closed: bool = False
    tipc: bool = False  # the port speaks TIPC too (sm:)

    def add(self, obj: Interface) -> int:
        assert self.domain is not None
        oid = self.next_object
        self.next_object += 1
        self.domain[oid] = obj
        return oid


@dataclass
class Context:
    """One request as its handler sees it."""

    kernel: Kernel
    message: hipc.Message
    params: bytes
    in_objects: list[Interface] = field(default_factory=list)
    pos: int = 0
    out: bytearray = field(default_factory=bytearray)
    out_copy: list[int] = field(default_factory=list)
    out_move: list[int] = field(default_factory=list)
    out_objects: list[Interface] = field(default_factory=list)

    # -- parameters --------------------------------------------------------------------------
    def take(self, n: int, align: int = 1) -> bytes:
        self.pos = (self.pos + align - 1) // align * align
        b = self.params[self.pos : self.pos + n]
        self.pos += n
        return b + bytes(n - len(b))  # a short message reads zeros, as a server's copy would

    def u8(self) -> int:
        return self.take(1)[0]

    def u16(self) -> int:
        return struct.unpack("<H", self.take(2, 2))[0]

    def u32(self) -> int:
        return struct.unpack("<I", self.take(4, 4))[0]

    def i32(self) -> int:
        return struct.unpack("<i", self.take(4, 4))[0]

    def u64(self) -> int:
        return struct.unpack("<Q", self.take(8, 8))[0]

    def i64(self) -> int:
        return struct.unpack("<q", self.take(8, 8))[0]

    @property
    def pid(self) -> int | None:
        return self.message.pid

    # -- buffers -----------------------------------------------------------------------------
    def _desc(self, lst: list, i: int, kind: str) -> Any:
        if i >= len(lst):
            raise IpcError(
                HIPC_POINTER_BUFFER_TOO_SMALL if kind in "XC" else INVALID_CURRENT_MEMORY,
                f"the request has no {kind} descriptor #{i}",
            )
        return lst[i]

    def read_x(self, index: int) -> bytes:
        """The X (pointer) descriptor with this index."""
        for s in self.message.x:
            if s.index == index:
                return self.kernel.read(s.address, s.size) if s.size else b""
        raise IpcError(HIPC_POINTER_BUFFER_TOO_SMALL, f"the request has no X descriptor with index {index}")

    def read_a(self, i: int) -> bytes:
        d = self._desc(self.message.a, i, "A")
        return self.kernel.read(d.address, d.size) if d.size else b""

    def b_size(self, i: int) -> int:
        return self._desc(self.message.b, i, "B").size

    def write_b(self, i: int, data: bytes) -> int:
        d = self._desc(self.message.b, i, "B")
        n = min(len(data), d.size)
        if n:
            self.kernel.write(d.address, data[:n])
        return n

    def c_size(self, i: int) -> int:
        c = self.message.c
        return (c[0] if self.message.c_mode == 2 and c else self._desc(c, i, "C")).size

    def write_c(self, i: int, data: bytes) -> int:
        c = self.message.c
        d = c[0] if self.message.c_mode == 2 and c else self._desc(c, i, "C")
        n = min(len(data), d.size)
        if n:
            self.kernel.write(d.address, data[:n])
        return n

    def read_in_auto(self, a: int, x: int) -> bytes:
        """An auto-select input: the A buffer when it has a size, else the X pointer."""
        if a < len(self.message.a) and self.message.a[a].size:
            return self.read_a(a)
        return self.read_x(x)

    def write_out_auto(self, b: int, c: int, data: bytes) -> int:
        if b < len(self.message.b) and self.message.b[b].size:
            return self.write_b(b, data)
        return self.write_c(c, data)

    def out_auto_size(self, b: int, c: int) -> int:
        if b < len(self.message.b) and self.message.b[b].size:
            return self.message.b[b].size
        return self.c_size(c)

    # -- output ------------------------------------------------------------------------------
    def push(self, fmt: str, *values: Any) -> None:
        size = struct.calcsize("<" + fmt[0]) if fmt else 1
        self.out += bytes(-len(self.out) % min(size, 8))
        self.out += struct.pack("<" + fmt, *values)

    def push_bytes(self, data: bytes) -> None:
        self.out += data


HandlerFault = Callable[[str], None]


class Server:
    """Every session of the process and the services sm: hands out."""

    def __init__(self, unknown: str = "fatal") -> None:
        if unknown not in ("fatal", "stub"):
            raise ValueError(f"cpu_host.ipc_unknown is {unknown!r}: use fatal or stub")
        self.unknown = unknown
        self.sessions: dict[int, Session] = {}
        self.services: dict[str, Callable[[], Interface]] = {}
        self.ports: dict[str, Callable[[], Interface]] = {}
        self._next = 1
        self._lock = threading.RLock()

    # -- sessions ----------------------------------------------------------------------------
    def open(self, obj: Interface, tipc: bool = False) -> int:
        with self._lock:
            sid = self._next
            self._next += 1
            self.sessions[sid] = Session(sid, obj, tipc=tipc)
            return sid

    def release(self, sid: int) -> None:
        """The guest closed the session's handle: the session goes, and each of its objects that
        no other session (a clone) still holds is told it is closed."""
        with self._lock:
            s = self.sessions.pop(sid, None)
            if s is None:
                return
            held = {id(o) for t in self.sessions.values() for o in (t.domain or {1: t.obj}).values()}
        if not s.closed:
            for o in (s.domain or {1: s.obj}).values():
                if id(o) not in held:
                    o.closed()

    def connect(self, name: str) -> int:
        """ConnectToNamedPort: a new session to the port's object."""
        from cpu_host.horizon.ipc.results import NOT_FOUND

        if name not in self.ports:
            raise IpcError(NOT_FOUND, f"no named port {name!r}")
        return self.open(self.ports[name](), tipc=True)

    def service(self, name: str) -> Interface:
        """The object a new session to service ``name`` starts with (sm: GetServiceHandle)."""
        if name not in self.services:
            raise Unserved(f"service {name!r} is not served by the host")
        return self.services[name]()

    # -- a request ---------------------------------------------------------------------------
    def handle(self, kernel: Kernel, sid: int, buf: bytes) -> tuple[int, bytes | None]:
        """(kernel result, reply bytes or None).  Unserved propagates (the caller decides)."""
        with self._lock:
            s = self.sessions.get(sid)
        if s is None or s.closed:
            return SESSION_CLOSED, None
        try:
            msg = hipc.parse(buf)
            self._check_memory(kernel, msg)
        except IpcError as e:
            log.info("session %d: %s", sid, e)
            return e.code, None
        if s.tipc and msg.type >= cmif.TIPC_CLOSE:
            return 0, self._tipc(kernel, s, msg)
        if msg.type in (cmif.TYPE_CLOSE, cmif.TIPC_CLOSE):
            s.closed = True
            for o in (s.domain or {1: s.obj}).values():
                o.closed()
            return 0, hipc.build(0, b"")
        domain = s.domain is not None
        try:
            if msg.type in (cmif.TYPE_REQUEST, cmif.TYPE_REQUEST_CTX, cmif.LEGACY_REQUEST):
                req = cmif.parse_request(msg, domain)
                return 0, self._request(kernel, s, msg, req)
            if msg.type in (cmif.TYPE_CONTROL, cmif.TYPE_CONTROL_CTX, cmif.LEGACY_CONTROL):
                req = cmif.parse_request(msg, False)
                return 0, self._control(kernel, s, req)
            raise IpcError(HIPC_UNKNOWN_COMMAND_TYPE, f"message type {msg.type} is no CMIF command type")
        except IpcError as e:
            log.info("session %d (%s): %s", sid, s.obj.name, e)
            return 0, hipc.build(0, cmif.reply_payload(e.code, domain=domain))

    def _check_memory(self, kernel: Kernel, msg: hipc.Message) -> None:
        """What the kernel checks while copying a message: handles live, buffers mapped."""
        for h in msg.copy_handles + msg.move_handles:
            if not kernel.handle_kind(h):
                raise IpcError(INVALID_HANDLE, f"handle {h:#x} in the request is not a live handle")
        for what, lst, perm in (
            ("X", msg.x, PERM_R),
            ("A", msg.a, PERM_R),
            ("B", msg.b, PERM_W),
            ("W", msg.w, PERM_R | PERM_W),
            ("C", msg.c, PERM_W),
        ):
            for d in lst:
                if d.size and not kernel.mapped(d.address, d.size, perm):
                    raise IpcError(
                        INVALID_CURRENT_MEMORY, f"{what} buffer of {d.size:#x} bytes at {d.address:#x} is not mapped for it"
                    )

    def _request(self, kernel: Kernel, s: Session, msg: hipc.Message, req: cmif.Request) -> bytes:
        domain = s.domain is not None
        obj = s.obj
        in_objects: list[Interface] = []
        if domain:
            if req.domain_type == cmif.DOMAIN_CLOSE:
                o = s.domain.pop(req.object_id, None)
                if o is None:
                    raise IpcError(HIPC_DOMAIN_OBJECT_NOT_FOUND, f"close of unknown domain object {req.object_id}")
                o.closed()
                return hipc.build(0, cmif.reply_payload(0, domain=True))
            if req.domain_type != cmif.DOMAIN_SEND:
                raise IpcError(HIPC_UNKNOWN_COMMAND_TYPE, f"domain request type {req.domain_type}")
            if req.object_id not in s.domain:
                raise IpcError(HIPC_DOMAIN_OBJECT_NOT_FOUND, f"domain object {req.object_id} does not exist")
            obj = s.domain[req.object_id]
            for oid in req.in_objects:
                if oid not in s.domain:
                    raise IpcError(CMIF_INVALID_IN_OBJECT, f"input object {oid} is not in the domain")
                in_objects.append(s.domain[oid])
            if len(req.in_objects) > 8:
                raise IpcError(CMIF_INVALID_NUM_IN_OBJECTS, f"{len(req.in_objects)} input objects")
        ctx = Context(kernel, msg, req.params, in_objects)
        self._run(obj, req.command, ctx)
        out_ids: list[int] = []
        move = list(ctx.out_move)
        if ctx.out_objects:
            if domain:
                out_ids = [s.add(o) for o in ctx.out_objects]
            else:
                move = [self._session_handle(kernel, o) for o in ctx.out_objects] + move
        return hipc.build(0, cmif.reply_payload(0, bytes(ctx.out), domain, out_ids), ctx.out_copy, move)

    def _run(self, obj: Interface, cid: int, ctx: Context) -> None:
        fn = obj.commands.get(cid)
        if fn is None:
            what = f"service {obj.service!r}, interface {obj.name}, command {cid}"
            if self.unknown == "stub":
                log.warning("IPC: %s is not served: answered with success (cpu_host.ipc_unknown=stub)", what)
                ctx.out += bytes(0x20)
                return
            raise Unserved(f"{what} is not served by the host (cpu_host.ipc_unknown=stub answers it with success)")
        if log.isEnabledFor(logging.DEBUG):  # the request trace, for exploring what a program asks
            log.debug("%s %s: command %d (%s)", obj.service, obj.name, cid, fn.__name__)
        try:
            fn(obj, ctx)
        except OSError as e:
            code = obj.host_error(e)
            if code is None:
                raise
            raise IpcError(code, f"{obj.name} command {cid}: {e}") from None

    def _session_handle(self, kernel: Kernel, obj: Interface) -> int:
        h = kernel.session_handle(self.open(obj))
        if not h:
            raise IpcError(OUT_OF_HANDLES, "the handle table is full")
        return h

    def _control(self, kernel: Kernel, s: Session, req: cmif.Request) -> bytes:
        c = req.command
        if c == 0:  # ConvertCurrentObjectToDomain
            if s.domain is None:
                s.domain = {}
                s.add(s.obj)
            return hipc.build(0, cmif.reply_payload(0, struct.pack("<I", 1)))
        if c == 1:  # CopyFromCurrentDomain
            if s.domain is None:
                raise IpcError(HIPC_TARGET_NOT_DOMAIN, "CopyFromCurrentDomain on a session that is no domain")
            oid = struct.unpack_from("<I", req.params + bytes(4))[0]
            if oid not in s.domain:
                raise IpcError(HIPC_DOMAIN_OBJECT_NOT_FOUND, f"domain object {oid} does not exist")
            return hipc.build(0, cmif.reply_payload(0), move_handles=[self._session_handle(kernel, s.domain[oid])])
        if c in (2, 4):  # CloneCurrentObject(Ex): the same object, or domain
            with self._lock:
                sid = self._next
                self._next += 1
                self.sessions[sid] = Session(sid, s.obj, s.domain, s.next_object, tipc=s.tipc)
            h = kernel.session_handle(sid)
            if not h:
                raise IpcError(OUT_OF_HANDLES, "the handle table is full")
            return hipc.build(0, cmif.reply_payload(0), move_handles=[h])
        if c == 3:  # QueryPointerBufferSize
            return hipc.build(0, cmif.reply_payload(0, struct.pack("<H", POINTER_BUFFER_SIZE)))
        raise IpcError(CMIF_UNKNOWN_COMMAND_ID, f"control command {c}")

    def _tipc(self, kernel: Kernel, s: Session, msg: hipc.Message) -> bytes:
        if msg.type == cmif.TIPC_CLOSE:
            s.closed = True
            return hipc.build(0, b"", align=False)
        ctx = Context(kernel, msg, msg.data)
        try:
            self._run(s.obj, msg.type - cmif.TIPC_FIRST, ctx)
        except IpcError as e:
            return hipc.build(0, struct.pack("<I", e.code), align=False)
        move = [self._session_handle(kernel, o) for o in ctx.out_objects] + ctx.out_move
        return hipc.build(0, struct.pack("<I", 0) + bytes(ctx.out), ctx.out_copy, move, align=False)
