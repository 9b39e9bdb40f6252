"""The Python replay's command recording: one validated submission's packets (``Plan.commands``)
recorded into a Vulkan command buffer, by topic — render targets and rendering, clears and
resolves, pipeline and dynamic state, bindings, draws, and outputs (presents, write-backs,
fences, events).  ``CommandRecording`` holds what the packets bound so far in this command
buffer; ``replay.Replayer._record`` makes one per submission and runs it.  The native replay
(``native_replay.py``) records the same submissions in C; tests/gpu_host/test_gpu_native_replay.py
checks the two give the same frames.

Packets are checked by validate.py before they get here; what is checked here is what only the
device can say (its limits and features), each refusal a ``SubmissionError`` naming the packet,
op and field."""

from __future__ import annotations

from typing import Any

import vulkan as vk
from vulkan._vulkan import lib as _vklib  # direct entry points for the per-draw calls

from gpu_host import compute
from gpu_host import packets as P
from gpu_host.spirv_reflect import POOL_SAMPLERS, POOL_TEXTURES
from gpu_host.validate import Plan, SubmissionError
from gpu_host.vkdevice import full_barrier as barrier

EMPTY_POOLS = ((P.EMPTY,) * POOL_TEXTURES, (P.EMPTY,) * POOL_SAMPLERS)
FACE_FRONT, FACE_BACK = vk.VK_STENCIL_FACE_FRONT_BIT, vk.VK_STENCIL_FACE_BACK_BIT


