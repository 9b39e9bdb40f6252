"""Replay one validated submission into Vulkan and run it to completion.

Order of work: (1) snapshot every memory range the submission binds (vertex, index, uniform:
the "uniform snapshot" — the guest may rewrite them as soon as it has submitted) and every
texture it samples from pool memory (deswizzled) into one host-visible arena; (2) record the
commands; (3) submit and wait; (4) read back presented frames and report signalled fences.
"""

from __future__ import annotations

import hashlib
import logging
import zlib
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import vulkan as vk

from gpu_host import compute, events, present_image
from gpu_host import packets as P
from gpu_host.formats import TexFormat
from gpu_host.objects import Memory, Objects, Texture
from gpu_host.pipelines import Pipelines, cache_file
from gpu_host.spirv_reflect import POOL_SAMPLERS, POOL_TEXTURES
from gpu_host.validate import Plan, SubmissionError
from gpu_host.vkdevice import BUFFER_DEVICE_ADDRESS, COLOR_LAYERS, Buffer, Device, Image

from gpu_host.replay_images import (  # noqa: F401 (names other modules import from here)
    ALIGN,
    ARENA_USAGE,
    DEPTH_BYTES,
    DEPTH_FEATURES,
    DEPTH_USAGE,
    RENDER_FEATURES,
    RT_USAGE,
    SAMPLE_FEATURES,
    TEX_USAGE,
    ReplayImages,
)
from gpu_host.replay_commands import EMPTY_POOLS, CommandRecording  # noqa: F401 (EMPTY_POOLS: imported from here)
from gpu_host.replay_commands import barrier as _barrier
from gpu_host.replay_readback import ReplayReadback

log = logging.getLogger("gpu_host.replay")


@dataclass
class FrameOut:
    frame: int
    width: int
    height: int
    rgba: bytes
    sha256: str


@dataclass
class Result:
    seq: int
    fences: list[tuple[int, int]] = field(default_factory=list)
    frames: list[FrameOut] = field(default_factory=list)
    draws: int = 0
    skipped: int = 0  # draws skipped: their pipeline was still being made (policy skip)
    dropped: bool = False  # its rest was dropped (an EVENT_WAIT timed out): counted as dropped


def _up(n: int) -> int:
    return (n + ALIGN - 1) & ~(ALIGN - 1)


SETS_PER_POOL = 64


class PoolSets:
    """Descriptor sets for set 1 (the bindless pools), allocated afresh for each submission:
    every submission runs to completion before the next one is recorded, so resetting the
    descriptor pools at its start never frees a set the GPU still reads."""

    def __init__(self, dev: Device, layout: Any) -> None:
        self.dev, self.layout = dev, layout
        self.pools: list[Any] = []
        self.used = 0  # sets handed out this submission

    def reset(self) -> None:
        if self.used:
            for p in self.pools:
                vk.vkResetDescriptorPool(self.dev.device, p, 0)
        self.used = 0

    def allocate(self) -> Any:
        k, n = divmod(self.used, SETS_PER_POOL)
        if k == len(self.pools):
            self.pools.append(
                vk.vkCreateDescriptorPool(
                    self.dev.device,
                    vk.VkDescriptorPoolCreateInfo(
                        maxSets=SETS_PER_POOL,
                        poolSizeCount=2,
                        pPoolSizes=[
                            vk.VkDescriptorPoolSize(
                                type=vk.VK_DESCRIPTOR_TYPE_SAMPLED_IMAGE, descriptorCount=POOL_TEXTURES * SETS_PER_POOL
                            ),
                            vk.VkDescriptorPoolSize(
                                type=vk.VK_DESCRIPTOR_TYPE_SAMPLER, descriptorCount=POOL_SAMPLERS * SETS_PER_POOL
                            ),
                        ],
                    ),
                    None,
                )
            )
        self.used += 1
        return vk.vkAllocateDescriptorSets(
            self.dev.device,
            vk.VkDescriptorSetAllocateInfo(descriptorPool=self.pools[k], descriptorSetCount=1, pSetLayouts=[self.layout]),
        )[0]

    def close(self) -> None:
        for p in self.pools:
            vk.vkDestroyDescriptorPool(self.dev.device, p, None)
        self.pools.clear()


