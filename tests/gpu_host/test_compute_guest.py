"""A compute dispatch from a recompiled guest program through every process (issue 31): a Horizon
program of our own (built with our guest SDK, recompiled, run by ``nxrecomp run``: CPU host,
shader service, GPU process) loads a CUDA-style kernel's SM86 machine code (compiled by the shader
corpus's tools; a loud skip where they cannot be fetched) from its RomFS, makes it a compute
program (nvnProgramSetShaders with NVN_STAGE_COMPUTE and nvn.h's NVNcomputeControl), binds its
parameters (a compute-stage uniform buffer holding the buffers' guest GPU addresses), three
storage buffers and an image (a pitch-linear RGBA8 render target with storage in its pool,
registered in a texture pool), dispatches, fences and waits; then it prints an FNV-1a hash of the
output buffer and of the surface's bytes as it reads them from its own memory.  The expected
hashes are computed here with numpy from the same inputs (the guest's LCG, re-run in Python).

A second run (gpu-compute2) is an SM53 -O3 kernel whose literal ptxas keeps in c[0x2]: the guest
passes the bank in NVNcomputeControl's table (nvn.h NVNconstantBank), so the struct layout its
compiler gives is the one the front end reads (fails on a front end that sends no banks).

The native recorder is on (the default): the compute-stage binds go through its Python fallback
(cpu_host/horizon/hle/nvn/compute.py), the dispatch's packets into its stream."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "shader_svc"))  # the corpus tools

N = 192

GUEST_C = r"""
#include "hz_sdk.h"
#include "nn.h"
#include "nvn.h"
#include "nvn_util.h"

#define N 192
static NvnProcs nvn;
static NVNdevice dev;
static NVNmemoryPool pool;
static NVNqueue queue;
static NVNcommandBuffer cmd;
static NVNsync done;
static NVNprogram kprog;
static NVNtexture surf;
static NVNtexturePool tpool;
static uint8_t pool_mem[256 * 1024] __attribute__((aligned(4096)));
enum { OFF_A = 0, OFF_B = 0x1000, OFF_O = 0x2000, OFF_PAR = 0x3000, OFF_SURF = 0x4000, OFF_TP = 0x8000, OFF_CODE = 0x10000 };
static struct { NVNshaderControl c; NVNcomputeControl cc; } ctl;

static uint32_t fnv(const uint32_t *w, int n) {
    uint32_t h = 2166136261u;
    for (int i = 0; i < n; i++) { h ^= w[i]; h *= 16777619u; }
    return h;
}

