"""``nxrecomp busybox-demo``: recompile a real program nobody here wrote — Debian 12's arm64
``busybox-static`` — to x86-64, run a few of its applets natively through the CPU host, and,
where ``qemu-aarch64`` is installed, check each output against it.  (The README's main job,
``nxrecomp demo``, plays the demo game: nxrecomp/app/demo_job.py.)
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from nxrecomp.common import settings

SCRIPT = [
    ["echo", "recompiled busybox says hello"],
    ["sh", "-c", "for i in 1 2 3 4 5; do printf '%d squared is %d\\n' $i $((i * i)); done"],
    ["sh", "-c", "seq 1 20000 | sort -r | md5sum"],
    ["awk", 'BEGIN { for (i = 1; i <= 10; i++) s += i * i; printf "sum of squares 1..10 = %d\\n", s }'],
    ["sh", "-c", "seq 1 5000 | gzip -9 | gunzip | sha256sum"],
]


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("busybox-demo", help="recompile Debian's arm64 busybox and run a few applets, checked against qemu")
    p.add_argument("--out", help="bundle folder (default: <cache_dir>/bundles/busybox-arm64)")
    p.set_defaults(func=_demo)


def _demo(a: argparse.Namespace) -> int:
    from nxrecomp.common import debian
    from nxrecomp.app.build import recompile_linux

    bb = debian.busybox("arm64")
    out = Path(a.out) if a.out else Path(settings.get("nxrecomp", "cache_dir")) / "bundles" / "busybox-arm64"
    print(f"recompiling {bb} -> {out}", flush=True)
    t0 = time.monotonic()
    m = recompile_linux(bb, out)
    st = m["stats"]
    print(
        f"  {st['functions']} functions, {st['shards']} shards ({st['objects_cached']}/{st['objects']} objects "
        f"from the cache) in {time.monotonic() - t0:.1f}s",
        flush=True,
    )
    qemu = shutil.which("qemu-aarch64")
    bad = 0
    with tempfile.TemporaryDirectory() as work:
        for argv in SCRIPT:
            t = time.monotonic()
            ours = subprocess.run(
                [sys.executable, "-m", "nxrecomp", "exec", str(out), "--", *argv], capture_output=True, cwd=work
            )
            dt = time.monotonic() - t
            verdict = ""
            if qemu:
                ref = subprocess.run([qemu, "-0", argv[0], str(bb), *argv[1:]], capture_output=True, cwd=work)
                same = (ref.returncode, ref.stdout, ref.stderr) == (ours.returncode, ours.stdout, ours.stderr)
                verdict = "same as qemu-aarch64" if same else "DIFFERS from qemu-aarch64"
                bad += not same
            print(f"$ busybox {' '.join(argv)}    [{dt:.2f}s, exit {ours.returncode}, {verdict}]")
            sys.stdout.write(ours.stdout.decode(errors="replace"))
            if ours.stderr:
                sys.stdout.write(ours.stderr.decode(errors="replace"))
    print(f"bundle: {out}  (run more: nxrecomp exec {out} -- APPLET ARGS...)")
    return 1 if bad else 0
