"""shader-assert's corpus kernels (issue 31): device ``assert`` through our ``__assertfail``
(``cuda_build_assert.py``), and kernels for the table rows that were translated but never
executed exactly (each names the CUDA/PTX that makes the compiler emit the row)."""

from __future__ import annotations

import numpy as np


def define(case, Inputs) -> None:
    """Group ``assert``: an assert that holds for every thread (runs exactly, the log stays
    empty) and one that fails for some threads (reported as cudaErrorAssert naming each thread
    and the line, the other threads' words exact)."""

    def holds_in(r):
        a = r.integers(0, 2**32, 200, dtype=np.uint64).astype(np.uint32)
        a[a % 7 == 3] += 1  # no x % 7 == 3: the assertion holds everywhere
        return Inputs(a, np.zeros(1, np.uint32), 200, 200, np.zeros(200, np.uint32))

    case(
        name="assert_holds",
        style="assert",
        group="assert",
        src=r"""
#include <assert.h>
K(assert_holds) {
  int i = TID;
  if (i < n) { uint32_t x = a[i];
    assert(x % 7u != 3u);
    o[i] = x * 3u + 1u; }
}""",
        inputs=holds_in,
        ref=lambda x: (x.a.astype(np.uint64) * 3 + 1).astype(np.uint32),
    )

    def fails_in(r):
        a = r.integers(0, 2**32, 200, dtype=np.uint64).astype(np.uint32)
        a[a % 5 == 2] += 1
        bad = np.array([3, 64, 65, 130, 199])  # in three blocks; the rest hold
        a[bad] = a[bad] - a[bad] % 5 + 2
        return Inputs(a, np.zeros(1, np.uint32), 200, 256, np.full(200, 0xDEADBEEF, np.uint32))

    case(
        name="assert_fails",
        style="assert",
        group="assert",
        src=r"""
#include <assert.h>
K(assert_fails) {
  int i = TID;
  if (i < n) { uint32_t x = a[i];
    assert(x % 5u != 2u);
    o[i] = x ^ 0x5a5a5a5au; }
}""",
        inputs=fails_in,
        ref=lambda x: x.a ^ np.uint32(0x5A5A5A5A),
        asserts=lambda x: set(np.nonzero(x.a[: x.n] % 5 == 2)[0].tolist()),
        assert_text="x % 5u != 2u",
    )


def define_rows(case, Inputs) -> None:
    """Kernels for the rows translated but never executed exactly (filled below)."""
