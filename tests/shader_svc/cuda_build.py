"""CUDA C++ kernels compiled at test time for both ISAs the shader service reads, cached by
content hash under ``<cache_dir>/shader_corpus``.

- SM86: ``nvcc -cubin -arch=sm_86`` (nvcc 13 on this machine; ``NXRECOMP_NVCC`` or PATH).
- SM53: nvcc 13 no longer targets Maxwell, so its PTX (``-arch=compute_75``, the lowest it
  has) is re-targeted (``.target sm_53``, ``.version 8.0``: the PTX ISA of CUDA 12.0, which the
  pinned ptxas 12.9 reads) and assembled by ptxas 12.9 from PyPI (``nvtools.ptxas_path``).
  The kernels avoid what PTX for sm_53 lacks (redux, f64 atomics, ...).

Optimisation levels: ``O3`` (nvcc -O3 / ptxas -O3) and ``G`` (nvcc -G: debug code, ptxas -O0
with line/variable info), the two ends the issue names (-O3 and -O0/-G).
"""
from __future__ import annotations

import hashlib
import os
import re
import shutil
import subprocess
import tempfile
from pathlib import Path

from nxrecomp import settings
from shader_svc import nvtools
from shader_svc.cubin import kernels as cubin_kernels

OPTS = ("O3", "G")


class NoCompiler(Exception):
    """nvcc is not installed (tests skip loudly)."""


def nvcc_path() -> str:
    p = os.environ.get("NXRECOMP_NVCC") or shutil.which("nvcc") or "/usr/local/cuda/bin/nvcc"
    if not Path(p).is_file():
        raise NoCompiler("nvcc not found (set NXRECOMP_NVCC or put CUDA's bin on PATH)")
    return p


def _cache_dir() -> Path:
    p = Path(settings.get("nxrecomp", "cache_dir")) / "shader_corpus"
    p.mkdir(parents=True, exist_ok=True)
    return p


def _tool_id() -> str:
    r = subprocess.run([nvcc_path(), "--version"], capture_output=True, text=True)
    return r.stdout.strip().splitlines()[-1] + "|" + nvtools.PTXAS_WHEEL[0]


def _run(cmd: list[str], what: str) -> None:
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError(f"{what} failed ({' '.join(cmd)}):\n{r.stderr[-2000:]}")


def to_sm53_ptx(ptx: str) -> str:
    ptx = re.sub(r"^\.version\s+\S+", ".version 8.0", ptx, count=1, flags=re.M)
    return re.sub(r"^\.target\s+sm_\d+", ".target sm_53", ptx, count=1, flags=re.M)


def compile_cubin(source: str, isa: int, opt: str) -> bytes:
    """The cubin of ``source`` for sm_``isa`` at ``opt`` (cached by content hash)."""
    assert isa in (53, 86) and opt in OPTS
    key = hashlib.sha256(f"{_tool_id()}\0{isa}\0{opt}\0{source}".encode()).hexdigest()[:32]
    out = _cache_dir() / f"{key}.cubin"
    if out.is_file():
        return out.read_bytes()
    nvcc = nvcc_path()
    with tempfile.TemporaryDirectory() as tmp:
        src = Path(tmp) / "k.cu"
        src.write_text(source)
        flags = ["-O3"] if opt == "O3" else ["-G", "-O0"]
        if isa == 86:
            _run([nvcc, "-cubin", "-arch=sm_86", *flags, str(src), "-o", f"{tmp}/k.cubin"], "nvcc")
        else:
            _run([nvcc, "-ptx", "-arch=compute_75", *flags, str(src), "-o", f"{tmp}/k.ptx"], "nvcc -ptx")
            Path(f"{tmp}/k53.ptx").write_text(to_sm53_ptx(Path(f"{tmp}/k.ptx").read_text()))
            pflags = ["-O3"] if opt == "O3" else ["-O0", "-g"]
            _run([str(nvtools.ptxas_path()), f"-arch=sm_53", *pflags, f"{tmp}/k53.ptx", "-o", f"{tmp}/k.cubin"],
                 "ptxas sm_53")
        data = Path(f"{tmp}/k.cubin").read_bytes()
    part = out.with_suffix(".part")
    part.write_bytes(data)
    os.replace(part, out)
    return data


def build(source: str, isa: int, opt: str) -> dict:
    """{kernel name: shader_svc.cubin.Kernel} of a compiled source."""
    return cubin_kernels(compile_cubin(source, isa, opt), f"<corpus sm_{isa} {opt}>")