int hz_main(void) {
    static uint8_t rom_cache[0x4000];
    nnfsMountRom("rom", rom_cache, sizeof rom_cache);
    hz_printf("nvn entry points missing: %d\n", nvn_load_procs(&nvn));
    nvnu_device_and_pool(&nvn, &dev, &pool, pool_mem, sizeof pool_mem);
    NVNbufferAddress base = nvn.nvnMemoryPoolGetBufferAddress(&pool);
    uint32_t *a = (uint32_t *)(pool_mem + OFF_A), x = 12345;
    for (int i = 0; i < N; i++) { x = x * 1664525u + 1013904223u; a[i] = x; }
    memset(pool_mem + OFF_B, 0, 64);            /* b[0] = 0: surface handle 0, image binding 0 */
    memset(pool_mem + OFF_O, 0, 4 * N);
    uint64_t par[4] = {base + OFF_A, base + OFF_B, base + OFF_O, N};
    memcpy(pool_mem + OFF_PAR, par, 28);        /* the kernel's parameters: a, b, o, n */
    nvnu_texture(&nvn, &dev, &pool, &surf, NVN_FORMAT_RGBA8, 16, 12,
                 NVN_TEXTURE_FLAGS_RENDER_TARGET | NVN_TEXTURE_FLAGS_LINEAR, OFF_SURF);
    nvn.nvnTexturePoolInitialize(&tpool, &pool, OFF_TP, 16);
    nvn.nvnTexturePoolRegisterTexture(&tpool, 3, &surf, 0);

    nvn.nvnProgramInitialize(&kprog, &dev);
    nvnu_load_shader("rom:/k.bin", pool_mem + OFF_CODE, &ctl.c, NVN_STAGE_COMPUTE, @ARCH@);
    ctl.cc.local_size[0] = 64; ctl.cc.local_size[1] = 1; ctl.cc.local_size[2] = 1;
    ctl.cc.bank_size = @BANK@;
@BANKS@
    NVNshaderData sd = {base + OFF_CODE, &ctl.c};
    hz_printf("program: %d\n", nvn.nvnProgramSetShaders(&kprog, 1, &sd));

    NVNqueueBuilder qb;
    nvn.nvnQueueBuilderSetDefaults(&qb);
    nvn.nvnQueueBuilderSetDevice(&qb, &dev);
    nvn.nvnQueueInitialize(&queue, &qb);
    nvn.nvnCommandBufferInitialize(&cmd, &dev);
    nvn.nvnSyncInitialize(&done, &dev);
    nvn.nvnCommandBufferBeginRecording(&cmd);
    nvn.nvnCommandBufferBindProgram(&cmd, &kprog, 0);
    nvn.nvnCommandBufferBindUniformBuffer(&cmd, NVN_STAGE_COMPUTE, 0, base + OFF_PAR, 28);
    nvn.nvnCommandBufferBindStorageBuffer(&cmd, NVN_STAGE_COMPUTE, 0, base + OFF_A, 4 * N);
    nvn.nvnCommandBufferBindStorageBuffer(&cmd, NVN_STAGE_COMPUTE, 1, base + OFF_B, 64);
    nvn.nvnCommandBufferBindStorageBuffer(&cmd, NVN_STAGE_COMPUTE, 2, base + OFF_O, 4 * N);
    nvn.nvnCommandBufferBindImage(&cmd, NVN_STAGE_COMPUTE, 0, nvn.nvnDeviceGetImageHandle(&dev, 3));
    nvn.nvnCommandBufferDispatchCompute(&cmd, N / 64, 1, 1);
    NVNcommandHandle h = nvn.nvnCommandBufferEndRecording(&cmd);
    nvn.nvnQueueSubmitCommands(&queue, 1, &h);
    nvn.nvnQueueFenceSync(&queue, &done, 0, 0);
    nvn.nvnQueueFlush(&queue);
    hz_printf("sync: %d\n", nvn.nvnSyncWait(&done, 30000000000ull));
    hz_printf("o: %08x first %08x last %08x\n", fnv((const uint32_t *)(pool_mem + OFF_O), N),
              ((const uint32_t *)(pool_mem + OFF_O))[0], ((const uint32_t *)(pool_mem + OFF_O))[N - 1]);
    hz_printf("surface: %08x\n", fnv((const uint32_t *)(pool_mem + OFF_SURF), N));
    hz_printf("done\n");
    return 0;
}
"""


def fnv(words: np.ndarray) -> int:
    h = 2166136261
    for w in words.tolist():
        h = ((h ^ w) * 16777619) & 0xFFFFFFFF
    return h


def guest_inputs() -> np.ndarray:
    """The N words GUEST_C's generator (x = x * 1664525 + 1013904223 mod 2^32, from 12345) gives
    the kernel as its input."""
    a, x = np.zeros(N, np.uint32), 12345
    for i in range(N):
        x = (x * 1664525 + 1013904223) & 0xFFFFFFFF
        a[i] = x
    return a


def guest_lines(want: np.ndarray) -> list[str]:
    """The lines the guest prints when the kernel wrote ``want`` to the buffer and the surface."""
    return [
        "nvn entry points missing: 0",
        "program: 1",
        "sync: 1",
        f"o: {fnv(want):08x} first {want[0]:08x} last {want[-1]:08x}",
        f"surface: {fnv(want):08x}",
        "done",
    ]


def test_a_guest_dispatch_through_every_process(tmp_path) -> None:
    import cuda_build
    import cuda_corpus
    import nvtools
    from test_compute_dispatch import SRC_BODY, expected

    from tests.horizon.hz_build import run_guest_c
    from tests.horizon.test_horizon_nvn import cpu_lines

    try:
        k = cuda_build.build(cuda_corpus.HEADER + SRC_BODY, 86, "O3")["fill"]
    except (cuda_build.NoCompiler, nvtools.ToolUnavailable) as e:
        pytest.skip(f"LOUD SKIP: no CUDA compiler/ptxas from PyPI: {e}")
    src = GUEST_C.replace("@BANK@", str(k.cbank0_size)).replace("@ARCH@", "NVN_SHADER_ARCH_SM86").replace("@BANKS@", "")
    r, log, _ = run_guest_c(src, {"/k.bin": k.code}, tmp_path)
    assert r.returncode == 0, log[-3000:]
    a = guest_inputs()
    want = expected(a)
    assert cpu_lines(log) == guest_lines(want), log[-3000:]


# gpu-compute2: an SM53 -O3 kernel whose literal 0.3f ptxas keeps in its program bank c[0x2]; the
# guest hands the bank to nvnProgramSetShaders in NVNcomputeControl's table (nvn.h
# NVNconstantBank, its bytes loaded from RomFS into the pool), so the struct layout the guest's
# compiler gives is the one the front end reads.
SRC_LIT_FILL = r"""
K(fill) {
  int i = TID; if (i >= n) return;
  uint32_t v = __float_as_uint(__fmaf_rn((float)(a[i] >> 9), 0.3f, 0.7f));
  o[i] = v;
  cudaSurfaceObject_t s = ((const unsigned long long *)b)[0];
  surf2Dwrite(v, s, (i & 15) * 4, i >> 4);
}
"""
GUEST_BANKS = r"""
    static NVNconstantBank kbanks[1];
    NVNshaderControl bank_file;
    nvnu_load_shader("rom:/c2.bin", pool_mem + 0x30000, &bank_file, 0, 0);
    kbanks[0].bank = 2; kbanks[0].size = bank_file.size; kbanks[0].data = base + 0x30000;
    ctl.cc.bank_count = 1; ctl.cc.banks = kbanks;
