"""Compute dispatches in the GPU process (issue 31): the shader service's compute programs
(CUDA-style kernels of SM53/SM86 machine code translated to SPIR-V GLCompute) registered, their
pipelines made at registration (on the gRPC thread, never on the replay thread), and the packets
COMPUTE_BUFFER / COMPUTE_CONST / COMPUTE_SURFACE / DISPATCH checked (``compute_check.check``,
called by ``validate.plan``) and recorded (``HANDLERS``, merged into ``replay_commands.HANDLERS``).

The interface a translated kernel expects (shader_svc/README.md, "Surfaces";
tests/shader_svc/vk_compute.py runs the same modules): descriptor set 0 binding 0 is a storage
buffer holding *constant bank 0* (launch dimensions, the driver's words, kernel parameters);
global memory is reached through 64-bit buffer device addresses (SPIR-V
PhysicalStorageBuffer64) that the bank holds; set 1 binding 2 is the 2D surface pool, 8 storage
images of format R32ui; set 1 bindings 0 and 1 are the kernel texture and sampler pools (what
TEX.B and kin sample through a handle ``sampler << 20 | texture``), written from the POOLS packet
in force at the dispatch, the same packet and entries as for a draw's bindless pools.  The GPU process builds each dispatch's bank from the packets: zeros of
``bank_size`` bytes, every COMPUTE_CONST word, the DISPATCH's parameter bytes (a pool range,
snapshotted like a uniform block) at ``params_at``, then the device address of each storage
buffer of ``buffer_mask`` at its ``at``.  A storage buffer is a pool range in the submission's
snapshot arena (made with a device address), so a draw or a dispatch after it that binds the
same range reads what it wrote; ranges bound with ``write`` are written back into the pool after
the submission (before fences publish, in packet order with WRITEBACK), as WRITEBACK does.

A surface pool entry is a registered one-sample colour render target (GPU-owned, as WRITEBACK
and sampling see it) of a 4-byte texel format (RGBA8, BGRA8): the shader sees its rows as 32-bit
texels.  COMPUTE_SURFACE's slot k names entry k of the pool of the texture's kind: a one-layer
texture is entry k of the 2D pool (set 1 binding 2), a layered one (layers > 1, not a cube) entry
k of the 2D array pool (set 1 binding 5, shader_svc/lower/surface.py BINDINGS), a volume one
entry k of the 3D pool (binding 6), a ``one_dim`` one (one row) entry k of the 1D pool (binding
3) or, layered, of the 1D array pool (binding 4); the other pools' entry k is a dummy image of
their kind (every descriptor written: lavapipe reads unwritten ones).
A layer the kernel addresses past the texture's layers is outside the image: its stores do
nothing, its loads read 0 (the translation's bounds check against OpImageQuerySize).  The
dispatch works on an R32ui twin image (as many layers), copied from the texture before and back
after (vkCmdCopyImage between size-compatible formats, every layer; a 1D surface's twin is a 1D
image, which vkCmdCopyImage cannot pair with the texture's 2D one, so through a buffer:
vkCmdCopyImageToBuffer then vkCmdCopyBufferToImage), behind full barriers, so the draws, copies
and write-backs that follow see its writes.  A program declaring a surface pool binding of another
image type is refused at registration.

Sources of facts: the Vulkan 1.3 specification (vkCmdDispatch and maxComputeWorkGroupCount,
VkPhysicalDeviceVulkan12Features.bufferDeviceAddress, "Copying Data Between Images": size-
compatible formats; vkCmdCopyImage's valid usage: images of different VkImageType only where one
is 2D and the other 3D; "Copying Data Between Buffers and Images"), the SPIR-V 1.6 specification
(OpEntryPoint, OpExecutionMode LocalSize, DescriptorSet/Binding decorations); the bank layout is the shader service's (the CUDA driver's
layout it reads, shader_svc/sm86/cbank.py, shader_svc/sm53/cbank.py).
"""

from __future__ import annotations

import logging
import struct
from dataclasses import dataclass
from typing import Any

import vulkan as vk

from gpu_host import packets as P
from gpu_host.compute_spirv import MODEL_GLCOMPUTE, POOL_BINDINGS, image_kinds
from gpu_host.compute_spirv import scan as _scan
from gpu_host.objects import ObjectError, Objects
from gpu_host.spirv_reflect import POOL_SAMPLERS, POOL_TEXTURES
from gpu_host.validate import Plan, SubmissionError
from gpu_host.vkdevice import full_barrier
from nxrecomp.common import kernel_pools as KP

