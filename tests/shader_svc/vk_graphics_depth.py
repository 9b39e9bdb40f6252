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

    @classmethod
    def _depth_barrier(cls, cb, img, old: int, new: int, src_stage: int, dst_stage: int, src_access: int, dst_access: int):
        cls._barrier(cb, img, old, new, src_stage, dst_stage, src_access, dst_access, DEPTH)

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
