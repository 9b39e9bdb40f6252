"""``nxrecomp hz-run BUNDLE``: the CPU host's process for a Horizon bundle (made by ``nxrecomp
build``, nxrecomp/app/build.py), alone or started by ``nxrecomp run``'s supervisor."""

from __future__ import annotations

import argparse
import os
import sys


def register(sub: argparse._SubParsersAction) -> None:
    r = sub.add_parser("hz-run", help="run a Horizon bundle made by 'nxrecomp build' (CPU host only)")
    r.add_argument("bundle")
    r.add_argument("--input", help="scripted gamepad input (settings cpu_host.input_script)")
    r.add_argument(
        "--audio-out",
        metavar="FILE",
        help="write the program's sound to this WAV file instead of the audio device (settings cpu_host.audio_out)",
    )
    r.set_defaults(func=_run)


def _run(a: argparse.Namespace) -> int:
    from cpu_host.horizon.runner import run
    from nxrecomp.common import log

    if a.audio_out:
        os.environ["NXRECOMP_CPU_HOST_AUDIO_OUT"] = os.path.abspath(a.audio_out)
    rc = run(a.bundle, input_script=a.input)
    # guest threads may still be running on host threads: leave without tearing them down
    log.flush()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(rc)
