/* The relay's fast path: receive a batch of datagrams (recvmmsg), forward DATA to the
 * players of the sender's room and answer PING, then send the whole batch (sendmmsg).
 * Handshakes without a valid cookie, and a live session seen from a new address, get a
 * stateless CHALLENGE from here; cookie-verified JOIN/RESUME (within the budget of their
 * source ip:port) and LEAVE from a seat's own address are copied out to the Python control plane.
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
#include <sys/random.h>
#include <sys/socket.h>

#include "core.h"

#ifndef SO_RXQ_OVFL
#define SO_RXQ_OVFL 40                     /* Linux asm-generic/socket.h; man 7 socket */
#endif

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
#define CTL_LEN 96                       /* SCM_TIMESTAMPNS (32) + SO_RXQ_OVFL (24) with room to spare */
#define MIN_HANDSHAKE 64                 /* JOIN/RESUME are padded to this: a CHALLENGE (20) is smaller */
#define LEAVE_LEN 12
#define COOKIE_OFF 8
#define COOKIE_LEN 16
#define CHALLENGE_LEN 20
#define T_CHALLENGE 0x81
#define COOKIE_PERIOD_NS 20000000000LL  /* a cookie is good for this period and the next one */

typedef struct {
    uint64_t id;
    struct sockaddr_in6 addr;       /* big enough for AF_INET too */
    uint32_t addrlen;
    uint32_t room;
    uint16_t inc;                   /* incarnation of the seat: tells successive occupants apart */
    uint8_t slot, active;
    double tokens;
    int64_t refill_ns, seen_ns;
} sess_t;

typedef struct { int32_t slot[RL_MAX_SLOTS]; uint16_t epoch; } room_t;

/* budget of one cookie-verified source (ip and port) for the control plane */
typedef struct { uint8_t ip[16]; uint16_t port; uint8_t used; double tokens; int64_t refill_ns; } abucket_t;

struct rl_core {
    int fd;
    uint32_t max_sessions, max_rooms, max_packet;
    double prate, pburst, arate, aburst;
    sess_t *sess;
    room_t *rooms;
    abucket_t abk[ADDR_BUCKETS];
    uint8_t cookie_key[16];
    uint32_t last_ovfl;                      /* the socket's drop count as the last SO_RXQ_OVFL told */
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
    uint8_t chal[BATCH][CHALLENGE_LEN];
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

/* SipHash-2-4 with a 128-bit tag (Aumasson & Bernstein; reference: github.com/veorq/SipHash),
 * the keyed PRF behind the stateless cookies: fast enough to answer every handshake in C. */
static uint64_t rotl(uint64_t x, int b) { return (x << b) | (x >> (64 - b)); }
#define SIPROUND do { \
    v0 += v1; v1 = rotl(v1, 13); v1 ^= v0; v0 = rotl(v0, 32); \
    v2 += v3; v3 = rotl(v3, 16); v3 ^= v2; \
    v0 += v3; v3 = rotl(v3, 21); v3 ^= v0; \
    v2 += v1; v1 = rotl(v1, 17); v1 ^= v2; v2 = rotl(v2, 32); } while (0)

void rl_siphash128(const uint8_t *key, const uint8_t *in, uint32_t len, uint8_t *out) {
    uint64_t k0 = rd64(key), k1 = rd64(key + 8);
    uint64_t v0 = 0x736f6d6570736575ULL ^ k0, v1 = 0x646f72616e646f6dULL ^ k1;
    uint64_t v2 = 0x6c7967656e657261ULL ^ k0, v3 = 0x7465646279746573ULL ^ k1;
    v1 ^= 0xee;
    uint32_t full = len & ~7u;
    for (uint32_t i = 0; i < full; i += 8) {
        uint64_t m = rd64(in + i);
        v3 ^= m; SIPROUND; SIPROUND; v0 ^= m;
    }
    uint64_t b = (uint64_t)len << 56;
    for (uint32_t i = 0; i < (len & 7); i++) b |= (uint64_t)in[full + i] << (8 * i);
    v3 ^= b; SIPROUND; SIPROUND; v0 ^= b;
    v2 ^= 0xee;
    SIPROUND; SIPROUND; SIPROUND; SIPROUND;
    uint64_t h = v0 ^ v1 ^ v2 ^ v3; memcpy(out, &h, 8);
    v1 ^= 0xdd;
    SIPROUND; SIPROUND; SIPROUND; SIPROUND;
    h = v0 ^ v1 ^ v2 ^ v3; memcpy(out + 8, &h, 8);
}

