"""Fetch Debian packages (any architecture) into the cache without touching the system's apt
state, and unpack them.  Used by tests, benchmarks and the main job to get programs nobody here
wrote (e.g. ``busybox-static:arm64``) at run time; nothing fetched is ever committed."""

from __future__ import annotations

import fcntl
import os
import re
import shutil
import subprocess
from pathlib import Path

from nxrecomp.common import settings
from nxrecomp.common.errors import NxError


class RegistryUnreachable(NxError):
    """The Debian mirror could not be reached (tests skip loudly on this)."""


def _cache() -> Path:
    p = Path(settings.get("nxrecomp", "cache_dir")) / "debian"
    p.mkdir(parents=True, exist_ok=True)
    return p


def _apt_opts(arch: str, base: Path, suite: str | None = None) -> list[str]:
    """apt's options for a private state under ``base``; ``suite``: the packages of that Debian
    release instead of the system's sources (its own sources list, under ``base``)."""
    own = []
    if suite is not None:
        src = base / "sources.list"
        src.write_text(f"deb [signed-by={KEYRING}] {MIRROR} {suite} main\n")
        own = [f"-oDir::Etc::SourceList={src}", "-oDir::Etc::SourceParts=/nonexistent"]
    return [
        *own,
        f"-oAPT::Architecture={arch}",
        f"-oAPT::Architectures={arch}",
        f"-oDir::State::Lists={base}/lists",
        f"-oDir::Cache={base}/cache",
        "-oDebug::NoLocking=1",
        "-oAPT::Sandbox::User=root",
        "-oAcquire::Retries=3",  # a mirror's one-off failure must not skip a test (apt's own retry)
    ]


MIRROR = "http://deb.debian.org/debian"
KEYRING = "/usr/share/keyrings/debian-archive-keyring.gpg"  # (debian-archive-keyring: every release's keys)
SUITE = re.compile(r"[a-z]+(-[a-z]+)?")


def fetch(package: str, arch: str, suite: str | None = None) -> Path:
    """Download ``package`` for ``arch`` and unpack it; return the root folder it was unpacked in.
    ``suite``: from that Debian release (e.g. "bullseye": Debian 11's packages, built with Go
    1.15) instead of the system's.  Cached: a second call costs nothing."""
    if suite is not None and not SUITE.fullmatch(suite):
        raise NxError(f"{suite!r} is no Debian suite name (such as bullseye)", field="suite")
    base = _cache() / (arch if suite is None else f"{arch}-{suite}")
    root = base / "root" / package
    if (root / ".unpacked").exists():
        return root
    for d in ("lists/partial", "cache/archives/partial", "debs"):
        (base / d).mkdir(parents=True, exist_ok=True)
    with open(base / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if (root / ".unpacked").exists():
            return root
        opts = _apt_opts(arch, base, suite)
        if not any((base / "lists").glob("*Packages*")):
            r = subprocess.run(["apt-get", *opts, "update"], capture_output=True, text=True)
            if r.returncode != 0 or not any((base / "lists").glob("*Packages*")):
                raise RegistryUnreachable(f"apt-get update for {arch} failed: {r.stderr.strip()[-300:]}")
        debs = base / "debs"
        before = set(debs.glob(f"{package}_*.deb"))
        if not before:
            r = subprocess.run(["apt-get", *opts, "download", package], cwd=debs, capture_output=True, text=True)
            if r.returncode != 0:
                raise RegistryUnreachable(f"apt-get download {package}:{arch} failed: {r.stderr.strip()[-300:]}")
        found = sorted(debs.glob(f"{package}_*.deb"))
        if not found:
            raise NxError(f"apt-get download {package}:{arch} produced no .deb")
        tmp = root.with_name(root.name + ".tmp")
        shutil.rmtree(tmp, ignore_errors=True)
        tmp.mkdir(parents=True)
        subprocess.run(["dpkg-deb", "-x", str(found[-1]), str(tmp)], check=True)
        shutil.rmtree(root, ignore_errors=True)
        os.replace(tmp, root)
        (root / ".unpacked").write_text(found[-1].name)
    return root


def busybox(arch: str = "arm64") -> Path:
    """Path of Debian 12's static busybox for ``arch``."""
    return fetch("busybox-static", arch) / "bin" / "busybox"
