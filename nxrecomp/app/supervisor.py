"""Process supervisor: starts the bundle's processes in order, health-checks them, restarts the
ones allowed to crash (GPU process, shader service) with backoff, ends a crash loop with a clear
message, stops everything on Ctrl-C or when the main process (the game) exits, and gathers every
process's output in one log with the process named on each line.
"""

from __future__ import annotations

import logging
import os
import shutil
import signal
import subprocess
import threading
import time
from collections import deque
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, TextIO

from nxrecomp.common.errors import NxError

log = logging.getLogger("supervisor")


class CrashLoop(NxError):
    pass


@dataclass
class ProcessSpec:
    name: str
    argv: list[str]
    env: dict[str, str] = field(default_factory=dict)
    restart: bool = True  # False: this is the main process; its exit ends the run
    health: Callable[[], bool] | None = None  # True when the process serves
    ready_timeout: float = 30.0
    # A warm spare: started with these arguments it initialises (imports, device) and waits for
    # SIGUSR1 before it takes the sockets.  A crashed process is replaced by promoting the spare,
    # which skips the start-up cost (a restart then takes milliseconds, not a second).
    standby_argv: list[str] | None = None


@dataclass
class Policy:
    # Delay before restarting a process that crashed before it ever became healthy, by how many
    # times in a row that happened; a process that had become healthy restarts at once.
    backoff: tuple[float, ...] = (0.0, 0.1, 0.25, 0.5, 1.0, 2.0)
    spare_delay_s: float = 0.2  # after promoting a spare, wait this long before starting the next
    min_uptime_s: float = 1.0  # a process without a health check is "healthy" once up this long
    max_crashes: int = 5  # crashes within window_s that end the run
    window_s: float = 10.0
    health_every_s: float = 1.0
    health_failures: int = 3  # consecutive failed checks before a hung process is killed
    stop_grace_s: float = 3.0


def _exit_text(rc: int) -> str:
    if rc < 0:
        try:
            return f"killed by {signal.Signals(-rc).name}"
        except ValueError:
            return f"killed by signal {-rc}"
    return f"exit status {rc}"


# Nothing of ours runs between fork and exec: Python code there (a preexec_fn) can deadlock when
# another thread of the supervisor (a log pump) held a lock at the fork — CI saw the standby GPU
# process's Popen wait forever for an exec that never came.  So the parent death signal is set by
# util-linux's setpriv (it execs the real program; the signal survives the exec), and the
# standby's blocked SIGUSR1 is a signal mask inherited from the spawning thread.
_SETPRIV = shutil.which("setpriv")
PUMP_DRAIN_S = 2.0  # at the end, how long the output of exited children may still take to read


def _guarded(argv: list[str]) -> list[str]:
    """``argv`` run so that it gets SIGTERM when the supervisor dies (a child must not outlive a
    supervisor that was itself killed); unchanged where setpriv is missing.  A supervisor killed
    in the moment between setpriv's start and its prctl would leave that one child running: the
    price of running nothing between fork and exec."""
    return [_SETPRIV, "--pdeathsig", "TERM", "--", *argv] if _SETPRIV else list(argv)


@contextmanager
def _sigusr1_blocked():
    # A standby is started with SIGUSR1 blocked so that a promotion arriving while it is still
    # starting waits for it instead of killing it (SIGUSR1's default action); the mask passes
    # through fork and exec, and the standby unblocks it once it waits for the signal.
    old = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGUSR1})
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, old)


@dataclass
class _Child:
    spec: ProcessSpec
    proc: subprocess.Popen | None = None
    started: float = 0.0
    crashes: deque = field(default_factory=deque)
    quick: int = 0  # crashes in a row before becoming healthy
    healthy: bool = False
    restart_at: float | None = None
    spare: subprocess.Popen | None = None
    spare_at: float | None = None
    restarts: int = 0
    bad_health: int = 0
    next_health: float = 0.0


