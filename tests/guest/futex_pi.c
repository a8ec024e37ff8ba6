/*
 * futex_pi.c - priority-inheritance futexes as Linux gives them: the raw
 * word protocol (FUTEX_LOCK_PI, LOCK_PI2, TRYLOCK_PI, UNLOCK_PI: the TID in
 * the word, FUTEX_WAITERS, FUTEX_OWNER_DIED, EDEADLK, EPERM, ESRCH, the
 * timeouts and their clocks), the requeue-PI pair (FUTEX_WAIT_REQUEUE_PI,
 * FUTEX_CMP_REQUEUE_PI), and glibc's PTHREAD_PRIO_INHERIT mutexes over them
 * (contended, trylock, timed, robust with a dead owner, process-shared, a
 * condition variable). Run natively and under hvrun, the output must
 * match (tests/run-guest-tests.sh).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/futex.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "guest_check.h"

#ifndef FUTEX_LOCK_PI2
#define FUTEX_LOCK_PI2 13
#endif

#define BOGUS_TID 0x3ffffff0u

static long futex(uint32_t *uaddr, int op, uint32_t val, const void *ts,
                  uint32_t *uaddr2, uint32_t val3)
{
    return syscall(SYS_futex, uaddr, op, val, ts, uaddr2, val3);
}

/* "0" or the errno's name, one word to print. */
static const char *res(long rc)
{
    return rc == 0 ? "0" : rc > 0 ? "positive" : strerrorname_np(errno);
}

static const char *word_str(uint32_t w, uint32_t me, uint32_t other)
{
    static char buf[96];
    uint32_t tid = w & FUTEX_TID_MASK;
    snprintf(buf, sizeof(buf), "%s%s%s",
             tid == 0       ? "0"
             : tid == me    ? "me"
             : tid == other ? "other"
             : tid == BOGUS_TID ? "bogus"
                                : "?",
             (w & FUTEX_WAITERS) ? "|WAITERS" : "",
             (w & FUTEX_OWNER_DIED) ? "|OWNER_DIED" : "");
    return buf;
}

static struct timespec after_ms(clockid_t clk, long ms)
{
    struct timespec ts;
    clock_gettime(clk, &ts);
    ts.tv_nsec += ms * 1000000L;
    ts.tv_sec += ts.tv_nsec / 1000000000L;
    ts.tv_nsec %= 1000000000L;
    return ts;
}

