"""vk_graphics.GraphicsDevice's depth buffer (``draw(..., depth=True)``): the D32 attachment, its
layout transitions and its read-back as float32 depths."""

from __future__ import annotations

import vulkan as vk

from vk_graphics_base import DEPTH, VkResources


class DepthTarget(VkResources):
    """Mixed into ``GraphicsDevice``."""

    def _depth_image(self, w: int, h: int):
        usage = vk.VK_IMAGE_USAGE_DEPTH_STENCIL_ATTACHMENT_BIT | vk.VK_IMAGE_USAGE_TRANSFER_SRC_BIT
        return self._image(w, h, usage, vk.VK_FORMAT_D32_SFLOAT, DEPTH)

    def _depth_attachment(self, cb, img, view):
        """The depth attachment, cleared to 1.0 (recorded: its move to the attachment layout)."""
        return self._attachment(
            cb,
            img,
            view,
            DEPTH,
            vk.VK_IMAGE_LAYOUT_DEPTH_ATTACHMENT_OPTIMAL,
            vk.VK_PIPELINE_STAGE_EARLY_FRAGMENT_TESTS_BIT,
            vk.VK_ACCESS_DEPTH_STENCIL_ATTACHMENT_WRITE_BIT,
            vk.VkClearValue(depthStencil=vk.VkClearDepthStencilValue(depth=1.0, stencil=0)),
        )

    def _depth_readback(self, cb, img, w: int, h: int):
        return self._readback(
            cb,
            img,
            DEPTH,
            w,
            h,
            vk.VK_IMAGE_LAYOUT_DEPTH_ATTACHMENT_OPTIMAL,
            vk.VK_PIPELINE_STAGE_LATE_FRAGMENT_TESTS_BIT,
            vk.VK_ACCESS_DEPTH_STENCIL_ATTACHMENT_WRITE_BIT,
        )
