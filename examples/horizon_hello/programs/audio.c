/* audio.c — sound three ways, each playing its own tone (square waves: the fundamental is the
 * strongest line of the spectrum):
 *   1. audout:u over raw IPC, the way libnx's audout.c talks to it (1000 Hz, 3 buffers of 0.1 s);
 *   2. audren:u over raw IPC: an update request written from the public layout (libnx audren.h,
 *      Ryujinx's parameter sizes) with one PCM16 voice (500 Hz, 0.2 s), then a malformed one;
 *   3. nn::audio by name (the host serves it): one voice, two wave buffers (2000 Hz, 0.2 s).
 * One observation a line; tests/audio/test_audio_guest.py checks each against the documented
 * value and the WAV the run writes against the tones. */
#include "hz_sdk.h"
#include "nn.h"

#define SFCI 0x49434653u
#define SFCO 0x4F434653u
#define F1 0x3F800000u                       /* 1.0f, written as bits */

static uint32_t *W(void) { return (uint32_t *)hz_tls(); }
static void put32(uint8_t *p, uint32_t v) { memcpy(p, &v, 4); }
static void put64(uint8_t *p, uint64_t v) { memcpy(p, &v, 8); }
static uint32_t get32(const uint8_t *p) { uint32_t v; memcpy(&v, p, 4); return v; }
static uint64_t get64(const uint8_t *p) { uint64_t v; memcpy(&v, p, 8); return v; }

/* ---- a CMIF request on a non-domain session (libnx sf/cmif.h, sf/hipc.h) ---------------- */
typedef struct Req {
    int send_pid; uint32_t ncopy, copy[2];
    uint32_t na, nb; uint64_t a[2], asz[2], b[2], bsz[2];
    uint32_t nx, nc; uint64_t x[2], xsz[2], c[2], csz[2];    /* pointer (X) and receive-list (C) buffers */
} Req;
typedef struct Rep { Result rc; uint32_t result, ncopy, copy[2], nmove, move[2]; uint8_t *data; } Rep;

static Rep call(Handle h, uint32_t cmd, const Req *q, const void *params, uint32_t psize) {
    uint32_t *w = W();
    memset(w, 0, 0x100);
    int special = q->send_pid || q->ncopy;
    uint32_t i = 2;
    if (special) {
        w[i++] = (uint32_t)q->send_pid | q->ncopy << 1;
        if (q->send_pid) i += 2;
        for (uint32_t k = 0; k < q->ncopy; k++) w[i++] = q->copy[k];
    }
    for (uint32_t k = 0; k < q->nx; k++) {
        uint64_t a = q->x[k];
        w[i++] = k | (uint32_t)((a >> 36) & 0x3F) << 6 | (uint32_t)((a >> 32) & 0xF) << 12 | (uint32_t)q->xsz[k] << 16;
        w[i++] = (uint32_t)a;
    }
    for (int t = 0; t < 2; t++) {
        uint32_t n = t ? q->nb : q->na;
        for (uint32_t k = 0; k < n; k++) {
            uint64_t a = t ? q->b[k] : q->a[k], s = t ? q->bsz[k] : q->asz[k];
            w[i++] = (uint32_t)s;
            w[i++] = (uint32_t)a;
            w[i++] = (uint32_t)((a >> 36) << 2) | (uint32_t)((s >> 32) & 0xF) << 24 | (uint32_t)((a >> 32) & 0xF) << 28;
        }
    }
    uint32_t start = i, off = (i * 4 + 15) & ~15u;
    uint32_t *p = (uint32_t *)((uint8_t *)w + off);
    p[0] = SFCI; p[1] = 0; p[2] = cmd; p[3] = 0;
    memcpy(p + 4, params, psize);
    uint32_t ndata = (off - start * 4 + 16 + psize + 3) / 4 + 4;
    for (uint32_t k = 0; k < q->nc; k++) {
        w[start + ndata + 2 * k] = (uint32_t)q->c[k];
        w[start + ndata + 2 * k + 1] = (uint32_t)((q->c[k] >> 32) & 0xFFFF) | (uint32_t)q->csz[k] << 16;
    }
    w[0] = 4 | q->nx << 16 | q->na << 20 | q->nb << 24;
    w[1] = ndata | (q->nc ? 2 + q->nc : 0) << 10 | (uint32_t)special << 31;
    Rep r = {0};
    r.rc = svcSendSyncRequest(h);
    if (r.rc) return r;
    i = 2;
    if (w[1] >> 31) {
        uint32_t sp = w[i++];
        r.ncopy = sp >> 1 & 0xF; r.nmove = sp >> 5 & 0xF;
        if (sp & 1) i += 2;
        for (uint32_t k = 0; k < r.ncopy && k < 2; k++) r.copy[k] = w[i++];
        for (uint32_t k = 0; k < r.nmove && k < 2; k++) r.move[k] = w[i++];
    }
    uint32_t *o = (uint32_t *)((uint8_t *)w + ((i * 4 + 15) & ~15u));
    r.result = o[0] == SFCO ? o[2] : 0xBAD0BAD0u;
    r.data = (uint8_t *)(o + 4);
    return r;
}

