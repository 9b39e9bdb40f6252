/* epoll_create1, epoll_ctl, epoll_pwait (with and without a signal mask) on pipes: the event
   struct's layout differs between arm64 (16 bytes) and x86-64 (12, packed), so the data word
   and the events must come back as the kernel gives them to an arm64 program. */
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>
#include <unistd.h>

int main(void) {
    int ep = epoll_create1(EPOLL_CLOEXEC);
    int a[2], b[2];
    if (ep < 0 || pipe(a) || pipe(b)) return 1;
    struct epoll_event ev = {.events = EPOLLIN, .data.u64 = 0x1122334455667788ull};
    if (epoll_ctl(ep, EPOLL_CTL_ADD, a[0], &ev)) return 2;
    ev.events = EPOLLIN | EPOLLET;
    ev.data.u64 = 0x99aabbccddeeff00ull;
    if (epoll_ctl(ep, EPOLL_CTL_ADD, b[0], &ev)) return 3;
    struct epoll_event out[8];
    memset(out, 0, sizeof out);
    printf("empty %d\n", epoll_pwait(ep, out, 8, 0, NULL));
    write(a[1], "x", 1);
    write(b[1], "yz", 2);
    sigset_t m;
    sigemptyset(&m);
    sigaddset(&m, SIGUSR1);
    int n = epoll_pwait(ep, out, 8, 1000, &m);
    printf("ready %d\n", n);
    unsigned long long seen = 0;
    for (int i = 0; i < n; i++) seen ^= out[i].data.u64 + out[i].events;
    printf("xor %#llx\n", seen);
    n = epoll_wait(ep, out, 1, 0);  /* maxevents 1: one of the two */
    printf("one %d\n", n);
    ev.events = EPOLLOUT;
    printf("mod %d\n", epoll_ctl(ep, EPOLL_CTL_MOD, a[0], &ev));
    printf("del %d\n", epoll_ctl(ep, EPOLL_CTL_DEL, b[0], NULL));
    printf("bad %d\n", epoll_wait(ep, out, 0, 0));
    return 0;
}