static void raw_single(void)
{
    static uint32_t w;
    uint32_t me = (uint32_t)gettid();
    printf("trylock free: %s", res(futex(&w, FUTEX_TRYLOCK_PI, 0, NULL, NULL, 0)));
    printf(" word %s\n", word_str(w, me, 0));
    printf("lock own: %s\n", res(futex(&w, FUTEX_LOCK_PI, 0, NULL, NULL, 0)));
    printf("trylock own: %s\n",
           res(futex(&w, FUTEX_TRYLOCK_PI, 0, NULL, NULL, 0)));
    printf("lock_pi2 own: %s\n",
           res(futex(&w, FUTEX_LOCK_PI2, 0, NULL, NULL, 0)));
    printf("unlock: %s", res(futex(&w, FUTEX_UNLOCK_PI, 0, NULL, NULL, 0)));
    printf(" word %s\n", word_str(w, me, 0));
    printf("unlock free: %s\n",
           res(futex(&w, FUTEX_UNLOCK_PI, 0, NULL, NULL, 0)));
    printf("lock free: %s", res(futex(&w, FUTEX_LOCK_PI, 0, NULL, NULL, 0)));
    printf(" word %s\n", word_str(w, me, 0));
    w = me | FUTEX_WAITERS;
    printf("unlock with waiters bit: %s", res(futex(&w, FUTEX_UNLOCK_PI, 0, NULL, NULL, 0)));
    printf(" word %s\n", word_str(w, me, 0));

    w = BOGUS_TID;
    printf("trylock dead owner: %s", res(futex(&w, FUTEX_TRYLOCK_PI, 0, NULL, NULL, 0)));
    printf(" word %s\n", word_str(w, me, 0));
    w = BOGUS_TID;
    printf("lock dead owner: %s", res(futex(&w, FUTEX_LOCK_PI, 0, NULL, NULL, 0)));
    printf(" word %s\n", word_str(w, me, 0));
    printf("unlock not owner: %s\n",
           res(futex(&w, FUTEX_UNLOCK_PI, 0, NULL, NULL, 0)));
    w = FUTEX_OWNER_DIED;
    printf("trylock owner died: %s", res(futex(&w, FUTEX_TRYLOCK_PI, 0, NULL, NULL, 0)));
    printf(" word %s\n", word_str(w, me, 0));
    w = FUTEX_OWNER_DIED | FUTEX_WAITERS;
    printf("lock owner died, waiters bit: %s", res(futex(&w, FUTEX_LOCK_PI, 0, NULL, NULL, 0)));
    printf(" word %s\n", word_str(w, me, 0));
    w = FUTEX_WAITERS;
    printf("lock tid 0, waiters bit: %s", res(futex(&w, FUTEX_LOCK_PI, 0, NULL, NULL, 0)));
    printf(" word %s\n", word_str(w, me, 0));

    w = 0;
    struct timespec bad = {0, 1000000000L}, neg = {-1, 0};
    printf("lock realtime flag: %s\n",
           res(futex(&w, FUTEX_LOCK_PI | FUTEX_CLOCK_REALTIME, 0, NULL, NULL, 0)));
    printf("lock bad timeout: %s\n", res(futex(&w, FUTEX_LOCK_PI, 0, &bad, NULL, 0)));
    printf("lock_pi2 negative timeout: %s\n",
           res(futex(&w, FUTEX_LOCK_PI2, 0, &neg, NULL, 0)));
    printf("lock bad timeout pointer: %s\n",
           res(futex(&w, FUTEX_LOCK_PI, 0, (void *)8, NULL, 0)));
    printf("trylock ignores timeout: %s", res(futex(&w, FUTEX_TRYLOCK_PI, 0, &bad, NULL, 0)));
    printf(" word %s\n", word_str(w, me, 0));
    w = 0;
    printf("lock unaligned: %s\n",
           res(futex((uint32_t *)((char *)&w + 1), FUTEX_LOCK_PI, 0, NULL, NULL, 0)));
    printf("lock bad address: %s\n",
           res(futex((uint32_t *)8, FUTEX_LOCK_PI, 0, NULL, NULL, 0)));
    printf("unlock bad address: %s\n",
           res(futex((uint32_t *)8, FUTEX_UNLOCK_PI, 0, NULL, NULL, 0)));

    static uint32_t cond, pi;
    struct timespec soon = after_ms(CLOCK_MONOTONIC, 20);
    printf("wait_requeue_pi same address: %s\n",
           res(futex(&cond, FUTEX_WAIT_REQUEUE_PI, 0, NULL, &cond, 0)));
    printf("wait_requeue_pi value changed: %s\n",
           res(futex(&cond, FUTEX_WAIT_REQUEUE_PI, 1, NULL, &pi, 0)));
    printf("wait_requeue_pi timeout: %s\n",
           res(futex(&cond, FUTEX_WAIT_REQUEUE_PI, 0, &soon, &pi, 0)));
    printf("cmp_requeue_pi nr_wake 2: %s\n",
           res(futex(&cond, FUTEX_CMP_REQUEUE_PI, 2, (void *)1, &pi, 0)));
    printf("cmp_requeue_pi same address: %s\n",
           res(futex(&cond, FUTEX_CMP_REQUEUE_PI, 1, (void *)1, &cond, 0)));
    printf("cmp_requeue_pi value changed: %s\n",
           res(futex(&cond, FUTEX_CMP_REQUEUE_PI, 1, (void *)1, &pi, 5)));
    printf("cmp_requeue_pi nobody: %ld\n",
           futex(&cond, FUTEX_CMP_REQUEUE_PI, 1, (void *)1, &pi, 0));
}

/* ---- two threads on a raw word ---------------------------------------- */

static uint32_t word;
static volatile uint32_t other_tid;
static volatile int phase;
static volatile uint32_t word_got_back;

