"""What vk_graphics.py's parts share: the colour format, the descriptor stages, and the records a
test hands to ``GraphicsDevice.draw`` (``Texture``, ``Pools``; see vk_graphics.py's text)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import vulkan as vk

COLOR_FORMAT = vk.VK_FORMAT_R8G8B8A8_UNORM
STAGES = vk.VK_SHADER_STAGE_VERTEX_BIT | vk.VK_SHADER_STAGE_FRAGMENT_BIT


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
