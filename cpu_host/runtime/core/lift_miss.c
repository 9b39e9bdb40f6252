/* lift_miss.c — lift on miss: a branch at run time to an address with no lifted code lifts
 * the function that starts there instead of stopping the program.
 *
 * The recompiler's analysis, lifter and C compiler are Python programs; this process may have
 * no Python in it (the native launcher), so the work is done by a helper process,
 * ``python -m cpu_host.lift_on_miss BUNDLE ADDR`` (cpu_host/lift_on_miss.py), which analyses
 * the function at ADDR in the bundle's image, lifts it, compiles it into a small shared object
 * exporting its own rows (``nx_lift_entries``/``nx_lift_entry_count``), appends ADDR to the
 * bundle's discovered entries (the next build lifts it statically) and prints one result line.
 * This file runs the helper, dlopen()s the object and enters its rows into the overlay table.
 *
 * The overlay is an immutable sorted array of NxEntry published by one pointer: readers (every
 * dispatch that missed nx_entries, and nx_ic_fill) take it with an acquire load and search it
 * without a lock; a writer (one at a time: lift_lock) builds the next array and publishes it
 * with a release store.  Arrays are never freed: a reader may still be searching an old one,
 * and inline caches (lifted.h NX_IC) point at rows.  A thread that misses while another lifts
 * waits on lift_lock and then finds the address in the overlay (two threads missing the same
 * address lift it once); other threads go on running meanwhile.
 *
 * The lifted object refers to the runtime's functions (nx_call_ind, nx_jump, nx_svc...) by
 * name, and game.so was loaded RTLD_LOCAL: before the first object is loaded, game.so is
 * promoted to the global scope (dlopen RTLD_NOLOAD | RTLD_GLOBAL of itself).  The lifted
 * function's calls of other guest functions go through the runtime's dispatch (the shards'
 * symbols are hidden), with the inline caches of any indirect call.
 *
 * The helper is started with clone(CLONE_VM | CLONE_VFORK) and no exit signal: it is a
 * "clone" child, so the guest's own wait()/waitpid(-1) never reaps it and no SIGCHLD reaches
 * the guest (clone(2), wait(2) __WCLONE/__WALL).
 *
 * Code generated at run time (a JIT's output in memory the program mapped executable: the Linux
 * personality's nx_generated_code_region) is lifted from a copy of that memory as it is at the
 * miss (``--generated BASE FILE``); the lifted code compares the guest's bytes with the ones it
 * was lifted from at each entry and, where they changed, calls nx_generated_stale and jumps to
 * its own address again.  Nothing of it goes into the bundle's discovered entries.
 *
 * Settings: cpu_host.lift_on_miss (env NXRECOMP_CPU_HOST_LIFT_ON_MISS, read here; the Python
 * runners pass the settings table's value on).  Off, a miss is today's fatal error naming it.
 * cpu_host.generated_code (NXRECOMP_CPU_HOST_GENERATED_CODE): off, a branch into generated code
 * is a fatal error naming it. */
#define _GNU_SOURCE 1
#include "lift_miss.h"
#include <dlfcn.h>
#include <link.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;
void nx_die(NxCpu *s, const char *what, uint64_t pc, uint64_t extra) __attribute__((noreturn));
NxFn nx_lookup(uint64_t addr, uint32_t *kind);

typedef struct Overlay {
    uint64_t count;
    NxEntry rows[];
} Overlay;

static Overlay *overlay;                /* published array (acquire/release), or NULL */
static pthread_mutex_t lift_lock = PTHREAD_MUTEX_INITIALIZER;
/* Publishing a new overlay array (a lift's rows in, an unmap's rows out): a leaf lock, held
 * briefly.  The kernel drops rows under its own lock (nx_lift_forget) while a lift may hold
 * lift_lock for minutes and ask the kernel (nx_loaded_code_region): that order needs this one. */
static pthread_mutex_t overlay_lock = PTHREAD_MUTEX_INITIALIZER;
static uint64_t lift_count;             /* run-time lifts of this process */
static uint64_t lift_waits;             /* misses that found another thread's lift done */
static uint64_t lift_loaded;            /* of lift_count: in code the program mapped at run time */
static uint64_t lift_generated;         /* of lift_count: in code the program generated at run time */
static uint64_t gen_stale;              /* generated code found rewritten after it was lifted */
static uint64_t gen_reused;             /* generated code back as it was lifted before: rows entered again */
/* The objects lifted from generated code (under lift_lock): a JIT that writes the same code at
 * the same address again (a pattern compiled anew into reused memory, an A-B-A rewrite) gets
 * the rows back without the helper. */
