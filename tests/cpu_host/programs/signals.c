/* signals.c — guest signal handlers as Linux runs them (tests/cpu_host/test_linux_signals.py runs
 * each mode recompiled and under qemu-aarch64 and compares stdout, stderr and exit status).
 *
 *   raise      signal()/raise and kill(getpid()) with SA_SIGINFO (si_signo, si_code, si_pid)
 *   frame      what the handler finds in its frame: the fpsimd record, the end record, the
 *              saved mask, X1/X2 pointing at siginfo and ucontext
 *   mask       a blocked signal stays pending (sigpending), runs when unblocked
 *   suspend    sigsuspend waits for a timer's SIGALRM that is blocked outside it
 *   alarm      alarm(1) and pause()
 *   chld       SIGCHLD after fork and exit (si_code CLD_EXITED, si_status), then waitpid
 *   pipe       SIGPIPE with a handler: write answers EPIPE after the handler ran
 *   pipedie    SIGPIPE's default action kills the process
 *   restart    a read of an empty pipe interrupted by SIGALRM: restarted with SA_RESTART
 *   eintr      the same without SA_RESTART: -1 EINTR
 *   resethand  SA_RESETHAND: the second SIGUSR1 takes the default action
 *   nested     a handler raising another signal; sa_mask defers it to the handler's return
 *   jump       siglongjmp out of a handler, many times, the mask restored by it
 *   state      registers, FP registers and the rounding mode survive a handler that changes them
 *   ignore     SIG_IGN, and a default-ignored signal (SIGCHLD, SIGWINCH) raised: nothing happens
 *   die N      raise signal N with its default action (terminate, core, ignore)
 *   spin       a loop with no system call waits for a timer's SIGALRM (needs
 *              recompiler.signal_polls recompiled: else the loop never sees it)
 *   norestorer a handler installed without SA_RESTORER (as glibc's aarch64 sigaction does): it
 *              returns through the kernel's (vDSO) sigreturn
 */
#define _GNU_SOURCE 1
#include <errno.h>
#include <fenv.h>
#include <setjmp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <ucontext.h>
#include <unistd.h>

static volatile sig_atomic_t hits, last_sig;
static char log_buf[512];
static volatile size_t log_len;

static void note(const char *s) {   /* async-signal-safe: appended, printed later */
    size_t n = strlen(s);
    if (log_len + n < sizeof log_buf) { memcpy(log_buf + log_len, s, n); log_len += n; }
}
static void flush_notes(void) {
    printf("notes: %.*s\n", (int)log_len, log_buf);
    log_len = 0;
}

static void on_sig(int sig) { hits++; last_sig = sig; }

static void on_info(int sig, siginfo_t *si, void *uc) {
    (void)uc;
    hits++;
    printf("handler sig=%d signo=%d code=%d pid_is_self=%d\n", sig, si->si_signo, si->si_code,
           si->si_pid == getpid());
}

static void set(int sig, void (*h)(int), int flags, const sigset_t *mask) {
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = h;
    sa.sa_flags = flags;
    if (mask) sa.sa_mask = *mask;
    if (sigaction(sig, &sa, NULL) != 0) { perror("sigaction"); exit(90); }
}
static void set_info(int sig, void (*h)(int, siginfo_t *, void *), int flags) {
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = h;
    sa.sa_flags = SA_SIGINFO | flags;
    if (sigaction(sig, &sa, NULL) != 0) { perror("sigaction"); exit(90); }
}
static void timer_ms(int ms) {
    struct itimerval it = {{0, 0}, {0, ms * 1000}};
    setitimer(ITIMER_REAL, &it, NULL);
}
static void block(int how, int sig) {
    sigset_t s;
    sigemptyset(&s);
    sigaddset(&s, sig);
    sigprocmask(how, &s, NULL);
}

static int m_raise(void) {
    set(SIGUSR1, on_sig, 0, NULL);
    printf("raise -> %d\n", raise(SIGUSR1));
    printf("hits=%d last=%d\n", hits, last_sig);
    set_info(SIGUSR2, on_info, 0);
    printf("kill -> %d\n", kill(getpid(), SIGUSR2));
    printf("kill 0 -> %d\n", kill(getpid(), 0));
    signal(SIGUSR1, on_sig);   /* signal(): BSD semantics (SA_RESTART), handler stays */
    raise(SIGUSR1);
    raise(SIGUSR1);
    printf("hits=%d\n", hits);
    return 0;
}

