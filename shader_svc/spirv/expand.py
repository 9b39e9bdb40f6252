"""A machine-code CFG expanded over static stack states, for the structuriser
(``structure.plan``): calls inlined, reconvergence targets resolved.

Contract: the lowering gives the number of basic blocks and a transfer function
``step(block, state) -> [(successor, state'), ...]`` (``successor`` a block index or
``structure.RET``; ``state`` any hashable value, in practice a tuple used as a stack: the
return blocks of the calls in progress on SM86, Maxwell's reconvergence stack of SSY/PBK/CAL
entries on SM53).  ``expand`` walks the (block, state) pairs reachable from (0, ()) and
numbers them: node 0 is the entry, ``nodes[k]`` is node k's block, ``succ[k]`` its successors
as node numbers, in ``step``'s order (taken, then fall-through).  A block reached with two
different states becomes two nodes — a function called from two places is emitted twice
(inlined), a block after two different SSYs twice — so every node's successors are
compile-time constants and the structuriser sees an ordinary graph.

Why: CALL/RET and SYNC/BRK/RET otherwise pick their target at run time (the dispatcher
loop), and code the dispatcher loop runs may not hold a workgroup barrier (BAR, the emulated
warp's exchange): the invocations of a workgroup reach it at different loop iterations,
which SPIR-V leaves undefined.  Inlined, the barriers sit in structured control flow.

Limits: recursion (a state that keeps growing) or a blow-up past ``limit`` nodes is refused
with ``structure.Unstructured``; the caller then falls back to its dispatcher loop.
"""

from __future__ import annotations

from typing import Callable, Hashable

from shader_svc.spirv.structure import RET, Unstructured

Step = Callable[[int, Hashable], list[tuple[int, Hashable]]]


def expand(n_blocks: int, step: Step, limit: int | None = None) -> tuple[list[int], list[list[int]]]:
    """(nodes, succ): the reachable (block, state) pairs from block 0 with the empty state; at
    most ``limit`` of them (default: 8 per block, at least 4096; nvcc -G code calls the same
    helpers from many places: 2,297 blocks become 7,154 nodes in the corpus's largest program)."""
    if n_blocks == 0:
        return [], []
    if limit is None:
        limit = max(4096, 8 * n_blocks)
    index: dict[tuple[int, Hashable], int] = {(0, ()): 0}
    nodes: list[int] = [0]
    states: list[Hashable] = [()]
    succ: list[list[int]] = [[]]
    work = [0]
    while work:
        k = work.pop()
        out = []
        for t, st in step(nodes[k], states[k]):
            if t == RET:
                out.append(RET)
                continue
            key = (t, st)
            j = index.get(key)
            if j is None:
                if len(nodes) >= limit:
                    raise Unstructured(f"more than {limit} blocks once calls are inlined (recursion?)")
                j = index[key] = len(nodes)
                nodes.append(t)
                states.append(st)
                succ.append([])
                work.append(j)
            out.append(j)
        succ[k] = out
    return nodes, succ
