/* hz_sdk.h — the guest SDK of our own for Horizon test programs: SVC wrappers (svc.s),
 * libc basics, printing through OutputDebugString, threads, mutexes and condition variables
 * built on the kernel's arbitration SVCs.  Written from public facts (switchbrew's SVC table
 * and the documented register/tag conventions); no Nintendo SDK, no leaked header. */
#ifndef HZ_SDK_H
#define HZ_SDK_H
#include <stdint.h>
#include <stddef.h>
#include <stdarg.h>

typedef uint32_t Handle;
typedef uint32_t Result;

#define HZ_CUR_PROCESS 0xFFFF8001u      /* pseudo-handles (switchbrew SVC page, libnx svc.h) */
#define HZ_CUR_THREAD  0xFFFF8000u
#define HZ_MUTEX_WAITERS 0x40000000u    /* bit of a mutex word: threads wait in the kernel */
#define HZ_TLS_HANDLE_OFFSET 0x1F8      /* where our SDK keeps a thread's own handle in its TLS */

/* kernel results: module 1, description << 9 */
#define HZ_R_INVALID_SIZE      0xCA01u
#define HZ_R_INVALID_ADDRESS   0xCC01u
#define HZ_R_INVALID_HANDLE    0xE401u
#define HZ_R_INVALID_PRIORITY  0xE001u
#define HZ_R_INVALID_CORE      0xE201u
#define HZ_R_INVALID_COMBO     0xE801u
#define HZ_R_TIMED_OUT         0xEA01u
#define HZ_R_OUT_OF_RANGE      0xEE01u
#define HZ_R_INVALID_ENUM      0xF001u
#define HZ_R_INVALID_STATE     0xFA01u
#define HZ_R_INVALID_CUR_MEM   0xD401u
#define HZ_R_INVALID_NEW_PERM  0xD801u
#define HZ_R_INVALID_REGION    0xDC01u

typedef struct MemoryInfo {
    uint64_t addr, size;
    uint32_t type, attr, perm, ipc_refcount, device_refcount, padding;
} MemoryInfo;

Result svcSetHeapSize(void **out_addr, uint64_t size);
Result svcQueryMemory(MemoryInfo *info, uint32_t *page_info, uint64_t addr);
void svcExitProcess(void) __attribute__((noreturn));
Result svcCreateThread(Handle *out, void *entry, void *arg, void *stack_top, int prio, int core);
Result svcStartThread(Handle thread);
void svcExitThread(void) __attribute__((noreturn));
void svcSleepThread(int64_t ns);
Result svcGetThreadPriority(int32_t *out, Handle thread);
Result svcSetThreadPriority(Handle thread, uint32_t prio);
Result svcGetThreadCoreMask(int32_t *core, uint64_t *mask, Handle thread);
Result svcSetThreadCoreMask(Handle thread, int32_t ideal_core, uint64_t mask);
uint32_t svcGetCurrentProcessorNumber(void);
Result svcCloseHandle(Handle h);
Result svcWaitSynchronization(int32_t *index, const Handle *handles, int32_t count, int64_t timeout_ns);
Result svcArbitrateLock(Handle owner, uint32_t *mutex, Handle requester);
Result svcArbitrateUnlock(uint32_t *mutex);
Result svcWaitProcessWideKeyAtomic(uint32_t *mutex, uint32_t *key, Handle tag, int64_t timeout_ns);
void svcSignalProcessWideKey(uint32_t *key, int32_t count);
uint64_t svcGetSystemTick(void);
void svcBreak(uint32_t reason, uint64_t address, uint64_t size);
Result svcOutputDebugString(const char *text, uint64_t size);
Result svcGetInfo(uint64_t *out, uint32_t id0, Handle handle, uint64_t id1);
Result svcWaitForAddress(void *addr, uint32_t type, int32_t value, int64_t timeout_ns);
Result svcSignalToAddress(void *addr, uint32_t type, int32_t value, int32_t count);
Result svcCreateEvent(Handle *writable, Handle *readable);
Result svcSignalEvent(Handle writable);
Result svcClearEvent(Handle either);
Result svcResetSignal(Handle readable);
Result svcSetMemoryPermission(void *addr, uint64_t size, uint32_t perm);
Result svcSetMemoryAttribute(void *addr, uint64_t size, uint32_t mask, uint32_t attr);
Result svcMapMemory(void *dst, void *src, uint64_t size);
Result svcUnmapMemory(void *dst, void *src, uint64_t size);
Result svcMapPhysicalMemory(void *addr, uint64_t size);
Result svcUnmapPhysicalMemory(void *addr, uint64_t size);
Result svcConnectToNamedPort(Handle *out, const char *name);
Result svcSendSyncRequest(Handle session);
Result svcSendSyncRequestWithUserBuffer(void *buf, uint64_t size, Handle session);
Result svcMapSharedMemory(Handle h, void *addr, uint64_t size, uint32_t perm);
Result svcUnmapSharedMemory(Handle h, void *addr, uint64_t size);
Result svcCreateTransferMemory(Handle *out, void *addr, uint64_t size, uint32_t perm);
Result svcMapTransferMemory(Handle h, void *addr, uint64_t size, uint32_t perm);
Result svcUnmapTransferMemory(Handle h, void *addr, uint64_t size);
Result svcGetProcessId(uint64_t *out, Handle h);
Result svcGetThreadId(uint64_t *out, Handle h);
void svcReturnFromException(Result r);
static inline void *hz_tls(void) { void *p; __asm__ volatile("mrs %0, tpidrro_el0" : "=r"(p)); return p; }

/* libc basics */
void *memset(void *d, int c, size_t n);
void *memcpy(void *d, const void *s, size_t n);
size_t strlen(const char *s);

/* printing: %d %u %x %lx %llx %p %s %c %% (one OutputDebugString per call) */
void hz_printf(const char *fmt, ...);
int hz_vsnprintf(char *buf, size_t size, const char *fmt, va_list ap);

/* the calling thread's own handle (kept in its TLS by the SDK) */
Handle hz_self(void);

/* threads */
typedef struct HzThread {
    Handle handle;
    void (*entry)(void *);
    void *arg;
} HzThread;
Result hz_thread_create(HzThread *t, void (*entry)(void *), void *arg, void *stack, size_t stack_size,
                        int prio, int core);
Result hz_thread_start(HzThread *t);
Result hz_thread_join(HzThread *t);    /* wait for its exit, then close its handle */

/* mutex (a word holding the owner's handle, HZ_MUTEX_WAITERS when others wait) and
 * condition variable (a word the kernel sets while threads wait on it) */
typedef struct { uint32_t tag; } HzMutex;
typedef struct { uint32_t key; } HzCond;
void hz_mutex_lock(HzMutex *m);
void hz_mutex_unlock(HzMutex *m);
Result hz_cond_wait(HzCond *c, HzMutex *m, int64_t timeout_ns);   /* -1: no timeout */
void hz_cond_signal(HzCond *c);
void hz_cond_broadcast(HzCond *c);

/* module initialisers: each takes the next number of hz_init_sequence (sdk's: hz_sdk_init_order) */
extern volatile int hz_init_sequence;
extern volatile int hz_sdk_init_order;

/* what the program provides */
int hz_main(void);

#endif
