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
from vulkan._vulkan import lib as _vklib   # direct entry points for the per-draw calls

from gpu_host import blocklinear, texdecode
from gpu_host import packets as P
from gpu_host.formats import TexFormat
from gpu_host.objects import Memory, ObjectError, Objects, Texture
from gpu_host.pipelines import Pipelines, cache_file
from gpu_host.spirv_reflect import POOL_SAMPLERS, POOL_TEXTURES
from gpu_host.validate import Plan, SubmissionError
from gpu_host.vkdevice import COLOR_LAYERS, Buffer, Device, Image

log = logging.getLogger("gpu_host.replay")
ALIGN = 256
ARENA_USAGE = (vk.VK_BUFFER_USAGE_VERTEX_BUFFER_BIT | vk.VK_BUFFER_USAGE_INDEX_BUFFER_BIT
               | vk.VK_BUFFER_USAGE_UNIFORM_BUFFER_BIT | vk.VK_BUFFER_USAGE_TRANSFER_SRC_BIT)
RT_USAGE = (vk.VK_IMAGE_USAGE_COLOR_ATTACHMENT_BIT | vk.VK_IMAGE_USAGE_SAMPLED_BIT
            | vk.VK_IMAGE_USAGE_TRANSFER_SRC_BIT | vk.VK_IMAGE_USAGE_TRANSFER_DST_BIT)
TEX_USAGE = vk.VK_IMAGE_USAGE_SAMPLED_BIT | vk.VK_IMAGE_USAGE_TRANSFER_DST_BIT


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


def _up(n: int) -> int:
    return (n + ALIGN - 1) & ~(ALIGN - 1)


FORMAT_FEATURE_TRANSFER_DST = 0x4000   # VK_FORMAT_FEATURE_TRANSFER_DST_BIT (1.1 core); the binding lacks the name
SAMPLE_FEATURES = vk.VK_FORMAT_FEATURE_SAMPLED_IMAGE_BIT | FORMAT_FEATURE_TRANSFER_DST
EMPTY_POOLS = ((P.EMPTY,) * POOL_TEXTURES, (P.EMPTY,) * POOL_SAMPLERS)
SETS_PER_POOL = 64


class PoolSets:
    """Descriptor sets for set 1 (the bindless pools), allocated afresh for each submission:
    every submission runs to completion before the next one is recorded, so resetting the
    descriptor pools at its start never frees a set the GPU still reads."""

    def __init__(self, dev: Device, layout: Any) -> None:
        self.dev, self.layout = dev, layout
        self.pools: list[Any] = []
        self.used = 0          # sets handed out this submission

    def reset(self) -> None:
        if self.used:
            for p in self.pools:
                vk.vkResetDescriptorPool(self.dev.device, p, 0)
        self.used = 0

    def allocate(self) -> Any:
        k, n = divmod(self.used, SETS_PER_POOL)
        if k == len(self.pools):
            self.pools.append(vk.vkCreateDescriptorPool(self.dev.device, vk.VkDescriptorPoolCreateInfo(
                maxSets=SETS_PER_POOL, poolSizeCount=2, pPoolSizes=[
                    vk.VkDescriptorPoolSize(type=vk.VK_DESCRIPTOR_TYPE_SAMPLED_IMAGE,
                                            descriptorCount=POOL_TEXTURES * SETS_PER_POOL),
                    vk.VkDescriptorPoolSize(type=vk.VK_DESCRIPTOR_TYPE_SAMPLER,
                                            descriptorCount=POOL_SAMPLERS * SETS_PER_POOL)]), None))
        self.used += 1
        return vk.vkAllocateDescriptorSets(self.dev.device, vk.VkDescriptorSetAllocateInfo(
            descriptorPool=self.pools[k], descriptorSetCount=1, pSetLayouts=[self.layout]))[0]

    def close(self) -> None:
        for p in self.pools:
            vk.vkDestroyDescriptorPool(self.dev.device, p, None)
        self.pools.clear()


