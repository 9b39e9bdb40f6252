/* Decoders for block-compressed textures the Vulkan device cannot sample natively:
 * BC1-BC5 (S3TC / RGTC), BC7 (BPTC) and ASTC LDR 2D.  Written from the public format descriptions
 * (Khronos Data Format Specification, "S3TC", "RGTC" and "ASTC" chapters).  Output is RGBA8,
 * row-major, cropped to the image size.  Blocks arrive row-major (already deswizzled).
 *
 * ASTC output follows the decode_unorm8 convention (top 8 bits of the 16-bit interpolated
 * value); a block the LDR profile cannot decode (reserved modes, HDR endpoints, too many bits)
 * becomes the error colour, opaque magenta, as the specification asks.
 */
#include <stdint.h>
#include <string.h>

typedef unsigned __int128 u128;

/* n (< 32) bits of a 128-bit block from bit pos (bits past the end read as 0) */
static uint32_t bits_of(u128 v, int pos, int n) {
    if (n == 0 || pos >= 128) return 0;
    return (uint32_t)((v >> pos) & (((u128)1 << n) - 1));
}


/* ------------------------------------------------------------------------------------------ */
/* S3TC / RGTC                                                                                */

static void rgb565(unsigned v, int out[3]) {
    int r = (v >> 11) & 31, g = (v >> 5) & 63, b = v & 31;
    out[0] = (r << 3) | (r >> 2);
    out[1] = (g << 2) | (g >> 4);
    out[2] = (b << 3) | (b >> 2);
}

/* One BC1 colour block into 16 RGBA texels.  four_colour forces the 4-colour mode (BC2/BC3
 * colour blocks); punch_alpha gives index 3 of the 3-colour mode alpha 0 (BC1 RGBA). */
static void bc1_block(const uint8_t *b, uint8_t *t, int four_colour, int punch_alpha) {
    unsigned c0 = b[0] | (b[1] << 8), c1 = b[2] | (b[3] << 8);
    int p[4][4];
    rgb565(c0, p[0]);
    rgb565(c1, p[1]);
    p[0][3] = p[1][3] = p[2][3] = 255;
    if (c0 > c1 || four_colour) {
        for (int k = 0; k < 3; k++) {
            /* The format defines exact thirds and leaves the rounding to implementations
             * (Mesa's differs by one here and there); we truncate, like texture2ddecoder. */
            p[2][k] = (2 * p[0][k] + p[1][k]) / 3;
            p[3][k] = (p[0][k] + 2 * p[1][k]) / 3;
        }
        p[3][3] = 255;
    } else {
        for (int k = 0; k < 3; k++) {
            p[2][k] = (p[0][k] + p[1][k]) / 2;
            p[3][k] = 0;
        }
        p[3][3] = punch_alpha ? 0 : 255;
    }
    uint32_t idx = b[4] | (b[5] << 8) | (b[6] << 16) | ((uint32_t)b[7] << 24);
    for (int i = 0; i < 16; i++) {
        int *c = p[(idx >> (2 * i)) & 3];
        t[4 * i] = c[0]; t[4 * i + 1] = c[1]; t[4 * i + 2] = c[2]; t[4 * i + 3] = c[3];
    }
}

/* One BC4 channel block (8 bytes) into 16 values written every `stride` bytes. */
static void bc4_block(const uint8_t *b, uint8_t *t, int stride) {
    int e[8];
    e[0] = b[0];
    e[1] = b[1];
    if (e[0] > e[1]) {
        for (int i = 1; i < 7; i++) e[i + 1] = ((7 - i) * e[0] + i * e[1]) / 7;
    } else {
        for (int i = 1; i < 5; i++) e[i + 1] = ((5 - i) * e[0] + i * e[1]) / 5;
        e[6] = 0;
        e[7] = 255;
    }
    uint64_t idx = 0;
    for (int i = 0; i < 6; i++) idx |= (uint64_t)b[2 + i] << (8 * i);
    for (int i = 0; i < 16; i++) t[stride * i] = e[(idx >> (3 * i)) & 7];
}

/* ------------------------------------------------------------------------------------------ */
/* BC7 (BPTC UNORM)                                                                           */

#include "bptc_tables.h"

/* Per mode: subsets, partition bits, rotation bits, index-selection bits, colour bits, alpha
 * bits, p-bits per endpoint, shared p-bits per subset, index bits, second index bits. */
