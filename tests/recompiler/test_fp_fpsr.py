"""FPSR's cumulative exception flags as a guest reads them, compared with Unicorn 2.1.4.

Each case is a short guest function: ``MSR FPCR, X0; MSR FPSR, XZR; <FP instruction>;
MRS X1, FPSR; RET`` (and variants that clear or keep flags between two instructions), lifted
as one function and run on the same operands as Unicorn; every register is compared, so X1
carries the flags IOC/DZC/OFC/UFC/IXC the lifted code reports (from the host's MXCSR, see
``recompiler/lift/fp_fpsr.py``).  The grid: every rounding mode with DN off and on, FZ off
(with FZ on, x86 reports flushed results as inexact and Arm does not: a documented limit),
operands that raise each flag: inexact sums, overflow to infinity, underflow to zero, 0/0,
inf-inf, sqrt of a negative, x/0, signalling NaNs, conversions that round.
"""

from __future__ import annotations

import itertools
import random
import sys
from pathlib import Path

import pytest

pytest.importorskip("unicorn", reason="unicorn (a test dependency in pyproject.toml) is not installed")

if str(Path(__file__).resolve().parent) not in sys.path:
    sys.path.insert(0, str(Path(__file__).resolve().parent))
import unicorn_harness as H  # noqa: E402
from recompiler.decode import decode  # noqa: E402

MSR_FPCR_X0 = 0xD51B4400
MSR_FPSR_XZR = 0xD51B443F
MRS_X1_FPSR = 0xD53B4421
RET = 0xD65F03C0

OPS = {
    "fadd s0, s1, s2": 0x1E222820,
    "fsub d0, d1, d2": 0x1E623820,
    "fmul s0, s1, s2": 0x1E220820,
    "fmul d0, d1, d2": 0x1E620820,
    "fdiv d0, d1, d2": 0x1E621820,
    "fdiv s0, s1, s2": 0x1E221820,
    "fsqrt d0, d1": 0x1E61C020,
    "fsqrt s0, s1": 0x1E21C020,
    "fcvt s0, d1": 0x1E624020,
    "fcvt d0, s1": 0x1E22C020,
    "scvtf s0, x1": 0x9E220020,
    "scvtf d0, x1": 0x9E620020,
    "fadd v0.4s, v1.4s, v2.4s": 0x4E22D420,
    "fmul v0.2d, v1.2d, v2.2d": 0x6E62DC20,
    "fdiv v0.4s, v1.4s, v2.4s": 0x6E22FC20,
    "frintx d0, d1": 0x1E674020,
}
FPCRS = [(rmode << 22) | (dn << 25) for dn, rmode in itertools.product((0, 1), range(4))]

# operands that raise each flag, kept away from the one place x86 and Arm disagree without FZ
# (a result just below the smallest normal that rounds up to it: tiny before rounding for Arm,
# not tiny after rounding for x86)
F32 = [
    0x00000000,
    0x80000000,
    0x3F800000,
    0xBFC00000,
    0x40400000,
    0x3DCCCCCD,
    0x7149F2CA,
    0x8DA24260,
    0x7F7FFFFF,
    0x7F800000,
    0xFF800000,
    0x7FC00000,
    0x7F800001,
    0xFFA00F00,
    0x00000001,
    0x807FFFFF,
    0x0D800000,
    0x3EAAAAAB,
    0x4B800001,
]
F64 = [
    0x0000000000000000,
    0x8000000000000000,
    0x3FF0000000000000,
    0x3FB999999999999A,
    0x7E37E43C8800759C,
    0x01A56E1FC2F8F359,
    0x7FEFFFFFFFFFFFFF,
    0x7FF0000000000000,
    0xFFF0000000000000,
    0x7FF8000000000000,
    0x7FF0000000000001,
    0xFFF4000000000F00,
    0x0000000000000001,
    0x37D0000000000000,
    0x3FD5555555555555,
    0xC008000000000000,
    0x36A0000000000000,
    0x4330000000000001,
    0x47EFFFFFF0000000,
    0x4002000000000000,
]
INTS = [0, 1, (1 << 24) + 1, (1 << 53) + 1, (1 << 63) - 1, 1 << 63, 12345]


def _vec(rng: random.Random) -> int:
    if rng.random() < 0.5:
        return sum(rng.choice(F32) << (32 * k) for k in range(4))
    return rng.choice(F64) | (rng.choice(F64) << 64)


