"""Small C libraries of the project (texture decoders, the GPU packet decoder and replay, the
audio DSP, the relay's fast path), built once per content and loaded through cffi.

Each is compiled by the ``ziglang`` wheel's clang (works on a bare machine; a component may name
another compiler) into ``<nxrecomp.cache_dir>/<folder>/<name>-<hash>.so``, the hash covering the
compiler's command, the flags, every source and every extra input (headers, generated text), so
an edit rebuilds and nothing else does.  The library is written under a temporary name and
renamed in: a build that fails or is killed leaves nothing a later run would load.  A failed
compile is an ``NxError`` naming the sources and quoting the compiler.
"""

from __future__ import annotations

import hashlib
import os
import shlex
import subprocess
import sys
import tempfile
import threading
from pathlib import Path
from typing import Any, Callable

import cffi

from nxrecomp.common import settings
from nxrecomp.common.errors import NxError

ZIG_CC = [sys.executable, "-m", "ziglang", "cc", "-target", "x86_64-linux-gnu"]
SHARED_FLAGS = ["-shared", "-fPIC", "-fno-sanitize=all"]


def build_shared(
    name: str,
    sources: list[Path],
    flags: list[str],
    folder: str,
    *,
    inputs: tuple[Path, ...] = (),
    generated: dict[str, str] | None = None,
    includes: tuple[Path, ...] = (),
    cc: list[str] | None = None,
    cc_setting: str = "",
) -> Path:
    """The shared library built from ``sources`` (cached by content; see the module's text).
    ``generated`` maps header names to text written into an include folder of the build;
    ``cc_setting`` names the setting a compiler came from, for the error when it cannot run."""
    cc = list(cc or ZIG_CC)
    # the interpreter's path is not part of the compiler's identity (a venv elsewhere, same zig)
    h = hashlib.sha256(" ".join(["python" if a == sys.executable else a for a in cc] + flags).encode())
    for p in [*sources, *inputs]:
        h.update(Path(p).read_bytes())
    for k, text in sorted((generated or {}).items()):
        h.update(k.encode() + b"\0" + text.encode())
    out_dir = Path(settings.get("nxrecomp", "cache_dir")) / folder
    out_dir.mkdir(parents=True, exist_ok=True)
    out = out_dir / f"{name}-{h.hexdigest()[:16]}.so"
    if out.exists():
        return out
    tmp = out.with_name(f"{out.name}.{os.getpid()}.{threading.get_ident()}.tmp")
    with tempfile.TemporaryDirectory(prefix=f"{name}-") as gen:
        for k, text in (generated or {}).items():
            Path(gen, k).write_text(text)
        inc = [a for d in ([Path(gen)] if generated else []) + list(includes) for a in ("-I", str(d))]
        cmd = [*cc, *flags, *inc, "-o", str(tmp), *(str(s) for s in sources)]
        try:
            r = subprocess.run(cmd, capture_output=True, text=True)
        except OSError as e:
            raise NxError(f"{cc_setting or 'the C compiler'} {cc[0]!r}: {e.strerror}") from None
    if r.returncode != 0:
        tmp.unlink(missing_ok=True)
        names = ", ".join(Path(s).name for s in sources)
        raise NxError(f"compiling {names} failed ({shlex.join(cmd[:5])} ...): {r.stderr.strip()[-800:]}")
    os.replace(tmp, out)
    return out


class Loaded:
    """One library per process, built and opened by whichever thread asks first."""

    def __init__(self, cdef: str, build: Callable[[], Path]) -> None:
        self.cdef, self.build = cdef, build
        self._lock = threading.Lock()
        self._pair: tuple[Any, Any] | None = None

    def __call__(self) -> tuple[Any, Any]:
        with self._lock:
            if self._pair is None:
                ffi = cffi.FFI()
                ffi.cdef(self.cdef)
                self._pair = (ffi, ffi.dlopen(str(self.build())))
            return self._pair
