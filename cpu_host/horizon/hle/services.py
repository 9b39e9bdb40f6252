"""Assemble the host services of one process from its manifest and the settings table."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cpu_host.horizon.hle.clock import ClockService
from cpu_host.horizon.hle.fs import FsService
from cpu_host.horizon.hle.hid import HidService
from cpu_host.horizon.hle.registry import Registry
from cpu_host.horizon.hle.savedata import SaveStore
from cpu_host.horizon.hle.system import SystemService
from nxrecomp import settings


@dataclass
class Services:
    registry: Registry
    fs: FsService
    clock: ClockService
    hid: HidService
    system: SystemService


def make_services(manifest: dict, counter: Any, input_script: str | None = None) -> Services:
    romfs = manifest.get("romfs")
    fs = FsService(int(manifest["process"]["program_id"]), Path(romfs) if romfs else None,
                   SaveStore(Path(settings.get("cpu_host", "save_dir")).expanduser()))
    clock = ClockService(bool(settings.get("cpu_host", "deterministic")), counter)
    hid = HidService.from_file(input_script if input_script is not None else settings.get("cpu_host", "input_script"))
    system = SystemService(settings.get("cpu_host", "language"), bool(settings.get("cpu_host", "docked")))
    reg = Registry()
    for s in (fs, clock, hid, system):
        reg.add(s.functions())
    return Services(reg, fs, clock, hid, system)
