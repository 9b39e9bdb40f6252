"""Guest threads in the Linux personality (cpu_host/runtime/linux/linux_threads.c), against qemu-aarch64.

- ``src/pthreads_test.c`` (ours, musl's pthreads): mutexes, condition variables, thread-local
  variables, joins, a barrier, waves of threads, pthread_kill's handler on the named thread, a
  signal to the process taken by the one thread that does not block it, real-time signals
  queued while blocked (sigqueue: each instance once, in order, with its value), the raw futex calls
  (WAIT's EAGAIN and timeout, CMP_REQUEUE, WAKE counts), pthread_cancel (a real-time signal
  the host's libc also uses: guest 32..62 are host 34..64, as under qemu), timed waits, detached threads, rwlocks, pthread_once, the main thread leaving first; each part
  prints what it computed, whatever the interleaving, so stdout, stderr and the exit status
  must be qemu's byte for byte.  Repeated runs look for races.
- zstd 1.5.7 (zstandard sdist) built with ZSTD_MULTITHREAD: its worker pool compresses with
  ``-jN`` threads (our driver's ZSTD_c_nbWorkers); zstd's output does not depend on the threads'
  timing, so it must be qemu's, and differ from the one-thread output (the pool really ran).
- the same exercise linked with Debian 12's static glibc (``glibc_static.py``; heavy: its
  recompile is ~1.5 min of CPU): glibc's own pthreads, clone3 then clone, condvars on
  FUTEX_WAIT_BITSET.
- lift on miss with threads: the build leaves ``hidden_worker`` out (``recompiler.hide_entries``)
  and two threads call it through a pointer at the same moment: it is lifted once, the other
  thread's miss waits for that lift (the exit summary counts it), and the results are qemu's;
  the rebuild takes the address from the bundle's discovered entries and lifts nothing more.
"""

from __future__ import annotations

import os
import random
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.realprogs.conftest import ENV, bundle, program, run_both
from tests.realprogs.test_xxhash_zstd import text_data

pytestmark = pytest.mark.network

PARTS = (
    "mutex",
    "condvar",
    "tls",
    "join",
    "barrier",
    "many",
    "kill",
    "procsig",
    "rtsig",
    "futex",
    "cancel",
    "timed",
    "detach",
    "rwlock",
    "once",
    "hidden",
    "mainexit",
)


@pytest.fixture(scope="module")
def pthreads(tmp_path_factory) -> Path:
    return bundle("pthreads_test", tmp_path_factory)


@pytest.fixture(scope="module")
def zstd_mt(tmp_path_factory) -> Path:
    return bundle("zstd_mt", tmp_path_factory)


@pytest.mark.parametrize("part", PARTS)
def test_pthreads_part_matches_qemu(pthreads, tmp_path, part):
    r = run_both("pthreads_test", pthreads, ["pthreads_test", part], tmp_path, timeout=120)
    assert r.returncode == 0 and r.stdout.decode().startswith(f"{part}: "), r.stdout


def test_pthreads_all_parts_repeated_match_qemu(pthreads, tmp_path):
    """Every part in one process, ten times: a race would show as a difference some time."""
    first = run_both("pthreads_test", pthreads, ["pthreads_test"], tmp_path, timeout=120)
    assert first.stdout.decode().endswith("all checks passed\n"), first.stdout
    for k in range(9):
        again = subprocess.run(
            [sys.executable, "-m", "nxrecomp", "exec", str(pthreads), "--", "pthreads_test"],
            capture_output=True,
            cwd=tmp_path,
            env=ENV,
            timeout=120,
        )
        assert (again.returncode, again.stdout, again.stderr) == (0, first.stdout, first.stderr), (
            k,
            again.stdout[-1000:],
            again.stderr[-2000:],
        )


