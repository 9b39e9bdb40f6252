"""The reciprocal and reciprocal-square-root estimate tables of FRECPE/FRSQRTE/URECPE/URSQRTE.

The architecture defines both estimates as integer functions of a 9-bit input (the Arm ARM's
``RecipEstimate`` and ``RecipSqrtEstimate``, without FEAT_RPRES).  They are computed here
from that definition and written into ``cpu_host/runtime/core/lifted_fp.h`` as two constant tables
(``render_tables``); ``tests/recompiler/test_fp_recip.py`` recomputes them and compares them
with the header, and the Unicorn test compares the instructions end to end.
"""

from __future__ import annotations


def recip_estimate(a: int) -> int:
    """RecipEstimate: ``a`` in 256..511 is a fixed-point value in [0.5, 1) in steps of 1/512;
    the result in 256..511 is 1/a in [1, 2) in steps of 1/256, rounded to nearest."""
    assert 256 <= a < 512
    a = a * 2 + 1  # the input's midpoint (units of 1/1024)
    b = (1 << 19) // a  # 2^19 / a = 1/x in units of 1/512
    r = (b + 1) // 2  # round to nearest, units of 1/256
    assert 256 <= r < 512
    return r


def recip_sqrt_estimate(a: int) -> int:
    """RecipSqrtEstimate: ``a`` in 128..255 is x in [0.25, 0.5) in steps of 1/512, in 256..511
    x in [0.5, 1) in steps of 1/256 (the bottom bit dropped); the result in 256..511 is
    1/sqrt(x) in [1, 2) in steps of 1/256."""
    assert 128 <= a < 512
    if a < 256:
        a = a * 2 + 1  # midpoint, units of 1/1024
    else:
        a = (a >> 1) << 1
        a = (a + 1) * 2  # midpoint, units of 1/1024
    b = 512
    while a * (b + 1) * (b + 1) < (1 << 28):  # the largest b with b < 2^14 / sqrt(a)
        b += 1
    r = (b + 1) // 2
    assert 256 <= r < 512
    return r


RECIP_TABLE = [recip_estimate(a) for a in range(256, 512)]  # index a - 256
RSQRT_TABLE = [recip_sqrt_estimate(a) for a in range(128, 512)]  # index a - 128


def _c_array(name: str, vals: list[int], comment: str) -> str:
    rows = [",".join(str(v) for v in vals[k : k + 24]) for k in range(0, len(vals), 24)]
    return f"/* {comment} */\nstatic const u16 {name}[{len(vals)}] = {{\n" + ",\n".join(rows) + "};\n"


def render_tables() -> str:
    """The C text of both tables, as it stands in lifted_fp.h."""
    return _c_array("NX_RECIP_EST", RECIP_TABLE, "RecipEstimate(256 + i)") + _c_array(
        "NX_RSQRT_EST", RSQRT_TABLE, "RecipSqrtEstimate(128 + i)"
    )


if __name__ == "__main__":  # regenerate: python -m recompiler.lift.fp_estimate
    print(render_tables(), end="")