static const uint8_t BC7_MODES[8][10] = {
    {3, 4, 0, 0, 4, 0, 1, 0, 3, 0}, {2, 6, 0, 0, 6, 0, 0, 1, 3, 0}, {3, 6, 0, 0, 5, 0, 0, 0, 2, 0},
    {2, 6, 0, 0, 7, 0, 1, 0, 2, 0}, {1, 0, 2, 1, 5, 6, 0, 0, 2, 3}, {1, 0, 2, 0, 7, 8, 0, 0, 2, 2},
    {1, 0, 0, 0, 7, 7, 1, 0, 4, 0}, {2, 6, 0, 0, 5, 5, 1, 0, 2, 0}};

static const uint8_t BPTC_W2[4] = {0, 21, 43, 64};
static const uint8_t BPTC_W3[8] = {0, 9, 18, 27, 37, 46, 55, 64};
static const uint8_t BPTC_W4[16] = {0, 4, 9, 13, 17, 21, 26, 30, 34, 38, 43, 47, 51, 55, 60, 64};

static const uint8_t *bptc_weights(int bits) {
    return bits == 2 ? BPTC_W2 : bits == 3 ? BPTC_W3 : BPTC_W4;
}

static void bc7_block(const uint8_t *b, uint8_t *t) {
    u128 v = 0;
    for (int i = 15; i >= 0; i--) v = (v << 8) | b[i];
    int mode = 0;
    while (mode < 8 && !((b[0] >> mode) & 1)) mode++;
    if (mode == 8) {                       /* no mode bit: reserved, transparent black */
        memset(t, 0, 64);
        return;
    }
    const uint8_t *m = BC7_MODES[mode];
    int ns = m[0], cb = m[4], ab = m[5], epb = m[6], spb = m[7], ib = m[8], ib2 = m[9];
    int pos = mode + 1;
    int part = bits_of(v, pos, m[1]); pos += m[1];
    int rot = bits_of(v, pos, m[2]); pos += m[2];
    int isel = bits_of(v, pos, m[3]); pos += m[3];
    int ep[6][4];                          /* endpoint e of subset s is ep[2 * s + e] */
    for (int c = 0; c < 3; c++)
        for (int e = 0; e < 2 * ns; e++) { ep[e][c] = bits_of(v, pos, cb); pos += cb; }
    for (int e = 0; e < 2 * ns; e++) {
        if (ab) { ep[e][3] = bits_of(v, pos, ab); pos += ab; }
        else ep[e][3] = 255;
    }
    int pbit[6] = {0};
    if (epb) for (int e = 0; e < 2 * ns; e++) pbit[e] = bits_of(v, pos++, 1);
    if (spb) for (int s = 0; s < ns; s++) { int p = bits_of(v, pos++, 1); pbit[2 * s] = pbit[2 * s + 1] = p; }
    for (int e = 0; e < 2 * ns; e++) {
        for (int c = 0; c < 4; c++) {
            int n = c < 3 ? cb : ab;
            if (n == 0) continue;          /* no alpha in this mode: stays 255 */
            int x = ep[e][c];
            if (epb || spb) { x = (x << 1) | pbit[e]; n++; }
            ep[e][c] = (x << (8 - n)) | (x >> (2 * n - 8));
        }
    }
    const uint8_t *subset = ns == 2 ? PARTITION2[part] : ns == 3 ? PARTITION3[part] : NULL;
    int anchor[3] = {0, ns == 2 ? ANCHOR2[part] : ns == 3 ? ANCHOR3[part][0] : 0, ns == 3 ? ANCHOR3[part][1] : 0};
    int idx[16], idx2[16];
    for (int i = 0; i < 16; i++) {
        int s = subset ? subset[i] : 0;
        int n = ib - (i == anchor[s]);
        idx[i] = bits_of(v, pos, n);
        pos += n;
    }
    if (ib2) {
        for (int i = 0; i < 16; i++) {
            int n = ib2 - (i == 0);
            idx2[i] = bits_of(v, pos, n);
            pos += n;
        }
    }
    for (int i = 0; i < 16; i++) {
        int s = subset ? subset[i] : 0;
        int *e0 = ep[2 * s], *e1 = ep[2 * s + 1];
        int ci = idx[i], ai = idx[i], cbits = ib, abits = ib;
        if (ib2) {                         /* modes 4/5: colour and alpha have separate indices */
            if (isel) { ci = idx2[i]; cbits = ib2; }
            else { ai = idx2[i]; abits = ib2; }
        }
        int px[4];
        for (int c = 0; c < 4; c++) {
            int w = c < 3 ? bptc_weights(cbits)[ci] : bptc_weights(abits)[ai];
            px[c] = ((64 - w) * e0[c] + w * e1[c] + 32) >> 6;
        }
        if (rot) { int tmp = px[3]; px[3] = px[rot - 1]; px[rot - 1] = tmp; }
        for (int c = 0; c < 4; c++) t[4 * i + c] = px[c];
    }
}

