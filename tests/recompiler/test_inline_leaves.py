"""recompiler/inline_leaves.py: which callees get a static copy in their callers' shards.

The lifted programs in tests/realprogs and tests/recompiler/test_busybox_recompiled.py run with
these copies against qemu; here the selection itself: leaves only, calls rewritten only where a
copy exists, the copy compiled with a real C compiler, the caller-shard cap respected."""

from __future__ import annotations

import subprocess
from pathlib import Path

from recompiler import cc, inline_leaves
from recompiler.lift import interproc
from recompiler.build import FLAGS, RUNTIME_DIR
from recompiler.inline_leaves import COPY_SIG, copy_call
from recompiler.lift.emitter import ARGS, SIG


def _fn(entry: int, body: str) -> str:
    return f"NxRet F_{entry:x}{SIG} {{\n{body}}}\n"


def _call(target: int, ret: int) -> str:
    """emitter.call's direct call statements"""
    return f"  x30 = {ret:#x}ull;\n  _r = F_{target:x}{ARGS};\n  if (UNLIKELY(_r.pc != {ret:#x}ull)) return _r;\n  x0 = _r.x0;\n"


def _proto(entry: int) -> str:
    return f"NxRet F_{entry:x}{SIG};\n"


def _compile(tmp_path: Path, text: str, fn: str | None = None) -> str:
    """Compile a shard's C with a real C compiler (the build's flags); with ``fn``, to
    assembly, and return that function's."""
    c = tmp_path / "shard.c"
    c.write_text(text)
    out = tmp_path / ("shard.s" if fn else "shard.o")
    r = subprocess.run(
        [*cc.compiler(), "-S" if fn else "-c", str(c), "-o", str(out), "-O2", *FLAGS, f"-I{RUNTIME_DIR}"],
        capture_output=True,
        text=True,
    )
    assert r.returncode == 0, r.stderr[-2000:]
    if not fn:
        return ""
    asm = out.read_text()
    body = asm[asm.index(f"{fn}:") :]
    return body[: body.index(".Lfunc_end")]


LOCALS = "  u64 x0 = a0, x1 = a1, x30 = a30, sp = asp, x29 = a29; NxRet _r;\n"
BACK = "  return (NxRet){ 0, x0 };\n"


def _live(entry: int, callees=(), opaque=False) -> interproc.FnLive:
    f = interproc.FnLive(entry, 0, 0, opaque, list(callees))
    f.site_target = list(callees)
    return f


LEAF = _fn(0x100, "  u64 x0 = a0;\n  x0 = x0 * 3 + 1;\n  return (NxRet){ a30, x0 };\n")
OPAQUE = _fn(0x200, "  s->pc = a0; MUSTTAIL return nx_jump(s, a0, a1, a30, asp, a29);\n")
NONLEAF = _fn(0x300, LOCALS + _call(0x100, 0x304) + BACK)


def _caller(entry: int) -> str:
    return _fn(entry, LOCALS + _call(0x100, 0x1004) + _call(0x200, 0x1008) + _call(0x300, 0x100C) + BACK)


def _shards(n_callers: int) -> list[inline_leaves.Shard]:
    own = inline_leaves.Shard(
        '#include "lifted.h"\n' + LEAF + OPAQUE + NONLEAF,
        [_live(0x100), _live(0x200, opaque=True), _live(0x300, callees=[0x100])],
    )
    out = [own]
    for k in range(n_callers):
        e = 0x1000 + 0x100 * k
        out.append(
            inline_leaves.Shard(
                '#include "lifted.h"\n' + _proto(0x100) + _proto(0x200) + _proto(0x300) + _caller(e),
                [_live(e, callees=[0x100, 0x200, 0x300])],
            )
        )
    return out


def test_only_leaves_are_copied_and_only_their_calls_rewritten(tmp_path: Path) -> None:
    shards = _shards(2)
    texts = inline_leaves.copy_into_callers(shards)
    assert texts[0] == shards[0].text  # the leaf's own shard calls it as before
    for text in texts[1:]:
        assert f"static u64 I_100{COPY_SIG} {{" in text
        assert copy_call("100") in text and f"  _r = F_100{ARGS};" not in text
        assert "I_200" not in text and "I_300" not in text  # not leaves
        assert f"  _r = F_200{ARGS};" in text and f"  _r = F_300{ARGS};" in text
        # the copy comes before the function that calls it, after the prototypes
        assert text.index(_proto(0x300)) < text.index("static u64 I_100") < text.index(f"{SIG} {{\n{LOCALS}")
        _compile(tmp_path, text)