log = logging.getLogger("gpu_host.compute")
BANK_BINDING = KP.BANK  # constant bank 0: a storage buffer
# gpu-pools: every number below is nxrecomp/common/kernel_pools.py's, the table the shader service
# declares its kernels' bindings from.
# pool name -> ((set, binding), the (Dim, Arrayed, Sampled) of its storage images, what an error
# calls it): the surface pools
SURFACE_POOLS = {k: ((KP.POOL_SET, b), KP.IMAGE_TYPES[b], KP.pool_name(b)) for k, b in KP.SURFACE_BINDINGS.items()}
SURFACE_BINDING = SURFACE_POOLS["2d"][0]
SURFACE_PAIRS = frozenset(b for b, _, _ in SURFACE_POOLS.values())
# gfx-layers: the sampled-image pools of the view kinds other than 2D (2D array, 3D; gpu-pools: cube,
# cube array), entry k the POOLS packet's texture k where it has that view kind (a dummy of the kind
# elsewhere): view kind -> ((set, binding), the (Dim, Arrayed, Sampled) it declares).  The cube
# array pool is bound only where the device has imageCubeArray (``Compute.dim_pools``).
TEXTURE_DIM_POOLS = {k: ((KP.POOL_SET, b), KP.IMAGE_TYPES[b]) for k, b in KP.TEXTURE_BINDINGS.items() if k != "2d"}
BANK_ALIGN = 256  # offsets of banks in their buffer: >= any minStorageBufferOffsetAlignment
EMPTY = P.EMPTY
EMPTY_POOLS = ((EMPTY,) * POOL_TEXTURES, (EMPTY,) * POOL_SAMPLERS)  # no POOLS packet in force


@dataclass(frozen=True)
class ComputeProgram:
    id: int
    spirv: bytes
    local_size: tuple[int, int, int]
    surfaces: bool  # reads/writes a surface pool (set 1 bindings 2..6)
    pipeline: Any
    pools: bool = False  # samples the texture and sampler pools (set 1 bindings 0, 1)


def is_compute(code: bytes) -> bool:
    """Whether a module's (first) entry point is GLCompute: RegisterProgram with it in
    ``vertex_spirv`` and no fragment module registers a compute program."""
    try:
        return _scan(code, "module")[0] == MODEL_GLCOMPUTE
    except ObjectError:
        return False