static void addr_key(const struct sockaddr_in6 *a, uint8_t ip[16], uint16_t *port) {
    memset(ip, 0, 16);
    if (a->sin6_family == AF_INET) memcpy(ip, &((const struct sockaddr_in *)a)->sin_addr, 4);
    else memcpy(ip, &a->sin6_addr, 16);
    *port = a->sin6_port;                   /* same offset in sockaddr_in and sockaddr_in6 */
}

/* Cookie of a source address (family, ip, port) in 20-second period ``epoch``: proof, without
 * state kept here, that whoever echoes it receives at that address (DTLS HelloVerifyRequest). */
static void cookie_for(const rl_core *c, const struct sockaddr_in6 *a, int64_t epoch, uint8_t out[16]) {
    uint8_t m[27];
    uint16_t port;
    m[0] = (uint8_t)a->sin6_family;
    addr_key(a, m + 1, &port);
    memcpy(m + 17, &port, 2);
    memcpy(m + 19, &epoch, 8);
    rl_siphash128(c->cookie_key, m, sizeof m, out);
}

static int cookie_ok(const rl_core *c, const struct sockaddr_in6 *a, const uint8_t *cookie, int64_t mono) {
    int64_t e = mono / COOKIE_PERIOD_NS;
    uint8_t want[16];
    unsigned diff0 = 0, diff1 = 0;
    cookie_for(c, a, e, want);
    for (int i = 0; i < 16; i++) diff0 |= want[i] ^ cookie[i];
    cookie_for(c, a, e - 1, want);
    for (int i = 0; i < 16; i++) diff1 |= want[i] ^ cookie[i];
    return diff0 == 0 || diff1 == 0;
}

/* Token bucket of one cookie-verified source (ip AND port) for the control plane.  Keyed by the
 * port too: a flood from one socket cannot spend the budget of another player behind the same
 * NAT, and only a source that proved it receives at its address gets a bucket at all (the
 * unverified get a CHALLENGE from C and cost the control plane nothing). */
