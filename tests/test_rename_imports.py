"""scripts/rename_imports.py, the rewrite of issue 33's package moves that the lead re-runs
after merging branches written against the old paths: each form of import it must rewrite,
text it must leave alone (setting keys that share a module's name), and a second run changes
nothing."""

from __future__ import annotations

import importlib.util
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _rewrite():
    spec = importlib.util.spec_from_file_location("rename_imports", ROOT / "scripts" / "rename_imports.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod.rewrite


OLD = """from nxrecomp import settings
from nxrecomp import log as nxlog
    from nxrecomp import frame_stats, run_watch, settings  # noqa: E402
from nxrecomp.errors import NxError
from recompiler.link import ADDRESS_LIMIT, LinkedImage, link
from cpu_host.linux.memory import (BRK_RESERVE,
                                   Region)
from cpu_host.linux import memory
from cpu_host.launcher import install, not_runnable
import nxrecomp.supervisor
x = "nxrecomp.demo_job"; y = nxrecomp.settings.get("nxrecomp", "log_level"); z = "nxrecomp.log_level"
see nxrecomp/settings.py and cpu_host/runtime/nxrt.h, python -m nxrecomp.cli replay
"""
NEW = """from nxrecomp.common import settings
from nxrecomp.common import log as nxlog
    from nxrecomp.app import frame_stats, run_watch
    from nxrecomp.common import settings  # noqa: E402
from nxrecomp.common.errors import NxError
from recompiler.link import ADDRESS_LIMIT, link
from nxrecomp.bundle.image import LinkedImage
from nxrecomp.bundle.memory_map import (BRK_RESERVE,
                                   Region)
from nxrecomp.bundle import memory_map as memory
from cpu_host.launcher import install
from nxrecomp.bundle.launch import not_runnable
import nxrecomp.app.supervisor
x = "nxrecomp.app.demo_job"; y = nxrecomp.common.settings.get("nxrecomp", "log_level"); z = "nxrecomp.log_level"
see nxrecomp/common/settings.py and cpu_host/runtime/core/nxrt.h, python -m nxrecomp.app.cli replay
"""


def test_every_form_is_rewritten_and_setting_keys_are_not():
    assert _rewrite()(OLD) == NEW


def test_a_second_run_changes_nothing():
    rewrite = _rewrite()
    assert rewrite(NEW) == NEW
    assert rewrite(rewrite(OLD)) == rewrite(OLD)


def test_the_tree_uses_no_old_path():
    """Every project module (and test) is already on the new paths."""
    rewrite = _rewrite()
    stale = [
        str(p.relative_to(ROOT))
        for d in ("nxrecomp", "recompiler", "cpu_host", "gpu_host", "shader_svc", "relay", "tests", "bench", "examples")
        for p in sorted((ROOT / d).rglob("*.py"))
        if p != Path(__file__).resolve() and rewrite(p.read_text()) != p.read_text()
    ]
    assert not stale, "old module paths: run python scripts/rename_imports.py: " + ", ".join(stale)
