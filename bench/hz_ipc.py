"""Speed of IPC served by the host (cpu_host/horizon/ipc + services): one svcSendSyncRequest
round trip (HIPC + CMIF parse, dispatch, reply) from a recompiled guest, against a bare SVC.

Builds a guest (examples/horizon_hello/programs/ipc.c's raw-IPC helpers + a timing loop) that
times 4000 requests of psm GetBatteryChargePercentage (no buffers), of set:sys
GetFirmwareVersion (a C buffer), of a domain request to appletOE's ICommonStateGetter and of
svcGetThreadPriority (the SVC floor), best of 5 rounds, and prints ns per call.

    .venv/bin/python bench/hz_ipc.py
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.horizon.hz_build import bundle_from_c, nxrecomp  # noqa: E402

MAIN = r"""
static uint64_t best(int kind, Handle h, uint32_t obj) {
    uint64_t b = ~0ull;
    static uint8_t fw[0x100];
    for (int round = 0; round < 5; round++) {
        uint64_t t0 = svcGetSystemTick();
        for (int i = 0; i < 4000; i++) {
            Msg m; Reply r;
            if (kind == 0) { m = (Msg){.type = 4}; build(&m, 0, 0, 0, 0); call(h, &r, 0, 4); }
            else if (kind == 1) { m = (Msg){.type = 4, .c_mode = 3, .c_addr = (uint64_t)(uintptr_t)fw, .c_size = 0x100};
                                  build(&m, 4, 0, 0, 0); call(h, &r, 0, 0); }
            else if (kind == 2) { m = (Msg){.type = 4, .domain_obj = obj}; build(&m, 9, 0, 0, 0); call(h, &r, 1, 1); }
            else { int32_t p; svcGetThreadPriority(&p, 0xFFFF8000u); }
        }
        uint64_t t = svcGetSystemTick() - t0;
        if (t < b) b = t;
    }
    return b * 10000 / 192 / 4000;     /* ticks at 19.2 MHz -> ns per call */
}

int hz_main(void) {
    Reply r; Msg m; uint64_t zero = 0;
    svcConnectToNamedPort(&sm, "sm:");
    m = (Msg){.type = 4, .send_pid = 1}; build(&m, 0, &zero, 8, 0); call(sm, &r, 0, 0);
    Handle psm = get_service("psm"), setsys = get_service("set:sys"), oe = get_service("appletOE");
    m = (Msg){.type = 5}; build(&m, 0, 0, 0, 0); call(oe, &r, 0, 4);
    uint32_t o = u32at(r.data);
    m = (Msg){.type = 4, .send_pid = 1, .ncopy = 1, .copy = {0xFFFF8001u}, .domain_obj = o};
    build(&m, 0, &zero, 8, 0); call(oe, &r, 1, 0);
    uint32_t proxy = r.objects[0];
    m = (Msg){.type = 4, .domain_obj = proxy}; build(&m, 0, 0, 0, 0); call(oe, &r, 1, 0);
    uint32_t csg = r.objects[0];
    hz_printf("psm_request %d\n", (int)best(0, psm, 0));
    hz_printf("setsys_c_buffer %d\n", (int)best(1, setsys, 0));
    hz_printf("domain_request %d\n", (int)best(2, oe, csg));
    hz_printf("bare_svc %d\n", (int)best(3, 0, 0));
    return 0;
}
"""


def main() -> int:
    src = (ROOT / "examples/horizon_hello/programs/ipc.c").read_text()
    src = src[: src.index("int hz_main(void)")] + MAIN
    with tempfile.TemporaryDirectory() as tmp:
        bundle = bundle_from_c(src, {}, Path(tmp) / "w")
        r = nxrecomp("hz-run", str(bundle), timeout=600)
    if r.returncode != 0:
        raise SystemExit(f"hz_ipc failed ({r.returncode}): {r.stderr[-2000:]}")
    for line in r.stdout.splitlines():
        k, v = line.split()
        print(f"{k:18s} {int(v):8d} ns")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
