/* threads: guest threads on the kernel's three virtual cores.  The main thread runs at
 * priority 44 on core 0 (main.npdm).  Every scenario prints what it observed; the line
 * before each states the Horizon rule that fixes the order.  The expected output is in
 * tests/horizon/test_horizon_threads.py. */
#include "hz_sdk.h"

#define STACK 0x8000
static char stacks[8][STACK] __attribute__((aligned(16)));
static HzThread th[8];

static void start(int i, void (*fn)(void *), void *arg, int prio, int core) {
    Result r = hz_thread_create(&th[i], fn, arg, stacks[i], STACK, prio, core);
    if (r) hz_printf("create %d failed: %x\n", i, r);
    r = hz_thread_start(&th[i]);
    if (r) hz_printf("start %d failed: %x\n", i, r);
}

static void join(int i) {
    Result r = hz_thread_join(&th[i]);
    if (r) hz_printf("join %d failed: %x\n", i, r);
}

static void say(void *arg) { hz_printf("%s\n", (const char *)arg); }

/* ---- 1: priority order on one core -------------------------------------------------- */
static void scenario_priority(void) {
    hz_printf("[1] rule: a started thread of better priority preempts its starter at once; ready threads "
              "get a free core best priority first, whatever their start order\n");
    start(0, say, "[1] T1 prio 50", 50, 0);
    start(1, say, "[1] T2 prio 40", 40, 0);
    hz_printf("[1] main after starting T2\n");
    start(2, say, "[1] T3 prio 45", 45, 0);
    join(0); join(1); join(2);
}

/* ---- 2: affinity ------------------------------------------------------------------------- */
static volatile int a_core = -1, release_a, b_ran;
static void thread_a(void *arg) {
    (void)arg;
    a_core = (int)svcGetCurrentProcessorNumber();
    while (!release_a) svcSleepThread(1000000);
}
static void thread_b(void *arg) {
    (void)arg;
    b_ran = 1;
    hz_printf("[2] B runs on core %u\n", svcGetCurrentProcessorNumber());
}

static void scenario_affinity(void) {
    hz_printf("[2] rule: a thread runs only on a core of its affinity mask, so a better thread pinned to "
              "another core does not preempt main, and one pinned to main's core does\n");
    start(0, thread_a, 0, 30, 1);
    while (a_core < 0) svcSleepThread(1000000);
    hz_printf("[2] A (prio 30, core 1) runs on core %d while main keeps core %u\n", a_core,
              svcGetCurrentProcessorNumber());
    release_a = 1;
    join(0);
    start(1, thread_b, 0, 30, 0);
    hz_printf("[2] main resumes after starting B (prio 30, core 0): b_ran=%d\n", b_ran);
    join(1);
    Result r = svcSetThreadCoreMask(HZ_CUR_THREAD, 2, 1u << 2);
    hz_printf("[2] main moved to core mask {2}: %x, now on core %u\n", r, svcGetCurrentProcessorNumber());
    r = svcSetThreadCoreMask(HZ_CUR_THREAD, 0, 1u << 0);
    int32_t ideal; uint64_t mask;
    svcGetThreadCoreMask(&ideal, &mask, HZ_CUR_THREAD);
    hz_printf("[2] back: %x, core %u, ideal %d mask %llx\n", r, svcGetCurrentProcessorNumber(), ideal,
              (unsigned long long)mask);
}

/* ---- 3: yielding among equals ------------------------------------------------------------ */
static void thread_p(void *arg) {
    (void)arg;
    for (int i = 1; i <= 3; i++) { hz_printf("[3] P %d\n", i); svcSleepThread(0); }
}

static void scenario_yield(void) {
    hz_printf("[3] rule: an equal-priority thread does not preempt; SleepThread(0) hands the core to the "
              "next ready thread of the same priority\n");
    start(0, thread_p, 0, 44, 0);
    for (int i = 1; i <= 3; i++) { hz_printf("[3] main %d\n", i); svcSleepThread(0); }
    join(0);
}

/* ---- 4: priority inheritance through a guest mutex --------------------------------------- */
static HzMutex m4;
static volatile int stage, l_locked;
static void thread_l(void *arg) {
    (void)arg;
    hz_mutex_lock(&m4);
    l_locked = 1;
    while (stage < 1) svcGetSystemTick();
    int32_t p = 0;
    svcGetThreadPriority(&p, HZ_CUR_THREAD);
    hz_printf("[4] L releases M at priority %d\n", p);
    hz_mutex_unlock(&m4);
    hz_printf("[4] L done\n");
}
static void thread_h(void *arg) {
    (void)arg;
    hz_printf("[4] H waits for M\n");
    hz_mutex_lock(&m4);
    hz_printf("[4] H got M\n");
    hz_mutex_unlock(&m4);
}

