/* API of the relay's C fast path (relay/core.c).  relay/core.py feeds this very file to
 * cffi's cdef, so it holds only what cffi parses: integer #defines, enums, stdint types. */
#define RL_MAX_SLOTS 8
#define RL_MAX_PACKET 2048
#define RL_INDEX_BITS 24
#define RL_INDEX_MASK 0xFFFFFF
#define RL_NHIST 20

enum {
    RL_C_RX_PACKETS, RL_C_RX_BYTES, RL_C_TX_PACKETS, RL_C_TX_BYTES, RL_C_FORWARDED, RL_C_PONGS,
    RL_C_SLOW, RL_C_ADDR_CHANGED,
    RL_C_DROP_MALFORMED, RL_C_DROP_OVERSIZE, RL_C_DROP_UNKNOWN_SESSION, RL_C_DROP_RATE_PLAYER,
    RL_C_DROP_RATE_ADDR, RL_C_DROP_BAD_DST, RL_C_DROP_NO_PEER, RL_C_DROP_STALE_PEER, RL_C_DROP_SLOW_FULL,
    RL_C_DROP_LEAVE_IGNORED,
    RL_C_SEND_ERROR, RL_C_CHALLENGES, RL_C_REBIND_CHALLENGES,
    RL_C_KERNEL_DROPS,           /* datagrams the kernel dropped at the socket (SO_RXQ_OVFL) */
    RL_C_LATENCY_NS_SUM,
    RL_NCOUNTERS
};

typedef struct rl_core rl_core;

typedef struct {
    uint32_t len;
    uint32_t addrlen;
    uint8_t addr[28];
    uint8_t data[2049];          /* RL_MAX_PACKET + 1 */
} rl_slow;

rl_core *rl_new(int fd, uint32_t max_sessions, uint32_t max_rooms, uint32_t max_packet,
                double player_rate, double player_burst, double addr_rate, double addr_burst);
void rl_free(rl_core *c);
int rl_poll(rl_core *c, int timeout_ms, rl_slow *out, int max_out, int max_batches);
int rl_session_set(rl_core *c, uint32_t idx, uint64_t id, const uint8_t *addr, uint32_t addrlen,
                   uint32_t room, uint32_t slot, uint16_t inc);
void rl_room_epoch(rl_core *c, uint32_t room, uint16_t epoch);
void rl_session_clear(rl_core *c, uint32_t idx);
int rl_expired(rl_core *c, int64_t timeout_ns, uint32_t *out, int max_out);
int64_t rl_session_idle_ns(rl_core *c, uint32_t idx);
int rl_session_addr_is(rl_core *c, uint32_t idx, uint64_t id, const uint8_t *addr, uint32_t addrlen);
int rl_send(rl_core *c, const uint8_t *addr, uint32_t addrlen, const uint8_t *data, uint32_t len);
void rl_siphash128(const uint8_t *key, const uint8_t *in, uint32_t len, uint8_t *out);
void rl_read_counters(rl_core *c, uint64_t *out);
void rl_read_hist(rl_core *c, uint64_t *out);
