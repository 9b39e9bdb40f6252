"""Homebrew built by other people (``hb_corpus.CORPUS``: libnx of several vintages, NRO and NSO
forms), recompiled with ``nxrecomp build`` and run headless with ``nxrecomp hz-run`` under a
time bound.  Each run is recorded (printed as a table at the end of the module): program,
toolchain, built, started, what it reached, its output, how it ended.

What is asserted for every program: the build succeeds; the run ends by itself within the
bound, cleanly (its exit code) or with a *named* guest error (a crash report naming the SVC or
the abort result), never with a host crash (a signal, a Python traceback); and it gets at least
as far as the corpus records (``expect``), so a regression fails.  Programs that do not yet
reach issue 30's must-shows (a presented frame with their text, their expected output) are
then marked expected-failure with the reason the corpus names.

The large programs (nx.js: 3.4-7 MB of code, ~8700 functions; 0.0.36's NRO took 18 min to
recompile on a loaded 2-core machine with part of its objects cached) are ``heavy``; the nton
forwarders (~60 KB, seconds) run in CI.  Run them all:
``pytest tests/horizon/test_homebrew_corpus.py -m "heavy or network"``.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.horizon.hb_corpus import CORPUS, CorpusUnavailable, Homebrew, fetch

pytestmark = pytest.mark.network

ROOT = Path(__file__).resolve().parents[2]
RUN_TIMEOUT = 120  # seconds a program may run headless before it counts as hanging
PLUS_AT = 300  # presented frames before the scripted PLUS
BUILD_TIMEOUT = 3600
# how far a run got, in order
STAGES = ("not built", "built", "started", "reached an SVC", "reached IPC", "gave output", "exited")
IPC_SVCS = {
    0x1F: "ConnectToNamedPort",
    0x21: "SendSyncRequest",
    0x22: "SendSyncRequestWithUserBuffer",
    0x40: "CreateSession",
    0x41: "AcceptSession",
    0x43: "ReplyAndReceive",
}


@dataclass
class Run:
    program: Homebrew
    built: bool = False
    started: bool = False
    reached: str = ""
    output: str = ""
    ended: str = ""
    stage: int = 0
    outcome: str = ""  # "exit:<code>", "break:<result>", "svc:<id>", "timeout", "host:<why>"


RECORD: list[Run] = []


def _classify(run: Run, rc: int | None, out: str, err: str) -> None:
    run.output = out.strip()
    if rc is None:
        run.ended, run.outcome = f"still running after {RUN_TIMEOUT} s (killed)", "timeout"
        return
    m = re.search(
        r"guest crash: svcBreak\(reason=(0x[0-9a-f]+).*?(?: with result (0x[0-9a-f]+) "
        r"\(module (\d+), description (\d+)\))?(?= in thread)",
        err,
    )
    s = re.search(r"guest crash: SVC (0x[0-9a-f]+), which the kernel does not serve", err)
    ipc = re.search(r"guest crash: IPC: service '([^']+)'(?:, interface \w+, command (\d+))? is not served", err)
    e = re.search(r"notice: .* exited with code (0x[0-9a-f]+)", err)
    pc = re.search(r"^\s+pc\s+(0x[0-9a-f]+) (\w+)\+", err, re.MULTILINE)
    if "Traceback (most recent call last)" in err or rc < 0:
        run.ended, run.outcome = f"host failure (status {rc})", f"host:{rc}"
        return
    run.started = bool(pc and pc.group(2) != "host") or bool(e) or rc == 0
    if m:
        res = m.group(2)
        run.outcome = f"break:{res or m.group(1)}"
        run.reached = f"svcBreak, abort result {res} ({m.group(3)}-{m.group(4)})" if res else f"svcBreak reason {m.group(1)}"
        run.ended = "named guest error (svcBreak)"
    elif ipc:
        run.outcome = f"ipc:{ipc.group(1)}" + (f"#{ipc.group(2)}" if ipc.group(2) else "")
        run.reached = f"IPC: service {ipc.group(1)}" + (f" command {ipc.group(2)}" if ipc.group(2) else "") + " (not served)"
        run.ended = "named guest error (unserved IPC)"
    elif s:
        svc = int(s.group(1), 16)
        run.outcome = f"svc:{svc:#x}"
        run.reached = f"SVC {svc:#x} {IPC_SVCS.get(svc, '')}".strip()
        run.ended = "named guest error (unserved SVC)"
    elif rc in (0,) or e:
        run.outcome = f"exit:{e.group(1) if e else '0x0'}"
        run.ended = f"exited, code {e.group(1) if e else 0}"
    else:
        first = next((ln for ln in err.splitlines() if ln.strip()), "")
        run.outcome = f"host:{rc}"
        run.ended = f"status {rc}: {first[:100]}"
    if run.outcome.startswith("exit"):
        run.stage = STAGES.index("exited")
    elif run.output:
        run.stage = STAGES.index("gave output")
    elif run.outcome.startswith("ipc:") or (run.outcome.startswith("svc:") and int(run.outcome[4:], 16) in IPC_SVCS):
        run.stage = STAGES.index("reached IPC")
    elif run.outcome.startswith(("svc:", "break:")):
        run.stage = STAGES.index("reached an SVC") if run.started else STAGES.index("built")
    else:
        run.stage = STAGES.index("started") if run.started else STAGES.index("built")


def _expected_stage(expect: str) -> int:
    kind = expect.split(":")[0]
    if kind == "exit":
        return STAGES.index("exited")
    if kind == "ipc" or (kind == "svc" and int(expect.split(":")[1], 16) in IPC_SVCS):
        return STAGES.index("reached IPC")
    return STAGES.index("reached an SVC")


def _table() -> str:
    head = ("program", "toolchain", "built", "started", "reached", "output", "ended")
    rows = [head] + [
        (
            r.program.name,
            r.program.toolchain,
            "yes" if r.built else "no",
            "yes" if r.started else "no",
            r.reached or "-",
            (r.output[:30] or "-").replace("\n", " "),
            r.ended,
        )
        for r in RECORD
    ]
    widths = [max(len(str(row[i])) for row in rows) for i in range(len(head))]
    return "\n".join("  ".join(str(c).ljust(w) for c, w in zip(row, widths)) for row in rows)


@pytest.fixture(scope="module", autouse=True)
def _print_table(request: pytest.FixtureRequest):
    yield
    if RECORD:
        text = "\nhomebrew corpus (issue 30):\n" + _table() + "\n"
        cap = request.config.pluginmanager.get_plugin("capturemanager")
        if cap is not None:
            with cap.global_and_fixture_disabled():
                print(text, flush=True)
        else:
            print(text, flush=True)


def _params():
    for hb in CORPUS:
        marks = [pytest.mark.heavy] if hb.large else []
        yield pytest.param(hb, id=hb.name, marks=marks)


@pytest.mark.parametrize("hb", list(_params()))
def test_homebrew_program(hb: Homebrew, tmp_path: Path) -> None:
    from recompiler.horizon import recompile_exefs

    try:
        prog = fetch(hb)
    except CorpusUnavailable as e:
        pytest.skip(f"HOMEBREW CORPUS UNAVAILABLE: {hb.name} ({hb.registry} {hb.package}=={hb.version}): {e}")
    run = Run(hb)
    RECORD.append(run)
    bundle = tmp_path / "bundle"
    t0 = time.monotonic()
    manifest = recompile_exefs(prog, bundle)
    run.built = True
    run.stage = STAGES.index("built")
    assert manifest["homebrew"]["abi"] in ("nro", "nso"), manifest["homebrew"]
    assert manifest["homebrew"]["self_relocating"] == ["main"]
    build_s = time.monotonic() - t0
    cmd = [sys.executable, "-m", "nxrecomp", "hz-run", str(bundle)]
    # a fresh SD card, and PLUS pressed after 5 s of frames: the homebrew way to ask a program
    # to quit (libnx's examples, nx.js's default), so one that reaches its main loop ends by itself
    sd = tmp_path / "sd"
    sd.mkdir()
    pad = tmp_path / "pad.txt"
    pad.write_text(f"0 -\n{PLUS_AT} Plus\n")
    env = {**os.environ, "NXRECOMP_CPU_HOST_SD_DIR": str(sd), "NXRECOMP_CPU_HOST_INPUT_SCRIPT": str(pad)}
    p = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    try:
        out, err = p.communicate(timeout=RUN_TIMEOUT)
        rc: int | None = p.returncode
    except subprocess.TimeoutExpired:
        p.kill()
        out, err = p.communicate()
        rc = None
    _classify(run, rc, out, err)
    detail = f"{hb.name}: built in {build_s:.0f} s, outcome {run.outcome}; stderr tail:\n{err[-1500:]}"
    assert not run.outcome.startswith("host:"), "the host failed instead of ending the program: " + detail
    assert run.outcome != "timeout", "the program neither ended nor was stopped with a named error: " + detail
    assert run.stage >= _expected_stage(hb.expect), (
        f"it got less far than recorded ({hb.expect}: {STAGES[_expected_stage(hb.expect)]}): " + detail
    )
    if run.outcome != hb.expect:
        # progress (or another stop of the same stage): keep the record true
        pytest.fail(f"outcome {run.outcome} differs from the recorded {hb.expect}: update hb_corpus.CORPUS. " + detail)
    if run.outcome.startswith("exit:"):
        return  # it ran to its own end: nothing missing
    pytest.xfail(f"{hb.why} (ended: {run.ended}, {run.reached})")
