"""Shared fixtures of the shader service tests: NVIDIA's ptxas/nvdisasm fetched from PyPI into
the cache (skipped loudly when the registry cannot be reached), the PTX corpus, and a running
service."""
from __future__ import annotations

from pathlib import Path

import pytest

from shader_svc import nvtools

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


@pytest.fixture(scope="session")
def nv_tools():
    try:
        return nvtools.ptxas_path(), nvtools.nvdisasm_path()
    except nvtools.ToolUnavailable as e:
        pytest.skip(f"LOUD SKIP: NVIDIA tools unavailable from PyPI: {e}")


@pytest.fixture(scope="session")
def corpus_sm86(nv_tools):
    """{kernel name: Kernel} for every PTX file of the corpus, built by ptxas for sm_86."""
    from shader_svc import cubin

    out = {}
    for f in PTX_FILES:
        out.update(cubin.kernels(nvtools.ptxas(f.read_text(), "sm_86"), str(f)))
    return out
