/* A POSIX threads exercise of our own (tests/realprogs/test_threads.py runs it recompiled and
 * under qemu-aarch64; every line it prints is the same whatever the interleaving):
 *   pthreads_test [PART...]   parts: mutex condvar tls join barrier many kill procsig rtsig futex cancel timed detach
 *                             rwlock once hidden mainexit; no part: all but mainexit
 * (hidden: two threads call hidden_worker through a pointer at the same moment; the test builds
 * it left out of the recompile, so both miss it and it is lifted at run time.)
 * Each part prints what it computed; a check that fails prints FAIL and the exit status is 1. */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <linux/futex.h>
#include <pthread.h>
#include <semaphore.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static int failures;
#define CHECK(c, ...) do { if (!(c)) { failures++; printf("FAIL %s:%d: ", __func__, __LINE__); printf(__VA_ARGS__); printf("\n"); } } while (0)

static long tid(void) { return syscall(SYS_gettid); }

/* ---- mutex: many threads add to one counter ---- */
static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static long counter;
static void *adder(void *arg) {
    long n = (long)arg;
    for (long i = 0; i < n; i++) {
        pthread_mutex_lock(&m);
        counter += 1;
        pthread_mutex_unlock(&m);
        if (i % 1000 == 0) sched_yield();
    }
    return NULL;
}
static void part_mutex(void) {
    enum { T = 8, N = 20000 };
    pthread_t t[T];
    for (int i = 0; i < T; i++) pthread_create(&t[i], NULL, adder, (void *)(long)N);
    for (int i = 0; i < T; i++) pthread_join(t[i], NULL);
    printf("mutex: %d threads x %d = %ld\n", T, N, counter);
    CHECK(counter == (long)T * N, "counter %ld", counter);
}

/* ---- condvar: a bounded queue, two producers, three consumers ---- */
#define QCAP 8
static struct {
    pthread_mutex_t lock;
    pthread_cond_t not_full, not_empty;
    int items[QCAP], head, count, closed;
} q = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, PTHREAD_COND_INITIALIZER};
static void put(int v) {
    pthread_mutex_lock(&q.lock);
    while (q.count == QCAP) pthread_cond_wait(&q.not_full, &q.lock);
    q.items[(q.head + q.count++) % QCAP] = v;
    pthread_cond_signal(&q.not_empty);
    pthread_mutex_unlock(&q.lock);
}
static int get(int *v) {
    pthread_mutex_lock(&q.lock);
    while (q.count == 0 && !q.closed) pthread_cond_wait(&q.not_empty, &q.lock);
    int ok = q.count > 0;
    if (ok) {
        *v = q.items[q.head];
        q.head = (q.head + 1) % QCAP;
        q.count--;
        pthread_cond_signal(&q.not_full);
    }
    pthread_mutex_unlock(&q.lock);
    return ok;
}
static void *producer(void *arg) {
    int base = (int)(long)arg;
    for (int i = 1; i <= 5000; i++) put(base + i);
    return NULL;
}
static void *consumer(void *arg) {
    (void)arg;
    long sum = 0, n = 0;
    int v;
    while (get(&v)) { sum += v; n++; }
    long *r = malloc(2 * sizeof *r);
    r[0] = sum;
    r[1] = n;
    return r;
}
static void part_condvar(void) {
    pthread_t p[2], c[3];
    for (int i = 0; i < 3; i++) pthread_create(&c[i], NULL, consumer, NULL);
    for (int i = 0; i < 2; i++) pthread_create(&p[i], NULL, producer, (void *)(long)(i * 100000));
    for (int i = 0; i < 2; i++) pthread_join(p[i], NULL);
    pthread_mutex_lock(&q.lock);
    q.closed = 1;
    pthread_cond_broadcast(&q.not_empty);   /* every consumer wakes, drains, and ends */
    pthread_mutex_unlock(&q.lock);
    long sum = 0, n = 0;
    for (int i = 0; i < 3; i++) {
        long *r;
        pthread_join(c[i], (void **)&r);
        sum += r[0];
        n += r[1];
        free(r);
    }
    long want = 2L * (5000L * 5001 / 2) + 100000L * 5000;
    printf("condvar: %ld items, sum %ld\n", n, sum);
    CHECK(n == 10000 && sum == want, "n %ld sum %ld want %ld", n, sum, want);
}

