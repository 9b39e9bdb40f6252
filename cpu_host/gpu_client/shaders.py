"""Where a program's SPIR-V comes from.  One small interface, ``ShaderSource``: today GLSL
compiled by glslangValidator (cached on disk by content hash); later the shader service's
translation of guest SM53/SM86 code plugs in behind the same interface."""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import tempfile
from pathlib import Path
from typing import Protocol

from nxrecomp.common.errors import NxError


class ShaderSource(Protocol):
    def spirv(self) -> tuple[bytes, bytes]:
        """(vertex SPIR-V, fragment SPIR-V)."""


class SpirvSource:
    """Ready SPIR-V (from the shader service, a recording, or hand-written)."""

    def __init__(self, vertex: bytes, fragment: bytes) -> None:
        self._v, self._f = vertex, fragment

    def spirv(self) -> tuple[bytes, bytes]:
        return self._v, self._f


class GlslSource:
    def __init__(self, vertex: str, fragment: str) -> None:
        self.vertex, self.fragment = vertex, fragment

    def spirv(self) -> tuple[bytes, bytes]:
        return compile_glsl(self.vertex, "vert"), compile_glsl(self.fragment, "frag")


def _cache_dir() -> Path:
    from nxrecomp.common import settings

    p = Path(settings.get("nxrecomp", "cache_dir")) / "glsl"
    p.mkdir(parents=True, exist_ok=True)
    return p


def compile_glsl(source: str, stage: str) -> bytes:
    tool = shutil.which("glslangValidator")
    if tool is None:
        raise NxError("glslangValidator not found (apt-get install glslang-tools)")
    key = hashlib.sha256(f"{stage}\0{source}".encode()).hexdigest()[:32]
    cached = _cache_dir() / f"{key}.spv"
    if cached.exists():
        return cached.read_bytes()
    with tempfile.TemporaryDirectory() as d:
        src = Path(d) / f"s.{stage}"
        src.write_text(source)
        out = Path(d) / "s.spv"
        r = subprocess.run([tool, "-V", "--target-env", "vulkan1.3", "-o", str(out), str(src)], capture_output=True, text=True)
        if r.returncode != 0:
            raise NxError(f"GLSL {stage} shader does not compile: {r.stdout.strip()[-400:]}")
        code = out.read_bytes()
    tmp = cached.with_suffix(f".tmp{os.getpid()}")
    tmp.write_bytes(code)
    os.replace(tmp, cached)
    return code