class Compute:
    """The compute side of one Replayer: registered programs' pipelines, per-submission
    descriptor sets and banks, and the R32ui twins of surface textures."""

    def __init__(self, dev: Any) -> None:
        self.dev = dev
        d = dev.device
        self.dsl0 = dev.set_layout([(0, vk.VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, 1)], vk.VK_SHADER_STAGE_COMPUTE_BIT)
        # the texture pools of the other view kinds this device can bind: a CUBE_ARRAY view needs
        # the imageCubeArray feature (Vulkan 1.3, VkImageViewCreateInfo's valid usage), so without
        # it the cube array pool is absent and a program declaring it is refused at registration
        self.dim_pools = {
            k: v for k, v in TEXTURE_DIM_POOLS.items() if k != "cube_array" or "imageCubeArray" in dev.image_features
        }
        # set 1: the 2D texture pool (binding 0, sampled images), the sampler pool (binding 1), the
        # 2D, 1D, 1D array, 2D array and 3D surface pools (bindings 2..6) and the 2D array, 3D,
        # cube and cube array texture pools (7..10), as the shader service declares them
        set1 = (
            (KP.TEXTURE_BINDINGS["2d"], vk.VK_DESCRIPTOR_TYPE_SAMPLED_IMAGE, POOL_TEXTURES),
            (KP.SAMPLER_BINDING, vk.VK_DESCRIPTOR_TYPE_SAMPLER, POOL_SAMPLERS),
            *((b[1], vk.VK_DESCRIPTOR_TYPE_STORAGE_IMAGE, P.COMPUTE_SURFACE_SLOTS) for b, _, _ in SURFACE_POOLS.values()),
            *((b[1], vk.VK_DESCRIPTOR_TYPE_SAMPLED_IMAGE, POOL_TEXTURES) for b, _ in self.dim_pools.values()),
        )
        self.dsl1 = dev.set_layout(set1, vk.VK_SHADER_STAGE_COMPUTE_BIT)
        self.layout = vk.vkCreatePipelineLayout(
            d, vk.VkPipelineLayoutCreateInfo(setLayoutCount=2, pSetLayouts=[self.dsl0, self.dsl1]), None
        )
        self.pool: Any = None  # descriptor pool of the current submission
        self.bank: Any = None  # vkdevice.Buffer: the current submission's constant banks
        self.twins: dict[int, Any] = {}  # texture id -> (Texture, R32ui twin Image)
        self.stages: dict[int, Any] = {}  # texture id -> the buffer a 1D surface's copies go through
        self.dummies: dict[str, Any] = {}  # pool name -> the 1-texel R32ui image of its empty entries
        from vulkan._vulkan import lib as _lib  # the wrapper returns its argument, not the address

        self._addr_fn = _lib.vkGetBufferDeviceAddress
        from gpu_host.compute_data import Placements

        self.data = Placements(dev, self.address)  # PlaceData's global data (compute_data.py)

    # -- registration (the gRPC thread) ----------------------------------------------------------
    def register(self, objects: Objects, id: int, code: bytes) -> ComputeProgram:
        from gpu_host.objects import _spirv_val

        what = f"compute program {id}"
        if not self.dev.buffer_device_address:
            raise ObjectError(f"{what}: {self.dev.name} lacks bufferDeviceAddress/shaderInt64, which compute programs need")
        model, local, pairs = _scan(code, what)
        if model != MODEL_GLCOMPUTE:
            raise ObjectError(f"{what}: execution model {model}, expected GLCompute (5)")
        if local is None:
            raise ObjectError(f"{what}: no LocalSize execution mode")
        lim = self.dev.limits
        if any(v < 1 or v > m for v, m in zip(local, lim.maxComputeWorkGroupSize)) or (
            local[0] * local[1] * local[2] > lim.maxComputeWorkGroupInvocations
        ):
            raise ObjectError(
                f"{what}: local size {list(local)} exceeds {self.dev.name}'s maxComputeWorkGroupSize "
                f"{list(lim.maxComputeWorkGroupSize)} / maxComputeWorkGroupInvocations {lim.maxComputeWorkGroupInvocations}"
            )
        for s, b in sorted(pairs):
            if (s, b) != BANK_BINDING and (s, b) not in SURFACE_PAIRS | POOL_BINDINGS:
                raise ObjectError(
                    f"{what}: uses descriptor set {s} binding {b}; the GPU process binds constant bank 0 "
                    "(set 0 binding 0), the texture and sampler pools (set 1 bindings 0, 1), the 2D, 1D, "
                    "1D array, 2D array and 3D surface pools (set 1 bindings 2..6) and the 2D array, 3D, "
                    "cube and cube array texture pools (set 1 bindings 7..10) to compute programs"
                )
            if (s, b) in POOL_BINDINGS and (s, b) != (KP.POOL_SET, KP.SAMPLER_BINDING):
                kind = next(k for k, v in KP.TEXTURE_BINDINGS.items() if (KP.POOL_SET, v) == (s, b))
                if kind != "2d" and kind not in self.dim_pools:
                    raise ObjectError(
                        f"{what}: samples {KP.pool_name(b)} (set {s} binding {b}), which {self.dev.name} cannot "
                        "bind: a cube array view needs the imageCubeArray feature, which it lacks"
                    )
        kinds = image_kinds(code)
        dim_pools = ((pair, want, KP.pool_name(pair[1])) for pair, want in TEXTURE_DIM_POOLS.values())
        for pair, want, name in (*SURFACE_POOLS.values(), *dim_pools):
            if pair in pairs and kinds.get(pair) != want:
                raise ObjectError(
                    f"{what}: set {pair[0]} binding {pair[1]} is {name}: {'storage' if want[2] == 2 else 'sampled'} "
                    f"images (Dim, Arrayed, Sampled) = {want}, but the module declares {kinds.get(pair, 'no image')} there"
                )
        _spirv_val(code, what)
        d = self.dev.device
        mod = vk.vkCreateShaderModule(d, vk.VkShaderModuleCreateInfo(codeSize=len(code), pCode=code), None)
        try:
            stage = vk.VkPipelineShaderStageCreateInfo(stage=vk.VK_SHADER_STAGE_COMPUTE_BIT, module=mod, pName="main")
            pipe = vk.vkCreateComputePipelines(
                d, None, 1, [vk.VkComputePipelineCreateInfo(stage=stage, layout=self.layout)], None
            )[0]
        except vk.VkError as e:
            raise ObjectError(f"{what}: the driver refused the pipeline ({type(e).__name__})") from None
        finally:
            vk.vkDestroyShaderModule(d, mod, None)
        old = objects.compute_programs.get(id)
        surfaces = bool(pairs & SURFACE_PAIRS)
        prog = ComputeProgram(id, code, local, surfaces, pipe, bool(pairs & POOL_BINDINGS))
        objects.compute_programs[id] = prog
        objects.programs.pop(id, None)  # one id, one program
        if old is not None:
            vk.vkDeviceWaitIdle(d)  # a running submission may still use it
            vk.vkDestroyPipeline(d, old.pipeline, None)
        return prog

    # -- per submission ----------------------------------------------------------------------------
    def begin(self, plan: Plan) -> None:
        """Banks and descriptor sets for every DISPATCH of ``plan`` (the previous submission has
        completed: submit_wait), made before its first dispatch is recorded."""
        dispatches = [c for c in plan.commands if c[0] == P.OP_DISPATCH]
        d = self.dev.device
        if self.pool is not None:
            vk.vkDestroyDescriptorPool(d, self.pool, None)
        n = max(1, len(dispatches))
        self.pool = vk.vkCreateDescriptorPool(
            d,
            vk.VkDescriptorPoolCreateInfo(
                maxSets=2 * n,
                poolSizeCount=4,
                pPoolSizes=[
                    vk.VkDescriptorPoolSize(type=vk.VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, descriptorCount=n),
                    vk.VkDescriptorPoolSize(
                        type=vk.VK_DESCRIPTOR_TYPE_STORAGE_IMAGE, descriptorCount=len(SURFACE_POOLS) * n * P.COMPUTE_SURFACE_SLOTS
                    ),
                    vk.VkDescriptorPoolSize(
                        type=vk.VK_DESCRIPTOR_TYPE_SAMPLED_IMAGE, descriptorCount=(1 + len(self.dim_pools)) * n * POOL_TEXTURES
                    ),
                    vk.VkDescriptorPoolSize(type=vk.VK_DESCRIPTOR_TYPE_SAMPLER, descriptorCount=n * POOL_SAMPLERS),
                ],
            ),
            None,
        )
        need = sum(_up(c[5]) for c in dispatches) or BANK_ALIGN
        if self.bank is None or self.bank.size < need:
            if self.bank is not None:
                self.dev.free_buffer(self.bank)
            self.bank = self.dev.buffer(1 << max(16, (need - 1).bit_length()), vk.VK_BUFFER_USAGE_STORAGE_BUFFER_BIT)
        self.bank_off = 0

    def address(self, buf: Any) -> int:
        """``buf``'s device address, asked once and kept on the Buffer object itself: a handle
        is no key, since a freed buffer's handle may come back for the next one (lavapipe's are
        heap pointers), whose memory and address differ."""
        a = getattr(buf, "device_address", None)
        if a is None:
            info = vk.ffi.new(
                "VkBufferDeviceAddressInfo*", {"sType": vk.VK_STRUCTURE_TYPE_BUFFER_DEVICE_ADDRESS_INFO, "buffer": buf.handle}
            )
            a = buf.device_address = int(self._addr_fn(self.dev.device, info))
        return a

    def twin(self, rp: Any, t: Any) -> Any:
        cur = self.twins.get(t.id)
        if cur is not None and cur[0] == t:
            return cur[1]
        if cur is not None:
            self.dev.free_image(cur[1])
            stage = self.stages.pop(t.id, None)
            if stage is not None:
                self.dev.free_buffer(stage)
        usage = vk.VK_IMAGE_USAGE_STORAGE_BIT | vk.VK_IMAGE_USAGE_TRANSFER_SRC_BIT | vk.VK_IMAGE_USAGE_TRANSFER_DST_BIT
        if t.one_dim:  # Vulkan copies no texels between 1D and 2D images: through a buffer (_copy)
            img = self.dev.image(t.width, 1, vk.VK_FORMAT_R32_UINT, usage, layers=t.layers, one_dim=True)
            self.stages[t.id] = self.dev.buffer(
                4 * t.width * t.layers, vk.VK_BUFFER_USAGE_TRANSFER_SRC_BIT | vk.VK_BUFFER_USAGE_TRANSFER_DST_BIT, host=False
            )
        elif t.volume:
            img = self.dev.image(t.width, t.height, vk.VK_FORMAT_R32_UINT, usage, depth=t.layers)
        else:
            img = self.dev.image(t.width, t.height, vk.VK_FORMAT_R32_UINT, usage, layers=t.layers)
        self.twins[t.id] = (t, img)
        return img

    def dummy_image(self, name: str) -> Any:
        """The empty entry of surface pool ``name`` (a SURFACE_POOLS key): one texel of its image
        kind (two layers where the view is an array, which a one-layer image's view is not)."""
        img = self.dummies.get(name)
        if img is None:
            usage = vk.VK_IMAGE_USAGE_STORAGE_BIT | vk.VK_IMAGE_USAGE_TRANSFER_DST_BIT
            layers = 2 if name.endswith("_array") else 1
            img = self.dummies[name] = self.dev.image(
                1, 1, vk.VK_FORMAT_R32_UINT, usage, layers=layers, depth=int(name == "3d"), one_dim=name.startswith("1d")
            )
        return img

    def reset(self) -> None:
        """A new session: its textures and placed data are gone (programs are the session's objects too)."""
        self.data.reset()
        for _, img in self.twins.values():
            self.dev.free_image(img)
        self.twins.clear()
        for buf in self.stages.values():
            self.dev.free_buffer(buf)
        self.stages.clear()

    def forget(self, objects: Objects) -> None:
        for prog in objects.compute_programs.values():
            vk.vkDestroyPipeline(self.dev.device, prog.pipeline, None)
        objects.compute_programs.clear()

    def close(self) -> None:
        d = self.dev.device
        vk.vkDeviceWaitIdle(d)
        self.reset()
        for img in self.dummies.values():
            self.dev.free_image(img)
        if self.bank is not None:
            self.dev.free_buffer(self.bank)
        if self.pool is not None:
            vk.vkDestroyDescriptorPool(d, self.pool, None)
        vk.vkDestroyPipelineLayout(d, self.layout, None)
        vk.vkDestroyDescriptorSetLayout(d, self.dsl1, None)
        vk.vkDestroyDescriptorSetLayout(d, self.dsl0, None)


