"""Speed of the Switch format loaders' LZ4 block codec and of NSO loading, against the
reference liblz4 (C, Debian's liblz4.so.1 called through ctypes) on real AArch64 code:
Debian's arm64 busybox-static (fetched into the cache), or this machine's python binary when
offline.  ``auto`` is what the loaders use: liblz4 through the maintained PyPI binding
``lz4`` (recompiler/formats/lz4_native.py), the Python codec only to explain a bad block.

    .venv/bin/python bench/formats_lz4.py

Prints MB/s of each and the ratios (ours / reference), and draws them (bench/chart.py)."""

from __future__ import annotations

import ctypes
import ctypes.util
import struct
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.chart import bars  # noqa: E402
from nxrecomp.common.errors import NxError  # noqa: E402
from recompiler.formats.elfdyn import parse_dynamic  # noqa: E402
from recompiler.formats.lz4 import compress_block, decompress_block  # noqa: E402
from recompiler.formats.nso import parse_nso  # noqa: E402
from recompiler.formats.pack_nso import pack_nso  # noqa: E402


def sample() -> tuple[str, bytes]:
    try:
        from nxrecomp.common import debian

        p = debian.busybox("arm64")
        return "busybox-static arm64", p.read_bytes()
    except (NxError, OSError) as e:
        print(f"(no Debian mirror: {e}; using the python binary)")
        p = Path(sys.executable).resolve()
        return p.name, p.read_bytes()


def best(fn, reps: int = 3) -> float:
    t = []
    for _ in range(reps):
        t0 = time.perf_counter()
        fn()
        t.append(time.perf_counter() - t0)
    return min(t)


def big_dynamic(nsyms: int = 100_000, nrel: int = 200_000) -> tuple[bytes, int]:
    """A module image with a game-sized .dynamic: nsyms symbols (C++-like names), nrel RELA."""
    strtab = bytearray(b"\0")
    offs = []
    for i in range(nsyms):
        offs.append(len(strtab))
        strtab += f"_ZN2nn7example{i}Ev".encode() + b"\0"
    symtab = b"".join(struct.pack("<IBBHQQ", o, 0x12, 0, 1, 0x1000 + 16 * i, 16) for i, o in enumerate(offs))
    relocs = b"".join(struct.pack("<QQq", 0x100 + 8 * (i % 1000), ((i % nsyms) << 32) | 257, 0) for i in range(nrel))
    hashtab = struct.pack("<II", 1, nsyms) + bytes(4 + 4 * nsyms)
    sym_at = 0x10000
    str_at = sym_at + len(symtab)
    hash_at = str_at + len(strtab)
    rel_at = (hash_at + len(hashtab) + 7) & ~7
    dyn_at = rel_at + len(relocs)
    dyn = b"".join(
        struct.pack("<qQ", t, v)
        for t, v in [(6, sym_at), (5, str_at), (10, len(strtab)), (4, hash_at), (7, rel_at), (8, len(relocs)), (0, 0)]
    )
    img = bytearray(dyn_at + len(dyn))
    for at, blob in ((sym_at, symtab), (str_at, strtab), (hash_at, hashtab), (rel_at, relocs), (dyn_at, dyn)):
        img[at : at + len(blob)] = blob
    return bytes(img), dyn_at


