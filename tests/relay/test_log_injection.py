"""Names with control bytes, quotes, backslashes, Unicode line separators and bidi controls, in
signed tokens, through a real ``nxrecomp relay`` process logging at info: every line of its log
must be one well-formed record, no forged record may appear, and each hostile name must read
back exactly from its escaped field.  The formatter is also checked directly for every code
point class (C0, DEL, C1, surrogates from undecodable bytes, separators)."""

from __future__ import annotations

import logging
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from relaytest import report

from cpu_host.coop import CoopClient
from nxrecomp.common import log as nxlog
from relay import tokens

ROOT = Path(__file__).resolve().parents[2]
SECRET = "0123456789abcdef0123456789abcdef"
FORGED = "99:99:99.999 error   relay x: F"  # a time no real record has
# one record: time, level, process, component, message, then key=value fields (bare or quoted)
FIELD = r'[A-Za-z0-9_.,:/@+-]+=(?:[A-Za-z0-9_.,:/@+-]+|"(?:[^"\\\x00-\x1f\x7f]|\\.)*")'
LINE = re.compile(r"(\d\d:\d\d:\d\d\.\d{3}) (\w+) +(?:relay|p) (\w+): ([^\x00-\x1f\x7f]*?)((?: " + FIELD + r")*)$")

HOSTILE = {
    "newline": "a\n" + FORGED,
    "cr": "b\r" + FORGED,
    "nul": "c\x00d",
    "esc": "e\x1b[31mred\x1b[0m",
    "quote": 'f" x="y',
    "backslash": "g\\n\\",
    "space_eq": "h i=j",
    "u2028": "k\u2028" + FORGED[:20],
    "nel": "l\x85m",
    "bidi": "n\u202eo",
}


def fields(rest: str) -> dict[str, str]:
    return {m[1]: nxlog.unescape(m[2]) for m in re.finditer(r' ([^=\s]+)=("(?:[^"\\]|\\.)*"|\S+)', rest)}


def test_hostile_names_cannot_forge_log_lines(tmp_path):
    env = {k: v for k, v in os.environ.items() if not k.startswith(("NXRECOMP_RELAY_", "NXRECOMP_NXRECOMP_LOG_"))}
    env.update(NXRECOMP_RELAY_SECRET=SECRET, NXRECOMP_NXRECOMP_LOG_LEVEL="info", PYTHONPATH=str(ROOT))
    proc = subprocess.Popen(
        [sys.executable, "-m", "nxrecomp", "relay", "--listen", "127.0.0.1:0", "--metrics", ""],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        errors="surrogateescape",
    )
    try:
        m = re.match(r"relay listening on ([\d.]+):(\d+)", proc.stdout.readline())
        assert m
        relay = (m[1], int(m[2]))
        secret = SECRET.encode()
        clients = []
        room = "\n" + FORGED
        host = CoopClient(relay)
        host.open(tokens.issue(secret, room, "host\x1b]0;title\x07", 60, host=True))
        clients.append(host)
        for tag, name in HOSTILE.items():
            c = CoopClient(relay)
            r = f"{tag}\x00{FORGED}"[:32]
            c.open(tokens.issue(secret, r, name.encode()[:32].decode(errors="ignore"), 60, host=True))
            clients.append(c)
        for c in clients:
            c.close()
        time.sleep(0.3)
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=10)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    lines = err.split("\n")
    assert lines[-1] == ""
    lines = lines[:-1]
    bad = [ln for ln in lines if not LINE.fullmatch(ln)]
    assert not bad, f"malformed log lines: {bad[:3]!r}"
    assert not any(ln.startswith("99:") for ln in lines)
    logged_players, logged_rooms = set(), set()
    for ln in lines:
        f = fields(LINE.fullmatch(ln)[5])
        logged_players.add(f.get("player"))
        logged_rooms.add(f.get("room"))
    for tag, name in HOSTILE.items():
        want = name.encode()[:32].decode(errors="ignore")
        assert want in logged_players, (tag, want)
        assert f"{tag}\x00{FORGED}"[:32] in logged_rooms, tag
    assert room in logged_rooms and "host\x1b]0;title\x07" in logged_players
    report("log_injection", lines=len(lines), hostile_names=len(HOSTILE) * 2 + 2, forged_lines=0, malformed_lines=0)


@pytest.mark.parametrize(
    "raw",
    [
        "plain",
        "",
        " ",
        "a b",
        "x\ny",
        "\r",
        "\x00",
        "\x1b[2J",
        "\x7f",
        "\x9b",
        "\u2028",
        "\u2029",
        "\u202e",
        "\ufeff",
        "\udcff",
        "\U000e0001",
        '"',
        "\\",
        "\\x41",
        'k="v"',
        "é",
        "日本",
        "\U0001f600",
    ],
)
def test_value_round_trip_and_one_line(raw):
    v = nxlog.value(raw)
    assert nxlog.unescape(v) == raw
    assert all(ch == " " or ch.isprintable() for ch in v)
    if raw and re.fullmatch(r"[A-Za-z0-9_.,:/@+-]+", raw):
        assert v == raw
    else:
        assert v.startswith('"') and v.endswith('"') and '"' not in v[1:-1].replace('\\"', "")


def test_bytes_values_and_message_and_traceback_escaped():
    fmt = nxlog._Fmt("p")
    rec = logging.LogRecord("c", logging.ERROR, __file__, 1, "msg %s", ("x\ny",), None)
    rec.kv = {"name": b"\xff\xfe\n", "n": 3}
    out = fmt.format(rec)
    assert out.count("\n") == 0 and out.endswith(' name="\\udcff\\udcfe\\n" n=3') and "msg x\\ny" in out
    try:
        raise ValueError("bad\nname\x1b")
    except ValueError:
        rec = logging.LogRecord("c", logging.ERROR, __file__, 1, "boom", (), sys.exc_info())
    out = fmt.format(rec).split("\n")
    assert out[0].endswith("c: boom") and all(ln.startswith("    ") for ln in out[1:])
    assert any("bad\\nname\\x1b" in ln for ln in out[1:])


def test_traceback_through_the_log_queue_stays_under_its_record():
    """Through setup()'s queue (a real process): the traceback follows its record on lines
    indented by four spaces, a hostile exception text cannot start a record of its own."""
    code = (
        "import logging\nfrom nxrecomp.common import log\nlog.setup('p', 'debug')\n"
        f"try:\n    raise ValueError({chr(10) + FORGED!r} + '\\x1b[2J')\n"
        "except ValueError:\n    logging.getLogger('c').exception('boom %s', 'x\\ny')\n"
        "log.kv(logging.getLogger('c'), logging.INFO, 'after', n=1)\nlog.flush()\n"
    )
    r = subprocess.run(
        [sys.executable, "-c", code],
        cwd=ROOT,
        env=dict(os.environ, PYTHONPATH=str(ROOT)),
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    lines = r.stderr.splitlines()
    records = [ln for ln in lines if not ln.startswith("    ")]
    assert [LINE.fullmatch(ln) is not None for ln in records] == [True, True], r.stderr
    assert records[0].endswith("c: boom x\\ny") and records[1].endswith("c: after n=1")
    tb = lines[1:-1]
    assert tb and tb[0] == "    Traceback (most recent call last):" and any("\\x1b[2J" in ln for ln in tb)