static void scenario_inheritance(void) {
    hz_printf("[4] rule: the holder of a mutex runs at the best priority of its waiters, so L (50) holding "
              "M runs before main (44) and Med (45) while H (30) waits for M\n");
    start(0, thread_l, 0, 50, 0);
    while (!l_locked) svcSleepThread(1000000);
    start(1, say, "[4] Med runs", 45, 0);
    stage = 1;
    start(2, thread_h, 0, 30, 0);
    hz_printf("[4] main resumes\n");
    join(2); join(1); join(0);
}

/* ---- 5: condition variable wake order ------------------------------------------------------ */
static HzMutex m5;
static HzCond c5;
static void waiter(void *arg) {
    hz_mutex_lock(&m5);
    hz_cond_wait(&c5, &m5, -1);
    hz_printf("[5] %s woke\n", (const char *)arg);
    hz_mutex_unlock(&m5);
}

static void scenario_condvar(void) {
    hz_printf("[5] rule: SignalProcessWideKey(1) wakes the best-priority waiter first; it takes the "
              "mutex when the signaller releases it\n");
    start(0, waiter, "W1 (prio 40)", 40, 0);
    start(1, waiter, "W2 (prio 42)", 42, 0);
    start(2, waiter, "W3 (prio 41)", 41, 0);
    for (int i = 0; i < 3; i++) {
        hz_mutex_lock(&m5);
        hz_cond_signal(&c5);
        hz_mutex_unlock(&m5);
    }
    join(0); join(1); join(2);
    hz_mutex_lock(&m5);
    uint64_t t0 = svcGetSystemTick();
    Result r = hz_cond_wait(&c5, &m5, 20 * 1000 * 1000);
    uint64_t dt = svcGetSystemTick() - t0;
    hz_printf("[5] unsignalled wait of 20 ms: %x after >= 20 ms: %d, mutex held again: %d\n", r,
              dt >= 384000, (m5.tag & ~HZ_MUTEX_WAITERS) == hz_self());
    hz_mutex_unlock(&m5);
}

/* ---- 6: handles, WaitSynchronization, priorities --------------------------------------- */
static volatile int t_ran;
static void thread_t(void *arg) { (void)arg; t_ran = 1; }

static void scenario_handles(void) {
    hz_printf("[6] rule: results of bad arguments; raising a ready thread above its core's holder "
              "preempts the holder\n");
    Handle h;
    hz_printf("[6] CreateThread prio 20 (outside 28..59): %x\n",
              svcCreateThread(&h, (void *)thread_t, 0, stacks[7] + STACK, 20, 0));
    hz_printf("[6] CreateThread core 3: %x\n", svcCreateThread(&h, (void *)thread_t, 0, stacks[7] + STACK, 44, 3));
    int32_t idx = -5;
    Handle bad = 0x1234;
    hz_printf("[6] WaitSynchronization(bad handle): %x\n", svcWaitSynchronization(&idx, &bad, 1, 0));
    hz_printf("[6] CloseHandle(bad handle): %x\n", svcCloseHandle(bad));
    start(0, thread_t, 0, 50, 0);
    Handle hs[2] = {th[0].handle, th[0].handle};
    hz_printf("[6] WaitSynchronization(ready thread, timeout 0): %x t_ran=%d\n",
              svcWaitSynchronization(&idx, hs, 1, 0), t_ran);
    Result r = svcSetThreadPriority(th[0].handle, 30);
    hz_printf("[6] after raising T to 30: %x t_ran=%d\n", r, t_ran);
    r = svcWaitSynchronization(&idx, hs, 2, -1);
    hz_printf("[6] WaitSynchronization(exited thread): %x index %d\n", r, idx);
    hz_printf("[6] CloseHandle: %x, again: %x\n", svcCloseHandle(th[0].handle), svcCloseHandle(th[0].handle));
}

/* ---- 7: address arbitration --------------------------------------------------------------- */
static int32_t word7;
static void addr_waiter(void *arg) {
    Result r = svcWaitForAddress(&word7, 2, 0, -1);
    hz_printf("[7] %s woke: %x\n", (const char *)arg, r);
}
static void addr_waiter1(void *arg) {
    Result r = svcWaitForAddress(&word7, 2, 1, -1);
    hz_printf("[7] %s woke: %x\n", (const char *)arg, r);
}

