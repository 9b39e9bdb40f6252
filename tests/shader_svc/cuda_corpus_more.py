"""More kernels of the issue-31 corpus (``cuda_corpus.py`` holds the harness and the first 42):
the styles real code uses — integer and 64-bit integer expressions, float and double arithmetic
and conversions, atomics of every operation, warp intrinsics (segments of 8/16 lanes, scans,
votes), block scans and reductions, sorts, stencils and matrix products, divergent loops,
switch jump tables, recursion and non-inlined calls, half precision.

Each kernel comes with its numpy reference; ``define(case)`` registers them with the harness's
``case`` (each group is compiled in one nvcc/ptxas run).  Float references are exact: numpy's
float32/float64 operations are IEEE-correctly rounded, fused multiply-adds and conversions with
a directed rounding are computed on exact fractions.  Where ptxas builds an operation from an
approximate unit (MUFU.RCP/RSQ + Newton steps: __frcp_rn, __fdiv_rn, __fsqrt_rn and their
double forms), the bound is ``ulps=1`` (the hardware's sequence is correctly rounded; our MUFU
is IEEE division/sqrt followed by the same fix-up steps, see README).
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np

BLOCK = 64


def _u32(r, n, lo=0, hi=2**32):
    return r.integers(lo, hi, n, dtype=np.uint64).astype(np.uint32)


def define(case, Inputs) -> None:  # noqa: C901  (one table of kernels)
    def elem(n_words=200, out_mul=1, a_fn=None, b_fn=None):
        def make(r):
            a = a_fn(r) if a_fn else _u32(r, n_words)
            b = b_fn(r) if b_fn else _u32(r, n_words)
            n = len(a)
            return Inputs(a, b, n, n, np.zeros(n * out_mul, np.uint32))

        return make

    # --- 32-bit integer expressions ------------------------------------------------------------
    def popc(v):
        return np.array([bin(int(t)).count("1") for t in v], np.uint32)

    def clz(v):
        return np.array([32 - int(t).bit_length() for t in v], np.uint32)

    def ffs(v):
        return np.array([(int(t) & -int(t)).bit_length() for t in v], np.uint32)

    def brev(v):
        return np.array([int(f"{int(t):032b}"[::-1], 2) for t in v], np.uint32)

    s32 = lambda v: v.view(np.int32).astype(np.int64)  # noqa: E731
    w32 = lambda v: (np.asarray(v, np.int64) % 2**32).astype(np.uint32)  # noqa: E731

    def sdiv(p, q):
        return np.trunc(p.astype(np.float64) / q).astype(np.int64)

    def funnel_l(x, y, s):
        both = (y.astype(np.uint64) << np.uint64(32)) | x.astype(np.uint64)
        return ((both << (s & 31).astype(np.uint64)) >> np.uint64(32)).astype(np.uint64).astype(np.uint32)

    def funnel_rc(x, y, s):
        both = (y.astype(np.uint64) << np.uint64(32)) | x.astype(np.uint64)
        return (both >> np.minimum(s, 32).astype(np.uint64)).astype(np.uint64).astype(np.uint32)

    ints = {
        "mul24": ("__umul24(x, y)", lambda x, y: w32((x & 0xFFFFFF).astype(np.int64) * (y & 0xFFFFFF))),
        "mulhi_s": ("(uint32_t)__mulhi((int)x, (int)y)", lambda x, y: w32((s32(x) * s32(y)) >> 32)),
        "usad": ("__usad(x, y, x >> 7)", lambda x, y: w32(np.abs(x.astype(np.int64) - y) + (x >> 7))),
        "funnel_l": ("__funnelshift_l(x, y, y)", lambda x, y: funnel_l(x, y, y)),
        "funnel_rc": ("__funnelshift_rc(x, y, y & 63)", lambda x, y: funnel_rc(x, y, y & 63)),
        "ffs": ("__ffs(x) + 64u * __ffs(y & 0xff00)", lambda x, y: ffs(x) + 64 * ffs(y & 0xFF00)),
        "clz_x": ("__clz((int)(x >> (y & 31)))", lambda x, y: clz(x >> (y & 31))),
        "popc_ao": ("__popc(x & y) * 3u + __popc(x | y)", lambda x, y: popc(x & y) * 3 + popc(x | y)),
        "uhadd": ("__uhadd(x, y)", lambda x, y: w32((x.astype(np.int64) + y) >> 1)),
        "urhadd": ("__urhadd(x, y)", lambda x, y: w32((x.astype(np.int64) + y + 1) >> 1)),
        "shr_var": ("x >> (y & 31)", lambda x, y: x >> (y & 31)),
        "sar_var": ("(uint32_t)((int)x >> (y & 31))", lambda x, y: w32(s32(x) >> (y & 31))),
        "shl_var": ("x << (y & 31)", lambda x, y: x << (y & 31)),
        "abs": ("(uint32_t)abs((int)x)", lambda x, y: w32(np.abs(s32(x)))),
        "minmax_s": (
            "(uint32_t)(min((int)x, (int)y) ^ max((int)x, (int)(y >> 1)))",
            lambda x, y: w32(np.minimum(s32(x), s32(y)) ^ np.maximum(s32(x), s32(y >> 1))),
        ),
        "div_const": ("x / 7u + x % 13u", lambda x, y: x // 7 + x % 13),
        "sdiv_const": ("(uint32_t)((int)x / -9 + (int)y % 11)", lambda x, y: w32(sdiv(s32(x), -9) + np.fmod(s32(y), 11))),
        "bfe": (
            "(x >> (y & 15)) & ((1u << ((y >> 8) & 15)) - 1u)",
            lambda x, y: (x >> (y & 15)) & ((np.uint32(1) << ((y >> 8) & 15)) - np.uint32(1)),
        ),
        "bswap": ("__byte_perm(x, 0, 0x0123)", lambda x, y: x.byteswap()),
        "cmp_chain": (
            "(uint32_t)(x < y) + (uint32_t)(x == (y & 0xffff0000u)) * 2u + (uint32_t)((int)x < (int)y) * 4u",
            lambda x, y: (x < y) + (x == (y & 0xFFFF0000)) * 2 + (s32(x) < s32(y)) * 4,
        ),
        "sel3": (
            "x > 1000000000u ? x * 3u : (y < 2000000000u ? y : x ^ y)",
            lambda x, y: np.where(x > 1000000000, x * np.uint32(3), np.where(y < 2000000000, y, x ^ y)),
        ),
        "sub_borrow": ("x - y - (uint32_t)(x < y)", lambda x, y: x - y - (x < y).astype(np.uint32)),
        "add_sat_s": (
            "(uint32_t)(int)max(min((long long)(int)x + (int)y, 2147483647LL), -2147483648LL)",
            lambda x, y: w32(np.clip(s32(x) + s32(y), -(2**31), 2**31 - 1)),
        ),
        "brev_sh": ("__brev(x) >> (y & 7)", lambda x, y: brev(x) >> (y & 7)),
        "lop3": ("(x & y) ^ (~x | (y >> 3))", lambda x, y: (x & y) ^ (~x | (y >> 3))),
        "mul_wide": ("(uint32_t)(((uint64_t)x * y) >> 16)", lambda x, y: w32((x.astype(np.uint64) * y) >> np.uint64(16))),
        "rotr": ("(x >> (y & 31)) | (x << ((32 - (y & 31)) & 31))", lambda x, y: (x >> (y & 31)) | (x << ((32 - (y & 31)) & 31))),
        "umin3": ("min(min(x, y), x ^ y)", lambda x, y: np.minimum(np.minimum(x, y), x ^ y)),
        "mulsub": ("x * 2654435761u - y * 40503u", lambda x, y: x * np.uint32(2654435761) - y * np.uint32(40503)),
        "isqrt_loop": (
            "({ uint32_t r = 0, v = x >> 12; while ((r + 1) * (r + 1) <= v) r++; r; })",
            lambda x, y: np.array([int(np.sqrt(float(int(v) >> 12))) if True else 0 for v in x], np.uint32),
        ),
    }
    for name, (expr, fn) in ints.items():

        def ref(x, fn=fn):
            with np.errstate(all="ignore"):
                return np.asarray(fn(x.a[: x.n], x.b[: x.n]), np.uint32)

        a_fn = (lambda r: _u32(r, 64, 0, 2**26)) if name == "isqrt_loop" else None
        case(
            name=f"int_{name}",
            style="integer",
            group="int",
            src=f"""
K(int_{name}) {{ int i = TID; if (i < n) {{ uint32_t x = a[i], y = b[i]; o[i] = {expr}; }} }}""",
            inputs=elem(a_fn=a_fn, b_fn=(lambda r: _u32(r, 64)) if a_fn else None),
            ref=ref,
        )

    # --- 64-bit integer expressions ------------------------------------------------------------
    def u64in(r):
        return _u32(r, 256)

    def i64(fn, out=1):
        def ref(x):
            A, B = x.a.view(np.uint64)[: x.n], x.b.view(np.uint64)[: x.n]
            with np.errstate(all="ignore"):
                return np.asarray(fn(A, B), np.uint64).view(np.uint32)

        return ref

    sx = lambda v: v.view(np.int64)  # noqa: E731
    M64 = 2**64

    def mulhi64(A, B, signed):
        out = []
        for p, q in zip(A, B):
            p, q = int(p), int(q)
            if signed:
                p, q = p - M64 * (p >> 63), q - M64 * (q >> 63)
            out.append(((p * q) >> 64) % M64)
        return np.array(out, np.uint64)

    def sdiv64(A, B):
        out = []
        for p, q in zip(A, B):
            n, d = int(p) - M64 * (int(p) >> 63), int(q | np.uint64(1)) - M64 * (int(q | np.uint64(1)) >> 63)
            out.append((abs(n) // abs(d)) * (1 if (n >= 0) == (d >= 0) else -1) % M64)
        return np.array(out, np.uint64)

    def bits64(v, f):
        return np.array([f(int(t)) for t in v], np.uint64)

    ops64 = {
        "add": ("x + y", lambda A, B: A + B),
        "sub": ("x - y * 3", lambda A, B: A - B * np.uint64(3)),
        "mul": ("x * y", lambda A, B: A * B),
        "mulhi": ("__umul64hi(x, y)", lambda A, B: mulhi64(A, B, False)),
        "mulhi_s": ("(uint64_t)__mul64hi((long long)x, (long long)y)", lambda A, B: mulhi64(A, B, True)),
        "sdiv": ("(uint64_t)((long long)x / ((long long)y | 1))", sdiv64),
        "urem": ("x % (y | 1)", lambda A, B: A % (B | np.uint64(1))),
        "udiv_small": ("x / ((y & 0xffff) | 1)", lambda A, B: A // ((B & np.uint64(0xFFFF)) | np.uint64(1))),
        "shl": ("x << (y & 63)", lambda A, B: A << (B & np.uint64(63))),
        "shr": ("x >> (y & 63)", lambda A, B: A >> (B & np.uint64(63))),
        "sar": (
            "(uint64_t)((long long)x >> (y & 63))",
            lambda A, B: (sx(A) >> (B & np.uint64(63)).astype(np.int64)).view(np.uint64),
        ),
        "popc_clz": (
            "(uint64_t)(__popcll(x) + 100 * __clzll(y >> (x & 63)))",
            lambda A, B: (
                bits64(A, lambda t: bin(t).count("1"))
                + np.uint64(100) * np.array([64 - int(q >> (p & 63)).bit_length() for p, q in zip(A, B)], np.uint64)
            ),
        ),
        "ffs": (
            "(uint64_t)__ffsll((long long)(x & (y << 7)))",
            lambda A, B: bits64(A & (B << np.uint64(7)), lambda t: (t & -t).bit_length()),
        ),
        "cmp": (
            "(uint64_t)((x < y) | ((long long)x < (long long)y) << 1 | (x == (y | 1)) << 2)",
            lambda A, B: (
                (A < B).astype(np.uint64)
                | (sx(A) < sx(B)).astype(np.uint64) << np.uint64(1)
                | (A == (B | np.uint64(1))).astype(np.uint64) << np.uint64(2)
            ),
        ),
        "minmax": (
            "min(x, y) ^ (uint64_t)max((long long)x, (long long)y)",
            lambda A, B: np.minimum(A, B) ^ np.maximum(sx(A), sx(B)).view(np.uint64),
        ),
        "brev": ("__brevll(x)", lambda A, B: bits64(A, lambda t: int(f"{t:064b}"[::-1], 2))),
        "rotl": (
            "(x << (y & 63)) | (x >> ((64 - (y & 63)) & 63))",
            lambda A, B: (A << (B & np.uint64(63))) | (A >> ((np.uint64(64) - (B & np.uint64(63))) & np.uint64(63))),
        ),
        "mad_hilo": (
            "x * 6364136223846793005ull + (y >> 11)",
            lambda A, B: A * np.uint64(6364136223846793005) + (B >> np.uint64(11)),
        ),
    }
    for name, (expr, fn) in ops64.items():
        case(
            name=f"i64_{name}",
            style="int64",
            group="int64",
            src=f"""