/* ------------------------------------------------------------------------------------------ */
/* ASTC                                                                                       */

/* Integer sequence encoding: range index -> (trits, quints, plain bits). */
static const uint8_t ISE[21][3] = {
    {0, 0, 1}, {1, 0, 0}, {0, 0, 2}, {0, 1, 0}, {1, 0, 1}, {0, 0, 3}, {0, 1, 1}, {1, 0, 2},
    {0, 0, 4}, {0, 1, 2}, {1, 0, 3}, {0, 0, 5}, {0, 1, 3}, {1, 0, 4}, {0, 0, 6}, {0, 1, 4},
    {1, 0, 5}, {0, 0, 7}, {0, 1, 5}, {1, 0, 6}, {0, 0, 8}};

static int ise_bits(int count, int range) {
    const uint8_t *q = ISE[range];
    int n = count * q[2];
    if (q[0]) n += (8 * count + 4) / 5;
    if (q[1]) n += (7 * count + 2) / 3;
    return n;
}

static void trit_unpack(unsigned T, int t[5]) {
    unsigned C;
    if (((T >> 2) & 7) == 7) {
        C = (((T >> 5) & 7) << 2) | (T & 3);
        t[4] = 2;
        t[3] = 2;
    } else {
        C = T & 31;
        if (((T >> 5) & 3) == 3) {
            t[4] = 2;
            t[3] = (T >> 7) & 1;
        } else {
            t[4] = (T >> 7) & 1;
            t[3] = (T >> 5) & 3;
        }
    }
    if ((C & 3) == 3) {
        t[2] = 2;
        t[1] = (C >> 4) & 1;
        t[0] = (((C >> 3) & 1) << 1) | (((C >> 2) & 1) & ~((C >> 3) & 1));
    } else if (((C >> 2) & 3) == 3) {
        t[2] = 2;
        t[1] = 2;
        t[0] = C & 3;
    } else {
        t[2] = (C >> 4) & 1;
        t[1] = (C >> 2) & 3;
        t[0] = (((C >> 1) & 1) << 1) | ((C & 1) & ~((C >> 1) & 1));
    }
}

static void quint_unpack(unsigned Q, int q[3]) {
    if (((Q >> 1) & 3) == 3 && ((Q >> 5) & 3) == 0) {
        unsigned q0b = Q & 1;
        q[2] = (q0b << 2) | ((((Q >> 4) & 1) & ~q0b) << 1) | (((Q >> 3) & 1) & ~q0b);
        q[1] = 4;
        q[0] = 4;
        return;
    }
    unsigned C;
    if (((Q >> 1) & 3) == 3) {
        q[2] = 4;
        C = (((Q >> 3) & 3) << 3) | ((~(Q >> 5) & 3) << 1) | (Q & 1);
    } else {
        q[2] = (Q >> 5) & 3;
        C = Q & 31;
    }
    if ((C & 7) == 5) {
        q[1] = 4;
        q[0] = (C >> 3) & 3;
    } else {
        q[1] = (C >> 3) & 3;
        q[0] = C & 7;
    }
}

/* Decode `count` values of range `range` from bit `pos` of v: out[i] = plain bits,
 * tq[i] = trit/quint digit (0 when the range has none). */