"""


def test_a_guest_sm53_kernel_with_its_literal_bank_through_every_process(tmp_path) -> None:
    import cuda_build
    import cuda_corpus
    import nvtools
    from test_compute_dispatch import fma32

    from shader_svc.sm53 import decode as dec
    from tests.horizon.hz_build import run_guest_c
    from tests.horizon.test_horizon_nvn import cpu_lines

    try:
        k = cuda_build.build(cuda_corpus.HEADER + SRC_LIT_FILL, 53, "O3")["fill"]
    except (cuda_build.NoCompiler, nvtools.ToolUnavailable) as e:
        pytest.skip(f"LOUD SKIP: no CUDA compiler/ptxas from PyPI: {e}")
    assert [n for n, _ in k.banks] == [2] and any("c[0x2]" in i.text() for i in dec.decode_stream(k.code))
    src = GUEST_C.replace("@BANK@", str(k.cbank0_size)).replace("@ARCH@", "NVN_SHADER_ARCH_SM53")
    r, log, _ = run_guest_c(src.replace("@BANKS@", GUEST_BANKS), {"/k.bin": k.code, "/c2.bin": k.banks[0][1]}, tmp_path)
    assert r.returncode == 0, log[-3000:]
    a = guest_inputs()
    want = fma32((a >> 9).astype(np.float32), 0.3, 0.7).view(np.uint32)
    assert cpu_lines(log) == guest_lines(want), log[-3000:]