static void on_frame(int sig, siginfo_t *si, void *ucp) {
    ucontext_t *uc = ucp;
    const uint32_t *rec = (const uint32_t *)uc->uc_mcontext.__reserved;
    printf("frame sig=%d siginfo_in_frame=%d ucontext_after_siginfo=%d\n", sig,
           (void *)si > (void *)&sig, (char *)uc - (char *)si == 128);
    printf("record magic=%#x size=%u\n", rec[0], rec[1]);
    /* the records up to the end record (qemu's SVE CPU adds one after fpsimd: not counted) */
    unsigned off = 0, terminated = 0;
    while (off + 8 <= sizeof uc->uc_mcontext.__reserved) {
        const uint32_t *h = (const uint32_t *)((const char *)rec + off);
        if (h[0] == 0) { terminated = h[1] == 0; break; }
        if (h[1] < 8) break;
        off += h[1];
    }
    printf("end record found=%u\n", terminated);
    printf("saved mask has USR2=%d USR1=%d\n", sigismember(&uc->uc_sigmask, SIGUSR2),
           sigismember(&uc->uc_sigmask, SIGUSR1));
    sigset_t now;
    sigprocmask(SIG_BLOCK, NULL, &now);
    printf("mask in handler has USR1=%d HUP=%d\n", sigismember(&now, SIGUSR1), sigismember(&now, SIGHUP));
    printf("sp aligned=%d pc nonzero=%d\n", (int)(uc->uc_mcontext.sp % 16 == 0), uc->uc_mcontext.pc != 0);
}

static int m_frame(void) {
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_frame;
    sa.sa_flags = SA_SIGINFO;
    sigemptyset(&sa.sa_mask);
    sigaddset(&sa.sa_mask, SIGHUP);
    sigaction(SIGUSR1, &sa, NULL);
    block(SIG_BLOCK, SIGUSR2);
    raise(SIGUSR1);
    sigset_t now;
    sigprocmask(SIG_BLOCK, NULL, &now);
    printf("after: USR1=%d HUP=%d USR2=%d\n", sigismember(&now, SIGUSR1), sigismember(&now, SIGHUP),
           sigismember(&now, SIGUSR2));
    return 0;
}

static int m_mask(void) {
    set(SIGUSR1, on_sig, 0, NULL);
    block(SIG_BLOCK, SIGUSR1);
    raise(SIGUSR1);
    sigset_t p;
    sigpending(&p);
    printf("blocked: hits=%d pending USR1=%d USR2=%d\n", hits, sigismember(&p, SIGUSR1), sigismember(&p, SIGUSR2));
    block(SIG_UNBLOCK, SIGUSR1);
    printf("unblocked: hits=%d\n", hits);
    sigpending(&p);
    printf("pending USR1=%d\n", sigismember(&p, SIGUSR1));
    return 0;
}

static int m_suspend(void) {
    set(SIGALRM, on_sig, 0, NULL);
    block(SIG_BLOCK, SIGALRM);
    timer_ms(50);
    sigset_t none;
    sigemptyset(&none);
    int r = sigsuspend(&none);
    printf("sigsuspend -> %d %s hits=%d last=%d\n", r, r < 0 && errno == EINTR ? "EINTR" : "?", hits, last_sig);
    sigset_t now;
    sigprocmask(SIG_BLOCK, NULL, &now);
    printf("ALRM still blocked=%d\n", sigismember(&now, SIGALRM));
    return 0;
}

static int m_alarm(void) {
    set(SIGALRM, on_sig, 0, NULL);
    printf("alarm -> %u\n", alarm(1));
    int r = pause();
    printf("pause -> %d %s hits=%d\n", r, errno == EINTR ? "EINTR" : "?", hits);
    return 0;
}

static volatile sig_atomic_t chld_code, chld_status, chld_pid_ok;
static pid_t child;
static void on_chld(int sig, siginfo_t *si, void *uc) {
    (void)sig; (void)uc;
    chld_code = si->si_code;
    chld_status = si->si_status;
    chld_pid_ok = si->si_pid == child;
    hits++;
}

