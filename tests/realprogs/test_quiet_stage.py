"""bench/quiet_stage.py's QuickJS score: its ways run ``microbench.js -s`` side by side, and the
score is computed afterwards from the saved per-test times; that must be the score QuickJS's own
``microbench.js -r`` prints (the oracle: its ``total`` line), a test without a reference included."""

from __future__ import annotations

import json
import shutil
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


def test_carried_generator_makes_the_inputs_of_record(tmp_path):
    """The generator that travels (the makers' own source, run by a bare ``python3`` as on the
    device) writes the bytes bench/cxx.py's ``prepare`` and the tests' ``text_data`` write."""
    from bench import cxx
    from bench.quiet_stage import GEN, generator
    from tests.realprogs.test_xxhash_zstd import text_data

    py3 = shutil.which("python3")
    if py3 is None:
        pytest.skip("LOUD SKIP: no python3 on PATH (the device's interpreter)")
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    (tmp_path / GEN).write_text(generator())
    gen = [py3, str(tmp_path / GEN)]
    subprocess.run([*gen, "cxx", str(tmp_path / "a"), "0.02"], check=True, timeout=120, env={})
    subprocess.run([*gen, "text", "a/text.txt", "300000", "5"], cwd=tmp_path, check=True, timeout=120, env={})
    assert (tmp_path / "a" / "text.txt").read_bytes() == text_data(300_000, 5)
    bad = subprocess.run([*gen, "nope"], capture_output=True, text=True, timeout=60, env={})
    assert bad.returncode and "unknown input kind 'nope'" in bad.stderr
    cxx.prepare(tmp_path / "b", 0.02)
    for n in ("big.json", "big.xml"):
        a, b = (tmp_path / "a" / n).read_bytes(), (tmp_path / "b" / n).read_bytes()
        assert len(a) > 10_000 and a == b, n
    json.loads((tmp_path / "a" / "big.json").read_text())  # (and it is JSON)


def test_run_digest_masks_clocks_and_reads_written_files(tmp_path):
    """A run's digest: stdout with the mask's matches blanked (two runs printing different pids as
    ``time=`` agree), plus the named files the program wrote; a file left by an earlier run is
    removed first, so a run that writes nothing differs from one that wrote it."""
    from bench.quiet_stage import XMLTEST_TIMES, Runner

    (tmp_path / "work" / "t").mkdir(parents=True)
    r = Runner(tmp_path, {"qemu": False}, 60.0)
    write = ["sh", "-c", 'echo "Load time=$$"; printf "%s" "$1" > out.actual', "sh"]
    one = r.run_once([*write, "a"], "t", None, None, ("out.actual",), XMLTEST_TIMES)
    two = r.run_once([*write, "a"], "t", None, None, ("out.actual",), XMLTEST_TIMES)
    other = r.run_once([*write, "b"], "t", None, None, ("out.actual",), XMLTEST_TIMES)
    silent = r.run_once(["sh", "-c", 'echo "Load time=$$"'], "t", None, None, ("out.actual",), XMLTEST_TIMES)
    stale_gone = not (tmp_path / "work" / "t" / "out.actual").exists()
    unmasked = [r.run_once([*write, "a"], "t", None, None, ("out.actual",), None)["out"] for _ in range(2)]
    assert one["rc"] == two["rc"] == 0
    assert one["out"] == two["out"]
    assert other["out"] != one["out"]
    assert silent["out"] != one["out"] and stale_gone
    assert unmasked[0] != unmasked[1]  # (the pids differ: the mask is what made the first two agree)


def test_two_stagings_build_a_bundle_once(tmp_path, monkeypatch):
    """Two stagings wanting the same bundle at once: one recompiles, the other waits and takes
    its result (before the lock, each removed the other's half-built folder)."""
    import threading
    import time

    from bench import corpus, quiet_stage

    calls = []

    def fake_recompile(arm, out):
        calls.append(arm)
        out.mkdir()
        time.sleep(0.5)
        (out / "launch.txt").write_text("nxlaunch 1\n")

    monkeypatch.setattr(corpus, "recompile_bundle", fake_recompile)
    monkeypatch.setattr(quiet_stage, "_cache", lambda: tmp_path)
    monkeypatch.setattr(quiet_stage, "lifter_id", lambda: "L")
    arm = tmp_path / "prog"
    arm.write_bytes(b"\x7fELF")
    got = []
    ts = [threading.Thread(target=lambda: got.append(quiet_stage.bundle_for("p", arm))) for _ in range(2)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    assert len(calls) == 1
    assert len(got) == 2 and got[0] == got[1] and (got[0] / "launch.txt").exists()
    assert not list(tmp_path.glob("bundles/*.tmp"))
