"""ptxas-built SM53 (Maxwell) kernels translated to SPIR-V: valid under spirv-val, and run on
lavapipe through the ``vulkan`` binding they write exactly what numpy computes, for several
grid sizes.  Covers the Maxwell-only machinery: XMAD multiplies, the .CC/.X carry chains of
64-bit addresses, IADD3.RS, SSY/SYNC reconvergence, CAL/RET, BFE/BFI/PRMT/LOP3, conversions.
Shared memory with a barrier, global and shared atomics, and warp-wide SHFL/VOTE on emulated
32-lane warps (lavapipe's subgroups have 8; the emulation uses no subgroup operation)."""

from __future__ import annotations

import struct

import numpy as np
import pytest

import compute_cases as cc
from compute_dispatch import KernelRunner, run_spirv, upload
from shader_svc.sm53 import decode as dec
from shader_svc.sm53.to_spirv import ComputeSpec, TranslateError, cbank0, translate_compute
from spirv_checks import spirv_val

BS = 64
VALID = [
    "add_i32",
    "saxpy",
    "loop_sum",
    "branch",
    "int_ops",
    "fp_ops",
    "diverge",
    "loop_break",
    "call_func",
    "bits",
    "shared_rev",
    "atomics_ret",
    "warp_ops",
    "atomics",
    "shared_atomics",
    "funnel",
    "local_array",
]


def _spirv(code: bytes) -> bytes:
    return translate_compute(dec.decode_stream(code), ComputeSpec((BS, 1, 1)))


@pytest.fixture(scope="module")
def k53(compute_device, corpus_sm53) -> KernelRunner:
    return KernelRunner(compute_device, corpus_sm53, cbank0, _spirv, BS)


@pytest.mark.parametrize("name", VALID)
def test_spirv_is_valid(name, corpus_sm53, tmp_path):
    spirv_val(_spirv(corpus_sm53[name].code), tmp_path, name)


def test_predicated_warp_op_is_refused_clearly():
    from shader_svc.sm53 import assemble as asm

    code = asm.assemble_program(
        "S2R R0, SR_TID.X\nISETP.EQ.U32.AND P0, PT, R0, RZ, PT\n@P0 SHFL.BFLY PT, R1, R0, 0x1, 0x1f\nEXIT\n"
    )
    with pytest.raises(TranslateError, match=r"offset 0x18: @P0 SHFL.BFLY .*predicated warp-wide operation"):
        translate_compute(dec.decode_stream(code))


@pytest.mark.parametrize("n", [1, 100, 1000])
def test_add_i32(k53, n):
    cc.check_add_i32(k53, n)


@pytest.mark.parametrize("n", [7, 640])
def test_saxpy(k53, n):
    cc.check_saxpy(k53, n)


@pytest.mark.parametrize("n,m", [(5, 0), (9, 1), (64, 3), (65, 4), (300, 9), (77, 14), (40, 33)])
def test_loop_sum(k53, n, m):
    cc.check_loop_sum(k53, n, m)


@pytest.mark.parametrize("groups", [1, 5])
def test_branch(k53, groups):
    cc.check_branch(k53, groups)


@pytest.mark.parametrize("groups", [1, 3])
def test_int_ops(k53, groups):
    """mul.lo / mul.hi become XMAD chains with IADD3.RS and carries on Maxwell."""
    cc.check_int_ops(k53, groups)


@pytest.mark.parametrize("groups", [1, 2])
def test_fp_ops(k53, groups):
    n = groups * BS
    rng = np.random.default_rng(groups)
    x = (rng.standard_normal(n) * 1000).astype(np.float32)
    y = (rng.standard_normal(n) * 1000).astype(np.float32)
    o = cc.run_fp_ops(k53, x, y)
    f = o[:, :5].view(np.float32)
    s = x + y
    assert np.array_equal(f[:, 0], s)
    fma = (np.abs(y).astype(np.float64) * (-x).astype(np.float64) + s).astype(np.float32)
    assert np.allclose(f[:, 1], fma, rtol=1e-6, atol=1e-3)
    assert np.array_equal(f[:, 2], np.minimum(x, y))
    assert np.array_equal(f[:, 3], np.where(x < y, x * y, x - y))
    r = cc.f2i_s32(x)
    assert np.array_equal(o[:, 5].view(np.int32), r)
    assert np.array_equal(f[:, 4], r.astype(np.float32) + np.maximum(x, y))


