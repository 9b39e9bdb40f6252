"""Build SDL3 (for pysdl3's window) from Debian trixie's source package, once, into
``<nxrecomp.cache_dir>/sdl3/``.  Debian 12 has no SDL3 package and pysdl3 holds no library.

Steps: an apt source list of our own (the mirror this machine's apt already uses, suite
``trixie``, ``deb-src``) with its own lists folder, so the system's apt state is untouched;
``apt-get source --download-only libsdl3``; ``dpkg-source -x``; cmake + ninja with X11 and
Vulkan on, everything optional off.  The finished folder is renamed into place (atomic), and
a lock keeps two processes from building at once.  Build needs (cmake, ninja-build,
libx11-dev, libxext-dev, dpkg-dev) are in scripts/nx.sh's APT_PACKAGES.

Run ``python -m gpu_host.sdl3_build`` to build it ahead of time; it prints the folder.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

from nxrecomp.common import settings
from nxrecomp.common.errors import NxError
from nxrecomp.common.progress import Progress

SUITE = "trixie"
PACKAGE = "libsdl3"
CMAKE_FLAGS = [
    "-G",
    "Ninja",
    "-DCMAKE_BUILD_TYPE=Release",
    "-DSDL_SHARED=ON",
    "-DSDL_STATIC=OFF",
    "-DSDL_TESTS=OFF",
    "-DSDL_EXAMPLES=OFF",
    "-DSDL_INSTALL_TESTS=OFF",
    "-DSDL_X11=ON",
    "-DSDL_VULKAN=ON",
    "-DSDL_OFFSCREEN=ON",
    "-DSDL_DUMMYVIDEO=ON",
    "-DSDL_WAYLAND=OFF",
    "-DSDL_KMSDRM=OFF",
    "-DSDL_OPENGL=OFF",
    "-DSDL_OPENGLES=OFF",
    "-DSDL_PIPEWIRE=OFF",
    "-DSDL_PULSEAUDIO=OFF",
    "-DSDL_ALSA=OFF",
    "-DSDL_JACK=OFF",
    "-DSDL_SNDIO=OFF",
    "-DSDL_HIDAPI_LIBUSB=OFF",
    "-DSDL_LIBUDEV=OFF",
    "-DSDL_DBUS=OFF",
    "-DSDL_IBUS=OFF",
    "-DSDL_X11_XTEST=OFF",
    "-DSDL_CAMERA=OFF",
    # video (X11 + Vulkan), input and audio (cpu_host/horizon/audio/output.py) are used
    "-DSDL_AUDIO=ON",
    "-DSDL_DUMMYAUDIO=ON",
    "-DSDL_DISKAUDIO=OFF",
    "-DSDL_RENDER=OFF",
    "-DSDL_GPU=OFF",
    "-DSDL_HAPTIC=OFF",
    "-DSDL_POWER=OFF",
    "-DSDL_SENSOR=OFF",
    "-DSDL_DIALOG=OFF",
    "-DSDL_TRAY=OFF",
]


class SdlUnavailable(NxError):
    """SDL3 could not be fetched or built (tests skip loudly on this)."""


def _mirror() -> str:
    """The Debian mirror this machine's apt uses (deb822 or one-line sources)."""
    texts = []
    for p in [Path("/etc/apt/sources.list"), *sorted(Path("/etc/apt/sources.list.d").glob("*"))]:
        try:
            texts.append(p.read_text())
        except OSError:
            continue
    for t in texts:
        for m in re.finditer(r"^URIs:\s*(\S+)", t, re.M):
            if not m.group(1).rstrip("/").endswith("-security"):
                return m.group(1)
        for m in re.finditer(r"^deb\s+(?:\[[^]]*\]\s+)?(\S+)\s+\S+", t, re.M):
            if not m.group(1).rstrip("/").endswith("-security"):
                return m.group(1)
    raise SdlUnavailable("no Debian mirror found in /etc/apt/sources.list*")


def _run(cmd: list[str], cwd: Path, what: str) -> None:
    r = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True)
    if r.returncode != 0:
        raise SdlUnavailable(f"SDL3 build: {what} failed: {(r.stderr or r.stdout).strip()[-500:]}")


