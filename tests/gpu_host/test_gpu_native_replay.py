"""Native replay (gpu_host/nxreplay.c through gpu_host/native_replay.py) against the Python replay.

The same submissions go through two in-process Engines on lavapipe, one with
``gpu_host.native_replay = on`` and one with ``off``: every presented frame's SHA-256, every
fence, every drop and its log line must be equal, and the submissions expected to take the C
path must have taken it (a submission with an op the C path does not replay must not).  The
frame tests that run through the GPU process (test_gpu_draws.py, test_gpu_state_cube.py,
test_gpu_hostile.py) check their pixels against numpy with the default setting (auto: native
where it can) — so the native path is also checked against an oracle that is not the Python
replay.  The C declarations of the Vulkan structures are checked against the `vulkan` binding's
(generated from the Khronos registry), field by field.
"""

from __future__ import annotations

import hashlib
import logging

import numpy as np
import pytest
import vulkan as vk

from cpu_host.gpu_client.memory import Pool
from cpu_host.gpu_client.shaders import GlslSource
from gpu_guest import COLOR_FS, COLOR_VS, TEX_FS, TEX_VS, rect_px, rect_uv_px, ubo
from gpu_packets import texture
from test_gpu_mrt import MRT_FS, MRT_VS, rect_z
from gpu_host import nxpkt
from gpu_host import packets as P
from gpu_host.engine import Engine
from gpu_host.objects import MappedPools
from gpu_host.vkdevice import Device

W = H = 32
VB, VB_UV, IB, UB, TEX = 0, 4096, 8192, 12288, 32768
BACK, BACK_SIZE = 36864, 8192  # pool 1's render targets' bytes (WRITEBACK)
VB_Z, UB_MRT = 20480, 24576  # MRT: a rectangle (vec3), two uniform blocks of four colours
VB_TRI, UB_HALF = 25088, 25344  # MSAA: a triangle with slanted edges, a colour of alpha 0.5
EVENT = BACK + 3 * BACK_SIZE + 8  # an NVN event (u32) in the hashed range, past every write-back


def test_vulkan_struct_layouts_match_the_binding():
    ffi, lib = nxpkt.lib()
    out = ffi.new("uint32_t[]", 128)
    got = list(ffi.unpack(out, lib.nx_vk_layout(out)))
    f = vk.ffi
    want = [
        f.sizeof("VkViewport"),
        f.sizeof("VkRect2D"),
        f.sizeof("VkClearAttachment"),
        f.offsetof("VkClearAttachment", "clearValue"),
        f.sizeof("VkClearRect"),
        f.offsetof("VkClearRect", "baseArrayLayer"),
        f.sizeof("VkMemoryBarrier"),
        f.offsetof("VkMemoryBarrier", "srcAccessMask"),
        f.sizeof("VkRenderingAttachmentInfo"),
        *(
            f.offsetof("VkRenderingAttachmentInfo", n)
            for n in ("imageView", "imageLayout", "resolveImageView", "loadOp", "storeOp", "clearValue")
        ),
        f.sizeof("VkRenderingInfo"),
        *(
            f.offsetof("VkRenderingInfo", n)
            for n in ("renderArea", "layerCount", "colorAttachmentCount", "pColorAttachments", "pStencilAttachment")
        ),
        f.sizeof("VkDescriptorBufferInfo"),
        f.sizeof("VkDescriptorImageInfo"),
        f.offsetof("VkDescriptorImageInfo", "imageLayout"),
        f.sizeof("VkWriteDescriptorSet"),
        *(f.offsetof("VkWriteDescriptorSet", n) for n in ("dstSet", "dstBinding", "descriptorType", "pImageInfo", "pBufferInfo")),
        f.sizeof("VkBufferImageCopy"),
        *(f.offsetof("VkBufferImageCopy", n) for n in ("imageSubresource", "imageOffset", "imageExtent")),
        f.sizeof("VkImageResolve"),
        *(f.offsetof("VkImageResolve", n) for n in ("srcOffset", "dstSubresource", "dstOffset", "extent")),
        vk.VK_STRUCTURE_TYPE_MEMORY_BARRIER,
        vk.VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET,
        vk.VK_STRUCTURE_TYPE_RENDERING_INFO,
        vk.VK_STRUCTURE_TYPE_RENDERING_ATTACHMENT_INFO,
        vk.VK_IMAGE_LAYOUT_GENERAL,
        vk.VK_ATTACHMENT_LOAD_OP_LOAD,
        vk.VK_ATTACHMENT_STORE_OP_STORE,
        vk.VK_IMAGE_ASPECT_COLOR_BIT,
        vk.VK_PIPELINE_STAGE_ALL_COMMANDS_BIT,
        vk.VK_ACCESS_MEMORY_READ_BIT,
        vk.VK_ACCESS_MEMORY_WRITE_BIT,
        vk.VK_DESCRIPTOR_TYPE_UNIFORM_BUFFER,
        vk.VK_DESCRIPTOR_TYPE_COMBINED_IMAGE_SAMPLER,
        vk.VK_PIPELINE_BIND_POINT_GRAPHICS,
        vk.VK_INDEX_TYPE_UINT16,
        vk.VK_INDEX_TYPE_UINT32,
        vk.VK_STENCIL_FACE_FRONT_AND_BACK,
        vk.VK_COMPARE_OP_LESS,
        vk.VK_COMPARE_OP_ALWAYS,
        vk.VK_IMAGE_ASPECT_DEPTH_BIT,
        vk.VK_IMAGE_ASPECT_STENCIL_BIT,
        vk.VK_STENCIL_FACE_FRONT_BIT,
        vk.VK_STENCIL_FACE_BACK_BIT,
    ]
    assert got == want


