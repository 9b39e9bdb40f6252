/* linux_syscalls.c — the Linux AArch64 user-mode personality: SVC #0 with the number in x8,
 * arguments in x0..x5, the result (or -errno) in x0.
 *
 * Guest address == host address, so pointers pass straight through; only structures whose
 * layout differs between aarch64 and x86-64 are translated (struct stat, open flags).  Most
 * calls are forwarded with a raw `syscall` instruction (no libc errno round trip: the kernel's
 * -errno is exactly what the guest expects).
 *
 * Deliberate differences from a kernel:
 *  - every tty ioctl answers -ENOTTY: the program always sees a non-terminal, so its output
 *    matches qemu-aarch64's in pipes whatever the terminal;
 *  - guest signal handlers run at delivery points only (system call returns, indirect calls
 *    and jumps, nx_run's dispatch, backward branches with recompiler.signal_polls; see
 *    "signals" below); handlers of the signals the runtime's crash report owns (SIGSEGV, SIGBUS,
 *    SIGILL, SIGFPE, SIGTRAP, SIGSYS) are recorded, not run;
 *  - clone: a thread (CLONE_THREAD, as pthread_create issues it) runs on a host thread of its
 *    own (linux_threads.c); otherwise fork-like (vfork too is a fork); clone3 -> -ENOSYS (libcs
 *    fall back to clone);
 *  - execve of the guest program itself (/proc/self/exe, as busybox runs applets): the host
 *    execs the runner again (nx_linux_set_self_exec); any other path is the host's execve, as
 *    qemu-aarch64 does (linux-user do_execveat: only /proc/self/exe is special), so a host
 *    program runs natively (popen's /bin/sh) and an aarch64 one fails with ENOEXEC unless a
 *    binfmt handler is registered;
 *  - set_tid_address/set_robust_list are recorded, not passed on: the host thread's own
 *    values belong to the host's libc (linux_threads.c does clear_child_tid's store and wake);
 *    rseq -> -ENOSYS for the same reason.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1   /* MREMAP_FIXED, MAP_FIXED_NOREPLACE */
#endif
#include "nxrt.h"
#include "linux_syscalls.h"
#include "lifted.h"   /* NX_FPCR_APPLY */
#include "linux_threads.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <ucontext.h>
#include <unistd.h>

/* ---- AArch64 (asm-generic) system call numbers and names: one table, X(number, name) --- */
#define NX_A64_SYSCALLS(X) \
    X(0, io_setup) X(1, io_destroy) X(2, io_submit) X(3, io_cancel) X(4, io_getevents) \
    X(5, setxattr) X(6, lsetxattr) X(7, fsetxattr) X(8, getxattr) X(9, lgetxattr) X(10, fgetxattr) \
    X(11, listxattr) X(12, llistxattr) X(13, flistxattr) X(14, removexattr) X(15, lremovexattr) \
    X(16, fremovexattr) X(17, getcwd) X(18, lookup_dcookie) X(19, eventfd2) X(20, epoll_create1) \
    X(21, epoll_ctl) X(22, epoll_pwait) X(23, dup) X(24, dup3) X(25, fcntl) X(26, inotify_init1) \
    X(27, inotify_add_watch) X(28, inotify_rm_watch) X(29, ioctl) X(30, ioprio_set) X(31, ioprio_get) \
    X(32, flock) X(33, mknodat) X(34, mkdirat) X(35, unlinkat) X(36, symlinkat) X(37, linkat) \
    X(38, renameat) X(39, umount2) X(40, mount) X(41, pivot_root) X(42, nfsservctl) X(43, statfs) \
    X(44, fstatfs) X(45, truncate) X(46, ftruncate) X(47, fallocate) X(48, faccessat) X(49, chdir) \
    X(50, fchdir) X(51, chroot) X(52, fchmod) X(53, fchmodat) X(54, fchownat) X(55, fchown) \
    X(56, openat) X(57, close) X(58, vhangup) X(59, pipe2) X(60, quotactl) X(61, getdents64) \
    X(62, lseek) X(63, read) X(64, write) X(65, readv) X(66, writev) X(67, pread64) X(68, pwrite64) \
    X(69, preadv) X(70, pwritev) X(71, sendfile) X(72, pselect6) X(73, ppoll) X(74, signalfd4) \
    X(75, vmsplice) X(76, splice) X(77, tee) X(78, readlinkat) X(79, newfstatat) X(80, fstat) \
    X(81, sync) X(82, fsync) X(83, fdatasync) X(84, sync_file_range) X(85, timerfd_create) \
    X(86, timerfd_settime) X(87, timerfd_gettime) X(88, utimensat) X(89, acct) X(90, capget) \
    X(91, capset) X(92, personality) X(93, exit) X(94, exit_group) X(95, waitid) \
    X(96, set_tid_address) X(97, unshare) X(98, futex) X(99, set_robust_list) \
    X(100, get_robust_list) X(101, nanosleep) X(102, getitimer) X(103, setitimer) \
    X(104, kexec_load) X(105, init_module) X(106, delete_module) X(107, timer_create) \
    X(108, timer_gettime) X(109, timer_getoverrun) X(110, timer_settime) X(111, timer_delete) \
    X(112, clock_settime) X(113, clock_gettime) X(114, clock_getres) X(115, clock_nanosleep) \
    X(116, syslog) X(117, ptrace) X(118, sched_setparam) X(119, sched_setscheduler) \
    X(120, sched_getscheduler) X(121, sched_getparam) X(122, sched_setaffinity) \
    X(123, sched_getaffinity) X(124, sched_yield) X(125, sched_get_priority_max) \
    X(126, sched_get_priority_min) X(127, sched_rr_get_interval) X(128, restart_syscall) \
    X(129, kill) X(130, tkill) X(131, tgkill) X(132, sigaltstack) X(133, rt_sigsuspend) \
    X(134, rt_sigaction) X(135, rt_sigprocmask) X(136, rt_sigpending) X(137, rt_sigtimedwait) \
    X(138, rt_sigqueueinfo) X(139, rt_sigreturn) X(140, setpriority) X(141, getpriority) \
    X(142, reboot) X(143, setregid) X(144, setgid) X(145, setreuid) X(146, setuid) \
    X(147, setresuid) X(148, getresuid) X(149, setresgid) X(150, getresgid) X(151, setfsuid) \
    X(152, setfsgid) X(153, times) X(154, setpgid) X(155, getpgid) X(156, getsid) X(157, setsid) \
    X(158, getgroups) X(159, setgroups) X(160, uname) X(161, sethostname) X(162, setdomainname) \
    X(163, getrlimit) X(164, setrlimit) X(165, getrusage) X(166, umask) X(167, prctl) \
    X(168, getcpu) X(169, gettimeofday) X(170, settimeofday) X(171, adjtimex) X(172, getpid) \
    X(173, getppid) X(174, getuid) X(175, geteuid) X(176, getgid) X(177, getegid) X(178, gettid) \
    X(179, sysinfo) X(180, mq_open) X(181, mq_unlink) X(182, mq_timedsend) X(183, mq_timedreceive) \
    X(184, mq_notify) X(185, mq_getsetattr) X(186, msgget) X(187, msgctl) X(188, msgrcv) \
    X(189, msgsnd) X(190, semget) X(191, semctl) X(192, semtimedop) X(193, semop) X(194, shmget) \
    X(195, shmctl) X(196, shmat) X(197, shmdt) X(198, socket) X(199, socketpair) X(200, bind) \
    X(201, listen) X(202, accept) X(203, connect) X(204, getsockname) X(205, getpeername) \
    X(206, sendto) X(207, recvfrom) X(208, setsockopt) X(209, getsockopt) X(210, shutdown) \
    X(211, sendmsg) X(212, recvmsg) X(213, readahead) X(214, brk) X(215, munmap) X(216, mremap) \
    X(217, add_key) X(218, request_key) X(219, keyctl) X(220, clone) X(221, execve) X(222, mmap) \
    X(223, fadvise64) X(224, swapon) X(225, swapoff) X(226, mprotect) X(227, msync) X(228, mlock) \
    X(229, munlock) X(230, mlockall) X(231, munlockall) X(232, mincore) X(233, madvise) \
    X(234, remap_file_pages) X(235, mbind) X(236, get_mempolicy) X(237, set_mempolicy) \
    X(238, migrate_pages) X(239, move_pages) X(240, rt_tgsigqueueinfo) X(241, perf_event_open) \
    X(242, accept4) X(243, recvmmsg) X(260, wait4) X(261, prlimit64) X(262, fanotify_init) \
    X(263, fanotify_mark) X(264, name_to_handle_at) X(265, open_by_handle_at) X(266, clock_adjtime) \
    X(267, syncfs) X(268, setns) X(269, sendmmsg) X(270, process_vm_readv) \
    X(271, process_vm_writev) X(272, kcmp) X(273, finit_module) X(274, sched_setattr) \
    X(275, sched_getattr) X(276, renameat2) X(277, seccomp) X(278, getrandom) X(279, memfd_create) \
    X(280, bpf) X(281, execveat) X(282, userfaultfd) X(283, membarrier) X(284, mlock2) \
    X(285, copy_file_range) X(286, preadv2) X(287, pwritev2) X(288, pkey_mprotect) \
    X(289, pkey_alloc) X(290, pkey_free) X(291, statx) X(292, io_pgetevents) X(293, rseq) \
    X(294, kexec_file_load) X(424, pidfd_send_signal) X(425, io_uring_setup) \
    X(426, io_uring_enter) X(427, io_uring_register) X(428, open_tree) X(429, move_mount) \
    X(430, fsopen) X(431, fsconfig) X(432, fsmount) X(433, fspick) X(434, pidfd_open) \
    X(435, clone3) X(436, close_range) X(437, openat2) X(438, pidfd_getfd) X(439, faccessat2) \
    X(440, process_madvise) X(441, epoll_pwait2) X(442, mount_setattr) X(443, quotactl_fd) \
    X(444, landlock_create_ruleset) X(445, landlock_add_rule) X(446, landlock_restrict_self) \
    X(447, memfd_secret) X(448, process_mrelease) X(449, futex_waitv) X(450, set_mempolicy_home_node) \
    X(451, cachestat) X(452, fchmodat2) X(453, map_shadow_stack) X(454, futex_wake) \
    X(455, futex_wait) X(456, futex_requeue) X(457, statmount) X(458, listmount) \
    X(459, lsm_get_self_attr) X(460, lsm_set_self_attr) X(461, lsm_list_modules) X(462, mseal) \
    X(463, setxattrat) X(464, getxattrat) X(465, listxattrat) X(466, removexattrat) \
    X(467, open_tree_attr) X(468, file_getattr) X(469, file_setattr) X(470, listns) \
    X(471, rseq_slice_yield)

enum {
#define X(n, name) A64_##name = n,
    NX_A64_SYSCALLS(X)
#undef X
    A64_MAX_NR = 472
};

static const char *const a64_names[A64_MAX_NR] = {
#define X(n, name) [n] = #name,
    NX_A64_SYSCALLS(X)
#undef X
};

const char *nx_linux_syscall_name(uint32_t n) { return n < A64_MAX_NR ? a64_names[n] : NULL; }

/* ---- raw host system calls (x86-64): return the kernel's value, -errno on failure ------- */
static inline long hsys6(long n, long a, long b, long c, long d, long e, long f) {
    long r;
    register long r10 __asm__("r10") = d, r8 __asm__("r8") = e, r9 __asm__("r9") = f;
    __asm__ volatile("syscall" : "=a"(r) : "a"(n), "D"(a), "S"(b), "d"(c), "r"(r10), "r"(r8), "r"(r9)
                     : "rcx", "r11", "memory");
    return r;
}
long lx_hsys(long n, long a, long b, long c, long d, long e, long f) { return hsys6(n, a, b, c, d, e, f); }
#define HSYS(n, s) hsys6(n, (long)(s)->x[0], (long)(s)->x[1], (long)(s)->x[2], (long)(s)->x[3], \
                         (long)(s)->x[4], (long)(s)->x[5])

/* ---- personality state (one per process; guarded where threads could race) ------------- */
#define MAX_RANGES 4096
typedef struct { uint64_t lo, hi; } Range;
static struct {
    pthread_mutex_t lock;
    Range ranges[MAX_RANGES];     /* guest memory, sorted, disjoint, merged */
    int nranges;
    uint64_t brk_start, brk_cur, brk_end;
    uint64_t brk_dirty;   /* the guest may have written below here: the break's high-water mark */
    char exe[4096];
    void (*exit_hook)(int);
    void (*log_hook)(int, const char *);
    uint64_t handlers[65][4];     /* recorded rt_sigaction structs (aarch64 layout, 32 bytes) */
    int inited;
    uint64_t robust_list, robust_len;
    uint64_t det_mmap;            /* NXRECOMP_DETERMINISTIC: the next address mmap tries */
} P = { .lock = PTHREAD_MUTEX_INITIALIZER, .det_mmap = 0x6e0000000000ull /* DET_MMAP_BASE */ };

#define PAGE 4096ull
static uint64_t page_up(uint64_t v) { return (v + PAGE - 1) & ~(PAGE - 1); }

