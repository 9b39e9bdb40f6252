"""Graphics pipelines for dynamic rendering, one fixed descriptor layout (push descriptors:
set 0, bindings 0-3 uniform blocks, 4-7 combined image samplers; set 1 the bindless texture and
sampler pools), cached by the state that
shapes them.  Shader code comes from ``objects.Program`` whatever produced it (GLSL, or the
shader service's translation of guest machine code).

Where the driver has VK_EXT_graphics_pipeline_library (lavapipe, NVIDIA), a pipeline is linked
from four parts each cached on its own: vertex input (layout, topology), pre-rasterisation (the
vertex program), fragment shader (the fragment program), fragment output (target format, blend):
a new combination of known parts is a link, not a compile.  The driver's compiled code is kept
on disk in a VkPipelineCache per device (``<cache_dir>/gpu_host/pipelines-<device>.bin``, written
whole to a temporary file and renamed in, so a killed process never leaves a broken one; a file
that fails its checksum is ignored with a warning), so a restarted GPU process finds its
pipelines compiled.

Off the replay thread: with ``threads`` > 0 (setting ``gpu_host.pipeline_threads``) ``request``
starts making a pipeline on a worker (its parts and shader modules made once whoever asks first,
the others waiting for that one), so the pipelines a submission needs compile in parallel while
the replay thread goes on (the native replay asks for all its planned keys first).  ``get``
waits for a pipeline still being made (the *wait* policy: frames as if made in place); ``ready``
returns None for one not made yet, and the replay skips that draw and counts it (the *skip*
policy, ``gpu_host.pipeline_not_ready = skip``: no stall, frames differ until it is made).
"""

from __future__ import annotations

import hashlib
import logging
import os
import threading
import time
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import vulkan as vk
from vulkan._vulkan import ffi, lib

from gpu_host import packets as P
from gpu_host.objects import LAYER_COUNT_SPEC_ID, TOPOLOGY_INPUT, VIEWPORT_COUNT_SPEC_ID, ObjectError, Program
from gpu_host.validate import SubmissionError
from gpu_host.spirv_reflect import POOL_SAMPLERS, POOL_TEXTURES
from gpu_host.vkdevice import Device

log = logging.getLogger("gpu_host.pipelines")
STAGES = vk.VK_SHADER_STAGE_VERTEX_BIT | vk.VK_SHADER_STAGE_FRAGMENT_BIT
CACHE_MAGIC = b"NXPC0001"
SAVE_EVERY = 2.0  # seconds between saves of a grown pipeline cache (and at close)
VI = vk.VK_GRAPHICS_PIPELINE_LIBRARY_VERTEX_INPUT_INTERFACE_BIT_EXT
PRE = vk.VK_GRAPHICS_PIPELINE_LIBRARY_PRE_RASTERIZATION_SHADERS_BIT_EXT
FS = vk.VK_GRAPHICS_PIPELINE_LIBRARY_FRAGMENT_SHADER_BIT_EXT
OUT = vk.VK_GRAPHICS_PIPELINE_LIBRARY_FRAGMENT_OUTPUT_INTERFACE_BIT_EXT


# State set per draw by the replay (Vulkan 1.3 core: the extended dynamic states were promoted), so a
# pipeline is not multiplied by depth/stencil, cull, front face, bias or blend-constant states.
DYNAMIC = [
    vk.VK_DYNAMIC_STATE_VIEWPORT,
    vk.VK_DYNAMIC_STATE_SCISSOR,
    vk.VK_DYNAMIC_STATE_CULL_MODE,
    vk.VK_DYNAMIC_STATE_FRONT_FACE,
    vk.VK_DYNAMIC_STATE_DEPTH_TEST_ENABLE,
    vk.VK_DYNAMIC_STATE_DEPTH_WRITE_ENABLE,
    vk.VK_DYNAMIC_STATE_DEPTH_COMPARE_OP,
    vk.VK_DYNAMIC_STATE_DEPTH_BOUNDS_TEST_ENABLE,
    vk.VK_DYNAMIC_STATE_STENCIL_TEST_ENABLE,
    vk.VK_DYNAMIC_STATE_STENCIL_OP,
    vk.VK_DYNAMIC_STATE_STENCIL_COMPARE_MASK,
    vk.VK_DYNAMIC_STATE_STENCIL_WRITE_MASK,
    vk.VK_DYNAMIC_STATE_STENCIL_REFERENCE,
    vk.VK_DYNAMIC_STATE_DEPTH_BIAS,
    vk.VK_DYNAMIC_STATE_DEPTH_BIAS_ENABLE,
    vk.VK_DYNAMIC_STATE_BLEND_CONSTANTS,
]


