"""Lift on miss on a real program nobody here wrote: Debian's arm64 busybox-static recompiled with
every 40th function the analysis found left out (``recompiler.hide_entries``), so the applets
run on functions lifted at run time wherever they reach one (calls, tail calls, function
pointers, returns into them).  stdout and exit status must equal qemu-aarch64's, and stderr
too once the lifter's own ``nxrecomp:`` lines are set aside.  Heavy: the changed function set
rebuilds every shard (minutes on two cores)."""

from __future__ import annotations

import os
import re
import subprocess
import sys

import pytest

from tests.cpu_host.busybox_cases import ENV, fetch_busybox, make_inputs

pytestmark = [pytest.mark.heavy, pytest.mark.network]

EVERY = 40
CASES = [
    ["echo", "hello", "world"],
    ["md5sum", "lines.txt", "words.txt"],
    ["sort", "-n", "-k1,1", "-s", "lines.txt"],
    ["uniq", "-c", "words.txt"],
    ["cut", "-d", " ", "-f", "2,3", "lines.txt"],
    ["printf", "%5.2f|%-4s|%x\n", "3.14159", "ab", "255"],
    ["sh", "-c", "i=0; s=0; while [ $i -lt 200 ]; do s=$((s + i * i)); i=$((i + 1)); done; echo $s"],
    ["awk", "{ n[$3]++ } END { for (k in n) print k, n[k] }", "lines.txt"],
    ["sed", "-n", "s/line \\([0-9]*\\)/L\\1/p", "lines.txt"],
    ["gzip", "-c", "lines.txt"],
]
NOTICE = re.compile(r"^nxrecomp: lifted at run time: function at (0x[0-9a-f]+)", re.MULTILINE)


@pytest.fixture(scope="module")
def setup(tmp_path_factory):
    import shutil

    if not shutil.which("qemu-aarch64"):
        pytest.skip("LOUD SKIP: qemu-aarch64 (apt qemu-user) is not installed")
    busybox = fetch_busybox()
    from recompiler.link import link_program
    from recompiler.pipeline import analyse_image

    image = link_program(busybox)
    funcs = sorted(a for a in analyse_image(image).functions if a != image.entry)
    hidden = funcs[EVERY // 2 :: EVERY]
    out = tmp_path_factory.mktemp("bb_liftmiss") / "bundle"
    env = {**os.environ, "NXRECOMP_RECOMPILER_HIDE_ENTRIES": ",".join(f"{a:#x}" for a in hidden)}
    r = subprocess.run(
        [sys.executable, "-m", "nxrecomp", "recompile", str(busybox), "-o", str(out)],
        capture_output=True,
        text=True,
        timeout=3600,
        env=env,
    )
    assert r.returncode == 0, r.stderr[-2000:]
    return busybox, out, make_inputs(tmp_path_factory.mktemp("bb_liftmiss_work")), set(hidden)


LIFTS: dict[str, int] = {}


@pytest.mark.parametrize("argv", CASES, ids=lambda a: " ".join(a)[:30])
def test_busybox_with_hidden_functions_runs_like_qemu(setup, argv):
    busybox, bundle, work, hidden = setup
    ours = subprocess.run([str(bundle / "nxrun"), *argv], capture_output=True, cwd=work, env=ENV, timeout=600)
    ref = subprocess.run(
        ["qemu-aarch64", "-0", argv[0], str(busybox), *argv[1:]], capture_output=True, cwd=work, env=ENV, timeout=600
    )
    err = ours.stderr.decode(errors="replace")
    own = [ln for ln in err.splitlines() if not ln.startswith("nxrecomp: ")]
    assert (ours.returncode, own) == (ref.returncode, ref.stderr.decode(errors="replace").splitlines()), err[-2000:]
    assert ours.stdout == ref.stdout, f"{argv}: stdout differs"
    lifted = [int(a, 16) for a in NOTICE.findall(err)]
    # every lift is of a function the build left out, or starts inside code the build lifted
    # as part of another function (a hidden entry's body was no one's)
    LIFTS[argv[0]] = len(lifted)
    print(f"\n{argv[0]}: {len(lifted)} run-time lifts, {len(set(lifted) & hidden)} of hidden entries")


def test_some_applet_needed_a_run_time_lift(setup):
    assert sum(LIFTS.values()) > 0, LIFTS
