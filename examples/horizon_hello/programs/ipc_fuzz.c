/* ipc_fuzz.c — thousands of malformed IPC requests (random headers, descriptor counts, buffers
 * outside guest memory, bogus handles, unknown domain objects, random command ids) against real
 * sessions; prints how often each SVC result came back.  Buffers point at unmapped or read-only
 * memory or into the heap (never at the program's own data), so whatever the host writes, the
 * program goes on. */
#include "hz_sdk.h"

#define N 4000
#define SFCI 0x49434653u

static uint64_t rng = 0x9E3779B97F4A7C15ull;
static uint64_t rnd(void) { rng ^= rng << 13; rng ^= rng >> 7; rng ^= rng << 17; return rng; }

#define NS 14
static Handle sm, sessions[NS];
static const uint32_t CMDS[] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 18, 20, 21, 22, 37, 38, 40, 60,
    100, 101, 102, 103, 106, 109, 120, 200, 1000, 1003, 1010, 1020, 1102, 2010, 2020, 2030, 2101, 5202, 9999};
static uint64_t heap;
static uint32_t codes[16], counts[16], ncodes;

static void count(uint32_t rc) {
    for (uint32_t i = 0; i < ncodes; i++) if (codes[i] == rc) { counts[i]++; return; }
    if (ncodes < 16) { codes[ncodes] = rc; counts[ncodes++] = 1; }
}

static uint32_t *tls(void) { return (uint32_t *)hz_tls(); }

/* a plain CMIF request; returns the reply's first move handle (0 if none) */
static Handle request(Handle h, uint32_t type, uint32_t cmd, const void *params, uint32_t psize, int pid) {
    uint32_t *w = tls();
    memset(w, 0, 0x100);
    uint32_t i = 2;
    if (pid) { w[i++] = 1; i += 2; }
    uint32_t off = (i * 4 + 15) & ~15u;
    uint32_t *p = (uint32_t *)((uint8_t *)w + off);
    p[0] = SFCI; p[2] = cmd;
    memcpy(p + 4, params, psize);
    w[0] = type;
    w[1] = ((off - i * 4) + 16 + psize + 3) / 4 + 4 | (uint32_t)pid << 31;
    if (svcSendSyncRequest(h)) return 0;
    if (!(w[1] >> 31)) return 0;
    uint32_t sp = w[2];
    return (sp >> 5 & 0xF) ? w[3 + (sp & 1) * 2 + (sp >> 1 & 0xF)] : 0;
}

static Handle service(const char *name) {
    char n[8] = {0};
    for (int i = 0; i < 8 && name[i]; i++) n[i] = name[i];
    return request(sm, 4, 1, n, 8, 0);
}

static void reconnect(void) {
    for (int i = 0; i < NS; i++) if (sessions[i]) svcCloseHandle(sessions[i]);
    if (sm) svcCloseHandle(sm);
    svcConnectToNamedPort(&sm, "sm:");
    uint64_t zero = 0;
    request(sm, 4, 0, &zero, 8, 1);
    sessions[0] = service("set:sys");
    sessions[1] = service("appletOE");
    request(sessions[1], 5, 0, 0, 0, 0);          /* a domain */
    sessions[2] = service("psm");
    sessions[3] = sm;
    static const char *more[] = {"set", "apm", "lm", "time:u", "hid", "fsp-srv", "vi:u", "nvdrv", "pl:u", "vi:m"};
    for (int i = 0; i < NS - 4; i++) {
        sessions[4 + i] = service(more[i]);
        if (i % 3 == 0) request(sessions[4 + i], 5, 0, 0, 0, 0);   /* some as domains */
    }
}

static uint64_t address(void) {
    switch (rnd() % 5) {
    case 0: return 0;
    case 1: return rnd() & ((1ull << 39) - 1);
    case 2: return 0x1000;                                   /* unmapped */
    case 3: return (uint64_t)(uintptr_t)&rnd & ~0xFFFull;    /* code: read-only */
    default: return heap + (rnd() & 0x1FFFFF);               /* the heap: may run past its end */
    }
}