K(i64_{name}) {{
  int i = TID;
  if (i < n) {{ uint64_t x = ((const uint64_t *)a)[i], y = ((const uint64_t *)b)[i]; ((uint64_t *)o)[i] = {expr}; }}
}}""",
            inputs=lambda r: Inputs(u64in(r), u64in(r), 128, 128, np.zeros(256, np.uint32)),
            ref=i64(fn),
        )

    # --- float arithmetic and conversions (exact references) -----------------------------------
    def fin(r, n=256, scale=100.0):
        v = (r.standard_normal(n) * scale).astype(np.float32)
        v[::7] = np.round(v[::7] * 2) / 2  # halfway cases for the rounding modes
        v[3::11] = -v[3::11]
        return v.view(np.uint32)

    def f32(fn, kind="f32"):
        def ref(x):
            X, Y = x.a.view(np.float32)[: x.n], x.b.view(np.float32)[: x.n]
            with np.errstate(all="ignore"):
                return (
                    np.asarray(fn(X, Y)).view(np.uint32)
                    if kind != "u32"
                    else np.asarray(fn(X, Y)).astype(np.int64).astype(np.uint32)
                )

        return ref

    def round32(vals, mode):
        """Exact rational values to f32 with a directed rounding (rz/rd/ru), for conversions."""
        out = []
        for v in vals:
            f = np.float32(float(v))
            fv = Fraction(float(f))
            if mode == "rz" and abs(fv) > abs(v):
                f = np.nextafter(f, np.float32(0))
            elif mode == "rd" and fv > v:
                f = np.nextafter(f, np.float32(-np.inf))
            elif mode == "ru" and fv < v:
                f = np.nextafter(f, np.float32(np.inf))
            out.append(f)
        return np.array(out, np.float32)

    def exact_fma32(X, Y, Z):
        out = []
        for p, q, s in zip(X, Y, Z):
            v = Fraction(float(p)) * Fraction(float(q)) + Fraction(float(s))
            f = np.float32(float(v))  # nearest f64 then f32: fix the double rounding
            lo, hi = np.nextafter(f, np.float32(-np.inf)), np.nextafter(f, np.float32(np.inf))
            best = min((f, lo, hi), key=lambda c: (abs(Fraction(float(c)) - v), int(np.float32(c).view(np.uint32)) & 1))
            out.append(best)
        return np.array(out, np.float32)

    flt = {
        "add": ("__fadd_rn(x, y)", lambda X, Y: X + Y),
        "sub": ("__fsub_rn(x, y)", lambda X, Y: X - Y),
        "mul": ("__fmul_rn(x, y)", lambda X, Y: X * Y),
        "fma": ("__fmaf_rn(x, y, -x)", lambda X, Y: exact_fma32(X, Y, -X)),
        "minmax": (
            "__fadd_rn(fminf(x, y), __fmul_rn(fmaxf(x, -y), 0.5f))",
            lambda X, Y: np.minimum(X, Y) + np.maximum(X, -Y) * np.float32(0.5),
        ),
        "abs": ("__fsub_rn(fabsf(x), -fabsf(y))", lambda X, Y: np.abs(X) + np.abs(Y)),
        "floor": ("floorf(x)", lambda X, Y: np.floor(X)),
        "ceil": ("ceilf(x)", lambda X, Y: np.ceil(X)),
        "trunc": ("truncf(x)", lambda X, Y: np.trunc(X)),
        "rint": ("rintf(x)", lambda X, Y: np.rint(X)),
        "sel": ("x > y ? x : __fmul_rn(y, 2.0f)", lambda X, Y: np.where(X > Y, X, Y * np.float32(2))),
        "sat": ("__saturatef(__fmul_rn(x, 0.01f))", lambda X, Y: np.clip(X * np.float32(0.01), 0, 1)),
        "i2f_rz": (
            "__int2float_rz((int)__float_as_uint(y))",
            lambda X, Y: round32([Fraction(int(v)) for v in Y.view(np.int32)], "rz"),
        ),
        "u2f_ru": (
            "__uint2float_ru(__float_as_uint(y))",
            lambda X, Y: round32([Fraction(int(v)) for v in Y.view(np.uint32)], "ru"),
        ),
        "i2f_rd": (
            "__int2float_rd((int)__float_as_uint(x))",
            lambda X, Y: round32([Fraction(int(v)) for v in X.view(np.int32)], "rd"),
        ),
        "d2f_rn": ("__double2float_rn((double)x * (double)y)", lambda X, Y: (X.astype(np.float64) * Y).astype(np.float32)),
        "rcp": ("__frcp_rn(x)", lambda X, Y: np.float32(1) / X),
        "div": ("__fdiv_rn(x, y)", lambda X, Y: X / Y),
        "sqrt": ("__fsqrt_rn(fabsf(x))", lambda X, Y: np.sqrt(np.abs(X))),
    }
    for name, (expr, fn) in flt.items():
        ulps = 1 if name in ("rcp", "div", "sqrt") else 0
        case(
            name=f"flt_{name}",
            style="float",
            group="float",
            src=f"""
K(flt_{name}) {{
  int i = TID;
  if (i < n) {{ float x = __uint_as_float(a[i]), y = __uint_as_float(b[i]); o[i] = __float_as_uint({expr}); }}
}}""",
            inputs=lambda r: Inputs(fin(r), fin(r, scale=1e6), 200, 200, np.zeros(200, np.uint32)),
            ref=f32(fn),
            kind="f32",
            ulps=ulps,
        )
    f2i = {
        "f2i_rn": ("(uint32_t)__float2int_rn(x)", np.rint),
        "f2i_rd": ("(uint32_t)__float2int_rd(x)", np.floor),
        "f2i_ru": ("(uint32_t)__float2int_ru(x)", np.ceil),
        "f2i_rz": ("(uint32_t)__float2int_rz(x)", np.trunc),
        "f2u_rn": ("__float2uint_rn(fabsf(x))", lambda v: np.rint(np.abs(v))),
        "f2ll_rd": (
            "(uint32_t)(__float2ll_rd(__fmul_rn(x, 1e6f)) >> 8)",
            lambda v: np.floor((v * np.float32(1e6)).astype(np.float64)).astype(np.int64) >> 8,
        ),
        "fcmp": ("(uint32_t)(x < y) | (uint32_t)(x == rintf(x)) << 1 | (uint32_t)(x >= -y) << 2", None),
    }
    for name, (expr, fn) in f2i.items():
        if fn is None:

            def ref(x):
                X, Y = x.a.view(np.float32)[: x.n], x.b.view(np.float32)[: x.n]
                return (X < Y).astype(np.uint32) | (X == np.rint(X)).astype(np.uint32) << 1 | (X >= -Y).astype(np.uint32) << 2
        else:

            def ref(x, fn=fn):
                X = x.a.view(np.float32)[: x.n]
                return np.asarray(fn(X)).astype(np.int64).astype(np.uint32)

        case(
            name=f"cvt_{name}",
            style="float",
            group="float",
            src=f"""
K(cvt_{name}) {{
  int i = TID;
  if (i < n) {{ float x = __uint_as_float(a[i]), y = __uint_as_float(b[i]); o[i] = {expr}; }}
}}""",
            inputs=lambda r: Inputs(fin(r), fin(r), 200, 200, np.zeros(200, np.uint32)),
            ref=ref,
        )

    # --- double arithmetic and conversions -----------------------------------------------------
    def din(r, n=128, scale=1e3):
        v = r.standard_normal(n) * scale
        v[::5] = np.round(v[::5] * 2) / 2
        return v.view(np.uint32)

    def exact_fma64(X, Y, Z):
        out = []
        for p, q, s in zip(X, Y, Z):
            v = Fraction(float(p)) * Fraction(float(q)) + Fraction(float(s))
            out.append(float(v))  # Fraction -> float rounds to nearest even exactly
        return np.array(out)

    def d64(fn):
        def ref(x):
            X, Y = x.a.view(np.float64)[: x.n], x.b.view(np.float64)[: x.n]
            with np.errstate(all="ignore"):
                return np.asarray(fn(X, Y), np.float64).view(np.uint32)

        return ref

    dbl = {
        "add": ("__dadd_rn(x, y)", lambda X, Y: X + Y),
        "mul": ("__dmul_rn(x, y)", lambda X, Y: X * Y),
        "fma": ("__fma_rn(x, y, -x)", lambda X, Y: exact_fma64(X, Y, -X)),
        "minmax": ("__dadd_rn(fmin(x, y), fmax(x, -y))", lambda X, Y: np.minimum(X, Y) + np.maximum(X, -Y)),
        "abs": ("__dadd_rn(fabs(x), fabs(y))", lambda X, Y: np.abs(X) + np.abs(Y)),
        "floor": ("floor(x)", lambda X, Y: np.floor(X)),
        "ceil": ("ceil(y)", lambda X, Y: np.ceil(Y)),
        "trunc": ("trunc(x)", lambda X, Y: np.trunc(X)),
        "rint": ("rint(x)", lambda X, Y: np.rint(X)),
        "i2d": (
            "(double)(int)__double2hiint(y) + (double)(unsigned)__double2loint(x)",
            lambda X, Y: Y.view(np.uint32)[1::2].view(np.int32).astype(np.float64) + X.view(np.uint32)[0::2].astype(np.float64),
        ),
        "f2d": ("(double)__double2float_rn(x) * 3.0", lambda X, Y: X.astype(np.float32).astype(np.float64) * 3.0),
        "d2i": ("(double)__double2int_rn(x) + (double)__double2uint_rz(fabs(y))", lambda X, Y: np.rint(X) + np.trunc(np.abs(Y))),
        "d2ll": ("(double)__double2ll_rd(__dmul_rn(x, 1e9))", lambda X, Y: np.floor(X * 1e9)),
        "cmp": (
            "(double)((x < y) | (x == floor(x)) << 1 | (x >= -y) << 2)",
            lambda X, Y: (
                (X < Y).astype(np.int64) | (X == np.floor(X)).astype(np.int64) << 1 | (X >= -Y).astype(np.int64) << 2
            ).astype(np.float64),
        ),
        "div": ("__ddiv_rn(x, y)", lambda X, Y: X / Y),
        "sqrt": ("__dsqrt_rn(fabs(x))", lambda X, Y: np.sqrt(np.abs(X))),
        "rcp": ("__drcp_rn(y)", lambda X, Y: 1.0 / Y),
    }
    for name, (expr, fn) in dbl.items():
        ulps = 1 if name in ("div", "sqrt", "rcp") else 0
        case(
            name=f"dbl_{name}",
            style="double",
            group="double",
            src=f"""
K(dbl_{name}) {{
  int i = TID;
  if (i < n) {{ double x = ((const double *)a)[i], y = ((const double *)b)[i]; ((double *)o)[i] = {expr}; }}
}}""",
            inputs=lambda r: Inputs(din(r), din(r, scale=1e5), 100, 100, np.zeros(200, np.uint32)),
            ref=d64(fn),
            kind="f64",
            ulps=ulps,
        )

    # --- atomics: every operation on global and shared memory -----------------------------------
    def hist_inputs(r):
        return Inputs(_u32(r, 320), _u32(r, 320, 0, 1 << 20), 300, 320, np.zeros(16, np.uint32))

    def hist_ref(op, init=0, signed=False):
        def ref(x):
            keys, vals = x.a[: x.n] & 7, x.b[: x.n]
            out = np.full(16, init, np.int64)
            v = vals.view(np.int32).astype(np.int64) if signed else vals.astype(np.int64)
            for k, w in zip(keys, v):
                out[k] = op(out[k], w)
            out[8:] = 0
            return (out % 2**32).astype(np.uint32)

        return ref

    atom = {
        "add": ("atomicAdd(&o[k], v)", lambda p, q: p + q, 0),
        "sub": ("atomicSub(&o[k], v)", lambda p, q: p - q, 0),
        "umax": ("atomicMax(&o[k], v)", max, 0),
        "umin": ("atomicMin(&o[k], v)", min, 2**32 - 1),
        "and": ("atomicAnd(&o[k], ~(1u << (v & 31)))", lambda p, q: p & ~(1 << (q & 31)), 2**32 - 1),
        "or": ("atomicOr(&o[k], 1u << (v & 31))", lambda p, q: p | (1 << (q & 31)), 0),
        "xor": ("atomicXor(&o[k], v)", lambda p, q: p ^ q, 0),
        "inc": ("atomicInc(&o[k], 100000u)", lambda p, q: p + 1, 0),
        "dec": ("atomicDec(&o[k], 100000u)", lambda p, q: p - 1, 1000),
        "cas_add": (
            "{ uint32_t old = o[k], seen; do { seen = old; old = atomicCAS(&o[k], seen, seen + v); } while (old != seen); }",
            lambda p, q: p + q,
            0,
        ),
    }
    for name, (stmt, op, init) in atom.items():
        if op is None:

            def ref(x):
                keys, vals = x.a[: x.n] & 7, x.b[: x.n].astype(np.int64) - 500000
                out = np.zeros(16, np.int64)
                out[:8] = -(2**31)
                for k, w in zip(keys, vals):
                    out[k] = max(out[k], w)
                out[8:] = 0
                return (out % 2**32).astype(np.uint32)

            pre = "if (TID < 8) atomicExch((int *)&o[TID], (int)0x80000000);"
            inputs = hist_inputs
        else:
            ref = hist_ref(op, init)
            pre = ""

            def inputs(r, init=init):
                x = hist_inputs(r)
                x.out[:8] = init % 2**32
                return x

        body = stmt if stmt.startswith("{") else stmt + ";"
        case(
            name=f"atom_{name}",
            style="atomics",
            group="atomic",
            src=f"""
K(atom_{name}) {{
  int i = TID; {pre}
  if (i < n) {{ uint32_t k = a[i] & 7, v = b[i]; {body} }}
}}""",
            inputs=inputs,
            ref=ref,
        )
    case(
        name="atom_smax_init",
        style="atomics",
        group="atomic",
        src="""
K(atom_smax_init) { int i = TID; if (i < n) atomicMax((int *)&o[a[i] & 7], (int)b[i]); }""",
        inputs=lambda r: Inputs(_u32(r, 320), _u32(r, 320), 300, 320, np.zeros(16, np.uint32)),
        ref=lambda x: _smax_ref(x),
    )
    case(
        name="atom_add64",
        style="atomics",
        group="atomic",
        src="""
K(atom_add64) { int i = TID; if (i < n) atomicAdd((unsigned long long *)o + (a[i] & 3), (unsigned long long)b[i] << 20); }""",
        inputs=lambda r: Inputs(_u32(r, 320), _u32(r, 320), 300, 320, np.zeros(8, np.uint32)),
        ref=lambda x: _add64_ref(x),
    )
    case(
        name="atom_fadd",
        style="atomics",
        group="atomic",
        src="""
K(atom_fadd) { int i = TID; if (i < n) atomicAdd((float *)o + (a[i] & 7), (float)(b[i] & 1023)); }""",
        inputs=lambda r: Inputs(_u32(r, 320), _u32(r, 320), 300, 320, np.zeros(8, np.uint32)),
        ref=lambda x: _fadd_ref(x),
    )
    case(
        name="atom_exch_ret",
        style="atomics",
        group="atomic",
        src="""
