"""Sessions and ports between guest threads (issue 30, part 3): a recompiled guest program of
ours runs a server thread and a client thread that talk through ``svcCreateSession`` (0x40),
``svcReplyAndReceive`` (0x43), ``svcSendSyncRequest`` (0x21), ``svcCreatePort`` (0x70),
``svcManageNamedPort`` (0x71), ``svcConnectToPort`` (0x72), ``svcAcceptSession`` (0x41) and
``svcCloseHandle`` (0x16); every expected line follows from public documentation, named beside
it: switchbrew's SVC page and IPC_Marshalling (registers, message layout), Atmosphère's kernel
(``kern_svc_ipc.cpp``: ReplyAndReceive's argument checks, reply-then-wait, the closed-session
results; ``kern_k_server_session.cpp``: a closed client signals the server session, a closed
server ends requests with SessionClosed; ``kern_k_port.cpp``: PortClosed) and its result table
(``svc_results.hpp``: module 1, description << 9).  The program compares values it gets from the
kernel itself (its process id, the server thread's id) rather than numbers we chose."""

from __future__ import annotations

import subprocess
import sys

from tests.horizon.hz_build import ROOT, bundle_from_c

SRC = r"""
#include "hz_sdk.h"

/* the SVCs our SDK has no wrapper for (registers: switchbrew SVC page, libnx svc.s) */
static Result svcCreateSession(Handle *server, Handle *client, uint32_t is_light, uint64_t name) {
    register uint64_t x0 __asm__("x0"), x1 __asm__("x1"), x2 __asm__("x2") = is_light, x3 __asm__("x3") = name;
    __asm__ volatile("svc 0x40" : "=r"(x0), "=r"(x1), "+r"(x2), "+r"(x3) : : "memory");
    *server = (Handle)x1; *client = (Handle)x2;
    return (Result)x0;
}
static Result svcAcceptSession(Handle *out, Handle port) {
    register uint64_t x0 __asm__("x0"), x1 __asm__("x1") = port;
    __asm__ volatile("svc 0x41" : "=r"(x0), "+r"(x1) : : "memory");
    *out = (Handle)x1;
    return (Result)x0;
}
static Result svcReplyAndReceive(int32_t *index, const Handle *handles, int32_t n, Handle reply, int64_t timeout) {
    register uint64_t x0 __asm__("x0"), x1 __asm__("x1") = (uint64_t)(uintptr_t)handles, x2 __asm__("x2") = (uint64_t)n,
        x3 __asm__("x3") = reply, x4 __asm__("x4") = (uint64_t)timeout;
    __asm__ volatile("svc 0x43" : "=r"(x0), "+r"(x1), "+r"(x2), "+r"(x3), "+r"(x4) : : "memory");
    *index = (int32_t)x1;
    return (Result)x0;
}
static Result svcReplyAndReceiveWithUserBuffer(int32_t *index, void *buf, uint64_t size, const Handle *handles,
                                               int32_t n, Handle reply, int64_t timeout) {
    register uint64_t x0 __asm__("x0"), x1 __asm__("x1") = (uint64_t)(uintptr_t)buf, x2 __asm__("x2") = size,
        x3 __asm__("x3") = (uint64_t)(uintptr_t)handles, x4 __asm__("x4") = (uint64_t)n, x5 __asm__("x5") = reply,
        x6 __asm__("x6") = (uint64_t)timeout;
    __asm__ volatile("svc 0x44" : "=r"(x0), "+r"(x1), "+r"(x2), "+r"(x3), "+r"(x4), "+r"(x5), "+r"(x6) : : "memory");
    *index = (int32_t)x1;
    return (Result)x0;
}
/* light IPC: W0 = handle, W1..W7 = 7 words in and out (Atmosphère's light-IPC entry) */
static Result light_svc(int nr, Handle h, uint32_t d[7]) {
    register uint64_t x0 __asm__("x0") = h, x1 __asm__("x1") = d[0], x2 __asm__("x2") = d[1], x3 __asm__("x3") = d[2],
        x4 __asm__("x4") = d[3], x5 __asm__("x5") = d[4], x6 __asm__("x6") = d[5], x7 __asm__("x7") = d[6];
    if (nr == 0x20)
        __asm__ volatile("svc 0x20" : "+r"(x0), "+r"(x1), "+r"(x2), "+r"(x3), "+r"(x4), "+r"(x5), "+r"(x6), "+r"(x7) : : "memory");
    else
        __asm__ volatile("svc 0x42" : "+r"(x0), "+r"(x1), "+r"(x2), "+r"(x3), "+r"(x4), "+r"(x5), "+r"(x6), "+r"(x7) : : "memory");
    d[0] = (uint32_t)x1; d[1] = (uint32_t)x2; d[2] = (uint32_t)x3; d[3] = (uint32_t)x4;
    d[4] = (uint32_t)x5; d[5] = (uint32_t)x6; d[6] = (uint32_t)x7;
    return (Result)x0;
}
static Result svcCancelSynchronization(Handle thread) {
    register uint64_t x0 __asm__("x0") = thread;
    __asm__ volatile("svc 0x19" : "+r"(x0) : : "memory");
    return (Result)x0;
}
static Result svcCreatePort(Handle *server, Handle *client, int32_t max, uint32_t is_light, uint64_t name) {
    register uint64_t x0 __asm__("x0"), x1 __asm__("x1"), x2 __asm__("x2") = (uint64_t)max, x3 __asm__("x3") = is_light,
        x4 __asm__("x4") = name;
    __asm__ volatile("svc 0x70" : "=r"(x0), "=r"(x1), "+r"(x2), "+r"(x3), "+r"(x4) : : "memory");
    *server = (Handle)x1; *client = (Handle)x2;
    return (Result)x0;
}
static Result svcManageNamedPort(Handle *server, const char *name, int32_t max) {
    register uint64_t x0 __asm__("x0"), x1 __asm__("x1") = (uint64_t)(uintptr_t)name, x2 __asm__("x2") = (uint64_t)max;
    __asm__ volatile("svc 0x71" : "=r"(x0), "+r"(x1), "+r"(x2) : : "memory");
    *server = (Handle)x1;
    return (Result)x0;
}
static Result svcCreateCodeMemory(Handle *out, void *addr, uint64_t size) {
    register uint64_t x0 __asm__("x0"), x1 __asm__("x1") = (uint64_t)(uintptr_t)addr, x2 __asm__("x2") = size;
    __asm__ volatile("svc 0x4b" : "=r"(x0), "+r"(x1), "+r"(x2) : : "memory");
    *out = (Handle)x1;
    return (Result)x0;
}
static Result svcControlCodeMemory(Handle h, uint32_t op, uint64_t addr, uint64_t size, uint32_t perm) {
    register uint64_t x0 __asm__("x0") = h, x1 __asm__("x1") = op, x2 __asm__("x2") = addr, x3 __asm__("x3") = size,
        x4 __asm__("x4") = perm;
    __asm__ volatile("svc 0x4c" : "+r"(x0), "+r"(x1), "+r"(x2), "+r"(x3), "+r"(x4) : : "memory");
    return (Result)x0;
}
static Result svcConnectToPort(Handle *out, Handle port) {
    register uint64_t x0 __asm__("x0"), x1 __asm__("x1") = port;
    __asm__ volatile("svc 0x72" : "=r"(x0), "+r"(x1) : : "memory");
    *out = (Handle)x1;
    return (Result)x0;
}

/* HIPC (switchbrew IPC_Marshalling): word 0 = type; word 1 = #data words, bit 31 special header;
 * special header = send PID (bit 0), #copy (bits 1-4), #move (bits 5-8); then PID, handles, data */
static void put_msg(uint32_t type, int pid, const Handle *copy, int ncopy, const Handle *move, int nmove,
                    const uint32_t *data, int ndata) {
    uint32_t *m = hz_tls();
    int special = pid || ncopy || nmove, at = 2;
    memset(m, 0, 0x100);
    m[0] = type;
    m[1] = (uint32_t)ndata | (special ? 1u << 31 : 0);
    if (special) {
        m[at++] = (uint32_t)(pid ? 1 : 0) | (uint32_t)ncopy << 1 | (uint32_t)nmove << 5;
        if (pid) { m[at] = 0xDEAD; m[at + 1] = 0xBEEF; at += 2; }   /* the kernel writes the real PID */
        for (int i = 0; i < ncopy; i++) m[at++] = copy[i];
        for (int i = 0; i < nmove; i++) m[at++] = move[i];
    }
    for (int i = 0; i < ndata; i++) m[at++] = data[i];
}

typedef struct { int pid; uint64_t pid_value; int ncopy, nmove; Handle h[8]; uint32_t data[8]; } Parsed;
static void parse(Parsed *p) {
    uint32_t *m = hz_tls();
    int at = 2, nd = (int)(m[1] & 0x3FF);
    memset(p, 0, sizeof *p);
    if (m[1] >> 31) {
        uint32_t sp = m[at++];
        p->pid = (int)(sp & 1); p->ncopy = (int)(sp >> 1 & 15); p->nmove = (int)(sp >> 5 & 15);
        if (p->pid) { p->pid_value = m[at] | (uint64_t)m[at + 1] << 32; at += 2; }
        for (int i = 0; i < p->ncopy + p->nmove; i++) p->h[i] = m[at++];
    }
    for (int i = 0; i < nd && i < 8; i++) p->data[i] = m[at++];
}

/* a page of .bss (a module's data: MemoryState CodeData) to alias into the stack region */
static uint8_t bss_page[0x1000] __attribute__((aligned(0x1000)));

#define STACK 0x8000
static uint8_t stack1[STACK] __attribute__((aligned(16))), stack2[STACK] __attribute__((aligned(16)));
static Handle g_srv;

/* scenario 1's server: receives, checks, replies (plain, then reply-then-wait, then reply only) */
static void server1(void *arg) {
    (void)arg;
    Handle srv = g_srv;
    int32_t idx = 7;
    Parsed p;
    uint64_t my_pid = 0, my_tid = 0, got = 0;
    svcGetProcessId(&my_pid, HZ_CUR_PROCESS);
    svcGetThreadId(&my_tid, HZ_CUR_THREAD);
    Result r = svcReplyAndReceive(&idx, &srv, 1, 0, -1);
    parse(&p);
    hz_printf("server receive: %x index=%d data=%x copies=%d moves=%d\n", r, idx, p.data[0], p.ncopy, p.nmove);
    hz_printf("server: PID written by the kernel = GetProcessId: %d\n", p.pid && p.pid_value == my_pid);
    r = svcGetProcessId(&got, p.h[0]);          /* the client's copy of 0xFFFF8001 */
    hz_printf("server: copied process pseudo-handle is real: %d %x same=%d\n", p.h[0] != HZ_CUR_PROCESS && p.h[0] != 0,
              r, got == my_pid);
    int32_t i2;
    hz_printf("server: copied readable event unsignalled: %x\n", svcWaitSynchronization(&i2, &p.h[1], 1, 0));
    hz_printf("server: moved writable event signals: %x\n", svcSignalEvent(p.h[2]));
    hz_printf("server: copied readable event now: %x\n", svcWaitSynchronization(&i2, &p.h[1], 1, 0));
    svcCloseHandle(p.h[0]); svcCloseHandle(p.h[1]); svcCloseHandle(p.h[2]);
    Handle me = HZ_CUR_THREAD;
    uint32_t reply[2] = {p.data[0] + 1, (uint32_t)my_tid};
    put_msg(0, 0, &me, 1, 0, 0, reply, 2);
    r = svcReplyAndReceive(&idx, &srv, 1, srv, -1);       /* reply, then wait for the next */
    parse(&p);
    hz_printf("server reply+receive: %x index=%d data=%x\n", r, idx, p.data[0]);
    uint32_t reply2 = p.data[0] + 1;
    put_msg(0, 0, 0, 0, 0, 0, &reply2, 1);
    Result only = svcReplyAndReceive(&idx, 0, 0, srv, 0);
    r = svcReplyAndReceive(&idx, &srv, 1, 0, -1);          /* printed once the next request is here */
    parse(&p);
    hz_printf("server reply only (no handles, timeout 0): %x\n", only);
    hz_printf("server receive 3: %x index=%d data=%x\n", r, idx, p.data[0]);
    uint32_t reply3 = p.data[0] + 1;
    put_msg(0, 0, 0, 0, 0, 0, &reply3, 1);
    idx = 7;
    r = svcReplyAndReceive(&idx, &srv, 1, srv, -1);
    hz_printf("server after the client closed: %x index=%d\n", r, idx);
    r = svcReplyAndReceive(&idx, 0, 0, srv, 0);
    hz_printf("server reply with no request: %x index=%d\n", r, idx);
    hz_printf("server close: %x\n", svcCloseHandle(srv));
}

/* scenario 2's server: receives one request and closes its end without replying (nx-hbloader) */
static void server2(void *arg) {
    (void)arg;
    Handle srv = g_srv;
    int32_t idx;
    Result r = svcReplyAndReceive(&idx, &srv, 1, 0, -1);
    Parsed p;
    parse(&p);
    hz_printf("server2 receive: %x copies=%d\n", r, p.ncopy);
    svcCloseHandle(p.h[0]);
    svcCloseHandle(srv);
}

/* an echo server: data[0] + 1 until its client goes */
static void echo(void *arg) {
    (void)arg;
    Handle srv = g_srv, reply = 0;
    int32_t idx;
    for (;;) {
        Result r = svcReplyAndReceive(&idx, &srv, 1, reply, -1);
        if (r) { hz_printf("echo ends: %x\n", r); break; }
        Parsed p;
        parse(&p);
        uint32_t d = p.data[0] + 1;
        put_msg(0, 0, 0, 0, 0, 0, &d, 1);
        reply = srv;
    }
    svcCloseHandle(srv);
}

/* a server that closes every handle a request brings, replies, and ends with its client */
static void closer(void *arg) {
    (void)arg;
    Handle srv = g_srv;
    int32_t idx;
    Result r = svcReplyAndReceive(&idx, &srv, 1, 0, -1);
    Parsed p;
    parse(&p);
    int closed = 0;
    for (int i = 0; i < p.ncopy + p.nmove; i++) closed += svcCloseHandle(p.h[i]) == 0;
    put_msg(0, 0, 0, 0, 0, 0, 0, 0);
    r = svcReplyAndReceive(&idx, &srv, 1, srv, -1);
    hz_printf("closer closed %d handles, ends: %x\n", closed, r);
    svcCloseHandle(srv);
}

/* the echo server on a message buffer of its own (ReplyAndReceiveWithUserBuffer) */
static uint32_t user_msg[0x400] __attribute__((aligned(0x1000)));
static void echo_user_buffer(void *arg) {
    (void)arg;
    Handle srv = g_srv, reply = 0;
    int32_t idx;
    for (;;) {
        Result r = svcReplyAndReceiveWithUserBuffer(&idx, user_msg, sizeof user_msg, &srv, 1, reply, -1);
        if (r) { hz_printf("user-buffer echo ends: %x\n", r); break; }
        uint32_t d = user_msg[2] + 1;             /* no special header: data from word 2 */
        user_msg[0] = 0; user_msg[1] = 1; user_msg[2] = d;
        reply = srv;
    }
    svcCloseHandle(srv);
}

/* a light server: each reply is the request's words, the first + 1 and the rest doubled */
static void light_server(void *arg) {
    (void)arg;
    Handle srv = g_srv;
    uint32_t d[7] = {0};
    for (;;) {
        Result r = light_svc(0x42, srv, d);
        if (r) { hz_printf("light server ends: %x\n", r); break; }
        d[0] = (d[0] + 1) | 0x80000000u;             /* KLightSession::ReplyFlag: reply on the next call */
        for (int i = 1; i < 7; i++) d[i] *= 2;
    }
    svcCloseHandle(srv);
}

/* waits that CancelSynchronization ends */
static Handle g_ev;
static void wait_event_forever(void *arg) {
    (void)arg;
    int32_t i = 7;
    Result r = svcWaitSynchronization(&i, &g_ev, 1, -1);
    hz_printf("cancelled WaitSynchronization: %x index=%d\n", r, i);
}
static void receive_forever(void *arg) {
    (void)arg;
    int32_t i = 7;
    Result r = svcReplyAndReceive(&i, &g_srv, 1, 0, -1);
    hz_printf("cancelled ReplyAndReceive: %x index=%d\n", r, i);
}

static void run_thread(HzThread *t, void (*fn)(void *), uint8_t *stack) {
    Result r = hz_thread_create(t, fn, 0, stack, STACK, 44, -2);
    if (!r) r = hz_thread_start(t);
    if (r) hz_printf("thread: %x\n", r);
}

int hz_main(void) {
    Handle srv, cli, ew, er, ew2, er2;
    int32_t idx;
    Parsed p;
    HzThread th;

    /* ---- 1: one session, argument checks, a request with handles and PID, closes ---- */
    hz_printf("CreateSession: %x\n", svcCreateSession(&srv, &cli, 0, 0));
    hz_printf("handles distinct: %d\n", srv != cli && srv && cli);
    hz_printf("WaitSynchronization(server, 0): %x\n", svcWaitSynchronization(&idx, &srv, 1, 0));
    hz_printf("ReplyAndReceive(server, timeout 0): %x\n", svcReplyAndReceive(&idx, &srv, 1, 0, 0));
    idx = 7;
    Result r = svcReplyAndReceive(&idx, &srv, 1, srv, 0);
    hz_printf("ReplyAndReceive(reply, nothing received): %x index=%d\n", r, idx);
    hz_printf("ReplyAndReceive(client handle): %x\n", svcReplyAndReceive(&idx, &cli, 1, 0, 0));
    hz_printf("ReplyAndReceive(65 handles): %x\n", svcReplyAndReceive(&idx, &srv, 65, 0, 0));
    hz_printf("ReplyAndReceive(handles unmapped): %x\n", svcReplyAndReceive(&idx, (const Handle *)8, 1, 0, 0));
    hz_printf("ReplyAndReceive(reply to a client handle): %x\n", svcReplyAndReceive(&idx, 0, 0, cli, 0));
    hz_printf("SendSyncRequest(server handle): %x\n", svcSendSyncRequest(srv));
    svcCreateEvent(&ew, &er);
    svcCreateEvent(&ew2, &er2);
    g_srv = srv;
    run_thread(&th, server1, stack1);
    Handle copies[2] = {HZ_CUR_PROCESS, er2}, moves[1] = {ew2};
    uint32_t d = 0x100;
    put_msg(4, 1, copies, 2, moves, 1, &d, 1);
    r = svcSendSyncRequest(cli);
    parse(&p);
    uint64_t tid = 0;
    Result tr = svcGetThreadId(&tid, p.h[0]);
    hz_printf("client reply: %x data=%x copies=%d thread handle is the server's: %x %d\n", r, p.data[0], p.ncopy, tr,
              tid == p.data[1]);
    svcCloseHandle(p.h[0]);
    hz_printf("client: moved handle left its table: %x\n", svcSignalEvent(ew2));
    hz_printf("client: its readable event was signalled: %x\n", svcWaitSynchronization(&idx, &er2, 1, 0));
    Handle bogus = 0x1234;
    put_msg(4, 0, &bogus, 1, 0, 0, &d, 1);
    hz_printf("client request copying a bogus handle: %x\n", svcSendSyncRequest(cli));
    d = 0x200;
    put_msg(4, 0, 0, 0, 0, 0, &d, 1);
    r = svcSendSyncRequest(cli);
    parse(&p);
    hz_printf("client reply 2: %x data=%x\n", r, p.data[0]);
    d = 0x300;
    put_msg(4, 0, 0, 0, 0, 0, &d, 1);
    r = svcSendSyncRequest(cli);
    parse(&p);
    hz_printf("client reply 3: %x data=%x\n", r, p.data[0]);
    Result closed = svcCloseHandle(cli);
    hz_thread_join(&th);                 /* the server prints what it saw of the close first */
    hz_printf("client close: %x\n", closed);
    hz_printf("client close again: %x\n", svcCloseHandle(cli));

    /* ---- 2: the server closes while a request waits (nx-hbloader's own-process-handle trick) ---- */
    svcCreateSession(&srv, &cli, 0, 0);
    g_srv = srv;
    run_thread(&th, server2, stack1);
    Handle proc = HZ_CUR_PROCESS;
    put_msg(4, 0, &proc, 1, 0, 0, 0, 0);
    hz_printf("request the server closes: %x\n", svcSendSyncRequest(cli));
    hz_thread_join(&th);
    hz_printf("request after the server closed: %x\n", svcSendSyncRequest(cli));
    hz_printf("close client: %x\n", svcCloseHandle(cli));

    /* ---- 3: a timeout ---- */
    svcCreateSession(&srv, &cli, 0, 0);
    uint64_t t0 = svcGetSystemTick();
    r = svcReplyAndReceive(&idx, &srv, 1, 0, 20000000);
    uint64_t ticks = svcGetSystemTick() - t0;
    hz_printf("ReplyAndReceive(20 ms): %x waited=%d\n", r, ticks >= 19200000ull / 50);   /* 19.2 MHz tick */
    hz_printf("close server then send: %x %x\n", svcCloseHandle(srv), svcSendSyncRequest(cli));
    svcCloseHandle(cli);

    /* ---- 3b: a server with its own message buffer ---- */
    svcCreateSession(&srv, &cli, 0, 0);
    hz_printf("WithUserBuffer(unaligned): %x\n", svcReplyAndReceiveWithUserBuffer(&idx, (uint8_t *)user_msg + 16, 0x1000, &srv, 1, 0, 0));
    hz_printf("WithUserBuffer(size 0): %x\n", svcReplyAndReceiveWithUserBuffer(&idx, user_msg, 0, &srv, 1, 0, 0));
    g_srv = srv;
    run_thread(&th, echo_user_buffer, stack2);
    d = 7;
    put_msg(4, 0, 0, 0, 0, 0, &d, 1);
    r = svcSendSyncRequest(cli);
    parse(&p);
    hz_printf("user-buffer echo: %x data=%d\n", r, p.data[0]);
    svcCloseHandle(cli);
    hz_thread_join(&th);

    /* ---- 3c: a light session ---- */
    Handle ls, lc;
    uint32_t w[7] = {0};
    hz_printf("CreateSession(light): %x\n", svcCreateSession(&ls, &lc, 1, 0));
    hz_printf("SendSyncRequest(light client): %x\n", svcSendSyncRequest(lc));
    hz_printf("ReplyAndReceive(light server): %x\n", svcReplyAndReceive(&idx, &ls, 1, 0, 0));
    w[0] = 0x80000000u;
    hz_printf("ReplyAndReceiveLight(reply, nothing received): %x\n", light_svc(0x42, ls, w));
    g_srv = ls;
    run_thread(&th, light_server, stack2);
    for (int i = 0; i < 7; i++) w[i] = (uint32_t)(i + 1);
    r = light_svc(0x20, lc, w);
    hz_printf("SendSyncRequestLight: %x words=%x %d %d %d %d %d %d\n", r, w[0], w[1], w[2], w[3], w[4], w[5], w[6]);
    svcCloseHandle(lc);
    hz_thread_join(&th);
    hz_printf("SendSyncRequestLight(closed handle): %x\n", light_svc(0x20, lc, w));

    /* ---- 3d: CancelSynchronization (either the wait is ended, or the next one ends at once) ---- */
    Handle ev_w;
    svcCreateEvent(&ev_w, &g_ev);
    run_thread(&th, wait_event_forever, stack2);
    svcSleepThread(10000000);
    Result cr = svcCancelSynchronization(th.handle);
    hz_thread_join(&th);
    hz_printf("CancelSynchronization: %x\n", cr);
    svcCreateSession(&srv, &cli, 0, 0);
    g_srv = srv;
    run_thread(&th, receive_forever, stack2);
    svcSleepThread(10000000);
    svcCancelSynchronization(th.handle);
    hz_thread_join(&th);
    svcCloseHandle(srv);
    svcCloseHandle(cli);
    hz_printf("CancelSynchronization(self): %x\n", svcCancelSynchronization(HZ_CUR_THREAD));
    hz_printf("then a wait with timeout 0: %x\n", svcWaitSynchronization(&idx, &g_ev, 1, 0));
    hz_printf("then a wait of 1 ms: %x\n", svcWaitSynchronization(&idx, &g_ev, 1, 1000000));
    hz_printf("then another: %x\n", svcWaitSynchronization(&idx, &g_ev, 1, 1000000));
    hz_printf("CancelSynchronization(an event): %x\n", svcCancelSynchronization(g_ev));

    /* ---- 4: ports ---- */
    Handle sp, cp, c1, c2, s1;
    hz_printf("CreatePort(max 1): %x\n", svcCreatePort(&sp, &cp, 1, 0, 0));
    hz_printf("AcceptSession(nothing): %x\n", svcAcceptSession(&s1, sp));
    hz_printf("ConnectToPort: %x\n", svcConnectToPort(&c1, cp));
    hz_printf("server port signalled: %x index=%d\n", svcWaitSynchronization(&idx, &sp, 1, 0), idx);
    hz_printf("ConnectToPort(over max): %x\n", svcConnectToPort(&c2, cp));
    hz_printf("AcceptSession: %x\n", svcAcceptSession(&s1, sp));
    g_srv = s1;
    run_thread(&th, echo, stack2);
    d = 41;
    put_msg(4, 0, 0, 0, 0, 0, &d, 1);
    r = svcSendSyncRequest(c1);
    parse(&p);
    hz_printf("port session echo: %x data=%d\n", r, p.data[0]);
    svcCloseHandle(c1);
    hz_thread_join(&th);
    svcCloseHandle(sp);
    hz_printf("ConnectToPort(server port closed): %x\n", svcConnectToPort(&c2, cp));
    svcCloseHandle(cp);

    /* ---- 5: a named port ---- */
    hz_printf("ManageNamedPort(hzt:): %x\n", svcManageNamedPort(&sp, "hzt:", 2));
    hz_printf("ManageNamedPort(hzt:) again: %x\n", svcManageNamedPort(&s1, "hzt:", 2));
    hz_printf("ConnectToNamedPort(hzt:): %x\n", svcConnectToNamedPort(&c1, "hzt:"));
    hz_printf("AcceptSession: %x\n", svcAcceptSession(&s1, sp));
    g_srv = s1;
    run_thread(&th, echo, stack2);
    d = 99;
    put_msg(4, 0, 0, 0, 0, 0, &d, 1);
    r = svcSendSyncRequest(c1);
    parse(&p);
    hz_printf("named port echo: %x data=%d\n", r, p.data[0]);
    svcCloseHandle(c1);
    hz_thread_join(&th);
    hz_printf("ManageNamedPort(hzt:, 0) deletes it: %x\n", svcManageNamedPort(&s1, "hzt:", 0));
    hz_printf("ConnectToNamedPort(hzt:) after: %x\n", svcConnectToNamedPort(&c1, "hzt:"));
    svcCloseHandle(sp);

    /* ---- 6: MapMemory from a module's .bss (nx-hbloader's thread stacks come from there) ---- */
    uint64_t base = 0, size = 0, at, dst = 0;
    svcGetInfo(&base, 14, HZ_CUR_PROCESS, 0);            /* StackRegionAddress (libnx InfoType 14) */
    svcGetInfo(&size, 15, HZ_CUR_PROCESS, 0);            /* StackRegionSize (15) */
    for (at = base; at < base + size && !dst; ) {
        MemoryInfo mi;
        uint32_t pi;
        svcQueryMemory(&mi, &pi, at);
        if (mi.type == 0 && mi.addr + mi.size - at >= 0x10000) dst = at;
        at = mi.addr + mi.size;
    }
    bss_page[5] = 0x5A;
    hz_printf("MapMemory(stack region <- .bss): %x\n", svcMapMemory((void *)dst, bss_page, 0x1000));
    hz_printf("alias holds the data: %d\n", ((volatile uint8_t *)dst)[5] == 0x5A);
    MemoryInfo mi;
    uint32_t pi;
    svcQueryMemory(&mi, &pi, (uint64_t)(uintptr_t)bss_page);
    hz_printf("source while mapped: type=%x perm=%x locked=%d\n", mi.type, mi.perm, mi.attr & 1);
    hz_printf("UnmapMemory: %x\n", svcUnmapMemory((void *)dst, bss_page, 0x1000));
    svcQueryMemory(&mi, &pi, (uint64_t)(uintptr_t)bss_page);
    hz_printf("source after: type=%x perm=%x data=%x\n", mi.type, mi.perm, bss_page[5]);

    /* ---- 7: code memory, as nx-hbloader probes it ---- */
    Handle code;
    hz_printf("CreateCodeMemory(unaligned): %x\n", svcCreateCodeMemory(&code, bss_page + 8, 0x1000));
    hz_printf("CreateCodeMemory(size 0): %x\n", svcCreateCodeMemory(&code, bss_page, 0));
    hz_printf("CreateCodeMemory(.bss page): %x\n", svcCreateCodeMemory(&code, bss_page, 0x1000));
    svcQueryMemory(&mi, &pi, (uint64_t)(uintptr_t)bss_page);
    hz_printf("owner's page locked: %d\n", mi.attr & 1);
    hz_printf("ControlCodeMemory(own, bad operation): %x\n", svcControlCodeMemory(code, 0xFFFFFFFFu, 0, 0x1000, 0));
    hz_printf("ControlCodeMemory(a closed port handle): %x\n", svcControlCodeMemory(sp, 0, 0, 0x1000, 5));
    /* a copy of the handle is a second reference: closing it leaves the object to the first */
    svcCreateSession(&srv, &cli, 0, 0);
    g_srv = srv;
    run_thread(&th, closer, stack2);
    put_msg(4, 0, &code, 1, 0, 0, 0, 0);
    hz_printf("copy the code memory handle: %x\n", svcSendSyncRequest(cli));
    svcCloseHandle(cli);
    hz_thread_join(&th);
    svcQueryMemory(&mi, &pi, (uint64_t)(uintptr_t)bss_page);
    hz_printf("still locked after the copy closed: %d\n", mi.attr & 1);
    hz_printf("close code memory: %x\n", svcCloseHandle(code));
    svcQueryMemory(&mi, &pi, (uint64_t)(uintptr_t)bss_page);
    hz_printf("owner's page after: locked=%d perm=%x\n", mi.attr & 1, mi.perm);
    return 0;
}
"""

