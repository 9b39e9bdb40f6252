"""A private X server for window tests (Xvfb) and what the X server's own tools see: window
ids (xwininfo) and window pixels (xwd), parsed here from X11's XWD format."""

from __future__ import annotations

import os
import re
import select
import shutil
import struct
import subprocess
import time
from contextlib import contextmanager
from typing import Iterator

import numpy as np

TOOLS = ("Xvfb", "xwd", "xwininfo", "xdotool")


def missing_tools() -> list[str]:
    return [t for t in TOOLS if shutil.which(t) is None]


@contextmanager
def xvfb(screen: str = "640x480x24") -> Iterator[str]:
    """A private Xvfb; yields ":N".  The server picks the first free display number itself and
    writes it to a pipe once it accepts connections (``-displayfd``, Xserver(1)): choosing a
    number here and checking its lock file first raced with another xdist worker or another
    program starting a server on the same number."""
    r, w = os.pipe()
    try:
        proc = subprocess.Popen(
            ["Xvfb", "-displayfd", str(w), "-screen", "0", screen, "-nolisten", "tcp"],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            pass_fds=(w,),
        )
    finally:
        os.close(w)
    got, deadline = b"", time.monotonic() + 60  # a loaded machine starts it slowly
    try:
        while not got.endswith(b"\n"):
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([r], [], [], left)[0]:
                raise RuntimeError("Xvfb did not say which display it serves within 60 s")
            chunk = os.read(r, 16)
            if not chunk:  # it exited without serving
                raise RuntimeError(f"Xvfb exited ({proc.wait(5)}) before serving a display")
            got += chunk
    except BaseException:
        proc.kill()
        proc.wait()
        raise
    finally:
        os.close(r)
    try:
        yield f":{int(got)}"
    finally:
        proc.terminate()
        proc.wait(10)


def window_id(display: str, title: str) -> str | None:
    out = subprocess.run(["xwininfo", "-display", display, "-name", title], capture_output=True, text=True)
    m = re.search(r"Window id: (0x[0-9a-f]+)", out.stdout)
    return m.group(1) if m else None


def parse_xwd(b: bytes) -> np.ndarray:
    """RGB pixels of an XWD dump (X11's XWDFileHeader: 25 big-endian CARD32, the window name,
    ncolors XColor records of 12 bytes, then the ZPixmap rows)."""
    f = struct.unpack(">25I", b[:100])
    header_size, w, h, byte_order, bpp, bpl = f[0], f[4], f[5], f[7], f[11], f[12]
    rmask, gmask, bmask, ncolors = f[14], f[15], f[16], f[19]
    assert bpp == 32, f"xwd: {bpp} bits per pixel"
    raw = np.frombuffer(b, np.uint8, count=h * bpl, offset=header_size + ncolors * 12).reshape(h, bpl)
    v = raw[:, : w * 4].copy().view("<u4" if byte_order == 0 else ">u4")
    chans = []
    for m in (rmask, gmask, bmask):
        sh = (m & -m).bit_length() - 1
        chans.append(((v & m) >> sh).astype(np.uint8))
    return np.stack(chans, -1)


def capture(display: str, wid: str) -> np.ndarray:
    r = subprocess.run(["xwd", "-display", display, "-id", wid, "-silent"], capture_output=True)
    if r.returncode != 0:
        raise RuntimeError(f"xwd failed: {r.stderr.decode(errors='replace')}")
    return parse_xwd(r.stdout)


def xdotool(display: str, *args: str) -> None:
    r = subprocess.run(["xdotool", *args], env={**os.environ, "DISPLAY": display}, capture_output=True, text=True, timeout=20)
    if r.returncode != 0:
        raise RuntimeError(f"xdotool {' '.join(args)}: {r.stderr}")


def sdl3_or_skip():
    """SDL3's library folder (built once from Debian's source, gpu_host/sdl3_build.py), or skip
    the test loudly when Debian's source package cannot be reached."""
    import pytest

    from gpu_host import sdl3_build

    try:
        return sdl3_build.lib_dir()
    except sdl3_build.SdlUnavailable as e:
        pytest.skip(f"SDL3 could not be built (Debian's source package unreachable?): {e}")