static void scenario_address(void) {
    hz_printf("[7] rule: WaitForAddress waits only while its condition holds (else InvalidState); "
              "SignalToAddress wakes the best-priority waiters first; ModifyByWaitingCount sets the word "
              "by how many waiters there are and how many it wakes\n");
    start(0, addr_waiter, "X (prio 41)", 41, 0);
    start(1, addr_waiter, "Y (prio 40)", 40, 0);
    start(2, addr_waiter, "Z (prio 42)", 42, 0);
    hz_printf("[7] WaitIfEqual(5) on 0: %x\n", svcWaitForAddress(&word7, 2, 5, -1));
    hz_printf("[7] WaitIfLessThan(-1) on 0: %x\n", svcWaitForAddress(&word7, 0, -1, -1));
    hz_printf("[7] WaitIfEqual(0) for 10 ms: %x\n", svcWaitForAddress(&word7, 2, 0, 10 * 1000 * 1000));
    hz_printf("[7] SignalAndIncrementIfEqual(7) on 0: %x\n", svcSignalToAddress(&word7, 1, 7, 1));
    Result r = svcSignalToAddress(&word7, 0, 0, 2);
    hz_printf("[7] main after Signal(count 2): %x\n", r);
    r = svcSignalToAddress(&word7, 1, 0, -1);
    hz_printf("[7] main after SignalAndIncrementIfEqual(0): %x, word %d\n", r, word7);
    r = svcWaitForAddress(&word7, 1, 5, 0);
    hz_printf("[7] DecrementAndWaitIfLessThan(5), timeout 0: %x, word %d\n", r, word7);
    join(0); join(1); join(2);
    r = svcSignalToAddress(&word7, 2, 0, 1);             /* no waiters: value + 1 */
    hz_printf("[7] ModifyByWaitingCount(0, count 1), no waiters: %x, word %d\n", r, word7);
    r = svcSignalToAddress(&word7, 2, 5, 1);             /* the word is not 5 */
    hz_printf("[7] ModifyByWaitingCount(5) on 1: %x, word %d\n", r, word7);
    start(0, addr_waiter1, "P (prio 40)", 40, 0);
    start(1, addr_waiter1, "Q (prio 41)", 41, 0);
    r = svcSignalToAddress(&word7, 2, 1, 1);             /* 2 waiters, wakes 1: the word stays */
    hz_printf("[7] main after ModifyByWaitingCount(1, count 1), 2 waiters: %x, word %d\n", r, word7);
    r = svcSignalToAddress(&word7, 2, 1, -1);            /* waiters, all woken: value - 2 */
    hz_printf("[7] main after ModifyByWaitingCount(1, all), 1 waiter: %x, word %d\n", r, word7);
    join(0); join(1);
}

/* ---- 8: events ------------------------------------------------------------------------------ */
static Handle ev_w, ev_r;
static void event_waiter(void *arg) {
    (void)arg;
    int32_t idx = -1;
    Result r = svcWaitSynchronization(&idx, &ev_r, 1, -1);
    hz_printf("[8] E (prio 40) woke: %x index %d\n", r, idx);
}

static void scenario_events(void) {
    hz_printf("[8] rule: an event stays signalled until cleared; SignalEvent wakes its waiters, which "
              "preempt a worse signaller; only the writable handle signals; ResetSignal of an "
              "unsignalled event is InvalidState\n");
    hz_printf("[8] CreateEvent: %x\n", svcCreateEvent(&ev_w, &ev_r));
    start(0, event_waiter, 0, 40, 0);
    hz_printf("[8] ResetSignal(unsignalled): %x\n", svcResetSignal(ev_r));
    hz_printf("[8] SignalEvent(readable handle): %x\n", svcSignalEvent(ev_r));
    hz_printf("[8] main signals\n");
    Result r = svcSignalEvent(ev_w);
    hz_printf("[8] SignalEvent: %x\n", r);
    int32_t idx = -1;
    Handle hs[2] = {ev_r, th[0].handle};
    r = svcWaitSynchronization(&idx, hs, 2, -1);
    hz_printf("[8] still signalled: %x index %d\n", r, idx);
    r = svcResetSignal(ev_r);
    hz_printf("[8] ResetSignal: %x, again: %x\n", r, svcResetSignal(ev_r));
    hz_printf("[8] WaitSynchronization(cleared event, timeout 0): %x\n", svcWaitSynchronization(&idx, &ev_r, 1, 0));
    join(0);
    hz_printf("[8] ClearEvent: %x, CloseHandle: %x %x\n", svcClearEvent(ev_w), svcCloseHandle(ev_w), svcCloseHandle(ev_r));
}

int hz_main(void) {
    scenario_priority();
    scenario_affinity();
    scenario_yield();
    scenario_inheritance();
    scenario_condvar();
    scenario_handles();
    scenario_address();
    scenario_events();
    hz_printf("done\n");
    return 0;
}