def test_a_leaf_called_from_too_many_shards_is_left_alone() -> None:
    n = inline_leaves.MAX_CALLER_SHARDS + 1
    texts = inline_leaves.copy_into_callers(_shards(n))
    assert all("I_100" not in t for t in texts)
    texts = inline_leaves.copy_into_callers(_shards(n - 1))
    assert all(copy_call("100") in t for t in texts[1:])


def test_a_big_leaf_is_not_copied() -> None:
    body = "".join(f"  x0 = x0 + {k};\n" for k in range(inline_leaves.MAX_LINES))
    big = _fn(0x100, "  u64 x0 = a0;\n" + body + "  return (NxRet){ a30, x0 };\n")
    shards = _shards(1)
    shards[0] = inline_leaves.Shard(shards[0].text.replace(LEAF, big), shards[0].facts)
    assert 0x100 not in inline_leaves.leaves(shards)
    assert "I_100" not in inline_leaves.copy_into_callers(shards)[1]


def test_a_small_function_whose_only_exit_is_a_tail_call_is_copied_with_its_callee_declared(tmp_path: Path) -> None:
    # getc's shape: a few loads and a store, or a tail call when its buffer is empty
    tail = _fn(
        0x400,
        "  u64 x0 = a0, x1 = a1, x30 = a30, sp = asp, x29 = a29;\n  if (x0 == 0) { MUSTTAIL return F_500(s, x0, x1, x30, sp, x29); }\n"
        "  return (NxRet){ x30, x0 + 1 };\n",
    )
    callee = _fn(0x500, "  return (NxRet){ a30, a0 };\n")
    f = interproc.FnLive(0x400, 0, 0, False, [0x500])  # a tail callee, no call site
    own = inline_leaves.Shard('#include "lifted.h"\n' + _proto(0x500) + tail + callee, [f, _live(0x500)])
    caller = inline_leaves.Shard(
        '#include "lifted.h"\n' + _proto(0x400) + _fn(0x1000, LOCALS + _call(0x400, 0x1004) + BACK),
        [_live(0x1000, callees=[0x400])],
    )
    texts = inline_leaves.copy_into_callers([own, caller])
    assert f"static u64 I_400{COPY_SIG} {{" in texts[1] and copy_call("400") in texts[1]
    assert texts[1].index(_proto(0x500)) < texts[1].index("static u64 I_400")
    _compile(tmp_path, texts[1])


def test_a_library_routine_is_copied_into_every_calling_shard_always_inlined(tmp_path: Path) -> None:
    # a leaf over MAX_LINES, called from more shards than MAX_CALLER_SHARDS: copied only once it
    # has ROUTINE_SITES direct call sites in the program (the caller shards' and 0x300's)
    body = "".join(f"  x0 = x0 + {k};\n" for k in range(inline_leaves.MAX_LINES + 10))
    routine = _fn(0x100, "  u64 x0 = a0;\n" + body + "  return (NxRet){ a30, x0 };\n")
    assert inline_leaves.MAX_LINES + 10 < inline_leaves.ROUTINE_LINES
    n = inline_leaves.ROUTINE_SITES - 1  # + the call in 0x300: ROUTINE_SITES sites
    assert n > inline_leaves.MAX_CALLER_SHARDS
    copies = {}
    for callers, copied in ((n, True), (n - 1, False)):
        shards = _shards(callers)
        shards[0] = inline_leaves.Shard(shards[0].text.replace(LEAF, routine), shards[0].facts)
        assert (0x100 in inline_leaves.routines(shards)) == copied
        texts = inline_leaves.copy_into_callers(shards)
        assert texts[0] == shards[0].text
        for text in texts[1:]:
            assert (f"static __attribute__((always_inline)) u64 I_100{COPY_SIG} {{" in text) == copied
            assert (copy_call("100") in text) == copied and "I_200" not in text
        copies[copied] = texts[1]
    _compile(tmp_path, copies[True])