@dataclass(frozen=True)
class Shape:
    """The state that shapes a pipeline beyond its program (the rest is dynamic)."""

    layout: tuple
    vk_format: tuple  # colour attachments' formats, attachment 0 first (empty: none)
    blend: tuple  # one BLEND_STATE packet per colour attachment
    depth_format: int = 0
    stencil_format: int = 0
    polygon_mode: int = 0
    samples: int = 1  # rasterizationSamples: the bound targets' sample count
    alpha_to_coverage: bool = False
    layers: int = 1  # gfx-layers: the bound targets' layer count, for a geometry stage writing Layer
    viewports: int = 1  # shader-tex: the device's viewports, for a geometry stage writing ViewportIndex


def cache_file(dev: Device, cache_dir: str | os.PathLike) -> Path:
    """Where this device's pipeline cache lives: one file per driver build (its cache UUID)."""
    uuid = bytes(dev.props.pipelineCacheUUID).hex()
    return Path(cache_dir) / "gpu_host" / f"pipelines-{dev.props.vendorID:04x}-{dev.props.deviceID:04x}-{uuid}.bin"


def read_cache(path: Path) -> bytes:
    """The driver's cache bytes from ``path``, or b"" (absent, or not what we wrote: said)."""
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        return b""
    except OSError as e:
        log.warning("pipeline cache %s unreadable (%s); starting empty", path, e)
        return b""
    head, digest, data = raw[:8], raw[8:40], raw[40:]
    if head != CACHE_MAGIC or hashlib.sha256(data).digest() != digest:
        log.warning("pipeline cache %s: field header/sha256 does not match its %d bytes; ignored", path, len(raw))
        return b""
    return data


def write_cache(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    with open(tmp, "wb") as f:
        f.write(CACHE_MAGIC + hashlib.sha256(data).digest() + data)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)


