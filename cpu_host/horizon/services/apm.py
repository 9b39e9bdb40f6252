"""apm (performance management; libnx ``apm.c``): 0 OpenSession -> ISession; 1
GetPerformanceMode (u32: 0 normal/handheld, 1 boost/docked).  ISession: 0
SetPerformanceConfiguration(mode u32, config u32), 1 GetPerformanceConfiguration(mode) -> u32."""

from __future__ import annotations

from cpu_host.horizon.hle.system import SystemService
from cpu_host.horizon.ipc.dispatcher import Context, Interface, Server, command

DEFAULT_CONFIGURATION = 0x00010000  # switchbrew apm: 1020 MHz CPU / 384 MHz GPU / 1600 MHz memory


class ApmSession(Interface):
    name = "nn::apm::ISession"
    service = "apm"

    def __init__(self) -> None:
        self.config = {0: DEFAULT_CONFIGURATION, 1: DEFAULT_CONFIGURATION}

    @command(0)
    def set_performance_configuration(self, ctx: Context) -> None:
        mode, conf = ctx.u32(), ctx.u32()
        self.config[mode] = conf

    @command(1)
    def get_performance_configuration(self, ctx: Context) -> None:
        ctx.push("I", self.config.get(ctx.u32(), DEFAULT_CONFIGURATION))


class ApmManager(Interface):
    name = "nn::apm::IManager"
    service = "apm"

    def __init__(self, system: SystemService) -> None:
        self.system = system

    @command(0)
    def open_session(self, ctx: Context) -> None:
        ctx.out_objects.append(ApmSession())

    @command(1)
    def get_performance_mode(self, ctx: Context) -> None:
        ctx.push("I", 1 if self.system.docked else 0)


def register(server: Server, system: SystemService) -> None:
    server.services["apm"] = lambda: ApmManager(system)