static void ise_decode(u128 v, int pos, int count, int range, int *bits, int *tq) {
    const uint8_t *q = ISE[range];
    /* A last, partial trit/quint group reads zeros past the sequence's end, not the next field. */
    int end = pos + ise_bits(count, range);
    if (end < 128) v &= ((u128)1 << end) - 1;
    int m = q[2];
    if (q[0]) {
        static const int tb[5] = {2, 2, 1, 2, 1};    /* trit bits after each value */
        for (int base = 0; base < count; base += 5) {
            unsigned T = 0;
            int sh = 0, t[5];
            for (int j = 0; j < 5; j++) {
                int val = bits_of(v, pos, m);
                pos += m;
                T |= bits_of(v, pos, tb[j]) << sh;
                pos += tb[j];
                sh += tb[j];
                if (base + j < count) bits[base + j] = val;
            }
            trit_unpack(T, t);
            for (int j = 0; j < 5 && base + j < count; j++) tq[base + j] = t[j];
        }
    } else if (q[1]) {
        static const int qb[3] = {3, 2, 2};
        for (int base = 0; base < count; base += 3) {
            unsigned Q = 0;
            int sh = 0, d[3];
            for (int j = 0; j < 3; j++) {
                int val = bits_of(v, pos, m);
                pos += m;
                Q |= bits_of(v, pos, qb[j]) << sh;
                pos += qb[j];
                sh += qb[j];
                if (base + j < count) bits[base + j] = val;
            }
            quint_unpack(Q, d);
            for (int j = 0; j < 3 && base + j < count; j++) tq[base + j] = d[j];
        }
    } else {
        for (int i = 0; i < count; i++) {
            bits[i] = bits_of(v, pos, m);
            tq[i] = 0;
            pos += m;
        }
    }
}

/* Replicate the low `n` bits of v to `to` bits. */
static int replicate(int v, int n, int to) {
    int r = 0, have = 0;
    if (n == 0) return 0;
    while (have < to) {
        int sh = to - have - n;
        r |= sh >= 0 ? v << sh : v >> -sh;
        have += n;
    }
    return r & ((1 << to) - 1);
}

static int unq_color(int range, int b, int d) {
    const uint8_t *q = ISE[range];
    int m = q[2];
    if (!q[0] && !q[1]) return replicate(b, m, 8);
    int A = (b & 1) ? 0x1FF : 0, B = 0, C = 0;
    int a = b & 1, bb = (b >> 1) & 1, c = (b >> 2) & 1, dd = (b >> 3) & 1, e = (b >> 4) & 1, f = (b >> 5) & 1;
    (void)a;
    if (q[0]) {
        switch (m) {
        case 1: C = 204; break;
        case 2: C = 93; B = (bb << 8) | (bb << 4) | (bb << 2) | (bb << 1); break;
        case 3: C = 44; B = (c << 8) | (bb << 7) | (c << 3) | (bb << 2) | (c << 1) | bb; break;
        case 4: C = 22; B = (dd << 8) | (c << 7) | (bb << 6) | (dd << 2) | (c << 1) | bb; break;
        case 5: C = 11; B = (e << 8) | (dd << 7) | (c << 6) | (bb << 5) | (e << 1) | dd; break;
        case 6: C = 5; B = (f << 8) | (e << 7) | (dd << 6) | (c << 5) | (bb << 4) | f; break;
        }
    } else {
        switch (m) {
        case 1: C = 113; break;
        case 2: C = 54; B = (bb << 8) | (bb << 3) | (bb << 2); break;
        case 3: C = 26; B = (c << 8) | (bb << 7) | (c << 2) | (bb << 1) | c; break;
        case 4: C = 13; B = (dd << 8) | (c << 7) | (bb << 6) | (dd << 1) | c; break;
        case 5: C = 6; B = (e << 8) | (dd << 7) | (c << 6) | (bb << 5) | e; break;
        }
    }
    int T = d * C + B;
    T ^= A;
    return (A & 0x80) | (T >> 2);
}

static int unq_weight(int range, int b, int d) {
    const uint8_t *q = ISE[range];
    int m = q[2], r;
    if (!q[0] && !q[1]) {
        r = replicate(b, m, 6);
    } else if (m == 0) {
        return q[0] ? d * 32 : d * 16;            /* already 0..64 */
    } else {
        int A = (b & 1) ? 0x7F : 0, B = 0, C = 0;
        int bb = (b >> 1) & 1, c = (b >> 2) & 1;
        if (q[0]) {
            switch (m) {
            case 1: C = 50; break;
            case 2: C = 23; B = (bb << 6) | (bb << 2) | bb; break;
            case 3: C = 11; B = (c << 6) | (bb << 5) | (c << 1) | bb; break;
            }
        } else {
            switch (m) {
            case 1: C = 28; break;
            case 2: C = 13; B = (bb << 6) | (bb << 1); break;
            }
        }
        int T = d * C + B;
        T ^= A;
        r = (A & 0x20) | (T >> 2);
    }
    return r > 32 ? r + 1 : r;
}