def main() -> None:
    lib = ctypes.CDLL(ctypes.util.find_library("lz4") or "liblz4.so.1")
    lib.LZ4_compress_default.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_int, ctypes.c_int]
    lib.LZ4_decompress_safe.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_int, ctypes.c_int]
    name, data = sample()
    mb = len(data) / 1e6
    out = ctypes.create_string_buffer(lib.LZ4_compressBound(len(data)))
    n = lib.LZ4_compress_default(data, out, len(data), len(out))
    ref_block = out.raw[:n]
    dst = ctypes.create_string_buffer(len(data))

    t_ref_c = best(lambda: lib.LZ4_compress_default(data, out, len(data), len(out)))
    t_ref_d = best(lambda: lib.LZ4_decompress_safe(ref_block, dst, len(ref_block), len(data)))
    our_block = compress_block(data, engine="python")
    t_our_c = best(lambda: compress_block(data, engine="python"), 1)
    t_our_d = best(lambda: decompress_block(ref_block, len(data), engine="python"))
    t_auto_d = best(lambda: decompress_block(ref_block, len(data)))
    import lz4.block

    t_bind_d = best(lambda: lz4.block.decompress(ref_block, uncompressed_size=len(data)))
    t_bind_c = best(lambda: lz4.block.compress(data, store_size=False))
    t_auto_c = best(lambda: compress_block(data))
    third = len(data) // 3
    nso = pack_nso(data[:third], data[third : 2 * third], data[2 * third :], bss_size=0x10000)
    t_nso = best(lambda: parse_nso(nso, "bench.nso"))
    import recompiler.formats.lz4_native as native

    saved = native.library
    native.library = lambda: None  # as on a machine without liblz4
    try:
        t_nso_py = best(lambda: parse_nso(nso, "bench.nso"), 1)
    finally:
        native.library = saved

    print(
        f"input: {name}, {mb:.2f} MB; liblz4 block {len(ref_block) / len(data):.3f} of input, ours "
        f"{len(our_block) / len(data):.3f}"
    )
    print(
        f"decompress  python {mb / t_our_d:8.1f} MB/s   auto {mb / t_auto_d:8.1f} MB/s   liblz4 {mb / t_ref_d:8.1f} MB/s"
        f"   python/liblz4 {t_our_d / t_ref_d:6.1f}x slower, auto/liblz4 {t_auto_d / t_ref_d:.2f}x"
    )
    print(
        f"compress    python {mb / t_our_c:8.1f} MB/s   auto {mb / t_auto_c:8.1f} MB/s   liblz4 {mb / t_ref_c:8.1f} MB/s"
        f"   python/liblz4 {t_our_c / t_ref_c:6.1f}x slower, auto/liblz4 {t_auto_c / t_ref_c:.2f}x"
    )
    print(
        f"binding (lz4 {lz4.library_version_string()}) bare calls: decompress {mb / t_bind_d:8.1f} MB/s "
        f"({t_bind_d / t_ref_d:.2f}x ctypes liblz4's time), compress {mb / t_bind_c:8.1f} MB/s "
        f"({t_bind_c / t_ref_c:.2f}x)"
    )
    print(
        f"parse_nso (3 LZ4 segments + SHA-256 checks): auto {mb / t_nso:8.1f} MB/s ({t_nso * 1000:.0f} ms), "
        f"python-only {mb / t_nso_py:.1f} MB/s ({t_nso_py * 1000:.0f} ms); "
        f"auto = {t_nso / t_ref_d:.1f}x liblz4's bare decompression"
    )

    img, dyn_at = big_dynamic()
    t_dyn = best(lambda: parse_dynamic(img, dyn_at, "bench"))
    print(f"parse_dynamic: 100000 symbols + 200000 RELA relocations as records in {t_dyn * 1000:.0f} ms")
    bars(
        __file__,
        "mbps",
        {
            "decompress, python": mb / t_our_d,
            "decompress, auto (lz4 binding)": mb / t_auto_d,
            "decompress, lz4 binding bare": mb / t_bind_d,
            "decompress, liblz4 via ctypes": mb / t_ref_d,
            "compress, python": mb / t_our_c,
            "compress, auto (lz4 binding)": mb / t_auto_c,
            "compress, liblz4 via ctypes": mb / t_ref_c,
            "parse_nso, auto": mb / t_nso,
            "parse_nso, python only": mb / t_nso_py,
        },
        title=f"LZ4 blocks on {name} ({mb:.1f} MB)",
        ylabel="MB/s (log scale)",
        logy=True,
    )


if __name__ == "__main__":
    main()
