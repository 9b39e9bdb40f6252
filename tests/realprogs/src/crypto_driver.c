/* AES-128/256 and SHA-1/SHA-256 with the Armv8 cryptography extension (ACLE intrinsics:
 * vaeseq_u8/vaesmcq_u8/vaesdq_u8/vaesimcq_u8, vsha1*q_u32, vsha256*q_u32) and GHASH-style
 * carry-less multiplication with vmull_p64, written here from the FIPS-197/FIPS-180-4
 * descriptions.  Prints each result in hex; the test compares with published vectors.
 *   crypto aes128|aes256|aes128dec|sha1|sha256|pmull ARG   (ARG: hex key+block, or text)
 *   crypto sha256-file PATH / sha1-file PATH */
#include <arm_neon.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void hex(const uint8_t *b, size_t n) { for (size_t i = 0; i < n; i++) printf("%02x", b[i]); printf("\n"); }

static size_t unhex(const char *s, uint8_t *out) {
    size_t n = strlen(s) / 2;
    for (size_t i = 0; i < n; i++) { unsigned v; sscanf(s + 2 * i, "%2x", &v); out[i] = (uint8_t)v; }
    return n;
}

/* ---- AES key expansion (FIPS-197 section 5.2), the S-box taken from the hardware: AESE with a
 * zero round key and a word replicated in all columns makes ShiftRows a no-op on it. */
static uint32_t sub_word(uint32_t w) {
    uint8x16_t v = vreinterpretq_u8_u32(vdupq_n_u32(w));
    v = vaeseq_u8(v, vdupq_n_u8(0));
    return vgetq_lane_u32(vreinterpretq_u32_u8(v), 0);
}

static int expand(const uint8_t *key, int nk, uint8x16_t *rk) {
    uint32_t w[60];
    int nr = nk + 6;
    uint8_t rcon = 1;
    for (int i = 0; i < nk; i++) memcpy(&w[i], key + 4 * i, 4);
    for (int i = nk; i < 4 * (nr + 1); i++) {
        uint32_t t = w[i - 1];
        if (i % nk == 0) {
            t = sub_word((t >> 8) | (t << 24)) ^ rcon;
            rcon = (uint8_t)((rcon << 1) ^ ((rcon >> 7) * 0x1b));
        } else if (nk > 6 && i % nk == 4) {
            t = sub_word(t);
        }
        w[i] = w[i - nk] ^ t;
    }
    for (int r = 0; r <= nr; r++) rk[r] = vld1q_u8((const uint8_t *)&w[4 * r]);
    return nr;
}

static uint8x16_t encrypt(uint8x16_t b, const uint8x16_t *rk, int nr) {
    for (int r = 0; r < nr - 1; r++) b = vaesmcq_u8(vaeseq_u8(b, rk[r]));
    return veorq_u8(vaeseq_u8(b, rk[nr - 1]), rk[nr]);
}

/* the equivalent inverse cipher (FIPS-197 section 5.3.5): round keys through InvMixColumns */
static uint8x16_t decrypt(uint8x16_t b, const uint8x16_t *rk, int nr) {
    b = vaesdq_u8(b, rk[nr]);
    for (int r = nr - 1; r > 0; r--) b = vaesdq_u8(vaesimcq_u8(b), vaesimcq_u8(rk[r]));
    return veorq_u8(b, rk[0]);
}

/* ---- SHA-256 (FIPS-180-4), four rounds per vsha256hq_u32 ---- */
static const uint32_t K256[64] = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2};

static void sha256_block(uint32x4_t st[2], const uint8_t *p) {
    uint32x4_t m[4], a = st[0], e = st[1];
    for (int i = 0; i < 4; i++) m[i] = vreinterpretq_u32_u8(vrev32q_u8(vld1q_u8(p + 16 * i)));
    for (int r = 0; r < 16; r++) {
        uint32x4_t wk = vaddq_u32(m[r % 4], vld1q_u32(&K256[4 * r]));
        uint32x4_t a0 = a;
        a = vsha256hq_u32(a, e, wk);
        e = vsha256h2q_u32(e, a0, wk);
        if (r < 12) m[r % 4] = vsha256su1q_u32(vsha256su0q_u32(m[r % 4], m[(r + 1) % 4]), m[(r + 2) % 4], m[(r + 3) % 4]);
    }
    st[0] = vaddq_u32(st[0], a);
    st[1] = vaddq_u32(st[1], e);
}

/* ---- SHA-1 (FIPS-180-4) ---- */
static void sha1_block(uint32x4_t *abcd, uint32_t *e0, const uint8_t *p) {
    uint32x4_t m[4], a = *abcd;
    uint32_t e = *e0;
    for (int i = 0; i < 4; i++) m[i] = vreinterpretq_u32_u8(vrev32q_u8(vld1q_u8(p + 16 * i)));
    static const uint32_t K[4] = {0x5a827999, 0x6ed9eba1, 0x8f1bbcdc, 0xca62c1d6};
    for (int r = 0; r < 20; r++) {
        uint32x4_t wk = vaddq_u32(m[r % 4], vdupq_n_u32(K[r / 5]));
        uint32_t en = vsha1h_u32(vgetq_lane_u32(a, 0));
        if (r < 5) a = vsha1cq_u32(a, e, wk);
        else if (r < 10 || r >= 15) a = vsha1pq_u32(a, e, wk);
        else a = vsha1mq_u32(a, e, wk);
        e = en;
        if (r < 16) m[r % 4] = vsha1su1q_u32(vsha1su0q_u32(m[r % 4], m[(r + 1) % 4], m[(r + 2) % 4]), m[(r + 3) % 4]);
    }
    *abcd = vaddq_u32(*abcd, a);
    *e0 += e;
}

