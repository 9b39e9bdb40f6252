/* Reads through a null pointer from a function of its own, called through a pointer so that
 * neither compiler inlines it (the guest's nor the one compiling the lifted C): the recompiled
 * program's crash report must name that guest function (tests/cpu_host/test_crash_report.py). */
#include <stdio.h>

__attribute__((noinline)) long read_through(volatile long *p) {
    return *p + 1;
}

int main(int argc, char **argv) {
    (void)argv;
    printf("before\n");
    fflush(stdout);
    long (*volatile fn)(volatile long *) = read_through;
    return (int)fn((volatile long *)(long)(argc - 1));
}
