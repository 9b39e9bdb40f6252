"""nifm (network interface; switchbrew "Network Interface services"; libnx ``nifm.c``/``nifm.h``).

``nifm:u``/``nifm:s``/``nifm:a`` are nn::nifm::detail::IStaticService (libnx converts it to a
domain first): 4 CreateGeneralServiceOld [1.0.0-2.3.0], 5 CreateGeneralService (u64 reserved,
PID) -> IGeneralService.

IGeneralService: 1 GetClientId (fixed-size C buffer: u32 id), 4 CreateRequest (s32 requirement
preset) -> IRequest, 12 GetCurrentIpAddress (u32, network order), 15 GetCurrentIpConfigInfo
(IpAddressSetting 13 bytes {u8 is_automatic, addr, mask, gateway} + DnsSetting 9 bytes {u8,
primary, secondary}), 16 SetWirelessCommunicationEnabled (u8), 17 IsWirelessCommunicationEnabled
(u8), 18 GetInternetConnectionStatus (u8 type: 1 WiFi, 2 Ethernet; u8 wifi strength; u8 status:
4 Connected), 20 IsEthernetCommunicationEnabled, 21 IsAnyInternetRequestAccepted (X: client id),
22 IsAnyForegroundRequestAccepted, 23 PutToSleep, 24 WakeUp.

IRequest: 0 GetRequestState (u32: 1 not submitted, 3 Available), 1 GetResult, 2
GetSystemEventReadableHandles (two copy handles), 3 Cancel, 4 Submit, 11
SetConnectionConfirmationOption (s8), 23 SetKeptInSleep (u8), 24/25 (Un)RegisterSocketDescriptor.

What the host reports follows the sockets it serves (``cpu_host.bsd_network``): a wired
(Ethernet) connection, connected, whose address is the loopback 127.0.0.1 (mask 255.0.0.0, the
gateway and DNS the same address) — a request is accepted as soon as it is submitted."""

from __future__ import annotations

import struct

from cpu_host.horizon.ipc.dispatcher import Context, Interface, Server, command

LOOPBACK = bytes((127, 0, 0, 1))
MASK = bytes((255, 0, 0, 0))
ETHERNET, CONNECTED = 2, 4
STATE_NOT_SUBMITTED, STATE_AVAILABLE = 1, 3
CLIENT_ID = 1


class Request(Interface):
    name = "nn::nifm::detail::IRequest"
    service = "nifm"

    def __init__(self) -> None:
        self.submitted = False
        self.events: list[int] = []

    @command(0)
    def get_request_state(self, ctx: Context) -> None:
        ctx.push("I", STATE_AVAILABLE if self.submitted else STATE_NOT_SUBMITTED)

    @command(1)
    def get_result(self, ctx: Context) -> None:
        """Success: the (loopback) network is there."""

    @command(2)
    def get_system_event_readable_handles(self, ctx: Context) -> None:
        k = ctx.kernel
        if not self.events:
            self.events = [k.event(), k.event()]
            if self.submitted:
                k.signal(self.events[0])
        ctx.out_copy.extend(k.event_handle(e) for e in self.events)

    @command(3)
    def cancel(self, ctx: Context) -> None:
        self.submitted = False

    @command(4)
    def submit(self, ctx: Context) -> None:
        self.submitted = True
        if self.events:
            ctx.kernel.signal(self.events[0])  # the state changed: libnx waits on the first event

    @command(11)
    def set_connection_confirmation_option(self, ctx: Context) -> None:
        ctx.u8()

    @command(23)
    def set_kept_in_sleep(self, ctx: Context) -> None:
        ctx.u8()

    @command(24)
    def register_socket_descriptor(self, ctx: Context) -> None:
        ctx.u32()

    @command(25)
    def unregister_socket_descriptor(self, ctx: Context) -> None:
        ctx.u32()


class GeneralService(Interface):
    name = "nn::nifm::detail::IGeneralService"
    service = "nifm"

    def __init__(self) -> None:
        self.wireless = True

    @command(1)
    def get_client_id(self, ctx: Context) -> None:
        ctx.write_c(0, struct.pack("<I", CLIENT_ID))

    @command(4)
    def create_request(self, ctx: Context) -> None:
        ctx.i32()
        ctx.out_objects.append(Request())

    @command(12)
    def get_current_ip_address(self, ctx: Context) -> None:
        ctx.push_bytes(LOOPBACK)

    @command(15)
    def get_current_ip_config_info(self, ctx: Context) -> None:
        ctx.push_bytes(b"\1" + LOOPBACK + MASK + LOOPBACK + b"\1" + LOOPBACK + LOOPBACK)

    @command(16)
    def set_wireless_communication_enabled(self, ctx: Context) -> None:
        self.wireless = bool(ctx.u8())

    @command(17)
    def is_wireless_communication_enabled(self, ctx: Context) -> None:
        ctx.push("B", int(self.wireless))

    @command(18)
    def get_internet_connection_status(self, ctx: Context) -> None:
        ctx.push_bytes(bytes((ETHERNET, 0, CONNECTED)))

    @command(20)
    def is_ethernet_communication_enabled(self, ctx: Context) -> None:
        ctx.push("B", 1)

    @command(21)
    def is_any_internet_request_accepted(self, ctx: Context) -> None:
        ctx.push("B", 1)

    @command(22)
    def is_any_foreground_request_accepted(self, ctx: Context) -> None:
        ctx.push("B", 1)

    @command(23)
    def put_to_sleep(self, ctx: Context) -> None:
        """Nothing sleeps here."""

    @command(24)
    def wake_up(self, ctx: Context) -> None:
        """Nothing sleeps here."""


class StaticService(Interface):
    name = "nn::nifm::detail::IStaticService"

    def __init__(self, service: str) -> None:
        self.service = service

    @command(4)
    def create_general_service_old(self, ctx: Context) -> None:
        ctx.out_objects.append(GeneralService())

    @command(5)
    def create_general_service(self, ctx: Context) -> None:
        ctx.u64()
        ctx.out_objects.append(GeneralService())


def register(server: Server) -> None:
    for name in ("nifm:u", "nifm:s", "nifm:a"):
        server.services[name] = lambda name=name: StaticService(name)
