"""Compile the relay's C sources into shared libraries, cached by content hash.

The compiler is clang from the ``ziglang`` wheel (a pinned dependency, so it is there on a bare
machine); ``relay.cc`` names another (e.g. ``cc``).  The result lands in
``<nxrecomp.cache_dir>/relay/<name>-<hash>.so``, written to a temporary name and renamed, so two
processes building at once never load a half-written library.
"""
from __future__ import annotations

import hashlib
import os
import shlex
import subprocess
import sys
from pathlib import Path

from nxrecomp import settings
from nxrecomp.errors import NxError

HERE = Path(__file__).resolve().parent
FLAGS = ["-O2", "-shared", "-fPIC", "-fno-sanitize=all", "-Wall"]


def _compiler() -> list[str]:
    cc = settings.get("relay", "cc")
    if cc:
        return shlex.split(cc)
    return [sys.executable, "-m", "ziglang", "cc", "-target", "x86_64-linux-gnu"]


def build(name: str, sources: list[str]) -> Path:
    """Shared library built from ``relay/<sources>``; rebuilt only when a source or flag changes."""
    cc = _compiler()
    # the interpreter's path is not part of the compiler's identity (a venv elsewhere, same zig)
    h = hashlib.sha256(" ".join(["python" if a == sys.executable else a for a in cc] + FLAGS).encode())
    for s in sources + ["core.h"]:
        h.update((HERE / s).read_bytes())
    out_dir = Path(settings.get("nxrecomp", "cache_dir")) / "relay"
    out_dir.mkdir(parents=True, exist_ok=True)
    out = out_dir / f"{name}-{h.hexdigest()[:16]}.so"
    if out.exists():
        return out
    tmp = out.with_name(f"{out.name}.{os.getpid()}.tmp")
    cmd = [*cc, *FLAGS, "-I", str(HERE), "-o", str(tmp), *(str(HERE / s) for s in sources)]
    try:
        r = subprocess.run(cmd, capture_output=True, text=True)
    except OSError as e:
        raise NxError(f"relay.cc {cc[0]!r}: {e.strerror}") from None
    if r.returncode != 0:
        tmp.unlink(missing_ok=True)
        raise NxError(f"compiling {', '.join(sources)} failed ({shlex.join(cmd[:5])} ...): {r.stderr.strip()[-600:]}")
    os.replace(tmp, out)
    return out