static uint32_t hash52(uint32_t p) {
    p ^= p >> 15;
    p *= 0xEEDE0891u;
    p ^= p >> 5;
    p += p << 16;
    p ^= p >> 7;
    p ^= p >> 3;
    p ^= p << 6;
    p ^= p >> 17;
    return p;
}

static int partition_of(int seed, int x, int y, int count, int small) {
    if (small) { x <<= 1; y <<= 1; }
    seed += (count - 1) * 1024;
    uint32_t r = hash52((uint32_t)seed);
    int s[12];
    static const int shift[12] = {0, 4, 8, 12, 16, 20, 24, 28, 18, 22, 26, 0};
    for (int i = 0; i < 11; i++) s[i] = (r >> shift[i]) & 15;
    s[11] = ((r >> 30) | (r << 2)) & 15;
    for (int i = 0; i < 12; i++) s[i] *= s[i];
    int sh1, sh2;
    if (seed & 1) {
        sh1 = (seed & 2) ? 4 : 5;
        sh2 = count == 3 ? 6 : 5;
    } else {
        sh1 = count == 3 ? 6 : 5;
        sh2 = (seed & 2) ? 4 : 5;
    }
    for (int i = 0; i < 8; i++) s[i] >>= (i & 1) ? sh2 : sh1;
    /* seeds 9..12 only weigh z, which is 0 for 2D blocks */
    int a = (s[0] * x + s[1] * y + (r >> 14)) & 63;
    int b = (s[2] * x + s[3] * y + (r >> 10)) & 63;
    int c = (s[4] * x + s[5] * y + (r >> 6)) & 63;
    int d = (s[6] * x + s[7] * y + (r >> 2)) & 63;
    if (count < 4) d = 0;
    if (count < 3) c = 0;
    if (a >= b && a >= c && a >= d) return 0;
    if (b >= c && b >= d) return 1;
    if (c >= d) return 2;
    return 3;
}

static int clamp8(int v) { return v < 0 ? 0 : v > 255 ? 255 : v; }

/* a: offset, b: base (the specification's bit_transfer_signed) */
static void bit_transfer_signed(int *a, int *b) {
    *b >>= 1;
    *b |= *a & 0x80;
    *a >>= 1;
    *a &= 0x3F;
    if (*a & 0x20) *a -= 0x40;
}

static void blue_contract(int *c) {
    c[0] = (c[0] + c[2]) >> 1;
    c[1] = (c[1] + c[2]) >> 1;
}

