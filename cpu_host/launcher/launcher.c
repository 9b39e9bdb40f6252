/* launcher.c — start a recompiled Linux AArch64 program without Python.
 *
 *     BUNDLE/nxrun ARGV0 ARGS...
 *
 * Does what cpu_host/runner.py does, in ~3 ms instead of ~130 ms (Python + cffi): reads
 * BUNDLE/launch.txt (written by cpu_host/launcher/__init__.py from the manifest: the guest
 * regions, where the image bytes go, the auxv facts), maps the regions at their guest
 * addresses, copies the bytes in from BUNDLE/image.bin, builds the initial stack the way
 * cpu_host/linux/stack.py does, dlopens BUNDLE/game.so and runs the guest on a host thread
 * with a 1 GiB stack.  The guest's exit_group ends the process.  The bundle is the folder
 * this program lives in (it is copied into each bundle), so execve of /proc/self/exe by the
 * guest starts this launcher again.  Built as PIE: a non-PIE launcher would sit where
 * non-PIE guests (busybox at 0x400000) must go. */
#define _GNU_SOURCE 1
#include "nxrt.h"
#include "lift_miss.h"
#include "linux_syscalls.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#ifndef MAP_FIXED_NOREPLACE
#define MAP_FIXED_NOREPLACE 0x100000
#endif

#define MAX_REGIONS 64
#define MAX_DATA 64
#define HOST_STACK (1ull << 30)   /* as cpu_host/runner.py: deep guest recursion runs on it */
int nx_run_on_thread(NxCpu *s, uint64_t host_stack_bytes);   /* dispatch.c */

typedef struct { uint64_t start, end; int prot; } LRegion;
typedef struct { uint64_t vaddr, off, len; } LData;
#define MAX_LIBS 128
typedef struct { uint64_t base, span, align, size; char path[PATH_MAX]; } LLib;
typedef struct {
    uint64_t entry, phdr, phent, phnum, brk, brk_reserve, stack_top, stack_size, hwcap, hwcap2;
    uint64_t at_entry, at_base;   /* a dynamically linked program: its entry, the interpreter's base */
    char data_file[PATH_MAX];     /* where the data lines' bytes are (default image.bin) */
    char sysroot[PATH_MAX];       /* a dynamically linked program's libraries (nx_linux_set_sysroot) */
    LLib lib[MAX_LIBS];
    int nlib;
    char exe[PATH_MAX];
    char lift_python[PATH_MAX], lift_path[PATH_MAX];   /* the run-time lifter's helper (lift_miss.c) */
    char lift_env[4][PATH_MAX];                         /* KEY=VALUE for it (nx_lift_add_env) */
    int nlift_env;
    LRegion reg[MAX_REGIONS];
    int nreg;
    LData data[MAX_DATA];
    int ndata;
} Launch;

static const char *where = "nxrun";

static void fail(const char *fmt, ...) __attribute__((noreturn, format(printf, 1, 2)));
static void fail(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "nxrecomp exec: error: %s: ", where);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    exit(2);
}

static int prot_of(const char *p) {
    int r = 0;
    if (strchr(p, 'r') || strchr(p, 'x')) r |= PROT_READ;   /* guest code is data to us */
    if (strchr(p, 'w')) r |= PROT_WRITE;
    return r;
}

