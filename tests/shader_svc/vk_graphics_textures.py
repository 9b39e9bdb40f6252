"""vk_graphics.GraphicsDevice's textures: samplers, uploads of RGBA8 textures of every kind (2D,
arrays, 3D, cube, 1D), depth textures with compare samplers, and the bindless pools' descriptor
set (set 1)."""

from __future__ import annotations

import numpy as np
import vulkan as vk

from nxrecomp.common.errors import NxError
from vk_graphics_base import COLOR_FORMAT, Pools, Texture


class TextureUploads:
    """Mixed into ``GraphicsDevice`` (uses its ``_own``, ``_memory``, ``_buffer``, ``_image``,
    ``_barrier`` and its pools' layout)."""

    def _pool_set(self, cb, pool, pools: Pools, writes: list):
        """Set 1: every texture pool entry (given or a 1x1 black one) and sampler pool entry."""
        nt, ns = self.pool_sizes
        if len(pools.textures) > nt or len(pools.samplers) > ns:
            raise NxError(f"pools of {len(pools.textures)} textures / {len(pools.samplers)} samplers are larger than {nt} / {ns}")
        ps = vk.vkAllocateDescriptorSets(
            self.device, vk.VkDescriptorSetAllocateInfo(descriptorPool=pool, descriptorSetCount=1, pSetLayouts=[self.pool_layout])
        )[0]
        views = []
        for i in range(nt):
            texels = pools.textures[i] if i < len(pools.textures) else np.zeros((1, 1, 4), np.uint8)
            views.append(self._texture(cb, Texture(texels))[0])
        samplers = [self._sampler(bool(pools.samplers[j]) if j < len(pools.samplers) else False) for j in range(ns)]
        writes.append(
            vk.VkWriteDescriptorSet(
                dstSet=ps,
                dstBinding=0,
                descriptorCount=nt,
                descriptorType=vk.VK_DESCRIPTOR_TYPE_SAMPLED_IMAGE,
                pImageInfo=[
                    vk.VkDescriptorImageInfo(imageView=v, imageLayout=vk.VK_IMAGE_LAYOUT_SHADER_READ_ONLY_OPTIMAL) for v in views
                ],
            )
        )
        writes.append(
            vk.VkWriteDescriptorSet(
                dstSet=ps,
                dstBinding=1,
                descriptorCount=ns,
                descriptorType=vk.VK_DESCRIPTOR_TYPE_SAMPLER,
                pImageInfo=[vk.VkDescriptorImageInfo(sampler=s) for s in samplers],
            )
        )
        return ps

    def _sampler(self, linear: bool):
        filt = vk.VK_FILTER_LINEAR if linear else vk.VK_FILTER_NEAREST
        clamp = vk.VK_SAMPLER_ADDRESS_MODE_CLAMP_TO_EDGE
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
                ),
                None,
            ),
        )

    def _texture(self, cb, tex: Texture):
        if tex.compare:
            return self._depth_texture(cb, tex)
        if tex.kind != "2D":
            return self._texture_nd(cb, tex)
        t = np.ascontiguousarray(tex.texels, dtype=np.uint8)
        th, tw = t.shape[:2]
        staging = self._buffer(t.nbytes, vk.VK_BUFFER_USAGE_TRANSFER_SRC_BIT, t.tobytes())
        img, view = self._image(tw, th, vk.VK_IMAGE_USAGE_SAMPLED_BIT | vk.VK_IMAGE_USAGE_TRANSFER_DST_BIT)
        self._barrier(
            cb,
            img,
            vk.VK_IMAGE_LAYOUT_UNDEFINED,
            vk.VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL,
            vk.VK_PIPELINE_STAGE_TOP_OF_PIPE_BIT,
            vk.VK_PIPELINE_STAGE_TRANSFER_BIT,
            0,
            vk.VK_ACCESS_TRANSFER_WRITE_BIT,
        )
        region = vk.VkBufferImageCopy(
            bufferOffset=0,
            bufferRowLength=0,
            bufferImageHeight=0,
            imageSubresource=vk.VkImageSubresourceLayers(
                aspectMask=vk.VK_IMAGE_ASPECT_COLOR_BIT, mipLevel=0, baseArrayLayer=0, layerCount=1
            ),
            imageOffset=vk.VkOffset3D(0, 0, 0),
            imageExtent=vk.VkExtent3D(tw, th, 1),
        )
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
        )
        filt = vk.VK_FILTER_LINEAR if tex.linear else vk.VK_FILTER_NEAREST
        clamp = vk.VK_SAMPLER_ADDRESS_MODE_CLAMP_TO_EDGE
        sampler = self._own(
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
                ),
                None,
            ),
        )
        return view, sampler

    def _depth_texture(self, cb, tex: Texture):
        """A 2D or 2D-array D32 texture (texels float32 (h, w) / (layers, h, w)) and a nearest
        sampler comparing with ``tex.compare``."""
        op = getattr(vk, f"VK_COMPARE_OP_{tex.compare}", None)
        t = np.ascontiguousarray(tex.texels, dtype=np.float32)
        if op is None or tex.kind not in ("2D", "ARRAY_2D") or t.ndim != {"2D": 2, "ARRAY_2D": 3}.get(tex.kind):
            raise NxError(
                f"depth texture: compare {tex.compare!r} (a VkCompareOp name), kind {tex.kind!r} (2D or "
                f"ARRAY_2D), texels of shape {t.shape} (want (h, w) / (layers, h, w) float32)"
            )
        layers = t.shape[0] if t.ndim == 3 else 1
        th, tw = t.shape[-2:]
        d = self.device
        img = self._own(
            vk.vkDestroyImage,
            vk.vkCreateImage(
                d,
                vk.VkImageCreateInfo(
                    imageType=vk.VK_IMAGE_TYPE_2D,
                    format=vk.VK_FORMAT_D32_SFLOAT,
                    extent=vk.VkExtent3D(tw, th, 1),
                    mipLevels=1,
                    arrayLayers=layers,
                    samples=vk.VK_SAMPLE_COUNT_1_BIT,
                    tiling=vk.VK_IMAGE_TILING_OPTIMAL,
                    usage=vk.VK_IMAGE_USAGE_SAMPLED_BIT | vk.VK_IMAGE_USAGE_TRANSFER_DST_BIT,
                    sharingMode=vk.VK_SHARING_MODE_EXCLUSIVE,
                    initialLayout=vk.VK_IMAGE_LAYOUT_UNDEFINED,
                ),
                None,
            ),
        )
        mem = self._memory(vk.vkGetImageMemoryRequirements(d, img), host=False)
        vk.vkBindImageMemory(d, img, mem, 0)
        rng = vk.VkImageSubresourceRange(aspectMask=vk.VK_IMAGE_ASPECT_DEPTH_BIT, levelCount=1, layerCount=layers)
        view = self._own(
            vk.vkDestroyImageView,
            vk.vkCreateImageView(
                d,
                vk.VkImageViewCreateInfo(
                    image=img,
                    viewType=vk.VK_IMAGE_VIEW_TYPE_2D_ARRAY if t.ndim == 3 else vk.VK_IMAGE_VIEW_TYPE_2D,
                    format=vk.VK_FORMAT_D32_SFLOAT,
                    subresourceRange=rng,
                ),
                None,
            ),
        )
        staging = self._buffer(t.nbytes, vk.VK_BUFFER_USAGE_TRANSFER_SRC_BIT, t.tobytes())

        def barrier(old, new, ss, ds, sa, da):
            b = vk.VkImageMemoryBarrier(
                srcAccessMask=sa,
                dstAccessMask=da,
                oldLayout=old,
                newLayout=new,
                srcQueueFamilyIndex=vk.VK_QUEUE_FAMILY_IGNORED,
                dstQueueFamilyIndex=vk.VK_QUEUE_FAMILY_IGNORED,
                image=img,
                subresourceRange=rng,
            )
            vk.vkCmdPipelineBarrier(cb, ss, ds, 0, 0, None, 0, None, 1, [b])

        barrier(
            vk.VK_IMAGE_LAYOUT_UNDEFINED,
            vk.VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL,
            vk.VK_PIPELINE_STAGE_TOP_OF_PIPE_BIT,
            vk.VK_PIPELINE_STAGE_TRANSFER_BIT,
            0,
            vk.VK_ACCESS_TRANSFER_WRITE_BIT,
        )
        region = vk.VkBufferImageCopy(
            bufferOffset=0,
            bufferRowLength=0,
            bufferImageHeight=0,
            imageSubresource=vk.VkImageSubresourceLayers(
                aspectMask=vk.VK_IMAGE_ASPECT_DEPTH_BIT, mipLevel=0, baseArrayLayer=0, layerCount=layers
            ),
            imageOffset=vk.VkOffset3D(0, 0, 0),
            imageExtent=vk.VkExtent3D(tw, th, 1),
        )
        vk.vkCmdCopyBufferToImage(cb, staging.handle, img, vk.VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL, 1, [region])
        barrier(
            vk.VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL,
            vk.VK_IMAGE_LAYOUT_SHADER_READ_ONLY_OPTIMAL,
            vk.VK_PIPELINE_STAGE_TRANSFER_BIT,
            vk.VK_PIPELINE_STAGE_ALL_GRAPHICS_BIT,
            vk.VK_ACCESS_TRANSFER_WRITE_BIT,
            vk.VK_ACCESS_SHADER_READ_BIT,
        )
        clamp = vk.VK_SAMPLER_ADDRESS_MODE_CLAMP_TO_EDGE
        sampler = self._own(
            vk.vkDestroySampler,
            vk.vkCreateSampler(
                d,
                vk.VkSamplerCreateInfo(
                    magFilter=vk.VK_FILTER_NEAREST,
                    minFilter=vk.VK_FILTER_NEAREST,
                    mipmapMode=vk.VK_SAMPLER_MIPMAP_MODE_NEAREST,
                    addressModeU=clamp,
                    addressModeV=clamp,
                    addressModeW=clamp,
                    maxLod=0.0,
                    compareEnable=vk.VK_TRUE,
                    compareOp=op,
                ),
                None,
            ),
        )
        return view, sampler

    def _texture_nd(self, cb, tex: Texture):
        """A 2D array, 3D or cube texture (see Texture) and its sampler."""
        kinds = {
            "1D": (vk.VK_IMAGE_TYPE_1D, vk.VK_IMAGE_VIEW_TYPE_1D, 0),
            "ARRAY_1D": (vk.VK_IMAGE_TYPE_1D, vk.VK_IMAGE_VIEW_TYPE_1D_ARRAY, 0),
            "ARRAY_2D": (vk.VK_IMAGE_TYPE_2D, vk.VK_IMAGE_VIEW_TYPE_2D_ARRAY, 0),
            "3D": (vk.VK_IMAGE_TYPE_3D, vk.VK_IMAGE_VIEW_TYPE_3D, 0),
            "CUBE": (vk.VK_IMAGE_TYPE_2D, vk.VK_IMAGE_VIEW_TYPE_CUBE, vk.VK_IMAGE_CREATE_CUBE_COMPATIBLE_BIT),
            "ARRAY_CUBE": (vk.VK_IMAGE_TYPE_2D, vk.VK_IMAGE_VIEW_TYPE_CUBE_ARRAY, vk.VK_IMAGE_CREATE_CUBE_COMPATIBLE_BIT),
        }
        if tex.kind not in kinds:
            raise NxError(f"texture kind {tex.kind!r} is not 2D, 1D, ARRAY_1D, ARRAY_2D, 3D, CUBE or ARRAY_CUBE")
        t = np.ascontiguousarray(tex.texels, dtype=np.uint8)
        cube = tex.kind.endswith("CUBE")
        if (
            t.ndim != 4
            or t.shape[3] != 4
            or (cube and (t.shape[0] % 6 or not t.shape[0] or t.shape[1] != t.shape[2]))
            or (tex.kind == "CUBE" and t.shape[0] != 6)
            or (tex.kind.endswith("1D") and t.shape[1] != 1)
            or (tex.kind == "1D" and t.shape[0] != 1)
        ):
            raise NxError(
                f"{tex.kind} texels of shape {t.shape} (want (n, h, w, 4); a cube 6 square faces, a cube "
                f"array 6 per cube; "
                f"1D (1, 1, w, 4), a 1D array (n, 1, w, 4))"
            )
        n, th, tw = t.shape[:3]
        itype, vtype, flags = kinds[tex.kind]
        depth, layers = (n, 1) if tex.kind == "3D" else (1, n)
        d = self.device
        img = self._own(
            vk.vkDestroyImage,
            vk.vkCreateImage(
                d,
                vk.VkImageCreateInfo(
                    flags=flags,
                    imageType=itype,
                    format=COLOR_FORMAT,
                    extent=vk.VkExtent3D(tw, th, depth),
                    mipLevels=1,
                    arrayLayers=layers,
                    samples=vk.VK_SAMPLE_COUNT_1_BIT,
                    tiling=vk.VK_IMAGE_TILING_OPTIMAL,
                    usage=vk.VK_IMAGE_USAGE_SAMPLED_BIT | vk.VK_IMAGE_USAGE_TRANSFER_DST_BIT,
                    sharingMode=vk.VK_SHARING_MODE_EXCLUSIVE,
                    initialLayout=vk.VK_IMAGE_LAYOUT_UNDEFINED,
                ),
                None,
            ),
        )
        mem = self._memory(vk.vkGetImageMemoryRequirements(d, img), host=False)
        vk.vkBindImageMemory(d, img, mem, 0)
        rng = vk.VkImageSubresourceRange(aspectMask=vk.VK_IMAGE_ASPECT_COLOR_BIT, levelCount=1, layerCount=layers)
        view = self._own(
            vk.vkDestroyImageView,
            vk.vkCreateImageView(
                d, vk.VkImageViewCreateInfo(image=img, viewType=vtype, format=COLOR_FORMAT, subresourceRange=rng), None
            ),
        )
        staging = self._buffer(t.nbytes, vk.VK_BUFFER_USAGE_TRANSFER_SRC_BIT, t.tobytes())

        def barrier(old, new, ss, ds, sa, da):
            b = vk.VkImageMemoryBarrier(
                srcAccessMask=sa,
                dstAccessMask=da,
                oldLayout=old,
                newLayout=new,
                srcQueueFamilyIndex=vk.VK_QUEUE_FAMILY_IGNORED,
                dstQueueFamilyIndex=vk.VK_QUEUE_FAMILY_IGNORED,
                image=img,
                subresourceRange=rng,
            )
            vk.vkCmdPipelineBarrier(cb, ss, ds, 0, 0, None, 0, None, 1, [b])

        barrier(
            vk.VK_IMAGE_LAYOUT_UNDEFINED,
            vk.VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL,
            vk.VK_PIPELINE_STAGE_TOP_OF_PIPE_BIT,
            vk.VK_PIPELINE_STAGE_TRANSFER_BIT,
            0,
            vk.VK_ACCESS_TRANSFER_WRITE_BIT,
        )
        region = vk.VkBufferImageCopy(
            bufferOffset=0,
            bufferRowLength=0,
            bufferImageHeight=0,
            imageSubresource=vk.VkImageSubresourceLayers(
                aspectMask=vk.VK_IMAGE_ASPECT_COLOR_BIT, mipLevel=0, baseArrayLayer=0, layerCount=layers
            ),
            imageOffset=vk.VkOffset3D(0, 0, 0),
            imageExtent=vk.VkExtent3D(tw, th, depth),
        )
        vk.vkCmdCopyBufferToImage(cb, staging.handle, img, vk.VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL, 1, [region])
        barrier(
            vk.VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL,
            vk.VK_IMAGE_LAYOUT_SHADER_READ_ONLY_OPTIMAL,
            vk.VK_PIPELINE_STAGE_TRANSFER_BIT,
            vk.VK_PIPELINE_STAGE_ALL_GRAPHICS_BIT,
            vk.VK_ACCESS_TRANSFER_WRITE_BIT,
            vk.VK_ACCESS_SHADER_READ_BIT,
        )
        filt = vk.VK_FILTER_LINEAR if tex.linear else vk.VK_FILTER_NEAREST
        clamp = vk.VK_SAMPLER_ADDRESS_MODE_CLAMP_TO_EDGE
        sampler = self._own(
            vk.vkDestroySampler,
            vk.vkCreateSampler(
                d,
                vk.VkSamplerCreateInfo(
                    magFilter=filt,
                    minFilter=filt,
                    mipmapMode=vk.VK_SAMPLER_MIPMAP_MODE_NEAREST,
                    addressModeU=clamp,
                    addressModeV=clamp,
                    addressModeW=clamp,
                    maxLod=0.0,
                ),
                None,
            ),
        )
        return view, sampler
