"""The GPU process's Vulkan device enables the optional features translations rely on wherever the
physical device has them: 64-bit atomics on buffers and workgroup memory (the shader service
lowers the guest's 64-bit ATOM/ATOMS/RED to SPIR-V Int64Atomics, which needs
``shaderBufferInt64Atomics`` / ``shaderSharedInt64Atomics``, and Int64, which needs
``shaderInt64``: Vulkan spec, "Features" and the SPIR-V environment appendix).  What the
device has is read here by a query of its own (vkGetPhysicalDeviceFeatures2 on the same
physical device), not from the Device object."""

from __future__ import annotations

import pytest

vk = pytest.importorskip("vulkan")

from gpu_host.vkdevice import Device, VulkanUnavailable  # noqa: E402


@pytest.fixture(scope="module")
def dev():
    try:
        d = Device()
    except VulkanUnavailable as e:
        pytest.skip(f"no Vulkan 1.3 device here: {e}")
    yield d
    d.close()


def _build_compute_pipeline(dev, src: str, storage_buffer: bool) -> None:
    """``src`` (SPIR-V assembly) assembled by spirv-as and built into a compute pipeline on ``dev``
    (with one storage buffer at set 0 binding 0, or no sets), which must come back; skipped
    without spirv-as."""
    import shutil
    import subprocess

    spirv_as = shutil.which("spirv-as")
    if spirv_as is None:
        pytest.skip("spirv-as (spirv-tools) not installed")
    res = subprocess.run([spirv_as, "--target-env", "vulkan1.2", "-o", "-", "-"], input=src.encode(), capture_output=True)
    assert res.returncode == 0, res.stderr.decode()
    mod = dev.shader_module(res.stdout)
    dsl = (
        dev.set_layout([(0, vk.VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, 1)], vk.VK_SHADER_STAGE_COMPUTE_BIT) if storage_buffer else None
    )
    info = (
        vk.VkPipelineLayoutCreateInfo(setLayoutCount=1, pSetLayouts=[dsl]) if dsl is not None else vk.VkPipelineLayoutCreateInfo()
    )
    layout = vk.vkCreatePipelineLayout(dev.device, info, None)
    stage = vk.VkPipelineShaderStageCreateInfo(stage=vk.VK_SHADER_STAGE_COMPUTE_BIT, module=mod, pName="main")
    pipes = vk.vkCreateComputePipelines(dev.device, None, 1, [vk.VkComputePipelineCreateInfo(stage=stage, layout=layout)], None)
    assert pipes[0] is not None
    vk.vkDestroyPipeline(dev.device, pipes[0], None)
    vk.vkDestroyPipelineLayout(dev.device, layout, None)
    if dsl is not None:
        vk.vkDestroyDescriptorSetLayout(dev.device, dsl, None)
    vk.vkDestroyShaderModule(dev.device, mod, None)


def _has(pd) -> dict[str, bool]:
    q12 = vk.VkPhysicalDeviceVulkan12Features()
    vk.vkGetPhysicalDeviceFeatures2(pd, vk.VkPhysicalDeviceFeatures2(pNext=q12))
    f10 = vk.vkGetPhysicalDeviceFeatures(pd)
    return {
        "shaderBufferInt64Atomics": bool(q12.shaderBufferInt64Atomics),
        "shaderSharedInt64Atomics": bool(q12.shaderSharedInt64Atomics),
        "shaderInt64": bool(f10.shaderInt64),
    }


def test_int64_atomics_enabled_where_present(dev):
    has = _has(dev.pd)
    enabled = dev.enabled_features()
    for name, present in has.items():
        assert (name in enabled) == present, f"{name}: device has it {present}, enabled {name in enabled}"
    # what translations are told (AttachReply.features): both atomics and Int64, or not at all
    assert ("int64_atomics" in dev.features()) == all(has.values())


