"""Step 3 of the Horizon slice: guest threads as host threads on three virtual cores.  The
guest (examples/horizon_hello/programs/threads.c) prints what it observed; every line below
follows from the Horizon rule that the guest states at the start of its scenario (the rule
lines are compared too).  Main runs at priority 44 on core 0 (main.npdm)."""

from __future__ import annotations

import pytest

from tests.horizon.hz_build import make_bundle, nxrecomp

EXPECTED = """\
[1] rule: a started thread of better priority preempts its starter at once; ready threads get a free core best priority first, whatever their start order
[1] T2 prio 40
[1] main after starting T2
[1] T3 prio 45
[1] T1 prio 50
[2] rule: a thread runs only on a core of its affinity mask, so a better thread pinned to another core does not preempt main, and one pinned to main's core does
[2] A (prio 30, core 1) runs on core 1 while main keeps core 0
[2] B runs on core 0
[2] main resumes after starting B (prio 30, core 0): b_ran=1
[2] main moved to core mask {2}: 0, now on core 2
[2] back: 0, core 0, ideal 0 mask 1
[3] rule: an equal-priority thread does not preempt; SleepThread(0) hands the core to the next ready thread of the same priority
[3] main 1
[3] P 1
[3] main 2
[3] P 2
[3] main 3
[3] P 3
[4] rule: the holder of a mutex runs at the best priority of its waiters, so L (50) holding M runs before main (44) and Med (45) while H (30) waits for M
[4] H waits for M
[4] L releases M at priority 30
[4] H got M
[4] main resumes
[4] Med runs
[4] L done
[5] rule: SignalProcessWideKey(1) wakes the best-priority waiter first; it takes the mutex when the signaller releases it
[5] W1 (prio 40) woke
[5] W3 (prio 41) woke
[5] W2 (prio 42) woke
[5] unsignalled wait of 20 ms: ea01 after >= 20 ms: 1, mutex held again: 1
[6] rule: results of bad arguments; raising a ready thread above its core's holder preempts the holder
[6] CreateThread prio 20 (outside 28..59): e001
[6] CreateThread core 3: e201
[6] WaitSynchronization(bad handle): e401
[6] CloseHandle(bad handle): e401
[6] WaitSynchronization(ready thread, timeout 0): ea01 t_ran=0
[6] after raising T to 30: 0 t_ran=1
[6] WaitSynchronization(exited thread): 0 index 0
[6] CloseHandle: 0, again: e401
[7] rule: WaitForAddress waits only while its condition holds (else InvalidState); SignalToAddress wakes the best-priority waiters first; ModifyByWaitingCount sets the word by how many waiters there are and how many it wakes
[7] WaitIfEqual(5) on 0: fa01
[7] WaitIfLessThan(-1) on 0: fa01
[7] WaitIfEqual(0) for 10 ms: ea01
[7] SignalAndIncrementIfEqual(7) on 0: fa01
[7] Y (prio 40) woke: 0
[7] X (prio 41) woke: 0
[7] main after Signal(count 2): 0
[7] Z (prio 42) woke: 0
[7] main after SignalAndIncrementIfEqual(0): 0, word 1
[7] DecrementAndWaitIfLessThan(5), timeout 0: ea01, word 0
[7] ModifyByWaitingCount(0, count 1), no waiters: 0, word 1
[7] ModifyByWaitingCount(5) on 1: fa01, word 1
[7] P (prio 40) woke: 0
[7] main after ModifyByWaitingCount(1, count 1), 2 waiters: 0, word 1
[7] Q (prio 41) woke: 0
[7] main after ModifyByWaitingCount(1, all), 1 waiter: 0, word -1
[8] rule: an event stays signalled until cleared; SignalEvent wakes its waiters, which preempt a worse signaller; only the writable handle signals; ResetSignal of an unsignalled event is InvalidState
[8] CreateEvent: 0
[8] ResetSignal(unsignalled): fa01
[8] SignalEvent(readable handle): e401
[8] main signals
[8] E (prio 40) woke: 0 index 0
[8] SignalEvent: 0
[8] still signalled: 0 index 0
[8] ResetSignal: 0, again: fa01
[8] WaitSynchronization(cleared event, timeout 0): ea01
[8] ClearEvent: 0, CloseHandle: 0 0
done
"""


@pytest.fixture(scope="module")
def bundle(tmp_path_factory):
    return make_bundle("threads", tmp_path_factory.mktemp("hzthreads"))


def test_scheduler_rules(bundle) -> None:
    # several runs: the order must not depend on host timing
    for _ in range(3):
        r = nxrecomp("hz-run", str(bundle), timeout=60)
        assert r.returncode == 0, r.stderr
        assert r.stdout == EXPECTED
