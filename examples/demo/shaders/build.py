"""The guest programs' shaders as the GPU API receives them: SM86 (Ampere, Switch 2) or SM53
(Maxwell, Switch 1) machine code made at build time from the assembly listings here
(``<name>.<vs|fs>.sm86`` / ``.sm53``), or SPIR-V from the GLSL versions (``<name>.vert``/``.frag``),
as RomFS files.

A listing is nvdisasm-syntax text for the arch's assembler (``shader_svc.sm86.assemble`` /
``shader_svc.sm53.assemble``: 16-byte Ampere words / Maxwell words with a control word per three) plus one
``//@sph`` line with its shader program header settings (``shader_svc.sph.build``)::

    //@sph vertex inputs=0x80-0x88,0x90-0x94 outputs=0x70-0x7c,0x80-0x84
    //@sph fragment inputs=0x80-0x84:perspective,0x90-0x9c:constant targets=0xf

Addresses are attribute byte addresses (``a-b`` = every word from a to b); a fragment input
names its interpolation (constant, perspective, linear); ``targets`` lists the component masks of
colour targets 0, 1, ...  ``sm86_program`` / ``sm53_program`` return header + instructions,
exactly what a guest puts in memory for ``nvnProgramSetShaders`` with arch 86 / 53 (and what the
shader service's Translate takes); Maxwell programs carry a version-3 header (0x50 bytes), Ampere
ones version 4 (0x80).  Nothing binary is committed: the words come from the assembler each build.

Programs: ``scene`` (the demo game), ``color`` and ``tex`` (examples/horizon_hello's gfx
program; the GLSL is the text of tests/gpu_host/gpu_guest.py's COLOR_*/TEX_*).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from nxrecomp.common.errors import NxError

HERE = Path(__file__).resolve().parent
PROGRAMS = ("scene", "color", "tex")
STAGES = {"vertex": ("vs", "vert"), "fragment": ("fs", "frag")}
ARCHS = ("sm86", "sm53", "spirv")
MACHINE_ARCHS = ("sm86", "sm53")
SPH_VERSION = {"sm86": 4, "sm53": 3}  # Maxwell's header is 0x50 bytes, Turing and later 0x80
INTERPOLATIONS = ("constant", "perspective", "linear")


@dataclass(frozen=True)
class Listing:
    """One program's source: the assembly text and its header settings (``sph.build`` kwargs)."""

    path: Path
    stage: str
    text: str
    header: dict


def _check(name: str, stage: str) -> None:
    if name not in PROGRAMS:
        raise NxError(f"unknown shader program {name!r} (known: {', '.join(PROGRAMS)})", field="name")
    if stage not in STAGES:
        raise NxError(f"unknown shader stage {stage!r} (known: {', '.join(STAGES)})", field="stage")


def _addresses(spec: str, path: Path, line: int) -> list[int]:
    """'0x80-0x88' -> [0x80, 0x84, 0x88]; '0x2f8' -> [0x2f8]."""
    m = re.fullmatch(r"(0x[0-9a-f]+)(?:-(0x[0-9a-f]+))?", spec)
    if not m:
        raise NxError(f"line {line}: attribute range {spec!r} is not 0xA or 0xA-0xB", path=str(path))
    lo = int(m.group(1), 16)
    hi = int(m.group(2), 16) if m.group(2) else lo
    if lo % 4 or hi % 4 or hi < lo or hi >= 0x400:
        raise NxError(f"line {line}: attribute range {spec!r} must be word-aligned, ascending, below 0x400", path=str(path))
    return list(range(lo, hi + 4, 4))


def parse_sph_line(line: str, path: Path, lineno: int) -> tuple[str, dict]:
    """``//@sph STAGE key=value ...`` -> (stage, ``sph.build`` keyword arguments)."""
    words = line.split()[1:]
    if not words or words[0] not in STAGES:
        raise NxError(f"line {lineno}: //@sph needs a stage (vertex or fragment) first", path=str(path))
    stage, header = words[0], {}
    for w in words[1:]:
        key, eq, value = w.partition("=")
        if not eq or not value:
            raise NxError(f"line {lineno}: //@sph setting {w!r} is not key=value", path=str(path))
        if key == "inputs" and stage == "fragment":
            inputs: dict[int, str] = {}
            for part in value.split(","):
                rng, colon, mode = part.partition(":")
                if not colon or mode not in INTERPOLATIONS:
                    raise NxError(f"line {lineno}: fragment input {part!r} needs :{'|:'.join(INTERPOLATIONS)}", path=str(path))
                inputs.update({a: mode for a in _addresses(rng, path, lineno)})
            header["inputs"] = inputs
        elif key in ("inputs", "outputs") and not (key == "outputs" and stage == "fragment"):
            header[key] = {a for part in value.split(",") for a in _addresses(part, path, lineno)}
        elif key == "targets" and stage == "fragment":
            try:
                masks = tuple(int(v, 16) for v in value.split(","))
            except ValueError:
                masks = (-1,)
            if len(masks) > 8 or any(not 0 <= m <= 0xF for m in masks):
                raise NxError(f"line {lineno}: targets {value!r}: up to 8 component masks 0x0..0xf", path=str(path))
            header["targets"] = masks
        elif key == "kills_pixels" and stage == "fragment" and value in ("0", "1"):
            header["kills_pixels"] = value == "1"
        else:
            raise NxError(f"line {lineno}: //@sph {stage}: unknown setting {w!r}", path=str(path))
    return stage, header