#define MAX_GEN_OBJS 512
static struct { uint64_t entry, lo, len; const unsigned char *bytes; const NxEntry *rows; uint64_t n; } gen_objs[MAX_GEN_OBJS];
static int n_gen_objs;
static uint64_t lifted_addrs[16];       /* the first few, for the exit summary */

/* What nx_lift_setup was given: the bundle folder and the helper's interpreter and path. */
static char *cfg_bundle, *cfg_python, *cfg_pythonpath;
/* KEY=VALUE for the helper where the environment has no KEY (nx_lift_add_env): the cache
 * folders of the host that set the bundle up, so a guest started with another HOME (or none)
 * still finds the compiler's and the lifter's caches. */
#define MAX_LIFT_ENV 16
static char *cfg_env[MAX_LIFT_ENV];
static int cfg_nenv;

const NxEntry *nx_overlay_find(uint64_t addr) {
    const Overlay *o = __atomic_load_n(&overlay, __ATOMIC_ACQUIRE);
    if (!o) return NULL;
    uint64_t lo = 0, hi = o->count;
    while (lo < hi) {
        uint64_t mid = (lo + hi) >> 1;
        if (o->rows[mid].addr < addr) lo = mid + 1; else hi = mid;
    }
    return lo < o->count && o->rows[lo].addr == addr ? &o->rows[lo] : NULL;
}

/* Code the program mapped at run time (the Horizon kernel's MapProcessCodeMemory: a homebrew
 * loader's NRO): the mapping holding addr, and its pieces as "offset:size:perm" words.  The
 * kernel of the personality defines it; without one (Linux) nothing is such code. */
__attribute__((weak)) int nx_loaded_code_region(uint64_t addr, uint64_t *base, uint64_t *size, char *segs, size_t n) {
    (void)addr; (void)base; (void)size; (void)segs; (void)n;
    return 0;
}

/* Code generated at run time (the Linux personality's executable mappings): the window of the
 * generated-code memory holding addr to copy for the lifter.  None without such a personality. */
__attribute__((weak)) int nx_generated_code_region(uint64_t addr, uint64_t *base, uint64_t *size) {
    (void)addr; (void)base; (void)size;
    return 0;
}
/* why a target that is no code of the program is no generated code either (the fatal error) */
__attribute__((weak)) void nx_generated_code_why(uint64_t addr, char *buf, size_t n) {
    (void)addr;
    if (n) buf[0] = 0;
}

/* The rows of [lo, hi) leave the overlay: the pages they were lifted from were unmapped (a
 * loader's UnmapProcessCodeMemory), so whatever is mapped there next is lifted anew.  Old arrays
 * stay (a reader may be searching one); an inline cache that still holds a dropped row is
 * checked against its address only, so code mapped again at the very same address could reach
 * the old row through it: loaders choose a new random address for every load. */
void nx_lift_forget(uint64_t lo, uint64_t hi) {
    pthread_mutex_lock(&overlay_lock);
    const Overlay *old = __atomic_load_n(&overlay, __ATOMIC_ACQUIRE);
    if (old) {
        Overlay *o = malloc(sizeof *o + old->count * sizeof(NxEntry));
        if (o) {
            uint64_t k = 0;
            for (uint64_t i = 0; i < old->count; i++)
                if (old->rows[i].addr < lo || old->rows[i].addr >= hi) o->rows[k++] = old->rows[i];
            o->count = k;
            __atomic_store_n(&overlay, o, __ATOMIC_RELEASE);
        }
    }
    pthread_mutex_unlock(&overlay_lock);
}

void nx_generated_stale(NxCpu *s, uint64_t lo, uint64_t hi) {
    __atomic_fetch_add(&gen_stale, 1, __ATOMIC_RELAXED);
    nx_lift_forget(lo, hi);
    nx_thread_forget(s, lo, hi);
}

/* The executable segments of the objects loaded here (append-only: the spin probe's signal
 * handler reads them without a lock, horizon_spin.c). */
#define MAX_LIFT_TEXTS 1024
static struct { uintptr_t lo, hi; } lift_texts[MAX_LIFT_TEXTS];
static int n_lift_texts;

