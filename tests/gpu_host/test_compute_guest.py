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
    nvnu_load_shader("rom:/k.bin", pool_mem + OFF_CODE, &ctl.c, NVN_STAGE_COMPUTE, NVN_SHADER_ARCH_SM86);
    ctl.cc.local_size[0] = 64; ctl.cc.local_size[1] = 1; ctl.cc.local_size[2] = 1;
    ctl.cc.bank_size = @BANK@;
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
    r, log, _ = run_guest_c(GUEST_C.replace("@BANK@", str(k.cbank0_size)), {"/k.bin": k.code}, tmp_path)
    assert r.returncode == 0, log[-3000:]
    a, x = np.zeros(N, np.uint32), 12345
    for i in range(N):
        x = (x * 1664525 + 1013904223) & 0xFFFFFFFF
        a[i] = x
    want = expected(a)
    assert cpu_lines(log) == [
        "nvn entry points missing: 0",
        "program: 1",
        "sync: 1",
        f"o: {fnv(want):08x} first {want[0]:08x} last {want[-1]:08x}",
        f"surface: {fnv(want):08x}",
        "done",
    ], log[-3000:]
