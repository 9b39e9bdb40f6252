"""nn::settings (language), nn::oe (the application's view of the applet: operation and
performance mode, desired language), nn::err (error display: logged, then the game goes on, as
after the player closes the error applet)."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Callable

from cpu_host.horizon.hle.abi import Call
from cpu_host.horizon.hle.registry import HostFunction

log = logging.getLogger("cpu_host.hle.system")
OPERATION_HANDHELD, OPERATION_CONSOLE = 0, 1
PERFORMANCE_NORMAL, PERFORMANCE_BOOST = 0, 1


def language_code(tag: str) -> int:
    """A LanguageCode is the tag's bytes ("en-US") zero-padded to 8, read as a u64."""
    b = tag.encode()[:7]
    return int.from_bytes(b.ljust(8, b"\0"), "little")


MESSAGE_EXIT_REQUEST = 4  # the applet message asking the application to exit


@dataclass
class SystemService:
    language: str
    docked: bool
    frames: Callable[[], int] = lambda: 0  # frames presented so far
    max_frames: int = 0  # >0: ask the game to exit once this many were presented
    exit_sent: bool = False
    exit_requested: bool = False  # the player closed the window

    def request_exit(self) -> None:
        self.exit_requested = True

    def pop_message(self, c: Call) -> int:
        """nn::oe::TryPopNotificationMessage: an exit request once the run's frame budget is spent
        (settings cpu_host.max_frames, or the demo's --frames) or once the player closed the
        window, as the system sends one when the player closes the game."""
        if (self.exit_requested or (self.max_frames and self.frames() >= self.max_frames)) and not self.exit_sent:
            self.exit_sent = True
            c.u32(c.arg(0), MESSAGE_EXIT_REQUEST, "message out")
            return 1
        return 0

    def get_language_code(self, c: Call) -> int:
        c.u64(c.arg(0), language_code(self.language), "GetLanguageCode out")
        return 0

    def desired_language(self, c: Call) -> int:
        return language_code(self.language)

    def oe_init(self, c: Call) -> None:
        return None

    def operation_mode(self, c: Call) -> int:
        return OPERATION_CONSOLE if self.docked else OPERATION_HANDHELD

    def performance_mode(self, c: Call) -> int:
        return PERFORMANCE_BOOST if self.docked else PERFORMANCE_NORMAL

    def show_error(self, c: Call) -> None:
        code = c.arg32(0)
        log.warning("the game shows error %04d-%04d (result %#x)", 2000 + (code & 0x1FF), code >> 9 & 0x1FFF, code)

    def functions(self) -> list[HostFunction]:
        F = HostFunction
        return [
            F(
                "_ZN2nn8settings15GetLanguageCodeEPNS0_12LanguageCodeE",
                "nn::settings::GetLanguageCode(nn::settings::LanguageCode*)",
                self.get_language_code,
            ),
            F("_ZN2nn2oe18GetDesiredLanguageEv", "nn::oe::GetDesiredLanguage()", self.desired_language),
            F("_ZN2nn2oe10InitializeEv", "nn::oe::Initialize()", self.oe_init),
            F("_ZN2nn2oe16GetOperationModeEv", "nn::oe::GetOperationMode()", self.operation_mode),
            F("_ZN2nn2oe18GetPerformanceModeEv", "nn::oe::GetPerformanceMode()", self.performance_mode),
            F("_ZN2nn3err9ShowErrorENS_6ResultE", "nn::err::ShowError(nn::Result)", self.show_error),
            F("_ZN2nn2oe26TryPopNotificationMessageEPj", "nn::oe::TryPopNotificationMessage(uint32_t*)", self.pop_message),
        ]
