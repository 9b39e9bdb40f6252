"""A headless Vulkan 1.3 device through the ``vulkan`` binding, plus the few helpers the
replayer needs (buffers, images, shader modules, one-shot command buffers)."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from collections.abc import Sequence
from typing import Any

import vulkan as vk

FENCE_TIMEOUT_NS = 120 * 10**9  # one submission's replay, first-draw shader compiles included
VIEWPORTS = 16  # shader-tex: Maxwell's viewports (NVN's 16), what a ViewportIndex may name

log = logging.getLogger("gpu_host.vk")


# Vulkan 1.2 core values the binding (1.3.275.1) leaves as None: VK_BUFFER_USAGE_SHADER_DEVICE_ADDRESS_BIT
# and VK_MEMORY_ALLOCATE_DEVICE_ADDRESS_BIT (the spec's enum tables).
BUFFER_DEVICE_ADDRESS = 0x00020000
MEMORY_ALLOCATE_DEVICE_ADDRESS = 0x00000002


class VulkanUnavailable(RuntimeError):
    pass


@dataclass
class Buffer:
    handle: Any
    memory: Any
    size: int
    mapped: Any = None  # cffi buffer when host visible


@dataclass
class Image:
    handle: Any
    memory: Any
    view: Any
    width: int
    height: int
    vk_format: int
    aspect: int = vk.VK_IMAGE_ASPECT_COLOR_BIT  # every aspect of the format (depth | stencil for D24S8)
    sample_view: Any = None  # the view shaders sample: ``view``, or the depth aspect alone of a depth format
    samples: int = 1  # samples per pixel (a multisampled render target: 2, 4, 8)

    def __post_init__(self) -> None:
        if self.sample_view is None:
            self.sample_view = self.view


class Device:
    def __init__(
        self,
        prefer: str = "",
        instance_extensions: list[str] = (),
        device_extensions: list[str] = (),
        pipeline_library: bool = True,
        descriptor_indexing: bool = True,
        geometry_shader: bool = True,
        denorm_preserve: str = "auto",
    ) -> None:
        """``instance_extensions``/``device_extensions``: extra ones a window needs (surface,
        swapchain); without them the device is headless.  ``pipeline_library``: enable
        VK_EXT_graphics_pipeline_library where the driver has it (``self.pipeline_library``).
        ``descriptor_indexing``: enable non-uniform indexing of sampled-image (and sampler)
        arrays where the device has it (``self.descriptor_indexing``: bindless instructions
        then index the pools instead of switching over them).  ``geometry_shader``: enable the
        geometryShader feature where the device has it (``self.geometry_shader``: pipelines with
        a geometry stage; gfx-geom).  ``denorm_preserve``: auto | on | off, whether translated
        compute programs declare DenormPreserve 32 (``self.denorm_preserve32``; auto: where the
        device reports shaderDenormPreserveFloat32)."""
        app = vk.VkApplicationInfo(
            pApplicationName="nxrecomp-gpu",
            applicationVersion=1,
            pEngineName="nxrecomp",
            engineVersion=1,
            apiVersion=vk.VK_MAKE_VERSION(1, 3, 0),
        )
        try:
            iexts = list(instance_extensions)
            self.instance = vk.vkCreateInstance(
                vk.VkInstanceCreateInfo(
                    pApplicationInfo=app, enabledExtensionCount=len(iexts), ppEnabledExtensionNames=iexts or None
                ),
                None,
            )
            pds = vk.vkEnumeratePhysicalDevices(self.instance)
        except vk.VkError as e:
            raise VulkanUnavailable(f"no Vulkan instance: {type(e).__name__}") from None
        cands = []
        for pd in pds:
            props = vk.vkGetPhysicalDeviceProperties(pd)
            if props.apiVersion >= vk.VK_MAKE_VERSION(1, 3, 0):
                cands.append((prefer and prefer.lower() in props.deviceName.lower(), pd, props))
        if not cands:
            raise VulkanUnavailable("no Vulkan 1.3 device")
        cands.sort(key=lambda c: not c[0])
        _, self.pd, props = cands[0]
        self.name = props.deviceName
        self.limits = props.limits
        fams = vk.vkGetPhysicalDeviceQueueFamilyProperties(self.pd)
        self.qfam = next(i for i, f in enumerate(fams) if f.queueFlags & vk.VK_QUEUE_GRAPHICS_BIT)
        qinfo = vk.VkDeviceQueueCreateInfo(queueFamilyIndex=self.qfam, queueCount=1, pQueuePriorities=[1.0])
        self.props = props
        have_exts = {e.extensionName for e in vk.vkEnumerateDeviceExtensionProperties(self.pd, None)}
        gpl_exts = ["VK_KHR_pipeline_library", "VK_EXT_graphics_pipeline_library"]
        self.pipeline_library = False
        if pipeline_library and all(e in have_exts for e in gpl_exts):
            q = vk.VkPhysicalDeviceGraphicsPipelineLibraryFeaturesEXT()
            vk.vkGetPhysicalDeviceFeatures2(self.pd, vk.VkPhysicalDeviceFeatures2(pNext=q))
            self.pipeline_library = bool(q.graphicsPipelineLibrary)
        gpl = (
            vk.VkPhysicalDeviceGraphicsPipelineLibraryFeaturesEXT(graphicsPipelineLibrary=vk.VK_TRUE)
            if self.pipeline_library
            else None
        )
        have = vk.vkGetPhysicalDeviceFeatures(self.pd)
        # Descriptor indexing (core in Vulkan 1.2): shaderSampledImageArrayDynamicIndexing (1.0)
        # and shaderSampledImageArrayNonUniformIndexing (1.2) cover arrays of sampled images and
        # of samplers alike (the spec's feature descriptions).  lavapipe 22.3 has neither.
        q12 = vk.VkPhysicalDeviceVulkan12Features()
        vk.vkGetPhysicalDeviceFeatures2(self.pd, vk.VkPhysicalDeviceFeatures2(pNext=q12))
        # shader-nv: f32 denormals kept where the shader asks (DenormPreserve 32): a property
        # (Vulkan 1.2 float controls), nothing to enable; NVIDIA's driver flushes them otherwise
        p12 = vk.VkPhysicalDeviceVulkan12Properties()
        vk.vkGetPhysicalDeviceProperties2(self.pd, vk.VkPhysicalDeviceProperties2(pNext=p12))
        # gpu_host.denorm_preserve = on declares it where the property says false: NVIDIA 580 reports
        # false yet keeps f32 denormals under the mode (bench/nvidia_corpus.py, 48 corpus programs)
        self.denorm_preserve32 = denorm_preserve == "on" or (denorm_preserve == "auto" and bool(p12.shaderDenormPreserveFloat32))
        self.descriptor_indexing = bool(
            descriptor_indexing and have.shaderSampledImageArrayDynamicIndexing and q12.shaderSampledImageArrayNonUniformIndexing
        )
        # 64-bit atomics on storage buffers and workgroup memory (Vulkan 1.2 core features; the
        # SPIR-V Int64Atomics capability the shader service emits for the guest's 64-bit ATOM/RED
        # needs the matching one, and Int64 needs shaderInt64): enabled where the device has them.
        self.int64_atomics = {name for name in ("shaderBufferInt64Atomics", "shaderSharedInt64Atomics") if getattr(q12, name)}
        # Buffer device addresses (Vulkan 1.2 core): the shader service's compute programs reach
        # global memory through 64-bit addresses (PhysicalStorageBuffer64); gpu_host/compute.py.
        self.buffer_device_address = bool(q12.bufferDeviceAddress and have.shaderInt64)
        f12 = (
            vk.VkPhysicalDeviceVulkan12Features(
                pNext=gpl,
                **({"shaderSampledImageArrayNonUniformIndexing": vk.VK_TRUE} if self.descriptor_indexing else {}),
                **{name: vk.VK_TRUE for name in self.int64_atomics},
                **({"bufferDeviceAddress": vk.VK_TRUE} if self.buffer_device_address else {}),
            )
            if self.descriptor_indexing or self.int64_atomics or self.buffer_device_address
            else gpl
        )
        # The shader clocks (VK_KHR_shader_clock: shaderSubgroupClock, shaderDeviceClock): the
        # shader service reads the guest's SR_CLOCK* / SR_GLOBALTIMER* as OpReadClockKHR at
        # subgroup / device scope (shader_svc/lower/clock.py); each clock enabled where present,
        # "shader_clock" reported (features()) only where the device has both.
        self.shader_clocks: set[str] = set()
        if "VK_KHR_shader_clock" in have_exts:
            qc = vk.VkPhysicalDeviceShaderClockFeaturesKHR()
            vk.vkGetPhysicalDeviceFeatures2(self.pd, vk.VkPhysicalDeviceFeatures2(pNext=qc))
            self.shader_clocks = {name for name in ("shaderSubgroupClock", "shaderDeviceClock") if getattr(qc, name)}
        if self.shader_clocks:
            f12 = vk.VkPhysicalDeviceShaderClockFeaturesKHR(pNext=f12, **{name: vk.VK_TRUE for name in self.shader_clocks})
        f13 = vk.VkPhysicalDeviceVulkan13Features(pNext=f12, dynamicRendering=vk.VK_TRUE)
        # Compressed formats may only be used with their feature enabled; enable what exists.
        self.compression = {name for name in ("textureCompressionBC", "textureCompressionASTC_LDR") if getattr(have, name)}
        # Raster state: line polygon mode and a clamped depth bias where the device has them.
        self.raster_features = {name for name in ("fillModeNonSolid", "depthBiasClamp") if getattr(have, name)}
        # Cube-array views and textureGatherOffset with non-constant offsets, where present.
        self.image_features = {name for name in ("imageCubeArray", "shaderImageGatherExtended") if getattr(have, name)}
        # Different blend states per colour target (MRT) where the device has it.
        self.independent_blend = bool(have.independentBlend)
        self.int64 = bool(have.shaderInt64)
        self.geometry_shader = bool(geometry_shader and have.geometryShader)  # gfx-geom (lavapipe, NVIDIA have it)
        # shader-tex: several viewports (a geometry stage's ViewportIndex) where the device has them:
        # Maxwell's 16, or the device's maxViewports if fewer; 1 without multiViewport
        self.multi_viewport = bool(self.geometry_shader and have.multiViewport)
        self.viewports = min(VIEWPORTS, self.limits.maxViewports) if self.multi_viewport else 1
        feats = vk.VkPhysicalDeviceFeatures(
            geometryShader=vk.VK_TRUE if self.geometry_shader else vk.VK_FALSE,
            multiViewport=vk.VK_TRUE if self.multi_viewport else vk.VK_FALSE,
            robustBufferAccess=vk.VK_TRUE,
            shaderInt64=have.shaderInt64,
            independentBlend=have.independentBlend,
            shaderSampledImageArrayDynamicIndexing=vk.VK_TRUE if self.descriptor_indexing else vk.VK_FALSE,
            **{name: vk.VK_TRUE for name in self.compression | self.raster_features | self.image_features},
        )
        exts = ["VK_KHR_push_descriptor", *device_extensions, *(gpl_exts if self.pipeline_library else [])]
        exts += ["VK_KHR_shader_clock"] if self.shader_clocks else []
        self.device = vk.vkCreateDevice(
            self.pd,
            vk.VkDeviceCreateInfo(
                pNext=f13,
                queueCreateInfoCount=1,
                pQueueCreateInfos=[qinfo],
                pEnabledFeatures=feats,
                enabledExtensionCount=len(exts),
                ppEnabledExtensionNames=exts,
            ),
            None,
        )
        self.queue = vk.vkGetDeviceQueue(self.device, self.qfam, 0)
        self.cmd_pool = vk.vkCreateCommandPool(
            self.device,
            vk.VkCommandPoolCreateInfo(flags=vk.VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT, queueFamilyIndex=self.qfam),
            None,
        )
        self.mem_props = vk.vkGetPhysicalDeviceMemoryProperties(self.pd)
        self.push_descriptor = vk.vkGetDeviceProcAddr(self.device, "vkCmdPushDescriptorSetKHR")
        self.fence = vk.vkCreateFence(self.device, vk.VkFenceCreateInfo(), None)
        log.info("vulkan device %s", self.name)

    def features(self) -> list[str]:
        """What a shader translation may use on this device (gpu.proto AttachReply.features)."""
        return (
            (["descriptor_indexing"] if self.descriptor_indexing else [])
            + (["int64_atomics"] if self.int64 and len(self.int64_atomics) == 2 else [])
            + (["shader_clock"] if len(self.shader_clocks) == 2 else [])
            + (["denorm_preserve32"] if self.denorm_preserve32 else [])
            + (["geometry_shader"] if self.geometry_shader else [])
        )

    def enabled_features(self) -> set[str]:
        """The names of the optional features this device was created with (those chosen by what
        the physical device has), for checks and logs."""
        out = set(self.compression | self.raster_features | self.image_features | self.int64_atomics | self.shader_clocks)
        out |= {"shaderInt64"} if self.int64 else set()
        out |= {"independentBlend"} if self.independent_blend else set()
        out |= {"shaderSampledImageArrayNonUniformIndexing"} if self.descriptor_indexing else set()
        out |= {"graphicsPipelineLibrary"} if self.pipeline_library else set()
        out |= {"multiViewport"} if self.multi_viewport else set()
        return out

    # -- memory ----------------------------------------------------------------
    def _mem_type(self, bits: int, want: int) -> int:
        for i in range(self.mem_props.memoryTypeCount):
            if bits & (1 << i) and (self.mem_props.memoryTypes[i].propertyFlags & want) == want:
                return i
        raise VulkanUnavailable(f"no memory type with flags {want:#x}")

    def buffer(self, size: int, usage: int, host: bool = True) -> Buffer:
        h = vk.vkCreateBuffer(
            self.device, vk.VkBufferCreateInfo(size=size, usage=usage, sharingMode=vk.VK_SHARING_MODE_EXCLUSIVE), None
        )
        req = vk.vkGetBufferMemoryRequirements(self.device, h)
        flags = (
            (vk.VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | vk.VK_MEMORY_PROPERTY_HOST_COHERENT_BIT)
            if host
            else vk.VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT
        )
        # a buffer with a device address (gpu_host/compute.py) needs memory allocated for one
        dev_addr = vk.VkMemoryAllocateFlagsInfo(flags=MEMORY_ALLOCATE_DEVICE_ADDRESS) if usage & BUFFER_DEVICE_ADDRESS else None
        mem = vk.vkAllocateMemory(
            self.device,
            vk.VkMemoryAllocateInfo(
                pNext=dev_addr, allocationSize=req.size, memoryTypeIndex=self._mem_type(req.memoryTypeBits, flags)
            ),
            None,
        )
        vk.vkBindBufferMemory(self.device, h, mem, 0)
        mapped = vk.vkMapMemory(self.device, mem, 0, size, 0) if host else None
        return Buffer(h, mem, size, mapped)

    def free_buffer(self, b: Buffer) -> None:
        if b.mapped is not None:
            vk.vkUnmapMemory(self.device, b.memory)
        vk.vkDestroyBuffer(self.device, b.handle, None)
        vk.vkFreeMemory(self.device, b.memory, None)

    def image(
        self,
        width: int,
        height: int,
        vk_format: int,
        usage: int,
        aspect: int = vk.VK_IMAGE_ASPECT_COLOR_BIT,
        layers: int = 1,
        cube: bool = False,
        samples: int = 1,
        depth: int = 0,
        one_dim: bool = False,
        array: bool = False,
    ) -> Image:
        """A 2D image in GENERAL layout (``depth`` > 0: a 3D one of that many slices, view 3D;
        ``one_dim``: a 1D one, ``height`` 1, view 1D or, with ``layers`` > 1, 1D_ARRAY).  ``aspect``: its format's aspects (depth, depth | stencil);
        a depth image also gets a view of its depth aspect alone, which is what shaders sample.
        ``layers``/``cube``: an array (view 2D_ARRAY) or cubes (view CUBE for 6 layers, else
        CUBE_ARRAY); ``array``: a 2D_ARRAY view even of one layer (shader-tex: the 2D array pool's
        one-layer dummy, whose layer count a kernel's TXQ reads)."""
        h = vk.vkCreateImage(
            self.device,
            vk.VkImageCreateInfo(
                flags=vk.VK_IMAGE_CREATE_CUBE_COMPATIBLE_BIT if cube else 0,
                imageType=vk.VK_IMAGE_TYPE_3D if depth else vk.VK_IMAGE_TYPE_1D if one_dim else vk.VK_IMAGE_TYPE_2D,
                format=vk_format,
                extent=vk.VkExtent3D(width=width, height=height, depth=max(1, depth)),
                mipLevels=1,
                arrayLayers=layers,
                samples=samples,
                tiling=vk.VK_IMAGE_TILING_OPTIMAL,
                usage=usage,
                sharingMode=vk.VK_SHARING_MODE_EXCLUSIVE,
                initialLayout=vk.VK_IMAGE_LAYOUT_UNDEFINED,
            ),
            None,
        )
        req = vk.vkGetImageMemoryRequirements(self.device, h)
        mem = vk.vkAllocateMemory(
            self.device,
            vk.VkMemoryAllocateInfo(
                allocationSize=req.size,
                memoryTypeIndex=self._mem_type(req.memoryTypeBits, vk.VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT),
            ),
            None,
        )
        vk.vkBindImageMemory(self.device, h, mem, 0)
        full = _range(aspect, layers)
        view_type = (
            vk.VK_IMAGE_VIEW_TYPE_3D
            if depth
            else (vk.VK_IMAGE_VIEW_TYPE_1D if layers == 1 else vk.VK_IMAGE_VIEW_TYPE_1D_ARRAY)
            if one_dim
            else (vk.VK_IMAGE_VIEW_TYPE_CUBE if layers == 6 else vk.VK_IMAGE_VIEW_TYPE_CUBE_ARRAY)
            if cube
            else vk.VK_IMAGE_VIEW_TYPE_2D
            if layers == 1 and not array
            else vk.VK_IMAGE_VIEW_TYPE_2D_ARRAY
        )
        view = vk.vkCreateImageView(
            self.device, vk.VkImageViewCreateInfo(image=h, viewType=view_type, format=vk_format, subresourceRange=full), None
        )
        sample_view = view
        if aspect & vk.VK_IMAGE_ASPECT_DEPTH_BIT and aspect != vk.VK_IMAGE_ASPECT_DEPTH_BIT:
            sample_view = vk.vkCreateImageView(
                self.device,
                vk.VkImageViewCreateInfo(
                    image=h,
                    viewType=vk.VK_IMAGE_VIEW_TYPE_2D,
                    format=vk_format,
                    subresourceRange=_range(vk.VK_IMAGE_ASPECT_DEPTH_BIT),
                ),
                None,
            )
        img = Image(h, mem, view, width, height, vk_format, aspect, sample_view, samples)
        # Every image lives in GENERAL layout: valid for attachment, sampling and copies alike.
        cb = self.begin_once()
        vk.vkCmdPipelineBarrier(
            cb,
            vk.VK_PIPELINE_STAGE_TOP_OF_PIPE_BIT,
            vk.VK_PIPELINE_STAGE_ALL_COMMANDS_BIT,
            0,
            0,
            None,
            0,
            None,
            1,
            [
                vk.VkImageMemoryBarrier(
                    srcAccessMask=0,
                    dstAccessMask=vk.VK_ACCESS_MEMORY_WRITE_BIT,
                    oldLayout=vk.VK_IMAGE_LAYOUT_UNDEFINED,
                    newLayout=vk.VK_IMAGE_LAYOUT_GENERAL,
                    srcQueueFamilyIndex=vk.VK_QUEUE_FAMILY_IGNORED,
                    dstQueueFamilyIndex=vk.VK_QUEUE_FAMILY_IGNORED,
                    image=h,
                    subresourceRange=full,
                )
            ],
        )
        # Zeroed, not left undefined: a texture slot a shader reads with nothing bound samples a
        # dummy image, and a target drawn before any CLEAR keeps what was there; both must not
        # depend on the driver's recycled memory (frames equal run to run, native and Python).
        # (Block-compressed formats cannot be cleared, VkFormat 131-184 BC/ETC2/EAC/ASTC and the ASTC
        # HDR extension's; their bytes always come from the pool before any use.)
        compressed = 131 <= vk_format <= 184 or 1000066000 <= vk_format <= 1000066013
        if usage & vk.VK_IMAGE_USAGE_TRANSFER_DST_BIT and not compressed:
            vk.vkCmdPipelineBarrier(
                cb,
                vk.VK_PIPELINE_STAGE_ALL_COMMANDS_BIT,
                vk.VK_PIPELINE_STAGE_ALL_COMMANDS_BIT,
                0,
                1,
                [vk.VkMemoryBarrier(srcAccessMask=vk.VK_ACCESS_MEMORY_WRITE_BIT, dstAccessMask=vk.VK_ACCESS_MEMORY_WRITE_BIT)],
                0,
                None,
                0,
                None,
            )
            if aspect & vk.VK_IMAGE_ASPECT_COLOR_BIT:
                vk.vkCmdClearColorImage(
                    cb, h, vk.VK_IMAGE_LAYOUT_GENERAL, vk.VkClearColorValue(float32=[0.0, 0.0, 0.0, 0.0]), 1, [full]
                )
            else:
                vk.vkCmdClearDepthStencilImage(
                    cb, h, vk.VK_IMAGE_LAYOUT_GENERAL, vk.VkClearDepthStencilValue(depth=0.0, stencil=0), 1, [full]
                )
        self.end_once(cb)
        return img

    def free_image(self, img: Image) -> None:
        if img.sample_view is not img.view:
            vk.vkDestroyImageView(self.device, img.sample_view, None)
        vk.vkDestroyImageView(self.device, img.view, None)
        vk.vkDestroyImage(self.device, img.handle, None)
        vk.vkFreeMemory(self.device, img.memory, None)

    def format_supported(self, vk_format: int, features: int) -> bool:
        p = vk.vkGetPhysicalDeviceFormatProperties(self.pd, vk_format)
        return (p.optimalTilingFeatures & features) == features

    # -- commands --------------------------------------------------------------
    def command_buffer(self) -> Any:
        return vk.vkAllocateCommandBuffers(
            self.device,
            vk.VkCommandBufferAllocateInfo(
                commandPool=self.cmd_pool, level=vk.VK_COMMAND_BUFFER_LEVEL_PRIMARY, commandBufferCount=1
            ),
        )[0]

    def begin_once(self) -> Any:
        cb = self.command_buffer()
        vk.vkBeginCommandBuffer(cb, vk.VkCommandBufferBeginInfo(flags=vk.VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT))
        return cb

    def end_once(self, cb: Any) -> None:
        vk.vkEndCommandBuffer(cb)
        self.submit_wait(cb)
        vk.vkFreeCommandBuffers(self.device, self.cmd_pool, 1, [cb])

    def submit_wait(self, cb: Any) -> None:
        vk.vkQueueSubmit(self.queue, 1, [vk.VkSubmitInfo(commandBufferCount=1, pCommandBuffers=[cb])], self.fence)
        # lavapipe compiles a pipeline's shaders at its first draw: a bindless program's switch
        # (64 sample instructions per TEX.B) took over 10 s on a loaded 2-core machine
        vk.vkWaitForFences(self.device, 1, [self.fence], vk.VK_TRUE, FENCE_TIMEOUT_NS)
        vk.vkResetFences(self.device, 1, [self.fence])

    def shader_module(self, code: bytes) -> Any:
        return vk.vkCreateShaderModule(self.device, vk.VkShaderModuleCreateInfo(codeSize=len(code), pCode=code), None)

    def set_layout(self, bindings: Sequence[tuple[int, int, int]], stages: int, flags: int = 0) -> Any:
        """A descriptor set layout from (binding, descriptor type, count) rows, every one seen
        by ``stages``."""
        return vk.vkCreateDescriptorSetLayout(
            self.device,
            vk.VkDescriptorSetLayoutCreateInfo(
                flags=flags,
                bindingCount=len(bindings),
                pBindings=[
                    vk.VkDescriptorSetLayoutBinding(binding=b, descriptorType=t, descriptorCount=n, stageFlags=stages)
                    for b, t, n in bindings
                ],
            ),
            None,
        )

    def close(self) -> None:
        vk.vkDeviceWaitIdle(self.device)
        vk.vkDestroyFence(self.device, self.fence, None)
        vk.vkDestroyCommandPool(self.device, self.cmd_pool, None)
        vk.vkDestroyDevice(self.device, None)
        vk.vkDestroyInstance(self.instance, None)


def _range(aspect: int, layers: int = 1) -> Any:
    return vk.VkImageSubresourceRange(aspectMask=aspect, baseMipLevel=0, levelCount=1, baseArrayLayer=0, layerCount=layers)


COLOR_RANGE = vk.VkImageSubresourceRange(
    aspectMask=vk.VK_IMAGE_ASPECT_COLOR_BIT, baseMipLevel=0, levelCount=1, baseArrayLayer=0, layerCount=1
)
COLOR_LAYERS = vk.VkImageSubresourceLayers(aspectMask=vk.VK_IMAGE_ASPECT_COLOR_BIT, mipLevel=0, baseArrayLayer=0, layerCount=1)


def full_barrier(cb: Any, image_barriers: list | None = None) -> None:
    """Every earlier write made visible to every later access (a draw, a copy, a dispatch);
    ``image_barriers`` (VkImageMemoryBarrier records) ride along, e.g. for a layout change.
    Simple, and correct for render-to-texture, uploads and readback."""
    vk.vkCmdPipelineBarrier(
        cb,
        vk.VK_PIPELINE_STAGE_ALL_COMMANDS_BIT,
        vk.VK_PIPELINE_STAGE_ALL_COMMANDS_BIT,
        0,
        1,
        [
            vk.VkMemoryBarrier(
                srcAccessMask=vk.VK_ACCESS_MEMORY_WRITE_BIT,
                dstAccessMask=vk.VK_ACCESS_MEMORY_READ_BIT | vk.VK_ACCESS_MEMORY_WRITE_BIT,
            )
        ],
        0,
        None,
        len(image_barriers) if image_barriers else 0,
        image_barriers or None,
    )
