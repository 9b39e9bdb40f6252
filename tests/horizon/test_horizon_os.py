"""nn::os served by the host (cpu_host/horizon/hle/os.py, cpu_host/runtime/horizon/horizon_os.c).

- The mangled names the host binds are the ones clang's Itanium mangler gives the public
  nn::os declarations (compiled here with the ``ziglang`` wheel's clang), and our guest SDK's
  nn.h declares each of them under that name.
- examples/horizon_hello/programs/os_sync.c prints what it observes; every line below follows
  from the Horizon rule the program states at the start of its scenario (the rule lines are
  compared too).  Main runs at nn::os priority 16 (kernel 44) on core 0, and every thread of a
  scenario whose order is checked is pinned to core 0, so the order depends on priorities only:
  the program runs three times and must print exactly this each time.
- examples/horizon_hello/programs/os_misuse.c breaks one precondition per run: each run must end
  with a crash report naming the function, the object and what is wrong, at the guest's call
  site, and never crash the host.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest
from elftools.elf.elffile import ELFFile

from cpu_host.horizon.hle.os import FUNCTIONS
from tests.horizon.hz_build import ROOT, make_bundle, nxrecomp

EXPECTED = """\
[1] rule: threads blocked in LockMutex get the mutex best priority first, FIFO among equal priorities
[1] main (prio 16) unlocks with 4 waiters
[1] B (prio 10) got the mutex
[1] A (prio 12) got the mutex
[1] D (prio 12) got the mutex
[1] C (prio 14) got the mutex
[1] main resumes
[2] rule: SignalConditionVariable wakes the best-priority waiter; Broadcast wakes all, and they take the mutex best priority first, FIFO among equals; a timed wait nobody signals times out holding the mutex again
[2] main signals once and unlocks
[2] B (prio 11) woke holding the mutex: 1
[2] main broadcasts and unlocks
[2] D (prio 11) woke holding the mutex: 1
[2] A (prio 13) woke holding the mutex: 1
[2] C (prio 15) woke holding the mutex: 1
[2] TimedWait(20 ms) unsignalled: status 0 (0 = Timeout) after >= 20 ms: 1, mutex held: 1
[3] rule: released units go to the waiters best priority first, FIFO among equals; the count never exceeds what was released
[3] main releases 1
[3] B (prio 11) acquired
[3] main releases 3
[3] D (prio 11) acquired
[3] A (prio 13) acquired
[3] C (prio 15) acquired
[3] count 0, TryAcquire: 0
[3] after Release(2): TimedAcquire 1, TryAcquire 1, TimedAcquire(10 ms) 0 after >= 10 ms: 1, count 0
[4] rule: messages come out in send order, a jammed one first (LIFO at the front); blocked receivers and senders are served best priority first, FIFO among equals
[4] Send 1, Send 2, Jam 9: Peek 9; full: TrySend 0 TryJam 0 TimedSend(10 ms) 0 after >= 10 ms: 1
[4] received 9 1 2; empty: TryReceive 0 TryPeek 0 TimedReceive(10 ms) 0 after >= 10 ms: 1
[4] main sends 100
[4] receiver B (prio 11) got 100
[4] main sends 101
[4] receiver D (prio 11) got 101
[4] main sends 102
[4] receiver A (prio 13) got 102
[4] main sends 103
[4] receiver C (prio 15) got 103
[4] sender S2 (prio 10) put 2 in
[4] main received 10
[4] sender S1 (prio 12) put 1 in
[4] main received 11
[4] sender J3 (prio 12) put 3 in
[4] main received 12
[4] main received 3
[4] main received 2
[4] main received 1
[5] rule: an AutoClear event wakes one waiter per signal (the best priority) and clears; a ManualClear event wakes every waiter and stays signalled until ClearEvent; a woken waiter of better priority preempts the signaller
[5] B (prio 11) woke
[5] auto: main after SignalEvent 1, TryWait 0
[5] A (prio 13) woke
[5] auto: main after SignalEvent 2, TryWait 0
[5] C (prio 15) woke
[5] auto: main after SignalEvent 3, TryWait 0
[5] auto, no waiters: signalled, TryWait 1 then 0
[5] B (prio 11) woke
[5] A (prio 13) woke
[5] C (prio 15) woke
[5] manual: main after one SignalEvent
[5] manual: TryWait 1 1, after ClearEvent 0, TimedWait(15 ms) 0 after >= 15 ms: 1
[5] initially signalled: TimedWait 1, TryWait 0
[6] rule: a thread of better priority that becomes ready through SignalEvent preempts a worse thread computing on its core
[6] high (prio 5) runs on core 0
[6] low stopped by high: 1, high ran while low computed: 1
[6] main back on core 0
[7] rule: a thread runs only on the cores of its affinity mask (GetCurrentCoreNumber and GetCurrentProcessorNumber agree), and moves when the mask changes
[7] T: ideal core 2 mask 4; on core 2 at 50 checks: 1; after SetThreadCoreMask(1, {1}) on core 1 at 50 checks: 1
[7] main on core 0
[8] rule: the holder of an nn::os mutex runs at the best priority of its waiters, so L (25) holding it runs before Med (20) and main (16) while H (10) waits
[8] L (prio 25) locked the mutex
[8] H (prio 10) waits for the mutex
[8] L runs at priority 10 (base 25) before Med: 1
[8] H got the mutex
[8] main resumes
[8] Med (prio 20) runs: H done 1
[8] L done at priority 25
[9] rule: thread names and priorities read back as set; ChangeThreadPriority answers the previous priority; a recursive mutex is held until unlocked as often as locked
[9] main: name MainThread, priority 16, same record again: 1
[9] renamed: the main thread of os_sync; ChangeThreadPriority(18) answered 16, now 18
[9] recursive: TryLock by holder 1, held after 2 of 3 unlocks 1, TryLock by another 0; after the last unlock held 0, TryLock by another 1
done
"""

# The public nn::os declarations, as C++: clang mangles them (the oracle for the bound names).
DECLARATIONS = """
#include <stdint.h>
#include <stddef.h>
namespace nn {
struct TimeSpan { int64_t ns; };
struct Result { uint32_t v; };
typedef uint64_t Bit64;
namespace os {
struct ThreadType; struct MutexType; struct ConditionVariableType; struct EventType; struct SemaphoreType;
struct MessageQueueType;
typedef void (*ThreadFunction)(void *);
enum EventClearMode { EventClearMode_ManualClear, EventClearMode_AutoClear };
enum ConditionVariableStatus { ConditionVariableStatus_Timeout, ConditionVariableStatus_NoTimeout };
Result CreateThread(ThreadType *, ThreadFunction, void *, void *, size_t, int);
Result CreateThread(ThreadType *, ThreadFunction, void *, void *, size_t, int, int);
void StartThread(ThreadType *); void WaitThread(ThreadType *); void DestroyThread(ThreadType *);
ThreadType *GetCurrentThread(); int ChangeThreadPriority(ThreadType *, int);
int GetThreadPriority(const ThreadType *); int GetThreadCurrentPriority(const ThreadType *); void YieldThread();
void SetThreadName(ThreadType *, const char *); const char *GetThreadNamePointer(const ThreadType *);
int GetCurrentCoreNumber(); void SetThreadCoreMask(ThreadType *, int, Bit64);
void GetThreadCoreMask(int *, Bit64 *, const ThreadType *);
void InitializeMutex(MutexType *, bool, int); void FinalizeMutex(MutexType *); void LockMutex(MutexType *);
bool TryLockMutex(MutexType *); void UnlockMutex(MutexType *); bool IsMutexLockedByCurrentThread(const MutexType *);
void InitializeConditionVariable(ConditionVariableType *); void FinalizeConditionVariable(ConditionVariableType *);
void SignalConditionVariable(ConditionVariableType *); void BroadcastConditionVariable(ConditionVariableType *);
void WaitConditionVariable(ConditionVariableType *, MutexType *);
ConditionVariableStatus TimedWaitConditionVariable(ConditionVariableType *, MutexType *, TimeSpan);
void InitializeEvent(EventType *, bool, EventClearMode); void FinalizeEvent(EventType *);
void SignalEvent(EventType *); void WaitEvent(EventType *); bool TryWaitEvent(EventType *);
bool TimedWaitEvent(EventType *, TimeSpan); void ClearEvent(EventType *);
void InitializeSemaphore(SemaphoreType *, int, int); void FinalizeSemaphore(SemaphoreType *);
void AcquireSemaphore(SemaphoreType *); bool TryAcquireSemaphore(SemaphoreType *);
bool TimedAcquireSemaphore(SemaphoreType *, TimeSpan); void ReleaseSemaphore(SemaphoreType *);
void ReleaseSemaphore(SemaphoreType *, int); int GetCurrentSemaphoreCount(const SemaphoreType *);
void InitializeMessageQueue(MessageQueueType *, uintptr_t *, size_t); void FinalizeMessageQueue(MessageQueueType *);
void SendMessageQueue(MessageQueueType *, uintptr_t); bool TrySendMessageQueue(MessageQueueType *, uintptr_t);
bool TimedSendMessageQueue(MessageQueueType *, uintptr_t, TimeSpan); void JamMessageQueue(MessageQueueType *, uintptr_t);
bool TryJamMessageQueue(MessageQueueType *, uintptr_t); bool TimedJamMessageQueue(MessageQueueType *, uintptr_t, TimeSpan);
void ReceiveMessageQueue(uintptr_t *, MessageQueueType *); bool TryReceiveMessageQueue(uintptr_t *, MessageQueueType *);
bool TimedReceiveMessageQueue(uintptr_t *, MessageQueueType *, TimeSpan);
void PeekMessageQueue(uintptr_t *, const MessageQueueType *); bool TryPeekMessageQueue(uintptr_t *, const MessageQueueType *);
bool TimedPeekMessageQueue(uintptr_t *, const MessageQueueType *, TimeSpan);
}}
using namespace nn::os;
void *used[] = {
    (void *)(nn::Result (*)(ThreadType *, ThreadFunction, void *, void *, size_t, int))CreateThread,
    (void *)(nn::Result (*)(ThreadType *, ThreadFunction, void *, void *, size_t, int, int))CreateThread,
    (void *)StartThread, (void *)WaitThread, (void *)DestroyThread, (void *)GetCurrentThread,
    (void *)ChangeThreadPriority, (void *)GetThreadPriority, (void *)GetThreadCurrentPriority, (void *)YieldThread,
    (void *)SetThreadName, (void *)GetThreadNamePointer, (void *)GetCurrentCoreNumber, (void *)SetThreadCoreMask,
    (void *)GetThreadCoreMask, (void *)InitializeMutex, (void *)FinalizeMutex, (void *)LockMutex, (void *)TryLockMutex,
    (void *)UnlockMutex, (void *)IsMutexLockedByCurrentThread, (void *)InitializeConditionVariable,
    (void *)FinalizeConditionVariable, (void *)SignalConditionVariable, (void *)BroadcastConditionVariable,
    (void *)WaitConditionVariable, (void *)TimedWaitConditionVariable, (void *)InitializeEvent, (void *)FinalizeEvent,
    (void *)SignalEvent, (void *)WaitEvent, (void *)TryWaitEvent, (void *)TimedWaitEvent, (void *)ClearEvent,
    (void *)InitializeSemaphore, (void *)FinalizeSemaphore, (void *)AcquireSemaphore, (void *)TryAcquireSemaphore,
    (void *)TimedAcquireSemaphore, (void *)(void (*)(SemaphoreType *))ReleaseSemaphore,
    (void *)(void (*)(SemaphoreType *, int))ReleaseSemaphore, (void *)GetCurrentSemaphoreCount,
    (void *)InitializeMessageQueue, (void *)FinalizeMessageQueue, (void *)SendMessageQueue, (void *)TrySendMessageQueue,
    (void *)TimedSendMessageQueue, (void *)JamMessageQueue, (void *)TryJamMessageQueue, (void *)TimedJamMessageQueue,
    (void *)ReceiveMessageQueue, (void *)TryReceiveMessageQueue, (void *)TimedReceiveMessageQueue,
    (void *)PeekMessageQueue, (void *)TryPeekMessageQueue, (void *)TimedPeekMessageQueue,
};
"""


def test_names_are_clangs_manglings(tmp_path) -> None:
    src = tmp_path / "nn_os.cpp"
    src.write_text(DECLARATIONS)
    obj = tmp_path / "nn_os.o"
    r = subprocess.run(
        [sys.executable, "-m", "ziglang", "c++", "-target", "aarch64-linux-gnu", "-c", str(src), "-o", str(obj)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert r.returncode == 0, r.stderr
    with obj.open("rb") as f:
        mangled = {s.name for s in ELFFile(f).get_section_by_name(".symtab").iter_symbols() if s.name.startswith("_ZN2nn2os")}
    served = {m for m, _sig, _c in FUNCTIONS}
    assert len(served) == len(FUNCTIONS) == 56
    assert served == mangled
    # the guest SDK declares every one of them under that name
    nn_h = (ROOT / "examples" / "horizon_hello" / "sdk" / "nn.h").read_text()
    assert served <= set(re.findall(r'__asm__\("(_ZN2nn2os[^"]+)"\)', nn_h))


@pytest.fixture(scope="module")
def sync_bundle(tmp_path_factory) -> Path:
    return make_bundle("os_sync", tmp_path_factory.mktemp("hzos"))


def test_os_objects_follow_horizon_rules(sync_bundle) -> None:
    for _ in range(3):  # the order must not depend on host timing
        r = nxrecomp("hz-run", str(sync_bundle), timeout=120)
        assert r.returncode == 0, r.stderr
        assert r.stdout == EXPECTED


# case (the left stick's X in the input script) -> what the report's first line must say
MISUSES = {
    1: ("nn::os::LockMutex(MutexType*)", "MutexType at 0x10: 0x20 bytes there are not writable guest memory"),
    2: ("nn::os::LockMutex(MutexType*)", "is not initialised"),
    3: ("nn::os::UnlockMutex(MutexType*)", "which it does not hold"),
    4: ("nn::os::LockMutex(MutexType*)", "non-recursive MutexType at"),
    5: ("nn::os::SignalEvent(EventType*)", "is not initialised"),
    6: ("nn::os::ReleaseSemaphore(SemaphoreType*, int)", "count 1 + 2 would exceed its maximum 2"),
    7: ("nn::os::StartThread(ThreadType*)", "is not a thread made by CreateThread"),
    8: ("nn::os::CreateThread(ThreadType*, ThreadFunction, void*, void*, size_t, int)", "the stack must be 4 KiB aligned"),
    9: ("nn::os::ReceiveMessageQueue(uintptr_t*, MessageQueueType*)", "message out pointer at"),
    10: ("nn::os::InitializeEvent(EventType*, bool, EventClearMode)", "EventClearMode 7 is neither"),
    # a receiver whose out pointer was unmapped while it waited: its own report, at its call site
    11: ("nn::os::ReceiveMessageQueue(uintptr_t*, MessageQueueType*)", "message out pointer at"),
}
CALL_SITE = {11: "receive_into_heap"}


@pytest.fixture(scope="module")
def misuse_bundle(tmp_path_factory) -> Path:
    return make_bundle("os_misuse", tmp_path_factory.mktemp("hzosmis"))


def test_misuse_is_a_named_crash(misuse_bundle, tmp_path) -> None:
    for case, (function, what) in MISUSES.items():
        script = tmp_path / f"case{case}.txt"
        script.write_text(f"0 - {case} 0\n")
        r = nxrecomp("hz-run", str(misuse_bundle), "--input", str(script), timeout=120)
        assert r.returncode == 134, (case, r.returncode, r.stdout, r.stderr)
        assert r.stdout == f"case {case}\n", case  # nothing after the misuse ran
        assert "Traceback" not in r.stderr
        lines = r.stderr.strip().splitlines()
        assert f"host function {function}: " in lines[0] and what in lines[0], (case, lines[0])
        assert "main+" in lines[1] and CALL_SITE.get(case, "hz_main") in lines[1], (case, lines[1])  # the call site