static void lg_v(int level, const char *fmt, va_list ap) {
    char buf[512];
    vsnprintf(buf, sizeof buf, fmt, ap);
    if (P.log_hook) P.log_hook(level, buf);
    else if (level >= 30) { fprintf(stderr, "nxrecomp: %s\n", buf); fflush(stderr); }
}
static void lg(int level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void lg(int level, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    lg_v(level, fmt, ap);
    va_end(ap);
}
void lx_log(int level, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    lg_v(level, fmt, ap);
    va_end(ap);
}

void nx_linux_set_exit_hook(void (*hook)(int)) { P.exit_hook = hook; }
void nx_linux_set_log_hook(void (*hook)(int, const char *)) { P.log_hook = hook; }
void nx_linux_set_exe(const char *path) {
    strncpy(P.exe, path, sizeof P.exe - 1);
    P.exe[sizeof P.exe - 1] = 0;
    /* The task's name, as execve of the program sets it (the file name's last part, 15 bytes
     * at most): what PR_GET_NAME and /proc/self/comm answer the guest (busybox compares it with
     * "exe"), and what ps shows.  Set on the host thread before the guest's thread starts,
     * which inherits it; not the host's own name (nxrun, python3). */
    const char *base = strrchr(P.exe, '/');
    char comm[16] = {0};
    strncpy(comm, base ? base + 1 : P.exe, sizeof comm - 1);
    if (comm[0]) hsys6(SYS_prctl, 15 /* PR_SET_NAME */, (long)comm, 0, 0, 0, 0);
}

/* -- guest memory ranges -- */
static void ranges_add_locked(uint64_t lo, uint64_t hi) {
    if (lo >= hi) return;
    Range out[MAX_RANGES];
    int n = 0, placed = 0;
    for (int i = 0; i < P.nranges; i++) {
        Range r = P.ranges[i];
        if (r.hi < lo || r.lo > hi) {          /* disjoint and not touching */
            if (!placed && r.lo > hi) { out[n++] = (Range){lo, hi}; placed = 1; }
            out[n++] = r;
        } else {                                /* overlap or adjacent: merge into [lo,hi) */
            if (r.lo < lo) lo = r.lo;
            if (r.hi > hi) hi = r.hi;
        }
        if (n >= MAX_RANGES - 1) break;
    }
    if (!placed) out[n++] = (Range){lo, hi};
    memcpy(P.ranges, out, n * sizeof(Range));
    P.nranges = n;
}

static void ranges_remove_locked(uint64_t lo, uint64_t hi) {
    Range out[MAX_RANGES];
    int n = 0;
    for (int i = 0; i < P.nranges && n < MAX_RANGES - 1; i++) {
        Range r = P.ranges[i];
        if (r.hi <= lo || r.lo >= hi) { out[n++] = r; continue; }
        if (r.lo < lo) out[n++] = (Range){r.lo, lo};
        if (r.hi > hi) out[n++] = (Range){hi, r.hi};
    }
    memcpy(P.ranges, out, n * sizeof(Range));
    P.nranges = n;
}

static int ranges_cover_locked(uint64_t lo, uint64_t hi) {
    for (int i = 0; i < P.nranges; i++)
        if (P.ranges[i].lo <= lo && P.ranges[i].hi > lo)
            return P.ranges[i].hi >= hi;   /* ranges are merged: a gap follows each one */
    return 0;
}

int lx_guest_mapped(uint64_t addr, uint64_t len) {
    pthread_mutex_lock(&P.lock);
    int ok = ranges_cover_locked(addr & ~(PAGE - 1), page_up(addr + len));
    pthread_mutex_unlock(&P.lock);
    return ok;
}

/* -- code generated at run time: executable memory that is not the program's --
 *
 * A JIT compiler (pcre2's sljit under `grep -P`: one 64 KiB mmap RWX, code written into it and
 * called), a libffi closure or a trampoline writes AArch64 code into memory it maps executable
 * and branches to it.  Such memory is recorded here: an anonymous mmap with PROT_EXEC, an mmap
 * with PROT_EXEC of a file that is no library the bundle lifted (a memfd's double mapping), an
 * mprotect to PROT_EXEC of memory outside the program's image and its libraries.  A branch there
 * finds no lifted code; lift on miss (core/lift_miss.c) asks nx_generated_code_region and lifts
 * from a copy of the memory as it is then.  An munmap, an mprotect without PROT_EXEC, an mmap
 * or mremap over the range drop the rows lifted from it (nx_lift_forget); code rewritten in place
 * is caught by the lifted code itself, which compares the guest's bytes with those it was lifted
 * from at every entry (recompiler/runtime_lift.py, nx_generated_stale).  Under P.lock. */
static Range gen[MAX_RANGES];   /* generated-code memory, sorted, disjoint, merged */
static int ngen;
#define MAX_IMAGE 64
static Range image[MAX_IMAGE];  /* what the runner mapped (segments, stack): lifted statically */
static int nimage;

static void rl_add(Range *v, int *nv, uint64_t lo, uint64_t hi) {
    if (lo >= hi) return;
    Range out[MAX_RANGES];
    int n = 0, placed = 0;
    for (int i = 0; i < *nv; i++) {
        Range r = v[i];
        if (r.hi < lo || r.lo > hi) {
            if (!placed && r.lo > hi) { out[n++] = (Range){lo, hi}; placed = 1; }
            out[n++] = r;
        } else {
            if (r.lo < lo) lo = r.lo;
            if (r.hi > hi) hi = r.hi;
        }
        if (n >= MAX_RANGES - 1) break;
    }
    if (!placed) out[n++] = (Range){lo, hi};
    memcpy(v, out, n * sizeof(Range));
    *nv = n;
}

/* (weak: the personality's own test harness links it without the core) */
void nx_lift_forget(uint64_t lo, uint64_t hi) __attribute__((weak));

/* [lo, hi) is no longer the generated code it was (unmapped, not executable, mapped anew):
 * its lifted rows go (only where some of it was generated code: an overlay array per call) */
static void gen_drop_locked(uint64_t lo, uint64_t hi) {
    int hit = 0;
    for (int i = 0; i < ngen && !hit; i++) hit = gen[i].lo < hi && gen[i].hi > lo;
    if (!hit) return;
    Range out[MAX_RANGES];
    int n = 0;
    for (int i = 0; i < ngen && n < MAX_RANGES - 1; i++) {
        Range r = gen[i];
        if (r.hi <= lo || r.lo >= hi) { out[n++] = r; continue; }
        if (r.lo < lo) out[n++] = (Range){r.lo, lo};
        if (r.hi > hi) out[n++] = (Range){hi, r.hi};
    }
    memcpy(gen, out, n * sizeof(Range));
    ngen = n;
    if (nx_lift_forget) nx_lift_forget(lo, hi);
}

static int in_image_locked(uint64_t lo, uint64_t hi) {
    for (int i = 0; i < nimage; i++)
        if (image[i].lo < hi && image[i].hi > lo) return 1;
    return 0;
}

/* For lift on miss (core/lift_miss.c): the generated-code memory holding addr, as the window
 * [*base, *base + *size) of it to copy for the lifter (at most 1 MiB either side of addr: a JIT
 * may reserve far more than it fills); 0 when addr is in none. */
int nx_generated_code_region(uint64_t addr, uint64_t *base, uint64_t *size) {
    pthread_mutex_lock(&P.lock);
    int found = 0;
    for (int i = 0; i < ngen && !found; i++) {
        if (addr < gen[i].lo || addr >= gen[i].hi) continue;
        uint64_t page = addr & ~(PAGE - 1), win = 1ull << 20;
        uint64_t lo = page - gen[i].lo > win ? page - win : gen[i].lo;
        uint64_t hi = gen[i].hi - page > win ? page + win : gen[i].hi;
        *base = lo;
        *size = hi - lo;
        found = 1;
    }
    pthread_mutex_unlock(&P.lock);
    return found;
}

/* Why a branch target with no lifted code is none: for the fatal error (core/lift_miss.c). */
void nx_generated_code_why(uint64_t addr, char *buf, size_t n) {
    pthread_mutex_lock(&P.lock);
    int mapped = ranges_cover_locked(addr & ~(PAGE - 1), (addr & ~(PAGE - 1)) + PAGE);
    pthread_mutex_unlock(&P.lock);
    snprintf(buf, n, "%s", mapped ? "the memory there is the program's but was not mapped executable (no mmap or "
                                    "mprotect with PROT_EXEC): no code generated at run time either"
                                  : "nothing the program mapped is there");
}

void nx_linux_add_mapping(uint64_t addr, uint64_t len) {
    pthread_mutex_lock(&P.lock);
    ranges_add_locked(addr & ~(PAGE - 1), page_up(addr + len));
    if (nimage < MAX_IMAGE) image[nimage++] = (Range){addr & ~(PAGE - 1), page_up(addr + len)};
    pthread_mutex_unlock(&P.lock);
}

/* Transparent huge pages for the guest's heap: the break's area past its first 2-4 MiB, and
 * anonymous writable mmaps of 2 MiB or more.  NXRECOMP_CPU_HOST_HUGE_PAGES (setting
 * cpu_host.huge_pages): 1 marks them (MADV_HUGEPAGE), 0 never; unset or "auto", they are marked
 * where the kernel's THP mode is "madvise" (it gives huge pages only to memory marked so:
 * this project's dev VM) and not where it is "always" (Debian 12's kernel config: the
 * kernel gives them to the break's area unasked, the reservation being one mapping, and a mark
 * would add the compaction at the fault of defrag mode "madvise") or "never".  Measured on the
 * dev VM (docs/PERFORMANCE.md): Brotli -q 5 1.11-1.3x faster (24 MB of its tables on 2 MiB pages,
 * 25,006 -> 9,791 faults), busybox sort 1.21x; SQLite unchanged (its allocator maps 64 KiB
 * chunks, none marked).  The break's first 2-4 MiB stay on small pages: a short-lived program
 * (a shell's applet) does not pay to clear a whole huge page for a small heap. */
static int parse_onoff(const char *e) {   /* 1, 0, or -1: neither (auto) */
    if (!e) return -1;
    if (!strcmp(e, "1") || !strcasecmp(e, "true") || !strcasecmp(e, "yes") || !strcasecmp(e, "on")) return 1;
    if (!strcmp(e, "0") || !strcasecmp(e, "false") || !strcasecmp(e, "no") || !strcasecmp(e, "off")) return 0;
    return -1;
}
static int thp_mode_madvise(void) {
    char buf[96] = {0};
    int fd = open("/sys/kernel/mm/transparent_hugepage/enabled", O_RDONLY | O_CLOEXEC);
    if (fd < 0) return 0;
    ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    return n > 0 && strstr(buf, "[madvise]") != NULL;
}
static int huge_pages_on(void) {
    static int on = -1;
    if (on < 0) {
        on = parse_onoff(getenv("NXRECOMP_CPU_HOST_HUGE_PAGES"));
        if (on < 0) on = thp_mode_madvise();
    }
    return on;
}

#define HUGE (2ull << 20)
static void advise_huge(uint64_t addr, uint64_t len) {
    if (len >= HUGE && huge_pages_on())
        hsys6(SYS_madvise, (long)addr, (long)len, MADV_HUGEPAGE, 0, 0, 0);   /* a hint: errors ignored */
}

int nx_linux_set_brk(uint64_t start, uint64_t reserve) {
    start = page_up(start);
    reserve = page_up(reserve);
    /* Readable and writable from the start (NORESERVE: pages cost only once touched): a break
     * moved by mprotect leaves one mapping per step (thousands for a big heap, each too small
     * for a huge page).  The guest can touch the area past its break, which Linux would fault;
     * no correct program does. */
    long r = hsys6(SYS_mmap, (long)start, (long)reserve, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED_NOREPLACE, -1, 0);
    if (r < 0 && r != -EEXIST)          /* EEXIST: the runner mapped the area; used as it is */
        return (int)r;
    if (r >= 0 && (uint64_t)r != start) {  /* old kernels ignore NOREPLACE: a hint, not a place */
        hsys6(SYS_munmap, r, (long)reserve, 0, 0, 0, 0);
        return -EEXIST;
    }
    P.brk_start = P.brk_cur = P.brk_dirty = start;
    P.brk_end = start + reserve;
    pthread_mutex_lock(&P.lock);   /* (not the image: an mprotect to PROT_EXEC of the heap is generated code) */
    ranges_add_locked(start, start + reserve);
    pthread_mutex_unlock(&P.lock);
    uint64_t big = (start + 2 * HUGE - 1) & ~(HUGE - 1);   /* whole huge pages past its first 2-4 MiB */
    if (big < start + reserve) advise_huge(big, start + reserve - big);
    return 0;
}

static uint64_t sys_brk_locked(uint64_t want) {
    if (want < P.brk_start || want > P.brk_end || !P.brk_end) return P.brk_cur;
    if (want > P.brk_cur && P.brk_cur < P.brk_dirty) {
        /* memory given back and taken again reads zeros, as on Linux: cleared now, not when it
         * was given back (glibc gives back a page and takes it again at every other sbrk;
         * unmapping it each time would split the huge page around it) */
        memset((void *)P.brk_cur, 0, (want < P.brk_dirty ? want : P.brk_dirty) - P.brk_cur);
    } else if (want < P.brk_cur) {
        /* a big shrink returns its whole huge pages to the kernel (they read zeros after) */
        uint64_t lo = (want + HUGE - 1) & ~(HUGE - 1), hi = page_up(P.brk_dirty);
        if (hi > lo + HUGE) {
            hsys6(SYS_madvise, (long)lo, (long)(hi - lo), MADV_DONTNEED, 0, 0, 0);
            P.brk_dirty = lo;
        }
    }
    if (want > P.brk_dirty) P.brk_dirty = want;
    P.brk_cur = want;
    return want;
}

static uint64_t sys_brk(uint64_t want) {   /* threads share the break */
    pthread_mutex_lock(&P.lock);
    uint64_t r = sys_brk_locked(want);
    pthread_mutex_unlock(&P.lock);
    return r;
}

/* -- open flags: O_DIRECTORY/O_NOFOLLOW/O_DIRECT/O_LARGEFILE sit at other bits on aarch64 -- */
#define A64_O_DIRECTORY 040000
#define A64_O_NOFOLLOW  0100000
#define A64_O_DIRECT    0200000
#define A64_O_LARGEFILE 0400000
#define X86_O_DIRECT    040000
#define X86_O_LARGEFILE 0100000
#define X86_O_DIRECTORY 0200000
#define X86_O_NOFOLLOW  0400000
#define MOVED (040000 | 0100000 | 0200000 | 0400000)

static long flags_to_host(uint64_t f) {
    long h = (long)(f & ~(uint64_t)MOVED);
    if (f & A64_O_DIRECTORY) h |= X86_O_DIRECTORY;
    if (f & A64_O_NOFOLLOW) h |= X86_O_NOFOLLOW;
    if (f & A64_O_DIRECT) h |= X86_O_DIRECT;
    if (f & A64_O_LARGEFILE) h |= X86_O_LARGEFILE;
    return h;
}

static long flags_to_guest(long h) {
    long f = h & ~(long)MOVED;
    if (h & X86_O_DIRECTORY) f |= A64_O_DIRECTORY;
    if (h & X86_O_NOFOLLOW) f |= A64_O_NOFOLLOW;
    if (h & X86_O_DIRECT) f |= A64_O_DIRECT;
    f |= A64_O_LARGEFILE;     /* an aarch64 kernel reports every fd as large-file */
    return f;
}

/* -- struct stat: x86-64 layout in, asm-generic (aarch64) layout out -- */
typedef struct {
    uint64_t st_dev, st_ino;
    uint32_t st_mode, st_nlink, st_uid, st_gid;
    uint64_t st_rdev, __pad1;
    int64_t st_size;
    int32_t st_blksize, __pad2;
    int64_t st_blocks;
    int64_t st_atime_, st_atime_nsec, st_mtime_, st_mtime_nsec, st_ctime_, st_ctime_nsec;
    uint32_t __unused4, __unused5;
} A64Stat;
_Static_assert(sizeof(A64Stat) == 128, "aarch64 struct stat is 128 bytes");

static void stat_to_guest(const struct stat *h, uint64_t gaddr) {
    A64Stat g;
    memset(&g, 0, sizeof g);
    g.st_dev = h->st_dev; g.st_ino = h->st_ino; g.st_mode = h->st_mode; g.st_nlink = (uint32_t)h->st_nlink;
    g.st_uid = h->st_uid; g.st_gid = h->st_gid; g.st_rdev = h->st_rdev; g.st_size = h->st_size;
    g.st_blksize = (int32_t)h->st_blksize; g.st_blocks = h->st_blocks;
    g.st_atime_ = h->st_atim.tv_sec; g.st_atime_nsec = h->st_atim.tv_nsec;
    g.st_mtime_ = h->st_mtim.tv_sec; g.st_mtime_nsec = h->st_mtim.tv_nsec;
    g.st_ctime_ = h->st_ctim.tv_sec; g.st_ctime_nsec = h->st_ctim.tv_nsec;
    memcpy((void *)gaddr, &g, sizeof g);
}

/* "/proc/self/exe" (and /proc/<our pid>/exe) name the guest program, not the host python */
static int is_self_exe(const char *p) {
    if (!p || !P.exe[0]) return 0;
    if (strcmp(p, "/proc/self/exe") == 0 || strcmp(p, "/proc/thread-self/exe") == 0) return 1;
    char mine[64];
    snprintf(mine, sizeof mine, "/proc/%ld/exe", (long)getpid());
    return strcmp(p, mine) == 0;
}

/* -- a dynamically linked program: the sysroot and the libraries the bundle lifted --
 *
 * glibc's ld.so runs as the program's interpreter and opens and maps its libraries itself.
 * Paths: an absolute path that names a file under the bundle's sysroot opens that file (as
 * qemu-aarch64 -L does), else the host's.  Placement: every library the bundle lifted was
 * laid out at a fixed base by the recompiler's linker (recompiler/link.py), and the lifted
 * code exists only there, so ld.so's first mapping of such a file lands at that base: the
 * file mmap itself (mmap(NULL, len, prot, MAP_PRIVATE, fd, 0)) or, for a library whose
 * p_align is above the page size, the PROT_NONE anonymous reservation glibc makes just before
 * mapping the file MAP_FIXED inside it (elf/dl-map-segments.h).  A library is known by the
 * (device, inode) of its file in the sysroot, checked against the size the manifest recorded.
 * Executable code of any other file is a fatal error naming the file: nothing of it was
 * lifted. */
#define MAX_LIBS 128
typedef struct { uint64_t base, span, align; dev_t dev; ino_t ino; char path[512]; } LxLib;
static struct {
    char root[2048];
    LxLib lib[MAX_LIBS];
    int nlib;
    int pending;   /* the library openat opened last, not yet mapped: -1 none */
} D = { .pending = -1 };

int nx_linux_set_sysroot(const char *dir) {
    struct stat st;
    if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode)) return -ENOTDIR;
    snprintf(D.root, sizeof D.root, "%s", dir);
    size_t n = strlen(D.root);
    while (n > 1 && D.root[n - 1] == '/') D.root[--n] = 0;
    return 0;
}

