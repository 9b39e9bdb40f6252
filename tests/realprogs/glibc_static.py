"""Our C test programs linked statically against Debian 12's arm64 glibc (libc6-dev's libc.a and
crt objects, libgcc-12-dev's libgcc/crtbeginT), fetched with apt at test time: the same source
as the musl build, with glibc's own pthreads, condition variables (FUTEX_WAIT_BITSET), clone3
first and clone after its ENOSYS, rseq and robust lists.

Compiled by zig's clang for ``aarch64-linux-gnu`` against the Debian headers (``-nostdinc``: not
zig's bundled glibc headers), linked by zig's ``ld.lld`` in the order gcc's driver uses for
``-static`` (crt1, crti, crtbeginT, objects, libc + libgcc + libgcc_eh as a group, crtend, crtn).
Cached under ``<cache_dir>/realprogs/bin`` by a hash of the source, the packages and the flags."""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
from pathlib import Path

from nxrecomp.common import debian
from nxrecomp.common.errors import NxError
from tests.realprogs import sources

PACKAGES = ("libc6-dev", "libgcc-12-dev")


def build(source: str) -> Path:
    """``src/<source>`` as a static glibc aarch64 program."""
    libc = debian.fetch("libc6-dev", "arm64")
    gcc = debian.fetch("libgcc-12-dev", "arm64")
    lib = libc / "usr/lib/aarch64-linux-gnu"
    gdirs = sorted((gcc / "usr/lib/gcc/aarch64-linux-gnu").iterdir())
    if not gdirs:
        raise NxError(f"{gcc}: no usr/lib/gcc/aarch64-linux-gnu/<version> in libgcc-12-dev")
    g = gdirs[-1]
    src = sources.SRC / source
    cflags = [
        "-target",
        "aarch64-linux-gnu",
        "-O2",
        "-g0",
        "-nostdinc",
        "-isystem",
        str(g / "include"),
        "-isystem",
        str(libc / "usr/include/aarch64-linux-gnu"),
        "-isystem",
        str(libc / "usr/include"),
    ]
    h = hashlib.sha256(repr((cflags[:5], sources._zig_version())).encode())
    h.update(src.read_bytes())
    for root in (libc, gcc):
        h.update((root / ".unpacked").read_bytes())  # the .deb's file name: package and version
    out = sources.cache_root() / "bin" / f"{src.stem}-glibc-aarch64-{h.hexdigest()[:16]}"
    if out.exists():
        return out
    out.parent.mkdir(exist_ok=True)
    obj = out.with_name(f".{out.name}.{os.getpid()}.o")
    tmp = out.with_name(f".{out.name}.{os.getpid()}")
    zig = [sys.executable, "-m", "ziglang"]
    try:
        r = subprocess.run([*zig, "cc", *cflags, "-c", str(src), "-o", str(obj)], capture_output=True, text=True, timeout=600)
        if r.returncode:
            raise NxError(f"compiling {src.name} against Debian's glibc failed: {r.stderr[-1500:]}")
        r = subprocess.run(
            [
                *zig,
                "ld.lld",
                "-static",
                "-m",
                "aarch64linux",
                "-o",
                str(tmp),
                str(lib / "crt1.o"),
                str(lib / "crti.o"),
                str(g / "crtbeginT.o"),
                str(obj),
                "--start-group",
                str(lib / "libc.a"),
                str(g / "libgcc.a"),
                str(g / "libgcc_eh.a"),
                "--end-group",
                str(g / "crtend.o"),
                str(lib / "crtn.o"),
            ],
            capture_output=True,
            text=True,
            timeout=600,
        )
        if r.returncode:
            raise NxError(f"linking {src.name} with Debian's static glibc failed: {r.stderr[-1500:]}")
        os.replace(tmp, out)
    finally:
        obj.unlink(missing_ok=True)
        tmp.unlink(missing_ok=True)
    return out
