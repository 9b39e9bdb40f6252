"""Is our Turing-style GOB (gpu_host/blocklinear.py, the Switch 2's colour surfaces) what NVIDIA
hardware lays out?  Run where an NVIDIA driver with VK_EXT_image_drm_format_modifier is (the
device tool's H200; Hopper has the Turing-and-later GOB): for every block-linear DRM format
modifier the driver offers for RGBA8, an image with that modifier is filled through
vkCmdCopyBufferToImage from a pattern whose bytes name their own pixel, its memory is read raw
through a buffer bound to the same memory, and every byte is looked up at the place each of
our GOB kinds says it is.

    python3 bench/gpu_gob_nvidia.py [--out result.json]

NVIDIA's modifier (public, Linux drm_fourcc.h): vendor 0x03 in bits 56-63; 0x10 marks block
linear; bits 0-3 the block height log2 (GOBs); 12-19 the page kind; 20-21 the GOB height /
kind generation; 22 sector layout; 23-25 compression.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import vulkan as vk  # noqa: E402
from vulkan._vulkan import ffi, lib  # noqa: E402

from gpu_host import blocklinear  # noqa: E402
from gpu_host.vkdevice import COLOR_LAYERS, COLOR_RANGE, Device, full_barrier  # noqa: E402

FMT = vk.VK_FORMAT_R8G8B8A8_UNORM
W, H = 64, 256  # 256 bytes a row: 4 GOBs wide; 256 rows: 32 GOBs, the tallest block (2^5 GOBs)


def modifiers(d: Device) -> list[int]:
    lst = ffi.new("VkDrmFormatModifierPropertiesListEXT*")
    lst.sType = vk.VK_STRUCTURE_TYPE_DRM_FORMAT_MODIFIER_PROPERTIES_LIST_EXT
    p2 = ffi.new("VkFormatProperties2*")
    p2.sType = vk.VK_STRUCTURE_TYPE_FORMAT_PROPERTIES_2
    p2.pNext = lst
    lib.vkGetPhysicalDeviceFormatProperties2(d.pd, FMT, p2)
    arr = ffi.new("VkDrmFormatModifierPropertiesEXT[]", max(1, lst.drmFormatModifierCount))
    lst.pDrmFormatModifierProperties = arr
    lib.vkGetPhysicalDeviceFormatProperties2(d.pd, FMT, p2)
    want = 0x4000 | 0x8000  # VK_FORMAT_FEATURE_TRANSFER_DST_BIT | _SRC_BIT (1.1 core; the binding lacks the names)
    return [
        int(arr[i].drmFormatModifier)
        for i in range(lst.drmFormatModifierCount)
        if arr[i].drmFormatModifierPlaneCount == 1 and (arr[i].drmFormatModifierTilingFeatures & want) == want
    ]


def decode(mod: int) -> dict:
    return {
        "modifier": f"{mod:#018x}",
        "vendor": mod >> 56,
        "block_linear": bool(mod & 0x10),
        "block_height_log2": mod & 0xF,
        "kind": (mod >> 12) & 0xFF,
        "gob_generation": (mod >> 20) & 3,
        "sector_layout": (mod >> 22) & 1,
        "compression": (mod >> 23) & 7,
    }


def pattern() -> np.ndarray:
    y, x = np.mgrid[0:H, 0:W]
    px = np.stack([x, y, (x * 7 + y * 13) & 255, np.full_like(x, 0xA5)], -1).astype(np.uint8)
    return px.reshape(H, W * 4)


def raw_bytes(d: Device, mod: int | None, lin: np.ndarray) -> bytes:
    """The image's memory, byte for byte, after the pattern was copied into it (``mod`` None:
    a linear image, which checks this mechanism itself on any driver)."""
    ici = ffi.new("VkImageCreateInfo*")
    ici.sType = vk.VK_STRUCTURE_TYPE_IMAGE_CREATE_INFO
    if mod is not None:
        mods = ffi.new("uint64_t[]", [mod])
        lci = ffi.new("VkImageDrmFormatModifierListCreateInfoEXT*")
        lci.sType = vk.VK_STRUCTURE_TYPE_IMAGE_DRM_FORMAT_MODIFIER_LIST_CREATE_INFO_EXT
        lci.drmFormatModifierCount = 1
        lci.pDrmFormatModifiers = mods
        ici.pNext = lci
    ici.imageType = vk.VK_IMAGE_TYPE_2D
    ici.format = FMT
    ici.extent.width, ici.extent.height, ici.extent.depth = W, H, 1
    ici.mipLevels = ici.arrayLayers = 1
    ici.samples = vk.VK_SAMPLE_COUNT_1_BIT
    ici.tiling = vk.VK_IMAGE_TILING_DRM_FORMAT_MODIFIER_EXT if mod is not None else vk.VK_IMAGE_TILING_LINEAR
    ici.usage = vk.VK_IMAGE_USAGE_TRANSFER_DST_BIT | vk.VK_IMAGE_USAGE_TRANSFER_SRC_BIT
    ici.sharingMode = vk.VK_SHARING_MODE_EXCLUSIVE
    ici.initialLayout = vk.VK_IMAGE_LAYOUT_UNDEFINED
    img = ffi.new("VkImage*")
    r = lib.vkCreateImage(d.device, ici, ffi.NULL, img)
    if r != 0:
        raise RuntimeError(f"vkCreateImage with modifier {mod:#x}: VkResult {r}")
    ireq = vk.vkGetImageMemoryRequirements(d.device, img[0])
    alias = vk.vkCreateBuffer(
        d.device,
        vk.VkBufferCreateInfo(
            size=ireq.size, usage=vk.VK_BUFFER_USAGE_TRANSFER_SRC_BIT, sharingMode=vk.VK_SHARING_MODE_EXCLUSIVE
        ),
        None,
    )
    breq = vk.vkGetBufferMemoryRequirements(d.device, alias)
    bits = ireq.memoryTypeBits & breq.memoryTypeBits
    if not bits:
        raise RuntimeError(
            f"no memory type serves both the image ({ireq.memoryTypeBits:#x}) and a buffer ({breq.memoryTypeBits:#x})"
        )
    mt = d._mem_type(bits, 0)
    mem = vk.vkAllocateMemory(
        d.device, vk.VkMemoryAllocateInfo(allocationSize=max(ireq.size, breq.size), memoryTypeIndex=mt), None
    )
    vk.vkBindImageMemory(d.device, img[0], mem, 0)
    vk.vkBindBufferMemory(d.device, alias, mem, 0)
    up = d.buffer(lin.size, vk.VK_BUFFER_USAGE_TRANSFER_SRC_BIT)
    up.mapped[0 : lin.size] = lin.tobytes()
    down = d.buffer(ireq.size, vk.VK_BUFFER_USAGE_TRANSFER_DST_BIT)
    cb = d.begin_once()

    def barrier(old: int, new: int) -> None:
        full_barrier(
            cb,
            [
                vk.VkImageMemoryBarrier(
                    srcAccessMask=vk.VK_ACCESS_MEMORY_WRITE_BIT,
                    dstAccessMask=vk.VK_ACCESS_MEMORY_READ_BIT | vk.VK_ACCESS_MEMORY_WRITE_BIT,
                    oldLayout=old,
                    newLayout=new,
                    srcQueueFamilyIndex=vk.VK_QUEUE_FAMILY_IGNORED,
                    dstQueueFamilyIndex=vk.VK_QUEUE_FAMILY_IGNORED,
                    image=img[0],
                    subresourceRange=COLOR_RANGE,
                )
            ],
        )

    barrier(vk.VK_IMAGE_LAYOUT_UNDEFINED, vk.VK_IMAGE_LAYOUT_GENERAL)
    vk.vkCmdCopyBufferToImage(
        cb,
        up.handle,
        img[0],
        vk.VK_IMAGE_LAYOUT_GENERAL,
        1,
        [
            vk.VkBufferImageCopy(
                bufferOffset=0,
                bufferRowLength=0,
                bufferImageHeight=0,
                imageSubresource=COLOR_LAYERS,
                imageOffset=vk.VkOffset3D(0, 0, 0),
                imageExtent=vk.VkExtent3D(W, H, 1),
            )
        ],
    )
    barrier(vk.VK_IMAGE_LAYOUT_GENERAL, vk.VK_IMAGE_LAYOUT_GENERAL)
    vk.vkCmdCopyBuffer(cb, alias, down.handle, 1, [vk.VkBufferCopy(srcOffset=0, dstOffset=0, size=ireq.size)])
    d.end_once(cb)
    raw = bytes(down.mapped[0 : ireq.size])
    d.free_buffer(up)
    d.free_buffer(down)
    vk.vkDestroyBuffer(d.device, alias, None)
    vk.vkDestroyImage(d.device, img[0], None)
    vk.vkFreeMemory(d.device, mem, None)
    return raw


def check(raw: bytes, lin: np.ndarray, bhl: int) -> dict[str, float]:
    """Fraction of the pattern's bytes found where each GOB kind puts them.  A block is never
    taller than the image needs (the hardware clamps it: seen here with a 64-row image, whose
    2^4/2^5-GOB modifiers were laid out with 2^3-GOB blocks)."""
    gobs_tall = -(-H // 8)
    bhl = min(bhl, max(0, (gobs_tall - 1).bit_length()))
    buf = np.frombuffer(raw, np.uint8)
    out = {}
    for gob in blocklinear.GOB_KINDS:
        offs = blocklinear._offsets(W * 4, H, bhl, gob)
        if offs.max() >= buf.size:
            out[gob] = 0.0
            continue
        out[gob] = float((buf[offs] == lin).mean())
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out")
    ap.add_argument("--linear", action="store_true", help="check the mechanism on a linear image only")
    a = ap.parse_args()
    lin = pattern()
    if a.linear:
        d = Device()
        raw = np.frombuffer(raw_bytes(d, None, lin), np.uint8)
        print("linear image read back raw:", bool((raw[: lin.size] == lin.reshape(-1)).all()))
        d.close()
        return 0
    d = Device(device_extensions=["VK_EXT_image_drm_format_modifier"])
    results = {"device": d.name, "modifiers": []}
    for mod in modifiers(d):
        info = decode(mod)
        if info["vendor"] != 3 or not info["block_linear"] or info["compression"]:
            continue
        try:
            info["match"] = check(raw_bytes(d, mod, lin), lin, info["block_height_log2"])
        except Exception as e:  # one modifier the driver lists but will not make: say so, go on
            info["error"] = f"{type(e).__name__}: {e}"
        results["modifiers"].append(info)
        print(json.dumps(info), flush=True)
    d.close()
    if a.out:
        Path(a.out).write_text(json.dumps(results, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
