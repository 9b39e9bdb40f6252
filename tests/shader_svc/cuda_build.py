"""CUDA C++ kernels compiled at test time for both ISAs the shader service reads, cached by
content hash under ``<cache_dir>/shader_corpus``.

- SM86: ``nvcc -cubin -arch=sm_86`` (nvcc 13 on this machine; ``NXRECOMP_NVCC`` or PATH).
- SM53: nvcc 13 no longer targets Maxwell, so its PTX (``-arch=compute_75``, the lowest it
  has) is re-targeted (``.target sm_53``, ``.version 8.0``: the PTX ISA of CUDA 12.0, which the
  pinned ptxas 12.9 reads) and assembled by ptxas 12.9 from PyPI (``nvtools.ptxas_path``).
  The kernels avoid what PTX for sm_53 lacks (redux, f64 atomics, ...).

Where nvcc is not installed (CI: a fresh Debian), or ``NXRECOMP_CUDA_TOOLCHAIN=nvrtc``, the
CUDA C++ goes through NVRTC 12.9 from PyPI (``nvidia-cuda-nvrtc-cu12``, fetched into the cache
like ptxas; ``-arch=compute_86`` / ``compute_53``: real Maxwell PTX, no re-targeting) and the
same ptxas 12.9.  The toolchain is part of the cache key.

Optimisation levels: ``O3`` (nvcc -O3 / ptxas -O3) and ``G`` (nvcc -G: debug code, ptxas -O0
with line/variable info), the two ends the issue names (-O3 and -O0/-G).
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import subprocess
import tempfile
from pathlib import Path

from nxrecomp.common import settings
import nvtools
from cubin import kernels as cubin_kernels

OPTS = ("O3", "G")


class NoCompiler(Exception):
    """nvcc is not installed (tests skip loudly)."""


NVRTC_WHEEL = "nvidia-cuda-nvrtc-cu12==12.9.86"
NVRTC_LIB = "nvidia/cuda_nvrtc/lib/libnvrtc.so.12"
NVRTC_BUILTINS = "nvidia/cuda_nvrtc/lib/libnvrtc-builtins.so.12.9"


def toolchain() -> str:
    """'nvcc' (CUDA 13 on this machine) or 'nvrtc' (PyPI, where nvcc is missing or asked for)."""
    if os.environ.get("NXRECOMP_CUDA_TOOLCHAIN") == "nvrtc":
        return "nvrtc"
    try:
        nvcc_path()
        return "nvcc"
    except NoCompiler:
        return "nvrtc"


def _nvrtc_lib():
    import ctypes
    import fcntl
    import subprocess as sp
    import sys
    import zipfile

    d = _cache_dir().parent / "nvidia" / "nvidia-cuda-nvrtc-cu12"
    lib = d / Path(NVRTC_LIB).name
    if not lib.is_file():
        d.mkdir(parents=True, exist_ok=True)
        with open(d / ".lock", "w") as lk:
            fcntl.flock(lk, fcntl.LOCK_EX)
            if not lib.is_file():
                with tempfile.TemporaryDirectory(dir=d) as tmp:
                    r = sp.run(
                        [sys.executable, "-m", "pip", "download", "-q", "--no-deps", "-d", tmp, NVRTC_WHEEL],
                        capture_output=True,
                        text=True,
                    )
                    wheels = list(Path(tmp).glob("*.whl"))
                    if r.returncode != 0 or not wheels:
                        raise NoCompiler(f"pip download {NVRTC_WHEEL} failed: {r.stderr.strip()[-300:]}")
                    with zipfile.ZipFile(wheels[0]) as z:
                        for member in (NVRTC_BUILTINS, NVRTC_LIB):
                            part = d / (Path(member).name + ".part")
                            part.write_bytes(z.read(member))
                            os.replace(part, d / Path(member).name)
    ctypes.CDLL(str(d / Path(NVRTC_BUILTINS).name), mode=ctypes.RTLD_GLOBAL)
    return ctypes.CDLL(str(lib))


def nvrtc_ptx(source: str, isa: int, opt: str) -> str:
    """PTX of ``source`` for compute_``isa`` from NVRTC (stdint.h is not available to NVRTC:
    its three types are declared instead)."""
    import ctypes

    lib = _nvrtc_lib()
    src = source.replace(
        "#include <stdint.h>",
        "typedef unsigned int uint32_t; typedef int int32_t;\ntypedef unsigned long long uint64_t; typedef long long int64_t;",
    )
    prog = ctypes.c_void_p()
    if lib.nvrtcCreateProgram(ctypes.byref(prog), src.encode(), b"k.cu", 0, None, None):
        raise RuntimeError("nvrtcCreateProgram failed")
    opts = [f"--gpu-architecture=compute_{isa}".encode(), b"-default-device"] + ([b"-G"] if opt == "G" else [])
    arr = (ctypes.c_char_p * len(opts))(*opts)
    rc = lib.nvrtcCompileProgram(prog, len(opts), arr)
    n = ctypes.c_size_t()
    lib.nvrtcGetProgramLogSize(prog, ctypes.byref(n))
    log = ctypes.create_string_buffer(n.value)
    lib.nvrtcGetProgramLog(prog, log)
    if rc:
        raise RuntimeError(f"NVRTC failed: {log.value.decode()[-2000:]}")
    lib.nvrtcGetPTXSize(prog, ctypes.byref(n))
    ptx = ctypes.create_string_buffer(n.value)
    lib.nvrtcGetPTX(prog, ptx)
    lib.nvrtcDestroyProgram(ctypes.byref(prog))
    return ptx.value.decode()


def nvcc_path() -> str:
    p = os.environ.get("NXRECOMP_NVCC") or shutil.which("nvcc") or "/usr/local/cuda/bin/nvcc"
    if not Path(p).is_file():
        raise NoCompiler("nvcc not found (set NXRECOMP_NVCC or put CUDA's bin on PATH)")
    return p


def _cache_dir() -> Path:
    p = Path(settings.get("nxrecomp", "cache_dir")) / "shader_corpus"
    p.mkdir(parents=True, exist_ok=True)
    return p


def _tool_id() -> str:
    if toolchain() == "nvrtc":
        return NVRTC_WHEEL + "|" + nvtools.PTXAS_WHEEL[0]
    r = subprocess.run([nvcc_path(), "--version"], capture_output=True, text=True)
    return r.stdout.strip().splitlines()[-1] + "|" + nvtools.PTXAS_WHEEL[0]


def _run(cmd: list[str], what: str) -> None:
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError(f"{what} failed ({' '.join(cmd)}):\n{r.stderr[-2000:]}")


def to_sm53_ptx(ptx: str) -> str:
    ptx = re.sub(r"^\.version\s+\S+", ".version 8.0", ptx, count=1, flags=re.M)
    return re.sub(r"^\.target\s+sm_\d+", ".target sm_53", ptx, count=1, flags=re.M)


def compile_cubin(source: str, isa: int, opt: str) -> bytes:
    """The cubin of ``source`` for sm_``isa`` at ``opt`` (cached by content hash)."""
    assert isa in (53, 86) and opt in OPTS
    key = hashlib.sha256(f"{_tool_id()}\0{isa}\0{opt}\0{source}".encode()).hexdigest()[:32]
    out = _cache_dir() / f"{key}.cubin"
    if out.is_file():
        return out.read_bytes()
    with tempfile.TemporaryDirectory() as tmp:
        src = Path(tmp) / "k.cu"
        src.write_text(source)
        flags = ["-O3"] if opt == "O3" else ["-G", "-O0"]
        pflags = ["-O3"] if opt == "O3" else ["-O0", "-g"]
        if toolchain() == "nvrtc":
            Path(f"{tmp}/k.ptx").write_text(nvrtc_ptx(source, isa, opt))
            _run(
                [str(nvtools.ptxas_path()), f"-arch=sm_{isa}", *pflags, f"{tmp}/k.ptx", "-o", f"{tmp}/k.cubin"], f"ptxas sm_{isa}"
            )
        elif isa == 86:
            nvcc = nvcc_path()
            _run([nvcc, "-cubin", "-arch=sm_86", *flags, str(src), "-o", f"{tmp}/k.cubin"], "nvcc")
        else:
            nvcc = nvcc_path()
            _run([nvcc, "-ptx", "-arch=compute_75", *flags, str(src), "-o", f"{tmp}/k.ptx"], "nvcc -ptx")
            Path(f"{tmp}/k53.ptx").write_text(to_sm53_ptx(Path(f"{tmp}/k.ptx").read_text()))
            _run([str(nvtools.ptxas_path()), "-arch=sm_53", *pflags, f"{tmp}/k53.ptx", "-o", f"{tmp}/k.cubin"], "ptxas sm_53")
        data = Path(f"{tmp}/k.cubin").read_bytes()
    # a name of this process's own: two processes (pytest-xdist workers) building the same kernel
    # at once each replace ``out`` whole (one shared ".part" let one rename the other's half-written
    # file and the other's rename fail)
    part = out.with_suffix(f".{os.getpid()}.part")
    part.write_bytes(data)
    os.replace(part, out)
    return data


def build(source: str, isa: int, opt: str) -> dict:
    """{kernel name: cubin.Kernel} of a compiled source; SM86 kernels linked with the
    functions they call (``link``)."""
    from dataclasses import replace

    cub = compile_cubin(source, isa, opt)
    ks = cubin_kernels(cub, f"<corpus sm_{isa} {opt}>")
    names = [n for n in ks if f"K({n})" in source]
    import cuda_globals

    if cuda_globals.has_globals(cub) or cuda_globals.runtime_libs(cub, isa):
        # shader-ctl2: linked against globals placed at address 0 (decode checks); run:
        # cuda_globals.place at the region's device address (shader-assert: also a program that
        # calls the assert runtime, whose log is global data)
        return {n: replace(ks[n], code=cuda_globals.place(cub, n, isa, 0).code, globals_cubin=cub) for n in names}
    return {n: replace(ks[n], code=link(cub, n, isa)) for n in names}


# ---------------------------------------------------------------------------------------------
# Linking: nvcc -G (and some -O3 code) calls functions in other sections of the cubin (helpers
# such as __cuda_sm20_div_u64, __uAtomicAdd, wrappers of intrinsics) through relocations.  A
# guest's shader program is one linked blob, so the tests link the same way: the kernel first,
# then every function it reaches, each at a 16-byte boundary; the relocations are applied with
# the blob's start as address 0 (as the driver would with the code's load address).
# Relocation types seen (nvdisasm prints the patched fields): SM86: 56 / 57 = the low / high
# 32 bits of S + A into a MOV immediate (bits 32..63: the return address a caller passes),
# 58 = S into CALL.ABS's 47-bit target (bits 32..78); SM53: 42 = S + A into JCAL's 32-bit
# target (bits 20..51 of the 64-bit word).  Maxwell functions start on a 32-byte group (a
# control word and three instructions), Ampere's on 16 bytes.


def link(
    cubin: bytes,
    kernel: str,
    isa: int = 86,
    data_addr=None,
    roots=(),
    with_offsets: bool = False,
    libs: tuple[bytes, ...] = (),
    lib_data_addr=None,
):
    """The linked blob (module comment above); shader-ctl2: ``data_addr(symbol)`` gives the
    address of a ``__device__`` global's symbol (None: not a data symbol; ``cuda_globals.py``),
    ``roots`` are more sections to place (functions the global data points at), and
    ``with_offsets`` returns (blob, {section: offset in the blob}).

    shader-assert: a function the cubin leaves undefined (``__assertfail``) is taken from the
    relocatable cubins ``libs`` (``cuda_build_assert.runtime_cubin``), as the driver supplies
    it: its section joins the blob under the key ``lib<j>:<section>`` (``lib_key``) and its own
    relocations are applied, ``lib_data_addr(j, symbol)`` giving its data symbols' addresses.
    Relocations 68/69 against no symbol in ptxas -c code mark a ``YIELD`` (nvdisasm prints
    ``RELOCATOR OPCODE,YIELD,280`` on it): a scheduling hint, kept as compiled."""
    import io
    import struct as st

    from elftools.elf.elffile import ELFFile

    objs = [ELFFile(io.BytesIO(cubin))] + [ELFFile(io.BytesIO(b)) for b in libs]
    exports = lib_exports(libs)
    order, at, blob = [f".text.{kernel}", *(r for r in roots if r != f".text.{kernel}")], {}, bytearray()
    relocs: list[tuple[str, int, int, str, int]] = []
    i = 0
    while i < len(order):
        key = order[i]
        i += 1
        j, name = _split_key(key)
        elf = objs[j]
        sec = elf.get_section_by_name(name)
        if sec is None:
            raise RuntimeError(f"section {key} not in the cubin")
        at[key] = len(blob)
        blob += sec.data()
        blob += b"\0" * (-len(blob) % (16 if isa == 86 else 32))
        symtab = elf.get_section_by_name(".symtab")
        for r in _section_relocs(elf, name):
            sym = symtab.get_symbol(r["r_info_sym"])
            add = r.entry.get("r_addend", 0)
            if j and r["r_info_sym"] == 0 and r["r_info_type"] in (68, 69):  # the YIELD marks (above)
                continue
            if j:
                da = lib_data_addr(j, sym) if lib_data_addr is not None else None
            else:
                da = data_addr(sym) if data_addr is not None else None
            if da is not None:  # shader-ctl2: a global's address (S + A, S from its placement)
                relocs.append((key, r["r_offset"], r["r_info_type"], "", da + add))
                continue
            if not isinstance(sym["st_shndx"], int):  # shader-ctl2: outside the cubin
                if sym.name not in exports:
                    raise RuntimeError(f"relocation against the undefined {sym.name} in {key}+{r['r_offset']:#x}")
                target, value = exports[sym.name]
            else:
                target, value = lib_key(j, elf.get_section(sym["st_shndx"]).name), sym["st_value"]
            if target not in order:
                order.append(target)
            relocs.append((key, r["r_offset"], r["r_info_type"], target, value + add))
    for sec, off, typ, target, add in relocs:
        pos = at[sec] + off
        s_a = at[target] + add if target else add
        if isa == 53:
            # 42: JCAL's target; 43 / 44 (shader-ctl): a MOV32I immediate's 32@lo / 32@hi of S + A
            # (nvdisasm 11.8 prints them so; ptxas -O0's function-pointer values)
            if typ not in (42, 43, 44):
                raise RuntimeError(f"relocation type {typ} in {sec}+{off:#x} not handled")
            (w,) = st.unpack_from("<Q", blob, pos)
            v = (s_a >> 32 if typ == 44 else s_a) & 0xFFFFFFFF
            st.pack_into("<Q", blob, pos, (w & ~(0xFFFFFFFF << 20)) | v << 20)
            continue
        lo, hi = st.unpack_from("<QQ", blob, pos)
        w = lo | hi << 64
        if typ in (56, 57):
            v = (s_a >> (32 if typ == 57 else 0)) & 0xFFFFFFFF
            w = (w & ~(0xFFFFFFFF << 32)) | v << 32
        elif typ == 58:
            w = (w & ~(((1 << 47) - 1) << 32)) | (s_a & ((1 << 47) - 1)) << 32
        else:
            raise RuntimeError(f"relocation type {typ} in {sec}+{off:#x} not handled")
        st.pack_into("<QQ", blob, pos, w & (2**64 - 1), w >> 64)
    return (bytes(blob), at) if with_offsets else bytes(blob)


def lib_key(j: int, section: str) -> str:
    """The blob key of a section: the program's own (j = 0) by name, library j's as lib<j>:name."""
    return section if j == 0 else f"lib{j}:{section}"


def _split_key(key: str) -> tuple[int, str]:
    if key.startswith("lib") and ":" in key:
        j, name = key.split(":", 1)
        return int(j[3:]), name
    return 0, key


def _section_relocs(elf, name: str) -> list:
    from elftools.elf.relocation import RelocationSection

    out = []
    for rname in (".rel" + name, ".rela" + name):
        rs = elf.get_section_by_name(rname)
        if isinstance(rs, RelocationSection):
            out += list(rs.iter_relocations())
    return out


def lib_exports(libs: tuple[bytes, ...]) -> dict[str, tuple[str, int]]:
    """{function name: (blob key of its section, its offset there)} of the libraries' global
    functions (the first library defining a name wins)."""
    import io

    from elftools.elf.elffile import ELFFile

    out: dict[str, tuple[str, int]] = {}
    for j, b in enumerate(libs, 1):
        elf = ELFFile(io.BytesIO(b))
        for sym in elf.get_section_by_name(".symtab").iter_symbols():
            if (
                sym["st_info"]["type"] == "STT_FUNC"
                and sym["st_info"]["bind"] == "STB_GLOBAL"
                and isinstance(sym["st_shndx"], int)
            ):
                out.setdefault(sym.name, (lib_key(j, elf.get_section(sym["st_shndx"]).name), sym["st_value"]))
    return out