static void wait_phase(int n)
{
    while (phase < n)
        usleep(1000);
}

static void wait_waiters_bit(uint32_t *w)
{
    while (!(__atomic_load_n(w, __ATOMIC_SEQ_CST) & FUTEX_WAITERS))
        usleep(1000);
}

static void *owner_thread(void *arg)
{
    other_tid = (uint32_t)gettid();
    CHECK(futex(&word, FUTEX_LOCK_PI, 0, NULL, NULL, 0) == 0);
    phase = 1;
    wait_phase(2); /* main timed out twice, then blocks */
    wait_waiters_bit(&word);
    usleep(20000);
    CHECK(futex(&word, FUTEX_UNLOCK_PI, 0, NULL, NULL, 0) == 0);
    wait_phase(3); /* main holds it now, with the waiters bit */
    CHECK(futex(&word, FUTEX_LOCK_PI, 0, NULL, NULL, 0) == 0);
    word_got_back = word;
    CHECK(futex(&word, FUTEX_UNLOCK_PI, 0, NULL, NULL, 0) == 0);
    return arg;
}

static void raw_threads(void)
{
    uint32_t me = (uint32_t)gettid();
    pthread_t t;
    pthread_create(&t, NULL, owner_thread, NULL);
    wait_phase(1);
    printf("held by other: word %s\n", word_str(word, me, other_tid));
    printf("trylock held: %s", res(futex(&word, FUTEX_TRYLOCK_PI, 0, NULL, NULL, 0)));
    printf(" word %s\n", word_str(word, me, other_tid));
    printf("unlock held by other: %s\n",
           res(futex(&word, FUTEX_UNLOCK_PI, 0, NULL, NULL, 0)));
    struct timespec rt = after_ms(CLOCK_REALTIME, 30);
    printf("lock realtime timeout: %s\n",
           res(futex(&word, FUTEX_LOCK_PI, 0, &rt, NULL, 0)));
    struct timespec mono = after_ms(CLOCK_MONOTONIC, 30);
    printf("lock_pi2 monotonic timeout: %s\n",
           res(futex(&word, FUTEX_LOCK_PI2, 0, &mono, NULL, 0)));
    rt = after_ms(CLOCK_REALTIME, 30);
    printf("lock_pi2 realtime timeout: %s\n",
           res(futex(&word, FUTEX_LOCK_PI2 | FUTEX_CLOCK_REALTIME, 0, &rt, NULL, 0)));
    struct timespec past = {1, 0};
    printf("lock timeout in the past: %s\n",
           res(futex(&word, FUTEX_LOCK_PI, 0, &past, NULL, 0)));
    printf("word after timeouts: %s\n", word_str(word, me, other_tid));
    phase = 2;
    printf("blocking lock: %s", res(futex(&word, FUTEX_LOCK_PI, 0, NULL, NULL, 0)));
    printf(" word %s\n", word_str(word, me, other_tid));
    phase = 3;
    usleep(20000); /* the other thread waits by then */
    printf("unlock to a waiter: %s\n",
           res(futex(&word, FUTEX_UNLOCK_PI, 0, NULL, NULL, 0)));
    pthread_join(t, NULL);
    printf("other got it back: word %s\n",
           word_str(word_got_back, me, other_tid));
    printf("word at the end: %s\n", word_str(word, me, other_tid));
}

/* ---- a handler while waiting: the lock wait restarts ------------------- */

static uint32_t sig_word;
static volatile int handled;
static pid_t main_tid;

static void on_usr1(int sig)
{
    handled = sig;
}

static void *signal_then_unlock(void *arg)
{
    CHECK(futex(&sig_word, FUTEX_LOCK_PI, 0, NULL, NULL, 0) == 0);
    phase = 10;
    wait_waiters_bit(&sig_word);
    usleep(20000);
    syscall(SYS_tgkill, getpid(), main_tid, SIGUSR1);
    usleep(20000);
    CHECK(futex(&sig_word, FUTEX_UNLOCK_PI, 0, NULL, NULL, 0) == 0);
    return arg;
}