def test_comment_lines_do_not_count_against_a_leaf() -> None:
    # recompiler.comments puts each guest instruction's disassembly above its C; a build with
    # them (for gdb and perf annotate) must copy the same leaves as one without
    n = inline_leaves.MAX_LINES - 4
    plain = "".join(f"  x0 = x0 + {k};\n" for k in range(n))
    commented = "".join(f"  /* {0x100 + 4 * k:x}: add x0, x0, #{k} */\n  x0 = x0 + {k};\n" for k in range(n))
    for body in (plain, commented):
        leaf = _fn(0x100, "  u64 x0 = a0;\n" + body + "  return (NxRet){ a30, x0 };\n")
        shards = _shards(1)
        shards[0] = inline_leaves.Shard(shards[0].text.replace(LEAF, leaf), shards[0].facts)
        assert 0x100 in inline_leaves.leaves(shards)
    assert inline_leaves.code_lines(_fn(0x100, commented)) == inline_leaves.code_lines(_fn(0x100, plain))


def test_a_function_only_one_function_of_its_shard_calls_is_marked_always_inline(tmp_path: Path) -> None:
    """single_callers: 0x300 (a non-leaf: it calls 0x100) has one caller, 0x600, at two sites in
    the same shard: marked, and clang inlines it there (0x600's code calls 0x100, never 0x300).
    So is the leaf 0x100, whose one caller is 0x300.  Not marked: 0x700 (two callers), 0x800
    (also tail-called), 0x900 (a jump table), 0xa00 (three call sites), 0xb00 (its one caller
    is in another shard)."""
    simple = {e: _fn(e, "  return (NxRet){ a30, a0 + 1 };\n") for e in (0x700, 0x800, 0xA00, 0xB00)}
    table = _fn(0x900, "  u64 x0 = a0;\n JT_0: x0 += 1;\n  return (NxRet){ a30, x0 };\n")
    f = _fn(
        0x600,
        LOCALS
        + _call(0x300, 0x604)
        + _call(0x300, 0x608)
        + _call(0x800, 0x60C)
        + _call(0x900, 0x610)
        + _call(0xA00, 0x614)
        + _call(0xA00, 0x618)
        + _call(0xA00, 0x61C)
        + BACK,
    )
    k = _fn(0x640, LOCALS + _call(0x700, 0x644) + BACK)
    j = _fn(0x680, LOCALS + _call(0x700, 0x684) + "  MUSTTAIL return F_800(s, x0, x1, x30, sp, x29);\n")
    # 0x300 big enough that clang's own heuristics would not inline it twice
    work = "".join(f"  x0 = x0 * {2 * n + 3} + s->x[{n % 29}]; s->x[{(n + 7) % 29}] = x0;\n" for n in range(120))
    big = _fn(0x300, LOCALS + _call(0x100, 0x304) + work + BACK)
    own_text = '#include "lifted.h"\n' + LEAF + big + "".join(simple.values()) + table + f + k + j
    tail_caller = _live(0x680, callees=[0x700])
    tail_caller.tail_target = [0x800]
    own = inline_leaves.Shard(
        own_text,
        [
            _live(0x100),
            _live(0x300, callees=[0x100]),
            *[_live(e) for e in simple],
            _live(0x900),
            _live(0x600, callees=[0x300, 0x300, 0x800, 0x900, 0xA00, 0xA00, 0xA00]),
            _live(0x640, callees=[0x700]),
            tail_caller,
        ],
    )
    other = inline_leaves.Shard(
        '#include "lifted.h"\n' + _proto(0xB00) + _fn(0x1000, LOCALS + _call(0xB00, 0x1004) + BACK),
        [_live(0x1000, callees=[0xB00])],
    )
    texts = inline_leaves.single_callers([own, other], [own.text, other.text])
    marked = {
        e
        for e in (0x100, 0x300, 0x700, 0x800, 0x900, 0xA00, 0xB00)
        if f"__attribute__((always_inline)) NxRet F_{e:x}{SIG}" in texts[0]
    }
    assert marked == {0x100, 0x300}, marked
    assert texts[1] == other.text
    body = _compile(tmp_path, texts[0], "F_600")
    calls = [line for line in body.splitlines() if "call" in line or "jmp" in line and "F_" in line]
    assert not any("F_300" in line for line in calls), body


