/* os_sync: nn::os threads and synchronisation objects served by the host, checked against
 * Horizon's scheduling rules.  Every scenario prints the rule it checks, then what it observed.
 * The main thread runs at nn::os priority 16 (kernel 44) on core 0 (main.npdm); unless a
 * scenario says otherwise every thread is pinned to core 0, so the order of the printed lines
 * follows from priorities alone (only one thread runs guest code on a core at a time), never
 * from host timing.  Priorities below are nn::os numbers (0 best .. 31). */
#include "hz_sdk.h"
#include "nn.h"

#define STACK 0x4000
#define NTH 5
#define MS (1000 * 1000ll)
static char stacks[NTH][STACK] __attribute__((aligned(NN_OS_STACK_ALIGN)));
static NnThreadType th[NTH];

typedef struct { const char *name; int prio; uintptr_t value; } Who;

static void spawn(int i, void (*fn)(void *), Who *w, int core) {
    NnResult r = nnosCreateThreadOnCore(&th[i], fn, w, stacks[i], STACK, w->prio, core);
    if (r) hz_printf("CreateThread %s: %x\n", w->name, r);
    nnosStartThread(&th[i]);
}

static void join(int n) {
    for (int i = 0; i < n; i++) {
        nnosWaitThread(&th[i]);
        nnosDestroyThread(&th[i]);
    }
}

static int64_t ms_since(int64_t tick) { return nnosConvertToTimeSpan(nnosGetSystemTick() - tick) / MS; }

/* ---- [1] mutex wake order ------------------------------------------------------------------ */
static NnMutexType mtx;

static void mutex_waiter(void *p) {
    Who *w = p;
    nnosLockMutex(&mtx);
    hz_printf("[1] %s (prio %d) got the mutex\n", w->name, w->prio);
    nnosUnlockMutex(&mtx);
}

static void scenario_mutex(void) {
    hz_printf("[1] rule: threads blocked in LockMutex get the mutex best priority first, FIFO among equal priorities\n");
    static Who w[4] = {{"A", 12}, {"B", 10}, {"C", 14}, {"D", 12}};
    nnosInitializeMutex(&mtx, 0, 0);
    nnosLockMutex(&mtx);
    for (int i = 0; i < 4; i++) spawn(i, mutex_waiter, &w[i], 0);   /* each preempts main and blocks */
    hz_printf("[1] main (prio 16) unlocks with 4 waiters\n");
    nnosUnlockMutex(&mtx);
    hz_printf("[1] main resumes\n");
    join(4);
    nnosFinalizeMutex(&mtx);
}

/* ---- [2] condition variable ------------------------------------------------------------------ */
static NnConditionVariableType cv;
static int cv_go;

static void cv_waiter(void *p) {
    Who *w = p;
    nnosLockMutex(&mtx);
    while (!cv_go) nnosWaitConditionVariable(&cv, &mtx);
    cv_go--;
    hz_printf("[2] %s (prio %d) woke holding the mutex: %d\n", w->name, w->prio, nnosIsMutexLockedByCurrentThread(&mtx));
    nnosUnlockMutex(&mtx);
}

static void scenario_condvar(void) {
    hz_printf("[2] rule: SignalConditionVariable wakes the best-priority waiter; Broadcast wakes all, and they "
              "take the mutex best priority first, FIFO among equals; a timed wait nobody signals times out "
              "holding the mutex again\n");
    static Who w[4] = {{"A", 13}, {"B", 11}, {"C", 15}, {"D", 11}};
    nnosInitializeMutex(&mtx, 0, 0);
    nnosInitializeConditionVariable(&cv);
    cv_go = 0;
    for (int i = 0; i < 4; i++) spawn(i, cv_waiter, &w[i], 0);
    nnosLockMutex(&mtx);
    cv_go = 1;
    nnosSignalConditionVariable(&cv);
    hz_printf("[2] main signals once and unlocks\n");
    nnosUnlockMutex(&mtx);
    nnosLockMutex(&mtx);
    cv_go = 3;
    nnosBroadcastConditionVariable(&cv);
    hz_printf("[2] main broadcasts and unlocks\n");
    nnosUnlockMutex(&mtx);
    join(4);
    nnosLockMutex(&mtx);
    int64_t t0 = nnosGetSystemTick();
    int st = nnosTimedWaitConditionVariable(&cv, &mtx, 20 * MS);
    hz_printf("[2] TimedWait(20 ms) unsignalled: status %d (0 = Timeout) after >= 20 ms: %d, mutex held: %d\n", st,
              ms_since(t0) >= 20, nnosIsMutexLockedByCurrentThread(&mtx));
    nnosUnlockMutex(&mtx);
    nnosFinalizeConditionVariable(&cv);
    nnosFinalizeMutex(&mtx);
}

