"""The folder one test run shares between its xdist workers (for things built once per run)."""

from __future__ import annotations

from pathlib import Path


def run_dir(tmp_path_factory) -> Path:
    """Under xdist each worker's base temp is pytest-N/popen-gwK and pytest-N is the run's;
    without xdist the base is pytest-N itself.  (Its parent is shared by every run: something
    built there would outlive the code that built it.)"""
    base = tmp_path_factory.getbasetemp()
    return base.parent if base.name.startswith("popen-gw") else base