/* ---- thread-local variables: each thread's own copy, initialised from the TLS image ---- */
static __thread int tls_int = 42;
static __thread char tls_buf[64] = "initial";
static __thread long tls_zero;
static void *tls_worker(void *arg) {
    int id = (int)(long)arg;
    int ok = tls_int == 42 && !strcmp(tls_buf, "initial") && tls_zero == 0;
    tls_int = id * 7;
    snprintf(tls_buf, sizeof tls_buf, "thread %d", id);
    for (int i = 0; i < 100; i++) {
        tls_zero += i;
        if (i % 10 == 0) sched_yield();
    }
    char want[64];
    snprintf(want, sizeof want, "thread %d", id);
    ok = ok && tls_int == id * 7 && !strcmp(tls_buf, want) && tls_zero == 4950;
    return (void *)(long)(ok ? id * 7 : -1);
}
static void part_tls(void) {
    enum { T = 6 };
    pthread_t t[T];
    tls_int = 1000;
    for (int i = 0; i < T; i++) pthread_create(&t[i], NULL, tls_worker, (void *)(long)(i + 1));
    long total = 0;
    for (int i = 0; i < T; i++) {
        void *r;
        pthread_join(t[i], &r);
        CHECK((long)r == (i + 1) * 7, "thread %d returned %ld", i + 1, (long)r);
        total += (long)r;
    }
    printf("tls: main %d, threads' sum %ld, main's buffer '%s'\n", tls_int, total, tls_buf);
    CHECK(tls_int == 1000, "main's copy changed: %d", tls_int);
}

/* ---- join: return values, thread ids, pthread_self ---- */
static void *ident(void *arg) {
    long *out = arg;
    out[0] = tid();
    out[1] = getpid();
    out[2] = (long)pthread_self();
    return (void *)(out[0] * 3);
}
static void part_join(void) {
    pthread_t t;
    long r[3];
    pthread_create(&t, NULL, ident, r);
    void *ret;
    pthread_join(t, &ret);
    printf("join: main tid is pid %d, thread tid is not %d, same pid %d, pthread_t matches %d, "
           "return value %d\n", tid() == getpid(), r[0] != getpid(), r[1] == getpid(),
           r[2] == (long)t, (long)ret == r[0] * 3);
    CHECK(tid() == getpid() && r[0] != getpid() && r[1] == getpid() && r[2] == (long)t && (long)ret == r[0] * 3,
          "ids");
}

/* ---- barrier: phases, one serial thread per phase ---- */
enum { BT = 5, PHASES = 20 };
static pthread_barrier_t bar;
static int phase_sum[PHASES];
static int serials;
static pthread_mutex_t sm = PTHREAD_MUTEX_INITIALIZER;
static void *bar_worker(void *arg) {
    int id = (int)(long)arg;
    for (int p = 0; p < PHASES; p++) {
        __atomic_add_fetch(&phase_sum[p], id + p, __ATOMIC_RELAXED);
        int r = pthread_barrier_wait(&bar);
        if (r == PTHREAD_BARRIER_SERIAL_THREAD) {
            pthread_mutex_lock(&sm);
            serials++;
            pthread_mutex_unlock(&sm);
        }
        /* after the barrier every thread of this phase has added */
        int want = 0;
        for (int k = 0; k < BT; k++) want += k + p;
        if (__atomic_load_n(&phase_sum[p], __ATOMIC_RELAXED) != want) return (void *)1;
    }
    return NULL;
}
static void part_barrier(void) {
    pthread_barrier_init(&bar, NULL, BT);
    pthread_t t[BT];
    for (int i = 0; i < BT; i++) pthread_create(&t[i], NULL, bar_worker, (void *)(long)i);
    int bad = 0;
    for (int i = 0; i < BT; i++) {
        void *r;
        pthread_join(t[i], &r);
        bad += r != NULL;
    }
    pthread_barrier_destroy(&bar);
    printf("barrier: %d threads, %d phases, %d serial returns, %d early leavers\n", BT, PHASES, serials, bad);
    CHECK(serials == PHASES && bad == 0, "serials %d bad %d", serials, bad);
}