static int note_text(struct dl_phdr_info *info, size_t size, void *data) {
    (void)size;
    const char *want = data;
    if (!info->dlpi_name || strcmp(info->dlpi_name, want)) return 0;
    for (int i = 0; i < info->dlpi_phnum && n_lift_texts < MAX_LIFT_TEXTS; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type == PT_LOAD && (ph->p_flags & PF_X)) {
            lift_texts[n_lift_texts].lo = info->dlpi_addr + ph->p_vaddr;
            lift_texts[n_lift_texts].hi = info->dlpi_addr + ph->p_vaddr + ph->p_memsz;
            __atomic_store_n(&n_lift_texts, n_lift_texts + 1, __ATOMIC_RELEASE);
        }
    }
    return 1;
}

/* Whether host pc lies in an object lifted at run time; *hi: the end of its executable segment,
 * *guest: the guest address of the overlay row whose host function starts closest below it.
 * Async-signal-safe (no lock). */
int nx_lift_text_find(uintptr_t pc, uint64_t *guest, uintptr_t *hi) {
    int n = __atomic_load_n(&n_lift_texts, __ATOMIC_ACQUIRE), in = 0;
    for (int i = 0; i < n && !in; i++)
        if (lift_texts[i].lo <= pc && pc < lift_texts[i].hi) { in = 1; *hi = lift_texts[i].hi; }
    if (!in) return 0;
    const Overlay *o = __atomic_load_n(&overlay, __ATOMIC_ACQUIRE);
    uintptr_t best = 0;
    *guest = 0;
    for (uint64_t i = 0; o && i < o->count; i++) {
        uintptr_t f = (uintptr_t)o->rows[i].fn;
        if (f <= pc && f > best) { best = f; *guest = o->rows[i].addr; }
    }
    return 1;
}

static char *dup_or_null(const char *p) { return p && *p ? strdup(p) : NULL; }

void nx_lift_setup(const char *bundle, const char *python, const char *pythonpath) {
    pthread_mutex_lock(&lift_lock);
    free(cfg_bundle); free(cfg_python); free(cfg_pythonpath);
    cfg_bundle = dup_or_null(bundle);
    cfg_python = dup_or_null(python);
    cfg_pythonpath = dup_or_null(pythonpath);
    pthread_mutex_unlock(&lift_lock);
}

int nx_lift_add_env(const char *kv) {
    if (!kv || !strchr(kv, '=') || *kv == '=') return -1;
    pthread_mutex_lock(&lift_lock);
    int ok = cfg_nenv < MAX_LIFT_ENV && (cfg_env[cfg_nenv] = strdup(kv)) != NULL;
    if (ok) cfg_nenv++;
    pthread_mutex_unlock(&lift_lock);
    return ok ? 0 : -1;
}

static int env_has(char *const *env, size_t n, const char *kv) {
    size_t k = (size_t)(strchr(kv, '=') - kv) + 1;
    for (size_t i = 0; i < n; i++)
        if (env[i] && !strncmp(env[i], kv, k)) return 1;
    return 0;
}

/* cpu_host.lift_on_miss: unset means on. */
static int lift_enabled(void) {
    const char *v = getenv("NXRECOMP_CPU_HOST_LIFT_ON_MISS");
    if (!v) return 1;
    return !(!strcmp(v, "0") || !strcasecmp(v, "off") || !strcasecmp(v, "false") || !strcasecmp(v, "no"));
}

/* cpu_host.generated_code: unset means on. */
static int generated_enabled(void) {
    const char *v = getenv("NXRECOMP_CPU_HOST_GENERATED_CODE");
    if (!v) return 1;
    return !(!strcmp(v, "0") || !strcasecmp(v, "off") || !strcasecmp(v, "false") || !strcasecmp(v, "no"));
}

uint64_t nx_lift_count(void) { return __atomic_load_n(&lift_count, __ATOMIC_RELAXED); }

/* The exit summary (the Linux personality's exit hook, or the Horizon runner after the exit):
 * how many functions this process lifted at run time, and which. */
