/* ipc.c — raw IPC from the guest side, written from the public message layout (switchbrew
 * IPC_Marshalling; libnx sf/hipc.h, sf/cmif.h, sf/tipc.h), not from the host's server: HIPC
 * header words, special header, X/A/B/C descriptors, the CMIF SFCI/SFCO payload at the first
 * 16-byte aligned offset, domains, TIPC.  Prints one observation per line; the test checks each
 * against the documented value. */
#include "hz_sdk.h"

#define SFCI 0x49434653u
#define SFCO 0x4F434653u
#define CUR_PROCESS 0xFFFF8001u       /* switchbrew's pseudo-handles, written as literals here */
#define CUR_THREAD  0xFFFF8000u

typedef struct Msg {
    uint32_t type, nx, na, nb, ndata_bytes, c_mode, send_pid, ncopy, nmove;
    uint32_t copy[4], move[4];
    uint64_t x_addr[2]; uint32_t x_size[2];
    uint64_t a_addr[2]; uint64_t a_size[2];
    uint64_t b_addr[2]; uint64_t b_size[2];
    uint64_t c_addr; uint32_t c_size;
    uint32_t domain_obj;          /* nonzero: a domain request to this object */
    uint32_t domain_type;         /* 1 send, 2 close */
    uint32_t nin_obj; uint32_t in_obj[2];
} Msg;

static uint32_t *W(void) { return (uint32_t *)hz_tls(); }

/* Build the request into the TLS; params (psize bytes) go after the SFCI header (or raw for TIPC) */
static void build(const Msg *m, uint32_t cmd, const void *params, uint32_t psize, int tipc) {
    uint32_t *w = W();
    memset(w, 0, 0x100);
    int special = m->send_pid || m->ncopy || m->nmove;
    uint32_t i = 2;
    if (special) {
        w[i++] = m->send_pid | m->ncopy << 1 | m->nmove << 5;
        if (m->send_pid) i += 2;
        for (uint32_t k = 0; k < m->ncopy; k++) w[i++] = m->copy[k];
        for (uint32_t k = 0; k < m->nmove; k++) w[i++] = m->move[k];
    }
    for (uint32_t k = 0; k < m->nx; k++) {
        uint64_t a = m->x_addr[k];
        w[i++] = k | (uint32_t)((a >> 36) & 0x3F) << 6 | (uint32_t)((a >> 32) & 0xF) << 12 | m->x_size[k] << 16;
        w[i++] = (uint32_t)a;
    }
    const uint64_t *addrs[2] = {m->a_addr, m->b_addr}, *sizes[2] = {m->a_size, m->b_size};
    uint32_t counts[2] = {m->na, m->nb};
    for (int t = 0; t < 2; t++)
        for (uint32_t k = 0; k < counts[t]; k++) {
            uint64_t a = addrs[t][k], s = sizes[t][k];
            w[i++] = (uint32_t)s;
            w[i++] = (uint32_t)a;
            w[i++] = (uint32_t)((a >> 36) << 2) | (uint32_t)((s >> 32) & 0xF) << 24 | (uint32_t)((a >> 32) & 0xF) << 28;
        }
    uint32_t data_start = i;
    uint8_t *base = (uint8_t *)w;
    uint32_t off = tipc ? i * 4 : ((i * 4 + 15) & ~15u);
    uint32_t body = 0;
    if (!tipc) {
        uint32_t *p = (uint32_t *)(base + off);
        if (m->domain_obj) {
            uint32_t payload = 16 + psize;
            p[0] = (m->domain_type ? m->domain_type : 1) | m->nin_obj << 8 | payload << 16;
            p[1] = m->domain_obj;
            p[2] = 0; p[3] = 0;
            p += 4;
            body += 16;
        }
        p[0] = SFCI; p[1] = 0; p[2] = cmd; p[3] = 0;
        memcpy(p + 4, params, psize);
        body += 16 + psize;
        if (m->domain_obj)
            for (uint32_t k = 0; k < m->nin_obj; k++) { ((uint32_t *)(base + off + body))[0] = m->in_obj[k]; body += 4; }
        if (m->domain_obj && m->domain_type == 2) body = 16;
    } else {
        memcpy(base + off, params, psize);
        body = psize;
    }
    uint32_t ndata = (off - data_start * 4 + body + 3) / 4;
    if (!tipc) ndata += 4;   /* libnx reserves 16 bytes of alignment room */
    i = data_start + ndata;
    if (m->c_mode) {
        w[i++] = (uint32_t)m->c_addr;
        w[i++] = (uint32_t)((m->c_addr >> 32) & 0xFFFF) | m->c_size << 16;
    }
    w[0] = (tipc ? cmd + 16 : m->type) | m->nx << 16 | m->na << 20 | m->nb << 24;
    w[1] = ndata | m->c_mode << 10 | (uint32_t)special << 31;
}

