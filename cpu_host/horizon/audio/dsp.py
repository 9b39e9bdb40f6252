"""The renderer's per-sample kernels (``dsp.c``) behind numpy-typed functions.

``dsp.c`` is compiled once with the ``ziglang`` wheel's clang into
``<nxrecomp.cache_dir>/audio/dsp-<hash>.so`` (content-hashed, written to a temporary name and
renamed, so two processes never load a half-written library) and called through cffi in ABI
mode, as ``gpu_host/texdecode.py`` does.  Every wrapper checks its array types and lengths
before the C call: the C side trusts them.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from nxrecomp.common import clib

HERE = Path(__file__).resolve().parent
SOURCE = HERE / "dsp.c"
FLAGS = ["-O2", *clib.SHARED_FLAGS, "-Wall", "-lm"]
CDEF = """
int nx_adpcm_decode(const uint8_t *src, int64_t src_len, int64_t first, int count,
                    const int16_t *coefs, int32_t *hist, float *out);
void nx_resample_linear(const float *h, int64_t h_len, double frac, double ratio, int n, float *out);
void nx_mix_ramp(float *dst, const float *src, int n, float v0, float v1);
void nx_biquad(float *buf, int n, const float *b, const float *a, float *s);
void nx_delay(float *buf, int n, float *line, int len, int *pos, float in_gain, float feedback,
              float out_gain, float dry);
void nx_allpass(float *buf, int n, float *line, int len, int *pos, float g);
void nx_to_pcm16(const float *const *src, int channels, int n, int16_t *out);
void nx_voice_channel(const float *h, int64_t h_len, double frac, double ratio, int n,
                      int nbq, const float *bq, float *bq_state, float v0, float v1,
                      float *mix, int ndst, const int *dst_rows, const float *mv0, const float *mv1,
                      float *tmp);
"""


def _build() -> Path:
    return clib.build_shared("dsp", [SOURCE], FLAGS, "audio")


lib = clib.Loaded(CDEF, _build)  # () -> (ffi, lib), built at the first call


def _f32(a: np.ndarray, what: str) -> np.ndarray:
    if a.dtype != np.float32 or not a.flags.c_contiguous:
        raise TypeError(f"{what}: want a contiguous float32 array, got {a.dtype}")
    return a


def _ptr(ffi, kind: str, a: np.ndarray):
    # a typed from_buffer: one call, several times cheaper than a.ctypes.data
    return ffi.from_buffer(kind[:-1].strip() + "[]", a, require_writable=False)


def ptr(kind: str, a: np.ndarray):
    """A cffi pointer into ``a`` (kept alive by the caller) for the hot path's cached arguments."""
    return _ptr(lib()[0], kind, a)


def adpcm_decode(data: bytes | np.ndarray, first: int, count: int, coefs: np.ndarray, hist: np.ndarray) -> np.ndarray:
    """``count`` samples of DSP-ADPCM ``data`` from sample ``first`` (fewer at the data's end);
    ``hist`` (int32[2]: hist1, hist2) is updated in place."""
    ffi, L = lib()
    src = np.frombuffer(data, np.uint8) if not isinstance(data, np.ndarray) else data.view(np.uint8)
    co = np.ascontiguousarray(coefs, np.int16)
    if co.size != 16 or hist.dtype != np.int32 or hist.size != 2:
        raise ValueError("ADPCM: want 16 int16 coefficients and an int32[2] history")
    out = np.empty(max(count, 0), np.float32)
    n = L.nx_adpcm_decode(
        ffi.from_buffer("uint8_t[]", src),
        src.size,
        first,
        max(count, 0),
        _ptr(ffi, "int16_t *", co),
        _ptr(ffi, "int32_t *", hist),
        _ptr(ffi, "float *", out),
    )
    return out[:n]


def resample_span(frac: float, ratio: float, n: int) -> tuple[int, int]:
    """(length of h that ``resample_linear`` reads for ``n`` outputs from position ``frac``, samples
    it consumes): the caller keeps h[consumed:] for the next call, whose frac is
    frac + n * ratio - consumed (in [0, 1))."""
    used = int(frac + n * ratio)
    return max(int(frac + (n - 1) * ratio) + 2, used), used


def resample_linear(h: np.ndarray, frac: float, ratio: float, n: int) -> np.ndarray:
    ffi, L = lib()
    _f32(h, "resample history")
    out = np.empty(n, np.float32)
    L.nx_resample_linear(_ptr(ffi, "float *", h), h.size, frac, ratio, n, _ptr(ffi, "float *", out))
    return out


