"""NVIDIA's Maxwell-capable disassembler as a test oracle.

nvdisasm 13 dropped Maxwell; the PyPI ``nvidia-cuda-nvdisasm`` wheels are 13.x only (no -cu11/-cu12
nvdisasm wheels on the index we reach).  Debian bookworm non-free ships CUDA 11.8's
``nvidia-cuda-toolkit``, whose .deb holds ``./usr/bin/nvdisasm`` (static but for libc/libpthread,
runs on any x86-64 Linux).  It is downloaded at test time with ``apt-get download`` under a
private sources list / state / cache folder (the system's apt setup is not touched), and only that
one file is taken out of the package into ``<cache_dir>/nvidia/debian-nvdisasm-11.8``.  Nothing of
NVIDIA's is committed or linked.

``ptxas`` for sm_53 is the PyPI one of ``nvtools`` (beside this file) (12.9 still assembles Maxwell).
"""

from __future__ import annotations

import fcntl
import os
import re
import struct
import subprocess
import tarfile
import tempfile
from pathlib import Path

from nxrecomp.common.errors import NxError
from nvtools import OracleLine, ToolUnavailable, _tools_dir

DEB_PACKAGE = "nvidia-cuda-toolkit"
DEB_VERSION = "11.8.89~11.8.0-5~deb12u1"
DEB_SOURCE = "deb http://deb.debian.org/debian bookworm non-free"
DEB_MEMBER = "./usr/bin/nvdisasm"
NOP = 0x50B0000000070F00
CTRL_DEFAULT = 0x001FC400FE2007F6  # stall/yield values ptxas uses; any control word decodes
CHUNK = 96  # words per nvdisasm run (it reports every illegal word of a run)


def _apt(args: list[str], root: Path) -> subprocess.CompletedProcess:
    o = [
        f"-oDir::Etc::SourceList={root / 'sources.list'}",
        "-oDir::Etc::SourceParts=/dev/null",
        f"-oDir::State::Lists={root / 'lists'}",
        f"-oDir::Cache={root / 'cache'}",
        "-oAPT::Architecture=amd64",
        "-oAPT::Architectures=amd64",
        "-oDebug::NoLocking=1",
    ]
    return subprocess.run(["apt-get", *o, *args], capture_output=True, text=True, cwd=root, timeout=900)


