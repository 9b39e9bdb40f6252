"""The replayer's images: the Vulkan format each guest format gets on this device (native,
decoded on upload, a depth or colour fallback), the images of registered textures, samplers by
state, stand-in images for unbound slots, and a texture's texels as uploaded from pool bytes.
``ReplayImages`` is mixed into ``replay.Replayer``, whose state (``dev``, ``objects``,
``formats``, ``images``, ``samplers``, ``dummies``) it reads."""

from __future__ import annotations

import logging
from typing import Any

import numpy as np
import vulkan as vk

from gpu_host import blocklinear, texdecode
from gpu_host.formats import FORMATS, TexFormat
from gpu_host.objects import ObjectError, Texture
from gpu_host.vkdevice import Image

log = logging.getLogger("gpu_host.replay")
ALIGN = 256
ARENA_USAGE = (
    vk.VK_BUFFER_USAGE_VERTEX_BUFFER_BIT
    | vk.VK_BUFFER_USAGE_INDEX_BUFFER_BIT
    | vk.VK_BUFFER_USAGE_UNIFORM_BUFFER_BIT
    | vk.VK_BUFFER_USAGE_TRANSFER_SRC_BIT
)
RT_USAGE = (
    vk.VK_IMAGE_USAGE_COLOR_ATTACHMENT_BIT
    | vk.VK_IMAGE_USAGE_SAMPLED_BIT
    | vk.VK_IMAGE_USAGE_TRANSFER_SRC_BIT
    | vk.VK_IMAGE_USAGE_TRANSFER_DST_BIT
)
TEX_USAGE = vk.VK_IMAGE_USAGE_SAMPLED_BIT | vk.VK_IMAGE_USAGE_TRANSFER_DST_BIT
DEPTH_USAGE = (
    vk.VK_IMAGE_USAGE_DEPTH_STENCIL_ATTACHMENT_BIT
    | vk.VK_IMAGE_USAGE_SAMPLED_BIT
    | vk.VK_IMAGE_USAGE_TRANSFER_SRC_BIT
    | vk.VK_IMAGE_USAGE_TRANSFER_DST_BIT
)
# VK_FORMAT_FEATURE_TRANSFER_SRC_BIT 0x4000 | _DST_BIT 0x8000 (1.1 core; the binding lacks the names)
DEPTH_FEATURES = vk.VK_FORMAT_FEATURE_DEPTH_STENCIL_ATTACHMENT_BIT | vk.VK_FORMAT_FEATURE_SAMPLED_IMAGE_BIT | 0x4000 | 0x8000
RENDER_FEATURES = vk.VK_FORMAT_FEATURE_COLOR_ATTACHMENT_BIT | vk.VK_FORMAT_FEATURE_SAMPLED_IMAGE_BIT | 0x4000 | 0x8000
DEPTH_BYTES = {
    "VK_FORMAT_D16_UNORM": 2,
    "VK_FORMAT_D24_UNORM_S8_UINT": 4,
    "VK_FORMAT_D32_SFLOAT": 4,
    "VK_FORMAT_D32_SFLOAT_S8_UINT": 4,
}  # bytes a texel of the depth aspect copies to a buffer
FORMAT_FEATURE_TRANSFER_DST = 0x4000  # VK_FORMAT_FEATURE_TRANSFER_DST_BIT (1.1 core); the binding lacks the name
SAMPLE_FEATURES = vk.VK_FORMAT_FEATURE_SAMPLED_IMAGE_BIT | FORMAT_FEATURE_TRANSFER_DST


