"""The replayer's readback: presented and written-back textures copied from their images into
a host-visible buffer (every aspect of a depth format), converted to the guest's layout
(block-linear, pitch) and written into pool memory.  A layered colour target (a surface of the 2D
array pool, gpu_host/compute.py) is copied and written back whole: every layer, at its layer
stride.  ``ReplayReadback`` is mixed into ``replay.Replayer``."""

from __future__ import annotations

import logging
from typing import Any

import numpy as np
import vulkan as vk

from gpu_host import blocklinear
from gpu_host.objects import Texture
from gpu_host.vkdevice import Buffer, Image

from gpu_host.replay_images import DEPTH_BYTES

log = logging.getLogger("gpu_host.replay")


class ReplayReadback:
    """Copies of textures back to the CPU and into pool memory (see the module's text)."""

    def _aspect_copies(self, t: Texture) -> list[tuple[int, int, int]]:
        """(aspect, offset, bytes) of each aspect of ``t``'s image in its read-back region."""
        if not t.fmt.depth:
            return [(vk.VK_IMAGE_ASPECT_COLOR_BIT, 0, t.width * t.height * t.fmt.bpp * t.layers)]
        made = self.depth_format(t.fmt)
        n = t.width * t.height
        out = [(vk.VK_IMAGE_ASPECT_DEPTH_BIT, 0, n * DEPTH_BYTES[made.vk_name])]
        if made.stencil:  # buffer offsets of depth/stencil copies are multiples of 4
            out.append((vk.VK_IMAGE_ASPECT_STENCIL_BIT, (out[0][2] + 15) & ~15, n))
        return out

    def _readback_size(self, t: Texture) -> int:
        a, o, n = self._aspect_copies(t)[-1]
        return (o + n + 15) & ~15

    def _copy_out(self, cb: Any, t: Texture, img: Image, rb: Buffer, at: int) -> None:
        for aspect, o, _ in self._aspect_copies(t):
            vk.vkCmdCopyImageToBuffer(
                cb,
                img.handle,
                vk.VK_IMAGE_LAYOUT_GENERAL,
                rb.handle,
                1,
                [
                    vk.VkBufferImageCopy(
                        bufferOffset=at + o,
                        bufferRowLength=0,
                        bufferImageHeight=0,
                        imageSubresource=vk.VkImageSubresourceLayers(
                            aspectMask=aspect, mipLevel=0, baseArrayLayer=0, layerCount=1 if t.volume else t.layers
                        ),  # layers (a volume's slices) one after another in the buffer (colour targets only)
                        imageOffset=vk.VkOffset3D(0, 0, 0),
                        imageExtent=vk.VkExtent3D(t.width, t.height, t.layers if t.volume else 1),
                    )
                ],
            )

    def _guest_texels(self, t: Texture, mapped: Any, at: int) -> np.ndarray:
        """``t``'s read-back as the guest's pool holds it (formats.py): height rows of width *
        bpp bytes (layers * height rows for a layered one, layer after layer).  Depth made in a
        fallback format is converted to the guest's format."""
        n = t.width * t.height
        if not t.fmt.depth:
            bpp, rows = t.fmt.bpp, t.height * t.layers
            return np.frombuffer(mapped, np.uint8, count=n * bpp * t.layers, offset=at).reshape(rows, t.width * bpp).copy()
        copies = self._aspect_copies(t)
        made = self.depth_format(t.fmt)
        raw = np.frombuffer(mapped, np.uint8, count=copies[0][2], offset=at + copies[0][1])
        stencil = (
            np.frombuffer(mapped, np.uint8, count=n, offset=at + copies[1][1]).astype(np.uint32) if len(copies) > 1 else None
        )
        if made.vk_name == "VK_FORMAT_D16_UNORM":
            out = raw.view("<u2")
        elif made.vk_name == "VK_FORMAT_D24_UNORM_S8_UINT":
            out = (raw.view("<u4") & 0xFFFFFF) | stencil << 24
        else:  # float depth: D32F, D32F_S8, or the fallback of D24S8
            d = raw.view("<f4")
            if t.fmt.name == "D24S8":
                out = np.round(np.clip(d.astype(np.float64), 0, 1) * 0xFFFFFF).astype("<u4") | stencil << 24
            elif t.fmt.name == "D32F_S8":
                out = np.stack([d.view("<u4"), stencil.astype("<u4")], -1)
            else:
                out = d
        return np.ascontiguousarray(out).view(np.uint8).reshape(t.height, t.width * t.fmt.bpp)

    def _write_back(self, t: Texture, lin: np.ndarray) -> None:
        """A render target's texels (rows of bytes in the guest's format) into its pool range, in
        its layout: block-linear (swizzled, padding included) or pitch-linear rows; each layer
        of a layered one at its layer stride."""
        mem = self.objects.memory
        if not hasattr(mem, "write"):  # a recording being replayed: nothing to write to
            return
        if t.volume and t.block_linear:  # slices share blocks (block depth): the volume at once
            vol = lin.reshape(t.layers, t.height, -1)
            mem.write(t.pool, t.offset, blocklinear.swizzle_3d(vol, t.block_height_log2, t.block_depth_log2, t.gob))
            return
        for k in range(t.layers):
            at, layer = t.offset + k * t.layer_stride, lin[k * t.height : (k + 1) * t.height]
            if t.block_linear:
                mem.write(t.pool, at, blocklinear.swizzle(layer, t.block_height_log2, t.gob))
            else:
                for y in range(t.height):  # rows only: the bytes between rows are the guest's
                    mem.write(t.pool, at + y * t.pitch, layer[y].tobytes())
