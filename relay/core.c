/* The relay's fast path: receive a batch of datagrams (recvmmsg), forward DATA to the
 * players of the sender's room and answer PING, then send the whole batch (sendmmsg).
 * Everything else (handshakes, LEAVE, a known session seen from a new address) is copied
 * out to the Python control plane, after a per-address rate limit.
 *
 * Why C: one Python datagram costs ~5 us of interpreter work; batching syscalls and
 * keeping the forwarding table in flat arrays lets one core forward >100k packets/s.
 * The control plane (Python) owns membership and writes this table between polls; this
 * file never decides who may be in a room.
 *
 * Wire layout (little-endian, see relay/protocol.py and docs/coop.md):
 *   header  : 'N' 'R' version type
 *   DATA    : hdr session:u64@4 dst:u8@12 channel:u8@13 flags:u8@14 0:u8@15 dst_inc:u16@16 0:u16@18
 *             seq:u32@20 payload@24
 *   DELIVER : hdr src@4 dst@5 channel@6 flags@7 src_inc:u16@8 0:u16@10 seq:u32@12 payload@16
 *             (built in place at offset 8 of the DATA, so the payload never moves)
 *   PING    : hdr session:u64@4 echo:u64@12   -> PONG: hdr mask@4 slot@5 epoch:u16@6 echo:u64@8
 */
#define _GNU_SOURCE
#include <errno.h>
#include <poll.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include "core.h"

#define VERSION 1
#define T_JOIN 0x01
#define T_RESUME 0x02
#define T_DATA 0x10
#define T_PING 0x11
#define T_LEAVE 0x12
#define T_DELIVER 0x90
#define T_PONG 0x91
#define F_KNOWN 0x03
#define ALL 0xFF
#define DATA_HDR 24
#define DELIVER_HDR 16
#define PING_LEN 20
#define BATCH 64
#define FANOUT (BATCH * RL_MAX_SLOTS)
#define ADDR_BUCKETS 4096
#define CTL_LEN 64
#define CHALLENGE_GAP_NS 200000000LL   /* one CHALLENGE per seat per 200 ms while its address moves */

typedef struct {
    uint64_t id;
    struct sockaddr_in6 addr;       /* big enough for AF_INET too */
    uint32_t addrlen;
    uint32_t room;
    uint16_t inc;                   /* incarnation of the seat: tells successive occupants apart */
    uint8_t slot, active;
    double tokens;
    int64_t refill_ns, seen_ns, challenged_ns;
} sess_t;

typedef struct { int32_t slot[RL_MAX_SLOTS]; uint16_t epoch; } room_t;

typedef struct { uint8_t ip[16]; uint8_t used; double tokens; int64_t refill_ns; } abucket_t;

struct rl_core {
    int fd;
    uint32_t max_sessions, max_rooms, max_packet;
    double prate, pburst, arate, aburst;
    sess_t *sess;
    room_t *rooms;
    abucket_t abk[ADDR_BUCKETS];
    uint64_t counters[RL_NCOUNTERS];
    uint64_t hist[RL_NHIST];
    uint8_t *rxbuf;                          /* BATCH * (max_packet + 1) */
    struct mmsghdr rx[BATCH];
    struct iovec rxiov[BATCH];
    struct sockaddr_in6 rxaddr[BATCH];
    char rxctl[BATCH][CTL_LEN];
    struct mmsghdr tx[FANOUT];
    struct iovec txiov[FANOUT];
    int64_t txts[FANOUT];                    /* receive time (realtime ns) of what each tx forwards */
    uint8_t pong[BATCH][16];
};