/* ---- [3] semaphore ------------------------------------------------------------------------- */
static NnSemaphoreType sem;

static void sem_waiter(void *p) {
    Who *w = p;
    nnosAcquireSemaphore(&sem);
    hz_printf("[3] %s (prio %d) acquired\n", w->name, w->prio);
}

static void scenario_semaphore(void) {
    hz_printf("[3] rule: released units go to the waiters best priority first, FIFO among equals; the count "
              "never exceeds what was released\n");
    static Who w[4] = {{"A", 13}, {"B", 11}, {"C", 15}, {"D", 11}};
    nnosInitializeSemaphore(&sem, 0, 5);
    for (int i = 0; i < 4; i++) spawn(i, sem_waiter, &w[i], 0);
    hz_printf("[3] main releases 1\n");
    nnosReleaseSemaphore(&sem);
    hz_printf("[3] main releases 3\n");
    nnosReleaseSemaphoreCount(&sem, 3);
    join(4);
    hz_printf("[3] count %d, TryAcquire: %d\n", nnosGetCurrentSemaphoreCount(&sem), nnosTryAcquireSemaphore(&sem));
    nnosReleaseSemaphoreCount(&sem, 2);
    int a = nnosTimedAcquireSemaphore(&sem, 10 * MS);
    int b = nnosTryAcquireSemaphore(&sem);
    int64_t t0 = nnosGetSystemTick();
    int c = nnosTimedAcquireSemaphore(&sem, 10 * MS);
    hz_printf("[3] after Release(2): TimedAcquire %d, TryAcquire %d, TimedAcquire(10 ms) %d after >= 10 ms: %d, count %d\n",
              a, b, c, ms_since(t0) >= 10, nnosGetCurrentSemaphoreCount(&sem));
    nnosFinalizeSemaphore(&sem);
}

/* ---- [4] message queue ------------------------------------------------------------------------ */
static NnMessageQueueType mq;
static uintptr_t mq_buf[3];

static void receiver(void *p) {
    Who *w = p;
    uintptr_t v = 0;
    nnosReceiveMessageQueue(&v, &mq);
    hz_printf("[4] receiver %s (prio %d) got %d\n", w->name, w->prio, (int)v);
}

static void sender(void *p) {
    Who *w = p;
    if (w->name[0] == 'J') nnosJamMessageQueue(&mq, w->value);
    else nnosSendMessageQueue(&mq, w->value);
    hz_printf("[4] sender %s (prio %d) put %d in\n", w->name, w->prio, (int)w->value);
}

