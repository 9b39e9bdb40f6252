"""Run a translated compute shader on a real Vulkan device (lavapipe on CI) through the
``vulkan`` binding: used to check translations against a numpy reference.

Buffers are host-visible and have device addresses (bufferDeviceAddress): their addresses are
written into the constant bank image, as the NVIDIA driver writes kernel parameters.  Memory,
images, barriers and copy regions are ``VkResources``' (vk_graphics_base.py, the graphics
harness's), which also owns every handle made here until ``close``.
"""

from __future__ import annotations

from dataclasses import dataclass

import vulkan as vk
from vk_graphics_base import COLOR, VkResources

from nxrecomp.common.errors import NxError
from shader_svc.sm86.cbank import SHARED_WINDOW, cbank0  # noqa: F401  (the SM86 layout the harness writes)

# Vulkan 1.2 core values the binding (1.3.275.1) leaves as None.
BUFFER_USAGE_SHADER_DEVICE_ADDRESS = 0x00020000
MEMORY_ALLOCATE_DEVICE_ADDRESS = 0x00000002


@dataclass
class Image:
    """A 2D R32_UINT storage image of the surface pool (``shader_svc/lower/surface.py``) and the
    host-visible buffer its texels go through (uploaded before a dispatch, read back after)."""

    handle: object
    view: object
    kind: str  # 1D, 1D_ARRAY, 2D, 2D_ARRAY, 3D
    extent: tuple[int, int, int]  # width, height, depth
    layers: int
    staging: "Buffer"

    @property
    def nbytes(self) -> int:
        return self.extent[0] * self.extent[1] * self.extent[2] * self.layers * 4


@dataclass
class Buffer:
    handle: object
    memory: object
    size: int
    address: int = 0


