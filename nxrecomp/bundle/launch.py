"""``launch.txt``: what the native launcher of a Linux bundle (``BUNDLE/nxrun ARGV0 ARGS...``,
``cpu_host/launcher``) maps and where, from the manifest's linked image — the same regions
``cpu_host.linux.process`` maps (``memory_map.py``) — and how it starts the run-time lifter;
or a ``refuse`` line saying why the program cannot run here, which the launcher prints and
exits on.  One ``key value`` line each; the launcher reads it (``launcher.c``).
"""

from __future__ import annotations

import os
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

from nxrecomp.bundle.memory_map import BRK_RESERVE, STACK_SIZE, STACK_TOP, brk_region, segment_regions
from nxrecomp.common import settings
from nxrecomp.common.errors import NxError

LAUNCH_FILE = "launch.txt"
REPO_ROOT = Path(__file__).resolve().parents[2]  # PYTHONPATH of the run-time lifter's helper process


def not_runnable(static: bool, program: str | None) -> str | None:
    """Why a linked Linux program cannot run here, else None.  A dynamically linked program is
    linked (its libraries laid out, relocated and lifted with it) but glibc's libc.so only works
    after ld.so's own start-up (its ``_rtld_global`` tables, ``__libc_early_init``, the
    libraries' constructors), which the host does not do: ``__libc_start_main`` would fault on
    its first access to them.  The bundle then refuses to start with this sentence."""
    if static:
        return None
    name = Path(program).name if program else "the program"
    return (
        f"{name} is dynamically linked: its libc.so needs the start-up work of ld.so (rtld's tables, "
        "__libc_early_init, the libraries' constructors), which nxrecomp does not do yet; "
        "recompile a statically linked build (Debian: the *-static packages)"
    )


def launch_file(image_json: dict, program: str | None, hwcap: int, hwcap2: int = 0, lift_python: str = sys.executable) -> str:
    """``launch.txt`` from the manifest's ``image`` entry (segment bytes are ranges of image.bin);
    a program that cannot run gets a ``refuse`` line, which the launcher prints and exits on.
    ``lift_python`` and this repository run the run-time lifter (``cpu_host/lift_on_miss.py``)."""
    for p in (lift_python, str(REPO_ROOT)):
        if "\n" in p:
            raise NxError("a path of the run-time lifter holds a newline", path=p)
    if "blob_file" not in image_json:
        raise NxError("the image's bytes are inline, not in image.bin", field="image.blob_file")
    segs = [_Seg(s["vaddr"], s["memsz"], s["prot"]) for s in image_json["segments"]]
    lines = [
        "nxlaunch 1",
        f"entry {image_json['entry']:#x}",
        f"phdr {image_json['phdr']:#x}",
        f"phent {image_json['phent']:#x}",
        f"phnum {image_json['phnum']:#x}",
    ]
    brk = brk_region(image_json["brk_start"], BRK_RESERVE)
    lines += [
        f"brk {brk.start:#x}",
        f"brk_reserve {brk.size:#x}",
        f"stack_top {STACK_TOP:#x}",
        f"stack_size {STACK_SIZE:#x}",
        f"hwcap {hwcap:#x}",
        f"hwcap2 {hwcap2:#x}",
    ]
    if program:
        if "\n" in program:
            raise NxError("the program's path holds a newline", field="program")
        lines.append(f"exe {program}")
    lines += [f"lift_python {lift_python}", f"lift_path {REPO_ROOT}"]
    lines += [f"lift_env {kv}" for kv in lift_env()]
    lines += [f"region {r.start:#x} {r.end:#x} {r.prot}" for r in segment_regions(segs)]
    for s in image_json["segments"]:
        off, n = s["data"]
        if n:
            lines.append(f"data {s['vaddr']:x} {off:x} {n:x}")
    why = not_runnable(image_json.get("static", True), program)
    if why:
        lines.append(f"refuse {why}")
    return "\n".join(lines) + "\n"


def lift_env() -> list[str]:
    """KEY=VALUE the run-time lifter's helper gets where the guest's environment has no KEY:
    this host's cache folders (nxrecomp's and the zig compiler's, as zig finds its own: its
    variable, else XDG_CACHE_HOME, else HOME), so a guest run with another HOME or none still
    lifts with warm caches."""
    cache = Path(settings.get("nxrecomp", "cache_dir")).expanduser().resolve()
    zig = os.environ.get("ZIG_GLOBAL_CACHE_DIR") or str(Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "zig")
    name = next(s.env_name for s in settings.all_settings() if (s.section, s.key) == ("nxrecomp", "cache_dir"))
    out = [f"{name}={cache}", f"ZIG_GLOBAL_CACHE_DIR={Path(zig).resolve()}"]
    for kv in out:
        if "\n" in kv:
            raise NxError("a cache folder's path holds a newline", path=kv.split("=", 1)[1])
    return out


@dataclass(frozen=True)
class _Seg:
    """What ``segment_regions`` reads of a segment."""

    vaddr: int
    memsz: int
    prot: str


def write(bundle: str | Path, manifest: dict, hwcap: int, hwcap2: int = 0) -> Path:
    """Make ``bundle/launch.txt`` current for ``manifest`` (rewritten only when it changed)."""
    path = Path(bundle) / LAUNCH_FILE
    write_if_changed(path, launch_file(manifest["image"], manifest.get("program"), hwcap, hwcap2).encode())
    return path


def write_if_changed(path: Path, data: bytes, mode: int = 0o644) -> None:
    """Replace ``path`` atomically with ``data`` unless it holds that already."""
    if path.exists() and path.read_bytes() == data:
        return
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}-", dir=path.parent)
    with os.fdopen(fd, "wb") as f:
        f.write(data)
    os.chmod(tmp, mode)
    os.replace(tmp, path)