K(atom_exch_ret) {
  // every thread swaps its id into one slot: the old values seen and the last value left form a permutation
  int i = TID; if (i < n) o[1 + i] = atomicExch(&o[0], (uint32_t)i + 1u);
}""",
        inputs=lambda r: Inputs(_u32(r, 64), _u32(r, 64), 64, 64, np.zeros(65, np.uint32)),
        ref=lambda x: None,
        kind="perm",
    )
    case(
        name="shared_hist",
        style="histogram",
        group="atomic",
        src="""
K(shared_hist) {
  __shared__ uint32_t h[48]; int t = threadIdx.x, i = TID;
  if (t < 48) h[t] = 0; __syncthreads();
  if (i < n) { atomicAdd(&h[a[i] & 31], 1u); atomicMax(&h[32 + (a[i] & 15)], b[i] & 0xffff); }
  __syncthreads();
  if (t < 48) atomicAdd(&o[t], h[t]);
}""",
        inputs=lambda r: Inputs(_u32(r, 256), _u32(r, 256), 250, 256, np.zeros(48, np.uint32)),
        ref=lambda x: _shared_hist_ref(x),
    )

    # --- warp intrinsics -----------------------------------------------------------------------
    def warp_ref(fn):
        def ref(x):
            return np.asarray(fn(x.a[:256].reshape(8, 32), x.b[:256].reshape(8, 32)), np.uint32).ravel()

        return ref

    def seg_sum(v, w):
        return np.repeat(v.reshape(-1, w).astype(np.uint64).sum(1), w).reshape(v.shape).astype(np.uint32)

    def up_scan(v, w):
        return np.cumsum(v.reshape(-1, w).astype(np.uint64), 1).astype(np.uint32).reshape(v.shape)

    warp = {
        "bcast": ("__shfl_sync(0xffffffffu, v, 5)", lambda A, B: np.repeat(A[:, 5:6], 32, 1)),
        "bcast_var": ("__shfl_sync(0xffffffffu, v, w & 31)", lambda A, B: np.take_along_axis(A, (B & 31).astype(np.int64), 1)),
        "xor8": (
            "({ uint32_t s = v; for (int k = 4; k > 0; k >>= 1) s += __shfl_xor_sync(0xffffffffu, s, k, 8); s; })",
            lambda A, B: seg_sum(A, 8),
        ),
        "xor16": (
            "({ uint32_t s = v; for (int k = 8; k > 0; k >>= 1) s += __shfl_xor_sync(0xffffffffu, s, k, 16); s; })",
            lambda A, B: seg_sum(A, 16),
        ),
        "up_scan": (
            "({ uint32_t s = v; for (int k = 1; k < 32; k <<= 1) { uint32_t t = __shfl_up_sync(0xffffffffu, s, k); "
            "if ((threadIdx.x & 31) >= k) s += t; } s; })",
            lambda A, B: up_scan(A, 32),
        ),
        "up_scan8": (
            "({ uint32_t s = v; for (int k = 1; k < 8; k <<= 1) { uint32_t t = __shfl_up_sync(0xffffffffu, s, k, 8); "
            "if ((threadIdx.x & 7) >= k) s += t; } s; })",
            lambda A, B: up_scan(A, 8),
        ),
        "down16": (
            "__shfl_down_sync(0xffffffffu, v, 3, 16)",
            lambda A, B: np.concatenate(
                [np.where(np.arange(16) + 3 < 16, np.roll(h, -3, 1), h) for h in (A[:, :16], A[:, 16:])], 1
            ),
        ),
        "ballot": (
            "__popc(__ballot_sync(0xffffffffu, v & 1)) * 65536u + (__ballot_sync(0xffffffffu, w > v) & 0xffffu)",
            lambda A, B: np.repeat(((A & 1).sum(1) * 65536 + ((B > A)[:, :16] * (1 << np.arange(16))).sum(1))[:, None], 32, 1),
        ),
        "any_all": (
            "(uint32_t)__any_sync(0xffffffffu, v < 0x08000000u) + 2u * (uint32_t)__all_sync(0xffffffffu, w != 0u)"
            " + 4u * (uint32_t)__all_sync(0xffffffffu, v > 0x08000000u)",
            lambda A, B: np.repeat(
                (((A < 0x08000000).any(1)).astype(np.uint32) + 2 * (B != 0).all(1) + 4 * (A > 0x08000000).all(1))[:, None], 32, 1
            ),
        ),
        "shfl64": (
            "({ unsigned long long q = ((unsigned long long)w << 32 | v) * 3ull; "
            "q = __shfl_xor_sync(0xffffffffu, q, 1); (uint32_t)(q >> 17); })",
            lambda A, B: _shfl64_ref(A, B),
        ),
        "min_bfly": (
            "({ uint32_t s = v; for (int k = 16; k > 0; k >>= 1) s = min(s, __shfl_xor_sync(0xffffffffu, s, k)); s; })",
            lambda A, B: np.repeat(A.min(1)[:, None], 32, 1),
        ),
    }
    for name, (expr, fn) in warp.items():
        case(
            name=f"warp_{name}",
            style="warp",
            group="warp",
            src=f"""
K(warp_{name}) {{ int i = TID; uint32_t v = a[i], w = b[i]; o[i] = {expr}; }}""",
            inputs=lambda r: Inputs(_u32(r, 256), _u32(r, 256), 256, 256, np.zeros(256, np.uint32)),
            ref=warp_ref(fn),
        )

    # --- block scans, reductions, sorts ----------------------------------------------------------
    def blocks(x, k=64):
        return x.a[:256].reshape(-1, k)

    scans = {
        "excl_scan": (
            r"""
  __shared__ uint32_t s[64]; int t = threadIdx.x; s[t] = a[TID]; __syncthreads();
  for (int d = 1; d < 64; d <<= 1) { uint32_t v = t >= d ? s[t - d] : 0; __syncthreads(); s[t] += v; __syncthreads(); }
  o[TID] = t ? s[t - 1] : 0;""",
            lambda x: (
                np.concatenate([np.concatenate([[0], np.cumsum(b.astype(np.uint64))[:-1]]) for b in blocks(x)])
                .astype(np.uint64)
                .astype(np.uint32)
            ),
        ),
        "blelloch": (
            r"""
  __shared__ uint32_t s[64]; int t = threadIdx.x; s[t] = a[TID]; __syncthreads();
  for (int d = 1; d < 64; d <<= 1) { int k = (t + 1) * 2 * d - 1; if (k < 64) s[k] += s[k - d]; __syncthreads(); }
  if (t == 0) s[63] = 0; __syncthreads();
  for (int d = 32; d > 0; d >>= 1) { int k = (t + 1) * 2 * d - 1;
    if (k < 64) { uint32_t v = s[k - d]; s[k - d] = s[k]; s[k] += v; } __syncthreads(); }
  o[TID] = s[t];""",
            lambda x: (
                np.concatenate([np.concatenate([[0], np.cumsum(b.astype(np.uint64))[:-1]]) for b in blocks(x)])
                .astype(np.uint64)
                .astype(np.uint32)
            ),
        ),
        "warp_scan_block": (
            r"""
  __shared__ uint32_t ws[2]; int t = threadIdx.x, lane = t & 31; uint32_t v = a[TID];
  for (int k = 1; k < 32; k <<= 1) { uint32_t u = __shfl_up_sync(0xffffffffu, v, k); if (lane >= k) v += u; }
  if (lane == 31) ws[t >> 5] = v; __syncthreads();
  if (t >= 32) v += ws[0];
  o[TID] = v;""",
            lambda x: np.concatenate([np.cumsum(b.astype(np.uint64)) for b in blocks(x)]).astype(np.uint64).astype(np.uint32),
        ),
        "max_scan": (
            r"""
  __shared__ uint32_t s[64]; int t = threadIdx.x; s[t] = a[TID]; __syncthreads();
  for (int d = 1; d < 64; d <<= 1) { uint32_t v = t >= d ? s[t - d] : 0; __syncthreads(); s[t] = max(s[t], v); __syncthreads(); }
  o[TID] = s[t];""",
            lambda x: np.concatenate([np.maximum.accumulate(b) for b in blocks(x)]).astype(np.uint32),
        ),
        "seg_scan": (
            r"""
  // inclusive sum restarting where b's low bit is set (a segment head)
  __shared__ uint32_t s[64], f[64]; int t = threadIdx.x; s[t] = a[TID]; f[t] = b[TID] & 1; __syncthreads();
  for (int d = 1; d < 64; d <<= 1) {
    uint32_t v = 0, g = 0; if (t >= d) { v = s[t - d]; g = f[t - d]; } __syncthreads();
    if (t >= d && !f[t]) { s[t] += v; f[t] = g; } __syncthreads(); }
  o[TID] = s[t];""",
            lambda x: _seg_scan_ref(x),
        ),
        "reduce_u64": (
            r"""
  __shared__ unsigned long long s[64]; int t = threadIdx.x; s[t] = (unsigned long long)a[TID] * b[TID]; __syncthreads();
  for (int k = 32; k > 0; k >>= 1) { if (t < k) s[t] += s[t + k]; __syncthreads(); }
  if (t == 0) ((unsigned long long *)o)[blockIdx.x] = s[0];""",
            lambda x: np.array(
                [int((a.astype(object) * b.astype(object)).sum()) % 2**64 for a, b in zip(blocks(x), x.b[:256].reshape(-1, 64))],
                np.uint64,
            ).view(np.uint32),
        ),
        "reduce_f64": (
            r"""
  __shared__ double s[64]; int t = threadIdx.x; s[t] = (double)(int)a[TID] * 0.25; __syncthreads();
  for (int k = 32; k > 0; k >>= 1) { if (t < k) s[t] = __dadd_rn(s[t], s[t + k]); __syncthreads(); }
  if (t == 0) ((double *)o)[blockIdx.x] = s[0];""",
            lambda x: _tree_f64(x),
        ),
        "bitonic": (
            r"""
  __shared__ uint32_t s[64]; int t = threadIdx.x; s[t] = a[TID]; __syncthreads();
  for (int k = 2; k <= 64; k <<= 1)
    for (int j = k >> 1; j > 0; j >>= 1) {
      int p = t ^ j;
      if (p > t) { uint32_t x = s[t], y = s[p]; bool up = (t & k) == 0; if ((x > y) == up) { s[t] = y; s[p] = x; } }
      __syncthreads(); }
  o[TID] = s[t];""",
            lambda x: np.concatenate([np.sort(b) for b in blocks(x)]),
        ),
        "bitonic_s32": (
            r"""
  __shared__ int s[64]; int t = threadIdx.x; s[t] = (int)a[TID]; __syncthreads();
  for (int k = 2; k <= 64; k <<= 1)
    for (int j = k >> 1; j > 0; j >>= 1) {
      int p = t ^ j;
      if (p > t) { int x = s[t], y = s[p]; bool up = (t & k) == 0; if ((x > y) == up) { s[t] = y; s[p] = x; } }
      __syncthreads(); }
  o[TID] = (uint32_t)s[t];""",
            lambda x: np.concatenate([np.sort(b.view(np.int32)).view(np.uint32) for b in blocks(x)]),
        ),
        "oddeven": (
            r"""
  __shared__ uint32_t s[64]; int t = threadIdx.x; s[t] = a[TID]; __syncthreads();
  for (int r = 0; r < 64; r++) {
    int p = (r & 1) ? ((t & 1) ? t + 1 : t - 1) : ((t & 1) ? t - 1 : t + 1);
    uint32_t mine = s[t], other = (p >= 0 && p < 64) ? s[p] : mine; __syncthreads();
    if (p >= 0 && p < 64) s[t] = (t < p) ? min(mine, other) : max(mine, other);
    __syncthreads(); }
  o[TID] = s[t];""",
            lambda x: np.concatenate([np.sort(b) for b in blocks(x)]),
        ),
        "rank_sort_f": (
            r"""
  // each thread counts the elements before it in order (ties by index): its place in the sorted block
  __shared__ float s[64]; int t = threadIdx.x; s[t] = __uint_as_float(a[TID]); __syncthreads();
  float v = s[t]; int r = 0;
  for (int j = 0; j < 64; j++) r += (s[j] < v) || (s[j] == v && j < t);
  ((float *)o)[blockIdx.x * 64 + r] = v;""",
            lambda x: np.concatenate([np.sort(b.view(np.float32), kind="stable").view(np.uint32) for b in blocks(x)]),
        ),
        "radix_pass": (
            r"""
  // one 4-bit pass of a block radix sort: stable counting sort by (a >> 4) & 15 within the block
  __shared__ uint32_t cnt[16], s[64]; int t = threadIdx.x; uint32_t v = a[TID], d = (v >> 4) & 15;
  s[t] = v; if (t < 16) cnt[t] = 0; __syncthreads();
  uint32_t pos = 0; for (int j = 0; j < 64; j++) { uint32_t e = (s[j] >> 4) & 15; pos += (e < d) || (e == d && j < t); }
  o[blockIdx.x * 64 + pos] = v;""",
            lambda x: np.concatenate([b[np.argsort((b >> 4) & 15, kind="stable")] for b in blocks(x)]),
        ),
    }
    for name, (body, fn) in scans.items():
        out_words = {"reduce_u64": 8, "reduce_f64": 8}.get(name, 256)
        kind = "f64" if name == "reduce_f64" else "u32"
        a_fn = (lambda r: fin(r)) if name == "rank_sort_f" else None
        case(
            name=f"blk_{name}",
            style="scan"
            if "sort" not in name and "bitonic" not in name and "oddeven" not in name and "radix" not in name
            else "sort",
            group="block",
            src=f"K(blk_{name}) {{{body}\n}}",
            inputs=lambda r, a_fn=a_fn, ow=out_words: Inputs(
                a_fn(r) if a_fn else _u32(r, 256, 0, 2**31 if ow == 8 else 2**32), _u32(r, 256), 256, 256, np.zeros(ow, np.uint32)
            ),
            ref=fn,
            kind=kind,
        )

    # --- stencils and matrix products ------------------------------------------------------------
    grid = {
        "stencil5": (
            r"""
  // 5-point integer stencil on a 16x16 grid (zero outside)
  int i = TID, y = i >> 4, x = i & 15; const int *g = (const int *)a;
  int c = g[i], l = x > 0 ? g[i - 1] : 0, r = x < 15 ? g[i + 1] : 0, u = y > 0 ? g[i - 16] : 0, d = y < 15 ? g[i + 16] : 0;
  ((int *)o)[i] = 4 * c - l - r - u - d;""",
            lambda x: _stencil5(x),
        ),
        "box3_shared": (
            r"""
  // 3x3 box sum of an 8x8 tile per block through shared memory with a halo of zeros
  __shared__ uint32_t t[10][10]; int l = threadIdx.x, x = l & 7, y = l >> 3;
  for (int k = l; k < 100; k += 64) t[k / 10][k % 10] = 0; __syncthreads();
  t[y + 1][x + 1] = a[TID]; __syncthreads();
  uint32_t s = 0; for (int dy = 0; dy < 3; dy++) for (int dx = 0; dx < 3; dx++) s += t[y + dy][x + dx];
  o[TID] = s;""",
            lambda x: _box3(x),
        ),
        "life": (
            r"""
  // one Game of Life step on a 16x16 torus
  int i = TID, y = i >> 4, x = i & 15, nb = 0;
  for (int dy = -1; dy <= 1; dy++) for (int dx = -1; dx <= 1; dx++)
    if (dx || dy) nb += a[((y + dy) & 15) * 16 + ((x + dx) & 15)] & 1;
  uint32_t alive = a[i] & 1; o[i] = (nb == 3) || (alive && nb == 2);""",
            lambda x: _life(x),
        ),
        "matmul_int": (
            r"""
  // 16x16 integer matrix product, one thread per element
  int r = TID >> 4, c = TID & 15; uint32_t s = 0;
  for (int k = 0; k < 16; k++) s += a[r * 16 + k] * b[k * 16 + c];
  o[TID] = s;""",
            lambda x: (
                (x.a[:256].reshape(16, 16).astype(np.uint64) @ x.b[:256].reshape(16, 16).astype(np.uint64) % 2**32)
                .astype(np.uint32)
                .ravel()
            ),
        ),
        "transpose": (
            r"""
  // 16x16 transpose through an 8x8 shared tile per block (4 tiles)
  __shared__ uint32_t tile[8][9]; int l = threadIdx.x, tx = l & 7, ty = l >> 3, bx = blockIdx.x & 1, by = blockIdx.x >> 1;
  tile[ty][tx] = a[(by * 8 + ty) * 16 + bx * 8 + tx]; __syncthreads();
  o[(bx * 8 + ty) * 16 + by * 8 + tx] = tile[tx][ty];""",
            lambda x: x.a[:256].reshape(16, 16).T.ravel(),
        ),
        "matvec_f": (
            r"""
  // float matrix-vector product, 64 rows of 32, fused as written
  if (TID < 64) { const float *A = (const float *)a, *v = (const float *)b; float s = 0.f;
    for (int k = 0; k < 32; k++) s = __fmaf_rn(A[TID * 32 + k], v[k], s);
    ((float *)o)[TID] = s; }""",
            lambda x: _matvec(x),
        ),
        "matmul_f64": (
            r"""
  // 8x8 double matrix product with fused multiply-adds
  if (TID < 64) { const double *A = (const double *)a, *B = (const double *)b; int r = TID >> 3, c = TID & 7; double s = 0.0;
    for (int k = 0; k < 8; k++) s = __fma_rn(A[r * 8 + k], B[k * 8 + c], s);
    ((double *)o)[TID] = s; }""",
            lambda x: _matmul64(x),
        ),
    }
    for name, (body, fn) in grid.items():
        kind = {"matvec_f": "f32", "matmul_f64": "f64"}.get(name, "u32")

        def inputs(r, name=name):
            if name == "matvec_f":
                return Inputs(
                    r.integers(-64, 64, 2048).astype(np.float32).view(np.uint32),
                    (r.integers(-64, 64, 32) / 8).astype(np.float32).view(np.uint32),
                    64,
                    64,
                    np.zeros(64, np.uint32),
                )
            if name == "matmul_f64":
                return Inputs(
                    (r.standard_normal(64)).view(np.uint32),
                    (r.standard_normal(64)).view(np.uint32),
                    64,
                    64,
                    np.zeros(128, np.uint32),
                )
            if name == "life":
                return Inputs(_u32(r, 256, 0, 2), _u32(r, 256), 256, 256, np.zeros(256, np.uint32))
            return Inputs(_u32(r, 256, 0, 1 << 20), _u32(r, 256, 0, 1 << 20), 256, 256, np.zeros(256, np.uint32))

        case(
            name=f"grid_{name}",
            style="stencil" if "mat" not in name and name != "transpose" else "matmul",
            group="grid",
            src=f"K(grid_{name}) {{{body}\n}}",
            inputs=inputs,
            ref=fn,
            kind=kind,
        )

    # --- divergent control flow, jump tables, calls and recursion --------------------------------
    ctrl = {
        "collatz": (
            "uint32_t v = (x & 0xffff) | 1, s = 0; while (v != 1 && s < 500) { v = (v & 1) ? 3 * v + 1 : v >> 1; s++; } r = s;",
            lambda x, y: np.array([_collatz(int(v) & 0xFFFF | 1) for v in x], np.uint32),
        ),
        "nested_break": (
            "r = 0; for (uint32_t i = 0; i < (x & 15); i++) { if ((y >> i) & 1) continue; "
            "for (uint32_t j = 0; j < 8; j++) { if (((x >> j) ^ i) == 5) break; r += i * j + 1; } if (r > 200) break; }",
            lambda x, y: np.array([_nested(int(p), int(q)) for p, q in zip(x, y)], np.uint32),
        ),
        "switch_dense": (
            "switch (x & 15) { case 0: r = y; break; case 1: r = y + 7; break; case 2: r = y * 3; break; "
            "case 3: r = y ^ 0x55; break; case 4: r = y >> 3; break; case 5: r = y << 2; break; "
            "case 6: r = ~y; break; case 7: r = y - x; break; case 8: r = x; break; case 9: r = y & x; break; "
            "case 10: r = y | 1; break; case 11: r = 11; break; default: r = 99; }",
            lambda x, y: _switch_ref(x, y),
        ),
        "switch_sparse": (
            "switch (x % 1000u) { case 3: r = 1; break; case 70: r = 2; break; case 500: r = 3; break; "
            "case 999: r = 4; break; default: r = x % 1000u; }",
            lambda x, y: np.select(
                [x % 1000 == 3, x % 1000 == 70, x % 1000 == 500, x % 1000 == 999],
                [np.full_like(x, k) for k in (1, 2, 3, 4)],
                x % 1000,
            ),
        ),
        "early_exit": (
            "r = 0; for (int i = 0; i < 32; i++) { if ((x >> i) & (y >> i) & 1) { r = i + 1; break; } }",
            lambda x, y: np.array(
                [next((i + 1 for i in range(32) if (int(p) >> i) & (int(q) >> i) & 1), 0) for p, q in zip(x, y)], np.uint32
            ),
        ),
        "fib_rec": ("r = fib_rec(x % 12u);", lambda x, y: np.array([_fib(int(v) % 12) for v in x], np.uint32)),
        "gcd_rec": (
            "r = gcd_rec(x | 1, y | 1);",
            lambda x, y: np.array([np.gcd(int(p) | 1, int(q) | 1) for p, q in zip(x, y)], np.uint32),
        ),
        "noinline": ("r = mix_ni(x, y) + mix_ni(y, x >> 1);", lambda x, y: _mix(x, y) + _mix(y, x >> 1)),
        "while_shift": (
            "r = 0; uint32_t v = x; do { r += v & 3; v >>= 2; } while (v > (y & 0xff));",
            lambda x, y: np.array([_while_shift(int(p), int(q)) for p, q in zip(x, y)], np.uint32),
        ),
        "goto_retry": (
            "r = x; int tries = 0; again: r = r * 1103515245u + 12345u; if ((r >> 28) != (y >> 28) && ++tries < 20) goto again;",
            lambda x, y: np.array([_retry(int(p), int(q)) for p, q in zip(x, y)], np.uint32),
        ),
    }
    helpers = r"""