def _up(n: int) -> int:
    return (n + BANK_ALIGN - 1) & ~(BANK_ALIGN - 1)


# -- recording (replay_commands.CommandRecording calls these by op) --------------------------------
class _RecState:
    def __init__(self) -> None:
        self.buffers: dict[int, tuple] = {}
        self.consts: dict[int, int] = {}
        self.surfaces: dict[int, int] = {}


def _state(rec: Any) -> _RecState:
    st = rec.__dict__.get("compute_state")
    if st is None:
        st = rec.__dict__["compute_state"] = _RecState()
        rec.rp.compute.begin(rec.plan)
    return st


def _buffer(rec: Any, i: int, cmd: tuple) -> None:
    _state(rec).buffers[cmd[1]] = cmd


def _const(rec: Any, i: int, cmd: tuple) -> None:
    _state(rec).consts[cmd[1]] = cmd[2]


def _surface(rec: Any, i: int, cmd: tuple) -> None:
    _state(rec).surfaces[cmd[1]] = cmd[2]


def surface_kind(t: Any) -> str:
    """The SURFACE_POOLS name of the pool a surface texture is an entry of."""
    if t.one_dim:
        return "1d_array" if t.layers > 1 else "1d"
    return "3d" if t.volume else "2d_array" if t.layers > 1 else "2d"