def read_listing(path: Path) -> Listing:
    """The listing at ``path`` with its one ``//@sph`` line."""
    try:
        text = path.read_text()
    except OSError as e:
        raise NxError(f"cannot read shader listing: {e.strerror}", path=str(path)) from None
    found = [(n, ln.strip()) for n, ln in enumerate(text.splitlines(), 1) if ln.strip().startswith("//@sph")]
    if len(found) != 1:
        raise NxError(f"needs exactly one //@sph header line, has {len(found)}", path=str(path))
    stage, header = parse_sph_line(found[0][1], path, found[0][0])
    return Listing(path, stage, text, header)


def _check_arch(arch: str) -> None:
    if arch not in MACHINE_ARCHS:
        raise NxError(f"unknown machine-code arch {arch!r} (known: {', '.join(MACHINE_ARCHS)})", field="arch")


def listing(name: str, stage: str, arch: str = "sm86") -> Listing:
    _check(name, stage)
    _check_arch(arch)
    lst = read_listing(HERE / f"{name}.{STAGES[stage][0]}.{arch}")
    if lst.stage != stage:
        raise NxError(f"//@sph says {lst.stage}, the file name says {stage}", path=str(lst.path))
    return lst


def assemble_listing(lst: Listing, arch: str | None = None) -> bytes:
    """Header + instructions; instruction offsets (branch targets) count from the header's start,
    as the guest's program does.  ``arch``: 'sm86'/'sm53', by default the listing's suffix."""
    from shader_svc import sph

    arch = arch or (lst.path.suffix[1:] if lst.path.suffix[1:] in MACHINE_ARCHS else "sm86")
    _check_arch(arch)
    header = sph.build(lst.stage, **lst.header, version=SPH_VERSION[arch])
    try:
        if arch == "sm86":
            from shader_svc.sm86.assemble import assemble_program

            code = assemble_program(lst.text, base=len(header))
        else:
            from shader_svc.sm53.assemble import assemble_program as assemble53

            code = assemble53(lst.text, base_addr=len(header))
    except NxError as e:
        raise NxError(str(e), path=str(lst.path)) from None
    return header + code


def sm86_program(name: str, stage: str) -> bytes:
    """Program ``name`` ('scene', 'color', 'tex') for ``stage`` ('vertex'/'fragment') as SM86:
    the shader program header then the instruction words."""
    return assemble_listing(listing(name, stage, "sm86"), "sm86")


def sm53_program(name: str, stage: str) -> bytes:
    """The same program as SM53 (Maxwell, Switch 1): version-3 header then the code stream."""
    return assemble_listing(listing(name, stage, "sm53"), "sm53")


def glsl_source(name: str, stage: str) -> str:
    _check(name, stage)
    path = HERE / f"{name}.{STAGES[stage][1]}"
    try:
        return path.read_text()
    except OSError as e:
        raise NxError(f"cannot read GLSL source: {e.strerror}", path=str(path)) from None


def spirv_program(name: str, stage: str) -> bytes:
    from cpu_host.gpu_client.shaders import compile_glsl

    return compile_glsl(glsl_source(name, stage), STAGES[stage][1])


def romfs_shaders(arch: str) -> dict[str, bytes]:
    """The RomFS files the guests read: ``/shaders/arch`` (b"sm86", b"sm53" or b"spirv") and
    ``/shaders/<name>.vs``/``.fs`` for every program."""
    if arch not in ARCHS:
        raise NxError(f"unknown shader arch {arch!r} (known: {', '.join(ARCHS)})", field="arch")
    make = {"sm86": sm86_program, "sm53": sm53_program}.get(arch, spirv_program)
    files = {"/shaders/arch": arch.encode()}
    for name in PROGRAMS:
        for stage, (ext, _) in STAGES.items():
            files[f"/shaders/{name}.{ext}"] = make(name, stage)
    return files
