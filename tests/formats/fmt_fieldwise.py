"""Files built field by field from the public format descriptions, independently of
``recompiler.formats.pack_*`` (no constant or helper of the code under test is used), and
LZ4 from the system's liblz4 (the reference implementation) rather than our compressor."""

from __future__ import annotations

import ctypes
import ctypes.util
import hashlib
import struct

_LZ4 = ctypes.CDLL(ctypes.util.find_library("lz4") or "liblz4.so.1")
_LZ4.LZ4_compress_default.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_int, ctypes.c_int]
_LZ4.LZ4_decompress_safe.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_int, ctypes.c_int]
_LZ4.LZ4_compressBound.argtypes = [ctypes.c_int]


def ref_lz4_compress(data: bytes) -> bytes:
    buf = ctypes.create_string_buffer(_LZ4.LZ4_compressBound(len(data)))
    n = _LZ4.LZ4_compress_default(data, buf, len(data), len(buf))
    assert n > 0
    return buf.raw[:n]


def ref_lz4_decompress(block: bytes, size: int) -> bytes | None:
    buf = ctypes.create_string_buffer(size + 1)
    n = _LZ4.LZ4_decompress_safe(block, buf, len(block), size)
    return buf.raw[:n] if n == size else None


# ---------------------------------------------------------------- a module image with MOD0
TEXT_SIZE, RO_OFF, DATA_OFF = 0x1000, 0x1000, 0x2000
MOD0_AT = 0x100
SYMS = [  # (name, value, size, info, shndx)
    ("", 0, 0, 0, 0),
    ("nnMain", 0x200, 0x40, (1 << 4) | 2, 7),  # GLOBAL FUNC, defined
    ("malloc", 0, 0, (1 << 4) | 2, 0),  # GLOBAL FUNC, import
    ("g_counter", 0x2200, 8, (2 << 4) | 1, 20),  # WEAK OBJECT, defined
]
STRTAB = b"\0nnMain\0malloc\0g_counter\0libc.so\0"
NAME_OFF = {"": 0, "nnMain": 1, "malloc": 8, "g_counter": 15, "libc.so": 25}
# (offset, type, sym, addend) — R_AARCH64_RELATIVE 1027, GLOB_DAT 1025, ABS64 257, JUMP_SLOT 1026
RELA = [(0x2100, 1027, 0, 0x200), (0x2108, 1025, 2, 0), (0x2110, 257, 1, 8)]
JMPREL = [(0x2118, 1026, 2, 0)]


def module_image(with_mod0: bool = True) -> tuple[bytes, bytes, bytes, int]:
    """(text, rodata, data, bss_size) of a small module: MOD0 in .text, .dynsym/.dynstr/
    .hash/.rela in .rodata, .dynamic in .data."""
    text = bytearray(TEXT_SIZE)
    for i in range(0, TEXT_SIZE, 4):  # "nop" everywhere but the start
        struct.pack_into("<I", text, i, 0xD503201F)
    bss = 0x300
    data_size = 0x300
    if with_mod0:
        struct.pack_into("<I", text, 0, 0x14000002)  # b +8
        struct.pack_into("<I", text, 4, MOD0_AT)
        struct.pack_into(
            "<4s6i",
            text,
            MOD0_AT,
            b"MOD0",
            DATA_OFF - MOD0_AT,
            DATA_OFF + data_size - MOD0_AT,
            DATA_OFF + data_size + bss - MOD0_AT,
            0x1800 - MOD0_AT,
            0x1800 - MOD0_AT,
            0x2280 - MOD0_AT,
        )
    ro = bytearray(0x1000)
    symtab, strtab, hashtab, rela, jmprel = 0x000, 0x100, 0x180, 0x200, 0x300
    for i, (name, value, size, info, shndx) in enumerate(SYMS):
        struct.pack_into("<IBBHQQ", ro, symtab + 24 * i, NAME_OFF[name], info, 0, shndx, value, size)
    ro[strtab : strtab + len(STRTAB)] = STRTAB
    # SysV hash: nbucket=1, nchain=len(SYMS); bucket -> 1 -> 2 -> 3 -> 0.
    struct.pack_into("<II I 4I", ro, hashtab, 1, len(SYMS), 1, 0, 2, 3, 0)
    for i, (off, typ, sym, add) in enumerate(RELA):
        struct.pack_into("<QQq", ro, rela + 24 * i, off, (sym << 32) | typ, add)
    for i, (off, typ, sym, add) in enumerate(JMPREL):
        struct.pack_into("<QQq", ro, jmprel + 24 * i, off, (sym << 32) | typ, add)
    data = bytearray(data_size)
    dyn = [
        (1, NAME_OFF["libc.so"]),
        (4, RO_OFF + hashtab),
        (5, RO_OFF + strtab),
        (6, RO_OFF + symtab),
        (10, len(STRTAB)),
        (11, 24),
        (7, RO_OFF + rela),
        (8, 24 * len(RELA)),
        (9, 24),
        (23, RO_OFF + jmprel),
        (2, 24 * len(JMPREL)),
        (20, 7),
        (12, 0x400),
        (13, 0x480),
        (25, 0x2120),
        (27, 8),
        (0, 0),
    ]
    for i, (tag, val) in enumerate(dyn):
        struct.pack_into("<qQ", data, 16 * i, tag, val)
    return bytes(text), bytes(ro), bytes(data), bss


