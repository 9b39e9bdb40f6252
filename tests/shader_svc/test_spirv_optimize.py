"""The SSA clean-up of translated functions (shader_svc/spirv/optimize.py).

Exactness is checked where every translation is checked (the compute kernels against numpy,
the graphics programs against GLSL pixels: those suites run the optimised modules); here: the
pass on a hand-written body does exactly the promotions, folds and removals its rules say and
nothing else, and on real translations every module stays valid (spirv-val) while shrinking."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from shader_svc.spirv.builder import Module
from shader_svc.spirv.optimize import optimize

ROOT = Path(__file__).resolve().parents[2]


def small_module():
    m = Module((1, 5))
    u32 = m.type("OpTypeInt", 32, 0)
    boolean = m.type("OpTypeBool")
    ptr = m.type("OpTypePointer", m.E("StorageClass", "Function"), u32)
    return m, u32, boolean, ptr


def test_promotion_folding_dead_stores_and_dead_code():
    m, u32, boolean, ptr = small_module()
    c = lambda v: m.const(u32, v)  # noqa: E731
    r1, r2, out = m.id(), m.id(), m.id()  # two register variables; `out` is not promotable
    ids = iter(range(m.next_id, m.next_id + 50))
    m.next_id += 50
    a, b, s, t, u, cmp, sel, dead, l2, head, done = (next(ids) for _ in range(11))
    body = [
        ("OpStore", r1, c(5)),
        ("OpLoad", u32, a, r1),  # forwarded: 5
        ("OpIAdd", u32, b, a, c(3)),  # folded: 8
        ("OpStore", r2, b),
        ("OpStore", r1, c(9)),  # dead: r1 is written again before any read
        ("OpStore", r1, c(7)),
        ("OpLoad", u32, s, out),  # not a promotable variable: stays
        ("OpBitwiseOr", u32, t, s, c(0)),  # identity: t is s
        ("OpIEqual", boolean, cmp, b, c(8)),  # folded: true
        ("OpSelect", u32, sel, cmp, t, c(1)),  # constant condition: t, hence s
        ("OpIMul", u32, dead, s, c(2)),  # nobody uses it: removed
        ("OpStore", out, sel),
        ("OpBranch", head),
        ("OpLabel", head),
        ("OpLoad", u32, l2, r2),  # forwarded across the block boundary: 8
        ("OpStore", out, l2),
        ("OpBranch", done),
        ("OpLabel", done),
        ("OpReturn",),
    ]
    got, st = optimize(body, m, {r1, r2})
    assert got == [
        ("OpLoad", u32, s, out),
        ("OpStore", out, s),
        ("OpBranch", head),
        ("OpLabel", head),
        ("OpStore", out, c(8)),
        ("OpBranch", done),
        ("OpLabel", done),
        ("OpReturn",),
    ]
    assert (st.loads_forwarded, st.folded, st.stores_removed) == (2, 4, 4)
    assert st.removed_dead == 1 and st.before == len(body) and st.after == len(got)


def test_values_do_not_cross_a_loop_back_edge_or_a_branch_that_stores():
    m, u32, boolean, ptr = small_module()
    r, out = m.id(), m.id()
    ids = iter(range(m.next_id, m.next_id + 40))
    m.next_id += 40
    hdr, body_l, cont, merge, then, after, x, y, z, p = (next(ids) for _ in range(10))
    body = [
        ("OpStore", r, m.const(u32, 1)),
        ("OpBranch", hdr),
        ("OpLabel", hdr),
        ("OpLoopMerge", merge, cont, 0),
        ("OpBranch", body_l),
        ("OpLabel", body_l),
        ("OpLoad", u32, x, r),  # a loop header's successor: not known (back edge)
        ("OpIAdd", u32, y, x, m.const(u32, 1)),
        ("OpStore", r, y),
        ("OpULessThan", boolean, p, y, m.const(u32, 10)),
        ("OpSelectionMerge", after, 0),
        ("OpBranchConditional", p, then, after),
        ("OpLabel", then),
        ("OpStore", r, m.const(u32, 0)),
        ("OpBranch", after),
        ("OpLabel", after),
        ("OpLoad", u32, z, r),  # two different values reach here: a load
        ("OpStore", out, z),
        ("OpBranch", cont),
        ("OpLabel", cont),
        ("OpBranchConditional", p, hdr, merge),
        ("OpLabel", merge),
        ("OpReturn",),
    ]
    got, st = optimize(body, m, {r})
    loads = [t for t in got if t[0] == "OpLoad"]
    assert [t[2] for t in loads] == [x, z]
    assert st.loads_forwarded == 0


def test_a_body_the_grammar_cannot_read_is_left_alone():
    m, u32, boolean, ptr = small_module()
    body = [("OpPhi", u32, m.id(), m.const(u32, 1), m.id()), ("OpReturn",)]
    got, st = optimize(body, m, set())
    assert got == body and st.after == st.before


@pytest.mark.skipif(not shutil.which("spirv-val"), reason="spirv-val (Debian spirv-tools) is not installed")
def test_real_translations_stay_valid_and_shrink(tmp_path):
    sys.path.insert(0, str(ROOT / "bench"))
    import shader_translate as bench
    from shader_svc import translate as tr
    from shader_svc.spirv import builder

    programs = bench.make_programs(12) + bench.graphics_programs(12)
    sizes = {}
    for opt in (False, True):
        orig = builder.Module.binary

        def binary(self, orig=orig, opt=opt):
            self.optimize = self.optimize and opt
            return orig(self)

        builder.Module.binary = binary
        try:
            sizes[opt] = [tr.translate(p) for p in programs]
        finally:
            builder.Module.binary = orig
    for k, spv in enumerate(sizes[True]):
        f = tmp_path / f"p{k}.spv"
        f.write_bytes(spv)
        r = subprocess.run(["spirv-val", "--target-env", "vulkan1.2", str(f)], capture_output=True, text=True)
        assert r.returncode == 0, f"program {k}: {r.stderr}"
    before, after = sum(map(len, sizes[False])), sum(map(len, sizes[True]))
    print(f"SPIR-V of {len(programs)} programs: {before} -> {after} bytes ({after / before:.2f})")
    assert after < 0.85 * before
