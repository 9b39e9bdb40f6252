"""Assemble the host services of one process from its manifest and the settings table."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from cpu_host.horizon.hle.abi import GuestError
from cpu_host.horizon.hle.clock import ClockService
from cpu_host.horizon.hle.coop import CoopService
from cpu_host.horizon.hle.fs import FsService
from cpu_host.horizon.hle.hid import HidService
from cpu_host.horizon.hle.nvn.frontend import NvnService
from cpu_host.horizon.hle.os import OsService
from cpu_host.horizon.hle.registry import Registry
from cpu_host.horizon.hle.savedata import SaveStore
from cpu_host.horizon.hle.system import SystemService
from gpu_host import blocklinear
from nxrecomp.common import settings
from nxrecomp.common.errors import NxError


@dataclass
class Services:
    registry: Registry
    fs: FsService
    clock: ClockService
    hid: HidService
    system: SystemService
    nvn: NvnService
    coop: CoopService
    ipc: Any = None  # services.host.IpcHost: the same state over IPC
    audio: Any = None  # audio.host.AudioHost: renderers of nn::audio and audren:u
    boot_slots: dict[str, int] = field(default_factory=dict)


def gpu_socket_dir() -> str:
    return settings.get("cpu_host", "gpu_socket_dir") or os.environ.get("NXRECOMP_GPU_SOCKET_DIR", "")


def connect_gpu():
    """The GPU client, attached to the GPU process the supervisor started."""
    from cpu_host.gpu_client.client import GpuClient

    d = gpu_socket_dir()
    if not d:
        raise GuestError(
            "no GPU process to draw with: run the bundle with 'nxrecomp run' (or set "
            "cpu_host.gpu_socket_dir to a GPU process's socket folder)"
        )
    client = GpuClient(d)
    client.connect(timeout=30)
    return client


def translate_shader(
    arch: int,
    stage: int,
    code: bytes,
    features: int = 0,
    local_size: tuple[int, ...] = (),
    banks: tuple[tuple[int, bytes], ...] = (),
    data: tuple[tuple[int, bytes], ...] = (),
) -> bytes:
    """Guest machine code -> SPIR-V through the shader service (settings shader_svc.listen);
    ``features``: what the GPU process's device has (shader.proto Program.features); ``banks``:
    (number, bytes) of the constant banks that are part of a compute program (Program.banks);
    ``data``: (device address, bytes) of its placed ``__device__`` globals (Program.data; the NVN
    compute path's nvn/compute_globals.py gives them)."""
    import grpc

    from proto import shader_pb2, shader_pb2_grpc

    addr = settings.get("shader_svc", "listen")
    with grpc.insecure_channel(addr) as ch:
        try:
            r = shader_pb2_grpc.ShaderTranslatorStub(ch).Translate(
                shader_pb2.Program(
                    arch=arch,
                    stage=stage,
                    code=code,
                    features=features,
                    local_size=list(local_size),
                    banks=[shader_pb2.ConstBank(bank=n, data=d) for n, d in banks],
                    data=[shader_pb2.GlobalData(address=a, data=d) for a, d in data],
                ),
                timeout=60,
            )
        except grpc.RpcError as e:
            raise GuestError(
                f"shader service at {addr} refused the SM{arch} stage-{stage} program: {e.code().name}: {e.details()}"
            ) from None
    return r.spirv


def make_services(manifest: dict, counter: Any, input_script: str | None = None) -> Services:
    romfs = manifest.get("romfs")
    fs = FsService(
        int(manifest["process"]["program_id"]),
        Path(romfs) if romfs else None,
        SaveStore(Path(settings.get("cpu_host", "save_dir")).expanduser()),
    )
    clock = ClockService(bool(settings.get("cpu_host", "deterministic")), counter)
    hid = HidService.from_file(input_script if input_script is not None else settings.get("cpu_host", "input_script"))
    system = SystemService(
        settings.get("cpu_host", "language"),
        bool(settings.get("cpu_host", "docked")),
        frames=lambda: hid.frame,
        max_frames=int(settings.get("cpu_host", "max_frames")),
    )
    gpu = manifest.get("gpu", "switch1")
    if gpu not in blocklinear.GENERATION_GOB:
        raise NxError(f"manifest field gpu {gpu!r} is not one of {', '.join(blocklinear.GENERATION_GOB)}")
    from cpu_host.horizon.audio.host import AudioHost
    from cpu_host.horizon.audio.nn_audio import NnAudio

    audio = AudioHost()
    nvn = NvnService(
        connect=connect_gpu,
        translate=translate_shader,
        on_present=lambda: (hid.present(), audio.present()),
        gob=blocklinear.GENERATION_GOB[gpu],
    )
    coop = CoopService(
        settings.get("cpu_host", "relay"),
        settings.get("cpu_host", "relay_token"),
        settings.get("cpu_host", "relay_password"),
        settings.get("cpu_host", "relay_join_timeout_s"),
    )
    reg = Registry()
    for s in (fs, clock, hid, system, nvn, coop, OsService(), NnAudio(audio)):
        reg.add(s.functions())
    from cpu_host.horizon.services.host import IpcHost

    ipc = IpcHost(
        system=system,
        hid_state=hid,
        clock=clock,
        fs=fs,
        sd_dir=Path(settings.get("cpu_host", "sd_dir")).expanduser(),
        shared_font=Path(settings.get("cpu_host", "shared_font")).expanduser(),
        nvn=nvn,
        gpu_wanted=lambda: bool(gpu_socket_dir()),
        framebuffer_dir=Path(settings.get("cpu_host", "framebuffer_dir")).expanduser()
        if settings.get("cpu_host", "framebuffer_dir")
        else None,
        unknown=settings.get("cpu_host", "ipc_unknown"),
        audio=audio,
        bsd_network=settings.get("cpu_host", "bsd_network"),
        bsd_max_sockets=int(settings.get("cpu_host", "bsd_max_sockets")),
    )
    reg.binders.append(lambda ffi, lib: ipc.install(ffi, lib, reg.ipc_fault))
    reg.binders.append(lambda ffi, lib: nvn.install_native(ffi, lib, reg))  # NVN's per-draw calls in C
    if gpu_socket_dir():  # a window's keyboard and gamepads, when the GPU process has one
        from cpu_host.horizon.hle.live_input import LiveInput

        LiveInput(gpu_socket_dir(), hid, system.request_exit).start()
    return Services(reg, fs, clock, hid, system, nvn, coop, ipc, audio)


def proc_slots(base: int, names: list[str]) -> dict[str, int]:
    """Addresses for entry points a game looks up by name at run time (nvnBootstrapLoader,
    nvnDeviceGetProcAddress): 16 bytes each from ``base``, right after the host-import slots."""
    return {n: base + 16 * i for i, n in enumerate(names)}