/* Endpoints of one partition; 0 if the mode is HDR (an error in the LDR profile). */
static int endpoints(int cem, const int *v, int e0[4], int e1[4]) {
    int a[8];
    for (int i = 0; i < 8; i++) a[i] = v[i];
    switch (cem) {
    case 0:
        e0[0] = e0[1] = e0[2] = a[0]; e0[3] = 255;
        e1[0] = e1[1] = e1[2] = a[1]; e1[3] = 255;
        break;
    case 1: {
        int l0 = (a[0] >> 2) | (a[1] & 0xC0);
        int l1 = l0 + (a[1] & 0x3F);
        if (l1 > 255) l1 = 255;
        e0[0] = e0[1] = e0[2] = l0; e0[3] = 255;
        e1[0] = e1[1] = e1[2] = l1; e1[3] = 255;
        break;
    }
    case 4:
        e0[0] = e0[1] = e0[2] = a[0]; e0[3] = a[2];
        e1[0] = e1[1] = e1[2] = a[1]; e1[3] = a[3];
        break;
    case 5:
        bit_transfer_signed(&a[1], &a[0]);
        bit_transfer_signed(&a[3], &a[2]);
        e0[0] = e0[1] = e0[2] = a[0]; e0[3] = a[2];
        e1[0] = e1[1] = e1[2] = a[0] + a[1]; e1[3] = a[2] + a[3];
        break;
    case 6:
        e1[0] = a[0]; e1[1] = a[1]; e1[2] = a[2]; e1[3] = 255;
        e0[0] = (a[0] * a[3]) >> 8; e0[1] = (a[1] * a[3]) >> 8; e0[2] = (a[2] * a[3]) >> 8; e0[3] = 255;
        break;
    case 8: case 12: {
        int al0 = cem == 12 ? a[6] : 255, al1 = cem == 12 ? a[7] : 255;
        if (a[1] + a[3] + a[5] >= a[0] + a[2] + a[4]) {
            e0[0] = a[0]; e0[1] = a[2]; e0[2] = a[4]; e0[3] = al0;
            e1[0] = a[1]; e1[1] = a[3]; e1[2] = a[5]; e1[3] = al1;
        } else {
            e0[0] = a[1]; e0[1] = a[3]; e0[2] = a[5]; e0[3] = al1;
            e1[0] = a[0]; e1[1] = a[2]; e1[2] = a[4]; e1[3] = al0;
            blue_contract(e0);
            blue_contract(e1);
        }
        break;
    }
    case 9: case 13: {
        bit_transfer_signed(&a[1], &a[0]);
        bit_transfer_signed(&a[3], &a[2]);
        bit_transfer_signed(&a[5], &a[4]);
        if (cem == 13) bit_transfer_signed(&a[7], &a[6]);
        else { a[6] = 255; a[7] = 0; }
        if (a[1] + a[3] + a[5] >= 0) {
            e0[0] = a[0]; e0[1] = a[2]; e0[2] = a[4]; e0[3] = a[6];
            e1[0] = a[0] + a[1]; e1[1] = a[2] + a[3]; e1[2] = a[4] + a[5]; e1[3] = a[6] + a[7];
        } else {
            e0[0] = a[0] + a[1]; e0[1] = a[2] + a[3]; e0[2] = a[4] + a[5]; e0[3] = a[6] + a[7];
            e1[0] = a[0]; e1[1] = a[2]; e1[2] = a[4]; e1[3] = a[6];
            blue_contract(e0);
            blue_contract(e1);
        }
        break;
    }
    case 10:
        e1[0] = a[0]; e1[1] = a[1]; e1[2] = a[2]; e1[3] = a[5];
        e0[0] = (a[0] * a[3]) >> 8; e0[1] = (a[1] * a[3]) >> 8; e0[2] = (a[2] * a[3]) >> 8; e0[3] = a[4];
        break;
    default:
        return 0;
    }
    for (int k = 0; k < 4; k++) {
        e0[k] = clamp8(e0[k]);
        e1[k] = clamp8(e1[k]);
    }
    return 1;
}

static void fill(uint8_t *t, int n, const uint8_t c[4]) {
    for (int i = 0; i < n; i++) memcpy(t + 4 * i, c, 4);
}

static const uint8_t ERROR_COLOUR[4] = {255, 0, 255, 255};

/* One ASTC block (bw x bh texels) into t (bw*bh RGBA texels, row-major).
 * Returns 1 when decoded, 0 when it is an error block (t then holds the error colour). */