static void signal_restart(void)
{
    struct sigaction sa = {.sa_handler = on_usr1}; /* no SA_RESTART */
    sigaction(SIGUSR1, &sa, NULL);
    main_tid = gettid();
    pthread_t t;
    phase = 0;
    pthread_create(&t, NULL, signal_then_unlock, NULL);
    wait_phase(10);
    printf("lock across a handler: %s",
           res(futex(&sig_word, FUTEX_LOCK_PI, 0, NULL, NULL, 0)));
    printf(", handler ran %d\n", handled == SIGUSR1);
    pthread_join(t, NULL);
}

/* ---- the order waiters get it ------------------------------------------ */

static uint32_t order_word;
static int order[3], norder;

static void *order_waiter(void *arg)
{
    CHECK(futex(&order_word, FUTEX_LOCK_PI, 0, NULL, NULL, 0) == 0);
    order[norder++] = (int)(intptr_t)arg;
    CHECK(futex(&order_word, FUTEX_UNLOCK_PI, 0, NULL, NULL, 0) == 0);
    return NULL;
}

static void wake_order(void)
{
    CHECK(futex(&order_word, FUTEX_LOCK_PI, 0, NULL, NULL, 0) == 0);
    pthread_t t[3];
    for (int i = 0; i < 3; i++) {
        pthread_create(&t[i], NULL, order_waiter, (void *)(intptr_t)i);
        if (i == 0)
            wait_waiters_bit(&order_word);
        usleep(50000);
    }
    CHECK(futex(&order_word, FUTEX_UNLOCK_PI, 0, NULL, NULL, 0) == 0);
    for (int i = 0; i < 3; i++)
        pthread_join(t[i], NULL);
    printf("hand-off order: %d %d %d, word %s\n", order[0], order[1], order[2],
           word_str(order_word, 0, 0));
}

/* ---- requeue-PI ---------------------------------------------------------- */

static uint32_t cond_word, pi_word;
static volatile long requeue_wait_rc;
static volatile uint32_t held_after;

static void *requeue_waiter(void *arg)
{
    other_tid = (uint32_t)gettid();
    long rc = futex(&cond_word, FUTEX_WAIT_REQUEUE_PI | FUTEX_PRIVATE_FLAG, 0,
                    NULL, &pi_word, 0);
    requeue_wait_rc = rc == 0 ? 0 : errno;
    held_after = pi_word;
    if (rc == 0)
        CHECK(futex(&pi_word, FUTEX_UNLOCK_PI | FUTEX_PRIVATE_FLAG, 0, NULL,
                    NULL, 0) == 0);
    return arg;
}

static long requeue_until_moved(int nr_requeue)
{
    for (;;) {
        long rc = futex(&cond_word, FUTEX_CMP_REQUEUE_PI | FUTEX_PRIVATE_FLAG,
                        1, (void *)(intptr_t)nr_requeue, &pi_word, 0);
        if (rc != 0)
            return rc < 0 ? -errno : rc;
        usleep(1000);
    }
}

static void print_waiter(uint32_t me)
{
    printf("  waiter: %s",
           requeue_wait_rc ? strerrorname_np((int)requeue_wait_rc) : "0");
    printf(", held %s", word_str(held_after, me, other_tid));
    printf(", word now %s\n", word_str(pi_word, me, other_tid));
}

