"""The native launcher: ``BUNDLE/nxrun ARGV0 ARGS...`` starts a recompiled Linux program in
~3 ms (a small C program, ``launcher.c``) where the Python runner takes ~130 ms (Python, cffi).

``install(bundle, manifest, hwcap)`` writes ``BUNDLE/launch.txt`` (``nxrecomp/bundle/launch.py``:
what the launcher maps and where, from the manifest's linked image; the initial stack it builds
is byte-identical to ``cpu_host.linux.stack.initial_stack``'s) and copies the launcher into the
bundle.  The launcher is compiled once per content (its source, the runtime
header it includes, the compiler and flags) into ``cache_dir/launcher/<hash>/nxrun``.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
from pathlib import Path

from cpu_host.linux.stack import HWCAP2_DEFAULT  # AT_HWCAP2 from the lifter's feature table
from nxrecomp.common import settings
from nxrecomp.bundle import launch

HERE = Path(__file__).resolve().parent
RUNTIME_DIR = HERE.parent / "runtime" / "core"  # the shared headers
LINUX_DIR = HERE.parent / "runtime" / "linux"  # the Linux personality's (the launcher starts Linux programs)
SOURCES = [HERE / "launcher.c", RUNTIME_DIR / "nxrt.h", RUNTIME_DIR / "lift_miss.h", LINUX_DIR / "linux_syscalls.h"]
# PIE: a launcher at a fixed address would sit where non-PIE guests (busybox: 0x400000) go
FLAGS = ["-O2", "-fPIE", "-pie", "-fno-sanitize=all", "-w", f"-I{RUNTIME_DIR}", f"-I{LINUX_DIR}"]
LIBS = ["-ldl", "-lpthread"]
NAME = "nxrun"


def _key(compiler: tuple[str, ...]) -> str:
    h = hashlib.sha256()
    for p in SOURCES:
        h.update(p.read_bytes())
    h.update("\0".join([*compiler, *FLAGS, *LIBS]).encode())
    try:
        from importlib.metadata import version

        h.update(version("ziglang").encode())
    except Exception:  # no wheel: a system clang; its path is in the key already
        pass
    return h.hexdigest()[:24]


def compiled() -> Path:
    """Path of the launcher built from the current sources (compiled on first use, cached)."""
    from recompiler import cc

    key = _key(cc.compiler())
    out = Path(settings.get("nxrecomp", "cache_dir")) / "launcher" / key / NAME
    if out.exists():
        return out
    out.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=".nxrun-", dir=out.parent)
    os.close(fd)
    try:
        cc.run([str(HERE / "launcher.c"), "-o", tmp, *FLAGS, *LIBS], "the native launcher")
        os.chmod(tmp, 0o755)
        os.replace(tmp, out)  # atomic: two first uses at once both end with a whole file
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
    return out


def install(bundle: str | Path, manifest: dict, hwcap: int, hwcap2: int = HWCAP2_DEFAULT) -> Path:
    """Make ``bundle/nxrun`` and ``bundle/launch.txt`` current; returns the launcher's path."""
    bundle = Path(bundle)
    launch.write(bundle, manifest, hwcap, hwcap2)
    exe = bundle / NAME
    launch.write_if_changed(exe, compiled().read_bytes(), 0o755)
    return exe
