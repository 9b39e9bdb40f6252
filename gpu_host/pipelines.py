"""Graphics pipelines for dynamic rendering, one fixed descriptor layout (push descriptors:
set 0, bindings 0-3 uniform blocks, 4-7 combined image samplers), cached by the state that
shapes them.  Shader code comes from ``objects.Program`` whatever produced it (GLSL today, the
shader service's SPIR-V later)."""
from __future__ import annotations

from typing import Any

import vulkan as vk

from gpu_host import packets as P
from gpu_host.objects import Program
from gpu_host.vkdevice import Device

STAGES = vk.VK_SHADER_STAGE_VERTEX_BIT | vk.VK_SHADER_STAGE_FRAGMENT_BIT


class Pipelines:
    def __init__(self, dev: Device) -> None:
        self.dev = dev
        bindings = [vk.VkDescriptorSetLayoutBinding(
            binding=b, descriptorType=vk.VK_DESCRIPTOR_TYPE_UNIFORM_BUFFER if b < 4
            else vk.VK_DESCRIPTOR_TYPE_COMBINED_IMAGE_SAMPLER, descriptorCount=1, stageFlags=STAGES)
            for b in range(8)]
        self.set_layout = vk.vkCreateDescriptorSetLayout(dev.device, vk.VkDescriptorSetLayoutCreateInfo(
            flags=vk.VK_DESCRIPTOR_SET_LAYOUT_CREATE_PUSH_DESCRIPTOR_BIT_KHR,
            bindingCount=8, pBindings=bindings), None)
        self.layout = vk.vkCreatePipelineLayout(dev.device, vk.VkPipelineLayoutCreateInfo(
            setLayoutCount=1, pSetLayouts=[self.set_layout]), None)
        self.cache: dict[tuple, Any] = {}
        # Keyed by shader content, not by handle: the cache survives client sessions (restarts).
        self.modules: dict[bytes, tuple[Any, Any]] = {}

    def _modules(self, prog: Program) -> tuple[Any, Any]:
        m = self.modules.get(prog.digest)
        if m is None:
            m = (self.dev.shader_module(prog.vertex_spirv), self.dev.shader_module(prog.fragment_spirv))
            self.modules[prog.digest] = m
        return m

    def get(self, prog: Program, layout: tuple, vk_format: int, blend: bool) -> Any:
        key = (prog.digest, layout[1:], vk_format, blend)
        p = self.cache.get(key)
        if p is None:
            p = self._create(prog, layout, vk_format, blend)
            self.cache[key] = p
        return p

    def _create(self, prog: Program, layout: tuple, vk_format: int, blend: bool) -> Any:
        vmod, fmod = self._modules(prog)
        _, stride, topology, attrs = layout
        # Named variables: the binding loses pName when these are built inline (TOOLCHAIN.md).
        vstage = vk.VkPipelineShaderStageCreateInfo(stage=vk.VK_SHADER_STAGE_VERTEX_BIT, module=vmod, pName="main")
        fstage = vk.VkPipelineShaderStageCreateInfo(stage=vk.VK_SHADER_STAGE_FRAGMENT_BIT, module=fmod, pName="main")
        vin = vk.VkPipelineVertexInputStateCreateInfo(
            vertexBindingDescriptionCount=1,
            pVertexBindingDescriptions=[vk.VkVertexInputBindingDescription(
                binding=0, stride=stride, inputRate=vk.VK_VERTEX_INPUT_RATE_VERTEX)],
            vertexAttributeDescriptionCount=len(attrs),
            pVertexAttributeDescriptions=[vk.VkVertexInputAttributeDescription(
                location=loc, binding=0, format=getattr(vk, P.VERTEX_FORMATS[fmt][0]), offset=off)
                for loc, fmt, off in attrs])
        ia = vk.VkPipelineInputAssemblyStateCreateInfo(topology=getattr(vk, P.TOPOLOGIES[topology]))
        vp = vk.VkPipelineViewportStateCreateInfo(viewportCount=1, scissorCount=1)
        rs = vk.VkPipelineRasterizationStateCreateInfo(
            polygonMode=vk.VK_POLYGON_MODE_FILL, cullMode=vk.VK_CULL_MODE_NONE,
            frontFace=vk.VK_FRONT_FACE_COUNTER_CLOCKWISE, lineWidth=1.0)
        ms = vk.VkPipelineMultisampleStateCreateInfo(rasterizationSamples=vk.VK_SAMPLE_COUNT_1_BIT)
        att = vk.VkPipelineColorBlendAttachmentState(
            blendEnable=vk.VK_TRUE if blend else vk.VK_FALSE,
            srcColorBlendFactor=vk.VK_BLEND_FACTOR_SRC_ALPHA, dstColorBlendFactor=vk.VK_BLEND_FACTOR_ONE_MINUS_SRC_ALPHA,
            colorBlendOp=vk.VK_BLEND_OP_ADD, srcAlphaBlendFactor=vk.VK_BLEND_FACTOR_ONE,
            dstAlphaBlendFactor=vk.VK_BLEND_FACTOR_ONE_MINUS_SRC_ALPHA, alphaBlendOp=vk.VK_BLEND_OP_ADD,
            colorWriteMask=0xF)
        cb = vk.VkPipelineColorBlendStateCreateInfo(attachmentCount=1, pAttachments=[att])
        dyn = vk.VkPipelineDynamicStateCreateInfo(
            dynamicStateCount=2, pDynamicStates=[vk.VK_DYNAMIC_STATE_VIEWPORT, vk.VK_DYNAMIC_STATE_SCISSOR])
        rendering = vk.VkPipelineRenderingCreateInfo(colorAttachmentCount=1, pColorAttachmentFormats=[vk_format])
        info = vk.VkGraphicsPipelineCreateInfo(
            pNext=rendering, stageCount=2, pStages=[vstage, fstage], pVertexInputState=vin,
            pInputAssemblyState=ia, pViewportState=vp, pRasterizationState=rs, pMultisampleState=ms,
            pColorBlendState=cb, pDynamicState=dyn, layout=self.layout)
        return vk.vkCreateGraphicsPipelines(self.dev.device, None, 1, [info], None)[0]

    def close(self) -> None:
        d = self.dev.device
        for p in self.cache.values():
            vk.vkDestroyPipeline(d, p, None)
        for vm, fm in self.modules.values():
            vk.vkDestroyShaderModule(d, vm, None)
            vk.vkDestroyShaderModule(d, fm, None)
        vk.vkDestroyPipelineLayout(d, self.layout, None)
        vk.vkDestroyDescriptorSetLayout(d, self.set_layout, None)