/* Parse the reply: result of the CMIF (or TIPC) payload; out data, handles, domain objects */
typedef struct Reply { uint32_t result, nobj; uint8_t *data; uint32_t ncopy, nmove, copy[4], move[4]; uint32_t *objects; } Reply;

static void parse(Reply *r, int domain, uint32_t out_size, int tipc) {
    uint32_t *w = W();
    uint32_t i = 2;
    r->ncopy = r->nmove = 0;
    if (w[1] >> 31) {
        uint32_t sp = w[i++];
        r->ncopy = sp >> 1 & 0xF;
        r->nmove = sp >> 5 & 0xF;
        if (sp & 1) i += 2;
        for (uint32_t k = 0; k < r->ncopy; k++) r->copy[k] = w[i++];
        for (uint32_t k = 0; k < r->nmove; k++) r->move[k] = w[i++];
    }
    i += 2 * (w[0] >> 16 & 0xF);
    uint8_t *base = (uint8_t *)w;
    if (tipc) {
        r->result = w[i];
        r->data = (uint8_t *)&w[i + 1];
        return;
    }
    uint32_t off = (i * 4 + 15) & ~15u;
    uint32_t *p = (uint32_t *)(base + off);
    r->nobj = 0;
    if (domain) { r->nobj = p[0]; p += 4; }
    r->result = p[0] == SFCO ? p[2] : 0xBAD0BAD0u;
    r->data = (uint8_t *)(p + 4);
    r->objects = (uint32_t *)(r->data + out_size);
}

static Result call(Handle h, Reply *r, int domain, uint32_t out_size) {
    Result rc = svcSendSyncRequest(h);
    if (rc == 0) parse(r, domain, out_size, 0);
    return rc;
}

static Handle sm;

static Handle get_service(const char *name) {
    Msg m = {.type = 4};
    char n[8] = {0};
    for (int i = 0; i < 8 && name[i]; i++) n[i] = name[i];
    build(&m, 1, n, 8, 0);
    Reply r;
    Result rc = call(sm, &r, 0, 0);
    if (rc || r.result) { hz_printf("GetServiceHandle(%s): %x %x\n", name, rc, r.result); return 0; }
    return r.move[0];
}

static uint64_t u64at(const uint8_t *p) { uint64_t v; memcpy(&v, p, 8); return v; }
static uint32_t u32at(const uint8_t *p) { uint32_t v; memcpy(&v, p, 4); return v; }

static uint8_t fwbuf[0x100] __attribute__((aligned(16)));
static uint8_t big[0x2000] __attribute__((aligned(0x1000)));
static const char relro_like[0x2000] __attribute__((aligned(0x1000))) = {1};
static uint8_t datapage[0x2000] __attribute__((aligned(0x1000))) = {1};

