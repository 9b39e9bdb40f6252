"""The estimate tables of lifted_fp.h are the ones ``recompiler/lift/fp_estimate.py`` computes
from the Arm ARM's RecipEstimate/RecipSqrtEstimate (the instructions themselves are checked
against Unicorn in test_unicorn.py, classes fp_recip).  A hand edit of either side fails here."""

from __future__ import annotations

import re

from recompiler.build import RUNTIME_DIR
from recompiler.lift import fp_estimate


def _table(text: str, name: str) -> list[int]:
    m = re.search(rf"static const u16 {name}\[(\d+)\] = \{{([^}}]*)\}};", text)
    assert m, f"{name} not found in lifted_fp.h"
    vals = [int(v) for v in m.group(2).replace("\n", "").split(",")]
    assert len(vals) == int(m.group(1))
    return vals


def test_header_tables_match_the_definition():
    text = (RUNTIME_DIR / "lifted_fp.h").read_text()
    assert _table(text, "NX_RECIP_EST") == fp_estimate.RECIP_TABLE
    assert _table(text, "NX_RSQRT_EST") == fp_estimate.RSQRT_TABLE
    assert fp_estimate.render_tables() in text


def test_estimates_are_monotonic_and_in_range():
    """1/x and 1/sqrt(x) fall as x grows; every entry is a 9-bit value with its top bit set."""
    for table in (fp_estimate.RECIP_TABLE, fp_estimate.RSQRT_TABLE[:128], fp_estimate.RSQRT_TABLE[128:]):
        assert all(256 <= v < 512 for v in table)
        assert all(a >= b for a, b in zip(table, table[1:]))
    # the estimate is within one step of 1/x at the midpoint of each input step
    for k, r in enumerate(fp_estimate.RECIP_TABLE):
        x = (256 + k + 0.5) / 512
        assert abs(r / 256 - 1 / x) <= 1 / 256
