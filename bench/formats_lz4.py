"""Speed of the Switch format loaders' LZ4 block codec and of NSO loading, against the
reference liblz4 (C, Debian's liblz4.so.1) on real AArch64 code: Debian's arm64
busybox-static (fetched into the cache), or this machine's python binary when offline.

    .venv/bin/python bench/formats_lz4.py

Prints MB/s of each and the ratios (ours / reference)."""
from __future__ import annotations

import ctypes
import ctypes.util
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from nxrecomp.errors import NxError  # noqa: E402
from recompiler.formats.lz4 import compress_block, decompress_block  # noqa: E402
from recompiler.formats.nso import parse_nso  # noqa: E402
from recompiler.formats.pack_nso import pack_nso  # noqa: E402


def sample() -> tuple[str, bytes]:
    try:
        from nxrecomp import debian
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
    our_block = compress_block(data)
    t_our_c = best(lambda: compress_block(data), 1)
    t_our_d = best(lambda: decompress_block(ref_block, len(data)))
    third = len(data) // 3
    nso = pack_nso(data[:third], data[third:2 * third], data[2 * third:], bss_size=0x10000)
    t_nso = best(lambda: parse_nso(nso, "bench.nso"))

    print(f"input: {name}, {mb:.2f} MB; liblz4 block {len(ref_block) / len(data):.3f} of input, ours "
          f"{len(our_block) / len(data):.3f}")
    print(f"decompress  ours {mb / t_our_d:8.1f} MB/s   liblz4 {mb / t_ref_d:8.1f} MB/s   ratio {t_our_d / t_ref_d:6.1f}x slower")
    print(f"compress    ours {mb / t_our_c:8.1f} MB/s   liblz4 {mb / t_ref_c:8.1f} MB/s   ratio {t_our_c / t_ref_c:6.1f}x slower")
    print(f"parse_nso (3 LZ4 segments + SHA-256 checks) {mb / t_nso:8.1f} MB/s, {t_nso * 1000:.0f} ms "
          f"(= {t_nso / t_ref_d:.1f}x liblz4's decompression alone)")


if __name__ == "__main__":
    main()