__device__ __noinline__ uint32_t fib_rec(uint32_t k) { return k < 2 ? k : fib_rec(k - 1) + fib_rec(k - 2); }
__device__ __noinline__ uint32_t gcd_rec(uint32_t p, uint32_t q) { return q == 0 ? p : gcd_rec(q, p % q); }
__device__ __noinline__ uint32_t mix_ni(uint32_t p, uint32_t q) { if (p & 1) return p * 3u + q; return (p >> 1) ^ q; }
"""
    first = True
    for name, (stmt, fn) in ctrl.items():

        def ref(x, fn=fn):
            with np.errstate(all="ignore"):
                return np.asarray(fn(x.a[: x.n], x.b[: x.n]), np.uint32)

        case(
            name=f"ctl_{name}",
            style="control",
            group="control",
            src=(helpers if first else "")
            + f"""
K(ctl_{name}) {{ int i = TID; if (i < n) {{ uint32_t x = a[i], y = b[i], r; {stmt} o[i] = r; }} }}""",
            inputs=lambda r: Inputs(_u32(r, 128), _u32(r, 128), 128, 128, np.zeros(128, np.uint32)),
            ref=ref,
        )
        first = False

    # --- half precision ------------------------------------------------------------------------
    hlf = {
        "add": ("__hadd(p, q)", lambda P, Q: P + Q),
        "mul": ("__hmul(p, q)", lambda P, Q: P * Q),
        "fma": ("__hfma(p, q, p)", None),
        "h2add": ("__low2half(__hadd2(__halves2half2(p, q), __halves2half2(q, p)))", lambda P, Q: P + Q),
        "h2mul": ("__high2half(__hmul2(__halves2half2(p, q), __halves2half2(q, q)))", lambda P, Q: Q * Q),
        "cvt": ("__float2half_rn(__fmul_rn(__half2float(p), 3.0f))", lambda P, Q: (P.astype(np.float32) * 3).astype(np.float16)),
        "minmax": ("__hmin(p, q)", lambda P, Q: np.minimum(P, Q)),
        "cmp": (
            "__float2half_rn((float)(__hlt(p, q) + 2 * __heq(p, p)))",
            lambda P, Q: ((P < Q).astype(np.float16) + 2 * (P == P)).astype(np.float16),
        ),
    }
    first = True
    for name, (expr, fn) in hlf.items():

        def ref(x, fn=fn, name=name):
            P = x.a[: x.n].astype(np.uint16).view(np.float16)
            Q = x.b[: x.n].astype(np.uint16).view(np.float16)
            if name in ("add", "mul", "h2add", "h2mul"):  # exact in f64, then rounded once
                P, Q = P.astype(np.float64), Q.astype(np.float64)
            if fn is None:
                v = (P.astype(np.float64) * Q.astype(np.float64) + P.astype(np.float64)).astype(np.float16)  # exact in f64
            else:
                with np.errstate(all="ignore"):
                    v = np.asarray(fn(P, Q), np.float16)
            return v.view(np.uint16).astype(np.uint32)

        def hin(r):
            return np.asarray((r.standard_normal(200) * 8).astype(np.float16).view(np.uint16), np.uint32)

        case(
            name=f"half_{name}",
            style="half",
            group="half",
            src=("#include <cuda_fp16.h>\n" if first else "")
            + f"""
