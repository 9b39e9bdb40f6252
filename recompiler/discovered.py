"""The bundle's list of entries discovered at run time (``BUNDLE/discovered_entries.txt``).

Each function the CPU host lifted at run time (lift on miss, ``cpu_host/lift_on_miss.py``) is
appended here; the next build of the bundle reads the list as extra analysis entries, so the
code is lifted statically from then on (``recompiler/pipeline.py`` says how many it took).

Format: text, one guest address a line (``0x`` hex), ``#`` starts a comment.  The file is
replaced whole (temporary file + rename, under an exclusive ``flock`` of ``.lock`` beside it,
since several processes of one bundle may lift at once): a reader never sees half a list.
"""

from __future__ import annotations

import fcntl
import os
import tempfile
from pathlib import Path

from nxrecomp.common.errors import NxError

FILE = "discovered_entries.txt"
HEADER = "# guest addresses lifted at run time (lift on miss); the next build lifts them statically\n"


def read(bundle: str | Path) -> set[int]:
    """The addresses in ``bundle``'s list (empty when there is none)."""
    path = Path(bundle) / FILE
    try:
        text = path.read_text()
    except FileNotFoundError:
        return set()
    except OSError as e:
        raise NxError(f"cannot read: {e.strerror}", path=str(path)) from None
    out: set[int] = set()
    for n, line in enumerate(text.splitlines(), 1):
        word = line.split("#", 1)[0].strip()
        if not word:
            continue
        try:
            addr = int(word, 16)
        except ValueError:
            raise NxError(f"line {n}: {word!r} is not a hex address", path=str(path)) from None
        if addr < 0 or addr >= 1 << 64 or addr % 4:
            raise NxError(f"line {n}: {word} is not an instruction address", path=str(path))
        out.add(addr)
    return out


def append(bundle: str | Path, addr: int) -> bool:
    """Add ``addr`` to ``bundle``'s list (atomically); False when it was there already."""
    bundle = Path(bundle)
    with open(bundle / f".{FILE}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        have = read(bundle)
        if addr in have:
            return False
        text = HEADER + "".join(f"{a:#x}\n" for a in sorted(have | {addr}))
        fd, tmp = tempfile.mkstemp(prefix=f".{FILE}-", dir=bundle)
        try:
            with os.fdopen(fd, "w") as f:
                f.write(text)
            os.chmod(tmp, 0o644)
            os.replace(tmp, bundle / FILE)
        finally:
            if os.path.exists(tmp):
                os.unlink(tmp)
    return True