static Handle sm;
static Handle service(const char *name) {
    char n[8] = {0};
    for (int i = 0; i < 8 && name[i]; i++) n[i] = name[i];
    Req q = {0};
    Rep r = call(sm, 1, &q, n, 8);
    if (r.rc || r.result) { hz_printf("GetServiceHandle(%s): %x %x\n", name, r.rc, r.result); return 0; }
    return r.move[0];
}

static void square(int16_t *out, int frames, int channels, int period, int16_t amp) {
    for (int i = 0; i < frames; i++)
        for (int c = 0; c < channels; c++) out[i * channels + c] = (i % period) < period / 2 ? amp : (int16_t)-amp;
}

static int wait_event(Handle ev, int64_t ns) {
    int32_t idx;
    Result rc = svcWaitSynchronization(&idx, &ev, 1, ns);
    if (rc == 0) svcResetSignal(ev);
    return rc == 0;
}

/* ---- 1. audout:u ------------------------------------------------------------------------ */
#define OUT_FRAMES 4800                                          /* 0.1 s at 48 kHz */
static int16_t out_pcm[3][OUT_FRAMES * 2] __attribute__((aligned(0x1000)));
static struct { uint64_t next, buffer, capacity, size, offset; } out_buf[3];   /* libnx's AudioOutBuffer */
static char name_in[0x100], name_out[0x100];

