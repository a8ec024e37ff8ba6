/*
 * timers: alarm, setitimer/getitimer and the POSIX timers deliver their
 * signals, with the siginfo Linux gives, and are cleared by fork and (the
 * POSIX ones) by execve. Only facts that are the same natively and under
 * hvrun are printed; every wait is bounded by 3 s of (possibly logical)
 * CLOCK_MONOTONIC time so a missing signal fails instead of hanging.
 * The timer_* calls are raw syscalls: the ids are the kernel's.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static volatile sig_atomic_t n_alrm, n_vtalrm, n_prof, n_usr1, n_usr2;
static volatile int last_code, last_value, last_timerid, last_overrun;
static int failures;

static void check(const char *what, int ok)
{
    printf("%s: %s\n", what, ok ? "yes" : "NO");
    if (!ok)
        failures++;
}

static void on_signal(int sig, siginfo_t *si, void *uc)
{
    (void)uc;
    if (sig == SIGALRM)
        n_alrm++;
    else if (sig == SIGVTALRM)
        n_vtalrm++;
    else if (sig == SIGPROF)
        n_prof++;
    else if (sig == SIGUSR1)
        n_usr1++;
    else if (sig == SIGUSR2)
        n_usr2++;
    last_code = si->si_code;
    last_value = si->si_value.sival_int;
    last_timerid = si->si_timerid;
    last_overrun = si->si_overrun;
}

static void handle(int sig)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof(sa));
    sa.sa_sigaction = on_signal;
    sa.sa_flags = SA_SIGINFO;
    sigaction(sig, &sa, NULL);
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Sleeps step_ms at a time until *flag reaches want (or 3 s passed). */
static void wait_sleeping(volatile sig_atomic_t *flag, int want, long step_ms)
{
    double end = now_s() + 3;
    struct timespec ms = {0, step_ms * 1000000};
    while (*flag < want && now_s() < end)
        nanosleep(&ms, NULL);
}

/* Spins on syscalls and a little arithmetic (CPU time for the CPU timers). */
static void wait_busy(volatile sig_atomic_t *flag, int want)
{
    double end = now_s() + 3;
    volatile unsigned long x = 0;
    while (*flag < want) {
        for (int i = 0; i < 100 && *flag < want; i++) {
            x += (unsigned long)i * 7;
            syscall(SYS_getppid);
        }
        if (now_s() > end)
            break;
    }
}

static long err_of(long rc) { return rc < 0 ? errno : 0; }

static void test_alarm(void)
{
    handle(SIGALRM);
    printf("alarm(0) with none set: %u\n", alarm(0));
    alarm(5);
    printf("alarm(1) after alarm(5): %u\n", alarm(1));
    struct itimerval v;
    getitimer(ITIMER_REAL, &v);
    check("getitimer shows 0 < left <= 1 s, no interval",
          (v.it_value.tv_sec == 1 && v.it_value.tv_usec == 0) ||
              (v.it_value.tv_sec == 0 && v.it_value.tv_usec > 0 &&
               v.it_interval.tv_sec == 0 && v.it_interval.tv_usec == 0));
    wait_sleeping(&n_alrm, 1, 10);
    printf("SIGALRM from alarm: %d, si_code SI_KERNEL: %s\n", (int)n_alrm,
           last_code == SI_KERNEL ? "yes" : "no");
    printf("alarm(0) after it fired: %u\n", alarm(0));
    alarm(3);
    printf("alarm(0) right after alarm(3): %u\n", alarm(0));
}