@pytest.mark.parametrize("groups", [1, 4])
def test_diverge_ssy_sync(k53, groups):
    n = groups * BS
    a = np.random.default_rng(groups).integers(0, 21, n, dtype=np.uint32)
    out = k53.in_out("diverge", a, n)
    ref = np.where(a > 10, a * 2, a + 7) + np.arange(n, dtype=np.uint32)
    assert np.array_equal(out[:n], ref.astype(np.uint32))


def loop_break_ref(a: np.ndarray) -> np.ndarray:
    """The 'loop_break' kernel's result: per thread i, the k at which the running sum of k*k + i
    passes 1000, or a[i] if it never does."""
    ref = []
    for i, ai in enumerate(a):
        k = s = 0
        while k < ai:
            s += k * k + i
            if s > 1000:
                break
            k += 1
        ref.append(k)
    return np.array(ref, np.uint32)


@pytest.mark.parametrize("groups", [1, 3])
def test_loop_break(k53, groups):
    """SSY before the loop, '@P0 SYNC' leaves it early: each thread's own exit."""
    n = groups * BS
    a = np.random.default_rng(groups).integers(0, 40, n, dtype=np.uint32)
    out = k53.in_out("loop_break", a, n)
    assert np.array_equal(out[:n], loop_break_ref(a))


@pytest.mark.parametrize("groups", [1, 2])
def test_call_ret(k53, groups):
    n = groups * BS
    a = np.random.default_rng(groups).integers(0, 2**31, n, dtype=np.uint32)
    out = k53.in_out("call_func", a, n)
    assert np.array_equal(out[:n], (a * np.uint32(2) + np.uint32(5)).astype(np.uint32))


