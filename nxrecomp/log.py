"""Structured, quiet-by-default logging shared by every process.

Lines are ``time level process component: message key=value ...``.  Records go through a queue
to a writer thread so a guest thread that logs never blocks on a slow terminal; ``flush()``
drains the queue (called before a crash report is written).
"""
from __future__ import annotations

import atexit
import logging
import logging.handlers
import queue
import sys
from typing import Any

_listener: logging.handlers.QueueListener | None = None


class _Fmt(logging.Formatter):
    def __init__(self, process: str) -> None:
        super().__init__()
        self.process = process

    def format(self, r: logging.LogRecord) -> str:
        kv = getattr(r, "kv", None) or {}
        extra = "".join(f" {k}={v!r}" if isinstance(v, str) and " " in v else f" {k}={v}" for k, v in kv.items())
        t = self.formatTime(r, "%H:%M:%S") + f".{int(r.msecs):03d}"
        return f"{t} {r.levelname.lower():7} {self.process} {r.name}: {r.getMessage()}{extra}"


def setup(process: str, level: str | None = None, log_file: str | None = None) -> None:
    """Configure the root logger of this process (idempotent)."""
    global _listener
    from nxrecomp import settings

    if _listener is not None:
        return
    level = level or settings.get("nxrecomp", "log_level")
    log_file = log_file if log_file is not None else settings.get("nxrecomp", "log_file")
    handlers: list[logging.Handler] = [logging.StreamHandler(sys.stderr)]
    if log_file:
        handlers.append(logging.FileHandler(log_file))
    fmt = _Fmt(process)
    for h in handlers:
        h.setFormatter(fmt)
    q: queue.SimpleQueue = queue.SimpleQueue()
    root = logging.getLogger()
    root.handlers[:] = [logging.handlers.QueueHandler(q)]
    root.setLevel(getattr(logging, str(level).upper(), logging.WARNING))
    _listener = logging.handlers.QueueListener(q, *handlers, respect_handler_level=False)
    _listener.start()
    atexit.register(flush)


def flush() -> None:
    """Write out everything queued so far (before a crash report or os._exit)."""
    global _listener
    if _listener is not None:
        _listener.stop()
        _listener = None


def kv(logger: logging.Logger, level: int, msg: str, **fields: Any) -> None:
    """Log ``msg`` with structured ``key=value`` fields."""
    logger.log(level, msg, extra={"kv": fields})