static void audout(void) {
    Handle mgr = service("audout:u");
    Req q = {.nb = 1, .b = {(uint64_t)(uintptr_t)name_out}, .bsz = {0x100}};
    Rep r = call(mgr, 0, &q, 0, 0);                              /* ListAudioOuts */
    hz_printf("ListAudioOuts: %x %x count=%u %s\n", r.rc, r.result, get32(r.data), name_out);
    struct { uint32_t rate, chans; uint64_t pid; } in = {44100, 2u << 16, 0};
    Req oq = {.send_pid = 1, .ncopy = 1, .copy = {HZ_CUR_PROCESS}, .na = 1, .a = {(uint64_t)(uintptr_t)name_in},
              .asz = {0x100}, .nb = 1, .b = {(uint64_t)(uintptr_t)name_out}, .bsz = {0x100}};
    r = call(mgr, 1, &oq, &in, sizeof in);
    hz_printf("OpenAudioOut(44100 Hz): %x\n", r.result);        /* UnsupportedSampleRate */
    in.rate = 48000; in.chans = 3u << 16;
    r = call(mgr, 1, &oq, &in, sizeof in);
    hz_printf("OpenAudioOut(3 channels): %x\n", r.result);      /* InvalidChannelCount */
    in.chans = 2u << 16;                                          /* libnx's DEFAULT_CHANNEL_COUNT */
    r = call(mgr, 1, &oq, &in, sizeof in);
    Handle out = r.move[0];
    if (r.rc || r.result) { hz_printf("OpenAudioOut failed: %x %x\n", r.rc, r.result); return; }
    hz_printf("OpenAudioOut: %x %x rate=%u channels=%u format=%u state=%u name=%s\n", r.rc, r.result, get32(r.data),
              get32(r.data + 4), get32(r.data + 8), get32(r.data + 12), name_out);
    Req none = {0};
    r = call(out, 4, &none, 0, 0);                               /* RegisterBufferEvent */
    Handle ev = r.copy[0];
    hz_printf("RegisterBufferEvent: %x copies=%u\n", r.result, r.ncopy);
    for (int k = 0; k < 3; k++) {
        square(out_pcm[k], OUT_FRAMES, 2, 48, 8000);             /* 1000 Hz */
        out_buf[k].buffer = (uint64_t)(uintptr_t)out_pcm[k];
        out_buf[k].capacity = sizeof out_pcm[k];
        out_buf[k].size = sizeof out_pcm[k];
        uint64_t tag = (uint64_t)(uintptr_t)&out_buf[k];
        Req aq = {.na = 1, .a = {tag}, .asz = {sizeof out_buf[k]}};
        r = call(out, 3, &aq, &tag, 8);                          /* AppendAudioOutBuffer */
        if (r.result) hz_printf("AppendAudioOutBuffer %d: %x\n", k, r.result);
    }
    uint64_t tag0 = (uint64_t)(uintptr_t)&out_buf[0];
    r = call(out, 6, &none, &tag0, 8);
    hz_printf("ContainsAudioOutBuffer(first): %x %u\n", r.result, r.data[0]);
    r = call(out, 9, &none, 0, 0);
    hz_printf("GetAudioOutBufferCount: %x %u\n", r.result, get32(r.data));
    r = call(out, 1, &none, 0, 0);
    hz_printf("Start: %x\n", r.result);
    static uint64_t tags[4];
    int got = 0, order_ok = 1;
    for (int tries = 0; got < 3 && tries < 100; tries++) {
        if (!wait_event(ev, 1000000000ll)) continue;
        Req bq = {.nb = 1, .b = {(uint64_t)(uintptr_t)tags}, .bsz = {sizeof tags}};
        r = call(out, 5, &bq, 0, 0);                             /* GetReleasedAudioOutBuffers */
        for (uint32_t k = 0; k < get32(r.data); k++, got++)
            if (got >= 3 || tags[k] != (uint64_t)(uintptr_t)&out_buf[got]) order_ok = 0;
    }
    hz_printf("released: %d in order=%d\n", got, order_ok);
    r = call(out, 10, &none, 0, 0);
    hz_printf("GetAudioOutPlayedSampleCount: %x %llu\n", r.result, get64(r.data));
    r = call(out, 2, &none, 0, 0);
    r = call(out, 0, &none, 0, 0);
    hz_printf("GetAudioOutState after Stop: %x %u\n", r.result, get32(r.data));
    Req shortq = {.na = 1, .a = {tag0}, .asz = {8}};
    r = call(out, 3, &shortq, &tag0, 8);
    hz_printf("AppendAudioOutBuffer(8-byte record): %x\n", r.result);   /* BufferSizeTooSmall */
    /* the Auto forms, as libnx sends them on 3.0.0+: the record in an X pointer (its A empty), the
     * released tags into a C receive buffer (its B empty); one buffer, while stopped, then flushed */
    Req ax = {.na = 1, .nx = 1, .x = {tag0}, .xsz = {sizeof out_buf[0]}};
    r = call(out, 7, &ax, &tag0, 8);
    hz_printf("AppendAudioOutBufferAuto: %x\n", r.result);
    r = call(out, 11, &none, 0, 0);
    hz_printf("FlushAudioOutBuffers: %x %u\n", r.result, r.data[0]);
    memset(tags, 0, sizeof tags);
    Req cq = {.nb = 1, .nc = 1, .c = {(uint64_t)(uintptr_t)tags}, .csz = {sizeof tags}};
    r = call(out, 8, &cq, 0, 0);
    hz_printf("GetReleasedAudioOutBuffersAuto: %x count=%u first=%d\n", r.result, get32(r.data), tags[0] == tag0);
    svcCloseHandle(out);
    svcCloseHandle(ev);
}

