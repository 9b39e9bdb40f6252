"""Progress of long work (recompiling, compiling shards, preparing shaders).

On a terminal: one self-rewriting line on stderr.  Elsewhere (CI, pipes): a log line at info
level every 10 %, so logs stay quiet by default.
"""
from __future__ import annotations

import logging
import sys
import time

log = logging.getLogger("progress")


class Progress:
    def __init__(self, what: str, total: int, enabled: bool | None = None) -> None:
        from nxrecomp import settings

        self.what, self.total, self.done = what, max(total, 0), 0
        self.t0 = time.monotonic()
        if enabled is None:
            enabled = bool(settings.get("nxrecomp", "progress"))
        self.tty = enabled and sys.stderr.isatty()
        self._last_decile = -1

    def advance(self, n: int = 1, note: str = "") -> None:
        self.done += n
        pct = 100 * self.done // self.total if self.total else 100
        if self.tty:
            sys.stderr.write(f"\r{self.what}: {self.done}/{self.total} ({pct}%) {note[:40]:40}")
            sys.stderr.flush()
        elif pct // 10 != self._last_decile:
            self._last_decile = pct // 10
            log.info("%s: %d/%d (%d%%)", self.what, self.done, self.total, pct)

    def close(self) -> None:
        dt = time.monotonic() - self.t0
        if self.tty:
            sys.stderr.write(f"\r{self.what}: {self.done}/{self.total} done in {dt:.1f}s{' ' * 40}\n")
        log.info("%s: %d done in %.1fs", self.what, self.done, dt)

    def __enter__(self) -> "Progress":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