static void requeue_pi(void)
{
    pthread_t t;
    uint32_t me = (uint32_t)gettid();
    /* the PI futex free: the waiter is woken owning it */
    other_tid = 0;
    pthread_create(&t, NULL, requeue_waiter, NULL);
    printf("requeue_pi to a free lock: %ld\n", requeue_until_moved(0));
    pthread_join(t, NULL);
    print_waiter(me);

    /* held: the waiter moves onto it and gets it at the unlock */
    CHECK(futex(&pi_word, FUTEX_LOCK_PI | FUTEX_PRIVATE_FLAG, 0, NULL, NULL, 0) == 0);
    pthread_create(&t, NULL, requeue_waiter, NULL);
    printf("requeue_pi to a held lock: %ld", requeue_until_moved(1));
    printf(", word %s\n", word_str(pi_word, me, other_tid));
    printf("plain wake of the old word: %ld\n",
           futex(&cond_word, FUTEX_WAKE | FUTEX_PRIVATE_FLAG, 1, NULL, NULL, 0));
    usleep(20000);
    CHECK(futex(&pi_word, FUTEX_UNLOCK_PI | FUTEX_PRIVATE_FLAG, 0, NULL, NULL, 0) == 0);
    pthread_join(t, NULL);
    print_waiter(me);

    /* a plain wake of a requeue-PI waiter is refused; so is a plain
     * requeue */
    pthread_create(&t, NULL, requeue_waiter, NULL);
    long rc;
    while ((rc = futex(&cond_word, FUTEX_WAKE | FUTEX_PRIVATE_FLAG, 1, NULL,
                       NULL, 0)) == 0)
        usleep(1000);
    printf("plain wake of a requeue_pi waiter: %s\n", res(rc));
    printf("plain requeue of it: %s\n",
           res(futex(&cond_word, FUTEX_CMP_REQUEUE | FUTEX_PRIVATE_FLAG, 0,
                     (void *)1, &pi_word, 0)));
    printf("requeue_pi to another lock: %s\n",
           res(futex(&cond_word, FUTEX_CMP_REQUEUE_PI | FUTEX_PRIVATE_FLAG, 1,
                     (void *)1, &order_word, 0)));
    printf("requeue_pi releases it: %ld\n", requeue_until_moved(0));
    pthread_join(t, NULL);
    printf("  waiter: %s\n",
           requeue_wait_rc ? strerrorname_np((int)requeue_wait_rc) : "0");
}

/* ---- glibc's PI mutexes ---------------------------------------------------- */

static pthread_mutex_t pim;
static long counter;

static void init_pi(pthread_mutex_t *m, int robust, int shared)
{
    pthread_mutexattr_t a;
    pthread_mutexattr_init(&a);
    pthread_mutexattr_setprotocol(&a, PTHREAD_PRIO_INHERIT);
    if (robust)
        pthread_mutexattr_setrobust(&a, PTHREAD_MUTEX_ROBUST);
    if (shared)
        pthread_mutexattr_setpshared(&a, PTHREAD_PROCESS_SHARED);
    CHECK(pthread_mutex_init(m, &a) == 0);
    pthread_mutexattr_destroy(&a);
}

static void *count_up(void *arg)
{
    for (int i = 0; i < 2000; i++) {
        pthread_mutex_lock(&pim);
        long c = counter;
        if (i % 100 == 0)
            sched_yield(); /* others come to wait on it */
        counter = c + 1;
        pthread_mutex_unlock(&pim);
    }
    return arg;
}

static volatile int holding;

static void *hold_then(void *arg)
{
    pthread_mutex_lock(&pim);
    holding = 1;
    if (arg == (void *)1) { /* die holding it, once main waits */
        wait_waiters_bit((uint32_t *)&pim.__data.__lock);
        usleep(20000);
        return NULL;
    }
    if (arg == (void *)2) /* die holding it at once */
        return NULL;
    while (holding != 2)
        usleep(1000);
    pthread_mutex_unlock(&pim);
    return NULL;
}

static const char *rcname(int rc)
{
    return rc == 0 ? "0" : strerrorname_np(rc);
}