/* ---- 2. audren:u ------------------------------------------------------------------------ */
enum { VOICES = 2, POOLS = 4 * VOICES, MIX_BUFS = 2 };
enum { HDR = 0x40, BEH = 0x10, POOL = 0x20, CHAN = 0x70, VOICE = 0x170, MIX = 0x930, SINK = 0x140, PERF = 0x10 };
#define REV(n) (0x00564552u | (uint32_t)(0x30 + (n)) << 24)
static uint8_t param[0x34];
static uint8_t req[HDR + BEH + POOLS * POOL + VOICES * CHAN + VOICES * VOICE + MIX + SINK + PERF] __attribute__((aligned(64)));
static uint8_t resp[0x1000] __attribute__((aligned(64)));
static uint8_t perf[0x100] __attribute__((aligned(64)));
static int16_t ren_pcm[9600] __attribute__((aligned(0x1000)));

static void build_request(int sent) {
    memset(req, 0, sizeof req);
    uint32_t sizes[8] = {BEH, POOLS * POOL, VOICES * VOICE, VOICES * CHAN, 0, MIX, SINK, PERF};
    put32(req, REV(4));
    for (int i = 0; i < 8; i++) put32(req + 4 + 4 * i, sizes[i]);
    put32(req + 0x3C, sizeof req);
    uint8_t *p = req + HDR;
    put32(p, REV(4));                                            /* behaviour: revision, flags 0 */
    p += BEH + POOLS * POOL;                                     /* pools: unused */
    put32(p, 0); put32(p + 4, F1); put32(p + 8, F1); p[0x64] = 1;   /* channel resource 0: to both buffers */
    p += VOICES * CHAN;
    put32(p, 0); p[8] = !sent; p[9] = 1; p[0xA] = 0; p[0xB] = 2;    /* voice 0: new, used, started, PCM16 */
    put32(p + 0xC, 48000); put32(p + 0x18, 1); put32(p + 0x1C, F1); put32(p + 0x20, F1);
    put32(p + 0x3C, 1); put32(p + 0x58, 0); put32(p + 0x5C, 0xFFFFFFFFu);   /* to the final mix */
    uint8_t *wb = p + 0x60;                                      /* wave buffer 0: 0.2 s */
    put64(wb, (uint64_t)(uintptr_t)ren_pcm); put64(wb + 8, sizeof ren_pcm);
    put32(wb + 0x10, 0); put32(wb + 0x14, 9600); wb[0x1A] = (uint8_t)sent;
    put32(p + 0x140, 0);
    p += VOICES * VOICE;
    put32(p, F1); put32(p + 4, 48000); put32(p + 8, MIX_BUFS); p[0xC] = 1; p[0xD] = 1;   /* final mix */
    put32(p + 0x10, 0); put32(p + 0x924, 0x7FFFFFFF);
    p += MIX;
    p[0] = 1; p[1] = 1;                                          /* device sink, inputs 0 and 1 */
    memcpy(p + 0x20, "MainAudioOut", 12);
    put32(p + 0x120, 2); p[0x124] = 0; p[0x125] = 1;
}

static Rep update(Handle ren) {
    Req q = {.na = 1, .a = {(uint64_t)(uintptr_t)req}, .asz = {sizeof req}, .nb = 2,
             .b = {(uint64_t)(uintptr_t)resp, (uint64_t)(uintptr_t)perf}, .bsz = {sizeof resp, sizeof perf}};
    return call(ren, 4, &q, 0, 0);
}

