"""The C of a vector register's access, and the record of each write: one place that says how
the lifter's SIMD/FP and load/store handlers name V0-V31 and write them.

A function keeps each V register it names in an ``NxVec`` local ``vN`` (the wrapper declares,
loads and writes back those its records name: ``wrap.FunctionWrapper._locals``).  Handlers name
the local as ``vN`` (``v(n)``).  The accesses that matter to the host compiler have a
vector-typed form (``NXV(T, x)``, lifted.h), not an access through the union's ``u128``: the
writers below return that statement and note a ``VecWrite`` in the instruction's record
(``result.Lifted.vec_writes``): the register and the kind of write, as data
(tests/recompiler/test_vector_writes.py checks every record against the instruction's declared
effects: each is a write that surely overwrites the whole register).  Other writes (lanes, a
whole ``NxVec`` value) are the handlers' own C of the union.

- a scalar write of the low lane that zeroes the rest (``low_fp``, ``low``): through the
  union's u128 clang kept the zero upper half in a general register of its own (a V local live
  across a loop took two general registers, or a spill store of 0 at every FP instruction);
- a Q register's load and store (``load_q``, ``store_q``: LQ128/SQ128): the union returned or
  passed by value travels as a u128, so clang gave the local an integer type and moved each Q
  register in two general registers (zstd's match copy: 8-byte loads of what two 8-byte stores
  had just written, ~18 % of its decompression stalled on them);
- a read of the low 64 bits (``low64``).

Until session 26 the handlers wrote ``s->v[N]`` and union accesses, and the wrapper rewrote
that C with regular expressions after the fact; the generated C is the same.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from recompiler.lift.emitter import FunctionEmitter


class VW(enum.Enum):
    """How an instruction writes a V register."""

    LOW_FP = "low_fp"  # a float or double in lane 0, the rest zero (scalar FP results)
    LOW = "low"  # 64 bits or fewer, zero-extended to 128 (FMOV from X, scalar integer results)
    LOAD_Q = "load_q"  # all 128 bits from guest memory (LDR Q)


@dataclass(frozen=True)
class VecWrite:
    """One write of V``reg`` by an instruction (``result.Lifted.vec_writes``)."""

    reg: int
    kind: VW


def v(n: int) -> str:
    """The C local of V``n``."""
    return f"v{n}"


def _note(em: FunctionEmitter | None, reg: int, kind: VW) -> None:
    cur = getattr(em, "cur", None)
    if cur is not None:
        cur.vec_writes.append(VecWrite(reg, kind))


def low_fp(em: FunctionEmitter | None, d: int, lane: str, value: str) -> str:
    """V``d`` = ``value`` (a C float, ``lane`` ``f``, or double, ``fd``) in lane 0, the rest 0."""
    _note(em, d, VW.LOW_FP)
    if lane == "fd":
        return f"NXV(NxV2f64, v{d}) = (NxV2f64){{ {value}, 0.0 }};"
    assert lane == "f", lane
    return f"NXV(NxV4f32, v{d}) = (NxV4f32){{ {value}, 0.0f, 0.0f, 0.0f }};"


def low(em: FunctionEmitter | None, d: int, value: str) -> str:
    """V``d`` = ``value`` (a C integer of at most 64 bits), zero-extended to 128 bits."""
    _note(em, d, VW.LOW)
    return f"NXV(NxV2u64, v{d}) = (NxV2u64){{ (u64)({value}), 0 }};"


def load_q(em: FunctionEmitter | None, d: int, addr: str) -> str:
    """V``d`` = the 16 bytes of guest memory at ``addr`` (a C expression)."""
    _note(em, d, VW.LOAD_Q)
    return f"NXV(NxV2u64, v{d}) = LQ128({addr});"


def store_q(addr: str, n: int) -> str:
    """The 16 bytes of V``n`` to guest memory at ``addr``."""
    return f"SQ128({addr}, NXV(NxV2u64, v{n}));"


def low64(n: int) -> str:
    """The low 64 bits of V``n``, as a u64 (a vector lane read, no u128 in between)."""
    return f"(NXV(NxV2u64, v{n})[0])"
