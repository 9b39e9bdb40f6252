"""psm (power state; libnx ``psm.c``): 0 GetBatteryChargePercentage -> u32, 1 GetChargerType ->
u32 (0 unconnected, 1 official charger), 7 OpenSession -> IPsmSession (not served yet).
The host reports a full battery on the official charger."""

from __future__ import annotations

from cpu_host.horizon.ipc.dispatcher import Context, Interface, Server, command


class PsmServer(Interface):
    name = "nn::psm::IPsmServer"
    service = "psm"

    @command(0)
    def get_battery_charge_percentage(self, ctx: Context) -> None:
        ctx.push("I", 100)

    @command(1)
    def get_charger_type(self, ctx: Context) -> None:
        ctx.push("I", 1)


def register(server: Server) -> None:
    server.services["psm"] = PsmServer
