"""A Horizon run stopped from outside (SIGTERM, SIGINT) ends as an exit does: the audio output is
finalised (a WAV renamed into place), the frame times written, the logs flushed, then status
128 + the signal with a notice.  Without it a stopped headless run lost its WAV (written whole
at the end).

The runner's main thread waits inside the kernel (``nx_hz_wait_exit``, C), where a Python signal
handler never runs, and the signal may reach any thread.  So the handler only keeps the default
action (ending the process on the spot) away; Python's C-level handler writes the signal's
number to the wakeup pipe (``signal.set_wakeup_fd``) whichever thread took it, and a thread of
ours reading that pipe does the ending."""

from __future__ import annotations

import os
import signal
import sys
import threading
from collections.abc import Callable

SIGNALS = (signal.SIGTERM, signal.SIGINT)


def install(before_exit: Callable[[], None]) -> None:
    """From the main thread: end the process through ``before_exit`` on SIGTERM or SIGINT."""
    r, w = os.pipe()
    os.set_blocking(w, False)
    signal.set_wakeup_fd(w, warn_on_full_buffer=False)
    for sig in SIGNALS:
        signal.signal(sig, lambda *_: None)

    def wait() -> None:
        while True:
            got = os.read(r, 64)
            sig = next((s for s in got if s in SIGNALS), None)
            if sig is not None:
                break
        from nxrecomp.common import log as nxlog

        try:
            before_exit()
        finally:
            nxlog.flush()
            sys.stdout.flush()
            print(
                f"notice: stopped by {signal.Signals(sig).name}: audio and frame times written, the process ends "
                f"here (status {128 + sig})",
                file=sys.stderr,
                flush=True,
            )
            os._exit(128 + sig)

    threading.Thread(target=wait, name="nxrecomp-stop", daemon=True).start()