static void audren(void) {
    Handle mgr = service("audren:u");
    memset(param, 0, sizeof param);
    uint32_t pv[7] = {48000, 240, MIX_BUFS, 0, VOICES, 1, 0};
    for (int i = 0; i < 7; i++) put32(param + 4 * i, pv[i]);
    put32(param + 0x30, REV(4));
    Req none = {0};
    Rep r = call(mgr, 1, &none, param, sizeof param);            /* GetWorkBufferSize */
    uint64_t size = get64(r.data);
    hz_printf("GetWorkBufferSize: %x page-aligned=%d\n", r.result, (size & 0xFFF) == 0);
    put32(param, 44100);
    r = call(mgr, 1, &none, param, sizeof param);
    hz_printf("GetWorkBufferSize(44100 Hz): %x\n", r.result);   /* UnsupportedSampleRate */
    put32(param, 48000);
    void *heap = 0;                                              /* the work buffer: heap memory, as libnx's tmemCreate */
    Handle tmem = 0;
    Result hrc = svcSetHeapSize(&heap, (size + 0x1FFFFF) & ~0x1FFFFFull);
    hz_printf("CreateTransferMemory: %x %x\n", hrc, svcCreateTransferMemory(&tmem, heap, size, 0));
    struct { uint8_t p[0x34]; uint32_t pad; uint64_t size, aruid; } in;
    memcpy(in.p, param, 0x34); in.pad = 0; in.size = size; in.aruid = 0;
    Req oq = {.send_pid = 1, .ncopy = 2, .copy = {tmem, HZ_CUR_PROCESS}};
    r = call(mgr, 0, &oq, &in, sizeof in);
    Handle ren = r.move[0];
    hz_printf("OpenAudioRenderer: %x %x\n", r.rc, r.result);
    if (r.rc || r.result) return;
    r = call(ren, 0, &none, 0, 0); uint32_t rate = get32(r.data);
    r = call(ren, 1, &none, 0, 0); uint32_t count = get32(r.data);
    r = call(ren, 2, &none, 0, 0);
    hz_printf("rate=%u samples=%u mix buffers=%u\n", rate, count, get32(r.data));
    r = call(ren, 7, &none, 0, 0);
    Handle ev = r.copy[0];
    hz_printf("QuerySystemEvent: %x copies=%u\n", r.result, r.ncopy);
    square(ren_pcm, 9600, 1, 96, 8000);                          /* 500 Hz */
    build_request(0);
    r = update(ren);
    hz_printf("RequestUpdate: %x %x response total=%x\n", r.rc, r.result, get32(resp + 0x3C));
    r = call(ren, 5, &none, 0, 0);
    r = call(ren, 3, &none, 0, 0);
    hz_printf("Start: state=%u\n", get32(r.data));               /* 0: started */
    int frames = 0;
    for (int tries = 0; frames < 80 && tries < 400; tries++) frames += wait_event(ev, 1000000000ll);
    build_request(1);
    Req uq = {.na = 1, .nx = 1, .x = {(uint64_t)(uintptr_t)req}, .xsz = {sizeof req}, .nb = 2, .nc = 2,
              .c = {(uint64_t)(uintptr_t)resp, (uint64_t)(uintptr_t)perf}, .csz = {sizeof resp, sizeof perf}};
    memset(resp, 0, sizeof resp);
    r = call(ren, 10, &uq, 0, 0);                                /* RequestUpdateAuto */
    hz_printf("RequestUpdateAuto: %x %x response total=%x\n", r.rc, r.result, get32(resp + 0x3C));
    r = update(ren);
    /* response: header, pools (0x10 each), voices (played u64, wave buffers consumed u32, drops) */
    uint8_t *v0 = resp + HDR + POOLS * 0x10;
    hz_printf("after %d frames: voice 0 played=%llu consumed=%u\n", frames, get64(v0), get32(v0 + 8));
    put32(req + 0x3C, sizeof req + 4);                           /* total size that does not add up */
    r = update(ren);
    hz_printf("RequestUpdate(bad total size): %x\n", r.result);  /* InvalidUpdateInfo */
    build_request(1);
    put32(req + HDR + BEH + POOLS * POOL + VOICES * CHAN + VOICES * VOICE + 8, 99);   /* final mix with 99 buffers */
    r = update(ren);
    hz_printf("RequestUpdate(99 mix buffers): %x\n", r.result);
    r = call(ren, 6, &none, 0, 0);                               /* Stop: the fuzz below plays nothing */
    /* a bounded fuzz through IPC: bytes of a good request flipped; each answer must be success or
     * one of the renderer's refusals (InvalidUpdateInfo, InvalidMixSorting), never anything else */
    uint32_t x = 12345, ok = 0, refused = 0, other = 0;
    for (int i = 0; i < 300; i++) {
        build_request(1);
        for (int k = 0; k < 1 + i % 8; k++) {
            x ^= x << 13; x ^= x >> 17; x ^= x << 5;
            req[x % sizeof req] = (uint8_t)(x >> 24);
        }
        r = update(ren);
        if (r.rc) other++;
        else if (r.result == 0) ok++;
        else if (r.result == 0x5299 || r.result == 0x5699) refused++;
        else other++;
    }
    hz_printf("fuzz: 300 requests, accepted=%d refused=%d other=%u\n", ok > 0, refused > 0, other);
    r = call(ren, 3, &none, 0, 0);
    hz_printf("Stop: state=%u\n", get32(r.data));
    svcCloseHandle(ren);
    svcCloseHandle(ev);
}