def fill(pool: Pool) -> None:
    pool.write(VB, rect_px(0, 0, 8, 8, W, H).tobytes())
    pool.write(VB_UV, rect_uv_px(0, 0, 16, 16, W, H).tobytes())
    pool.write(IB, np.array([0, 1, 2, 3, 4, 5, 1000], np.uint16).tobytes())
    for k in range(16):
        pool.write(UB + 256 * k, ubo(((k % 4) / 3, (k // 4) / 3, 0.5, 1), (2 * (k % 4) * 8 / W, 2 * (k // 4) * 8 / H)))
    rgba = np.zeros((8, 8, 4), np.uint8)
    rgba[..., 0] = np.arange(8)[None, :] * 32
    rgba[..., 1] = np.arange(8)[:, None] * 32
    rgba[..., 3] = 255
    pool.write(TEX, rgba.tobytes())
    pool.write(VB_Z, rect_z(4, 2, 24, 20, 0.5, W, H).tobytes())
    pool.write(VB_TRI, np.array([(-0.9, -0.8), (0.85, -0.3), (-0.2, 0.9)], np.float32).tobytes())
    pool.write(UB_HALF, ubo((1.0, 0.5, 0.25, 0.5)))
    for k, cols in enumerate(
        (
            ((1, 0, 0, 1), (0, 1, 0, 0.5), (0.5, 0.5, 1, 1), (0, 0, 0, 0)),
            ((0, 1, 1, 1), (0.25, 0.25, 0.25, 1), (1, 0, 1, 1), (0, 0, 0, 0)),
        )
    ):
        pool.write(UB_MRT + 256 * k, np.array(cols, np.float32).tobytes())


def submissions(features: frozenset = frozenset({"fillModeNonSolid", "depthBiasClamp"})) -> list[tuple[list[tuple], bool]]:
    """(packets, whether the C path replays them); ``features``: the device's raster features (line
    fill and a depth-bias clamp are C ops where the device has them, else the Python path names
    the missing one)."""
    color = [(P.OP_PROGRAM, 1), (P.OP_VERTEX_LAYOUT, 8, 0, [[0, 2, 0]]), (P.OP_VERTEX, 1, VB, 48)]
    tex = [(P.OP_PROGRAM, 2), (P.OP_VERTEX_LAYOUT, 16, 0, [[0, 2, 0], [1, 2, 8]]), (P.OP_VERTEX, 1, VB_UV, 96)]
    out = []
    # pipeline switches, texture binds, a uniform per draw
    s = [(P.OP_TARGET, 7), (P.OP_CLEAR, 0.1, 0.2, 0.3, 1.0)]
    for i in range(40):
        if i % 10 == 0:
            s += color if i % 20 == 0 else tex
        if i % 5 == 0:
            s.append((P.OP_TEXTURE, 0, 10, 1 + (i // 5) % 2))
        s += [(P.OP_UNIFORM, 0, 1, UB + 256 * (i % 16), 48), (P.OP_DRAW, 6, 1, 0, 0)]
    out.append((s + [(P.OP_PRESENT, 1, 7), (P.OP_SIGNAL, 3, 11)], True))
    # render to texture, sample it; indexed draws, viewport, scissor, instances, two PRESENTs
    s = [
        (P.OP_TARGET, 8),
        (P.OP_CLEAR, 1.0, 0.0, 0.0, 1.0),
        *color,
        (P.OP_UNIFORM, 0, 1, UB + 256 * 5, 48),
        (P.OP_INDEX, 1, IB, 12, 2),
        (P.OP_DRAW_INDEXED, 6, 2, 0, 0, 0),
        (P.OP_PRESENT, 2, 8),
        (P.OP_TARGET, 7),
        (P.OP_CLEAR, 0.0, 0.0, 0.0, 1.0),
        *tex,
        (P.OP_TEXTURE, 0, 8, 2),
        (P.OP_VIEWPORT, 4.0, 4.0, 24.0, 24.0),
        (P.OP_DRAW, 6, 1, 0, 0),
        (P.OP_SCISSOR, 0, 0, 12, 40),
        (P.OP_VIEWPORT, 0.0, 0.0, 32.0, 32.0),
        (P.OP_DRAW, 3, 1, 3, 0),
        (P.OP_PRESENT, 3, 7),
        (P.OP_SIGNAL, 3, 12),
    ]
    out.append((s, True))
    # a textured program with no texture bound (the slot's dummy), then one of the colour program
    out.append(
        (
            [
                (P.OP_TARGET, 7),
                (P.OP_CLEAR, 0.0, 1.0, 0.0, 1.0),
                *tex,
                (P.OP_DRAW, 6, 1, 0, 0),
                *color,
                (P.OP_DRAW, 6, 1, 0, 0),
                (P.OP_PRESENT, 4, 7),
            ],
            True,
        )
    )
    # an index value past the vertex buffer (checked on the snapshot): dropped by both
    out.append(
        ([(P.OP_TARGET, 7), *color, (P.OP_INDEX, 1, IB, 14, 2), (P.OP_DRAW_INDEXED, 7, 1, 0, 0, 0), (P.OP_PRESENT, 5, 7)], True)
    )
    # a handle that is not registered: refused natively, dropped by the Python path's validation
    out.append(([(P.OP_TARGET, 7), *color, (P.OP_TEXTURE, 1, 99, 1), (P.OP_DRAW, 6, 1, 0, 0)], False))
    # blending (the old BLEND packet), natively since the C path keys pipelines by blend state
    out.append(
        (
            [
                (P.OP_TARGET, 7),
                (P.OP_BLEND, True),
                *color,
                (P.OP_UNIFORM, 0, 1, UB, 48),
                (P.OP_DRAW, 6, 1, 0, 0),
                (P.OP_PRESENT, 6, 7),
            ],
            True,
        )
    )
    # depth and stencil: a colour + D24S8 target (cleared, tested, written), per-face stencil ops,
    # cull, blend states and constants changing between draws, depth bias; then a depth-only pass
    # into a D32F target that the next pass samples
    # the quads wind clockwise on the framebuffer: back faces under the default front face (CCW)
    stencil_front = (0, 0, 1, 7, 0, 255, 255)
    stencil_back = (0, 0, 2, 7, 0x5A, 255, 255)  # replace with ref 0x5A where drawn
    ds_on = (P.OP_DEPTH_STENCIL, True, True, 3, True, *stencil_front, *stencil_back)
    ds_eq = (P.OP_DEPTH_STENCIL, True, False, 2, True, *(0, 0, 0, 2, 0x5A, 255, 0), *(0, 0, 0, 2, 0x5A, 255, 0))
    blend_add = (P.OP_BLEND_STATE, 0, True, 10, 1, 0, 1, 1, 0, 15)  # constant colour + dst
    s = [
        (P.OP_DEPTH_TARGET, 7, 20),
        (P.OP_CLEAR, 0.0, 0.0, 0.2, 1.0),
        (P.OP_CLEAR_DEPTH_STENCIL, 0.5, 3, 3),
        *color,
        ds_on,
        (P.OP_RASTER, 1, 0, 0, True),
        (P.OP_DEPTH_BIAS, 0.25, 0.5, 0.0),
    ]
    for i, k in enumerate((0, 1, 4, 0, 1, 5)):  # draws 3 and 4 over 0 and 1, 5 elsewhere
        s += [(P.OP_UNIFORM, 0, 1, UB + 256 * k, 48), (P.OP_DRAW, 6, 1, 0, 0)]
        if i == 2:
            s += [ds_eq, blend_add, (P.OP_BLEND_CONSTANT, 0.25, 0.5, 0.0, 1.0), (P.OP_RASTER, 0, 1, 0, False)]
        if i == 4:
            s += [P.BLEND_OFF, blend_add, (P.OP_BLEND_CONSTANT, 0.0, 0.0, 0.75, 1.0)]
    s += [
        (P.OP_PRESENT, 7, 7),
        (P.OP_DEPTH_TARGET, P.EMPTY, 21),
        (P.OP_CLEAR_DEPTH_STENCIL, 1.0, 0, 3),
        *color,
        P.DS_DEFAULT,
        P.BLEND_OFF,
        (P.OP_DEPTH_STENCIL, True, True, 7, False, *P.DS_DEFAULT[5:]),
        (P.OP_UNIFORM, 0, 1, UB + 256 * 9, 48),
        (P.OP_DRAW, 6, 1, 0, 0),
        (P.OP_TARGET, 8),
        (P.OP_CLEAR, 0.0, 0.0, 0.0, 1.0),
        *tex,
        (P.OP_TEXTURE, 0, 21, 1),
        (P.OP_DRAW, 6, 1, 0, 0),
        (P.OP_PRESENT, 8, 8),
        (P.OP_SIGNAL, 4, 1),
    ]
    out.append((s, True))
    # line fill and a bias clamp (device features); a depth target of another size (dropped by the
    # Python path's validation, named there)
    out.append(
        (
            [(P.OP_TARGET, 7), *color, (P.OP_RASTER, 0, 0, 1, False), (P.OP_DRAW, 6, 1, 0, 0), (P.OP_PRESENT, 9, 7)],
            "fillModeNonSolid" in features,
        )
    )
    out.append(
        (
            [
                (P.OP_DEPTH_TARGET, 7, 20),
                *color,
                (P.OP_DEPTH_BIAS, 0.25, 0.5, 0.125),
                (P.OP_DRAW, 6, 1, 0, 0),
                (P.OP_PRESENT, 10, 7),
            ],
            "depthBiasClamp" in features,
        )
    )
    out.append(([(P.OP_DEPTH_TARGET, 7, 22), *color, (P.OP_DRAW, 6, 1, 0, 0)], False))
    # what a game that flushes a CPU-cached pool and reads its render target back sends: DIRTY
    # ahead of the commands, WRITEBACK of a block-linear and a pitch-linear target into the pool
    s = [(P.OP_DIRTY, 1, TEX, 256)]
    for rt, k in ((23, 3), (24, 6)):
        s += [
            (P.OP_TARGET, rt),
            (P.OP_CLEAR, 0.5, 0.25, 0.0, 1.0),
            *tex,
            (P.OP_TEXTURE, 0, 10, 2),
            (P.OP_DRAW, 6, 1, 0, 0),
            *color,
            (P.OP_UNIFORM, 0, 1, UB + 256 * k, 48),
            (P.OP_DRAW, 6, 1, 0, 0),
            (P.OP_WRITEBACK, rt),
        ]
    # (and two events signalled after the write-backs: written, then added to)
    out.append(
        (
            s
            + [
                (P.OP_EVENT_SIGNAL, 1, EVENT, 0, 0x1234),
                (P.OP_PRESENT, 11, 23),
                (P.OP_EVENT_SIGNAL, 1, EVENT, 1, 5),
                (P.OP_SIGNAL, 5, 2),
            ],
            True,
        )
    )
    # an event that is not 4-byte aligned: the Python path names it
    out.append(([(P.OP_EVENT_SIGNAL, 1, EVENT + 2, 0, 1)], False))
    # a wait already satisfied: the submission is split there, each part (the second with the state
    # carried across the wait) replayed in C
    gequal = P.EVENT_WAIT_MODES.index("gequal_wrap")
    out.append(
        (
            [
                (P.OP_TARGET, 7),
                (P.OP_CLEAR, 0.0, 0.25, 0.0, 1.0),
                *color,
                (P.OP_UNIFORM, 0, 1, UB + 256 * 2, 48),
                (P.OP_DRAW, 6, 1, 0, 0),
                (P.OP_EVENT_WAIT, 1, EVENT, gequal, 0x1239),
                (P.OP_UNIFORM, 0, 1, UB + 256 * 7, 48),
                (P.OP_DRAW, 6, 1, 0, 0),
                (P.OP_PRESENT, 15, 7),
            ],
            True,
        )
    )
    # MRT: three colour targets and a depth target, each cleared, per-target blend states (target 1
    # additive, target 2 its own write mask), two draws; then a gap in RENDER_TARGETS' list (the
    # Python path names it)
    mrt = [(P.OP_PROGRAM, 3), (P.OP_VERTEX_LAYOUT, 12, 0, [[0, 3, 0]]), (P.OP_VERTEX, 1, VB_Z, 72)]
    one, add = P.BLEND_FACTORS.index("one"), P.BLEND_OPS.index("add")
    s = [
        (P.OP_RENDER_TARGETS, (8, 7, 25), 20),
        (P.OP_CLEAR_TARGET, 0, 0.0, 0.0, 0.5, 1.0),
        (P.OP_CLEAR_TARGET, 1, 0.25, 0.0, 0.0, 1.0),
        (P.OP_CLEAR_TARGET, 2, 0.0, 0.75, 0.0, 0.0),
        (P.OP_CLEAR_DEPTH_STENCIL, 1.0, 0, 1),
        (P.OP_DEPTH_STENCIL, True, True, 1, False, *P.DS_DEFAULT[5:]),
        (P.OP_BLEND_STATE, 1, True, one, one, add, one, one, add, 15),
        (P.OP_BLEND_STATE, 2, False, one, 0, add, one, 0, add, 0b0001),
        *mrt,
        (P.OP_UNIFORM, 0, 1, UB_MRT, 64),
        (P.OP_DRAW, 6, 1, 0, 0),
        (P.OP_UNIFORM, 0, 1, UB_MRT + 256, 64),
        (P.OP_DRAW, 6, 1, 0, 0),
        (P.OP_PRESENT, 12, 8),
        (P.OP_PRESENT, 13, 7),
    ]
    out.append((s, True))
    out.append(([(P.OP_RENDER_TARGETS, (8, P.EMPTY, 7), P.EMPTY), *mrt, (P.OP_DRAW, 6, 1, 0, 0)], False))
    # MSAA: a 4x target (colour and depth), a triangle, alpha-to-coverage on for a second one,
    # resolved into a one-sample target; then a MULTISAMPLE count other than the target's and a
    # RESOLVE between formats (the Python path names them)
    tri = [(P.OP_PROGRAM, 1), (P.OP_VERTEX_LAYOUT, 8, 0, [[0, 2, 0]]), (P.OP_VERTEX, 1, VB_TRI, 24)]
    s = [
        (P.OP_DEPTH_TARGET, 26, 28),
        (P.OP_CLEAR, 0.0, 0.0, 0.0, 1.0),
        (P.OP_CLEAR_DEPTH_STENCIL, 1.0, 0, 1),
        (P.OP_MULTISAMPLE, 4, False),
        *tri,
        (P.OP_UNIFORM, 0, 1, UB + 256 * 3, 48),
        (P.OP_DRAW, 3, 1, 0, 0),
        (P.OP_MULTISAMPLE, 4, True),
        (P.OP_UNIFORM, 0, 1, UB_HALF, 48),
        (P.OP_DRAW, 3, 1, 0, 0),
        (P.OP_RESOLVE, 26, 27),
        (P.OP_PRESENT, 14, 27),
    ]
    out.append((s, True))
    out.append(([(P.OP_TARGET, 26), (P.OP_MULTISAMPLE, 2, False), *tri, (P.OP_DRAW, 3, 1, 0, 0)], False))
    out.append(([(P.OP_TARGET, 26), (P.OP_CLEAR, 0.0, 0.0, 0.0, 1.0), (P.OP_RESOLVE, 26, 25)], False))
    # depth targets written back (D32F; D24S8, its stencil aspect copied apart), a depth-only draw
    out.append(
        (
            [
                (P.OP_DEPTH_TARGET, P.EMPTY, 21),
                (P.OP_CLEAR_DEPTH_STENCIL, 0.5, 0, 1),
                (P.OP_WRITEBACK, 21),
                (P.OP_DEPTH_TARGET, P.EMPTY, 29),
                (P.OP_CLEAR_DEPTH_STENCIL, 0.75, 0x3C, 3),
                *color,
                (P.OP_DEPTH_STENCIL, True, True, 7, True, *(0, 0, 2, 7, 0x81, 255, 255) * 2),
                (P.OP_UNIFORM, 0, 1, UB + 256 * 5, 48),
                (P.OP_DRAW, 6, 1, 0, 0),
                (P.OP_WRITEBACK, 29),
            ],
            True,
        )
    )
    return out


def run_engine(mode: str, monkeypatch) -> tuple[list, tuple[int, int, int] | None]:
    monkeypatch.setenv("NXRECOMP_GPU_HOST_NATIVE_REPLAY", mode)
    pool = Pool(1, 1 << 16)
    fill(pool)
    mp = MappedPools()
    mp.add(1, pool.fd, pool.size)
    dev = Device()
    eng = Engine(dev, mp, keep_frames=16)
    try:
        assert (eng.native is not None) == (mode == "on")
        for pid, (vs, fs) in ((1, (COLOR_VS, COLOR_FS)), (2, (TEX_VS, TEX_FS)), (3, (MRT_VS, MRT_FS))):
            eng.register_program(pid, *GlslSource(vs, fs).spirv())
        for tid in (7, 8):
            eng.register_texture(**texture(tid, W, H, render_target=True))
        eng.register_texture(**texture(10, 8, 8, pool=1, offset=TEX, pitch=32))
        for tid, fmt, w in ((20, "D24S8", W), (21, "D32F", W), (22, "D32F", W // 2)):
            eng.register_texture(**texture(tid, w, H, fmt, render_target=True))
        eng.register_texture(**texture(21, W, H, "D32F", pool=1, offset=BACK + 2 * BACK_SIZE, pitch=W * 4, render_target=True))
        eng.register_texture(
            **texture(29, W, H, "D24S8", pool=1, offset=BACK + 2 * BACK_SIZE + 4096, pitch=W * 4, render_target=True)
        )
        eng.register_texture(**texture(25, W, H, "RG8", render_target=True))
        for tid, fmt, n in ((26, "RGBA8", 4), (27, "RGBA8", 1), (28, "D32F", 4)):
            eng.register_texture(**texture(tid, W, H, fmt, render_target=True, samples=n))
        for tid, off, bl in ((23, BACK, True), (24, BACK + BACK_SIZE, False)):  # written back into pool 1
            eng.register_texture(
                **texture(
                    tid, W, H, pool=1, offset=off, pitch=W * 4 + 64, render_target=True, block_linear=bl, block_height_log2=1
                )
            )
        eng.register_sampler(1, False, False)
        eng.register_sampler(2, True, True)
        out = []
        for seq, (packets, native) in enumerate(submissions(frozenset(dev.raster_features)), 1):
            before = eng.native.native if eng.native else 0
            res = eng.submit(seq, [list(p) for p in packets])
            if eng.native:
                assert (eng.native.native > before) == native, (seq, packets[:3])
            back = hashlib.sha256(pool.mm[BACK : BACK + 3 * BACK_SIZE + 64]).hexdigest()  # what WRITEBACK wrote
            event = int.from_bytes(pool.mm[EVENT : EVENT + 4], "little")
            out.append(None if res is None else (res.draws, res.fences, [(f.frame, f.sha256) for f in res.frames], back, event))
        counts = (eng.native.native, eng.native.fallback, eng.native.refused) if eng.native else None
        return out, counts
    finally:
        eng.close()
        dev.close()
        pool.close()


def test_native_frames_equal_python(monkeypatch, caplog):
    caplog.set_level(logging.WARNING, logger="gpu_host.engine")
    py, _ = run_engine("off", monkeypatch)
    py_log = [r.getMessage() for r in caplog.records if r.name == "gpu_host.engine"]
    caplog.clear()
    nat, counts = run_engine("on", monkeypatch)
    nat_log = [r.getMessage() for r in caplog.records if r.name == "gpu_host.engine"]
    assert nat == py
    assert nat_log == py_log and len(py_log) == 7, py_log  # the same drops, named the same way
    assert "vertex indices 0..1000 run outside the 48-byte vertex buffer" in py_log[0]
    assert "field texture 99 is not a registered texture" in py_log[1]
    assert "field depth = 22 is 16x32, the colour target 7 32x32" in py_log[2]
    assert "RENDER_TARGETS: field colors[1] is empty but a later colour target is set" in py_log[4]
    assert "EVENT_SIGNAL: field offset" in py_log[3] and "is not 4-byte aligned" in py_log[3]
    assert "MULTISAMPLE's samples = 2 but target 26 has 4 sample(s)" in py_log[5]
    assert "RESOLVE: field dst = 25 has format RG8, src = 26 RGBA8" in py_log[6]
    n_feat = sum(f in device_raster_features() for f in ("fillModeNonSolid", "depthBiasClamp"))
    assert counts == (12 + n_feat, 8 - n_feat, 1)  # the split submission: refused whole, its two parts in C
    frames = [f for r in py if r for f in r[2]]
    assert len(frames) == 14 and len({sha for _, sha in frames}) == 14  # every frame differs: nothing trivial
    zeros = hashlib.sha256(bytes(3 * BACK_SIZE + 64)).hexdigest()
    assert zeros != py[-9][3] != py[-1][3]  # each write-back changed the pool's bytes
    assert py[-9][4] == 0x1234 + 5  # the events: written, then added to


def device_raster_features() -> set[str]:
    dev = Device()
    try:
        return set(dev.raster_features)
    finally:
        dev.close()


def test_setting_is_checked(monkeypatch):
    from gpu_host.native_replay import NativeReplay

    with pytest.raises(ValueError, match="native_replay = 'sometimes'"):
        NativeReplay.create(None, "sometimes")