static void parse_launch(const char *path, Launch *L) {
    FILE *f = fopen(path, "r");
    if (!f) fail("cannot open %s: %s", path, strerror(errno));
    char line[PATH_MAX + 64];
    int lineno = 0, have_magic = 0;
    memset(L, 0, sizeof *L);
    while (fgets(line, sizeof line, f)) {
        lineno++;
        size_t n = strlen(line);
        if (n && line[n - 1] == '\n') line[--n] = 0;
        else if (!feof(f)) fail("%s: line %d is too long", path, lineno);
        char key[32], a[32], b[32], c[32];
        unsigned long long x, y, z;
        if (!n) continue;
        if (sscanf(line, "%31s", key) != 1) fail("%s: line %d: no key", path, lineno);
        if (!strcmp(key, "nxlaunch")) {
            if (strcmp(line, "nxlaunch 1")) fail("%s: line %d: unknown format %s", path, lineno, line);
            have_magic = 1;
        } else if (!have_magic) {
            fail("%s: line %d: missing 'nxlaunch 1' header", path, lineno);
        } else if (!strcmp(key, "exe")) {
            if (n < 4) fail("%s: line %d: empty exe", path, lineno);
            snprintf(L->exe, sizeof L->exe, "%s", line + 4);
        } else if (!strcmp(key, "lift_python") || !strcmp(key, "lift_path")) {
            size_t k = strlen(key) + 1;
            if (n <= k) fail("%s: line %d: empty %s", path, lineno, key);
            snprintf(key[5] == 'p' && key[6] == 'y' ? L->lift_python : L->lift_path, PATH_MAX, "%s", line + k);
        } else if (!strcmp(key, "lift_env")) {
            if (L->nlift_env >= 4) fail("%s: line %d: more than 4 lift_env lines", path, lineno);
            if (n <= 9 || !strchr(line + 9, '=')) fail("%s: line %d: lift_env wants KEY=VALUE", path, lineno);
            snprintf(L->lift_env[L->nlift_env++], PATH_MAX, "%s", line + 9);
        } else if (!strcmp(key, "data_file") || !strcmp(key, "sysroot")) {
            size_t k = strlen(key) + 1;
            if (n <= k || strchr(line + k, '/')) fail("%s: line %d: %s wants a name in the bundle", path, lineno, key);
            snprintf(key[0] == 'd' ? L->data_file : L->sysroot, PATH_MAX, "%s", line + k);
        } else if (!strcmp(key, "lib")) {
            unsigned long long w;
            int at = 0;
            if (L->nlib >= MAX_LIBS) fail("%s: line %d: more than %d libraries", path, lineno, MAX_LIBS);
            if (sscanf(line, "lib %llx %llx %llx %llx %n", &x, &y, &z, &w, &at) != 4 || !at || !line[at])
                fail("%s: line %d: bad lib (lib BASE SPAN ALIGN SIZE PATH)", path, lineno);
            L->lib[L->nlib] = (LLib){x, y, z, w, {0}};
            snprintf(L->lib[L->nlib++].path, PATH_MAX, "%s", line + at);
        } else if (!strcmp(key, "refuse")) {
            /* a program this runtime cannot start (launcher/__init__.py not_runnable) */
            fail("%s", n > 7 ? line + 7 : "the bundle refuses to start");
        } else if (!strcmp(key, "region")) {
            if (L->nreg >= MAX_REGIONS) fail("%s: line %d: more than %d regions", path, lineno, MAX_REGIONS);
            if (sscanf(line, "region %31s %31s %31s", a, b, c) != 3) fail("%s: line %d: bad region", path, lineno);
            x = strtoull(a, NULL, 0); y = strtoull(b, NULL, 0);
            if (x >= y || (x | y) & 4095 || y > (1ull << 39)) fail("%s: line %d: bad region [%s, %s)", path, lineno, a, b);
            L->reg[L->nreg++] = (LRegion){x, y, prot_of(c)};
        } else if (!strcmp(key, "data")) {
            if (L->ndata >= MAX_DATA) fail("%s: line %d: more than %d data ranges", path, lineno, MAX_DATA);
            if (sscanf(line, "data %llx %llx %llx", &x, &y, &z) != 3) fail("%s: line %d: bad data", path, lineno);
            L->data[L->ndata++] = (LData){x, y, z};
        } else {
            if (sscanf(line, "%31s %llx", key, &x) != 2) fail("%s: line %d: bad value for %s", path, lineno, key);
            if (!strcmp(key, "entry")) L->entry = x;
            else if (!strcmp(key, "phdr")) L->phdr = x;
            else if (!strcmp(key, "phent")) L->phent = x;
            else if (!strcmp(key, "phnum")) L->phnum = x;
            else if (!strcmp(key, "brk")) L->brk = x;
            else if (!strcmp(key, "brk_reserve")) L->brk_reserve = x;
            else if (!strcmp(key, "stack_top")) L->stack_top = x;
            else if (!strcmp(key, "stack_size")) L->stack_size = x;
            else if (!strcmp(key, "hwcap")) L->hwcap = x;
            else if (!strcmp(key, "hwcap2")) L->hwcap2 = x;
            else if (!strcmp(key, "at_entry")) L->at_entry = x;
            else if (!strcmp(key, "at_base")) L->at_base = x;
            else fail("%s: line %d: unknown key %s", path, lineno, key);
        }
    }
    fclose(f);
    if (!have_magic) fail("%s: empty or not a launch file", path);
    if (!L->entry || !L->stack_top || !L->stack_size || L->stack_top & 15 || !L->nreg)
        fail("%s: entry, stack_top, stack_size and regions are required", path);
}

static void map_at(uint64_t start, uint64_t size, const char *what) {
    void *r = mmap((void *)start, size, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED_NOREPLACE, -1, 0);
    if (r == MAP_FAILED || (uint64_t)r != start) {
        int e = errno;
        if (r != MAP_FAILED) munmap(r, size);
        fail("cannot map guest %s [%#llx, %#llx): %s", what, (unsigned long long)start,
             (unsigned long long)(start + size), r == MAP_FAILED ? strerror(e) : "placed elsewhere");
    }
}