/* ---- 3. nn::audio ----------------------------------------------------------------------- */
static int16_t hle_pcm[2][4800] __attribute__((aligned(0x1000)));

static void nn_audio(void) {
    NnAudioRendererParameter p;
    nnaudioInitializeAudioRendererParameter(&p);
    p.mixBufferCount = 2; p.voiceCount = 2;
    static uint8_t wb_mem[0x40000] __attribute__((aligned(0x1000)));
    size_t wsize = nnaudioGetAudioRendererWorkBufferSize(&p);
    NnAudioRendererHandle h;
    NnResult rc = nnaudioOpenAudioRenderer(&h, &p, wb_mem, wsize);
    static NnAudioRendererConfig cfg;
    static uint8_t cfg_mem[0x1000];
    nnaudioInitializeAudioRendererConfig(&cfg, &p, cfg_mem, nnaudioGetAudioRendererConfigWorkBufferSize(&p));
    static NnFinalMixType mix;
    static NnDeviceSinkType sink;
    static NnVoiceType voice;
    int8_t inputs[2] = {0, 1};
    int ok = nnaudioAcquireFinalMix(&cfg, &mix, 2);
    NnResult src = nnaudioAddDeviceSink(&cfg, &sink, &mix, inputs, 2, "MainAudioOut");
    int vok = nnaudioAcquireVoiceSlot(&cfg, &voice, 48000, 1, NN_AUDIO_PCM16, 0, 0, 0);
    nnaudioSetVoiceDestination(&cfg, &voice, &mix);
    nnaudioSetVoiceMixVolume(&voice, &mix, 1.0f, 0, 0);
    nnaudioSetVoiceMixVolume(&voice, &mix, 1.0f, 0, 1);
    static NnWaveBuffer wb[2];
    for (int k = 0; k < 2; k++) {
        square(hle_pcm[k], 4800, 1, 24, 8000);                   /* 2000 Hz */
        wb[k].buffer = hle_pcm[k]; wb[k].size = sizeof hle_pcm[k];
        wb[k].startSampleOffset = 0; wb[k].endSampleOffset = 4800;
        nnaudioAppendWaveBuffer(&voice, &wb[k]);
    }
    nnaudioSetVoicePlayState(&voice, NN_AUDIO_STARTED);
    NnResult urc = nnaudioRequestUpdateAudioRenderer(h, &cfg);
    hz_printf("nn::audio: open %x mix %d sink %x voice %d update %x\n", rc, ok, src, vok, urc);
    nnaudioStartAudioRenderer(h);
    int released = 0, order_ok = 1;
    for (int tries = 0; released < 2 && tries < 400; tries++) {
        nnosSleepThread(10000000);
        nnaudioRequestUpdateAudioRenderer(h, &cfg);
        const NnWaveBuffer *r;
        while ((r = nnaudioGetReleasedWaveBuffer(&voice)) != 0) order_ok &= r == &wb[released++];
    }
    hz_printf("nn::audio: released %d in order=%d played=%lld\n", released, order_ok,
              (long long)nnaudioGetVoicePlayedSampleCount(&voice));
    nnaudioStopAudioRenderer(h);
    nnaudioCloseAudioRenderer(h);
}

int hz_main(void) {
    if (svcConnectToNamedPort(&sm, "sm:")) return 1;
    uint64_t zero = 0;
    Req pid = {.send_pid = 1};
    call(sm, 0, &pid, &zero, 8);                                 /* RegisterClient */
    audout();
    audren();
    nn_audio();
    hz_printf("audio: done\n");
    return 0;
}