def _copy(cb: Any, src: Any, dst: Any, t: Any, stage: Any = None) -> None:
    """Every layer of texture ``t`` from image ``src`` to ``dst`` (the texture and its twin); a 1D
    surface's (one is a 2D image, the other a 1D one, which vkCmdCopyImage cannot pair) through
    ``stage``, a buffer of its texels layer after layer."""
    w, h, d = t.width, t.height, (t.layers if t.volume else 1)
    layers = vk.VkImageSubresourceLayers(
        aspectMask=vk.VK_IMAGE_ASPECT_COLOR_BIT, mipLevel=0, baseArrayLayer=0, layerCount=1 if t.volume else t.layers
    )
    if stage is not None:
        region = [
            vk.VkBufferImageCopy(
                bufferOffset=0,
                bufferRowLength=0,  # tightly packed: a layer is w texels of 4 bytes (both formats)
                bufferImageHeight=0,
                imageSubresource=layers,
                imageOffset=vk.VkOffset3D(0, 0, 0),
                imageExtent=vk.VkExtent3D(w, 1, 1),
            )
        ]
        vk.vkCmdCopyImageToBuffer(cb, src.handle, vk.VK_IMAGE_LAYOUT_GENERAL, stage.handle, 1, region)
        full_barrier(cb)  # the buffer written before it is read
        vk.vkCmdCopyBufferToImage(cb, stage.handle, dst.handle, vk.VK_IMAGE_LAYOUT_GENERAL, 1, region)
        return
    vk.vkCmdCopyImage(
        cb,
        src.handle,
        vk.VK_IMAGE_LAYOUT_GENERAL,
        dst.handle,
        vk.VK_IMAGE_LAYOUT_GENERAL,
        1,
        [
            vk.VkImageCopy(
                srcSubresource=layers,
                srcOffset=vk.VkOffset3D(0, 0, 0),
                dstSubresource=layers,
                dstOffset=vk.VkOffset3D(0, 0, 0),
                extent=vk.VkExtent3D(w, h, d),
            )
        ],
    )


