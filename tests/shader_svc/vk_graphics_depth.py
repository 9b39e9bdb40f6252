"""vk_graphics.GraphicsDevice's depth buffer (``draw(..., depth=True)``): the D32 attachment, its
layout transitions and its read-back as float32 depths."""

from __future__ import annotations

import vulkan as vk


class DepthTarget:
    """Mixed into ``GraphicsDevice`` (uses its ``_own``, ``_memory``, ``_buffer``)."""

    def _depth_image(self, w: int, h: int):
        img = self._own(
            vk.vkDestroyImage,
            vk.vkCreateImage(
                self.device,
                vk.VkImageCreateInfo(
                    imageType=vk.VK_IMAGE_TYPE_2D,
                    format=vk.VK_FORMAT_D32_SFLOAT,
                    extent=vk.VkExtent3D(w, h, 1),
                    mipLevels=1,
                    arrayLayers=1,
                    samples=vk.VK_SAMPLE_COUNT_1_BIT,
                    tiling=vk.VK_IMAGE_TILING_OPTIMAL,
                    usage=vk.VK_IMAGE_USAGE_DEPTH_STENCIL_ATTACHMENT_BIT | vk.VK_IMAGE_USAGE_TRANSFER_SRC_BIT,
                    sharingMode=vk.VK_SHARING_MODE_EXCLUSIVE,
                    initialLayout=vk.VK_IMAGE_LAYOUT_UNDEFINED,
                ),
                None,
            ),
        )
        mem = self._memory(vk.vkGetImageMemoryRequirements(self.device, img), host=False)
        vk.vkBindImageMemory(self.device, img, mem, 0)
        rng = vk.VkImageSubresourceRange(aspectMask=vk.VK_IMAGE_ASPECT_DEPTH_BIT, levelCount=1, layerCount=1)
        view = self._own(
            vk.vkDestroyImageView,
            vk.vkCreateImageView(
                self.device,
                vk.VkImageViewCreateInfo(
                    image=img, viewType=vk.VK_IMAGE_VIEW_TYPE_2D, format=vk.VK_FORMAT_D32_SFLOAT, subresourceRange=rng
                ),
                None,
            ),
        )
        return img, view

    @staticmethod
    def _depth_barrier(cb, img, old: int, new: int, src_stage: int, dst_stage: int, src_access: int, dst_access: int):
        rng = vk.VkImageSubresourceRange(aspectMask=vk.VK_IMAGE_ASPECT_DEPTH_BIT, levelCount=1, layerCount=1)
        b = vk.VkImageMemoryBarrier(
            srcAccessMask=src_access,
            dstAccessMask=dst_access,
            oldLayout=old,
            newLayout=new,
            srcQueueFamilyIndex=vk.VK_QUEUE_FAMILY_IGNORED,
            dstQueueFamilyIndex=vk.VK_QUEUE_FAMILY_IGNORED,
            image=img,
            subresourceRange=rng,
        )
        vk.vkCmdPipelineBarrier(cb, src_stage, dst_stage, 0, 0, None, 0, None, 1, [b])

    def _depth_readback(self, cb, img, w: int, h: int):
        buf = self._buffer(w * h * 4, vk.VK_BUFFER_USAGE_TRANSFER_DST_BIT)
        self._depth_barrier(
            cb,
            img,
            vk.VK_IMAGE_LAYOUT_DEPTH_ATTACHMENT_OPTIMAL,
            vk.VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL,
            vk.VK_PIPELINE_STAGE_LATE_FRAGMENT_TESTS_BIT,
            vk.VK_PIPELINE_STAGE_TRANSFER_BIT,
            vk.VK_ACCESS_DEPTH_STENCIL_ATTACHMENT_WRITE_BIT,
            vk.VK_ACCESS_TRANSFER_READ_BIT,
        )
        region = vk.VkBufferImageCopy(
            bufferOffset=0,
            bufferRowLength=0,
            bufferImageHeight=0,
            imageSubresource=vk.VkImageSubresourceLayers(
                aspectMask=vk.VK_IMAGE_ASPECT_DEPTH_BIT, mipLevel=0, baseArrayLayer=0, layerCount=1
            ),
            imageOffset=vk.VkOffset3D(0, 0, 0),
            imageExtent=vk.VkExtent3D(w, h, 1),
        )
        vk.vkCmdCopyImageToBuffer(cb, img, vk.VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL, buf.handle, 1, [region])
        return buf