class Pipelines:
    def __init__(self, dev: Device, cache_path: Path | None = None, library: bool = True, threads: int = 0) -> None:
        self.dev = dev
        self.lock = threading.Lock()
        self.pending: dict[tuple, Future] = {}  # pipelines being made on a worker, by key
        self._making: dict[tuple, Future] = {}  # parts / shader modules being made, by (table, key)
        self.workers = ThreadPoolExecutor(threads, thread_name_prefix="pipelines") if threads > 0 else None
        self.library = library and dev.pipeline_library
        self.cache_path = cache_path
        initial = read_cache(cache_path) if cache_path else b""
        buf = ffi.new("char[]", initial) if initial else ffi.NULL
        info = ffi.new("VkPipelineCacheCreateInfo*")
        info.sType = vk.VK_STRUCTURE_TYPE_PIPELINE_CACHE_CREATE_INFO
        info.initialDataSize = len(initial)
        info.pInitialData = buf
        handle = ffi.new("VkPipelineCache*")
        if lib.vkCreatePipelineCache(dev.device, info, ffi.NULL, handle) != vk.VK_SUCCESS:
            raise RuntimeError("vkCreatePipelineCache failed")
        self.vk_cache = handle[0]
        self.saved_size = len(initial)
        self.last_save = time.monotonic()
        self.created = 0  # pipelines made (linked or compiled) by this process
        if cache_path:
            log.info("pipeline cache %s: %d bytes loaded", cache_path, len(initial))
        log.info("pipeline library: %s", "on" if self.library else "off")
        self.parts: dict[tuple, Any] = {}  # library parts by what shapes them
        set0 = [
            (b, vk.VK_DESCRIPTOR_TYPE_UNIFORM_BUFFER if b < 4 else vk.VK_DESCRIPTOR_TYPE_COMBINED_IMAGE_SAMPLER, 1)
            for b in range(8)
        ]
        # gfx-geom: a geometry stage reads the same bindings where the device runs one
        stages = STAGES | (vk.VK_SHADER_STAGE_GEOMETRY_BIT if getattr(dev, "geometry_shader", False) else 0)
        self.set_layout = dev.set_layout(set0, stages, vk.VK_DESCRIPTOR_SET_LAYOUT_CREATE_PUSH_DESCRIPTOR_BIT_KHR)
        # Set 1: the guest's bindless pools (spirv_reflect's layout), written per draw from the
        # submission's POOLS packet.  One layout for every program: a set a program does not
        # read needs no binding, and set 0's pushes are compatible across all pipelines.
        self.pool_layout = dev.set_layout(
            [(0, vk.VK_DESCRIPTOR_TYPE_SAMPLED_IMAGE, POOL_TEXTURES), (1, vk.VK_DESCRIPTOR_TYPE_SAMPLER, POOL_SAMPLERS)], stages
        )
        self.layout = vk.vkCreatePipelineLayout(
            dev.device, vk.VkPipelineLayoutCreateInfo(setLayoutCount=2, pSetLayouts=[self.set_layout, self.pool_layout]), None
        )
        self.cache: dict[tuple, Any] = {}
        # Keyed by shader content, not by handle: the cache survives client sessions (restarts).
        self.modules: dict[bytes, tuple[Any, Any, dict[str, Any]]] = {}

    def _once(self, table: dict, key: Any, make) -> Any:
        """``table[key]``, made by ``make()`` by the first thread that asks (the others wait for
        it): shader modules and library parts shared by pipelines made on several workers."""
        v = table.get(key)
        if v is not None:
            return v
        with self.lock:
            v = table.get(key)
            if v is not None:
                return v
            fut = self._making.get((id(table), key))
            mine = fut is None
            if mine:
                fut = self._making[(id(table), key)] = Future()
        if not mine:
            return fut.result()
        try:
            v = make()
        except BaseException as e:
            with self.lock:
                del self._making[(id(table), key)]
            fut.set_exception(e)
            raise
        with self.lock:
            table[key] = v
            del self._making[(id(table), key)]
        fut.set_result(v)
        return v

    def _modules(self, prog: Program) -> tuple[Any, Any, dict[str, Any]]:
        """(vertex, fragment, {input primitive: geometry}) shader modules of a program."""
        return self._once(
            self.modules,
            prog.digest,
            lambda: (
                self.dev.shader_module(prog.vertex_spirv),
                self.dev.shader_module(prog.fragment_spirv),
                {name: self.dev.shader_module(code) for name, code in prog.geometry},
            ),
        )

    def _key(
        self,
        prog: Program,
        layout: tuple,
        vk_format: int | tuple,
        blend: bool | tuple,
        depth_format: int = 0,
        stencil_format: int = 0,
        polygon_mode: int = 0,
        samples: int = 1,
        alpha_to_coverage: bool = False,
        layers: int = 1,
    ) -> tuple[tuple, "Shape"]:
        formats = vk_format if isinstance(vk_format, tuple) else (vk_format,) if vk_format else ()
        if not isinstance(blend, tuple):
            blend = P.BLEND_OVER if blend else P.BLEND_OFF
        if not blend or not isinstance(blend[0], tuple):  # one state for every attachment
            blend = (blend,) * len(formats)
        layers = layers if prog.writes_layer else 1  # only a Layer-writing geometry stage is specialised on it
        key = (prog.digest, layout[1:], formats, blend, depth_format, stencil_format, polygon_mode, samples, alpha_to_coverage)
        key += (layers,) if layers != 1 else ()
        viewports = getattr(self.dev, "viewports", 1) if prog.writes_viewport else 1
        key += (("viewports", viewports),) if viewports != 1 else ()
        shape = Shape(
            layout, formats, blend, depth_format, stencil_format, polygon_mode, samples, alpha_to_coverage, layers, viewports
        )
        return key, shape

    def _make(self, prog: Program, sh: "Shape") -> Any:
        # Colour targets with different blend states are compiled whole: lavapipe (Mesa 22.3)
        # linked from library parts applied one attachment's blend and write mask to all of
        # them (seen in tests/gpu_host/test_gpu_mrt.py); whole pipelines get them right.
        whole = len(set(sh.blend)) > 1
        return self._link(prog, sh) if self.library and not whole else self._create(prog, sh)

    def _made(self, key: tuple, p: Any) -> Any:
        self.cache[key] = p
        self.created += 1
        if time.monotonic() - self.last_save > SAVE_EVERY:
            self.save()
        return p

    def request(self, prog: Program, *args: Any) -> None:
        """Start making the pipeline of ``get``'s arguments on a worker (nothing when it is made or
        being made, or without workers)."""
        if self.workers is None:
            return
        key, shape = self._key(prog, *args)
        if key in self.cache:
            return
        with self.lock:
            if key not in self.pending:
                self.pending[key] = self.workers.submit(self._make, prog, shape)

    def ready(self, prog: Program, *args: Any) -> Any | None:
        """The pipeline if it is made (requested otherwise), else None: the skip policy's ``get``."""
        key, shape = self._key(prog, *args)
        p = self.cache.get(key)
        if p is not None:
            return p
        fut = self.pending.get(key)
        if fut is None:
            if self.workers is None:
                return self._made(key, self._make(prog, shape))
            self.request(prog, *args)
            return None
        return self._finish(key, fut) if fut.done() else None

    def _finish(self, key: tuple, fut: Future) -> Any:
        p = fut.result()  # a worker's failure is raised here, on the replay thread
        with self.lock:
            del self.pending[key]
        return self._made(key, p)

    def get(
        self,
        prog: Program,
        layout: tuple,
        vk_format: int | tuple,
        blend: bool | tuple,
        depth_format: int = 0,
        stencil_format: int = 0,
        polygon_mode: int = 0,
        samples: int = 1,
        alpha_to_coverage: bool = False,
        layers: int = 1,
    ) -> Any:
        """The pipeline for this program, vertex layout, attachment formats (``vk_format``: one
        colour format, 0 for none, or a tuple of the colour targets' formats;
        ``depth_format``/``stencil_format`` 0: none), blend (the old BLEND bool, a BLEND_STATE
        packet for every colour target, or a tuple of one BLEND_STATE per colour target) and
        polygon mode.  Depth/stencil tests, cull mode, front face, depth bias and blend constants
        are dynamic state: one pipeline serves them all.  One being made on a worker is waited
        for."""
        key, shape = self._key(
            prog, layout, vk_format, blend, depth_format, stencil_format, polygon_mode, samples, alpha_to_coverage, layers
        )
        p = self.cache.get(key)
        if p is not None:
            return p
        fut = self.pending.get(key)
        if fut is not None:
            return self._finish(key, fut)
        return self._made(key, self._make(prog, shape))

    def save(self) -> None:
        """Write the driver's cache to disk if it grew since the last write."""
        self.last_save = time.monotonic()
        if not self.cache_path:
            return
        size = ffi.new("size_t*")
        lib.vkGetPipelineCacheData(self.dev.device, self.vk_cache, size, ffi.NULL)
        if size[0] == self.saved_size:
            return
        data = ffi.new("char[]", size[0])
        if lib.vkGetPipelineCacheData(self.dev.device, self.vk_cache, size, data) not in (vk.VK_SUCCESS, vk.VK_INCOMPLETE):
            return
        try:
            write_cache(self.cache_path, bytes(ffi.buffer(data, size[0])))
            self.saved_size = size[0]
        except OSError as e:  # a full disk costs the next start some compiling, nothing else
            log.warning("pipeline cache %s not written: %s", self.cache_path, e)

    # -- the four parts and their link (VK_EXT_graphics_pipeline_library) ------------------
    def _part(self, key: tuple, flags: int, **state) -> Any:
        def make() -> Any:
            rendering = state.pop("rendering", None)
            info = vk.VkGraphicsPipelineCreateInfo(
                pNext=vk.VkGraphicsPipelineLibraryCreateInfoEXT(pNext=rendering, flags=flags),
                flags=vk.VK_PIPELINE_CREATE_LIBRARY_BIT_KHR,
                layout=self.layout,
                **state,
            )
            return vk.vkCreateGraphicsPipelines(self.dev.device, self.vk_cache, 1, [info], None)[0]

        return self._once(self.parts, key, make)

    def _link(self, prog: Program, sh: "Shape") -> Any:
        s = self._state(prog, sh)
        # the multisample state is in both the fragment-shader and the output parts
        fmts = (sh.vk_format, sh.depth_format, sh.stencil_format, sh.samples, sh.alpha_to_coverage)
        vi = self._part(
            ("vi", sh.layout[1:]), VI, pVertexInputState=s["vin"], pInputAssemblyState=s["ia"], pDynamicState=s["dyn"]
        )
        vstages = [s["vstage"]] + ([s["gstage"]] if s["gstage"] is not None else [])
        pre = self._part(
            ("pre", prog.digest, sh.polygon_mode, s["ginput"], sh.layers, sh.viewports),
            PRE,
            stageCount=len(vstages),
            pStages=vstages,
            pViewportState=s["vp"],
            pRasterizationState=s["rs"],
            pDynamicState=s["dyn"],
        )
        fstages = [s["fstage"]]
        fs = self._part(
            ("fs", prog.digest, fmts),
            FS,
            stageCount=1,
            pStages=fstages,
            pMultisampleState=s["ms"],
            pDepthStencilState=s["ds"],
            pDynamicState=s["dyn"],
            rendering=s["rendering"],
        )
        out = self._part(
            ("out", fmts, sh.blend),
            OUT,
            pColorBlendState=s["cb"],
            pMultisampleState=s["ms"],
            pDynamicState=s["dyn"],
            rendering=s["rendering"],
        )
        libs = [vi, pre, fs, out]
        info = vk.VkGraphicsPipelineCreateInfo(
            pNext=vk.VkPipelineLibraryCreateInfoKHR(libraryCount=4, pLibraries=libs), layout=self.layout
        )
        return vk.vkCreateGraphicsPipelines(self.dev.device, self.vk_cache, 1, [info], None)[0]

    # -- one whole pipeline ------------------------------------------------------------------
    def _state(self, prog: Program, sh: "Shape") -> dict:
        vmod, fmod, gmods = self._modules(prog)
        _, stride, topology, attrs = sh.layout
        # Named variables: the binding loses pName when these are built inline (docs/TOOLCHAIN.md).
        vstage = vk.VkPipelineShaderStageCreateInfo(stage=vk.VK_SHADER_STAGE_VERTEX_BIT, module=vmod, pName="main")
        fstage = vk.VkPipelineShaderStageCreateInfo(stage=vk.VK_SHADER_STAGE_FRAGMENT_BIT, module=fmod, pName="main")
        # gfx-geom: the geometry module made for the input primitive this topology gives
        gstage, ginput, data = None, "", None
        try:
            has_geometry = prog.geometry_for(topology) is not None
        except ObjectError as e:  # the submission is refused (named in the log), the process serves on
            raise SubmissionError(str(e)) from None
        if has_geometry:
            ginput = TOPOLOGY_INPUT[topology]
            spec = None
            # gfx-layers: vertices whose Layer is not below the layer count are not emitted;
            # shader-tex: nor those whose ViewportIndex is not below the viewport count
            consts = [(LAYER_COUNT_SPEC_ID, sh.layers)] * prog.writes_layer
            consts += [(VIEWPORT_COUNT_SPEC_ID, sh.viewports)] * prog.writes_viewport
            if consts:
                data = vk.ffi.new(f"uint32_t[{len(consts)}]", [v for _, v in consts])
                spec = vk.VkSpecializationInfo(
                    mapEntryCount=len(consts),
                    pMapEntries=[
                        vk.VkSpecializationMapEntry(constantID=c, offset=4 * k, size=4) for k, (c, _) in enumerate(consts)
                    ],
                    dataSize=4 * len(consts),
                    pData=data,
                )
            gstage = vk.VkPipelineShaderStageCreateInfo(
                stage=vk.VK_SHADER_STAGE_GEOMETRY_BIT, module=gmods[ginput], pName="main", pSpecializationInfo=spec
            )
        vin = vk.VkPipelineVertexInputStateCreateInfo(
            vertexBindingDescriptionCount=1,
            pVertexBindingDescriptions=[
                vk.VkVertexInputBindingDescription(binding=0, stride=stride, inputRate=vk.VK_VERTEX_INPUT_RATE_VERTEX)
            ],
            vertexAttributeDescriptionCount=len(attrs),
            pVertexAttributeDescriptions=[
                vk.VkVertexInputAttributeDescription(
                    location=loc, binding=0, format=getattr(vk, P.VERTEX_FORMATS[fmt][0]), offset=off
                )
                for loc, fmt, off in attrs
            ],
        )
        ia = vk.VkPipelineInputAssemblyStateCreateInfo(topology=getattr(vk, P.TOPOLOGIES[topology]))
        vp = vk.VkPipelineViewportStateCreateInfo(viewportCount=sh.viewports, scissorCount=sh.viewports)
        rs = vk.VkPipelineRasterizationStateCreateInfo(
            polygonMode=vk.VK_POLYGON_MODE_LINE if sh.polygon_mode == 1 else vk.VK_POLYGON_MODE_FILL,
            cullMode=vk.VK_CULL_MODE_NONE,
            frontFace=vk.VK_FRONT_FACE_COUNTER_CLOCKWISE,
            lineWidth=1.0,
        )
        ms = vk.VkPipelineMultisampleStateCreateInfo(
            rasterizationSamples=sh.samples,  # VkSampleCountFlagBits: the bit of value n is n samples
            alphaToCoverageEnable=vk.VK_TRUE if sh.alpha_to_coverage else vk.VK_FALSE,
        )
        atts = []
        for _, _, enable, sc, dc, cop, sa, da, aop, mask in sh.blend:
            atts.append(
                vk.VkPipelineColorBlendAttachmentState(
                    blendEnable=vk.VK_TRUE if enable else vk.VK_FALSE,
                    srcColorBlendFactor=sc,
                    dstColorBlendFactor=dc,
                    colorBlendOp=cop,
                    srcAlphaBlendFactor=sa,
                    dstAlphaBlendFactor=da,
                    alphaBlendOp=aop,
                    colorWriteMask=mask,
                )
            )
        ncol = len(sh.vk_format)
        cb = vk.VkPipelineColorBlendStateCreateInfo(attachmentCount=ncol, pAttachments=atts or None)
        dyn = vk.VkPipelineDynamicStateCreateInfo(dynamicStateCount=len(DYNAMIC), pDynamicStates=DYNAMIC)
        rendering = vk.VkPipelineRenderingCreateInfo(
            colorAttachmentCount=ncol,
            pColorAttachmentFormats=list(sh.vk_format) or None,
            depthAttachmentFormat=sh.depth_format,
            stencilAttachmentFormat=sh.stencil_format,
        )
        ds = vk.VkPipelineDepthStencilStateCreateInfo(minDepthBounds=0.0, maxDepthBounds=1.0)
        return dict(
            vstage=vstage,
            fstage=fstage,
            gstage=gstage,
            ginput=ginput,
            spec_data=data,  # kept alive until the pipeline is made
            vin=vin,
            ia=ia,
            vp=vp,
            rs=rs,
            ms=ms,
            cb=cb,
            dyn=dyn,
            rendering=rendering,
            ds=ds,
        )

    def _create(self, prog: Program, sh: "Shape") -> Any:
        s = self._state(prog, sh)
        stages = [s["vstage"], s["fstage"]] + ([s["gstage"]] if s["gstage"] is not None else [])
        info = vk.VkGraphicsPipelineCreateInfo(
            pNext=s["rendering"],
            stageCount=len(stages),
            pStages=stages,
            pVertexInputState=s["vin"],
            pInputAssemblyState=s["ia"],
            pViewportState=s["vp"],
            pRasterizationState=s["rs"],
            pMultisampleState=s["ms"],
            pDepthStencilState=s["ds"],
            pColorBlendState=s["cb"],
            pDynamicState=s["dyn"],
            layout=self.layout,
        )
        return vk.vkCreateGraphicsPipelines(self.dev.device, self.vk_cache, 1, [info], None)[0]

    def close(self) -> None:
        d = self.dev.device
        if self.workers is not None:
            self.workers.shutdown(wait=True)
            for key, fut in list(self.pending.items()):
                if fut.exception() is None:
                    self.cache[key] = fut.result()
        self.save()
        for p in [*self.cache.values(), *self.parts.values()]:
            vk.vkDestroyPipeline(d, p, None)
        lib.vkDestroyPipelineCache(d, self.vk_cache, ffi.NULL)
        for vm, fm, gms in self.modules.values():
            for m in (vm, fm, *gms.values()):
                vk.vkDestroyShaderModule(d, m, None)
        vk.vkDestroyPipelineLayout(d, self.layout, None)
        vk.vkDestroyDescriptorSetLayout(d, self.set_layout, None)
        vk.vkDestroyDescriptorSetLayout(d, self.pool_layout, None)
