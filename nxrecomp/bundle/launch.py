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


def not_runnable(static: bool, program: str | None, dynamic: dict | None = None) -> str | None:
    """Why a linked Linux program cannot run here, else None.  A dynamically linked program runs
    with glibc's ld.so in the loop (``recompiler/dynamic.py``), which needs the bundle's
    ``dynamic`` entry (its interpreter, start bytes and libraries); a bundle without one (built
    before ld.so ran here) refuses to start with this sentence."""
    if static or dynamic:
        return None
    name = Path(program).name if program else "the program"
    return (
        f"{name} is dynamically linked and its bundle has no 'dynamic' entry (interpreter, libraries): "
        "recompile it with nxrecomp recompile -L (the folders of its libraries' packages)"
    )


def launch_file(
    image_json: dict,
    program: str | None,
    hwcap: int,
    hwcap2: int = 0,
    lift_python: str = sys.executable,
    dynamic: dict | None = None,
) -> str:
    """``launch.txt`` from the manifest's ``image`` entry (segment bytes are ranges of image.bin);
    a program that cannot run gets a ``refuse`` line, which the launcher prints and exits on.
    ``lift_python`` and this repository run the run-time lifter (``cpu_host/lift_on_miss.py``).
    A dynamically linked program (the manifest's ``dynamic`` entry, ``recompiler/dynamic.py``):
    only the executable and the interpreter are mapped, from start.bin's file bytes; the guest
    starts at the interpreter's entry with AT_ENTRY the program's and AT_BASE the interpreter's
    base; the ``lib`` lines tell the personality where ld.so's mappings of each library go."""
    for p in (lift_python, str(REPO_ROOT)):
        if "\n" in p:
            raise NxError("a path of the run-time lifter holds a newline", path=p)
    if "blob_file" not in image_json:
        raise NxError("the image's bytes are inline, not in image.bin", field="image.blob_file")
    mapped = [s for s in image_json["segments"] if not dynamic or s.get("module") in dynamic["start_modules"]]
    segs = [_Seg(s["vaddr"], s["memsz"], s["prot"]) for s in mapped]
    lines = [
        "nxlaunch 1",
        f"entry {(dynamic['interp_entry'] if dynamic else image_json['entry']):#x}",
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
    if dynamic:
        lines += [
            f"at_entry {dynamic['entry']:#x}",
            f"at_base {dynamic['interp_base']:#x}",
            f"data_file {dynamic['start_file']}",
            f"sysroot {dynamic['sysroot']}",
        ]
        lines += [f"data {v:x} {off:x} {n:x}" for v, off, n in dynamic["start"]]
        for lib in dynamic["libs"]:
            if "\n" in lib["path"] or not lib["path"].startswith("/"):
                raise NxError("a library's path is not absolute or holds a newline", path=lib["path"])
            lines.append(f"lib {lib['base']:x} {lib['span']:x} {lib['align']:x} {lib['size']:x} {lib['path']}")
    else:
        for s in image_json["segments"]:
            off, n = s["data"]
            if n:
                lines.append(f"data {s['vaddr']:x} {off:x} {n:x}")
    why = not_runnable(image_json.get("static", True), program, dynamic)
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
    write_if_changed(
        path, launch_file(manifest["image"], manifest.get("program"), hwcap, hwcap2, dynamic=manifest.get("dynamic")).encode()
    )
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
