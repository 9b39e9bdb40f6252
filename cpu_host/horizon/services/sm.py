"""sm: — the service manager (switchbrew "Services API"; libnx ``sm.c``).

CMIF and TIPC share the ids: 0 RegisterClient (PID sent), 1 GetServiceHandle (name: 8 bytes,
NUL-padded -> move handle), 2 RegisterService, 3 UnregisterService, 4 DetachClient.  A request
before RegisterClient is InvalidClient (0x415); a name with a NUL followed by other characters is
InvalidServiceName (0xC15); a name the host does not serve is an unserved service (fatal, or
NotRegistered 0xE15 with cpu_host.ipc_unknown = stub)."""

from __future__ import annotations

import logging
from typing import Callable

from cpu_host.horizon.ipc.dispatcher import Context, Interface, Server, Unserved, command
from cpu_host.horizon.ipc.results import SM_INVALID_CLIENT, SM_INVALID_SERVICE_NAME, SM_NOT_ALLOWED, SM_NOT_REGISTERED, IpcError

log = logging.getLogger("cpu_host.ipc.sm")


def service_name(raw: bytes) -> str:
    name = raw.rstrip(b"\0")
    if b"\0" in name or not name:
        raise IpcError(SM_INVALID_SERVICE_NAME, f"service name {raw!r} is not a NUL-padded name")
    return name.decode("ascii", "replace")


class UserInterface(Interface):
    name = "nn::sm::detail::IUserInterface"
    service = "sm:"

    def __init__(self, server: Server) -> None:
        self.server = server
        self.registered = False

    @command(0)
    def register_client(self, ctx: Context) -> None:
        self.registered = True

    @command(1)
    def get_service_handle(self, ctx: Context) -> None:
        if not self.registered:
            raise IpcError(SM_INVALID_CLIENT, "GetServiceHandle before RegisterClient")
        name = service_name(ctx.take(8))
        try:
            obj = self.server.service(name)
        except Unserved:
            if self.server.unknown == "stub":
                log.warning("sm: service %r is not served: NotRegistered", name)
                raise IpcError(SM_NOT_REGISTERED, f"service {name!r} is not served") from None
            raise
        log.info("sm: GetServiceHandle(%s)", name)
        ctx.out_objects.append(obj)

    @command(2)
    def register_service(self, ctx: Context) -> None:
        name = service_name(ctx.take(8))
        raise IpcError(SM_NOT_ALLOWED, f"RegisterService({name!r}): the program may not host services here")

    @command(3)
    def unregister_service(self, ctx: Context) -> None:
        raise IpcError(SM_NOT_REGISTERED, "UnregisterService: nothing is registered by the program")

    @command(4)
    def detach_client(self, ctx: Context) -> None:
        self.registered = False


def register(server: Server) -> None:
    server.ports["sm:"] = lambda: UserInterface(server)


Factory = Callable[[], Interface]
