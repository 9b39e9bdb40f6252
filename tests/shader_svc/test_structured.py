"""Structured control flow (shader_svc/spirv/structure.py): if/else and loop nesting recovered
from the CFG instead of the dispatcher loop.  Plans of hand-made graphs; SM86 kernels written
with our assembler (nested ifs meeting at one block, a loop with break and continue, nested
loops with an EXIT from the inner one) translate to spirv-val-clean modules without the
dispatcher's switch and equal numpy on lavapipe; an irreducible loop falls back to the
dispatcher loop and still runs right; the listings are what nvdisasm reads."""

from __future__ import annotations

import struct

import numpy as np
import pytest

import nvtools
from shader_svc.sm86 import decode as dec
from compute_dispatch import run_spirv, upload
from quad_draw import H, W, draw_quad, spirv
from shader_svc.sm86.assemble import assemble_program
from shader_svc.lower.base import ComputeSpec
from shader_svc.lower.control import ControlFlow
from shader_svc.sm86.lower import Lower86
from shader_svc.spirv.structure import RET, Unstructured, plan
from spirv_checks import spirv_val

OP_SWITCH, OP_LOOP_MERGE, OP_SELECTION_MERGE = 251, 246, 247  # SPIR-V opcode numbers

HEAD = """
    S2R R0, SR_TID.X
    S2R R3, SR_CTAID.X
    IMAD R0, R3, c[0x0][0x0], R0
    ISETP.GE.U32.AND P0, PT, R0, c[0x0][0x170], PT
    @P0 EXIT
    IMAD.MOV.U32 R5, RZ, RZ, 0x4
    IMAD.WIDE.U32 R2, R0, R5, c[0x0][0x160]
    LDG.E R2, [R2.64]
"""
TAIL = """
    IMAD.WIDE.U32 R8, R0, R5, c[0x0][0x168]
    STG.E [R8.64], R4
    EXIT
"""
# x odd: (x & 2 ? 3x : x + 7), even: (x < 1000 ? x ^ 0x55 : 5); then + 1 (four paths meet at JOIN)
NESTED_IF = (
    HEAD
    + """
    LOP3.LUT R6, R2, 0x1, RZ, 0xc0, !PT
    ISETP.NE.AND P1, PT, R6, RZ, PT
    @!P1 BRA EVEN
    LOP3.LUT R6, R2, 0x2, RZ, 0xc0, !PT
    ISETP.NE.AND P2, PT, R6, RZ, PT
    @!P2 BRA ODD1
    IMAD R4, R2, 0x3, RZ
    BRA JOIN
ODD1:
    IADD3 R4, R2, 0x7, RZ
    BRA JOIN
EVEN:
    ISETP.GE.U32.AND P2, PT, R2, 0x3e8, PT
    @P2 BRA BIG
    LOP3.LUT R4, R2, 0x55, RZ, 0x3c, !PT
    BRA JOIN
BIG:
    MOV R4, 0x5
JOIN:
    IADD3 R4, R4, 0x1, RZ
"""
    + TAIL
)
# r = 0; for j in range(k): if j == x & 7: continue; if r > limit: break; r += x + j
LOOP_BREAK_CONTINUE = (
    HEAD
    + """
    MOV R4, RZ
    MOV R6, RZ
LOOP:
    ISETP.GE.U32.AND P1, PT, R6, c[0x0][0x174], PT
    @P1 BRA DONE
    LOP3.LUT R7, R2, 0x7, RZ, 0xc0, !PT
    ISETP.NE.AND P2, PT, R6, R7, PT
    @!P2 BRA NEXT
    ISETP.GT.U32.AND P3, PT, R4, c[0x0][0x178], PT
    @P3 BRA DONE
    IADD3 R4, R4, R2, R6
NEXT:
    IADD3 R6, R6, 0x1, RZ
    BRA LOOP
DONE:
"""
    + TAIL
)
# r = 0; for i in range(k): for j in range(i): r += x ^ j; if r == stop: EXIT (nothing stored)
NESTED_LOOPS = (
    HEAD
    + """
    MOV R4, RZ
    MOV R6, RZ
OUTER:
    ISETP.GE.U32.AND P1, PT, R6, c[0x0][0x174], PT
    @P1 BRA DONE
    MOV R7, RZ
INNER:
    ISETP.GE.U32.AND P2, PT, R7, R6, PT
    @P2 BRA INNER_DONE
    LOP3.LUT R10, R2, R7, RZ, 0x3c, !PT
    IADD3 R4, R4, R10, RZ
    ISETP.EQ.AND P3, PT, R4, c[0x0][0x178], PT
    @P3 EXIT
    IADD3 R7, R7, 0x1, RZ
    BRA INNER
INNER_DONE:
    IADD3 R6, R6, 0x1, RZ
    BRA OUTER
DONE:
"""
    + TAIL
)
# a loop entered at two places (FIRST by falling through, SECOND by the branch): irreducible
IRREDUCIBLE = (
    HEAD
    + """
    MOV R4, RZ
    LOP3.LUT R6, R2, 0xff, RZ, 0xc0, !PT
    IADD3 R6, R6, 0x1, RZ
    LOP3.LUT R7, R2, 0x1, RZ, 0xc0, !PT
    ISETP.NE.AND P1, PT, R7, RZ, PT
    @P1 BRA SECOND
FIRST:
    IADD3 R4, R4, 0x3, RZ
SECOND:
    IADD3 R4, R4, R6, RZ
    ISETP.LT.U32.AND P2, PT, R4, c[0x0][0x174], PT
    @P2 BRA FIRST
"""
    + TAIL
)


