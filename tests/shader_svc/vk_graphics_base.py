"""What vk_graphics.py's parts share: the colour format, the descriptor stages, and the records a
test hands to ``GraphicsDevice.draw`` (``Texture``, ``Pools``; see vk_graphics.py's text), and
``VkResources``: the Vulkan steps every part takes (images, buffers, barriers, uploads, read-backs,
attachments, samplers), written once."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import vulkan as vk

COLOR_FORMAT = vk.VK_FORMAT_R8G8B8A8_UNORM
STAGES = vk.VK_SHADER_STAGE_VERTEX_BIT | vk.VK_SHADER_STAGE_FRAGMENT_BIT | vk.VK_SHADER_STAGE_GEOMETRY_BIT


@dataclass
class _Buf:
    handle: object
    memory: object
    size: int


@dataclass
class Pools:
    """Bindless pools: ``textures`` (pool entry i = list item i, RGBA8 texels (h, w, 4)) and
    ``samplers`` (entry j: True = linear filtering, False = nearest; clamped); entries not given
    are a 1x1 black texture / a nearest sampler (every descriptor must be written)."""

    textures: list
    samplers: list


@dataclass
class Texture:
    """An RGBA8 2D texture: ``texels`` uint8 (h, w, 4); nearest or linear filtering, clamped.
    ``kind`` "ARRAY_2D" / "3D" / "CUBE": texels (layers | depth | 6 faces, h, w, 4), bound as a
    2D array / 3D / cube view (cube faces in Vulkan's order +X -X +Y -Y +Z -Z); "ARRAY_CUBE": texels
    (6 x cubes, h, w, 4), cube c's faces at 6c..6c+5; "1D" / "ARRAY_1D":
    texels (1 | layers, 1, w, 4).  ``compare`` (a VkCompareOp name: "LESS", "GREATER", ...) makes it
    a depth texture: texels float32 (h, w) ("2D") or (layers, h, w) ("ARRAY_2D"), a D32 image whose
    sampler compares with that op (what a depth-compare TLD4 / TEXS reads)."""

    texels: np.ndarray
    linear: bool = False
    kind: str = "2D"
    compare: str = ""


COLOR = vk.VK_IMAGE_ASPECT_COLOR_BIT
DEPTH = vk.VK_IMAGE_ASPECT_DEPTH_BIT


class VkResources:
    """The steps every part repeats, one helper each: owned handles, memory, buffers, images and
    their views, layout barriers, buffer<->image copies (upload, read-back) and samplers.  Mixed
    into ``GraphicsDevice`` (needs its ``device``, ``mem_props`` and ``_owned``)."""

    def _own(self, destroy, handle):
        self._owned.append((destroy, handle))
        return handle

    def _memory(self, req, host: bool, flags: int = 0):
        """Memory for ``req``: host-visible and coherent where ``host``; ``flags``: its
        VkMemoryAllocateFlags (the compute harness's device addresses)."""
        want = (vk.VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | vk.VK_MEMORY_PROPERTY_HOST_COHERENT_BIT) if host else 0
        idx = next(
            i
            for i in range(self.mem_props.memoryTypeCount)
            if req.memoryTypeBits >> i & 1 and self.mem_props.memoryTypes[i].propertyFlags & want == want
        )
        ext = vk.VkMemoryAllocateFlagsInfo(flags=flags) if flags else None
        mem = vk.vkAllocateMemory(
            self.device, vk.VkMemoryAllocateInfo(pNext=ext, allocationSize=req.size, memoryTypeIndex=idx), None
        )
        return self._own(vk.vkFreeMemory, mem)

    def _buffer(self, size: int, usage: int, data: bytes | None = None) -> _Buf:
        size = max(size, 16)
        h = self._own(
            vk.vkDestroyBuffer,
            vk.vkCreateBuffer(
                self.device, vk.VkBufferCreateInfo(size=size, usage=usage, sharingMode=vk.VK_SHARING_MODE_EXCLUSIVE), None
            ),
        )
        mem = self._memory(vk.vkGetBufferMemoryRequirements(self.device, h), host=True)
        vk.vkBindBufferMemory(self.device, h, mem, 0)
        b = _Buf(h, mem, size)
        if data:
            self._write(b, data)
        return b

    def _write(self, b: _Buf, data: bytes) -> None:
        p = vk.vkMapMemory(self.device, b.memory, 0, b.size, 0)
        p[: len(data)] = data
        vk.vkUnmapMemory(self.device, b.memory)

    def _read(self, b: _Buf) -> bytes:
        p = vk.vkMapMemory(self.device, b.memory, 0, b.size, 0)
        out = bytes(p[: b.size])
        vk.vkUnmapMemory(self.device, b.memory)
        return out

    def _image(
        self,
        w: int,
        h: int,
        usage: int,
        fmt: int = COLOR_FORMAT,
        aspect: int = COLOR,
        depth: int = 1,
        layers: int = 1,
        itype: int = vk.VK_IMAGE_TYPE_2D,
        vtype: int = vk.VK_IMAGE_VIEW_TYPE_2D,
        flags: int = 0,
    ):
        """An optimal-tiling device-local image (w, h, depth) of ``layers`` and its view: (image, view)."""
        img = self._own(
            vk.vkDestroyImage,
            vk.vkCreateImage(
                self.device,
                vk.VkImageCreateInfo(
                    flags=flags,
                    imageType=itype,
                    format=fmt,
                    extent=vk.VkExtent3D(w, h, depth),
                    mipLevels=1,
                    arrayLayers=layers,
                    samples=vk.VK_SAMPLE_COUNT_1_BIT,
                    tiling=vk.VK_IMAGE_TILING_OPTIMAL,
                    usage=usage,
                    sharingMode=vk.VK_SHARING_MODE_EXCLUSIVE,
                    initialLayout=vk.VK_IMAGE_LAYOUT_UNDEFINED,
                ),
                None,
            ),
        )
        mem = self._memory(vk.vkGetImageMemoryRequirements(self.device, img), host=False)
        vk.vkBindImageMemory(self.device, img, mem, 0)
        rng = vk.VkImageSubresourceRange(aspectMask=aspect, levelCount=1, layerCount=layers)
        view = self._own(
            vk.vkDestroyImageView,
            vk.vkCreateImageView(
                self.device, vk.VkImageViewCreateInfo(image=img, viewType=vtype, format=fmt, subresourceRange=rng), None
            ),
        )
        return img, view

    @staticmethod
    def _barrier(
        cb,
        img,
        old: int,
        new: int,
        src_stage: int,
        dst_stage: int,
        src_access: int,
        dst_access: int,
        aspect: int = COLOR,
        layers: int = 1,
    ):
        rng = vk.VkImageSubresourceRange(aspectMask=aspect, levelCount=1, layerCount=layers)
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

    @staticmethod
    def _region(aspect: int, w: int, h: int, depth: int = 1, layers: int = 1):
        """The whole image (mip 0, layers 0..layers-1) packed tightly in a buffer."""
        return vk.VkBufferImageCopy(
            bufferOffset=0,
            bufferRowLength=0,
            bufferImageHeight=0,
            imageSubresource=vk.VkImageSubresourceLayers(aspectMask=aspect, mipLevel=0, baseArrayLayer=0, layerCount=layers),
            imageOffset=vk.VkOffset3D(0, 0, 0),
            imageExtent=vk.VkExtent3D(w, h, depth),
        )

    def _upload(self, cb, img, data: np.ndarray, aspect: int, w: int, h: int, depth: int = 1, layers: int = 1) -> None:
        """Record ``data`` (the texels, packed) into a fresh image and leave it shader-readable."""
        staging = self._buffer(data.nbytes, vk.VK_BUFFER_USAGE_TRANSFER_SRC_BIT, data.tobytes())
        self._barrier(
            cb,
            img,
            vk.VK_IMAGE_LAYOUT_UNDEFINED,
            vk.VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL,
            vk.VK_PIPELINE_STAGE_TOP_OF_PIPE_BIT,
            vk.VK_PIPELINE_STAGE_TRANSFER_BIT,
            0,
            vk.VK_ACCESS_TRANSFER_WRITE_BIT,
            aspect,
            layers,
        )
        region = self._region(aspect, w, h, depth, layers)
        vk.vkCmdCopyBufferToImage(cb, staging.handle, img, vk.VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL, 1, [region])
        self._barrier(
            cb,
            img,
            vk.VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL,
            vk.VK_IMAGE_LAYOUT_SHADER_READ_ONLY_OPTIMAL,
            vk.VK_PIPELINE_STAGE_TRANSFER_BIT,
            vk.VK_PIPELINE_STAGE_ALL_GRAPHICS_BIT,
            vk.VK_ACCESS_TRANSFER_WRITE_BIT,
            vk.VK_ACCESS_SHADER_READ_BIT,
            aspect,
            layers,
        )

    def _readback(self, cb, img, aspect: int, w: int, h: int, old: int, src_stage: int, src_access: int) -> _Buf:
        """Record a copy of a rendered (w, h) image of 4-byte texels, in layout ``old`` after
        ``src_stage``/``src_access``, into a fresh host buffer (read it after the submit)."""
        buf = self._buffer(w * h * 4, vk.VK_BUFFER_USAGE_TRANSFER_DST_BIT)
        self._barrier(
            cb,
            img,
            old,
            vk.VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL,
            src_stage,
            vk.VK_PIPELINE_STAGE_TRANSFER_BIT,
            src_access,
            vk.VK_ACCESS_TRANSFER_READ_BIT,
            aspect,
        )
        region = self._region(aspect, w, h)
        vk.vkCmdCopyImageToBuffer(cb, img, vk.VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL, buf.handle, 1, [region])
        return buf

    def _attachment(self, cb, img, view, aspect: int, layout: int, stage: int, access: int, clear):
        """Dynamic rendering's attachment for ``view``, cleared to ``clear`` (a VkClearValue) and
        stored; records the image's move from UNDEFINED to ``layout`` before ``stage``/``access``."""
        self._barrier(
            cb, img, vk.VK_IMAGE_LAYOUT_UNDEFINED, layout, vk.VK_PIPELINE_STAGE_TOP_OF_PIPE_BIT, stage, 0, access, aspect
        )
        return vk.VkRenderingAttachmentInfo(
            imageView=view,
            imageLayout=layout,
            loadOp=vk.VK_ATTACHMENT_LOAD_OP_CLEAR,
            storeOp=vk.VK_ATTACHMENT_STORE_OP_STORE,
            clearValue=clear,
        )

    def _sampler(self, linear: bool, compare_op: int | None = None):
        """A clamped sampler, linear or nearest, mip 0 only; with ``compare_op`` a depth-compare one."""
        filt = vk.VK_FILTER_LINEAR if linear else vk.VK_FILTER_NEAREST
        clamp = vk.VK_SAMPLER_ADDRESS_MODE_CLAMP_TO_EDGE
        compare = {} if compare_op is None else {"compareEnable": vk.VK_TRUE, "compareOp": compare_op}
        return self._own(
            vk.vkDestroySampler,
            vk.vkCreateSampler(
                self.device,
                vk.VkSamplerCreateInfo(
                    magFilter=filt,
                    minFilter=filt,
                    mipmapMode=vk.VK_SAMPLER_MIPMAP_MODE_NEAREST,
                    addressModeU=clamp,
                    addressModeV=clamp,
                    addressModeW=clamp,
                    maxLod=0.0,
                    **compare,
                ),
                None,
            ),
        )
