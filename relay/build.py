"""Compile the relay's C sources into shared libraries, cached by content hash
(``nxrecomp.common.clib``: ``<nxrecomp.cache_dir>/relay/<name>-<hash>.so``, written under a temporary
name and renamed, so two processes building at once never load a half-written library).

The compiler is clang from the ``ziglang`` wheel (a pinned dependency, so it is there on a bare
machine); ``relay.cc`` names another (e.g. ``cc``).
"""

from __future__ import annotations

import shlex
from pathlib import Path

from nxrecomp.common import clib, settings

HERE = Path(__file__).resolve().parent
FLAGS = ["-O2", *clib.SHARED_FLAGS, "-Wall"]


def build(name: str, sources: list[str]) -> Path:
    """Shared library built from ``relay/<sources>``; rebuilt only when a source or flag changes."""
    cc = settings.get("relay", "cc")
    return clib.build_shared(
        name,
        [HERE / s for s in sources],
        FLAGS,
        "relay",
        inputs=(HERE / "core.h",),
        includes=(HERE,),
        cc=shlex.split(cc) if cc else None,
        cc_setting="relay.cc",
    )