def test_pthreads_python_runner_matches_qemu(pthreads, tmp_path):
    """The Python runner (cpu_host.native_launcher off), twice: its process has host threads that
    run no guest code (a library's worker pool), so a signal to the process the kernel gives one
    of them must still reach the guest thread that does not block it (procsig).  Not rtsig: an
    instance such a thread took while every guest thread blocked the signal is queued to the
    process again, behind the ones sent after it (docs/ARCHITECTURE.md)."""
    parts = [p for p in PARTS if p not in ("rtsig", "mainexit")]
    ref = run_both("pthreads_test", pthreads, ["pthreads_test", *parts], tmp_path, timeout=120)
    env = {**ENV, "NXRECOMP_CPU_HOST_NATIVE_LAUNCHER": "0", "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
    for _ in range(2):
        ours = subprocess.run(
            [sys.executable, "-m", "nxrecomp", "exec", str(pthreads), "--", "pthreads_test", *parts],
            capture_output=True,
            cwd=tmp_path,
            env=env,
            timeout=120,
        )
        assert (ours.returncode, ours.stdout, ours.stderr) == (0, ref.stdout, ref.stderr), (
            ours.stdout[-1000:],
            ours.stderr[-2000:],
        )


@pytest.fixture(scope="module")
def corpus(tmp_path_factory) -> Path:
    d = tmp_path_factory.mktemp("zstd_mt")
    # several of zstd's jobs at level 1 (a job is a few window sizes): text, then random bytes
    (d / "in.bin").write_bytes(text_data(6 << 20, 21) + random.Random(9).randbytes(1 << 20))
    return d


def test_zstd_worker_threads_match_qemu(zstd_mt, corpus):
    data = (corpus / "in.bin").read_bytes()
    comp = run_both("zstd_mt", zstd_mt, ["zstd", "-1", "-j2"], corpus, stdin=data).stdout
    assert comp[:4] == b"\x28\xb5\x2f\xfd" and len(comp) < len(data)  # zstd frame magic
    one = run_both("zstd_mt", zstd_mt, ["zstd", "-1"], corpus, stdin=data).stdout
    assert one != comp, "the worker pool's output equals the one-thread output: did it run?"
    back = run_both("zstd_mt", zstd_mt, ["zstd", "-d"], corpus, stdin=comp).stdout
    assert back == data


@pytest.mark.heavy
@pytest.mark.parametrize("level,workers", [("-3", "-j4"), ("-9", "-j3"), ("-5", "-j8")])
def test_zstd_more_worker_threads_match_qemu(zstd_mt, corpus, level, workers):
    data = (corpus / "in.bin").read_bytes()
    comp = run_both("zstd_mt", zstd_mt, ["zstd", level, workers], corpus, stdin=data).stdout
    assert run_both("zstd_mt", zstd_mt, ["zstd", "-d"], corpus, stdin=comp).stdout == data


@pytest.mark.heavy
def test_pthreads_with_debian_static_glibc_match_qemu(tmp_path):
    if not shutil.which("qemu-aarch64"):
        pytest.skip("LOUD SKIP: qemu-aarch64 (apt qemu-user) is not installed")
    from nxrecomp.common import debian
    from tests.realprogs import glibc_static

    try:
        binary = glibc_static.build("pthreads_test.c")
    except debian.RegistryUnreachable as e:
        pytest.skip(f"LOUD SKIP: Debian unreachable, cannot fetch glibc's static libraries: {e}")
    out = tmp_path / "bundle"
    r = subprocess.run(
        [sys.executable, "-m", "nxrecomp", "recompile", str(binary), "-o", str(out)], capture_output=True, text=True, timeout=3600
    )
    assert r.returncode == 0, r.stderr[-2000:]
    for argv in (["pthreads_test"], ["pthreads_test", "mainexit"]):
        ours = subprocess.run(
            [sys.executable, "-m", "nxrecomp", "exec", str(out), "--", *argv],
            capture_output=True,
            cwd=tmp_path,
            env=ENV,
            timeout=300,
        )
        ref = subprocess.run(
            ["qemu-aarch64", "-0", argv[0], str(binary), *argv[1:]], capture_output=True, cwd=tmp_path, env=ENV, timeout=300
        )
        assert ref.returncode == 0 and b"checks failed" not in ref.stdout, ref.stdout
        assert (ours.returncode, ours.stdout, ours.stderr) == (ref.returncode, ref.stdout, ref.stderr), (
            argv,
            ours.stdout[-1500:],
            ours.stderr[-1500:],
        )


NOTICE = re.compile(r"^nxrecomp: lifted at run time: function at (0x[0-9a-f]+)", re.MULTILINE)


def _hidden_worker(seed: int) -> int:
    """pthreads_test.c's hidden_worker, the oracle of its results."""
    m = (1 << 64) - 1
    h = seed
    for i in range(1000):
        h = (((h ^ (h >> 29)) * 0xBF58476D1CE4E5B9) + i) & m
    return h


def test_two_threads_miss_one_hidden_function_and_it_is_lifted_once(tmp_path):
    if not shutil.which("qemu-aarch64"):
        pytest.skip("LOUD SKIP: qemu-aarch64 (apt qemu-user) is not installed")
    binary = program("pthreads_test")
    out = tmp_path / "bundle"
    env = {**os.environ, "NXRECOMP_RECOMPILER_HIDE_ENTRIES": "hidden_worker"}
    r = subprocess.run(
        [sys.executable, "-m", "nxrecomp", "recompile", str(binary), "-o", str(out)],
        capture_output=True,
        text=True,
        timeout=1800,
        env=env,
    )
    assert r.returncode == 0, r.stderr[-2000:]
    from elftools.elf.elffile import ELFFile

    with open(binary, "rb") as f:
        addr = next(s["st_value"] for s in ELFFile(f).get_section_by_name(".symtab").iter_symbols() if s.name == "hidden_worker")
    ours = subprocess.run(
        [str(out / "nxrun"), "pthreads_test", "hidden"], capture_output=True, text=True, timeout=300, cwd=tmp_path
    )
    ref = subprocess.run(
        ["qemu-aarch64", "-0", "pthreads_test", str(binary), "hidden"],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=tmp_path,
        env=ENV,
    )
    expected = f"hidden: results {_hidden_worker(1):016x} {_hidden_worker(2):016x}"
    assert expected in ref.stdout.splitlines(), ref.stdout
    assert (ours.returncode, ours.stdout) == (ref.returncode, ref.stdout), ours.stderr[-2000:]
    assert [int(a, 16) for a in NOTICE.findall(ours.stderr)] == [addr], ours.stderr[-2000:]
    assert f"nxrecomp: run-time lifts: 1 ({addr:#x}); 1 miss waited for another thread's lift" in ours.stderr, ours.stderr[-2000:]
    # nothing else on stderr: the guest's own is qemu's (empty)
    assert [ln for ln in ours.stderr.splitlines() if not ln.startswith("nxrecomp: ")] == ref.stderr.splitlines()

    # the rebuild (the hide setting still on) takes the address from the bundle's discovered
    # entries: the threads then run with no lift at all
    r = subprocess.run(
        [sys.executable, "-m", "nxrecomp", "recompile", str(binary), "-o", str(out)],
        capture_output=True,
        text=True,
        timeout=1800,
        env=env,
    )
    assert r.returncode == 0 and "took 1 of 1 entries from" in r.stderr, r.stderr[-2000:]
    again = subprocess.run(
        [str(out / "nxrun"), "pthreads_test", "hidden"], capture_output=True, text=True, timeout=300, cwd=tmp_path
    )
    assert (again.returncode, again.stdout, again.stderr) == (ref.returncode, ref.stdout, ref.stderr), again.stderr[-2000:]
