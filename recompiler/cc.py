"""The C compiler: a system clang where present (``NXRECOMP_RECOMPILER_CC``, else ``clang``),
else clang from the ``ziglang`` wheel, which works on a bare machine.  gcc is not used: it
lacks ``musttail``, which tail calls in lifted code need so they do not grow the host stack."""
from __future__ import annotations

import shutil
import subprocess
import sys
from functools import lru_cache

from nxrecomp import settings
from nxrecomp.errors import NxError


@lru_cache(maxsize=1)
def compiler() -> tuple[str, ...]:
    want = settings.get("recompiler", "cc")
    if want and want != "auto":
        return tuple(want.split())
    for name in ("clang", "clang-19", "clang-16", "clang-15", "clang-14"):
        p = shutil.which(name)
        if p:
            return (p,)
    try:
        import ziglang  # noqa: F401  (only whether the wheel is installed)
    except ImportError:
        raise NxError("no C compiler: install clang or the ziglang wheel (pip install ziglang)") from None
    return (sys.executable, "-m", "ziglang", "cc", "-target", "x86_64-linux-gnu")


def identity() -> str:
    """Version text of the compiler (part of every object's cache key)."""
    r = subprocess.run([*compiler(), "--version"], capture_output=True, text=True)
    return (r.stdout or r.stderr).splitlines()[0] if (r.stdout or r.stderr) else "unknown"


def run(args: list[str], what: str) -> None:
    r = subprocess.run([*compiler(), *args], capture_output=True, text=True)
    if r.returncode != 0:
        raise NxError(f"C compiler failed on {what}: {r.stderr.strip()[-2000:]}")
