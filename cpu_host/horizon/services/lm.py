"""lm (logging; switchbrew "Log services"): 0 OpenLogger(PID sent) -> ILogger; ILogger 0 Log(an
X/A auto buffer holding a log packet), 1 SetDestination(u32).  A packet: header (process id u64,
thread id u64, flags u8 (bit 0 head, bit 1 tail), level u8, verbosity u8, reserved u8, payload
size u32), then chunks of (key u8, length as ULEB128, bytes); key 2 is the text message.  The
messages go to the program's log (logger ``guest.lm``) and stderr."""

from __future__ import annotations

import logging
import struct
import sys

from cpu_host.horizon.ipc.dispatcher import Context, Interface, Server, command

log = logging.getLogger("guest.lm")
KEY_MESSAGE = 2


def packet_text(packet: bytes) -> str:
    """The text chunks of one log packet ('' when there are none or it is malformed)."""
    if len(packet) < 0x18:
        return ""
    size = struct.unpack_from("<I", packet, 0x14)[0]
    body = packet[0x18 : 0x18 + size]
    out, i = [], 0
    while i < len(body):
        key = body[i]
        i += 1
        n = shift = 0
        while i < len(body):
            b = body[i]
            i += 1
            n |= (b & 0x7F) << shift
            shift += 7
            if not b & 0x80:
                break
        if key == KEY_MESSAGE:
            out.append(body[i : i + n].decode("utf-8", "replace"))
        i += n
    return "".join(out)


class Logger(Interface):
    name = "nn::lm::ILogger"
    service = "lm"

    @command(0)
    def log(self, ctx: Context) -> None:
        text = packet_text(ctx.read_in_auto(0, 0))
        if text:
            log.info("%s", text)
            print(text, file=sys.stderr, flush=True)

    @command(1)
    def set_destination(self, ctx: Context) -> None:
        ctx.u32()


class LogService(Interface):
    name = "nn::lm::ILogService"
    service = "lm"

    @command(0)
    def open_logger(self, ctx: Context) -> None:
        ctx.out_objects.append(Logger())


def register(server: Server) -> None:
    server.services["lm"] = LogService
