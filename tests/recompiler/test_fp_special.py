"""FPCR as a guest program sets it: ``MSR FPCR, X0`` then one FP instruction, lifted as one
function and compared with Unicorn 2.1.4 (the oracle) on a fixed grid of special operands.

``test_unicorn.py`` draws FPCR values too, but there the harness loads the case's FPCR into
the host before the call; here the function starts with FPCR = 0 and only the lifted
``MSR FPCR`` can change how the following instruction rounds, flushes and makes NaNs.  The
grid: every rounding mode (RN/RP/RM/RZ) with FZ and DN off and on, times operands that hit
the rules (±0, ±inf, quiet and signalling NaNs with payloads, denormals, halfway cases,
values at the edges of float/double and integer conversions).  A second grid runs the forms of
issue #7's FP gaps (estimates and steps, half precision conversions and arithmetic, FCVTXN,
FJCVTZS, FRINT32/64) under RMode x FZ x DN x (FZ16 and AHP), with half-precision special
operands for the forms that read halves.
"""

from __future__ import annotations

import itertools
import random
import re
import sys
from pathlib import Path

import pytest

pytest.importorskip("unicorn", reason="unicorn (a test dependency in pyproject.toml) is not installed")

if str(Path(__file__).resolve().parent) not in sys.path:
    sys.path.insert(0, str(Path(__file__).resolve().parent))
import unicorn_harness as H  # noqa: E402
from recompiler.decode import decode  # noqa: E402

MSR_FPCR_X0 = 0xD51B4400  # msr fpcr, x0
MRS_X1_FPCR = 0xD53B4401  # mrs x1, fpcr
# The sequence ends in RET: it ends Unicorn's translation block, which would otherwise go on
# decoding the random bytes after it (QEMU 5.0 aborts on some FP16 encodings it meets there).
RET = 0xD65F03C0

# The FP instructions under test (operands: s1/d1, s2/d2, s3/d3; result in s0/d0 or x0).
OPS = {
    "fadd s0, s1, s2": 0x1E222820,
    "fsub d0, d1, d2": 0x1E623820,
    "fmul s0, s1, s2": 0x1E220820,
    "fdiv d0, d1, d2": 0x1E621820,
    "fmadd s0, s1, s2, s3": 0x1F020C20,
    "fnmsub d0, d1, d2, d3": 0x1F628C20,
    "fsqrt d0, d1": 0x1E61C020,
    "fcvt s0, d1": 0x1E624020,
    "fcvt d0, s1": 0x1E22C020,
    "frintx d0, d1": 0x1E674020,
    "frinti s0, s1": 0x1E27C020,
    "frintn d0, d1": 0x1E644020,
    "scvtf s0, x1": 0x9E220020,
    "ucvtf d0, x1": 0x9E630020,
    "fcvtns x0, d1": 0x9E600020,
    "fcvtzs w0, s1": 0x1E380020,
    "fmaxnm d0, d1, d2": 0x1E626820,
    "fmin s0, s1, s2": 0x1E225820,
    "fadd v0.4s, v1.4s, v2.4s": 0x4E22D420,
    "fmul v0.2d, v1.2d, v2.2d": 0x6E62DC20,
}
FPCRS = [(rmode << 22) | (fz << 24) | (dn << 25) for dn, fz, rmode in itertools.product((0, 1), (0, 1), range(4))]
# The FP gaps of issue #7 (lift/fp_recip.py, fp_half.py, fp_round.py, fp_f16.py), on a grid that
# adds FZ16 and AHP (which only half precision reads) to RMode x FZ x DN.
GAP_OPS = {
    "frecpe s0, s1": 0x5EA1D820,
    "frsqrte d0, d1": 0x7EE1D820,
    "frecpe v0.2d, v1.2d": 0x4EE1D820,
    "ursqrte v0.4s, v1.4s": 0x6EA1C820,
    "frecps v0.4s, v1.4s, v2.4s": 0x4E22FC20,
    "frsqrts d0, d1, d2": 0x5EE2FC20,
    "frecpx d0, d1": 0x5EE1F820,
    "fcvtn v0.4h, v1.4s": 0x0E216820,
    "fcvtl v0.4s, v1.4h": 0x0E217820,
    "fcvtxn s0, d1": 0x7E616820,
    "fcvtxn v0.2s, v1.2d": 0x2E616820,
    "fcvt h0, d1": 0x1E63C020,
    "fcvt s0, h1": 0x1EE24020,
    "fjcvtzs w0, d1": 0x1E7E0020,
    "frint32x s0, s1": 0x1E28C020,
    "frint64z d0, d1": 0x1E694020,
    "fadd h0, h1, h2": 0x1EE22820,
    "fmadd h0, h1, h2, h3": 0x1FC20C20,
    "fdiv h0, h1, h2": 0x1EE21820,
    "fsqrt h0, h1": 0x1EE1C020,
    "fmaxnm h0, h1, h2": 0x1EE26820,
    "scvtf h0, w1": 0x1EE20020,
}
# FP -> integer conversions (encodings checked with capstone's disassembly)
CVT_OPS = {
    "fcvtzs w0, d1": 0x1E780020,
    "fcvtzs x0, d1": 0x9E780020,
    "fcvtzu x0, s1": 0x9E390020,
    "fcvtms w0, d1": 0x1E700020,
    "fcvtzu v0.4s, v1.4s": 0x6EA1B820,
    "fcvtzs v0.2d, v1.2d": 0x4EE1B820,
}
GAP_FPCRS = [f | (x << 19) | (x << 26) for f in FPCRS for x in (0, 1)]

