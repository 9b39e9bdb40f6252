"""Where a GPU process listens, given its socket folder (shared by server, client, supervisor)."""

from __future__ import annotations

from pathlib import Path

SERVICE = "nxgpu.GpuControl"


def grpc_socket_path(socket_dir: str | Path) -> str:
    return str(Path(socket_dir).resolve() / "gpu.grpc")


def grpc_address(socket_dir: str | Path) -> str:
    return f"unix://{grpc_socket_path(socket_dir)}"


def fd_socket_path(socket_dir: str | Path) -> str:
    return str(Path(socket_dir).resolve() / "gpu.fds")