static void scenario_queue(void) {
    hz_printf("[4] rule: messages come out in send order, a jammed one first (LIFO at the front); blocked "
              "receivers and senders are served best priority first, FIFO among equals\n");
    nnosInitializeMessageQueue(&mq, mq_buf, 3);
    nnosSendMessageQueue(&mq, 1);
    nnosSendMessageQueue(&mq, 2);
    nnosJamMessageQueue(&mq, 9);
    uintptr_t peek = 0, v[3] = {0, 0, 0};
    nnosPeekMessageQueue(&peek, &mq);
    int full = nnosTrySendMessageQueue(&mq, 5), jam = nnosTryJamMessageQueue(&mq, 5);
    int64_t t0 = nnosGetSystemTick();
    int timed = nnosTimedSendMessageQueue(&mq, 5, 10 * MS);
    hz_printf("[4] Send 1, Send 2, Jam 9: Peek %d; full: TrySend %d TryJam %d TimedSend(10 ms) %d after >= 10 ms: %d\n",
              (int)peek, full, jam, timed, ms_since(t0) >= 10);
    for (int i = 0; i < 3; i++) nnosReceiveMessageQueue(&v[i], &mq);
    t0 = nnosGetSystemTick();
    uintptr_t none = 0;
    int got = nnosTimedReceiveMessageQueue(&none, &mq, 10 * MS);
    hz_printf("[4] received %d %d %d; empty: TryReceive %d TryPeek %d TimedReceive(10 ms) %d after >= 10 ms: %d\n",
              (int)v[0], (int)v[1], (int)v[2], nnosTryReceiveMessageQueue(&peek, &mq),
              nnosTryPeekMessageQueue(&peek, &mq), got, ms_since(t0) >= 10);

    static Who r[4] = {{"A", 13}, {"B", 11}, {"C", 15}, {"D", 11}};
    for (int i = 0; i < 4; i++) spawn(i, receiver, &r[i], 0);
    for (uintptr_t m = 100; m < 104; m++) {
        hz_printf("[4] main sends %d\n", (int)m);
        nnosSendMessageQueue(&mq, m);
    }
    join(4);

    static Who s[3] = {{"S1", 12, 1}, {"S2", 10, 2}, {"J3", 12, 3}};
    nnosSendMessageQueue(&mq, 10);
    nnosSendMessageQueue(&mq, 11);
    nnosSendMessageQueue(&mq, 12);
    for (int i = 0; i < 3; i++) spawn(i, sender, &s[i], 0);     /* the queue is full: all block */
    for (int i = 0; i < 6; i++) {
        uintptr_t m = 0;
        nnosReceiveMessageQueue(&m, &mq);
        hz_printf("[4] main received %d\n", (int)m);
    }
    join(3);
    nnosFinalizeMessageQueue(&mq);
}

/* ---- [5] events ------------------------------------------------------------------------------- */
static NnEventType ev;

static void event_waiter(void *p) {
    Who *w = p;
    nnosWaitEvent(&ev);
    hz_printf("[5] %s (prio %d) woke\n", w->name, w->prio);
}

static void scenario_events(void) {
    hz_printf("[5] rule: an AutoClear event wakes one waiter per signal (the best priority) and clears; a "
              "ManualClear event wakes every waiter and stays signalled until ClearEvent; a woken waiter of "
              "better priority preempts the signaller\n");
    static Who w[3] = {{"A", 13}, {"B", 11}, {"C", 15}};
    nnosInitializeEvent(&ev, 0, NN_OS_EVENT_AUTO_CLEAR);
    for (int i = 0; i < 3; i++) spawn(i, event_waiter, &w[i], 0);
    for (int i = 0; i < 3; i++) {
        nnosSignalEvent(&ev);
        hz_printf("[5] auto: main after SignalEvent %d, TryWait %d\n", i + 1, nnosTryWaitEvent(&ev));
    }
    join(3);
    nnosSignalEvent(&ev);
    int a = nnosTryWaitEvent(&ev), b = nnosTryWaitEvent(&ev);
    hz_printf("[5] auto, no waiters: signalled, TryWait %d then %d\n", a, b);
    nnosFinalizeEvent(&ev);

    nnosInitializeEvent(&ev, 0, NN_OS_EVENT_MANUAL_CLEAR);
    for (int i = 0; i < 3; i++) spawn(i, event_waiter, &w[i], 0);
    nnosSignalEvent(&ev);
    hz_printf("[5] manual: main after one SignalEvent\n");
    join(3);
    a = nnosTryWaitEvent(&ev);
    b = nnosTryWaitEvent(&ev);
    nnosClearEvent(&ev);
    int c = nnosTryWaitEvent(&ev);
    int64_t t0 = nnosGetSystemTick();
    int d = nnosTimedWaitEvent(&ev, 15 * MS);
    hz_printf("[5] manual: TryWait %d %d, after ClearEvent %d, TimedWait(15 ms) %d after >= 15 ms: %d\n", a, b, c, d,
              ms_since(t0) >= 15);
    nnosFinalizeEvent(&ev);
    nnosInitializeEvent(&ev, 1, NN_OS_EVENT_AUTO_CLEAR);
    a = nnosTimedWaitEvent(&ev, 15 * MS);
    hz_printf("[5] initially signalled: TimedWait %d, TryWait %d\n", a, nnosTryWaitEvent(&ev));
    nnosFinalizeEvent(&ev);
}

