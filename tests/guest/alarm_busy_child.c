/*
 * alarm_busy_child.c - a signal pending for a waiting thread is delivered
 * while another process keeps making syscalls. The parent arms a 2 ms
 * timer whose handler kills its child, then waits in waitpid; the child
 * loops on mmap/munmap. Natively the handler runs as soon as the timer
 * expires, the child at most a loop or two further on. hvrun once left the
 * SIGALRM pending until the child's quantum (10 000 calls) ran out: seconds
 * late, tens of seconds on a loaded host.
 *
 * What is checked: how many loops the child made between the moment the
 * timer was due (the child reads the clock each loop) and the handler's
 * kill, against a bound far above what Linux needs and far below the old
 * quantum; and a watchdog (the child's own alarm) that ends a run where the
 * handler never comes, with a failure line instead of a hang.
 */
#define _GNU_SOURCE
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/mman.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "guest_check.h"

#define ALARM_NS 2000000LL
/* The computing part of a loop (about 1 ms natively), besides its two
 * calls: how many loops the child makes between the timer's expiry and
 * the handler's kill is then a host's wake-up latency over 1 ms, a few
 * natively even on a loaded host. Under virtual time a loop is three
 * events (the calls and a vDSO clock read: 3 us of logical time), so the
 * timer is due at about the 670th loop, and hvrun's old quantum (10 000
 * calls, 5 000 loops) had the handler some 4 300 loops late. */
#define SPIN_PER_LOOP 1000000
#define LOOPS_LATE_MAX 100

struct shared {
    int64_t due_ns;        /* CLOCK_MONOTONIC when the parent's timer is due */
    volatile long loops;   /* the child's loops so far */
    volatile long loops_at_due; /* the loop that first saw the clock past due */
    long loops_at_kill;    /* read by the parent's handler */
};

static struct shared *sh;
static pid_t child;

static int64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static void on_alarm(int sig)
{
    (void)sig;
    sh->loops_at_kill = sh->loops;
    kill(child, SIGKILL);
}

static void child_loop(void)
{
    /* The watchdog: the parent's handler never came. Its SIGALRM kills
     * (the parent's handler is the parent's). */
    signal(SIGALRM, SIG_DFL);
    sigset_t alrm;
    sigemptyset(&alrm);
    sigaddset(&alrm, SIGALRM);
    sigprocmask(SIG_UNBLOCK, &alrm, NULL);
    alarm(10);
    for (;;) {
        void *m = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (m == MAP_FAILED)
            _exit(2);
        munmap(m, 4096);
        for (volatile int i = 0; i < SPIN_PER_LOOP; i++)
            ;
        sh->loops++;
        if (sh->loops_at_due < 0 && now_ns() >= sh->due_ns)
            sh->loops_at_due = sh->loops;
    }
}

int main(void)
{
    sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE,
              MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    CHECK(sh != MAP_FAILED);
    sh->loops_at_due = -1;
    sh->loops_at_kill = -1;
    struct sigaction sa = {.sa_handler = on_alarm};
    CHECK(sigaction(SIGALRM, &sa, NULL) == 0);
    /* Armed before the fork (a child does not inherit it), so the due
     * time holds whoever runs first; blocked until the handler knows the
     * child (a host slow to return from fork). */
    sigset_t alrm;
    sigemptyset(&alrm);
    sigaddset(&alrm, SIGALRM);
    CHECK(sigprocmask(SIG_BLOCK, &alrm, NULL) == 0);
    sh->due_ns = now_ns() + ALARM_NS;
    struct itimerval it = {{0, 0}, {0, ALARM_NS / 1000}};
    CHECK(setitimer(ITIMER_REAL, &it, NULL) == 0);
    child = fork();
    CHECK(child >= 0);
    if (child == 0)
        child_loop();
    CHECK(sigprocmask(SIG_UNBLOCK, &alrm, NULL) == 0);
    int st;
    pid_t r;
    while ((r = waitpid(child, &st, 0)) < 0 && errno == EINTR)
        ;
    CHECK(r == child);
    if (WIFSIGNALED(st) && WTERMSIG(st) == SIGALRM) {
        printf("FAIL: the parent's alarm was not delivered in 10 s "
               "(the child's watchdog fired)\n");
        return 1;
    }
    CHECK(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL);
    printf("alarm delivered, child killed by SIGKILL\n");
    long late = sh->loops_at_kill - sh->loops_at_due;
    if (sh->loops_at_due < 0)
        late = 0; /* killed before it saw the clock past due */
    if (late > LOOPS_LATE_MAX)
        printf("FAIL: the handler ran %ld loops of the child after the "
               "timer was due\n", late);
    else
        printf("the handler ran within %d loops of the child after the "
               "timer was due\n", LOOPS_LATE_MAX);
    return late > LOOPS_LATE_MAX;
}