int hz_main(void) {
    Reply r;
    Msg m;
    Result rc;
    uint64_t v = 0;

    /* pseudo-handles as literals: the process is 0xFFFF8001, the thread 0xFFFF8000 */
    hz_printf("GetInfo(ProgramId, 0xFFFF8001): %x\n", svcGetInfo(&v, 18, CUR_PROCESS, 0));
    hz_printf("GetInfo(ProgramId, 0xFFFF8000): %x\n", svcGetInfo(&v, 18, CUR_THREAD, 0));
    int32_t prio = -1;
    hz_printf("GetThreadPriority(0xFFFF8000): %x\n", svcGetThreadPriority(&prio, CUR_THREAD));
    hz_printf("GetProcessId(0xFFFF8001): %x\n", svcGetProcessId(&v, CUR_PROCESS));

    /* named ports */
    Handle bad;
    hz_printf("ConnectToNamedPort(nope): %x\n", svcConnectToNamedPort(&bad, "nope"));
    hz_printf("ConnectToNamedPort(12 chars): %x\n", svcConnectToNamedPort(&bad, "abcdefghijkl"));
    rc = svcConnectToNamedPort(&sm, "sm:");
    hz_printf("ConnectToNamedPort(sm:): %x\n", rc);

    /* sm: before RegisterClient */
    m = (Msg){.type = 4};
    build(&m, 1, "set:sys\0", 8, 0);
    rc = call(sm, &r, 0, 0);
    hz_printf("GetServiceHandle before RegisterClient: %x %x\n", rc, r.result);
    m = (Msg){.type = 4, .send_pid = 1};
    uint64_t zero = 0;
    build(&m, 0, &zero, 8, 0);
    rc = call(sm, &r, 0, 0);
    hz_printf("RegisterClient: %x %x\n", rc, r.result);

    /* set:sys GetFirmwareVersion (3): a fixed-size C buffer of 0x100 bytes */
    Handle setsys = get_service("set:sys");
    m = (Msg){.type = 4, .c_mode = 3, .c_addr = (uint64_t)(uintptr_t)fwbuf, .c_size = 0x100};
    build(&m, 3, 0, 0, 0);
    rc = call(setsys, &r, 0, 0);
    hz_printf("GetFirmwareVersion: %x %x %d.%d.%d display=%s\n", rc, r.result, fwbuf[0], fwbuf[1], fwbuf[2],
              (const char *)fwbuf + 0x68);

    /* appletOE as a domain: ConvertCurrentObjectToDomain (control 0) -> object id */
    Handle oe = get_service("appletOE");
    m = (Msg){.type = 5};
    build(&m, 0, 0, 0, 0);
    rc = call(oe, &r, 0, 4);
    uint32_t oe_obj = u32at(r.data);
    hz_printf("ConvertCurrentObjectToDomain: %x %x id=%d\n", rc, r.result, oe_obj);
    m = (Msg){.type = 5};
    build(&m, 3, 0, 0, 0);
    rc = call(oe, &r, 0, 2);
    hz_printf("QueryPointerBufferSize: %x %x nonzero=%d\n", rc, r.result, *(uint16_t *)r.data != 0);
    /* OpenApplicationProxy(u64 reserved, PID, copy handle = current process) */
    m = (Msg){.type = 4, .send_pid = 1, .ncopy = 1, .copy = {CUR_PROCESS}, .domain_obj = oe_obj};
    build(&m, 0, &zero, 8, 0);
    rc = call(oe, &r, 1, 0);
    uint32_t proxy = r.objects[0];
    hz_printf("OpenApplicationProxy: %x %x objects=%d\n", rc, r.result, r.nobj);
    m = (Msg){.type = 4, .domain_obj = proxy};
    build(&m, 0, 0, 0, 0);
    rc = call(oe, &r, 1, 0);
    uint32_t csg = r.objects[0];
    hz_printf("GetCommonStateGetter: %x %x\n", rc, r.result);
    m = (Msg){.type = 4, .domain_obj = csg};
    build(&m, 0, 0, 0, 0);
    rc = call(oe, &r, 1, 0);
    Handle ev = r.copy[0];
    hz_printf("GetEventHandle: %x %x copies=%d\n", rc, r.result, r.ncopy);
    int32_t idx = -1;
    hz_printf("message event signalled: %x index=%d\n", svcWaitSynchronization(&idx, &ev, 1, 0), idx);
    m = (Msg){.type = 4, .domain_obj = csg};
    build(&m, 1, 0, 0, 0);
    rc = call(oe, &r, 1, 4);
    hz_printf("ReceiveMessage: %x %x message=%d\n", rc, r.result, u32at(r.data));
    m = (Msg){.type = 4, .domain_obj = csg};
    build(&m, 1, 0, 0, 0);
    rc = call(oe, &r, 1, 4);
    hz_printf("ReceiveMessage again: %x %x\n", rc, r.result);
    hz_printf("message event after: %x\n", svcWaitSynchronization(&idx, &ev, 1, 0));
    m = (Msg){.type = 4, .domain_obj = csg};
    build(&m, 9, 0, 0, 0);
    rc = call(oe, &r, 1, 1);
    hz_printf("GetCurrentFocusState: %x %x %d\n", rc, r.result, r.data[0]);
    m = (Msg){.type = 4, .domain_obj = 99};
    build(&m, 0, 0, 0, 0);
    rc = call(oe, &r, 1, 0);
    hz_printf("request to domain object 99: %x %x\n", rc, r.result);
    m = (Msg){.type = 4, .domain_obj = csg, .domain_type = 2};
    build(&m, 0, 0, 0, 0);
    rc = call(oe, &r, 1, 0);
    hz_printf("close domain object: %x %x\n", rc, r.result);
    m = (Msg){.type = 4, .domain_obj = csg};
    build(&m, 9, 0, 0, 0);
    rc = call(oe, &r, 1, 1);
    hz_printf("request to the closed object: %x %x\n", rc, r.result);

    /* TIPC on sm:: GetServiceHandle (type 16 + 1), then psm over CMIF */
    m = (Msg){0};
    build(&m, 1, "psm\0\0\0\0\0", 8, 1);
    rc = svcSendSyncRequest(sm);
    parse(&r, 0, 0, 1);
    Handle psm = r.move[0];
    hz_printf("TIPC GetServiceHandle(psm): %x %x moves=%d\n", rc, r.result, r.nmove);
    m = (Msg){.type = 4};
    build(&m, 0, 0, 0, 0);
    rc = call(psm, &r, 0, 4);
    hz_printf("GetBatteryChargePercentage: %x %x %d\n", rc, r.result, u32at(r.data));

    /* time: the user clock */
    Handle tu = get_service("time:u");
    m = (Msg){.type = 4};
    build(&m, 0, 0, 0, 0);
    rc = call(tu, &r, 0, 0);
    Handle clock = r.move[0];
    m = (Msg){.type = 4};
    build(&m, 0, 0, 0, 0);
    rc = call(clock, &r, 0, 8);
    hz_printf("GetCurrentTime: %x %x %lx\n", rc, r.result, u64at(r.data));

    /* time's shared memory, read as libnx reads it: a counter, then two copies; the current one
     * at index counter & 1.  User clock = context offset + (steady base ns + ticks in ns) / 1e9 */
    uint64_t now_ipc = u64at(r.data);
    m = (Msg){.type = 4};
    build(&m, 20, 0, 0, 0);
    rc = call(tu, &r, 0, 0);
    Handle tshm = r.copy[0];
    uint64_t talias = 0;
    svcGetInfo(&talias, 2, CUR_PROCESS, 0);
    uint8_t *tm = (uint8_t *)(uintptr_t)(talias + 0x100000);
    rc = svcMapSharedMemory(tshm, tm, 0x1000, 1);
    uint32_t sc = u32at(tm), uc = u32at(tm + 0x38);
    int64_t base = (int64_t)u64at(tm + 8 + (sc & 1) * 0x18);
    int64_t offset = (int64_t)u64at(tm + 0x38 + 8 + (uc & 1) * 0x20);
    int same_source = 1;
    for (int k = 0; k < 16; k++)
        same_source &= tm[8 + (sc & 1) * 0x18 + 8 + k] == tm[0x38 + 8 + (uc & 1) * 0x20 + 0x10 + k];
    uint64_t ticks = svcGetSystemTick();
    int64_t steady = (base + (int64_t)(ticks / 192 * 10000)) / 1000000000ll;
    int64_t diff = offset + steady - (int64_t)now_ipc;
    hz_printf("time shared memory: map %x same source %d clock matches %d\n", rc, same_source, diff >= 0 && diff <= 2);
    svcUnmapSharedMemory(tshm, tm, 0x1000);

    /* hid: CreateAppletResource(aruid, PID) -> IAppletResource; its shared memory */
    Handle hid = get_service("hid");
    m = (Msg){.type = 4, .send_pid = 1};
    uint64_t aruid = 0;
    build(&m, 0, &aruid, 8, 0);
    rc = call(hid, &r, 0, 0);
    Handle res = r.move[0];
    m = (Msg){.type = 4};
    build(&m, 0, 0, 0, 0);
    rc = call(res, &r, 0, 0);
    Handle shm = r.copy[0];
    hz_printf("GetSharedMemoryHandle: %x %x copies=%d\n", rc, r.result, r.ncopy);
    uint64_t alias = 0;
    svcGetInfo(&alias, 2, CUR_PROCESS, 0);
    uint8_t *hm = (uint8_t *)(uintptr_t)alias;
    hz_printf("MapSharedMemory(RW of an R object): %x\n", svcMapSharedMemory(shm, hm, 0x40000, 3));
    hz_printf("MapSharedMemory(wrong size): %x\n", svcMapSharedMemory(shm, hm, 0x1000, 1));
    hz_printf("MapSharedMemory: %x\n", svcMapSharedMemory(shm, hm, 0x40000, 1));
    MemoryInfo mi;
    uint32_t pi;
    svcQueryMemory(&mi, &pi, (uint64_t)(uintptr_t)hm);
    hz_printf("QueryMemory(shared): type=%x perm=%x size=%lx\n", mi.type, mi.perm, mi.size);
    svcSleepThread(100000000);   /* a few hid samples */
    uint8_t *np = hm + 0x9A00, *hh = hm + 0x9A00 + 8 * 0x5000;
    hz_printf("npad styles: player1=%x handheld=%x\n", u32at(np), u32at(hh));
    uint64_t tail = u64at(np + 0x28 + 0x10), count = u64at(np + 0x28 + 0x18);
    uint8_t *e = np + 0x28 + 0x20 + tail * 0x30;
    hz_printf("full-key lifo: count=%d entry sampling match=%d buttons=%lx attrs=%x\n", (int)count,
              u64at(e) == u64at(e + 8), u64at(e + 16), u32at(e + 8 + 0x20));
    hz_printf("UnmapSharedMemory: %x\n", svcUnmapSharedMemory(shm, hm, 0x40000));

    /* fsp-srv: a domain; OpenSdCardFileSystem, CreateFile, OpenFile, Write, GetSize */
    Handle fsp = get_service("fsp-srv");
    m = (Msg){.type = 5};
    build(&m, 0, 0, 0, 0);
    call(fsp, &r, 0, 4);
    uint32_t fsp_obj = u32at(r.data);
    m = (Msg){.type = 4, .send_pid = 1, .domain_obj = fsp_obj};
    build(&m, 1, &zero, 8, 0);
    rc = call(fsp, &r, 1, 0);
    hz_printf("SetCurrentProcess: %x %x\n", rc, r.result);
    m = (Msg){.type = 4, .domain_obj = fsp_obj};
    build(&m, 18, 0, 0, 0);
    rc = call(fsp, &r, 1, 0);
    uint32_t sdfs = r.objects[0];
    hz_printf("OpenSdCardFileSystem: %x %x\n", rc, r.result);
    static char path[0x301] = "/hello.txt";
    struct { uint32_t option, pad; uint64_t size; } cf = {0, 0, 0};
    m = (Msg){.type = 4, .domain_obj = sdfs, .nx = 1, .x_addr = {(uint64_t)(uintptr_t)path}, .x_size = {0x301}};
    build(&m, 0, &cf, sizeof cf, 0);
    rc = call(fsp, &r, 1, 0);
    hz_printf("CreateFile: %x %x\n", rc, r.result);
    m = (Msg){.type = 4, .domain_obj = sdfs, .nx = 1, .x_addr = {(uint64_t)(uintptr_t)path}, .x_size = {0x301}};
    build(&m, 0, &cf, sizeof cf, 0);
    rc = call(fsp, &r, 1, 0);
    hz_printf("CreateFile again: %x %x\n", rc, r.result);
    uint32_t mode = 2;
    m = (Msg){.type = 4, .domain_obj = sdfs, .nx = 1, .x_addr = {(uint64_t)(uintptr_t)path}, .x_size = {0x301}};
    build(&m, 8, &mode, 4, 0);
    rc = call(fsp, &r, 1, 0);
    uint32_t file = r.objects[0];
    hz_printf("OpenFile: %x %x\n", rc, r.result);
    static const char text[] = "written over IPC\n";
    struct { uint32_t option, pad; int64_t off; uint64_t size; } wr = {0, 0, 0, sizeof text - 1};
    m = (Msg){.type = 4, .domain_obj = file, .na = 1, .a_addr = {(uint64_t)(uintptr_t)text}, .a_size = {sizeof text - 1}};
    build(&m, 1, &wr, sizeof wr, 0);
    rc = call(fsp, &r, 1, 0);
    hz_printf("Write: %x %x\n", rc, r.result);
    m = (Msg){.type = 4, .domain_obj = file};
    build(&m, 4, 0, 0, 0);
    rc = call(fsp, &r, 1, 8);
    hz_printf("GetSize: %x %x %d\n", rc, r.result, (int)u64at(r.data));
    /* read it back through a second IFile opened for reading: Read(option, pad, offset 9, size 100) */
    uint32_t rmode = 1;
    m = (Msg){.type = 4, .domain_obj = sdfs, .nx = 1, .x_addr = {(uint64_t)(uintptr_t)path}, .x_size = {0x301}};
    build(&m, 8, &rmode, 4, 0);
    call(fsp, &r, 1, 0);
    uint32_t rfile = r.objects[0];
    static char rbuf[0x40];
    struct { uint32_t option, pad; int64_t off; uint64_t size; } rd = {0, 0, 8, 8};
    m = (Msg){.type = 4, .domain_obj = rfile, .nb = 1, .b_addr = {(uint64_t)(uintptr_t)rbuf}, .b_size = {0x40}};
    build(&m, 0, &rd, sizeof rd, 0);
    rc = call(fsp, &r, 1, 8);
    hz_printf("Read: %x %x read %d '%s'\n", rc, r.result, (int)u64at(r.data), rbuf);
    static char missing[0x301] = "/no/such/file";
    m = (Msg){.type = 4, .domain_obj = sdfs, .nx = 1, .x_addr = {(uint64_t)(uintptr_t)missing}, .x_size = {0x301}};
    build(&m, 8, &mode, 4, 0);
    rc = call(fsp, &r, 1, 0);
    hz_printf("OpenFile(missing): %x %x\n", rc, r.result);

    /* lm: OpenLogger(PID) -> ILogger; Log(packet in an A buffer) */
    Handle lm = get_service("lm");
    m = (Msg){.type = 4, .send_pid = 1};
    build(&m, 0, &zero, 8, 0);
    call(lm, &r, 0, 0);
    Handle logger = r.move[0];
    static uint8_t pkt[0x40];
    const char *msg = "hello through lm";
    uint32_t n = (uint32_t)strlen(msg);
    pkt[0x10] = 3;                       /* head | tail */
    uint32_t psize = 2 + n;
    memcpy(pkt + 0x14, &psize, 4);
    pkt[0x18] = 2;                       /* key: message */
    pkt[0x19] = (uint8_t)n;              /* ULEB128 length */
    memcpy(pkt + 0x1A, msg, n);
    m = (Msg){.type = 4, .na = 1, .a_addr = {(uint64_t)(uintptr_t)pkt}, .a_size = {0x18 + psize}, .nx = 1,
              .x_addr = {0}, .x_size = {0}};
    build(&m, 0, 0, 0, 0);
    rc = call(logger, &r, 0, 0);
    hz_printf("Log: %x %x\n", rc, r.result);

    /* pl:u: the shared font (a TrueType file: sfnt version 0x00010000, big-endian) */
    Handle pl = get_service("pl:u");
    uint32_t ftype = 0;
    m = (Msg){.type = 4};
    build(&m, 2, &ftype, 4, 0);
    rc = call(pl, &r, 0, 4);
    uint32_t fsize = u32at(r.data);
    m = (Msg){.type = 4};
    build(&m, 3, &ftype, 4, 0);
    rc = call(pl, &r, 0, 4);
    uint32_t foff = u32at(r.data);
    m = (Msg){.type = 4};
    build(&m, 4, 0, 0, 0);
    rc = call(pl, &r, 0, 0);
    Handle fshm = r.copy[0];
    rc = svcMapSharedMemory(fshm, hm, 0x1100000, 1);
    hz_printf("pl:u font: map %x size=%d sfnt=%x\n", rc, fsize, u32at(hm + foff));
    svcUnmapSharedMemory(fshm, hm, 0x1100000);

    /* vi:m: the display service, the default display, its resolution and vsync event */
    Handle vim = get_service("vi:m");
    uint32_t policy = 1;
    m = (Msg){.type = 4};
    build(&m, 2, &policy, 4, 0);
    rc = call(vim, &r, 0, 0);
    Handle ads = r.move[0];
    static char dname[0x40] = "Default", bogus[0x40] = "Bogus";
    m = (Msg){.type = 4};
    build(&m, 1010, bogus, 0x40, 0);
    rc = call(ads, &r, 0, 8);
    hz_printf("OpenDisplay(Bogus): %x %x\n", rc, r.result);
    m = (Msg){.type = 4};
    build(&m, 1010, dname, 0x40, 0);
    rc = call(ads, &r, 0, 8);
    uint64_t disp = u64at(r.data);
    m = (Msg){.type = 4};
    build(&m, 1102, &disp, 8, 0);
    rc = call(ads, &r, 0, 16);
    hz_printf("GetDisplayResolution: %x %x %dx%d\n", rc, r.result, (int)u64at(r.data), (int)u64at(r.data + 8));
    m = (Msg){.type = 4};
    build(&m, 5202, &disp, 8, 0);
    rc = call(ads, &r, 0, 0);
    Handle vsync = r.copy[0];
    svcWaitSynchronization(&idx, &vsync, 1, 1000000000ll);
    svcResetSignal(vsync);
    uint64_t t0 = svcGetSystemTick();
    int waits = 0;
    for (int k = 0; k < 6; k++) {
        if (svcWaitSynchronization(&idx, &vsync, 1, 1000000000ll) == 0) waits++;
        svcResetSignal(vsync);
    }
    uint64_t us = (svcGetSystemTick() - t0) / 192 * 10 / 6;
    hz_printf("vsync: %d waits, about 60 Hz %d\n", waits, us > 8000 && us < 40000);
    /* a managed layer (applet), opened: the native window parcel names its binder */
    m = (Msg){.type = 4, .domain_obj = proxy};
    build(&m, 1, 0, 0, 0);
    call(oe, &r, 1, 0);
    uint32_t selfc = r.objects[0];
    m = (Msg){.type = 4, .domain_obj = selfc};
    build(&m, 40, 0, 0, 0);
    call(oe, &r, 1, 8);
    uint64_t layer = u64at(r.data);
    static uint8_t parcel[0x100] __attribute__((aligned(8)));
    struct { char name[0x40]; uint64_t layer, aruid; } ol;
    memset(&ol, 0, sizeof ol);
    memcpy(ol.name, "Default", 8);
    ol.layer = layer;
    m = (Msg){.type = 4, .send_pid = 1, .nb = 1, .b_addr = {(uint64_t)(uintptr_t)parcel}, .b_size = {0x100}};
    build(&m, 2020, &ol, sizeof ol, 0);
    rc = call(ads, &r, 0, 8);
    uint64_t psz = u64at(r.data);
    uint32_t poff = u32at(parcel + 4), plen = u32at(parcel);
    hz_printf("OpenLayer: %x %x parcel ok %d binder %d\n", rc, r.result, poff + plen <= psz && plen >= 12,
              u32at(parcel + poff + 8) != 0);

    /* the exit request (message 4) arrives once the run's frame budget is spent: the message
     * event is signalled without the program asking */
    m = (Msg){.type = 4, .domain_obj = proxy};
    build(&m, 0, 0, 0, 0);
    call(oe, &r, 1, 0);
    csg = r.objects[0];
    rc = svcWaitSynchronization(&idx, &ev, 1, 5000000000ll);
    m = (Msg){.type = 4, .domain_obj = csg};
    build(&m, 1, 0, 0, 0);
    Result rc2 = call(oe, &r, 1, 4);
    hz_printf("exit request: wait %x, ReceiveMessage %x %x message=%d\n", rc, rc2, r.result, u32at(r.data));

    /* what the kernel refuses */
    hz_printf("SendSyncRequest(bad handle): %x\n", svcSendSyncRequest(0x12345));
    hz_printf("SendSyncRequest(thread handle): %x\n", svcSendSyncRequest(CUR_THREAD));
    m = (Msg){.type = 4, .na = 1, .a_addr = {0x10}, .a_size = {0x100}};
    build(&m, 0, 0, 0, 0);
    hz_printf("A buffer at 0x10: %x\n", svcSendSyncRequest(psm));
    m = (Msg){.type = 4, .nb = 1, .b_addr = {(uint64_t)(uintptr_t)relro_like}, .b_size = {0x100}};
    build(&m, 0, 0, 0, 0);
    hz_printf("B buffer in read-only data: %x\n", svcSendSyncRequest(psm));
    m = (Msg){.type = 4, .ncopy = 1, .copy = {0xDEAD}};
    build(&m, 0, 0, 0, 0);
    hz_printf("bogus copy handle: %x\n", svcSendSyncRequest(psm));
    W()[0] = 4; W()[1] = 0x3FF;
    hz_printf("1023 data words: %x\n", svcSendSyncRequest(psm));
    m = (Msg){.type = 4};
    build(&m, 0, 0, 0, 0);
    ((uint32_t *)W())[4] = 0x12345678;   /* the SFCI magic, broken */
    rc = call(psm, &r, 0, 0);
    hz_printf("bad magic: %x %x\n", rc, r.result);
    m = (Msg){.type = 9};
    build(&m, 0, 0, 0, 0);
    rc = call(psm, &r, 0, 0);
    hz_printf("command type 9: %x %x\n", rc, r.result);
    hz_printf("user buffer unaligned: %x\n", svcSendSyncRequestWithUserBuffer(big + 8, 0x1000, psm));
    hz_printf("user buffer size 0x800: %x\n", svcSendSyncRequestWithUserBuffer(big, 0x800, psm));
    m = (Msg){.type = 4};
    build(&m, 0, 0, 0, 0);
    memcpy(big, W(), 0x100);
    rc = svcSendSyncRequestWithUserBuffer(big, 0x1000, psm);
    hz_printf("user buffer request: %x result=%x\n", rc, u32at(big + 0x18));
    hz_printf("CloseHandle(psm): %x\n", svcCloseHandle(psm));
    hz_printf("SendSyncRequest(closed): %x\n", svcSendSyncRequest(psm));

    /* SetMemoryPermission on a module's data page (what a RELRO does) */
    rc = svcSetMemoryPermission(datapage, 0x1000, 1);
    svcQueryMemory(&mi, &pi, (uint64_t)(uintptr_t)datapage);
    hz_printf("SetMemoryPermission(data, R): %x type=%x perm=%x\n", rc, mi.type, mi.perm);
    hz_printf("SetMemoryPermission(code, R): %x\n", svcSetMemoryPermission((void *)((uint64_t)(uintptr_t)hz_main & ~0xFFFull), 0x1000, 1));
    /* transfer memory: heap pages lent with no access left to the owner, mapped elsewhere, back */
    void *heap;
    svcSetHeapSize(&heap, 0x200000);
    uint8_t *hp = heap;
    hp[0] = 0x11;
    Handle tm1, tm2;
    hz_printf("CreateTransferMemory(perm W): %x\n", svcCreateTransferMemory(&tm2, hp, 0x1000, 2));
    rc = svcCreateTransferMemory(&tm1, hp, 0x1000, 0);
    svcQueryMemory(&mi, &pi, (uint64_t)(uintptr_t)hp);
    hz_printf("CreateTransferMemory: %x perm=%x attr=%x\n", rc, mi.perm, mi.attr);
    hz_printf("CreateTransferMemory(lent pages): %x\n", svcCreateTransferMemory(&tm2, hp, 0x1000, 0));
    uint8_t *tdst = (uint8_t *)(uintptr_t)(alias + 0x200000);
    hz_printf("MapTransferMemory(wrong size): %x\n", svcMapTransferMemory(tm1, tdst, 0x2000, 3));
    rc = svcMapTransferMemory(tm1, tdst, 0x1000, 3);
    svcQueryMemory(&mi, &pi, (uint64_t)(uintptr_t)tdst);
    hz_printf("MapTransferMemory: %x type=%x perm=%x sees=%x\n", rc, mi.type, mi.perm, tdst[0]);
    tdst[0] = 0x22;
    hz_printf("UnmapTransferMemory: %x\n", svcUnmapTransferMemory(tm1, tdst, 0x1000));
    hz_printf("CloseHandle(transfer memory): %x\n", svcCloseHandle(tm1));
    svcQueryMemory(&mi, &pi, (uint64_t)(uintptr_t)hp);
    hz_printf("owner after: perm=%x attr=%x value=%x\n", mi.perm, mi.attr, hp[0]);
    /* nvdrv: Initialize with transfer memory, nvmap objects over guest memory, a syncpoint */
    Handle nvs = get_service("nvdrv");
    static const char nvmap_path[] = "/dev/nvmap", ctrl_path[] = "/dev/nvhost-ctrl";
    m = (Msg){.type = 4, .na = 1, .a_addr = {(uint64_t)(uintptr_t)nvmap_path}, .a_size = {sizeof nvmap_path - 1}};
    build(&m, 0, 0, 0, 0);
    rc = call(nvs, &r, 0, 8);
    hz_printf("nv Open before Initialize: %x %x error=%d\n", rc, r.result, u32at(r.data + 4));
    Handle tm3;
    svcCreateTransferMemory(&tm3, hp + 0x10000, 0x10000, 0);
    uint32_t tsize = 0x10000;
    m = (Msg){.type = 4, .ncopy = 2, .copy = {CUR_PROCESS, tm3}};
    build(&m, 3, &tsize, 4, 0);
    rc = call(nvs, &r, 0, 4);
    hz_printf("nv Initialize: %x %x error=%d\n", rc, r.result, u32at(r.data));
    m = (Msg){.type = 4, .na = 1, .a_addr = {(uint64_t)(uintptr_t)nvmap_path}, .a_size = {sizeof nvmap_path - 1}};
    build(&m, 0, 0, 0, 0);
    rc = call(nvs, &r, 0, 8);
    uint32_t nvmap_fd = u32at(r.data);
    hz_printf("nv Open(/dev/nvmap): %x %x error=%d\n", rc, r.result, u32at(r.data + 4));
    /* an ioctl: fd, request; the argument both ways through A and B buffers */
    static uint32_t arg[8] __attribute__((aligned(16)));
    #define NV_IOCTL(fd, req, n) do { \
        struct { uint32_t f, q; } in_ = {(fd), (req)}; \
        m = (Msg){.type = 4, .na = 1, .a_addr = {(uint64_t)(uintptr_t)arg}, .a_size = {(n)}, .nb = 1, \
                  .b_addr = {(uint64_t)(uintptr_t)arg}, .b_size = {(n)}}; \
        build(&m, 1, &in_, 8, 0); \
        rc = call(nvs, &r, 0, 4); } while (0)
    memset(arg, 0, sizeof arg); arg[0] = 0x1000;
    NV_IOCTL(nvmap_fd, 0xC0080101u, 8);                  /* CREATE(size) -> handle */
    uint32_t nvh = arg[1];
    hz_printf("nvmap CREATE: %x error=%d handle nonzero %d\n", rc, u32at(r.data), nvh != 0);
    memset(arg, 0, sizeof arg); arg[0] = nvh; arg[1] = 0; arg[2] = 1; arg[3] = 0x1000; arg[4] = 0;
    uint64_t baddr = (uint64_t)(uintptr_t)(hp + 0x20000);
    memcpy(&arg[6], &baddr, 8);
    NV_IOCTL(nvmap_fd, 0xC0200104u, 0x20);               /* ALLOC(handle, heap, flags, align, kind, addr) */
    hz_printf("nvmap ALLOC: %x error=%d\n", rc, u32at(r.data));
    memset(arg, 0, sizeof arg); arg[0] = nvh; arg[1] = 3;
    NV_IOCTL(nvmap_fd, 0xC00C0109u, 12);                 /* PARAM(handle, Base) */
    hz_printf("nvmap PARAM(base): error=%d matches %d\n", u32at(r.data), arg[2] == (uint32_t)baddr);
    memset(arg, 0, sizeof arg); arg[1] = nvh;
    NV_IOCTL(nvmap_fd, 0xC008010Eu, 8);                  /* GET_ID -> id */
    uint32_t nvid = arg[0];
    memset(arg, 0, sizeof arg); arg[0] = nvid;
    NV_IOCTL(nvmap_fd, 0xC0080103u, 8);                  /* FROM_ID(id) -> handle */
    hz_printf("nvmap GET_ID/FROM_ID: error=%d same handle %d\n", u32at(r.data), arg[1] == nvh);
    memset(arg, 0, sizeof arg); arg[0] = 0;
    NV_IOCTL(nvmap_fd, 0xC0080101u, 8);
    hz_printf("nvmap CREATE(0): error=%d\n", u32at(r.data));   /* BadValue */
    m = (Msg){.type = 4, .na = 1, .a_addr = {(uint64_t)(uintptr_t)ctrl_path}, .a_size = {sizeof ctrl_path - 1}};
    build(&m, 0, 0, 0, 0);
    call(nvs, &r, 0, 8);
    uint32_t ctrl_fd = u32at(r.data);
    memset(arg, 0, sizeof arg); arg[0] = 0; arg[1] = 1; arg[2] = 0;
    NV_IOCTL(ctrl_fd, 0xC00C0016u, 12);                  /* SYNCPT_WAIT(id 0, threshold 1, timeout 0) */
    hz_printf("nvhost-ctrl SYNCPT_WAIT: error=%d\n", u32at(r.data));
    hz_printf("bye\n");
    return 0;
}
