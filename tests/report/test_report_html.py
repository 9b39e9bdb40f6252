"""report.html (nxrecomp/app/report.py) from a small recorded-shape run — a report.json as the demo
writes it, a frame-time chart drawn by nxrecomp/app/plot.py and screenshots made here with Pillow
— opened in a real browser: Debian's headless Chromium loads it, its DOM holds the chart and
the screenshots, and its own screenshot of the page (kept as a test artifact under the pytest
tmp dir) shows the screenshots' pixels and the chart's line.  Oracles: Chromium's HTML parser
and image decoders, Pillow (PNG writer and reader), Python's html.parser."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from nxrecomp.app.frame_stats import split
from nxrecomp.app.plot import frame_time_chart

ROOT = Path(__file__).resolve().parents[2]
MAGENTA, CYAN = (255, 0, 255), (0, 255, 255)
CHART_BLUE = (0x1F, 0x5F, 0xBF)
HOSTILE = "<script>document.title='pwned'</script>"


def chromium() -> str:
    exe = shutil.which("chromium") or shutil.which("chromium-browser")
    if not exe:
        pytest.skip("chromium is not installed (scripts/nx.sh installs Debian's 'chromium')")
    return exe


def browse(tmp: Path, page: Path, *args: str) -> subprocess.CompletedProcess:
    """Headless Chromium on ``page`` with a fresh profile, no network services, no sandbox
    (CI runs as root in a container)."""
    profile = tmp / f"profile-{len(list(tmp.glob('profile-*')))}"
    return subprocess.run(
        [
            chromium(),
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--no-first-run",
            "--enable-logging=stderr",
            f"--user-data-dir={profile}",
            *args,
            page.as_uri(),
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )


def recorded_run(out: Path) -> dict:
    """A run's outputs in the shape nxrecomp demo writes them."""
    rnd = np.random.default_rng(7)
    ms = [0.7, 2931.5] + list(10 + 4 * rnd.random(178))
    fm = split(ms)
    frame_time_chart(ms, out / "frame_times.png", fm["startup_frames"], fm["steady"])
    shots = out / "screenshots"
    shots.mkdir(parents=True)
    for i, colour in ((60, MAGENTA), (120, CYAN)):
        img = np.zeros((180, 320, 3), np.uint8)
        img[:, :] = (40, 40, 40)
        img[20:160, 20:300] = colour  # most of the picture: one loud colour
        Image.fromarray(img).save(shots / f"frame_{i:06d}.png")
    (out / "frames").mkdir()
    report = {
        "exit_status": 0,
        "frames": 180,
        "final_state": "d9614d02",
        "score": 3,
        "states": ["d9614d02"] * 180,
        "frame_ms": fm,
        "timings": {
            "build_s": 1.2,
            "recompile_s": 24.8,
            "functions": 96,
            "ready_s": {"shader": 1.1, "gpu": 1.4},
            "shaders": {
                "translations": 4,
                "cache_hits": 0,
                "cache_misses": 4,
                "errors": 0,
                "translate_seconds": 0.61,
                "carried": 3,
            },
            "first_frame_s": 2.3,
        },
        "device": {"vulkan_device": "llvmpipe (LLVM 15.0.6, 256 bits)", "presentation": "headless (no DISPLAY)"},
        "host": "test CPU, 2 CPUs, x86-64-v3",
        "shaders": "sm86",
        "gpu_restarts": [
            {"t_s": 3.5, "process": "gpu", "what": "killed by SIGKILL; restarting in 0s"},
            {"t_s": 3.51, "process": "gpu", "what": "standby pid 99 promoted"},
        ],
        "relay": "127.0.0.1:7777",
        "coop_events": ["coop: in the room as player 1", "coop: player 2 appears"],
        "process_events": [{"t_s": 0.0, "process": "shader", "what": "started pid 1: x"}],
        "game_said": ["demo: best score so far 0", HOSTILE, "coop: in the room as player 1"],
        "frames_dir": str(out / "frames"),
        "screenshots": str(shots),
        "chart": str(out / "frame_times.png"),
        "log": str(out / "run" / "run.log"),
        "record": None,
    }
    (out / "report.json").write_text(json.dumps(report, indent=1))
    return report


