"""ns (application management; switchbrew "NS services"; libnx ``ns.c``): what a homebrew program
asks of it at start-up, the control data (NACP + icon) of the running application.

- ``ns:am2``, ``ns:ec``, ``ns:web``, ``ns:rid``, ``ns:rt``, ``ns:ro`` [3.0.0+] are
  nn::ns::detail::IServiceGetterInterface (libnx tries them from ``ns:am2`` down): 7989
  GetReadOnlyApplicationControlDataInterface [5.1.0+], 7996 GetApplicationManagerInterface, each
  -> an interface object.
- ``ns:am`` [1.0.0-2.3.0] is IApplicationManagerInterface itself.
- IApplicationManagerInterface 400 and IReadOnlyApplicationControlDataInterface 0 are
  GetApplicationControlData: in ``{u8 source, 7 bytes padding, u64 application id}``, a
  HipcMapAlias (B) output buffer; out u32 = the bytes written (NACP 0x4000 bytes, then the icon).

The host runs one application whose control data it does not keep (an ExeFS carries none; an
NRO's NACP stays in its assets): it answers with a blank NACP (0x4000 zero bytes: no title, no
flags) and no icon, whatever the id asks, logged once so the gap is visible.  A buffer smaller
than a NACP gets what fits (the count says how much)."""

from __future__ import annotations

import logging

from cpu_host.horizon.ipc.dispatcher import Context, Interface, Server, command

log = logging.getLogger("cpu_host.ipc.ns")
NACP_SIZE = 0x4000
GETTER_SERVICES = ("ns:am2", "ns:ec", "ns:web", "ns:rid", "ns:rt", "ns:ro")


def _control_data(ctx: Context, service: str) -> None:
    source = ctx.u8()
    app_id = ctx.u64()
    size = ctx.b_size(0)
    log.info(
        "%s: GetApplicationControlData(source %d, application %#018x): a blank NACP (the host keeps no control data)",
        service,
        source,
        app_id,
    )
    ctx.push("I", ctx.write_b(0, bytes(min(size, NACP_SIZE))))


class ApplicationManagerInterface(Interface):
    name = "nn::ns::detail::IApplicationManagerInterface"

    def __init__(self, service: str) -> None:
        self.service = service

    @command(400)
    def get_application_control_data(self, ctx: Context) -> None:
        _control_data(ctx, self.service)


class ReadOnlyApplicationControlDataInterface(Interface):
    name = "nn::ns::detail::IReadOnlyApplicationControlDataInterface"

    def __init__(self, service: str) -> None:
        self.service = service

    @command(0)
    def get_application_control_data(self, ctx: Context) -> None:
        _control_data(ctx, self.service)


class ServiceGetterInterface(Interface):
    name = "nn::ns::detail::IServiceGetterInterface"

    def __init__(self, service: str) -> None:
        self.service = service

    @command(7989)
    def get_read_only_application_control_data_interface(self, ctx: Context) -> None:
        ctx.out_objects.append(ReadOnlyApplicationControlDataInterface(self.service))

    @command(7996)
    def get_application_manager_interface(self, ctx: Context) -> None:
        ctx.out_objects.append(ApplicationManagerInterface(self.service))


def register(server: Server) -> None:
    for name in GETTER_SERVICES:
        server.services[name] = lambda name=name: ServiceGetterInterface(name)
    server.services["ns:am"] = lambda: ApplicationManagerInterface("ns:am")
