"""Frame-time statistics with start-up separated from steady state.

Why: the first frames of a run carry one-time work (shader translation, pipeline creation,
first texture uploads) that takes seconds, not milliseconds.  One such frame among hundreds
pulls the mean above the 99th percentile and says nothing about how the game plays; so the
report gives start-up and steady state apart, each with mean, p50, p95, p99 and max.

The rule for where start-up ends (documented in the report too): let ``ref`` be the median of
all frame times; start-up is every frame before the first frame ``i`` from which the next
``SETTLE_FRAMES`` frames (or all that remain, if fewer) each take at most
``SETTLE_FACTOR`` x ``ref``.  A hitch later in the run (a GPU process restart) does not move the
boundary: it stays in steady state, where p99 and max show it.  No settled window at all: the
whole run is start-up.

Percentiles are numpy's default (linear interpolation between the closest ranks)."""

from __future__ import annotations

from dataclasses import asdict, dataclass

import numpy as np

SETTLE_FRAMES = 10
SETTLE_FACTOR = 3.0
RULE = (
    f"start-up ends at the first frame from which {SETTLE_FRAMES} frames in a row each take at most "
    f"{SETTLE_FACTOR:g}x the run's median frame time"
)


@dataclass
class Summary:
    frames: int
    total_ms: float
    mean: float
    p50: float
    p95: float
    p99: float
    max: float


def summarise(ms: list[float]) -> Summary | None:
    """Mean, percentiles and max of ``ms`` (rounded to 0.01 ms); None for no frames."""
    if not ms:
        return None
    a = np.asarray(ms, dtype=float)
    p50, p95, p99 = np.percentile(a, [50, 95, 99])
    r = lambda v: round(float(v), 2)  # noqa: E731
    return Summary(len(a), r(a.sum()), r(a.mean()), r(p50), r(p95), r(p99), r(a.max()))


def startup_frames(ms: list[float]) -> int:
    """How many leading frames are start-up (the module's rule)."""
    if not ms:
        return 0
    limit = SETTLE_FACTOR * float(np.median(ms))
    n = len(ms)
    for i in range(n):
        window = ms[i : i + SETTLE_FRAMES]
        if all(v <= limit for v in window):
            return i
    return n


def split(ms: list[float]) -> dict:
    """The report's ``frame_ms`` record: the rule, the start-up and steady-state summaries
    (None where empty) and the whole run's, as plain dicts for JSON."""
    k = startup_frames(ms)
    d = lambda s: asdict(s) if s else None  # noqa: E731
    return {
        "rule": RULE,
        "startup_frames": k,
        "startup": d(summarise(ms[:k])),
        "steady": d(summarise(ms[k:])),
        "all": d(summarise(ms)),
    }
