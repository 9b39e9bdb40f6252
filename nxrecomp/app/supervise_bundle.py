"""What ``nxrecomp run BUNDLE`` supervises: shader service (when the package provides a server),
GPU process and CPU host, sharing one run folder for sockets and the combined log."""

from __future__ import annotations

import importlib.util
import shlex
import sys
from pathlib import Path

from nxrecomp.bundle import manifest as bundle_manifest
from nxrecomp.app.supervisor import ProcessSpec


def grpc_healthy(address: str, service: str = "", timeout: float = 0.5) -> bool:
    """Standard gRPC health check (grpc.health.v1) of the server at ``address``."""
    import grpc
    from grpc_health.v1 import health_pb2, health_pb2_grpc

    with grpc.insecure_channel(address) as ch:
        try:
            r = health_pb2_grpc.HealthStub(ch).Check(health_pb2.HealthCheckRequest(service=service), timeout=timeout)
        except grpc.RpcError:
            return False
    return r.status == health_pb2.HealthCheckResponse.SERVING


def gpu_spec(run_dir: Path, frames_dir: str | None = None, record: str | None = None) -> ProcessSpec:
    from gpu_host.addresses import SERVICE, grpc_address

    argv = [sys.executable, "-m", "gpu_host.server", "--socket-dir", str(run_dir)]
    if frames_dir:
        argv += ["--frames-dir", frames_dir]
    if record:
        argv += ["--record", record]
    addr = grpc_address(run_dir)
    return ProcessSpec("gpu", argv, health=lambda: grpc_healthy(addr, SERVICE), standby_argv=argv + ["--standby"])


def shader_spec(run_dir: Path) -> ProcessSpec | None:
    """The shader service on a UNIX socket in the run folder (None if the package lacks it)."""
    if importlib.util.find_spec("shader_svc.service") is None:
        return None
    listen = f"unix:{run_dir.resolve()}/shader.grpc"
    return ProcessSpec(
        "shader", [sys.executable, "-m", "shader_svc.service", "--listen", listen], health=lambda: grpc_healthy(listen)
    )


def _cpu_command(bundle: Path) -> str:
    """``hz-run`` for a Horizon bundle (``nxrecomp build``), ``exec`` for a Linux one."""
    return "hz-run" if bundle_manifest.kind(bundle) == bundle_manifest.HORIZON else "exec"


def bundle_specs(
    bundle: Path, run_dir: Path, cpu_cmd: str | None = None, frames_dir: str | None = None, record: str | None = None
) -> list[ProcessSpec]:
    """Start order: shader service, GPU process, CPU host (which finds the other two through
    NXRECOMP_SHADER_SVC_LISTEN and NXRECOMP_GPU_SOCKET_DIR)."""
    specs = []
    env = {"NXRECOMP_GPU_SOCKET_DIR": str(run_dir.resolve()), "NXRECOMP_CPU_HOST_GPU_SOCKET_DIR": str(run_dir.resolve())}
    sh = shader_spec(run_dir)
    if sh is not None:
        specs.append(sh)
        env["NXRECOMP_SHADER_SVC_LISTEN"] = sh.argv[-1]
    specs.append(gpu_spec(run_dir, frames_dir, record))
    argv = shlex.split(cpu_cmd) if cpu_cmd else [sys.executable, "-m", "nxrecomp", _cpu_command(bundle), str(bundle)]
    specs.append(ProcessSpec("cpu", argv, env=env, restart=False))
    return specs