def lib_dir(build: bool = True) -> Path:
    """Folder holding libSDL3.so.0, built if not cached (a few minutes on 2 cores); with
    ``build=False`` a missing build raises SdlUnavailable instead."""
    base = Path(settings.get("nxrecomp", "cache_dir")) / "sdl3"
    key = hashlib.sha256(" ".join([SUITE, PACKAGE, *CMAKE_FLAGS]).encode()).hexdigest()[:12]
    done = base / f"lib-{key}"
    if (done / "libSDL3.so.0").exists():
        return done
    if not build:
        raise SdlUnavailable("SDL3 is not built yet (python -m gpu_host.sdl3_build builds it)")
    base.mkdir(parents=True, exist_ok=True)
    with open(base / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if (done / "libSDL3.so.0").exists():
            return done
        for tool in ("cmake", "ninja", "dpkg-source", "apt-get"):
            if shutil.which(tool) is None:
                raise SdlUnavailable(f"SDL3 build needs {tool} (scripts/nx.sh installs it)")
        work = base / f"work.{os.getpid()}"
        shutil.rmtree(work, ignore_errors=True)
        (work / "lists" / "partial").mkdir(parents=True)
        (work / "cache" / "archives" / "partial").mkdir(parents=True)
        srclist = work / "sources.list"
        srclist.write_text(f"deb-src {_mirror()} {SUITE} main\n")
        opts = [
            f"-oDir::Etc::SourceList={srclist}",
            "-oDir::Etc::SourceParts=/nonexistent",
            f"-oDir::State::Lists={work / 'lists'}",
            f"-oDir::Cache={work / 'cache'}",
            "-oDebug::NoLocking=1",
            "-oAPT::Sandbox::User=root",
        ]
        prog = Progress("building SDL3 (once)", 5)
        try:
            _run(["apt-get", *opts, "update"], work, "apt-get update (trixie sources)")
            prog.advance(note="source index")
            _run(["apt-get", *opts, "source", "--download-only", PACKAGE], work, f"apt-get source {PACKAGE}")
            prog.advance(note="source package")
            dsc = sorted(work.glob(f"{PACKAGE}_*.dsc"))
            if not dsc:
                raise SdlUnavailable(f"apt-get source {PACKAGE} produced no .dsc")
            _run(["dpkg-source", "--no-check", "-x", dsc[-1].name, "src"], work, "dpkg-source -x")
            prog.advance(note="unpacked")
            _run(["cmake", "-S", "src", "-B", "build", *CMAKE_FLAGS], work, "cmake configure")
            prog.advance(note="configured")
            _run(["cmake", "--build", "build", "-j", str(os.cpu_count() or 2)], work, "cmake build")
            prog.advance(note="built")
            out = work / "lib"
            out.mkdir()
            for so in (work / "build").glob("libSDL3.so*"):
                shutil.copy2(so, out / so.name, follow_symlinks=False)
            if not (out / "libSDL3.so.0").exists():
                raise SdlUnavailable("SDL3 build produced no libSDL3.so.0")
            os.replace(out, done)
        finally:
            prog.close()
            shutil.rmtree(work, ignore_errors=True)
    return done


def pysdl3_env(lib: Path) -> dict[str, str]:
    """Environment that makes pysdl3 load ``lib`` and never reach for the network."""
    return {
        "SDL_BINARY_PATH": str(lib),
        "SDL_DISABLE_METADATA": "1",
        "SDL_DOWNLOAD_BINARIES": "0",
        "SDL_CHECK_VERSION": "0",
        "SDL_DOC_GENERATOR": "0",
        "SDL_FIND_BINARIES": "0",
        # pysdl3 is written against a newer SDL 3.x; SDL3 keeps its ABI within 3.x, and
        # functions the older library lacks are left unbound.
        "SDL_CHECK_BINARY_VERSION": "0",
    }


if __name__ == "__main__":
    try:
        print(lib_dir())
    except NxError as e:
        print(f"nxrecomp: {e}", file=sys.stderr)
        sys.exit(2)