K(half_{name}) {{
  int i = TID;
  if (i < n) {{ __half p = __ushort_as_half((unsigned short)a[i]), q = __ushort_as_half((unsigned short)b[i]);
    o[i] = __half_as_ushort({expr}); }}
}}""",
            inputs=lambda r: Inputs(hin(r), hin(r), 200, 200, np.zeros(200, np.uint32)),
            ref=ref,
        )
        first = False


# ---------------------------------------------------------------------------------------------
# references too long for a lambda


def _smax_ref(x):
    out = np.zeros(16, np.int64)
    for k, w in zip(x.a[: x.n] & 7, x.b[: x.n].view(np.int32)):
        out[k] = max(out[k], int(w))
    return (out % 2**32).astype(np.uint32)


def _add64_ref(x):
    out = np.zeros(4, np.uint64)
    for k, w in zip(x.a[: x.n] & 3, x.b[: x.n]):
        out[k] += np.uint64(int(w) << 20)
    return out.view(np.uint32)


def _fadd_ref(x):
    out = np.zeros(8, np.float64)
    for k, w in zip(x.a[: x.n] & 7, x.b[: x.n]):
        out[k] += float(int(w) & 1023)
    return out.astype(np.float32).view(np.uint32)


def _shared_hist_ref(x):
    h = np.zeros(48, np.int64)
    n = x.n
    for blk in range(0, 256, 64):
        s = np.zeros(48, np.int64)
        for i in range(blk, min(blk + 64, n)):
            s[x.a[i] & 31] += 1
        for i in range(blk, min(blk + 64, n)):
            k = 32 + (x.a[i] & 15)
            s[k] = max(s[k], int(x.b[i]) & 0xFFFF)
        h += s
    return (h % 2**32).astype(np.uint32)


def _shfl64_ref(A, B):
    q = ((B.astype(np.uint64) << np.uint64(32)) | A.astype(np.uint64)) * np.uint64(3)
    q = q[:, np.arange(32) ^ 1]
    return (q >> np.uint64(17)).astype(np.uint32)


def _seg_scan_ref(x):
    out = []
    for a, b in zip(x.a[:256].reshape(-1, 64), x.b[:256].reshape(-1, 64)):
        s = 0
        for v, f in zip(a, b):
            s = int(v) if f & 1 else s + int(v)
            out.append(s % 2**32)
    return np.array(out, np.uint32)


def _tree_f64(x):
    out = []
    for a in x.a[:256].reshape(-1, 64):
        s = a.view(np.int32).astype(np.float64) * 0.25
        k = 32
        while k:
            s = s[:k] + s[k : 2 * k]
            k >>= 1
        out.append(s[0])
    return np.array(out).view(np.uint32)


def _stencil5(x):
    g = x.a[:256].view(np.int32).astype(np.int64).reshape(16, 16)
    p = np.pad(g, 1)
    r = 4 * g - p[1:-1, :-2] - p[1:-1, 2:] - p[:-2, 1:-1] - p[2:, 1:-1]
    return (r.ravel() % 2**32).astype(np.uint32)


def _box3(x):
    out = []
    for a in x.a[:256].reshape(-1, 64):
        p = np.pad(a.reshape(8, 8).astype(np.int64), 1)
        s = sum(p[dy : dy + 8, dx : dx + 8] for dy in range(3) for dx in range(3))
        out.append(s.ravel())
    return (np.concatenate(out) % 2**32).astype(np.uint32)


def _life(x):
    g = (x.a[:256] & 1).reshape(16, 16).astype(np.int64)
    nb = sum(np.roll(np.roll(g, dy, 0), dx, 1) for dy in (-1, 0, 1) for dx in (-1, 0, 1) if dy or dx)
    return (((nb == 3) | ((g == 1) & (nb == 2))).astype(np.uint32)).ravel()


def _matvec(x):
    A = x.a[:2048].view(np.float32).reshape(64, 32)
    v = x.b[:32].view(np.float32)
    out = []
    for row in A:
        s = np.float32(0)
        for p, q in zip(row, v):
            s = np.float32(float(Fraction(float(p)) * Fraction(float(q)) + Fraction(float(s))))  # exact: small ints / 8
        out.append(s)
    return np.array(out, np.float32).view(np.uint32)


def _matmul64(x):
    A = x.a[:128].view(np.float64).reshape(8, 8)
    B = x.b[:128].view(np.float64).reshape(8, 8)
    out = np.zeros((8, 8))
    for r in range(8):
        for c in range(8):
            s = 0.0
            for k in range(8):
                s = float(Fraction(A[r, k]) * Fraction(B[k, c]) + Fraction(s))
            out[r, c] = s
    return out.ravel().view(np.uint32)


def _collatz(v):
    s = 0
    while v != 1 and s < 500:
        v = (3 * v + 1) % 2**32 if v & 1 else v >> 1
        s += 1
    return s


def _nested(x, y):
    r = 0
    for i in range(x & 15):
        if (y >> i) & 1:
            continue
        for j in range(8):
            if ((x >> j) ^ i) == 5:
                break
            r += i * j + 1
        if r > 200:
            break
    return r


def _switch_ref(x, y):
    k = x & 15
    with np.errstate(all="ignore"):
        choices = [
            y,
            y + np.uint32(7),
            y * np.uint32(3),
            y ^ np.uint32(0x55),
            y >> 3,
            y << 2,
            ~y,
            y - x,
            x,
            y & x,
            y | np.uint32(1),
            np.full_like(y, 11),
        ]
    return np.select([k == i for i in range(12)], choices, np.uint32(99)).astype(np.uint32)


def _fib(k):
    a, b = 0, 1
    for _ in range(k):
        a, b = b, a + b
    return a


def _mix(p, q):
    return np.where(p & 1, p * np.uint32(3) + q, (p >> 1) ^ q).astype(np.uint32)


def _while_shift(x, y):
    r, v = 0, x
    while True:
        r += v & 3
        v >>= 2
        if not v > (y & 0xFF):
            break
    return r


def _retry(x, y):
    r, tries = x, 0
    while True:
        r = (r * 1103515245 + 12345) % 2**32
        tries += 1
        if not ((r >> 28) != (y >> 28) and tries < 20):
            break
    return r


# --- shader-mem (issue 31): atomics whose results depend on the operation's exact rule -------------
# INC/DEC past their limit (PTX atom.inc: old >= b ? 0 : old + 1; atom.dec: old == 0 || old > b
# ? b : old - 1), started above the limit; every invocation's old value counted in a histogram
# (the multiset of old values is the same in any order, as all steps are equal); 64-bit MIN/MAX/
# AND/OR/XOR and a CAS loop on global memory; 32-bit CAS/EXCH on shared memory.
def define_mem(case, Inputs) -> None:
    def wrap_seq(n, start, dec):
        v, olds = start, []
        for _ in range(n):
            olds.append(v)
            v = (6 if (v == 0 or v > 6) else v - 1) if dec else (0 if v >= 6 else v + 1)
        return v, olds

    def wrap_ref(x):
        out = np.zeros(18, np.int64)
        for dec, at in ((False, 0), (True, 1)):
            out[at], olds = wrap_seq(x.n, 100, dec)
            for o in olds:
                out[2 + 8 * dec + min(o, 7)] += 1
        return out.astype(np.uint32)

    def wrap_inputs(r):
        out = np.zeros(18, np.uint32)
        out[:2] = 100
        return Inputs(_u32(r, 320), _u32(r, 320), 300, 320, out)

    case(
        name="atom_incdec_wrap",
        style="atomics",
        group="atomic_mem",
        src="""
K(atom_incdec_wrap) {
  int i = TID;
  if (i < n) {
    uint32_t p = atomicInc(&o[0], 6u); atomicAdd(&o[2 + min(p, 7u)], 1u);
    uint32_t q = atomicDec(&o[1], 6u); atomicAdd(&o[10 + min(q, 7u)], 1u);
  }
}""",
        inputs=wrap_inputs,
        ref=wrap_ref,
    )

    def wrap_sh_ref(x):
        out = np.zeros(18, np.int64)
        for _blk in range(x.threads // 64):
            for dec, at in ((False, 0), (True, 1)):
                v, olds = wrap_seq(64, 100, dec)
                out[at] += v
                for o in olds:
                    out[2 + 8 * dec + min(o, 7)] += 1
        return out.astype(np.uint32)

    case(
        name="atom_incdec_wrap_sh",
        style="atomics",
        group="atomic_mem",
        src="""
K(atom_incdec_wrap_sh) {
  __shared__ uint32_t c[2]; int t = threadIdx.x;
  if (t == 0) { c[0] = 100u; c[1] = 100u; } __syncthreads();
  uint32_t p = atomicInc(&c[0], 6u), q = atomicDec(&c[1], 6u);
  atomicAdd(&o[2 + min(p, 7u)], 1u); atomicAdd(&o[10 + min(q, 7u)], 1u);
  __syncthreads();
  if (t == 0) { atomicAdd(&o[0], c[0]); atomicAdd(&o[1], c[1]); }
}""",
        inputs=lambda r: Inputs(_u32(r, 320), _u32(r, 320), 320, 320, np.zeros(18, np.uint32)),
        ref=wrap_sh_ref,
    )

    def ops64_ref(x):
        m = 2**64 - 1
        a, b = x.a[: x.n].astype(object), x.b[: x.n].astype(object)
        v = [(int(q) << 32) | int(p) for p, q in zip(a, b)]
        s = [(w ^ (1 << 63)) - (1 << 63) for w in v]  # as signed
        out = [0, m, m, 0, 0, 0, 0, 0]
        for w, sw, p, q in zip(v, s, a, b):
            out[0] = max(out[0], w)
            out[1] = min(out[1], w)
            if q & 3 == 0:
                out[2] &= m ^ (1 << (int(p) & 63))
            if p & 3 == 0:
                out[3] |= 1 << (int(q) & 63)
            out[4] ^= w
            out[5] = (out[5] + w) & m
        out[6] = max(s) & m
        out[7] = min(s) & m
        return np.array(out, np.uint64).view(np.uint32)

    def ops64_inputs(r):
        out = np.zeros(8, np.uint64)
        out[1] = out[2] = 2**64 - 1
        out[6], out[7] = 2**63, 2**63 - 1  # the signed extremes
        return Inputs(_u32(r, 320), _u32(r, 320), 300, 320, out.view(np.uint32))

    case(
        name="atom_ops64",
        style="atomics",
        group="atomic_mem",
        src="""
K(atom_ops64) {
  int i = TID;
  if (i < n) {
    unsigned long long v = ((unsigned long long)b[i] << 32) | a[i], *q = (unsigned long long *)o;
    atomicMax(q + 0, v); atomicMin(q + 1, v);
    if ((b[i] & 3) == 0) atomicAnd(q + 2, ~(1ull << (a[i] & 63)));
    if ((a[i] & 3) == 0) atomicOr(q + 3, 1ull << (b[i] & 63));
    atomicXor(q + 4, v);
    unsigned long long old = q[5], seen;
    do { seen = old; old = atomicCAS(q + 5, seen, seen + v); } while (old != seen);
    atomicMax((long long *)(q + 6), (long long)v); atomicMin((long long *)(q + 7), (long long)v);
  }
}""",
        inputs=ops64_inputs,
        ref=ops64_ref,
    )

    def cas_sh_ref(x):
        out = np.zeros(x.threads // 64 * 2, np.uint64)
        for blk in range(x.threads // 64):
            out[2 * blk] = int(x.a[blk * 64 : blk * 64 + 64].astype(np.uint64).sum()) % 2**32
            out[2 * blk + 1] = 64 * 63 // 2
        return out.astype(np.uint32)

    case(
        name="atom_cas_sh",
        style="atomics",
        group="atomic_mem",
        src="""
K(atom_cas_sh) {
  // a CAS-loop sum and an exchange chain in shared memory: the chain's old values are a
  // permutation of the ids taken in, so their sum is fixed
  __shared__ uint32_t s[2]; int t = threadIdx.x;
  if (t == 0) { s[0] = 0u; s[1] = 0u; } __syncthreads();
  uint32_t old = s[0], seen;
  do { seen = old; old = atomicCAS(&s[0], seen, seen + a[TID]); } while (old != seen);
  __shared__ uint32_t seen_prev[64];
  seen_prev[t] = atomicExch(&s[1], (uint32_t)t);
  __syncthreads();
  if (t == 0) {
    uint32_t sum = s[1]; for (int k = 0; k < 64; k++) sum += seen_prev[k];
    o[2 * blockIdx.x] = s[0]; o[2 * blockIdx.x + 1] = sum;
  }
}""",
        inputs=lambda r: Inputs(_u32(r, 256), _u32(r, 256), 256, 256, np.zeros(8, np.uint32)),
        ref=cas_sh_ref,
    )

    def redux_ref(x):
        a = x.a[:256].reshape(8, 32).astype(np.uint64)
        sa = x.a[:256].reshape(8, 32).view(np.int32).astype(np.int64)
        r = [
            a.sum(1) % 2**32,
            a.min(1),
            a.max(1),
            np.bitwise_and.reduce(x.a[:256].reshape(8, 32), 1),
            np.bitwise_or.reduce(x.a[:256].reshape(8, 32), 1),
            np.bitwise_xor.reduce(x.a[:256].reshape(8, 32), 1),
            sa.min(1) % 2**32,
            sa.max(1) % 2**32,
        ]
        return np.stack([np.repeat(np.asarray(v, np.uint64)[:, None], 32, 1).ravel() for v in r], 1).ravel().astype(np.uint32)

    case(
        name="warp_redux",
        style="warp",
        group="atomic_mem",
        src="""
K(warp_redux) {
  // the warp reductions (REDUX on sm_80+; SM53 builds the same from shuffles)
  int i = TID; uint32_t v = a[i]; uint32_t *q = o + 8 * i;
#if __CUDA_ARCH__ >= 800
  q[0] = __reduce_add_sync(~0u, v); q[1] = __reduce_min_sync(~0u, v); q[2] = __reduce_max_sync(~0u, v);
  q[3] = __reduce_and_sync(~0u, v); q[4] = __reduce_or_sync(~0u, v); q[5] = __reduce_xor_sync(~0u, v);
  q[6] = (uint32_t)__reduce_min_sync(~0u, (int)v); q[7] = (uint32_t)__reduce_max_sync(~0u, (int)v);
#else
  uint32_t s = v, mn = v, mx = v, an = v, orr = v, x = v; int smn = (int)v, smx = (int)v;
  for (int k = 16; k > 0; k >>= 1) {
    s += __shfl_xor_sync(~0u, s, k); mn = min(mn, __shfl_xor_sync(~0u, mn, k)); mx = max(mx, __shfl_xor_sync(~0u, mx, k));
    an &= __shfl_xor_sync(~0u, an, k); orr |= __shfl_xor_sync(~0u, orr, k); x ^= __shfl_xor_sync(~0u, x, k);
    smn = min(smn, __shfl_xor_sync(~0u, smn, k)); smx = max(smx, __shfl_xor_sync(~0u, smx, k));
  }
  q[0] = s; q[1] = mn; q[2] = mx; q[3] = an; q[4] = orr; q[5] = x; q[6] = (uint32_t)smn; q[7] = (uint32_t)smx;
#endif
}""",
        inputs=lambda r: Inputs(_u32(r, 256), _u32(r, 256), 256, 256, np.zeros(8 * 256, np.uint32)),
        ref=redux_ref,
    )

    def shared64_ref(x):
        out = []
        for blk in range(x.threads // 64):
            a = [int(v) for v in x.a[blk * 64 : blk * 64 + 64]]
            b = [int(v) for v in x.b[blk * 64 : blk * 64 + 64]]
            v = [(q << 32) | p for p, q in zip(a, b)]
            h = [0] * 8
            for p, q, w in zip(a, b, v):
                h[p & 3] = (h[p & 3] + w) % 2**64
                h[4 + (q & 1)] = max(h[4 + (q & 1)], w)
                h[6] = (h[6] + (w ^ 1)) % 2**64
                h[7] ^= w
            wd = [0] * 16
            for p, q in zip(a, b):
                wd[p & 15] = (wd[p & 15] + (q & 0xFF)) % 2**32
            out += [c for w in h for c in (w & 0xFFFFFFFF, w >> 32)] + wd
        return np.array(out, np.uint64).astype(np.uint32)

    case(
        name="atom_shared64",
        style="atomics",
        group="atomic_mem",
        src="""