def nvdisasm53_path() -> Path:
    """nvdisasm 11.8 (knows ``-b SM53``), fetched once from Debian into the cache."""
    base = _tools_dir()
    exe = base / "debian-nvdisasm-11.8" / "nvdisasm"
    if exe.is_file() and os.access(exe, os.X_OK):
        return exe
    with open(base / ".lock53", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if exe.is_file():
            return exe
        with tempfile.TemporaryDirectory(dir=base) as tmp:
            root = Path(tmp)
            (root / "lists" / "partial").mkdir(parents=True)
            (root / "cache" / "archives" / "partial").mkdir(parents=True)
            (root / "sources.list").write_text(DEB_SOURCE + "\n")
            try:
                r = _apt(["update"], root)
                if r.returncode == 0:
                    r = _apt(["download", f"{DEB_PACKAGE}={DEB_VERSION}"], root)
            except (OSError, subprocess.TimeoutExpired) as e:
                raise ToolUnavailable(f"apt-get download {DEB_PACKAGE}: {e}") from e
            debs = list(root.glob(f"{DEB_PACKAGE}_*.deb"))
            if r.returncode != 0 or not debs:
                raise ToolUnavailable(
                    f"apt-get download {DEB_PACKAGE}={DEB_VERSION} failed: {(r.stderr or r.stdout).strip()[-300:]}"
                )
            exe.parent.mkdir(parents=True, exist_ok=True)
            part = exe.with_name("nvdisasm.part")
            with open(part, "wb") as out:
                tar = subprocess.Popen(["dpkg-deb", "--fsys-tarfile", str(debs[0])], stdout=subprocess.PIPE)
                with tarfile.open(fileobj=tar.stdout, mode="r|") as tf:
                    for m in tf:
                        if m.name == DEB_MEMBER:
                            src = tf.extractfile(m)
                            assert src is not None
                            out.write(src.read())
                            break
                    else:
                        raise ToolUnavailable(f"{debs[0].name} holds no {DEB_MEMBER}")
                while tar.stdout.read(1 << 20):
                    pass  # drain, so dpkg-deb does not die of a broken pipe
                tar.stdout.close()
                tar.wait()
            part.chmod(0o755)
            os.replace(part, exe)
    return exe


_LINE = re.compile(r"^\s*/\*([0-9a-f]{4,})\*/(.*)$")
_HEX = re.compile(r"/\* 0x[0-9a-f]{16} \*/")


def normalize(text: str) -> str:
    """One instruction's text without the listing's punctuation: the dual-issue braces ('{'
    before the first of a pair, '}' after the second, which has no ';'), the ';', extra spaces.
    Braces inside operands (DEPBAR {1}) stay."""
    t = _HEX.sub("", text).strip()
    if t.startswith("{"):
        t = t[1:].strip()
    if ";" in t:
        t = t[: t.rindex(";")]
    elif t.endswith("}"):
        t = t[:-1]
    return re.sub(r"\s+", " ", t).strip()


def parse_listing(text: str) -> dict[int, OracleLine]:
    """Instruction lines of an SM53 listing: {byte address: OracleLine}.  Control words have
    no address and are skipped."""
    out: dict[int, OracleLine] = {}
    for line in text.splitlines():
        m = _LINE.match(line)
        if not m:
            continue
        body = normalize(m.group(2))
        pred = ""
        if body.startswith("@"):
            pred, _, body = body.partition(" ")
        op, _, rest = body.partition(" ")
        out[int(m.group(1), 16)] = OracleLine(pred, op, rest.strip())
    return out


def pack_stream(insts: list[int], controls: list[int] | None = None) -> list[int]:
    """Instruction words -> the 64-bit stream with a control word before each group of three
    (padding the last group with NOPs)."""
    out: list[int] = []
    for g in range(0, len(insts), 3):
        group = insts[g : g + 3] + [NOP] * (3 - len(insts[g : g + 3]))
        out.append(controls[g // 3] if controls else CTRL_DEFAULT)
        out += group
    return out


def nvdisasm53_raw(insts: list[int], controls: list[int] | None = None, chunk: int = CHUNK) -> list[OracleLine | None]:
    """Disassemble raw instruction words (control words added; ``controls``: one per group of
    three).  A word nvdisasm refuses gives None.  nvdisasm prints nothing once it meets an
    illegal word, so the words go in small chunks (run two at a time); in a chunk the refused
    word is replaced by a NOP and the chunk run again."""
    from concurrent.futures import ThreadPoolExecutor

    chunk -= chunk % 3
    ctl = controls or [CTRL_DEFAULT] * ((len(insts) + 2) // 3)
    parts = [(insts[i : i + chunk], ctl[i // 3 : (i + chunk) // 3]) for i in range(0, len(insts), chunk)]
    with ThreadPoolExecutor(max_workers=max(1, min(4, os.cpu_count() or 1))) as ex:
        done = list(ex.map(lambda p: _raw_chunk(*p), parts))
    return [line for part in done for line in part]


def _raw_chunk(insts: list[int], controls: list[int]) -> list[OracleLine | None]:
    cur, controls = list(insts), list(controls)
    refused: set[int] = set()
    exe = str(nvdisasm53_path())
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "raw.bin"
        for _ in range(2 * len(insts) + 2):
            path.write_bytes(b"".join(struct.pack("<Q", w) for w in pack_stream(cur, controls)))
            r = subprocess.run([exe, "-b", "SM53", "-hex", str(path)], capture_output=True, text=True)
            bad = {int(a, 16) // 8 for a in re.findall(r"at address 0x([0-9a-f]+)", r.stderr)}
            if r.returncode == 0 and not bad:
                lines = parse_listing(r.stdout)
                return [None if i in refused else lines.get(_addr(i)) for i in range(len(insts))]
            if not bad:
                raise NxError(f"nvdisasm failed: {r.stderr.strip()[-300:]}")
            for slot in bad:
                if slot % 4 == 0:
                    raise NxError(f"nvdisasm refused a control word at slot {slot}")
                i = slot // 4 * 3 + slot % 4 - 1
                if i >= len(cur) or cur[i] == NOP:  # a NOP refused: its control bits are what nvdisasm objects to
                    sh = 21 * (i % 3)
                    controls[i // 3] = (controls[i // 3] & ~(0x1FFFFF << sh)) | (CTRL_DEFAULT & (0x1FFFFF << sh))
                    if i >= len(cur):  # padding
                        continue
                refused.add(i)
                cur[i] = NOP
    raise NxError("nvdisasm kept refusing")


def _addr(i: int) -> int:
    """Byte address of instruction i in a packed stream."""
    return (i // 3 * 4 + i % 3 + 1) * 8


def raw_addr(i: int, chunk: int = CHUNK) -> int:
    """Address nvdisasm53_raw gave instruction i (each chunk is its own stream from 0)."""
    return _addr(i % (chunk - chunk % 3))


def nvdisasm53_cubin(cubin: bytes) -> dict[str, dict[int, OracleLine]]:
    """Every kernel of an sm_53 cubin: {kernel: {byte address in .text: line}}."""
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "k.cubin"
        path.write_bytes(cubin)
        r = subprocess.run([str(nvdisasm53_path()), "-c", str(path)], capture_output=True, text=True)
        if r.returncode != 0:
            raise NxError(f"nvdisasm failed: {r.stderr.strip()[-300:]}")
    out: dict[str, dict[int, OracleLine]] = {}
    for chunk in re.split(r"\n\s*\.section\s+\.text\.", r.stdout)[1:]:
        out[chunk.split(",", 1)[0].strip()] = parse_listing(chunk)
    return out


def nvdisasm53_code(code: bytes) -> dict[int, OracleLine]:
    """A kernel's raw ``.text`` (control words included) disassembled: {byte address: line}.
    Raw mode prints branch targets as addresses (the cubin mode prints labels)."""
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "code.bin"
        path.write_bytes(code)
        r = subprocess.run([str(nvdisasm53_path()), "-b", "SM53", str(path)], capture_output=True, text=True)
        if r.returncode != 0:
            raise NxError(f"nvdisasm failed: {r.stderr.strip()[-300:]}")
    return parse_listing(r.stdout)