/* The initial stack, as the kernel builds it at execve (same layout as cpu_host/linux/stack.py:
 * end marker, execfn, envp strings, argv strings, platform, random, then the pointer table). */
static uint64_t build_stack(const Launch *L, int argc, char **argv, char **envp, const char *execfn) {
    uint64_t pos = L->stack_top - 8;
    memset((void *)pos, 0, 8);
#define PUSH(src, len) (pos -= (len), memcpy((void *)pos, (src), (len)), pos)
    uint64_t execfn_at = PUSH(execfn, strlen(execfn) + 1);
    int envc = 0;
    while (envp[envc]) envc++;
    uint64_t *env_at = calloc((size_t)envc + 1, 8), *arg_at = calloc((size_t)argc + 1, 8);
    if (!env_at || !arg_at) fail("out of memory");
    for (int i = envc - 1; i >= 0; i--) env_at[i] = PUSH(envp[i], strlen(envp[i]) + 1);
    for (int i = argc - 1; i >= 0; i--) arg_at[i] = PUSH(argv[i], strlen(argv[i]) + 1);
    pos -= pos % 16;                     /* fresh stack pages are zero: no padding to write */
    uint64_t platform_at = PUSH("aarch64", 8);
    pos -= pos % 16;
    unsigned char rnd[16] = {0};
    /* a lockstep trace needs the same AT_RANDOM bytes as the Unicorn run it is compared with */
    if (!getenv("NXRECOMP_TRACE_FILE")) {
        int fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC);
        if (fd < 0 || read(fd, rnd, 16) != 16) fail("cannot read /dev/urandom");
        close(fd);
    }
    uint64_t random_at = PUSH(rnd, 16);
#undef PUSH
    uint64_t aux[][2] = {{16, L->hwcap}, {6, 4096}, {17, 100}, {3, L->phdr}, {4, L->phent}, {5, L->phnum},
                         {7, L->at_base}, {8, 0}, {9, L->at_entry ? L->at_entry : L->entry}, {11, getuid()}, {12, geteuid()}, {13, getgid()},
                         {14, getegid()}, {23, 0}, {25, random_at}, {26, L->hwcap2}, {31, execfn_at},
                         {15, platform_at}, {0, 0}};
    size_t naux = sizeof aux / sizeof aux[0];
    size_t nwords = 1 + (size_t)argc + 1 + (size_t)envc + 1 + 2 * naux;
    uint64_t sp = (pos - 8 * nwords) & ~15ull;
    if (sp < L->stack_top - L->stack_size + 4096) fail("arguments and environment do not fit the guest stack");
    memset((void *)sp, 0, pos - sp);
    uint64_t *w = (uint64_t *)sp;
    *w++ = (uint64_t)argc;
    for (int i = 0; i < argc; i++) *w++ = arg_at[i];
    *w++ = 0;
    for (int i = 0; i < envc; i++) *w++ = env_at[i];
    *w++ = 0;
    for (size_t i = 0; i < naux; i++) { *w++ = aux[i][0]; *w++ = aux[i][1]; }
    free(env_at);
    free(arg_at);
    return sp;
}

extern char **environ;

int main(int argc, char **argv) {
    char self[PATH_MAX], dir[PATH_MAX], path[PATH_MAX + 32];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    if (n <= 0) fail("cannot read /proc/self/exe");
    self[n] = 0;
    snprintf(dir, sizeof dir, "%s", self);
    char *slash = strrchr(dir, '/');
    if (!slash) fail("odd launcher path %s", self);
    *slash = 0;
    where = dir;

    Launch *L = calloc(1, sizeof *L);
    if (!L) fail("out of memory");
    snprintf(path, sizeof path, "%s/launch.txt", dir);
    parse_launch(path, L);

    /* the image bytes: checked against the file's size before anything is copied */
    snprintf(path, sizeof path, "%s/%s", dir, L->data_file[0] ? L->data_file : "image.bin");
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0) fail("cannot open %s: %s", path, strerror(errno));
    for (int i = 0; i < L->ndata; i++) {
        LData d = L->data[i];
        if (d.off + d.len < d.off || d.off + d.len > (uint64_t)st.st_size)
            fail("%s: range [%#llx, +%#llx) is past its end (%lld bytes)", path, (unsigned long long)d.off,
                 (unsigned long long)d.len, (long long)st.st_size);
        int inside = 0;
        for (int r = 0; r < L->nreg; r++)
            if (d.vaddr >= L->reg[r].start && d.vaddr + d.len <= L->reg[r].end) inside = 1;
        if (!inside && d.len) fail("launch.txt: data at %#llx is outside every region", (unsigned long long)d.vaddr);
    }

    for (int r = 0; r < L->nreg; r++) map_at(L->reg[r].start, L->reg[r].end - L->reg[r].start, "segment");
    uint64_t stack_lo = L->stack_top - L->stack_size;
    map_at(stack_lo, L->stack_size, "stack");
    for (int i = 0; i < L->ndata; i++) {
        uint64_t done = 0;
        while (done < L->data[i].len) {
            ssize_t k = pread(fd, (void *)(L->data[i].vaddr + done), L->data[i].len - done, (off_t)(L->data[i].off + done));
            if (k <= 0) fail("cannot read %s: %s", path, k < 0 ? strerror(errno) : "short file");
            done += (uint64_t)k;
        }
    }
    close(fd);
    for (int r = 0; r < L->nreg; r++)
        if (L->reg[r].prot != (PROT_READ | PROT_WRITE))
            mprotect((void *)L->reg[r].start, L->reg[r].end - L->reg[r].start, L->reg[r].prot);

    const char *execfn = L->exe[0] ? L->exe : (argc > 1 ? argv[1] : "");
    int gargc = argc > 1 ? argc - 1 : 1;
    char *dflt[] = {"program", NULL};
    uint64_t sp = build_stack(L, gargc, argc > 1 ? argv + 1 : dflt, environ, execfn);

    snprintf(path, sizeof path, "%s/game.so", dir);
    void *so = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!so) fail("cannot load %s", dlerror());
    /* the runtime's entry points, typed by their own declarations (linux_syscalls.h) */