class Supervisor:
    def __init__(
        self, specs: list[ProcessSpec], log_path: str | Path, policy: Policy | None = None, echo: TextIO | None = None
    ) -> None:
        self.children = {s.name: _Child(s) for s in specs}
        self.order = [s.name for s in specs]
        self.policy = policy or Policy()
        self.log_path = Path(log_path)
        self.log_path.parent.mkdir(parents=True, exist_ok=True)
        self.logf = open(self.log_path, "a", buffering=1)
        self.log_lock = threading.Lock()
        self.echo = echo
        self._stop = threading.Event()
        self._pumps: list[threading.Thread] = []  # one a child's output pipe (joined at the end)
        self.events: list[tuple[float, str, str]] = []  # (time, process, what) — restarts etc.

    # -- logs ---------------------------------------------------------------------------
    def _line(self, name: str, text: str) -> None:
        line = f"{name:8} | {text.rstrip()}\n"
        with self.log_lock:
            if self.logf.closed:  # a line from a pipe still open past the final join
                return
            self.logf.write(line)
            if self.echo:
                self.echo.write(line)

    def _pump(self, name: str, stream) -> None:
        for raw in iter(stream.readline, b""):
            self._line(name, raw.decode("utf-8", "replace"))
        stream.close()

    def _note(self, name: str, what: str) -> None:
        self.events.append((time.monotonic(), name, what))
        self._line("supervisor", f"{name}: {what}")
        log.info("%s: %s", name, what)

    # -- processes ----------------------------------------------------------------------
    def _popen(self, c: _Child, argv: list[str], standby: bool = False) -> subprocess.Popen:
        env = {**os.environ, "NXRECOMP_PROCESS": c.spec.name, **c.spec.env}
        with _sigusr1_blocked() if standby else nullcontext():
            proc = subprocess.Popen(
                _guarded(argv),
                env=env,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        pump = threading.Thread(target=self._pump, args=(c.spec.name, proc.stdout), daemon=True, name=f"log-{c.spec.name}")
        pump.start()
        self._pumps = [t for t in self._pumps if t.is_alive()] + [pump]
        return proc

    def _running(self, c: _Child, proc: subprocess.Popen) -> None:
        c.proc = proc
        c.started = time.monotonic()
        c.bad_health = 0
        c.healthy = False
        c.next_health = c.started

    def _spawn(self, c: _Child) -> None:
        self._running(c, self._popen(c, c.spec.argv))
        self._note(c.spec.name, f"started pid {c.proc.pid}: {' '.join(c.spec.argv)}")

    def _spawn_spare(self, c: _Child) -> None:
        c.spare_at = None
        if c.spec.standby_argv and (c.spare is None or c.spare.poll() is not None):
            c.spare = self._popen(c, c.spec.standby_argv, standby=True)
            self._note(c.spec.name, f"standby started pid {c.spare.pid}")

    def _promote(self, c: _Child) -> bool:
        sp, c.spare = c.spare, None
        if sp is None or sp.poll() is not None:
            return False
        try:
            os.kill(sp.pid, signal.SIGUSR1)
        except ProcessLookupError:
            return False
        self._running(c, sp)
        self._note(c.spec.name, f"standby pid {sp.pid} promoted")
        c.spare_at = time.monotonic() + self.policy.spare_delay_s
        return True

    def _wait_healthy(self, c: _Child) -> None:
        if c.spec.health is None:
            return
        deadline = time.monotonic() + c.spec.ready_timeout
        while time.monotonic() < deadline and not self._stop.is_set():
            if c.proc.poll() is not None:
                return  # the run loop handles the exit
            try:
                if c.spec.health():
                    c.healthy = True
                    self._note(c.spec.name, "healthy")
                    return
            except Exception:
                pass
            time.sleep(0.02)
        if not self._stop.is_set():
            raise NxError(f"{c.spec.name} did not become healthy within {c.spec.ready_timeout}s; see {self.log_path}")

    def pid(self, name: str) -> int | None:
        c = self.children[name]
        return c.proc.pid if c.proc and c.proc.poll() is None else None

    def restarts(self, name: str) -> int:
        return self.children[name].restarts

    def stop(self) -> None:
        self._stop.set()

    def _stop_all(self) -> None:
        for name in reversed(self.order):
            c = self.children[name]
            if c.spare and c.spare.poll() is None:
                c.spare.kill()
                c.spare.wait()
            if c.proc and c.proc.poll() is None:
                c.proc.terminate()
        deadline = time.monotonic() + self.policy.stop_grace_s
        for name in reversed(self.order):
            c = self.children[name]
            if c.proc is None:
                continue
            try:
                c.proc.wait(max(0.0, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                self._note(name, "did not stop; killing")
                c.proc.kill()
                c.proc.wait()
            self._note(name, f"stopped ({_exit_text(c.proc.returncode)})")

    # -- the loop -----------------------------------------------------------------------
    def run(self, install_signals: bool = False) -> int:
        """Start everything and supervise until the main process exits (its status is returned),
        ``stop()`` or SIGINT/SIGTERM (130), or a crash loop (raises CrashLoop)."""
        if install_signals:
            for sig in (signal.SIGINT, signal.SIGTERM):
                signal.signal(sig, lambda *_: self._stop.set())
        try:
            for name in self.order:
                c = self.children[name]
                self._spawn(c)
                self._wait_healthy(c)
                self._spawn_spare(c)
            return self._loop()
        finally:
            self._stop_all()
            # every child has exited: its pipe ends once what it wrote is read, so wait (bounded:
            # a grandchild may hold a pipe open) for the pumps before the last line and the close
            deadline = time.monotonic() + PUMP_DRAIN_S
            for t in self._pumps:
                t.join(max(0.0, deadline - time.monotonic()))
            self._line("supervisor", "all processes stopped")
            with self.log_lock:
                self.logf.close()

    def _loop(self) -> int:
        pol = self.policy
        while not self._stop.wait(0.01):
            now = time.monotonic()
            for name in self.order:
                c = self.children[name]
                if c.spare_at is not None and now >= c.spare_at:
                    self._spawn_spare(c)
                if c.restart_at is not None:
                    if now >= c.restart_at:
                        c.restart_at = None
                        c.restarts += 1
                        if not self._promote(c):
                            self._spawn(c)
                    continue
                rc = c.proc.poll()
                if rc is None:
                    if not c.healthy:
                        self._first_health(c, now)
                    elif c.spec.health and now >= c.next_health:
                        c.next_health = now + pol.health_every_s
                        self._check_health(c)
                    continue
                if not c.spec.restart:
                    self._note(name, f"exited ({_exit_text(rc)}); stopping the rest")
                    return rc
                self._crashed(c, rc, now)
        return 130

    def _first_health(self, c: _Child, now: float) -> None:
        if c.spec.health is None:
            if now - c.started >= self.policy.min_uptime_s:
                c.healthy, c.quick = True, 0
            return
        if now < c.next_health:
            return
        c.next_health = now + 0.02
        try:
            ok = c.spec.health()
        except Exception:
            ok = False
        if ok:
            c.healthy, c.quick = True, 0
            c.next_health = now + self.policy.health_every_s
            self._note(c.spec.name, f"healthy after {now - c.started:.3f}s")
        elif now - c.started > c.spec.ready_timeout:
            self._note(c.spec.name, f"not healthy after {c.spec.ready_timeout:g}s; killing it")
            c.proc.kill()

    def _check_health(self, c: _Child) -> None:
        try:
            ok = c.spec.health()
        except Exception:
            ok = False
        c.bad_health = 0 if ok else c.bad_health + 1
        if c.bad_health >= self.policy.health_failures:
            self._note(c.spec.name, f"failed {c.bad_health} health checks; killing it")
            c.proc.kill()

    def _crashed(self, c: _Child, rc: int, now: float) -> None:
        pol = self.policy
        if c.healthy:
            c.quick = 0
        c.crashes.append(now)
        while c.crashes and now - c.crashes[0] > pol.window_s:
            c.crashes.popleft()
        if len(c.crashes) >= pol.max_crashes:
            self._note(c.spec.name, f"crash loop ({_exit_text(rc)})")
            raise CrashLoop(
                f"{c.spec.name} crashed {len(c.crashes)} times within {pol.window_s:g}s "
                f"(last: {_exit_text(rc)}); giving up. Logs: {self.log_path}"
            )
        # A process that never comes up ends the run however slowly it fails: on a loaded
        # machine each failed start took over 2 s, so max_crashes never fitted in window_s and
        # the run went on without it (the CLI crash-loop test, under stress, exited 0).
        if not c.healthy and c.quick + 1 >= pol.max_crashes:
            self._note(c.spec.name, f"crash loop ({_exit_text(rc)})")
            raise CrashLoop(
                f"{c.spec.name} crashed {c.quick + 1} times in a row without becoming healthy "
                f"(last: {_exit_text(rc)}); giving up. Logs: {self.log_path}"
            )
        delay = pol.backoff[min(c.quick, len(pol.backoff) - 1)]
        if not c.healthy:
            c.quick += 1
        c.restart_at = now + delay
        self._note(c.spec.name, f"{_exit_text(rc)}; restarting in {delay:g}s")
