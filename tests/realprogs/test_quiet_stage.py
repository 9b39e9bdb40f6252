"""bench/quiet_stage.py's QuickJS score: its ways run ``microbench.js -s`` side by side, and the
score is computed afterwards from the saved per-test times; that must be the score QuickJS's own
``microbench.js -r`` prints (the oracle: its ``total`` line), a test without a reference included."""

from __future__ import annotations

import json
import subprocess

import pytest

from bench.quiet_stage import microbench_score
from tests.realprogs import sources


def test_microbench_score_is_microbench_total(tmp_path):
    try:
        qjs = sources.build("qjs", "x86_64")
        mb = sources.fetch("quickjs") / "tests" / "microbench.js"
    except sources.RegistryUnreachable as e:
        pytest.skip(f"LOUD SKIP: registry unreachable, cannot fetch QuickJS: {e}")
    ref = {"empty_loop": 20.0, "prop_read": 7.5, "date_now": 50.0}  # array_read: no reference
    (tmp_path / "ref.json").write_text(json.dumps(ref))
    r = subprocess.run(
        [str(qjs), "--std", str(mb), "empty_loop", "prop_read", "date_now", "array_read", "-r", "ref.json"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    rows = [ln.split() for ln in r.stdout.splitlines()]
    times = {f[0]: float(f[2]) for f in rows if f and f[0] in (*ref, "array_read")}
    total = [f for f in rows if f[:1] == ["total"]]
    assert set(times) == {*ref, "array_read"}, r.stdout
    assert total, r.stdout
    assert round(microbench_score(times, ref)) == int(total[-1][-1]), r.stdout
