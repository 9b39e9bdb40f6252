"""``manifest.json``: the bundle's description (see the package's docstring).  Written whole
and atomically (a temporary file renamed in), so a reader never sees half of one; a folder
without a readable manifest is "not a bundle", named with the file."""

from __future__ import annotations

import json
import os
from pathlib import Path

from nxrecomp.common.errors import NxError

MANIFEST_FILE = "manifest.json"
FORMAT = 1  # the manifest's own "format" field
LINUX = "linux-aarch64"  # the kinds of bundle ("kind")
HORIZON = "horizon"


def write(bundle: str | Path, manifest: dict) -> None:
    """Write ``bundle/manifest.json`` atomically."""
    path = Path(bundle) / MANIFEST_FILE
    tmp = path.with_name(MANIFEST_FILE + ".tmp")
    tmp.write_text(json.dumps(manifest, indent=1))
    os.replace(tmp, path)


def read(bundle: str | Path) -> dict:
    """The manifest of the bundle at ``bundle``; an ``NxError`` naming the file if there is none
    or it is not JSON."""
    path = Path(bundle) / MANIFEST_FILE
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError) as e:
        raise NxError(f"not a bundle: {e}", path=str(path)) from None


def kind(bundle: str | Path) -> str | None:
    """The bundle's kind, or None where it has no readable manifest (yet)."""
    try:
        return read(bundle).get("kind")
    except NxError:
        return None
