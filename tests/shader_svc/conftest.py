"""Shared fixtures of the shader service tests: NVIDIA's ptxas/nvdisasm fetched from PyPI into
the cache (skipped loudly when the registry cannot be reached), the PTX corpus, a running
service, and lavapipe compute and graphics devices."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

# the helper modules beside this file (compute_dispatch, spirv_checks, listings...) import by
# their own names: --import-mode=importlib puts no test folder on sys.path
sys.path.insert(0, str(Path(__file__).resolve().parent))

import nvtools  # noqa: E402  (a helper beside this file, see above)

PTX_DIR = Path(__file__).parent / "ptx"
PTX_FILES = sorted(PTX_DIR.glob("*.ptx"))


@pytest.fixture()
def server(tmp_path):
    """A real shader service on a loopback port with its own disk cache: (stub, channel)."""
    import grpc

    from proto import shader_pb2_grpc as G
    from shader_svc import service

    srv, port, t = service.start("127.0.0.1:0", tmp_path / "cache", workers=2)
    ch = grpc.insecure_channel(f"127.0.0.1:{port}")
    yield G.ShaderTranslatorStub(ch), ch
    ch.close()
    srv.stop(grace=None)
    t.close()


@pytest.fixture(scope="module")
def compute_device():
    """A Vulkan compute device (lavapipe) for a module's kernels; a loud skip without Vulkan."""
    from compute_dispatch import open_device

    with open_device() as dev:
        yield dev


@pytest.fixture(scope="module")
def gpu():
    """A Vulkan graphics device (lavapipe) for a module's draws."""
    from vk_graphics import GraphicsDevice

    dev = GraphicsDevice()
    yield dev
    dev.close()


@pytest.fixture(scope="session")
def nv_tools():
    try:
        return nvtools.ptxas_path(), nvtools.nvdisasm_path()
    except nvtools.ToolUnavailable as e:
        pytest.skip(f"LOUD SKIP: NVIDIA tools unavailable from PyPI: {e}")


@pytest.fixture(scope="session")
def corpus_sm86(nv_tools):
    """{kernel name: Kernel} for every PTX file of the corpus, built by ptxas for sm_86."""
    import cubin

    out = {}
    for f in PTX_FILES:
        out.update(cubin.kernels(nvtools.ptxas(f.read_text(), "sm_86"), str(f)))
    return out


@pytest.fixture(scope="session")
def corpus_sm53():
    """{kernel name: Kernel} for every PTX file of ptx/sm53, built by ptxas for sm_53."""
    import sm53_corpus as corpus
    import sm53_tools as tools

    try:
        return corpus.build(PTX_DIR / "sm53")
    except tools.ToolUnavailable as e:
        pytest.skip(f"LOUD SKIP: ptxas unavailable from PyPI: {e}")


@pytest.fixture(scope="module")
def pool_textures():
    """A random TS x TS RGBA8 texture for every entry of the bindless texture pool."""
    import numpy as np

    from quad_draw import TS
    from shader_svc.sm86.to_spirv_gfx import TEXTURE_POOL

    rng = np.random.default_rng(31)
    return [rng.integers(0, 256, (TS, TS, 4), dtype=np.uint8) for _ in range(TEXTURE_POOL)]


@pytest.fixture(scope="session")
def nvdisasm53():
    """Debian's nvdisasm 11.8 (it reads SM53); a loud skip where Debian is unreachable."""
    import sm53_tools as tools

    try:
        return tools.nvdisasm53_path()
    except tools.ToolUnavailable as e:
        pytest.skip(f"LOUD SKIP: nvdisasm 11.8 unavailable (Debian unreachable): {e}")