# Results: module 1, description << 9 (Atmosphère svc_results.hpp): TimedOut 117 = 0xEA01,
# InvalidState 125 = 0xFA01, InvalidHandle 114 = 0xE401, OutOfRange 119 = 0xEE01,
# InvalidPointer 115 = 0xE601, SessionClosed 123 = 0xF601, NotFound 121 = 0xF201,
# OutOfSessions 7 = 0xE01, PortClosed 131 = 0x10601.
EXPECTED = [
    "CreateSession: 0",
    "handles distinct: 1",
    "WaitSynchronization(server, 0): ea01",  # nothing queued: the server session is not signalled
    "ReplyAndReceive(server, timeout 0): ea01",
    "ReplyAndReceive(reply, nothing received): fa01 index=-1",  # SendReply without a request: InvalidState, index -1
    "ReplyAndReceive(client handle): e401",  # a client session is no synchronization object
    "ReplyAndReceive(65 handles): ee01",  # 0 <= n <= 64 (ArgumentHandleCountMax)
    "ReplyAndReceive(handles unmapped): e601",  # InvalidPointer
    "ReplyAndReceive(reply to a client handle): e401",
    "SendSyncRequest(server handle): e401",  # only a client session takes requests
    "server receive: 0 index=0 data=100 copies=2 moves=1",
    "server: PID written by the kernel = GetProcessId: 1",
    "server: copied process pseudo-handle is real: 1 0 same=1",
    "server: copied readable event unsignalled: ea01",
    "server: moved writable event signals: 0",
    "server: copied readable event now: 0",
    "client reply: 0 data=101 copies=1 thread handle is the server's: 0 1",
    "client: moved handle left its table: e401",
    "client: its readable event was signalled: 0",
    "client request copying a bogus handle: e401",  # the receive fails; the client gets the error
    "server reply+receive: 0 index=0 data=200",
    "client reply 2: 0 data=201",
    "server reply only (no handles, timeout 0): ea01",  # reply sent, then nothing to wait for: TimedOut
    "server receive 3: 0 index=0 data=300",
    "client reply 3: 0 data=301",
    "server after the client closed: f601 index=0",  # a closed client signals the server session
    "server reply with no request: fa01 index=-1",
    "server close: 0",
    "client close: 0",
    "client close again: e401",
    "server2 receive: 0 copies=1",
    "request the server closes: f601",  # the served request ends with SessionClosed
    "request after the server closed: f601",
    "close client: 0",
    "ReplyAndReceive(20 ms): ea01 waited=1",
    "close server then send: 0 f601",
    "WithUserBuffer(unaligned): cc01",  # InvalidAddress
    "WithUserBuffer(size 0): ca01",  # InvalidSize
    "user-buffer echo: 0 data=8",
    "user-buffer echo ends: f601",
    "CreateSession(light): 0",
    "SendSyncRequest(light client): e401",  # a light client is no KClientSession
    "ReplyAndReceive(light server): e401",  # ... nor a light server a synchronization object
    "ReplyAndReceiveLight(reply, nothing received): fa01",
    "SendSyncRequestLight: 0 words=80000002 4 6 8 10 12 14",
    "light server ends: f601",  # the client closed: SessionClosed
    "SendSyncRequestLight(closed handle): e401",
    # Cancelled = 118 = 0xEC01; the checks run in the order of KSynchronizationObject::Wait:
    # signalled objects, then timeout 0 (TimedOut), then a pending cancel
    "cancelled WaitSynchronization: ec01 index=-1",
    "CancelSynchronization: 0",
    "cancelled ReplyAndReceive: ec01 index=-1",
    "CancelSynchronization(self): 0",
    "then a wait with timeout 0: ea01",
    "then a wait of 1 ms: ec01",
    "then another: ea01",
    "CancelSynchronization(an event): e401",
    "CreatePort(max 1): 0",
    "AcceptSession(nothing): f201",  # NotFound
    "ConnectToPort: 0",
    "server port signalled: 0 index=0",
    "ConnectToPort(over max): e01",  # OutOfSessions
    "AcceptSession: 0",
    "port session echo: 0 data=42",
    "echo ends: f601",
    "ConnectToPort(server port closed): 10601",  # PortClosed
    "ManageNamedPort(hzt:): 0",
    "ManageNamedPort(hzt:) again: fa01",  # the name exists: InvalidState
    "ConnectToNamedPort(hzt:): 0",
    "AcceptSession: 0",
    "named port echo: 0 data=100",
    "echo ends: f601",
    "ManageNamedPort(hzt:, 0) deletes it: 0",
    "ConnectToNamedPort(hzt:) after: f201",  # no such port any more: NotFound
    # MapMemory's source needs FlagCanAlias: CodeData (a module's .data/.bss, state 4) has it as
    # Normal (heap) does (Atmosphère kern_k_memory_block.hpp: 0x03FEBD04 / 0x037EBD05); the source
    # stays in its state, locked (attribute bit 0) and inaccessible while aliased (switchbrew SVC page)
    "MapMemory(stack region <- .bss): 0",
    "alias holds the data: 1",
    "source while mapped: type=4 perm=0 locked=1",
    "UnmapMemory: 0",
    "source after: type=4 perm=3 data=5a",
    # svc_code_memory.cpp's checks: InvalidAddress 102 = 0xCC01, InvalidSize 101 = 0xCA01; the
    # owner's own ControlCodeMemory: InvalidCurrentMemory 0xD401 on Horizon [5.0.0+] (nx-hbloader's
    # getCodeMemoryCapability documents it: only a patched kernel answers InvalidEnumValue 0xF001)
    "CreateCodeMemory(unaligned): cc01",
    "CreateCodeMemory(size 0): ca01",
    "CreateCodeMemory(.bss page): 0",
    "owner's page locked: 1",
    "ControlCodeMemory(own, bad operation): d401",
    "ControlCodeMemory(a closed port handle): e401",
    "copy the code memory handle: 0",
    "closer closed 1 handles, ends: f601",
    "still locked after the copy closed: 1",
    "close code memory: 0",
    "owner's page after: locked=0 perm=3",
]


def test_sessions_between_guest_threads(tmp_path) -> None:
    bundle = bundle_from_c(SRC, {}, tmp_path / "w")
    r = subprocess.run(
        [sys.executable, "-m", "nxrecomp", "hz-run", str(bundle)], cwd=ROOT, capture_output=True, text=True, timeout=180
    )
    assert r.returncode == 0, r.stderr[-3000:]
    assert r.stdout.splitlines() == EXPECTED, r.stdout + r.stderr[-2000:]
