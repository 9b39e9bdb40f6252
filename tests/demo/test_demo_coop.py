"""Two demo instances play co-op through a relay on loopback: each is its own bundle of
processes (shader service, GPU process, CPU host) with its own recompiled game; the relay is
the real server (relay/) with signed join tokens.  Each game sends its player's position every
frame and draws the other players; co-op never changes the deterministic simulation."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path


from relay import tokens
from relay.server import RelayConfig
from tests.demo.test_demo import ROOT, native_states, read
from tests.relay.relaytest import Relay


JOIN_WAIT_S = 300  # bob's join waits this long for alice's room: alice's whole start-up on a loaded machine


def start(out: Path, frames: int, relay: tuple[str, int], token: bytes, saves: Path) -> subprocess.Popen:
    env = {**os.environ, "NXRECOMP_CPU_HOST_SAVE_DIR": str(saves), "NXRECOMP_CPU_HOST_RELAY_JOIN_TIMEOUT_S": str(JOIN_WAIT_S)}
    return subprocess.Popen(
        [
            sys.executable,
            "-m",
            "nxrecomp",
            "demo",
            "--frames",
            str(frames),
            "--out",
            str(out),
            "--screenshot-every",
            "0",
            "--relay",
            f"{relay[0]}:{relay[1]}",
            "--coop-token",
            tokens.to_text(token),
        ],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env=env,
    )


def test_two_demos_meet_through_the_relay(tmp_path) -> None:
    relay = Relay(RelayConfig(listen="127.0.0.1:0"))
    a = b = None
    try:
        # Bob first: his game's join waits for the room (the relay refuses it as no_room until
        # alice opens it).  Only then alice, so bob is in the room one JOIN retry (0.25 s) after
        # it opens, whatever either start-up costs: alice's 900 frames need only outlast bob's
        # 120, played at the same time.  (Alice first raced her 900 unpaced frames against bob's
        # whole start-up, ~12 s each on an idle machine, and bob found no room.)
        b = start(tmp_path / "b", 120, relay.address, relay.token("arena", "bob"), tmp_path / "sb")
        deadline = time.monotonic() + JOIN_WAIT_S
        while relay.server.events["refused_no_room"] == 0 and b.poll() is None:
            assert time.monotonic() < deadline, "bob's game never asked the relay for the room"
            time.sleep(0.1)
        assert b.poll() is None, b.communicate()[0][-3000:]
        a = start(tmp_path / "a", 900, relay.address, relay.token("arena", "alice", host=True), tmp_path / "sa")
        out_b = b.communicate(timeout=600)[0]
        assert b.returncode == 0, out_b[-3000:]
        out_a = a.communicate(timeout=600)[0]
        assert a.returncode == 0, out_a[-3000:]
    finally:
        for p in (a, b):
            if p is not None and p.poll() is None:
                p.kill()
        relay.close()
    ra = json.loads((tmp_path / "a" / "report.json").read_text())
    rb = json.loads((tmp_path / "b" / "report.json").read_text())
    said_a, said_b = "\n".join(ra["game_said"]), "\n".join(rb["game_said"])
    slot_a = int(said_a.split("coop: in the room as player ")[1].split()[0])
    slot_b = int(said_b.split("coop: in the room as player ")[1].split()[0])
    assert slot_a != slot_b
    assert f"coop: player {slot_b} appears" in said_a and f"coop: player {slot_b} left" in said_a
    assert f"coop: player {slot_a} appears" in said_b
    got_a = int(said_a.split("coop: received ")[1].split()[0])
    got_b = int(said_b.split("coop: received ")[1].split()[0])
    assert got_a > 10 and got_b > 10, (got_a, got_b)
    # co-op leaves the simulation alone: both games' states are the native build's
    assert rb["states"] == native_states(120, tmp_path)
    assert ra["states"][:120] == rb["states"]
    # alice's cube (magenta, lit) is in bob's last frame; bob plays alone nowhere
    last = read(Path(rb["frames_dir"]) / "frame_000120.png").astype(int)
    peer = (last[..., 0] > 150) & (last[..., 1] < 100) & (last[..., 2] > 100) & (last[..., 2] < last[..., 0])
    assert peer.sum() > 20, peer.sum()