def _dispatch(rec: Any, i: int, cmd: tuple) -> None:
    st = _state(rec)
    rec.end()  # no dispatch inside rendering
    rp, cb, objs = rec.rp, rec.cb, rec.objs
    comp: Compute = rp.compute
    _, pid, x, y, z, bank_size, mask, ppool, poff, psize, pat = cmd
    limit = rec.dev.limits.maxComputeWorkGroupCount
    for name, v, m in zip(("x", "y", "z"), (x, y, z), limit):
        if v > m:
            raise SubmissionError(
                f"submission {rec.plan.seq}: packet {i} DISPATCH: field {name} = {v} exceeds "
                f"{rec.dev.name}'s maxComputeWorkGroupCount {list(limit)}"
            )
    prog: ComputeProgram = objs.compute_programs[pid]
    # constant bank 0: the driver's words, the parameters, the storage buffers' addresses
    img = bytearray(bank_size)
    for at, v in st.consts.items():
        struct.pack_into("<I", img, at, v)
    if psize:
        o = rec.where[(ppool, poff, psize)]
        img[pat : pat + psize] = rec.amap[o : o + psize]
    base = comp.address(rec.arena)
    for k in range(P.COMPUTE_BUFFER_SLOTS):
        b = st.buffers.get(k)
        if mask >> k & 1 and b[5] != EMPTY:
            struct.pack_into("<Q", img, b[5], base + rec.where[(b[2], b[3], b[4])])
    boff = comp.bank_off
    comp.bank.mapped[boff : boff + bank_size] = bytes(img)
    comp.bank_off += _up(bank_size)
    d = rec.dev.device
    ds0, ds1 = vk.vkAllocateDescriptorSets(
        d, vk.VkDescriptorSetAllocateInfo(descriptorPool=comp.pool, descriptorSetCount=2, pSetLayouts=[comp.dsl0, comp.dsl1])
    )
    twins = []
    # entry k of every surface pool: the texture's twin in the pool of its kind, a dummy elsewhere
    pools: dict[str, list] = {name: [] for name in SURFACE_POOLS}
    dummies = {name: comp.dummy_image(name) for name in SURFACE_POOLS}
    for k in range(P.COMPUTE_SURFACE_SLOTS):
        tid = st.surfaces.get(k, EMPTY)
        t = None if tid == EMPTY else objs.textures[tid]
        kind = None if t is None else surface_kind(t)
        tw = None
        if t is not None:
            tw = comp.twin(rp, t)
            twins.append((t, rp.image_for(t), tw))
        for name, views in pools.items():
            views.append(tw.view if name == kind else dummies[name].view)
    general = vk.VK_IMAGE_LAYOUT_GENERAL
    # every binding of the layout written (lavapipe reads unwritten ones); unread pools: empty entries
    pools_now = rec.pools if prog.pools else EMPTY_POOLS
    if prog.pools:
        pools_now = surface_headers(rec, pools_now, st.surfaces)
    writes = pool_writes(rp, objs, ds1, pools_now, dims=comp.dim_pools)
    writes.append(
        vk.VkWriteDescriptorSet(
            dstSet=ds0,
            dstBinding=0,
            descriptorCount=1,
            descriptorType=vk.VK_DESCRIPTOR_TYPE_STORAGE_BUFFER,
            pBufferInfo=[vk.VkDescriptorBufferInfo(buffer=comp.bank.handle, offset=boff, range=bank_size)],
        )
    )
    for name, (binding, _, _) in SURFACE_POOLS.items():
        writes.append(
            vk.VkWriteDescriptorSet(
                dstSet=ds1,
                dstBinding=binding[1],
                descriptorCount=P.COMPUTE_SURFACE_SLOTS,
                descriptorType=vk.VK_DESCRIPTOR_TYPE_STORAGE_IMAGE,
                pImageInfo=[vk.VkDescriptorImageInfo(imageView=v, imageLayout=general) for v in pools[name]],
            )
        )
    vk.vkUpdateDescriptorSets(d, len(writes), writes, 0, None)
    full_barrier(cb)  # what came before (draws, uploads, dispatches) is visible to the kernel
    done = set()
    for t, im, tw in twins:
        if t.id not in done:
            _copy(cb, im, tw, t, comp.stages.get(t.id))
            done.add(t.id)
    if twins:
        full_barrier(cb)
    vk.vkCmdBindPipeline(cb, vk.VK_PIPELINE_BIND_POINT_COMPUTE, prog.pipeline)
    vk.vkCmdBindDescriptorSets(cb, vk.VK_PIPELINE_BIND_POINT_COMPUTE, comp.layout, 0, 2, [ds0, ds1], 0, None)
    vk.vkCmdDispatch(cb, x, y, z)
    full_barrier(cb)  # its writes visible to the draws, copies and write-backs after it
    if _propagate(rec, st, mask):
        full_barrier(cb)
    if twins:
        for t, im, tw in twins:
            if t.id in done:
                _copy(cb, tw, im, t, comp.stages.get(t.id))
                done.discard(t.id)
        full_barrier(cb)
    for k in range(P.COMPUTE_BUFFER_SLOTS):  # written back into the pool after the run, in order with WRITEBACK
        b = st.buffers.get(k)
        if mask >> k & 1 and b[6]:
            rec.reads.append((None, ("storage", b[2], b[3], b[4]), -1))
    rec.res.dispatches = getattr(rec.res, "dispatches", 0) + 1


