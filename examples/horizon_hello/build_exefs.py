"""Build an ExeFS of our own from a guest program in C: the program and its start code become
the ``main`` module, our SDK (``sdk/``) the ``sdk`` module, both compiled for AArch64 by clang
from the ``ziglang`` wheel, linked the Switch way (``sdk/module.ld``), turned into NSO files by
``recompiler.formats.pack_elf``, plus a ``main.npdm`` from ``recompiler.formats.pack_npdm``.

``python -m examples.horizon_hello.build_exefs PROGRAM.c OUT_DIR`` does it from the shell."""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path

from nxrecomp.common.errors import NxError
from recompiler.formats.pack_elf import elf_to_nso
from recompiler.formats.pack_npdm import NpdmSpec, pack_npdm

HERE = Path(__file__).resolve().parent
SDK = HERE / "sdk"
PROGRAMS = HERE / "programs"
# Cortex-A57 is ARMv8.0: no LSE atomics; no outline-atomic helpers (nothing would provide them);
# frame records kept so a crash report can walk the guest's stack.
CFLAGS = [
    "-target",
    "aarch64-freestanding-none",
    "-ffreestanding",
    "-nostdlib",
    "-fno-sanitize=all",
    "-fPIC",
    "-O1",
    "-mno-outline-atomics",
    "-fno-omit-frame-pointer",
    "-fno-stack-protector",
    "-mgeneral-regs-only",
    f"-I{SDK}",
]


def _zig(*args: str, cwd: Path) -> None:
    r = subprocess.run([sys.executable, "-m", "ziglang", *args], cwd=cwd, capture_output=True, text=True, timeout=600)
    if r.returncode != 0:
        raise NxError(f"zig {args[0]} failed: {r.stderr.strip()[-2000:]}")


# A program that computes in floating point (the demo game) is built with FP/SIMD registers, and
# without fused multiply-adds, so a native build of the same C computes the same floats.
FP_CFLAGS = [f for f in CFLAGS if f != "-mgeneral-regs-only"] + ["-ffp-contract=off"]


def link_module(sources: list[Path], out: Path, fp_sources: tuple[Path, ...] = (), defines: tuple[str, ...] = ()) -> Path:
    """Compile ``sources`` and link them into a Switch-style shared module at ``out``; the ones
    in ``fp_sources`` may use floating point; ``defines`` (``NAME`` or ``NAME=VALUE``) go to
    every compile."""
    work = out.parent
    objs = []
    for src in sources:
        obj = work / f"{out.stem}.{src.stem}.o"
        flags = FP_CFLAGS if src in fp_sources else CFLAGS
        _zig("cc", *flags, *(f"-D{d}" for d in defines), "-c", str(src), "-o", str(obj), cwd=SDK)
        objs.append(str(obj))
    _zig(
        "ld.lld",
        "-shared",
        "-T",
        str(SDK / "module.ld"),
        "--build-id=sha1",
        "--hash-style=both",
        "-z",
        "notext",
        *objs,
        "-o",
        str(out),
        cwd=work,
    )
    return out


def build_exefs(
    program: str | os.PathLike,
    out_dir: str | os.PathLike,
    npdm: NpdmSpec | None = None,
    fp: bool = False,
    defines: tuple[str, ...] = (),
) -> Path:
    """Write ``main``, ``sdk`` and ``main.npdm`` for ``program`` (a C file, or the name of one
    in ``programs/``) into ``out_dir``; the ELF files go to ``out_dir/../<name>.elf``.  With
    ``fp`` the program may use floating point and SIMD registers; ``defines`` go to the
    program's compile (e.g. ``NVNU_SWITCH2`` for a Switch 2 build)."""
    src = Path(program)
    if not src.suffix:
        src = PROGRAMS / f"{src}.c"
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    work = out.parent / f"{out.name}.build"
    work.mkdir(exist_ok=True)
    main_elf = link_module([SDK / "crt0_main.s", src], work / "main.elf", (src,) if fp else (), defines)
    sdk_elf = link_module([SDK / "crt0_module.s", SDK / "svc.s", SDK / "sdk.c"], work / "sdk.elf")
    for name, elf in (("main", main_elf), ("sdk", sdk_elf)):
        data = elf_to_nso(elf.read_bytes(), str(elf), name=name)
        tmp = out / f".{name}.tmp"
        tmp.write_bytes(data)
        os.replace(tmp, out / name)
    tmp = out / ".main.npdm.tmp"
    tmp.write_bytes(pack_npdm(npdm or NpdmSpec(name=src.stem)))
    os.replace(tmp, out / "main.npdm")
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("program", help="a C file, or the name of one in examples/horizon_hello/programs")
    ap.add_argument("out_dir")
    a = ap.parse_args()
    print(build_exefs(a.program, a.out_dir))
    return 0


if __name__ == "__main__":
    sys.exit(main())