F32 = [
    0x00000000,
    0x80000000,
    0x3F800000,
    0x3FC00000,
    0xC0200000,
    0x7F800000,
    0xFF800000,
    0x7FC00000,
    0xFFC12345,
    0x7F800001,
    0xFFA00F00,
    0x00000001,
    0x807FFFFF,
    0x00800000,
    0x7F7FFFFF,
    0x3EAAAAAB,
    0x4F000000,
    0xDF000000,
    0x4B400001,
    0x33800000,
    # FP -> integer boundaries (lifted_fp.h NX_FCVT_*: where one host conversion hands over to
    # the saturating path): -2^31, 2^32, 2^64, -0.5
    0xCF000000,
    0x4F800000,
    0x5F800000,
    0xBF000000,
]
F64 = [
    0x0000000000000000,
    0x8000000000000000,
    0x3FF0000000000000,
    0x3FF8000000000000,
    0xC004000000000000,
    0x7FF0000000000000,
    0xFFF0000000000000,
    0x7FF8000000000000,
    0xFFF8000000012345,
    0x7FF0000000000001,
    0xFFF4000000000F00,
    0x0000000000000001,
    0x800FFFFFFFFFFFFF,
    0x0010000000000000,
    0x7FEFFFFFFFFFFFFF,
    0x3FD5555555555555,
    0x43E0000000000000,
    0xC3E0000000000001,
    0x4330000000000001,
    0x47EFFFFFF0000000,
    0x380FFFFFF0000000,
    0x36A8000000000000,
    0x3FF0000030000000,
    # FP -> integer boundaries: 2^31, -2^31, -2^31 - 1, 2^31 - 0.5, 2^32 - 0.5, 2^32, -0.5, -1, 2^64
    0x41E0000000000000,
    0xC1E0000000000000,
    0xC1E0000000200000,
    0x41DFFFFFFFE00000,
    0x41EFFFFFFFF00000,
    0x41F0000000000000,
    0xBFE0000000000000,
    0xBFF0000000000000,
    0x43F0000000000000,
]
F16 = [
    0x0000,
    0x8000,
    0x3C00,
    0xBC00,
    0x7BFF,
    0xFBFF,
    0x7C00,
    0xFC00,
    0x7E00,
    0xFE55,
    0x7D01,
    0xFC01,
    0x0001,
    0x83FF,
    0x0400,
    0x3555,
    0x7FFF,
    0x3801,
    0x1400,
    0x5BFF,
]
INTS = [
    0,
    1,
    (1 << 63) - 1,
    1 << 63,
    (1 << 64) - 1,
    (1 << 53) + 1,
    (1 << 24) + 1,
    0xFFFFFFFF00000001,
    0x8000000000000401,
    0x7FFFFFFFFFFFFDFF,
]


def _operands(rng: random.Random, half: float = 0.0) -> tuple[int, int, int, int]:
    """(v1, v2, v3, x1): every lane a special value (the widths mixed in one register; half
    precision lanes in a ``half`` share of the registers)."""

    def vec() -> int:
        r = rng.random()
        if r < half:
            return sum(rng.choice(F16) << (16 * k) for k in range(8))
        if r < half + (1 - half) / 2:
            return sum(rng.choice(F32) << (32 * k) for k in range(4))
        return rng.choice(F64) | (rng.choice(F64) << 64)

    return vec(), vec(), vec(), rng.choice(INTS)


