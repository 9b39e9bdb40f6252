"""The program in IR and its optimiser (shader_svc/ir/block.py, ir/optimize.py) and the SPIR-V
peephole after the one lowering (shader_svc/spirv/peephole.py).

Exactness is checked where every translation is checked (the compute kernels against numpy,
the graphics programs against GLSL pixels, the CUDA corpus: those suites run the optimised
modules); here: the optimiser on hand-built IR functions does exactly the promotions, folds and
removals its rules say and nothing else; the driver builds one IR function whose basic blocks
span many instructions with explicit terminators and structured merges; and real translations
stay valid (spirv-val) while the optimisation shrinks them."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from shader_svc.ir import optimize as ir_opt
from shader_svc.ir.block import BasicBlock, Block, Function, Merge, Op, Term, Value
from shader_svc.ir.types import Type

ROOT = Path(__file__).resolve().parents[2]


def key(o: Op) -> int:
    """Registers are variables 1000 + n, predicates 2000 + n; RZ and PT the constants."""
    a = o.attrs
    if "reg" in a:
        return ir_opt.ZERO if a["reg"] == 255 else 1000 + a["reg"]
    return ir_opt.ZERO if a["pred"] == 7 else 2000 + a["pred"]


def block(label: int, b: Block, term: Term, merge: Merge | None = None) -> BasicBlock:
    return BasicBlock(label, list(b.ops), merge, term)


def names(bb: BasicBlock) -> list[str]:
    return [it.op.name for it in bb.items]


def observe(b: Block, v: Value) -> None:
    """An effect that uses ``v`` (a store to global memory): what the program shows."""
    b.emit("StoreGlobal32", b.op("GlobalPtr", b.const_u64(0x1000)), v)


def stored(fn: Function) -> list[Value]:
    """The values the function's ``observe`` stores, in order (after the optimiser)."""
    return [it.args[1] for bb in fn.blocks for it in bb.items if it.op.name == "StoreGlobal32"]


OBSERVE = ["GlobalPtr", "StoreGlobal32"]


def test_promotion_folding_dead_stores_and_dead_code():
    """What the program stores is what it shows; the registers themselves are dead when the
    function returns."""
    b0, b1 = Block(), Block()
    b0.set_reg(1, b0.const_u32(5))
    a = b0.get_reg(1)  # forwarded: 5
    s = b0.op("IAdd32", a, b0.const_u32(3))  # folded: 8
    b0.set_reg(2, s)
    b0.set_reg(1, b0.const_u32(9))  # dead: R1 is written again before any read
    b0.set_reg(1, b0.const_u32(7))  # dead: never read again
    x = b0.get_reg(3)  # unknown: stays a read
    t = b0.op("IOr32", x, b0.const_u32(0))  # identity: x
    c = b0.op("IEq32", s, b0.const_u32(8))  # folded: true
    sel = b0.op("Select32", c, t, b0.const_u32(1))  # constant condition: t, so x
    b0.op("IMul32", x, b0.const_u32(2))  # nobody uses it: removed
    z = b0.get_reg(255)  # RZ: 0
    w = b0.op("IAdd32", z, x)  # 0 + x: x
    observe(b0, sel)
    observe(b0, w)
    y = b1.get_reg(2)  # forwarded across the block boundary: 8
    observe(b1, y)
    first, second = block(10, b0, Term("OpBranch", (11,))), block(11, b1, Term("OpReturn"))
    fn = Function([first, second])
    consts, st = ir_opt.optimize(fn, key)
    assert names(first) == ["GetReg", *OBSERVE, *OBSERVE] and names(second) == OBSERVE
    r3 = first.items[0].result
    s1, s2, s3 = stored(fn)
    assert s1 == s2 == r3 and r3 == x
    assert consts[s3.index] == (Type.U32, 8)
    assert (st.reads_forwarded, st.stores_removed, st.removed_dead) == (2, 4, 1)
    assert st.folded >= 5  # 5 + 3, 8 == 8, select, x | 0, RZ, 0 + x