K(atom_shared64) {
  // 64-bit atomics on shared memory beside 32-bit ones and 32-bit stores of neighbouring words
  __shared__ unsigned long long h[8]; __shared__ uint32_t w[16];
  int t = threadIdx.x, i = TID; uint32_t x = a[i], y = b[i];
  if (t < 8) h[t] = 0ull;
  if (t < 16) w[t] = 0u;
  __syncthreads();
  unsigned long long v = ((unsigned long long)y << 32) | x;
  atomicAdd(&h[x & 3], v); atomicMax(&h[4 + (y & 1)], v);
  unsigned long long old = h[6], seen;
  do { seen = old; old = atomicCAS(&h[6], seen, seen + (v ^ 1ull)); } while (old != seen);
  atomicXor(&h[7], v);
  atomicAdd(&w[x & 15], y & 0xffu);
  __syncthreads();
  uint32_t *q = o + 32 * blockIdx.x;
  if (t < 8) { q[2 * t] = (uint32_t)h[t]; q[2 * t + 1] = (uint32_t)(h[t] >> 32); }
  if (t < 16) q[16 + t] = w[t];
}""",
        inputs=lambda r: Inputs(_u32(r, 256), _u32(r, 256), 256, 256, np.zeros(128, np.uint32)),
        ref=shared64_ref,
    )

    # sub-word loads and stores in every space: bytes and halves of shared memory written by
    # neighbouring invocations at once (the same 32-bit word), of local memory (an indexed
    # per-thread array), and of global memory, read back signed and unsigned
    def subword_ref(x):
        n = x.n
        a, b = x.a[:n], x.b[:n]
        out = np.zeros(4 * n, np.uint32)
        i = np.arange(n)
        sb = (a & 0xFF).astype(np.uint8)  # shared bytes, s8[t] = a
        sh = (b & 0xFFFF).astype(np.uint16)  # shared halves
        # each thread reads its neighbour's byte / half (t ^ 1 within the block of 64)
        nb = sb[i ^ 1]
        nh = sh[i ^ 1]
        out[0::4] = nb.astype(np.int8).astype(np.int32).astype(np.uint32) + nh.astype(np.uint32)
        out[1::4] = nb.astype(np.uint32) + nh.astype(np.int16).astype(np.int32).astype(np.uint32)
        # local: bytes k of a scrambled by b (index b & 7), summed signed
        loc = np.zeros(n, np.int64)
        for t in range(n):
            arr = [(int(a[t]) >> (4 * k)) & 0xFF for k in range(8)]
            arr[int(b[t]) & 7] = (arr[int(b[t]) & 7] + 0x80) & 0xFF
            loc[t] = sum(v - 256 if v >= 128 else v for v in arr)
        out[2::4] = (loc % 2**32).astype(np.uint32)
        # global: the byte (a >> 8) & 0xff and the half a >> 16 stored into this thread's word
        out[3::4] = ((a >> 16) << 16) | (((a >> 8) & 0xFF) << 8) | 0x5A
        return out

    def subword_inputs(r):
        out = np.zeros(4 * 256, np.uint32)
        out[3::4] = 0x5A5A5A5A
        return Inputs(_u32(r, 256), _u32(r, 256), 256, 256, out)

    case(
        name="mem_subword",
        style="memory",
        group="atomic_mem",
        src="""
K(mem_subword) {
  __shared__ unsigned char s8[64]; __shared__ unsigned short s16[64];
  int t = threadIdx.x, i = TID; uint32_t x = a[i], y = b[i];
  s8[t] = (unsigned char)x; s16[t] = (unsigned short)y; __syncthreads();
  o[4 * i] = (uint32_t)(int32_t)(signed char)s8[t ^ 1] + (uint32_t)s16[t ^ 1];
  o[4 * i + 1] = (uint32_t)s8[t ^ 1] + (uint32_t)(int32_t)(short)s16[t ^ 1];
  volatile signed char loc[8];
  for (int k = 0; k < 8; k++) loc[k] = (signed char)(x >> (4 * k));
  loc[y & 7] = (signed char)(loc[y & 7] + 0x80);
  int s = 0; for (int k = 0; k < 8; k++) s += loc[k];
  o[4 * i + 2] = (uint32_t)s;
  unsigned char *ob = (unsigned char *)&o[4 * i + 3]; unsigned short *oh = (unsigned short *)&o[4 * i + 3];
  ob[1] = (unsigned char)(x >> 8); oh[1] = (unsigned short)(x >> 16);
}""",
        inputs=subword_inputs,
        ref=subword_ref,
    )


# --- shader-alu (issue 31): packed-half comparisons and min/max with NaN, f32 pairs packed to
# halves (SM86 HSET2 with and without .BF, HMNMX2.NAN, F2FP.PACK_AB); references per lane in numpy
def _h2(v: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The low and high halves of each word, as float16."""
    return (v & 0xFFFF).astype(np.uint16).view(np.float16), (v >> 16).astype(np.uint16).view(np.float16)