def surface_headers(rec: Any, pools: tuple, surfaces: dict[int, int]) -> tuple:
    """The POOLS entries a kernel reads with each bound surface also its texture-pool entry
    (gpu-pools): PTX ``suq.width`` / ``.height`` on a surface object compile to TXQ on the texture
    header pool (NVIDIA has one header pool, so a surface's handle names a texture header too), and
    the translation's surface handle k is COMPUTE_SURFACE slot k, so the surface at slot k is
    texture-pool entry k, which TXQ reads its size from.  Where the POOLS packet already names a
    texture at entry k, that texture stays (a kernel's texture handles keep their meaning; TXQ on
    the surface handle then reads that texture's size: logged once per pair)."""
    textures = list(pools[0])
    for k, tid in sorted(surfaces.items()):
        if tid == EMPTY or k >= len(textures):
            continue
        if textures[k] == EMPTY:
            textures[k] = tid
        elif textures[k] != tid:
            seen = rec.rp.compute.__dict__.setdefault("header_clashes", set())
            if (k, textures[k], tid) not in seen:
                seen.add((k, textures[k], tid))
                log.warning(
                    "dispatch: surface slot %d (texture %d) is also texture-pool entry %d, which the POOLS packet "
                    "gives texture %d: TXQ (suq) on the surface reads texture %d's size",
                    k,
                    tid,
                    k,
                    textures[k],
                    textures[k],
                )
    return (tuple(textures), pools[1])


