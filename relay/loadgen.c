/* Load generator for bench/relay_load.py: N seated players (one UDP socket each, already
 * joined by the caller) each send unreliable DATA to ALL at a fixed rate, stamped with the
 * send time; every DELIVER received is timed from that stamp to its kernel receive timestamp.
 * In C so that the generator, not the relay, is never the bottleneck on a small machine. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <time.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#define T_DATA 0x10
#define T_DELIVER 0x90
#define DATA_HDR 24
#define DELIVER_HDR 16
#define RX_BATCH 32
#define MAX_PAYLOAD 1024

typedef struct {
    uint64_t sent, received, bad;
    double elapsed;
} lg_result;

static int64_t now_real(void) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static void drain(int fd, uint32_t *hist, uint32_t nhist, lg_result *r) {
    static uint8_t buf[RX_BATCH][2048];
    static char ctl[RX_BATCH][64];
    struct mmsghdr m[RX_BATCH];
    struct iovec iov[RX_BATCH];
    for (;;) {
        for (int i = 0; i < RX_BATCH; i++) {
            iov[i] = (struct iovec){ buf[i], sizeof buf[i] };
            memset(&m[i].msg_hdr, 0, sizeof m[i].msg_hdr);
            m[i].msg_hdr.msg_iov = &iov[i];
            m[i].msg_hdr.msg_iovlen = 1;
            m[i].msg_hdr.msg_control = ctl[i];
            m[i].msg_hdr.msg_controllen = sizeof ctl[i];
        }
        int n = recvmmsg(fd, m, RX_BATCH, MSG_DONTWAIT, NULL);
        if (n <= 0) return;
        int64_t fallback = now_real();
        for (int i = 0; i < n; i++) {
            uint8_t *p = buf[i];
            if (m[i].msg_len < DELIVER_HDR + 8 || p[3] != T_DELIVER) { r->bad++; continue; }
            int64_t rx = fallback;
            for (struct cmsghdr *cm = CMSG_FIRSTHDR(&m[i].msg_hdr); cm; cm = CMSG_NXTHDR(&m[i].msg_hdr, cm))
                if (cm->cmsg_level == SOL_SOCKET && cm->cmsg_type == SCM_TIMESTAMPNS) {
                    struct timespec ts; memcpy(&ts, CMSG_DATA(cm), sizeof ts);
                    rx = (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
                }
            int64_t sent; memcpy(&sent, p + DELIVER_HDR, 8);
            int64_t us = (rx - sent) / 1000;
            if (us < 0) us = 0;
            hist[us < (int64_t)nhist ? us : nhist - 1]++;
            r->received++;
        }
        if (n < RX_BATCH) return;
    }
}

/* fds/sids: one per player; rate: packets/s each player sends; hist: nhist buckets of 1 us. */
int lg_run(const int *fds, const uint64_t *sids, int n, double rate, double seconds, int payload,
           uint32_t *hist, uint32_t nhist, lg_result *r) {
    if (payload < 8 || payload > MAX_PAYLOAD) return -1;
    memset(r, 0, sizeof *r);
    int ep = epoll_create1(0);
    if (ep < 0) return -errno;
    int on = 1;
    for (int i = 0; i < n; i++) {
        setsockopt(fds[i], SOL_SOCKET, SO_TIMESTAMPNS, &on, sizeof on);
        struct epoll_event ev = { .events = EPOLLIN, .data.u32 = (uint32_t)i };
        if (epoll_ctl(ep, EPOLL_CTL_ADD, fds[i], &ev) < 0) { close(ep); return -errno; }
    }
    uint8_t pkt[DATA_HDR + MAX_PAYLOAD];
    memset(pkt, 0, sizeof pkt);
    pkt[0] = 'N'; pkt[1] = 'R'; pkt[2] = 1; pkt[3] = T_DATA;
    pkt[12] = 0xFF;                                    /* to ALL, channel 0, unreliable */
    uint32_t seq[4096] = {0};
    if (n > 4096) { close(ep); return -1; }
    int64_t t0 = now_real(), end = t0 + (int64_t)(seconds * 1e9), drain_end = end + 300000000LL;
    double total_rate = rate * n;
    struct epoll_event evs[256];
    for (;;) {
        int64_t now = now_real();
        if (now >= drain_end) break;
        if (now < end) {
            uint64_t due = (uint64_t)((double)(now - t0) * 1e-9 * total_rate);
            while (r->sent < due) {
                int i = (int)(r->sent % (uint64_t)n);
                memcpy(pkt + 4, &sids[i], 8);
                memcpy(pkt + 20, &seq[i], 4);
                seq[i]++;
                int64_t stamp = now_real();
                memcpy(pkt + DATA_HDR, &stamp, 8);
                send(fds[i], pkt, DATA_HDR + payload, MSG_DONTWAIT);
                r->sent++;
            }
        }
        int k = epoll_wait(ep, evs, 256, 0);
        for (int j = 0; j < k; j++) drain(fds[evs[j].data.u32], hist, nhist, r);
    }
    r->elapsed = (double)(end - t0) * 1e-9;
    close(ep);
    return 0;
}