int nx_linux_add_library(uint64_t base, uint64_t span, uint64_t align, uint64_t size, const char *path) {
    if (D.nlib >= MAX_LIBS) return -E2BIG;
    struct stat st;
    if (stat(path, &st) != 0) return -errno;
    if ((uint64_t)st.st_size != size) return -EBADF;   /* not the file the bundle lifted */
    LxLib *l = &D.lib[D.nlib++];
    *l = (LxLib){base, span, align ? align : PAGE, st.st_dev, st.st_ino, {0}};
    snprintf(l->path, sizeof l->path, "%s", path);
    return 0;
}

/* p, or the same path under the sysroot where a file of that name is there */
static const char *sysroot_path(const char *p, char *buf, size_t cap) {
    if (!D.root[0] || !p || p[0] != '/') return p;
    if ((size_t)snprintf(buf, cap, "%s%s", D.root, p) >= cap) return p;
    if (hsys6(SYS_faccessat, AT_FDCWD, (long)buf, F_OK, 0, 0, 0) == 0) return buf;
    return p;
}

static int lib_of_fd(long fd) {
    struct stat st;
    if (fd < 0 || hsys6(SYS_fstat, fd, (long)&st, 0, 0, 0, 0) != 0) return -1;
    for (int i = 0; i < D.nlib; i++)
        if (D.lib[i].dev == st.st_dev && D.lib[i].ino == st.st_ino) return i;
    return -1;
}

static void fd_name(long fd, char *buf, size_t cap) {
    char link[64];
    snprintf(link, sizeof link, "/proc/self/fd/%ld", fd);
    long n = hsys6(SYS_readlink, (long)link, (long)buf, (long)cap - 1, 0, 0, 0);
    if (n < 0) snprintf(buf, cap, "file descriptor %ld", fd);
    else buf[n] = 0;
}

