/* demo.c — nxrecomp's demo game: a little arena.  The player's cube moves with the gamepad
 * (d-pad or left stick); orbs bounce around; touching one scores and respawns it.  A fixed
 * 60 Hz step and an integer random generator make the simulation deterministic: the same
 * input script gives the same state checksum at every frame, on every run.
 *
 * What it exercises: two threads of different priorities (the loader at 50 reads the assets
 * from the RomFS while the main thread at 44 waits on a condition variable), textures in the
 * block-linear layout read from the RomFS, a render-to-texture pass (the minimap), a HUD
 * (score and frame time), per-frame uniform buffers with syncs, the best score in save data
 * (committed at exit), the exit request the host sends after --frames, sound through nn::audio (a
 * DSP-ADPCM music loop and a PCM16 effect at each pickup, synthesised at build time by sound.py).
 * No depth buffer: the scene is drawn back to front, only faces that face the camera. */
#include "hz_sdk.h"
#include "nn.h"
#include "nvn.h"
#include "nvn_util.h"
#include "sim.h"

#define WIN_W 320
#define WIN_H 180
#define MAP 64
#define SLOT 256                                  /* bytes per draw's uniform block */
#define SLOTS 256                                 /* two sets of 128 draws */

typedef struct { float m[16]; } Mat;             /* column-major, as GLSL's mat4 */

static NvnProcs nvn;
static NVNdevice dev;
static NVNmemoryPool pool;
static NVNqueue queue;
static NVNcommandBuffer cmd;
static NVNtexture win_tex[2], minimap, tex_floor, tex_font, tex_white, tex_orb;
static NVNsampler s_near, s_repeat;
static NVNtexturePool tpool;
static NVNsamplerPool spool;
static NVNprogram prog;
static NVNwindow window;
static NVNsync done[2];
static NVNbufferAddress base;
static uint32_t best;                            /* best score: from the save, not part of the state */
/* co-op: the other players of the room (their cubes are drawn; not part of the state) */
#define MAX_PLAYERS 8
static struct { int active; float x, z; } peers[MAX_PLAYERS];
static int coop_slot = -1;
static uint32_t coop_received;

static void coop_frame(void) {
    float pos[2] = {g.px, g.pz};
    nxcoopSend(NXCOOP_ALL, 1, pos, sizeof pos, 0);
    for (;;) {
        int32_t src = -1;
        uint32_t ch = 0;
        float buf[2];
        int64_t n = nxcoopReceive(&src, &ch, buf, sizeof buf);
        if (n < 0) break;
        if (n != (int64_t)sizeof buf || ch != 1 || src < 0 || src >= MAX_PLAYERS || src == coop_slot) continue;
        if (!peers[src].active) hz_printf("coop: player %d appears\n", src);
        peers[src].active = 1; peers[src].x = buf[0]; peers[src].z = buf[1];
        coop_received++;
    }
    uint32_t mask = 0;
    if (nxcoopRoster(&mask) == 0)
        for (int i = 0; i < MAX_PLAYERS; i++)
            if (peers[i].active && !(mask >> i & 1)) { peers[i].active = 0; hz_printf("coop: player %d left\n", i); }
}

#define POOL_SIZE (1024 * 1024)
static uint8_t pool_mem[POOL_SIZE] __attribute__((aligned(4096)));
enum { OFF_VERTS = 0, OFF_UBO = 0x10000, OFF_TEX = 0x40000, OFF_SHADERS = 0xC0000 };
enum { V_CUBE = 0, V_FLOOR = 36, V_QUAD = 42 };  /* first vertex of each mesh */

/* ---- math ------------------------------------------------------------------------------ */
static float sqrtf_(float v) { float r; __asm__("fsqrt %s0, %s1" : "=w"(r) : "w"(v)); return r; }

static Mat mul(Mat a, Mat b) {
    Mat r;
    for (int c = 0; c < 4; c++)
        for (int i = 0; i < 4; i++) {
            float s = 0;
            for (int k = 0; k < 4; k++) s += a.m[k * 4 + i] * b.m[c * 4 + k];
            r.m[c * 4 + i] = s;
        }
    return r;
}

static Mat ident(void) { Mat r = {{1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1}}; return r; }

