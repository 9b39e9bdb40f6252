"""``nxrecomp build PROGRAM -o BUNDLE [--romfs PATH]`` (recompile a Switch program: an ExeFS
folder, a PFS0, a single NSO or a homebrew NRO) and
``nxrecomp hz-run BUNDLE`` (run it on the Horizon personality, until the supervisor's
``nxrecomp run`` starts it)."""
from __future__ import annotations

import argparse
import os
import sys


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("build", help="recompile a Switch program (ExeFS folder, PFS0, NSO or homebrew NRO) into a bundle")
    p.add_argument("exefs", metavar="PROGRAM",
                   help="ExeFS folder (main, sdk, subsdk*, main.npdm), PFS0 file (.nsp/.pfs0), a single .nso, or "
                        "a homebrew .nro (its RomFS goes into the bundle); without main.npdm a documented default "
                        "is used")
    p.add_argument("-o", "--out", required=True, help="bundle folder to write")
    p.add_argument("--romfs", help="the user's RomFS file (referenced by the bundle, not copied; for an NRO it "
                                   "replaces the NRO's own)")
    p.add_argument("--gpu", choices=("switch1", "switch2"), default="switch1",
                   help="the console the game was built for: its GPU's texture layout (switch1: Maxwell "
                        "GOBs, switch2: Ampere/Turing GOBs); default switch1")
    p.set_defaults(func=_build)
    r = sub.add_parser("hz-run", help="run a Horizon bundle made by 'nxrecomp build' (CPU host only)")
    r.add_argument("bundle")
    r.add_argument("--input", help="scripted gamepad input (settings cpu_host.input_script)")
    r.add_argument("--audio-out", metavar="FILE", help="write the program's sound to this WAV file instead of the "
                                                        "audio device (settings cpu_host.audio_out)")
    r.set_defaults(func=_run)


def _build(a: argparse.Namespace) -> int:
    from recompiler.horizon import recompile_exefs

    m = recompile_exefs(a.exefs, a.out, a.romfs, gpu=a.gpu)
    hb = m.get("homebrew") or {}
    start = {"nro": "homebrew, NRO start-up (hbloader's)", "nso": "homebrew, NSO start-up"}.get(hb.get("abi"),
                                                                                              "SDK start-up")
    title = f" '{hb['title']}'" if hb.get("title") else ""
    print(f"{a.out}:{title} {m['stats']['functions']} functions, modules "
          + ", ".join(f"{x['name']}@{x['base']:#x}" for x in m["modules"]) + f"; {start}")
    return 0


def _run(a: argparse.Namespace) -> int:
    from cpu_host.horizon.runner import run
    from nxrecomp import log

    if a.audio_out:
        os.environ["NXRECOMP_CPU_HOST_AUDIO_OUT"] = os.path.abspath(a.audio_out)
    rc = run(a.bundle, input_script=a.input)
    # guest threads may still be running on host threads: leave without tearing them down
    log.flush()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(rc)