static int source_allowed(rl_core *c, const struct sockaddr_in6 *a, int64_t now) {
    uint8_t ip[16];
    uint16_t port;
    addr_key(a, ip, &port);
    uint64_t h = 1469598103934665603ULL;
    for (int i = 0; i < 16; i++) h = (h ^ ip[i]) * 1099511628211ULL;
    h = (h ^ (port & 0xFF)) * 1099511628211ULL;
    h = (h ^ (port >> 8)) * 1099511628211ULL;
    abucket_t *b = &c->abk[h % ADDR_BUCKETS];
    if (!b->used || b->port != port || memcmp(b->ip, ip, 16) != 0) {
        /* A collision evicts the older source: that only ever makes a limit looser, never
           blocks an innocent source for someone else's flood for more than one refill. */
        memcpy(b->ip, ip, 16); b->port = port; b->used = 1; b->tokens = c->aburst; b->refill_ns = now;
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
    if (getrandom(c->cookie_key, sizeof c->cookie_key, 0) != (ssize_t)sizeof c->cookie_key) { rl_free(c); return NULL; }
    int on = 1;
    setsockopt(fd, SOL_SOCKET, SO_TIMESTAMPNS, &on, sizeof on);
    /* the kernel then tells, with each datagram, how many it dropped at this socket (full buffer) */
    setsockopt(fd, SOL_SOCKET, SO_RXQ_OVFL, &on, sizeof on);
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

int64_t rl_session_idle_ns(rl_core *c, uint32_t idx) {
    if (idx >= c->max_sessions || !c->sess[idx].active) return -1;
    return now_ns(CLOCK_MONOTONIC) - c->sess[idx].seen_ns;
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
                    const struct sockaddr_in6 *a, uint32_t alen) {
    if (*nslow >= max_out) { c->counters[RL_C_DROP_SLOW_FULL]++; return; }
    rl_slow *o = &out[(*nslow)++];
    o->len = len; o->addrlen = alen;
    memcpy(o->addr, a, alen);
    memcpy(o->data, pkt, len);
    c->counters[RL_C_SLOW]++;
}

/* Queue a reply to the sender of rx[i] (CHALLENGE or PONG) in the batch's sendmmsg. */
static void reply(rl_core *c, int *ntx, int i, uint8_t *data, uint32_t len) {
    c->txiov[*ntx] = (struct iovec){ data, len };
    memset(&c->tx[*ntx].msg_hdr, 0, sizeof c->tx[*ntx].msg_hdr);
    c->tx[*ntx].msg_hdr.msg_name = &c->rxaddr[i];
    c->tx[*ntx].msg_hdr.msg_namelen = c->rx[i].msg_hdr.msg_namelen;
    c->tx[*ntx].msg_hdr.msg_iov = &c->txiov[*ntx];
    c->tx[*ntx].msg_hdr.msg_iovlen = 1;
    c->txts[*ntx] = 0;
    (*ntx)++;
}

/* A CHALLENGE (20 bytes, never larger than the >= 20-byte packet it answers) to the sender of rx[i]. */
static void challenge(rl_core *c, int *ntx, int i, int64_t mono) {
    uint8_t *o = c->chal[i];
    o[0] = 'N'; o[1] = 'R'; o[2] = VERSION; o[3] = T_CHALLENGE;
    cookie_for(c, &c->rxaddr[i], mono / COOKIE_PERIOD_NS, o + 4);
    reply(c, ntx, i, o, CHALLENGE_LEN);
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
                } else if (cm->cmsg_level == SOL_SOCKET && cm->cmsg_type == SO_RXQ_OVFL) {
                    /* the socket's drop count when this datagram was queued (u32, wraps) */
                    uint32_t v; memcpy(&v, CMSG_DATA(cm), 4);
                    c->counters[RL_C_KERNEL_DROPS] += (uint32_t)(v - c->last_ovfl);
                    c->last_ovfl = v;
                }
            uint8_t type = pkt[3];
            if (type == T_JOIN || type == T_RESUME) {
                if (len < MIN_HANDSHAKE) { c->counters[RL_C_DROP_MALFORMED]++; continue; }
                /* No valid cookie: a CHALLENGE from here, no state, no control-plane work, no
                   shared budget a flood could empty (so a NAT neighbour's flood locks no one out). */
                if (!cookie_ok(c, src, pkt + COOKIE_OFF, mono)) {
                    c->counters[RL_C_CHALLENGES]++;
                    challenge(c, &ntx, i, mono);
                    continue;
                }
                if (!source_allowed(c, src, mono)) { c->counters[RL_C_DROP_RATE_ADDR]++; continue; }
                to_slow(c, out, max_out, &nslow, pkt, len, src, h->msg_namelen);
                continue;
            }
            if (type == T_LEAVE) {
                if (len < LEAVE_LEN) { c->counters[RL_C_DROP_MALFORMED]++; continue; }
                uint64_t id = rd64(pkt + 4);
                uint32_t idx = (uint32_t)(id & RL_INDEX_MASK);
                /* only the seat's own address may end it (once: the seat is gone after) */
                if (idx >= c->max_sessions || !c->sess[idx].active || c->sess[idx].id != id ||
                    !same_addr(&c->sess[idx].addr, src)) { c->counters[RL_C_DROP_LEAVE_IGNORED]++; continue; }
                to_slow(c, out, max_out, &nslow, pkt, len, src, h->msg_namelen);
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
                /* Every such packet gets its own stateless CHALLENGE (20 bytes, no larger than it):
                   nothing is shared between the sources claiming a seat, so a third party that
                   knows the session id cannot use up the challenges of the player who moved. */
                c->counters[RL_C_REBIND_CHALLENGES]++;
                challenge(c, &ntx, i, mono);
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
