"""The initial process stack of a Linux AArch64 program, as the kernel builds it at execve.

From ``sp`` upwards: argc, argv[0..argc-1], NULL, envp[...], NULL, the auxiliary vector
(key, value pairs ending with AT_NULL), padding, then the data the pointers name: 16 random
bytes (AT_RANDOM), the platform string, argv and envp strings, the program's file name
(AT_EXECFN) and an 8-byte end marker just below ``stack_top``.  ``sp`` is 16-byte aligned.
"""

from __future__ import annotations

import os
import struct
from dataclasses import dataclass

from recompiler import features

AT_NULL, AT_PHDR, AT_PHENT, AT_PHNUM, AT_PAGESZ, AT_BASE, AT_FLAGS, AT_ENTRY = 0, 3, 4, 5, 6, 7, 8, 9
AT_UID, AT_EUID, AT_GID, AT_EGID, AT_PLATFORM, AT_HWCAP, AT_CLKTCK = 11, 12, 13, 14, 15, 16, 17
AT_SECURE, AT_RANDOM, AT_HWCAP2, AT_EXECFN = 23, 25, 26, 31

HWCAP_FP = 1 << 0
HWCAP_ASIMD = 1 << 1
HWCAP_AES, HWCAP_PMULL, HWCAP_SHA1, HWCAP_SHA2, HWCAP_CRC32 = 1 << 3, 1 << 4, 1 << 5, 1 << 6, 1 << 7
HWCAP_CPUID = 1 << 11
# What the lifter implements exactly, from the one feature table (cpu_host/runtime/
# cpu_features.h, each row proven by Unicorn classes): a bit claimed here must be lifted.
HWCAP_DEFAULT = features.hwcap(1)
HWCAP2_DEFAULT = features.hwcap(2)
PAGE_SIZE = 4096


@dataclass
class ProgramInfo:
    """What the auxiliary vector says about the program (from LinkedImage: phdr/phent/phnum/entry)."""

    phdr: int
    phent: int
    phnum: int
    entry: int
    base: int = 0  # AT_BASE: the interpreter's base; we run none, so 0


def initial_stack(
    stack_top: int,
    argv: list[bytes],
    envp: list[bytes],
    program: ProgramInfo,
    *,
    hwcap: int = HWCAP_DEFAULT,
    hwcap2: int = HWCAP2_DEFAULT,
    execfn: bytes | None = None,
    random: bytes | None = None,
    platform: bytes = b"aarch64",
    ids: tuple[int, int, int, int] | None = None,
) -> tuple[int, bytes]:
    """Return ``(sp, data)``: ``data`` is to be written at ``sp`` and ends at ``stack_top``.
    ``ids`` = (uid, euid, gid, egid), default the host's; ``random`` = the 16 AT_RANDOM bytes
    (default from os.urandom); ``execfn`` defaults to argv[0]."""
    if stack_top % 16:
        raise ValueError(f"stack_top {stack_top:#x} is not 16-byte aligned")
    if random is None:
        random = os.urandom(16)
    if len(random) != 16:
        raise ValueError("AT_RANDOM needs exactly 16 bytes")
    if execfn is None:
        execfn = argv[0] if argv else b""
    for s in [*argv, *envp, execfn, platform]:
        if b"\0" in s:
            raise ValueError(f"string {s[:40]!r} contains a NUL byte")
    uid, euid, gid, egid = ids if ids is not None else (os.getuid(), os.geteuid(), os.getgid(), os.getegid())

    # Strings, top down, in the kernel's order: end marker, execfn, then envp and argv strings
    # (argv[0] lowest), then platform and random below them.
    blob = bytearray()  # grows downwards: we prepend
    pos = stack_top - 8  # the end marker (8 zero bytes)

    def push(b: bytes) -> int:
        nonlocal pos
        pos -= len(b)
        blob[0:0] = b
        return pos

    blob.extend(bytes(8))
    execfn_at = push(execfn + b"\0")
    env_at = [0] * len(envp)
    for i in reversed(range(len(envp))):
        env_at[i] = push(envp[i] + b"\0")
    arg_at = [0] * len(argv)
    for i in reversed(range(len(argv))):
        arg_at[i] = push(argv[i] + b"\0")
    push(bytes(pos % 16))  # align down before the binary data
    platform_at = push(platform + b"\0")
    push(bytes(pos % 16))
    random_at = push(random)

    auxv = [
        (AT_HWCAP, hwcap),
        (AT_PAGESZ, PAGE_SIZE),
        (AT_CLKTCK, 100),
        (AT_PHDR, program.phdr),
        (AT_PHENT, program.phent),
        (AT_PHNUM, program.phnum),
        (AT_BASE, program.base),
        (AT_FLAGS, 0),
        (AT_ENTRY, program.entry),
        (AT_UID, uid),
        (AT_EUID, euid),
        (AT_GID, gid),
        (AT_EGID, egid),
        (AT_SECURE, 0),
        (AT_RANDOM, random_at),
        (AT_HWCAP2, hwcap2),
        (AT_EXECFN, execfn_at),
        (AT_PLATFORM, platform_at),
        (AT_NULL, 0),
    ]
    words = [len(argv), *arg_at, 0, *env_at, 0]
    for k, v in auxv:
        words += [k, v]
    table = struct.pack(f"<{len(words)}Q", *(w & 0xFFFFFFFFFFFFFFFF for w in words))
    sp = (pos - len(table)) & ~15
    push(bytes(pos - sp - len(table)))  # padding between the table and the data
    push(table)
    assert pos == sp and sp + len(blob) == stack_top
    return sp, bytes(blob)


def parse_stack(sp: int, data: bytes) -> tuple[list[int], list[int], dict[int, int]]:
    """(argv pointers, envp pointers, auxv) of a stack made by initial_stack (for tests/tools)."""

    def word(i: int) -> int:
        return struct.unpack_from("<Q", data, 8 * i)[0]

    argc = word(0)
    argv = [word(1 + i) for i in range(argc)]
    i = argc + 2
    envp = []
    while word(i):
        envp.append(word(i))
        i += 1
    i += 1
    aux = {}
    while True:
        k, v = word(i), word(i + 1)
        i += 2
        if k == AT_NULL:
            return argv, envp, aux
        aux[k] = v
