"""Present frames into a window's Vulkan surface: a swapchain, and per frame one copy of the
frame's RGBA bytes into a scratch image and a blit (scaled to the window, converted to the
swapchain's format) into the acquired swapchain image.

Presenting from the frame's bytes (the same bytes hashed and written as PNG headless) keeps
this independent of the replay's images: what the window shows is exactly the frame.
Called from the ring consumer thread only, which also owns the queue.
"""

from __future__ import annotations

import logging
from typing import Any

import vulkan as vk

from gpu_host.vkdevice import COLOR_LAYERS, COLOR_RANGE, Buffer, Device, Image

log = logging.getLogger("gpu_host.swapchain")
NO_TIMEOUT = 0xFFFFFFFFFFFFFFFF


class Presenter:
    def __init__(self, dev: Device, surface: Any, width: int, height: int) -> None:
        self.dev = dev
        self.surface = surface
        self.size = (width, height)
        ifn = lambda n: vk.vkGetInstanceProcAddr(dev.instance, n)  # noqa: E731
        dfn = lambda n: vk.vkGetDeviceProcAddr(dev.device, n)  # noqa: E731
        self._support = ifn("vkGetPhysicalDeviceSurfaceSupportKHR")
        self._caps = ifn("vkGetPhysicalDeviceSurfaceCapabilitiesKHR")
        self._formats = ifn("vkGetPhysicalDeviceSurfaceFormatsKHR")
        self._modes = ifn("vkGetPhysicalDeviceSurfacePresentModesKHR")
        self._destroy_surface = ifn("vkDestroySurfaceKHR")
        self._create = dfn("vkCreateSwapchainKHR")
        self._destroy = dfn("vkDestroySwapchainKHR")
        self._images = dfn("vkGetSwapchainImagesKHR")
        self._acquire = dfn("vkAcquireNextImageKHR")
        self._present = dfn("vkQueuePresentKHR")
        if not self._support(dev.pd, dev.qfam, surface):
            raise RuntimeError(f"device {dev.name} cannot present to this window's surface")
        self.fence = vk.vkCreateFence(dev.device, vk.VkFenceCreateInfo(), None)
        self.cb = dev.command_buffer()
        self.staging: Buffer | None = None
        self.scratch: Image | None = None
        self.swapchain = None
        self.presented = 0
        self._build()

    def _build(self) -> None:
        caps = self._caps(self.dev.pd, self.surface)
        fmts = self._formats(self.dev.pd, self.surface)
        want = [f for f in fmts if f.format in (vk.VK_FORMAT_B8G8R8A8_UNORM, vk.VK_FORMAT_R8G8B8A8_UNORM)]
        fmt = (want or list(fmts))[0]
        modes = list(self._modes(self.dev.pd, self.surface))
        # No vsync wait: the game's pace is set by the CPU host, not by the display.
        mode = next(
            (m for m in (vk.VK_PRESENT_MODE_MAILBOX_KHR, vk.VK_PRESENT_MODE_IMMEDIATE_KHR) if m in modes),
            vk.VK_PRESENT_MODE_FIFO_KHR,
        )
        ext = caps.currentExtent
        if ext.width == 0xFFFFFFFF:
            ext = vk.VkExtent2D(width=self.size[0], height=self.size[1])
        count = max(caps.minImageCount, 2)
        if caps.maxImageCount:
            count = min(count, caps.maxImageCount)
        old = self.swapchain
        self.swapchain = self._create(
            self.dev.device,
            vk.VkSwapchainCreateInfoKHR(
                surface=self.surface,
                minImageCount=count,
                imageFormat=fmt.format,
                imageColorSpace=fmt.colorSpace,
                imageExtent=ext,
                imageArrayLayers=1,
                imageUsage=vk.VK_IMAGE_USAGE_TRANSFER_DST_BIT | vk.VK_IMAGE_USAGE_COLOR_ATTACHMENT_BIT,
                imageSharingMode=vk.VK_SHARING_MODE_EXCLUSIVE,
                preTransform=caps.currentTransform,
                compositeAlpha=vk.VK_COMPOSITE_ALPHA_OPAQUE_BIT_KHR,
                presentMode=mode,
                clipped=vk.VK_TRUE,
                oldSwapchain=old or vk.VK_NULL_HANDLE,
            ),
            None,
        )
        if old is not None:
            self._destroy(self.dev.device, old, None)
        self.images = self._images(self.dev.device, self.swapchain)
        self.extent = (ext.width, ext.height)
        log.info("swapchain %dx%d format %d mode %d, %d images", ext.width, ext.height, fmt.format, mode, len(self.images))

    def _scratch(self, w: int, h: int) -> Image:
        if self.scratch is None or (self.scratch.width, self.scratch.height) != (w, h):
            if self.scratch is not None:
                self.dev.free_image(self.scratch)
            self.scratch = self.dev.image(
                w,
                h,
                vk.VK_FORMAT_R8G8B8A8_UNORM,
                vk.VK_IMAGE_USAGE_TRANSFER_DST_BIT | vk.VK_IMAGE_USAGE_TRANSFER_SRC_BIT | vk.VK_IMAGE_USAGE_SAMPLED_BIT,
            )  # dev.image makes a view
        if self.staging is None or self.staging.size < w * h * 4:
            if self.staging is not None:
                self.dev.free_buffer(self.staging)
            self.staging = self.dev.buffer(max(w * h * 4, 4096), vk.VK_BUFFER_USAGE_TRANSFER_SRC_BIT)
        return self.scratch

    def present(self, rgba: bytes, w: int, h: int) -> None:
        """Show one frame (RGBA8 rows, w x h) in the window."""
        for attempt in (0, 1):
            try:
                self._present_once(rgba, w, h)
                return
            except (vk.VkErrorOutOfDateKhr, vk.VkSuboptimalKhr) as e:  # the window changed size
                if attempt:
                    raise
                log.info("swapchain %s: rebuilding", type(e).__name__)
                vk.vkDeviceWaitIdle(self.dev.device)
                self._build()

    def _present_once(self, rgba: bytes, w: int, h: int) -> None:
        dev = self.dev
        img = self._scratch(w, h)
        self.staging.mapped[0 : w * h * 4] = rgba
        idx = self._acquire(dev.device, self.swapchain, NO_TIMEOUT, vk.VK_NULL_HANDLE, self.fence)
        vk.vkWaitForFences(dev.device, 1, [self.fence], vk.VK_TRUE, NO_TIMEOUT)
        vk.vkResetFences(dev.device, 1, [self.fence])
        target = self.images[idx]
        cb = self.cb
        vk.vkResetCommandBuffer(cb, 0)
        vk.vkBeginCommandBuffer(cb, vk.VkCommandBufferBeginInfo(flags=vk.VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT))
        vk.vkCmdCopyBufferToImage(
            cb,
            self.staging.handle,
            img.handle,
            vk.VK_IMAGE_LAYOUT_GENERAL,
            1,
            [
                vk.VkBufferImageCopy(
                    bufferOffset=0,
                    bufferRowLength=0,
                    bufferImageHeight=0,
                    imageSubresource=COLOR_LAYERS,
                    imageOffset=vk.VkOffset3D(0, 0, 0),
                    imageExtent=vk.VkExtent3D(w, h, 1),
                )
            ],
        )
        self._layout(cb, target, vk.VK_IMAGE_LAYOUT_UNDEFINED, vk.VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL)
        ew, eh = self.extent
        vk.vkCmdBlitImage(
            cb,
            img.handle,
            vk.VK_IMAGE_LAYOUT_GENERAL,
            target,
            vk.VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL,
            1,
            [
                vk.VkImageBlit(
                    srcSubresource=COLOR_LAYERS,
                    srcOffsets=[vk.VkOffset3D(0, 0, 0), vk.VkOffset3D(w, h, 1)],
                    dstSubresource=COLOR_LAYERS,
                    dstOffsets=[vk.VkOffset3D(0, 0, 0), vk.VkOffset3D(ew, eh, 1)],
                )
            ],
            vk.VK_FILTER_NEAREST,
        )
        self._layout(cb, target, vk.VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL, vk.VK_IMAGE_LAYOUT_PRESENT_SRC_KHR)
        vk.vkEndCommandBuffer(cb)
        dev.submit_wait(cb)
        self._present(dev.queue, vk.VkPresentInfoKHR(swapchainCount=1, pSwapchains=[self.swapchain], pImageIndices=[idx]))
        self.presented += 1

    @staticmethod
    def _layout(cb: Any, image: Any, old: int, new: int) -> None:
        vk.vkCmdPipelineBarrier(
            cb,
            vk.VK_PIPELINE_STAGE_ALL_COMMANDS_BIT,
            vk.VK_PIPELINE_STAGE_ALL_COMMANDS_BIT,
            0,
            0,
            None,
            0,
            None,
            1,
            [
                vk.VkImageMemoryBarrier(
                    srcAccessMask=vk.VK_ACCESS_MEMORY_WRITE_BIT,
                    dstAccessMask=vk.VK_ACCESS_MEMORY_READ_BIT | vk.VK_ACCESS_MEMORY_WRITE_BIT,
                    oldLayout=old,
                    newLayout=new,
                    srcQueueFamilyIndex=vk.VK_QUEUE_FAMILY_IGNORED,
                    dstQueueFamilyIndex=vk.VK_QUEUE_FAMILY_IGNORED,
                    image=image,
                    subresourceRange=COLOR_RANGE,
                )
            ],
        )

    def close(self) -> None:
        vk.vkDeviceWaitIdle(self.dev.device)
        if self.scratch is not None:
            self.dev.free_image(self.scratch)
        if self.staging is not None:
            self.dev.free_buffer(self.staging)
        if self.swapchain is not None:
            self._destroy(self.dev.device, self.swapchain, None)
        vk.vkDestroyFence(self.dev.device, self.fence, None)
        self._destroy_surface(self.dev.instance, self.surface, None)
