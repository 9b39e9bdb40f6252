"""Charts for reports, drawn with matplotlib (Agg, no display): the demo's frame-time chart
and plain line/bar charts the bench scripts write next to their text (bench/chart.py).

Why matplotlib: the de-facto Python plotting library, kept up by a large team, with axes,
ticks, legends and PNG/SVG output in a few lines; it draws without a display through
``matplotlib.figure.Figure`` (no pyplot global state, safe in a thread).  The format follows
the file name's suffix (``.png`` or ``.svg``)."""

from __future__ import annotations

from pathlib import Path
from typing import Sequence

import numpy as np

FRAME_GUIDES = ((1000 / 60, "16.7 ms (60 fps)"), (1000 / 30, "33.3 ms (30 fps)"))
DPI = 100


def _figure(w: float, h: float):
    from matplotlib.figure import Figure

    fig = Figure(figsize=(w, h), dpi=DPI, layout="constrained")
    return fig, fig.add_subplot()


def _save(fig, path: Path) -> Path:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp" + path.suffix)  # nothing half-written
    fig.savefig(tmp, format=path.suffix.lstrip(".") or "png")
    tmp.replace(path)
    return path


def frame_time_chart(ms: Sequence[float], path: Path, startup_frames: int = 0, steady: dict | None = None) -> Path:
    """Milliseconds per frame against the frame number: ``ms[i]`` is the time from present
    i+1 to present i+2, drawn at frame i+2 (frame 1 has no previous present).  Start-up frames are shaded; the
    vertical scale fits steady state (and the 33.3 ms guide), so a start-up frame of seconds
    does not flatten the rest: frames above the scale are drawn as markers at the top edge
    with their value written.  ``steady`` (frame_stats' summary) adds p50/p95/p99 lines."""
    fig, ax = _figure(9, 3.6)
    n = len(ms)
    x = np.arange(2, n + 2)
    a = np.asarray(ms, dtype=float)
    body = a[startup_frames:] if startup_frames < n else a
    top = max(float(body.max()) * 1.15 if n else 0.0, FRAME_GUIDES[1][0] * 1.2)
    if startup_frames:
        ax.axvspan(
            1.5,
            startup_frames + 1.5,
            color="#f2c14e",
            alpha=0.35,
            label=f"start-up ({startup_frames} frame{'s' if startup_frames != 1 else ''})",
        )
    for v, label in FRAME_GUIDES:
        ax.axhline(v, color="#888888", lw=0.8, ls=":")
        ax.annotate(
            label,
            (1, v),
            xycoords=("axes fraction", "data"),
            xytext=(-4, 2),
            textcoords="offset points",
            ha="right",
            va="bottom",
            fontsize=8,
            color="#555555",
        )
    ax.plot(x, np.minimum(a, top), color="#1f5fbf", lw=1.0, label="frame time")
    over = np.nonzero(a > top)[0]
    if over.size:
        ax.plot(
            x[over],
            np.full(over.size, top),
            ls="none",
            marker="^",
            color="#c0392b",
            clip_on=False,
            label="above the scale (value written)",
        )
        for i in over[:8]:
            ax.annotate(f"{a[i]:.0f} ms", (x[i], top), xytext=(4, -12), textcoords="offset points", fontsize=8, color="#c0392b")
    if steady:
        for key, style in (("p50", "-"), ("p95", "--"), ("p99", "-.")):
            ax.axhline(steady[key], color="#2e8b57", lw=0.9, ls=style, label=f"steady {key} {steady[key]:.2f} ms")
    ax.set_xlim(1.5, max(n, 1) + 1.5)
    ax.set_ylim(0, top)
    ax.set_xlabel("frame")
    ax.set_ylabel("time since the previous frame (ms)")
    ax.set_title("Frame times")
    ax.grid(True, axis="y", alpha=0.3)
    ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.22), ncol=3, fontsize=8, frameon=False)
    return _save(fig, path)


def line_chart(
    path: Path,
    series: dict[str, tuple[Sequence[float], Sequence[float]]],
    *,
    title: str,
    xlabel: str,
    ylabel: str,
    logy: bool = False,
) -> Path:
    """One line per series: ``{label: (xs, ys)}``."""
    fig, ax = _figure(7, 3.6)
    for label, (xs, ys) in series.items():
        ax.plot(xs, ys, marker="o", ms=3, label=label)
    if logy:
        ax.set_yscale("log")
    ax.set(title=title, xlabel=xlabel, ylabel=ylabel)
    ax.grid(True, alpha=0.3)
    if len(series) > 1:
        ax.legend(fontsize=8)
    return _save(fig, path)


def bar_chart(path: Path, bars: dict[str, float], *, title: str, ylabel: str, logy: bool = False) -> Path:
    """Labelled horizontal bars (one per measured thing), the value written at each bar's end."""
    fig, ax = _figure(7, 0.9 + 0.42 * max(len(bars), 1))
    labels, values = list(bars), [float(v) for v in bars.values()]
    y = np.arange(len(labels))
    ax.barh(y, values, color="#1f5fbf")
    ax.set_yticks(y, labels, fontsize=8)
    ax.invert_yaxis()
    if logy:
        ax.set_xscale("log")
    for yi, v in zip(y, values):
        ax.annotate(f"{v:,.1f}", (v, yi), xytext=(3, 0), textcoords="offset points", va="center", fontsize=8)
    ax.set(title=title, xlabel=ylabel)
    ax.grid(True, axis="x", alpha=0.3)
    return _save(fig, path)


def grouped_bar_chart(path: Path, groups: dict[str, dict[str, float]], *, title: str, ylabel: str, logy: bool = False) -> Path:
    """Vertical bars in groups: ``{group: {series: value}}`` (e.g. per workload: native, ours,
    qemu); a value that is NaN (not measured) leaves its bar out."""
    series = list(dict.fromkeys(k for g in groups.values() for k in g))
    fig, ax = _figure(max(6.0, 1.1 * len(groups) * max(len(series), 1) * 0.45 + 2), 3.8)
    x = np.arange(len(groups))
    width = 0.8 / max(len(series), 1)
    for j, s in enumerate(series):
        vals = np.array([float(g.get(s, np.nan)) for g in groups.values()])
        bars = ax.bar(x + (j - (len(series) - 1) / 2) * width, np.nan_to_num(vals), width, label=s)
        for b, v in zip(bars, vals):
            if np.isfinite(v):
                ax.annotate(
                    f"{v:.3g}",
                    (b.get_x() + b.get_width() / 2, v),
                    xytext=(0, 2),
                    textcoords="offset points",
                    ha="center",
                    fontsize=7,
                )
    ax.set_xticks(x, list(groups), fontsize=8)
    if logy:
        ax.set_yscale("log")
    ax.set(title=title, ylabel=ylabel)
    ax.grid(True, axis="y", alpha=0.3)
    ax.legend(fontsize=8)
    return _save(fig, path)
