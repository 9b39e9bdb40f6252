"""Settings of the GPU process (see nxrecomp/common/settings.py)."""

from nxrecomp.common.settings import Setting


def _size(text: str) -> tuple[int, int]:
    w, _, h = text.lower().partition("x")
    if not (w.isdigit() and h.isdigit() and 0 < int(w) <= 16384 and 0 < int(h) <= 16384):
        raise ValueError(f"not a size WxH: {text!r}")
    return int(w), int(h)


SETTINGS = [
    Setting(
        "gpu_host",
        "pipeline_library",
        "auto",
        "build pipelines from graphics pipeline library parts where the driver has them (auto|off)",
    ),
    Setting(
        "gpu_host",
        "pipeline_threads",
        2,
        "worker threads making pipelines off the replay thread, in parallel (0: on the replay thread)",
        int,
    ),
    Setting(
        "gpu_host",
        "pipeline_not_ready",
        "wait",
        "a draw whose pipeline a worker is still making: wait (frames as if made in place) or skip (the draw "
        "is left out and counted: no stall)",
    ),
    Setting(
        "gpu_host",
        "pipeline_cache",
        True,
        "keep the driver's compiled pipelines on disk (cache_dir/gpu_host) across GPU-process starts",
        lambda t: str(t).lower() in ("1", "true", "yes", "on"),
    ),
    Setting(
        "gpu_host",
        "descriptor_indexing",
        "auto",
        "bindless textures index the texture/sampler pools where the device has non-uniform descriptor "
        "indexing (auto), or every device gets the switch over pool entries (off)",
    ),
    Setting(
        "gpu_host",
        "geometry_shader",
        "auto",
        "enable the device's geometryShader feature where it has it (auto), or never (off: programs with a "
        "geometry stage are refused by name)",
    ),
    Setting(
        "gpu_host",
        "denorm_preserve",
        "auto",
        "f32 denormals in translated compute programs: auto (kept where the device reports "
        "shaderDenormPreserveFloat32), on (declared everywhere: NVIDIA's driver reports false yet keeps "
        "them under the mode, and flushes them without it; outside the letter of the Vulkan spec) or off",
    ),
    Setting("gpu_host", "frames_dir", "", "headless: write every presented frame as PNG here (empty: don't)"),
    Setting("gpu_host", "keep_frames", 32, "presented frames kept in memory for GetFrame", int),
    Setting("gpu_host", "ring_size", 8 << 20, "bytes of the shared-memory command ring (client side)", int),
    Setting(
        "gpu_host",
        "command_arena_bytes",
        32 << 20,
        "bytes of shared memory the native NVN recorder records into and submissions reference instead of "
        "copying into the ring (client side; 0: off, every submission copied)",
        int,
    ),
    Setting("gpu_host", "device", "", "prefer the Vulkan device whose name contains this (empty: first 1.3 device)"),
    Setting("gpu_host", "record", "", "record the command stream and referenced memory to this file"),
    Setting("gpu_host", "attach_timeout", 2.0, "seconds Attach/RegisterPool wait for fds sent on the fd socket", float),
    Setting(
        "gpu_host",
        "decode_compressed",
        "auto",
        "compressed textures: auto (native where the device samples the format, else decoded "
        "to RGBA8 on upload) or always (decode on upload everywhere)",
    ),
    Setting(
        "gpu_host",
        "avoid_formats",
        frozenset(),
        "Vulkan format names (comma-separated, e.g. VK_FORMAT_D24_UNORM_S8_UINT) treated as unsupported: "
        "their fallbacks are used, as on a device without them",
        lambda t: frozenset(x.strip() for x in str(t).split(",") if x.strip()),
    ),
    Setting(
        "gpu_host",
        "window",
        "auto",
        "present into an SDL3 window: auto (when DISPLAY is set and SDL3 builds), on (fail without one), off",
    ),
    Setting("gpu_host", "window_size", (1280, 720), "window size WxH; frames are scaled to it", _size),
    Setting("gpu_host", "window_title", "nxrecomp", "window title"),
    Setting(
        "gpu_host",
        "native_replay",
        "auto",
        "replay submissions in C (gpu_host/nxreplay.c) where every packet is one the C path knows: auto "
        "(where it builds and loads, else Python), on (fail at start without it), off (Python only)",
    ),
    Setting(
        "gpu_host",
        "ring_spin_us",
        0,
        "after each ring record the consumer polls the ring this long (microseconds, yielding the CPU) "
        "before it sleeps on the doorbell: no wake-up on the frame's path while a game submits "
        "(one core busy meanwhile; 0: always sleep)",
        int,
    ),
    Setting(
        "gpu_host",
        "client_rpc_timeout_s",
        60.0,
        "deadline of each of the client's gRPC calls to the GPU process (registrations, placements, "
        "status): a bound that catches a lost call, not a speed check (a loaded machine answers late; a "
        "process that died is noticed at once by its fd socket hanging up)",
        float,
    ),
    Setting(
        "gpu_host",
        "client_reconnect_s",
        60.0,
        "how long a client waits for the GPU process to (re)appear and take its attach: a bound on a "
        "process start (Vulkan device, pipelines) that a loaded machine makes slow",
        float,
    ),
    Setting(
        "gpu_host",
        "client_spin_us",
        -1,
        "a client waiting for a submission polls its completion this long (microseconds, yielding the "
        "CPU) before it sleeps on the reply eventfd: no wake-up on the frame's path (0: always sleep; "
        "-1: 20000 on machines of 8 or more CPUs, else 0)",
        int,
    ),
    Setting(
        "gpu_host",
        "ring_part_bytes",
        128 << 10,
        "a binary submission goes through the ring in parts of about this many bytes, each published as "
        "soon as it is written (the GPU process copies one while the client writes the next; at most 1 MiB)",
        int,
    ),
    Setting(
        "gpu_host",
        "client_native_submit",
        "on",
        "the client writes a native recording's submission into the ring in C (cpu_host/gpu_client/"
        "ringput.c: one call, no Python per part or range): on, off (the Python writer)",
    ),
    Setting(
        "gpu_host",
        "timing_log",
        "",
        "append one line per binary submission with the consumer's clock readings and the replay's "
        "thread CPU milliseconds to this file "
        "(bench/gpu_split.py's transport breakdown; empty: none)",
    ),
    Setting(
        "gpu_host",
        "event_wait_timeout_s",
        10.0,
        "seconds an EVENT_WAIT waits for its event before the rest of the submission is dropped",
        float,
    ),
    Setting(
        "gpu_host",
        "max_global_data",
        64 << 20,
        'bytes of compute programs\' placed global data (PlaceData, PROTOCOL.md "Global data") one session may hold',
        int,
    ),
]