static Mat translate_scale(float x, float y, float z, float sx, float sy, float sz) {
    Mat r = {{sx, 0, 0, 0, 0, sy, 0, 0, 0, 0, sz, 0, x, y, z, 1}};
    return r;
}

/* Vulkan clip space: y down, depth 0..1; world y up appears up on screen */
static Mat camera(void) {
    const float ex = 0, ey = 13, ez = 11;                  /* eye, looking at the origin */
    float fx = -ex, fy = -ey, fz = -ez, l = sqrtf_(fx * fx + fy * fy + fz * fz);
    fx /= l; fy /= l; fz /= l;
    float sx = -fz, sy = 0, sz = fx;                       /* side = forward x up (0, 1, 0) */
    l = sqrtf_(sx * sx + sy * sy + sz * sz); sx /= l; sy /= l; sz /= l;
    float ux = sy * fz - sz * fy, uy = sz * fx - sx * fz, uz = sx * fy - sy * fx;
    Mat view = {{sx, ux, -fx, 0, sy, uy, -fy, 0, sz, uz, -fz, 0,
                 -(sx * ex + sy * ey + sz * ez), -(ux * ex + uy * ey + uz * ez), fx * ex + fy * ey + fz * ez, 1}};
    const float f = 1.7320508f, aspect = (float)WIN_W / WIN_H, n = 0.5f, fr = 60.0f;   /* 60 degrees */
    Mat proj = {{f / aspect, 0, 0, 0, 0, -f, 0, 0, 0, 0, fr / (n - fr), -1, 0, 0, n * fr / (n - fr), 0}};
    return mul(proj, view);
}

/* ---- assets: the loader thread ---------------------------------------------------------------- */
typedef struct { uint32_t magic, width, height, format, bytes; } TexHeader;   /* assets.py writes these */
static HzMutex load_lock;
static HzCond load_cond;
static volatile int loaded;
static uint32_t tex_off[4];
static TexHeader tex_hdr[4];
static const char *tex_files[4] = {"rom:/textures/floor.tex", "rom:/textures/font.tex", "rom:/textures/white.tex",
                                   "rom:/textures/orb.tex"};

static void loader(void *arg) {
    (void)arg;
    uint32_t off = OFF_TEX;
    for (int i = 0; i < 4; i++) {
        NnFileHandle f;
        if (nnfsOpenFile(&f, tex_files[i], NN_FS_READ)) { hz_printf("missing %s\n", tex_files[i]); continue; }
        nnfsReadFile(f, 0, &tex_hdr[i], sizeof tex_hdr[i]);
        tex_off[i] = off;
        nnfsReadFile(f, sizeof(TexHeader), pool_mem + off, tex_hdr[i].bytes);
        nnfsCloseFile(f);
        off += (tex_hdr[i].bytes + 511) & ~511u;
    }
    hz_mutex_lock(&load_lock);
    loaded = 1;
    hz_cond_signal(&load_cond);
    hz_mutex_unlock(&load_lock);
}

/* ---- sound: the music loop (DSP-ADPCM) and the pickup effect (PCM16) through nn::audio -------------- */
typedef struct { uint32_t magic, format, rate, samples; } SoundHeader;   /* sound.py writes these */
static uint8_t music_file[0x8000] __attribute__((aligned(0x1000)));
static uint8_t pickup_file[0x4000] __attribute__((aligned(0x1000)));
static uint8_t audio_work[0x40000] __attribute__((aligned(0x1000)));
static uint8_t audio_cfg_work[0x1000];
static NnAudioRendererHandle audio;
static NnAudioRendererConfig audio_cfg;
static NnFinalMixType audio_mix;
static NnDeviceSinkType audio_sink;
static NnVoiceType v_music, v_fx;
static NnWaveBuffer wb_music, wb_fx[4];
static int audio_ok, fx_next, fx_queued;
static int64_t pickup_size;

static int64_t load_sound(const char *path, uint8_t *buf, int64_t cap) {
    NnFileHandle f;
    int64_t size = 0;
    if (nnfsOpenFile(&f, path, NN_FS_READ)) return 0;
    nnfsGetFileSize(&size, f);
    if (size > cap || size < (int64_t)sizeof(SoundHeader) || nnfsReadFile(f, 0, buf, (size_t)size)) size = 0;
    nnfsCloseFile(f);
    return size;
}

