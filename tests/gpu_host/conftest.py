from __future__ import annotations

import itertools
import shutil
import sys
import tempfile
from pathlib import Path

import pytest

# Test helpers (gpu_guest) live beside this file; importlib import mode adds no test folder to sys.path.
sys.path.insert(0, str(Path(__file__).resolve().parent))

from cpu_host.gpu_client.client import GpuClient
from cpu_host.gpu_client.shaders import GlslSource
from gpu_guest import COLOR_FS, COLOR_VS, TEX_FS, TEX_VS, gpu_log, start_gpu, stop_gpu


class Gpu:
    """A real GPU process plus a connected client; ids are handed out so tests don't collide."""

    def __init__(self) -> None:
        self.frames_dir = Path(tempfile.mkdtemp(prefix="nxgf"))
        self.proc, self.dir = start_gpu({"NXRECOMP_GPU_HOST_FRAMES_DIR": str(self.frames_dir)})
        self.client = GpuClient(self.dir, ring_capacity=1 << 22)
        self.client.connect()
        self.ids = itertools.count(100)
        self.frames = itertools.count(1)
        self.pool = self.client.create_pool(1, 8 << 20)
        self.client.register_program(1, GlslSource(COLOR_VS, COLOR_FS))
        self.client.register_program(2, GlslSource(TEX_VS, TEX_FS))

    def id(self) -> int:
        return next(self.ids)

    def log(self) -> str:
        return gpu_log(self.dir)

    def close(self) -> None:
        self.client.close()
        stop_gpu(self.proc)
        shutil.rmtree(self.frames_dir, ignore_errors=True)
        shutil.rmtree(self.dir, ignore_errors=True)


@pytest.fixture(scope="module")
def gpu():
    g = Gpu()
    yield g
    g.close()
