"""A frame-time chart as a PNG, drawn with numpy (no plotting library): frame times as a line,
horizontal guides at 16.7 ms and 33.3 ms, the mean as a dashed line."""
from __future__ import annotations

from pathlib import Path

import numpy as np

from gpu_host import png

W, H, PAD = 800, 260, 20
BG, AXIS, LINE, GUIDE, MEAN = (255, 255, 255), (60, 60, 60), (30, 90, 200), (200, 200, 200), (220, 80, 40)


def _line(img: np.ndarray, x0: int, y0: int, x1: int, y1: int, color: tuple) -> None:
    n = max(abs(x1 - x0), abs(y1 - y0), 1)
    xs = np.round(np.linspace(x0, x1, n + 1)).astype(int)
    ys = np.round(np.linspace(y0, y1, n + 1)).astype(int)
    ok = (xs >= 0) & (xs < img.shape[1]) & (ys >= 0) & (ys < img.shape[0])
    img[ys[ok], xs[ok], :3] = color


def frame_time_chart(ms: list[float], path: Path) -> None:
    img = np.zeros((H, W, 4), np.uint8)
    img[..., :3] = BG
    img[..., 3] = 255
    top = max(max(ms, default=1.0) * 1.1, 35.0)
    def y(v: float) -> int:
        return int(round(H - PAD - (H - 2 * PAD) * min(v, top) / top))
    for guide in (1000 / 60, 1000 / 30):
        _line(img, PAD, y(guide), W - PAD, y(guide), GUIDE)
    _line(img, PAD, PAD, PAD, H - PAD, AXIS)
    _line(img, PAD, H - PAD, W - PAD, H - PAD, AXIS)
    if ms:
        mean = float(np.mean(ms))
        for x in range(PAD, W - PAD, 12):
            _line(img, x, y(mean), min(x + 6, W - PAD), y(mean), MEAN)
        step = (W - 2 * PAD) / max(len(ms) - 1, 1)
        pts = [(int(PAD + i * step), y(v)) for i, v in enumerate(ms)]
        for (a, b), (c, d) in zip(pts, pts[1:]):
            _line(img, a, b, c, d, LINE)
    png.write(path, img.tobytes(), W, H)