static void voice_to_both(NnVoiceType *v, float volume) {
    nnaudioSetVoiceDestination(&audio_cfg, v, &audio_mix);
    nnaudioSetVoiceMixVolume(v, &audio_mix, volume, 0, 0);
    nnaudioSetVoiceMixVolume(v, &audio_mix, volume, 0, 1);
}

static void audio_init(void) {
    int64_t music_size = load_sound("rom:/sound/music.adpcm", music_file, sizeof music_file);
    pickup_size = load_sound("rom:/sound/pickup.pcm", pickup_file, sizeof pickup_file);
    if (!music_size || !pickup_size) { hz_printf("sound files missing: playing silent\n"); return; }
    NnAudioRendererParameter p;
    nnaudioInitializeAudioRendererParameter(&p);
    p.mixBufferCount = 2; p.voiceCount = 2; p.sinkCount = 1; p.subMixCount = 0; p.effectCount = 0;
    size_t need = nnaudioGetAudioRendererWorkBufferSize(&p);
    if (need > sizeof audio_work || nnaudioOpenAudioRenderer(&audio, &p, audio_work, need)) {
        hz_printf("no audio renderer: playing silent\n");
        return;
    }
    nnaudioInitializeAudioRendererConfig(&audio_cfg, &p, audio_cfg_work, sizeof audio_cfg_work);
    static const int8_t inputs[2] = {0, 1};
    nnaudioAcquireFinalMix(&audio_cfg, &audio_mix, 2);
    nnaudioAddDeviceSink(&audio_cfg, &audio_sink, &audio_mix, inputs, 2, "MainAudioOut");
    const SoundHeader *mh = (const SoundHeader *)music_file, *ph = (const SoundHeader *)pickup_file;
    /* the music: DSP-ADPCM, its 16 coefficients after the header, one looping wave buffer */
    nnaudioAcquireVoiceSlot(&audio_cfg, &v_music, (int)mh->rate, 1, NN_AUDIO_ADPCM, 0, music_file + 16, 32);
    voice_to_both(&v_music, 0.5f);
    wb_music.buffer = music_file + 48;
    wb_music.size = (size_t)music_size - 48;
    wb_music.startSampleOffset = 0;
    wb_music.endSampleOffset = (int32_t)mh->samples;
    wb_music.loop = 1;
    nnaudioAppendWaveBuffer(&v_music, &wb_music);
    nnaudioSetVoicePlayState(&v_music, NN_AUDIO_STARTED);
    /* the effect: PCM16, a wave buffer appended at each pickup */
    nnaudioAcquireVoiceSlot(&audio_cfg, &v_fx, (int)ph->rate, 1, NN_AUDIO_PCM16, 0, 0, 0);
    voice_to_both(&v_fx, 0.7f);
    nnaudioSetVoicePlayState(&v_fx, NN_AUDIO_STARTED);
    audio_ok = nnaudioRequestUpdateAudioRenderer(audio, &audio_cfg) == 0 && nnaudioStartAudioRenderer(audio) == 0;
}

/* once a frame: the pickup sound when the score went up, then the renderer's update */
static void audio_frame(int scored) {
    if (!audio_ok) return;
    while (nnaudioGetReleasedWaveBuffer(&v_fx)) fx_queued--;
    if (scored && fx_queued < 4) {
        NnWaveBuffer *w = &wb_fx[fx_next];
        w->buffer = pickup_file + 16;
        w->size = (size_t)pickup_size - 16;
        w->startSampleOffset = 0;
        w->endSampleOffset = (int32_t)((const SoundHeader *)pickup_file)->samples;
        w->loop = 0;
        if (nnaudioAppendWaveBuffer(&v_fx, w)) { fx_next = (fx_next + 1) % 4; fx_queued++; }
    }
    nnaudioRequestUpdateAudioRenderer(audio, &audio_cfg);
}

/* ---- drawing -------------------------------------------------------------------------------------- */
typedef struct { Mat mvp; float color[4]; float uvx[4]; } Uniform;
static int slot_base, slot_next;

