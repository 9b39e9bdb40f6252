"""pl:u (shared fonts; switchbrew "Shared Database services" / pl, libnx ``pl.c``).

IPlatformServiceManager: 0 RequestLoad(u32 font type), 1 GetLoadState(u32) -> u32 (1 loaded),
2 GetSize(u32) -> u32, 3 GetSharedMemoryAddressOffset(u32) -> u32, 4 GetSharedMemoryNativeHandle
-> copy handle to 0x1100000 bytes (mapped R), 5 GetSharedFontInOrderOfPriority(u64 language) ->
u8 loaded, s32 count; B buffers 0-2: types, offsets, sizes (u32 each).  Six font types
(Standard, Chinese Simplified, Ext. Chinese Simplified, Chinese Traditional, Korean, Nintendo
Extended).  The host has no Nintendo fonts: every type is served by one public TrueType font
(settings ``cpu_host.shared_font``, DejaVu Sans from Debian's fonts-dejavu-core by default),
laid in the shared memory at a 4 KiB-aligned offset (no BFTTF header in front of it: libnx reads
offset and size only).  A missing font file is a named error when a program first asks."""

from __future__ import annotations

import mmap
import os
import struct
from pathlib import Path

from cpu_host.horizon.ipc.dispatcher import Context, Interface, Server, Unserved, command

SHMEM_SIZE = 0x1100000
FONT_TYPES = 6
FONT_OFFSET = 0x1000
PERM_R = 1


class FontHost:
    def __init__(self, font: Path, kernel_ref) -> None:
        self.font, self.kernel = font, kernel_ref
        self._fd = -1
        self.size = 0

    def fd(self) -> int:
        if self._fd < 0:
            try:
                data = self.font.read_bytes()
            except OSError as e:
                raise Unserved(
                    f"pl:u: shared font file {self.font}: {e.strerror} (settings cpu_host.shared_font; "
                    "Debian: apt-get install fonts-dejavu-core)"
                ) from None
            if len(data) > SHMEM_SIZE - FONT_OFFSET:
                raise Unserved(f"pl:u: shared font file {self.font} is larger than the 0x1100000-byte shared memory")
            fd = os.memfd_create("nxrecomp-font", os.MFD_CLOEXEC)
            os.ftruncate(fd, SHMEM_SIZE)
            with mmap.mmap(fd, SHMEM_SIZE) as m:
                m[FONT_OFFSET : FONT_OFFSET + len(data)] = data
            self.size, self._fd = len(data), fd
        return self._fd


class PlatformServiceManager(Interface):
    name = "nn::pl::detail::IPlatformServiceManager"
    service = "pl:u"

    def __init__(self, host: FontHost) -> None:
        self.host = host

    def _type(self, ctx: Context) -> int:
        t = ctx.u32()
        self.host.fd()
        return t

    @command(0)
    def request_load(self, ctx: Context) -> None:
        self._type(ctx)

    @command(1)
    def get_load_state(self, ctx: Context) -> None:
        self._type(ctx)
        ctx.push("I", 1)

    @command(2)
    def get_size(self, ctx: Context) -> None:
        t = self._type(ctx)
        ctx.push("I", self.host.size if t < FONT_TYPES else 0)

    @command(3)
    def get_shared_memory_address_offset(self, ctx: Context) -> None:
        t = self._type(ctx)
        ctx.push("I", FONT_OFFSET if t < FONT_TYPES else 0)

    @command(4)
    def get_shared_memory_native_handle(self, ctx: Context) -> None:
        ctx.out_copy.append(self.host.kernel().shared_memory_handle(self.host.fd(), SHMEM_SIZE, PERM_R))

    @command(5)
    def get_shared_font_in_order_of_priority(self, ctx: Context) -> None:
        ctx.u64()
        self.host.fd()
        n = min(FONT_TYPES, ctx.b_size(0) // 4, ctx.b_size(1) // 4, ctx.b_size(2) // 4)
        ctx.write_b(0, struct.pack(f"<{n}I", *range(n)))
        ctx.write_b(1, struct.pack(f"<{n}I", *[FONT_OFFSET] * n))
        ctx.write_b(2, struct.pack(f"<{n}I", *[self.host.size] * n))
        ctx.push("B", 1)
        ctx.push("i", n)


def register(server: Server, font: Path, kernel_ref) -> None:
    host = FontHost(font, kernel_ref)
    server.services["pl:u"] = lambda: PlatformServiceManager(host)
