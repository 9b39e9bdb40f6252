"""Assemble the IPC server of one process: the named port sm: and every service it hands out,
sharing state with the nn:: HLE services; install it in the kernel when the registry binds."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

from cpu_host.horizon.hle.clock import ClockService
from cpu_host.horizon.hle.fs import FsService
from cpu_host.horizon.hle.hid import HidService
from cpu_host.horizon.hle.system import SystemService
from cpu_host.horizon.ipc.dispatcher import Server
from cpu_host.horizon.ipc.kernel import KernelBridge
from cpu_host.horizon.services import (
    apm,
    applet,
    audout,
    audren,
    bsd,
    display,
    fsp,
    hid,
    lm,
    nifm,
    ns,
    nvdrv,
    pl,
    psm,
    settings,
    sm,
    time,
    vi,
)


log = logging.getLogger("cpu_host.ipc")


class IpcHost:
    """The server, and the kernel bridge once game.so is loaded (``install``)."""

    def __init__(
        self,
        *,
        system: SystemService,
        hid_state: HidService,
        clock: ClockService,
        fs: FsService,
        sd_dir: Path,
        shared_font: Path,
        nvn: Any,
        gpu_wanted=lambda: False,
        framebuffer_dir: Path | None = None,
        unknown: str = "fatal",
        audio: Any = None,
        bsd_network: str = "loopback",
        bsd_max_sockets: int = 64,
    ) -> None:
        self.server = Server(unknown)
        self.kernel: KernelBridge | None = None
        ref = self._kernel
        sm.register(self.server)
        settings.register(self.server, system)
        apm.register(self.server, system)
        lm.register(self.server)
        applet.register(self.server, ref, system)
        self.hid = hid.register(self.server, hid_state, ref)
        time.register(self.server, clock, ref)
        fsp.register(self.server, fs, sd_dir)
        psm.register(self.server)
        pl.register(self.server, shared_font, ref)
        nv = nvdrv.NvState()
        # one display with the NVN front end: its frame numbers, GPU client and present clock (whose
        # on_present also tells hid and audio of each frame)
        self.display = display.Display(nvn, framebuffer_dir, gpu_wanted)
        vi.register(self.server, system, ref, nv, self.display)
        nvdrv.register(self.server, ref, nv)
        if audio is not None:  # audio.host.AudioHost: the renderers nn::audio shares
            audren.register(self.server, audio, ref, system.docked)
            audout.register(self.server, audio, ref)
        self.sockets = bsd.register(self.server, bsd_network, bsd_max_sockets)
        nifm.register(self.server)
        ns.register(self.server)

    def _kernel(self) -> KernelBridge:
        assert self.kernel is not None, "IPC before the kernel bridge was installed"
        return self.kernel

    def install(self, ffi: Any, lib: Any, fault) -> None:
        """Route the kernel's IPC SVCs here (``fault(message) -> index`` names a crash)."""
        self.kernel = KernelBridge(ffi, lib, self.server, fault)
        try:
            self.kernel.install()
        except AttributeError:  # a game.so built before the kernel had IPC
            log.warning(
                "this bundle's game.so has no IPC entry points (built by an older nxrecomp): IPC SVCs "
                "stay unserved; rebuild it with nxrecomp build"
            )