void nx_lift_report(int status) {
    (void)status;
    uint64_t n = nx_lift_count();
    if (!n) return;
    char buf[1024];
    int k = snprintf(buf, sizeof buf, "nxrecomp: run-time lifts: %llu (", (unsigned long long)n);
    for (uint64_t i = 0; i < n && i < 16 && k < (int)sizeof buf - 40; i++)
        k += snprintf(buf + k, sizeof buf - k, "%s%#llx", i ? " " : "", (unsigned long long)lifted_addrs[i]);
    k += snprintf(buf + k, sizeof buf - k, "%s)", n > 16 ? " ..." : "");
    uint64_t w = __atomic_load_n(&lift_waits, __ATOMIC_RELAXED);
    if (w) k += snprintf(buf + k, sizeof buf - k, "; %llu miss%s waited for another thread's lift",
                         (unsigned long long)w, w == 1 ? "" : "es");
    uint64_t g = __atomic_load_n(&lift_generated, __ATOMIC_RELAXED);
    uint64_t st = __atomic_load_n(&gen_stale, __ATOMIC_RELAXED);
    if (g) k += snprintf(buf + k, sizeof buf - k, "; %llu in code generated at run time (not noted for the next "
                         "build)", (unsigned long long)g);
    if (st) k += snprintf(buf + k, sizeof buf - k, "; generated code rewritten after its lift %llu time%s",
                          (unsigned long long)st, st == 1 ? "" : "s");
    uint64_t ru = __atomic_load_n(&gen_reused, __ATOMIC_RELAXED);
    if (ru) k += snprintf(buf + k, sizeof buf - k, "; generated code back to bytes lifted before %llu time%s (their "
                          "rows entered again, no lift)", (unsigned long long)ru, ru == 1 ? "" : "s");
    n -= g;   /* what is left: the program's own code, or code loaded at run time */
    uint64_t l = __atomic_load_n(&lift_loaded, __ATOMIC_RELAXED);
    if (!n) k += snprintf(buf + k, sizeof buf - k, "\n");
    else if (l == n) k += snprintf(buf + k, sizeof buf - k, "; all in code loaded at run time (cached objects next run)\n");
    else if (l) k += snprintf(buf + k, sizeof buf - k, "; %llu in code loaded at run time; the next build lifts the "
                              "others statically\n", (unsigned long long)l);
    else k += snprintf(buf + k, sizeof buf - k, "; the next build lifts them statically\n");
    if (write(2, buf, (size_t)k) < 0) {}
}

/* ---- the helper process ------------------------------------------------------------------ */
typedef struct Spawn {
    char *const *argv;
    char *const *envp;
    int out_fd, null_fd;
    sigset_t mask;          /* the thread's signal mask before every signal was blocked */
} Spawn;

/* Runs in the clone child, which shares this process's memory until execve: system calls only.
 * It starts with every signal blocked (as posix_spawn does): a handler of the guest's or the
 * runtime's must not run here, so caught signals go back to their defaults before the mask. */
static int spawn_child(void *p) {
    Spawn *sp = p;
    if (dup2(sp->null_fd, 0) < 0 || dup2(sp->out_fd, 1) < 0 || dup2(sp->out_fd, 2) < 0) _exit(127);
    syscall(SYS_close_range, 3u, ~0u, 0u);     /* the guest's descriptors stay the guest's */
    for (int sig = 1; sig < NSIG; sig++) {
        struct sigaction sa;
        if (sigaction(sig, NULL, &sa) == 0 && sa.sa_handler != SIG_DFL && sa.sa_handler != SIG_IGN) {
            sa.sa_handler = SIG_DFL;
            sa.sa_flags = 0;
            sigaction(sig, &sa, NULL);
        }
    }
    sigprocmask(SIG_SETMASK, &sp->mask, NULL);
    execve(sp->argv[0], sp->argv, sp->envp);
    _exit(127);
}

/* Run the helper for addr; its output (stdout and stderr) in *out (malloc'd, NUL-ended).
 * Returns its exit status, or -1 with *out describing why it could not run. */
