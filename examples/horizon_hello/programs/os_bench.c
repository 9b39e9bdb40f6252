/* os_bench: the cost of nn::os calls served by the host (bench/hz_os.py runs it), against the
 * guest SDK's own mutex (a compare-and-swap in guest code, no kernel on the fast path), a bare
 * SVC round trip, and events handed between two threads through the kernel's SVCs.  Prints
 * "name ns_per_op" lines, each the best of ROUNDS rounds (the machine may be shared). */
#include "hz_sdk.h"
#include "nn.h"

#define N 4000
#define ROUNDS 5
#define STACK 0x4000
static char stack[STACK] __attribute__((aligned(NN_OS_STACK_ALIGN)));
static NnThreadType th;
static NnMutexType mtx;
static NnEventType ping, pong;
static HzMutex hm;
static Handle sw[2], sr[2];

static int64_t t0, best;
static void start(void) { t0 = nnosGetSystemTick(); }
static void stop(void) {
    int64_t ns = nnosConvertToTimeSpan(nnosGetSystemTick() - t0);
    if (!best || ns < best) best = ns;
}
static void report(const char *name) {
    hz_printf("%s %d\n", name, (int)(best / N));
    best = 0;
}

static void os_ponger(void *p) {
    (void)p;
    for (int i = 0; i < N * ROUNDS; i++) {
        nnosWaitEvent(&ping);
        nnosSignalEvent(&pong);
    }
}

static void svc_ponger(void *p) {
    (void)p;
    int32_t idx;
    for (int i = 0; i < N * ROUNDS; i++) {
        svcWaitSynchronization(&idx, &sr[0], 1, -1);
        svcResetSignal(sr[0]);
        svcSignalEvent(sw[1]);
    }
}

int hz_main(void) {
    nnosInitializeMutex(&mtx, 0, 0);
    for (int r = 0; r < ROUNDS; r++) {
        start();
        for (int i = 0; i < N; i++) { nnosLockMutex(&mtx); nnosUnlockMutex(&mtx); }
        stop();
    }
    report("nnos_lock_unlock");
    for (int r = 0; r < ROUNDS; r++) {
        start();
        for (int i = 0; i < N; i++) { hz_mutex_lock(&hm); hz_mutex_unlock(&hm); }
        stop();
    }
    report("guest_cas_lock_unlock");
    for (int r = 0; r < ROUNDS; r++) {
        start();
        for (int i = 0; i < N; i++) { int32_t p; svcGetThreadPriority(&p, HZ_CUR_THREAD); }
        stop();
    }
    report("svc_round_trip");
    for (int r = 0; r < ROUNDS; r++) {
        start();
        for (int i = 0; i < N; i++) nnosGetSystemTick();
        stop();
    }
    report("host_call_python");

    /* ping-pong between main and a better thread on main's core: each round two wake-ups and
     * two core hand-overs */
    nnosInitializeEvent(&ping, 0, NN_OS_EVENT_AUTO_CLEAR);
    nnosInitializeEvent(&pong, 0, NN_OS_EVENT_AUTO_CLEAR);
    nnosCreateThreadOnCore(&th, os_ponger, 0, stack, STACK, 10, 0);
    nnosStartThread(&th);
    for (int r = 0; r < ROUNDS; r++) {
        start();
        for (int i = 0; i < N; i++) { nnosSignalEvent(&ping); nnosWaitEvent(&pong); }
        stop();
    }
    report("nnos_event_ping_pong");
    nnosWaitThread(&th);
    nnosDestroyThread(&th);

    svcCreateEvent(&sw[0], &sr[0]);
    svcCreateEvent(&sw[1], &sr[1]);
    nnosCreateThreadOnCore(&th, svc_ponger, 0, stack, STACK, 10, 0);
    nnosStartThread(&th);
    for (int r = 0; r < ROUNDS; r++) {
        start();
        for (int i = 0; i < N; i++) {
            int32_t idx;
            svcSignalEvent(sw[0]);
            svcWaitSynchronization(&idx, &sr[1], 1, -1);
            svcResetSignal(sr[1]);
        }
        stop();
    }
    report("svc_event_ping_pong");
    nnosWaitThread(&th);
    hz_printf("done\n");
    return 0;
}