static void test_itimers(void)
{
    n_alrm = 0;
    struct itimerval v = {{0, 10000}, {0, 10000}}, old;
    setitimer(ITIMER_REAL, &v, NULL);
    wait_sleeping(&n_alrm, 3, 1);
    memset(&v, 0, sizeof(v));
    setitimer(ITIMER_REAL, &v, &old);
    check("ITIMER_REAL 10 ms: 3 SIGALRMs", n_alrm >= 3);

    /* A one-shot 2 ms ITIMER_REAL fires in a loop of plain syscalls. */
    n_alrm = 0;
    struct itimerval once = {{0, 0}, {0, 2000}};
    setitimer(ITIMER_REAL, &once, NULL);
    wait_busy(&n_alrm, 1);
    printf("SIGALRM during a getppid loop: %d\n", (int)n_alrm);
    printf("old interval: %ld us\n", (long)old.it_interval.tv_usec);

    handle(SIGVTALRM);
    handle(SIGPROF);
    struct itimerval cpu = {{0, 0}, {0, 1000}};
    setitimer(ITIMER_VIRTUAL, &cpu, NULL);
    wait_busy(&n_vtalrm, 1);
    printf("SIGVTALRM from ITIMER_VIRTUAL: %d\n", (int)n_vtalrm);
    setitimer(ITIMER_PROF, &cpu, NULL);
    wait_busy(&n_prof, 1);
    printf("SIGPROF from ITIMER_PROF: %d\n", (int)n_prof);
    getitimer(ITIMER_PROF, &v);
    check("ITIMER_PROF disarmed after one shot",
          v.it_value.tv_sec == 0 && v.it_value.tv_usec == 0);

    struct itimerval bad = {{0, 0}, {0, 1000000}};
    printf("setitimer tv_usec 1e6: errno %s\n",
           err_of(syscall(SYS_setitimer, ITIMER_REAL, &bad, NULL)) == EINVAL
               ? "EINVAL" : "?");
    printf("setitimer which 5: errno %s\n",
           err_of(syscall(SYS_setitimer, 5, &v, NULL)) == EINVAL ? "EINVAL"
                                                                 : "?");
    printf("setitimer bad pointer: errno %s\n",
           err_of(syscall(SYS_setitimer, ITIMER_REAL, (void *)8, NULL)) ==
                   EFAULT
               ? "EFAULT" : "?");
    printf("getitimer which 7: errno %s\n",
           err_of(syscall(SYS_getitimer, 7, &v)) == EINVAL ? "EINVAL" : "?");
    printf("getitimer bad pointer: errno %s\n",
           err_of(syscall(SYS_getitimer, ITIMER_REAL, (void *)8)) == EFAULT
               ? "EFAULT" : "?");
}

static long k_timer_create(clockid_t c, struct sigevent *ev, int *id)
{
    return syscall(SYS_timer_create, c, ev, id);
}

static long k_settime(int id, int flags, long sec, long nsec, long isec,
                      long insec, struct itimerspec *old)
{
    struct itimerspec v = {{isec, insec}, {sec, nsec}};
    return syscall(SYS_timer_settime, id, flags, &v, old);
}