def _case(cpu, base: int, rng: random.Random, index: int, words: list[int], fpcr: int) -> H.Case:
    addr = base + H.CODE_OFF + 32 * index
    insns = [decode(w, addr + 4 * k) for k, w in enumerate(words)]
    code, errors = H.lift_seq(insns)
    assert not errors and "nx_unimplemented" not in code, f"{[hex(w) for w in words]}: {errors}"
    # the first FP instruction names the case (operand set-up, and no sysreg comparison of s->fpsr,
    # which holds only what MSR FPSR wrote: the flags live in the host until MRS reads them)
    op = next(i for i in insns if i.form.cls != "sysreg")
    inp = H.make_input(op.form, op, rng, base)
    inp.fpcr = 0
    inp.fpsr = 0
    inp.pc = addr
    inp.v[1], inp.v[2], inp.v[3] = _vec(rng), _vec(rng), _vec(rng)
    inp.x[0] = fpcr
    inp.x[1] = rng.choice(INTS)
    inp.x[30] = base + H.SCRATCH_SIZE + 0x1000  # RET leaves the scratch area
    res = cpu.run(words, inp)
    assert res is not None, f"Unicorn rejects {[hex(w) for w in words]}"
    c = H.Case(index, op.form, insns[-1], inp, code, prefix=insns[:-1])
    c.expected, c.exp_mem = res
    return c


def _check(cases: list[H.Case], seed: int, tmp_path) -> tuple[int, dict[str, int]]:
    bad = []
    raised = {name: 0 for name in ("IOC", "DZC", "OFC", "UFC", "IXC")}
    for c, diffs in H.run_cases(cases, H.pick_base(), H.background(seed), tmp_path):
        for bit, name in enumerate(raised):
            raised[name] += c.expected.x[1] >> bit & 1
        if diffs:
            bad.append(
                f"{c.describe()} with fpcr={c.inp.x[0]:#x}: {'; '.join(diffs)}\n"
                f"      inputs: v1={c.inp.v[1]:#034x} v2={c.inp.v[2]:#034x} x1={c.inp.x[1]:#x}"
            )
    assert not bad, f"{len(bad)} of {len(cases)} differ:\n" + "\n".join(bad[:20])
    return len(cases), raised


def _grid(per_pair: int, seed: int, tmp_path) -> None:
    base = H.pick_base()
    cpu = H.UnicornCpu(base, H.background(seed), H.A.UC_CPU_ARM64_MAX)
    rng = random.Random(seed)
    cases = []
    for word in OPS.values():
        for fpcr in FPCRS:
            for _ in range(per_pair):
                cases.append(_case(cpu, base, rng, len(cases), [MSR_FPCR_X0, MSR_FPSR_XZR, word, MRS_X1_FPSR, RET], fpcr))
    n, raised = _check(cases, seed, tmp_path)
    print(
        f"\nFPSR flags: {n} cases ({len(OPS)} instructions x {len(FPCRS)} FPCR values x {per_pair}) equal to "
        f"Unicorn; cases where Unicorn raised each flag: {raised}"
    )
    # the grid reaches every flag (else it could not tell a lifter that never reports them)
    assert all(raised.values()), raised


def test_fpsr_flags_after_one_instruction(tmp_path):
    _grid(2, 11, tmp_path)


@pytest.mark.heavy
def test_fpsr_flags_after_one_instruction_heavy(tmp_path):
    _grid(20, 11, tmp_path)


def test_fpsr_clear_and_keep(tmp_path):
    """Flags accumulate over two instructions; MSR FPSR between them clears the first one's;
    MSR FPCR between them keeps them (both as Unicorn does)."""
    base = H.pick_base()
    cpu = H.UnicornCpu(base, H.background(12), H.A.UC_CPU_ARM64_MAX)
    rng = random.Random(12)
    # the second result goes to another register: a result overwritten unread is dead code to
    # the C compiler, which removes it with the flags it would raise (a documented limit)
    fdiv, fadd = OPS["fdiv d0, d1, d2"], 0x1E222825  # fadd s5, s1, s2
    seqs = [
        [MSR_FPCR_X0, MSR_FPSR_XZR, fdiv, fadd, MRS_X1_FPSR, RET],
        [MSR_FPCR_X0, fdiv, MSR_FPSR_XZR, fadd, MRS_X1_FPSR, RET],
        [MSR_FPSR_XZR, fdiv, MSR_FPCR_X0, fadd, MRS_X1_FPSR, RET],
    ]
    cases = [_case(cpu, base, rng, k * 40 + j, seq, rng.choice(FPCRS)) for k, seq in enumerate(seqs) for j in range(40)]
    n, raised = _check(cases, 12, tmp_path)
    assert raised["IXC"] and raised["DZC"]
