"""The window-to-npad mapping of cpu_host/horizon/hle/live_input.py for gamepads (no virtual
gamepad exists under Xvfb, so the window test covers keys only).  Button bits are nn::hid's
public NpadButton order (A 0, B 1, X 2, Y 3, ... Left 12, Up 13, Right 14, Down 15); SDL's
gamepad numbering is SDL3's public SDL_GamepadButton/SDL_GamepadAxis enumerations."""

from __future__ import annotations

from cpu_host.horizon.hle.hid import HidService
from cpu_host.horizon.hle.live_input import (
    KIND_AXIS,
    KIND_BUTTON_DOWN,
    KIND_BUTTON_UP,
    KIND_KEY_DOWN,
    KIND_KEY_UP,
    KIND_QUIT,
    LiveInput,
)

SDL_SOUTH, SDL_EAST, SDL_DPAD_LEFT = 0, 1, 13
SDL_LEFTX, SDL_LEFTY, SDL_RIGHT_TRIGGER = 0, 1, 5


def test_gamepad_and_keys_fold_into_one_npad_state() -> None:
    hid = HidService()
    quits = []
    live = LiveInput("", hid, lambda: quits.append(1))
    assert hid.state_now().buttons == 0 and hid.live is None  # the script rules until input comes
    live.on_event(KIND_BUTTON_DOWN, button=SDL_EAST)  # east is A on a Nintendo pad
    live.on_event(KIND_BUTTON_DOWN, button=SDL_SOUTH)  # south is B
    live.on_event(KIND_BUTTON_DOWN, button=SDL_DPAD_LEFT)
    live.on_event(KIND_AXIS, axis=SDL_LEFTY, value=-32768)  # SDL's up is negative; the npad's positive
    live.on_event(KIND_AXIS, axis=SDL_LEFTX, value=12000)
    live.on_event(KIND_AXIS, axis=SDL_RIGHT_TRIGGER, value=30000)  # past half-way: ZR
    s = hid.state_now()
    assert s.buttons == (1 << 0) | (1 << 1) | (1 << 12) | (1 << 9)
    assert (s.lx, s.ly) == (12000, 32767)
    live.on_event(KIND_BUTTON_UP, button=SDL_SOUTH)
    live.on_event(KIND_KEY_DOWN, key="Return")  # Plus
    live.on_event(KIND_KEY_DOWN, key="D")  # stick right, added to the pad's
    s = hid.state_now()
    assert s.buttons == (1 << 0) | (1 << 12) | (1 << 9) | (1 << 10) and s.lx == 32767
    live.on_event(KIND_KEY_UP, key="D")
    live.on_event(KIND_KEY_DOWN, key="F12")  # unmapped: ignored
    assert hid.state_now().lx == 12000 and live.events == 10
    live.on_event(KIND_QUIT)
    assert quits == [1]
