"""Kernels for the last mnemonics of issue 31's tables that some PTX makes ptxas emit
(shader-rest; ``shader_svc/README.md``, "The last untranslated mnemonics").

- **BRXU** (SM86): PTX ``brx.idx`` whose index ptxas proves uniform (computed from
  a kernel parameter and a uniform loop counter; not one that shares its register with the
  vector datapath, as ``%ctaid.x`` in the thread index does) becomes ``ULDC URt, c[0x2][URi]``
  + ``BRXU URt -next`` at -O3 (ptxas 12.9 for sm_86; -O0 keeps the vector ``LDC`` + ``BRX``,
  and sm_53 has no uniform datapath: ``BRX``).  The jump table is the same as BRX's
  (``cuda_corpus_ctl.py``), so these kernels reuse its cases.
- **PMTRIG** (SM86) / ``NOP.TRIG`` (SM53): PTX ``pmevent`` / ``pmevent.mask`` (trigger
  performance-monitor events: PTX ISA "pmevent"; nothing a program can observe).

- **Dynamic local memory** (PTX ``alloca``, ``stacksave``, ``stackrestore``; CUDA's
  ``__builtin_alloca``): the candidates for GETLMEMBASE / SETLMEMBASE (SM86, SM53) and
  GETCRSPTR / SETCRSPTR (SM53), but ptxas 12.9 emits none of them: it moves the stack pointer R1
  itself (``IADD R1, R1, -size`` + ``LOP3 R1, R1, ~(align-1)``; stackrestore a ``MOV R1, Rn``) at
  -O3 and -O0, in kernels and in recursive functions alike.  The kernels show the translator's
  local memory follows such a moving R1 (group ``rest_alloca``).

References: plain numpy of what each case computes (uint32 wrap-around).
"""

from __future__ import annotations

import numpy as np

from cuda_corpus_ctl import _brx_asm, _case_ref

GROUP = "rest_ctl"
N = 256


def _uni_ref(x: np.ndarray, n: int) -> np.ndarray:
    """``brxu_param``: case[(3 * (n >> 6) + 1) & 7](a[i])."""
    return _case_ref(x, np.full(len(x), (3 * (n >> 6) + 1) & 7))


def _uni_loop_ref(x: np.ndarray, n: int) -> np.ndarray:
    """``brxu_loop``: eight dispatches, case[(5 * j + (n >> 6)) & 7] (every case once), the
    result fed back."""
    x = x.astype(np.uint32)
    for j in range(8):
        x = _case_ref(x, np.full(len(x), (5 * j + (n >> 6)) & 7)) ^ (x >> 9)
    return x


def define(case, Inputs) -> None:
    def ins(r):
        a = r.integers(0, 2**32, N, dtype=np.uint64).astype(np.uint32)
        return Inputs(a, np.zeros(1, np.uint32), N, N, np.zeros(N, np.uint32))

    # a jump table indexed by a function of the kernel parameter n (uniform: BRXU on sm_86
    # -O3).  Every thread runs it (no divergent region around it), and the index does not share
    # a register with the thread index: ptxas keeps a value the vector datapath also uses (as
    # %ctaid.x in TID) in a vector register, and then emits BRX
    case(
        name="brxu_param",
        style="switch",
        group=GROUP,
        src=r"""
K(brxu_param) { int i = TID; uint32_t x = a[i], r, c = (uint32_t)n >> 6;
  asm volatile("""
        + '"'
        + _brx_asm(8, "shl.b32 ix, %2, 1; add.u32 ix, ix, %2; add.u32 ix, ix, 1; and.b32 ix, ix, 7;", "UB")
        + '"'
        + r""" : "=r"(r) : "r"(x), "r"(c));
  o[i] = r; }""",
        inputs=ins,
        ref=lambda x: _uni_ref(x.a[: x.n], x.n),
    )

    # the table inside a loop whose counter is uniform: eight dispatches per thread, every case
    case(
        name="brxu_loop",
        style="switch",
        group=GROUP,
        src=r"""
K(brxu_loop) { int i = TID; uint32_t x = a[i], r;
  #pragma unroll 1
  for (uint32_t j = 0; j < 8; j++) {
    uint32_t c = 5 * j + ((uint32_t)n >> 6);
    asm volatile("""
        + '"'
        + _brx_asm(8, "and.b32 ix, %2, 7;", "UL")
        + '"'
        + r""" : "=r"(r) : "r"(x), "r"(c));
    x = r ^ (x >> 9);
  }
  o[i] = x; }""",
        inputs=ins,
        ref=lambda x: _uni_loop_ref(x.a[: x.n], x.n),
    )

    # performance-monitor triggers around ordinary work (PMTRIG / NOP.TRIG: no effect)
    case(
        name="pm_trigger",
        style="misc",
        group=GROUP,
        src=r"""
K(pm_trigger) { int i = TID; if (i < n) { uint32_t x = a[i];
  asm volatile("pmevent 3;");
  x = x * 0x9E3779B9u + 7u;
  asm volatile("pmevent.mask 0x5;");
  o[i] = x ^ (x >> 13); } }""",
        inputs=ins,
        ref=lambda x: _pm_ref(x.a[: x.n]),
    )