/* Merkle-Damgard padding shared by both hashes: calls block() on 64-byte blocks */
typedef void (*block_fn)(void *ctx, const uint8_t *p);
static void md_pad(void *ctx, block_fn block, const uint8_t *msg, size_t n) {
    size_t full = n / 64 * 64;
    for (size_t i = 0; i < full; i += 64) block(ctx, msg + i);
    uint8_t tail[128] = {0};
    size_t r = n - full;
    memcpy(tail, msg + full, r);
    tail[r] = 0x80;
    size_t tl = r < 56 ? 64 : 128;
    uint64_t bits = (uint64_t)n * 8;
    for (int i = 0; i < 8; i++) tail[tl - 1 - i] = (uint8_t)(bits >> (8 * i));
    for (size_t i = 0; i < tl; i += 64) block(ctx, tail + i);
}

struct s256 { uint32x4_t st[2]; };
static void b256(void *c, const uint8_t *p) { sha256_block(((struct s256 *)c)->st, p); }
struct s1 { uint32x4_t abcd; uint32_t e; };
static void b1(void *c, const uint8_t *p) { struct s1 *s = c; sha1_block(&s->abcd, &s->e, p); }

static void sha256(const uint8_t *m, size_t n) {
    static const uint32_t H0[8] = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};
    struct s256 c = {{vld1q_u32(H0), vld1q_u32(H0 + 4)}};
    md_pad(&c, b256, m, n);
    uint8_t out[32];
    vst1q_u8(out, vrev32q_u8(vreinterpretq_u8_u32(c.st[0])));
    vst1q_u8(out + 16, vrev32q_u8(vreinterpretq_u8_u32(c.st[1])));
    hex(out, 32);
}

static void sha1(const uint8_t *m, size_t n) {
    static const uint32_t H0[4] = {0x67452301, 0xefcdab89, 0x98badcfe, 0x10325476};
    struct s1 c = {vld1q_u32(H0), 0xc3d2e1f0};
    md_pad(&c, b1, m, n);
    uint8_t out[20];
    vst1q_u8(out, vrev32q_u8(vreinterpretq_u8_u32(c.abcd)));
    for (int i = 0; i < 4; i++) out[16 + i] = (uint8_t)(c.e >> (24 - 8 * i));
    hex(out, 20);
}

static uint8_t *slurp(const char *path, size_t *len) {
    FILE *f = fopen(path, "rb");
    if (!f) { fprintf(stderr, "crypto: %s: cannot open\n", path); exit(1); }
    size_t cap = 1 << 16, n = 0;
    uint8_t *b = malloc(cap);
    size_t r;
    while ((r = fread(b + n, 1, cap - n, f)) > 0) { n += r; if (n == cap) b = realloc(b, cap *= 2); }
    fclose(f);
    *len = n;
    return b;
}

int main(int argc, char **argv) {
    if (argc != 3) { fprintf(stderr, "usage: crypto MODE ARG\n"); return 2; }
    const char *mode = argv[1];
    uint8_t buf[64];
    if (!strcmp(mode, "aes128") || !strcmp(mode, "aes256") || !strcmp(mode, "aes128dec") || !strcmp(mode, "aes256dec")) {
        int nk = strstr(mode, "256") ? 8 : 4;
        size_t n = unhex(argv[2], buf);
        if (n != (size_t)(4 * nk + 16)) { fprintf(stderr, "crypto: want key+block hex\n"); return 2; }
        uint8x16_t rk[15];
        int nr = expand(buf, nk, rk);
        uint8x16_t b = vld1q_u8(buf + 4 * nk);
        b = strstr(mode, "dec") ? decrypt(b, rk, nr) : encrypt(b, rk, nr);
        uint8_t out[16];
        vst1q_u8(out, b);
        hex(out, 16);
    } else if (!strcmp(mode, "sha256")) {
        sha256((const uint8_t *)argv[2], strlen(argv[2]));
    } else if (!strcmp(mode, "sha1")) {
        sha1((const uint8_t *)argv[2], strlen(argv[2]));
    } else if (!strcmp(mode, "sha256-file") || !strcmp(mode, "sha1-file")) {
        size_t n;
        uint8_t *m = slurp(argv[2], &n);
        if (mode[3] == '2') sha256(m, n); else sha1(m, n);
        free(m);
    } else if (!strcmp(mode, "pmull")) {   /* two 64-bit hex operands: carry-less product, both halves */
        if (unhex(argv[2], buf) != 16) { fprintf(stderr, "crypto: want 2x8 bytes\n"); return 2; }
        poly64x2_t v = vreinterpretq_p64_u8(vld1q_u8(buf));
        poly128_t lo = vmull_p64(vgetq_lane_p64(v, 0), vgetq_lane_p64(v, 1));
        poly128_t hi = vmull_high_p64(v, v);
        uint8_t out[32];
        memcpy(out, &lo, 16); memcpy(out + 16, &hi, 16);
        hex(out, 32);
        poly8x8_t a = vreinterpret_p8_u8(vld1_u8(buf)), c = vreinterpret_p8_u8(vld1_u8(buf + 8));
        poly16x8_t p8 = vmull_p8(a, c);
        vst1q_u8(out, vreinterpretq_u8_p16(p8));
        hex(out, 16);
    } else {
        fprintf(stderr, "crypto: unknown mode %s\n", mode);
        return 2;
    }
    return 0;
}