static void test_posix_timers(void)
{
    handle(SIGUSR1);
    struct sigevent ev;
    memset(&ev, 0, sizeof(ev));
    ev.sigev_notify = SIGEV_SIGNAL;
    ev.sigev_signo = SIGUSR1;
    ev.sigev_value.sival_int = 42;
    int id = -1;
    printf("timer_create MONOTONIC: %ld\n",
           k_timer_create(CLOCK_MONOTONIC, &ev, &id));
    k_settime(id, 0, 0, 5000000, 0, 0, NULL);
    struct itimerspec cur;
    syscall(SYS_timer_gettime, id, &cur);
    check("timer_gettime: 0 < left <= 5 ms",
          cur.it_value.tv_sec == 0 && cur.it_value.tv_nsec > 0 &&
              cur.it_value.tv_nsec <= 5000000);
    wait_sleeping(&n_usr1, 1, 1);
    printf("SIGUSR1: %d, SI_TIMER: %s, value %d, si_timerid is the id: %s\n",
           (int)n_usr1, last_code == SI_TIMER ? "yes" : "no", last_value,
           last_timerid == id ? "yes" : "no");
    printf("timer_getoverrun after one shot: %ld\n",
           syscall(SYS_timer_getoverrun, id));
    syscall(SYS_timer_gettime, id, &cur);
    check("disarmed after firing",
          cur.it_value.tv_sec == 0 && cur.it_value.tv_nsec == 0);

    /* Overruns: the signal stays blocked over 20 expiries of a 1 ms timer. */
    handle(SIGUSR2);
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGUSR2);
    sigprocmask(SIG_BLOCK, &set, NULL);
    ev.sigev_signo = SIGUSR2;
    int pid_ = -1;
    k_timer_create(CLOCK_MONOTONIC, &ev, &pid_);
    k_settime(pid_, 0, 0, 1000000, 0, 1000000, NULL);
    struct timespec t20 = {0, 20000000};
    nanosleep(&t20, NULL);
    /* Taken while still blocked: unblocked into a handler, the periodic
     * timer's next expiries (1 ms apart, each a new signal with no
     * overrun) can reach the handler before the test reads what it saw,
     * on a loaded host natively as under hvrun's host time. */
    siginfo_t si;
    struct timespec no_wait = {0, 0};
    int got = sigtimedwait(&set, &si, &no_wait);
    int overrun_in_info = got == SIGUSR2 ? si.si_overrun : -1;
    long overrun = syscall(SYS_timer_getoverrun, pid_);
    syscall(SYS_timer_delete, pid_);
    sigprocmask(SIG_UNBLOCK, &set, NULL);
    check("periodic timer while blocked: one SIGUSR2", got == SIGUSR2);
    check("si_overrun > 0", overrun_in_info > 0);
    check("timer_getoverrun > 0", overrun > 0);

    /* SIGEV_NONE: nothing is sent, the time left is still there. */
    ev.sigev_notify = SIGEV_NONE;
    int quiet = -1;
    k_timer_create(CLOCK_REALTIME, &ev, &quiet);
    k_settime(quiet, 0, 1, 0, 0, 0, NULL);
    syscall(SYS_timer_gettime, quiet, &cur);
    check("SIGEV_NONE: 0 < left <= 1 s",
          (cur.it_value.tv_sec == 1 && cur.it_value.tv_nsec == 0) ||
              (cur.it_value.tv_sec == 0 && cur.it_value.tv_nsec > 0));
    syscall(SYS_timer_delete, quiet);

    /* TIMER_ABSTIME in the past fires at once. */
    n_usr1 = 0;
    ev.sigev_notify = SIGEV_SIGNAL;
    ev.sigev_signo = SIGUSR1;
    int abs_id = -1;
    k_timer_create(CLOCK_MONOTONIC, &ev, &abs_id);
    k_settime(abs_id, TIMER_ABSTIME, 1, 0, 0, 0, NULL);
    wait_sleeping(&n_usr1, 1, 1);
    printf("TIMER_ABSTIME in the past: %d SIGUSR1\n", (int)n_usr1);
    syscall(SYS_timer_delete, abs_id);

    /* NULL sigevent: SIGALRM carrying the timer id. */
    n_alrm = 0;
    int nid = -1;
    printf("timer_create NULL sigevent: %ld\n",
           k_timer_create(CLOCK_MONOTONIC, NULL, &nid));
    k_settime(nid, 0, 0, 2000000, 0, 0, NULL);
    wait_sleeping(&n_alrm, 1, 1);
    printf("SIGALRM: %d, SI_TIMER: %s, value is the id: %s\n", (int)n_alrm,
           last_code == SI_TIMER ? "yes" : "no",
           last_value == nid ? "yes" : "no");

    /* Errors. */
    printf("timer_delete: %ld\n", syscall(SYS_timer_delete, nid));
    printf("settime after delete: errno %s\n",
           err_of(k_settime(nid, 0, 1, 0, 0, 0, NULL)) == EINVAL ? "EINVAL"
                                                                  : "?");
    printf("gettime after delete: errno %s\n",
           err_of(syscall(SYS_timer_gettime, nid, &cur)) == EINVAL ? "EINVAL"
                                                                    : "?");
    printf("delete twice: errno %s\n",
           err_of(syscall(SYS_timer_delete, nid)) == EINVAL ? "EINVAL" : "?");
    int x;
    printf("clock 99: errno %s\n",
           err_of(k_timer_create(99, &ev, &x)) == EINVAL ? "EINVAL" : "?");
    printf("MONOTONIC_RAW: errno %s\n",
           err_of(k_timer_create(CLOCK_MONOTONIC_RAW, &ev, &x)) == EOPNOTSUPP
               ? "EOPNOTSUPP" : "?");
    ev.sigev_notify = 77;
    printf("notify 77: errno %s\n",
           err_of(k_timer_create(CLOCK_MONOTONIC, &ev, &x)) == EINVAL
               ? "EINVAL" : "?");
    ev.sigev_notify = SIGEV_SIGNAL;
    ev.sigev_signo = 0;
    printf("signo 0: errno %s\n",
           err_of(k_timer_create(CLOCK_MONOTONIC, &ev, &x)) == EINVAL
               ? "EINVAL" : "?");
    ev.sigev_signo = SIGUSR1;
    k_timer_create(CLOCK_MONOTONIC, &ev, &x);
    printf("tv_nsec 1e9: errno %s\n",
           err_of(k_settime(x, 0, 0, 1000000000, 0, 0, NULL)) == EINVAL
               ? "EINVAL" : "?");
    printf("settime NULL: errno %s\n",
           err_of(syscall(SYS_timer_settime, x, 0, NULL, NULL)) == EINVAL
               ? "EINVAL" : "?");
    syscall(SYS_timer_delete, x);
}