class Replayer:
    def __init__(self, dev: Device, objects: Objects, decode_compressed: str = "auto",
                 pipeline_cache: str | None = None, pipeline_library: bool = True) -> None:
        """``pipeline_cache``: the cache_dir under which the driver's compiled pipelines are kept
        (None: not kept); ``pipeline_library``: link pipelines from parts where the driver can."""
        self.dev = dev
        self.objects = objects
        if decode_compressed not in ("auto", "always"):
            raise ValueError(f"gpu_host.decode_compressed = {decode_compressed!r} is not auto or always")
        self.decode_always = decode_compressed == "always"
        self.formats: dict[str, tuple[int, str]] = {}   # format name -> (Vulkan format, CPU decoder or "")
        self.pipes = Pipelines(dev, cache_file(dev, pipeline_cache) if pipeline_cache else None, pipeline_library)
        self.arena: Buffer | None = None
        self.readback: Buffer | None = None
        self.images: dict[int, tuple[Texture, Image]] = {}
        self.uploaded: dict[int, int] = {}      # texture id -> crc of the bytes last uploaded
        self.stale: set[int] = set()            # textures of flushed-write pools a DIRTY range touched
        self.texture_bytes_read = 0             # pool bytes read for textures (what DIRTY tracking saves)
        self.samplers: dict[tuple[bool, bool], Any] = {}
        self.cb = dev.command_buffer()
        self.dummy_ubo = dev.buffer(ALIGN, vk.VK_BUFFER_USAGE_UNIFORM_BUFFER_BIT)
        self.dummy_ubo.mapped[0:ALIGN] = bytes(ALIGN)
        self.dummy_img = dev.image(1, 1, vk.VK_FORMAT_R8G8B8A8_UNORM, TEX_USAGE)
        self.pool_sets = PoolSets(dev, self.pipes.pool_layout)

    def reset(self, objects: Objects) -> None:
        """A new client session: drop its predecessor's images (pipelines stay cached)."""
        vk.vkDeviceWaitIdle(self.dev.device)
        for _, img in self.images.values():
            self.dev.free_image(img)
        self.images.clear()
        self.uploaded.clear()
        self.stale.clear()
        self.objects = objects

    # -- resources -------------------------------------------------------------
    def _buffer(self, which: str, size: int, usage: int) -> Buffer:
        cur = getattr(self, which)
        if cur is None or cur.size < size:
            if cur is not None:
                self.dev.free_buffer(cur)
            n = 1 << max(16, (size - 1).bit_length())
            cur = self.dev.buffer(n, usage)
            setattr(self, which, cur)
        return cur

    def upload_format(self, fmt: TexFormat) -> tuple[int, str]:
        """(Vulkan format of the image, CPU decoder to run on upload or "") for ``fmt`` on this
        device: native where the device samples it, else decoded to RGBA8; a format with neither
        raises ObjectError."""
        got = self.formats.get(fmt.name)
        if got is None:
            native = getattr(vk, fmt.vk_name)
            feature = ("textureCompressionBC" if fmt.name.startswith("BC")
                       else "textureCompressionASTC_LDR" if fmt.name.startswith("ASTC") else None)
            ok = ((feature is None or feature in self.dev.compression)
                  and self.dev.format_supported(native, SAMPLE_FEATURES))
            if fmt.decoder and (self.decode_always or not ok):
                got = (vk.VK_FORMAT_R8G8B8A8_UNORM, fmt.decoder)
            elif ok:
                got = (native, "")
            else:
                raise ObjectError(f"format {fmt.name}: device {self.dev.name} cannot sample {fmt.vk_name} "
                                  "and there is no CPU decoder for it")
            log.info("format %s: %s", fmt.name, f"decoded on upload ({got[1]})" if got[1] else "native")
            self.formats[fmt.name] = got
        return got

    def image_for(self, t: Texture) -> Image:
        cur = self.images.get(t.id)
        if cur is not None and cur[0] == t:
            return cur[1]
        if cur is not None:
            self.dev.free_image(cur[1])
            self.uploaded.pop(t.id, None)
        img = self.dev.image(t.width, t.height, self.upload_format(t.fmt)[0], RT_USAGE if t.render_target else TEX_USAGE)
        self.images[t.id] = (t, img)
        return img

    def sampler(self, linear: bool, repeat: bool) -> Any:
        key = (linear, repeat)
        s = self.samplers.get(key)
        if s is None:
            f = vk.VK_FILTER_LINEAR if linear else vk.VK_FILTER_NEAREST
            a = vk.VK_SAMPLER_ADDRESS_MODE_REPEAT if repeat else vk.VK_SAMPLER_ADDRESS_MODE_CLAMP_TO_EDGE
            s = vk.vkCreateSampler(self.dev.device, vk.VkSamplerCreateInfo(
                magFilter=f, minFilter=f, mipmapMode=vk.VK_SAMPLER_MIPMAP_MODE_NEAREST,
                addressModeU=a, addressModeV=a, addressModeW=a, maxLod=0.0), None)
            self.samplers[key] = s
        return s

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
            if (t.pool in flushed and t.id not in self.stale and t.id in self.uploaded
                    and cur is not None and cur[0] == t):
                continue
            out.append(t)
        return out

    def run(self, plan: Plan, mem: Memory, to_read: list[Texture] | None = None) -> Result:
        """Replay ``plan`` reading pool bytes from ``mem`` (a ``Snapshot`` of the plan's ranges
        and of the textures in ``to_read``, default ``texture_reads(plan)``)."""
        # 1. snapshot
        if to_read is None:
            to_read = self.texture_reads(plan)
        must_read = {t.id for t in to_read}
        texels: list[tuple[Texture, np.ndarray | None]] = []
        crcs: dict[int, int] = {}     # recorded as uploaded only once the submission ran
        size = sum(_up(r[2]) for r in plan.ranges)
        for t in plan.uploads:
            if t.id not in must_read:         # unchanged since its upload, as the client said
                texels.append((t, None))
                continue
            src = mem.read(t.pool, t.offset, t.byte_size)
            self.texture_bytes_read += len(src)
            crc = zlib.crc32(src)
            cur = self.images.get(t.id)
            if cur is not None and cur[0] == t and self.uploaded.get(t.id) == crc:
                texels.append((t, None))
                continue
            wb = t.row_bytes
            if t.block_linear:
                lin = blocklinear.deswizzle(src, wb, t.rows, t.block_height_log2, t.gob)
            else:
                rows = np.frombuffer(src, np.uint8, count=t.byte_size)
                lin = np.lib.stride_tricks.as_strided(rows, (t.rows, wb), (t.pitch, 1))
            decoder = self.upload_format(t.fmt)[1]
            if decoder:     # the device lacks the format: RGBA8 decoded here
                lin, _ = texdecode.decode(decoder, np.ascontiguousarray(lin), t.width, t.height,
                                          t.fmt.block_w, t.fmt.block_h)
            texels.append((t, np.ascontiguousarray(lin)))
            crcs[t.id] = crc
            size += _up(lin.size)
        arena = self._buffer("arena", max(size, ALIGN), ARENA_USAGE)
        where: dict[tuple[int, int, int], int] = {}
        off = 0
        amap = arena.mapped
        for r in plan.ranges:
            amap[off:off + r[2]] = mem.read(*r)
            where[r] = off
            off += _up(r[2])
        tex_off: list[tuple[Texture, int, Image]] = []
        for t, lin in texels:
            img = self.image_for(t)
            if lin is not None:
                amap[off:off + lin.size] = lin.tobytes()
                tex_off.append((t, off, img))
                off += _up(lin.size)
        # 2. record
        frames = [c[2] if c[0] == P.OP_PRESENT else c[1] for c in plan.commands
                  if c[0] in (P.OP_PRESENT, P.OP_WRITEBACK)]
        rb_size = sum(self.objects.textures[t].width * self.objects.textures[t].height * 4 for t in frames)
        rb = self._buffer("readback", max(rb_size, ALIGN), vk.VK_BUFFER_USAGE_TRANSFER_DST_BIT) if frames else None
        cb = self.cb
        vk.vkResetCommandBuffer(cb, 0)
        vk.vkBeginCommandBuffer(cb, vk.VkCommandBufferBeginInfo(flags=vk.VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT))
        for t, o, img in tex_off:
            vk.vkCmdCopyBufferToImage(cb, arena.handle, img.handle, vk.VK_IMAGE_LAYOUT_GENERAL, 1, [vk.VkBufferImageCopy(
                bufferOffset=o, bufferRowLength=0, bufferImageHeight=0, imageSubresource=COLOR_LAYERS,
                imageOffset=vk.VkOffset3D(0, 0, 0), imageExtent=vk.VkExtent3D(t.width, t.height, 1))])
        _barrier(cb)
        try:
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
            if frame is None:
                self._write_back(t, rb.mapped[o:o + t.width * t.height * 4])
        for frame, t, o in reads:
            if frame is None:
                continue
            raw = bytes(rb.mapped[o:o + t.width * t.height * 4])
            if t.fmt.name == "BGRA8":
                a = np.frombuffer(raw, np.uint8).reshape(-1, 4)[:, [2, 1, 0, 3]]
                raw = a.tobytes()
            result.frames.append(FrameOut(frame, t.width, t.height, raw, hashlib.sha256(raw).hexdigest()))
        return result

    def _record(self, plan: Plan, cb: Any, arena: Buffer, where: dict, rb: Buffer | None):
        objs = self.objects
        res = Result(plan.seq)
        reads: list[tuple[int, Texture, int]] = []
        rb_off = 0
        target: tuple[Texture, Image] | None = None
        rendering = False
        program = layout = None
        blend = False
        pipe_dirty = True
        vertex = index = None
        ubos: dict[int, tuple] = {}
        texs: dict[int, tuple[Texture, int]] = {}
        desc_dirty = True
        viewport = None
        bound_pipe = None
        amap = arena.mapped
        push_cache: dict[tuple, list] = {}   # descriptor writes by binding state, this submission
        pools = EMPTY_POOLS                  # the last POOLS packet's (texture ids, sampler ids)
        pools_dirty = True
        pool_sets: dict[tuple, Any] = {}     # set 1 by pool contents, this submission
        self.pool_sets.reset()               # the previous submission has finished (submit_wait)

        def begin() -> None:
            nonlocal rendering
            if rendering:
                return
            t, img = target
            att = vk.VkRenderingAttachmentInfo(
                imageView=img.view, imageLayout=vk.VK_IMAGE_LAYOUT_GENERAL,
                resolveMode=vk.VK_RESOLVE_MODE_NONE, loadOp=vk.VK_ATTACHMENT_LOAD_OP_LOAD,
                storeOp=vk.VK_ATTACHMENT_STORE_OP_STORE)
            area = vk.VkRect2D(offset=vk.VkOffset2D(0, 0), extent=vk.VkExtent2D(t.width, t.height))
            vk.vkCmdBeginRendering(cb, vk.VkRenderingInfo(renderArea=area, layerCount=1,
                                                          colorAttachmentCount=1, pColorAttachments=[att]))
            vp = viewport or (0.0, 0.0, float(t.width), float(t.height))
            vk.vkCmdSetViewport(cb, 0, 1, [vk.VkViewport(x=vp[0], y=vp[1], width=vp[2], height=vp[3],
                                                         minDepth=0.0, maxDepth=1.0)])
            vk.vkCmdSetScissor(cb, 0, 1, [area])
            rendering = True

        def end() -> None:
            nonlocal rendering
            if rendering:
                vk.vkCmdEndRendering(cb)
                _barrier(cb)
                rendering = False

        for i, cmd in enumerate(plan.commands):
            op = cmd[0]
            if op == P.OP_TARGET:
                end()
                t = objs.textures[cmd[1]]
                target = (t, self.image_for(t))
                pipe_dirty = True
                viewport = None
            elif op == P.OP_CLEAR:
                begin()
                t = target[0]
                vk.vkCmdClearAttachments(cb, 1, [vk.VkClearAttachment(
                    aspectMask=vk.VK_IMAGE_ASPECT_COLOR_BIT, colorAttachment=0,
                    clearValue=vk.VkClearValue(color=vk.VkClearColorValue(float32=list(cmd[1:5]))))],
                    1, [vk.VkClearRect(rect=vk.VkRect2D(offset=vk.VkOffset2D(0, 0),
                                                       extent=vk.VkExtent2D(t.width, t.height)),
                                       baseArrayLayer=0, layerCount=1)])
            elif op == P.OP_PROGRAM:
                program = objs.programs[cmd[1]]
                pipe_dirty = True
            elif op == P.OP_VERTEX_LAYOUT:
                layout = cmd
                pipe_dirty = True
            elif op == P.OP_BLEND:
                blend = cmd[1]
                pipe_dirty = True
            elif op == P.OP_VERTEX:
                vertex = cmd
                vk.vkCmdBindVertexBuffers(cb, 0, 1, [arena.handle], [where[(cmd[1], cmd[2], cmd[3])]])
            elif op == P.OP_INDEX:
                index = cmd
                vk.vkCmdBindIndexBuffer(cb, arena.handle, where[(cmd[1], cmd[2], cmd[3])],
                                        vk.VK_INDEX_TYPE_UINT16 if cmd[4] == 2 else vk.VK_INDEX_TYPE_UINT32)
            elif op == P.OP_UNIFORM:
                ubos[cmd[1]] = cmd
                desc_dirty = True
            elif op == P.OP_TEXTURE:
                texs[cmd[1]] = (objs.textures[cmd[2]], cmd[3])
                desc_dirty = True
            elif op == P.OP_POOLS:
                if cmd[1:] != pools:
                    pools = cmd[1:]
                    pools_dirty = True
            elif op == P.OP_VIEWPORT:
                viewport = cmd[1:5]
                if rendering:
                    vk.vkCmdSetViewport(cb, 0, 1, [vk.VkViewport(x=cmd[1], y=cmd[2], width=cmd[3], height=cmd[4],
                                                                 minDepth=0.0, maxDepth=1.0)])
            elif op in (P.OP_DRAW, P.OP_DRAW_INDEXED):
                begin()
                if pipe_dirty:
                    p = self.pipes.get(program, layout, target[1].vk_format, blend)
                    if p is not bound_pipe:
                        vk.vkCmdBindPipeline(cb, vk.VK_PIPELINE_BIND_POINT_GRAPHICS, p)
                        bound_pipe = p
                    pipe_dirty = False
                if desc_dirty:
                    key = (tuple((b, where[u[2:5]], u[4]) for b, u in sorted(ubos.items())),
                           tuple((b, t[0].id, t[1]) for b, t in sorted(texs.items())))
                    writes = push_cache.get(key)
                    if writes is None:
                        writes = push_cache[key] = self._writes(arena, where, ubos, texs)
                    self.dev.push_descriptor(cb, vk.VK_PIPELINE_BIND_POINT_GRAPHICS, self.pipes.layout, 0,
                                             len(writes), writes)
                    desc_dirty = False
                if program.pools and pools_dirty:
                    ds = pool_sets.get(pools)
                    if ds is None:
                        ds = pool_sets[pools] = self._pool_set(pools)
                    vk.vkCmdBindDescriptorSets(cb, vk.VK_PIPELINE_BIND_POINT_GRAPHICS, self.pipes.layout, 1, 1,
                                               [ds], 0, None)
                    pools_dirty = False
                if op == P.OP_DRAW:
                    _vklib.vkCmdDraw(cb, cmd[1], cmd[2], cmd[3], cmd[4])
                else:
                    try:
                        self._check_indices(plan.seq, i, cmd, index, vertex, layout, amap, where)
                    except SubmissionError:
                        end()       # the command buffer must not end inside rendering
                        raise
                    _vklib.vkCmdDrawIndexed(cb, cmd[1], cmd[2], cmd[3], cmd[4], cmd[5])
                res.draws += 1
            elif op == P.OP_SIGNAL:
                res.fences.append((cmd[1], cmd[2]))
            elif op in (P.OP_PRESENT, P.OP_WRITEBACK):
                end()
                t = objs.textures[cmd[2] if op == P.OP_PRESENT else cmd[1]]
                img = self.image_for(t)
                _barrier(cb)
                vk.vkCmdCopyImageToBuffer(cb, img.handle, vk.VK_IMAGE_LAYOUT_GENERAL, rb.handle, 1, [vk.VkBufferImageCopy(
                    bufferOffset=rb_off, bufferRowLength=0, bufferImageHeight=0, imageSubresource=COLOR_LAYERS,
                    imageOffset=vk.VkOffset3D(0, 0, 0), imageExtent=vk.VkExtent3D(t.width, t.height, 1))])
                reads.append((cmd[1] if op == P.OP_PRESENT else None, t, rb_off))
                rb_off += t.width * t.height * 4
                _barrier(cb)
        end()
        return res, reads

    def _write_back(self, t: Texture, texels: Any) -> None:
        """A render target's texels (bytes in its own format) into its pool range, in its
        layout: block-linear (swizzled, padding included) or pitch-linear rows."""
        mem = self.objects.memory
        if not hasattr(mem, "write"):     # a recording being replayed: nothing to write to
            return
        lin = np.frombuffer(texels, np.uint8).reshape(t.height, t.width * 4)
        if t.block_linear:
            mem.write(t.pool, t.offset, blocklinear.swizzle(lin, t.block_height_log2, t.gob))
        else:
            for y in range(t.height):      # rows only: the bytes between rows are the guest's
                mem.write(t.pool, t.offset + y * t.pitch, lin[y].tobytes())

    def _check_indices(self, seq: int, i: int, cmd: tuple, index: tuple, vertex: tuple, layout: tuple,
                       amap: Any, where: dict) -> None:
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
            raise SubmissionError(f"submission {seq}: packet {i} DRAW_INDEXED: vertex indices {lo}..{hi} run "
                                  f"outside the {vertex[3]}-byte vertex buffer")

    def _writes(self, arena: Buffer, where: dict, ubos: dict, texs: dict) -> list:
        # All eight bindings every time: an unbound slot a shader reads gets a harmless dummy.
        writes = []
        for b in range(4):
            u = ubos.get(b)
            if u is None:
                info = vk.VkDescriptorBufferInfo(buffer=self.dummy_ubo.handle, offset=0, range=ALIGN)
            else:
                info = vk.VkDescriptorBufferInfo(buffer=arena.handle, offset=where[(u[2], u[3], u[4])], range=u[4])
            writes.append(vk.VkWriteDescriptorSet(dstBinding=b, descriptorCount=1,
                                                  descriptorType=vk.VK_DESCRIPTOR_TYPE_UNIFORM_BUFFER,
                                                  pBufferInfo=[info]))
        for s in range(4):
            t = texs.get(s)
            if t is None:
                view, smp = self.dummy_img.view, self.sampler(False, False)
            else:
                sm = self.objects.samplers[t[1]]
                view, smp = self.image_for(t[0]).view, self.sampler(sm.linear, sm.repeat)
            writes.append(vk.VkWriteDescriptorSet(
                dstBinding=4 + s, descriptorCount=1, descriptorType=vk.VK_DESCRIPTOR_TYPE_COMBINED_IMAGE_SAMPLER,
                pImageInfo=[vk.VkDescriptorImageInfo(sampler=smp, imageView=view, imageLayout=vk.VK_IMAGE_LAYOUT_GENERAL)]))
        return writes

    def _pool_set(self, pools: tuple) -> Any:
        """Set 1 written from a POOLS packet's ids: every entry written (the shader's switch may
        name any of them); an empty one gets the 1x1 dummy image / a nearest clamped sampler."""
        ds = self.pool_sets.allocate()
        infos = []
        for tid in pools[0]:
            view = self.dummy_img.view if tid == P.EMPTY else self.image_for(self.objects.textures[tid]).view
            infos.append(vk.VkDescriptorImageInfo(imageView=view, imageLayout=vk.VK_IMAGE_LAYOUT_GENERAL))
        smps = []
        for sid in pools[1]:
            sm = None if sid == P.EMPTY else self.objects.samplers[sid]
            smps.append(vk.VkDescriptorImageInfo(
                sampler=self.sampler(False, False) if sm is None else self.sampler(sm.linear, sm.repeat)))
        vk.vkUpdateDescriptorSets(self.dev.device, 2, [
            vk.VkWriteDescriptorSet(dstSet=ds, dstBinding=0, descriptorCount=POOL_TEXTURES,
                                    descriptorType=vk.VK_DESCRIPTOR_TYPE_SAMPLED_IMAGE, pImageInfo=infos),
            vk.VkWriteDescriptorSet(dstSet=ds, dstBinding=1, descriptorCount=POOL_SAMPLERS,
                                    descriptorType=vk.VK_DESCRIPTOR_TYPE_SAMPLER, pImageInfo=smps)], 0, None)
        return ds

    def close(self) -> None:
        vk.vkDeviceWaitIdle(self.dev.device)
        for _, img in self.images.values():
            self.dev.free_image(img)
        self.images.clear()
        for b in (self.arena, self.readback, self.dummy_ubo):
            if b is not None:
                self.dev.free_buffer(b)
        self.dev.free_image(self.dummy_img)
        self.pool_sets.close()
        for s in self.samplers.values():
            vk.vkDestroySampler(self.dev.device, s, None)
        self.pipes.close()


def _barrier(cb: Any) -> None:
    """Full memory barrier: simple, and correct for render-to-texture, uploads and readback."""
    vk.vkCmdPipelineBarrier(cb, vk.VK_PIPELINE_STAGE_ALL_COMMANDS_BIT, vk.VK_PIPELINE_STAGE_ALL_COMMANDS_BIT, 0,
                            1, [vk.VkMemoryBarrier(srcAccessMask=vk.VK_ACCESS_MEMORY_WRITE_BIT,
                                                   dstAccessMask=vk.VK_ACCESS_MEMORY_READ_BIT | vk.VK_ACCESS_MEMORY_WRITE_BIT)],
                            0, None, 0, None)
