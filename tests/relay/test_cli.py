"""``nxrecomp relay`` as a real process: secret file from keygen, tokens from the CLI,
/healthz, and a graceful SIGTERM that tells the players."""

from __future__ import annotations

import os
import re
import signal
import stat
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

from cpu_host.coop import CoopClient

ROOT = Path(__file__).resolve().parents[2]


def nx(*args: str, env: dict, **kw) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "nxrecomp", *args], cwd=ROOT, env=env, capture_output=True, text=True, timeout=60, **kw
    )


def test_relay_process_tokens_health_and_graceful_shutdown(tmp_path):
    env = {k: v for k, v in os.environ.items() if not k.startswith("NXRECOMP_RELAY_")}
    r = nx("relay", "token", "--room", "r", "--player", "a", env=env)
    assert r.returncode == 2 and r.stderr.count("\n") == 1 and "no token secret" in r.stderr
    key = tmp_path / "relay.key"
    assert nx("relay", "keygen", str(key), env=env).returncode == 0
    assert stat.S_IMODE(key.stat().st_mode) == 0o600 and len(key.read_text().strip()) == 64
    assert nx("relay", "keygen", str(key), env=env).returncode == 2  # never overwrites a key
    env["NXRECOMP_RELAY_SECRET_FILE"] = str(key)
    host_tok = nx("relay", "token", "--room", "r", "--player", "a", "--host", env=env).stdout.strip()
    guest_tok = nx("relay", "token", "--room", "r", "--player", "b", "--ttl", "30", env=env).stdout.strip()
    assert host_tok.startswith("nxr1.") and guest_tok.startswith("nxr1.")
    proc = subprocess.Popen(
        [sys.executable, "-m", "nxrecomp", "relay", "--listen", "127.0.0.1:0", "--metrics", "127.0.0.1:0"],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        line = proc.stdout.readline()
        m = re.match(r"relay listening on ([\d.]+):(\d+) metrics on ([\d.]+):(\d+)", line)
        assert m, line
        relay, metrics = (m[1], int(m[2])), f"http://{m[3]}:{m[4]}"
        assert urllib.request.urlopen(metrics + "/healthz", timeout=5).read() == b"ok\n"
        a, b = CoopClient(relay), CoopClient(relay)
        assert a.open(host_tok) == 0 and b.join(guest_tok) == 1
        deadline = time.monotonic() + 5
        while 1 not in a.roster and time.monotonic() < deadline:  # a learns of b from a PEER event
            time.sleep(0.01)
        a.send(1, 0, b"hi", reliable=True)
        assert b.recv(timeout=5).payload == b"hi"
        deadline = time.monotonic() + 10  # the loop publishes a snapshot every 0.25 s
        while True:
            text = urllib.request.urlopen(metrics + "/metrics", timeout=5).read().decode()
            if "relay_players 2" in text and "relay_rooms 1" in text or time.monotonic() > deadline:
                break
            time.sleep(0.1)
        assert "relay_players 2" in text and "relay_rooms 1" in text, text[:1500]
        proc.send_signal(signal.SIGTERM)
        for c in (a, b):
            ev = c.poll_event(timeout=5)
            while ev and ev.kind != "closed":
                ev = c.poll_event(timeout=5)
            assert ev and ev.name == "shutdown"
        assert proc.wait(timeout=10) == 0
        a.close(), b.close()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def test_systemd_unit_verifies(tmp_path):
    import shutil

    import pytest

    tool = shutil.which("systemd-analyze")
    if not tool:
        pytest.skip("systemd-analyze not installed: the unit's syntax is unchecked")
    unit = (ROOT / "docs" / "nxrecomp-relay.service").read_text()
    assert "ExecStart=/opt/nxrecomp/.venv/bin/nxrecomp relay --listen" in unit
    # point ExecStart at an executable that exists here; everything else is checked as shipped
    path = tmp_path / "nxrecomp-relay.service"
    path.write_text(unit.replace("/opt/nxrecomp/.venv/bin/nxrecomp", sys.executable))
    r = subprocess.run([tool, "verify", str(path)], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0 and "nxrecomp-relay.service" not in r.stderr, r.stderr