static int astc_block(const uint8_t *blk, int bw, int bh, uint8_t *t) {
    u128 v = 0;
    for (int i = 15; i >= 0; i--) v = (v << 8) | blk[i];
    int n = bw * bh;
    unsigned mode = bits_of(v, 0, 11);

    if ((mode & 0x1FF) == 0x1FC) {                   /* void extent: one colour */
        if (mode & 0x200) goto error;                /* HDR void extent */
        if (bits_of(v, 10, 2) != 3) goto error;      /* reserved bits must be 1 */
        int s0 = bits_of(v, 12, 13), s1 = bits_of(v, 25, 13), t0 = bits_of(v, 38, 13), t1 = bits_of(v, 51, 13);
        int all_ones = s0 == 0x1FFF && s1 == 0x1FFF && t0 == 0x1FFF && t1 == 0x1FFF;
        if (!all_ones && (s0 >= s1 || t0 >= t1)) goto error;
        uint8_t c[4];
        for (int k = 0; k < 4; k++) c[k] = bits_of(v, 64 + 16 * k, 16) >> 8;
        fill(t, n, c);
        return 1;
    }

    int R, H, D, W, Hh;
    if (mode & 3) {
        R = ((mode >> 4) & 1) | ((mode & 3) << 1);
        H = (mode >> 9) & 1;
        D = (mode >> 10) & 1;
        int A = (mode >> 5) & 3, B;
        switch ((mode >> 2) & 3) {
        case 0: B = (mode >> 7) & 3; W = B + 4; Hh = A + 2; break;
        case 1: B = (mode >> 7) & 3; W = B + 8; Hh = A + 2; break;
        case 2: B = (mode >> 7) & 3; W = A + 2; Hh = B + 8; break;
        default:
            B = (mode >> 7) & 1;
            if (mode & 0x100) { W = B + 2; Hh = A + 2; }
            else { W = A + 2; Hh = B + 6; }
        }
    } else {
        R = ((mode >> 4) & 1) | (((mode >> 2) & 3) << 1);
        if (((mode >> 2) & 3) == 0) goto error;      /* reserved */
        H = (mode >> 9) & 1;
        D = (mode >> 10) & 1;
        int A = (mode >> 5) & 3;
        switch ((mode >> 7) & 3) {
        case 0: W = 12; Hh = A + 2; break;
        case 1: W = A + 2; Hh = 12; break;
        case 2: W = A + 6; Hh = ((mode >> 9) & 3) + 6; D = 0; H = 0; break;
        default:
            if (A == 0) { W = 6; Hh = 10; }
            else if (A == 1) { W = 10; Hh = 6; }
            else goto error;
        }
    }
    if (W > bw || Hh > bh) goto error;
    int wrange = (H ? 6 : 0) + R - 2;
    int planes = D + 1;
    int wcount = W * Hh * planes;
    if (wcount > 64) goto error;
    int wbits = ise_bits(wcount, wrange);
    if (wbits < 24 || wbits > 96) goto error;
    int parts = bits_of(v, 11, 2) + 1;
    if (parts == 4 && D) goto error;

    int cem[4], extra = 0, cpos;
    int seed = 0;
    if (parts == 1) {
        cem[0] = bits_of(v, 13, 4);
        cpos = 17;
    } else {
        seed = bits_of(v, 13, 10);
        unsigned sel = bits_of(v, 23, 2);
        if (sel == 0) {
            unsigned c = bits_of(v, 25, 4);
            for (int i = 0; i < parts; i++) cem[i] = c;
        } else {
            extra = 3 * parts - 4;
            unsigned data = bits_of(v, 25, 4) | (bits_of(v, 128 - wbits - extra, extra) << 4);
            for (int i = 0; i < parts; i++) {
                int cbit = (data >> i) & 1;
                int m = (data >> (parts + 2 * i)) & 3;
                cem[i] = (((int)sel - 1 + cbit) << 2) | m;
            }
        }
        cpos = 29;
    }
    int ccs = D ? bits_of(v, 128 - wbits - extra - 2, 2) : -1;
    int nvals = 0;
    for (int i = 0; i < parts; i++) nvals += 2 * (cem[i] >> 2) + 2;
    if (nvals > 18) goto error;
    int avail = 128 - wbits - extra - (D ? 2 : 0) - cpos;
    if (avail < (13 * nvals + 4) / 5) goto error;
    int crange = 20;
    while (crange > 4 && ise_bits(nvals, crange) > avail) crange--;

    int cb[18], cd[18], cv[18];
    ise_decode(v, cpos, nvals, crange, cb, cd);
    for (int i = 0; i < nvals; i++) cv[i] = unq_color(crange, cb[i], cd[i]);
    int e0[4][4], e1[4][4], hdr[4];
    for (int i = 0, k = 0; i < parts; i++) {
        /* An HDR endpoint mode in the LDR profile: that partition's texels get the error
         * colour (the other partitions still decode), as ARM's reference decoder does. */
        hdr[i] = !endpoints(cem[i], cv + k, e0[i], e1[i]);
        k += 2 * (cem[i] >> 2) + 2;
    }

    /* weights: read from the top of the block downwards (bit-reversed) */
    u128 rv = ((u128)__builtin_bitreverse64((uint64_t)v) << 64) | __builtin_bitreverse64((uint64_t)(v >> 64));
    int wb[64], wd[64], w[64];
    ise_decode(rv, 0, wcount, wrange, wb, wd);
    for (int i = 0; i < wcount; i++) w[i] = unq_weight(wrange, wb[i], wd[i]);

    int ds = (1024 + bw / 2) / (bw - 1), dt = (1024 + bh / 2) / (bh - 1);
    int small = n < 31;
    for (int y = 0; y < bh; y++) {
        for (int x = 0; x < bw; x++) {
            int gs = (ds * x * (W - 1) + 32) >> 6, gt = (dt * y * (Hh - 1) + 32) >> 6;
            int js = gs >> 4, fs = gs & 15, jt = gt >> 4, ft = gt & 15;
            int w11 = (fs * ft + 8) >> 4, w10 = ft - w11, w01 = fs - w11, w00 = 16 - fs - ft + w11;
            int pw[2];
            for (int p = 0; p < planes; p++) {
                int i00 = js + jt * W;
                int g00 = w[i00 * planes + p];
                int g01 = js + 1 < W ? w[(i00 + 1) * planes + p] : 0;
                int g10 = jt + 1 < Hh ? w[(i00 + W) * planes + p] : 0;
                int g11 = js + 1 < W && jt + 1 < Hh ? w[(i00 + W + 1) * planes + p] : 0;
                pw[p] = (g00 * w00 + g01 * w01 + g10 * w10 + g11 * w11 + 8) >> 4;
            }
            int part = parts > 1 ? partition_of(seed, x, y, parts, small) : 0;
            uint8_t *o = t + 4 * (y * bw + x);
            if (hdr[part]) {
                memcpy(o, ERROR_COLOUR, 4);
                continue;
            }
            for (int k = 0; k < 4; k++) {
                int wt = (D && k == ccs) ? pw[1] : pw[0];
                int c0 = e0[part][k] * 257, c1 = e1[part][k] * 257;
                int c = (c0 * (64 - wt) + c1 * wt + 32) >> 6;
                o[k] = c >> 8;
            }
        }
    }
    return 1;
error:
    fill(t, n, ERROR_COLOUR);
    return 0;
}

