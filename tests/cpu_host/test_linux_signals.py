"""Guest signal handlers in the Linux personality (cpu_host/runtime/linux/linux_syscalls.c, "signals"):
every case runs recompiled and under qemu-aarch64, which must agree on stdout, stderr and exit
status (a death by a signal included).

``programs/signals.c`` (static musl, built here) covers raise/kill of self with SA_SIGINFO, the
arm64 frame the handler finds (fpsimd record, end record, saved mask), masks and sigpending,
sigsuspend, alarm + pause, SIGCHLD after fork, SIGPIPE with a handler and by default, a read
restarted by SA_RESTART or answering EINTR, SA_RESETHAND, nested and deferred signals,
siglongjmp out of a handler (3000 times), a loop with no system call waiting for SIGALRM
(recompiled with ``recompiler.signal_polls``), and registers, FP registers and the rounding mode
across a handler that changes them; a handler installed without SA_RESTORER (glibc's way) returns
through the runtime's stand-in for the vDSO sigreturn.  Debian's busybox sh (glibc) runs ``trap``
scripts (the bundle the busybox suites share).  Not compared: busybox ``timeout``, which under
qemu-aarch64 cannot exec /proc/self/exe and runs the host's coreutils timeout instead."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from tests.cpu_host import aarch64_programs, busybox_cases

MODES = [
    "raise",
    "frame",
    "mask",
    "suspend",
    "alarm",
    "chld",
    "pipe",
    "pipedie",
    "restart",
    "eintr",
    "resethand",
    "nested",
    "jump",
    "state",
    "ignore",
    "norestorer",
]
# the exit status qemu shows for each (a case that dies by accident is no match of two deaths)
STATUS = {"pipedie": -13, "resethand": -10}


@pytest.fixture(scope="module")
def program(tmp_path_factory) -> Path:
    return aarch64_programs.build_for_qemu("signals", tmp_path_factory.mktemp("signals"))


def _recompile(program: Path, out: Path, polls: bool) -> Path:
    return aarch64_programs.recompile(program, out, NXRECOMP_RECOMPILER_SIGNAL_POLLS="1" if polls else "0")


@pytest.fixture(scope="module")
def bundle(program, tmp_path_factory) -> Path:
    return _recompile(program, tmp_path_factory.mktemp("signals_bundle") / "b", polls=False)


@pytest.fixture(scope="module")
def poll_bundle(program, tmp_path_factory) -> Path:
    """Recompiled with recompiler.signal_polls: backward branches read the pending flag."""
    return _recompile(program, tmp_path_factory.mktemp("signals_polls") / "b", polls=True)


def _compare(program: Path, bundle: Path, mode: str) -> None:
    ref = subprocess.run(["qemu-aarch64", "-0", "signals", str(program), mode], capture_output=True, text=True, timeout=60)
    assert ref.returncode == STATUS.get(mode, 0), (ref.returncode, ref.stdout, ref.stderr)
    ours = subprocess.run([str(bundle / "nxrun"), "signals", mode], capture_output=True, text=True, timeout=60)
    assert (ours.returncode, ours.stdout, ours.stderr) == (ref.returncode, ref.stdout, ref.stderr)


@pytest.mark.parametrize("mode", MODES)
def test_signal_program_runs_like_qemu(program, bundle, mode):
    _compare(program, bundle, mode)


@pytest.mark.parametrize("mode", ["spin", "state", "nested", "jump", "restart", "chld"])
def test_signal_polls_deliver_in_a_loop_without_system_calls(program, poll_bundle, mode):
    """``spin`` waits in ``while (!flag) n++;`` for SIGALRM: only the backward branch's poll can
    deliver it (without the setting the loop never ends); the others check that the polls leave
    the rest as it was."""
    _compare(program, poll_bundle, mode)


# SIGTERM, SIGQUIT (core), SIGSEGV (core, one the runtime's crash report owns), SIGUSR2, abort(),
# SIGWINCH and SIGCHLD (ignored by default)
DEATHS = {"15": -15, "3": -3, "11": -11, "12": -12, "abort": -6, "28": 0, "17": 0}
QEMU_CORE_NOTE = "qemu: uncaught target signal"


@pytest.mark.parametrize("sig", sorted(DEATHS))
def test_default_actions_like_qemu(program, bundle, sig):
    """A default action: the same wait status and output.  qemu-aarch64 adds one line of its own
    to stderr for the signals that dump core ("qemu: uncaught target signal 6 (Aborted) - core
    dumped"), which the guest did not write and a kernel does not print: left out."""
    ref = subprocess.run(["qemu-aarch64", "-0", "signals", str(program), "die", sig], capture_output=True, text=True, timeout=60)
    assert ref.returncode == DEATHS[sig], (ref.returncode, ref.stderr)
    ref_err = "".join(line for line in ref.stderr.splitlines(keepends=True) if not line.startswith(QEMU_CORE_NOTE))
    ours = subprocess.run([str(bundle / "nxrun"), "signals", "die", sig], capture_output=True, text=True, timeout=60)
    assert (ours.returncode, ours.stdout, ours.stderr) == (ref.returncode, ref.stdout, ref_err)


TRAP_SCRIPTS = {
    "usr1-and-exit": "trap 'echo got USR1' USR1; kill -USR1 $$; echo after; trap 'echo bye $?' EXIT; exit 3",
    "int-handler-exits": "trap 'echo int; exit 5' INT; kill -INT $$; echo not reached",
    "term-then-reset": "trap 'echo term' TERM; kill $$; echo after; trap - TERM; kill -TERM $$; echo not reached",
    "ignored": "trap '' HUP; kill -HUP $$; echo alive; trap; echo listed",
    "from-child": "trap 'echo usr2 from child' USR2; (kill -USR2 $$); echo after child",
    "default-death": "echo before; kill -USR1 $$; echo not reached",
    # a trapped signal from another process ends the wait builtin with 128 + its number.  The
    # child signals every 50 ms until the shell is gone: one ALRM sent before the shell reached
    # `wait` (a shell slowed by a loaded machine) would otherwise leave wait to return 0 when
    # the child exits; the trap only counts, so earlier ALRMs change no output.
    "wait-interrupted": "trap 'n=1' ALRM; (while kill -ALRM $$; do sleep 0.05; done) & wait; echo wait=$? n=$n; kill $!",
}


@pytest.fixture(scope="module")
def busybox(tmp_path_factory):
    bb = busybox_cases.fetch_busybox()
    return bb, busybox_cases.shared_bundle(bb, tmp_path_factory)


@pytest.mark.parametrize("name", sorted(TRAP_SCRIPTS))
def test_busybox_sh_trap_like_qemu(busybox, tmp_path, name):
    bb, bundle = busybox
    status = busybox_cases.compare_with_qemu([str(bundle / "nxrun")], bb, tmp_path, ["sh", "-c", TRAP_SCRIPTS[name]])
    assert status == {"usr1-and-exit": 3, "int-handler-exits": 5, "term-then-reset": -15, "default-death": -10}.get(name, 0)