static int run_helper(uint64_t addr, char *const *more, char **out) {
    char addr_s[32];
    snprintf(addr_s, sizeof addr_s, "%#llx", (unsigned long long)addr);
    char *argv[10] = {cfg_python, "-m", "cpu_host.lift_on_miss", cfg_bundle, addr_s, NULL};
    for (int i = 0; more && more[i] && i < 4; i++) argv[5 + i] = more[i];
    size_t n_env = 0;
    while (environ && environ[n_env]) n_env++;
    char **envp = calloc(n_env + 2 + MAX_LIFT_ENV, sizeof *envp);
    char *pp = NULL;
    if (!envp) { *out = strdup("out of memory"); return -1; }
    size_t j = 0;
    const char *old_pp = NULL;
    for (size_t i = 0; i < n_env; i++) {
        if (!strncmp(environ[i], "PYTHONPATH=", 11)) { old_pp = environ[i] + 11; continue; }
        envp[j++] = environ[i];
    }
    if (cfg_pythonpath) {
        size_t len = strlen(cfg_pythonpath) + (old_pp ? strlen(old_pp) + 1 : 0) + 16;
        pp = malloc(len);
        if (pp) {
            snprintf(pp, len, "PYTHONPATH=%s%s%s", cfg_pythonpath, old_pp && *old_pp ? ":" : "", old_pp ? old_pp : "");
            envp[j++] = pp;
        }
    }
    size_t n_own = j;
    for (int i = 0; i < cfg_nenv; i++)
        if (!env_has(envp, n_own, cfg_env[i])) envp[j++] = cfg_env[i];
    envp[j] = NULL;
    int fds[2];
    int null_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
    if (null_fd < 0 || pipe2(fds, O_CLOEXEC) != 0) {
        char msg[128];
        snprintf(msg, sizeof msg, "cannot make the helper's pipe: %s", strerror(errno));
        *out = strdup(msg);
        if (null_fd >= 0) close(null_fd);
        free(envp); free(pp);
        return -1;
    }
    Spawn sp = {argv, envp, fds[1], null_fd, {{0}}};
    size_t stack_size = 1 << 16;
    char *stack = malloc(stack_size);
    sigset_t all;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &sp.mask);
    pid_t pid = stack ? clone(spawn_child, stack + stack_size, CLONE_VM | CLONE_VFORK, &sp) : -1;
    int err = errno;
    pthread_sigmask(SIG_SETMASK, &sp.mask, NULL);
    free(stack);
    close(fds[1]);
    close(null_fd);
    free(envp); free(pp);
    if (pid < 0) {
        char msg[128];
        snprintf(msg, sizeof msg, "cannot start the helper: %s", strerror(err));
        *out = strdup(msg);
        close(fds[0]);
        return -1;
    }
    size_t cap = 4096, len = 0;
    char *buf = malloc(cap);
    for (;;) {
        if (buf && len + 1024 > cap && cap < (1u << 20)) {
            char *nb = realloc(buf, cap * 2);
            if (nb) { buf = nb; cap *= 2; }
        }
        char tmp[1024];
        ssize_t k = read(fds[0], tmp, sizeof tmp);
        if (k < 0 && errno == EINTR) continue;
        if (k <= 0) break;
        if (buf && len + (size_t)k < cap) { memcpy(buf + len, tmp, (size_t)k); len += (size_t)k; }
    }
    close(fds[0]);
    if (buf) buf[len] = 0;
    int st = 0;
    while (waitpid(pid, &st, __WALL) < 0 && errno == EINTR) {}
    *out = buf ? buf : strdup("");
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

/* The helper's result: its last line starting with "nxlift ". */
static const char *result_line(const char *out) {
    const char *last = NULL;
    for (const char *p = out; p && *p;) {
        if (!strncmp(p, "nxlift ", 7)) last = p;
        const char *nl = strchr(p, '\n');
        p = nl ? nl + 1 : NULL;
    }
    return last;
}

static int by_addr(const void *a, const void *b) {
    uint64_t x = ((const NxEntry *)a)->addr, y = ((const NxEntry *)b)->addr;
    return x < y ? -1 : x > y;
}

/* Publish the object's rows (those no table has yet) in a new overlay array. */
static int enter_rows(const NxEntry *rows, uint64_t n) {
    pthread_mutex_lock(&overlay_lock);
    const Overlay *old = __atomic_load_n(&overlay, __ATOMIC_ACQUIRE);
    uint64_t n_old = old ? old->count : 0;
    Overlay *o = malloc(sizeof *o + (n_old + n) * sizeof(NxEntry));
    if (!o) { pthread_mutex_unlock(&overlay_lock); return -1; }
    uint64_t k = 0;
    for (uint64_t i = 0; i < n_old; i++) o->rows[k++] = old->rows[i];
    for (uint64_t i = 0; i < n; i++) {
        uint32_t kind;
        if (nx_lookup(rows[i].addr, &kind)) continue;   /* nx_entries or the overlay has it */
        int dup = 0;
        for (uint64_t m = n_old; m < k; m++)
            if (o->rows[m].addr == rows[i].addr) {
                if (rows[i].kind == NX_ENTRY_FUNC) o->rows[m] = rows[i];   /* an entry over a resume point */
                dup = 1;
            }
        if (!dup) o->rows[k++] = rows[i];
    }
    o->count = k;
    qsort(o->rows, k, sizeof(NxEntry), by_addr);
    __atomic_store_n(&overlay, o, __ATOMIC_RELEASE);
    pthread_mutex_unlock(&overlay_lock);
    return 0;
}