def ref_nested_if(x, k, lim):
    r = (3 * x if x & 2 else x + 7) if x & 1 else (x ^ 0x55 if x < 1000 else 5)
    return (r + 1) & 0xFFFFFFFF


def ref_loop(x, k, lim):
    r = 0
    for j in range(k):
        if j == x & 7:
            continue
        if r > lim:
            break
        r = (r + x + j) & 0xFFFFFFFF
    return r


def ref_nested_loops(x, k, lim):
    r = 0
    for i in range(k):
        for j in range(i):
            r = (r + (x ^ j)) & 0xFFFFFFFF
            if r == lim:
                return None
    return r


def ref_irreducible(x, k, lim):
    r, step = 0, (x & 0xFF) + 1
    if not x & 1:
        r += 3
    r += step
    while r < k:
        r += 3 + step
    return r & 0xFFFFFFFF


def opcodes(spirv: bytes) -> list[int]:
    words = struct.unpack(f"<{len(spirv) // 4}I", spirv)
    out, i = [], 5
    while i < len(words):
        out.append(words[i] & 0xFFFF)
        i += words[i] >> 16
    return out


def lower(text: str) -> tuple[Lower86, bytes]:
    lo = Lower86(dec.decode_stream(assemble_program(text)), ComputeSpec((32, 1, 1)))
    return lo, lo.build()


# --- plans of hand-made graphs --------------------------------------------------------------------


def test_plan_of_a_diamond_and_of_a_loop_with_break_and_continue():
    assert plan([[2, 1], [3], [3], [RET]]) == [
        ("block", 0),
        ("if", 0, [("block", 2), ("stop",)], [("block", 1), ("stop",)]),
        ("block", 3),
        ("ret",),
    ]
    # 1: loop header; 2: break (to 4) or go on; 3: continue
    assert plan([[1], [4, 2], [4, 3], [1], [RET]]) == [
        ("block", 0),
        (
            "loop",
            1,
            [
                ("block", 1),
                ("if", 1, [("break",)], [("stop",)]),
                ("block", 2),
                ("if", 2, [("break",)], [("stop",)]),
                ("block", 3),
                ("cont",),
            ],
        ),
        ("block", 4),
        ("ret",),
    ]