#define SYM(name) __typeof__(name) *p_##name = (__typeof__(name) *)dlsym(so, #name); \
    if (!p_##name) fail("game.so lacks " #name)
    SYM(nx_run_on_thread);
    SYM(nx_linux_set_brk);
    SYM(nx_linux_set_exe);
    SYM(nx_linux_add_mapping);
    SYM(nx_linux_set_self_exec);
    SYM(nx_lift_setup);
    SYM(nx_lift_add_env);
    SYM(nx_lift_report);
    SYM(nx_linux_set_exit_hook);
#undef SYM
    /* lift on miss: the helper runs the bundle's recompiler; the exit summary counts its lifts */
    p_nx_lift_setup(dir, L->lift_python, L->lift_path);
    for (int i = 0; i < L->nlift_env; i++) p_nx_lift_add_env(L->lift_env[i]);
    p_nx_linux_set_exit_hook(p_nx_lift_report);
    for (int r = 0; r < L->nreg; r++) p_nx_linux_add_mapping(L->reg[r].start, L->reg[r].end - L->reg[r].start);
    p_nx_linux_add_mapping(stack_lo, L->stack_size);
    int rc = p_nx_linux_set_brk(L->brk, L->brk_reserve);
    if (rc != 0) fail("cannot reserve the program break at %#llx: %s", (unsigned long long)L->brk, strerror(-rc));
    if (L->exe[0]) p_nx_linux_set_exe(L->exe);
    if (L->sysroot[0]) {   /* a dynamically linked program: ld.so maps the libraries at their bases */
        int (*set_sysroot)(const char *) = (int (*)(const char *))dlsym(so, "nx_linux_set_sysroot");
        int (*add_library)(uint64_t, uint64_t, uint64_t, uint64_t, const char *) =
            (int (*)(uint64_t, uint64_t, uint64_t, uint64_t, const char *))dlsym(so, "nx_linux_add_library");
        if (!set_sysroot || !add_library) fail("game.so lacks nx_linux_set_sysroot (built by an older runtime)");
        snprintf(path, sizeof path, "%s/%s", dir, L->sysroot);
        if (set_sysroot(path) != 0) fail("the bundle's sysroot %s is not a folder", path);
        for (int i = 0; i < L->nlib; i++) {
            char lp[2 * PATH_MAX + 2];
            snprintf(lp, sizeof lp, "%s%s", path, L->lib[i].path);
            int e = add_library(L->lib[i].base, L->lib[i].span, L->lib[i].align, L->lib[i].size, lp);
            if (e == -EBADF) fail("%s is not the library the bundle lifted (not %llu bytes)", lp, (unsigned long long)L->lib[i].size);
            if (e != 0) fail("library %s: %s", lp, strerror(-e));
        }
    }
    /* busybox's shell runs its own applets by execve("/proc/self/exe"): start this launcher again */
    const char *prefix[1] = {self};
    p_nx_linux_set_self_exec(prefix, 1);

    NxCpu *cpu = aligned_alloc(64, (sizeof(NxCpu) + 63) & ~(size_t)63);
    if (!cpu) fail("out of memory");
    memset(cpu, 0, sizeof *cpu);
    cpu->sp = sp;
    cpu->pc = L->entry;
    if (p_nx_run_on_thread(cpu, HOST_STACK) != 0) fail("cannot start the guest thread");
    return 0;
}