def test_int64_atomic_shader_module_and_pipeline(dev):
    """A compute shader with 64-bit atomic adds on a storage buffer and on workgroup memory is
    accepted by the device it was enabled on (skipped where the device lacks them)."""
    if "int64_atomics" not in dev.features():
        pytest.skip(f"{dev.name} lacks 64-bit atomics: {_has(dev.pd)}")

    src = """
OpCapability Shader
OpCapability Int64
OpCapability Int64Atomics
OpMemoryModel Logical GLSL450
OpEntryPoint GLCompute %main "main" %buf %sh
OpExecutionMode %main LocalSize 1 1 1
OpDecorate %S Block
OpMemberDecorate %S 0 Offset 0
OpDecorate %buf DescriptorSet 0
OpDecorate %buf Binding 0
%void = OpTypeVoid
%fn = OpTypeFunction %void
%u32 = OpTypeInt 32 0
%u64 = OpTypeInt 64 0
%S = OpTypeStruct %u64
%pS = OpTypePointer StorageBuffer %S
%p64 = OpTypePointer StorageBuffer %u64
%pw = OpTypePointer Workgroup %u64
%buf = OpVariable %pS StorageBuffer
%sh = OpVariable %pw Workgroup
%c0 = OpConstant %u32 0
%dev = OpConstant %u32 1
%sem = OpConstant %u32 0
%wg = OpConstant %u32 2
%one = OpConstant %u64 4294967297
%main = OpFunction %void None %fn
%l = OpLabel
%p = OpAccessChain %p64 %buf %c0
%a = OpAtomicIAdd %u64 %p %dev %sem %one
%b = OpAtomicIAdd %u64 %sh %wg %sem %a
OpReturn
OpFunctionEnd
"""
    _build_compute_pipeline(dev, src, storage_buffer=True)


def _clocks(pd) -> dict[str, bool]:
    """VK_KHR_shader_clock's two features as the device reports them (False without the extension)."""
    exts = {e.extensionName for e in vk.vkEnumerateDeviceExtensionProperties(pd, None)}
    if "VK_KHR_shader_clock" not in exts:
        return {"shaderSubgroupClock": False, "shaderDeviceClock": False}
    q = vk.VkPhysicalDeviceShaderClockFeaturesKHR()
    vk.vkGetPhysicalDeviceFeatures2(pd, vk.VkPhysicalDeviceFeatures2(pNext=q))
    return {"shaderSubgroupClock": bool(q.shaderSubgroupClock), "shaderDeviceClock": bool(q.shaderDeviceClock)}


def test_shader_clock_enabled_and_reported_where_present(dev):
    """shader-data (issue 31): each clock enabled where the device has it; "shader_clock" reported
    to translations (and so Program.features bit 0x4, request.feature_bits) only with both, since
    lower/clock.py reads the SM counter at subgroup scope and the global timer at device scope.
    (Mesa 22.3's lavapipe has both.)"""
    from shader_svc.request import FEATURES, feature_bits

    has = _clocks(dev.pd)
    enabled = dev.enabled_features()
    for name, present in has.items():
        assert (name in enabled) == present, f"{name}: device has it {present}, enabled {name in enabled}"
    assert ("shader_clock" in dev.features()) == all(has.values())
    assert bool(feature_bits(dev.features()) & FEATURES["shader_clock"]) == all(has.values())


def test_shader_clock_pipeline(dev):
    """A compute shader reading both clocks (OpReadClockKHR, Subgroup and Device scope, as
    lower/clock.py emits) builds a pipeline on the device it was enabled on."""
    if "shader_clock" not in dev.features():
        pytest.skip(f"LOUD SKIP: {dev.name} lacks VK_KHR_shader_clock's two clocks: {_clocks(dev.pd)}")
    src = """
OpCapability Shader
OpCapability Int64
OpCapability ShaderClockKHR
OpExtension "SPV_KHR_shader_clock"
OpMemoryModel Logical GLSL450
OpEntryPoint GLCompute %main "main"
OpExecutionMode %main LocalSize 1 1 1
%void = OpTypeVoid
%fn = OpTypeFunction %void
%u32 = OpTypeInt 32 0
%u64 = OpTypeInt 64 0
%sub = OpConstant %u32 3
%devs = OpConstant %u32 1
%main = OpFunction %void None %fn
%l = OpLabel
%a = OpReadClockKHR %u64 %sub
%b = OpReadClockKHR %u64 %devs
OpReturn
OpFunctionEnd
"""
    _build_compute_pipeline(dev, src, storage_buffer=False)