def mix_ramp(dst: np.ndarray, src: np.ndarray, v0: float, v1: float) -> None:
    ffi, L = lib()
    _f32(dst, "mix destination"), _f32(src, "mix source")
    if src.size < dst.size:
        raise ValueError(f"mix: source has {src.size} samples, destination {dst.size}")
    L.nx_mix_ramp(_ptr(ffi, "float *", dst), _ptr(ffi, "float *", src), dst.size, v0, v1)


def biquad(buf: np.ndarray, b: np.ndarray, a: np.ndarray, state: np.ndarray) -> None:
    """In place: b = (b0, b1, b2), a = (a1, a2) with a0 = 1; state float32[2]."""
    ffi, L = lib()
    _f32(buf, "biquad buffer"), _f32(b, "biquad b"), _f32(a, "biquad a"), _f32(state, "biquad state")
    L.nx_biquad(
        _ptr(ffi, "float *", buf), buf.size, _ptr(ffi, "float *", b), _ptr(ffi, "float *", a), _ptr(ffi, "float *", state)
    )


def delay(
    buf: np.ndarray, line: np.ndarray, pos: np.ndarray, in_gain: float, feedback: float, out_gain: float, dry: float
) -> None:
    ffi, L = lib()
    _f32(buf, "delay buffer"), _f32(line, "delay line")
    L.nx_delay(
        _ptr(ffi, "float *", buf),
        buf.size,
        _ptr(ffi, "float *", line),
        line.size,
        _ptr(ffi, "int *", pos),
        in_gain,
        feedback,
        out_gain,
        dry,
    )


def allpass(buf: np.ndarray, line: np.ndarray, pos: np.ndarray, g: float) -> None:
    ffi, L = lib()
    _f32(buf, "allpass buffer"), _f32(line, "allpass line")
    L.nx_allpass(_ptr(ffi, "float *", buf), buf.size, _ptr(ffi, "float *", line), line.size, _ptr(ffi, "int *", pos), g)


def to_pcm16(channels: list[np.ndarray]) -> np.ndarray:
    """Interleaved int16 (frames x channels) from equal-length float32 channel buffers."""
    ffi, L = lib()
    n = channels[0].size if channels else 0
    out = np.empty((n, len(channels)), np.int16)
    if not channels:
        return out
    for c in channels:
        _f32(c, "output channel")
        if c.size != n:
            raise ValueError("output channels differ in length")
    ptrs = ffi.new("float *[]", [_ptr(ffi, "float *", c) for c in channels])
    L.nx_to_pcm16(ptrs, len(channels), n, _ptr(ffi, "int16_t *", out))
    return out


def voice_channel(
    h: np.ndarray,
    frac: float,
    ratio: float,
    n: int,
    biquads: np.ndarray,
    bq_state: np.ndarray,
    v0: float,
    v1: float,
    mix: np.ndarray,
    rows: np.ndarray,
    mv0: np.ndarray,
    mv1: np.ndarray,
    tmp: np.ndarray,
) -> None:
    """One voice channel's frame into ``mix`` (buffers x n): resample, ``biquads`` (k x 5:
    b0 b1 b2 a1 a2, state k x 2), volume ramp, mix-volume ramps into ``rows``."""
    ffi, L = lib()
    for a, what in (
        (h, "history"),
        (biquads, "biquads"),
        (bq_state, "biquad state"),
        (mix, "mix"),
        (mv0, "mix volumes"),
        (mv1, "mix volumes"),
        (tmp, "scratch"),
    ):
        _f32(a, what)
    k = biquads.shape[0]
    if (
        mix.ndim != 2
        or mix.shape[1] != n
        or tmp.size < n
        or rows.dtype != np.int32
        or bq_state.size < 2 * k
        or not (mv0.size == mv1.size == rows.size)
        or (rows.size and (rows.min() < 0 or rows.max() >= mix.shape[0]))
        or h.size < int(frac + (n - 1) * ratio) + 2
    ):
        raise ValueError("voice_channel: inconsistent buffer sizes")
    L.nx_voice_channel(
        _ptr(ffi, "float *", h),
        h.size,
        frac,
        ratio,
        n,
        k,
        _ptr(ffi, "float *", biquads),
        _ptr(ffi, "float *", bq_state),
        v0,
        v1,
        _ptr(ffi, "float *", mix),
        rows.size,
        _ptr(ffi, "int *", rows),
        _ptr(ffi, "float *", mv0),
        _ptr(ffi, "float *", mv1),
        _ptr(ffi, "float *", tmp),
    )