def test_values_do_not_cross_a_loop_back_edge_or_a_branch_that_writes():
    entry, head, body, then, after, cont, merge = range(20, 27)
    b_entry, b_body, b_then, b_after = Block(), Block(), Block(), Block()
    b_entry.set_reg(0, b_entry.const_u32(1))
    x = b_body.get_reg(0)  # after the loop header: not known (back edge)
    y = b_body.op("IAdd32", x, b_body.const_u32(1))
    b_body.set_reg(0, y)
    p = b_body.emit("ICmp32", y, b_body.const_u32(10), cmp=1, unsigned=True)
    b_body.set_pred(0, p)
    b_then.set_reg(0, b_then.const_u32(0))
    z = b_after.get_reg(0)  # two different values reach here: a read
    b_after.set_reg(1, z)  # never read: goes
    q = b_after.get_pred(0)
    observe(b_after, z)
    fn = Function(
        [
            block(entry, b_entry, Term("OpBranch", (head,))),
            BasicBlock(head, [], Merge("OpLoopMerge", (merge, cont, 0)), Term("OpBranch", (body,))),
            block(body, b_body, Term("OpBranchConditional", (555, then, after)), Merge("OpSelectionMerge", (after, 0))),
            block(then, b_then, Term("OpBranch", (after,))),
            block(after, b_after, Term("OpBranch", (cont,))),
            BasicBlock(cont, [], None, Term("OpBranchConditional", (556, head, merge))),
            BasicBlock(merge, [], None, Term("OpReturn")),
        ]
    )
    # the terminators' conditions, as the driver hands them out
    fn.placeholders = {555: p, 556: q}
    consts, st = ir_opt.optimize(fn, key)
    reads = [it for bb in fn.blocks for it in bb.items if isinstance(it, Op) and it.op.name == "GetReg"]
    assert [r.result for r in reads] == [x, z]
    assert fn.placeholders[556] == p  # P0's read after the branch is P0's value from the body
    assert st.reads_forwarded == 1
    # every write of R0 is read on some path (around the loop, at the join): all stay; R1 is
    # never read, P0's one read was forwarded: both writes go
    assert st.stores_removed == 2


def test_a_value_only_the_driver_names_stays():
    """A value only a terminator's condition names (through its placeholder) is kept and
    followed through the forwarding; what nobody uses goes."""
    b = Block()
    b.set_pred(0, b.emit("ICmp32", b.get_reg(1), b.const_u32(2), cmp=1, unsigned=True))  # dead write
    p = b.get_pred(0)  # forwarded: the comparison itself
    b.op("IMul32", b.get_reg(1), b.const_u32(3))  # unused: goes (its R1 read forwarded)
    done = [BasicBlock(k, [], None, Term("OpReturn")) for k in (2, 3)]
    fn = Function([block(1, b, Term("OpBranchConditional", (900, 2, 3))), *done])
    fn.placeholders[900] = p
    _, st = ir_opt.optimize(fn, key)
    assert names(fn.blocks[0]) == ["GetReg", "ICmp32"]
    assert fn.placeholders[900] == fn.blocks[0].items[1].result
    assert (st.reads_forwarded, st.stores_removed, st.removed_dead) == (2, 1, 1)


@pytest.mark.parametrize(
    "op,args,attrs,want",
    [
        ("Lut3", (0xF0F0F0F0, 0xCCCCCCCC, 0xAAAAAAAA), {"lut": 0x96}, 0xF0F0F0F0 ^ 0xCCCCCCCC ^ 0xAAAAAAAA),
        ("Lut3", (0x12345678, 0xFFFF0000, 0), {"lut": 0xC0}, 0x12340000),
        ("ICmp32", (0xFFFFFFFF, 1), {"cmp": 1, "unsigned": False}, 1),  # -1 < 1 signed
        ("ICmp32", (0xFFFFFFFF, 1), {"cmp": 1, "unsigned": True}, 0),
        ("ISar32", (0x80000000, 4), {}, 0xF8000000),
        ("IShl32", (1, 32), {}, None),  # undefined in SPIR-V: left to the device
        ("SMax32", (0xFFFFFFFF, 3), {}, 3),
        ("UMax32", (0xFFFFFFFF, 3), {}, 0xFFFFFFFF),
    ],
)
def test_constant_folding_follows_the_operations_meaning(op, args, attrs, want):
    b = Block()
    r = b.emit(op, *[b.const_u32(x) for x in args], **attrs)
    if r.type == Type.BOOL:  # a comparison: a branch's condition holds it
        fn = Function([block(1, b, Term("OpBranchConditional", (900, 2, 3)))])
        fn.blocks += [BasicBlock(k, [], None, Term("OpReturn")) for k in (2, 3)]
        fn.placeholders[900] = r
        seen, held = [op], lambda: fn.placeholders[900]
    else:
        observe(b, r)
        fn = Function([block(1, b, Term("OpReturn"))])
        seen, held = [op, *OBSERVE], lambda: stored(fn)[0]
    consts, _ = ir_opt.optimize(fn, key)
    got = consts.get(held().index)
    if want is None:
        assert got is None and names(fn.blocks[0]) == seen
    else:
        assert got == (r.type, want) and names(fn.blocks[0]) == seen[1:]


