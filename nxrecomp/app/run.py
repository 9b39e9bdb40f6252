"""``nxrecomp run BUNDLE``: a bundle through every process — shader service, GPU process, CPU
host (``supervise_bundle.py``) — under the supervisor (``supervisor.py``), in a run folder that
holds the sockets and the gathered log."""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

from nxrecomp.common.errors import NxError


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("run", help="run a bundle: shader service, GPU process, CPU host, supervised")
    p.add_argument("bundle", help="bundle folder made by nxrecomp recompile")
    p.add_argument("--run-dir", help="folder for sockets and run.log (default: a fresh temporary folder)")
    p.add_argument("--cpu-cmd", help="command line of the CPU host (default: nxrecomp exec BUNDLE)")
    p.add_argument("--frames-dir", help="GPU process: write presented frames as PNG here")
    p.add_argument("--record", help="GPU process: record the command stream to this file")
    p.add_argument("--echo", action="store_true", help="also print the gathered logs on stderr")
    p.add_argument(
        "--audio-out",
        metavar="FILE",
        help="CPU host: write the program's sound to this WAV file instead of the audio device (cpu_host.audio_out)",
    )
    p.set_defaults(func=_run)


def _run(a: argparse.Namespace) -> int:
    from nxrecomp.app.supervise_bundle import bundle_specs
    from nxrecomp.app.supervisor import Supervisor

    bundle = Path(a.bundle)
    if not bundle.exists():
        raise NxError("bundle folder does not exist", path=str(bundle))
    run_dir = Path(a.run_dir) if a.run_dir else Path(tempfile.mkdtemp(prefix="nxrun"))
    run_dir.mkdir(parents=True, exist_ok=True)
    if len(str(run_dir.resolve())) > 90:
        raise NxError("run folder path too long for UNIX socket names (keep it under 90 characters)", path=str(run_dir))
    if a.record:  # the GPU processes of this run append to it (a restart goes on recording)
        Path(a.record).unlink(missing_ok=True)
    specs = bundle_specs(bundle, run_dir, a.cpu_cmd, a.frames_dir, a.record)
    if a.audio_out:
        specs[-1].env["NXRECOMP_CPU_HOST_AUDIO_OUT"] = str(Path(a.audio_out).resolve())
    sup = Supervisor(specs, run_dir / "run.log", echo=sys.stderr if a.echo else None)
    print(f"nxrecomp run: logs in {run_dir / 'run.log'}", file=sys.stderr)
    return sup.run(install_signals=True)