class Tags(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict]] = []
        self.text: list[str] = []

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))

    def handle_data(self, data):
        self.text.append(data)


def parse(html: str) -> Tags:
    t = Tags()
    t.feed(html)
    return t


@pytest.fixture(scope="module")
def page(tmp_path_factory) -> tuple[Path, dict, Path]:
    out = tmp_path_factory.mktemp("report") / "demo-out"
    out.mkdir()
    report = recorded_run(out)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    r = subprocess.run(
        [sys.executable, "-m", "nxrecomp", "report", str(out)], capture_output=True, text=True, timeout=120, env=env, cwd=ROOT
    )
    assert r.returncode == 0, r.stderr[-2000:]
    return out / "report.html", report, out


def test_page_holds_the_report(page) -> None:
    html, report, _ = page
    t = parse(html.read_text())
    imgs = {a["alt"]: a["src"] for tag, a in t.tags if tag == "img"}
    assert set(imgs) == {"frame-time chart", "frame_000060", "frame_000120"}
    assert all(src.startswith("data:image/png;base64,") for src in imgs.values())  # self-contained
    text = " ".join(t.text)
    fm = report["frame_ms"]
    for part in ("startup", "steady", "all"):
        for key in ("mean", "p50", "p95", "p99", "max"):
            assert str(fm[part][key]) in text, (part, key)
    assert "llvmpipe (LLVM 15.0.6, 256 bits)" in text
    assert "4 translated, 0 from the cache, 4 misses, 3 carried from an older translator, 0 errors" in text
    assert "killed by SIGKILL" in text and "coop: player 2 appears" in text
    assert HOSTILE in text  # shown as text ...
    assert not any(tag == "script" for tag, _ in t.tags)  # ... never run


def test_chromium_loads_it(page, tmp_path) -> None:
    html, _, _ = page
    dom = browse(tmp_path, html, "--dump-dom")
    assert dom.returncode == 0, dom.stderr[-2000:]
    t = parse(dom.stdout)
    alts = sorted(a.get("alt") for tag, a in t.tags if tag == "img")
    assert alts == ["frame-time chart", "frame_000060", "frame_000120"]
    assert "nxrecomp demo: run report" in dom.stdout and "pwned" not in "".join(
        a.get("title", "") for tag, a in t.tags if tag == "title"
    )
    errors = [
        line
        for line in dom.stderr.splitlines()
        if "CONSOLE" in line or "Uncaught" in line or "net::ERR" in line or "Failed to load" in line
    ]
    assert not errors, errors

    shot = tmp_path / "report-page.png"  # the test artifact: the page as Chromium drew it
    r = browse(tmp_path, html, f"--screenshot={shot}", "--window-size=1100,2600", "--hide-scrollbars")
    assert r.returncode == 0 and shot.is_file(), r.stderr[-2000:]
    px = np.asarray(Image.open(shot).convert("RGB")).reshape(-1, 3)
    assert len(np.unique(px, axis=0)) > 200, "the page screenshot is (nearly) blank"

    def count(colour, tol=0):
        return int((np.abs(px.astype(int) - colour).max(1) <= tol).sum())

    # the screenshots drawn at 320 px wide: their 280x140 loud rectangles are on the page
    assert count(MAGENTA) > 20000 and count(CYAN) > 20000, (count(MAGENTA), count(CYAN))
    assert count(CHART_BLUE, tol=40) > 300, "the chart's frame-time line is not on the page"


def test_bad_report_json_is_named(tmp_path) -> None:
    (tmp_path / "report.json").write_text("{not json")
    r = subprocess.run(
        [sys.executable, "-m", "nxrecomp", "report", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    assert r.returncode == 2 and "report.json" in r.stderr and "not JSON" in r.stderr, r.stderr
    assert not (tmp_path / "report.html").exists()