def _h2pack(lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    return lo.astype(np.uint32) | (hi.astype(np.uint32) << 16)


def _h2_inputs(r, n=200):
    """Words of two halves: normal values, with equal lanes, NaNs and infinities mixed in."""
    a = (r.standard_normal(2 * n) * 4).astype(np.float16)
    b = (r.standard_normal(2 * n) * 4).astype(np.float16)
    b[::5] = a[::5]  # equal lanes
    a[3::17], b[7::19] = np.float16("nan"), np.float16("nan")
    a[11::23], b[13::29] = np.float16("inf"), np.float16("-inf")
    wa = a.view(np.uint16).astype(np.uint32).reshape(n, 2)
    wb = b.view(np.uint16).astype(np.uint32).reshape(n, 2)
    return wa[:, 0] | wa[:, 1] << 16, wb[:, 0] | wb[:, 1] << 16


def _h2_set_ref(cmp, bf):
    def ref(x):
        (pl, ph), (ql, qh) = _h2(x.a[: x.n]), _h2(x.b[: x.n])
        with np.errstate(invalid="ignore"):
            t = [cmp(p, q) for p, q in ((pl, ql), (ph, qh))]
        one = np.uint32(0x3C00 if bf else 0xFFFF)
        return _h2pack(np.where(t[0], one, 0), np.where(t[1], one, 0))

    return ref


def _h2_bgt_ref(x):
    (pl, ph), (ql, qh) = _h2(x.a[: x.n]), _h2(x.b[: x.n])
    with np.errstate(invalid="ignore"):
        return np.where((pl > ql) & (ph > qh), 7, 3).astype(np.uint32)


def _h2_maxnan_ref(x):
    out = []
    for p, q in zip(_h2(x.a[: x.n]), _h2(x.b[: x.n])):
        m = np.fmax(p, q).view(np.uint16).astype(np.uint32)
        out.append(np.where(np.isnan(p) | np.isnan(q), 0x7FFF, m))
    return _h2pack(out[0], out[1])


def _h2_arith_ref(fn):
    """Per lane: fn on the halves widened to f64 (exact for a sum or product, once rounded for
    a*b+c: harmless to nearest, see shader_svc/lower/half.py), rounded once to a half; a NaN
    result is NVIDIA's canonical 0x7fff."""

    def ref(x):
        lanes = []
        for p, q in zip(_h2(x.a[: x.n]), _h2(x.b[: x.n])):
            with np.errstate(all="ignore"):
                v = np.asarray(fn(p.astype(np.float64), q.astype(np.float64)), np.float64).astype(np.float16)
            lanes.append(np.where(np.isnan(v), 0x7FFF, v.view(np.uint16).astype(np.uint32)))
        return _h2pack(lanes[0], lanes[1])

    return ref


def _f2h2_ref(x):  # (numpy warns of the overflow to infinity it is asked for)
    with np.errstate(over="ignore"):
        lo = x.a[: x.n].view(np.float32).astype(np.float16).view(np.uint16)
        hi = x.b[: x.n].view(np.float32).astype(np.float16).view(np.uint16)
    return _h2pack(lo, hi)


def _f2h2_inputs(r, n=200):
    a = (r.standard_normal(n) * 300).astype(np.float32)
    b = (r.standard_normal(n) * 3).astype(np.float32)
    a[::9] = np.float32(70000.0)  # overflows to infinity
    b[::11] = np.float32(3e-6)  # a half denormal
    a[::7] = np.round(a[::7] * 8) / 8 + np.float32(1 / 32)  # a tie of the rounding
    return a.view(np.uint32), b.view(np.uint32)


def define_shader_alu(case, Inputs) -> None:
    h2 = "#define H2(i) (*(const __half2 *)&a[i])\n#define G2(i) (*(const __half2 *)&b[i])\n"
    out = "{ __half2 r_ = (V); o[i] = *(uint32_t *)&r_; }"
    ne = lambda p, q: (p != q) & ~np.isnan(p) & ~np.isnan(q)  # noqa: E731  ordered, as __hne2
    kernels = {
        "h2_set_gt": ("__hgt2(H2(i), G2(i))", out, _h2_set_ref(np.greater, True)),
        "h2_set_le": ("__hle2(H2(i), G2(i))", out, _h2_set_ref(np.less_equal, True)),
        "h2_set_ne_mask": ("__hne2_mask(H2(i), G2(i))", "o[i] = (V);", _h2_set_ref(ne, False)),
        "h2_set_geu_mask": ("__hgeu2_mask(H2(i), G2(i))", "o[i] = (V);", _h2_set_ref(lambda p, q: ~(p < q), False)),
        "h2_bgt": ("__hbgt2(H2(i), G2(i)) ? 7u : 3u", "o[i] = (V);", _h2_bgt_ref),
        "h2_max_nan": ("__hmax2_nan(H2(i), G2(i))", out, _h2_maxnan_ref),
        "h2_from_f2": ("__floats2half2_rn(__uint_as_float(a[i]), __uint_as_float(b[i]))", out, _f2h2_ref),
        # immediate pairs (SM86 HADD2/HMUL2/HFMA2 forms 2 and 4): the same constant in both lanes
        # keeps the references lane-independent
        "h2_add_imm": ("__hadd2(H2(i), __float2half2_rn(3.0f))", out, _h2_arith_ref(lambda p, q: p + 3.0)),
        "h2_mul_imm": ("__hmul2(H2(i), __float2half2_rn(-2.5f))", out, _h2_arith_ref(lambda p, q: p * -2.5)),
        "h2_fma_imm": ("__hfma2(H2(i), G2(i), __float2half2_rn(0.25f))", out, _h2_arith_ref(lambda p, q: p * q + 0.25)),
        "h2_fma_immb": ("__hfma2(H2(i), __float2half2_rn(1.75f), G2(i))", out, _h2_arith_ref(lambda p, q: p * 1.75 + q)),
    }
    first = True
    for name, (expr, store, ref) in kernels.items():
        make = _f2h2_inputs if name == "h2_from_f2" else _h2_inputs
        case(
            name=name,
            style="half",
            group="half_alu",
            src=("#include <cuda_fp16.h>\n" + h2 if first else "")
            + f"\nK({name}) {{ int i = TID; if (i < n) {{ {store.replace('V', expr)} }} }}",
            inputs=lambda r, make=make: Inputs(*make(r), 200, 200, np.zeros(200, np.uint32)),
            ref=ref,
        )
        first = False


# --- shader-alu (issue 31): fused multiply-adds, sums and products rounded toward zero, down or
# up (and doubles to nearest), at overflow, underflow and in between (FFMA/DFMA/DADD/DMUL
# .RZ/.RM/.RP and the plain forms); exact references
_F64_MAX = Fraction(float(np.finfo(np.float64).max))
_F32_MAX = Fraction(float(np.finfo(np.float32).max))


def _round_dir(v: Fraction, mode: str, f32: bool, zero_sign: float) -> float:
    """The exact value ``v`` rounded to f64 (or f32) in the direction ``mode``; beyond the largest
    finite value: that value toward zero, infinity away from it (IEEE 754's directed modes)."""
    big, ft = (_F32_MAX, np.float32) if f32 else (_F64_MAX, np.float64)
    if v == 0:
        return zero_sign
    if mode == "rn" and not f32:  # to nearest (Python's float of a Fraction), ties to even at the top
        if abs(v) >= big + Fraction(2) ** 970:
            return float(np.copysign(np.inf, float(np.sign(v))))
        return float(np.copysign(float(big), float(np.sign(v)))) if abs(v) > big else float(v)
    if abs(v) > big:
        away = (mode == "ru" and v > 0) or (mode == "rd" and v < 0)
        return float(np.copysign(np.inf, float(np.sign(v)))) if away else float(np.copysign(float(big), float(np.sign(v))))
    f = ft(float(v)) if not f32 else np.float32(float(v))  # nearest (a tie goes either way: fixed below)
    if abs(Fraction(float(f))) > big:  # rounded past the largest finite value
        f = ft(np.copysign(float(big), float(np.sign(v))))
    fv = Fraction(float(f))
    if mode == "rz" and abs(fv) > abs(v):
        f = np.nextafter(f, ft(0))
    elif mode == "rd" and fv > v:
        f = np.nextafter(f, ft(-np.inf))
    elif mode == "ru" and fv < v:
        f = np.nextafter(f, ft(np.inf))
    return float(f)


def _dir_ref(op: str, mode: str, f32: bool):
    def ref(x):
        ft, it = (np.float32, np.uint32) if f32 else (np.float64, np.uint64)
        n = x.n
        av, bv = x.a.view(ft), x.b.view(ft)
        out = np.zeros(n, ft)
        for i in range(n):
            p, q, r = float(av[i]), float(bv[i]), float(av[n + i])
            if op == "add":
                q, r = 1.0, q  # p + q as p * 1 + q
            elif op == "mul":
                r = 0.0 if mode == "rd" else -0.0  # p * q + 0: the zero that keeps p*q's zero sign
            if not all(np.isfinite([p, q, r])):
                out[i] = ft(p) * ft(q) + ft(r)  # (the inputs are finite)
                continue
            prod_zero = p == 0 or q == 0
            psign = np.copysign(1.0, p) * np.copysign(1.0, q)
            if prod_zero and r == 0 and psign == np.copysign(1.0, r):
                zs = r
            else:
                zs = -0.0 if mode == "rd" else 0.0
            out[i] = _round_dir(Fraction(p) * Fraction(q) + Fraction(r), mode, f32, zs)
        return out.view(it).view(np.uint32)

    return ref


def _dir_inputs(f32: bool):
    """x (a's first n), z (a's second n), y (b): random values of every scale, and rows 0-27
    at the edges: products past the largest finite value (+ and -), into the denormals, below
    the smallest denormal (with a tiny addend), sums past the largest finite value, a factor
    beyond 2^995 with a finite product."""

    def make(r, n=96):
        ft = np.float32 if f32 else np.float64
        e = (20, 40) if f32 else (150, 300)
        x, y, z = ((r.standard_normal(n) * 10.0 ** r.integers(-e[0], e[0], n)).astype(ft) for _ in range(3))
        big, tiny = np.finfo(ft).max, np.finfo(ft).tiny
        lo = -100 if f32 else -1000  # a small exponent whose products reach the denormals
        edges = [
            (big / 3, 4.5, 0.0),
            (-big / 2, 2.25, 0.0),
            (tiny * 3, 0.3, 0.0),
            (2.0**lo, -1.3 * 2.0 ** (-70 if not f32 else -40), 0.0),
            (1.7 * 2.0 ** (lo - 60 if not f32 else lo - 30), 1.1 * 2.0**-20, tiny * 2.0**-50),
            (big * 0.75, big * 0.5, big * 0.25),
            # a factor beyond 2^995 with a finite product (Veltkamp's split of it overflows)
            (1.3 * 2.0 ** (100 if f32 else 1000), 1.7 * 2.0**-40, 2.0 ** (60 if f32 else 960)),
        ]
        for k, (p, q, w) in enumerate(edges):
            for j in range(4):  # four sign patterns of each
                sp, sw = (1, -1)[j & 1], (1, -1)[j >> 1]
                x[4 * k + j], y[4 * k + j], z[4 * k + j] = ft(sp * p), ft(q), ft(sw * w)
        return np.concatenate([x, z]).view(np.uint32).copy(), y.view(np.uint32).copy()

    return make


def define_shader_alu_directed(case, Inputs) -> None:
    ops = {
        "fma": ("__fma_{m}(x, y, z)", "__fmaf_{m}(x, y, z)"),
        "add": ("__dadd_{m}(x, y)", "__fadd_{m}(x, y)"),
        "mul": ("__dmul_{m}(x, y)", "__fmul_{m}(x, y)"),
    }
    for f32 in (False, True):
        t, w = ("float", 1) if f32 else ("double", 2)
        for op, forms in ops.items():
            for m in ("rz", "rd", "ru") + (() if f32 else ("rn",)):  # (f32's nearest: elsewhere)
                name = f"{'f' if f32 else 'd'}{op}_{m}_edge"
                expr = forms[f32].format(m=m)
                case(
                    name=name,
                    style="float" if f32 else "double",
                    group="directed_alu",
                    src=f"""
K({name}) {{ int i = TID; if (i < n) {{ const {t} *A = (const {t} *)a, *B = (const {t} *)b;
  {t} x = A[i], z = A[n + i], y = B[i]; (({t} *)o)[i] = {expr}; }} }}""",
                    inputs=lambda r, f32=f32, w=w: Inputs(*_dir_inputs(f32)(r), 96, 96, np.zeros(96 * w, np.uint32)),
                    ref=_dir_ref(op, m, f32),
                    kind="u32",
                )


# --- shader-gaps2 (issue 31): constants ptxas cannot cut to an immediate form's 9 bits (0.1 as a
# half is 0x2E66): SM53 HADD2_32I / HMUL2_32I, and HFMA2 with the constant as B from c[0x2] (an
# f32 there, 0x3DCCC000); the same constant in both lanes keeps the references lane-independent
def define_shader_gaps2(case, Inputs) -> None:
    h2 = "#define H2(i) (*(const __half2 *)&a[i])\n#define G2(i) (*(const __half2 *)&b[i])\n"
    out = "{ __half2 r_ = (V); o[i] = *(uint32_t *)&r_; }"
    c1, c3 = float(np.float16(0.1)), float(np.float16(-0.3))
    kernels = {
        "h2_add_imm32": ("__hadd2(H2(i), __float2half2_rn(0.1f))", _h2_arith_ref(lambda p, q: p + c1)),
        "h2_mul_imm32": ("__hmul2(H2(i), __float2half2_rn(-0.3f))", _h2_arith_ref(lambda p, q: p * c3)),
        "h2_fma_cbufb": ("__hfma2(H2(i), __float2half2_rn(0.1f), G2(i))", _h2_arith_ref(lambda p, q: p * c1 + q)),
    }
    first = True
    for name, (expr, ref) in kernels.items():
        case(
            name=name,
            style="half",
            group="half_gaps2",
            src=("#include <cuda_fp16.h>\n" + h2 if first else "")
            + f"\nK({name}) {{ int i = TID; if (i < n) {{ {out.replace('V', expr)} }} }}",
            inputs=lambda r: Inputs(*_h2_inputs(r), 200, 200, np.zeros(200, np.uint32)),
            ref=ref,
        )
        first = False


# --- shader-u (issue 31): SM86's uniform datapath and the vector ALU rows translated last.  A
# value computed from blockIdx.x and n is the same for the whole warp, so nvcc computes it with
# the uniform instructions (UIMAD(.WIDE), UISETP(.EX), ULOP3, UPLOP3, USEL, USHF, UPRMT, UPOPC,
# UBREV, UFLO, UIADD3 carries, USGXT, UBMSK); 32 blocks give 32 different uniform values.  The
# vector kernel reaches I2I, BMSK, IDP, I2IP, VABSDIFF4, SGXT.W, FSET through inline PTX (cvt.sat,
# bmsk, dp4a, cvt.pack.sat, vabsdiff4 via __vsadu4/__vsads4, szext, set.f32).  The references
# are the C / PTX ISA semantics, written out per element in Python.
M32 = 0xFFFFFFFF


def _s32v(x: int) -> int:
    x &= M32
    return x - (1 << 32) if x >> 31 else x


def _u_bytes(x: int, signed: bool) -> list[int]:
    out = [(x >> (8 * k)) & 0xFF for k in range(4)]
    return [v - 256 if signed and v >= 128 else v for v in out]


def _szext(a: int, b: int, wrap: bool, signed: bool) -> int:
    b1 = b & 31
    too_large = b >= 32 and not wrap
    mask = 0 if too_large else (M32 << b1) & M32
    sign = not (b1 == 0 or too_large or not signed) and (a >> ((b1 - 1) & 31)) & 1
    return (a & ~mask & M32) | (mask if sign else 0)


def _bmsk(a: int, b: int, wrap: bool) -> int:
    a1, b1 = a & 31, b & 31
    s = a1 + b1
    mask0 = (M32 << a1) & M32
    over = s >= 32
    if not wrap:
        if a >= 32:
            mask0, over = 0, True
        over = over or b >= 32
    mask1 = 0 if over else (M32 if b1 == 0 else (M32 << s) & M32)
    return mask0 & ~mask1 & M32


def _perm(x: int, y: int, sel: int) -> int:
    bs = _u_bytes(x, False) + _u_bytes(y, False)
    return sum(bs[(sel >> (4 * k)) & 7] << (8 * k) for k in range(4))


def _popc(x: int) -> int:
    return bin(x & M32).count("1")


def _brev(x: int) -> int:
    return int(f"{x & M32:032b}"[::-1], 2)


def _clz(x: int) -> int:
    return 32 - (x & M32).bit_length()


def u32(r, n: int) -> np.ndarray:
    return r.integers(0, 2**32, n, dtype=np.uint64).astype(np.uint32)


def _uni_alu_ref(x) -> np.ndarray:
    u = x.n & M32
    m = (u * 0x9E3779B1 + 12345) & M32
    s = ((m >> 7) | (m << 25)) & M32
    xx = (s ^ (u << 3)) & 0x00FF00FF
    p = _perm(m, s, 0x3120)
    c = _popc(m) + _brev(s) + _clz(m | 1)
    sel = m if _s32v(u) > 100 else s
    w = u * 0x9E3779B9
    bm = ((1 << (u & 31)) - 1) & M32
    sh = (_s32v(m) >> (u & 31)) & M32
    t = 7 if u < 50 else 9
    q = _s32v(m) * _s32v(u)
    big = int((w - (1 << 64) if w >> 63 else w) > q)
    acc = m + xx + p + c + sel + (w >> 32) + bm + sh + t + ((q >> 32) & M32) + big
    return ((x.a.astype(np.uint64) + (acc & M32)) & M32).astype(np.uint32)


def _uni_more_ref(x) -> np.ndarray:
    u = x.n & M32
    nb = ((u >> 3) & 31) + 1
    z = (_s32v(u << (32 - nb)) >> (32 - nb)) & M32
    k = ((((1 << ((u >> 5) & 31)) - 1) & M32) << (u & 31)) & M32
    p1, p2, p3 = (u & 1) != 0, u > 0x80000000, _s32v(u) < 0x40000000
    f = 3 if (p1 and p2) or (p3 and not p1) else 5
    return ((x.a.astype(np.uint64) + z + k + f) & M32).astype(np.uint32)


def _sat(v: int, lo: int, hi: int) -> int:
    return min(max(v, lo), hi)


def _vec_alu_ref(x) -> np.ndarray:
    out = []
    for i in range(x.n):
        a, b = int(x.a[i]), int(x.b[i])
        r0 = _sat(_s32v(a), -128, 127) & M32
        r1 = _sat(_s32v(b), -32768, 32767) & M32
        r2 = _bmsk(a & 63, b & 63, False)
        r3 = (_s32v(r0) + sum(p * q for p, q in zip(_u_bytes(a, True), _u_bytes(b, False)))) & M32
        r4 = ((r1 << 16) | (_sat(_s32v(a), 0, 255) << 8) | _sat(_s32v(b), 0, 255)) & M32
        r5 = sum(abs(p - q) for p, q in zip(_u_bytes(a, False), _u_bytes(b, False)))
        r6 = _szext(a, b, True, True)
        r7 = sum(abs(p - q) for p, q in zip(_u_bytes(a, True), _u_bytes(b, True)))
        fa, fb = np.uint32(a).view(np.float32), np.uint32(b).view(np.float32)
        r8 = 0x3F800000 if fa < fb else 0
        r9 = (_s32v(r1) + sum(p * q for p, q in zip(_u_bytes(a, False), _u_bytes(b, True)))) & M32
        v = r0 + 3 * r1 + 5 * r2 + 7 * r3 + 11 * r4 + 13 * r5 + 17 * r6 + 19 * r7 + 23 * r8 + 29 * r9
        out.append(v & M32)
    return np.array(out, np.uint32)


def _vec_alu_inputs(r, Inputs):
    n = 256
    a = r.integers(0, 2**32, n, dtype=np.uint64).astype(np.uint32)
    b = r.integers(0, 2**32, n, dtype=np.uint64).astype(np.uint32)
    a[:32] = np.array([0, 1, 127, 128, 255, 256, 0x7FFFFFFF, 0x80000000] * 4, np.uint32)
    b[:32] = np.repeat(np.array([0, 31, 32, 33, 0xFFFFFF80, 0xFFFF8000, 40, 64], np.uint32), 4)
    b[32:48] = a[32:48]  # equal floats (FSET's LT false), and small shift counts
    fl = r.standard_normal(32).astype(np.float32).view(np.uint32)
    a[48:80] = fl
    b[48:80] = np.roll(fl, 1)
    return Inputs(a, b, n, n, np.zeros(n, np.uint32))


def define_shader_u(case, Inputs) -> None:
    threads = 256
    # straight-line code on n only: nvcc keeps it on the uniform datapath (a loop or blockIdx.x
    # moves it to the vector one); one kernel per n, so several uniform values are checked
    alu = r"""
K(NAME) {
  int i = TID; uint32_t u = (uint32_t)n;
  uint32_t m = u * 0x9E3779B1u + 12345u;
  uint32_t s = (m >> 7) | (m << 25);
  uint32_t x = (s ^ (u << 3)) & 0x00ff00ffu;
  uint32_t p = __byte_perm(m, s, 0x3120);
  uint32_t c = __popc(m) + __brev(s) + __clz(m | 1);
  uint32_t sel = (int)u > 100 ? m : s;
  uint64_t w = (uint64_t)u * 0x9E3779B9u;
  uint32_t bm = (1u << (u & 31)) - 1u;
  int32_t sh = (int32_t)m >> (u & 31);
  uint32_t t = (u < 50u) ? 7u : 9u;
  int64_t q = (int64_t)(int32_t)m * (int32_t)u;
  uint32_t big = (int64_t)w > q;
  if (i < 256) o[i] = a[i] + m + x + p + c + sel + (uint32_t)(w >> 32) + bm + (uint32_t)sh + t + (uint32_t)(q >> 32) + big;
}"""
    more = r"""
K(NAME) {
  int i = TID; uint32_t u = (uint32_t)n;
  uint32_t nb = ((u >> 3) & 31) + 1;
  uint32_t z = (uint32_t)(((int32_t)(u << (32 - nb))) >> (32 - nb));
  uint32_t h = ((1u << ((u >> 5) & 31)) - 1u) << (u & 31);
  bool p1 = (u & 1) != 0, p2 = u > 0x80000000u, p3 = (int)u < 0x40000000;
  uint32_t f = (p1 && p2) || (p3 && !p1) ? 3u : 5u;
  if (i < 256) o[i] = a[i] + z + h + f;
}"""
    for j, n in enumerate((977, 40, -5, 0x7FFFFFFF)):
        case(
            name=f"uni_alu_{j}",
            style="integer",
            group="shader_u",
            heavy=j > 0,
            src=alu.replace("NAME", f"uni_alu_{j}"),
            inputs=lambda r, n=n: Inputs(u32(r, threads), np.zeros(1, np.uint32), n, threads, np.zeros(threads, np.uint32)),
            ref=_uni_alu_ref,
        )
    for j, n in enumerate((1010, -77, 0x40000003, 0x80000041)):
        case(
            name=f"uni_more_{j}",
            style="integer",
            group="shader_u",
            heavy=j > 0,
            src=more.replace("NAME", f"uni_more_{j}"),
            inputs=lambda r, n=n: Inputs(
                u32(r, threads), np.zeros(1, np.uint32), n if n < 2**31 else n - 2**32, threads, np.zeros(threads, np.uint32)
            ),
            ref=_uni_more_ref,
        )
    case(
        name="vec_alu_forms",
        style="integer",
        group="shader_u",
        src=r"""
K(vec_alu_forms) {
  // sm_70+ PTX (bmsk, dp4a, cvt.pack, szext) in the sm_86 build, the same in C for sm_53 (whose
  // PTX nvcc writes for compute_75)
  int i = TID; if (i >= n) return;
  uint32_t x = a[i], y = b[i], r0, r1, r2, r3, r4, r5, r6, r7, r8, r9;
  asm("cvt.sat.s8.s32 %0, %1;" : "=r"(r0) : "r"(x));
  asm("{.reg .s16 t; cvt.sat.s16.s32 t, %1; cvt.s32.s16 %0, t;}" : "=r"(r1) : "r"(y));
#if __CUDA_ARCH__ >= 800
  asm("bmsk.clamp.b32 %0, %1, %2;" : "=r"(r2) : "r"(x & 63), "r"(y & 63));
  asm("dp4a.s32.u32 %0, %1, %2, %3;" : "=r"(r3) : "r"(x), "r"(y), "r"(r0));
  asm("cvt.pack.sat.u8.s32.b32 %0, %1, %2, %3;" : "=r"(r4) : "r"(x), "r"(y), "r"(r1));
  asm("szext.wrap.s32 %0, %1, %2;" : "=r"(r6) : "r"(x), "r"(y));
  asm("dp4a.u32.s32 %0, %1, %2, %3;" : "=r"(r9) : "r"(x), "r"(y), "r"(r1));
#else
  { uint32_t p = x & 63, w = y & 63, a1 = p & 31, b1 = w & 31, s = a1 + b1;
    uint32_t m0 = p >= 32 ? 0u : ~0u << a1;
    uint32_t m1 = (s >= 32 || p >= 32 || w >= 32) ? 0u : (b1 == 0 ? ~0u : ~0u << s);
    r2 = m0 & ~m1; }
  r3 = r0; r9 = r1;
  for (int k = 0; k < 4; k++) {
    r3 += (int)(int8_t)(x >> (8 * k)) * (int)(uint8_t)(y >> (8 * k));
    r9 += (int)(uint8_t)(x >> (8 * k)) * (int)(int8_t)(y >> (8 * k));
  }
  { int p = (int)x, q = (int)y; p = p < 0 ? 0 : p > 255 ? 255 : p; q = q < 0 ? 0 : q > 255 ? 255 : q;
    r4 = (r1 << 16) | ((uint32_t)p << 8) | (uint32_t)q; }
  { uint32_t b1 = y & 31; r6 = b1 == 0 ? 0u : (uint32_t)((int32_t)(x << (32 - b1)) >> (32 - b1)); }
#endif
  r5 = __vsadu4(x, y);
  r7 = __vsads4(x, y);
  asm("set.lt.f32.f32 %0, %1, %2;" : "=r"(r8) : "f"(__uint_as_float(x)), "f"(__uint_as_float(y)));
  o[i] = r0 + 3*r1 + 5*r2 + 7*r3 + 11*r4 + 13*r5 + 17*r6 + 19*r7 + 23*r8 + 29*r9;
}""",
        inputs=lambda r: _vec_alu_inputs(r, Inputs),
        ref=_vec_alu_ref,
    )
    case(
        name="fcmp_pset_mad",
        style="integer",
        group="shader_u",
        src=r"""
K(fcmp_pset_mad) {
  int i = TID; if (i >= n) return;
  uint32_t x = a[i], y = b[i], r0, r1, r2, r3;
  asm("slct.f32.f32 %0, %1, %2, %3;" : "=r"(r0) : "f"(__uint_as_float(x)), "f"(__uint_as_float(y)), "f"(__uint_as_float(x ^ y)));
  asm("{.reg .pred p, q, r; setp.lt.s32 p, %1, 0; setp.gt.u32 q, %2, 0x40000000; xor.pred r, p, q; selp.u32 %0, -1, 0, r;}"
      : "=r"(r1) : "r"(x), "r"(y));
  asm("mad.hi.s32 %0, %1, 0x12345678, %2;" : "=r"(r2) : "r"(x), "r"(y));
  asm("mad.lo.u32 %0, %1, 0x9E3779B9, %2;" : "=r"(r3) : "r"(x), "r"(y));
  o[i] = r0 + 3 * r1 + 5 * r2 + 7 * r3;
}""",
        inputs=lambda r: _vec_alu_inputs(r, Inputs),
        ref=_fcmp_pset_mad_ref,
    )


def _fcmp_pset_mad_ref(x) -> np.ndarray:
    """PTX slct.f32.f32 (c >= 0 ? a : b, false for a NaN c), a predicate xor as a word, mad.hi
    / mad.lo with an immediate."""
    out = []
    for i in range(x.n):
        a, b = int(x.a[i]), int(x.b[i])
        c = np.uint32(a ^ b).view(np.float32)
        r0 = a if c >= 0 else b
        r1 = M32 if (_s32v(a) < 0) != (b > 0x40000000) else 0
        r2 = (((_s32v(a) * 0x12345678) >> 32) + b) & M32
        r3 = (a * 0x9E3779B9 + b) & M32
        out.append((r0 + 3 * r1 + 5 * r2 + 7 * r3) & M32)
    return np.array(out, np.uint32)


def _uni_wide_ref(x) -> np.ndarray:
    """UIADD3's carry into a uniform predicate, ULEA.HI.X.SX32 reading it, UIMAD.WIDE.U32."""
    u, m64 = x.n & M32, (1 << 64) - 1
    v = (u * 9 + (u >> 3) * 8) & M32
    w = ((_s32v(u << 20) & m64) + ((u >> 12) << 4)) & m64
    z = ((u << 5) + 0x123456789 * (u & 3)) & m64
    acc = v + (w & M32) + (w >> 32) + (z & M32) + (z >> 32)
    return ((x.a.astype(np.uint64) + acc) & M32).astype(np.uint32)


def define_shader_u_wide(case, Inputs) -> None:
    src = r"""
K(NAME) {
  int i = TID; uint32_t u = (uint32_t)n;
  uint32_t v = u * 9u + (u >> 3) * 8u;
  uint64_t w = (uint64_t)(int64_t)(int32_t)(u << 20) + ((uint64_t)(u >> 12) << 4);
  uint64_t z = ((uint64_t)u << 5) + 0x123456789ull * (u & 3);
  if (i < 256) o[i] = a[i] + v + (uint32_t)w + (uint32_t)(w >> 32) + (uint32_t)z + (uint32_t)(z >> 32);
}"""
    for j, n in enumerate((0x7FF, -1, 0x12345, 0x80000)):
        case(
            name=f"uni_wide_{j}",
            style="integer",
            group="shader_u",
            src=src.replace("NAME", f"uni_wide_{j}"),
            inputs=lambda r, n=n: Inputs(u32(r, 256), np.zeros(1, np.uint32), n, 256, np.zeros(256, np.uint32)),
            ref=_uni_wide_ref,
        )


# --- shader-u2 (issue 31): F2IP (ptxas writes F2IP.U8.F32.NTZ d, RZ, b, RZ for PTX
# cvt.rni.sat.u8.f32 on sm_86; sm_53 has its own F2I form).  Reference: the PTX ISA's cvt
# (round to nearest even, saturate to 0..255, NaN -> 0), per element in numpy.


def _f2u8_rn(x: np.ndarray) -> np.ndarray:
    f = x.view(np.float32).astype(np.float64)
    r = np.where(np.isnan(f), 0.0, np.clip(np.rint(np.nan_to_num(f, nan=0.0, posinf=1e9, neginf=-1e9)), 0, 255))
    return r.astype(np.uint32)


def _f2ip_ref(x) -> np.ndarray:
    p, q = _f2u8_rn(x.a[: x.n]), _f2u8_rn(x.b[: x.n])
    return (p | q << 8 | (p ^ q) << 16).astype(np.uint32)


def _f2ip_inputs(r, Inputs):
    n = 256
    a = (r.standard_normal(n) * 140.0 + 100.0).astype(np.float32)
    b = (np.round(r.standard_normal(n) * 100.0) + 0.5).astype(np.float32)  # ties: even wins
    edge = np.array(
        [0.5, 1.5, 2.5, 254.5, 255.5, 256.0, -0.5, -0.0, 1e-40, -1e-40, np.inf, -np.inf, np.nan, 3e9, -3e9, 127.49999],
        np.float32,
    )
    a[: len(edge)] = edge
    b[len(edge) : 2 * len(edge)] = edge
    return Inputs(a.view(np.uint32), b.view(np.uint32), n, n, np.zeros(n, np.uint32))


def define_shader_u2(case, Inputs) -> None:
    case(
        name="f2ip_u8",
        style="integer",
        group="shader_u",
        src=r"""
K(f2ip_u8) {
  int i = TID; if (i >= n) return;
  unsigned short p, q;
  asm("cvt.rni.sat.u8.f32 %0, %1;" : "=h"(p) : "f"(__uint_as_float(a[i])));
  asm("cvt.rni.sat.u8.f32 %0, %1;" : "=h"(q) : "f"(__uint_as_float(b[i])));
  o[i] = (uint32_t)p | ((uint32_t)q << 8) | ((uint32_t)(p ^ q) << 16);
}""",
        inputs=lambda r: _f2ip_inputs(r, Inputs),
        ref=_f2ip_ref,
    )
    case(
        name="f2i_narrow",
        style="integer",
        group="shader_u",
        src=r"""
K(f2i_narrow) {
  int i = TID; if (i >= n) return;
  float x = __uint_as_float(a[i]), y = __uint_as_float(b[i]);
  short p, q, s; unsigned short t;
  asm("cvt.rni.sat.s8.f32 %0, %1;" : "=h"(p) : "f"(x));
  asm("cvt.rzi.sat.s8.f32 %0, %1;" : "=h"(q) : "f"(y));
  asm("cvt.rmi.sat.s16.f32 %0, %1;" : "=h"(s) : "f"(x * 300.0f));
  asm("cvt.rpi.sat.u16.f32 %0, %1;" : "=h"(t) : "f"(y * 300.0f));
  // (combined by shifts and xor: a sum of small products becomes dp2a, which sm_53 lacks)
  o[i] = (uint32_t)(int)p ^ ((uint32_t)(int)q << 8) ^ ((uint32_t)(int)s << 13) ^ ((uint32_t)t << 17);
}""",
        inputs=lambda r: _f2ip_inputs(r, Inputs),
        ref=_f2i_narrow_ref,
    )


def _cvt_sat(f: np.ndarray, rnd, lo: int, hi: int) -> np.ndarray:
    nan = np.isnan(f)
    r = np.clip(rnd(np.nan_to_num(f, nan=0.0, posinf=1e12, neginf=-1e12)), lo, hi)
    return np.where(nan, 0, r).astype(np.int64)


def _f2i_narrow_ref(x) -> np.ndarray:
    f = x.a[: x.n].view(np.float32)
    g = x.b[: x.n].view(np.float32)
    with np.errstate(all="ignore"):
        fs, gs = (f * np.float32(300.0)).astype(np.float64), (g * np.float32(300.0)).astype(np.float64)
    p = _cvt_sat(f.astype(np.float64), np.rint, -128, 127)
    q = _cvt_sat(g.astype(np.float64), np.trunc, -128, 127)
    s = _cvt_sat(fs, np.floor, -32768, 32767)
    t = _cvt_sat(gs, np.ceil, 0, 65535)
    return ((p & M32) ^ ((q << 8) & M32) ^ ((s << 13) & M32) ^ ((t << 17) & M32)).astype(np.uint32)


# shader-u2: IDP.2A (PTX dp2a.lo/.hi; nvcc 13 also writes it for a C sum of two 16-bit x 8-bit
# products).  sm_53's build (PTX for compute_75, no dp2a on sm_53) computes the same with mul24.
def _dp2a(a: int, b: int, c: int, hi: bool, sa: bool, sb: bool) -> int:
    ha = [(a >> 16 * k) & 0xFFFF for k in range(2)]
    bb = [(b >> 8 * k) & 0xFF for k in range(4)][2 if hi else 0 :][:2]
    ha = [v - 0x10000 if sa and v & 0x8000 else v for v in ha]
    bb = [v - 0x100 if sb and v & 0x80 else v for v in bb]
    return (c + ha[0] * bb[0] + ha[1] * bb[1]) & M32


def _idp2a_ref(x) -> np.ndarray:
    out = []
    for i in range(x.n):
        a, b = int(x.a[i]), int(x.b[i])
        r0 = _dp2a(a, b, a ^ b, False, True, False)
        r1 = _dp2a(a, b, a, True, False, True)
        r2 = _dp2a(b, a, 7, True, True, True)
        s, t = (a & 0xFFFF) - (0x10000 if a & 0x8000 else 0), (a >> 16) & 0xFFFF
        t = t - 0x10000 if t & 0x8000 else t
        r3 = (s * 3 + t * 5 + ((b & 0xFF) - (0x100 if b & 0x80 else 0))) & M32
        out.append((r0 + 3 * r1 + 5 * r2 + 7 * r3) & M32)
    return np.array(out, np.uint32)


def define_shader_u2_idp(case, Inputs) -> None:
    case(
        name="idp2a",
        style="integer",
        group="shader_u",
        src=r"""
// (mul24 through asm: nvcc would turn the products back into dp2a, which sm_53 lacks)
static __device__ int m24_u2(int p, int q) { int r; asm("mul24.lo.s32 %0, %1, %2;" : "=r"(r) : "r"(p), "r"(q)); return r; }
K(idp2a) {
  int i = TID; if (i >= n) return;
  uint32_t x = a[i], y = b[i], r0, r1, r2, r3;
  short s = (short)x, t = (short)(x >> 16); signed char u = (signed char)y;
#if __CUDA_ARCH__ >= 800
  asm("dp2a.lo.s32.u32 %0, %1, %2, %3;" : "=r"(r0) : "r"(x), "r"(y), "r"(x ^ y));
  asm("dp2a.hi.u32.s32 %0, %1, %2, %3;" : "=r"(r1) : "r"(x), "r"(y), "r"(x));
  asm("dp2a.hi.s32.s32 %0, %1, %2, %3;" : "=r"(r2) : "r"(y), "r"(x), "r"(7));
  r3 = (uint32_t)(s * 3 + t * 5 + u);
#else
  r0 = (x ^ y) + m24_u2((short)x, (unsigned char)y) + m24_u2((short)(x >> 16), (unsigned char)(y >> 8));
  r1 = x + m24_u2((unsigned short)x, (signed char)(y >> 16)) + m24_u2((int)(x >> 16), (signed char)(y >> 24));
  r2 = 7 + m24_u2((short)y, (signed char)(x >> 16)) + m24_u2((short)(y >> 16), (signed char)(x >> 24));
  r3 = (uint32_t)(m24_u2(s, 3) + m24_u2(t, 5) + (int)u);
#endif
  o[i] = r0 + 3 * r1 + 5 * r2 + 7 * r3;
}""",
        inputs=lambda r: _vec_alu_inputs(r, Inputs),
        ref=_idp2a_ref,
    )