/* ---- many: waves of short threads, more alive at once than cores ---- */
static void *square(void *arg) { long v = (long)arg; return (void *)(v * v); }
static void part_many(void) {
    enum { WAVES = 4, W = 40 };
    long total = 0;
    for (int w = 0; w < WAVES; w++) {
        pthread_t t[W];
        for (int i = 0; i < W; i++) {
            int e = pthread_create(&t[i], NULL, square, (void *)(long)(w * W + i));
            CHECK(e == 0, "pthread_create: %s", strerror(e));
        }
        for (int i = 0; i < W; i++) {
            void *r;
            pthread_join(t[i], &r);
            total += (long)r;
        }
    }
    long n = WAVES * W, want = (n - 1) * n * (2 * n - 1) / 6;
    printf("many: %ld threads, sum of squares %ld\n", n, total);
    CHECK(total == want, "total %ld want %ld", total, want);
}

/* ---- kill: pthread_kill runs the handler on the thread it names ---- */
static volatile long handled_on;
static __thread int tls_mark;
static volatile int handler_saw_mark;
static void on_usr1(int sig) {
    (void)sig;
    handled_on = tid();
    handler_saw_mark = tls_mark;
}
static sem_t ready, done;
static void *victim(void *arg) {
    long *me = arg;
    tls_mark = 77;
    *me = tid();
    sem_post(&ready);
    while (!handled_on) sched_yield();   /* a system call in the loop: a delivery point */
    sem_post(&done);
    return NULL;
}
static void part_kill(void) {
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_usr1;
    sigaction(SIGUSR1, &sa, NULL);
    sem_init(&ready, 0, 0);
    sem_init(&done, 0, 0);
    pthread_t t;
    long vt = 0;
    pthread_create(&t, NULL, victim, &vt);
    sem_wait(&ready);
    pthread_kill(t, SIGUSR1);
    sem_wait(&done);
    pthread_join(t, NULL);
    printf("kill: handler ran on the named thread %d, saw its TLS %d\n", handled_on == vt, handler_saw_mark);
    CHECK(handled_on == vt && handler_saw_mark == 77, "handled on %ld, victim %ld, mark %d", handled_on, vt,
          handler_saw_mark);
}

/* ---- procsig: a signal to the process goes to the thread that does not block it ---- */
static volatile long usr2_on;
static void on_usr2(int sig) { (void)sig; usr2_on = tid(); }
static sem_t usr2_ready;
static void *usr2_taker(void *arg) {
    long *me = arg;
    *me = tid();
    sigset_t m;
    sigemptyset(&m);
    sigaddset(&m, SIGUSR2);
    pthread_sigmask(SIG_UNBLOCK, &m, NULL);   /* created with main's mask, which blocks it */
    sem_post(&usr2_ready);
    while (!usr2_on) sched_yield();
    return NULL;
}
static void part_procsig(void) {
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_usr2;
    sigaction(SIGUSR2, &sa, NULL);
    sigset_t m, old;
    sigemptyset(&m);
    sigaddset(&m, SIGUSR2);
    pthread_sigmask(SIG_BLOCK, &m, &old);
    sem_init(&usr2_ready, 0, 0);
    pthread_t t;
    long taker = 0;
    pthread_create(&t, NULL, usr2_taker, &taker);
    sem_wait(&usr2_ready);
    kill(getpid(), SIGUSR2);
    pthread_join(t, NULL);
    sigset_t pend;
    sigpending(&pend);
    printf("procsig: taken by the thread that does not block it %d, still pending for main %d\n",
           usr2_on == taker, sigismember(&pend, SIGUSR2));
    CHECK(usr2_on == taker && !sigismember(&pend, SIGUSR2), "taken on %ld, taker %ld", usr2_on, taker);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
}