/* fork clears every timer in the child; execve keeps alarm, not timers. */
static void test_fork_exec(const char *self)
{
    struct sigevent ev;
    memset(&ev, 0, sizeof(ev));
    ev.sigev_notify = SIGEV_NONE;
    int id = -1;
    k_timer_create(CLOCK_MONOTONIC, &ev, &id);
    k_settime(id, 0, 100, 0, 0, 0, NULL);
    alarm(100);
    fflush(stdout);
    pid_t c = fork();
    if (c == 0) {
        struct itimerspec cur;
        printf("child: alarm(0) %u, timer_gettime errno %s\n", alarm(0),
               err_of(syscall(SYS_timer_gettime, id, &cur)) == EINVAL
                   ? "EINVAL" : "?");
        alarm(50);
        k_timer_create(CLOCK_MONOTONIC, &ev, &id);
        char idbuf[16];
        snprintf(idbuf, sizeof(idbuf), "%d", id);
        fflush(stdout);
        execl(self, self, "after-exec", idbuf, (char *)NULL);
        _exit(99);
    }
    int st = 0;
    waitpid(c, &st, 0);
    printf("child exit status %d\n", WIFEXITED(st) ? WEXITSTATUS(st) : -1);
    printf("parent: alarm(0) %u\n", alarm(0));
    syscall(SYS_timer_delete, id);
}

static int after_exec(int id)
{
    struct itimerspec cur;
    printf("after exec: alarm(0) %u, timer_gettime errno %s\n", alarm(0),
           err_of(syscall(SYS_timer_gettime, id, &cur)) == EINVAL ? "EINVAL"
                                                                   : "?");
    return 0;
}

int main(int argc, char **argv)
{
    if (argc == 3 && strcmp(argv[1], "after-exec") == 0)
        return after_exec(atoi(argv[2]));
    test_alarm();
    test_itimers();
    test_posix_timers();
    test_fork_exec(argv[0]);
    printf("failures: %d\n", failures);
    return failures ? 1 : 0;
}