static void pthread_pi(void)
{
    init_pi(&pim, 0, 0);
    pthread_t t[3];
    for (int i = 0; i < 3; i++)
        pthread_create(&t[i], NULL, count_up, NULL);
    for (int i = 0; i < 3; i++)
        pthread_join(t[i], NULL);
    printf("pi mutex counter: %ld\n", counter);

    holding = 0;
    pthread_create(&t[0], NULL, hold_then, NULL);
    while (!holding)
        usleep(1000);
    printf("pi trylock held: %s\n", rcname(pthread_mutex_trylock(&pim)));
    struct timespec rt = after_ms(CLOCK_REALTIME, 30);
    printf("pi timedlock held: %s\n", rcname(pthread_mutex_timedlock(&pim, &rt)));
    struct timespec mono = after_ms(CLOCK_MONOTONIC, 30);
    printf("pi clocklock monotonic held: %s\n",
           rcname(pthread_mutex_clocklock(&pim, CLOCK_MONOTONIC, &mono)));
    printf("pi unlock not owner: %s\n", rcname(pthread_mutex_unlock(&pim)));
    holding = 2;
    printf("pi lock: %s\n", rcname(pthread_mutex_lock(&pim)));
    printf("pi relock errorcheck-less: %s\n", rcname(pthread_mutex_trylock(&pim)));
    pthread_mutex_unlock(&pim);
    pthread_join(t[0], NULL);
    pthread_mutex_destroy(&pim);

    init_pi(&pim, 1, 0);
    pthread_create(&t[0], NULL, hold_then, (void *)2);
    pthread_join(t[0], NULL);
    int rc = pthread_mutex_lock(&pim);
    printf("robust pi, owner dead: %s\n", rcname(rc));
    if (rc == EOWNERDEAD)
        pthread_mutex_consistent(&pim);
    pthread_mutex_unlock(&pim);
    printf("robust pi, again: %s\n", rcname(pthread_mutex_lock(&pim)));
    pthread_mutex_unlock(&pim);
    holding = 0;
    pthread_create(&t[0], NULL, hold_then, (void *)1);
    while (!holding)
        usleep(1000);
    rc = pthread_mutex_lock(&pim);
    printf("robust pi, owner dies while waited for: %s\n", rcname(rc));
    if (rc == EOWNERDEAD)
        pthread_mutex_consistent(&pim);
    pthread_mutex_unlock(&pim);
    pthread_join(t[0], NULL);
    holding = 0;
    pthread_create(&t[0], NULL, hold_then, (void *)2);
    pthread_join(t[0], NULL);
    printf("robust pi trylock, owner dead: %s\n", rcname(pthread_mutex_trylock(&pim)));
    pthread_mutex_unlock(&pim);
    printf("robust pi not made consistent: %s\n", rcname(pthread_mutex_lock(&pim)));
}

static pthread_cond_t cv;
static int items;

static void *consumer(void *arg)
{
    int got = 0;
    pthread_mutex_lock(&pim);
    while (got < 50) {
        while (items == 0)
            pthread_cond_wait(&cv, &pim);
        items--;
        got++;
        pthread_cond_signal(&cv);
    }
    pthread_mutex_unlock(&pim);
    return arg;
}

static void cond_with_pi(void)
{
    init_pi(&pim, 0, 0);
    pthread_cond_init(&cv, NULL);
    pthread_t t;
    pthread_create(&t, NULL, consumer, NULL);
    for (int i = 0; i < 50; i++) {
        pthread_mutex_lock(&pim);
        while (items >= 3)
            pthread_cond_wait(&cv, &pim);
        items++;
        pthread_cond_broadcast(&cv);
        pthread_mutex_unlock(&pim);
    }
    pthread_join(t, NULL);
    printf("cond with pi mutex: items left %d\n", items);
}

static void process_shared(void)
{
    pthread_mutex_t *m = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
                              MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    CHECK(m != MAP_FAILED);
    init_pi(m, 1, 1);
    volatile int *flag = (volatile int *)(m + 1);
    pid_t c = fork();
    if (c == 0) {
        pthread_mutex_lock(m);
        *flag = 1;
        wait_waiters_bit((uint32_t *)&m->__data.__lock);
        usleep(20000);
        _exit(0); /* dies holding it */
    }
    while (!*flag)
        usleep(1000);
    int rc = pthread_mutex_lock(m);
    printf("shared robust pi, owner process dies: %s\n", rcname(rc));
    if (rc == EOWNERDEAD)
        pthread_mutex_consistent(m);
    pthread_mutex_unlock(m);
    waitpid(c, NULL, 0);
}

int main(void)
{
    setvbuf(stdout, NULL, _IONBF, 0);
    raw_single();
    raw_threads();
    signal_restart();
    wake_order();
    requeue_pi();
    pthread_pi();
    cond_with_pi();
    process_shared();
    return 0;
}