/* ---- rtsig: real-time signals queued while blocked arrive once each, in order, with their
 * values (sigqueue); one queued to the process reaches the thread that does not block it ---- */
static volatile int rt_seen[8], rt_n, rt_queued_code;
static volatile long rt_on;
static void on_rt(int sig, siginfo_t *si, void *uc) {
    (void)sig; (void)uc;
    if (rt_n < 8) rt_seen[rt_n] = si->si_value.sival_int;
    rt_n++;
    rt_queued_code = si->si_code == SI_QUEUE;
    rt_on = tid();
}
static sem_t rt_ready;
static void *rt_taker(void *arg) {
    long *me = arg;
    *me = tid();
    sigset_t m;
    sigemptyset(&m);
    sigaddset(&m, SIGRTMIN + 2);
    pthread_sigmask(SIG_UNBLOCK, &m, NULL);
    sem_post(&rt_ready);
    while (rt_n < 4) sched_yield();
    return NULL;
}
static void part_rtsig(void) {
    int sig = SIGRTMIN + 2;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_rt;
    sa.sa_flags = SA_SIGINFO;
    sigaction(sig, &sa, NULL);
    sigset_t m, old;
    sigemptyset(&m);
    sigaddset(&m, sig);
    pthread_sigmask(SIG_BLOCK, &m, &old);
    for (int v = 1; v <= 3; v++) sigqueue(getpid(), sig, (union sigval){.sival_int = v * 10});
    sigset_t pend;
    sigpending(&pend);
    int was_pending = sigismember(&pend, sig);
    pthread_sigmask(SIG_SETMASK, &old, NULL);   /* all three delivered here, one by one */
    printf("rtsig: pending while blocked %d, delivered %d: %d %d %d, SI_QUEUE %d\n", was_pending, rt_n,
           rt_seen[0], rt_seen[1], rt_seen[2], rt_queued_code);
    CHECK(was_pending && rt_n == 3 && rt_seen[0] == 10 && rt_seen[1] == 20 && rt_seen[2] == 30, "n %d", rt_n);
    pthread_sigmask(SIG_BLOCK, &m, NULL);
    sem_init(&rt_ready, 0, 0);
    pthread_t t;
    long taker = 0;
    pthread_create(&t, NULL, rt_taker, &taker);
    sem_wait(&rt_ready);
    sigqueue(getpid(), sig, (union sigval){.sival_int = 40});
    pthread_join(t, NULL);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    printf("rtsig: queued to the process, taken by the thread that does not block it %d, value %d\n",
           rt_on == taker, rt_seen[3]);
    CHECK(rt_on == taker && rt_seen[3] == 40, "on %ld taker %ld value %d", rt_on, taker, rt_seen[3]);
}