# ---------------------------------------------------------------- NSO0
def nso_file(
    text: bytes,
    ro: bytes,
    data: bytes,
    bss: int,
    *,
    flags: int,
    compress: tuple[bool, bool, bool],
    mem: tuple[int, int, int] = (0, RO_OFF, DATA_OFF),
    build_id: bytes = b"\xab" * 20,
    name: bytes = b"fieldwise\0",
    hashes: tuple[bytes, bytes, bytes] | None = None,
    dynsym: tuple[int, int] = (0, 0),
    dynstr: tuple[int, int] = (0, 0),
) -> bytes:
    segs = [text, ro, data]
    stored = [ref_lz4_compress(s) if c else s for s, c in zip(segs, compress)]
    h = bytearray(0x100)
    h[0:4] = b"NSO0"
    struct.pack_into("<I", h, 0x0C, flags)
    pos = 0x100 + len(name)
    for i, base in enumerate((0x10, 0x20, 0x30)):
        struct.pack_into("<III", h, base, pos, mem[i], len(segs[i]))
        struct.pack_into("<I", h, 0x60 + 4 * i, len(stored[i]))
        digest = hashes[i] if hashes else hashlib.sha256(segs[i]).digest()
        h[0xA0 + 0x20 * i : 0xC0 + 0x20 * i] = digest
        pos += len(stored[i])
    struct.pack_into("<I", h, 0x1C, 0x100)  # module name offset
    struct.pack_into("<I", h, 0x2C, len(name))  # module name size
    struct.pack_into("<I", h, 0x3C, bss)
    h[0x40 : 0x40 + len(build_id)] = build_id
    struct.pack_into("<II", h, 0x90, *dynstr)
    struct.pack_into("<II", h, 0x98, *dynsym)
    return bytes(h) + name + b"".join(stored)


# ---------------------------------------------------------------- NRO0 (+ASET)
def nro_file(
    text: bytes, ro: bytes, data: bytes, bss: int, *, assets: tuple[bytes, bytes, bytes] | None, build_id: bytes = b"\xcd" * 20
) -> bytes:
    """Segments at 0 / 0x1000 / 0x2000 (text must be 0x1000 bytes, ro at most 0x1000)."""
    img = bytearray(DATA_OFF + len(data))
    img[0 : len(text)] = text
    img[RO_OFF : RO_OFF + len(ro)] = ro
    img[DATA_OFF:] = data
    img[0x10:0x14] = b"NRO0"
    struct.pack_into("<III", img, 0x14, 0, len(img), 0)
    struct.pack_into("<IIIIII", img, 0x20, 0, len(text), RO_OFF, len(ro), DATA_OFF, len(data))
    struct.pack_into("<II", img, 0x38, bss, 0)
    img[0x40:0x60] = build_id.ljust(0x20, b"\0")
    struct.pack_into("<IIIIIIII", img, 0x60, 0, 0, 0, 0, 0, 0, 0, 0)
    if assets is None:
        return bytes(img)
    icon, nacp, romfs = assets
    aset = bytearray(b"ASET" + struct.pack("<I", 0))
    pos = 0x38
    for part in (icon, nacp, romfs):
        aset += struct.pack("<QQ", pos, len(part))
        pos += len(part)
    return bytes(img) + bytes(aset) + icon + nacp + romfs


