/* horizon_kernel.h — the Horizon personality: SVCs with Horizon's register conventions
 * (inputs X0..X7, result in W0, outputs from X1), guest threads as host threads, and three
 * virtual cores (a thread runs guest code only while it holds a core in its affinity mask).
 * The runner (cpu_host/horizon/runner.py) maps the modules and the main stack, then calls
 * these in order: nx_hz_init, nx_hz_add_region (for each mapped region), nx_hz_start_main,
 * nx_hz_wait_exit. */
#ifndef NX_HORIZON_KERNEL_H
#define NX_HORIZON_KERNEL_H
#include <stdint.h>

typedef struct HzConfig {
    uint64_t program_id;
    uint64_t address_space_end;            /* 1 << address-space bits */
    uint64_t code_base, code_size;         /* the ASLR/code region (modules) */
    uint64_t heap_base, heap_size;         /* heap region: reserved here, opened by SetHeapSize */
    uint64_t alias_base, alias_size;
    uint64_t stack_base, stack_size;       /* stack region */
    uint64_t tls_base, tls_size;           /* thread-local pages: mapped here, 0x200 bytes per thread */
    uint64_t total_memory;                 /* GetInfo TotalMemorySize */
    int32_t highest_priority, lowest_priority;   /* ThreadInfo capability (numbers: 0 is best) */
    int32_t min_core, max_core;
    int32_t default_core;                  /* the main thread's core: CreateThread's core -2 */
    int32_t debug_fd;                      /* OutputDebugString writes here */
} HzConfig;

/* Why the process ended (nx_hz_wait_exit's answer) */
#define HZ_EXIT_PROCESS  1   /* svcExitProcess, or the last thread exited */
#define HZ_EXIT_CRASH    2   /* svcBreak or an SVC the kernel does not serve: see nx_hz_crash */

typedef struct HzCrash {
    uint64_t x[31];
    uint64_t sp, pc, tpidrro;
    uint64_t reason, info_addr, info_size;
    uint32_t svc;                          /* 0x26 for Break, else the unserved SVC's number */
    uint32_t thread_handle;
} HzCrash;

/* QueryMemory's memory types and permissions */
#define HZ_MEM_UNMAPPED     0x00
#define HZ_MEM_CODE_STATIC  0x03
#define HZ_MEM_CODE_MUTABLE 0x04
#define HZ_MEM_HEAP         0x05
#define HZ_MEM_SHARED       0x06
#define HZ_MEM_TRANSFER_ISOLATED 0x0D
#define HZ_MEM_STACK        0x0B
#define HZ_MEM_THREAD_LOCAL 0x0C
#define HZ_MEM_INACCESSIBLE 0x10
#define HZ_PERM_R 1
#define HZ_PERM_W 2
#define HZ_PERM_X 4

#define HZ_CRASH_HOST 0x10000   /* HzCrash.svc: a host function failed; reason = its index */
#define HZ_CRASH_BOOT 0x10001   /* a start-up call did not return: reason = the function, info = where it went */

/* Host functions (the nn:: SDK served by the host, cpu_host/horizon/hle/) call these around
 * host work: begin gives the thread's core back, end queues for one again; yield is the
 * scheduling point at the end of a call; fault ends the process with a crash report. */
int nx_hz_range_ok(uint64_t addr, uint64_t len, uint32_t perm);
void nx_hz_host_begin(NxCpu *s);
void nx_hz_host_end(NxCpu *s);
void nx_hz_host_yield(NxCpu *s);
void nx_hz_host_fault(NxCpu *s, uint32_t index) __attribute__((noreturn));

/* IPC (cpu_host/horizon/ipc/): svcConnectToNamedPort (0x1F), svcSendSyncRequest (0x21) and
 * svcSendSyncRequestWithUserBuffer (0x22) call the handler on the guest thread, without the
 * kernel lock; it reads the SVC's registers and writes X0 (and X1) itself.  Sessions and ports
 * whose server is a guest thread (CreateSession, CreatePort, ManageNamedPort and the names it
 * registers) are the kernel's own and never reach the handler.  No handler: the
 * SVC is unserved (a crash report).  The handler makes and reads handles with these: */
typedef void (*NxHzIpcFn)(NxCpu *s, uint32_t svc);
void nx_hz_set_ipc_handler(NxHzIpcFn fn);
uint32_t nx_hz_session_new(uint64_t id);                 /* a session handle (0: out of handles) */
int64_t nx_hz_session_id(uint32_t h);                    /* its id, -1 when h is no session */
int64_t nx_hz_session_closed_pop(void);                  /* a session whose handle was closed, or -1 */
int nx_hz_handle_kind(NxCpu *s, uint32_t h);             /* 0 when h is not a live handle */
uint64_t nx_hz_event_new(void);                          /* a service's event object */
uint32_t nx_hz_event_handle(uint64_t ev);                /* a new readable handle to it */
void nx_hz_event_set(uint64_t ev, int on);               /* signal (waking waiters) or clear */
uint32_t nx_hz_shmem_new(int fd, uint64_t size, uint32_t perm);   /* shared memory over a memfd */
int nx_hz_tmem_info(uint32_t h, uint64_t *addr, uint64_t *size);  /* a transfer memory's pages */
void nx_hz_ipc_fault(NxCpu *s, uint32_t index) __attribute__((noreturn));  /* crash report at the SVC */

