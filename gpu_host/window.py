"""The GPU process's window (SDL3 through pysdl3) and the input it forwards to the CPU host.

``WindowSystem.start()`` initialises SDL's video (X11) and its Vulkan loader before the Vulkan
device exists (the instance needs SDL's surface extensions); ``open()`` creates the window and
its surface — both on the main thread, which then calls ``pump()`` regularly (SDL wants its
events read on the thread that made the window).  Keyboard and gamepad events become
``nxgpu_input.InputEvent`` messages broadcast by ``InputHub`` to every ``GpuInput.Events``
stream (proto/gpu_input.proto).  No display, or no SDL3: the process stays headless.
"""

from __future__ import annotations

import ctypes
import itertools
import logging
import os
import queue
import threading
from typing import Any, Iterator

from proto import gpu_input_pb2, gpu_input_pb2_grpc

log = logging.getLogger("gpu_host.window")
Ev = gpu_input_pb2.InputEvent


class WindowUnavailable(RuntimeError):
    pass


class InputHub(gpu_input_pb2_grpc.GpuInputServicer):
    """Fan-out of input events to the streams of subscribed clients (bounded queues: a client
    that stops reading loses events, and sees the gap in ``seq``, rather than growing us)."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.subscribers: list[queue.Queue] = []
        self.seq = itertools.count(1)
        self.closed = threading.Event()

    def publish(self, **fields: Any) -> None:
        ev = Ev(seq=next(self.seq), **fields)
        with self.lock:
            subs = list(self.subscribers)
        for q in subs:
            try:
                q.put_nowait(ev)
            except queue.Full:
                pass

    def Events(self, request, context) -> Iterator[Ev]:
        q: queue.Queue = queue.Queue(maxsize=4096)
        with self.lock:
            self.subscribers.append(q)
        log.info("input stream opened by %s", request.client or "?")
        try:
            while context.is_active() and not self.closed.is_set():
                try:
                    yield q.get(timeout=0.2)
                except queue.Empty:
                    continue
        finally:
            with self.lock:
                self.subscribers.remove(q)

    def close(self) -> None:
        self.closed.set()


def _sdl(build: bool):
    """pysdl3, loading the SDL3 we build (gpu_host.sdl3_build) and never the network."""
    from gpu_host import sdl3_build

    lib = sdl3_build.lib_dir(build)
    os.environ.update(sdl3_build.pysdl3_env(lib))
    import sdl3

    return sdl3


class WindowSystem:
    def __init__(self, title: str, width: int, height: int) -> None:
        self.title, self.width, self.height = title, width, height
        self.sdl = None
        self.window = None
        self.instance_extensions: list[str] = []
        self.surface_handle = 0

    def start(self, build: bool = False) -> None:
        """SDL video + Vulkan loader; the instance extensions a surface needs.  ``build``:
        build SDL3 now if it is not cached yet (else a missing build means no window)."""
        if not os.environ.get("DISPLAY"):
            raise WindowUnavailable("no DISPLAY")
        try:
            sdl = _sdl(build)
        except Exception as e:  # SDL3 not buildable here, pysdl3 refusing to load, ...
            raise WindowUnavailable(f"SDL3: {e}") from None
        sdl.SDL_SetHint(b"SDL_VIDEO_DRIVER", b"x11")
        if not sdl.SDL_Init(sdl.SDL_INIT_VIDEO | sdl.SDL_INIT_GAMEPAD):
            raise WindowUnavailable(f"SDL_Init: {sdl.SDL_GetError().decode(errors='replace')}")
        if not sdl.SDL_Vulkan_LoadLibrary(None):
            raise WindowUnavailable(f"SDL_Vulkan_LoadLibrary: {sdl.SDL_GetError().decode(errors='replace')}")
        n = ctypes.c_uint32(0)
        names = sdl.SDL_Vulkan_GetInstanceExtensions(ctypes.byref(n))
        if not names:
            raise WindowUnavailable(f"SDL_Vulkan_GetInstanceExtensions: {sdl.SDL_GetError().decode(errors='replace')}")
        self.instance_extensions = [names[i].decode() for i in range(n.value)]
        v = sdl.SDL_GetVersion()
        log.info(
            "SDL %d.%d.%d, video driver %s",
            v // 1000000,
            v // 1000 % 1000,
            v % 1000,
            (sdl.SDL_GetCurrentVideoDriver() or b"?").decode(),
        )
        self.sdl = sdl

    def open(self, vk_instance: Any) -> int:
        """Create the window and its Vulkan surface for ``vk_instance`` (a cffi VkInstance);
        return the surface as an integer handle."""
        import vulkan as vk

        sdl = self.sdl
        self.window = sdl.SDL_CreateWindow(self.title.encode(), self.width, self.height, sdl.SDL_WINDOW_VULKAN)
        if not self.window:
            raise WindowUnavailable(f"SDL_CreateWindow: {sdl.SDL_GetError().decode(errors='replace')}")
        inst = sdl.VkInstance(int(vk.ffi.cast("uintptr_t", vk_instance)))
        surf = sdl.VkSurfaceKHR(0)
        if not sdl.SDL_Vulkan_CreateSurface(self.window, inst, None, ctypes.byref(surf)):
            raise WindowUnavailable(f"SDL_Vulkan_CreateSurface: {sdl.SDL_GetError().decode(errors='replace')}")
        self.surface_handle = surf.value
        sdl.SDL_ShowWindow(self.window)
        log.info("window %r %dx%d", self.title, self.width, self.height)
        return self.surface_handle

    def pump(self, hub: InputHub) -> bool:
        """Read pending events and forward input; False when the window was closed."""
        sdl = self.sdl
        ev = sdl.SDL_Event()
        alive = True
        while sdl.SDL_PollEvent(ctypes.byref(ev)):
            t = ev.type
            if t in (sdl.SDL_EVENT_KEY_DOWN, sdl.SDL_EVENT_KEY_UP):
                k = ev.key
                name = sdl.SDL_GetKeyName(k.key) or b""
                hub.publish(
                    kind=Ev.KEY_DOWN if t == sdl.SDL_EVENT_KEY_DOWN else Ev.KEY_UP,
                    timestamp_ns=k.timestamp,
                    scancode=k.scancode,
                    key=name.decode(errors="replace"),
                    repeat=bool(k.repeat),
                )
            elif t in (sdl.SDL_EVENT_GAMEPAD_BUTTON_DOWN, sdl.SDL_EVENT_GAMEPAD_BUTTON_UP):
                b = ev.gbutton
                hub.publish(
                    kind=Ev.BUTTON_DOWN if t == sdl.SDL_EVENT_GAMEPAD_BUTTON_DOWN else Ev.BUTTON_UP,
                    timestamp_ns=b.timestamp,
                    gamepad=b.which,
                    button=b.button,
                )
            elif t == sdl.SDL_EVENT_GAMEPAD_AXIS_MOTION:
                a = ev.gaxis
                hub.publish(kind=Ev.AXIS, timestamp_ns=a.timestamp, gamepad=a.which, axis=a.axis, value=a.value)
            elif t == sdl.SDL_EVENT_GAMEPAD_ADDED:
                # Opening it is what makes SDL report its buttons and axes.
                sdl.SDL_OpenGamepad(ev.gdevice.which)
            elif t in (sdl.SDL_EVENT_QUIT, sdl.SDL_EVENT_WINDOW_CLOSE_REQUESTED):
                hub.publish(kind=Ev.QUIT, timestamp_ns=ev.common.timestamp)
                alive = False
        return alive

    def close(self) -> None:
        if self.sdl is None:
            return
        if self.window:
            self.sdl.SDL_DestroyWindow(self.window)
            self.window = None
        self.sdl.SDL_Quit()
        self.sdl = None