def test_a_copy_returns_its_pc_apart_so_the_callers_check_folds_on_its_fast_path(tmp_path: Path) -> None:
    """as_copy: a leaf with two ways out (a return with the caller's own return address, and a
    tail call, like getc's empty-buffer path) is copied returning X0 as its C result and the pc
    through a pointer.  Compiled, the caller checks the pc it returns to only after the tail
    callee's call: on the fast path clang knows it is the constant and drops the check (with
    an NxRet returned from each exit, the merged aggregate hid that and the check ran always)."""
    leaf = _fn(
        0x100,
        "  u64 x0 = a0, x1 = a1, x30 = a30, sp = asp, x29 = a29;\n  if (x0 < 100) return (NxRet){ x30, x0 + 1 };\n"
        f"  MUSTTAIL return F_500{ARGS};\n",
    )
    own = inline_leaves.Shard('#include "lifted.h"\n' + _proto(0x500) + leaf, [_live(0x100)])
    own.facts[0].tail_target = [0x500]
    caller = inline_leaves.Shard(
        '#include "lifted.h"\n' + _proto(0x100) + _fn(0x1000, LOCALS + _call(0x100, 0x1004) + BACK),
        [_live(0x1000, callees=[0x100])],
    )
    text = inline_leaves.copy_into_callers([own, caller])[1]
    assert f"static u64 I_100{COPY_SIG} {{" in text and copy_call("100") in text
    assert "*_pc = _o.pc; return _o.x0;" in text and "MUSTTAIL" not in text
    body = _compile(tmp_path, text, "F_1000")
    code = [ln.split("#")[0].strip() for ln in body.splitlines()]
    code = [ln for ln in code if ln and not ln.startswith(".") and not ln.startswith("mov")]
    checks = [i for i, ln in enumerate(code) if ln.startswith("cmp") and f"${0x1004}" in ln]
    assert checks, body  # the tail callee's return is checked
    assert all("call" in code[i - 1] and "F_500" in code[i - 1] for i in checks), body


def test_a_chain_of_single_callers_is_inlined_only_while_the_copies_stay_bounded() -> None:
    """single_callers on libgmp's shape: eight functions of one shard, each the only caller of the
    next, at two sites.  Marking every one (the rule before the bound) copies the deepest one
    2**7 times into the first: clang spent an hour on such a 2,000-line shard (a 199,000
    instruction function).  Each function's size with its marked callees copied in (counted
    here from the marks in the output, once per call site) stays within its own lines plus
    MAX_GROWTH, and the bound still marks the callees that fit (the deepest ones)."""
    work = "".join(f"  x0 = x0 * {2 * n + 3} + s->x[{n % 29}];\n" for n in range(300))
    chain = [0x1000 * (k + 1) for k in range(8)]
    texts, facts = [], []
    for k, e in enumerate(chain):
        nxt = chain[k + 1] if k + 1 < len(chain) else None
        calls = _call(nxt, e + 4) + _call(nxt, e + 8) if nxt else ""
        texts.append(_fn(e, LOCALS + calls + work + BACK))
        facts.append(_live(e, callees=[nxt, nxt] if nxt else []))
    shard = inline_leaves.Shard('#include "lifted.h"\n' + "".join(texts), facts)
    unbounded = inline_leaves.single_callers([shard], [shard.text], max_growth=1 << 40)[0]
    assert all(f"always_inline)) NxRet F_{e:x}" in unbounded for e in chain[1:])
    out = inline_leaves.single_callers([shard], [shard.text])[0]
    marked = {e for e in chain if f"__attribute__((always_inline)) NxRet F_{e:x}{SIG}" in out}
    own = {e: inline_leaves.code_lines(_fn(e, LOCALS + work + BACK)) for e in chain}
    size = {}
    for k in reversed(range(len(chain))):
        e = chain[k]
        nxt = chain[k + 1] if k + 1 < len(chain) else None
        size[e] = own[e] + (2 * size[nxt] if nxt in marked else 0)
        assert size[e] <= own[e] + inline_leaves.MAX_GROWTH, (hex(e), size[e])
    assert chain[-1] in marked and chain[-2] in marked, sorted(map(hex, marked))
    assert max(size.values()) < 4 * inline_leaves.MAX_GROWTH