static void dyn_fatal(const char *fmt, ...) __attribute__((noreturn, format(printf, 1, 2)));
static void dyn_fatal(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    fputs("nxrecomp: fatal: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    fflush(stderr);
    if (P.exit_hook) P.exit_hook(127);
    hsys6(SYS_exit_group, 127, 0, 0, 0, 0, 0);
    for (;;) {}
}

/* sys_mmap's placement of a lifted library: the address to ask for, else `addr` */
static uint64_t library_placement(uint64_t addr, uint64_t len, long prot, long flags, long fd, uint64_t off) {
    if (!D.root[0]) return addr;   /* a static program: the host places nothing */
    int anon = (flags & MAP_ANONYMOUS) != 0;
    int i = anon ? -1 : lib_of_fd(fd);
    char name[512];
    if (!anon && (prot & PROT_EXEC) && i < 0 && (fd_name(fd, name, sizeof name), strncmp(name, "/memfd:", 7))) {
        /* (a memfd is no library: code generated at run time, mapped twice, as JITs do under W^X) */
        dyn_fatal("mmap of executable code from %s, a library the bundle did not lift (not in the "
                  "program's DT_NEEDED closure at recompile time; dlopen of it is not supported): "
                  "recompile with its package's folder in -L", name);
    }
    if (flags & MAP_FIXED) {
        if (i >= 0 && (addr < D.lib[i].base || addr + len > D.lib[i].base + D.lib[i].span + PAGE))
            dyn_fatal("%s mapped at %#llx, outside its planned place [%#llx, %#llx)", D.lib[i].path,
                      (unsigned long long)addr, (unsigned long long)D.lib[i].base,
                      (unsigned long long)(D.lib[i].base + D.lib[i].span));
        return addr;
    }
    if (addr != 0) return addr;
    /* (a library already in place: the guest maps its file as data, wherever the host puts it) */
    if (i >= 0 && off == 0 && !ranges_cover_locked(D.lib[i].base, D.lib[i].base + PAGE)) {
        D.pending = -1;
        return D.lib[i].base;
    }
    if (anon && prot == PROT_NONE && D.pending >= 0) {
        LxLib *l = &D.lib[D.pending];
        if (len >= l->span && len <= l->span + 2 * l->align && !ranges_cover_locked(l->base, l->base + PAGE))
            return l->base;
    }
    return addr;
}

/* -- signals --
 *
 * Guest handlers run as the kernel runs them (arm64 signal frame; facts: the kernel's
 * arch/arm64 uapi sigcontext.h/ucontext.h and signal(7), sigaction(2), rt_sigreturn(2)):
 *  - a signal the guest catches has a host handler (host_sig) that only records it as pending
 *    (its siginfo: the x86-64 and arm64 layouts are the same 128 bytes); every other signal
 *    keeps the host's disposition set to the guest's (SIG_DFL / SIG_IGN), so default deaths
 *    and stops are the host kernel's own, with the right wait status;
 *  - the guest's mask is the host thread's mask (less the signals the runtime owns), so a
 *    blocked signal stays pending in the host kernel and reaches host_sig when unblocked,
 *    during the very rt_sigprocmask that unblocks it, as on Linux;
 *  - kill/tkill/tgkill/rt_sigqueueinfo of the calling thread: recorded straight away (kill's
 *    siginfo SI_USER), unless a process-directed one is blocked (then the host kernel keeps it);
 *  - per guest thread (linux_threads.h LxThread): mask, recorded signals, alternate stack; a
 *    recorded signal stays blocked on its host thread until delivered (further instances wait
 *    in the host kernel); guest real-time signals 32..62 are host 34..64 (g2h/h2g below);
 *  - a recorded signal is delivered at the next delivery point (below): the frame is built
 *    on the guest stack (or the alternate one), the registers set for the handler, and the
 *    handler runs in a nested nx_run on the host stack; its rt_sigreturn restores every
 *    register, NZCV, V0-V31, FPSR/FPCR and the mask from the frame and longjmps back to the
 *    delivery, which returns to the code it interrupted.  A handler that leaves by
 *    siglongjmp goes on in that nested nx_run (its abandoned host frames stay on the 1 GiB
 *    host stack: a few KiB each).
 * Delivery points, where NxCpu holds what the interrupted code needs and control can come back
 * to it in its own C frame: the return of every system call (kill/raise of self, an unblocking
 * rt_sigprocmask, a blocking call interrupted with EINTR — restarted after the handler when
 * SA_RESTART and the call is one Linux restarts), and the runtime's preemption point
 * (nx_preempt_pending, read at every indirect call or jump and at nx_run's dispatch), which
 * host_sig raises; and with recompiler.signal_polls every backward branch of lifted code
 * (nx_signal_flag, nx_signal_poll).  Without it, a loop that makes no system call and no
 * indirect branch sees its signal only when it leaves the loop (docs/ARCHITECTURE.md). */
#include <setjmp.h>
#include "host_calls.h"
/* weak: test harnesses link this file without dispatch.c (then handlers are not run) */
#pragma weak nx_run
#pragma weak nx_lookup
#pragma weak nx_host_bind
#pragma weak nx_set_preempt_hook
#pragma weak nx_preempt_pending

static int runtime_owned(int sig) {
    return sig == SIGSEGV || sig == SIGBUS || sig == SIGILL || sig == SIGFPE || sig == SIGTRAP || sig == SIGSYS;
}

#define BIT(sig) (1ull << ((sig) - 1))
#define UNBLOCKABLE (BIT(SIGKILL) | BIT(SIGSTOP))
#define OWNED_MASK (BIT(SIGSEGV) | BIT(SIGBUS) | BIT(SIGILL) | BIT(SIGFPE) | BIT(SIGTRAP) | BIT(SIGSYS))
/* struct sigaction as arm64 rt_sigaction passes it: handler, flags, restorer, mask */
#define A64_SA_SIGINFO   0x4ull
#define A64_SA_ONSTACK   0x08000000ull
#define A64_SA_RESTORER  0x04000000ull
#define A64_SA_RESTART   0x10000000ull
#define A64_SA_NODEFER   0x40000000ull
#define A64_SA_RESETHAND 0x80000000ull
#define A64_SS_ONSTACK 1
#define A64_SS_DISABLE 2

/* Per thread (linux_threads.h LxThread): the mask, what is recorded and not delivered, the
 * alternate stack.  Process-wide: the dispositions (P.handlers) and these. */
static struct {
    uint64_t tramp_bound;         /* a restorer address bound to the host trampoline */
    int ready_threads;            /* threads with a recorded signal they do not block */
} S;
#define ME lx_self

static __thread struct SigRec *sig_top;   /* the deliveries whose handlers are running */
typedef struct SigRec { struct SigRec *prev; uint64_t frame; sigjmp_buf jb; } SigRec;

static long host_tid(void) { return hsys6(SYS_gettid, 0, 0, 0, 0, 0, 0); }

/* Signal numbers: host signals 32 and 33 belong to the host's libc (glibc's cancellation and
 * set*id broadcast: its handler of 33 runs on any SI_TKILL 33 and would act on a guest's), so
 * guest real-time signals 32..62 are host 34..64, as qemu-aarch64 maps them (linux-user
 * signal.c: host SIGRTMIN upwards from the guest's 32); guest 63 and 64 have no host signal
 * (their handlers are recorded, never run).  musl's pthread_cancel (33) and glibc's (32) and
 * set*id broadcast (33) need them.  Below 32 the numbers are the same. */
static int g2h(int g) { return g < 32 ? g : g <= 62 ? g + 2 : 0; }
static int h2g(int h) { return h < 32 ? h : h >= 34 && h <= 64 ? h - 2 : 0; }
static uint64_t mask_g2h(uint64_t g) { return (g & 0x7fffffffull) | ((g >> 31) & 0x7fffffffull) << 33; }
static uint64_t mask_h2g(uint64_t h) { return (h & 0x7fffffffull) | ((h >> 33) & 0x7fffffffull) << 31; }

/* The host mask of the calling guest thread: its guest mask, and the signals it has recorded
 * and not delivered yet (held: another instance waits in the host kernel, queued for a real-time
 * signal, until this one is delivered, as qemu-aarch64 holds them; or goes to another thread). */
static void host_setmask(uint64_t guest_mask) {
    uint64_t m = mask_g2h((guest_mask | (ME ? ME->pend : 0)) & ~OWNED_MASK & ~UNBLOCKABLE);
    hsys6(SYS_rt_sigprocmask, SIG_SETMASK, (long)&m, 0, 8, 0, 0);
}
/* all host signals blocked while the pending table is read and written (host_sig writes it) */
static uint64_t host_block_all(void) {
    uint64_t all = ~0ull, old = 0;
    hsys6(SYS_rt_sigprocmask, SIG_SETMASK, (long)&all, (long)&old, 8, 0, 0);
    return old;
}
static void host_restore(uint64_t old) { hsys6(SYS_rt_sigprocmask, SIG_SETMASK, (long)&old, 0, 8, 0, 0); }
void lx_host_setmask(uint64_t guest_mask) { host_setmask(guest_mask); }
uint64_t lx_host_block_all(void) { return host_block_all(); }
void lx_host_restore(uint64_t old) { host_restore(old); }

/* Read by lifted code at backward branches where recompiler.signal_polls is on (lifted.h). */
volatile int nx_signal_flag __attribute__((visibility("hidden")));

/* The delivery flags (nx_signal_flag, nx_preempt_pending) are the process's, the signals a
 * thread's: a thread with a signal to deliver raises them and counts itself in
 * S.ready_threads; a thread that finds nothing for itself lowers them only while no thread
 * counts itself (lowered, then raised again if one did meanwhile: no wake-up is lost).
 * Called by t's own thread with host signals blocked, or from its host handler. */
static void raise_flags(void) {
    nx_signal_flag = 1;
    if (&nx_preempt_pending) nx_preempt_pending = 1;
}
static void ready_update(LxThread *t) {
    int r = (t->pend & ~t->mask) != 0;
    if (r != t->ready) {
        t->ready = r;
        __atomic_add_fetch(&S.ready_threads, r ? 1 : -1, __ATOMIC_SEQ_CST);
    }
    if (r) raise_flags();
}
static void lower_flags(void) {
    __atomic_store_n(&nx_signal_flag, 0, __ATOMIC_SEQ_CST);
    if (&nx_preempt_pending) __atomic_store_n(&nx_preempt_pending, 0, __ATOMIC_SEQ_CST);
    if (__atomic_load_n(&S.ready_threads, __ATOMIC_SEQ_CST)) raise_flags();
}
/* The guest mask of the calling thread becomes m (host signals blocked or not). */
static void set_mask(uint64_t m) {
    uint64_t old = host_block_all();
    ME->mask = m & ~UNBLOCKABLE;
    lx_slot_mask(ME);
    ready_update(ME);
    host_restore(old);
    host_setmask(ME->mask);   /* an unblocked pending signal reaches host_sig here */
}

static void sig_record(LxThread *t, int sig, const siginfo_t *si) {
    if (!(t->pend & BIT(sig))) {
        t->info[sig] = *si;
        t->pend |= BIT(sig);
    }
    ready_update(t);
    /* a blocked one too: a poll or preemption point looks, finds nothing to deliver, and
     * lowers them again (as before threads) */
    raise_flags();
}

static void host_sig(int sig, siginfo_t *si, void *uc) {
    LxThread *t = ME;
    if (!t) {
        /* a process-directed signal the kernel gave a host thread that runs no guest code (the
         * Python runner's helper threads, a library's worker pool): this thread blocks every
         * signal but the runtime's from now on (the mask its handler returns to: it takes no
         * second one) and passes this one, siginfo kept, to a guest
         * thread that does not block it (thread-directed: taken before the instances still
         * queued for the process, so their order holds), else to the process again, where the
         * kernel keeps it until a guest thread unblocks it, as Linux does */
        int e = errno;
        sigset_t *m = &((ucontext_t *)uc)->uc_sigmask;
        sigfillset(m);
        for (int k = 1; k < 32; k++)
            if (runtime_owned(k)) sigdelset(m, k);
        long to = h2g(sig) ? lx_taker_of(h2g(sig)) : 0;
        if (!to || hsys6(SYS_rt_tgsigqueueinfo, getpid(), to, sig, (long)si, 0, 0) < 0)
            if (hsys6(SYS_rt_sigqueueinfo, getpid(), sig, (long)si, 0, 0, 0) < 0)
                hsys6(SYS_kill, getpid(), sig, 0, 0, 0, 0);
        errno = e;
        return;
    }
    int g = h2g(sig);
    if (!g) return;
    siginfo_t gi = *si;
    gi.si_signo = g;
    sig_record(t, g, &gi);
    /* held until delivered (host_setmask): a second instance is not lost meanwhile */
    if (!runtime_owned(sig)) sigaddset(&((ucontext_t *)uc)->uc_sigmask, sig);
}

static int default_ignored(int sig) {
    return sig == SIGCHLD || sig == SIGURG || sig == SIGWINCH || sig == SIGCONT;
}
static int is_handler(uint64_t h) { return h > 1; }
static int host_installable(int sig) { return !runtime_owned(sig) && sig != SIGKILL && sig != SIGSTOP && sig < 32; }
static int host_installable_rt(int sig) { return sig >= 32 && g2h(sig); }   /* on host 34..64 */

/* The host disposition that stands for guest signal sig's (handler, flags). */
static void host_dispose(int sig) {
    if (runtime_owned(sig) || sig == SIGKILL || sig == SIGSTOP) return;
    if (!host_installable(sig) && !host_installable_rt(sig)) return;
    uint64_t h = P.handlers[sig][0], fl = P.handlers[sig][1];
    /* a harness without the run loop (tests/cpu_host/test_linux_busybox.py: Unicorn runs the
     * guest) cannot run handlers: the host keeps its disposition, as before handlers ran */
    if (is_handler(h) && !nx_run) return;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    if (is_handler(h)) {
        sa.sa_sigaction = host_sig;
        sa.sa_flags = SA_SIGINFO;   /* no SA_RESTART: an interrupted call comes back to us */
        sigfillset(&sa.sa_mask);
    } else {
        sa.sa_handler = h ? SIG_IGN : SIG_DFL;
    }
    if (sig == SIGCHLD) sa.sa_flags |= (int)(fl & (SA_NOCLDSTOP | SA_NOCLDWAIT));
    sigaction(g2h(sig), &sa, NULL);
}

void nx_block_profile_write(void);  /* core/block_profile.c: a profile_gen build's counts */

static void do_exit(int status) __attribute__((noreturn));
static void do_exit(int status) {
    nx_block_profile_write();
    if (P.exit_hook) P.exit_hook(status);
    fflush(NULL);
    for (;;) hsys6(SYS_exit_group, status, 0, 0, 0, 0, 0);
}
void lx_process_exit(int status) { do_exit(status); }

/* The default action of a terminating signal: die by it (the wait status says so). */
static void die_by(int sig) __attribute__((noreturn));
static void die_by(int sig) {
    nx_block_profile_write();
    if (P.exit_hook) P.exit_hook(128 + sig);
    fflush(NULL);
    int h = g2h(sig);
    if (h) {
        signal(h, SIG_DFL);
        uint64_t m = BIT(h);
        hsys6(SYS_rt_sigprocmask, SIG_UNBLOCK, (long)&m, 0, 8, 0, 0);
        hsys6(SYS_tgkill, getpid(), host_tid(), h, 0, 0, 0);
    }
    for (;;) hsys6(SYS_exit_group, 128 + sig, 0, 0, 0, 0, 0);   /* not reached */
}

/* -- the arm64 signal frame (struct rt_sigframe: siginfo, then ucontext) -- */
#define FR_SIGINFO 0
#define FR_UC 128
#define UC_STACK 16               /* stack_t: ss_sp, ss_flags (int), ss_size */
#define UC_SIGMASK 40
#define UC_MCONTEXT 176           /* struct sigcontext, 16-aligned after the 1024-bit mask area */
#define MC_REGS 8                 /* fault_address, then regs[31], sp, pc, pstate */
#define MC_SP (8 + 31 * 8)
#define MC_PC (MC_SP + 8)
#define MC_PSTATE (MC_PC + 8)
#define MC_RESERVED 288           /* __reserved[4096], 16-aligned: the context records */
#define FRAME_SIZE (FR_UC + UC_MCONTEXT + MC_RESERVED + 4096)
#define FPSIMD_MAGIC 0x46508001u
#define FPSIMD_SIZE (8 + 8 + 32 * 16)
_Static_assert(FRAME_SIZE == 4688, "sizeof(struct rt_sigframe) on arm64");

static int on_altstack(uint64_t sp) {
    const uint64_t *as = ME->altstack;
    return !(as[1] & A64_SS_DISABLE) && as[2] && sp > as[0] && sp <= as[0] + as[2];
}

static void sig_tramp(NxCpu *s);
/* The return address of a handler without SA_RESTORER (the kernel's vDSO sigreturn): a host
 * function bound at an address of this library that holds `mov x8, #139; svc #0`. */
static const uint32_t sig_tramp_code[2] __attribute__((aligned(16))) = {0xd2801168u, 0xd4000001u};

static int handle_pending(NxCpu *s, uint64_t saved_mask);

/* Run sig's handler on s (every register of the interrupted code in s): back here once it
 * returns by rt_sigreturn, with s as the frame then holds it. */
static void deliver(NxCpu *s, int sig, const siginfo_t *info, uint64_t saved_mask) {
    uint64_t *act = P.handlers[sig];
    pthread_mutex_lock(&P.lock);   /* another thread's rt_sigaction may be writing it */
    uint64_t handler = act[0], flags = act[1], restorer = act[2], sa_mask = act[3];
    pthread_mutex_unlock(&P.lock);
    uint64_t sp = s->sp;
    int onstack = on_altstack(sp);
    const uint64_t *as = ME->altstack;
    if ((flags & A64_SA_ONSTACK) && !(as[1] & A64_SS_DISABLE) && as[2] && !onstack)
        sp = as[0] + as[2];
    sp = (sp - 16) & ~15ull;                   /* the frame record (X29, X30) */
    uint64_t record = sp;
    uint64_t frame = (sp - FRAME_SIZE) & ~15ull;
    uint8_t *f = (uint8_t *)frame;
    memset(f, 0, FRAME_SIZE);
    memcpy(f + FR_SIGINFO, info, 128);
    uint8_t *uc = f + FR_UC, *mc = uc + UC_MCONTEXT;
    uint64_t ss_sp = as[0], ss_size = as[2];
    uint32_t ss_flags = onstack ? A64_SS_ONSTACK : (uint32_t)as[1];
    memcpy(uc + UC_STACK, &ss_sp, 8);
    memcpy(uc + UC_STACK + 8, &ss_flags, 4);
    memcpy(uc + UC_STACK + 16, &ss_size, 8);
    memcpy(uc + UC_SIGMASK, &saved_mask, 8);
    memcpy(mc + MC_REGS, s->x, 31 * 8);
    memcpy(mc + MC_SP, &s->sp, 8);
    memcpy(mc + MC_PC, &s->pc, 8);
    uint64_t pstate = s->nzcv & 0xf0000000ull;
    memcpy(mc + MC_PSTATE, &pstate, 8);
    uint8_t *fp = mc + MC_RESERVED;
    uint32_t hdr[4] = {FPSIMD_MAGIC, FPSIMD_SIZE, (uint32_t)s->fpsr, (uint32_t)s->fpcr};
    memcpy(fp, hdr, 16);
    memcpy(fp + 16, s->v, 32 * 16);            /* the end record after it: zeros */
    memcpy((void *)record, &s->x[29], 16);     /* X29, X30 */

    /* the handler's mask, SA_RESETHAND */
    set_mask(ME->mask | sa_mask | ((flags & A64_SA_NODEFER) ? 0 : BIT(sig)));
    if (flags & A64_SA_RESETHAND) {
        pthread_mutex_lock(&P.lock);
        act[0] = 0;
        act[1] &= ~A64_SA_SIGINFO;
        host_dispose(sig);
        pthread_mutex_unlock(&P.lock);
    }
    uint64_t ret = (uint64_t)(uintptr_t)sig_tramp_code;
    if (flags & A64_SA_RESTORER) {
        ret = restorer;
        uint32_t kind;
        if (restorer && restorer != S.tramp_bound && !nx_lookup(restorer, &kind) && nx_host_bind(restorer, sig_tramp) == 0)
            S.tramp_bound = restorer;   /* no lifted code there: the host does its sigreturn */
    }
    s->x[0] = (uint64_t)sig;
    if (flags & A64_SA_SIGINFO) {
        s->x[1] = frame + FR_SIGINFO;
        s->x[2] = frame + FR_UC;
    }
    s->sp = frame;
    s->x[29] = record;
    s->x[30] = ret;
    s->pc = handler;
    s->excl_size = 0;                          /* an exception clears the exclusive monitor */
    s->resume = 0;

    uint32_t mxcsr;
    __asm__ volatile("stmxcsr %0" : "=m"(mxcsr));
    uint64_t fpcr_before = s->fpcr;
    SigRec r;
    r.prev = sig_top;
    r.frame = frame;
    sig_top = &r;
    if (sigsetjmp(r.jb, 0) == 0) {
        /* another deliverable signal interrupts the handler at its first instruction (Linux
         * sets up its frame over this one before returning to user mode) */
        handle_pending(s, ME->mask);
        nx_run(s);                             /* until rt_sigreturn longjmps back */
    }
    sig_top = r.prev;
    if (s->fpcr == fpcr_before) __asm__ volatile("ldmxcsr %0" : : "m"(mxcsr));
    else NX_FPCR_APPLY(s->fpcr);   /* the handler changed the interrupted code's FPCR */
}

/* Deliver what the calling thread has pending and does not block, lowest signal first; the
 * frames save saved_mask (the mask before a sigsuspend, or the thread's).  1 when a handler ran. */
static int handle_pending(NxCpu *s, uint64_t saved_mask) {
    int ran = 0, consumed = 0;
    LxThread *t = ME;
    for (;;) {
        uint64_t old = host_block_all();
        uint64_t ready = t->pend & ~t->mask;
        if (!ready) {
            ready_update(t);
            lower_flags();
            host_restore(old);
            if (consumed) host_setmask(t->mask);   /* their holds released */
            return ran;
        }
        int sig = __builtin_ctzll(ready) + 1;
        siginfo_t info = t->info[sig];
        t->pend &= ~BIT(sig);
        ready_update(t);
        uint64_t h = P.handlers[sig][0];
        consumed = 1;
        if (!is_handler(h)) {
            host_restore(old);
            if (h == 1 || default_ignored(sig)) continue;
            if (sig == SIGSTOP || sig == SIGTSTP || sig == SIGTTIN || sig == SIGTTOU) {
                hsys6(SYS_kill, getpid(), sig, 0, 0, 0, 0);
                continue;
            }
            die_by(sig);
        }
        if (!nx_run) {   /* a harness without the run loop */
            host_restore(old);
            lg(30, "signal %d has a guest handler at %#llx, and this build has no run loop to run it: ignored",
               sig, (unsigned long long)h);
            continue;
        }
        deliver(s, sig, &info, saved_mask);   /* sets the host mask itself */
        saved_mask = t->mask;
        ran = 1;
    }
}

/* rt_sigreturn: the frame at SP back into s, then on in the delivery that made it. */
static void sys_rt_sigreturn(NxCpu *s) __attribute__((noreturn));
static void sys_rt_sigreturn(NxCpu *s) {
    uint64_t frame = s->sp;
    SigRec *r = sig_top;
    while (r && r->frame != frame) r = r->prev;
    if (!r) {
        fprintf(stderr, "nxrecomp: fatal: rt_sigreturn at guest pc %#llx with a frame at sp %#llx that no signal "
                "delivery made (only frames of delivered signals can be returned to)\n",
                (unsigned long long)(s->pc - 4), (unsigned long long)frame);
        fflush(stderr);
        if (P.exit_hook) P.exit_hook(134);
        for (;;) hsys6(SYS_exit_group, 134, 0, 0, 0, 0, 0);
    }
    const uint8_t *uc = (const uint8_t *)frame + FR_UC, *mc = uc + UC_MCONTEXT;
    memcpy(s->x, mc + MC_REGS, 31 * 8);
    memcpy(&s->sp, mc + MC_SP, 8);
    memcpy(&s->pc, mc + MC_PC, 8);
    uint64_t pstate;
    memcpy(&pstate, mc + MC_PSTATE, 8);
    s->nzcv = pstate & 0xf0000000ull;
    for (uint32_t off = 0; off + 8 <= 4096;) {   /* the context records, up to the end record */
        uint32_t hdr[2];
        memcpy(hdr, mc + MC_RESERVED + off, 8);
        if (!hdr[0] || hdr[1] < 8) break;
        if (hdr[0] == FPSIMD_MAGIC && hdr[1] >= FPSIMD_SIZE && off + FPSIMD_SIZE <= 4096) {
            uint32_t fpsr, fpcr;
            memcpy(&fpsr, mc + MC_RESERVED + off + 8, 4);
            memcpy(&fpcr, mc + MC_RESERVED + off + 12, 4);
            s->fpsr = fpsr;
            s->fpcr = fpcr;
            memcpy(s->v, mc + MC_RESERVED + off + 16, 32 * 16);
        }
        off += hdr[1];
    }
    uint64_t m;
    memcpy(&m, uc + UC_SIGMASK, 8);
    set_mask(m);
    s->excl_size = 0;
    s->resume = 0;
    sig_top = r;
    siglongjmp(r->jb, 1);
}

static void sig_tramp(NxCpu *s) { sys_rt_sigreturn(s); }

/* The runtime's preemption point (every register in s, s->pc where control goes on). */
static void sig_preempt(NxCpu *s) {
    LxThread *t = ME;
    if (!t) return;   /* not a guest thread of this personality */
    if (t->pend & ~t->mask) handle_pending(s, t->mask);
    else lower_flags();
}

/* A backward branch of lifted code saw nx_signal_flag (recompiler.signal_polls): every register
 * in s, s->pc the branch target. */
void nx_signal_poll(NxCpu *s) {
    LxThread *t = ME;
    if (t && (t->pend & ~t->mask)) handle_pending(s, t->mask);
    else lower_flags();
}

static void signals_init(void) {
    uint64_t cur = 0;
    hsys6(SYS_rt_sigprocmask, SIG_BLOCK, 0, (long)&cur, 8, 0, 0);
    ME->mask = mask_h2g(cur) & ~UNBLOCKABLE;   /* the mask execve kept */
    lx_slot_mask(ME);
    if (nx_set_preempt_hook) nx_set_preempt_hook(sig_preempt);
    /* glibc's aarch64 sigaction sets no SA_RESTORER: its handlers return to the vDSO's */
    if (nx_host_bind) nx_host_bind((uint64_t)(uintptr_t)sig_tramp_code, sig_tramp);
}

/* A signal the guest sends itself (kill of its pid, tkill/tgkill of its tid). */
static long signal_self_info(int sig, int code, const siginfo_t *given);
static long signal_self(int sig, int code) { return signal_self_info(sig, code, NULL); }
/* The same with the sender's siginfo (rt_sigqueueinfo of itself). */
static long signal_self_info(int sig, int code, const siginfo_t *given) {
    if (sig == 0) return 0;
    if (sig < 1 || sig > 64) return -EINVAL;
    uint64_t h = P.handlers[sig][0];
    if (!(ME->mask & BIT(sig))) {
        if (h == 1 /* SIG_IGN */) return 0;
        if (h == 0 /* SIG_DFL */) {
            if (default_ignored(sig)) return 0;
            if (sig == SIGSTOP || sig == SIGTSTP || sig == SIGTTIN || sig == SIGTTOU)
                return hsys6(SYS_kill, getpid(), sig, 0, 0, 0, 0);
            die_by(sig);
        }
    }
    /* a handler, or blocked: pending until the next delivery point that may deliver it */
    siginfo_t si;
    memset(&si, 0, sizeof si);
    if (given) si = *given;
    else {
        si.si_code = code;
        si.si_pid = getpid();
        si.si_uid = getuid();
    }
    si.si_signo = sig;
    uint64_t old = host_block_all();
    sig_record(ME, sig, &si);   /* blocked signals are never ignored: the action may change */
    host_restore(old);
    return 0;
}

static long sys_rt_sigaction(NxCpu *s) {
    int sig = (int)s->x[0];
    uint64_t act = s->x[1], old = s->x[2];
    if (sig < 1 || sig > 64 || ((sig == SIGKILL || sig == SIGSTOP) && act)) return -EINVAL;
    if (s->x[3] != 8) return -EINVAL;
    uint64_t a[4], prev[4];
    if (act) memcpy(a, (void *)act, 32);
    pthread_mutex_lock(&P.lock);   /* the dispositions are the process's: threads share them */
    memcpy(prev, P.handlers[sig], 32);
    if (act) {
        a[3] &= ~UNBLOCKABLE;
        memcpy(P.handlers[sig], a, 32);
        host_dispose(sig);
    }
    pthread_mutex_unlock(&P.lock);
    if (old) memcpy((void *)old, prev, 32);
    if (act) {
        if (is_handler(a[0]) && (runtime_owned(sig) || sig == 32 || sig == 33))
            lg(20, "signal %d: the guest's handler is recorded, not run (the runtime owns this signal)", sig);
        /* a pending signal now ignored is discarded (POSIX); the calling thread's (another
         * thread's record is dropped at its delivery, which finds SIG_IGN) */
        if (a[0] == 1 || (a[0] == 0 && default_ignored(sig))) {
            uint64_t o = host_block_all();
            ME->pend &= ~BIT(sig);
            ready_update(ME);
            host_restore(o);
            host_setmask(ME->mask);
        }
    }
    return 0;
}

static long sys_rt_sigprocmask(NxCpu *s) {
    int how = (int)s->x[0];
    uint64_t set = s->x[1], old = s->x[2];
    if (s->x[3] != 8) return -EINVAL;
    uint64_t prev = ME->mask;
    if (set) {
        uint64_t m;
        memcpy(&m, (void *)set, 8);
        if (how == SIG_BLOCK) m = prev | m;
        else if (how == SIG_UNBLOCK) m = prev & ~m;
        else if (how != SIG_SETMASK) return -EINVAL;
        set_mask(m);
    }
    if (old) memcpy((void *)old, &prev, 8);
    return 0;
}

static long sys_rt_sigpending(NxCpu *s) {
    if (s->x[1] != 8) return -EINVAL;
    uint64_t host = 0;
    long r = hsys6(SYS_rt_sigpending, (long)&host, 8, 0, 0, 0, 0);
    if (r < 0) return r;
    uint64_t m = (mask_h2g(host) | ME->pend) & ME->mask;   /* what is pending and not delivered: the blocked ones */
    memcpy((void *)s->x[0], &m, 8);
    return 0;
}

/* rt_sigtimedwait: one recorded here first, else the host kernel's */
static long sys_rt_sigtimedwait(NxCpu *s) {
    if (s->x[3] != 8) return -EINVAL;
    uint64_t want;
    memcpy(&want, (void *)s->x[0], 8);
    uint64_t old = host_block_all();
    LxThread *t = ME;
    uint64_t have = t->pend & want;
    if (have) {
        int sig = __builtin_ctzll(have) + 1;
        if (s->x[1]) memcpy((void *)s->x[1], &t->info[sig], 128);
        t->pend &= ~BIT(sig);
        ready_update(t);
        host_restore(old);
        host_setmask(t->mask);   /* its hold released */
        return sig;
    }
    host_restore(old);
    uint64_t hwant = mask_g2h(want);
    long r = hsys6(SYS_rt_sigtimedwait, (long)&hwant, (long)s->x[1], (long)s->x[2], 8, 0, 0);
    if (r > 0) {
        r = h2g((int)r);
        if (s->x[1]) ((siginfo_t *)s->x[1])->si_signo = (int)r;
    }
    return r;
}

static long sys_sigaltstack(NxCpu *s) {
    uint64_t ss = s->x[0], old = s->x[1];
    int onstack = on_altstack(s->sp);
    if (ss) {
        if (onstack) return -EPERM;
        uint64_t n[3];
        memcpy(n, (void *)ss, 24);
        uint32_t fl = (uint32_t)n[1];
        if (fl & ~(uint32_t)(A64_SS_DISABLE | 0x80000000u /* SS_AUTODISARM */)) return -EINVAL;
        if (!(fl & A64_SS_DISABLE) && n[2] < 2048 /* MINSIGSTKSZ */) return -ENOMEM;
        if (fl & A64_SS_DISABLE) n[0] = n[2] = 0;
        n[1] = fl;
        if (old) {
            uint64_t o[3] = {ME->altstack[0], onstack ? A64_SS_ONSTACK : ME->altstack[1], ME->altstack[2]};
            memcpy((void *)old, o, 24);
        }
        memcpy(ME->altstack, n, 24);
        return 0;
    }
    if (old) {
        uint64_t o[3] = {ME->altstack[0], onstack ? A64_SS_ONSTACK : ME->altstack[1], ME->altstack[2]};
        memcpy((void *)old, o, 24);
    }
    return 0;
}

/* Linux restarts these after a handler with SA_RESTART; the others answer EINTR (signal(7)). */
static int restartable(uint64_t nr) {
    switch (nr) {
    case A64_pselect6: case A64_ppoll: case A64_epoll_pwait: case A64_epoll_pwait2: case A64_nanosleep:
    case A64_clock_nanosleep: case A64_rt_sigsuspend: case A64_rt_sigtimedwait: case A64_io_getevents:
    case A64_io_pgetevents: case A64_semtimedop: case A64_semop: case A64_msgrcv: case A64_msgsnd:
        return 0;
    default:
        return 1;
    }
}

/* rt_sigsuspend: wait under the given mask until a handler has run; the frames save the mask
 * the guest had before (restored by their rt_sigreturn).  Always -EINTR. */
static long sys_rt_sigsuspend(NxCpu *s) {
    if (s->x[1] != 8) return -EINVAL;
    LxThread *t = ME;
    uint64_t tmp, before = t->mask;
    memcpy(&tmp, (void *)s->x[0], 8);
    tmp &= ~UNBLOCKABLE;
    s->x[0] = (uint64_t)-EINTR;   /* what the frame saves as X0 */
    for (;;) {
        t->mask = tmp;
        if (!(t->pend & ~tmp)) {
            uint64_t h = mask_g2h((tmp | t->pend) & ~OWNED_MASK);   /* recorded ones stay held */
            hsys6(SYS_rt_sigsuspend, (long)&h, 8, 0, 0, 0, 0);
        }
        if (nx_run && handle_pending(s, before)) break;
        if (!nx_run && (t->pend & ~tmp)) break;
    }
    set_mask(before);
    return -EINTR;
}

/* The mask a system call waits under (rt_sigsuspend's own, ppoll's, pselect6's, epoll_pwait's
 * argument), or 0 when it has none. */
static int call_mask(NxCpu *s, uint64_t nr, uint64_t *tmp) {
    uint64_t p = 0;
    if (nr == A64_ppoll && s->x[4] == 8) p = s->x[3];
    else if (nr == A64_epoll_pwait && s->x[5] == 8) p = s->x[4];
    else if (nr == A64_pselect6 && s->x[5]) {
        uint64_t d[2];
        memcpy(d, (void *)s->x[5], 16);
        if (d[1] == 8) p = d[0];
    }
    if (!p) return 0;
    memcpy(tmp, (void *)p, 8);
    *tmp &= ~UNBLOCKABLE;
    return 1;
}

/* A system call returned r with signals recorded: deliver those not blocked.  1 when the call
 * must run again (interrupted, and restarted as Linux does for SA_RESTART). */
static int after_signal(NxCpu *s, uint64_t nr, long r) {
    LxThread *t = ME;
    uint64_t pc = s->pc, tmp = 0, before = t->mask;
    int masked_call = r == -EINTR && call_mask(s, nr, &tmp);
    uint64_t eff = masked_call ? tmp : t->mask;
    uint64_t ready = t->pend & ~eff;
    if (!ready) { s->x[0] = (uint64_t)r; return 0; }
    int restart = 0;
    if (r == -EINTR && restartable(nr)) {
        const uint64_t *a = P.handlers[__builtin_ctzll(ready) + 1];
        restart = !is_handler(a[0]) || (a[1] & A64_SA_RESTART);
    }
    if (restart) s->pc = pc - 4;   /* the frame's pc is the SVC, x0 its argument: run again */
    else s->x[0] = (uint64_t)r;
    if (masked_call) {
        t->mask = tmp;
        if (!handle_pending(s, before)) set_mask(before);
    } else {
        handle_pending(s, t->mask);
    }
    if (restart && s->pc == pc - 4) { s->pc = pc; return 1; }
    /* else s->pc may differ from pc: the handler moved the interrupted pc in its ucontext
     * (musl's thread cancellation points a cancellation point's SVC at __cp_cancel); the lifted
     * SVC site sees it and jumps there (recompiler/lift/control.py h_svc) */
    return 0;
}

static void init_once(NxCpu *s) {
    if (P.inited) return;
    P.inited = 1;
    lx_threads_init(s);   /* the calling thread is the main one */
    /* Python ignores SIGPIPE and SIGXFSZ and catches SIGINT; a Linux program starts with the
     * default actions (so `yes | head` ends by SIGPIPE, as under qemu). */
    signal(SIGPIPE, SIG_DFL);
    signal(SIGXFSZ, SIG_DFL);
    signal(SIGINT, SIG_DFL);
    for (int sig = 1; sig < 65; sig++) {
        struct sigaction old;
        if (h2g(sig) && sigaction(sig, NULL, &old) == 0 && old.sa_handler == SIG_IGN && !(old.sa_flags & SA_SIGINFO))
            P.handlers[h2g(sig)][0] = 1;   /* SIG_IGN inherited from the parent stays visible */
    }
    signals_init();
}

/* -- clone: a thread (linux_threads.c), or fork-like -- */
#define A64_CLONE_THREAD 0x10000
#define A64_CLONE_SETTLS 0x80000
#define A64_CLONE_PARENT_SETTID 0x100000
#define A64_CLONE_CHILD_CLEARTID 0x200000
#define A64_CLONE_CHILD_SETTID 0x1000000

static long sys_clone(NxCpu *s) {
    uint64_t flags = s->x[0], stack = s->x[1], ptid = s->x[2], tls = s->x[3], ctid = s->x[4];
    if (flags & A64_CLONE_THREAD) return lx_clone_thread(s, flags, stack, ptid, tls, ctid);
    if ((flags & 0xff) != SIGCHLD && (flags & 0xff) != 0)
        lg(20, "clone exit signal %d treated as SIGCHLD", (int)(flags & 0xff));
    fflush(NULL);
    /* another thread may be inside an mmap: the child, whose only thread is this one, would
     * find the lock taken for ever */
    pthread_mutex_lock(&P.lock);
    pid_t pid = fork();
    pthread_mutex_unlock(&P.lock);
    if (pid < 0) return -errno;
    if (pid == 0) {   /* child: continues in lifted code after the SVC */
        if (stack) s->sp = stack;
        if (flags & A64_CLONE_SETTLS) s->tpidr_el0 = tls;
        if ((flags & A64_CLONE_CHILD_SETTID) && ctid) *(int32_t *)ctid = (int32_t)getpid();
        lx_after_fork();      /* the child's one thread is its main thread */
        if (flags & A64_CLONE_CHILD_CLEARTID) ME->clear_child_tid = ctid;
        return 0;
    }
    if ((flags & A64_CLONE_PARENT_SETTID) && ptid) *(int32_t *)ptid = pid;
    return pid;
}

/* -- mmap family: never touch host memory -- */
/* NXRECOMP_DETERMINISTIC=1 (lockstep traces, tests/recompiler/lockstep.py): what would differ
 * between two runs of one program is fixed — getrandom's bytes, and a clock that starts at one
 * time and advances 1 us at each read (a shell seeds $RANDOM from it, and stack slots keep
 * what clock_gettime wrote), and the addresses mmap picks (from DET_MMAP_BASE up, where
 * neither the launcher's nor Unicorn's process has anything). */
static int deterministic(void) {
    static int det = -1;
    if (det < 0) det = getenv("NXRECOMP_DETERMINISTIC") != NULL;
    return det;
}
/* a mapping of len bytes was placed at r: the next deterministic one goes above it */
static void deterministic_placed(long r, uint64_t len) { P.det_mmap = page_up((uint64_t)r + len) + PAGE; }
/* the deterministic clock's next reading as seconds and the rest in units of `unit` ns; 0 */
static long deterministic_time(int64_t *out, uint64_t unit) {
    static uint64_t t = 1700000000ull * 1000000000ull;
    uint64_t now = __atomic_add_fetch(&t, 1000, __ATOMIC_RELAXED);
    out[0] = (int64_t)(now / 1000000000ull);
    out[1] = (int64_t)(now % 1000000000ull / unit);
    return 0;
}

static long sys_mmap(NxCpu *s) {
    uint64_t addr = s->x[0], len = s->x[1];
    long prot = (long)s->x[2], flags = (long)s->x[3];
    if (len == 0) return -EINVAL;
    pthread_mutex_lock(&P.lock);
    uint64_t want = library_placement(addr, len, prot, flags, (long)s->x[4], s->x[5]);
    int lib_placed = want != addr;
    if (lib_placed) {
        addr = want;
        flags |= MAP_FIXED_NOREPLACE;
    }
    if (flags & MAP_FIXED) {
        uint64_t lo = addr & ~(PAGE - 1), hi = page_up(addr + len);
        if (!ranges_cover_locked(lo, hi)) {   /* over unknown memory only if nothing is there */
            flags = (flags & ~MAP_FIXED) | MAP_FIXED_NOREPLACE;
        }
    }
    int det = !(flags & MAP_FIXED) && !lib_placed && addr == 0 && deterministic();
    if (det) {
        addr = P.det_mmap;
        flags |= MAP_FIXED_NOREPLACE;
    }
    long r = hsys6(SYS_mmap, (long)addr, (long)len, prot, flags, (long)s->x[4], (long)s->x[5]);
    if (det && r < 0) {   /* taken after all: wherever the host puts it */
        flags &= ~MAP_FIXED_NOREPLACE;
        r = hsys6(SYS_mmap, 0, (long)len, prot, flags, (long)s->x[4], (long)s->x[5]);
    }
    if (det && r >= 0) deterministic_placed(r, len);
    if (lib_placed && (r < 0 || (uint64_t)r != addr))
        dyn_fatal("cannot map a library at its planned base %#llx (%#llx bytes): %s", (unsigned long long)addr,
                  (unsigned long long)len, r < 0 ? strerror((int)-r) : "placed elsewhere");
    if (r == -EEXIST) r = -ENOMEM;
    if (r >= 0 && (flags & MAP_FIXED_NOREPLACE) && (uint64_t)r != addr && (s->x[3] & MAP_FIXED)) {
        hsys6(SYS_munmap, r, (long)len, 0, 0, 0, 0);
        r = -ENOMEM;
    }
    if (r >= 0) {
        ranges_add_locked((uint64_t)r, page_up((uint64_t)r + len));
        gen_drop_locked((uint64_t)r, page_up((uint64_t)r + len));   /* (MAP_FIXED over generated code) */
        if ((prot & PROT_EXEC) && ((flags & MAP_ANONYMOUS) || lib_of_fd((long)s->x[4]) < 0))
            rl_add(gen, &ngen, (uint64_t)r, page_up((uint64_t)r + len));
    }
    pthread_mutex_unlock(&P.lock);
    if (r >= 0 && (flags & MAP_ANONYMOUS) && (prot & PROT_WRITE)) advise_huge((uint64_t)r, len);
    return r;
}

static long sys_munmap(NxCpu *s) {
    uint64_t addr = s->x[0], len = s->x[1];
    if (addr & (PAGE - 1) || len == 0) return -EINVAL;
    pthread_mutex_lock(&P.lock);
    long r;
    if (!ranges_cover_locked(addr, page_up(addr + len))) {
        lg(30, "munmap(%#llx, %#llx) of memory the guest does not own: refused",
           (unsigned long long)addr, (unsigned long long)len);
        r = -EINVAL;
    } else if ((r = hsys6(SYS_munmap, (long)addr, (long)len, 0, 0, 0, 0)) == 0) {
        ranges_remove_locked(addr, page_up(addr + len));
        gen_drop_locked(addr, page_up(addr + len));
    }
    pthread_mutex_unlock(&P.lock);
    return r;
}

static long guarded(NxCpu *s, long nr) {   /* mprotect/madvise/msync/mlock...: guest memory only */
    uint64_t addr = s->x[0], len = s->x[1];
    pthread_mutex_lock(&P.lock);
    int ok = len == 0 || ranges_cover_locked(addr & ~(PAGE - 1), page_up(addr + len));
    pthread_mutex_unlock(&P.lock);
    if (!ok) return -ENOMEM;
    return HSYS(nr, s);
}

/* mprotect: generated-code memory follows PROT_EXEC (outside the image and lifted libraries) */
static long sys_mprotect(NxCpu *s) {
    long r = guarded(s, SYS_mprotect);
    uint64_t lo = s->x[0] & ~(PAGE - 1), hi = page_up(s->x[0] + s->x[1]);
    if (r != 0 || lo >= hi) return r;
    pthread_mutex_lock(&P.lock);
    if (!(s->x[2] & PROT_EXEC)) {
        gen_drop_locked(lo, hi);
    } else {
        int lib = in_image_locked(lo, hi);
        for (int i = 0; i < D.nlib && !lib; i++) lib = D.lib[i].base < hi && D.lib[i].base + D.lib[i].span > lo;
        if (!lib) rl_add(gen, &ngen, lo, hi);
    }
    pthread_mutex_unlock(&P.lock);
    return r;
}

static long sys_mremap(NxCpu *s) {
    uint64_t old = s->x[0], oldlen = s->x[1], newlen = s->x[2], flags = s->x[3], naddr = s->x[4];
    pthread_mutex_lock(&P.lock);
    long r;
    if (!ranges_cover_locked(old, page_up(old + oldlen)) ||
        ((flags & MREMAP_FIXED) && !ranges_cover_locked(naddr, page_up(naddr + newlen)))) {
        r = -EFAULT;
    } else {
        r = -1;
        if ((flags & 1 /* MREMAP_MAYMOVE */) && !(flags & 2 /* MREMAP_FIXED */) && newlen > oldlen &&
            deterministic()) {
            /* where it may move, it moves to the next deterministic address: reserved there
             * first (nothing else is replaced), then moved over the reservation */
            long at = hsys6(SYS_mmap, (long)P.det_mmap, (long)newlen, PROT_NONE,
                            MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
            if (at >= 0 && (uint64_t)at == P.det_mmap) {
                r = hsys6(SYS_mremap, (long)old, (long)oldlen, (long)newlen, (long)(flags | 2), at, 0);
                if (r < 0) hsys6(SYS_munmap, at, (long)newlen, 0, 0, 0, 0);
                else deterministic_placed(r, newlen);
            } else if (at >= 0) {
                hsys6(SYS_munmap, at, (long)newlen, 0, 0, 0, 0);
            }
        }
        if (r < 0) r = hsys6(SYS_mremap, (long)old, (long)oldlen, (long)newlen, (long)flags, (long)naddr, 0);
        if (r >= 0) {
            int was_gen = 0;
            for (int i = 0; i < ngen && !was_gen; i++) was_gen = gen[i].lo <= old && gen[i].hi > old;
            if (!(flags & 4 /* MREMAP_DONTUNMAP */)) ranges_remove_locked(old, page_up(old + oldlen));
            ranges_add_locked((uint64_t)r, page_up((uint64_t)r + newlen));
            gen_drop_locked(old, page_up(old + oldlen));
            gen_drop_locked((uint64_t)r, page_up((uint64_t)r + newlen));
            if (was_gen) rl_add(gen, &ngen, (uint64_t)r, page_up((uint64_t)r + newlen));
        }
    }
    pthread_mutex_unlock(&P.lock);
    return r;
}

/* -- ioctl: always a non-terminal -- */
static long sys_ioctl(NxCpu *s) {
    uint64_t req = s->x[1] & 0xffffffffu;
    switch (req) {
    case 0x541B: /* FIONREAD */ case 0x5421: /* FIONBIO */ case 0x5452: /* FIOASYNC */
    case 0x5450: /* FIONCLEX */ case 0x5451: /* FIOCLEX */
        return HSYS(SYS_ioctl, s);
    }
    if ((req & 0xff00) == 0x5400) {    /* terminal requests (TCGETS, TIOCGWINSZ, ...) */
        long r = hsys6(SYS_fcntl, (long)s->x[0], F_GETFD, 0, 0, 0, 0);
        return r < 0 ? r : -ENOTTY;
    }
    return HSYS(SYS_ioctl, s);
}

static long sys_readlinkat(NxCpu *s) {
    const char *p = (const char *)s->x[1];
    if (is_self_exe(p)) {
        size_t n = strlen(P.exe), cap = (size_t)s->x[3];
        if ((long)cap <= 0) return -EINVAL;
        if (n > cap) n = cap;
        memcpy((void *)s->x[2], P.exe, n);
        return (long)n;
    }
    return HSYS(SYS_readlinkat, s);
}

static long sys_openat(NxCpu *s) {
    const char *p = (const char *)s->x[1];
    char buf[4096];
    if (is_self_exe(p)) p = P.exe;
    else p = sysroot_path(p, buf, sizeof buf);
    long r = hsys6(SYS_openat, (long)s->x[0], (long)p, flags_to_host(s->x[2]), (long)s->x[3], 0, 0);
    if (r >= 0 && D.nlib) {
        int i = lib_of_fd(r);
        pthread_mutex_lock(&P.lock);
        if (i >= 0) D.pending = i;
        pthread_mutex_unlock(&P.lock);
    }
    return r;
}

static long sys_fcntl(NxCpu *s) {
    long fd = (long)s->x[0], cmd = (long)s->x[1];
    if (cmd == F_GETFL) {
        long r = hsys6(SYS_fcntl, fd, cmd, 0, 0, 0, 0);
        return r < 0 ? r : flags_to_guest(r);
    }
    if (cmd == F_SETFL) return hsys6(SYS_fcntl, fd, cmd, flags_to_host(s->x[2]), 0, 0, 0);
    return HSYS(SYS_fcntl, s);
}

static long sys_uname(NxCpu *s) {
    struct utsname u;
    long r = hsys6(SYS_uname, (long)&u, 0, 0, 0, 0, 0);
    if (r < 0) return r;
    memset(u.machine, 0, sizeof u.machine);
    strcpy(u.machine, "aarch64");
    memcpy((void *)s->x[0], &u, sizeof u);
    return 0;
}

static long sys_prctl(NxCpu *s) {
    switch (s->x[0]) {
    case 15: /* PR_SET_NAME */ case 16: /* PR_GET_NAME */ case 1: /* PR_SET_PDEATHSIG */
    case 2: /* PR_GET_PDEATHSIG */ case 3: /* PR_GET_DUMPABLE */ case 4: /* PR_SET_DUMPABLE */
    case 36: /* PR_SET_CHILD_SUBREAPER */ case 37: /* PR_GET_CHILD_SUBREAPER */
    case 38: /* PR_SET_NO_NEW_PRIVS */ case 39: /* PR_GET_NO_NEW_PRIVS */
        return HSYS(SYS_prctl, s);
    default:
        return -EINVAL;
    }
}

/* -- execve: of the guest program itself (busybox runs its applets as
 * execve("/proc/self/exe", ["cat", ...])), the host re-runs its runner with the new guest
 * argv after the prefix the runner gave.  Any other path goes to the host's execve with the
 * guest's argv and envp (guest addresses are host addresses), as under qemu-aarch64: the mask
 * and the ignored dispositions the new program inherits are the guest's (host_setmask and
 * host_dispose keep the host's equal to them). -- */
#define MAX_PREFIX 16
static char *self_exec[MAX_PREFIX + 1];

void nx_linux_set_self_exec(const char *const *prefix, int n) {
    if (n > MAX_PREFIX) n = MAX_PREFIX;
    for (int i = 0; i < MAX_PREFIX + 1; i++) {
        free(self_exec[i]);
        self_exec[i] = i < n ? strdup(prefix[i]) : NULL;
    }
}

static long sys_execve(NxCpu *s) {
    const char *path = (const char *)s->x[0];
    char *const *gargv = (char *const *)s->x[1];
    char *const *genv = (char *const *)s->x[2];
    int self = is_self_exe(path) || (P.exe[0] && path && strcmp(path, P.exe) == 0);
    if (!self) {
        fflush(NULL);
        if (P.exit_hook) P.exit_hook(-1);   /* -1: not an exit, but logs must be flushed */
        return hsys6(SYS_execve, (long)path, (long)gargv, (long)genv, 0, 0, 0);
    }
    if (!self_exec[0]) {
        lg(20, "execve(\"%s\") of the guest program: the runner gave no way to run it again: -ENOENT", path);
        return -ENOENT;
    }
    int np = 0, na = 0;
    while (self_exec[np]) np++;
    while (gargv && gargv[na]) na++;
    char **argv = calloc((size_t)(np + na + 1), sizeof(char *));
    if (!argv) return -ENOMEM;
    for (int i = 0; i < np; i++) argv[i] = self_exec[i];
    for (int i = 0; i < na; i++) argv[np + i] = gargv[i];
    fflush(NULL);
    if (P.exit_hook) P.exit_hook(-1);   /* -1: not an exit, but logs must be flushed */
    long r = hsys6(SYS_execve, (long)argv[0], (long)argv, (long)genv, 0, 0, 0);
    free(argv);
    return r;
}

/* ppoll and pselect6 with a signal mask: the host gets it in host numbers (g2h). */
static long sys_masked_wait(NxCpu *s, uint64_t nr) {
    uint64_t g, h;
    if (nr == A64_ppoll) {
        if (!s->x[3] || s->x[4] != 8) return HSYS(SYS_ppoll, s);
        memcpy(&g, (void *)s->x[3], 8);
        h = mask_g2h((g | ME->pend) & ~OWNED_MASK);
        return hsys6(SYS_ppoll, (long)s->x[0], (long)s->x[1], (long)s->x[2], (long)&h, 8, 0);
    }
    uint64_t d[2];
    if (!s->x[5]) return HSYS(SYS_pselect6, s);
    memcpy(d, (void *)s->x[5], 16);
    if (!d[0] || d[1] != 8) return HSYS(SYS_pselect6, s);
    memcpy(&g, (void *)d[0], 8);
    h = mask_g2h((g | ME->pend) & ~OWNED_MASK);
    uint64_t hd[2] = {(uint64_t)(uintptr_t)&h, 8};
    return hsys6(SYS_pselect6, (long)s->x[0], (long)s->x[1], (long)s->x[2], (long)s->x[3], (long)s->x[4], (long)hd);
}

/* epoll (Go's network poller, also for files): struct epoll_event is { u32 events; u64 data }
 * with the u64's natural alignment on arm64 (16 bytes, data at 8) and packed on x86-64 (12
 * bytes, data at 4: the kernel's uapi eventpoll.h packs it there only), so epoll_ctl's event
 * and epoll_pwait's array are converted; epoll_pwait's signal mask as ppoll's.  At most
 * EPOLL_BATCH events a wait (epoll_wait may return fewer than maxevents). */
struct __attribute__((packed)) host_epoll_event { uint32_t events; uint64_t data; };
#define EPOLL_BATCH 256
static long sys_epoll_ctl(NxCpu *s) {
    struct host_epoll_event h, *hp = NULL;
    if (s->x[3]) {
        memcpy(&h.events, (void *)s->x[3], 4);
        memcpy(&h.data, (void *)(s->x[3] + 8), 8);
        hp = &h;
    }
    return hsys6(SYS_epoll_ctl, (long)s->x[0], (long)s->x[1], (long)s->x[2], (long)hp, 0, 0);
}
static long sys_epoll_pwait(NxCpu *s) {
    int n = (int)s->x[2];
    if (n <= 0) return -EINVAL;
    if (n > EPOLL_BATCH) n = EPOLL_BATCH;
    struct host_epoll_event h[EPOLL_BATCH];
    uint64_t g, hm, *mp = NULL;
    if (s->x[4]) {
        if (s->x[5] != 8) return -EINVAL;
        memcpy(&g, (void *)s->x[4], 8);
        hm = mask_g2h((g | ME->pend) & ~OWNED_MASK);
        mp = &hm;
    }
    long r = hsys6(SYS_epoll_pwait, (long)s->x[0], (long)h, n, (long)(int)s->x[3], (long)mp, mp ? 8 : 0);
    for (long i = 0; i < r; i++) {
        memcpy((void *)(s->x[1] + 16 * i), &h[i].events, 4);
        memcpy((void *)(s->x[1] + 16 * i + 8), &h[i].data, 8);
    }
    return r;
}

/* wait4: a child that died by a host real-time signal died by the guest's number for it */
static long sys_wait4(NxCpu *s) {
    long r = HSYS(SYS_wait4, s);
    if (r > 0 && s->x[1]) {
        int st;
        memcpy(&st, (void *)s->x[1], 4);
        int sig = st & 0x7f;
        if (sig && sig != 0x7f && h2g(sig) != sig) {
            st = (st & ~0x7f) | (h2g(sig) & 0x7f);
            memcpy((void *)s->x[1], &st, 4);
        }
    }
    return r;
}

/* rt_sigqueueinfo(pid, sig, info), rt_tgsigqueueinfo(tgid, tid, sig, info): to the calling
 * thread (or to the process, by a thread that does not block it: as kill above) recorded with
 * the sender's siginfo; else the host's call with the host's number (the kernel itself refuses
 * a si_code >= 0 or SI_TKILL towards another process). */
static long sys_sigqueue(NxCpu *s, uint64_t nr) {
    int tg = nr == A64_rt_tgsigqueueinfo;
    long pid = (long)(int32_t)s->x[0], tid = tg ? (long)(int32_t)s->x[1] : 0;
    int sig = (int)s->x[tg ? 2 : 1];
    uint64_t uinfo = s->x[tg ? 3 : 2];
    if (sig < 0 || sig > 64 || (sig && !g2h(sig))) return -EINVAL;
    siginfo_t si;
    memcpy(&si, (void *)uinfo, sizeof si);
    long host = tg && tid > 0 ? lx_host_tid_of(tid) : tid;
    int self = pid == getpid() && (tg ? host == ME->host_tid : !(sig && (ME->mask & BIT(sig))));
    if (self) return signal_self_info(sig, si.si_code, &si);
    si.si_signo = g2h(sig);
    return tg ? hsys6(SYS_rt_tgsigqueueinfo, pid, host, g2h(sig), (long)&si, 0, 0)
              : hsys6(SYS_rt_sigqueueinfo, pid, g2h(sig), (long)&si, 0, 0, 0);
}

static void unhandled(NxCpu *s, uint64_t nr) __attribute__((noreturn));
static void unhandled(NxCpu *s, uint64_t nr) {
    const char *name = nr < A64_MAX_NR && a64_names[nr] ? a64_names[nr] : "unknown";
    fprintf(stderr, "nxrecomp: unhandled system call %llu (%s) at pc %#llx\n", (unsigned long long)nr, name,
            (unsigned long long)(s->pc - 4));
    fflush(stderr);
    if (P.exit_hook) P.exit_hook(125);
    hsys6(SYS_exit_group, 125, 0, 0, 0, 0, 0);
    for (;;) {}
}

static long syscall_body(NxCpu *s, uint64_t nr) {
    long r;
    /* the hot paths first, straight to the host */
    if (nr == A64_write) return HSYS(SYS_write, s);
    if (nr == A64_read) return HSYS(SYS_read, s);
    switch (nr) {
    /* same arguments and layouts on both: forwarded as they are */
#define FWD(a64, host) case A64_##a64: r = HSYS(SYS_##host, s); break;
    FWD(readv, readv) FWD(writev, writev) FWD(pread64, pread64) FWD(pwrite64, pwrite64)
    FWD(preadv, preadv) FWD(pwritev, pwritev) FWD(lseek, lseek) FWD(close, close) FWD(dup, dup)
    FWD(dup3, dup3) FWD(getcwd, getcwd) FWD(chdir, chdir) FWD(fchdir, fchdir) FWD(mkdirat, mkdirat)
    FWD(unlinkat, unlinkat) FWD(renameat, renameat) FWD(renameat2, renameat2) FWD(fchmodat, fchmodat)
    FWD(fchmod, fchmod) FWD(fchownat, fchownat) FWD(fchown, fchown) FWD(utimensat, utimensat)
    FWD(ftruncate, ftruncate) FWD(truncate, truncate) FWD(fsync, fsync) FWD(fdatasync, fdatasync)
    FWD(sync, sync) FWD(syncfs, syncfs) 
    FWD(symlinkat, symlinkat) FWD(linkat, linkat) FWD(mknodat, mknodat) FWD(getdents64, getdents64)
    FWD(statfs, statfs) FWD(fstatfs, fstatfs) FWD(flock, flock)
    FWD(fallocate, fallocate) FWD(fadvise64, fadvise64) FWD(sendfile, sendfile) FWD(splice, splice)
    FWD(tee, tee) FWD(copy_file_range, copy_file_range) FWD(close_range, close_range)
    FWD(memfd_create, memfd_create)
    FWD(getpid, getpid) FWD(getppid, getppid) FWD(getuid, getuid)
    FWD(geteuid, geteuid) FWD(getgid, getgid) FWD(getegid, getegid) FWD(setuid, setuid)
    FWD(setgid, setgid) FWD(setreuid, setreuid) FWD(setregid, setregid) FWD(setresuid, setresuid)
    FWD(setresgid, setresgid) FWD(getresuid, getresuid) FWD(getresgid, getresgid)
    FWD(setfsuid, setfsuid) FWD(setfsgid, setfsgid) FWD(getgroups, getgroups) FWD(setgroups, setgroups)
    FWD(getpgid, getpgid) FWD(setpgid, setpgid) FWD(getsid, getsid) FWD(setsid, setsid)
    FWD(getpriority, getpriority) FWD(setpriority, setpriority)
    FWD(prlimit64, prlimit64) FWD(getrlimit, getrlimit) FWD(setrlimit, setrlimit) FWD(getrusage, getrusage)
    FWD(sched_getaffinity, sched_getaffinity) FWD(sched_setaffinity, sched_setaffinity)
    FWD(sched_yield, sched_yield) FWD(sched_getparam, sched_getparam)
    FWD(sched_getscheduler, sched_getscheduler) FWD(sched_get_priority_max, sched_get_priority_max)
    FWD(sched_get_priority_min, sched_get_priority_min) FWD(getcpu, getcpu)
    FWD(waitid, waitid) FWD(futex, futex) FWD(nanosleep, nanosleep)
    FWD(clock_nanosleep, clock_nanosleep)
    FWD(clock_getres, clock_getres) FWD(times, times)
    FWD(sysinfo, sysinfo) FWD(umask, umask)
    FWD(getitimer, getitimer) FWD(setitimer, setitimer)
    FWD(socket, socket) FWD(socketpair, socketpair) FWD(bind, bind) FWD(listen, listen)
    FWD(accept, accept) FWD(accept4, accept4) FWD(connect, connect) FWD(getsockname, getsockname)
    FWD(getpeername, getpeername) FWD(sendto, sendto) FWD(recvfrom, recvfrom)
    FWD(setsockopt, setsockopt) FWD(getsockopt, getsockopt) FWD(shutdown, shutdown)
    FWD(sendmsg, sendmsg) FWD(recvmsg, recvmsg) FWD(eventfd2, eventfd2)
    FWD(timerfd_create, timerfd_create) FWD(timerfd_settime, timerfd_settime)
    FWD(timerfd_gettime, timerfd_gettime) FWD(membarrier, membarrier)
#undef FWD
    case A64_clock_gettime:   /* struct timespec: seconds, nanoseconds */
        if (deterministic()) r = deterministic_time((int64_t *)s->x[1], 1);
        else r = HSYS(SYS_clock_gettime, s);
        break;
    case A64_gettimeofday:    /* struct timeval: seconds, microseconds; struct timezone: UTC */
        if (deterministic()) {
            r = s->x[0] ? deterministic_time((int64_t *)s->x[0], 1000) : 0;
            if (s->x[1]) memset((void *)s->x[1], 0, 8);
        } else {
            r = HSYS(SYS_gettimeofday, s);
        }
        break;
    case A64_getrandom:
        /* NXRECOMP_DETERMINISTIC=1 (lockstep traces): fixed bytes, so two runs of one
         * program see the same malloc keys and hash seeds */
        if (deterministic()) {
            memset((void *)s->x[0], 0x5a, (size_t)s->x[1]);
            r = (long)s->x[1];
        } else {
            r = HSYS(SYS_getrandom, s);
        }
        break;
    case A64_ppoll: case A64_pselect6: r = sys_masked_wait(s, nr); break;
    case A64_epoll_create1: r = HSYS(SYS_epoll_create1, s); break;
    case A64_epoll_ctl: r = sys_epoll_ctl(s); break;
    case A64_epoll_pwait: r = sys_epoll_pwait(s); break;
    case A64_wait4: r = sys_wait4(s); break;
    case A64_openat: r = sys_openat(s); break;
    case A64_faccessat: case A64_faccessat2: case A64_statx: {   /* path in x1: through the sysroot */
        char buf[4096];
        const char *p = sysroot_path((const char *)s->x[1], buf, sizeof buf);
        long host = nr == A64_faccessat ? SYS_faccessat : nr == A64_statx ? SYS_statx : 439 /* faccessat2 */;
        r = hsys6(host, (long)s->x[0], (long)p, (long)s->x[2], (long)s->x[3], (long)s->x[4], 0);
        break;
    }
    case A64_pipe2: r = hsys6(SYS_pipe2, (long)s->x[0], flags_to_host(s->x[1]), 0, 0, 0, 0); break;
    case A64_fcntl: r = sys_fcntl(s); break;
    case A64_ioctl: r = sys_ioctl(s); break;
    case A64_readlinkat: r = sys_readlinkat(s); break;
    case A64_fstat: {
        struct stat st;
        r = hsys6(SYS_fstat, (long)s->x[0], (long)&st, 0, 0, 0, 0);
        if (r == 0) stat_to_guest(&st, s->x[1]);
        break;
    }
    case A64_newfstatat: {
        struct stat st;
        const char *p = (const char *)s->x[1];
        char buf[4096];
        if (is_self_exe(p)) p = P.exe;
        else p = sysroot_path(p, buf, sizeof buf);
        r = hsys6(SYS_newfstatat, (long)s->x[0], (long)p, (long)&st, (long)s->x[3], 0, 0);
        if (r == 0) stat_to_guest(&st, s->x[2]);
        break;
    }
    case A64_uname: r = sys_uname(s); break;
    case A64_brk: r = (long)sys_brk(s->x[0]); break;
    case A64_mmap: r = sys_mmap(s); break;
    case A64_munmap: r = sys_munmap(s); break;
    case A64_mremap: r = sys_mremap(s); break;
    case A64_mprotect: r = sys_mprotect(s); break;
    case A64_madvise: r = guarded(s, SYS_madvise); break;
    case A64_msync: r = guarded(s, SYS_msync); break;
    case A64_mincore: r = guarded(s, SYS_mincore); break;
    case A64_mlock: r = guarded(s, SYS_mlock); break;
    case A64_munlock: r = guarded(s, SYS_munlock); break;
    case A64_set_tid_address:
        ME->clear_child_tid = s->x[0];
        r = ME->guest_tid;
        break;
    case A64_set_robust_list:
        if (s->x[1] != 24) { r = -EINVAL; break; }
        P.robust_list = s->x[0]; P.robust_len = s->x[1];
        r = 0;
        break;
    case A64_get_robust_list: r = -ENOSYS; break;
    case A64_rseq: r = -ENOSYS; break;
    case A64_rt_sigaction: r = sys_rt_sigaction(s); break;
    case A64_rt_sigprocmask: r = sys_rt_sigprocmask(s); break;
    case A64_rt_sigpending: r = sys_rt_sigpending(s); break;
    case A64_rt_sigtimedwait: r = sys_rt_sigtimedwait(s); break;
    case A64_rt_sigsuspend: r = sys_rt_sigsuspend(s); break;
    case A64_rt_sigreturn: sys_rt_sigreturn(s);
    case A64_sigaltstack: r = sys_sigaltstack(s); break;
    case A64_kill: {
        long pid = (long)(int32_t)s->x[0];
        int sig = (int)s->x[1];
        /* to itself: recorded for the calling thread, to be delivered at this call's return,
         * unless the thread blocks the signal: then the host kernel keeps it for the process
         * (queued, for a real-time one) and picks the thread that takes it, as Linux does (host
         * masks are the guest threads' masks) */
        int elsewhere = sig > 0 && sig <= 64 && (ME->mask & BIT(sig));
        if (sig < 0 || sig > 64 || (sig && !g2h(sig))) r = -EINVAL;
        else if (pid == getpid() && !elsewhere) r = signal_self(sig, 0 /* SI_USER */);
        else r = hsys6(SYS_kill, pid, g2h(sig), 0, 0, 0, 0);
        break;
    }
    case A64_gettid: r = ME->guest_tid; break;
    case A64_rt_sigqueueinfo: case A64_rt_tgsigqueueinfo: r = sys_sigqueue(s, nr); break;
    case A64_tkill: case A64_tgkill: {
        /* guest thread ids are host ones, but for the main thread's (the process id) */
        long tid = (long)(int32_t)(nr == A64_tgkill ? s->x[1] : s->x[0]);
        int sig = (int)(nr == A64_tgkill ? s->x[2] : s->x[1]);
        long host = tid > 0 ? lx_host_tid_of(tid) : tid;
        if (sig < 0 || sig > 64 || (sig && !g2h(sig))) r = -EINVAL;
        else if (host == ME->host_tid && (nr == A64_tkill || (long)(int32_t)s->x[0] == getpid()))
            r = signal_self(sig, -6 /* SI_TKILL */);
        else if (nr == A64_tgkill) r = hsys6(SYS_tgkill, (long)s->x[0], host, g2h(sig), 0, 0, 0);
        else r = hsys6(SYS_tkill, host, g2h(sig), 0, 0, 0, 0);
        break;
    }
    case A64_clone: r = sys_clone(s); break;
    case A64_clone3: r = -ENOSYS; break;   /* glibc falls back to clone */
    case A64_execve: r = sys_execve(s); break;
    case A64_execveat:
        lg(20, "execveat is not supported: -ENOENT");
        r = -ENOENT;
        break;
    case A64_exit: lx_exit_thread((int)(s->x[0] & 0xff));
    case A64_exit_group: do_exit((int)(s->x[0] & 0xff));
    case A64_prctl: r = sys_prctl(s); break;
    case A64_personality: r = s->x[0] == 0xffffffffull ? 0 : -EINVAL; break;
    default: unhandled(s, nr);
    }
    return r;
}

#pragma weak nx_set_svc_handler
/* Loading a Linux program's game.so makes its SVCs system calls (no other personality is in
 * it); a test harness without dispatch.c calls nx_linux_syscall itself. */
__attribute__((constructor)) static void linux_personality(void) {
    if (nx_set_svc_handler) nx_set_svc_handler(nx_linux_syscall);
}

void nx_linux_syscall(NxCpu *s, uint32_t imm) {
    (void)imm;
    if (__builtin_expect(!ME, 0)) {   /* the first call, or a host thread no clone started (a harness's) */
        if (!P.inited) init_once(s);
        else lx_threads_init(s);
    }
    for (;;) {
        uint64_t nr = s->x[8];
        long r = syscall_body(s, nr);
        if (__builtin_expect(!ME->pend, 1)) { s->x[0] = (uint64_t)r; return; }
        if (!after_signal(s, nr, r)) return;   /* else interrupted and restarted */
    }
}