def pool_writes(rp: Any, objs: Objects, ds: Any, pools: tuple, dims: dict | None = None) -> list:
    """Set 1 bindings 0 and 1 from the POOLS packet in force (the graphics path's set 1 and a
    kernel's alike): every entry written, since the shader's handle may name any; an empty
    texture entry is the 1x1 dummy image, an empty sampler one nearest and clamped.
    Validation (validate.plan, POOLS) has checked the ids and queued the textures' uploads.
    A 2D array, 3D, cube or cube array texture (gfx-layers, gpu-pools) is an entry of the pool of
    its kind (``dims``: a kernel's set, ``Compute.dim_pools``: kind -> (set 1 binding, ...); the
    graphics set has bindings 0 and 1 only), the dummy of that kind elsewhere.  A 1D texture is a
    W x 1 2D texture (a 1D array a 2D array of W x 1 layers): an entry of the 2D (2D array) pool,
    as the translation samples it (kernel_pools.TEXTURE_VIEW_POOL)."""
    general = vk.VK_IMAGE_LAYOUT_GENERAL
    dims = dims or {}
    kinds = {"2d": [], **{k: [] for k in dims}}
    for tid in pools[0]:
        t = None if tid == EMPTY else objs.textures[tid]
        for kind, views in kinds.items():
            if t is not None and t.view_kind == kind:
                view = rp.image_for(t).sample_view
            else:
                view = rp.dummy_img.view if kind == "2d" else rp.dummy(kind).view
            views.append(vk.VkDescriptorImageInfo(imageView=view, imageLayout=general))
    views = kinds["2d"]
    smps = []
    for sid in pools[1]:
        sm = None if sid == EMPTY else objs.samplers[sid]
        smps.append(
            vk.VkDescriptorImageInfo(
                sampler=rp.sampler(False, False) if sm is None else rp.sampler(sm.linear, sm.repeat, sm.compare)
            )
        )
    extra = [
        vk.VkWriteDescriptorSet(
            dstSet=ds,
            dstBinding=binding[1],
            descriptorCount=POOL_TEXTURES,
            descriptorType=vk.VK_DESCRIPTOR_TYPE_SAMPLED_IMAGE,
            pImageInfo=kinds[kind],
        )
        for kind, (binding, _) in dims.items()
    ]
    return extra + [
        vk.VkWriteDescriptorSet(
            dstSet=ds,
            dstBinding=0,
            descriptorCount=POOL_TEXTURES,
            descriptorType=vk.VK_DESCRIPTOR_TYPE_SAMPLED_IMAGE,
            pImageInfo=views,
        ),
        vk.VkWriteDescriptorSet(
            dstSet=ds, dstBinding=1, descriptorCount=POOL_SAMPLERS, descriptorType=vk.VK_DESCRIPTOR_TYPE_SAMPLER, pImageInfo=smps
        ),
    ]


def _propagate(rec: Any, st: _RecState, mask: int) -> bool:
    """The bytes a dispatch may have written (its ``write`` buffers) copied into every other
    snapshotted range of the submission that overlaps them (a VERTEX, UNIFORM or COMPUTE_BUFFER of
    another offset or size in the same pool): later commands read pool memory as the dispatch left
    it, whichever range they bind.  Returns whether anything was copied."""
    regions: dict[tuple, list] = {}
    for k in range(P.COMPUTE_BUFFER_SLOTS):
        b = st.buffers.get(k)
        if not (mask >> k & 1 and b[6]):
            continue
        pool, off, size = b[2], b[3], b[4]
        src = rec.where[(pool, off, size)]
        for r in rec.plan.ranges:
            if r[0] != pool or r == (pool, off, size):
                continue
            lo, hi = max(off, r[1]), min(off + size, r[1] + r[2])
            if lo < hi:
                regions.setdefault(r, []).append(vk.VkBufferCopy(src + lo - off, rec.where[r] + lo - r[1], hi - lo))
    for r, regs in regions.items():
        vk.vkCmdCopyBuffer(rec.cb, rec.arena.handle, rec.arena.handle, len(regs), regs)
    return bool(regions)


HANDLERS = {
    P.OP_COMPUTE_BUFFER: _buffer,
    P.OP_COMPUTE_CONST: _const,
    P.OP_COMPUTE_SURFACE: _surface,
    P.OP_DISPATCH: _dispatch,
}


def write_back(objects: Objects, arena: Any, where: dict, key: tuple) -> None:
    """A storage buffer bound with ``write``: its bytes after the run into the pool."""
    if not hasattr(objects.memory, "write"):  # a recording being replayed: nothing to write to
        return
    _, pool, off, size = key
    o = where[(pool, off, size)]
    objects.memory.write(pool, off, bytes(arena.mapped[o : o + size]))
