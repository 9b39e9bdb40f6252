"""Read NVIDIA cubins (ELF) with pyelftools: each kernel's code (``.text.<name>``) and its
constant bank 0 image (``.nv.constant0.<name>``).  Used for test programs built by ptxas."""

from __future__ import annotations

import io
import re
from dataclasses import dataclass

from elftools.common.exceptions import ELFError
from elftools.elf.elffile import ELFFile

from nxrecomp.common.errors import NxError

EM_CUDA = 190
_BANK = re.compile(r"\.nv\.constant([1-9][0-9]*)\.(.+)")  # a kernel's own bank N > 0


@dataclass(frozen=True)
class Kernel:
    name: str
    code: bytes
    cbank0_size: int
    sm: int  # e.g. 86
    cbank2: bytes = b""  # SM5x: ptxas's literal pool (.nv.constant2.<name>), part of the program
    # every constant bank the cubin ships with this kernel but bank 0 (.nv.constant<N>.<name>,
    # N > 0; bank 0 is the parameter bank bound at launch): ((N, bytes), ...) by N, what the
    # shader service's Program.banks carries
    banks: tuple[tuple[int, bytes], ...] = ()
    # shader-ctl2: the whole cubin where it has __device__ globals (placed at run time by
    # cuda_globals.place: the code is linked against their addresses), else empty
    globals_cubin: bytes = b""


def sm_of(elf: ELFFile) -> int:
    """The SM a cubin was built for, from its ELF header: the CUDA ELF ABI version 7 (ptxas 12.x:
    e_flags 0x350535 for sm_53) keeps it in e_flags bits 0..7, version 8 (nvcc 13: 0x6005604 for
    sm_86) in bits 8..15, bits 0..7 being other flags (read off the corpus's own cubins)."""
    flags = elf.header["e_flags"]
    return (flags >> 8) & 0xFF if elf.header["e_ident"]["EI_ABIVERSION"] >= 8 else flags & 0xFF


def kernels(cubin: bytes, path: str = "<cubin>") -> dict[str, Kernel]:
    try:
        elf = ELFFile(io.BytesIO(cubin))
    except ELFError as e:
        raise NxError(f"not an ELF file: {e}", path=path) from None
    if elf["e_machine"] not in ("EM_CUDA", EM_CUDA):
        raise NxError(f"not a CUDA cubin (e_machine {elf['e_machine']})", path=path, field="e_machine")
    sm = sm_of(elf)
    cb = {s.name[len(".nv.constant0.") :]: s.data_size for s in elf.iter_sections() if s.name.startswith(".nv.constant0.")}
    out = {}
    for s in elf.iter_sections():
        if s.name.startswith(".text."):
            name = s.name[len(".text.") :]
            code = s.data()
            if len(code) % 16:
                raise NxError(f"code size {len(code)} is not a multiple of 16", path=path, field=s.name)
            c2 = elf.get_section_by_name(f".nv.constant2.{name}")
            own = sorted((int(m[1]), x.data()) for x in elf.iter_sections() if (m := _BANK.fullmatch(x.name)) and m[2] == name)
            out[name] = Kernel(name, code, cb.get(name, 0), sm, c2.data() if c2 is not None else b"", tuple(own))
    return out