def test_peephole_folds_while_writing_and_sweeps_unused_results():
    from shader_svc.spirv import peephole
    from shader_svc.spirv.builder import Module

    m = Module((1, 5))
    u32, boolean = m.type("OpTypeInt", 32, 0), m.type("OpTypeBool")
    c = lambda v: m.const(u32, v)  # noqa: E731
    assert peephole.fold(m, "OpBitwiseAnd", u32, (c(1028), c(255))) == c(4)
    assert peephole.fold(m, "OpShiftRightLogical", u32, (c(1028), c(8))) == c(4)
    assert peephole.fold(m, "OpShiftLeftLogical", u32, (c(1), c(32))) is None
    assert peephole.fold(m, "OpSLessThan", boolean, (c(0xFFFFFFFF), c(0))) == m.const_bool(True)
    assert peephole.fold(m, "OpSelect", u32, (m.const_bool(False), 90, 91)) == 91
    assert peephole.fold(m, "OpIAdd", u32, (c(1), 90)) is None  # 90 is not a constant
    body = [
        ("OpLabel", 50),
        ("OpLoad", u32, 51, 40),
        ("OpIAdd", u32, 52, 51, c(1)),  # unused: goes, and then the load it used
        ("OpIMul", u32, 53, 51, 51),
        ("OpStore", 41, 53),
        ("OpReturn",),
    ]
    kept, gone = peephole.sweep(body)
    assert [t[0] for t in kept] == ["OpLabel", "OpLoad", "OpIMul", "OpStore", "OpReturn"] and gone == {52}


def _lowering(text: str):
    from shader_svc.lower.base import ComputeSpec
    from shader_svc.sm86 import decode as dec
    from shader_svc.sm86.assemble import assemble_program
    from shader_svc.sm86.to_spirv import Compute86

    lo = Compute86(dec.decode_stream(assemble_program(text)), ComputeSpec())
    spv = lo.build()
    return lo, spv


def test_the_driver_builds_one_function_of_many_instruction_blocks():
    """A straight run of instructions is one IR basic block (one per program, not per
    instruction); a guarded instruction is a selection of its own; every block ends in an
    explicit terminator; the loads and stores of registers between instructions are gone."""
    body = "\n".join("IADD3 R2, R2, R0, RZ" for k in range(20))
    lo, spv = _lowering(
        f"S2R R0, SR_TID.X\n{body}\nISETP.GE.U32.AND P0, PT, R0, 0x5, PT\n@P0 IADD3 R2, R2, 0x1, RZ\nSTG.E [R4.64], R2\nEXIT\n"
    )
    fn = lo.fn
    assert all(b.term is not None for b in fn.blocks)
    big = max(fn.blocks, key=lambda b: len(b.items))
    assert sum(isinstance(it, Op) and it.op.name == "IAdd32" for it in big.items) == 20
    heads = [b for b in fn.blocks if b.merge is not None]
    assert [h.merge.kind for h in heads] == ["OpSelectionMerge"] and heads[0].term.kind == "OpBranchConditional"
    assert fn.blocks[-1].term.kind == "OpReturn"
    # R2 accumulates through 20 additions: read once before them (then R4, R5 for the store's
    # address and R2 after the guarded addition, where two values meet); R0 is S2R's value
    reads = sorted(it.attrs["reg"] for b in fn.blocks for it in b.items if isinstance(it, Op) and it.op.name == "GetReg")
    assert reads == [2, 2, 4, 5]
    assert lo.opt_stats.reads_forwarded >= 40 and lo.opt_stats.stores_removed >= 19


@pytest.mark.skipif(not shutil.which("spirv-val"), reason="spirv-val (Debian spirv-tools) is not installed")
def test_real_translations_stay_valid_and_shrink(tmp_path, monkeypatch):
    sys.path.insert(0, str(ROOT / "bench"))
    import shader_translate as bench
    from shader_svc import translate as tr
    from shader_svc.lower.base import LowerBase

    programs = bench.make_programs(12) + bench.graphics_programs(12)
    sizes = {}
    for opt in (False, True):
        monkeypatch.setattr(LowerBase, "OPTIMIZE", opt)
        sizes[opt] = [tr.translate(p) for p in programs]
    for k, spv in enumerate(sizes[True] + sizes[False]):
        f = tmp_path / f"p{k}.spv"
        f.write_bytes(spv)
        r = subprocess.run(["spirv-val", "--target-env", "vulkan1.2", str(f)], capture_output=True, text=True)
        assert r.returncode == 0, f"program {k}: {r.stderr}"
    before, after = sum(map(len, sizes[False])), sum(map(len, sizes[True]))
    print(f"SPIR-V of {len(programs)} programs: {before} -> {after} bytes ({after / before:.2f})")
    assert after < 0.85 * before
