"""SM53's half instructions with immediate operands on lavapipe against an exact reference
(issue 31): the *2_32I rows (a full half pair), the immediate forms HADD2/HMUL2/HFMA2 (each half
cut to bits 6..14 and a sign) and the constant-bank forms (an f32 in both lanes), with
operand swizzles, negation and |x|, on halves drawn from every bit pattern (denormals,
infinities, overflow, ties).  The kernel is text assembled by ``sm53/assemble.py``; every line
printed back by nvdisasm 11.8 as written (checked when this test was written; the corpus tests
check ptxas's own words of these forms).  Reference: the nearest half of the exact value
(test_half's helpers)."""

from __future__ import annotations

import struct
from fractions import Fraction

import sm53_ab
from test_half import _exact, _inputs, _lanes, _op, _round, _same

# params: a 0x140, b 0x148, out 0x150, n 0x158, the f32 addend 0x15c
KERNEL = (
    sm53_ab.head(0x6)
    + """\
        HADD2_32I R12, R10, 1.5, -0.0999755859375
        HMUL2_32I R13, R10.H1_H1, 3, -2.75
        MOV R14, R11
        HFMA2_32I R14, R10, 0.5, 1.25, -R14
        HADD2 R15, -R10, 3, 0.5
        HMUL2 R16, |R10.H0_H0|, -2.5, 1.75
        HFMA2 R17, R10, 0.375, -4, R11.H0_H0
        HFMA2 R18, R10.H1_H1, R11, -c[0x0][0x15c]
        HADD2_32I R19, -R11, 0.000732421875, -65504
        STG.E.128 [R8], R12
        HFMA2 R20, R10.H0_H0, -c[0x0][0x15c], R11.H1_H1
        HADD2 R21, |R11.H1_H1|, -0.5, 2
        HADD2 R22, R10.H1_H1, -|c[0x0][0x15c]|
        HMUL2 R23, |R11|, -c[0x0][0x15c]
        STG.E.128 [R8+0x10], R16
        STG.E.128 [R8+0x20], R20
        EXIT
"""
)
# c[0x0][0x15c]: an f32 in both lanes (read as a half pair, 0x3FC00000 would be 0 and 1.9375);
# 1.5 is a half too, so no rounding of the operand to half is assumed either way
ADDEND = 1.5

F = Fraction


def _want(x: tuple, y: tuple) -> dict[int, list]:
    """Each output word's two lanes (lane 0 the low half) as the nearest half of the exact value."""
    add = lambda p, q: p + q  # noqa: E731
    mul = lambda p, q: p * q  # noqa: E731
    fma = lambda p, q, r: p * q + r  # noqa: E731
    return {
        0: [_op(add, x[0], F(-0.0999755859375)), _op(add, x[1], F(1.5))],
        1: [_op(mul, x[1], F(-2.75)), _op(mul, x[1], F(3))],
        2: [_op(fma, x[0], F(1.25), -y[0]), _op(fma, x[1], F(0.5), -y[1])],
        3: [_op(add, -x[0], F(0.5)), _op(add, -x[1], F(3))],
        4: [_op(mul, abs(x[0]), F(1.75)), _op(mul, abs(x[0]), F(-2.5))],
        5: [_op(fma, x[0], F(-4), y[0]), _op(fma, x[1], F(0.375), y[0])],
        6: [_op(fma, x[1], y[0], F(-ADDEND)), _op(fma, x[1], y[1], F(-ADDEND))],
        7: [_op(add, -y[0], F(-65504)), _op(add, -y[1], F(0.000732421875))],
        8: [_op(fma, x[0], F(-ADDEND), y[1]), _op(fma, x[0], F(-ADDEND), y[1])],
        9: [_op(add, abs(y[1]), F(2)), _op(add, abs(y[1]), F(-0.5))],
        10: [_op(add, x[1], F(-ADDEND)), _op(add, x[1], F(-ADDEND))],
        11: [_op(mul, abs(y[0]), F(-ADDEND)), _op(mul, abs(y[1]), F(-ADDEND))],
    }


def test_half_immediates_match_the_exact_reference(compute_device):
    n = 2048
    a, b, _ = _inputs(n)
    out = sm53_ab.run(compute_device, KERNEL, [a, b], 16, struct.pack("<f", ADDEND))
    bad = []
    for i in range(n):
        (a0, a1), (b0, b1) = _lanes(int(a[i])), _lanes(int(b[i]))
        for word, lanes in _want((_exact(a0), _exact(a1)), (_exact(b0), _exact(b1))).items():
            want = [_round(*v) for v in lanes]
            got = _lanes(int(out[i, word]))
            if not all(_same(g, w) for g, w in zip(got, want)):
                bad.append((i, word, hex(a[i]), hex(b[i]), [hex(g) for g in got], [hex(w) for w in want]))
    assert not bad, f"{len(bad)} results differ, first: {bad[:5]}"


def test_kernel_text_decodes_back():
    """Every line of the kernel assembles to a word that prints as the line (the immediates'
    cut halves and the constant-bank form included)."""
    got, lines = sm53_ab.printed_back(KERNEL)
    assert got == lines