def nacp_blob(name: str, publisher: str, version: str) -> bytes:
    b = bytearray(0x4000)
    for lang in range(16):
        b[lang * 0x300 : lang * 0x300 + len(name)] = name.encode()
        b[lang * 0x300 + 0x200 : lang * 0x300 + 0x200 + len(publisher)] = publisher.encode()
    b[0x3060 : 0x3060 + len(version)] = version.encode()
    return bytes(b)


# ---------------------------------------------------------------- NPDM
def npdm_file(
    *,
    flags: int,
    priority: int = 44,
    core: int = 0,
    stack: int = 0x40000,
    caps: list[int] | None = None,
    services: bytes = b"\x02fsp\x02sm:\x80*",
) -> bytes:
    """META at 0, ACID at 0x80 (0x240 header + fs + services + caps), ACI0 after it."""
    if caps is None:
        caps = [
            0x0000_0007 | (59 << 4) | (28 << 10) | (0 << 16) | (3 << 24),  # thread info
            0x0000_000F | (0xFFFFFF << 5) | (0 << 29),  # syscalls 0..23
            0x0000_000F | (0x000003 << 5) | (1 << 29),  # syscalls 24, 25
            0x0000_003F | (0x70000 << 7) | (1 << 31),  # map 0x70000000 ro
            0x0000_003F | (0x10 << 7),  # .. 0x10000 bytes, io
            0x0000_007F | (0x50041 << 8),  # io page 0x50041000
            0x0000_03FF | (2 << 11) | (1 << 17) | (3 << 18),  # regions 2 ro, 3 rw
            0x0000_07FF | (42 << 12) | (0x3FF << 22),  # interrupt 42
            0x0000_1FFF | (1 << 14),  # application
            0x0000_3FFF | (0 << 15) | (9 << 19),  # kernel 9.0
            0x0000_7FFF | (256 << 16),  # handles 256
            0x0000_FFFF | (1 << 17),  # allow debug
            0xFFFF_FFFF,  # padding
        ]
    kc = struct.pack(f"<{len(caps)}I", *caps)

    def block(header: bytearray, at: int, parts: list[bytes]) -> bytes:
        out = bytearray(header)
        for i, p in enumerate(parts):
            off = (len(out) + 15) & ~15
            out += bytes(off - len(out)) + p
            struct.pack_into("<II", out, at + 8 * i, off, len(p))
        return bytes(out)

    acid_h = bytearray(0x240)
    acid_h[0x200:0x204] = b"ACID"
    struct.pack_into("<I", acid_h, 0x20C, 1 | (0 << 2))
    struct.pack_into("<QQ", acid_h, 0x210, 0x0100000000002000, 0x0100000000002FFF)
    acid_fs = struct.pack("<BBBBQ", 1, 0, 0, 0, 0x3) + bytes(32)
    acid = bytearray(block(acid_h, 0x220, [acid_fs, services, kc]))
    struct.pack_into("<I", acid, 0x204, len(acid) - 0x100)

    aci_h = bytearray(0x40)
    aci_h[0:4] = b"ACI0"
    struct.pack_into("<Q", aci_h, 0x10, 0x0100000000002345)
    aci_fs = struct.pack("<BBBBQIIII", 1, 0, 0, 0, 0x3, 0x1C, 0, 0x1C, 0)
    aci = block(aci_h, 0x20, [aci_fs, services, kc])

    meta = bytearray(0x80)
    meta[0:4] = b"META"
    meta[0x0C] = flags
    meta[0x0E] = priority
    meta[0x0F] = core
    struct.pack_into("<I", meta, 0x1C, stack)
    meta[0x20:0x28] = b"TestProg"
    acid_off, aci_off = 0x80, (0x80 + len(acid) + 15) & ~15
    struct.pack_into("<IIII", meta, 0x70, aci_off, len(aci), acid_off, len(acid))
    out = bytes(meta) + bytes(acid)
    return out + bytes(aci_off - len(out)) + aci