static int64_t now_ns(clockid_t c) {
    struct timespec ts;
    clock_gettime(c, &ts);
    return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static uint64_t rd64(const uint8_t *p) { uint64_t v; memcpy(&v, p, 8); return v; }  /* x86-64: LE */

static int same_addr(const struct sockaddr_in6 *a, const struct sockaddr_in6 *b) {
    if (a->sin6_family != b->sin6_family || a->sin6_port != b->sin6_port) return 0;
    if (a->sin6_family == AF_INET)
        return ((const struct sockaddr_in *)a)->sin_addr.s_addr == ((const struct sockaddr_in *)b)->sin_addr.s_addr;
    return memcmp(&a->sin6_addr, &b->sin6_addr, 16) == 0;
}

static int take(double *tokens, int64_t *refill, double rate, double burst, int64_t now) {
    double t = *tokens + (double)(now - *refill) * 1e-9 * rate;
    *refill = now;
    if (t > burst) t = burst;
    if (t < 1.0) { *tokens = t; return 0; }
    *tokens = t - 1.0;
    return 1;
}

/* Per source IP (not port: ports are free to an attacker) token bucket for the slow path. */
static int addr_allowed(rl_core *c, const struct sockaddr_in6 *a, int64_t now) {
    uint8_t ip[16] = {0};
    if (a->sin6_family == AF_INET) memcpy(ip, &((const struct sockaddr_in *)a)->sin_addr, 4);
    else memcpy(ip, &a->sin6_addr, 16);
    uint64_t h = 1469598103934665603ULL;
    for (int i = 0; i < 16; i++) h = (h ^ ip[i]) * 1099511628211ULL;
    abucket_t *b = &c->abk[h % ADDR_BUCKETS];
    if (!b->used || memcmp(b->ip, ip, 16) != 0) {
        /* A collision evicts the older address: that only ever makes a limit looser, never
           blocks an innocent address for someone else's flood for more than one refill. */
        memcpy(b->ip, ip, 16); b->used = 1; b->tokens = c->aburst; b->refill_ns = now;
    }
    return take(&b->tokens, &b->refill_ns, c->arate, c->aburst, now);
}

rl_core *rl_new(int fd, uint32_t max_sessions, uint32_t max_rooms, uint32_t max_packet,
                double player_rate, double player_burst, double addr_rate, double addr_burst) {
    if (max_packet > RL_MAX_PACKET || max_packet < DATA_HDR) return NULL;
    rl_core *c = calloc(1, sizeof *c);
    if (!c) return NULL;
    c->fd = fd; c->max_sessions = max_sessions; c->max_rooms = max_rooms; c->max_packet = max_packet;
    c->prate = player_rate; c->pburst = player_burst; c->arate = addr_rate; c->aburst = addr_burst;
    c->sess = calloc(max_sessions, sizeof *c->sess);
    c->rooms = malloc((size_t)max_rooms * sizeof *c->rooms);
    c->rxbuf = malloc((size_t)BATCH * (max_packet + 1));
    if (!c->sess || !c->rooms || !c->rxbuf) { rl_free(c); return NULL; }
    for (uint32_t r = 0; r < max_rooms; r++)
        for (int s = 0; s < RL_MAX_SLOTS; s++) c->rooms[r].slot[s] = -1;
    int on = 1;
    setsockopt(fd, SOL_SOCKET, SO_TIMESTAMPNS, &on, sizeof on);
    return c;
}

void rl_free(rl_core *c) {
    if (!c) return;
    free(c->sess); free(c->rooms); free(c->rxbuf); free(c);
}

int rl_session_set(rl_core *c, uint32_t idx, uint64_t id, const uint8_t *addr, uint32_t addrlen,
                   uint32_t room, uint32_t slot, uint16_t inc) {
    if (idx >= c->max_sessions || room >= c->max_rooms || slot >= RL_MAX_SLOTS || addrlen > sizeof(struct sockaddr_in6))
        return -1;
    sess_t *s = &c->sess[idx];
    int keep = s->active && s->id == id;    /* re-bind of a live session keeps its bucket */
    s->id = id; memset(&s->addr, 0, sizeof s->addr); memcpy(&s->addr, addr, addrlen); s->addrlen = addrlen;
    s->room = room; s->slot = (uint8_t)slot; s->inc = inc; s->active = 1;
    int64_t now = now_ns(CLOCK_MONOTONIC);
    if (!keep) { s->tokens = c->pburst; s->refill_ns = now; }
    s->seen_ns = now;
    c->rooms[room].slot[slot] = (int32_t)idx;
    return 0;
}

void rl_room_epoch(rl_core *c, uint32_t room, uint16_t epoch) {
    if (room < c->max_rooms) c->rooms[room].epoch = epoch;
}

void rl_session_clear(rl_core *c, uint32_t idx) {
    if (idx >= c->max_sessions) return;
    sess_t *s = &c->sess[idx];
    if (s->active && c->rooms[s->room].slot[s->slot] == (int32_t)idx) c->rooms[s->room].slot[s->slot] = -1;
    memset(s, 0, sizeof *s);
}

int rl_expired(rl_core *c, int64_t timeout_ns, uint32_t *out, int max_out) {
    int64_t now = now_ns(CLOCK_MONOTONIC);
    int n = 0;
    for (uint32_t i = 0; i < c->max_sessions && n < max_out; i++)
        if (c->sess[i].active && now - c->sess[i].seen_ns > timeout_ns) out[n++] = i;
    return n;
}

int rl_session_addr_is(rl_core *c, uint32_t idx, uint64_t id, const uint8_t *addr, uint32_t addrlen) {
    if (idx >= c->max_sessions || !c->sess[idx].active || c->sess[idx].id != id) return 0;
    struct sockaddr_in6 a; memset(&a, 0, sizeof a);
    memcpy(&a, addr, addrlen > sizeof a ? sizeof a : addrlen);
    return same_addr(&c->sess[idx].addr, &a);
}

void rl_read_counters(rl_core *c, uint64_t *out) { memcpy(out, c->counters, sizeof c->counters); }
void rl_read_hist(rl_core *c, uint64_t *out) { memcpy(out, c->hist, sizeof c->hist); }

int rl_send(rl_core *c, const uint8_t *addr, uint32_t addrlen, const uint8_t *data, uint32_t len) {
    ssize_t n = sendto(c->fd, data, len, MSG_DONTWAIT, (const struct sockaddr *)addr, addrlen);
    if (n < 0) { c->counters[RL_C_SEND_ERROR]++; return -errno; }
    c->counters[RL_C_TX_PACKETS]++; c->counters[RL_C_TX_BYTES] += len;
    return 0;
}

static uint8_t room_mask(rl_core *c, uint32_t room) {
    uint8_t m = 0;
    for (int s = 0; s < RL_MAX_SLOTS; s++) if (c->rooms[room].slot[s] >= 0) m |= (uint8_t)(1u << s);
    return m;
}

static int hist_bucket(int64_t ns) {
    /* bucket i holds latencies < 2^i microseconds (i = 0..RL_NHIST-2); the last is overflow */
    int64_t us = ns / 1000;
    int b = 0;
    while (b < RL_NHIST - 1 && us >= (1LL << b)) b++;
    return b;
}

static void to_slow(rl_core *c, rl_slow *out, int max_out, int *nslow, uint8_t *pkt, uint32_t len,
                    const struct sockaddr_in6 *a, uint32_t alen, int64_t mono, int limit_addr) {
    if (limit_addr && !addr_allowed(c, a, mono)) { c->counters[RL_C_DROP_RATE_ADDR]++; return; }
    if (*nslow >= max_out) { c->counters[RL_C_DROP_SLOW_FULL]++; return; }
    rl_slow *o = &out[(*nslow)++];
    o->len = len; o->addrlen = alen;
    memcpy(o->addr, a, alen);
    memcpy(o->data, pkt, len);
    c->counters[RL_C_SLOW]++;
}

/* Flush queued sends; record added latency of forwarded packets. */
static void flush(rl_core *c, int ntx) {
    int done = 0;
    while (done < ntx) {
        int n = sendmmsg(c->fd, c->tx + done, (unsigned)(ntx - done), MSG_DONTWAIT);
        if (n <= 0) {
            if (n < 0 && errno == EINTR) continue;
            /* one bad destination (EPERM, ENETUNREACH, a full send buffer) loses only its own
               message: UDP gives no more than that anyway, and the loop must not stall */
            c->counters[RL_C_SEND_ERROR]++;
            c->txts[done] = -1;
            done++;
            continue;
        }
        done += n;
    }
    int64_t t = now_ns(CLOCK_REALTIME);
    for (int i = 0; i < ntx; i++) {
        if (c->txts[i] < 0) continue;
        c->counters[RL_C_TX_PACKETS]++;
        c->counters[RL_C_TX_BYTES] += c->txiov[i].iov_len;
        if (c->txts[i]) {
            int64_t d = t - c->txts[i];
            if (d < 0) d = 0;               /* the wall clock was stepped back */
            c->hist[hist_bucket(d)]++;
            c->counters[RL_C_LATENCY_NS_SUM] += (uint64_t)d;
        }
    }
}

int rl_poll(rl_core *c, int timeout_ms, rl_slow *out, int max_out, int max_batches) {
    struct pollfd p = { .fd = c->fd, .events = POLLIN };
    int r = poll(&p, 1, timeout_ms);
    if (r <= 0) return 0;
    int nslow = 0;
    uint32_t cap = c->max_packet + 1;        /* one spare byte tells an oversize datagram */
    for (int batch = 0; batch < max_batches && nslow < max_out; batch++) {
        for (int i = 0; i < BATCH; i++) {
            c->rxiov[i].iov_base = c->rxbuf + (size_t)i * cap;
            c->rxiov[i].iov_len = cap;
            memset(&c->rx[i].msg_hdr, 0, sizeof c->rx[i].msg_hdr);
            c->rx[i].msg_hdr.msg_name = &c->rxaddr[i];
            c->rx[i].msg_hdr.msg_namelen = sizeof c->rxaddr[i];
            c->rx[i].msg_hdr.msg_iov = &c->rxiov[i];
            c->rx[i].msg_hdr.msg_iovlen = 1;
            c->rx[i].msg_hdr.msg_control = c->rxctl[i];
            c->rx[i].msg_hdr.msg_controllen = CTL_LEN;
        }
        int n = recvmmsg(c->fd, c->rx, BATCH, MSG_DONTWAIT, NULL);
        if (n <= 0) break;
        int64_t mono = now_ns(CLOCK_MONOTONIC);
        int64_t real = now_ns(CLOCK_REALTIME);
        int ntx = 0;
        for (int i = 0; i < n; i++) {
            struct msghdr *h = &c->rx[i].msg_hdr;
            uint8_t *pkt = c->rxiov[i].iov_base;
            uint32_t len = c->rx[i].msg_len;
            const struct sockaddr_in6 *src = &c->rxaddr[i];
            c->counters[RL_C_RX_PACKETS]++;
            c->counters[RL_C_RX_BYTES] += len;
            if ((h->msg_flags & MSG_TRUNC) || len > c->max_packet) { c->counters[RL_C_DROP_OVERSIZE]++; continue; }
            if (len < 4 || pkt[0] != 'N' || pkt[1] != 'R' || pkt[2] != VERSION) { c->counters[RL_C_DROP_MALFORMED]++; continue; }
            int64_t rxt = real;
            for (struct cmsghdr *cm = CMSG_FIRSTHDR(h); cm; cm = CMSG_NXTHDR(h, cm))
                if (cm->cmsg_level == SOL_SOCKET && cm->cmsg_type == SCM_TIMESTAMPNS) {
                    struct timespec ts; memcpy(&ts, CMSG_DATA(cm), sizeof ts);
                    rxt = (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
                }
            uint8_t type = pkt[3];
            if (type == T_JOIN || type == T_RESUME || type == T_LEAVE) {
                to_slow(c, out, max_out, &nslow, pkt, len, src, h->msg_namelen, mono, 1);
                continue;
            }
            if ((type != T_DATA || len < DATA_HDR) && (type != T_PING || len < PING_LEN)) {
                c->counters[RL_C_DROP_MALFORMED]++; continue;
            }
            uint64_t id = rd64(pkt + 4);
            uint32_t idx = (uint32_t)(id & RL_INDEX_MASK);
            sess_t *s = idx < c->max_sessions ? &c->sess[idx] : NULL;
            if (!s || !s->active || s->id != id) { c->counters[RL_C_DROP_UNKNOWN_SESSION]++; continue; }
            if (!same_addr(&s->addr, src)) {
                /* same player, new address (NAT rebinding, Wi-Fi -> mobile): the control plane
                   answers with a CHALLENGE no larger than this packet, never with data */
                c->counters[RL_C_ADDR_CHANGED]++;
                /* Limited per seat, not per IP: a moving player sends its whole backlog from the
                   new address, and that must not starve the RESUME it needs (nor the handshakes
                   of other players behind the same NAT). */
                if (mono - s->challenged_ns < CHALLENGE_GAP_NS) { c->counters[RL_C_DROP_RATE_PLAYER]++; continue; }
                s->challenged_ns = mono;
                to_slow(c, out, max_out, &nslow, pkt, len, src, h->msg_namelen, mono, 0);
                continue;
            }
            if (!take(&s->tokens, &s->refill_ns, c->prate, c->pburst, mono)) { c->counters[RL_C_DROP_RATE_PLAYER]++; continue; }
            s->seen_ns = mono;
            room_t *room = &c->rooms[s->room];
            if (type == T_PING) {
                uint8_t *o = c->pong[i];
                o[0] = 'N'; o[1] = 'R'; o[2] = VERSION; o[3] = T_PONG;
                o[4] = room_mask(c, s->room); o[5] = s->slot;
                memcpy(o + 6, &room->epoch, 2);
                memcpy(o + 8, pkt + 12, 8);
                c->txiov[ntx] = (struct iovec){ o, 16 };
                memset(&c->tx[ntx].msg_hdr, 0, sizeof c->tx[ntx].msg_hdr);
                c->tx[ntx].msg_hdr.msg_name = &s->addr;
                c->tx[ntx].msg_hdr.msg_namelen = s->addrlen;
                c->tx[ntx].msg_hdr.msg_iov = &c->txiov[ntx];
                c->tx[ntx].msg_hdr.msg_iovlen = 1;
                c->txts[ntx] = 0;
                ntx++;
                c->counters[RL_C_PONGS]++;
                continue;
            }
            uint8_t dst = pkt[12], ch = pkt[13], fl = pkt[14];
            uint16_t dst_inc; memcpy(&dst_inc, pkt + 16, 2);
            uint32_t seq; memcpy(&seq, pkt + 20, 4);
            if (fl & ~F_KNOWN) { c->counters[RL_C_DROP_MALFORMED]++; continue; }
            if (dst != ALL && (dst >= RL_MAX_SLOTS || dst == s->slot)) { c->counters[RL_C_DROP_BAD_DST]++; continue; }
            /* DELIVER header written over the tail of the DATA header: payload stays put */
            if (dst != ALL) {
                int32_t j = room->slot[dst];
                if (j < 0) { c->counters[RL_C_DROP_NO_PEER]++; continue; }
                if (dst_inc && c->sess[j].inc != dst_inc) { c->counters[RL_C_DROP_STALE_PEER]++; continue; }
            }
            uint8_t *d = pkt + (DATA_HDR - DELIVER_HDR);
            d[0] = 'N'; d[1] = 'R'; d[2] = VERSION; d[3] = T_DELIVER;
            d[4] = s->slot; d[5] = dst; d[6] = ch; d[7] = fl;
            memcpy(d + 8, &s->inc, 2); d[10] = 0; d[11] = 0;
            memcpy(d + 12, &seq, 4);
            uint32_t dlen = len - (DATA_HDR - DELIVER_HDR);
            int sent = 0;
            for (int t = 0; t < RL_MAX_SLOTS; t++) {
                if (t == s->slot || (dst != ALL && t != dst)) continue;
                int32_t j = room->slot[t];
                if (j < 0) continue;
                sess_t *r = &c->sess[j];
                c->txiov[ntx] = (struct iovec){ d, dlen };
                memset(&c->tx[ntx].msg_hdr, 0, sizeof c->tx[ntx].msg_hdr);
                c->tx[ntx].msg_hdr.msg_name = &r->addr;
                c->tx[ntx].msg_hdr.msg_namelen = r->addrlen;
                c->tx[ntx].msg_hdr.msg_iov = &c->txiov[ntx];
                c->tx[ntx].msg_hdr.msg_iovlen = 1;
                c->txts[ntx] = rxt;
                ntx++; sent++;
            }
            if (sent) c->counters[RL_C_FORWARDED] += sent;
            else c->counters[RL_C_DROP_NO_PEER]++;
        }
        if (ntx) flush(c, ntx);
        if (n < BATCH) break;
    }
    return nslow;
}
