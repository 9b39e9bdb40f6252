"""bsd:u from a recompiled guest through the kernel's IPC SVCs (``programs/ipc.c``'s raw message
helpers, laid out from switchbrew's IPC_Marshalling, plus the calls libnx's ``bsd.c`` makes):
RegisterClient with the PID and a copy handle, then a TCP connection from the guest to itself on
127.0.0.1, a send and a recv, and a poll that blocks 200 ms on an empty socket while a second
guest thread on the same core keeps running (the blocking call gives the core back:
``KernelBridge.unlocked``).  Expected values: Linux errno EBADF 9 (switchbrew "Sockets
services": Linux errno definitions), POLLIN 1 (FreeBSD poll.h), sockaddr_in {16, AF_INET 2, port
big-endian, 127.0.0.1}."""

from __future__ import annotations

import os
import subprocess
import sys

from tests.horizon.hz_build import ROOT, bundle_from_c

MAIN = r"""
static Handle bsdh;
typedef struct { int32_t ret, err; uint8_t extra[8]; } Bsd;

/* one bsd call: in (X, with an empty A) and out (C, with an empty B) are libnx's auto buffers */
static Bsd bsd_call(uint32_t cmd, const void *p, uint32_t psize, const void *in, uint32_t in_size,
                    void *out, uint32_t out_size) {
    Msg m = {.type = 4};
    if (in) { m.nx = 1; m.x_addr[0] = (uint64_t)(uintptr_t)in; m.x_size[0] = in_size; m.na = 1; }
    if (out) { m.nb = 1; m.c_mode = 3; m.c_addr = (uint64_t)(uintptr_t)out; m.c_size = out_size; }
    build(&m, cmd, p, psize, 0);
    Reply r;
    Bsd b = {-99, -99, {0}};
    Result rc = call(bsdh, &r, 0, 16);
    if (rc || r.result) { hz_printf("bsd %d: %x %x\n", cmd, rc, r.result); return b; }
    memcpy(&b, r.data, sizeof b);
    return b;
}

static volatile int spin_count, spin_stop;
static void spinner(void *arg) {
    (void)arg;
    while (!spin_stop) { spin_count++; svcSleepThread(1000000); }
}
static char spin_stack[0x8000] __attribute__((aligned(16)));
static HzThread spin_thread;

int hz_main(void) {
    Reply r; Msg m; uint64_t zero = 0;
    svcConnectToNamedPort(&sm, "sm:");
    m = (Msg){.type = 4, .send_pid = 1}; build(&m, 0, &zero, 8, 0); call(sm, &r, 0, 0);
    bsdh = get_service("bsd:u");
    uint8_t reg[0x30] = {0};
    m = (Msg){.type = 4, .send_pid = 1, .ncopy = 1, .copy = {CUR_PROCESS}};
    build(&m, 0, reg, 0x30, 0);
    Result rc = call(bsdh, &r, 0, 8);
    hz_printf("RegisterClient: %x %x\n", rc, r.result);

    int32_t tcp[3] = {2, 1, 0};
    Bsd ls = bsd_call(2, tcp, 12, 0, 0, 0, 0);
    uint8_t sa[16] = {16, 2, 0, 0, 127, 0, 0, 1};
    int32_t lfd[2] = {ls.ret, 4};
    Bsd b = bsd_call(13, lfd, 4, sa, 16, 0, 0);
    hz_printf("Bind: %d %d\n", b.ret, b.err);
    b = bsd_call(18, lfd, 8, 0, 0, 0, 0);
    hz_printf("Listen: %d %d\n", b.ret, b.err);
    uint8_t name[16] = {0};
    b = bsd_call(16, lfd, 4, 0, 0, name, 16);
    hz_printf("GetSockName: %d %d len=%d family=%d addr=%d.%d.%d.%d port_nonzero=%d\n", b.ret, b.err, name[0], name[1],
              name[4], name[5], name[6], name[7], (name[2] | name[3]) != 0);
    Bsd cs = bsd_call(2, tcp, 12, 0, 0, 0, 0);
    memcpy(sa + 2, name + 2, 2);
    int32_t cfd[2] = {cs.ret, 0};
    b = bsd_call(14, cfd, 4, sa, 16, 0, 0);
    hz_printf("Connect: %d %d\n", b.ret, b.err);
    uint8_t peer[16] = {0};
    Bsd conn = bsd_call(12, lfd, 4, 0, 0, peer, 16);
    hz_printf("Accept: new=%d err=%d family=%d addr=%d.%d.%d.%d\n", conn.ret != ls.ret && conn.ret != cs.ret, conn.err,
              peer[1], peer[4], peer[5], peer[6], peer[7]);
    static const char msg[] = "ping from the guest";
    b = bsd_call(10, cfd, 8, msg, sizeof msg - 1, 0, 0);
    hz_printf("Send: %d %d\n", b.ret, b.err);
    char buf[64] = {0};
    int32_t rfd[2] = {conn.ret, 0};
    b = bsd_call(8, rfd, 8, 0, 0, buf, sizeof buf);
    hz_printf("Recv: %d %d %s\n", b.ret, b.err, buf);

    /* a poll that waits: 200 ms on a socket with nothing queued, a same-core thread running meanwhile */
    hz_thread_create(&spin_thread, spinner, 0, spin_stack, sizeof spin_stack, 44, 0);
    hz_thread_start(&spin_thread);
    svcSleepThread(5000000);
    int before = spin_count;
    struct { int32_t fd; int16_t events, revents; } pf = {conn.ret, 1, 0};
    uint32_t pp[2] = {1, 200};
    uint64_t t0 = svcGetSystemTick();
    b = bsd_call(6, pp, 8, &pf, 8, &pf, 8);
    uint64_t ms = (svcGetSystemTick() - t0) / 19200;
    int during = spin_count - before;
    hz_printf("Poll empty: %d %d revents=%d waited=%d spinner_ran=%d\n", b.ret, b.err, pf.revents, ms >= 150,
              during >= 20);
    bsd_call(10, cfd, 8, "x", 1, 0, 0);
    pf.revents = 0;
    b = bsd_call(6, pp, 8, &pf, 8, &pf, 8);
    hz_printf("Poll ready: %d %d revents=%d\n", b.ret, b.err, pf.revents);
    spin_stop = 1;
    hz_thread_join(&spin_thread);

    int32_t bad[2] = {77, 0};
    b = bsd_call(8, bad, 8, 0, 0, buf, 8);
    hz_printf("Recv(77): %d %d\n", b.ret, b.err);
    b = bsd_call(26, rfd, 4, 0, 0, 0, 0);
    hz_printf("Close: %d %d\n", b.ret, b.err);
    return 0;
}
"""

