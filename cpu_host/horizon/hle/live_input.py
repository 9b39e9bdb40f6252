"""Live input for nn::hid from the GPU process's window: a host thread (never on a virtual
core) follows the GPU process's ``GpuInput.Events`` stream (proto/gpu_input.proto) and keeps
the npad state up to date; a closed window becomes the applet's exit request.  Headless, the
stream carries nothing and the scripted input stays in charge; the first window event hands
control to the player.  The stream is re-opened after a GPU-process restart.

Keyboard (as PC players expect): arrows = d-pad, W/A/S/D = left stick, X = A, Z = B, S is
taken by the stick so C = X and V = Y, Q/E = L/R, 1/3 = ZL/ZR, Return = Plus, Backspace =
Minus.  Gamepads: SDL's positional buttons to the Nintendo layout (east = A, south = B,
north = X, west = Y), sticks with y up, triggers past half-way as ZL/ZR."""

from __future__ import annotations

import logging
import threading
import time
from dataclasses import dataclass, field
from typing import Callable

from cpu_host.horizon.hle.hid import BIT, HidService, PadState

log = logging.getLogger("cpu_host.hle.input")

KEYS = {
    "Left": "left",
    "Right": "right",
    "Up": "up",
    "Down": "down",
    "X": "a",
    "Z": "b",
    "C": "x",
    "V": "y",
    "Q": "l",
    "E": "r",
    "1": "zl",
    "3": "zr",
    "Return": "plus",
    "Backspace": "minus",
}
STICK_KEYS = {"W": (0, 1), "S": (0, -1), "A": (-1, 0), "D": (1, 0)}
# SDL_GamepadButton -> npad button
PAD_BUTTONS = {
    0: "b",
    1: "a",
    2: "y",
    3: "x",
    4: "minus",
    6: "plus",
    7: "stickl",
    8: "stickr",
    9: "l",
    10: "r",
    11: "up",
    12: "down",
    13: "left",
    14: "right",
}
AXIS_LX, AXIS_LY, AXIS_RX, AXIS_RY, AXIS_LT, AXIS_RT = range(6)
KIND_KEY_DOWN, KIND_KEY_UP, KIND_BUTTON_DOWN, KIND_BUTTON_UP, KIND_AXIS, KIND_QUIT = 1, 2, 3, 4, 5, 6


@dataclass
class InputState:
    """What is held right now, folded into one npad state."""

    buttons: int = 0
    keys_stick: set[str] = field(default_factory=set)
    axes: dict[int, int] = field(default_factory=dict)

    def apply(self, kind: int, key: str = "", button: int = 0, axis: int = 0, value: int = 0) -> bool:
        """Fold one event in; False when the event means nothing to the npad."""
        if kind in (KIND_KEY_DOWN, KIND_KEY_UP):
            down = kind == KIND_KEY_DOWN
            if key in KEYS:
                bit = BIT[KEYS[key]]
                self.buttons = self.buttons | bit if down else self.buttons & ~bit
            elif key in STICK_KEYS:
                (self.keys_stick.add if down else self.keys_stick.discard)(key)
            else:
                return False
        elif kind in (KIND_BUTTON_DOWN, KIND_BUTTON_UP):
            name = PAD_BUTTONS.get(button)
            if name is None:
                return False
            bit = BIT[name]
            self.buttons = self.buttons | bit if kind == KIND_BUTTON_DOWN else self.buttons & ~bit
        elif kind == KIND_AXIS:
            self.axes[axis] = max(-32768, min(32767, value))
        else:
            return False
        return True

    def pad(self) -> PadState:
        kx = sum(STICK_KEYS[k][0] for k in self.keys_stick)
        ky = sum(STICK_KEYS[k][1] for k in self.keys_stick)
        lx = self.axes.get(AXIS_LX, 0) + 32767 * kx
        ly = -self.axes.get(AXIS_LY, 0) + 32767 * ky  # SDL's y grows downwards, the npad's up
        buttons = self.buttons
        if self.axes.get(AXIS_LT, 0) > 16384:
            buttons |= BIT["zl"]
        if self.axes.get(AXIS_RT, 0) > 16384:
            buttons |= BIT["zr"]
        clamp = lambda v: max(-32768, min(32767, v))  # noqa: E731
        return PadState(buttons, clamp(lx), clamp(ly), clamp(self.axes.get(AXIS_RX, 0)), clamp(-self.axes.get(AXIS_RY, 0)))


@dataclass
class LiveInput:
    socket_dir: str
    hid: HidService
    on_quit: Callable[[], None]
    state: InputState = field(default_factory=InputState)
    stop: threading.Event = field(default_factory=threading.Event)
    events: int = 0

    def start(self) -> "LiveInput":
        threading.Thread(target=self._run, name="live-input", daemon=True).start()
        return self

    def _run(self) -> None:
        import grpc

        from gpu_host.addresses import grpc_address
        from proto import gpu_input_pb2, gpu_input_pb2_grpc

        while not self.stop.is_set():
            try:
                with grpc.insecure_channel(grpc_address(self.socket_dir)) as ch:
                    stream = gpu_input_pb2_grpc.GpuInputStub(ch).Events(
                        gpu_input_pb2.EventsRequest(client="cpu_host"), wait_for_ready=True
                    )
                    for ev in stream:
                        self.on_event(ev.kind, ev.key, ev.button, ev.axis, ev.value)
                        if self.stop.is_set():
                            break
            except grpc.RpcError as e:
                log.debug("input stream ended: %s", e.code())
            time.sleep(0.2)  # the GPU process restarts: follow the next one

    def on_event(self, kind: int, key: str = "", button: int = 0, axis: int = 0, value: int = 0) -> None:
        if kind == KIND_QUIT:
            log.info("the window was closed: asking the game to exit")
            self.on_quit()
            return
        if self.state.apply(kind, key, button, axis, value):
            self.events += 1
            self.hid.set_live(self.state.pad())
