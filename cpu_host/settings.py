"""Settings of the CPU host (section ``cpu_host``)."""

from __future__ import annotations

import os
from pathlib import Path

from nxrecomp.common.settings import Setting, parse_bool


def _data_default() -> str:
    return str(Path(os.environ.get("XDG_DATA_HOME", Path.home() / ".local" / "share")) / "nxrecomp" / "saves")


def _huge_pages(text: str) -> str:
    """auto, on or off (any boolean spelling): cpu_host.huge_pages"""
    if text.strip().lower() == "auto":
        return "auto"
    return "on" if parse_bool(text) else "off"


def _recorder(text: str) -> str:
    if text not in ("native", "python"):
        raise ValueError(f"not native or python: {text!r}")
    return text


SETTINGS = [
    Setting(
        "cpu_host",
        "nvn_recorder",
        "native",
        "how NVN command buffers are recorded: native (the per-draw calls in C, recorder.c, into binary "
        "packets sent as ring tag 4) or python (packet tuples, msgpack)",
        _recorder,
    ),
    Setting(
        "cpu_host",
        "nvn_unbacked_command_bytes",
        64 << 20,
        "bytes of NVN recordings made without command memory (host memory only) kept for their handles; "
        "past it the least recently recorded or submitted are freed (cpu_host/horizon/hle/nvn/handles.py)",
        int,
    ),
    Setting("cpu_host", "save_dir", _data_default(), "where Horizon programs' save data lives (one folder per program id)"),
    Setting("cpu_host", "deterministic", False, "fixed wall clock and random values, for reproducible runs", parse_bool),
    Setting("cpu_host", "input_script", "", "scripted gamepad input for headless runs (see cpu_host/horizon/hle/hid.py)"),
    Setting("cpu_host", "language", "en-US", "the system language nn::settings and nn::oe report"),
    Setting("cpu_host", "docked", True, "operation mode: docked (console) or handheld", parse_bool),
    Setting(
        "cpu_host", "max_frames", 0, "ask the game to exit (nn::oe exit request) after this many presented frames; 0: never", int
    ),
    Setting(
        "cpu_host",
        "block_profile_file",
        "nxrecomp-profile.json",
        "where a bundle built with recompiler.profile_gen writes its block profile at exit (read by the C runtime)",
    ),
    Setting("cpu_host", "frame_times_file", "", "write the time between presents (ms, one per line) here at exit"),
    Setting("cpu_host", "relay", "", "co-op relay HOST:PORT (empty: play alone)"),
    Setting("cpu_host", "relay_token", "", "this player's join token (nxrecomp relay token ...; --host opens the room)"),
    Setting("cpu_host", "relay_password", "", "the room's password, if it has one"),
    Setting(
        "cpu_host",
        "relay_join_timeout_s",
        15.0,
        "seconds the game's join of a co-op room waits for the relay's "
        "answer (retransmitting) and, joining, for the host to open the room, before it plays alone",
        float,
    ),
    Setting(
        "cpu_host",
        "native_launcher",
        True,
        "'nxrecomp exec' starts Linux programs through the bundle's "
        "native launcher (C, ~3 ms) instead of Python + cffi (~130 ms)",
        parse_bool,
    ),
    Setting(
        "cpu_host",
        "huge_pages",
        "auto",
        "mark the guest's heap for transparent huge pages (the brk area past its first 2-4 MiB, "
        "anonymous mmaps of 2 MiB or more): on, off, or auto (on where the kernel's THP mode is "
        "'madvise', off where it is 'always' or 'never'); read by the runtime as "
        "NXRECOMP_CPU_HOST_HUGE_PAGES",
        _huge_pages,
    ),
    Setting(
        "cpu_host", "audio_out", "", "write the game's audio to this WAV file (headless; --audio-out); empty: play through SDL3"
    ),
    Setting(
        "cpu_host",
        "audio_device",
        "",
        "SDL audio driver to play through (e.g. 'pulseaudio', 'alsa', 'dummy'); empty: SDL's default; 'none': no sound",
    ),
    Setting(
        "cpu_host",
        "audio_latency_ms",
        60,
        "audio queued ahead of the device at most; frames beyond it are "
        "dropped (counted) so a slow device never holds up the game",
        int,
    ),
    Setting(
        "cpu_host",
        "audio_clock",
        "auto",
        "what paces audio frames: 'wall' (real time, for a device), "
        "'frames' (1/60 s of audio per presented frame: a headless WAV is the same on every run), 'auto' "
        "(frames when writing a WAV file, else wall)",
    ),
    Setting(
        "cpu_host",
        "lift_on_miss",
        True,
        "a branch at run time to an address with no lifted code lifts the "
        "function starting there (a helper process: analysis, lifter, C compiler), loads it and goes on, and notes "
        "the address in the bundle's discovered_entries.txt for the next build (off: a fatal error); read by the "
        "runtime as NXRECOMP_CPU_HOST_LIFT_ON_MISS",
        parse_bool,
    ),
    Setting(
        "cpu_host",
        "generated_code",
        True,
        "a branch at run time into code the program generated (a JIT's output in memory it mapped "
        "executable: Linux mmap/mprotect with PROT_EXEC) lifts the function there from the guest's bytes as they "
        "are, checks them at each entry (rewritten code is lifted anew) and notes nothing for the next build (off: "
        "a fatal error naming the address); needs cpu_host.lift_on_miss; read by the runtime as "
        "NXRECOMP_CPU_HOST_GENERATED_CODE",
        parse_bool,
    ),
    Setting(
        "cpu_host",
        "ipc_unknown",
        "fatal",
        "an IPC request to a service or command the host does not serve: "
        "'fatal' (a crash report naming service, interface and command) or 'stub' (a logged success, "
        "zeroed output, for exploring what a program asks)",
    ),
    Setting(
        "cpu_host",
        "bsd_network",
        "loopback",
        "what a Horizon program's sockets (bsd:u/bsd:s) may reach: "
        "'loopback' (127.0.0.0/8 only: a bind to any address binds 127.0.0.1, a connect or send elsewhere is "
        "ENETUNREACH) or 'host' (the host's network, as a native program)",
    ),
    Setting(
        "cpu_host", "bsd_max_sockets", 64, "sockets one Horizon program may hold open at once (bsd:u/bsd:s; more: EMFILE)", int
    ),
    Setting(
        "cpu_host",
        "sd_dir",
        str(Path(_data_default()).parent / "sdmc"),
        "the folder a Horizon program sees as its SD card (fsp-srv OpenSdCardFileSystem)",
    ),
    Setting(
        "cpu_host",
        "shared_font",
        "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf",
        "the public TrueType font pl:u serves as every shared font (Debian's fonts-dejavu-core)",
    ),
    Setting(
        "cpu_host",
        "framebuffer_dir",
        "",
        "write every framebuffer a program queues over vi/binder as frame_NNNNNN.png here (empty: none)",
    ),
    Setting(
        "cpu_host",
        "gpu_socket_dir",
        "",
        "the GPU process's socket folder (set by 'nxrecomp run'; empty: NXRECOMP_GPU_SOCKET_DIR)",
    ),
]