static void draw(Mat mvp, const float *color, const float *uvx, NVNtextureHandle tex, int first, int count) {
    int slot = slot_base + slot_next++;
    Uniform *u = (Uniform *)(pool_mem + OFF_UBO + slot * SLOT);
    u->mvp = mvp;
    for (int i = 0; i < 4; i++) { u->color[i] = color[i]; u->uvx[i] = uvx[i]; }
    nvn.nvnCommandBufferBindUniformBuffer(&cmd, NVN_STAGE_VERTEX, 0, base + OFF_UBO + slot * SLOT, sizeof(Uniform));
    nvn.nvnCommandBufferBindTexture(&cmd, NVN_STAGE_FRAGMENT, 0, tex);
    nvn.nvnCommandBufferDrawArrays(&cmd, NVN_DRAW_TRIANGLES, first, count);
}

static const float UV1[4] = {1, 1, 0, 0};

/* screen rectangle in pixels -> clip space, for HUD quads (the quad mesh spans 0..1) */
static Mat screen_rect(float x, float y, float w, float h) {
    return translate_scale(2 * x / WIN_W - 1, 2 * y / WIN_H - 1, 0, 2 * w / WIN_W, 2 * h / WIN_H, 1);
}

static void number(uint32_t v, float x, float y, const float *color, NVNtextureHandle font) {
    char d[10];
    int n = 0;
    do { d[n++] = (char)(v % 10); v /= 10; } while (v && n < 10);
    for (int i = 0; i < n; i++) {
        float uvx[4] = {0.1f, 1, 0.1f * d[n - 1 - i], 0};
        draw(screen_rect(x + 10 * i, y, 8, 8), color, uvx, font, V_QUAD, 6);
    }
}

/* cube faces in the mesh order (-x, +x, -y, +y, -z, +z); draw the ones facing the eye */
static void cube(Mat vp, float x, float y, float z, float s, const float *color, NVNtextureHandle tex) {
    static const float eye[3] = {0, 13, 11};
    Mat m = mul(vp, translate_scale(x, y, z, s, s, s));
    float c[3] = {x, y, z};
    for (int face = 0; face < 6; face++) {
        int axis = face / 2;
        float sign = (face & 1) ? 1.0f : -1.0f;
        if ((eye[axis] - (c[axis] + sign * s * 0.5f)) * sign <= 0) continue;
        static const float shade[6] = {0.7f, 0.7f, 0.4f, 1.0f, 0.55f, 0.85f};   /* light from above, front */
        float lit[4] = {color[0] * shade[face], color[1] * shade[face], color[2] * shade[face], color[3]};
        draw(m, lit, UV1, tex, V_CUBE + face * 6, 6);
    }
}

/* ---- main ---------------------------------------------------------------------------------------- */
#define STACK 0x10000
static char loader_stack[STACK] __attribute__((aligned(16)));

