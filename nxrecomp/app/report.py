"""``report.html``: what a person reads after ``nxrecomp demo`` — one self-contained page
(charts and screenshots embedded as base64 PNG, no scripts, nothing fetched) built from
``report.json`` and the files it names: result, device, timings of each stage, the frame-time
chart with start-up apart from steady state (nxrecomp/app/frame_stats.py says where start-up
ends), screenshots, GPU process restarts, co-op events and what the game printed.

``nxrecomp report OUT`` rebuilds the page from ``OUT/report.json`` (e.g. after a run on
another machine)."""

from __future__ import annotations

import argparse
import base64
import html
import json
import os
from pathlib import Path

from nxrecomp.common.errors import NxError

STAT_KEYS = ("frames", "total_ms", "mean", "p50", "p95", "p99", "max")


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("report", help="(re)build OUT/report.html from OUT/report.json (nxrecomp demo writes both)")
    p.add_argument("out", nargs="?", default="demo-out", help="the demo's output folder (demo-out)")
    p.set_defaults(func=lambda a: print(write_html(Path(a.out))) or 0)


def _e(v: object) -> str:
    return html.escape("" if v is None else str(v))


def _img(path: Path, alt: str, cls: str = "") -> str:
    data = base64.b64encode(path.read_bytes()).decode("ascii")
    kind = "svg+xml" if path.suffix == ".svg" else "png"
    return f'<img class="{cls}" alt="{_e(alt)}" src="data:image/{kind};base64,{data}">'


def _table(head: list[str] | None, rows: list[list[object]], cls: str = "") -> str:
    th = "<thead><tr>" + "".join(f"<th>{_e(h)}</th>" for h in head) + "</tr></thead>" if head else ""
    tr = "".join("<tr>" + "".join(f"<td>{_e(c)}</td>" for c in r) + "</tr>" for r in rows)
    return f'<table class="{cls}">{th}<tbody>{tr}</tbody></table>'


def _frame_table(fm: dict) -> str:
    rows = []
    for part, title in (("startup", "start-up"), ("steady", "steady state"), ("all", "whole run")):
        s = fm.get(part)
        rows.append([title] + ([s[k] for k in STAT_KEYS] if s else ["0"] + ["-"] * (len(STAT_KEYS) - 1)))
    return _table(["frames (ms)", "frames", "total", "mean", "p50", "p95", "p99", "max"], rows, "stats")


def _timings(r: dict) -> list[list[object]]:
    t = r.get("timings") or {}
    rows: list[list[object]] = []
    if t.get("build_s") is not None:
        rows.append(["build the game (ExeFS + RomFS)", f"{t['build_s']:.1f} s", ""])
    if t.get("recompile_s") is not None:
        rows.append(["recompile (AArch64 -> C -> x86-64)", f"{t['recompile_s']:.1f} s", f"{t.get('functions', '?')} functions"])
    for proc, s in (t.get("ready_s") or {}).items():
        rows.append([f"{proc} process serving", f"{s:.2f} s after the run started", ""])
    sh = t.get("shaders")
    if sh:
        rows.append(
            [
                "shader preparation (shader service)",
                f"{sh['translate_seconds']:.2f} s translating",
                f"{sh['translations']} translated, {sh['cache_hits']} from the cache, "
                f"{sh['cache_misses']} misses, {sh.get('carried', 0)} carried from an older translator, {sh['errors']} errors",
            ]
        )
    if t.get("first_frame_s") is not None:
        rows.append(["first frame written", f"{t['first_frame_s']:.2f} s after the run started", ""])
    fm = r.get("frame_ms") or {}
    if fm.get("startup"):
        rows.append(
            [
                "start-up frames",
                f"{fm['startup']['total_ms'] / 1000:.2f} s",
                f"{fm['startup_frames']} frames before frame times settle",
            ]
        )
    return rows


CSS = """body{font:14px/1.45 system-ui,sans-serif;margin:24px auto;max-width:1000px;color:#222;padding:0 12px}
h1{font-size:22px}h2{font-size:17px;margin-top:28px;border-bottom:1px solid #ddd}
table{border-collapse:collapse;margin:8px 0}td,th{border:1px solid #ddd;padding:3px 8px;text-align:left}
th{background:#f4f4f4}.stats td{text-align:right}.stats td:first-child{text-align:left}
.chart{max-width:100%}.shots{display:flex;flex-wrap:wrap;gap:12px}.shots figure{margin:0}
.shots img{width:320px;image-rendering:pixelated;border:1px solid #ccc}.ok{color:#1a7f37}.bad{color:#c0392b}
code{background:#f4f4f4;padding:0 3px}"""


EMBED_AUDIO_MAX = 8 << 20  # a larger WAV is linked, not embedded