def _bits_ref(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    bfi = (b & ~np.uint32(0x1FF << 4)) | ((a & np.uint32(0x1FF)) << 4)
    logic = ((a & b) | ~b) ^ a
    both = a.astype(np.uint64) | (b.astype(np.uint64) << 32)
    sel = [0x0, 0x4, 0x1, 0x5]  # prmt selector 0x5140, low nibble first
    prmt = sum(((both >> np.uint64(8 * s)) & np.uint64(0xFF)) << np.uint64(8 * i) for i, s in enumerate(sel))
    lt = a.view(np.int32) < b.view(np.int32)
    selp = np.where(lt, a, b)
    bfe = ((a.view(np.int32) << 22) >> 25).view(np.uint32)  # bits 3..9, sign-extended
    return np.stack([bfi, logic, prmt.astype(np.uint32), selp, bfe], axis=1).astype(np.uint32)


@pytest.mark.parametrize("groups", [1, 3])
def test_bits(k53, groups):
    n = groups * BS
    rng = np.random.default_rng(groups)
    a, b = rng.integers(0, 2**32, n, dtype=np.uint32), rng.integers(0, 2**32, n, dtype=np.uint32)
    ba, bb, bo = k53.upload(a), k53.upload(b), k53.upload(np.zeros(5 * n, np.uint32))
    (out,) = k53.run("bits", n, struct.pack("<QQQ", ba.address, bb.address, bo.address), [bo])
    assert np.array_equal(out[: 5 * n].reshape(n, 5), _bits_ref(a, b))


@pytest.mark.parametrize("groups", [1, 4])
def test_shared_memory_and_barrier(k53, groups):
    """STS, BAR.SYNC, LDS: each block reverses its slice through shared memory."""
    n = groups * BS
    a = np.random.default_rng(groups).integers(0, 2**32, n, dtype=np.uint32)
    out = k53.in_out("shared_rev", a, n)
    assert np.array_equal(out[:n], a.reshape(groups, BS)[:, ::-1].reshape(n))


def _chain(olds: np.ndarray, adds: np.ndarray, total: int) -> bool:
    """The old values of atomic adds on one word must form a serial order: starting at 0, some
    thread saw the current value and moved it on by its own amount, ending at the total."""
    waiting: dict[int, list[int]] = {}
    for o, d in zip(olds.tolist(), adds.tolist()):
        waiting.setdefault(o, []).append(d)
    cur = 0
    for _ in range(len(olds)):
        if not waiting.get(cur):
            return False
        cur += waiting[cur].pop()
    return cur == total


@pytest.mark.parametrize("groups", [1, 3])
def test_atomics(k53, groups):
    """ATOM.E.ADD/MAX.S32/EXCH/CAS on global words and ATOMS.ADD on shared words: totals and the
    old values each thread saw are those of some serial order."""
    n = groups * BS
    rng = np.random.default_rng(groups)
    a = rng.integers(1, 1000, n).astype(np.int32)
    a[::5] *= -1  # negative values for max.s32
    cnt = np.zeros(24 + n, np.uint32)
    cnt[24::2] = 5  # CAS(5 -> a[i]) succeeds on even i only
    ba, bc, bo = k53.upload(a.view(np.uint32)), k53.upload(cnt), k53.upload(np.zeros(4 * n, np.uint32))
    c, out = k53.run("atomics_ret", n, struct.pack("<QQQ", ba.address, bc.address, bo.address), [bc, bo])
    o = out[: 4 * n].reshape(n, 4)
    k = np.arange(n) & 7
    for j in range(8):
        sel = k == j
        total = int(a[sel].astype(np.int64).sum())
        assert c[j] == np.uint32(total % 2**32)
        olds = o[sel, 0].view(np.int32).astype(np.int64)
        assert _chain(olds, a[sel], total)
        assert c[8 + j].view(np.int32) == max(0, a[sel].max())
        assert (o[sel, 1].view(np.int32) <= max(0, a[sel].max())).all()
        assert c[16 + j].view(np.int32) in a[sel]  # exchange: some thread's value is last
    even = np.arange(n) % 2 == 0
    assert (o[even, 2] == 5).all() and (o[~even, 2] == 0).all()
    assert np.array_equal(c[24 : 24 + n].view(np.int32), np.where(even, a, 0))
    t = np.arange(n) % BS & 3
    for blk in range(groups):
        for j in range(4):
            seen = o[blk * BS : (blk + 1) * BS][t[:BS] == j, 3]
            assert sorted(seen) == list(range(len(seen)))  # shared counter per block


@pytest.mark.parametrize("groups", [1, 3])
def test_warp_shuffle_and_vote(k53, groups):
    """SHFL.DOWN/BFLY/IDX and VOTE.ANY (ballot) over 32-lane warps, on a device whose subgroups
    have 8 lanes."""
    n = groups * BS
    a = np.random.default_rng(groups).integers(0, 200, n, dtype=np.uint32)
    out = k53.in_out("warp_ops", a, 5 * n)
    o = out[: 5 * n].reshape(n, 5)
    i = np.arange(n)
    lane, base = i % 32, i - i % 32
    assert np.array_equal(o[:, 0], np.where(lane < 31, a[np.minimum(i + 1, n - 1)], a))
    assert np.array_equal(o[:, 1], a[base + (lane ^ 2)])
    assert np.array_equal(o[:, 2], a[base])
    big = (a > 100).astype(np.uint64)
    ballot = np.array(
        [int((big[b : b + 32] << np.arange(32, dtype=np.uint64)).sum()) for b in range(0, n, 32)], np.uint64
    ).astype(np.uint32)
    assert np.array_equal(o[:, 3], ballot[i // 32])
    assert np.array_equal(o[:, 4], (ballot[i // 32] != 0).astype(np.uint32))


@pytest.mark.parametrize("groups", [1, 2])
def test_warp_aggregated_atomics(k53, groups):
    """ptxas aggregates atomics on one address per warp (VOTE, SHFL.UP prefix sums, one ATOM by
    the last lane, SHFL.IDX of its result): totals and every thread's old value match a serial
    order of the per-thread adds."""
    n = groups * BS
    rng = np.random.default_rng(groups)
    a = rng.integers(0, 1000, n, dtype=np.uint32)
    cnt = np.array([0, 0, 0, 7, 0, 0x7FFFFFFF], np.uint32)
    ba, bc, bo = k53.upload(a), k53.upload(cnt), k53.upload(np.zeros(n, np.uint32))
    c, old = k53.run("atomics", n, struct.pack("<QQQ", ba.address, bc.address, bo.address), [bc, bo])
    assert c[0] == a.sum() % 2**32
    assert _chain(old[:n].astype(np.int64), a.astype(np.int64), int(a.sum()))
    assert c[1] == a.max() and c[2] == np.bitwise_xor.reduce(a)
    # CAS(compare i, new a[i]) on a word holding 7: thread 7 swaps in a[7], then thread a[7] may
    # swap in a[a[7]] if it comes later, and so on
    reach, v = [], 7
    while v < n and v not in reach:
        reach.append(v)
        v = int(a[v])
    assert c[3] in [int(a[r]) for r in reach]
    assert c[4] in a and c[5] == min(0x7FFFFFFF, int(a.view(np.int32).min()))


@pytest.mark.parametrize("groups", [1, 3])
def test_shared_atomics(k53, groups):
    """Per block, through shared memory: sum, max and xor of a (warp-aggregated ATOMS)."""
    n = groups * BS
    a = np.random.default_rng(groups).integers(0, 2**20, n, dtype=np.uint32)
    out = k53.in_out("shared_atomics", a, 3 * groups)
    blocks = a.reshape(groups, BS)
    ref = np.stack([blocks.sum(axis=1) % 2**32, blocks.max(axis=1), np.bitwise_xor.reduce(blocks, axis=1)], axis=1)
    assert np.array_equal(out[: 3 * groups].reshape(groups, 3), ref.astype(np.uint32))


@pytest.mark.parametrize("groups", [1, 2])
def test_funnel_shifts(k53, groups):
    """SHF.L.W, SHF.R (clamp) and SHF.L.U64 + SHL of a 64-bit shift, against PTX's definitions."""
    n = groups * BS
    rng = np.random.default_rng(groups)
    a, b = rng.integers(0, 2**32, n, dtype=np.uint32), rng.integers(0, 2**32, n, dtype=np.uint32)
    s = rng.integers(0, 80, n, dtype=np.uint32)
    s[:8] = [0, 1, 31, 32, 33, 63, 64, 79]
    bufs = [k53.upload(x) for x in (a, b, s)] + [k53.upload(np.zeros(4 * n, np.uint32))]
    (out,) = k53.run("funnel", n, struct.pack("<QQQQ", *(x.address for x in bufs)), [bufs[3]])
    both = a.astype(np.uint64) | (b.astype(np.uint64) << np.uint64(32))
    wrap = (s & 31).astype(np.uint64)
    clamp = np.minimum(s, 32).astype(np.uint64)
    shl_wrap = ((both << wrap) >> np.uint64(32)).astype(np.uint32)
    shr_clamp = np.where(clamp == 32, b, (both >> np.minimum(clamp, 31)).astype(np.uint32))
    wide = both << (s & 63).astype(np.uint64)
    ref = np.stack(
        [shl_wrap, shr_clamp, (wide & np.uint64(0xFFFFFFFF)).astype(np.uint32), (wide >> np.uint64(32)).astype(np.uint32)], axis=1
    )
    assert np.array_equal(out[: 4 * n].reshape(n, 4), ref)


HAND_WRITTEN = """
// out[i] = sum_{k=0..i%8} (a[i] + k), written by hand: a loop, the carry chain of a 64-bit
// address, a predicated exit
        S2R R0, SR_TID.X
        S2R R2, SR_CTAID.X
        ISCADD R0, R2, R0, 0x6                 // i = ctaid * 64 + tid
        ISETP.GE.U32.AND P0, PT, R0, c[0x0][0x150], PT
        @P0 EXIT
        ISCADD R4.CC, R0, c[0x0][0x140], 0x2
        SHR.U32 R3, R0, 0x1e
        IADD.X R5, R3, c[0x0][0x144]
        LDG.E R6, [R4]
        LOP32I.AND R7, R0, 0x7                 // trip count - 1
        MOV R8, RZ                             // k
        MOV R9, RZ                             // sum
LOOP:   IADD R10, R6, R8
        IADD R9, R9, R10
        IADD32I R8, R8, 0x1
        ISETP.LE.U32.AND P1, PT, R8, R7, PT
        @P1 BRA LOOP
        ISCADD R4.CC, R0, c[0x0][0x148], 0x2
        IADD.X R5, R3, c[0x0][0x14c]
        STG.E [R4], R9
        EXIT
"""


@pytest.mark.parametrize("n", [10, 200])
def test_hand_written_kernel_runs(compute_device, n):
    """A kernel written as text with our assembler translates and runs on lavapipe = numpy."""
    from shader_svc.sm53 import assemble as asm

    code = asm.assemble_program(HAND_WRITTEN)
    a = np.random.default_rng(n).integers(0, 2**20, n, dtype=np.uint32)
    ba, bo = upload(compute_device, a), upload(compute_device, np.zeros(n, np.uint32))
    (out,) = run_spirv(compute_device, _spirv(code), cbank0, 0, n, struct.pack("<QQI", ba.address, bo.address, n), [bo], BS)
    out = out[:n]
    t = np.arange(n) % 8 + 1
    ref = (a.astype(np.uint64) * t + t * (t - 1) // 2).astype(np.uint32)
    assert np.array_equal(out, ref)


@pytest.mark.parametrize("groups", [1, 2])
def test_local_memory(k53, groups):
    """STL.64/LDL: a per-thread array indexed at run time (the frame below c[0x0][0x20])."""
    n = groups * BS
    a = np.random.default_rng(groups).integers(0, 2**32, n, dtype=np.uint32)
    out = k53.in_out("local_array", a, n)
    i = np.arange(n, dtype=np.uint32)
    assert np.array_equal(out[:n], (a & 15) * i + 1)