class Replayer(ReplayImages, ReplayReadback):
    def __init__(
        self,
        dev: Device,
        objects: Objects,
        decode_compressed: str = "auto",
        pipeline_cache: str | None = None,
        pipeline_library: bool = True,
        avoid_formats: frozenset[str] = frozenset(),
        pipeline_threads: int = 0,
        not_ready: str = "wait",
    ) -> None:
        """``pipeline_cache``: the cache_dir under which the driver's compiled pipelines are kept
        (None: not kept); ``pipeline_library``: link pipelines from parts where the driver can;
        ``avoid_formats``: Vulkan format names treated as unsupported (gpu_host.avoid_formats);
        ``pipeline_threads``: workers making pipelines off the replay thread (0: none);
        ``not_ready``: a draw whose pipeline is still being made waits (``wait``) or is skipped
        and counted (``skip``; pipelines.py)."""
        if not_ready not in ("wait", "skip"):
            raise ValueError(f"gpu_host.pipeline_not_ready = {not_ready!r} is not wait or skip")
        self.skip_not_ready = not_ready == "skip"
        self.dev = dev
        self.avoid_formats = avoid_formats
        self.depth_formats: dict[str, TexFormat] = {}  # depth format name -> the format its images use
        self.render_formats: set[str] = set()  # colour formats checked renderable here
        self.objects = objects
        if decode_compressed not in ("auto", "always"):
            raise ValueError(f"gpu_host.decode_compressed = {decode_compressed!r} is not auto or always")
        self.decode_always = decode_compressed == "always"
        self.formats: dict[str, tuple[int, str]] = {}  # format name -> (Vulkan format, CPU decoder or "")
        self.pipes = Pipelines(
            dev, cache_file(dev, pipeline_cache) if pipeline_cache else None, pipeline_library, pipeline_threads
        )
        self.arena: Buffer | None = None
        self.readback: Buffer | None = None
        self.images: dict[int, tuple[Texture, Image]] = {}
        self.uploaded: dict[int, int] = {}  # texture id -> crc of the bytes last uploaded
        self.stale: set[int] = set()  # textures of flushed-write pools a DIRTY range touched
        self.texture_bytes_read = 0  # pool bytes read for textures (what DIRTY tracking saves)
        self.samplers: dict[tuple[bool, bool, int], Any] = {}
        self.cb = dev.command_buffer()
        self.dummy_ubo = dev.buffer(ALIGN, vk.VK_BUFFER_USAGE_UNIFORM_BUFFER_BIT)
        self.dummy_ubo.mapped[0:ALIGN] = bytes(ALIGN)
        self.dummy_img = dev.image(1, 1, vk.VK_FORMAT_R8G8B8A8_UNORM, TEX_USAGE)
        self.dummies: dict[str, Image] = {"2d": self.dummy_img, "other": self.dummy_img}
        self.pool_sets = PoolSets(dev, self.pipes.pool_layout)
        self.native: Any = None  # native_replay.NativeReplay, set by the Engine (gpu_host.native_replay)
        self.compute = compute.Compute(dev)  # compute programs' pipelines, banks, surface twins

    def reset(self, objects: Objects) -> None:
        """A new client session: drop its predecessor's images (pipelines stay cached)."""
        vk.vkDeviceWaitIdle(self.dev.device)
        for _, img in self.images.values():
            self.dev.free_image(img)
        self.images.clear()
        self.uploaded.clear()
        self.stale.clear()
        self.compute.reset()
        if objects is not self.objects:
            self.compute.forget(self.objects)
        self.objects = objects

    # -- resources -------------------------------------------------------------
    def _buffer(self, which: str, size: int, usage: int) -> Buffer:
        cur = getattr(self, which)
        if cur is None or cur.size < size:
            if cur is not None:
                self.dev.free_buffer(cur)
            n = 1 << max(16, (size - 1).bit_length())
            if which == "arena" and self.dev.buffer_device_address:  # storage buffers of dispatches (compute.py)
                usage |= BUFFER_DEVICE_ADDRESS | vk.VK_BUFFER_USAGE_TRANSFER_DST_BIT
            cur = self.dev.buffer(n, usage)
            setattr(self, which, cur)
        return cur

    # -- the submission --------------------------------------------------------
    def forget_uploads(self) -> None:
        """Re-read every texture at its next use (compared by CRC, re-uploaded if it changed):
        after a dropped submission, whose DIRTY ranges nobody applied."""
        self.stale.update(self.images)

    def texture_reads(self, plan: Plan) -> list[Texture]:
        """The sampled textures whose pool bytes this submission must read: all of them in
        pools the GPU process scans (compared with what was uploaded, by CRC), and in pools
        whose writes the client reports (DIRTY) only the ones not uploaded yet or written
        since.  Applies the plan's DIRTY ranges first."""
        for pool, off, size in plan.dirty:
            for tid, (t, _) in self.images.items():
                if t.pool == pool and t.offset < off + size and off < t.offset + t.byte_size:
                    self.stale.add(tid)
        flushed = self.objects.flushed_pools
        out = []
        for t in plan.uploads:
            cur = self.images.get(t.id)
            if t.pool in flushed and t.id not in self.stale and t.id in self.uploaded and cur is not None and cur[0] == t:
                continue
            out.append(t)
        return out

    def run(self, plan: Plan, mem: Memory, to_read: list[Texture] | None = None, native: Any = None) -> Result:
        """Replay ``plan`` reading pool bytes from ``mem`` (a ``Snapshot`` of the plan's ranges
        and of the textures in ``to_read``, default ``texture_reads(plan)``).  ``native``: a
        ``native_replay.NativeSubmission`` whose commands C records (``NativeReplay.record``)
        in place of ``_record``; everything else is this path's."""
        # 1. snapshot
        if to_read is None:
            to_read = self.texture_reads(plan)
        must_read = {t.id for t in to_read}
        texels: list[tuple[Texture, np.ndarray | None]] = []
        crcs: dict[int, int] = {}  # recorded as uploaded only once the submission ran
        size = sum(_up(r[2]) for r in plan.ranges)
        for t in plan.uploads:
            if t.id not in must_read:  # unchanged since its upload, as the client said
                texels.append((t, None))
                continue
            src = mem.read(t.pool, t.offset, t.byte_size)
            self.texture_bytes_read += len(src)
            crc = zlib.crc32(src)
            cur = self.images.get(t.id)
            if cur is not None and cur[0] == t and self.uploaded.get(t.id) == crc:
                texels.append((t, None))
                continue
            lin = (
                self._volume_texels(t, src)
                if t.volume
                else np.concatenate([self._layer_texels(t, src, k) for k in range(t.layers)])
                if t.layers > 1
                else self._layer_texels(t, src, 0)
            )
            texels.append((t, np.ascontiguousarray(lin)))
            crcs[t.id] = crc
            size += _up(lin.size)
        arena = self._buffer("arena", max(size, ALIGN), ARENA_USAGE)
        where: dict[tuple[int, int, int], int] = {}
        off = 0
        amap = arena.mapped
        for r in plan.ranges:
            amap[off : off + r[2]] = mem.read(*r)
            where[r] = off
            off += _up(r[2])
        tex_off: list[tuple[Texture, int, Image]] = []
        for t, lin in texels:
            img = self.image_for(t)
            if lin is not None:
                amap[off : off + lin.size] = lin.tobytes()
                tex_off.append((t, off, img))
                off += _up(lin.size)
        # 2. record
        frames = (
            native.frame_ids
            if native is not None
            else [c[2] if c[0] == P.OP_PRESENT else c[1] for c in plan.commands if c[0] in (P.OP_PRESENT, P.OP_WRITEBACK)]
        )
        rb_size = sum(self._readback_size(self.objects.textures[t]) for t in frames)
        rb = self._buffer("readback", max(rb_size, ALIGN), vk.VK_BUFFER_USAGE_TRANSFER_DST_BIT) if frames else None
        cb = self.cb
        vk.vkResetCommandBuffer(cb, 0)
        vk.vkBeginCommandBuffer(cb, vk.VkCommandBufferBeginInfo(flags=vk.VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT))
        for t, o, img in tex_off:
            vk.vkCmdCopyBufferToImage(
                cb,
                arena.handle,
                img.handle,
                vk.VK_IMAGE_LAYOUT_GENERAL,
                1,
                [
                    vk.VkBufferImageCopy(
                        bufferOffset=o,
                        bufferRowLength=0,
                        bufferImageHeight=0,
                        imageSubresource=COLOR_LAYERS
                        if t.layers == 1 or t.volume
                        else vk.VkImageSubresourceLayers(
                            aspectMask=vk.VK_IMAGE_ASPECT_COLOR_BIT, mipLevel=0, baseArrayLayer=0, layerCount=t.layers
                        ),
                        imageOffset=vk.VkOffset3D(0, 0, 0),
                        imageExtent=vk.VkExtent3D(t.width, t.height, t.layers if t.volume else 1),
                    )
                ],
            )
        _barrier(cb)
        try:
            if native is not None:
                result, reads = self.native.record(native, cb, arena, where, rb)
            else:
                result, reads = self._record(plan, cb, arena, where, rb)
        except SubmissionError:
            vk.vkEndCommandBuffer(cb)
            raise
        vk.vkEndCommandBuffer(cb)
        # 3. run
        self.dev.submit_wait(cb)
        self.uploaded.update(crcs)
        self.stale -= must_read
        # 4. write-backs (before the caller publishes fences: a guest waiting on one sees the
        #    bytes), then frames
        for frame, t, o in reads:
            if frame is None and type(t) is tuple and t[0] == "storage":  # a dispatch's storage buffer (compute.py)
                compute.write_back(self.objects, arena, where, t)
            elif frame is None and type(t) is tuple:  # EVENT_SIGNAL (gpu_host/events.py)
                events.apply_signal(self.objects.memory, t)
            elif frame is None:
                self._write_back(t, self._guest_texels(t, rb.mapped, o))
        for frame, t, o in reads:
            if frame is None:
                continue
            raw = bytes(rb.mapped[o : o + t.width * t.height * 4])
            if t.fmt.name == "BGRA8":
                a = np.frombuffer(raw, np.uint8).reshape(-1, 4)[:, [2, 1, 0, 3]]
                raw = a.tobytes()
            result.frames.append(FrameOut(frame, t.width, t.height, raw, hashlib.sha256(raw).hexdigest()))
        if plan.images:  # PRESENT_IMAGE: pixels from the snapshot, no Vulkan work (present_image.py)
            for c in plan.image_cmds:
                raw = present_image.rgba(c, mem.read(*present_image.key(c)))
                result.frames.append(FrameOut(c[1], c[4], c[5], raw, hashlib.sha256(raw).hexdigest()))
            result.frames.sort(key=lambda f: f.frame)  # one client numbers its frames in order
        return result

    def _record(self, plan: Plan, cb: Any, arena: Buffer, where: dict, rb: Buffer | None):
        """The submission's packets recorded into ``cb`` (replay_commands.py, by topic)."""
        return CommandRecording(self, plan, cb, arena, where, rb, Result(plan.seq)).run()

    # -- read-back: colour texels, or a depth target's depth and stencil aspects ---------------

    def _check_indices(
        self, seq: int, i: int, cmd: tuple, index: tuple, vertex: tuple, layout: tuple, amap: Any, where: dict
    ) -> None:
        """Indices are checked on the snapshot (the bytes the GPU will read), not on live memory."""
        if cmd[1] == 0:
            return
        isz = index[4]
        base = where[(index[1], index[2], index[3])] + cmd[3] * isz
        idx = np.frombuffer(amap, dtype=np.uint16 if isz == 2 else np.uint32, count=cmd[1], offset=base)
        lo, hi = int(idx.min()) + cmd[4], int(idx.max()) + cmd[4]
        stride, attrs = layout[1], layout[3]
        attr_end = max(a[2] + P.VERTEX_FORMATS[a[1]][1] for a in attrs)
        if lo < 0 or hi * stride + attr_end > vertex[3]:
            raise SubmissionError(
                f"submission {seq}: packet {i} DRAW_INDEXED: vertex indices {lo}..{hi} run "
                f"outside the {vertex[3]}-byte vertex buffer"
            )

    def _writes(self, arena: Buffer, where: dict, ubos: dict, texs: dict, program: Any) -> list:
        # All eight bindings every time: an unbound slot a shader reads gets a harmless dummy.
        writes = []
        for b in range(4):
            u = ubos.get(b)
            if u is None:
                info = vk.VkDescriptorBufferInfo(buffer=self.dummy_ubo.handle, offset=0, range=ALIGN)
            else:
                info = vk.VkDescriptorBufferInfo(buffer=arena.handle, offset=where[(u[2], u[3], u[4])], range=u[4])
            writes.append(
                vk.VkWriteDescriptorSet(
                    dstBinding=b, descriptorCount=1, descriptorType=vk.VK_DESCRIPTOR_TYPE_UNIFORM_BUFFER, pBufferInfo=[info]
                )
            )
        for s in range(4):
            t = texs.get(s)
            if t is None:
                kind = program.sampler_kinds.get(4 + s, "2d")
                if program.lookups.get(4 + s) in ("dref", "both") and kind not in ("other", "3d"):
                    # a depth view and a compare sampler whose op is NEVER: the lookup reads 0
                    # whatever the dummy holds (a plain sampler under Dref is undefined)
                    view, smp = self.dummy(kind, depth=True).view, self.sampler(False, False, 1)
                else:
                    view = self.dummy(kind).view
                    smp = self.sampler(False, False)
            else:
                sm = self.objects.samplers[t[1]]
                view, smp = self.image_for(t[0]).sample_view, self.sampler(sm.linear, sm.repeat, sm.compare)
            writes.append(
                vk.VkWriteDescriptorSet(
                    dstBinding=4 + s,
                    descriptorCount=1,
                    descriptorType=vk.VK_DESCRIPTOR_TYPE_COMBINED_IMAGE_SAMPLER,
                    pImageInfo=[vk.VkDescriptorImageInfo(sampler=smp, imageView=view, imageLayout=vk.VK_IMAGE_LAYOUT_GENERAL)],
                )
            )
        return writes

    def _pool_set(self, pools: tuple) -> Any:
        """Set 1 written from a POOLS packet's ids: every entry written (the shader's switch may
        name any of them); an empty one gets the 1x1 dummy image / a nearest clamped sampler."""
        ds = self.pool_sets.allocate()
        writes = compute.pool_writes(self, self.objects, ds, pools)
        vk.vkUpdateDescriptorSets(self.dev.device, len(writes), writes, 0, None)
        return ds

    def close(self) -> None:
        vk.vkDeviceWaitIdle(self.dev.device)
        for _, img in self.images.values():
            self.dev.free_image(img)
        self.images.clear()
        for b in (self.arena, self.readback, self.dummy_ubo):
            if b is not None:
                self.dev.free_buffer(b)
        for img in {id(i): i for i in self.dummies.values()}.values():
            self.dev.free_image(img)
        self.pool_sets.close()
        self.compute.forget(self.objects)
        self.compute.close()
        for s in self.samplers.values():
            vk.vkDestroySampler(self.dev.device, s, None)
        self.pipes.close()