/* ---- [6] preemption of a computing thread through SignalEvent ---------------------------------- */
static volatile int stop, low_started;
static volatile uint64_t spins, spins_when_high_ran;
static uint64_t step(uint64_t v) { return v * 6364136223846793005ull + 1442695040888963407ull; }
static uint64_t (*volatile step_ptr)(uint64_t) = step;     /* indirect calls: scheduling points */

static void low(void *p) {
    (void)p;
    uint64_t v = 1;
    int64_t t0 = nnosGetSystemTick();
    low_started = 1;
    while (!stop) {       /* until high stops it (or 10 s pass: a kernel that never preempts) */
        v = step_ptr(v);
        spins++;
        if ((spins & 0xFFFFF) == 0 && ms_since(t0) > 10000) break;
    }
    hz_printf("[6] low stopped by high: %d, high ran while low computed: %d\n", stop, spins_when_high_ran > 0);
}

static void high(void *p) {
    (void)p;
    nnosWaitEvent(&ev);
    spins_when_high_ran = spins;
    hz_printf("[6] high (prio 5) runs on core %d\n", nnosGetCurrentCoreNumber());
    stop = 1;
}

static void scenario_preempt(void) {
    hz_printf("[6] rule: a thread of better priority that becomes ready through SignalEvent preempts a worse "
              "thread computing on its core\n");
    static Who h = {"high", 5}, l = {"low", 20};
    nnosInitializeEvent(&ev, 0, NN_OS_EVENT_AUTO_CLEAR);
    nnosSetThreadCoreMask(nnosGetCurrentThread(), 1, 2);   /* main moves to core 1 */
    spawn(0, high, &h, 0);
    spawn(1, low, &l, 0);
    while (!low_started) nnosSleepThread(1 * MS);
    nnosSignalEvent(&ev);
    nnosWaitThread(&th[0]);
    nnosWaitThread(&th[1]);
    nnosDestroyThread(&th[0]);
    nnosDestroyThread(&th[1]);
    nnosSetThreadCoreMask(nnosGetCurrentThread(), 0, 1);
    hz_printf("[6] main back on core %d\n", nnosGetCurrentCoreNumber());
    nnosFinalizeEvent(&ev);
}

/* ---- [7] affinity ----------------------------------------------------------------------------- */
static void pinned(void *p) {
    (void)p;
    int ideal = -9;
    uint64_t mask = 0;
    nnosGetThreadCoreMask(&ideal, &mask, nnosGetCurrentThread());
    int on2 = 1;
    for (int i = 0; i < 50; i++) {
        nnosYieldThread();
        on2 &= nnosGetCurrentCoreNumber() == 2 && svcGetCurrentProcessorNumber() == 2;
    }
    nnosSetThreadCoreMask(nnosGetCurrentThread(), 1, 2);
    int on1 = 1;
    for (int i = 0; i < 50; i++) {
        nnosYieldThread();
        on1 &= nnosGetCurrentCoreNumber() == 1 && svcGetCurrentProcessorNumber() == 1;
    }
    hz_printf("[7] T: ideal core %d mask %lx; on core 2 at 50 checks: %d; after SetThreadCoreMask(1, {1}) on core 1 "
              "at 50 checks: %d\n", ideal, mask, on2, on1);
}

static void scenario_affinity(void) {
    hz_printf("[7] rule: a thread runs only on the cores of its affinity mask (GetCurrentCoreNumber and "
              "GetCurrentProcessorNumber agree), and moves when the mask changes\n");
    static Who t = {"T", 10};
    spawn(0, pinned, &t, 2);
    join(1);
    hz_printf("[7] main on core %d\n", nnosGetCurrentCoreNumber());
}

/* ---- [8] priority inheritance ------------------------------------------------------------------- */
static NnEventType locked;
static volatile int h_done, med_ran;

