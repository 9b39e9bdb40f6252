"""set (ISettingsServer) and set:sys (ISystemSettingsServer).

Firmware version reported: 15.0.1 (chosen: new enough that libnx takes its current paths, e.g.
TIPC for sm:'s RegisterService, old enough that no 16.0.0+ command is expected).  Layout of
SetSysFirmwareVersion (libnx set.h): major, minor, micro, padding, revision major/minor, 2
padding bytes, platform[0x20], version hash[0x40], display version[0x18], display
title[0x80] = 0x100 bytes, written to the request's C (fixed-size pointer) buffer by commands
3 and 4 (GetFirmwareVersion, GetFirmwareVersion2).  Language codes are the tag's bytes in a
u64 (libnx setMakeLanguageCode); the language list is switchbrew's SetLanguage order.
set:sys 37/38 GetSettingsItemValue(Size) answer SettingsItemNotFound (0x1669) for every item
(the host keeps no system settings items yet); the name asked for is in the log."""

from __future__ import annotations

import struct

from cpu_host.horizon.hle.system import SystemService, language_code
from cpu_host.horizon.ipc.dispatcher import Context, Interface, Server, command
from cpu_host.horizon.ipc.results import IpcError, result

FIRMWARE = (15, 0, 1)
LANGUAGES = [
    "ja",
    "en-US",
    "fr",
    "de",
    "it",
    "es",
    "zh-CN",
    "ko",
    "nl",
    "pt",
    "ru",
    "zh-TW",
    "en-GB",
    "fr-CA",
    "es-419",
    "zh-Hans",
    "zh-Hant",
    "pt-BR",
]
SET_INVALID_LANGUAGE = result(105, 200)  # settings InvalidArgument range 200-399 (Atmosphère); exact code unknown


def firmware_version() -> bytes:
    major, minor, micro = FIRMWARE
    display = f"{major}.{minor}.{micro}".encode()
    return (
        struct.pack("<BBBBBBBB", major, minor, micro, 0, 0, 0, 0, 0)
        + b"NX".ljust(0x20, b"\0")
        + b"nxrecomp".ljust(0x40, b"\0")
        + display.ljust(0x18, b"\0")
        + b"NintendoSDK Firmware for NX "
        + display
        + b"-1.0"
        + bytes(0x80 - 28 - len(display) - 4)
    )


class SettingsServer(Interface):
    name = "nn::settings::ISettingsServer"
    service = "set"

    def __init__(self, system: SystemService) -> None:
        self.system = system

    @command(0)
    def get_language_code(self, ctx: Context) -> None:
        ctx.push("Q", language_code(self.system.language))

    def _codes(self, ctx: Context, write) -> None:
        data = b"".join(struct.pack("<Q", language_code(t)) for t in LANGUAGES)
        n = write(data)
        ctx.push("i", n // 8)

    @command(1)
    def get_available_language_codes(self, ctx: Context) -> None:
        self._codes(ctx, lambda d: ctx.write_c(0, d))

    @command(5)
    def get_available_language_codes2(self, ctx: Context) -> None:
        self._codes(ctx, lambda d: ctx.write_b(0, d))

    @command(2)
    def make_language_code(self, ctx: Context) -> None:
        i = ctx.i32()
        if not 0 <= i < len(LANGUAGES):
            raise IpcError(SET_INVALID_LANGUAGE, f"language index {i}")
        ctx.push("Q", language_code(LANGUAGES[i]))

    @command(3)
    def get_available_language_code_count(self, ctx: Context) -> None:
        ctx.push("i", len(LANGUAGES))

    @command(6)
    def get_available_language_code_count2(self, ctx: Context) -> None:
        ctx.push("i", len(LANGUAGES))

    @command(4)
    def get_region_code(self, ctx: Context) -> None:
        ctx.push("i", 2)  # Europe (switchbrew SetRegion: 0 Japan, 1 USA, 2 Europe, ...)


SETTINGS_ITEM_NOT_FOUND = result(105, 11)  # 0x1669 (Atmosphère settings results)
# system settings items the host knows (name, key) -> value bytes; others are SettingsItemNotFound
ITEMS: dict[tuple[str, str], bytes] = {}


def _cstr(raw: bytes) -> str:
    return raw.split(b"\0", 1)[0].decode("ascii", "replace")


class SystemSettingsServer(Interface):
    name = "nn::settings::ISystemSettingsServer"
    service = "set:sys"

    def _item(self, ctx: Context) -> bytes:
        """Commands 37/38: the settings name and item key are X buffers 0 and 1 (0x48 bytes each)."""
        name, key = _cstr(ctx.read_x(0)), _cstr(ctx.read_x(1))
        if (name, key) not in ITEMS:
            raise IpcError(SETTINGS_ITEM_NOT_FOUND, f"system settings item {name}!{key} is not known to the host")
        return ITEMS[(name, key)]

    @command(37)
    def get_settings_item_value_size(self, ctx: Context) -> None:
        ctx.push("Q", len(self._item(ctx)))

    @command(38)
    def get_settings_item_value(self, ctx: Context) -> None:
        value = self._item(ctx)
        ctx.push("Q", ctx.write_b(0, value))  # the value goes to B buffer 0 (libnx set.c)

    @command(3)
    def get_firmware_version(self, ctx: Context) -> None:
        v = bytearray(firmware_version())
        v[4:6] = b"\0\0"  # GetFirmwareVersion zeroes the revision (libnx set.c)
        ctx.write_c(0, bytes(v))

    @command(4)
    def get_firmware_version2(self, ctx: Context) -> None:
        ctx.write_c(0, firmware_version())


def register(server: Server, system: SystemService) -> None:
    server.services["set"] = lambda: SettingsServer(system)
    server.services["set:sys"] = SystemSettingsServer
