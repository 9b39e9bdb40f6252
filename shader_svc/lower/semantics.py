"""Instruction semantics both encodings share, as SPIR-V: FP comparisons (ordered/unordered as
NVIDIA), NaN-suppressing min/max, saturating float-to-integer conversion, integer comparisons,
LOP3-style truth tables, PRMT, FLO, .FTZ/.SAT, the exactly rounded FFMA and DFMA (no reliance
on a fused device Fma), MUFU's 64-bit halves and directed rounding of conversions."""

from __future__ import annotations

import struct

from shader_svc.isa.inst import Inst
from shader_svc.lower.base import FCMP_OPS, GLSL, ICMP_NAMES, LowerBase, TranslateError


class Semantics(LowerBase):
    """Mixin: the shared semantics (module docstring)."""

    def _prmt(self, a: int, sel: int, cv: int) -> int:
        """PRMT default mode (both ISAs): byte i of the result is byte sel[4i+2:4i] of {c, a}, replaced by its
        sign when sel bit 4i+3 is set.  In 32-bit words only (bit 2 of the index picks c or a),
        so that graphics stages, whose device has no Int64, translate it too."""
        u32, c, op = self.u32, self.c, self.op
        r = c(0)
        for i in range(4):
            nib = op("OpBitwiseAnd", u32, op("OpShiftRightLogical", u32, sel, c(4 * i)), c(0xF))
            high = op("OpINotEqual", self.bool, op("OpBitwiseAnd", u32, nib, c(4)), c(0))
            word = op("OpSelect", u32, high, cv, a)
            shift = op("OpIMul", u32, op("OpBitwiseAnd", u32, nib, c(3)), c(8))
            byte = op("OpBitwiseAnd", u32, op("OpShiftRightLogical", u32, word, shift), c(0xFF))
            neg = op("OpINotEqual", self.bool, op("OpBitwiseAnd", u32, byte, c(0x80)), c(0))
            rep = op("OpINotEqual", self.bool, op("OpBitwiseAnd", u32, nib, c(8)), c(0))
            byte = op("OpSelect", u32, rep, op("OpSelect", u32, neg, c(0xFF), c(0)), byte)
            r = op("OpBitwiseOr", u32, r, op("OpShiftLeftLogical", u32, byte, c(8 * i)))
        return r

    def _fma(self, a: int, b: int, c: int) -> int:
        """FFMA.RN: a*b+c with one rounding to f32.  GLSL's Fma may be unfused (lavapipe), so:
        the f64 product of two f32 is exact (48 significant bits); the f64 sum is rounded, its
        exact error comes from TwoSum; turning that sum into round-to-odd (an inexact sum with
        an even last bit moves one ulp toward the error) makes the final f64 -> f32 rounding
        exact, since 53 >= 2*24 + 2 (Boldo & Melquiond, "Emulation of FMA and correctly
        rounded sums: proved algorithms using rounding to odd")."""
        return self.op("OpFConvert", self.f32, self._fma_odd(a, b, c))

    def _fma_odd(self, a: int, b: int, c: int) -> int:
        """a*b+c of three f32 as the f64 rounded to odd (``_fma``): any rounding of it to f32
        is that rounding of the exact value."""
        m = self.m
        if self.f64 is None:  # only modules with an FFMA need the Float64 feature
            m.emit("cap", "OpCapability", m.E("Capability", "Float64"))
            self.f64 = m.type("OpTypeFloat", 64)
        f64 = self.f64
        a, b, c = (self.op("OpFConvert", f64, x) for x in (a, b, c))
        p = self.fop("OpFMul", f64, a, b)
        s = self.fop("OpFAdd", f64, p, c)
        bb = self.fop("OpFSub", f64, s, p)
        e = self.fop("OpFAdd", f64, self.fop("OpFSub", f64, p, self.fop("OpFSub", f64, s, bb)), self.fop("OpFSub", f64, c, bb))
        zero = m.const(f64, 0, 0)
        inexact = self.op("OpFOrdNotEqual", self.bool, e, zero)  # false for NaN/inf sums too
        bits = self.op("OpBitcast", self.u64, s)
        even = self.op("OpIEqual", self.bool, self.op("OpBitwiseAnd", self.u64, bits, self.c64(1)), self.c64(0))
        toward_up = self.op(
            "OpLogicalEqual",
            self.bool,
            self.op("OpFOrdLessThan", self.bool, e, zero),
            self.op("OpFOrdLessThan", self.bool, s, zero),
        )  # |s| grows when e has s's sign
        step = self.op("OpSelect", self.u64, toward_up, self.c64(1), self.c64(-1))
        fix = self.op("OpLogicalAnd", self.bool, inexact, even)
        odd = self.op("OpSelect", self.u64, fix, self.op("OpIAdd", self.u64, bits, step), bits)
        return self.op("OpBitcast", f64, odd)

    def _ftz32(self, x: int, on: int = 1) -> int:
        """.FTZ: a denormal f32 (exponent field 0) becomes a zero of its sign."""
        if not on:
            return x
        bits = self.op("OpBitcast", self.u32, x)
        den = self.op("OpIEqual", self.bool, self.op("OpBitwiseAnd", self.u32, bits, self.c(0x7F800000)), self.c(0))
        zero = self.op("OpBitcast", self.f32, self.op("OpBitwiseAnd", self.u32, bits, self.c(0x80000000)))
        return self.op("OpSelect", self.f32, den, zero, x)

    def _flo(self, x: int, signed: bool, sh: int) -> int:
        """FLO: the position of the most significant set bit (of the first bit unlike the sign
        for signed), 0xffffffff when there is none; .SH: 31 - that position (PTX bfind.shiftamt)."""
        r = self.op("OpExtInst", self.u32, self.glsl, 74 if signed else 75, x)
        if not sh:
            return r
        none = self.op("OpIEqual", self.bool, r, self.c(0xFFFFFFFF))
        return self.op("OpSelect", self.u32, none, r, self.op("OpISub", self.u32, self.c(31), r))

    def _bfe(self, a: int, b: int, signed: bool) -> int:
        """BFE (Maxwell) / PTX bfe: position = b[7:0], length = b[15:8]; PTX bfe semantics (length 0 -> 0, the sign
        bit is the last one taken, or bit 31)."""
        u32, c, op = self.u32, self.c, self.op
        pos = op("OpBitwiseAnd", u32, b, c(0xFF))
        ln = op("OpBitwiseAnd", u32, op("OpShiftRightLogical", u32, b, c(8)), c(0xFF))
        posc = op("OpExtInst", u32, self.glsl, GLSL["UMin"], pos, c(31))
        shifted = op("OpShiftRightLogical", u32, a, posc)
        lnc = op("OpExtInst", u32, self.glsl, GLSL["UMin"], ln, c(32))
        mask = op(
            "OpSelect",
            u32,
            op("OpUGreaterThanEqual", self.bool, lnc, c(32)),
            c(0xFFFFFFFF),
            op(
                "OpISub",
                u32,
                op("OpShiftLeftLogical", u32, c(1), op("OpExtInst", u32, self.glsl, GLSL["UMin"], lnc, c(31))),
                c(1),
            ),
        )
        val = op("OpBitwiseAnd", u32, shifted, mask)
        val = op("OpSelect", u32, op("OpUGreaterThanEqual", self.bool, pos, c(32)), c(0), val)
        if signed:
            last = op("OpExtInst", u32, self.glsl, GLSL["UMin"], op("OpISub", u32, op("OpIAdd", u32, pos, ln), c(1)), c(31))
            sign = op("OpINotEqual", self.bool, op("OpBitwiseAnd", u32, op("OpShiftRightLogical", u32, a, last), c(1)), c(0))
            val = op("OpSelect", u32, sign, op("OpBitwiseOr", u32, val, op("OpNot", u32, mask)), val)
        return op("OpSelect", u32, op("OpIEqual", self.bool, ln, c(0)), c(0), val)

    def _bfi(self, a: int, b: int, base: int) -> int:
        """BFI (Maxwell) / PTX bfi: insert a's low bits into ``base`` at b[7:0], length b[15:8] (clamped to the word)."""
        u32, c, op = self.u32, self.c, self.op
        k = [self.m.const_values.get(v) for v in (a, b, base)]
        if all(v is not None and isinstance(v[1], int) for v in k):
            # constants (shader-video): folded here, so that a value built by BFIs of constants
            # - ptxas -G's TXD .AOFFI offsets word, from c[0x2] - stays a constant operand
            x, y, z = (v[1] & 0xFFFFFFFF for v in k)
            p, n = y & 0xFF, (y >> 8) & 0xFF
            if p >= 32:
                return c(z)
            mask = ((1 << min(n, 32 - p)) - 1) << p
            return c((z & ~mask | (x << p) & mask) & 0xFFFFFFFF)
        pos = op("OpBitwiseAnd", u32, b, c(0xFF))
        ln = op("OpBitwiseAnd", u32, op("OpShiftRightLogical", u32, b, c(8)), c(0xFF))
        posc = op("OpExtInst", u32, self.glsl, GLSL["UMin"], pos, c(32))
        lnc = op("OpExtInst", u32, self.glsl, GLSL["UMin"], ln, op("OpISub", u32, c(32), posc))
        r = op("OpBitFieldInsert", u32, base, a, op("OpExtInst", u32, self.glsl, GLSL["UMin"], posc, c(31)), lnc)
        return op("OpSelect", u32, op("OpUGreaterThanEqual", self.bool, pos, c(32)), base, r)

    def _mufu64h(self, o: int, hi: int) -> int:
        """MUFU.RCP64H (6) / RSQ64H (7): the high word of 1/x (1/sqrt(x)) for the double whose
        high word is ``hi`` (low word 0); the compilers' Newton steps (DFMA) refine it."""
        f64 = self.f64t
        x = self.op("OpBitcast", f64, self.join64(self.c(0), hi))
        if o == 6:
            r = self.op("OpFDiv", f64, self.m.const(f64, 0, 0x3FF00000), x)
        else:
            r = self.op("OpExtInst", f64, self.glsl, 32, x)
        return self.op(
            "OpUConvert", self.u32, self.op("OpShiftRightLogical", self.u64, self.op("OpBitcast", self.u64, r), self.c64(32))
        )

    def _sat32(self, x: int) -> int:
        """.SAT: clamped to [+0, 1]; NaN (and -0) give +0."""
        one, zero = self.m.const(self.f32, 0x3F800000), self.m.const(self.f32, 0)
        r = self.op("OpSelect", self.f32, self.op("OpFOrdGreaterThan", self.bool, x, zero), x, zero)
        return self.op("OpSelect", self.f32, self.op("OpFOrdGreaterThanEqual", self.bool, x, one), one, r)

    # --- semantics both encodings share ------------------------------------------------------
    def _f2i_sat(self, x: int, rnd: str, signed: bool) -> int:
        """Round ``x`` (GLSL.std.450 ``rnd``), then convert saturating to the 32-bit range; NaN
        gives 0 (SPIR-V leaves out-of-range conversions undefined, NVIDIA saturates)."""
        r = self.op("OpExtInst", self.f32, self.glsl, GLSL[rnd], x)
        f = lambda v: self.m.const(self.f32, struct.unpack("<I", struct.pack("<f", v))[0])  # noqa: E731
        if signed:
            lo, hi, top, conv, sat = -2147483648.0, 2147483520.0, 2147483648.0, "OpConvertFToS", 0x7FFFFFFF
        else:
            lo, hi, top, conv, sat = 0.0, 4294967040.0, 4294967296.0, "OpConvertFToU", 0xFFFFFFFF
        c = self.op(
            "OpExtInst",
            self.f32,
            self.glsl,
            GLSL["NMax"],
            self.op("OpExtInst", self.f32, self.glsl, GLSL["NMin"], r, f(hi)),
            f(lo),
        )
        v = self.op(conv, self.u32, c)
        v = self.op("OpSelect", self.u32, self.op("OpFOrdGreaterThanEqual", self.bool, r, f(top)), self.c(sat), v)
        return self.op("OpSelect", self.u32, self.op("OpIsNan", self.bool, r), self.c(0), v)

    def _f2i_sat_f64(self, x: int, signed: bool, wide: bool) -> int:
        """The integral double ``x`` to a 32- or (``wide``) 64-bit integer, saturating at the
        range's ends, NaN -> 0: the bounds are exact in double, so the comparisons are too."""
        t = self.f64t
        bits = 64 if wide else 32
        lo, top = (-(2.0 ** (bits - 1)), 2.0 ** (bits - 1)) if signed else (0.0, 2.0**bits)
        dc = lambda v: self.m.const(t, *struct.unpack("<II", struct.pack("<d", v)))  # noqa: E731
        ity = self.u64 if wide else self.u32
        cst = self.c64 if wide else self.c
        sat_hi = (1 << (bits - 1)) - 1 if signed else (1 << bits) - 1
        sat_lo = 1 << (bits - 1) if signed else 0
        safe = self.op("OpExtInst", t, self.glsl, GLSL["NMax"], x, dc(lo))
        safe = self.op("OpSelect", t, self.op("OpFOrdGreaterThanEqual", self.bool, safe, dc(top)), dc(lo), safe)
        v = self.op("OpConvertFToS" if signed else "OpConvertFToU", ity, safe)
        v = self.op("OpSelect", ity, self.op("OpFOrdGreaterThanEqual", self.bool, x, dc(top)), cst(sat_hi), v)
        v = self.op("OpSelect", ity, self.op("OpFOrdLessThan", self.bool, x, dc(lo)), cst(sat_lo), v)
        return self.op("OpSelect", ity, self.op("OpIsNan", self.bool, x), cst(0), v)

    def _fcmp(self, cmp: int, a: int, b: int) -> int:
        """FSETP's 16 comparisons: ordered ones false on NaN, the U forms true, NUM/NAN, F/T."""
        if cmp in FCMP_OPS:
            return self.op(FCMP_OPS[cmp], self.bool, a, b)
        if cmp in (0, 15):
            return self.m.const_bool(cmp == 15)
        nan = self.op("OpLogicalOr", self.bool, self.op("OpIsNan", self.bool, a), self.op("OpIsNan", self.bool, b))
        return nan if cmp == 8 else self.op("OpLogicalNot", self.bool, nan)

    def _fminmax(self, a: int, b: int, p: int) -> int:
        """FMNMX: min when ``p`` holds, else max; NaN-suppressing like NVIDIA's (NMin/NMax
        return the other operand)."""
        lo = self.op("OpExtInst", self.f32, self.glsl, GLSL["NMin"], a, b)
        hi = self.op("OpExtInst", self.f32, self.glsl, GLSL["NMax"], a, b)
        return self.op("OpSelect", self.f32, p, lo, hi)

    def _icmp_op(self, cmp: int, unsigned: bool, a: int, b: int) -> int:
        """Integer comparison 0..7 (F, LT, EQ, LE, GT, NE, GE, T) as a bool."""
        name = ICMP_NAMES.get(cmp)
        if name is None:
            return self.m.const_bool(cmp == 7)
        op = {"Equal": "OpIEqual", "NotEqual": "OpINotEqual"}.get(name) or ("OpU" if unsigned else "OpS") + name
        return self.op(op, self.bool, a, b)

    def _lut(self, lut: int, a: int, b: int, c: int, ty: int, AND: str, OR: str, NOT: str, zero: int) -> int:
        nots = {}

        def lit(x, pos):
            if pos:
                return x
            if x not in nots:
                nots[x] = self.op(NOT, ty, x)
            return nots[x]

        r = None
        for i in range(8):
            if lut >> i & 1:
                t = self.op(AND, ty, self.op(AND, ty, lit(a, i & 4), lit(b, i & 2)), lit(c, i & 1))
                r = t if r is None else self.op(OR, ty, r, t)
        return zero if r is None else r

    # --- FP64 and directed rounding (both ISAs) ----------------------------------------------
    @property
    def f64t(self) -> int:
        if self.f64 is None:
            self.m.emit("cap", "OpCapability", self.m.E("Capability", "Float64"))
            self.f64 = self.m.type("OpTypeFloat", 64)
        return self.f64

    def _two_sum(self, a: int, b: int) -> tuple[int, int]:
        t, f = self.f64t, self.fop
        s = f("OpFAdd", t, a, b)
        bb = f("OpFSub", t, s, a)
        return s, f("OpFAdd", t, f("OpFSub", t, a, f("OpFSub", t, s, bb)), f("OpFSub", t, b, bb))

    def _split(self, a: int) -> tuple[int, int]:
        t, f = self.f64t, self.fop
        k = self.m.const(t, *struct.unpack("<II", struct.pack("<d", 134217729.0)))  # 2^27 + 1 (Veltkamp)
        c = f("OpFMul", t, k, a)
        hi = f("OpFSub", t, c, f("OpFSub", t, c, a))
        return hi, f("OpFSub", t, a, hi)

    def _unbig(self, a: int, b: int) -> tuple[int, int]:
        """(a, b) as (a * 2^-54, b * 2^54) where |a| >= 2^995 (shader-alu): the product is the
        same exactly, and a's Veltkamp split (a * (2^27 + 1)) no longer overflows.  Where b * 2^54
        overflows, a * b does too (|a * b| >= 2^1965) and the caller takes the plain sum."""
        t, f, op = self.f64t, self.fop, self.op
        big = op(
            "OpFOrdGreaterThanEqual",
            self.bool,
            op("OpExtInst", t, self.glsl, GLSL["FAbs"], a),
            self.m.const(t, *struct.unpack("<II", struct.pack("<d", 2.0**995))),
        )
        down = f("OpFMul", t, a, self.m.const(t, *struct.unpack("<II", struct.pack("<d", 2.0**-54))))
        up = f("OpFMul", t, b, self.m.const(t, *struct.unpack("<II", struct.pack("<d", 2.0**54))))
        return op("OpSelect", t, big, down, a), op("OpSelect", t, big, up, b)

    def _dfma(self, a: int, b: int, c: int) -> int:
        """DFMA.RN without relying on the device's Fma being fused: the exact product as
        ph + pl (Dekker's TwoProduct), then the correctly rounded sum of ph, pl, c by Boldo and
        Melquiond's algorithm (TwoSum twice, the small parts added with rounding to odd, one
        final rounding).  Exact for products and sums away from the overflow and denormal
        ranges (|a*b| > 2^-969; a factor of 2^995 or more is scaled by 2^-54 and the other by
        2^54 first); inf/NaN inputs take the plain product."""
        t, f = self.f64t, self.fop
        ph, th, o = self._dfma_parts(a, b, c)
        r = f("OpFAdd", t, th, o)
        finite = self.op(
            "OpLogicalNot",
            self.bool,
            self.op("OpLogicalOr", self.bool, self.op("OpIsInf", self.bool, ph), self.op("OpIsNan", self.bool, ph)),
        )
        plain = f("OpFAdd", t, ph, c)
        return self.op("OpSelect", t, finite, r, plain)

    def _dfma_parts(self, a: int, b: int, c: int) -> tuple[int, int, int]:
        """``_dfma``'s parts: (the rounded product ph, th, o) with a*b+c = th + o rounded to odd,
        so that any rounding of th + o is that rounding of the exact a*b+c."""
        t, f = self.f64t, self.fop
        ph = f("OpFMul", t, a, b)
        a, b = self._unbig(a, b)  # the same exact product, both factors below Veltkamp's limit
        b, a = self._unbig(b, a)
        ah, al = self._split(a)
        bh, bl = self._split(b)
        pl = f(
            "OpFAdd",
            t,
            f(
                "OpFAdd",
                t,
                f("OpFAdd", t, f("OpFSub", t, f("OpFMul", t, ah, bh), ph), f("OpFMul", t, ah, bl)),
                f("OpFMul", t, al, bh),
            ),
            f("OpFMul", t, al, bl),
        )
        uh, ul = self._two_sum(c, pl)
        th, tl = self._two_sum(uh, ph)
        v, e = self._two_sum(tl, ul)
        zero = self.m.const(t, 0, 0)
        bits = self.op("OpBitcast", self.u64, v)
        even = self.op("OpIEqual", self.bool, self.op("OpBitwiseAnd", self.u64, bits, self.c64(1)), self.c64(0))
        inexact = self.op("OpFOrdNotEqual", self.bool, e, zero)
        grow = self.op(
            "OpLogicalEqual",
            self.bool,
            self.op("OpFOrdLessThan", self.bool, e, zero),
            self.op("OpFOrdLessThan", self.bool, v, zero),
        )
        step = self.op("OpSelect", self.u64, grow, self.c64(1), self.c64(-1))
        odd = self.op(
            "OpSelect", self.u64, self.op("OpLogicalAnd", self.bool, inexact, even), self.op("OpIAdd", self.u64, bits, step), bits
        )
        return ph, th, self.op("OpBitcast", t, odd)

    def _directed(self, inst: Inst, f: int, x: int, signed: bool, is64: bool, rnd: int) -> int:
        """The round-to-nearest conversion ``f`` of the integer ``x`` moved one ulp where the
        mode (1 RM, 2 RP, 3 RZ) rounds the other way: compared exactly against ``x`` (through
        f64 for 32-bit sources, as an integer for unsigned 64-bit ones)."""
        u32, b = self.u32, self.bool
        if is64:
            if signed:
                raise TranslateError(f"{inst.text()}: directed rounding of S64 not translated", offset=inst.addr)
            top = self.m.const(self.f32, struct.unpack("<I", struct.pack("<f", 2.0**64))[0])
            fi = self.op("OpConvertFToU", self.u64, f)
            over = self.op("OpFOrdGreaterThanEqual", b, f, top)
            below = self.op("OpLogicalAnd", b, self.op("OpLogicalNot", b, over), self.op("OpULessThan", b, fi, x))
            above = self.op("OpLogicalOr", b, over, self.op("OpUGreaterThan", b, fi, x))
        else:
            e = self.op("OpConvertSToF" if signed else "OpConvertUToF", self.f64t, x)
            back = self.op("OpFConvert", self.f64t, f)
            below, above = self.op("OpFOrdLessThan", b, back, e), self.op("OpFOrdGreaterThan", b, back, e)
        bits = self.op("OpBitcast", u32, f)
        neg = self.op("OpSLessThan", b, bits, self.c(0))
        # toward +inf: +1 ulp of magnitude for positives, -1 for negatives; toward -inf the opposite
        up = self.op("OpSelect", u32, neg, self.op("OpISub", u32, bits, self.c(1)), self.op("OpIAdd", u32, bits, self.c(1)))
        dn = self.op("OpSelect", u32, neg, self.op("OpIAdd", u32, bits, self.c(1)), self.op("OpISub", u32, bits, self.c(1)))
        if rnd == 2:
            r = self.op("OpSelect", u32, below, up, bits)
        elif rnd == 1:
            r = self.op("OpSelect", u32, above, dn, bits)
        else:  # toward zero: shrink the magnitude when it grew
            grew = self.op("OpSelect", b, neg, below, above)
            r = self.op("OpSelect", u32, grew, self.op("OpISub", u32, bits, self.c(1)), bits)
        return self.op("OpBitcast", self.f32, r)
