"""Progress of long work (recompiling, compiling shards, preparing shaders).

On a terminal: one self-rewriting line on stderr drawn by ``tqdm`` — count, percentage, bar,
rate and ETA, fitted to the terminal's width, safe to update from worker threads.  Elsewhere
(CI, pipes): a log line at info level every 10 %, so logs stay quiet by default (tqdm's
carriage-return redraws would be noise in a log file).

Why tqdm (PyPI ``tqdm``, maintained since 2013, no dependencies) instead of the hand-written
line this module had: the same one line, plus rate and ETA, and terminal-width handling we
did not have."""

from __future__ import annotations

import logging
import sys
import time

log = logging.getLogger("progress")


class Progress:
    def __init__(self, what: str, total: int, enabled: bool | None = None) -> None:
        from nxrecomp.common import settings

        self.what, self.total, self.done = what, max(total, 0), 0
        self.t0 = time.monotonic()
        if enabled is None:
            enabled = bool(settings.get("nxrecomp", "progress"))
        self.tty = enabled and sys.stderr.isatty()
        self._last_decile = -1
        self._bar = None
        if self.tty:
            import os

            from tqdm import tqdm

            try:
                size = os.get_terminal_size(sys.stderr.fileno())
            except (OSError, ValueError):
                size = os.terminal_size((0, 0))
            # a terminal that reports no size (0x0, e.g. a fresh pty) would get nothing from
            # tqdm: it hides bars below the last row
            width = {"dynamic_ncols": True} if size.columns > 0 and size.lines > 0 else {"ncols": 80, "nrows": 24}
            self._bar = tqdm(
                total=self.total, desc=what, file=sys.stderr, unit="", leave=True, smoothing=0.1, mininterval=0.2, **width
            )

    def advance(self, n: int = 1, note: str = "") -> None:
        self.done += n
        pct = 100 * self.done // self.total if self.total else 100
        if self._bar is not None:
            if note:
                self._bar.set_postfix_str(note[:40], refresh=False)
            self._bar.update(n)
        elif pct // 10 != self._last_decile:
            self._last_decile = pct // 10
            log.info("%s: %d/%d (%d%%)", self.what, self.done, self.total, pct)

    def close(self) -> None:
        dt = time.monotonic() - self.t0
        if self._bar is not None:
            self._bar.set_postfix_str(f"done in {dt:.1f}s", refresh=False)
            self._bar.close()
            self._bar = None
        log.info("%s: %d done in %.1fs", self.what, self.done, dt)

    def __enter__(self) -> "Progress":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
