"""Charts for bench results, next to their text: a bench prints its table as before and calls
one of these to draw the same numbers (matplotlib through nxrecomp/app/plot.py, no display).  The
PNG goes to ``out/bench/<bench>-<name>.png`` in the checkout (git-ignored), or into the folder
``NXRECOMP_BENCH_CHARTS`` names; the path is printed as the bench's last line so it sits with
the text it draws.

    from bench.chart import bars, groups, lines
    groups(__file__, "workloads", {"md5sum": {"native": 0.21, "ours": 0.25}}, title=..., ylabel="s")
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))


def chart_path(bench_file: str, name: str) -> Path:
    folder = Path(os.environ.get("NXRECOMP_BENCH_CHARTS") or ROOT / "out" / "bench")
    return folder / f"{Path(bench_file).stem}-{name}.png"


def _done(p: Path) -> Path:
    print(f"chart: {p}")
    return p


def bars(bench_file: str, name: str, values: dict[str, float], **kw) -> Path:
    """One bar per measured thing (``title``, ``ylabel``, ``logy`` as nxrecomp.app.plot.bar_chart)."""
    from nxrecomp.app.plot import bar_chart

    return _done(bar_chart(chart_path(bench_file, name), values, **kw))


def groups(bench_file: str, name: str, values: dict[str, dict[str, float]], **kw) -> Path:
    """Bars grouped per case, one colour per way of running it (nxrecomp.app.plot.grouped_bar_chart)."""
    from nxrecomp.app.plot import grouped_bar_chart

    return _done(grouped_bar_chart(chart_path(bench_file, name), values, **kw))


def lines(bench_file: str, name: str, series: dict[str, tuple[list[float], list[float]]], **kw) -> Path:
    """One line per series over a swept parameter (nxrecomp.app.plot.line_chart)."""
    from nxrecomp.app.plot import line_chart

    return _done(line_chart(chart_path(bench_file, name), series, **kw))