class ComputeDevice(VkResources):
    def __init__(self) -> None:
        self._owned: list[tuple] = []  # (destroy function, handle), destroyed in reverse
        app = vk.VkApplicationInfo(pApplicationName="nxrecomp-shader", apiVersion=vk.VK_MAKE_VERSION(1, 2, 0))
        self.instance = vk.vkCreateInstance(vk.VkInstanceCreateInfo(pApplicationInfo=app), None)
        phys = vk.vkEnumeratePhysicalDevices(self.instance)
        if not phys:
            raise NxError("no Vulkan device")
        self.phys = phys[0]
        fams = vk.vkGetPhysicalDeviceQueueFamilyProperties(self.phys)
        self.qfam = next(i for i, f in enumerate(fams) if f.queueFlags & vk.VK_QUEUE_COMPUTE_BIT)
        qinfo = vk.VkDeviceQueueCreateInfo(queueFamilyIndex=self.qfam, queueCount=1, pQueuePriorities=[1.0])
        # 64-bit atomics (kernels with a 64-bit atomic declare Int64Atomics): enabled where the
        # device has them (lavapipe does)
        have = vk.VkPhysicalDeviceVulkan12Features()
        vk.vkGetPhysicalDeviceFeatures2(self.phys, vk.VkPhysicalDeviceFeatures2(pNext=have))
        f12 = vk.VkPhysicalDeviceVulkan12Features(
            bufferDeviceAddress=vk.VK_TRUE,
            shaderBufferInt64Atomics=have.shaderBufferInt64Atomics,
            shaderSharedInt64Atomics=have.shaderSharedInt64Atomics,
        )
        # shader-ctl2: VK_KHR_shader_clock's two clocks where the device has them (the
        # translation's shader_clock feature: lower/clock.py)
        exts = [e.extensionName for e in vk.vkEnumerateDeviceExtensionProperties(self.phys, None)]
        self.shader_clock = "VK_KHR_shader_clock" in exts
        nxt = f12
        if self.shader_clock:
            clk = vk.VkPhysicalDeviceShaderClockFeaturesKHR()
            vk.vkGetPhysicalDeviceFeatures2(self.phys, vk.VkPhysicalDeviceFeatures2(pNext=clk))
            self.shader_clock = bool(clk.shaderSubgroupClock and clk.shaderDeviceClock)
        if self.shader_clock:
            nxt = vk.VkPhysicalDeviceShaderClockFeaturesKHR(
                pNext=f12, shaderSubgroupClock=vk.VK_TRUE, shaderDeviceClock=vk.VK_TRUE
            )
        # shader-nv: f32 denormals kept where the module asks (DenormPreserve 32, the
        # translation's denorm_preserve32 feature: lower/base.py); a property, nothing to enable
        p12 = vk.VkPhysicalDeviceVulkan12Properties()
        vk.vkGetPhysicalDeviceProperties2(self.phys, vk.VkPhysicalDeviceProperties2(pNext=p12))
        self.denorm_preserve32 = bool(p12.shaderDenormPreserveFloat32)
        # shader-ndv: imageCubeArray (the cube array pool of texCubemapLayeredGrad's kernels) where
        # the device has it (lavapipe does)
        cube_array = vk.vkGetPhysicalDeviceFeatures(self.phys).imageCubeArray
        feats = vk.VkPhysicalDeviceFeatures2(
            pNext=nxt,
            features=vk.VkPhysicalDeviceFeatures(shaderInt64=vk.VK_TRUE, shaderFloat64=vk.VK_TRUE, imageCubeArray=cube_array),
        )
        info = vk.VkDeviceCreateInfo(pNext=feats, queueCreateInfoCount=1, pQueueCreateInfos=[qinfo])
        if self.shader_clock:
            info = vk.VkDeviceCreateInfo(
                pNext=feats,
                queueCreateInfoCount=1,
                pQueueCreateInfos=[qinfo],
                enabledExtensionCount=1,
                ppEnabledExtensionNames=["VK_KHR_shader_clock"],
            )
        self.device = vk.vkCreateDevice(self.phys, info, None)
        self.queue = vk.vkGetDeviceQueue(self.device, self.qfam, 0)
        self.mem_props = vk.vkGetPhysicalDeviceMemoryProperties(self.phys)
        # The binding's wrapper returns its argument instead of the address: call the loader.
        from vulkan._vulkan import lib as _lib

        self._addr = _lib.vkGetBufferDeviceAddress

    def name(self) -> str:
        return vk.vkGetPhysicalDeviceProperties(self.phys).deviceName

    def buffer(self, size: int) -> Buffer:
        size = max(size, 16)
        usage = vk.VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | BUFFER_USAGE_SHADER_DEVICE_ADDRESS
        h = self._own(
            vk.vkDestroyBuffer,
            vk.vkCreateBuffer(
                self.device, vk.VkBufferCreateInfo(size=size, usage=usage, sharingMode=vk.VK_SHARING_MODE_EXCLUSIVE), None
            ),
        )
        mem = self._memory(vk.vkGetBufferMemoryRequirements(self.device, h), host=True, flags=MEMORY_ALLOCATE_DEVICE_ADDRESS)
        vk.vkBindBufferMemory(self.device, h, mem, 0)
        b = Buffer(h, mem, size)
        info = vk.ffi.new("VkBufferDeviceAddressInfo*", {"sType": vk.VK_STRUCTURE_TYPE_BUFFER_DEVICE_ADDRESS_INFO, "buffer": h})
        b.address = int(self._addr(self.device, info))
        if not b.address:
            raise NxError("vkGetBufferDeviceAddress returned 0")
        return b

    def image(self, kind: str, texels) -> Image:
        """A storage image of 32-bit texels of ``kind`` (its numpy array's shape: 1D (w,),
        1D_ARRAY (layers, w), 2D (h, w), 2D_ARRAY (layers, h, w), 3D (d, h, w)), uploaded at
        the next dispatch that binds it; ``read_image`` after it."""
        import numpy as np

        t = np.ascontiguousarray(texels, np.uint32)
        sh = t.shape
        w, h, depth, layers = {
            "1D": lambda: (sh[0], 1, 1, 1),
            "1D_ARRAY": lambda: (sh[1], 1, 1, sh[0]),
            "2D": lambda: (sh[1], sh[0], 1, 1),
            "2D_ARRAY": lambda: (sh[2], sh[1], 1, sh[0]),
            "3D": lambda: (sh[2], sh[1], sh[0], 1),
        }[kind]()
        itype = {"1D": vk.VK_IMAGE_TYPE_1D, "3D": vk.VK_IMAGE_TYPE_3D}.get(kind.split("_")[0], vk.VK_IMAGE_TYPE_2D)
        vtype = {
            "1D": vk.VK_IMAGE_VIEW_TYPE_1D,
            "1D_ARRAY": vk.VK_IMAGE_VIEW_TYPE_1D_ARRAY,
            "2D": vk.VK_IMAGE_VIEW_TYPE_2D,
            "2D_ARRAY": vk.VK_IMAGE_VIEW_TYPE_2D_ARRAY,
            "3D": vk.VK_IMAGE_VIEW_TYPE_3D,
        }[kind]
        usage = vk.VK_IMAGE_USAGE_STORAGE_BIT | vk.VK_IMAGE_USAGE_TRANSFER_SRC_BIT | vk.VK_IMAGE_USAGE_TRANSFER_DST_BIT
        img, view = self._image(w, h, usage, vk.VK_FORMAT_R32_UINT, COLOR, depth, layers, itype, vtype)
        im = Image(img, view, kind, (w, h, depth), layers, self.buffer(t.nbytes))
        self.write(im.staging, t.tobytes())
        return im

    def read_image(self, im: Image) -> bytes:
        return self.read(im.staging)[: im.nbytes]

    def write(self, b: Buffer, data: bytes) -> None:
        self._write(b, data)

    def read(self, b: Buffer) -> bytes:
        return self._read(b)

    def dispatch(
        self, spirv: bytes, cbank: Buffer, groups: tuple[int, int, int], surfaces: list[Image] | None = None, textures=None
    ) -> None:
        """One dispatch; with ``surfaces``, the surface pools (set 1, one binding per kind:
        ``shader_svc/lower/surface.py``) are bound, ``surfaces[k]`` as entry k of its kind's
        pool (every other entry a one-texel image), uploaded before and read back after."""
        d = self.device
        mod = vk.vkCreateShaderModule(d, vk.VkShaderModuleCreateInfo(codeSize=len(spirv), pCode=spirv), None)
        binding = vk.VkDescriptorSetLayoutBinding(
            binding=0,
            descriptorType=vk.VK_DESCRIPTOR_TYPE_STORAGE_BUFFER,
            descriptorCount=1,
            stageFlags=vk.VK_SHADER_STAGE_COMPUTE_BIT,
        )
        dsl = vk.vkCreateDescriptorSetLayout(d, vk.VkDescriptorSetLayoutCreateInfo(bindingCount=1, pBindings=[binding]), None)
        if surfaces is not None or textures is not None:  # textures: compute_textures.TexturePools
            self._dispatch_surfaces(mod, dsl, cbank, groups, surfaces or [], textures)
            return
        layout = vk.vkCreatePipelineLayout(d, vk.VkPipelineLayoutCreateInfo(setLayoutCount=1, pSetLayouts=[dsl]), None)
        stage = vk.VkPipelineShaderStageCreateInfo(stage=vk.VK_SHADER_STAGE_COMPUTE_BIT, module=mod, pName="main")
        pipe = vk.vkCreateComputePipelines(d, None, 1, [vk.VkComputePipelineCreateInfo(stage=stage, layout=layout)], None)[0]
        pool = vk.vkCreateDescriptorPool(
            d,
            vk.VkDescriptorPoolCreateInfo(
                maxSets=1,
                poolSizeCount=1,
                pPoolSizes=[vk.VkDescriptorPoolSize(type=vk.VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, descriptorCount=1)],
            ),
            None,
        )
        ds = vk.vkAllocateDescriptorSets(
            d, vk.VkDescriptorSetAllocateInfo(descriptorPool=pool, descriptorSetCount=1, pSetLayouts=[dsl])
        )[0]
        info = vk.VkDescriptorBufferInfo(buffer=cbank.handle, offset=0, range=cbank.size)
        vk.vkUpdateDescriptorSets(
            d,
            1,
            [
                vk.VkWriteDescriptorSet(
                    dstSet=ds,
                    dstBinding=0,
                    descriptorCount=1,
                    descriptorType=vk.VK_DESCRIPTOR_TYPE_STORAGE_BUFFER,
                    pBufferInfo=[info],
                )
            ],
            0,
            None,
        )
        cpool = vk.vkCreateCommandPool(d, vk.VkCommandPoolCreateInfo(queueFamilyIndex=self.qfam), None)
        cb = vk.vkAllocateCommandBuffers(
            d, vk.VkCommandBufferAllocateInfo(commandPool=cpool, level=vk.VK_COMMAND_BUFFER_LEVEL_PRIMARY, commandBufferCount=1)
        )[0]
        vk.vkBeginCommandBuffer(cb, vk.VkCommandBufferBeginInfo())
        vk.vkCmdBindPipeline(cb, vk.VK_PIPELINE_BIND_POINT_COMPUTE, pipe)
        vk.vkCmdBindDescriptorSets(cb, vk.VK_PIPELINE_BIND_POINT_COMPUTE, layout, 0, 1, [ds], 0, None)
        vk.vkCmdDispatch(cb, *groups)
        vk.vkEndCommandBuffer(cb)
        fence = vk.vkCreateFence(d, vk.VkFenceCreateInfo(), None)
        vk.vkQueueSubmit(self.queue, 1, [vk.VkSubmitInfo(commandBufferCount=1, pCommandBuffers=[cb])], fence)
        vk.vkWaitForFences(d, 1, [fence], vk.VK_TRUE, 120 * 10**9)  # lavapipe on a loaded CI machine
        vk.vkDestroyFence(d, fence, None)
        vk.vkDestroyCommandPool(d, cpool, None)
        vk.vkDestroyDescriptorPool(d, pool, None)
        vk.vkDestroyPipeline(d, pipe, None)
        vk.vkDestroyPipelineLayout(d, layout, None)
        vk.vkDestroyDescriptorSetLayout(d, dsl, None)
        vk.vkDestroyShaderModule(d, mod, None)

    def _dispatch_surfaces(
        self, mod, dsl0, cbank: Buffer, groups: tuple[int, int, int], surfaces: list[Image], textures=None
    ) -> None:
        import numpy as np

        from shader_svc.lower.surface import BINDINGS, KINDS, SURFACE_POOL

        d = self.device
        one = {"1D": (1,), "1D_ARRAY": (1, 1), "2D": (1, 1), "2D_ARRAY": (1, 1, 1), "3D": (1, 1, 1)}
        dummies = self.__dict__.setdefault("_dummy_images", {})  # kind -> one texel, reused
        pools = {}  # kind -> its SURFACE_POOL images
        for kind in KINDS.values():
            if kind not in dummies:
                dummies[kind] = self.image(kind, np.zeros(one[kind], np.uint32))
            pools[kind] = [
                surfaces[k] if k < len(surfaces) and surfaces[k].kind == kind else dummies[kind] for k in range(SURFACE_POOL)
            ]
        pool_imgs = list({id(im): im for ims in pools.values() for im in ims}.values())  # each image once
        b1 = [
            vk.VkDescriptorSetLayoutBinding(
                binding=BINDINGS[dim],
                descriptorType=vk.VK_DESCRIPTOR_TYPE_STORAGE_IMAGE,
                descriptorCount=SURFACE_POOL,
                stageFlags=vk.VK_SHADER_STAGE_COMPUTE_BIT,
            )
            for dim in KINDS
        ] + (textures.bindings() if textures else [])
        dsl1 = vk.vkCreateDescriptorSetLayout(d, vk.VkDescriptorSetLayoutCreateInfo(bindingCount=len(b1), pBindings=b1), None)
        layout = vk.vkCreatePipelineLayout(d, vk.VkPipelineLayoutCreateInfo(setLayoutCount=2, pSetLayouts=[dsl0, dsl1]), None)
        stage = vk.VkPipelineShaderStageCreateInfo(stage=vk.VK_SHADER_STAGE_COMPUTE_BIT, module=mod, pName="main")
        pipe = vk.vkCreateComputePipelines(d, None, 1, [vk.VkComputePipelineCreateInfo(stage=stage, layout=layout)], None)[0]
        pool = vk.vkCreateDescriptorPool(
            d,
            vk.VkDescriptorPoolCreateInfo(
                maxSets=2,
                poolSizeCount=4 if textures else 2,
                pPoolSizes=[
                    vk.VkDescriptorPoolSize(type=vk.VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, descriptorCount=1),
                    vk.VkDescriptorPoolSize(type=vk.VK_DESCRIPTOR_TYPE_STORAGE_IMAGE, descriptorCount=SURFACE_POOL * len(KINDS)),
                ]
                + (textures.pool_sizes() if textures else []),
            ),
            None,
        )
        ds0, ds1 = vk.vkAllocateDescriptorSets(
            d, vk.VkDescriptorSetAllocateInfo(descriptorPool=pool, descriptorSetCount=2, pSetLayouts=[dsl0, dsl1])
        )
        general = vk.VK_IMAGE_LAYOUT_GENERAL
        writes = [
            vk.VkWriteDescriptorSet(
                dstSet=ds1,
                dstBinding=BINDINGS[dim],
                descriptorCount=SURFACE_POOL,
                descriptorType=vk.VK_DESCRIPTOR_TYPE_STORAGE_IMAGE,
                pImageInfo=[vk.VkDescriptorImageInfo(imageView=im.view, imageLayout=general) for im in pools[kind]],
            )
            for dim, kind in KINDS.items()
        ] + (textures.writes(ds1) if textures else [])
        vk.vkUpdateDescriptorSets(
            d,
            1 + len(writes),
            [
                vk.VkWriteDescriptorSet(
                    dstSet=ds0,
                    dstBinding=0,
                    descriptorCount=1,
                    descriptorType=vk.VK_DESCRIPTOR_TYPE_STORAGE_BUFFER,
                    pBufferInfo=[vk.VkDescriptorBufferInfo(buffer=cbank.handle, offset=0, range=cbank.size)],
                ),
            ]
            + writes,
            0,
            None,
        )
        cpool = vk.vkCreateCommandPool(d, vk.VkCommandPoolCreateInfo(queueFamilyIndex=self.qfam), None)
        cb = vk.vkAllocateCommandBuffers(
            d, vk.VkCommandBufferAllocateInfo(commandPool=cpool, level=vk.VK_COMMAND_BUFFER_LEVEL_PRIMARY, commandBufferCount=1)
        )[0]

        all_cmds = vk.VK_PIPELINE_STAGE_ALL_COMMANDS_BIT
        rw = vk.VK_ACCESS_MEMORY_READ_BIT | vk.VK_ACCESS_MEMORY_WRITE_BIT

        def barrier(im: Image, old: int) -> None:
            self._barrier(cb, im.handle, old, general, all_cmds, all_cmds, rw, rw, COLOR, im.layers)

        def region(im: Image):
            return self._region(COLOR, *im.extent, im.layers)

        vk.vkBeginCommandBuffer(cb, vk.VkCommandBufferBeginInfo())
        for im in pool_imgs:
            barrier(im, vk.VK_IMAGE_LAYOUT_UNDEFINED)
            vk.vkCmdCopyBufferToImage(cb, im.staging.handle, im.handle, general, 1, [region(im)])
            barrier(im, general)
        if textures:
            textures.record_upload(cb)
        vk.vkCmdBindPipeline(cb, vk.VK_PIPELINE_BIND_POINT_COMPUTE, pipe)
        vk.vkCmdBindDescriptorSets(cb, vk.VK_PIPELINE_BIND_POINT_COMPUTE, layout, 0, 2, [ds0, ds1], 0, None)
        vk.vkCmdDispatch(cb, *groups)
        for im in pool_imgs:
            barrier(im, general)
            vk.vkCmdCopyImageToBuffer(cb, im.handle, general, im.staging.handle, 1, [region(im)])
        mb = vk.VkMemoryBarrier(srcAccessMask=rw, dstAccessMask=vk.VK_ACCESS_HOST_READ_BIT)
        vk.vkCmdPipelineBarrier(cb, all_cmds, vk.VK_PIPELINE_STAGE_HOST_BIT, 0, 1, [mb], 0, None, 0, None)
        vk.vkEndCommandBuffer(cb)
        fence = vk.vkCreateFence(d, vk.VkFenceCreateInfo(), None)
        vk.vkQueueSubmit(self.queue, 1, [vk.VkSubmitInfo(commandBufferCount=1, pCommandBuffers=[cb])], fence)
        vk.vkWaitForFences(d, 1, [fence], vk.VK_TRUE, 120 * 10**9)
        vk.vkDestroyFence(d, fence, None)
        vk.vkDestroyCommandPool(d, cpool, None)
        vk.vkDestroyDescriptorPool(d, pool, None)
        vk.vkDestroyPipeline(d, pipe, None)
        vk.vkDestroyPipelineLayout(d, layout, None)
        vk.vkDestroyDescriptorSetLayout(d, dsl1, None)
        vk.vkDestroyDescriptorSetLayout(d, dsl0, None)
        vk.vkDestroyShaderModule(d, mod, None)

    def close(self) -> None:
        vk.vkDeviceWaitIdle(self.device)
        for destroy, h in reversed(self._owned):
            destroy(self.device, h, None)
        self._owned.clear()
        vk.vkDestroyDevice(self.device, None)
        vk.vkDestroyInstance(self.instance, None)
