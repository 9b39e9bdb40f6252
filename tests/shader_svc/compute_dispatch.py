"""Running translated compute kernels on lavapipe for the tests: a device (skipped loudly where
Vulkan is missing), buffers filled from numpy arrays, and one dispatch of a SPIR-V module with
constant bank 0 laid out as the CUDA driver lays it out for the kernel's ISA."""

from __future__ import annotations

from contextlib import contextmanager
from dataclasses import dataclass
import struct
from typing import Callable, Iterator

import numpy as np
import pytest

# cbank0(size, block, grid, params) -> image: shader_svc.sm86.cbank.cbank0 (SM86) or
# shader_svc.sm53.to_spirv.cbank0 (SM53); the two ISAs put the dims and parameters apart
Layout = Callable[[int, tuple[int, int, int], tuple[int, int, int], bytes], bytes]


@contextmanager
def open_device() -> Iterator:
    """A ComputeDevice, closed on leaving; a loud skip without Vulkan."""
    import vk_compute

    try:
        dev = vk_compute.ComputeDevice()
    except Exception as e:  # no Vulkan loader/driver on this machine
        pytest.skip(f"LOUD SKIP: no Vulkan device: {e}")
    try:
        yield dev
    finally:
        dev.close()


def upload(dev, arr: np.ndarray):
    """A device buffer holding ``arr``'s bytes (its address goes into the kernel parameters)."""
    b = dev.buffer(arr.nbytes)
    dev.write(b, arr.tobytes())
    return b


def run_spirv(
    dev,
    spirv: bytes,
    layout: Layout,
    cbank0_size: int,
    n_threads: int,
    params: bytes,
    outputs: list,
    block: int = 64,
    surfaces: list | None = None,
    textures=None,
) -> list[np.ndarray]:
    """Dispatch enough ``block``-wide groups for ``n_threads`` and read back ``outputs`` as words
    (``surfaces``: the surface pool's storage images, ``vk_compute.ComputeDevice.image``)."""
    grid = (n_threads + block - 1) // block
    image = layout(cbank0_size, (block, 1, 1), (grid, 1, 1), params)
    cb = dev.buffer(len(image))
    dev.write(cb, image)
    if surfaces is None and textures is None:
        dev.dispatch(spirv, cb, (grid, 1, 1))
    else:  # textures: compute_textures.TexturePools (shader-tex)
        dev.dispatch(spirv, cb, (grid, 1, 1), surfaces, textures)
    return [np.frombuffer(dev.read(b), dtype=np.uint32) for b in outputs]


@dataclass(frozen=True)
class KernelRunner:
    """The ptxas-built kernels of one ISA on one device: ``translate`` turns a kernel's code into
    SPIR-V for ``block``-wide groups."""

    dev: object
    kernels: dict
    layout: Layout
    translate: Callable[[bytes], bytes]
    block: int = 64

    def upload(self, arr: np.ndarray):
        return upload(self.dev, arr)

    def run(self, name: str, n_threads: int, params: bytes, outputs: list) -> list[np.ndarray]:
        k = self.kernels[name]
        return run_spirv(self.dev, self.translate(k.code), self.layout, k.cbank0_size, n_threads, params, outputs, self.block)

    def in_out(self, name: str, a: np.ndarray, out_words: int) -> np.ndarray:
        """Run a kernel of parameters (const u32 *a, u32 *out) over len(a) threads: the first
        ``out_words`` words it wrote to a zeroed ``out``."""
        ba, bo = self.upload(a), self.upload(np.zeros(out_words, np.uint32))
        (out,) = self.run(name, len(a), struct.pack("<QQ", ba.address, bo.address), [bo])
        return out[:out_words]