/* ------------------------------------------------------------------------------------------ */
/* entry points                                                                               */

enum { FMT_BC1 = 1, FMT_BC1_RGB = 2, FMT_BC2 = 3, FMT_BC3 = 4, FMT_BC4 = 5, FMT_BC5 = 6, FMT_ASTC = 7, FMT_BC7 = 8 };

/* Decode a row-major grid of blocks covering width x height texels into out (RGBA8,
 * width*height*4 bytes).  bw, bh: block size in texels (4x4 for BCn).  Returns the number of
 * ASTC error blocks (0 for BCn), or -1 for an unknown format. */
int nx_texdecode(int fmt, const uint8_t *src, int width, int height, int bw, int bh, uint8_t *out) {
    int nx = (width + bw - 1) / bw, ny = (height + bh - 1) / bh;
    int bsize = (fmt == FMT_BC1 || fmt == FMT_BC1_RGB || fmt == FMT_BC4) ? 8 : 16;
    uint8_t t[12 * 12 * 4];
    int errors = 0;
    if (fmt < FMT_BC1 || fmt > FMT_BC7 || bw < 1 || bh < 1 || bw * bh > 144) return -1;
    for (int by = 0; by < ny; by++) {
        for (int bx = 0; bx < nx; bx++) {
            const uint8_t *b = src + (size_t)(by * nx + bx) * bsize;
            switch (fmt) {
            case FMT_BC1: bc1_block(b, t, 0, 1); break;
            case FMT_BC1_RGB: bc1_block(b, t, 0, 0); break;
            case FMT_BC2:
                bc1_block(b + 8, t, 1, 0);
                for (int i = 0; i < 16; i++) {
                    int a = (b[i / 2] >> (4 * (i & 1))) & 15;
                    t[4 * i + 3] = a * 17;
                }
                break;
            case FMT_BC3:
                bc1_block(b + 8, t, 1, 0);
                bc4_block(b, t + 3, 4);
                break;
            case FMT_BC4:
                bc4_block(b, t, 4);
                for (int i = 0; i < 16; i++) { t[4 * i + 1] = t[4 * i + 2] = 0; t[4 * i + 3] = 255; }
                break;
            case FMT_BC5:
                bc4_block(b, t, 4);
                bc4_block(b + 8, t + 1, 4);
                for (int i = 0; i < 16; i++) { t[4 * i + 2] = 0; t[4 * i + 3] = 255; }
                break;
            case FMT_ASTC:
                errors += !astc_block(b, bw, bh, t);
                break;
            case FMT_BC7:
                bc7_block(b, t);
                break;
            }
            for (int y = 0; y < bh; y++) {
                int py = by * bh + y;
                if (py >= height) break;
                int px = bx * bw, cols = width - px < bw ? width - px : bw;
                memcpy(out + ((size_t)py * width + px) * 4, t + 4 * y * bw, (size_t)cols * 4);
            }
        }
    }
    return errors;
}
