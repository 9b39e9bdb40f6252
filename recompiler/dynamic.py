"""A dynamically linked program's start, the way Linux starts it: what a bundle needs so that the
CPU host maps the executable and its interpreter (glibc's ld.so) as the kernel does and enters
the lifted ld.so, which then opens and maps the libraries itself.

The recompiler links and lifts the executable, the interpreter and the DT_NEEDED closure at fixed
bases (``recompiler/link.py``).  At run time every one of them must sit at that base, since the
lifted code exists only there:
- the executable and the interpreter are mapped by the host before the first instruction, from
  their *file* bytes (``start.bin``: the PT_LOAD file contents, unrelocated).  ld.so relocates
  both itself, as on Linux; the host applies nothing.  Why not the linker's relocated bytes:
  a lazily bound JUMP_SLOT is relocated by ld.so as ``*slot += load address`` (glibc's
  ``elf_machine_lazy_rel``), which is right only on the file's value; and ld.so lays out static
  TLS and resolves IFUNCs itself.  The linker's relocated view stays what analysis reads (the
  values ld.so will have written once it is done, at the same bases).
- each library is copied into the bundle's ``sysroot/`` at the path it has in its package, and
  listed with its base, span, largest p_align and size; the Linux personality resolves the
  guest's absolute paths under that folder first (as ``qemu-aarch64 -L`` does) and places
  ld.so's first mapping of a listed file at its base (``linux_syscalls.c``,
  ``library_placement``).
"""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

from nxrecomp.bundle.image import LinkedImage
from nxrecomp.common.errors import NxError
from recompiler.elf import load_elf

SYSROOT = "sysroot"
START_FILE = "start.bin"
PAGE = 0x1000


def _sysroot_path(path: Path, search_paths: list[str | Path]) -> str:
    """``path``'s place in the target's file system: relative to the unpacked root it was found
    in (``/lib/aarch64-linux-gnu/libc.so.6``), else the multiarch library folder."""
    for root in search_paths:
        try:
            rel = Path(path).absolute().relative_to(Path(root).absolute())
        except ValueError:
            continue
        return "/" + rel.as_posix()
    return "/lib/aarch64-linux-gnu/" + Path(path).name


def plan(image: LinkedImage, program: str | Path, search_paths: list[str | Path]) -> dict | None:
    """The manifest's ``dynamic`` entry of a dynamically linked program (None for a static one):
    the interpreter, where the start bytes go, the libraries ld.so will map."""
    if image.static:
        return None
    main_mod = load_elf(program)
    if not main_mod.interp:
        raise NxError(
            "the program needs shared libraries (DT_NEEDED) but names no interpreter (PT_INTERP)",
            path=str(program),
            field="PT_INTERP",
        )
    interp_name = Path(main_mod.interp).name
    by_name = {m.name: m for m in image.modules}
    interp = by_name.get(interp_name) or next((m for m in image.modules[1:] if Path(m.path).name == interp_name), None)
    if interp is None:
        raise NxError(
            f"the program's interpreter {main_mod.interp} is not among the linked modules "
            f"({', '.join(m.name for m in image.modules)}): put libc6's folder in -L",
            path=str(program),
            field="PT_INTERP",
        )
    main = image.modules[0]
    libs = []
    for m in image.modules[1:]:
        if m is interp:
            continue
        mod = load_elf(m.path)
        lo = min(s.vaddr for s in mod.segments) // PAGE * PAGE
        hi = max(s.vaddr + s.memsz for s in mod.segments)
        libs.append(
            {
                "module": m.name,
                "path": _sysroot_path(Path(m.path), search_paths),
                "file": str(m.path),
                "size": Path(m.path).stat().st_size,
                "base": m.base + lo,
                "span": (hi - lo + PAGE - 1) // PAGE * PAGE,
                "align": max([PAGE] + [s.align for s in mod.segments]),
            }
        )
    interp_mod = load_elf(interp.path)
    return {
        "interp": main_mod.interp,
        "interp_module": interp.name,
        "interp_file": str(interp.path),
        "interp_base": interp.base,
        "entry": image.entry,
        "interp_entry": interp.base + interp_mod.entry,
        "start_modules": [main.name, interp.name],
        "sysroot": SYSROOT,
        "libs": libs,
    }


def start_bytes(dyn: dict, image: LinkedImage) -> tuple[bytes, list[tuple[int, int, int]]]:
    """``start.bin`` and its (vaddr, offset, length) ranges: the file bytes of the executable's
    and the interpreter's PT_LOAD segments, at their bases."""
    blob = bytearray()
    ranges = []
    for m in image.modules:
        if m.name not in dyn["start_modules"]:
            continue
        for s in load_elf(m.path).segments:
            if s.data:
                ranges.append((m.base + s.vaddr, len(blob), len(s.data)))
                blob += s.data
    return bytes(blob), ranges


def write_bundle_files(out: str | Path, dyn: dict, image: LinkedImage) -> None:
    """``out/start.bin`` and ``out/sysroot/`` (the libraries, copied, at their paths); the
    ranges of start.bin go into ``dyn["start"]``.  Replaced whole: a stale sysroot is removed."""
    out = Path(out)
    blob, ranges = start_bytes(dyn, image)
    dyn["start_file"] = START_FILE
    dyn["start"] = [list(r) for r in ranges]
    fd, tmp = tempfile.mkstemp(prefix=".start-", dir=out)
    with os.fdopen(fd, "wb") as f:
        f.write(blob)
    os.replace(tmp, out / START_FILE)
    root = out / SYSROOT
    staging = Path(tempfile.mkdtemp(prefix=".sysroot-", dir=out))
    files = [(lib["path"], lib["file"]) for lib in dyn["libs"]]
    files.append((dyn["interp"], dyn["interp_file"]))
    for rel, src in files:
        dst = staging / rel.lstrip("/")
        dst.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(src, dst)  # the file itself, not a link into the cache
    if root.exists():
        shutil.rmtree(root)
    os.replace(staging, root)
