"""The supervisor on real processes and signals: game exit, Ctrl-C, crash loops, gathered logs."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from nxrecomp.app.supervisor import CrashLoop, Policy, ProcessSpec, Supervisor

HERE = Path(__file__).resolve().parent


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # A zombie still answers kill(0); it is gone for our purpose.
    try:
        return Path(f"/proc/{pid}/stat").read_text().split()[2] != "Z"
    except FileNotFoundError:
        return False


def pids_in(log: str) -> list[int]:
    return [int(p) for p in re.findall(r"started pid (\d+)", log)]


def run_cli(run_dir: Path, cpu_cmd: str, env: dict | None = None) -> subprocess.Popen:
    bundle = run_dir / "bundle"
    bundle.mkdir(exist_ok=True)
    return subprocess.Popen(
        [sys.executable, "-m", "nxrecomp", "run", str(bundle), "--run-dir", str(run_dir), "--cpu-cmd", cpu_cmd],
        env={**os.environ, **(env or {})},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def test_game_exit_stops_everything_and_logs_are_gathered():
    run_dir = Path(tempfile.mkdtemp(prefix="nxr"))
    p = run_cli(
        run_dir, f"{sys.executable} {HERE / 'fake_cpu_host.py'} 4", {"FAKE_EXIT": "7", "NXRECOMP_NXRECOMP_LOG_LEVEL": "info"}
    )
    out, err = p.communicate(timeout=120)
    assert p.returncode == 7, err  # the game's exit status is the run's
    log = (run_dir / "run.log").read_text()
    assert re.search(r"^cpu      \| frame 4 [0-9a-f]{64}$", log, re.M)
    assert "gpu      | " in log and "gpu gpu_host.server: attached" in log
    assert "supervisor | cpu: exited (exit status 7); stopping the rest" in log
    assert "supervisor | gpu: stopped" in log
    if "supervisor | shader: started" in log:  # the shader service joins when its package has one
        assert "supervisor | shader: healthy" in log and "supervisor | shader: stopped" in log
    for pid in pids_in(log):
        assert not alive(pid), f"pid {pid} outlived the run"


def test_ctrl_c_stops_every_process():
    run_dir = Path(tempfile.mkdtemp(prefix="nxr"))
    p = run_cli(run_dir, f"{sys.executable} -c 'import time; print(\"cpu up\", flush=True); time.sleep(120)'")
    log = run_dir / "run.log"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and not (log.exists() and "cpu up" in log.read_text()):
        time.sleep(0.05)
    assert "cpu up" in log.read_text()
    p.send_signal(signal.SIGINT)
    p.communicate(timeout=30)
    assert p.returncode == 130
    text = log.read_text()
    assert len(pids_in(text)) >= 2
    for pid in pids_in(text):
        assert not alive(pid), f"pid {pid} outlived Ctrl-C"
    assert "all processes stopped" in text


def test_crash_loop_ends_with_a_clear_message(tmp_path):
    spec = ProcessSpec("flaky", [sys.executable, "-c", "import sys; print('boom', flush=True); sys.exit(3)"])
    sup = Supervisor([spec], tmp_path / "run.log", Policy(backoff=(0.0, 0.01, 0.02), max_crashes=4, window_s=30))
    t0 = time.monotonic()
    with pytest.raises(
        CrashLoop,
        match=r"flaky crashed 4 times within 30s \(last: exit status 3\); giving up\. "
        r"Logs: .*run.log",
    ):
        sup.run()
    assert time.monotonic() - t0 < 20
    text = (tmp_path / "run.log").read_text()
    assert text.count("flaky    | boom") == 4
    assert "restarting in 0.01s" in text and "restarting in 0.02s" in text  # backoff grows


def test_a_process_that_never_comes_up_ends_the_run_however_slowly_it_fails(tmp_path):
    """Each start fails after 0.4 s (a loaded machine's slow start-up): three crashes never fit
    in a 0.5 s window, yet three in a row without ever becoming healthy end the run."""
    import threading

    spec = ProcessSpec("slow", [sys.executable, "-c", "import sys, time; time.sleep(0.4); sys.exit(1)"])
    sup = Supervisor([spec], tmp_path / "run.log", Policy(backoff=(0.0,), max_crashes=3, window_s=0.5, min_uptime_s=5))
    got: list = []

    def run() -> None:
        try:
            got.append(sup.run())
        except CrashLoop as e:
            got.append(e)

    th = threading.Thread(target=run, daemon=True)
    th.start()
    th.join(60)
    if th.is_alive():  # the old policy: restarted for ever
        sup.stop()
        th.join(30)
    assert got and isinstance(got[0], CrashLoop), got
    assert re.match(r"slow crashed 3 times in a row without becoming healthy \(last: exit status 1\); giving up", str(got[0]))


def test_crash_loop_message_from_the_cli(tmp_path):
    run_dir = Path(tempfile.mkdtemp(prefix="nxr"))
    # A GPU process that cannot start: no Vulkan driver (the loader finds no ICD).
    p = run_cli(
        run_dir,
        f"{sys.executable} -c 'import time; time.sleep(60)'",
        {"VK_ICD_FILENAMES": "/nonexistent.json", "VK_DRIVER_FILES": "/nonexistent.json"},
    )
    _, err = p.communicate(timeout=120)
    assert p.returncode == 2
    last = err.strip().splitlines()[-1]
    # within the window when its starts fail fast, or "in a row" when a loaded machine slows them
    assert re.match(
        r"nxrecomp run: error: gpu crashed 5 times (within 10s|in a row without becoming healthy) "
        r"\(last: exit status 1\); giving up",
        last,
    ), err


def test_hung_process_is_killed_and_restarted(tmp_path):
    flag = tmp_path / "healthy"
    flag.touch()
    spec = ProcessSpec("hangs", [sys.executable, "-c", "import time; time.sleep(60)"], health=flag.exists)
    sup = Supervisor([spec], tmp_path / "run.log", Policy(health_every_s=0.05, health_failures=3))
    import threading

    th = threading.Thread(target=sup.run, daemon=True)
    th.start()
    deadline = time.monotonic() + 20
    while sup.pid("hangs") is None and time.monotonic() < deadline:
        time.sleep(0.02)
    first = sup.pid("hangs")

    def noted(what: str) -> bool:
        return any(w.startswith(what) for _, name, w in list(sup.events) if name == "hangs")

    # Unhealthy only once the supervisor has seen it healthy (else it is "not healthy after
    # ready_timeout", another path), healthy again only once the supervisor acted on the three
    # failures: fixed pauses here were races with a supervisor thread starved of CPU.
    while not noted("healthy") and time.monotonic() < deadline:
        time.sleep(0.02)
    flag.unlink()  # stops answering health checks
    while not noted("failed 3 health checks") and time.monotonic() < deadline:
        time.sleep(0.02)
    flag.touch()
    while (sup.pid("hangs") in (None, first)) and time.monotonic() < deadline:
        time.sleep(0.02)
    sup.stop()
    th.join(20)
    assert sup.restarts("hangs") >= 1 and not alive(first)
    assert "failed 3 health checks; killing it" in (tmp_path / "run.log").read_text()


SLEEPER = [sys.executable, "-c", "import time; time.sleep(60)"]


def exec_done(pid: int) -> bool:
    """The child runs its own program (no longer the setpriv wrapper)."""
    try:
        argv0 = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")[0]
    except FileNotFoundError:
        return False
    return not argv0.endswith(b"setpriv")


def test_a_killed_supervisor_leaves_no_children(tmp_path):
    """SIGKILL to the supervisor itself: its children get the parent-death signal and go."""
    script = tmp_path / "sup.py"
    script.write_text(
        "import sys\n"
        "from nxrecomp.app.supervisor import Policy, ProcessSpec, Supervisor\n"
        f"argv = {SLEEPER!r}\n"
        "specs = [ProcessSpec('svc', argv, standby_argv=argv), ProcessSpec('cpu', argv, restart=False)]\n"
        f"sys.exit(Supervisor(specs, {str(tmp_path / 'run.log')!r}, Policy(min_uptime_s=0.1)).run())\n"
    )
    sup = subprocess.Popen([sys.executable, str(script)], cwd=HERE.parent.parent)
    log = tmp_path / "run.log"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and len(pids_in(log.read_text() if log.exists() else "")) < 3:
        time.sleep(0.05)
    pids = pids_in(log.read_text())
    assert len(pids) == 3, log.read_text()  # svc, its standby, cpu
    # setpriv sets the parent-death signal after its exec and before exec'ing the program: wait
    # until every child runs the program itself (a supervisor killed in that window of a
    # millisecond or so would leave that child running; that case is not what this test shows)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and not all(exec_done(p) for p in pids):
        time.sleep(0.02)
    assert all(alive(p) and exec_done(p) for p in pids)
    sup.kill()
    sup.wait()
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and any(alive(p) for p in pids):
        time.sleep(0.05)
    assert not [p for p in pids if alive(p)], "children outlived their killed supervisor"


def test_a_standby_signalled_at_once_is_not_killed(tmp_path):
    """SIGUSR1 sent the moment a standby is spawned (a promotion during its start-up) waits in its
    blocked mask instead of killing it; a plain process is started with SIGUSR1 unblocked."""
    probe = [
        sys.executable,
        "-c",
        "import signal, sys; m = signal.pthread_sigmask(signal.SIG_BLOCK, []); "
        "print('blocked' if signal.SIGUSR1 in m else 'open', flush=True); "
        "signal.sigwait({signal.SIGUSR1}) if signal.SIGUSR1 in m else None",
    ]
    sup = Supervisor([ProcessSpec("spare", probe, standby_argv=probe), ProcessSpec("plain", probe)], tmp_path / "run.log")
    spare = sup._popen(sup.children["spare"], probe, standby=True)
    os.kill(spare.pid, signal.SIGUSR1)
    assert spare.wait(30) == 0  # woke from sigwait, not killed by the signal
    plain = sup._popen(sup.children["plain"], probe)
    assert plain.wait(30) == 0
    deadline = time.monotonic() + 10  # the log pumps (one thread each) write the lines
    while time.monotonic() < deadline and len((tmp_path / "run.log").read_text().splitlines()) < 2:
        time.sleep(0.02)
    lines = sorted((tmp_path / "run.log").read_text().splitlines())
    assert lines == ["plain    | open", "spare    | blocked"], lines
