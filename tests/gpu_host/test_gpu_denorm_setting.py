"""``gpu_host.denorm_preserve`` (auto | on | off): whether translated compute programs may declare
``DenormPreserve 32`` (the shader service's ``denorm_preserve32`` feature).  auto follows the
device's shaderDenormPreserveFloat32 property; on declares it regardless, for NVIDIA's driver,
which reports false yet keeps f32 denormals under the mode (bench/nvidia_corpus.py: 48 corpus
programs flushed without it); off never.  Checked on the real device the tests get (lavapipe
here) against the property Vulkan reports, and the server's refusal of a bad value by name."""

from __future__ import annotations

import pytest
import vulkan as vk

from gpu_host.vkdevice import Device


def _property(dev: Device) -> bool:
    p12 = vk.VkPhysicalDeviceVulkan12Properties()
    vk.vkGetPhysicalDeviceProperties2(dev.pd, vk.VkPhysicalDeviceProperties2(pNext=p12))
    return bool(p12.shaderDenormPreserveFloat32)


@pytest.mark.parametrize("mode", ["auto", "on", "off"])
def test_denorm_preserve_setting(mode):
    dev = Device(denorm_preserve=mode)
    try:
        want = {"auto": _property(dev), "on": True, "off": False}[mode]
        assert dev.denorm_preserve32 is want
        assert ("denorm_preserve32" in dev.features()) is want
    finally:
        dev.close()


def test_bad_value_named(monkeypatch, tmp_path):
    from gpu_host.server import GpuServer, VulkanUnavailable

    monkeypatch.setenv("NXRECOMP_GPU_HOST_DENORM_PRESERVE", "sometimes")
    with pytest.raises(VulkanUnavailable, match=r"gpu_host.denorm_preserve = 'sometimes' is not auto, on or off"):
        GpuServer(tmp_path)