def test_plan_of_nested_loops_with_an_exit_from_the_inner_one():
    # 0 -> 1 (outer header: 6 done / 2); 2 -> 3 (inner: 5 / 4); 4: RET or back to 3; 5 -> 1
    steps = plan([[1], [6, 2], [3], [5, 4], [RET, 3], [1], [RET]])
    outer = steps[1]
    assert outer[0] == "loop" and outer[1] == 1
    inner = [s for s in outer[2] if s[0] == "loop"]
    assert len(inner) == 1 and inner[0][1] == 3 and ("if", 4, [("ret",)], [("cont",)]) in inner[0][2]


@pytest.mark.parametrize(
    "succ, why",
    [
        ([[1, 2], [2], [1, 3], [RET]], "irreducible"),  # the loop 1 <-> 2 has two entries
        # a loop leaving to 3 and to 4, both also reached from outside it (from 5)
        ([[1, 5], [3, 2], [4, 1], [RET], [RET], [3, 4]], "leaves to 2 places"),
    ],
)
def test_refused_shapes(succ, why):
    with pytest.raises(Unstructured, match=why):
        plan(succ)


def _blocks_of(steps: list) -> list[int]:
    out = []
    for st in steps:
        if st[0] == "block":
            out.append(st[1])
        elif st[0] == "if":
            out += _blocks_of(st[2]) + _blocks_of(st[3])
        elif st[0] == "loop":
            out += _blocks_of(st[2])
    return out


def test_crossing_arms_duplicate_the_shared_tail_unless_pinned():
    # arms crossing at 4 (1's arm and 2's arm both reach it before the merge 6): 4 is placed in
    # both arms (nvcc -G's switch whose cases join early); a pinned block (a barrier) is not
    succ = [[1, 2], [3, 4], [4, 5], [6], [6], [6], [RET]]
    got = _blocks_of(plan(succ))
    assert sorted(got) == [0, 1, 2, 3, 4, 4, 5, 6]
    with pytest.raises(Unstructured, match="two constructs"):
        plan(succ, pinned=frozenset({4}))


def test_an_arm_that_only_leaves_constrains_no_merge():
    # 0 branches to 1 (an assert: 3 fails into its own __assertfail, whose blocks 5 and 6 meet
    # again before its trap; 4 goes on) or 2; 4 and 2 meet at 7.  The failing arm's paths never
    # meet another's, so 0's merge is 7 and every block is placed once (no copy)
    succ = [[1, 2], [3, 4], [7], [5, 6], [7], [6], [RET], [RET]]
    steps = plan(succ)
    assert sorted(_blocks_of(steps)) == list(range(8))
    assert steps[1][0] == "if" and steps[2] == ("block", 7)


# --- kernels on lavapipe ------------------------------------------------------------------------


def run(dev, spirv: bytes, a: np.ndarray, k: int, lim: int) -> np.ndarray:
    import vk_compute

    n = len(a)
    ba, bo = upload(dev, a), upload(dev, np.full(n + 16, 0xEEEEEEEE, np.uint32))
    (out,) = run_spirv(
        dev, spirv, vk_compute.cbank0, 0x180, n, struct.pack("<QQIII", ba.address, bo.address, n, k, lim), [bo], 32
    )
    assert (out[n : n + 16] == 0xEEEEEEEE).all()
    return out[:n]


CASES = [
    ("nested_if", NESTED_IF, ref_nested_if, 0),
    ("loop_break_continue", LOOP_BREAK_CONTINUE, ref_loop, 1),
    ("nested_loops", NESTED_LOOPS, ref_nested_loops, 2),
]


