"""``__device__`` globals from a recompiled guest program through every process (issue 31;
gpu_host/PROTOCOL.md "Global data"): a Horizon program of our own (our guest SDK, recompiled, run
by ``nxrecomp run``: CPU host, shader service, GPU process) loads the -G build of the corpus kernel
``g2_virtual`` (virtual calls through vtables in ``.nv.global.init``), its program banks, its
globals' initialised bytes and its relocation table from its RomFS, hands them to
nvnProgramSetShaders in nvn.h's NVNcomputeControl (flags NVN_COMPUTE_GLOBALS) /
NVNcomputeGlobals / NVNglobalReloc, dispatches, fences, waits and prints an FNV-1a hash of the
output buffer as it reads it from its own memory.  The expected hash is numpy's reference of the
same inputs (the guest's LCG re-run here), so the struct layout the guest's compiler gives is the
one the front end reads (a front end that ignores the globals gets the translation refused: the
callees are only in the vtables)."""

from __future__ import annotations

import struct
import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "shader_svc"))  # the corpus tools

N, WORDS = 200, 256

GUEST_C = r"""
#include "hz_sdk.h"
#include "nn.h"
#include "nvn.h"
#include "nvn_util.h"

static NvnProcs nvn;
static NVNdevice dev;
static NVNmemoryPool pool;
static NVNqueue queue;
static NVNcommandBuffer cmd;
static NVNsync done;
static NVNprogram kprog;
static uint8_t pool_mem[1024 * 1024] __attribute__((aligned(4096)));
enum { OFF_A = 0, OFF_B = 0x1000, OFF_O = 0x2000, OFF_PAR = 0x3000, OFF_CODE = 0x10000, OFF_BANKS = 0x80000,
       OFF_INIT = 0xA0000, OFF_REL = 0xC0000 };
static struct { NVNshaderControl c; NVNcomputeControl cc; } ctl;
static NVNconstantBank kbanks[4];
static NVNcomputeGlobals globs;

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
    uint32_t *a = (uint32_t *)(pool_mem + OFF_A), *b = (uint32_t *)(pool_mem + OFF_B), x = 777;
    for (int i = 0; i < @WORDS@; i++) { x = x * 1664525u + 1013904223u; a[i] = x; x = x * 1664525u + 1013904223u; b[i] = x; }
    memset(pool_mem + OFF_O, 0, 4 * @WORDS@);
    uint64_t par[4] = {base + OFF_A, base + OFF_B, base + OFF_O, @N@};
    memcpy(pool_mem + OFF_PAR, par, 28);        /* the kernel's parameters: a, b, o, n */

    nvn.nvnProgramInitialize(&kprog, &dev);
    nvnu_load_shader("rom:/k.bin", pool_mem + OFF_CODE, &ctl.c, NVN_STAGE_COMPUTE, NVN_SHADER_ARCH_SM86);
    ctl.cc.local_size[0] = 64; ctl.cc.local_size[1] = 1; ctl.cc.local_size[2] = 1;
    ctl.cc.bank_size = @BANK@;
    NVNshaderControl f;
    uint32_t at = OFF_BANKS;
@BANKS@
    ctl.cc.banks = kbanks;
    nvnu_load_shader("rom:/g.bin", pool_mem + OFF_INIT, &f, 0, 0);
    globs.size = @SIZE@; globs.init_size = f.size; globs.init = base + OFF_INIT;
    nvnu_load_shader("rom:/r.bin", pool_mem + OFF_REL, &f, 0, 0);
    globs.reloc_count = f.size / sizeof(NVNglobalReloc); globs.relocs = (const NVNglobalReloc *)(pool_mem + OFF_REL);
    ctl.cc.flags = NVN_COMPUTE_GLOBALS; ctl.cc.globals = &globs;
    hz_printf("reloc entry: %d bytes, globals %d bytes\n", (int)sizeof(NVNglobalReloc), (int)sizeof(NVNcomputeGlobals));
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
    nvn.nvnCommandBufferBindStorageBuffer(&cmd, NVN_STAGE_COMPUTE, 0, base + OFF_A, 4 * @WORDS@);
    nvn.nvnCommandBufferBindStorageBuffer(&cmd, NVN_STAGE_COMPUTE, 1, base + OFF_B, 4 * @WORDS@);
    nvn.nvnCommandBufferBindStorageBuffer(&cmd, NVN_STAGE_COMPUTE, 2, base + OFF_O, 4 * @WORDS@);
    nvn.nvnCommandBufferDispatchCompute(&cmd, @WORDS@ / 64, 1, 1);
    NVNcommandHandle h = nvn.nvnCommandBufferEndRecording(&cmd);
    nvn.nvnQueueSubmitCommands(&queue, 1, &h);
    nvn.nvnQueueFenceSync(&queue, &done, 0, 0);
    nvn.nvnQueueFlush(&queue);
    hz_printf("sync: %d\n", nvn.nvnSyncWait(&done, 30000000000ull));
    const uint32_t *o = (const uint32_t *)(pool_mem + OFF_O);
    hz_printf("o: %08x first %08x last %08x\n", fnv(o, @WORDS@), o[0], o[@N@ - 1]);
    hz_printf("done\n");
    return 0;
}
"""

