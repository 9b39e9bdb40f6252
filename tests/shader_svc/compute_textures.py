"""The texture and sampler pools of a compute dispatch (issue 31; shader-tex): what
``shader_svc/lower/texture.py`` reads, bound by ``vk_compute.ComputeDevice.dispatch(...,
textures=TexturePools(...))`` in set 1 beside the surface pools.

- set 1, binding 0: ``TEXTURE_POOL`` sampled images; entry k is ``textures[k]`` (an
  R32G32B32A32_SFLOAT 2D image with the given mip levels), every other entry a 1x1 zero texture;
- set 1, binding 1: ``SAMPLER_POOL`` samplers, all the same: nearest magnification and
  minification, nearest mipmap selection, clamp to edge, normalised coordinates, LOD range
  [0, 16] (so a level is picked as Vulkan's "Level-of-Detail Operation" says: d = ceil(lambda +
  0.5) - 1 clamped to the levels).

A handle is ``sampler << 20 | texture`` (``lower/graphics.py``'s bindless handles).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import vulkan as vk

from nxrecomp.common import kernel_pools
from shader_svc.lower.graphics import SAMPLER_POOL, TEXTURE_POOL


@dataclass
class TexImage:
    handle: object
    memory: object
    view: object
    levels: list  # (width, height, byte offset in staging, depth) per level
    staging: object
    kind: str = "2d"  # shader-ndv: the pool it is an entry of ("2d", "3d", "2d_array")
    layers: int = 1


VIEW_TYPES = {
    "2d": vk.VK_IMAGE_VIEW_TYPE_2D,
    "2d_array": vk.VK_IMAGE_VIEW_TYPE_2D_ARRAY,
    "3d": vk.VK_IMAGE_VIEW_TYPE_3D,
    "cube": vk.VK_IMAGE_VIEW_TYPE_CUBE,  # shader-ndv
    "cube_array": vk.VK_IMAGE_VIEW_TYPE_CUBE_ARRAY,
}
# tex-kernels: the pools of the other dimensions a kernel reads (lower/texture.py: TEX/TLD/TXD on
# 3D and 2D array textures, and TXQ, which queries every pool), as the GPU process binds them
# (shader-ndv: the cube and cube array pools, texCubemapGrad / texCubemapLayeredGrad)
# (gpu-pools: the bindings are nxrecomp/common/kernel_pools.py's, the table the translator and the GPU
# process read)
DIM_POOLS = tuple((b, kind) for kind, b in kernel_pools.TEXTURE_BINDINGS.items() if kind != "2d")


def make_texture(dev, levels: list[np.ndarray], kind: str = "2d") -> TexImage:
    """A sampled float RGBA image with ``levels`` (float32 (h, w, 4) each, level 0 first),
    uploaded at the dispatch that binds it.  ``kind`` (tex-kernels): "2d", "2d_array" (a 2D
    array view of one layer) or "3d" (a 3D image one slice deep): the dummies of the pools at
    bindings 7 and 8.  shader-ndv: a "3d" level may be (d, h, w, 4), a volume of d slices, a
    "2d_array" level (layers, h, w, 4), a "cube" level (6, h, w, 4) (faces +X, -X, +Y, -Y, +Z, -Z), a "cube_array" level (6 * layers, h, w, 4)."""
    d = dev.device
    depth = levels[0].shape[0] if levels[0].ndim == 4 and kind == "3d" else 1
    layers = levels[0].shape[0] if levels[0].ndim == 4 and kind in ("2d_array", "cube", "cube_array") else 1  # (shader-ndv)
    if kind in ("cube", "cube_array") and levels[0].ndim == 3:  # a dummy: one texel on each of the six faces
        levels = [np.broadcast_to(lv, (6,) + lv.shape) for lv in levels]
        layers = 6
    h0, w0 = levels[0].shape[-3:-1]
    fmt = vk.VK_FORMAT_R32G32B32A32_SFLOAT
    usage = vk.VK_IMAGE_USAGE_SAMPLED_BIT | vk.VK_IMAGE_USAGE_TRANSFER_DST_BIT
    info = vk.VkImageCreateInfo(
        flags=vk.VK_IMAGE_CREATE_CUBE_COMPATIBLE_BIT if kind in ("cube", "cube_array") else 0,
        imageType=vk.VK_IMAGE_TYPE_3D if kind == "3d" else vk.VK_IMAGE_TYPE_2D,
        format=fmt,
        extent=vk.VkExtent3D(w0, h0, depth),
        mipLevels=len(levels),
        arrayLayers=layers,
        samples=vk.VK_SAMPLE_COUNT_1_BIT,
        tiling=vk.VK_IMAGE_TILING_OPTIMAL,
        usage=usage,
        sharingMode=vk.VK_SHARING_MODE_EXCLUSIVE,
        initialLayout=vk.VK_IMAGE_LAYOUT_UNDEFINED,
    )
    hd = vk.vkCreateImage(d, info, None)
    req = vk.vkGetImageMemoryRequirements(d, hd)
    idx = next(i for i in range(dev.mem_props.memoryTypeCount) if req.memoryTypeBits >> i & 1)
    mem = vk.vkAllocateMemory(d, vk.VkMemoryAllocateInfo(allocationSize=req.size, memoryTypeIndex=idx), None)
    vk.vkBindImageMemory(d, hd, mem, 0)
    rng = vk.VkImageSubresourceRange(vk.VK_IMAGE_ASPECT_COLOR_BIT, 0, len(levels), 0, layers)
    view = vk.vkCreateImageView(
        d, vk.VkImageViewCreateInfo(image=hd, viewType=VIEW_TYPES[kind], format=fmt, subresourceRange=rng), None
    )
    blob, at = bytearray(), []
    for lv in levels:
        t = np.ascontiguousarray(lv, np.float32)
        at.append((t.shape[-2], t.shape[-3], len(blob), t.shape[0] if t.ndim == 4 and kind == "3d" else 1))
        blob += t.tobytes()
    staging = dev.buffer(len(blob))
    dev.write(staging, bytes(blob))
    # destroyed with the device (ComputeDevice.close: owned handles in reverse: view, image, memory)
    dev._own(vk.vkFreeMemory, mem)
    dev._own(vk.vkDestroyImage, hd)
    dev._own(vk.vkDestroyImageView, view)
    im = TexImage(hd, mem, view, at, staging, kind, layers)
    return im


class TexturePools:
    """``ComputeDevice._dispatch_surfaces``'s extra set-1 bindings for ``textures``."""

    def __init__(self, dev, textures: list[TexImage]) -> None:
        self.dev = dev
        dummy = dev.__dict__.get("_dummy_texture")
        if dummy is None:
            dummy = dev._dummy_texture = make_texture(dev, [np.zeros((1, 1, 4), np.float32)])
        # entry k of the pool of texture k's kind; the other pools' entry k a one-texel dummy (as
        # the GPU process binds them; shader-ndv: 3D entries)
        self.entries = [textures[k] if k < len(textures) and textures[k].kind == "2d" else dummy for k in range(TEXTURE_POOL)]
        self.dim_dummies = []
        for _, kind in DIM_POOLS:
            d = dev.__dict__.get(f"_dummy_texture_{kind}")
            if d is None:
                d = make_texture(dev, [np.zeros((1, 1, 4), np.float32)], kind)
                dev.__dict__[f"_dummy_texture_{kind}"] = d
            self.dim_dummies.append(
                [textures[k] if k < len(textures) and textures[k].kind == kind else d for k in range(TEXTURE_POOL)]
            )
        self.uploads = list({id(t): t for t in self.entries + [t for p in self.dim_dummies for t in p]}.values())
        samplers = dev.__dict__.get("_pool_samplers")
        if samplers is None:
            clamp = vk.VK_SAMPLER_ADDRESS_MODE_CLAMP_TO_EDGE
            info = vk.VkSamplerCreateInfo(
                magFilter=vk.VK_FILTER_NEAREST,
                minFilter=vk.VK_FILTER_NEAREST,
                mipmapMode=vk.VK_SAMPLER_MIPMAP_MODE_NEAREST,
                addressModeU=clamp,
                addressModeV=clamp,
                addressModeW=clamp,
                minLod=0.0,
                maxLod=16.0,
            )
            samplers = dev._pool_samplers = [vk.vkCreateSampler(dev.device, info, None) for _ in range(SAMPLER_POOL)]
        self.samplers = samplers

    def bindings(self) -> list:
        stage = vk.VK_SHADER_STAGE_COMPUTE_BIT
        return [
            vk.VkDescriptorSetLayoutBinding(
                binding=kernel_pools.TEXTURE_BINDINGS["2d"],
                descriptorType=vk.VK_DESCRIPTOR_TYPE_SAMPLED_IMAGE,
                descriptorCount=TEXTURE_POOL,
                stageFlags=stage,
            ),
            vk.VkDescriptorSetLayoutBinding(
                binding=kernel_pools.SAMPLER_BINDING,
                descriptorType=vk.VK_DESCRIPTOR_TYPE_SAMPLER,
                descriptorCount=SAMPLER_POOL,
                stageFlags=stage,
            ),
            *(
                vk.VkDescriptorSetLayoutBinding(
                    binding=b, descriptorType=vk.VK_DESCRIPTOR_TYPE_SAMPLED_IMAGE, descriptorCount=TEXTURE_POOL, stageFlags=stage
                )
                for b, _ in DIM_POOLS
            ),
        ]

    def pool_sizes(self) -> list:
        return [
            vk.VkDescriptorPoolSize(
                type=vk.VK_DESCRIPTOR_TYPE_SAMPLED_IMAGE, descriptorCount=TEXTURE_POOL * (1 + len(DIM_POOLS))
            ),
            vk.VkDescriptorPoolSize(type=vk.VK_DESCRIPTOR_TYPE_SAMPLER, descriptorCount=SAMPLER_POOL),
        ]

    def writes(self, ds) -> list:
        general = vk.VK_IMAGE_LAYOUT_GENERAL
        return [
            vk.VkWriteDescriptorSet(
                dstSet=ds,
                dstBinding=kernel_pools.TEXTURE_BINDINGS["2d"],
                descriptorCount=TEXTURE_POOL,
                descriptorType=vk.VK_DESCRIPTOR_TYPE_SAMPLED_IMAGE,
                pImageInfo=[vk.VkDescriptorImageInfo(imageView=t.view, imageLayout=general) for t in self.entries],
            ),
            vk.VkWriteDescriptorSet(
                dstSet=ds,
                dstBinding=kernel_pools.SAMPLER_BINDING,
                descriptorCount=SAMPLER_POOL,
                descriptorType=vk.VK_DESCRIPTOR_TYPE_SAMPLER,
                pImageInfo=[vk.VkDescriptorImageInfo(sampler=s) for s in self.samplers],
            ),
            *(
                vk.VkWriteDescriptorSet(
                    dstSet=ds,
                    dstBinding=b,
                    descriptorCount=TEXTURE_POOL,
                    descriptorType=vk.VK_DESCRIPTOR_TYPE_SAMPLED_IMAGE,
                    pImageInfo=[vk.VkDescriptorImageInfo(imageView=t.view, imageLayout=general) for t in d],
                )
                for (b, _), d in zip(DIM_POOLS, self.dim_dummies)
            ),
        ]

    def record_upload(self, cb) -> None:
        """Each texture's levels from its staging buffer, the image left in GENERAL layout."""
        general = vk.VK_IMAGE_LAYOUT_GENERAL
        all_cmds = vk.VK_PIPELINE_STAGE_ALL_COMMANDS_BIT
        rw = vk.VK_ACCESS_MEMORY_READ_BIT | vk.VK_ACCESS_MEMORY_WRITE_BIT
        for t in self.uploads:
            rng = vk.VkImageSubresourceRange(vk.VK_IMAGE_ASPECT_COLOR_BIT, 0, len(t.levels), 0, t.layers)

            def barrier(old: int, t=t, rng=rng) -> None:
                b = vk.VkImageMemoryBarrier(
                    srcAccessMask=rw,
                    dstAccessMask=rw,
                    oldLayout=old,
                    newLayout=general,
                    srcQueueFamilyIndex=vk.VK_QUEUE_FAMILY_IGNORED,
                    dstQueueFamilyIndex=vk.VK_QUEUE_FAMILY_IGNORED,
                    image=t.handle,
                    subresourceRange=rng,
                )
                vk.vkCmdPipelineBarrier(cb, all_cmds, all_cmds, 0, 0, None, 0, None, 1, [b])

            barrier(vk.VK_IMAGE_LAYOUT_UNDEFINED)
            regions = [
                vk.VkBufferImageCopy(
                    bufferOffset=off,
                    bufferRowLength=0,
                    bufferImageHeight=0,
                    imageSubresource=vk.VkImageSubresourceLayers(vk.VK_IMAGE_ASPECT_COLOR_BIT, lv, 0, t.layers),
                    imageOffset=vk.VkOffset3D(0, 0, 0),
                    imageExtent=vk.VkExtent3D(w, h, dd),
                )
                for lv, (w, h, off, dd) in enumerate(t.levels)
            ]
            vk.vkCmdCopyBufferToImage(cb, t.staging.handle, t.handle, general, len(regions), regions)
            barrier(general)