int hz_main(void) {
    static uint8_t rom_cache[0x4000];
    nnfsMountRom("rom", rom_cache, sizeof rom_cache);
    HzThread th;
    hz_thread_create(&th, loader, 0, loader_stack, STACK, 50, 0);   /* the loader runs below the game */
    hz_thread_start(&th);

    /* best score from the save */
    nnfsMountSaveDataForDebug("save");
    NnFileHandle sf;
    if (nnfsOpenFile(&sf, "save:/best", NN_FS_READ) == 0) { nnfsReadFile(sf, 0, &best, 4); nnfsCloseFile(sf); }
    uint32_t best_before = best;
    sim_init();

    if (nvn_load_procs(&nvn)) { hz_printf("nvn entry points missing\n"); return 1; }
    NVNdeviceBuilder db;
    nvn.nvnDeviceBuilderSetDefaults(&db);
    if (!nvn.nvnDeviceInitialize(&dev, &db)) return 1;
    NVNmemoryPoolBuilder pb;
    nvn.nvnMemoryPoolBuilderSetDefaults(&pb);
    nvn.nvnMemoryPoolBuilderSetDevice(&pb, &dev);
    nvn.nvnMemoryPoolBuilderSetStorage(&pb, pool_mem, POOL_SIZE);
    /* CPU-cached, as games make their pools: what the CPU writes reaches the GPU when flushed */
    nvn.nvnMemoryPoolBuilderSetFlags(&pb, NVN_MEMORY_POOL_FLAGS_CPU_CACHED);
    nvn.nvnMemoryPoolInitialize(&pool, &pb);
    base = nvn.nvnMemoryPoolGetBufferAddress(&pool);

    /* meshes: unit cube (pos, uv), floor quad in XZ, screen quad 0..1 */
    float *v = (float *)(pool_mem + OFF_VERTS);
    static const int8_t faces[6][3][3] = {   /* face: normal axis, u axis, v axis (signs) */
        {{-1, 0, 0}, {0, 0, 1}, {0, 1, 0}}, {{1, 0, 0}, {0, 0, -1}, {0, 1, 0}},
        {{0, -1, 0}, {1, 0, 0}, {0, 0, 1}}, {{0, 1, 0}, {1, 0, 0}, {0, 0, -1}},
        {{0, 0, -1}, {-1, 0, 0}, {0, 1, 0}}, {{0, 0, 1}, {1, 0, 0}, {0, 1, 0}}};
    static const float corner[6][2] = {{0, 0}, {1, 0}, {1, 1}, {0, 0}, {1, 1}, {0, 1}};
    int n = 0;
    for (int f = 0; f < 6; f++)
        for (int k = 0; k < 6; k++, n++) {
            float a = corner[k][0] - 0.5f, b = corner[k][1] - 0.5f;
            for (int i = 0; i < 3; i++) v[n * 5 + i] = 0.5f * faces[f][0][i] + a * faces[f][1][i] + b * faces[f][2][i];
            v[n * 5 + 3] = corner[k][0]; v[n * 5 + 4] = 1 - corner[k][1];
        }
    for (int k = 0; k < 6; k++, n++) {   /* floor: y = 0, x and z in -8..8, uv repeats 4 times */
        v[n * 5 + 0] = (corner[k][0] - 0.5f) * 16; v[n * 5 + 1] = 0; v[n * 5 + 2] = (corner[k][1] - 0.5f) * 16;
        v[n * 5 + 3] = corner[k][0] * 4; v[n * 5 + 4] = corner[k][1] * 4;
    }
    for (int k = 0; k < 6; k++, n++) {   /* screen quad */
        v[n * 5 + 0] = corner[k][0]; v[n * 5 + 1] = corner[k][1]; v[n * 5 + 2] = 0;
        v[n * 5 + 3] = corner[k][0]; v[n * 5 + 4] = corner[k][1];
    }

    /* shaders */
    int arch = nvnu_shader_arch();
    static NVNshaderControl ctl[2];
    uint32_t soff = OFF_SHADERS;
    NVNshaderData sd[2];
    sd[0].data = base + soff; sd[0].control = &ctl[0];
    soff += nvnu_load_shader("rom:/shaders/scene.vs", pool_mem + soff, &ctl[0], NVN_STAGE_VERTEX, arch);
    sd[1].data = base + soff; sd[1].control = &ctl[1];
    soff += nvnu_load_shader("rom:/shaders/scene.fs", pool_mem + soff, &ctl[1], NVN_STAGE_FRAGMENT, arch);
    nvn.nvnProgramInitialize(&prog, &dev);
    if (!nvn.nvnProgramSetShaders(&prog, 2, sd)) { hz_printf("shaders failed\n"); return 1; }

    /* wait for the loader's textures */
    hz_mutex_lock(&load_lock);
    while (!loaded) hz_cond_wait(&load_cond, &load_lock, -1);
    hz_mutex_unlock(&load_lock);
    hz_thread_join(&th);
    nvn.nvnMemoryPoolFlushMappedRange(&pool, 0, POOL_SIZE);   /* meshes, shaders, the loader's textures */
    nvnu_texture(&nvn, &dev, &pool, &tex_floor, (int)tex_hdr[0].format, (int)tex_hdr[0].width, (int)tex_hdr[0].height, 0, (int)tex_off[0]);
    nvnu_texture(&nvn, &dev, &pool, &tex_font, (int)tex_hdr[1].format, (int)tex_hdr[1].width, (int)tex_hdr[1].height, 0, (int)tex_off[1]);
    nvnu_texture(&nvn, &dev, &pool, &tex_white, (int)tex_hdr[2].format, (int)tex_hdr[2].width, (int)tex_hdr[2].height, 0, (int)tex_off[2]);
    nvnu_texture(&nvn, &dev, &pool, &tex_orb, (int)tex_hdr[3].format, (int)tex_hdr[3].width, (int)tex_hdr[3].height, 0, (int)tex_off[3]);
    nvnu_texture(&nvn, &dev, &pool, &win_tex[0], NVN_FORMAT_RGBA8, WIN_W, WIN_H, NVN_TEXTURE_FLAGS_DISPLAY, -1);
    nvnu_texture(&nvn, &dev, &pool, &win_tex[1], NVN_FORMAT_RGBA8, WIN_W, WIN_H, NVN_TEXTURE_FLAGS_DISPLAY, -1);
    nvnu_texture(&nvn, &dev, &pool, &minimap, NVN_FORMAT_RGBA8, MAP, MAP, NVN_TEXTURE_FLAGS_RENDER_TARGET, -1);
    NVNsamplerBuilder sb;
    nvn.nvnSamplerBuilderSetDefaults(&sb);
    nvn.nvnSamplerBuilderSetDevice(&sb, &dev);
    nvn.nvnSamplerBuilderSetMinMagFilter(&sb, NVN_FILTER_NEAREST, NVN_FILTER_NEAREST);
    nvn.nvnSamplerBuilderSetWrapMode(&sb, NVN_WRAP_CLAMP, NVN_WRAP_CLAMP, NVN_WRAP_CLAMP);
    nvn.nvnSamplerInitialize(&s_near, &sb);
    nvn.nvnSamplerBuilderSetMinMagFilter(&sb, NVN_FILTER_LINEAR, NVN_FILTER_LINEAR);
    nvn.nvnSamplerBuilderSetWrapMode(&sb, NVN_WRAP_REPEAT, NVN_WRAP_REPEAT, NVN_WRAP_REPEAT);
    nvn.nvnSamplerInitialize(&s_repeat, &sb);
    nvn.nvnTexturePoolInitialize(&tpool, &pool, 0xF0000, 16);
    nvn.nvnSamplerPoolInitialize(&spool, &pool, 0xF8000, 16);
    NVNtexture *texs[5] = {&tex_floor, &tex_font, &tex_white, &tex_orb, &minimap};
    for (int i = 0; i < 5; i++) nvn.nvnTexturePoolRegisterTexture(&tpool, i + 1, texs[i], 0);
    nvn.nvnSamplerPoolRegisterSampler(&spool, 1, &s_near);
    nvn.nvnSamplerPoolRegisterSampler(&spool, 2, &s_repeat);
    NVNtextureHandle h_floor = nvn.nvnDeviceGetTextureHandle(&dev, 1, 2), h_font = nvn.nvnDeviceGetTextureHandle(&dev, 2, 1),
                     h_white = nvn.nvnDeviceGetTextureHandle(&dev, 3, 1), h_orb = nvn.nvnDeviceGetTextureHandle(&dev, 4, 1),
                     h_map = nvn.nvnDeviceGetTextureHandle(&dev, 5, 1);

    NVNqueueBuilder qb;
    nvn.nvnQueueBuilderSetDefaults(&qb);
    nvn.nvnQueueBuilderSetDevice(&qb, &dev);
    nvn.nvnQueueInitialize(&queue, &qb);
    nvn.nvnCommandBufferInitialize(&cmd, &dev);
    nvn.nvnSyncInitialize(&done[0], &dev);
    nvn.nvnSyncInitialize(&done[1], &dev);
    NVNwindowBuilder wb;
    NVNtexture *wt[2] = {&win_tex[0], &win_tex[1]};
    nvn.nvnWindowBuilderSetDefaults(&wb);
    nvn.nvnWindowBuilderSetDevice(&wb, &dev);
    nvn.nvnWindowBuilderSetTextures(&wb, 2, wt);
    nvn.nvnWindowInitialize(&window, &wb);

    uint32_t npad = 0;
    nnhidInitializeNpad();
    nnhidSetSupportedNpadIdType(&npad, 1);
    NVNvertexAttribState attrs[2] = {{NVN_ATTR_FLOAT3, 0, 0, 0}, {NVN_ATTR_FLOAT2, 12, 0, 1}};
    NVNvertexStreamState stream = {20, 0};
    NVNcolorState opaque = {0}, blend = {1};
    NVNtexture *map_target[1] = {&minimap};
    static const float sky[4] = {0.35f, 0.55f, 0.85f, 1}, dark[4] = {0.1f, 0.1f, 0.15f, 1};
    static const float white[4] = {1, 1, 1, 1}, player_c[4] = {0.2f, 0.9f, 1, 1}, orb_c[4] = {1, 0.85f, 0.2f, 1};
    static const float hud_c[4] = {1, 1, 1, 1}, map_floor[4] = {0.3f, 0.3f, 0.35f, 1}, peer_c[4] = {1, 0.3f, 0.8f, 1};
    Mat vp = camera();
    Mat ortho = translate_scale(0, 0, 0.5f, 1 / 8.0f, 0, 0);        /* minimap: world x, z -> clip x, y */
    ortho.m[9] = 1 / 8.0f;                                            /* clip y from world z; depth 0.5 */
    audio_init();
    uint32_t last_score = 0;
    int64_t last_tick = nnosGetSystemTick();
    uint32_t frame_ms = 0;
    hz_printf("demo: best score so far %u\n", best);
    if (nxcoopStatus() == 1) {
        int32_t slot = -1;
        uint32_t r = nxcoopConnect(&slot);
        if (r == 0) { coop_slot = slot; hz_printf("coop: in the room as player %d\n", slot); }
        else hz_printf("coop: cannot reach the room (error %u); playing alone\n", r);
    }
    for (;;) {
        uint32_t msg = 0;
        if (nnoeTryPopNotificationMessage(&msg) && msg == NN_OE_MESSAGE_EXIT_REQUEST) break;
        NnNpadState in;
        nnhidGetNpadFullKeyState(&in, &npad);
        step((const SimInput *)&in);
        if (g.score > best) best = g.score;
        if (coop_slot >= 0) coop_frame();
        audio_frame(g.score != last_score);
        last_score = g.score;
        int set = (int)(g.frame & 1);
        if (g.frame > 2) nvn.nvnSyncWait(&done[set], 10000000000ull);   /* this slot set's last use is done */
        slot_base = set * (SLOTS / 2);
        slot_next = 0;
        int index = 0;
        nvn.nvnWindowAcquireTexture(&window, 0, &index);
        NVNtexture *target[1] = {&win_tex[index]};

        nvn.nvnCommandBufferBeginRecording(&cmd);
        nvn.nvnCommandBufferBindProgram(&cmd, &prog, 3);
        nvn.nvnCommandBufferBindVertexAttribState(&cmd, 2, attrs);
        nvn.nvnCommandBufferBindVertexStreamState(&cmd, 1, &stream);
        nvn.nvnCommandBufferBindVertexBuffer(&cmd, 0, base + OFF_VERTS, 48 * 20);
        nvn.nvnCommandBufferBindColorState(&cmd, &opaque);
        /* minimap pass: render to texture */
        nvn.nvnCommandBufferSetRenderTargets(&cmd, 1, map_target, 0, 0, 0);
        nvn.nvnCommandBufferSetViewport(&cmd, 0, 0, MAP, MAP);
        nvn.nvnCommandBufferClearColor(&cmd, 0, dark, 0xF);
        draw(mul(ortho, translate_scale(0, 0, 0, 0.94f, 1, 0.94f)), map_floor, UV1, h_white, V_FLOOR, 6);
        for (int i = 0; i < ORBS; i++)
            draw(mul(ortho, translate_scale(g.orb[i].x, 0, g.orb[i].z, 0.05f, 1, 0.05f)), orb_c, UV1, h_white, V_FLOOR, 6);
        draw(mul(ortho, translate_scale(g.px, 0, g.pz, 0.07f, 1, 0.07f)), player_c, UV1, h_white, V_FLOOR, 6);
        for (int i = 0; i < MAX_PLAYERS; i++)
            if (peers[i].active)
                draw(mul(ortho, translate_scale(peers[i].x, 0, peers[i].z, 0.07f, 1, 0.07f)), peer_c, UV1, h_white, V_FLOOR, 6);
        /* the scene */
        nvn.nvnCommandBufferSetRenderTargets(&cmd, 1, target, 0, 0, 0);
        nvn.nvnCommandBufferSetViewport(&cmd, 0, 0, WIN_W, WIN_H);
        nvn.nvnCommandBufferClearColor(&cmd, 0, sky, 0xF);
        draw(vp, white, UV1, h_floor, V_FLOOR, 6);
        /* objects back to front (farther from the eye first) */
        /* objects: orbs 0..ORBS-1, the player ORBS, other players ORBS+1+slot */
        int order[ORBS + 1 + MAX_PLAYERS], count = 0;
        float dist[ORBS + 1 + MAX_PLAYERS];
        for (int i = 0; i < ORBS + 1 + MAX_PLAYERS; i++) {
            float x, z;
            if (i < ORBS) { x = g.orb[i].x; z = g.orb[i].z; }
            else if (i == ORBS) { x = g.px; z = g.pz; }
            else if (peers[i - ORBS - 1].active) { x = peers[i - ORBS - 1].x; z = peers[i - ORBS - 1].z; }
            else continue;
            dist[i] = x * x + (13 - 0.5f) * (13 - 0.5f) + (11 - z) * (11 - z);
            order[count++] = i;
        }
        for (int i = 1; i < count; i++)
            for (int j = i; j > 0 && dist[order[j]] > dist[order[j - 1]]; j--) {
                int t = order[j]; order[j] = order[j - 1]; order[j - 1] = t;
            }
        for (int k = 0; k < count; k++) {
            int i = order[k];
            if (i < ORBS) cube(vp, g.orb[i].x, 0.4f, g.orb[i].z, 0.8f, orb_c, h_orb);
            else if (i == ORBS) cube(vp, g.px, 0.5f, g.pz, 1.0f, player_c, h_white);
            else cube(vp, peers[i - ORBS - 1].x, 0.5f, peers[i - ORBS - 1].z, 1.0f, peer_c, h_white);
        }
        /* HUD: score (left), frame time in ms (right), the minimap (bottom right) */
        nvn.nvnCommandBufferBindColorState(&cmd, &blend);
        number(g.score, 8, 8, hud_c, h_font);
        number(frame_ms, WIN_W - 40, 8, hud_c, h_font);
        nvn.nvnCommandBufferBindColorState(&cmd, &opaque);
        draw(screen_rect(WIN_W - MAP - 8, WIN_H - MAP - 8, MAP, MAP), white, UV1, h_map, V_QUAD, 6);
        NVNcommandHandle h = nvn.nvnCommandBufferEndRecording(&cmd);
        nvn.nvnMemoryPoolFlushMappedRange(&pool, OFF_UBO + slot_base * SLOT, (size_t)slot_next * SLOT);
        nvn.nvnQueueSubmitCommands(&queue, 1, &h);
        nvn.nvnQueuePresentTexture(&queue, &window, index);
        nvn.nvnQueueFenceSync(&queue, &done[set], 0, 0);
        nvn.nvnQueueFlush(&queue);
        int64_t now = nnosGetSystemTick();
        frame_ms = (uint32_t)(nnosConvertToTimeSpan(now - last_tick) / 1000000);
        last_tick = now;
        hz_printf("frame %u state %x score %u\n", g.frame, checksum(), g.score);
    }
    nvn.nvnQueueFinish(&queue);
    if (best > best_before) {     /* all or nothing: the new best lands whole or not at all */
        nnfsCreateFile("save:/best", 4);
        nnfsOpenFile(&sf, "save:/best", NN_FS_WRITE);
        NnWriteOption opt = {0};
        nnfsWriteFile(sf, 0, &best, 4, &opt);
        nnfsCloseFile(sf);
        nnfsCommitSaveData("save");
    }
    nnfsUnmount("save");
    if (coop_slot >= 0) {
        hz_printf("coop: received %u positions from other players\n", coop_received);
        nxcoopLeave();
    }
    hz_printf("demo: %u frames, score %u, best %u, player at x %d z %d (hundredths)\n", g.frame, g.score, best,
              (int)(g.px * 100), (int)(g.pz * 100));
    return 0;
}
