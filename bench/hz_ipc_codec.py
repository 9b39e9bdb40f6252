"""Speed of the IPC codec inside the CPU host: the HIPC envelope read in C (``hipc.parse``,
``cpu_host/horizon/ipc/hipc_parse.c``) against the Python reference (``hipc.parse_py``), for a
plain request and for one with a PID, a copy handle and X/B/C descriptors; and a whole
``Server.handle`` of psm GetBatteryChargePercentage (parse, CMIF, dispatch, reply) on guest
memory held in a bytearray, and its parts.  Figures are the calling thread's CPU time
(``time.thread_time``), best of 20 interleaved rounds: on a shared, loaded machine wall time
mostly measures the other programs.  Compare with ``bench/hz_ipc.py``'s whole round trip from a
guest: what ``Server.handle`` does not account for is spent on the way in (the SVC's callback
into Python, the GIL) and out.

    .venv/bin/python bench/hz_ipc_codec.py
"""

from __future__ import annotations

import sys
import time
import timeit
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from cpu_host.horizon.ipc import cmif, hipc  # noqa: E402
from cpu_host.horizon.ipc.dispatcher import Server  # noqa: E402
from cpu_host.horizon.services import psm  # noqa: E402
from tests.horizon.guest_memory import BytesMemory  # noqa: E402


def best(fns: dict, number: int = 3000, repeat: int = 20) -> dict:
    """CPU microseconds per call of each function, best of interleaved rounds."""
    out = {k: float("inf") for k in fns}
    for _ in range(repeat):
        for k, f in fns.items():
            out[k] = min(out[k], timeit.timeit(f, number=number, timer=time.thread_time) / number * 1e6)
    return out


def main() -> int:
    plain = hipc.build_request(4, cmif.request_payload(0))
    rich = hipc.build_request(
        4,
        cmif.request_payload(0),
        pid=5,
        copy_handles=[1],
        x=[hipc.Static(0, 0x1000, 0x10)],
        b=[hipc.Buffer(0x2000, 0x10, 0)],
        c=[hipc.Static(0, 0x3000, 8)],
    )
    plain, rich = (m + bytes(0x100 - len(m)) for m in (plain, rich))
    hipc.parse(plain)  # build/load the C library first
    srv, mem = Server(), BytesMemory()
    psm.register(srv)
    sid = srv.open(srv.services["psm"]())
    msg = hipc.parse(plain)
    t = best(
        {
            "parse C plain": lambda: hipc.parse(plain),
            "parse Python plain": lambda: hipc.parse_py(plain),
            "parse C rich": lambda: hipc.parse(rich),
            "parse Python rich": lambda: hipc.parse_py(rich),
            "cmif request": lambda: cmif.parse_request(msg, False),
            "memory check": lambda: srv._check_memory(mem, msg),
            "reply build": lambda: hipc.build(0, cmif.reply_payload(0, b"1234")),
            "Server.handle psm#0": lambda: srv.handle(mem, sid, plain),
        }
    )
    for k, v in t.items():
        print(f"{k:22s} {v:7.2f} us CPU")
    print(
        f"(rich: PID, a copy handle, X, B and C descriptors; C/Python: plain "
        f"{t['parse Python plain'] / t['parse C plain']:.2f}x, rich {t['parse Python rich'] / t['parse C rich']:.2f}x)"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
