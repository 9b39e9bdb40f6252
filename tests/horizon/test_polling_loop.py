"""A guest loop that polls memory another thread writes ends once the write happens.

The guest's `while (flag == 0) {}` on a volatile word is `1: ldr w8, [x9]; cbz w8, 1b` in its
machine code: by the Arm memory model the other thread's store is eventually seen by that load.
The lifted C reads guest memory with plain loads; without a compiler barrier at the loop's back
edge clang hoists the load out of the loop and the recompiled program spins forever (nx.js's
thread pool waits for its workers this way, C-Thread-Pool's `thpool_init`).  The setter runs on
another core after a sleep, so the main thread is already in the loop when the word changes.
Fails on a lifter without NX_LOOP_EDGE (the run hangs until the time bound).

The barrier goes only on back edges where a round of the loop may store nothing
(recompiler/lift/loop_edges.py); the second guest's loop stores a count in memory each round,
which has no barrier and must still see the other thread's store."""

from __future__ import annotations

import subprocess
import sys

import pytest

from tests.horizon.hz_build import ROOT, bundle_from_c

GUEST = r"""
#include "hz_sdk.h"

static volatile uint32_t flag;
static char stack[0x4000] __attribute__((aligned(16)));
static HzThread setter;

static void set_later(void *arg) {
    (void)arg;
    svcSleepThread(50 * 1000 * 1000);
    flag = 7;
}

int hz_main(void) {
    hz_thread_create(&setter, set_later, 0, stack, sizeof stack, 44, 1);
    hz_thread_start(&setter);
    uint32_t polls = 0;
    while (flag == 0)
        polls++;
    hz_printf("flag %u seen after polling\n", flag);
    hz_thread_join(&setter);
    return polls == 0;      /* it did wait in the loop */
}
"""


# the same wait with a store in each round (a count kept in memory): no barrier on its edge
GUEST_STORING = GUEST.replace("static HzThread setter;", "static HzThread setter;\nstatic volatile uint32_t stored;").replace(
    "        polls++;", "        stored = ++polls;"
)


@pytest.mark.parametrize("guest", [GUEST, GUEST_STORING], ids=["loads only", "stores each round"])
def test_polling_loop_sees_the_other_threads_store(tmp_path, guest: str) -> None:
    bundle = bundle_from_c(guest, {}, tmp_path / "w")
    # A run whose main thread reached the loop only after the setter's 50 ms (a loaded machine
    # kept it off the CPU) polled 0 times and exits 1: it shows nothing either way, so it is run
    # again (at most 3 times); a lifter that hoists the load hangs every run into the time bound.
    for attempt in range(3):
        r = subprocess.run(
            [sys.executable, "-m", "nxrecomp", "hz-run", str(bundle)], cwd=ROOT, capture_output=True, text=True, timeout=60
        )
        if r.returncode != 1:
            break
    assert r.returncode == 0, f"attempt {attempt + 1}: " + r.stderr[-2000:]
    assert r.stdout.splitlines() == ["flag 7 seen after polling"]