def _sound(a: dict | None, path) -> str:
    """The sound section: the WAV's figures and a player (the file embedded while it is small)."""
    if not a:
        return "<h2>Sound</h2><p>No sound file (the game played to the audio device, or made none).</p>"
    rows = [
        ["duration", f"{a.get('duration_s')} s ({a.get('frames')} frames at {a.get('rate')} Hz, {a.get('channels')} channels)"],
        ["RMS", a.get("rms")],
        ["spectrum peaks", ", ".join(f"{f} Hz" for f in a.get("peaks_hz") or [])],
    ]
    out = "<h2>Sound</h2>" + _table(None, rows, "sound")
    f = path(a.get("file"))
    if f and f.is_file():
        src = (
            f"data:audio/wav;base64,{base64.b64encode(f.read_bytes()).decode()}"
            if f.stat().st_size <= EMBED_AUDIO_MAX
            else _e(f.name)
        )
        out += f'<audio controls src="{src}"></audio>'
    return out


def render(r: dict, base: Path) -> str:
    """The page for report dict ``r``; relative file names in it are taken from ``base``."""

    def path(p: str | None) -> Path | None:
        if not p:
            return None
        q = Path(p)
        return q if q.is_absolute() else base / q

    ok = r.get("exit_status") == 0
    dev = r.get("device") or {}
    parts = [
        f"<!doctype html><html lang=en><head><meta charset=utf-8><title>nxrecomp demo report</title>"
        f"<style>{CSS}</style></head><body>",
        "<h1>nxrecomp demo: run report</h1>",
        f'<p id=result class="{"ok" if ok else "bad"}">{_e(r.get("frames"))} frames played, exit status '
        f"{_e(r.get('exit_status'))}; final state <code>{_e(r.get('final_state'))}</code>, score "
        f"{_e(r.get('score'))}.</p>",
        _table(
            None,
            [
                ["Vulkan device", dev.get("vulkan_device") or "unknown (not in the GPU log)"],
                ["presentation", dev.get("presentation") or "?"],
                ["shaders", r.get("shaders") or "?"],
                ["host", r.get("host") or "?"],
            ],
            "device",
        ),
        "<h2>Timings</h2>",
        _table(["stage", "time", "detail"], _timings(r), "timings"),
    ]
    fm = r.get("frame_ms") or {}
    parts.append("<h2>Frame times</h2>")
    chart = path(r.get("chart"))
    if chart and chart.is_file():
        parts.append(_img(chart, "frame-time chart", "chart"))
    else:
        parts.append("<p>No frame-time chart (no frame times were recorded).</p>")
    if fm:
        parts.append(_frame_table(fm))
        parts.append(f"<p>Start-up rule: {_e(fm.get('rule'))}.</p>")
    parts.append("<h2>Screenshots</h2>")
    shots_dir = path(r.get("screenshots"))
    shots = sorted(shots_dir.glob("*.png")) if shots_dir and shots_dir.is_dir() else []
    if shots:
        figs = "".join(
            f"<figure>{_img(s, s.stem, 'shot')}<figcaption>{_e(s.stem.replace('_', ' '))}</figcaption></figure>" for s in shots
        )
        parts.append(f"<div class=shots>{figs}</div>")
    else:
        parts.append("<p>No screenshots (--screenshot-every 0, or no frame reached one).</p>")
    parts.append(_sound(r.get("audio"), path))
    restarts = r.get("gpu_restarts") or []
    parts.append("<h2>GPU process restarts</h2>")
    parts.append(
        _table(["at (s)", "what"], [[e["t_s"], e["what"]] for e in restarts], "restarts")
        if restarts
        else "<p id=no-restarts>None: the GPU process ran through.</p>"
    )
    parts.append("<h2>Co-op</h2>")
    coop = r.get("coop_events") or []
    parts.append(
        "<ul>" + "".join(f"<li>{_e(c)}</li>" for c in coop) + "</ul>"
        if coop
        else "<p>Not playing co-op (no --relay).</p>"
        if not r.get("relay")
        else "<p>No co-op events.</p>"
    )
    said = r.get("game_said") or []
    parts.append("<h2>What the game printed</h2><pre>" + _e("\n".join(said)) + "</pre>")
    ev = r.get("process_events") or []
    if ev:
        parts.append(
            "<details><summary>Process events (supervisor)</summary>"
            + _table(["at (s)", "process", "what"], [[e["t_s"], e["process"], e["what"]] for e in ev])
            + "</details>"
        )
    parts.append(f"<p>Full log: <code>{_e(r.get('log'))}</code></p></body></html>")
    return "\n".join(parts)


def write_html(out: Path) -> Path:
    """Write ``out/report.html`` from ``out/report.json`` (atomically); returns its path."""
    src = Path(out) / "report.json"
    try:
        r = json.loads(src.read_text())
    except FileNotFoundError:
        raise NxError("no report.json here (run nxrecomp demo first)", path=str(src)) from None
    except ValueError as e:
        raise NxError(f"not JSON: {e}", path=str(src)) from None
    if not isinstance(r, dict):
        raise NxError("not a report (expected a JSON object)", path=str(src))
    dst = Path(out) / "report.html"
    tmp = dst.with_suffix(".html.tmp")
    tmp.write_text(render(r, Path(out)), encoding="utf-8")
    os.replace(tmp, dst)
    return dst