def _cases(per_pair: int, seed: int, ops: dict[str, int] = OPS, fpcrs: list[int] = FPCRS) -> list[H.Case]:
    base = H.pick_base()
    bg = H.background(seed)
    cpu = H.UnicornCpu(base, bg, H.A.UC_CPU_ARM64_MAX)
    rng = random.Random(seed)
    cases = []
    for text, word in ops.items():
        half = 0.8 if re.search(r"\bh\d|\.4h", text) else 0.0
        for fpcr in fpcrs:
            for _ in range(per_pair):
                addr = base + H.CODE_OFF + 16 * len(cases)
                msr, op, mrs = decode(MSR_FPCR_X0, addr), decode(word, addr + 4), decode(MRS_X1_FPCR, addr + 8)
                ret = decode(RET, addr + 12)
                assert op.form is not None, text
                code, errors = H.lift_seq([msr, op, mrs, ret])
                assert not errors and "nx_unimplemented" not in code, f"{text}: {errors}"
                inp = H.make_input(op.form, op, rng, base)
                inp.fpcr = 0
                inp.pc = addr
                inp.v[1], inp.v[2], inp.v[3], x1 = _operands(rng, half)
                inp.x[0] = fpcr
                inp.x[1] = x1
                inp.x[30] = base + H.SCRATCH_SIZE + 0x1000  # RET leaves the scratch area
                res = cpu.run([MSR_FPCR_X0, word, MRS_X1_FPCR, RET], inp)
                assert res is not None, f"Unicorn rejects {text}"
                c = H.Case(len(cases), op.form, op, inp, code, prefix=[msr, op, mrs])
                c.insn = ret
                c.expected, c.exp_mem = res
                cases.append(c)
    return cases


def _check(per_pair: int, tmp_path, ops: dict[str, int] = OPS, fpcrs: list[int] = FPCRS) -> None:
    cases = _cases(per_pair, 7, ops, fpcrs)
    assert len(cases) == len(ops) * len(fpcrs) * per_pair
    base = H.pick_base()
    bad = []
    for c, diffs in H.run_cases(cases, base, H.background(7), tmp_path):
        if diffs:
            op = c.prefix[1]  # msr, op, mrs, then c.insn = ret
            bad.append(
                f"{c.describe()} with fpcr={c.inp.x[0]:#x}: {'; '.join(diffs)}\n"
                f"      inputs: v1={c.inp.v[1]:#034x} v2={c.inp.v[2]:#034x} v3={c.inp.v[3]:#034x} "
                f"x1={c.inp.x[1]:#x} ({op.word:#010x})"
            )
    print(
        f"\nFPCR special values: {len(cases)} cases ({len(ops)} instructions x {len(fpcrs)} FPCR values "
        f"x {per_pair}), {len(cases) - len(bad)} equal to Unicorn"
    )
    assert not bad, f"{len(bad)} of {len(cases)} differ:\n" + "\n".join(bad[:20])


def test_msr_fpcr_then_fp_instruction(tmp_path):
    _check(3, tmp_path)


@pytest.mark.heavy
def test_msr_fpcr_then_fp_instruction_heavy(tmp_path):
    _check(60, tmp_path)


def test_fp_to_integer_conversions_at_their_boundaries(tmp_path):
    """FCVT[ZM][SU] on the special and boundary values (NaN, infinities, +-2^31, 2^32, 2^63,
    2^64, -0.5, -1 ...), scalar and vector: the one-conversion path and the saturating one
    (lifted_fp.h ``NX_FCVT_*``) meet at these values."""
    _check(6, tmp_path, CVT_OPS, FPCRS[:4])


def test_msr_fpcr_then_fp_gap_instruction(tmp_path):
    """Estimates, steps, half precision, FCVTXN, FJCVTZS, FRINT32/64 under every FPCR."""
    _check(1, tmp_path, GAP_OPS, GAP_FPCRS)


@pytest.mark.heavy
def test_msr_fpcr_then_fp_gap_instruction_heavy(tmp_path):
    _check(10, tmp_path, GAP_OPS, GAP_FPCRS)


def test_fpcr_reaches_the_result(tmp_path):
    """The grid is not blind to FPCR: 1/3 rounds differently under RN, RP, RM and RZ, and a
    denormal sum is flushed under FZ (values Unicorn computes, checked here as plain facts)."""
    base = H.pick_base()
    cpu = H.UnicornCpu(base, H.background(7), H.A.UC_CPU_ARM64_MAX)
    rng = random.Random(1)
    op = decode(OPS["fdiv d0, d1, d2"], base + H.CODE_OFF)
    got = set()
    for rmode in range(4):
        inp = H.make_input(op.form, op, rng, base)
        inp.pc = base + H.CODE_OFF
        inp.x[0] = rmode << 22
        inp.v[1], inp.v[2] = 0x3FF0000000000000, 0x4008000000000000  # 1.0 / 3.0
        inp.x[30] = base + H.SCRATCH_SIZE + 0x1000
        out, _ = cpu.run([MSR_FPCR_X0, OPS["fdiv d0, d1, d2"], RET], inp)
        got.add(out.v[0])
    assert got == {0x3FD5555555555555, 0x3FD5555555555556}
