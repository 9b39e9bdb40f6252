"""Frame-time statistics with start-up apart (nxrecomp/app/frame_stats.py).  Oracle for the
numbers: Python's ``statistics`` module (quantiles, 'inclusive' method = linear interpolation
between closest ranks, the same definition numpy's default uses), not numpy itself."""

from __future__ import annotations

import random
import statistics

from nxrecomp.app.frame_stats import SETTLE_FRAMES, split, startup_frames


def ref(ms: list[float]) -> dict:
    q = statistics.quantiles(ms, n=100, method="inclusive")  # q[k-1] = k-th percentile
    return {"mean": statistics.fmean(ms), "p50": statistics.median(ms), "p95": q[94], "p99": q[98], "max": max(ms)}


def close(got: dict, want: dict) -> bool:
    return all(abs(got[k] - want[k]) <= 0.006 for k in want)


def test_startup_spike_is_reported_apart() -> None:
    """The case the old report hid: one 2.9 s frame among 10 ms frames put the mean above p99."""
    rnd = random.Random(3)
    steady = [10 + rnd.random() * 4 for _ in range(300)]
    ms = [0.7, 2931.5] + steady
    fm = split(ms)
    assert fm["all"]["mean"] > fm["all"]["p99"]  # what the single summary got wrong
    assert fm["startup_frames"] == 2 and fm["startup"]["frames"] == 2
    assert abs(fm["startup"]["total_ms"] - 2932.2) < 0.01
    assert close(fm["steady"], ref(steady)) and fm["steady"]["frames"] == 300
    assert fm["steady"]["mean"] <= fm["steady"]["max"] and fm["steady"]["p99"] >= fm["steady"]["mean"]
    assert close(fm["all"], ref(ms))


def test_late_hitch_stays_in_steady_state() -> None:
    """A GPU process restart at frame 150 is a hitch of steady state, not start-up."""
    ms = [500.0, 400.0, 90.0] + [16.0] * 147 + [800.0] + [16.0] * 100
    fm = split(ms)
    assert fm["startup_frames"] == 3
    assert fm["steady"]["max"] == 800.0


def test_settling_needs_a_run_of_quiet_frames() -> None:
    """Slow frames that alternate with quick ones are still start-up until SETTLE_FRAMES in a
    row are quick."""
    ms = [100.0, 10.0, 100.0, 10.0, 100.0] + [10.0] * 40
    assert startup_frames(ms) == 5
    ms = [10.0] * 40
    assert startup_frames(ms) == 0
    # a run too short for a full window settles on what remains
    assert startup_frames([200.0] + [10.0] * (SETTLE_FRAMES - 3)) == 1


def test_empty_and_all_slow() -> None:
    assert split([]) == {"rule": split([])["rule"], "startup_frames": 0, "startup": None, "steady": None, "all": None}
    # no frame is more than 3x the median: nothing is start-up, every frame is steady state
    fm = split([50.0, 60.0, 55.0])
    assert fm["startup_frames"] == 0 and fm["steady"]["frames"] == 3