class CommandRecording:
    """One submission's packets recorded into command buffer ``cb`` (see the module's text).
    ``rp``: the Replayer (objects, device, images, pipelines, descriptor helpers, read-back);
    ``where``: each snapshotted memory range's offset in ``arena``; ``rb``: the read-back buffer."""

    def __init__(self, rp: Any, plan: Plan, cb: Any, arena: Any, where: dict, rb: Any, res: Any) -> None:
        self.rp, self.plan, self.cb, self.arena, self.where, self.rb = rp, plan, cb, arena, where, rb
        self.objs, self.dev = rp.objects, rp.dev
        self.res = res
        self.reads: list[tuple] = []
        self.rb_off = 0
        self.colors: list[tuple] = []  # colour targets (Texture, Image), attachment 0 first
        self.depth: tuple | None = None  # depth (and stencil) target
        self.rendering = False
        self.program = self.layout = None
        self.blends: dict[int, tuple] = {}  # BLEND_STATE by colour target index (absent: blending off)
        self.pipe_dirty = True
        self.vertex = self.index = None
        self.ubos: dict[int, tuple] = {}
        self.texs: dict[int, tuple] = {}
        self.desc_dirty = True
        self.viewport = None
        self.viewports: dict[int, tuple] = {}  # shader-tex: VIEWPORT_INDEXED's x, y, w, h by index (1..)
        self.scissor: tuple | None = None  # SCISSOR's x, y, w, h; None: the whole target
        self.ds, self.raster, self.bias, self.constants = P.DS_DEFAULT, P.RASTER_DEFAULT, (0.0, 0.0, 0.0), (0.0, 0.0, 0.0, 0.0)
        self.dyn = DynamicState()  # dynamic state as last set in this command buffer
        self.dyn_dirty = True  # a state packet changed something since the last draw
        self.bound_pipe = None
        self.amap = arena.mapped
        self.push_cache: dict[tuple, list] = {}  # descriptor writes by binding state, this submission
        self.pools = EMPTY_POOLS  # the last POOLS packet's (texture ids, sampler ids)
        self.a2c = False  # MULTISAMPLE's alpha-to-coverage
        self.pools_dirty = True
        self.pool_sets: dict[tuple, Any] = {}  # set 1 by pool contents, this submission
        rp.pool_sets.reset()  # the previous submission has finished (submit_wait)

    def run(self) -> tuple[Any, list]:
        handlers = HANDLERS
        for i, cmd in enumerate(self.plan.commands):
            h = handlers.get(cmd[0])
            if h is not None:
                h(self, i, cmd)
        self.end()
        return self.res, self.reads

    # -- render targets and rendering ------------------------------------------------------
    def size(self) -> tuple[int, int]:
        t = (self.colors[0] if self.colors else self.depth)[0]
        return t.width, t.height

    def layers(self) -> int:
        """The bound targets' layer count (gfx-layers: layered colour targets are bound with all
        their layers, one count for all and no depth target: validate.py)."""
        return self.colors[0][0].layers if self.colors else 1

    def set_scissor(self) -> None:
        w, h = self.size()
        scissor = self.scissor
        if scissor is None:
            x0, y0, x1, y1 = 0, 0, w, h
        else:  # clamped to the target: the render area bounds what may be drawn
            x0, y0 = min(scissor[0], w), min(scissor[1], h)
            x1, y1 = min(scissor[0] + scissor[2], w), min(scissor[1] + scissor[3], h)
        n = self.dev.viewports  # shader-tex: the one scissor for every viewport
        vk.vkCmdSetScissor(self.cb, 0, n, [vk.VkRect2D(offset=vk.VkOffset2D(x0, y0), extent=vk.VkExtent2D(x1 - x0, y1 - y0))] * n)

    def set_viewports(self) -> None:
        """Viewport 0 (VIEWPORT's, else the whole target) and, where the device has several
        (shader-tex: a geometry stage's ViewportIndex), viewports 1.. (VIEWPORT_INDEXED's, else
        the whole target); a target resets them all."""
        w, h = self.size()
        full = (0.0, 0.0, float(w), float(h))
        vps = [self.viewport or full] + [self.viewports.get(k, full) for k in range(1, self.dev.viewports)]
        vk.vkCmdSetViewport(
            self.cb,
            0,
            len(vps),
            [vk.VkViewport(x=v[0], y=v[1], width=v[2], height=v[3], minDepth=0.0, maxDepth=1.0) for v in vps],
        )

    def begin(self) -> None:
        if self.rendering:
            return
        w, h = self.size()
        atts = [
            vk.VkRenderingAttachmentInfo(
                imageView=c[1].view,
                imageLayout=vk.VK_IMAGE_LAYOUT_GENERAL,
                resolveMode=vk.VK_RESOLVE_MODE_NONE,
                loadOp=vk.VK_ATTACHMENT_LOAD_OP_LOAD,
                storeOp=vk.VK_ATTACHMENT_STORE_OP_STORE,
            )
            for c in self.colors
        ]
        datt = satt = None
        if self.depth is not None:
            datt = vk.VkRenderingAttachmentInfo(
                imageView=self.depth[1].view,
                imageLayout=vk.VK_IMAGE_LAYOUT_GENERAL,
                resolveMode=vk.VK_RESOLVE_MODE_NONE,
                loadOp=vk.VK_ATTACHMENT_LOAD_OP_LOAD,
                storeOp=vk.VK_ATTACHMENT_STORE_OP_STORE,
            )
            if self.depth[1].aspect & vk.VK_IMAGE_ASPECT_STENCIL_BIT:
                satt = datt
        area = vk.VkRect2D(offset=vk.VkOffset2D(0, 0), extent=vk.VkExtent2D(w, h))
        vk.vkCmdBeginRendering(
            self.cb,
            vk.VkRenderingInfo(
                renderArea=area,
                layerCount=self.layers(),
                colorAttachmentCount=len(atts),
                pColorAttachments=atts or None,
                pDepthAttachment=datt,
                pStencilAttachment=satt,
            ),
        )
        self.set_viewports()
        self.set_scissor()
        self.rendering = True

    def end(self) -> None:
        if self.rendering:
            vk.vkCmdEndRendering(self.cb)
            barrier(self.cb)
            self.rendering = False

    def targets(self, i: int, cmd: tuple) -> None:
        self.end()
        op, objs = cmd[0], self.objs
        if op == P.OP_TARGET:
            ts, d = [cmd[1]], P.EMPTY
        elif op == P.OP_DEPTH_TARGET:
            ts, d = [cmd[1]], cmd[2]
        else:
            ts, d = list(cmd[1]), cmd[2]
            limit = self.dev.limits.maxColorAttachments
            n = sum(tid != P.EMPTY for tid in ts)
            if n > limit:
                raise SubmissionError(
                    f"submission {self.plan.seq}: packet {i} RENDER_TARGETS: field colors names "
                    f"{n} colour targets; {self.dev.name} has maxColorAttachments {limit}"
                )
        image_for = self.rp.image_for
        self.colors = [(objs.textures[tid], image_for(objs.textures[tid])) for tid in ts if tid != P.EMPTY]
        self.depth = None if d == P.EMPTY else (objs.textures[d], image_for(objs.textures[d]))
        self.pipe_dirty = True
        self.viewport = None
        self.viewports = {}

    # -- clears and resolves ---------------------------------------------------------------
    def clear(self, i: int, cmd: tuple) -> None:
        self.begin()
        w, h = self.size()
        k, rgba = (0, cmd[1:5]) if cmd[0] == P.OP_CLEAR else (cmd[1], cmd[2:6])
        vk.vkCmdClearAttachments(
            self.cb,
            1,
            [
                vk.VkClearAttachment(
                    aspectMask=vk.VK_IMAGE_ASPECT_COLOR_BIT,
                    colorAttachment=k,
                    clearValue=vk.VkClearValue(color=vk.VkClearColorValue(float32=list(rgba))),
                )
            ],
            1,
            [whole_rect(w, h, self.layers())],
        )

    def clear_depth_stencil(self, i: int, cmd: tuple) -> None:
        self.begin()
        w, h = self.size()
        aspects = (
            (vk.VK_IMAGE_ASPECT_DEPTH_BIT if cmd[3] & 1 else 0) | (vk.VK_IMAGE_ASPECT_STENCIL_BIT if cmd[3] & 2 else 0)
        ) & self.depth[1].aspect
        if aspects:  # the stencil of a format without one: nothing to clear
            vk.vkCmdClearAttachments(
                self.cb,
                1,
                [
                    vk.VkClearAttachment(
                        aspectMask=aspects,
                        colorAttachment=0,
                        clearValue=vk.VkClearValue(depthStencil=vk.VkClearDepthStencilValue(depth=cmd[1], stencil=cmd[2])),
                    )
                ],
                1,
                [whole_rect(w, h)],
            )

    def resolve(self, i: int, cmd: tuple) -> None:
        self.end()
        cb = self.cb
        src, dst = self.objs.textures[cmd[1]], self.objs.textures[cmd[2]]
        simg, dimg = self.rp.image_for(src), self.rp.image_for(dst)
        barrier(cb)
        layers = vk.VkImageSubresourceLayers(aspectMask=vk.VK_IMAGE_ASPECT_COLOR_BIT, mipLevel=0, baseArrayLayer=0, layerCount=1)
        vk.vkCmdResolveImage(
            cb,
            simg.handle,
            vk.VK_IMAGE_LAYOUT_GENERAL,
            dimg.handle,
            vk.VK_IMAGE_LAYOUT_GENERAL,
            1,
            [
                vk.VkImageResolve(
                    srcSubresource=layers,
                    srcOffset=vk.VkOffset3D(0, 0, 0),
                    dstSubresource=layers,
                    dstOffset=vk.VkOffset3D(0, 0, 0),
                    extent=vk.VkExtent3D(src.width, src.height, 1),
                )
            ],
        )
        barrier(cb)

    # -- pipeline and dynamic state --------------------------------------------------------
    def program_(self, i: int, cmd: tuple) -> None:
        prev = self.program
        self.program = program = self.objs.programs[cmd[1]]
        self.pipe_dirty = True
        if prev is None or prev.sampler_kinds != program.sampler_kinds or prev.lookups != program.lookups:
            self.desc_dirty = True  # unbound slots get a dummy of the kind the program samples

    def vertex_layout(self, i: int, cmd: tuple) -> None:
        self.layout = cmd
        self.pipe_dirty = True

    def blend(self, i: int, cmd: tuple) -> None:
        self.blends[0] = P.BLEND_OVER if cmd[1] else P.BLEND_OFF
        self.pipe_dirty = True

    def blend_state(self, i: int, cmd: tuple) -> None:
        if cmd != self.blends.get(cmd[1], P.BLEND_OFF):
            self.blends[cmd[1]] = cmd
            self.pipe_dirty = True

    def depth_stencil(self, i: int, cmd: tuple) -> None:
        if cmd != self.ds:
            self.ds = cmd
            self.dyn_dirty = True

    def raster_(self, i: int, cmd: tuple) -> None:
        if cmd[3] == 1 and "fillModeNonSolid" not in self.dev.raster_features:
            raise SubmissionError(
                f"submission {self.plan.seq}: packet {i} RASTER: field polygon_mode = 1 "
                f"(line) needs fillModeNonSolid, which {self.dev.name} lacks"
            )
        if cmd[3] != self.raster[3]:
            self.pipe_dirty = True
        if cmd != self.raster:
            self.raster = cmd
            self.dyn_dirty = True

    def depth_bias(self, i: int, cmd: tuple) -> None:
        if cmd[3] != 0.0 and "depthBiasClamp" not in self.dev.raster_features:
            raise SubmissionError(
                f"submission {self.plan.seq}: packet {i} DEPTH_BIAS: field clamp = {cmd[3]} "
                f"needs depthBiasClamp, which {self.dev.name} lacks"
            )
        self.bias = cmd[1:4]
        self.dyn_dirty = True

    def blend_constant(self, i: int, cmd: tuple) -> None:
        self.constants = cmd[1:5]
        self.dyn_dirty = True

    def scissor_(self, i: int, cmd: tuple) -> None:
        self.scissor = cmd[1:5]
        if self.rendering:
            self.set_scissor()

    def multisample(self, i: int, cmd: tuple) -> None:
        # the count was checked against the targets at each draw (validate.py); the pipeline
        # takes its count from the targets, alpha-to-coverage from here
        if cmd[2] != self.a2c:
            self.a2c = cmd[2]
            self.pipe_dirty = True

    def viewport_(self, i: int, cmd: tuple) -> None:
        self.viewport = cmd[1:5]
        if self.rendering:
            self.set_viewports()

    def viewport_indexed_(self, i: int, cmd: tuple) -> None:
        """VIEWPORT_INDEXED (shader-tex): viewport ``index`` (0 is VIEWPORT's) for the draws whose
        geometry stage writes ViewportIndex; an index at or beyond the device's viewports is kept
        and never set (no vertex reaches it: such vertices are not emitted, gfx_geometry.py)."""
        if cmd[1] == 0:
            self.viewport = cmd[2:6]
        else:
            self.viewports[cmd[1]] = cmd[2:6]
        if self.rendering:
            self.set_viewports()

    # -- bindings --------------------------------------------------------------------------
    def vertex_(self, i: int, cmd: tuple) -> None:
        self.vertex = cmd
        vk.vkCmdBindVertexBuffers(self.cb, 0, 1, [self.arena.handle], [self.where[(cmd[1], cmd[2], cmd[3])]])

    def index_(self, i: int, cmd: tuple) -> None:
        self.index = cmd
        vk.vkCmdBindIndexBuffer(
            self.cb,
            self.arena.handle,
            self.where[(cmd[1], cmd[2], cmd[3])],
            vk.VK_INDEX_TYPE_UINT16 if cmd[4] == 2 else vk.VK_INDEX_TYPE_UINT32,
        )

    def uniform(self, i: int, cmd: tuple) -> None:
        self.ubos[cmd[1]] = cmd
        self.desc_dirty = True

    def texture(self, i: int, cmd: tuple) -> None:
        self.texs[cmd[1]] = (self.objs.textures[cmd[2]], cmd[3])
        self.desc_dirty = True

    def pools_(self, i: int, cmd: tuple) -> None:
        if cmd[1:] != self.pools:
            self.pools = cmd[1:]
            self.pools_dirty = True

    # -- draws -----------------------------------------------------------------------------
    def draw(self, i: int, cmd: tuple) -> None:
        self.begin()
        if self.pipe_dirty and not self._bind_pipeline(i, cmd[0]):
            self.res.skipped += 1  # still being made (policy skip): this draw is skipped
            return
        cb = self.cb
        if self.dyn_dirty:
            self.dyn.set(cb, self.ds, self.raster, self.bias, self.constants)
            self.dyn_dirty = False
        if self.desc_dirty:
            self._push_descriptors()
        if self.program.pools and self.pools_dirty:
            dset = self.pool_sets.get(self.pools)
            if dset is None:
                dset = self.pool_sets[self.pools] = self.rp._pool_set(self.pools)
            vk.vkCmdBindDescriptorSets(cb, vk.VK_PIPELINE_BIND_POINT_GRAPHICS, self.rp.pipes.layout, 1, 1, [dset], 0, None)
            self.pools_dirty = False
        if cmd[0] == P.OP_DRAW:
            _vklib.vkCmdDraw(cb, cmd[1], cmd[2], cmd[3], cmd[4])
        else:
            try:
                self.rp._check_indices(self.plan.seq, i, cmd, self.index, self.vertex, self.layout, self.amap, self.where)
            except SubmissionError:
                self.end()  # the command buffer must not end inside rendering
                raise
            _vklib.vkCmdDrawIndexed(cb, cmd[1], cmd[2], cmd[3], cmd[4], cmd[5])
        self.res.draws += 1

    def _bind_pipeline(self, i: int, op: int) -> bool:
        """The pipeline of the state bound now, bound; False where it is still being made."""
        colors, depth, rp = self.colors, self.depth, self.rp
        dimg = depth[1] if depth else None
        # the targets' count (one for all: validate.py); alpha-to-coverage only where
        # multisampled, as OpenGL ignores it on a one-sample framebuffer
        samples = (colors[0] if colors else depth)[1].samples
        per = tuple(blend_for(self.blends, k) for k in range(len(colors)))
        if len(set(per)) > 1 and not self.dev.independent_blend:
            self.end()
            raise SubmissionError(
                f"submission {self.plan.seq}: packet {i} {P.OPS[op].name}: the colour "
                f"targets' BLEND_STATEs differ, which needs independentBlend; "
                f"{self.dev.name} lacks it"
            )
        p = (rp.pipes.ready if rp.skip_not_ready else rp.pipes.get)(
            self.program,
            self.layout,
            tuple(c[1].vk_format for c in colors),
            per,
            dimg.vk_format if dimg else 0,
            dimg.vk_format if dimg and dimg.aspect & vk.VK_IMAGE_ASPECT_STENCIL_BIT else 0,
            self.raster[3],
            samples,
            self.a2c and samples > 1,
            self.layers(),
        )
        if p is None:
            return False
        if p is not self.bound_pipe:
            vk.vkCmdBindPipeline(self.cb, vk.VK_PIPELINE_BIND_POINT_GRAPHICS, p)
            self.bound_pipe = p
        self.pipe_dirty = False
        return True

    def _push_descriptors(self) -> None:
        where, ubos, texs = self.where, self.ubos, self.texs
        key = (
            tuple((b, where[u[2:5]], u[4]) for b, u in sorted(ubos.items())),
            tuple((b, t[0].id, t[1]) for b, t in sorted(texs.items())),
            self.program.id,
        )
        writes = self.push_cache.get(key)
        if writes is None:
            writes = self.push_cache[key] = self.rp._writes(self.arena, where, ubos, texs, self.program)
        self.dev.push_descriptor(self.cb, vk.VK_PIPELINE_BIND_POINT_GRAPHICS, self.rp.pipes.layout, 0, len(writes), writes)
        self.desc_dirty = False

    # -- outputs ---------------------------------------------------------------------------
    def signal(self, i: int, cmd: tuple) -> None:
        self.res.fences.append((cmd[1], cmd[2]))

    def event_signal(self, i: int, cmd: tuple) -> None:  # applied after the run, in order with write-backs
        self.reads.append((None, cmd, -1))

    def copy_out(self, i: int, cmd: tuple) -> None:
        """PRESENT or WRITEBACK: the target's texels into the read-back buffer."""
        self.end()
        present = cmd[0] == P.OP_PRESENT
        t = self.objs.textures[cmd[2] if present else cmd[1]]
        img = self.rp.image_for(t)
        barrier(self.cb)
        self.rp._copy_out(self.cb, t, img, self.rb, self.rb_off)
        self.reads.append((cmd[1] if present else None, t, self.rb_off))
        self.rb_off += self.rp._readback_size(t)
        barrier(self.cb)