BANK_LINE = """    at += nvnu_load_shader("rom:/c{i}.bin", pool_mem + at, &f, 0, 0);
    kbanks[{i}].bank = {num}; kbanks[{i}].size = f.size; kbanks[{i}].data = base + at - ((f.size + 255) & ~255);
"""


def lcg_inputs() -> tuple[np.ndarray, np.ndarray]:
    """The a and b words GUEST_C's generator gives (x = x * 1664525 + 1013904223 mod 2^32 from
    777, a[i] then b[i])."""
    a, b, x = np.zeros(WORDS, np.uint32), np.zeros(WORDS, np.uint32), 777
    for i in range(WORDS):
        x = (x * 1664525 + 1013904223) & 0xFFFFFFFF
        a[i] = x
        x = (x * 1664525 + 1013904223) & 0xFFFFFFFF
        b[i] = x
    return a, b


@pytest.mark.heavy  # about 55 s (a whole `nxrecomp run`); test_compute_globals.py covers the path in CI
def test_a_guest_kernel_with_globals_through_every_process(tmp_path) -> None:
    import cuda_build
    import cuda_corpus as cc
    import nvtools
    from test_compute_globals import nvn_globals

    from tests.gpu_host.test_compute_guest import fnv
    from tests.horizon.hz_build import run_guest_c
    from tests.horizon.test_horizon_nvn import cpu_lines

    try:
        k = cuda_build.build(cc.group_source("ctl2_globals"), 86, "G")["g2_virtual"]
    except (cuda_build.NoCompiler, nvtools.ToolUnavailable) as e:
        pytest.skip(f"LOUD SKIP: no CUDA compiler/ptxas from PyPI: {e}")
    code, bank4, size, init, relocs = nvn_globals(k.globals_cubin, k.name, 86)
    banks = [*k.banks, *bank4]
    rom = {
        "/k.bin": code,
        "/g.bin": init,
        "/r.bin": b"".join(struct.pack("<IIIIQq", w, kd, bk, 0, o, ad) for w, kd, bk, o, ad in relocs),
    }
    lines = []
    for i, (num, data) in enumerate(banks):
        rom[f"/c{i}.bin"] = data
        lines.append(BANK_LINE.format(i=i, num=num))
    lines.append(f"    ctl.cc.bank_count = {len(banks)};")
    src = (
        GUEST_C.replace("@BANKS@", "".join(lines))
        .replace("@BANK@", str(k.cbank0_size))
        .replace("@SIZE@", str(size))
        .replace("@WORDS@", str(WORDS))
        .replace("@N@", str(N))
    )
    r, log, _ = run_guest_c(src, rom, tmp_path)
    assert r.returncode == 0, log[-3000:]
    a, b = lcg_inputs()
    case = next(c for c in cc.CASES if c.name == "g2_virtual")
    x = cc.Inputs(a, b, N, WORDS, np.zeros(WORDS, np.uint32))
    want = np.asarray(case.ref(x), np.uint32)
    assert cpu_lines(log) == [
        "nvn entry points missing: 0",
        "reloc entry: 32 bytes, globals 32 bytes",
        "program: 1",
        "sync: 1",
        f"o: {fnv(want):08x} first {want[0]:08x} last {want[N - 1]:08x}",
        "done",
    ], log[-3000:]
