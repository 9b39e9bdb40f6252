"""Draw with a translated vertex + fragment program on a real Vulkan device (lavapipe on CI)
through the ``vulkan`` binding: used to check graphics translations against a numpy reference.

The descriptor layout is the GPU process's (set 0, bindings 0-3 uniform blocks, 4-7 combined
image samplers; an ordinary descriptor set here instead of push descriptors), so a program that
draws here binds the same way there.  One colour target, RGBA8 unorm; vertex attributes are
vec4 float (R32G32B32A32_SFLOAT) at location N, offset 16*N in one interleaved buffer.

Bindless textures: with ``pools`` a second descriptor set (set 1) holds the texture pool (binding
0, ``TEXTURE_POOL`` sampled images) and the sampler pool (binding 1, ``SAMPLER_POOL`` samplers),
as a program whose reflection says ``texture_pools`` expects them.
"""

from __future__ import annotations


import numpy as np
import vulkan as vk

from nxrecomp.common.errors import NxError
from vk_graphics_base import COLOR, COLOR_FORMAT, STAGES, Pools, Texture, _Buf  # noqa: F401 (the tests import them from here)
from vk_graphics_depth import DepthTarget
from vk_graphics_textures import TextureUploads


class GraphicsDevice(TextureUploads, DepthTarget):
    def __init__(self) -> None:
        app = vk.VkApplicationInfo(pApplicationName="nxrecomp-shader-gfx", apiVersion=vk.VK_MAKE_VERSION(1, 3, 0))
        self.instance = vk.vkCreateInstance(vk.VkInstanceCreateInfo(pApplicationInfo=app), None)
        phys = vk.vkEnumeratePhysicalDevices(self.instance)
        if not phys:
            raise NxError("no Vulkan device")
        self.phys = phys[0]
        fams = vk.vkGetPhysicalDeviceQueueFamilyProperties(self.phys)
        self.qfam = next(i for i, f in enumerate(fams) if f.queueFlags & vk.VK_QUEUE_GRAPHICS_BIT)
        qinfo = vk.VkDeviceQueueCreateInfo(queueFamilyIndex=self.qfam, queueCount=1, pQueuePriorities=[1.0])
        f13 = vk.VkPhysicalDeviceVulkan13Features(dynamicRendering=vk.VK_TRUE)
        # run-time gather offsets (TLD4 .AOFFI: ImageGatherExtended) and cube arrays where the
        # device has them (lavapipe and NVIDIA do)
        have = vk.vkGetPhysicalDeviceFeatures(self.phys)
        feats = vk.VkPhysicalDeviceFeatures(
            **{
                name: vk.VK_TRUE
                for name in ("shaderImageGatherExtended", "imageCubeArray", "geometryShader")
                if getattr(have, name)
            }
        )
        self.device = vk.vkCreateDevice(
            self.phys,
            vk.VkDeviceCreateInfo(pNext=f13, queueCreateInfoCount=1, pQueueCreateInfos=[qinfo], pEnabledFeatures=feats),
            None,
        )
        self.queue = vk.vkGetDeviceQueue(self.device, self.qfam, 0)
        self.mem_props = vk.vkGetPhysicalDeviceMemoryProperties(self.phys)
        self._owned: list[tuple] = []  # (destroy function, handle), destroyed in reverse
        bindings = [
            vk.VkDescriptorSetLayoutBinding(
                binding=b,
                descriptorType=vk.VK_DESCRIPTOR_TYPE_UNIFORM_BUFFER if b < 4 else vk.VK_DESCRIPTOR_TYPE_COMBINED_IMAGE_SAMPLER,
                descriptorCount=1,
                stageFlags=STAGES,
            )
            for b in range(8)
        ]
        self.set_layout = self._own(
            vk.vkDestroyDescriptorSetLayout,
            vk.vkCreateDescriptorSetLayout(
                self.device, vk.VkDescriptorSetLayoutCreateInfo(bindingCount=8, pBindings=bindings), None
            ),
        )
        self.layout = self._own(
            vk.vkDestroyPipelineLayout,
            vk.vkCreatePipelineLayout(
                self.device, vk.VkPipelineLayoutCreateInfo(setLayoutCount=1, pSetLayouts=[self.set_layout]), None
            ),
        )
        from shader_svc.sm86.to_spirv_gfx import SAMPLER_POOL, TEXTURE_POOL

        self.pool_sizes = (TEXTURE_POOL, SAMPLER_POOL)
        pool_bindings = [
            vk.VkDescriptorSetLayoutBinding(
                binding=0, descriptorType=vk.VK_DESCRIPTOR_TYPE_SAMPLED_IMAGE, descriptorCount=TEXTURE_POOL, stageFlags=STAGES
            ),
            vk.VkDescriptorSetLayoutBinding(
                binding=1, descriptorType=vk.VK_DESCRIPTOR_TYPE_SAMPLER, descriptorCount=SAMPLER_POOL, stageFlags=STAGES
            ),
        ]
        self.pool_layout = self._own(
            vk.vkDestroyDescriptorSetLayout,
            vk.vkCreateDescriptorSetLayout(
                self.device, vk.VkDescriptorSetLayoutCreateInfo(bindingCount=2, pBindings=pool_bindings), None
            ),
        )
        self.layout_pools = self._own(
            vk.vkDestroyPipelineLayout,
            vk.vkCreatePipelineLayout(
                self.device,
                vk.VkPipelineLayoutCreateInfo(setLayoutCount=2, pSetLayouts=[self.set_layout, self.pool_layout]),
                None,
            ),
        )

    def name(self) -> str:
        return vk.vkGetPhysicalDeviceProperties(self.phys).deviceName

    # --- drawing -----------------------------------------------------------------------------------
    def draw(
        self,
        vertex_spirv: bytes,
        fragment_spirv: bytes,
        vertices: np.ndarray,
        size: tuple[int, int],
        uniforms: dict[int, bytes] | None = None,
        textures: dict[int, Texture] | None = None,
        clear: tuple[float, float, float, float] = (0.0, 0.0, 0.0, 0.0),
        topology: int = vk.VK_PRIMITIVE_TOPOLOGY_TRIANGLE_LIST,
        pools: Pools | None = None,
        depth: bool = False,
        geometry_spirv: bytes | None = None,
    ):
        """Draw ``vertices`` (float32, (n, attributes, 4)) into a ``size`` = (w, h) target
        cleared to ``clear``; ``uniforms``: binding (0..3) -> bytes; ``textures``: slot (0..3) ->
        Texture at binding 4 + slot; ``pools``: the bindless pools in set 1.  Returns the target
        as uint8 (h, w, 4); with ``depth`` also a D32 depth buffer (cleared to 1.0, test ALWAYS,
        written) as float32 (h, w): (colour, depth).  ``geometry_spirv``: a geometry stage
        between the two (the device's geometryShader feature, which lavapipe has)."""
        d = self.device
        w, h = size
        verts = np.ascontiguousarray(vertices, dtype=np.float32)
        n, nattr = verts.shape[0], verts.shape[1]
        vbuf = self._buffer(verts.nbytes, vk.VK_BUFFER_USAGE_VERTEX_BUFFER_BIT, verts.tobytes())
        target, tview = self._image(w, h, vk.VK_IMAGE_USAGE_COLOR_ATTACHMENT_BIT | vk.VK_IMAGE_USAGE_TRANSFER_SRC_BIT)
        vmod = self._own(
            vk.vkDestroyShaderModule,
            vk.vkCreateShaderModule(d, vk.VkShaderModuleCreateInfo(codeSize=len(vertex_spirv), pCode=vertex_spirv), None),
        )
        fmod = self._own(
            vk.vkDestroyShaderModule,
            vk.vkCreateShaderModule(d, vk.VkShaderModuleCreateInfo(codeSize=len(fragment_spirv), pCode=fragment_spirv), None),
        )
        gmod = None
        if geometry_spirv is not None:
            if not vk.vkGetPhysicalDeviceFeatures(self.phys).geometryShader:
                raise NxError(f"{self.name()} has no geometryShader feature")
            gmod = self._own(
                vk.vkDestroyShaderModule,
                vk.vkCreateShaderModule(d, vk.VkShaderModuleCreateInfo(codeSize=len(geometry_spirv), pCode=geometry_spirv), None),
            )
        layout = self.layout_pools if pools is not None else self.layout
        pipe = self._own(vk.vkDestroyPipeline, self._pipeline(vmod, fmod, nattr, topology, w, h, layout, depth, gmod))
        zimg = self._depth_image(w, h) if depth else None

        pool = self._own(
            vk.vkDestroyDescriptorPool,
            vk.vkCreateDescriptorPool(
                d,
                vk.VkDescriptorPoolCreateInfo(
                    maxSets=2,
                    poolSizeCount=4,
                    pPoolSizes=[
                        vk.VkDescriptorPoolSize(type=vk.VK_DESCRIPTOR_TYPE_UNIFORM_BUFFER, descriptorCount=4),
                        vk.VkDescriptorPoolSize(type=vk.VK_DESCRIPTOR_TYPE_COMBINED_IMAGE_SAMPLER, descriptorCount=4),
                        vk.VkDescriptorPoolSize(type=vk.VK_DESCRIPTOR_TYPE_SAMPLED_IMAGE, descriptorCount=self.pool_sizes[0]),
                        vk.VkDescriptorPoolSize(type=vk.VK_DESCRIPTOR_TYPE_SAMPLER, descriptorCount=self.pool_sizes[1]),
                    ],
                ),
                None,
            ),
        )
        ds = vk.vkAllocateDescriptorSets(
            d, vk.VkDescriptorSetAllocateInfo(descriptorPool=pool, descriptorSetCount=1, pSetLayouts=[self.set_layout])
        )[0]
        writes = []
        # every binding gets a descriptor (lavapipe crashes on a bound set with unwritten ones):
        # what the caller gave, otherwise a small zero block / a 1x1 black texture
        uniforms = {b: (uniforms or {}).get(b, bytes(16)) for b in range(4)} | (uniforms or {})
        textures = {s: (textures or {}).get(s, Texture(np.zeros((1, 1, 4), np.uint8))) for s in range(4)} | (textures or {})
        for b, data in uniforms.items():
            if b not in range(4):
                raise NxError(f"uniform binding {b} is not 0..3")
            ub = self._buffer(len(data), vk.VK_BUFFER_USAGE_UNIFORM_BUFFER_BIT, data)
            writes.append(
                vk.VkWriteDescriptorSet(
                    dstSet=ds,
                    dstBinding=b,
                    descriptorCount=1,
                    descriptorType=vk.VK_DESCRIPTOR_TYPE_UNIFORM_BUFFER,
                    pBufferInfo=[vk.VkDescriptorBufferInfo(buffer=ub.handle, offset=0, range=ub.size)],
                )
            )
        cpool = self._own(
            vk.vkDestroyCommandPool, vk.vkCreateCommandPool(d, vk.VkCommandPoolCreateInfo(queueFamilyIndex=self.qfam), None)
        )
        cb = vk.vkAllocateCommandBuffers(
            d, vk.VkCommandBufferAllocateInfo(commandPool=cpool, level=vk.VK_COMMAND_BUFFER_LEVEL_PRIMARY, commandBufferCount=1)
        )[0]
        vk.vkBeginCommandBuffer(cb, vk.VkCommandBufferBeginInfo())
        for slot, tex in textures.items():
            if slot not in range(4):
                raise NxError(f"texture slot {slot} is not 0..3")
            view, sampler = self._texture(cb, tex)
            writes.append(
                vk.VkWriteDescriptorSet(
                    dstSet=ds,
                    dstBinding=4 + slot,
                    descriptorCount=1,
                    descriptorType=vk.VK_DESCRIPTOR_TYPE_COMBINED_IMAGE_SAMPLER,
                    pImageInfo=[
                        vk.VkDescriptorImageInfo(
                            sampler=sampler, imageView=view, imageLayout=vk.VK_IMAGE_LAYOUT_SHADER_READ_ONLY_OPTIMAL
                        )
                    ],
                )
            )
        sets = [ds]
        if pools is not None:
            sets.append(self._pool_set(cb, pool, pools, writes))
        if writes:
            vk.vkUpdateDescriptorSets(d, len(writes), writes, 0, None)
        att = self._attachment(
            cb,
            target,
            tview,
            COLOR,
            vk.VK_IMAGE_LAYOUT_COLOR_ATTACHMENT_OPTIMAL,
            vk.VK_PIPELINE_STAGE_COLOR_ATTACHMENT_OUTPUT_BIT,
            vk.VK_ACCESS_COLOR_ATTACHMENT_WRITE_BIT,
            vk.VkClearValue(color=vk.VkClearColorValue(float32=list(clear))),
        )
        zatt = None if zimg is None else self._depth_attachment(cb, *zimg)
        vk.vkCmdBeginRendering(
            cb,
            vk.VkRenderingInfo(
                renderArea=vk.VkRect2D(vk.VkOffset2D(0, 0), vk.VkExtent2D(w, h)),
                layerCount=1,
                colorAttachmentCount=1,
                pColorAttachments=[att],
                pDepthAttachment=zatt,
            ),
        )
        vk.vkCmdBindPipeline(cb, vk.VK_PIPELINE_BIND_POINT_GRAPHICS, pipe)
        vk.vkCmdBindDescriptorSets(cb, vk.VK_PIPELINE_BIND_POINT_GRAPHICS, layout, 0, len(sets), sets, 0, None)
        vk.vkCmdBindVertexBuffers(cb, 0, 1, [vbuf.handle], [0])
        vk.vkCmdDraw(cb, n, 1, 0, 0)
        vk.vkCmdEndRendering(cb)
        readback = self._readback(
            cb,
            target,
            COLOR,
            w,
            h,
            vk.VK_IMAGE_LAYOUT_COLOR_ATTACHMENT_OPTIMAL,
            vk.VK_PIPELINE_STAGE_COLOR_ATTACHMENT_OUTPUT_BIT,
            vk.VK_ACCESS_COLOR_ATTACHMENT_WRITE_BIT,
        )
        if zimg is not None:
            zback = self._depth_readback(cb, zimg[0], w, h)
        vk.vkEndCommandBuffer(cb)
        fence = vk.vkCreateFence(d, vk.VkFenceCreateInfo(), None)
        vk.vkQueueSubmit(self.queue, 1, [vk.VkSubmitInfo(commandBufferCount=1, pCommandBuffers=[cb])], fence)
        vk.vkWaitForFences(d, 1, [fence], vk.VK_TRUE, 120 * 10**9)  # lavapipe on a loaded CI machine
        vk.vkDestroyFence(d, fence, None)
        colour = np.frombuffer(self._read(readback)[: w * h * 4], dtype=np.uint8).reshape(h, w, 4).copy()
        if zimg is not None:
            return colour, np.frombuffer(self._read(zback)[: w * h * 4], dtype=np.float32).reshape(h, w).copy()
        return colour

    def _pipeline(self, vmod, fmod, nattr: int, topology: int, w: int, h: int, layout=None, depth: bool = False, gmod=None):
        # named variables: the binding loses pName when these are built inline (docs/TOOLCHAIN.md)
        vstage = vk.VkPipelineShaderStageCreateInfo(stage=vk.VK_SHADER_STAGE_VERTEX_BIT, module=vmod, pName="main")
        fstage = vk.VkPipelineShaderStageCreateInfo(stage=vk.VK_SHADER_STAGE_FRAGMENT_BIT, module=fmod, pName="main")
        # every nested record named too: cffi frees an inline one before the call reads it
        vbind = [vk.VkVertexInputBindingDescription(binding=0, stride=16 * nattr, inputRate=vk.VK_VERTEX_INPUT_RATE_VERTEX)]
        vattr = [
            vk.VkVertexInputAttributeDescription(location=i, binding=0, format=vk.VK_FORMAT_R32G32B32A32_SFLOAT, offset=16 * i)
            for i in range(nattr)
        ]
        vin = vk.VkPipelineVertexInputStateCreateInfo(
            vertexBindingDescriptionCount=1,
            pVertexBindingDescriptions=vbind,
            vertexAttributeDescriptionCount=nattr,
            pVertexAttributeDescriptions=vattr,
        )
        ia = vk.VkPipelineInputAssemblyStateCreateInfo(topology=topology)
        viewports = [vk.VkViewport(x=0.0, y=0.0, width=float(w), height=float(h), minDepth=0.0, maxDepth=1.0)]
        scissors = [vk.VkRect2D(offset=vk.VkOffset2D(0, 0), extent=vk.VkExtent2D(w, h))]
        vp = vk.VkPipelineViewportStateCreateInfo(viewportCount=1, pViewports=viewports, scissorCount=1, pScissors=scissors)
        rs = vk.VkPipelineRasterizationStateCreateInfo(
            polygonMode=vk.VK_POLYGON_MODE_FILL,
            cullMode=vk.VK_CULL_MODE_NONE,
            frontFace=vk.VK_FRONT_FACE_COUNTER_CLOCKWISE,
            lineWidth=1.0,
        )
        ms = vk.VkPipelineMultisampleStateCreateInfo(rasterizationSamples=vk.VK_SAMPLE_COUNT_1_BIT)
        att = [vk.VkPipelineColorBlendAttachmentState(blendEnable=vk.VK_FALSE, colorWriteMask=0xF)]
        cbs = vk.VkPipelineColorBlendStateCreateInfo(attachmentCount=1, pAttachments=att)
        formats = [COLOR_FORMAT]
        rendering = vk.VkPipelineRenderingCreateInfo(
            colorAttachmentCount=1,
            pColorAttachmentFormats=formats,
            depthAttachmentFormat=vk.VK_FORMAT_D32_SFLOAT if depth else vk.VK_FORMAT_UNDEFINED,
        )
        stages = [vstage, fstage]
        if gmod is not None:
            gstage = vk.VkPipelineShaderStageCreateInfo(stage=vk.VK_SHADER_STAGE_GEOMETRY_BIT, module=gmod, pName="main")
            stages = [vstage, gstage, fstage]
        zs = (
            vk.VkPipelineDepthStencilStateCreateInfo(
                depthTestEnable=vk.VK_TRUE, depthWriteEnable=vk.VK_TRUE, depthCompareOp=vk.VK_COMPARE_OP_ALWAYS
            )
            if depth
            else None
        )
        info = vk.VkGraphicsPipelineCreateInfo(
            pNext=rendering,
            stageCount=len(stages),
            pStages=stages,
            pVertexInputState=vin,
            pInputAssemblyState=ia,
            pViewportState=vp,
            pRasterizationState=rs,
            pMultisampleState=ms,
            pColorBlendState=cbs,
            pDepthStencilState=zs,
            layout=layout or self.layout,
        )
        return vk.vkCreateGraphicsPipelines(self.device, None, 1, [info], None)[0]

    def close(self) -> None:
        vk.vkDeviceWaitIdle(self.device)
        for destroy, h in reversed(self._owned):
            destroy(self.device, h, None)
        self._owned.clear()
        vk.vkDestroyDevice(self.device, None)
        vk.vkDestroyInstance(self.instance, None)