EXPECTED = [
    "RegisterClient: 0 0",
    "Bind: 0 0",
    "Listen: 0 0",
    "GetSockName: 0 0 len=16 family=2 addr=127.0.0.1 port_nonzero=1",
    "Connect: 0 0",
    "Accept: new=1 err=0 family=2 addr=127.0.0.1",
    "Send: 19 0",
    "Recv: 19 0 ping from the guest",
    "Poll empty: 0 0 revents=0 waited=1 spinner_ran=1",
    "Poll ready: 1 0 revents=1",
    "Recv(77): -1 9",
    "Close: 0 0",
]


def test_sockets_from_guest(tmp_path) -> None:
    src = (ROOT / "examples/horizon_hello/programs/ipc.c").read_text()
    src = src[: src.index("int hz_main(void)")] + MAIN
    bundle = bundle_from_c(src, {}, tmp_path / "w")
    env = {**os.environ, "NXRECOMP_CPU_HOST_SD_DIR": str(tmp_path / "sd"), "NXRECOMP_CPU_HOST_SAVE_DIR": str(tmp_path / "saves")}
    r = subprocess.run(
        [sys.executable, "-m", "nxrecomp", "hz-run", str(bundle)], cwd=ROOT, capture_output=True, text=True, timeout=180, env=env
    )
    assert r.returncode == 0, r.stderr[-3000:]
    assert r.stdout.splitlines() == EXPECTED, r.stdout + r.stderr[-2000:]