R = CommandRecording
HANDLERS = {
    P.OP_TARGET: R.targets,
    P.OP_DEPTH_TARGET: R.targets,
    P.OP_RENDER_TARGETS: R.targets,
    P.OP_CLEAR: R.clear,
    P.OP_CLEAR_TARGET: R.clear,
    P.OP_CLEAR_DEPTH_STENCIL: R.clear_depth_stencil,
    P.OP_PROGRAM: R.program_,
    P.OP_VERTEX_LAYOUT: R.vertex_layout,
    P.OP_BLEND: R.blend,
    P.OP_BLEND_STATE: R.blend_state,
    P.OP_DEPTH_STENCIL: R.depth_stencil,
    P.OP_RASTER: R.raster_,
    P.OP_DEPTH_BIAS: R.depth_bias,
    P.OP_BLEND_CONSTANT: R.blend_constant,
    P.OP_SCISSOR: R.scissor_,
    P.OP_MULTISAMPLE: R.multisample,
    P.OP_RESOLVE: R.resolve,
    P.OP_VERTEX: R.vertex_,
    P.OP_INDEX: R.index_,
    P.OP_UNIFORM: R.uniform,
    P.OP_TEXTURE: R.texture,
    P.OP_POOLS: R.pools_,
    P.OP_VIEWPORT: R.viewport_,
    P.OP_VIEWPORT_INDEXED: R.viewport_indexed_,
    P.OP_DRAW: R.draw,
    P.OP_DRAW_INDEXED: R.draw,
    P.OP_SIGNAL: R.signal,
    P.OP_EVENT_SIGNAL: R.event_signal,
    P.OP_PRESENT: R.copy_out,
    P.OP_WRITEBACK: R.copy_out,
}
del R
HANDLERS.update(compute.HANDLERS)  # COMPUTE_BUFFER, COMPUTE_CONST, COMPUTE_SURFACE, DISPATCH (compute.py)


