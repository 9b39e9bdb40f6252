"""vk_graphics.GraphicsDevice's textures: samplers, uploads of RGBA8 textures of every kind (2D,
arrays, 3D, cube, 1D), depth textures with compare samplers, and the bindless pools' descriptor
set (set 1)."""

from __future__ import annotations

import numpy as np
import vulkan as vk

from nxrecomp.common.errors import NxError
from vk_graphics_base import COLOR, COLOR_FORMAT, DEPTH, Pools, Texture, VkResources


class TextureUploads(VkResources):
    """Mixed into ``GraphicsDevice`` (uses its pools' layout and sizes)."""

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

    def _texture(self, cb, tex: Texture):
        if tex.compare:
            return self._depth_texture(cb, tex)
        if tex.kind != "2D":
            return self._texture_nd(cb, tex)
        t = np.ascontiguousarray(tex.texels, dtype=np.uint8)
        th, tw = t.shape[:2]
        img, view = self._image(tw, th, vk.VK_IMAGE_USAGE_SAMPLED_BIT | vk.VK_IMAGE_USAGE_TRANSFER_DST_BIT)
        self._upload(cb, img, t, COLOR, tw, th)
        return view, self._sampler(tex.linear)

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
        img, view = self._image(
            tw,
            th,
            vk.VK_IMAGE_USAGE_SAMPLED_BIT | vk.VK_IMAGE_USAGE_TRANSFER_DST_BIT,
            vk.VK_FORMAT_D32_SFLOAT,
            DEPTH,
            layers=layers,
            vtype=vk.VK_IMAGE_VIEW_TYPE_2D_ARRAY if t.ndim == 3 else vk.VK_IMAGE_VIEW_TYPE_2D,
        )
        self._upload(cb, img, t, DEPTH, tw, th, layers=layers)
        return view, self._sampler(False, op)

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
        img, view = self._image(
            tw,
            th,
            vk.VK_IMAGE_USAGE_SAMPLED_BIT | vk.VK_IMAGE_USAGE_TRANSFER_DST_BIT,
            COLOR_FORMAT,
            COLOR,
            depth,
            layers,
            itype,
            vtype,
            flags,
        )
        self._upload(cb, img, t, COLOR, tw, th, depth, layers)
        return view, self._sampler(tex.linear)
