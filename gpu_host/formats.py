"""Texture formats the GPU process understands: name -> Vulkan format and bytes per element.

An element is a texel for plain formats and a whole block for block-compressed ones (BCn: 4x4
texels in 8 or 16 bytes; ASTC: WxH texels in 16 bytes).  The Switch's block-linear layout
swizzles elements, so a compressed surface is a grid of ``ceil(w/bw) x ceil(h/bh)`` blocks.
A compressed format the device cannot sample is decoded on upload to RGBA8 where ``decoder``
names a CPU decoder (``gpu_host.texdecode``); without one the format needs native support.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class TexFormat:
    name: str
    vk_name: str
    bpp: int  # bytes per element (texel, or block for compressed formats)
    renderable: bool  # allowed as a render target
    block_w: int = 1  # texels per element, across
    block_h: int = 1  # texels per element, down
    decoder: str = ""  # texdecode family used when the device lacks the format
    depth: bool = False  # a depth (or depth/stencil) format: only a render target, bound by DEPTH_TARGET
    stencil: bool = False  # has a stencil aspect
    fallback: str = ""  # the format used where the device lacks this one (at least its precision)

    @property
    def compressed(self) -> bool:
        return self.block_w > 1 or self.block_h > 1

    def blocks(self, width: int, height: int) -> tuple[int, int]:
        """Elements across and down for a width x height image."""
        return -(-width // self.block_w), -(-height // self.block_h)


ASTC_SIZES = [
    (4, 4),
    (5, 4),
    (5, 5),
    (6, 5),
    (6, 6),
    (8, 5),
    (8, 6),
    (8, 8),
    (10, 5),
    (10, 6),
    (10, 8),
    (10, 10),
    (12, 10),
    (12, 12),
]

FORMATS: dict[str, TexFormat] = {
    f.name: f
    for f in [
        TexFormat("RGBA8", "VK_FORMAT_R8G8B8A8_UNORM", 4, True),
        TexFormat("BGRA8", "VK_FORMAT_B8G8R8A8_UNORM", 4, True),
        TexFormat("R8", "VK_FORMAT_R8_UNORM", 1, True),
        TexFormat("RG8", "VK_FORMAT_R8G8_UNORM", 2, True),
        TexFormat("RGB565", "VK_FORMAT_R5G6B5_UNORM_PACK16", 2, False),
        TexFormat("RGBA16F", "VK_FORMAT_R16G16B16A16_SFLOAT", 8, True),
        TexFormat("RGBA32F", "VK_FORMAT_R32G32B32A32_SFLOAT", 16, False),
        # S3TC / RGTC / BPTC.  BC1: index 3 of the 3-colour mode is transparent black; BC1_RGB: opaque.
        TexFormat("BC1", "VK_FORMAT_BC1_RGBA_UNORM_BLOCK", 8, False, 4, 4, "BC1"),
        TexFormat("BC1_RGB", "VK_FORMAT_BC1_RGB_UNORM_BLOCK", 8, False, 4, 4, "BC1_RGB"),
        TexFormat("BC2", "VK_FORMAT_BC2_UNORM_BLOCK", 16, False, 4, 4, "BC2"),
        TexFormat("BC3", "VK_FORMAT_BC3_UNORM_BLOCK", 16, False, 4, 4, "BC3"),
        TexFormat("BC4", "VK_FORMAT_BC4_UNORM_BLOCK", 8, False, 4, 4, "BC4"),
        TexFormat("BC5", "VK_FORMAT_BC5_UNORM_BLOCK", 16, False, 4, 4, "BC5"),
        TexFormat("BC6H", "VK_FORMAT_BC6H_UFLOAT_BLOCK", 16, False, 4, 4),
        TexFormat("BC7", "VK_FORMAT_BC7_UNORM_BLOCK", 16, False, 4, 4, "BC7"),
        # Depth/stencil render targets.  Bytes per texel as the guest's pool holds them (WRITEBACK):
        # D16 u16 unorm; D24S8 u32 = depth24 | stencil << 24; D32F f32; D32F_S8 f32 depth then a u32
        # whose low byte is the stencil (8 bytes a texel).
        TexFormat("D16", "VK_FORMAT_D16_UNORM", 2, True, depth=True),
        TexFormat("D24S8", "VK_FORMAT_D24_UNORM_S8_UINT", 4, True, depth=True, stencil=True, fallback="D32F_S8"),
        TexFormat("D32F", "VK_FORMAT_D32_SFLOAT", 4, True, depth=True),
        TexFormat("D32F_S8", "VK_FORMAT_D32_SFLOAT_S8_UINT", 8, True, depth=True, stencil=True),
        *(TexFormat(f"ASTC_{w}x{h}", f"VK_FORMAT_ASTC_{w}x{h}_UNORM_BLOCK", 16, False, w, h, "ASTC") for w, h in ASTC_SIZES),
    ]
}