@pytest.mark.parametrize("name, text, ref, loops", CASES, ids=[c[0] for c in CASES])
def test_structured_kernels_equal_numpy(compute_device, tmp_path, name, text, ref, loops):
    lo, spirv = lower(text)
    spirv_val(spirv, tmp_path)
    ops = opcodes(spirv)
    assert lo.structured and OP_SWITCH not in ops and ops.count(OP_LOOP_MERGE) == loops
    rng = np.random.default_rng(len(name))
    for n, k, lim in ((1, 0, 0), (70, 5, 40), (130, 9, 3000), (64, 12, 0xFFFFFFFF)):
        a = rng.integers(0, 2000 if name != "nested_loops" else 64, n, dtype=np.uint32)
        if name == "nested_loops" and n == 70:
            lim = int(ref_nested_loops(int(a[3]), 3, 1 << 40) or 1)  # some invocations leave early
        out = run(compute_device, spirv, a, k, lim)
        for i, x in enumerate(a.tolist()):
            want = ref(x, k, lim)
            assert out[i] == (0xEEEEEEEE if want is None else want), (name, n, k, lim, i, x)


def test_irreducible_loop_falls_back_to_the_dispatcher(compute_device, tmp_path):
    lo, spirv = lower(IRREDUCIBLE)
    spirv_val(spirv, tmp_path)
    assert not lo.structured and OP_SWITCH in opcodes(spirv)
    a = np.random.default_rng(9).integers(0, 5000, 100, dtype=np.uint32)
    for k in (0, 10, 900):
        out = run(compute_device, spirv, a, k, 0)
        assert out.tolist() == [ref_irreducible(x, k, 0) for x in a.tolist()]


def test_structured_modules_are_smaller_than_the_dispatcher(monkeypatch):
    """The same kernels through the dispatcher loop (the structuriser refusing) are larger."""
    for _, text, *_ in CASES:
        _, structured = lower(text)
        monkeypatch.setattr(ControlFlow, "structure_ok", lambda self: False)
        lo, dispatched = lower(text)
        monkeypatch.undo()
        assert not lo.structured and len(structured) < len(dispatched)


def test_the_listings_are_what_nvdisasm_reads(nv_tools):
    import re

    for text in (NESTED_IF, LOOP_BREAK_CONTINUE, NESTED_LOOPS, IRREDUCIBLE):
        code = assemble_program(text)
        lines, labels = [], {}
        for raw in text.splitlines():
            s = raw.strip()
            if s.endswith(":"):
                labels[s[:-1]] = 16 * len(lines)
            elif s:
                lines.append(s)
        want = [
            re.sub(r"\b([A-Z_0-9]+)$", lambda m: f"{labels[m.group(1)]:#x}" if m.group(1) in labels else m.group(1), s)
            for s in lines
        ]
        words = [struct.unpack_from("<QQ", code, i) for i in range(0, len(code), 16)]
        assert [r.text if r else None for r in nvtools.nvdisasm_raw(words, "SM86")] == want


def test_plan_takes_exit_blocks_only_the_loop_reaches_into_it():
    # a loop {1, 2} leaving to 3 and to 4 (each only reached from it), both going on to 5
    steps = plan([[1], [3, 2], [4, 1], [5], [5], [RET]])
    loop = steps[1]
    assert loop[0] == "loop"
    flat = str(loop[2])
    assert "('block', 3)" in flat and "('block', 4)" in flat and steps[-2:] == [("block", 5), ("ret",)]


def test_plan_takes_a_forwarding_exit_block_into_its_loop():
    # SM53 shape: loop {2, 3} leaves early to 5 and through 4 (a SYNC that only leads to 5)
    steps = plan([[5, 1], [2], [5, 3], [2, 4], [5], [RET]])
    loop = next(s for s in steps[1][3] if s[0] == "loop")
    assert ("block", 4) in loop[2] and steps[-2:] == [("block", 5), ("ret",)]