class ReplayImages:
    """Formats, images, samplers and stand-ins of the replayer (see the module's text)."""

    def upload_format(self, fmt: TexFormat) -> tuple[int, str]:
        """(Vulkan format of the image, CPU decoder to run on upload or "") for ``fmt`` on this
        device: native where the device samples it, else decoded to RGBA8; a format with neither
        raises ObjectError."""
        got = self.formats.get(fmt.name)
        if got is None:
            native = getattr(vk, fmt.vk_name)
            feature = (
                "textureCompressionBC"
                if fmt.name.startswith("BC")
                else "textureCompressionASTC_LDR"
                if fmt.name.startswith("ASTC")
                else None
            )
            ok = (feature is None or feature in self.dev.compression) and self.dev.format_supported(native, SAMPLE_FEATURES)
            if fmt.decoder and (self.decode_always or not ok):
                got = (vk.VK_FORMAT_R8G8B8A8_UNORM, fmt.decoder)
            elif ok:
                got = (native, "")
            else:
                raise ObjectError(
                    f"format {fmt.name}: device {self.dev.name} cannot sample {fmt.vk_name} and there is no CPU decoder for it"
                )
            log.info("format %s: %s", fmt.name, f"decoded on upload ({got[1]})" if got[1] else "native")
            self.formats[fmt.name] = got
        return got

    def _has(self, vk_name: str, features: int) -> bool:
        return vk_name not in self.avoid_formats and self.dev.format_supported(getattr(vk, vk_name), features)

    def depth_format(self, fmt: TexFormat) -> TexFormat:
        """The format a depth target of ``fmt`` is made in on this device: ``fmt`` where the device
        renders, samples and copies it, else its fallback (at least the same precision: D24S8 ->
        D32F_S8); neither raises ObjectError."""
        got = self.depth_formats.get(fmt.name)
        if got is None:
            got = fmt
            if not self._has(fmt.vk_name, DEPTH_FEATURES):
                got = FORMATS.get(fmt.fallback) if fmt.fallback else None
                if got is None or not self._has(got.vk_name, DEPTH_FEATURES):
                    raise ObjectError(
                        f"format {fmt.name}: device {self.dev.name} cannot render, sample and copy "
                        f"{fmt.vk_name}" + (f" nor its fallback {fmt.fallback}" if fmt.fallback else "")
                    )
                log.warning(
                    "format %s: device %s lacks %s; depth targets use %s", fmt.name, self.dev.name, fmt.vk_name, got.vk_name
                )
            self.depth_formats[fmt.name] = got
        return got

    def render_format(self, fmt: TexFormat) -> None:
        """Raise ObjectError where the device cannot render into, sample and copy colour format
        ``fmt`` (a non-renderable format is left to the object table's own refusal)."""
        if not fmt.renderable or fmt.depth or fmt.name in self.render_formats:
            return
        if not self._has(fmt.vk_name, RENDER_FEATURES):
            raise ObjectError(f"format {fmt.name}: device {self.dev.name} cannot render into, sample and copy {fmt.vk_name}")
        self.render_formats.add(fmt.name)

    def image_for(self, t: Texture) -> Image:
        cur = self.images.get(t.id)
        if cur is not None and cur[0] == t:
            return cur[1]
        if cur is not None:
            self.dev.free_image(cur[1])
            self.uploaded.pop(t.id, None)
        if t.fmt.depth:
            made = self.depth_format(t.fmt)
            aspect = vk.VK_IMAGE_ASPECT_DEPTH_BIT | (vk.VK_IMAGE_ASPECT_STENCIL_BIT if made.stencil else 0)
            # a multisampled image is only drawn into and resolved: no sampled/transfer-dst usage, whose
            # sample counts (sampledImage*SampleCounts) may be narrower than the framebuffer's
            usage = DEPTH_USAGE if t.samples == 1 else vk.VK_IMAGE_USAGE_DEPTH_STENCIL_ATTACHMENT_BIT
            img = self.dev.image(t.width, t.height, getattr(vk, made.vk_name), usage, aspect, samples=t.samples)
            self.images[t.id] = (t, img)
            return img
        usage = RT_USAGE if t.render_target else TEX_USAGE
        if t.samples > 1:
            usage = vk.VK_IMAGE_USAGE_COLOR_ATTACHMENT_BIT | vk.VK_IMAGE_USAGE_TRANSFER_SRC_BIT
        if t.volume:  # a 3D image of ``layers`` depth slices: a surface (compute) or uploaded; sampled, never drawn into
            usage = TEX_USAGE | (vk.VK_IMAGE_USAGE_TRANSFER_SRC_BIT if t.render_target else 0)
            img = self.dev.image(t.width, t.height, self.upload_format(t.fmt)[0], usage, depth=t.layers)
            self.images[t.id] = (t, img)
            return img
        img = self.dev.image(
            t.width, t.height, self.upload_format(t.fmt)[0], usage, layers=t.layers, cube=t.cube, samples=t.samples
        )
        self.images[t.id] = (t, img)
        return img

    def sampler(self, linear: bool, repeat: bool, compare: int = 0) -> Any:
        """``compare``: 0, or 1 + the compare op of a depth-compare sampler."""
        key = (linear, repeat, compare)
        s = self.samplers.get(key)
        if s is None:
            f = vk.VK_FILTER_LINEAR if linear else vk.VK_FILTER_NEAREST
            a = vk.VK_SAMPLER_ADDRESS_MODE_REPEAT if repeat else vk.VK_SAMPLER_ADDRESS_MODE_CLAMP_TO_EDGE
            s = vk.vkCreateSampler(
                self.dev.device,
                vk.VkSamplerCreateInfo(
                    magFilter=f,
                    minFilter=f,
                    mipmapMode=vk.VK_SAMPLER_MIPMAP_MODE_NEAREST,
                    addressModeU=a,
                    addressModeV=a,
                    addressModeW=a,
                    maxLod=0.0,
                    compareEnable=vk.VK_TRUE if compare else vk.VK_FALSE,
                    compareOp=max(compare - 1, 0),
                ),
                None,
            )
            self.samplers[key] = s
        return s

    def _layer_texels(self, t: Texture, src: Any, k: int) -> np.ndarray:
        """Layer ``k`` of ``t`` from its pool bytes, linear (rows of elements), decoded to RGBA8
        where the device lacks the format."""
        wb, base = t.row_bytes, k * t.layer_stride
        if t.block_linear:
            lin = blocklinear.deswizzle(src[base : base + t.layer_size], wb, t.rows, t.block_height_log2, t.gob)
        else:
            rows = np.frombuffer(src, np.uint8, count=t.layer_size, offset=base)
            lin = np.lib.stride_tricks.as_strided(rows, (t.rows, wb), (t.pitch, 1))
        decoder = self.upload_format(t.fmt)[1]
        if decoder:  # the device lacks the format: RGBA8 decoded here
            lin, _ = texdecode.decode(decoder, np.ascontiguousarray(lin), t.width, t.height, t.fmt.block_w, t.fmt.block_h)
        return np.ascontiguousarray(lin)

    def _volume_texels(self, t: Texture, src: Any) -> np.ndarray:
        """A volume's slices from its pool bytes, linear (slice, row, element): pitch-linear slices
        ``layer_stride`` apart as layers are, or a block-linear volume deswizzled whole (its blocks
        hold ``2**block_depth_log2`` slices: blocklinear.deswizzle_3d)."""
        if not t.block_linear:
            return np.concatenate([self._layer_texels(t, src, k) for k in range(t.layers)])
        lin = blocklinear.deswizzle_3d(src, t.row_bytes, t.rows, t.layers, t.block_height_log2, t.block_depth_log2, t.gob)
        decoder = self.upload_format(t.fmt)[1]
        if decoder:  # the device lacks the format: each slice RGBA8 decoded here
            lin = np.stack([texdecode.decode(decoder, np.ascontiguousarray(s), t.width, t.height, 1, 1)[0] for s in lin])
        return np.ascontiguousarray(lin)

    def dummy(self, kind: str, depth: bool = False) -> Image:
        """A 1x1 image of view ``kind`` for a slot a shader reads that nothing is bound to;
        ``depth``: a D32F one, for a slot the shader looks up with a depth comparison (Dref
        needs a depth view)."""
        key = kind + ("_depth" if depth else "")
        img = self.dummies.get(key)
        if img is None and kind == "3d":  # a 1x1x1 volume (a 3D slot has no depth-compare form)
            img = self.dummies[key] = self.dev.image(1, 1, vk.VK_FORMAT_R8G8B8A8_UNORM, TEX_USAGE, depth=1)
        if img is None:
            # a 2D array dummy has one layer (a 2D_ARRAY view): shader-tex, a kernel's TXQ combines
            # the pools' sizes by maximum, so the dummy's layer count must not exceed a texture's
            layers, cube = {"cube": (6, True), "cube_array": (12, True)}.get(kind, (1, False))
            arr = kind == "2d_array"
            if depth:
                img = self.dev.image(
                    1,
                    1,
                    vk.VK_FORMAT_D32_SFLOAT,
                    TEX_USAGE,
                    aspect=vk.VK_IMAGE_ASPECT_DEPTH_BIT,
                    layers=layers,
                    cube=cube,
                    array=arr,
                )
            else:
                img = self.dev.image(1, 1, vk.VK_FORMAT_R8G8B8A8_UNORM, TEX_USAGE, layers=layers, cube=cube, array=arr)
            self.dummies[key] = img
        return img