/* game.so into the global scope, once: the lifted objects resolve the runtime's symbols there. */
static const char *promote_runtime(void) {
    static int done;
    if (done) return NULL;
    Dl_info di;
    if (!dladdr((void *)nx_lift_report, &di) || !di.dli_fname) return "cannot find the runtime's own object";
    if (!dlopen(di.dli_fname, RTLD_NOW | RTLD_NOLOAD | RTLD_GLOBAL)) return dlerror();
    done = 1;
    return NULL;
}

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Copy the readable pieces of a code mapping [base, base + size) into a new file (unreadable
 * pages as zeros); its path in path.  NULL, or why not. */
static const char *snapshot_code(uint64_t base, uint64_t size, const char *segs, char *path, size_t n) {
    const char *dir = getenv("TMPDIR");
    snprintf(path, n, "%s/nxrecomp-code-XXXXXX", dir && *dir && strlen(dir) < n - 24 ? dir : "/tmp");
    int fd = mkstemp(path);
    if (fd < 0) { path[0] = 0; return strerror(errno); }
    const char *why = NULL;
    if (ftruncate(fd, (off_t)size) != 0) why = strerror(errno);
    for (const char *p = segs; !why && p && *p;) {
        unsigned long long off, len;
        unsigned perm;
        if (sscanf(p, "%llx:%llx:%u", &off, &len, &perm) != 3) break;
        if (perm & 1 && off + len <= size) {
            const char *src = (const char *)(uintptr_t)(base + off);
            for (unsigned long long done = 0; done < len && !why;) {
                ssize_t w = pwrite(fd, src + done, (size_t)(len - done), (off_t)(off + done));
                if (w < 0 && errno == EINTR) continue;
                if (w <= 0) why = w < 0 ? strerror(errno) : "short write";
                else done += (unsigned long long)w;
            }
        }
        p = strchr(p, ',');
        if (p) p++;
    }
    close(fd);
    if (why) { unlink(path); path[0] = 0; }
    return why;
}

/* A fatal error with the helper's output first (a compile failure names the function and the
 * compiler's message there). */
static void die_with(NxCpu *s, const char *what, const char *out, uint64_t target, uint64_t from) __attribute__((noreturn));
static void die_with(NxCpu *s, const char *what, const char *out, uint64_t target, uint64_t from) {
    if (out && *out) {
        fprintf(stderr, "nxrecomp: the run-time lifter said:\n%s%s", out, out[strlen(out) - 1] == '\n' ? "" : "\n");
        fflush(stderr);
    }
    nx_die(s, what, target, from);
}

/* A dispatch found no lifted code at target: lift the function starting there and return its
 * host function (kind in *kind), or stop the program with a fatal error that names why.
 * `how_fmt` names the branch (a printf format of `from`: the BLR's pc, or X30). */
