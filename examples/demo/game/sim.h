/* sim.h — the demo's simulation: state, fixed 60 Hz step, checksum.  Shared by the game
 * (demo.c, built for AArch64 and recompiled) and by a native x86-64 build of the same code
 * (sim_native.c), which the tests use as the oracle for the per-frame checksums.  Both are
 * built with -ffp-contract=off: no fused multiply-adds, so the float results are the same. */
#ifndef DEMO_SIM_H
#define DEMO_SIM_H
#include <stdint.h>
#include <stddef.h>

#define ORBS 5
#define ARENA 7.5f

typedef struct { uint64_t sampling; uint64_t buttons; int32_t lx, ly, rx, ry; uint32_t attributes; } SimInput;

typedef struct { float x, z, vx, vz; } Orb;
typedef struct {
    uint32_t frame, score, rng;
    float px, pz;
    Orb orb[ORBS];
} Game;
static Game g;

/* ---- the simulation: everything the checksum covers comes from the input alone --------------- */
static uint32_t rnd(void) { g.rng = g.rng * 1664525u + 1013904223u; return g.rng >> 8; }
static float rndf(float lo, float hi) { return lo + (hi - lo) * (float)(rnd() & 0xFFFF) / 65535.0f; }

static void spawn(Orb *o);

static void sim_init(void) {
    g.rng = 12345;
    for (int i = 0; i < ORBS; i++) spawn(&g.orb[i]);
}

static void spawn(Orb *o) {
    o->x = rndf(-ARENA, ARENA); o->z = rndf(-ARENA, ARENA);
    o->vx = rndf(-0.08f, 0.08f); o->vz = rndf(-0.08f, 0.08f);
}

static void step(const SimInput *in) {
    float dx = 0, dz = 0;
    if (in->buttons & (1u << 12)) dx -= 1;
    if (in->buttons & (1u << 14)) dx += 1;
    if (in->buttons & (1u << 13)) dz -= 1;
    if (in->buttons & (1u << 15)) dz += 1;
    dx += (float)in->lx / 32767.0f; dz -= (float)in->ly / 32767.0f;
    g.px += dx * 0.15f; g.pz += dz * 0.15f;
    if (g.px < -ARENA) g.px = -ARENA; if (g.px > ARENA) g.px = ARENA;
    if (g.pz < -ARENA) g.pz = -ARENA; if (g.pz > ARENA) g.pz = ARENA;
    for (int i = 0; i < ORBS; i++) {
        Orb *o = &g.orb[i];
        o->x += o->vx; o->z += o->vz;
        if (o->x < -ARENA || o->x > ARENA) o->vx = -o->vx;
        if (o->z < -ARENA || o->z > ARENA) o->vz = -o->vz;
        float ddx = o->x - g.px, ddz = o->z - g.pz;
        if (ddx * ddx + ddz * ddz < 0.9f * 0.9f) { g.score++; spawn(o); }
    }
    g.frame++;
}

static uint32_t checksum(void) {
    const uint8_t *p = (const uint8_t *)&g;
    uint32_t h = 2166136261u;
    for (size_t i = 0; i < sizeof g; i++) { h ^= p[i]; h *= 16777619u; }
    return h;
}

#endif
