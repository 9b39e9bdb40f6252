"""The native launcher: ``BUNDLE/nxrun ARGV0 ARGS...`` starts a recompiled Linux program in
~3 ms (a small C program, ``launcher.c``) where the Python runner takes ~130 ms (Python, cffi).

``install(bundle, manifest, hwcap)`` writes ``BUNDLE/launch.txt`` (what the launcher maps and
where, from the manifest's linked image: the same regions ``cpu_host.linux.process`` maps; the
initial stack it builds is byte-identical to ``cpu_host.linux.stack.initial_stack``'s) and
copies the launcher into the bundle.  The launcher is compiled once per content (its source, the runtime
header it includes, the compiler and flags) into ``cache_dir/launcher/<hash>/nxrun``.
"""
from __future__ import annotations

import hashlib
import os
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

from cpu_host.linux.memory import BRK_RESERVE, STACK_SIZE, STACK_TOP, brk_region, segment_regions
from cpu_host.linux.stack import HWCAP2_DEFAULT  # AT_HWCAP2 from the lifter's feature table
from nxrecomp import settings
from nxrecomp.errors import NxError

HERE = Path(__file__).resolve().parent
RUNTIME_DIR = HERE.parent / "runtime" / "core"     # the shared headers
LINUX_DIR = HERE.parent / "runtime" / "linux"     # the Linux personality's (the launcher starts Linux programs)
REPO_ROOT = HERE.parent.parent     # PYTHONPATH of the run-time lifter's helper process
SOURCES = [HERE / "launcher.c", RUNTIME_DIR / "nxrt.h", RUNTIME_DIR / "lift_miss.h", LINUX_DIR / "linux_syscalls.h"]
# PIE: a launcher at a fixed address would sit where non-PIE guests (busybox: 0x400000) go
FLAGS = ["-O2", "-fPIE", "-pie", "-fno-sanitize=all", "-w", f"-I{RUNTIME_DIR}", f"-I{LINUX_DIR}"]
LIBS = ["-ldl", "-lpthread"]
NAME = "nxrun"
LAUNCH_FILE = "launch.txt"


def not_runnable(static: bool, program: str | None) -> str | None:
    """Why a linked Linux program cannot run here, else None.  A dynamically linked program is
    linked (its libraries laid out, relocated and lifted with it) but glibc's libc.so only works
    after ld.so's own start-up (its ``_rtld_global`` tables, ``__libc_early_init``, the
    libraries' constructors), which the host does not do: ``__libc_start_main`` would fault on
    its first access to them.  The bundle then refuses to start with this sentence."""
    if static:
        return None
    name = Path(program).name if program else "the program"
    return (f"{name} is dynamically linked: its libc.so needs the start-up work of ld.so (rtld's tables, "
            "__libc_early_init, the libraries' constructors), which nxrecomp does not do yet; "
            "recompile a statically linked build (Debian: the *-static packages)")


def launch_file(image_json: dict, program: str | None, hwcap: int, hwcap2: int = 0,
                lift_python: str = sys.executable) -> str:
    """``launch.txt`` from the manifest's ``image`` entry (segment bytes are ranges of image.bin);
    a program that cannot run gets a ``refuse`` line, which the launcher prints and exits on.
    ``lift_python`` and this repository run the run-time lifter (``cpu_host/lift_on_miss.py``)."""
    for p in (lift_python, str(REPO_ROOT)):
        if "\n" in p:
            raise NxError("a path of the run-time lifter holds a newline", path=p)
    if "blob_file" not in image_json:
        raise NxError("the image's bytes are inline, not in image.bin", field="image.blob_file")
    segs = [_Seg(s["vaddr"], s["memsz"], s["prot"]) for s in image_json["segments"]]
    lines = ["nxlaunch 1", f"entry {image_json['entry']:#x}", f"phdr {image_json['phdr']:#x}",
             f"phent {image_json['phent']:#x}", f"phnum {image_json['phnum']:#x}"]
    brk = brk_region(image_json["brk_start"], BRK_RESERVE)
    lines += [f"brk {brk.start:#x}", f"brk_reserve {brk.size:#x}", f"stack_top {STACK_TOP:#x}",
              f"stack_size {STACK_SIZE:#x}", f"hwcap {hwcap:#x}", f"hwcap2 {hwcap2:#x}"]
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
    zig = os.environ.get("ZIG_GLOBAL_CACHE_DIR") or str(
        Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "zig")
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


def _key(compiler: tuple[str, ...]) -> str:
    h = hashlib.sha256()
    for p in SOURCES:
        h.update(p.read_bytes())
    h.update("\0".join([*compiler, *FLAGS, *LIBS]).encode())
    try:
        from importlib.metadata import version
        h.update(version("ziglang").encode())
    except Exception:  # no wheel: a system clang; its path is in the key already
        pass
    return h.hexdigest()[:24]


def compiled() -> Path:
    """Path of the launcher built from the current sources (compiled on first use, cached)."""
    from recompiler import cc

    key = _key(cc.compiler())
    out = Path(settings.get("nxrecomp", "cache_dir")) / "launcher" / key / NAME
    if out.exists():
        return out
    out.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=".nxrun-", dir=out.parent)
    os.close(fd)
    try:
        cc.run([str(HERE / "launcher.c"), "-o", tmp, *FLAGS, *LIBS], "the native launcher")
        os.chmod(tmp, 0o755)
        os.replace(tmp, out)    # atomic: two first uses at once both end with a whole file
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
    return out


def _write_if_changed(path: Path, data: bytes, mode: int = 0o644) -> None:
    if path.exists() and path.read_bytes() == data:
        return
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}-", dir=path.parent)
    with os.fdopen(fd, "wb") as f:
        f.write(data)
    os.chmod(tmp, mode)
    os.replace(tmp, path)


def install(bundle: str | Path, manifest: dict, hwcap: int, hwcap2: int = HWCAP2_DEFAULT) -> Path:
    """Make ``bundle/nxrun`` and ``bundle/launch.txt`` current; returns the launcher's path."""
    bundle = Path(bundle)
    text = launch_file(manifest["image"], manifest.get("program"), hwcap, hwcap2)
    _write_if_changed(bundle / LAUNCH_FILE, text.encode())
    exe = bundle / NAME
    _write_if_changed(exe, compiled().read_bytes(), 0o755)
    return exe