NxFn nx_lift_miss(NxCpu *s, const char *how_fmt, uint64_t from, uint64_t target, uint32_t *kind) {
    char what[640], how[160];
    snprintf(how, sizeof how, how_fmt, (unsigned long long)from);
    if (!lift_enabled()) {
        snprintf(what, sizeof what, "branch to an address with no lifted code (%s; lifting it at run time is off: "
                 "cpu_host.lift_on_miss, NXRECOMP_CPU_HOST_LIFT_ON_MISS=on turns it on)", how);
        nx_die(s, what, target, from);
    }
    if (target & 3) {
        snprintf(what, sizeof what, "branch to an address with no lifted code (%s; a misaligned target is no "
                 "instruction)", how);
        nx_die(s, what, target, from);
    }
    pthread_mutex_lock(&lift_lock);
    NxFn f = nx_lookup(target, kind);        /* another thread may have lifted it meanwhile */
    if (f) {
        __atomic_fetch_add(&lift_waits, 1, __ATOMIC_RELAXED);
        pthread_mutex_unlock(&lift_lock);
        return f;
    }
    if (!cfg_bundle || !cfg_python) {
        pthread_mutex_unlock(&lift_lock);
        snprintf(what, sizeof what, "branch to an address with no lifted code (%s; no run-time lifter is "
                 "configured in this process: a launch.txt from before lift on miss, which 'nxrecomp exec "
                 "BUNDLE' writes anew, or a host that did not call nx_lift_setup)", how);
        nx_die(s, what, target, from);
    }
    double t0 = now_s();
    char *out = NULL;
    char loaded_path[512] = "", loaded_base[32], loaded_segs[1024];
    char *more[5] = {NULL};
    uint64_t lbase = 0, lsize = 0;
    int generated = 0;
    if (nx_loaded_code_region(target, &lbase, &lsize, loaded_segs, sizeof loaded_segs)) {
        /* code mapped at run time is in no bundle: the helper lifts from a copy of its mapping */
        const char *why = snapshot_code(lbase, lsize, loaded_segs, loaded_path, sizeof loaded_path);
        if (why) {
            pthread_mutex_unlock(&lift_lock);
            snprintf(what, sizeof what, "branch into code loaded at run time (%s): cannot copy its mapping "
                     "[%#llx, %#llx) for the lifter: %s", how, (unsigned long long)lbase,
                     (unsigned long long)(lbase + lsize), why);
            nx_die(s, what, target, from);
        }
        snprintf(loaded_base, sizeof loaded_base, "%#llx", (unsigned long long)lbase);
        more[0] = "--loaded"; more[1] = loaded_base; more[2] = loaded_path; more[3] = loaded_segs;
    } else if (nx_generated_code_region(target, &lbase, &lsize)) {
        /* code the program generated: lifted from a copy of the memory as it is now */
        generated = 1;
        for (int i = n_gen_objs - 1; i >= 0 && generated_enabled(); i--) {
            if (gen_objs[i].entry != target || gen_objs[i].lo < lbase || gen_objs[i].lo + gen_objs[i].len > lbase + lsize ||
                memcmp((const void *)(uintptr_t)gen_objs[i].lo, gen_objs[i].bytes, gen_objs[i].len))
                continue;
            if (enter_rows(gen_objs[i].rows, gen_objs[i].n) != 0) break;
            __atomic_fetch_add(&gen_reused, 1, __ATOMIC_RELAXED);
            f = nx_lookup(target, kind);
            pthread_mutex_unlock(&lift_lock);
            if (f) return f;
            nx_die(s, "run-time lift: the generated code's object has no row for its entry", target, from);
        }
        if (!generated_enabled()) {
            pthread_mutex_unlock(&lift_lock);
            snprintf(what, sizeof what, "branch into code generated at run time (%s; memory the program mapped "
                     "executable, [%#llx, %#llx)): lifting it is off: cpu_host.generated_code, "
                     "NXRECOMP_CPU_HOST_GENERATED_CODE=on turns it on", how, (unsigned long long)lbase,
                     (unsigned long long)(lbase + lsize));
            nx_die(s, what, target, from);
        }
        snprintf(loaded_segs, sizeof loaded_segs, "0:%llx:5", (unsigned long long)lsize);
        const char *why = snapshot_code(lbase, lsize, loaded_segs, loaded_path, sizeof loaded_path);
        if (why) {
            pthread_mutex_unlock(&lift_lock);
            snprintf(what, sizeof what, "branch into code generated at run time (%s): cannot copy [%#llx, %#llx) "
                     "for the lifter: %s", how, (unsigned long long)lbase, (unsigned long long)(lbase + lsize), why);
            nx_die(s, what, target, from);
        }
        snprintf(loaded_base, sizeof loaded_base, "%#llx", (unsigned long long)lbase);
        more[0] = "--generated"; more[1] = loaded_base; more[2] = loaded_path;
    }
    int rc = run_helper(target, more, &out);
    if (loaded_path[0]) unlink(loaded_path);
    const char *res = result_line(out);
    char so_path[4096] = "";
    unsigned long long n_insns = 0, n_bytes = 0;
    double cc_s = 0;
    int cached = 0;
    if (res && !strncmp(res, "nxlift notcode", 14)) {
        pthread_mutex_unlock(&lift_lock);
        char why[256];
        nx_generated_code_why(target, why, sizeof why);
        if (generated)
            snprintf(what, sizeof what, "branch into code generated at run time (%s; memory the program mapped "
                     "executable, [%#llx, %#llx)): no instruction the lifter can follow starts there", how,
                     (unsigned long long)lbase, (unsigned long long)(lbase + lsize));
        else {
            snprintf(what, sizeof what, "branch to an address with no lifted code (%s; the target is not code of "
                     "the program, so nothing can be lifted there%s%s)", how, why[0] ? "; " : "", why);
            nx_die(s, what, target, from);
        }
        die_with(s, what, out, target, from);
    }
    if (rc != 0 || !res || sscanf(res, "nxlift ok %4095s %llu %llu %lf %d", so_path, &n_insns, &n_bytes, &cc_s, &cached) != 5) {
        pthread_mutex_unlock(&lift_lock);
        snprintf(what, sizeof what, "run-time lift of the function at this address failed (%s; helper exit "
                 "status %d)", how, rc);
        die_with(s, what, out, target, from);
    }
    const char *why = promote_runtime();
    void *h = why ? NULL : dlopen(so_path, RTLD_NOW | RTLD_LOCAL);
    if (!why && !h) why = dlerror();
    const NxEntry *rows = h ? dlsym(h, "nx_lift_entries") : NULL;
    const uint64_t *count = h ? dlsym(h, "nx_lift_entry_count") : NULL;
    if (!why && (!rows || !count)) why = "the lifted object lacks nx_lift_entries";
    if (why) {
        pthread_mutex_unlock(&lift_lock);
        snprintf(what, sizeof what, "run-time lift of the function at this address: cannot load %s: %s (%s)",
                 so_path, why, how);
        die_with(s, what, out, target, from);
    }
    dl_iterate_phdr(note_text, so_path);
    const uint64_t *span = generated ? dlsym(h, "nx_gen_span") : NULL;
    const unsigned char *gbytes = generated ? dlsym(h, "nx_gen_bytes") : NULL;
    for (int i = 0; span && i < n_gen_objs; i++)
        if (gen_objs[i].bytes == gbytes) span = NULL;   /* (the same object loaded again) */
    if (span && gbytes && n_gen_objs < MAX_GEN_OBJS) {
        gen_objs[n_gen_objs].entry = target;
        gen_objs[n_gen_objs].lo = span[0];
        gen_objs[n_gen_objs].len = span[1];
        gen_objs[n_gen_objs].bytes = gbytes;
        gen_objs[n_gen_objs].rows = rows;
        gen_objs[n_gen_objs].n = *count;
        n_gen_objs++;
    }
    if (enter_rows(rows, *count) != 0) {
        pthread_mutex_unlock(&lift_lock);
        nx_die(s, "run-time lift: out of memory for the overlay table", target, from);
    }
    for (const char *p = out; p && *p;) {   /* the helper's warnings, if any */
        const char *nl = strchr(p, '\n');
        size_t len = nl ? (size_t)(nl - p) : strlen(p);
        if (strncmp(p, "nxlift ", 7)) fprintf(stderr, "%.*s\n", (int)len, p);
        p = nl ? nl + 1 : NULL;
    }
    if (loaded_path[0]) __atomic_fetch_add(generated ? &lift_generated : &lift_loaded, 1, __ATOMIC_RELAXED);
    uint64_t k = __atomic_fetch_add(&lift_count, 1, __ATOMIC_RELAXED);
    if (k < 16) lifted_addrs[k] = target;
    if (generated)
        fprintf(stderr, "nxrecomp: lifted at run time: code generated at run time, the function at %#llx (%llu "
                "instructions, %llu bytes of guest code; memory mapped executable [%#llx, %#llx)), compiled in %.2f s%s, "
                "%.2f s in all (%s)\n", (unsigned long long)target, n_insns, n_bytes, (unsigned long long)lbase,
                (unsigned long long)(lbase + lsize), cc_s, cached ? " (cached object)" : "", now_s() - t0, how);
    else if (loaded_path[0])
        fprintf(stderr, "nxrecomp: lifted at run time: code loaded at %s, from the function at %#llx (%llu "
                "instructions, %llu bytes of guest code), compiled in %.2f s%s, %.2f s in all (%s)\n", loaded_base,
                (unsigned long long)target, n_insns, n_bytes, cc_s, cached ? " (cached object)" : "", now_s() - t0, how);
    else
        fprintf(stderr, "nxrecomp: lifted at run time: function at %#llx (%llu instructions, %llu bytes of guest code), "
                "compiled in %.2f s%s, %.2f s in all (%s); noted in %s/discovered_entries.txt for the next build\n",
                (unsigned long long)target, n_insns, n_bytes, cc_s, cached ? " (cached object)" : "",
                now_s() - t0, how, cfg_bundle);
    fflush(stderr);
    free(out);
    f = nx_lookup(target, kind);
    pthread_mutex_unlock(&lift_lock);
    if (!f) nx_die(s, "run-time lift: the lifted object has no row for the address it was lifted for", target, from);
    return f;
}
