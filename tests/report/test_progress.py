"""Progress lines (nxrecomp/common/progress.py): on a terminal (a real pseudo-terminal here) one
redrawn line with count, rate and ETA; in a pipe, quiet info log lines every 10 %."""

from __future__ import annotations

import fcntl
import os
import pty
import re
import struct
import subprocess
import sys
import termios
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
WORK = (
    "from nxrecomp.common.progress import Progress\nimport time\n"
    "with Progress('compiling shards', 20) as p:\n"
    "    for i in range(20):\n        time.sleep(0.01); p.advance(note=f'shard {i}')\n"
)


def on_terminal(cols: int | None) -> str:
    m, s = pty.openpty()
    if cols:
        fcntl.ioctl(s, termios.TIOCSWINSZ, struct.pack("HHHH", 30, cols, 0, 0))
    p = subprocess.Popen(
        [sys.executable, "-c", WORK],
        stdout=s,
        stderr=s,
        env={**os.environ, "PYTHONPATH": str(ROOT), "NXRECOMP_NXRECOMP_PROGRESS": "1"},
    )
    os.close(s)
    out = b""
    while True:
        try:
            d = os.read(m, 4096)
        except OSError:
            break
        if not d:
            break
        out += d
    os.close(m)
    assert p.wait(timeout=60) == 0
    return out.decode()


@pytest.mark.parametrize("cols", [100, None], ids=["100-columns", "unsized-pty"])
def test_terminal_line_has_rate_and_eta(cols) -> None:
    out = on_terminal(cols)
    frames = [f for f in out.split("\r") if f.strip()]
    assert len(frames) >= 2, out  # redrawn in place, not one line per step
    assert re.search(r"compiling shards: +\d+%.*\d+/20 \[\d\d:\d\d<\d\d:\d\d, [\d.]+/s", out), out  # ETA, rate
    assert "20/20" in frames[-1] and "done in" in frames[-1], frames[-1]
    if cols:
        assert all(len(f.strip("\n")) <= cols for f in frames), [len(f) for f in frames]


def test_pipe_logs_every_tenth() -> None:
    code = "import logging, sys\nlogging.basicConfig(level=logging.INFO, stream=sys.stdout, format='%(message)s')\n" + WORK
    r = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, env={**os.environ, "PYTHONPATH": str(ROOT)}
    )
    lines = r.stdout.splitlines()
    steps = (1, *range(2, 21, 2))  # the first step, then each 10 %
    assert [line for line in lines if "%" in line] == [f"compiling shards: {n}/20 ({5 * n}%)" for n in steps]
    assert re.fullmatch(r"compiling shards: 20 done in [\d.]+s", lines[-1])
    assert "\r" not in r.stdout + r.stderr
