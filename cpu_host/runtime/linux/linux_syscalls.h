/* linux_syscalls.h — the Linux AArch64 user-mode personality (test programs: Debian's arm64
 * busybox-static, lua5.4): its SVC handler, and the setters the runner (cpu_host/runner.py,
 * cpu_host/launcher/launcher.c) calls before the guest starts. */
#ifndef NX_LINUX_SYSCALLS_H
#define NX_LINUX_SYSCALLS_H
#include <stdint.h>
#include "nxrt.h"

/* SVC #imm of a Linux program: the system call in X8 (the handler from the moment game.so is
 * loaded: the Linux personality is the only one linked into a Linux program). */
void nx_linux_syscall(NxCpu *s, uint32_t imm);

/* The program break: [start, start + reserve).  The personality reserves the range itself
 * (PROT_NONE, no swap) and opens pages as brk grows; if the range is already mapped by the
 * runner, it is used as it is. Returns 0, or -errno when the range cannot be reserved. */
int nx_linux_set_brk(uint64_t start, uint64_t reserve);

/* The guest program's path: readlinkat("/proc/self/exe") answers it, openat of it opens it. */
void nx_linux_set_exe(const char *path);

/* Guest memory the runner mapped (segments, stack): munmap/mprotect/MAP_FIXED are allowed
 * only inside guest memory (this, brk and what the guest mmapped), never over host memory. */
void nx_linux_add_mapping(uint64_t addr, uint64_t len);

/* execve of the guest program itself (/proc/self/exe or the path given above) runs the host
 * program prefix[0] with argv = prefix + the guest's argv (argv[0] included) and the guest's
 * environment: the runner passes the command line that starts it again on the same program.
 * Without it (or for any other path) execve answers -ENOENT. */
void nx_linux_set_self_exec(const char *const *prefix, int n);

/* Called with the exit status just before the process exits, and with -1 just before a
 * successful execve replaces it (flush logs there). */
void nx_linux_set_exit_hook(void (*hook)(int status));

/* Where log lines go (level: 10 debug, 20 info, 30 warning).  Unset: warnings to stderr,
 * the rest dropped (quiet by default, so guest output stays byte-identical to qemu). */
void nx_linux_set_log_hook(void (*hook)(int level, const char *msg));

/* A dynamically linked program (glibc's ld.so runs as its interpreter): absolute paths the guest
 * opens or stats resolve under `dir` first (as qemu-aarch64 -L does); 0 or -ENOTDIR. */
int nx_linux_set_sysroot(const char *dir);

/* A library the bundle lifted at [base, base + span) (its PT_LOADs' span; `align` its largest
 * p_align): ld.so's first mapping of the file at `path` (checked to be `size` bytes) is placed
 * at `base`.  0, or -errno (-EBADF: the file is not `size` bytes). */
int nx_linux_add_library(uint64_t base, uint64_t span, uint64_t align, uint64_t size, const char *path);

/* Name of AArch64 system call n ("read"), or NULL. */
const char *nx_linux_syscall_name(uint32_t n);

#endif