static int m_chld(void) {
    set_info(SIGCHLD, on_chld, SA_RESTART);
    block(SIG_BLOCK, SIGCHLD);
    fflush(stdout);
    child = fork();
    if (child == 0) _exit(3);
    sigset_t none;
    sigemptyset(&none);
    while (!hits) sigsuspend(&none);
    printf("chld hits=%d code=%d (CLD_EXITED %d) status=%d pid ok=%d\n", hits, chld_code, CLD_EXITED, chld_status,
           chld_pid_ok);
    int st = 0;
    pid_t w = waitpid(child, &st, 0);
    printf("waitpid ok=%d exited=%d status=%d\n", w == child, WIFEXITED(st), WEXITSTATUS(st));
    return 0;
}

static int m_pipe(void) {
    set(SIGPIPE, on_sig, 0, NULL);
    int p[2];
    if (pipe(p)) return 91;
    close(p[0]);
    ssize_t r = write(p[1], "x", 1);
    printf("write -> %zd %s hits=%d last=%d\n", r, r < 0 && errno == EPIPE ? "EPIPE" : "?", hits, last_sig);
    return 0;
}

static int m_pipedie(void) {
    int p[2];
    if (pipe(p)) return 91;
    close(p[0]);
    printf("before write\n");
    fflush(stdout);
    ssize_t r = write(p[1], "x", 1);
    printf("not reached %zd\n", r);
    return 0;
}

static int wfd;
static void on_alrm_write(int sig) { (void)sig; hits++; if (write(wfd, "z", 1) != 1) _exit(92); }
static void on_alrm_only(int sig) { (void)sig; hits++; }

static int m_restart(int restart) {
    int p[2];
    if (pipe(p)) return 91;
    wfd = p[1];
    set(SIGALRM, restart ? on_alrm_write : on_alrm_only, restart ? SA_RESTART : 0, NULL);
    /* every 50 ms, not once: an ALRM that came before read() began (the process held off the CPU
       that long on a loaded machine) must not leave read() waiting for ever */
    struct itimerval it = {{0, 50000}, {0, 50000}};
    setitimer(ITIMER_REAL, &it, NULL);
    char c = 0;
    ssize_t r = read(p[0], &c, 1);
    timer_ms(0);
    printf("read -> %zd %s c=%c hits>0=%d\n", r, r < 0 && errno == EINTR ? "EINTR" : "-", c ? c : '.', hits > 0);
    return 0;
}

static int m_resethand(void) {
    set(SIGUSR1, on_sig, SA_RESETHAND, NULL);
    raise(SIGUSR1);
    struct sigaction now;
    sigaction(SIGUSR1, NULL, &now);
    printf("hits=%d handler now default=%d\n", hits, now.sa_handler == SIG_DFL);
    fflush(stdout);
    raise(SIGUSR1);
    printf("not reached\n");
    return 0;
}

static void on_usr2_note(int sig) { (void)sig; note("[usr2]"); }
static void on_usr1_raise(int sig) {
    (void)sig;
    note("[usr1 in]");
    raise(SIGUSR2);
    note("[usr1 out]");
}

static int m_nested(void) {
    set(SIGUSR2, on_usr2_note, 0, NULL);
    set(SIGUSR1, on_usr1_raise, 0, NULL);
    raise(SIGUSR1);
    flush_notes();
    sigset_t m;
    sigemptyset(&m);
    sigaddset(&m, SIGUSR2);
    set(SIGUSR1, on_usr1_raise, 0, &m);   /* USR2 blocked in the handler: runs after it */
    raise(SIGUSR1);
    flush_notes();
    /* both pending at once, unblocked together: Linux sets up USR1's frame, then USR2's over it */
    set(SIGUSR1, on_usr1_raise, 0, NULL);
    sigset_t both;
    sigemptyset(&both);
    sigaddset(&both, SIGUSR1);
    sigaddset(&both, SIGUSR2);
    sigprocmask(SIG_BLOCK, &both, NULL);
    raise(SIGUSR1);
    raise(SIGUSR2);
    note("[unblock]");
    sigprocmask(SIG_UNBLOCK, &both, NULL);
    flush_notes();
    return 0;
}

static sigjmp_buf jb;
static void on_jump(int sig) { hits++; siglongjmp(jb, sig); }

