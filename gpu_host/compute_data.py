"""Placed global data of compute programs (issue 31; PROTOCOL.md "Global data"): a CUDA-style
kernel's ``__device__`` globals (``.nv.global.init`` relocated, ``.nv.global`` zeros) live in
device memory at a device address the kernel's code and bank 4 hold as constants, so only the
GPU process can give that address.  ``PlaceData`` makes a *placement*: ``size`` bytes of
host-visible device memory with a buffer device address, zeros when first made, kept (same
address) for the session; the client relocates the image for the address it was given and
writes it with a second ``PlaceData`` naming that address.  Kernels read and write the memory
directly (through the addresses compiled into them), so what a dispatch writes there stays for
the next one, as a CUDA module's globals do.

Every refusal names the placement and field (``ObjectError`` -> INVALID_ARGUMENT): a size of 0 or
past ``gpu_host.max_global_data`` (the session's placements together), a size that differs from
the placement's (size and address are fixed for the session), an ``address`` that names no
placement of this id (an unknown placement) or not its address, regions past the placement's
end and regions overlapping one another.  Nothing is written unless every region passed.

Sources of facts: the Vulkan 1.3 specification (vkGetBufferDeviceAddress; host-coherent memory:
host writes made before vkQueueSubmit are visible to the submitted work, "Host Write Ordering
Guarantees"); the CUDA loader's part is shader_svc/README.md "`__device__` globals"."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import vulkan as vk

from gpu_host.objects import ObjectError
from gpu_host.vkdevice import BUFFER_DEVICE_ADDRESS


@dataclass
class Placement:
    id: int
    size: int
    buffer: Any  # vkdevice.Buffer (host visible, device address)
    address: int


class Placements:
    """The placements of one session (``reset`` at a new Attach frees them)."""

    def __init__(self, dev: Any, address_of: Any) -> None:
        self.dev = dev
        self.address_of = address_of  # Compute.address: a buffer's device address
        self.by_id: dict[int, Placement] = {}

    def total(self) -> int:
        return sum(p.size for p in self.by_id.values())

    def place(self, id: int, size: int, address: int, regions: list[tuple[int, bytes]], limit: int) -> int:
        """Place (or find) placement ``id`` and write ``regions``; its device address."""
        what = f"placement {id}"
        if not self.dev.buffer_device_address:
            raise ObjectError(f"{what}: {self.dev.name} lacks bufferDeviceAddress/shaderInt64, which placed data needs")
        if size == 0:
            raise ObjectError(f"{what}: field size 0 (a placement holds at least one byte)")
        cur = self.by_id.get(id)
        if cur is not None and cur.size != size:
            raise ObjectError(
                f"{what}: field size {size} differs from its placed {cur.size} bytes "
                "(a placement keeps its size and address for the session)"
            )
        if address and cur is None:
            raise ObjectError(
                f"{what}: field address {address:#x} names a placement that is not placed (place it with address 0 first)"
            )
        if address and address != cur.address:
            raise ObjectError(f"{what}: field address {address:#x} is not the placement's address {cur.address:#x}")
        if cur is None and self.total() + size > limit:
            raise ObjectError(
                f"{what}: field size {size} would make the session's placed data {self.total() + size} bytes, "
                f"more than gpu_host.max_global_data ({limit})"
            )
        spans = []
        for i, (off, data) in enumerate(regions):
            if not data:
                raise ObjectError(f"{what}: field regions[{i}] at {off:#x} is empty")
            if off + len(data) > size:
                raise ObjectError(
                    f"{what}: field regions[{i}]: bytes {off:#x}+{len(data):#x} run past the placement's {size} bytes"
                )
            spans.append((off, off + len(data), i))
        spans.sort()
        for (a0, a1, i), (b0, b1, j) in zip(spans, spans[1:]):
            if b0 < a1:
                first, second = sorted((i, j))
                raise ObjectError(
                    f"{what}: field regions[{second}] overlaps regions[{first}] "
                    f"({regions[second][0]:#x}+{len(regions[second][1]):#x} and {regions[first][0]:#x}+{len(regions[first][1]):#x})"
                )
        if cur is None:
            usage = vk.VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | BUFFER_DEVICE_ADDRESS
            buf = self.dev.buffer(size, usage)
            buf.mapped[0:size] = bytes(size)
            cur = self.by_id[id] = Placement(id, size, buf, self.address_of(buf))
        for off, data in regions:
            cur.buffer.mapped[off : off + len(data)] = data
        return cur.address

    def reset(self) -> None:
        """A new session (the device is idle: Replayer.reset waited)."""
        for p in self.by_id.values():
            self.dev.free_buffer(p.buffer)
        self.by_id.clear()