# ---------------------------------------------------------------- PFS0
def pfs0_file(files: list[tuple[str, bytes]]) -> bytes:
    names = b"".join(n.encode() + b"\0" for n, _ in files)
    names += bytes((-len(names)) % 4)
    out = bytearray(b"PFS0" + struct.pack("<III", len(files), len(names), 0))
    pos, noff = 0, 0
    for n, blob in files:
        out += struct.pack("<QQII", pos, len(blob), noff, 0)
        pos += len(blob)
        noff += len(n) + 1
    return bytes(out) + names + b"".join(b for _, b in files)


# ---------------------------------------------------------------- RomFS
def romfs_hash(parent: int, name: bytes) -> int:
    h = parent ^ 123456789
    for c in name:
        h = ((h >> 5) | (h << 27)) & 0xFFFFFFFF
        h ^= c
    return h


def small_romfs() -> bytes:
    """Root with file "hello.txt" and directory "data" holding "blob.bin" (3 buckets each)."""
    hello, blob = b"Hello, RomFS!\n", bytes(range(256)) * 3
    none = 0xFFFFFFFF
    # Directory meta: root at 0 (0x18 bytes), "data" at 0x18 (0x18 + 4).
    d_root, d_data = 0, 0x18
    # File meta: "hello.txt" at 0 (0x20 + 12), "blob.bin" at 0x2C (0x20 + 8).
    f_hello, f_blob = 0, 0x2C
    dmeta = struct.pack("<6I", 0, none, d_data, f_hello, none, 0)
    dmeta += struct.pack("<6I", d_root, none, none, f_blob, none, 4) + b"data"
    fmeta = struct.pack("<IIQQII", d_root, none, 0, len(hello), none, 9) + b"hello.txt\0\0\0"
    fmeta += struct.pack("<IIQQII", d_data, none, 0x10, len(blob), none, 8) + b"blob.bin"
    dbuckets, fbuckets = [none] * 3, [none] * 3
    # Each entry is alone in its bucket unless two collide; chain collisions through HashNext.
    dchain = {}
    for off, parent, name in ((d_root, 0, b""), (d_data, d_root, b"data")):
        b = romfs_hash(parent, name) % 3
        dchain[off], dbuckets[b] = dbuckets[b], off
    fchain = {}
    for off, parent, name in ((f_hello, d_root, b"hello.txt"), (f_blob, d_data, b"blob.bin")):
        b = romfs_hash(parent, name) % 3
        fchain[off], fbuckets[b] = fbuckets[b], off
    dmeta = bytearray(dmeta)
    struct.pack_into("<I", dmeta, d_root + 16, dchain[d_root])
    struct.pack_into("<I", dmeta, d_data + 16, dchain[d_data])
    fmeta = bytearray(fmeta)
    struct.pack_into("<I", fmeta, f_hello + 0x18, fchain[f_hello])
    struct.pack_into("<I", fmeta, f_blob + 0x18, fchain[f_blob])
    data = hello + bytes(0x10 - len(hello)) + blob
    data_off = 0x200
    t0 = data_off + len(data)
    tabs = [struct.pack("<3I", *dbuckets), bytes(dmeta), struct.pack("<3I", *fbuckets), bytes(fmeta)]
    head = struct.pack("<Q", 0x50)
    pos = t0
    for t in tabs:
        head += struct.pack("<QQ", pos, len(t))
        pos += len(t)
    head += struct.pack("<Q", data_off)
    return head + bytes(data_off - len(head)) + data + b"".join(tabs)


SMALL_ROMFS_FILES = {"/hello.txt": b"Hello, RomFS!\n", "/data/blob.bin": bytes(range(256)) * 3}
