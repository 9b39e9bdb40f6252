"""The one settings table.

Every key of every process is declared once, with its default and a line of help, in a
``SETTINGS`` list of its package's ``settings`` module (``recompiler/settings.py``,
``relay/settings.py``, ...).  This module gathers them into one table and resolves a value in
this order: ``NXRECOMP_<SECTION>_<KEY>`` environment variable, then ``nxrecomp.ini`` (the file
named by ``NXRECOMP_CONFIG``, else ``./nxrecomp.ini``), then the default.
``nxrecomp settings`` prints the table.
"""

from __future__ import annotations

import configparser
import importlib
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

# The modules that contribute rows, found by name: each holds data only (a ``SETTINGS`` list)
# and imports nothing of the project but this module (tests/test_structure.py checks), so the
# common layer reads the upper layers' rows without depending on their code.  Order = order of
# the printed table.
SECTION_MODULES = (
    "nxrecomp.common.settings",
    "recompiler.settings",
    "cpu_host.settings",
    "gpu_host.settings",
    "shader_svc.settings",
    "relay.settings",
)


@dataclass(frozen=True)
class Setting:
    section: str
    key: str
    default: Any
    help: str
    parse: Callable[[str], Any] = str

    @property
    def env_name(self) -> str:
        return f"NXRECOMP_{self.section}_{self.key}".upper()


class SettingsError(ValueError):
    pass


def parse_bool(text: str) -> bool:
    t = text.strip().lower()
    if t in ("1", "true", "yes", "on"):
        return True
    if t in ("0", "false", "no", "off"):
        return False
    raise ValueError(f"not a boolean: {text!r}")


def _repo_cache_default() -> str:
    return str(Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "nxrecomp")


# Rows of the common section.
SETTINGS = [
    Setting("nxrecomp", "log_level", "warning", "log level of every process: debug, info, warning, error"),
    Setting("nxrecomp", "log_file", "", "write logs to this file as well as stderr (empty: stderr only)"),
    Setting("nxrecomp", "cache_dir", _repo_cache_default(), "root of caches (compiled shards, downloads, shaders)"),
    Setting("nxrecomp", "progress", True, "show progress bars on a terminal", parse_bool),
]


def all_settings() -> list[Setting]:
    rows: list[Setting] = []
    for name in SECTION_MODULES:
        try:
            mod = importlib.import_module(name)
        except ModuleNotFoundError as e:
            if e.name != name:  # a package without a settings module has no rows
                raise
            continue
        rows.extend(getattr(mod, "SETTINGS", []))
    return rows


def _ini() -> configparser.ConfigParser:
    cp = configparser.ConfigParser()
    path = Path(os.environ.get("NXRECOMP_CONFIG", "nxrecomp.ini"))
    if path.is_file():
        try:
            cp.read(path)
        except configparser.Error as e:
            raise SettingsError(f"{path}: {e}") from None
    return cp


def get(section: str, key: str) -> Any:
    """Value of ``section.key`` from the environment, nxrecomp.ini or the default."""
    for s in all_settings():
        if s.section == section and s.key == key:
            break
    else:
        raise SettingsError(f"unknown setting {section}.{key}")
    raw = os.environ.get(s.env_name)
    origin = s.env_name
    if raw is None:
        cp = _ini()
        if cp.has_option(section, key):
            raw = cp.get(section, key)
            origin = f"nxrecomp.ini [{section}] {key}"
    if raw is None:
        return s.default
    try:
        return s.parse(raw)
    except ValueError as e:
        raise SettingsError(f"{origin}: {e}") from None


def table() -> str:
    lines = [f"{'setting':34} {'env variable':40} default / help"]
    for s in all_settings():
        lines.append(f"{s.section + '.' + s.key:34} {s.env_name:40} {s.default!r}")
        lines.append(f"{'':75} {s.help}")
    return "\n".join(lines)