def test_sm53_reconvergence_stack_is_resolved_statically(nv_tools):
    """SM53 kernels whose SSY/SYNC targets are the same on every path (divergent if/else, a
    loop with an early exit) are structured; so are CAL/RET, whose return block is part of the
    static stack state (spirv/expand.py: the callee is inlined at each call)."""
    from pathlib import Path

    import cubin
    from shader_svc.sm53 import decode as dec53
    from shader_svc.sm53.to_spirv import Compute53

    src = (Path(__file__).parent / "ptx" / "sm53" / "control.ptx").read_text()
    kernels = cubin.kernels(nvtools.ptxas(src, "sm_53"), "control.ptx")
    got = {}
    for name, k in kernels.items():
        insts = dec53.decode_stream(k.code)
        lo = Compute53(insts, ComputeSpec())
        spirv = lo.build()
        got[name] = (lo.structured, {i.row.ir for i in insts} & {"SSY", "SYNC", "CAL", "RET"}, OP_SWITCH in opcodes(spirv))
    assert got["loop_break"][:2] == (True, {"SSY", "SYNC"}) and not got["loop_break"][2]
    assert got["call_func"][0] is True and {"CAL", "RET"} <= got["call_func"][1] and not got["call_func"][2]


# fragment program with two EXITs: left half (u <= 0.5) leaves early with (u, v, 0, 1), the right
# half goes on to (u, 1 - v, 0.5, 1): the colour outputs are written at each EXIT
FS_TWO_EXITS = """
IPA.PASS R0, a[0x80]
IPA.PASS R1, a[0x84]
MOV R3, 0x3f800000
FSETP.GT.AND P0, PT, R0, 0.5, PT
@P0 BRA RIGHT
MOV R2, RZ
EXIT
RIGHT:
FADD R1, -R1, 1
MOV R2, 0x3f000000
EXIT
"""


def test_fragment_program_with_two_exits_draws_both_halves(gpu, tmp_path):
    hdr = dict(inputs={0x80: "perspective", 0x84: "perspective"}, targets=(0xF,))
    fs = spirv("fragment", FS_TWO_EXITS, hdr)
    spirv_val(fs, tmp_path, "two_exits")
    ops = opcodes(fs)
    assert OP_SWITCH not in ops and OP_SELECTION_MERGE in ops
    w, h = W, H
    img = draw_quad(gpu, fs)
    u = (np.arange(w) + 0.5) / w
    v = (np.arange(h) + 0.5) / h
    U, V = np.meshgrid(u, v)
    right = U > 0.5
    want = np.stack([U, np.where(right, 1 - V, V), np.where(right, 0.5, 0.0), np.ones_like(U)], axis=2)
    assert np.abs(img - np.round(want * 255)).max() <= 1


def test_the_fragment_listing_is_what_nvdisasm_reads(nv_tools):
    code = assemble_program(FS_TWO_EXITS, base=0x50)
    words = [struct.unpack_from("<QQ", code, i) for i in range(0, len(code), 16)]
    got = [r.text if r else None for r in nvtools.nvdisasm_raw(words, "SM86")]
    lines = [ln for ln in FS_TWO_EXITS.strip().splitlines() if not ln.endswith(":")]
    assert got == [ln.replace("RIGHT", "0x70") for ln in lines]  # nvdisasm counts from the code start


def test_expand_inlines_calls_and_refuses_recursion():
    """spirv/expand.py: a function called from two places becomes two copies (each returning to
    its own caller), so the graph the structuriser sees is ordinary; recursion is refused."""
    from shader_svc.spirv.expand import expand

    # blocks: 0 calls 2 and returns to 1; 1 calls 2 and returns to 3 (exit); 2 = the function
    calls = {0: (2, 1), 1: (2, 3)}

    def step(i, st):
        if i in calls:
            callee, back = calls[i]
            return [(callee, st + (back,))]
        if i == 2:
            return [(st[-1], st[:-1])]  # RET
        return [(RET, st)]

    nodes, succ = expand(4, step)
    assert sorted(nodes) == [0, 1, 2, 2, 3] and nodes.count(2) == 2
    two = [k for k, n in enumerate(nodes) if n == 2]
    assert {nodes[succ[k][0]] for k in two} == {1, 3}  # each copy returns to its caller
    assert plan(succ)  # and the graph is structured

    def rec(i, st):  # block 0 calls itself
        return [(0, st + (1,))] if i == 0 else [(RET, st)]

    with pytest.raises(Unstructured, match="recursion"):
        expand(2, rec, limit=64)