/* How the main thread starts, doing what rtld does once it has relocated the modules (rtld is
 * dropped: the host links).  `inits` are the modules' initialisers in rtld's order (modules in
 * reverse load order; DT_INIT, or DT_INIT_ARRAY for a module without one), run once by the
 * initializer callback.  With `sdk_start` (an SDK exporting nn::init::Start) or `nn_main`
 * (older SDKs: the __nnDetailInitLibc0.. sequence then nnMain), the main thread runs the
 * SDK's start-up as rtld would; otherwise it runs the initialisers and jumps to `entry`. */
#define HZ_BOOT_MAX_INITS 256
typedef struct HzBoot {
    uint64_t entry;
    uint64_t inits[HZ_BOOT_MAX_INITS];
    uint32_t ninits;
    uint32_t _pad;
    uint64_t sdk_start;                    /* nn::init::Start(handle, arg, notify, call_initializator) */
    uint64_t nn_main;                      /* nnMain, for the older sequence below */
    uint64_t init_libc0, os_initialize, init_libc1, diag_startup, init_sdk_module, init_abort_observer,
             init_startup, init_libc2, finalize_sdk_module, os_quick_exit;
    uint64_t boot_slot, notify_slot, initializator_slot;   /* host slots the runner reserved */
} HzBoot;
int nx_hz_set_boot(const HzBoot *b);   /* binds the three slots; 0 or -1 */

int nx_hz_init(const HzConfig *c);     /* 0, or -errno when a region cannot be reserved */
int nx_hz_add_region(uint64_t addr, uint64_t size, uint32_t type, uint32_t perm);
/* Create and start the main thread (X0 = 0, X1 = its handle); returns the handle or 0. */
uint32_t nx_hz_start_main(uint64_t entry, uint64_t stack_top, int32_t priority, int32_t core,
                          uint64_t host_stack_bytes);
int nx_hz_wait_exit(void);             /* blocks until the process ends: HZ_EXIT_* */
void nx_hz_crash(HzCrash *out);
void nx_hz_svc(NxCpu *s, uint32_t imm);   /* the SVC handler nx_hz_init installs */

/* ---- the kernel's side of the nn::os objects (horizon_os.c; not for the runner) ------------
 * Call with the kernel lock held (nx_hzk_lock).  Threads are the kernel's own records; a
 * "key" is a nonzero guest address an object's waiters wait on (nx_hzk_wait), woken best
 * effective priority first, FIFO among equals.  Blocking calls give the core back meanwhile
 * and return 0, or TimedOut (0xEA01) when timeout_ns >= 0 passed first. */
typedef struct HzThread HzThread;
#define HZ_R_TIMED_OUT (1u | 117u << 9)
void nx_hzk_lock(void);
void nx_hzk_unlock(void);
HzThread *nx_hzk_self(NxCpu *s);
uint32_t nx_hzk_handle(HzThread *t);
int nx_hzk_range_ok(uint64_t addr, uint64_t len, uint32_t perm);
uint32_t nx_hzk_wait(HzThread *t, uint64_t key, uint64_t value, int64_t timeout_ns);
HzThread *nx_hzk_best_waiter(uint64_t lo, uint64_t hi);        /* key in [lo, hi], or NULL */
uint64_t nx_hzk_waiter_key(HzThread *w);
uint64_t nx_hzk_waiter_value(HzThread *w);                     /* the value it waited with ... */
void nx_hzk_set_waiter_value(HzThread *w, uint64_t value);     /* ... or the one handed to it */
void nx_hzk_wake(HzThread *w);
uint32_t nx_hzk_mutex_lock(HzThread *t, uint64_t word_addr);    /* ArbitrateLock's word protocol */
void nx_hzk_mutex_unlock(HzThread *t, uint64_t word_addr);
uint32_t nx_hzk_cv_wait(HzThread *t, uint64_t mutex_word, uint64_t key, int64_t timeout_ns);
void nx_hzk_cv_signal(uint64_t key, int32_t count);             /* count <= 0: all */
int nx_hzk_cv_waiting(uint64_t key);                           /* a thread waits on the key */
HzThread *nx_hzk_os_thread_create(HzThread *creator, uint64_t entry, uint64_t arg, uint64_t stack_top, int prio,
                                  int core, uint64_t os_thread, uint32_t *result);
int nx_hzk_thread_start(HzThread *t);
int nx_hzk_thread_started(HzThread *t);
uint32_t nx_hzk_thread_join(HzThread *t, HzThread *other);
HzThread *nx_hzk_thread_by_os(uint64_t os_thread);
uint64_t nx_hzk_os(HzThread *t);                                /* its ThreadType, 0 if none */
int nx_hzk_os_host(HzThread *t);                                /* ... a host record, not guest memory */
void nx_hzk_set_os(HzThread *t, uint64_t os_thread, int host_record);
int nx_hzk_priority(HzThread *t, int effective);
int nx_hzk_priority_ok(int kernel_priority);
void nx_hzk_set_priority(HzThread *t, int kernel_priority);
uint32_t nx_hzk_set_core_mask(HzThread *t, int32_t ideal, uint64_t mask);
void nx_hzk_core_mask(HzThread *t, int32_t *ideal, uint64_t *mask);
int nx_hzk_core(HzThread *t);
void nx_hzk_yield(HzThread *t);

#endif