def blend_for(blends: dict[int, tuple], k: int) -> tuple:
    """Colour target ``k``'s BLEND_STATE with its target field 0: the attachment's place in the
    pipeline says which target it is, so equal states compare (and key pipelines) equal."""
    b = blends.get(k, P.BLEND_OFF)
    return b if b[1] == 0 else (b[0], 0, *b[2:])


def whole_rect(w: int, h: int, layers: int = 1) -> Any:
    return vk.VkClearRect(
        rect=vk.VkRect2D(offset=vk.VkOffset2D(0, 0), extent=vk.VkExtent2D(w, h)), baseArrayLayer=0, layerCount=layers
    )


class DynamicState:
    """The pipelines' dynamic state (pipelines.DYNAMIC, less viewport and scissor) as set in one
    command buffer; ``set`` issues only the calls whose values changed (per draw, a game may
    re-send the same DEPTH_STENCIL or change only the cull mode)."""

    def __init__(self) -> None:
        self.depth: tuple | None = None
        self.faces: tuple | None = None
        self.raster: tuple | None = None
        self.bias: tuple | None = None
        self.constants: tuple | None = None

    def set(self, cb: Any, ds: tuple, raster: tuple, bias: tuple, constants: tuple) -> None:
        L = _vklib
        depth = ds[1:5]
        if depth != self.depth:
            if self.depth is None:
                L.vkCmdSetDepthBoundsTestEnable(cb, 0)
            L.vkCmdSetDepthTestEnable(cb, ds[1])
            L.vkCmdSetDepthWriteEnable(cb, ds[2])
            L.vkCmdSetDepthCompareOp(cb, ds[3])
            L.vkCmdSetStencilTestEnable(cb, ds[4])
            self.depth = depth
        faces = ds[5:19]
        if faces != self.faces:
            front, back = faces[:7], faces[7:]
            for mask, f in ((FACE_FRONT | FACE_BACK, front),) if front == back else ((FACE_FRONT, front), (FACE_BACK, back)):
                fail, depth_fail, pass_, func, ref, read_mask, write_mask = f
                L.vkCmdSetStencilOp(cb, mask, fail, pass_, depth_fail, func)  # Vulkan's order: fail, pass, depth-fail
                L.vkCmdSetStencilReference(cb, mask, ref)
                L.vkCmdSetStencilCompareMask(cb, mask, read_mask)
                L.vkCmdSetStencilWriteMask(cb, mask, write_mask)
            self.faces = faces
        if raster != self.raster:
            old = self.raster or (None,) * 5
            if raster[1] != old[1]:
                L.vkCmdSetCullMode(cb, raster[1])  # none/front/back/both = Vulkan's bits 0..3
            if raster[2] != old[2]:
                L.vkCmdSetFrontFace(cb, raster[2])
            if raster[4] != old[4]:
                L.vkCmdSetDepthBiasEnable(cb, raster[4])
            self.raster = raster
        if bias != self.bias:
            L.vkCmdSetDepthBias(cb, bias[0], bias[2], bias[1])  # Vulkan's order: constant, clamp, slope
            self.bias = bias
        if constants != self.constants:
            vk.vkCmdSetBlendConstants(cb, list(constants))
            self.constants = constants
