"""Settings of the GPU process (see nxrecomp/settings.py)."""
from nxrecomp.settings import Setting

SETTINGS = [
    Setting("gpu_host", "frames_dir", "", "headless: write every presented frame as PNG here (empty: don't)"),
    Setting("gpu_host", "keep_frames", 32, "presented frames kept in memory for GetFrame", int),
    Setting("gpu_host", "ring_size", 8 << 20, "bytes of the shared-memory command ring (client side)", int),
    Setting("gpu_host", "device", "", "prefer the Vulkan device whose name contains this (empty: first 1.3 device)"),
    Setting("gpu_host", "record", "", "record the command stream and referenced memory to this file"),
    Setting("gpu_host", "attach_timeout", 2.0, "seconds Attach/RegisterPool wait for fds sent on the fd socket", float),
]
