"""MEMBAR / __threadfence as a real memory barrier, behind a per-device feature (issue 31).

``request.FEATURES["memory_barrier"]`` (a ``Program.features`` bit the GPU process sets where
the device runs ``OpMemoryBarrier`` correctly): MEMBAR becomes ``OpMemoryBarrier`` at device
scope with AcquireRelease over uniform (buffer-address), workgroup and image memory (SPIR-V
"Memory Semantics"; PTX ``membar.gl`` / ``fence.sc.gpu`` order every state space for the whole
device; the CTA and system levels are answered with the same device scope: a stronger fence at
CTA level orders no less, and a Vulkan device has no scope beyond it that a kernel can reach).
Without the bit MEMBAR emits nothing (``lower/memory.py`` ``_fence``: lavapipe 22.3 stalls the
invocations still running at a memory barrier once others of their workgroup have exited), and
ordering towards other invocations is not kept (the known gap, there documented).
"""

from __future__ import annotations

from shader_svc.request import FEATURES

FEATURE_MEMORY_BARRIER = FEATURES["memory_barrier"]


def features_of(lw) -> int:
    """The program's feature bits: a graphics lowering's own, a compute lowering's spec's."""
    return getattr(lw, "features", 0) | getattr(getattr(lw, "spec", None), "features", 0)


def device_fence(lw) -> None:
    """``MemoryFence``'s SPIR-V: the barrier where the device has the feature, else nothing."""
    if not features_of(lw) & FEATURE_MEMORY_BARRIER:
        return
    E = lw.m.E
    sem = E("MemorySemantics", "AcquireRelease") | E("MemorySemantics", "UniformMemory")
    sem |= E("MemorySemantics", "WorkgroupMemory") | E("MemorySemantics", "ImageMemory")
    lw.do("OpMemoryBarrier", lw.c(E("Scope", "Device")), lw.c(sem))
