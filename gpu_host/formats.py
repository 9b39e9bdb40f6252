"""Texture formats the GPU process understands: name -> Vulkan format and bytes per texel."""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class TexFormat:
    name: str
    vk_name: str
    bpp: int          # bytes per texel
    renderable: bool  # allowed as a render target


FORMATS: dict[str, TexFormat] = {f.name: f for f in [
    TexFormat("RGBA8", "VK_FORMAT_R8G8B8A8_UNORM", 4, True),
    TexFormat("BGRA8", "VK_FORMAT_B8G8R8A8_UNORM", 4, True),
    TexFormat("R8", "VK_FORMAT_R8_UNORM", 1, False),
    TexFormat("RG8", "VK_FORMAT_R8G8_UNORM", 2, False),
    TexFormat("RGB565", "VK_FORMAT_R5G6B5_UNORM_PACK16", 2, False),
    TexFormat("RGBA16F", "VK_FORMAT_R16G16B16A16_SFLOAT", 8, False),
    TexFormat("RGBA32F", "VK_FORMAT_R32G32B32A32_SFLOAT", 16, False),
]}