static int m_jump(void) {
    set(SIGUSR1, on_jump, 0, NULL);
    long sum = 0;
    for (int i = 0; i < 3000; i++) {
        int v = sigsetjmp(jb, 1);
        if (v == 0) {
            raise(SIGUSR1);
            printf("not reached\n");
        }
        sum += v;
    }
    sigset_t now;
    sigprocmask(SIG_BLOCK, NULL, &now);
    printf("jumps=%d sum=%ld USR1 blocked=%d\n", hits, sum, sigismember(&now, SIGUSR1));
    return 0;
}

static volatile double fsink;
static void on_state(int sig) {
    (void)sig;
    fesetround(FE_UPWARD);
    volatile double a = 1.0, b = 3.0;
    fsink = a / b;
    hits++;
}

__attribute__((noinline)) static double spin(double x, int n) {
    for (int i = 0; i < n; i++) x = x * 1.0000001 + 0.1 / (i + 1);
    return x;
}

static int m_state(void) {
    set(SIGUSR1, on_state, 0, NULL);
    fesetround(FE_TOWARDZERO);
    volatile double a = 2.0, b = 3.0;
    double before = spin(a / b, 1000);
    raise(SIGUSR1);
    double after = spin(a / b, 1000);
    printf("same=%d round_tz=%d hits=%d %.17g\n", before == after, fegetround() == FE_TOWARDZERO, hits, after);
    fesetround(FE_TONEAREST);
    return 0;
}

static int m_ignore(void) {
    signal(SIGUSR1, SIG_IGN);
    raise(SIGUSR1);
    raise(SIGCHLD);
    raise(SIGWINCH);
    kill(getpid(), SIGURG);
    struct sigaction now;
    sigaction(SIGUSR1, NULL, &now);
    printf("alive ign=%d\n", now.sa_handler == SIG_IGN);
    return 0;
}

static volatile int spin_done;
static void on_spin(int sig) { (void)sig; spin_done = 1; }
static int m_spin(void) {
    set(SIGALRM, on_spin, 0, NULL);
    timer_ms(50);
    unsigned long n = 0;
    while (!spin_done) n++;
    printf("spun: done=%d counted=%d\n", spin_done, n > 0);
    return 0;
}

static int m_norestorer(void) {
    struct { void (*handler)(int); unsigned long flags; void *restorer; uint64_t mask; } ksa = {on_sig, 0, 0, 0};
    long r = syscall(SYS_rt_sigaction, SIGUSR1, &ksa, NULL, 8);
    printf("rt_sigaction -> %ld\n", r);
    raise(SIGUSR1);
    raise(SIGUSR1);
    printf("hits=%d last=%d\n", hits, last_sig);
    return 0;
}

int main(int argc, char **argv) {
    setvbuf(stdout, NULL, _IOLBF, 0);
    const char *m = argc > 1 ? argv[1] : "";
    if (!strcmp(m, "raise")) return m_raise();
    if (!strcmp(m, "frame")) return m_frame();
    if (!strcmp(m, "mask")) return m_mask();
    if (!strcmp(m, "suspend")) return m_suspend();
    if (!strcmp(m, "alarm")) return m_alarm();
    if (!strcmp(m, "chld")) return m_chld();
    if (!strcmp(m, "pipe")) return m_pipe();
    if (!strcmp(m, "pipedie")) return m_pipedie();
    if (!strcmp(m, "restart")) return m_restart(1);
    if (!strcmp(m, "eintr")) return m_restart(0);
    if (!strcmp(m, "resethand")) return m_resethand();
    if (!strcmp(m, "nested")) return m_nested();
    if (!strcmp(m, "jump")) return m_jump();
    if (!strcmp(m, "state")) return m_state();
    if (!strcmp(m, "ignore")) return m_ignore();
    if (!strcmp(m, "norestorer")) return m_norestorer();
    if (!strcmp(m, "spin")) return m_spin();
    if (!strcmp(m, "die") && argc > 2) {
        printf("raising %s\n", argv[2]);
        fflush(stdout);
        if (!strcmp(argv[2], "abort")) abort();
        raise(atoi(argv[2]));
        printf("survived\n");
        return 0;
    }
    fprintf(stderr, "unknown mode %s\n", m);
    return 2;
}