static void inh_low(void *p) {
    (void)p;
    nnosLockMutex(&mtx);
    hz_printf("[8] L (prio 25) locked the mutex\n");
    nnosSignalEvent(&locked);
    NnThreadType *me = nnosGetCurrentThread();
    hz_printf("[8] L runs at priority %d (base %d) before Med: %d\n", nnosGetThreadCurrentPriority(me),
              nnosGetThreadPriority(me), !med_ran);
    nnosUnlockMutex(&mtx);
    hz_printf("[8] L done at priority %d\n", nnosGetThreadCurrentPriority(me));
}

static void inh_med(void *p) {
    (void)p;
    med_ran = 1;
    hz_printf("[8] Med (prio 20) runs: H done %d\n", h_done);
}

static void inh_high(void *p) {
    (void)p;
    hz_printf("[8] H (prio 10) waits for the mutex\n");
    nnosLockMutex(&mtx);
    hz_printf("[8] H got the mutex\n");
    nnosUnlockMutex(&mtx);
    h_done = 1;
}

static void scenario_inheritance(void) {
    hz_printf("[8] rule: the holder of an nn::os mutex runs at the best priority of its waiters, so L (25) "
              "holding it runs before Med (20) and main (16) while H (10) waits\n");
    static Who l = {"L", 25}, m = {"Med", 20}, h = {"H", 10};
    nnosInitializeMutex(&mtx, 0, 0);
    nnosInitializeEvent(&locked, 0, NN_OS_EVENT_AUTO_CLEAR);
    spawn(0, inh_low, &l, 0);
    nnosWaitEvent(&locked);              /* L runs while main waits, and takes the mutex */
    spawn(1, inh_med, &m, 0);            /* ready, but main is better */
    spawn(2, inh_high, &h, 0);           /* preempts main and blocks on the mutex */
    hz_printf("[8] main resumes\n");
    join(3);
    nnosFinalizeEvent(&locked);
    nnosFinalizeMutex(&mtx);
}

/* ---- [9] thread records, priorities, recursive mutexes ----------------------------------------- */
static void try_other(void *p) {
    Who *w = p;
    w->value = (uintptr_t)nnosTryLockMutex(&mtx);
    if (w->value) nnosUnlockMutex(&mtx);
}

static void scenario_api(void) {
    hz_printf("[9] rule: thread names and priorities read back as set; ChangeThreadPriority answers the previous "
              "priority; a recursive mutex is held until unlocked as often as locked\n");
    NnThreadType *me = nnosGetCurrentThread();
    hz_printf("[9] main: name %s, priority %d, same record again: %d\n", nnosGetThreadNamePointer(me),
              nnosGetThreadPriority(me), nnosGetCurrentThread() == me);
    nnosSetThreadName(me, "the main thread of os_sync");
    int before = nnosChangeThreadPriority(me, 18);
    hz_printf("[9] renamed: %s; ChangeThreadPriority(18) answered %d, now %d\n", nnosGetThreadNamePointer(me), before,
              nnosGetThreadPriority(me));
    nnosChangeThreadPriority(me, NN_OS_DEFAULT_PRIORITY);
    static Who o = {"other", 10};
    nnosInitializeMutex(&mtx, 1, 0);
    nnosLockMutex(&mtx);
    int again = nnosTryLockMutex(&mtx);
    nnosLockMutex(&mtx);
    nnosUnlockMutex(&mtx);
    nnosUnlockMutex(&mtx);
    int held = nnosIsMutexLockedByCurrentThread(&mtx);
    spawn(0, try_other, &o, 0);
    join(1);
    int other_while_held = (int)o.value;
    nnosUnlockMutex(&mtx);
    int held_after = nnosIsMutexLockedByCurrentThread(&mtx);
    spawn(0, try_other, &o, 0);
    join(1);
    hz_printf("[9] recursive: TryLock by holder %d, held after 2 of 3 unlocks %d, TryLock by another %d; after the "
              "last unlock held %d, TryLock by another %d\n", again, held, other_while_held, held_after, (int)o.value);
}

int hz_main(void) {
    scenario_mutex();
    scenario_condvar();
    scenario_semaphore();
    scenario_queue();
    scenario_events();
    scenario_preempt();
    scenario_affinity();
    scenario_inheritance();
    scenario_api();
    hz_printf("done\n");
    return 0;
}
