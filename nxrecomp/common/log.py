r"""Structured, quiet-by-default logging shared by every process.

Lines are ``time level process component: message key=value ...``.  Records go through a queue
to a writer thread so a guest thread that logs never blocks on a slow terminal; ``flush()``
drains the queue (called before a crash report is written).

Values often come from outside (a player's name in a signed token, a file name, an error text),
so one record is always exactly one line that nobody can forge another into: a value is written
bare only when made of ``[A-Za-z0-9_.,:/@+-]`` (and not empty), otherwise in double quotes with
``\\``, ``\"``, ``\n``, ``\r``, ``\t`` and ``\xNN``/``\uNNNN``/``\UNNNNNNNN`` for every other
control, format, separator, surrogate (undecodable input kept by ``surrogateescape``) or
private/unassigned code point (Unicode categories C* and Z* other than the space).  The message
text gets the same escapes without the quotes; a traceback follows on lines indented by four
spaces, each escaped the same way, so no continuation line can look like a record.
``unescape()`` reverses a quoted value (tests and log readers use it).
"""

from __future__ import annotations

import atexit
import copy
import logging
import logging.handlers
import queue
import re
import sys
import unicodedata
from typing import Any

_listener: logging.handlers.QueueListener | None = None


_BARE = re.compile(r"[A-Za-z0-9_.,:/@+-]+")
_SHORT = {"\\": "\\\\", '"': '\\"', "\n": "\\n", "\r": "\\r", "\t": "\\t"}
_UNSHORT = {"\\": "\\", '"': '"', "n": "\n", "r": "\r", "t": "\t"}


def _escape_char(ch: str, quote: bool) -> str:
    if ch in _SHORT and (quote or ch not in '"\\'):
        return _SHORT[ch]
    if ch == " " or unicodedata.category(ch)[0] not in "CZ":
        return ch
    o = ord(ch)
    return f"\\x{o:02x}" if o < 0x100 else f"\\u{o:04x}" if o < 0x10000 else f"\\U{o:08x}"


def _text(v: object) -> str:
    if isinstance(v, (bytes, bytearray)):
        return bytes(v).decode("utf-8", "surrogateescape")  # undecodable bytes show as \udcNN
    return str(v)


def escape_text(s: str) -> str:
    """``s`` with every control/format/separator character escaped (no quotes added)."""
    return "".join(_escape_char(ch, False) for ch in s)


def value(v: object) -> str:
    """One ``key=value`` value: bare if plainly safe, else quoted with escapes."""
    s = _text(v)
    if _BARE.fullmatch(s):
        return s
    return '"' + "".join(_escape_char(ch, True) for ch in s) + '"'


_UNESC = re.compile(r"\\(x[0-9a-f]{2}|u[0-9a-f]{4}|U[0-9a-f]{8}|.)")


def unescape(text: str) -> str:
    """The original of ``value()``'s output (quoted or bare)."""
    if text.startswith('"') and text.endswith('"') and len(text) >= 2:
        text = text[1:-1]
    return _UNESC.sub(lambda m: _UNSHORT.get(m[1], m[1]) if len(m[1]) == 1 else chr(int(m[1][1:], 16)), text)


class _Fmt(logging.Formatter):
    def __init__(self, process: str) -> None:
        super().__init__()
        self.process = process

    def format(self, r: logging.LogRecord) -> str:
        kv = getattr(r, "kv", None) or {}
        extra = "".join(f" {value(k)}={value(v)}" for k, v in kv.items())
        t = self.formatTime(r, "%H:%M:%S") + f".{int(r.msecs):03d}"
        line = f"{t} {r.levelname.lower():7} {self.process} {r.name}: {escape_text(r.getMessage())}{extra}"
        tb = r.exc_text or (self.formatException(r.exc_info) if r.exc_info else "")
        if r.stack_info:
            tb = (tb + "\n" if tb else "") + r.stack_info
        if tb:
            line += "".join("\n    " + escape_text(t) for t in tb.splitlines())
        return line


class _QueueHandler(logging.handlers.QueueHandler):
    """Hands the writer thread the message and the traceback apart (the stock ``prepare``
    folds the traceback into the message, where it would be escaped onto one line)."""

    def prepare(self, record: logging.LogRecord) -> logging.LogRecord:
        r = copy.copy(record)
        r.msg, r.args = record.getMessage(), None
        if record.exc_info and not record.exc_text:
            r.exc_text = logging.Formatter().formatException(record.exc_info)
        r.exc_info = None
        return r


def setup(process: str, level: str | None = None, log_file: str | None = None) -> None:
    """Configure the root logger of this process (idempotent)."""
    global _listener
    from nxrecomp.common import settings

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
    root.handlers[:] = [_QueueHandler(q)]
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
