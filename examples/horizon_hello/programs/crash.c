/* crash: a guest that calls Break from a few frames deep; the host must print a crash report
 * naming the guest functions on the way (frame-pointer backtrace + the modules' symbols). */
#include "hz_sdk.h"

__attribute__((noinline)) void crash_innermost(int depth) {
    hz_printf("about to break at depth %d\n", depth);
    svcBreak(0, 0, 0);
    hz_printf("not reached\n");
}

__attribute__((noinline)) void crash_middle(int depth) {
    crash_innermost(depth + 1);
    __asm__ volatile("" ::: "memory");   /* keep this a real call, not a tail call */
}

int hz_main(void) {
    crash_middle(1);
    return 0;
}