/* ---- futex: the raw operations libcs build on (futex(2)) ---- */
static int fx1, fx2, fx_woke;
static long futex(int *uaddr, int op, int val, const struct timespec *ts, int *uaddr2, int val3) {
    return syscall(SYS_futex, uaddr, op, val, ts, uaddr2, val3);
}
static void *fx_waiter(void *arg) {
    (void)arg;
    futex(&fx1, FUTEX_WAIT_PRIVATE, 0, NULL, NULL, 0);   /* woken only after a requeue to fx2 */
    __atomic_add_fetch(&fx_woke, 1, __ATOMIC_SEQ_CST);
    return NULL;
}
static void part_futex(void) {
    long r1 = futex(&fx1, FUTEX_WAIT_PRIVATE, 1, NULL, NULL, 0);
    int e1 = errno;
    struct timespec ts = {0, 20 * 1000000};
    long r2 = futex(&fx1, FUTEX_WAIT_PRIVATE, 0, &ts, NULL, 0);
    int e2 = errno;
    pthread_t t[3];
    for (int i = 0; i < 3; i++) pthread_create(&t[i], NULL, fx_waiter, NULL);
    long moved = 0;   /* CMP_REQUEUE answers how many it woke and moved: 0 woken, all moved */
    for (int spins = 0; moved < 3 && spins < 100000; spins++) {
        long r = futex(&fx1, FUTEX_CMP_REQUEUE_PRIVATE, 0, (const struct timespec *)(long)INT_MAX, &fx2, 0);
        if (r > 0) moved += r;
        else sched_yield();
    }
    long w1 = futex(&fx2, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
    while (__atomic_load_n(&fx_woke, __ATOMIC_SEQ_CST) < 1) sched_yield();
    long w2 = futex(&fx2, FUTEX_WAKE_PRIVATE, INT_MAX, NULL, NULL, 0);
    for (int i = 0; i < 3; i++) pthread_join(t[i], NULL);
    long r3 = futex(&fx1, FUTEX_CMP_REQUEUE_PRIVATE, 1, (const struct timespec *)1L, &fx2, 5);
    int e3 = errno;
    printf("futex: wait on a changed word %s, timed wait %s, requeued %ld, woke %ld then %ld, "
           "cmp_requeue on a changed word %s\n", r1 == -1 && e1 == EAGAIN ? "EAGAIN" : "other",
           r2 == -1 && e2 == ETIMEDOUT ? "ETIMEDOUT" : "other", moved, w1, w2,
           r3 == -1 && e3 == EAGAIN ? "EAGAIN" : "other");
    CHECK(moved == 3 && w1 == 1 && w2 == 2 && fx_woke == 3, "moved %ld w1 %ld w2 %ld woke %d", moved, w1, w2, fx_woke);
}

/* ---- cancel: pthread_cancel (musl: signal 33, glibc: 32) of a sleeper and a condvar waiter ---- */
static pthread_mutex_t cm = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cc = PTHREAD_COND_INITIALIZER;
static int cleanups, waiting;
static void cleanup(void *arg) { (void)arg; cleanups++; pthread_mutex_unlock(&cm); }
static void *cond_waiter(void *arg) {
    (void)arg;
    pthread_mutex_lock(&cm);
    pthread_cleanup_push(cleanup, NULL);
    waiting = 1;
    for (;;) pthread_cond_wait(&cc, &cm);   /* a cancellation point */
    pthread_cleanup_pop(1);
    return NULL;
}
static void *sleeper(void *arg) {
    (void)arg;
    for (;;) usleep(1000);
    return NULL;
}
static void part_cancel(void) {
    pthread_t a, b;
    pthread_create(&a, NULL, cond_waiter, NULL);
    pthread_create(&b, NULL, sleeper, NULL);
    for (;;) {
        pthread_mutex_lock(&cm);
        int w = waiting;
        pthread_mutex_unlock(&cm);
        if (w) break;
        sched_yield();
    }
    pthread_cancel(a);
    pthread_cancel(b);
    void *ra, *rb;
    pthread_join(a, &ra);
    pthread_join(b, &rb);
    printf("cancel: condvar waiter canceled %d, sleeper canceled %d, cleanup handlers run %d\n",
           ra == PTHREAD_CANCELED, rb == PTHREAD_CANCELED, cleanups);
    CHECK(ra == PTHREAD_CANCELED && rb == PTHREAD_CANCELED && cleanups == 1, "cleanups %d", cleanups);
}

/* ---- timed: a condvar wait and a semaphore wait that time out ---- */
static void part_timed(void) {
    pthread_mutex_t tm = PTHREAD_MUTEX_INITIALIZER;
    pthread_cond_t tc = PTHREAD_COND_INITIALIZER;
    struct timespec ts, t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    clock_gettime(CLOCK_REALTIME, &ts);
    ts.tv_nsec += 50 * 1000000;
    if (ts.tv_nsec >= 1000000000) { ts.tv_sec++; ts.tv_nsec -= 1000000000; }
    pthread_mutex_lock(&tm);
    int r = pthread_cond_timedwait(&tc, &tm, &ts);
    pthread_mutex_unlock(&tm);
    sem_t s;
    sem_init(&s, 0, 0);
    clock_gettime(CLOCK_REALTIME, &ts);
    ts.tv_nsec += 30 * 1000000;
    if (ts.tv_nsec >= 1000000000) { ts.tv_sec++; ts.tv_nsec -= 1000000000; }
    int r2 = sem_timedwait(&s, &ts);
    int e2 = errno;
    clock_gettime(CLOCK_MONOTONIC, &t1);
    double ms = (t1.tv_sec - t0.tv_sec) * 1e3 + (t1.tv_nsec - t0.tv_nsec) / 1e6;
    printf("timed: cond_timedwait %s, sem_timedwait %s, waited at least 80 ms %d\n",
           r == ETIMEDOUT ? "ETIMEDOUT" : "other", r2 == -1 && e2 == ETIMEDOUT ? "ETIMEDOUT" : "other", ms >= 79.0);
    CHECK(r == ETIMEDOUT && r2 == -1 && e2 == ETIMEDOUT && ms >= 79.0, "r %d r2 %d e2 %d ms %f", r, r2, e2, ms);
}

/* ---- detach: detached threads signal a semaphore and end on their own ---- */
static sem_t det_sem;
static long det_sum;
static void *det_worker(void *arg) {
    __atomic_add_fetch(&det_sum, (long)arg, __ATOMIC_SEQ_CST);
    sem_post(&det_sem);
    return NULL;
}
static void part_detach(void) {
    sem_init(&det_sem, 0, 0);
    pthread_attr_t a;
    pthread_attr_init(&a);
    pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
    pthread_attr_setstacksize(&a, 64 * 1024);
    for (long i = 1; i <= 12; i++) {
        pthread_t t;
        pthread_create(&t, &a, det_worker, (void *)i);
    }
    for (int i = 0; i < 12; i++) sem_wait(&det_sem);
    printf("detach: 12 detached threads, sum %ld\n", det_sum);
    CHECK(det_sum == 78, "sum %ld", det_sum);
}

/* ---- rwlock: readers share, writers exclude ---- */
static pthread_rwlock_t rw = PTHREAD_RWLOCK_INITIALIZER;
static long rw_a, rw_b;
static void *rw_writer(void *arg) {
    (void)arg;
    for (int i = 0; i < 3000; i++) {
        pthread_rwlock_wrlock(&rw);
        rw_a++;
        rw_b++;
        pthread_rwlock_unlock(&rw);
    }
    return NULL;
}
static void *rw_reader(void *arg) {
    (void)arg;
    long torn = 0;
    for (int i = 0; i < 3000; i++) {
        pthread_rwlock_rdlock(&rw);
        torn += rw_a != rw_b;
        pthread_rwlock_unlock(&rw);
    }
    return (void *)torn;
}
static void part_rwlock(void) {
    pthread_t w[2], r[3];
    for (int i = 0; i < 2; i++) pthread_create(&w[i], NULL, rw_writer, NULL);
    for (int i = 0; i < 3; i++) pthread_create(&r[i], NULL, rw_reader, NULL);
    long torn = 0;
    for (int i = 0; i < 2; i++) pthread_join(w[i], NULL);
    for (int i = 0; i < 3; i++) {
        void *t;
        pthread_join(r[i], &t);
        torn += (long)t;
    }
    printf("rwlock: a %ld b %ld, torn reads %ld\n", rw_a, rw_b, torn);
    CHECK(rw_a == 6000 && rw_b == 6000 && torn == 0, "a %ld b %ld torn %ld", rw_a, rw_b, torn);
}

/* ---- once: pthread_once runs its routine once among racing threads ---- */
static pthread_once_t once = PTHREAD_ONCE_INIT;
static int once_runs;
static void once_fn(void) { once_runs++; usleep(10000); }
static void *once_worker(void *arg) { (void)arg; pthread_once(&once, once_fn); return (void *)(long)once_runs; }
static void part_once(void) {
    pthread_t t[6];
    for (int i = 0; i < 6; i++) pthread_create(&t[i], NULL, once_worker, NULL);
    int all_saw = 1;
    for (int i = 0; i < 6; i++) {
        void *r;
        pthread_join(t[i], &r);
        all_saw &= (long)r == 1;
    }
    printf("once: ran %d time(s), every thread saw it done %d\n", once_runs, all_saw);
    CHECK(once_runs == 1 && all_saw, "runs %d", once_runs);
}

/* ---- hidden: two threads released together call one function through a pointer ---- */
__attribute__((noinline)) unsigned long long hidden_worker(unsigned long long seed) {
    unsigned long long h = seed;
    for (int i = 0; i < 1000; i++) h = (h ^ (h >> 29)) * 0xbf58476d1ce4e5b9ull + (unsigned long long)i;
    return h;
}
unsigned long long (*volatile worker_ptr)(unsigned long long) = hidden_worker;
static int hidden_ready, hidden_go;
static void *hidden_thread(void *arg) {
    __atomic_add_fetch(&hidden_ready, 1, __ATOMIC_SEQ_CST);
    while (!__atomic_load_n(&hidden_go, __ATOMIC_SEQ_CST)) sched_yield();   /* both call within microseconds */
    return (void *)worker_ptr((unsigned long long)(long)arg);
}
static void part_hidden(void) {
    pthread_t t[2];
    for (long k = 0; k < 2; k++) pthread_create(&t[k], NULL, hidden_thread, (void *)(k + 1));
    while (__atomic_load_n(&hidden_ready, __ATOMIC_SEQ_CST) < 2) sched_yield();
    __atomic_store_n(&hidden_go, 1, __ATOMIC_SEQ_CST);
    void *r[2];
    for (int k = 0; k < 2; k++) pthread_join(t[k], &r[k]);
    printf("hidden: results %016llx %016llx\n", (unsigned long long)r[0], (unsigned long long)r[1]);
}

/* ---- mainexit: the main thread leaves by pthread_exit; the last thread ends the process ---- */
static void *last_one(void *arg) {
    (void)arg;
    usleep(50000);
    printf("mainexit: the last thread runs after main's pthread_exit\n");
    fflush(stdout);
    return NULL;
}
static void part_mainexit(void) {
    pthread_t t;
    pthread_create(&t, NULL, last_one, NULL);
    printf("mainexit: main leaves\n");
    fflush(stdout);
    pthread_exit(NULL);
}

static const struct { const char *name; void (*fn)(void); } parts[] = {
    {"mutex", part_mutex}, {"condvar", part_condvar}, {"tls", part_tls}, {"join", part_join},
    {"barrier", part_barrier}, {"many", part_many}, {"kill", part_kill}, {"procsig", part_procsig}, {"rtsig", part_rtsig}, {"futex", part_futex}, {"cancel", part_cancel},
    {"timed", part_timed},
    {"detach", part_detach}, {"rwlock", part_rwlock}, {"once", part_once}, {"hidden", part_hidden},
    {"mainexit", part_mainexit},
};
#define NPARTS (int)(sizeof parts / sizeof parts[0])

int main(int argc, char **argv) {
    setvbuf(stdout, NULL, _IOLBF, 0);
    for (int i = 0; i < NPARTS; i++) {
        int run = argc == 1 ? strcmp(parts[i].name, "mainexit") != 0 : 0;
        for (int k = 1; k < argc; k++) run |= !strcmp(argv[k], parts[i].name);
        if (run) parts[i].fn();
    }
    for (int k = 1; k < argc; k++) {
        int known = 0;
        for (int i = 0; i < NPARTS; i++) known |= !strcmp(argv[k], parts[i].name);
        if (!known) { fprintf(stderr, "pthreads_test: no part %s\n", argv[k]); return 2; }
    }
    printf("%s\n", failures ? "some checks failed" : "all checks passed");
    return failures ? 1 : 0;
}