static void fuzz_one(void) {
    Handle h = (rnd() % 10 == 0) ? (uint32_t)rnd() : sessions[rnd() % NS];
    uint32_t *w = tls();
    for (int i = 0; i < 64; i++) w[i] = (uint32_t)rnd();
    uint32_t style = rnd() % 4;
    if (style == 0) goto send;                                /* all random */
    uint32_t nx = rnd() % 4 == 0, na = rnd() % 4 == 0, nb = rnd() % 4 == 0, nw = rnd() % 8 == 0, ndata = 8 + rnd() % 32;
    uint32_t c_mode = rnd() % 4 == 0 ? rnd() % 5 : 0, special = rnd() % 4 == 0;
    uint32_t type = style == 3 ? (uint32_t)(rnd() % 20) : 4 + (rnd() & 1);
    w[0] = type | nx << 16 | na << 20 | nb << 24 | nw << 28;
    w[1] = ndata | c_mode << 10 | special << 31;
    uint32_t i = 2;
    if (special) {
        uint32_t ncopy = rnd() % 3, nmove = rnd() % 2;
        w[i++] = (uint32_t)(rnd() & 1) | ncopy << 1 | nmove << 5;
        if (w[2] & 1) i += 2;
        for (uint32_t k = 0; k < ncopy + nmove; k++) w[i++] = (rnd() % 4) ? 0xFFFF8001u : (uint32_t)rnd();
    }
    for (uint32_t k = 0; k < nx; k++) {
        uint64_t a = address();
        w[i++] = k | (uint32_t)((a >> 36) & 0x3F) << 6 | (uint32_t)((a >> 32) & 0xF) << 12 | (uint32_t)(rnd() & 0xFFFF) << 16;
        w[i++] = (uint32_t)a;
    }
    for (uint32_t k = 0; k < na + nb + nw; k++) {
        uint64_t a = address(), s = (rnd() & 1) ? rnd() % 0x300000 : 0;
        w[i++] = (uint32_t)s;
        w[i++] = (uint32_t)a;
        w[i++] = (uint32_t)(rnd() & 3) | (uint32_t)((a >> 36) << 2) | (uint32_t)((s >> 32) & 0xF) << 24 | (uint32_t)((a >> 32) & 0xF) << 28;
    }
    if (i < 60) {                                             /* a CMIF header (or a domain one) most times */
        uint32_t off = (i * 4 + 15) & ~15u;
        uint32_t *p = (uint32_t *)((uint8_t *)w + off);
        if ((uint8_t *)(p + 12) < (uint8_t *)w + 0x100) {
            if (rnd() & 1) {                                   /* domain header: random object, in-objects */
                p[0] = (uint32_t)(1 + rnd() % 3) | (uint32_t)(rnd() % 4) << 8 | (uint32_t)(rnd() % 0x60) << 16;
                p[1] = (uint32_t)(rnd() % 6);
                p += 4;
            }
            p[0] = (rnd() % 8) ? SFCI : (uint32_t)rnd();
            p[2] = (rnd() % 8) ? CMDS[rnd() % (sizeof CMDS / sizeof CMDS[0])] : (uint32_t)rnd();
        }
    }
    (void)i;
send:;
    Result rc = svcSendSyncRequest(h);
    count(rc);
    if (rc == 0 && (w[1] >> 31)) {                            /* close the handles a reply gave us */
        uint32_t sp = w[2], n = (sp >> 1 & 0xF) + (sp >> 5 & 0xF);
        uint32_t at = 3 + (sp & 1) * 2;
        for (uint32_t k = 0; k < n && at + k < 64; k++) svcCloseHandle(w[at + k]);
    }
    if (rc == 0xF601u || (rnd() % 200) == 0) reconnect();     /* a Close message ended a session */
}

int hz_main(void) {
    void *p;
    svcSetHeapSize(&p, 0x200000);
    heap = (uint64_t)(uintptr_t)p;
    reconnect();
    for (int i = 0; i < N; i++) fuzz_one();
    for (uint32_t i = 0; i < ncodes; i++) hz_printf("result %x: %d\n", codes[i], counts[i]);
    /* the host still serves: a well-formed request works */
    reconnect();
    uint32_t *w = tls();
    memset(w, 0, 0x100);
    w[0] = 4; w[1] = 8; w[4] = SFCI; w[6] = 0;
    Result rc = svcSendSyncRequest(sessions[2]);
    hz_printf("after the fuzz: %x %x %d\n", rc, w[6], w[8]);
    hz_printf("fuzz done %d\n", N);
    return 0;
}
