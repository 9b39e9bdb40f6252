/* preempt: a thread of better priority that becomes ready while a worse one computes on its
 * core takes the core at once on Horizon (the kernel preempts at the next interrupt).  The
 * recompiled program's scheduling points are SVCs, host calls and indirect calls/jumps: a
 * computing thread that makes indirect calls (virtual calls, callbacks, PLT calls) hands the
 * core over at the next one.  Main runs at priority 44 on core 0 (main.npdm). */
#include "hz_sdk.h"

#define STACK 0x8000
static char stacks[2][STACK] __attribute__((aligned(16)));
static HzThread th[2];
static volatile int stop, high_ran;
static volatile uint64_t spins_before_high;
static volatile uint64_t spins;

static uint64_t step(uint64_t v) { return v * 6364136223846793005ull + 1442695040888963407ull; }
static uint64_t (*volatile step_ptr)(uint64_t) = step;   /* an indirect call in the hot loop */

static void worker(void *arg) {
    (void)arg;
    uint64_t v = 1;
    while (!stop) { v = step_ptr(v); spins++; }
    hz_printf("worker saw high run first: %d\n", high_ran && spins_before_high > 0);
}

static void high(void *arg) {
    (void)arg;
    svcSleepThread(30 * 1000 * 1000);      /* wakes while the worker computes on core 0 */
    spins_before_high = spins;
    high_ran = 1;
    hz_printf("high (prio 30) ran while the worker (prio 50) computed on its core\n");
    stop = 1;
}

int hz_main(void) {
    hz_printf("rule: a ready thread of better priority preempts a computing thread on its core\n");
    hz_thread_create(&th[0], worker, 0, stacks[0], STACK, 50, 0);
    hz_thread_create(&th[1], high, 0, stacks[1], STACK, 30, 0);
    hz_thread_start(&th[1]);            /* sleeps at once */
    hz_thread_start(&th[0]);
    svcSetThreadPriority(HZ_CUR_THREAD, 59);   /* main steps aside: the worker gets core 0 */
    hz_thread_join(&th[0]);
    hz_thread_join(&th[1]);
    hz_printf("done\n");
    return 0;
}