def _pm_ref(a: np.ndarray) -> np.ndarray:
    x = (a.astype(np.uint64) * 0x9E3779B9 + 7) & 0xFFFFFFFF
    return (x ^ (x >> 13)).astype(np.uint32)


def _alloca_dyn_ref(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    out = []
    for x in a.astype(np.uint64):
        m = int(x & 15) + 1
        buf = [(x * k + int(b[k & 7])) & 0xFFFFFFFF for k in range(m)]
        s = 0
        for k in range(m):
            s = (s + buf[m - 1 - k] * (k + 1)) & 0xFFFFFFFF
        out.append(s)
    return np.array(out, np.uint32)


def _alloca_loop_ref(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    out = []
    for x in a.astype(np.uint64):
        s = 0
        for j in range(4):
            m = int((x >> (4 * j)) & 7) + 2
            buf = [((x ^ int(b[(j + k) & 7])) + k) & 0xFFFFFFFF for k in range(m)]
            for k in range(m):
                s = (s * 31 + buf[(k * 3) % m]) & 0xFFFFFFFF
        out.append(s)
    return np.array(out, np.uint32)


def define_alloca(case, Inputs) -> None:
    """Per-thread dynamic local arrays (sizes from the data: every thread's stack pointer moves
    by its own amount), one of them in a loop that saves and restores the stack pointer."""

    def ins(r):
        a = r.integers(0, 2**32, N, dtype=np.uint64).astype(np.uint32)
        b = r.integers(0, 2**32, 8, dtype=np.uint64).astype(np.uint32)
        return Inputs(a, b, 200, N, np.zeros(N, np.uint32))

    def pad(v: np.ndarray) -> np.ndarray:
        return np.concatenate([v, np.zeros(N - len(v), np.uint32)])

    case(
        name="alloca_dyn",
        style="local",
        group="rest_alloca",
        src=r"""
K(alloca_dyn) { int i = TID; if (i < n) { uint32_t x = a[i], m = (x & 15u) + 1u;
  uint32_t *buf = (uint32_t *)__builtin_alloca(m * 4u);
  for (uint32_t k = 0; k < m; k++) buf[k] = x * k + b[k & 7u];
  uint32_t s = 0;
  for (uint32_t k = 0; k < m; k++) s += buf[m - 1u - k] * (k + 1u);
  o[i] = s; } }""",
        inputs=ins,
        ref=lambda x: pad(_alloca_dyn_ref(x.a[: x.n], x.b)),
    )
    case(
        name="alloca_loop",
        style="local",
        group="rest_alloca",
        src=r"""
K(alloca_loop) { int i = TID; if (i < n) { uint32_t x = a[i], s = 0;
  #pragma unroll 1
  for (uint32_t j = 0; j < 4; j++) {
    uint64_t sp;
    asm volatile("stacksave.u64 %0;" : "=l"(sp));
    uint32_t m = ((x >> (4u * j)) & 7u) + 2u;
    uint32_t *buf = (uint32_t *)__builtin_alloca(m * 4u);
    for (uint32_t k = 0; k < m; k++) buf[k] = (x ^ b[(j + k) & 7u]) + k;
    for (uint32_t k = 0; k < m; k++) s = s * 31u + buf[(k * 3u) % m];
    asm volatile("stackrestore.u64 %0;" :: "l"(sp));
  }
  o[i] = s; } }""",
        inputs=ins,
        ref=lambda x: pad(_alloca_loop_ref(x.a[: x.n], x.b)),
    )
