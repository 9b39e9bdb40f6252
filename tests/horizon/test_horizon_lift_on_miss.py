"""Lift on miss in the Horizon personality, with two guest threads missing at once.

Two guest threads on cores 1 and 2 (host threads running in parallel) wait at a flag and then
call, through a function pointer, a function the build left out (``recompiler.hide_entries``):
both miss the same address at the same moment.  The run must lift it once (one notice; the
other thread waits for that lift and finds it, which the exit summary counts) and print the
results the function's arithmetic gives, computed here in Python as the oracle.  A rebuild
takes the address from the bundle's discovered entries: no lift on the second run."""

from __future__ import annotations

import re

from tests.horizon.hz_build import bundle_from_c, nxrecomp

GUEST = r"""
#include "hz_sdk.h"
#define STACK 0x8000
static char stacks[2][STACK] __attribute__((aligned(16)));
static HzThread th[2];

__attribute__((noinline)) uint64_t hidden_worker(uint64_t seed) {
    uint64_t h = seed;
    for (int i = 0; i < 1000; i++) h = (h ^ (h >> 29)) * 0xbf58476d1ce4e5b9ull + (uint64_t)i;
    return h;
}
uint64_t (*volatile worker_ptr)(uint64_t) = hidden_worker;

static volatile int ready[2], go;
static uint64_t results[2];

static void worker(void *arg) {
    int k = (int)(uintptr_t)arg;
    ready[k] = 1;
    while (!go) svcSleepThread(100000);   /* both reach the call within ~0.1 ms (a lift takes ~0.4 s) */
    results[k] = worker_ptr((uint64_t)k + 1);
}

int hz_main(void) {
    for (int k = 0; k < 2; k++) {
        if (hz_thread_create(&th[k], worker, (void *)(uintptr_t)k, stacks[k], STACK, 44, k + 1)) hz_printf("create failed\n");
        if (hz_thread_start(&th[k])) hz_printf("start failed\n");
    }
    while (!ready[0] || !ready[1]) svcSleepThread(1000000);
    go = 1;
    for (int k = 0; k < 2; k++) hz_thread_join(&th[k]);
    hz_printf("results %016llx %016llx\n", (unsigned long long)results[0], (unsigned long long)results[1]);
    return 0;
}
"""

NOTICE = re.compile(r"nxrecomp: lifted at run time: function at (0x[0-9a-f]+)")


def _worker(seed: int) -> int:
    m = (1 << 64) - 1
    h = seed
    for i in range(1000):
        h = (((h ^ (h >> 29)) * 0xBF58476D1CE4E5B9) + i) & m
    return h


def test_two_threads_miss_the_same_hidden_function_and_it_is_lifted_once(tmp_path, monkeypatch):
    monkeypatch.setenv("NXRECOMP_RECOMPILER_HIDE_ENTRIES", "hidden_worker")
    bundle = bundle_from_c(GUEST, {}, tmp_path / "w")
    expected = f"results {_worker(1):016x} {_worker(2):016x}"
    r = nxrecomp("hz-run", str(bundle), timeout=120)
    assert r.returncode == 0, r.stderr[-2000:]
    assert expected in r.stdout.splitlines(), r.stdout[-1000:]
    lifted = NOTICE.findall(r.stderr)
    assert len(lifted) == 1, r.stderr[-2000:]
    assert f"nxrecomp: run-time lifts: 1 ({lifted[0]}); 1 miss waited for another thread's lift" in r.stderr, r.stderr[-2000:]
    assert (bundle / "discovered_entries.txt").read_text().split()[-1] == lifted[0]

    # the rebuild takes it from the list: the second run lifts nothing
    from examples.horizon_hello.build_exefs import build_exefs
    from recompiler.horizon import recompile_exefs

    recompile_exefs(build_exefs(tmp_path / "w" / "guest.c", tmp_path / "w" / "exefs"), bundle, romfs=tmp_path / "w" / "rom.bin")
    again = nxrecomp("hz-run", str(bundle), timeout=120)
    assert again.returncode == 0 and expected in again.stdout.splitlines(), again.stderr[-2000:]
    assert not NOTICE.search(again.stderr) and "run-time lifts" not in again.stderr, again.stderr[-2000:]
