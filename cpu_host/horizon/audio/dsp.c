/* Per-sample work of the audio renderer (cpu_host/horizon/audio): sample decoding, sample-rate
 * conversion, volume-ramped mixing, biquad filters and feedback delay lines.  Called through cffi
 * (ABI mode) from dsp.py; every buffer length is passed in and checked by the caller.
 *
 * Facts: DSP-ADPCM ("GC-ADPCM", used by the GameCube/Wii/Switch): 8-byte frames, a header byte
 * (high nibble = coefficient-pair index, low nibble = log2 scale) then 14 signed 4-bit samples,
 * each  s = ((n * scale) << 11) + 1024 + c1*hist1 + c2*hist2, s >>= 11, clamped to 16 bits.
 * The renderer's biquads are Q14 fixed-point coefficients with a0 = 1 (Ryujinx/yuzu renderer
 * descriptions); here they arrive already converted to floats. */
#include <stdint.h>
#include <math.h>

static inline int16_t clamp16(int32_t v) { return v > 32767 ? 32767 : v < -32768 ? -32768 : (int16_t)v; }

/* Decode `count` samples starting at sample `first` of the ADPCM stream `src` (`src_len` bytes).
 * hist[0] = hist1, hist[1] = hist2 in/out: the history just before sample `first` (a caller
 * that resumes mid-frame passes the history it got back).  Returns samples written (stops at
 * the end of src). */
int nx_adpcm_decode(const uint8_t *src, int64_t src_len, int64_t first, int count,
                    const int16_t *coefs, int32_t *hist, float *out)
{
    int32_t h1 = hist[0], h2 = hist[1];
    int64_t frame = first / 14;
    int skip = (int)(first % 14), written = 0;
    while (written < count) {
        int64_t off = frame * 8;
        if (off + 1 > src_len) break;
        uint8_t ps = src[off];
        int32_t scale = 1 << (ps & 0xF);
        int ci = (ps >> 4) & 7;
        int32_t c1 = coefs[ci * 2], c2 = coefs[ci * 2 + 1];
        for (int i = skip; i < 14 && written < count; i++) {
            int64_t b = off + 1 + i / 2;
            if (b >= src_len) goto done;
            int n = (i & 1) ? (src[b] & 0xF) : (src[b] >> 4);
            if (n >= 8) n -= 16;
            /* 64-bit: two s16 x s16 products and the scaled nibble can pass 2^31 */
            int64_t s = ((int64_t)n * scale) * 2048 + 1024 + (int64_t)c1 * h1 + (int64_t)c2 * h2;
            s >>= 11;
            s = s > 32767 ? 32767 : s < -32768 ? -32768 : s;
            h2 = h1; h1 = (int32_t)s;
            out[written++] = (float)s;
        }
        skip = 0;
        frame++;
    }
done:
    hist[0] = h1; hist[1] = h2;
    return written;
}

/* Linear-interpolating sample-rate conversion: out[i] = h[k] + (h[k+1]-h[k]) * f at position
 * p_i = frac + i * ratio (k = floor(p_i), f = p_i - k), frac >= 0; the caller sizes h
 * (floor(frac + (n-1)*ratio) + 2) and keeps its unconsumed tail (dsp.resample_span). */
void nx_resample_linear(const float *h, int64_t h_len, double frac, double ratio, int n, float *out)
{
    for (int i = 0; i < n; i++) {
        double p = frac + (double)i * ratio;
        int64_t k = (int64_t)p;
        double f = p - (double)k;
        float a = k < h_len ? h[k] : 0.0f, b = k + 1 < h_len ? h[k + 1] : 0.0f;
        out[i] = (float)(a + (b - a) * f);
    }
}

/* dst[i] += src[i] * (v0 + (v1 - v0) * i / n): a volume ramp across one frame. */
void nx_mix_ramp(float *dst, const float *src, int n, float v0, float v1)
{
    float step = (v1 - v0) / (float)n;
    if (step == 0.0f) {
        for (int i = 0; i < n; i++) dst[i] += src[i] * v0;
        return;
    }
    for (int i = 0; i < n; i++) dst[i] += src[i] * (v0 + step * (float)i);
}

/* In place, y = b0 x + b1 x1 + b2 x2 - a1 y1 - a2 y2 (transposed direct form II, state s[2]). */
void nx_biquad(float *buf, int n, const float *b, const float *a, float *s)
{
    float s0 = s[0], s1 = s[1];
    for (int i = 0; i < n; i++) {
        float x = buf[i], y = b[0] * x + s0;
        s0 = b[1] * x - a[0] * y + s1;
        s1 = b[2] * x - a[1] * y;
        buf[i] = y;
    }
    s[0] = s0; s[1] = s1;
}

/* Feedback delay line (comb): line of `len` samples, write position *pos.
 *   d = line[pos];  line[pos] = in_gain * x + feedback * d;  y = dry * x + out_gain * d. */
void nx_delay(float *buf, int n, float *line, int len, int *pos,
              float in_gain, float feedback, float out_gain, float dry)
{
    int p = *pos;
    for (int i = 0; i < n; i++) {
        float x = buf[i], d = line[p];
        line[p] = in_gain * x + feedback * d;
        buf[i] = dry * x + out_gain * d;
        if (++p >= len) p = 0;
    }
    *pos = p;
}

/* Schroeder all-pass section: v = x + g * line[pos]; y = line[pos] - g * v; line[pos] = v. */
void nx_allpass(float *buf, int n, float *line, int len, int *pos, float g)
{
    int p = *pos;
    for (int i = 0; i < n; i++) {
        float d = line[p], v = buf[i] + g * d;
        buf[i] = d - g * v;
        line[p] = v;
        if (++p >= len) p = 0;
    }
    *pos = p;
}

/* Float mix buffers to interleaved PCM16 with saturation: out[i*ch + c] = clamp(src[c][i]). */
void nx_to_pcm16(const float *const *src, int channels, int n, int16_t *out)
{
    for (int i = 0; i < n; i++)
        for (int c = 0; c < channels; c++) {
            float v = src[c][i];
            out[i * channels + c] = clamp16((int32_t)lrintf(v > 40000.f ? 40000.f : v < -40000.f ? -40000.f : v));
        }
}

/* One voice channel's whole frame, fused so the renderer makes one call per channel:
 * resample (as nx_resample_linear) -> up to two biquads (coefs b0 b1 b2 a1 a2 each, state 2
 * each) -> voice volume ramp v0..v1 -> for each of `ndst` destinations, a mix-volume ramp
 * mv0[d]..mv1[d] into mix buffer row dst_rows[d] of `mix` (rows of n floats).  tmp: n floats. */
void nx_voice_channel(const float *h, int64_t h_len, double frac, double ratio, int n,
                      int nbq, const float *bq, float *bq_state, float v0, float v1,
                      float *mix, int ndst, const int *dst_rows, const float *mv0, const float *mv1,
                      float *tmp)
{
    nx_resample_linear(h, h_len, frac, ratio, n, tmp);
    for (int b = 0; b < nbq; b++)
        nx_biquad(tmp, n, bq + 5 * b, bq + 5 * b + 3, bq_state + 2 * b);
    float step = (v1 - v0) / (float)n;
    for (int i = 0; i < n; i++) tmp[i] *= v0 + step * (float)i;
    for (int d = 0; d < ndst; d++)
        if (mv0[d] != 0.0f || mv1[d] != 0.0f)
            nx_mix_ramp(mix + (int64_t)dst_rows[d] * n, tmp, n, mv0[d], mv1[d]);
}
