/*
 * sig_wait.c - waiting for signals and what handlers see: pause,
 * sigsuspend (the caller's mask in the frame and back afterwards),
 * sigtimedwait/sigwaitinfo (dequeue, timeout), sigqueue's value, signalfd,
 * and a signal frame whose ucontext the handler edits (RIP and RAX).
 *
 * Every wait is race-free natively too: the signal is blocked until the
 * wait (sigsuspend, sigtimedwait, signalfd), or resent until the waiter
 * answers (pause). Prints the same lines natively and under hvrun.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>

static int failures;

static void check(int ok, const char *what)
{
    printf("%s: %s\n", ok ? "ok" : "FAIL", what);
    failures += !ok;
}

static void on_signal(int sig, void (*fn)(int, siginfo_t *, void *),
                      int flags)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof(sa));
    sa.sa_sigaction = fn;
    sa.sa_flags = SA_SIGINFO | flags;
    sigemptyset(&sa.sa_mask);
    sigaction(sig, &sa, NULL);
}

static void set_mask(int how, int a, int b)
{
    sigset_t s;
    sigemptyset(&s);
    if (a)
        sigaddset(&s, a);
    if (b)
        sigaddset(&s, b);
    sigprocmask(how, &s, NULL);
}

static int is_blocked(int sig)
{
    sigset_t cur;
    sigprocmask(SIG_BLOCK, NULL, &cur);
    return sigismember(&cur, sig);
}

/* ---- pause, woken by a child --------------------------------------------- */

static volatile sig_atomic_t usr1_seen;

static void count_usr1(int sig, siginfo_t *si, void *uc) { usr1_seen++; }

static void test_pause(void)
{
    int pfd[2];
    if (pipe(pfd) < 0)
        return;
    on_signal(SIGUSR1, count_usr1, 0);
    fflush(stdout);
    pid_t parent = getpid(), child = fork();
    if (child == 0) {
        /* Until the parent says pause returned: it may not be in pause
         * yet when the first signal arrives. */
        for (;;) {
            kill(parent, SIGUSR1);
            struct pollfd p = {.fd = pfd[0], .events = POLLIN};
            if (poll(&p, 1, 0) > 0)
                _exit(0);
            sched_yield();
            usleep(2000);
        }
    }
    int r = pause();
    int e = errno;
    if (write(pfd[1], "x", 1) != 1)
        return;
    waitpid(child, NULL, 0);
    check(r == -1 && e == EINTR, "pause returns -1 EINTR after the handler");
    check(usr1_seen > 0, "pause: the SIGUSR1 handler ran");
    close(pfd[0]);
    close(pfd[1]);
    signal(SIGUSR1, SIG_DFL);
}

/* ---- sigsuspend ---------------------------------------------------------- */

static volatile int h_int_blocked, h_term_blocked, h_usr2_blocked;
static volatile int uc_int, uc_usr2, uc_term;
static volatile sig_atomic_t usr2_seen;

static void suspend_handler(int sig, siginfo_t *si, void *ucv)
{
    ucontext_t *uc = ucv;
    usr2_seen++;
    h_int_blocked = is_blocked(SIGINT);
    h_term_blocked = is_blocked(SIGTERM);
    h_usr2_blocked = is_blocked(SIGUSR2);
    uc_int = sigismember(&uc->uc_sigmask, SIGINT);
    uc_usr2 = sigismember(&uc->uc_sigmask, SIGUSR2);
    uc_term = sigismember(&uc->uc_sigmask, SIGTERM);
}

static void *send_usr2(void *arg)
{
    kill(getpid(), SIGUSR2);
    return NULL;
}

static void check_suspend(const char *how, int r, int e)
{
    char what[160];
    snprintf(what, sizeof(what), "%s: -1 EINTR after the handler", how);
    check(r == -1 && e == EINTR && usr2_seen == 1, what);
    snprintf(what, sizeof(what),
             "%s: handler runs with the temporary mask (+SIGUSR2)", how);
    check(!h_int_blocked && h_term_blocked && h_usr2_blocked, what);
    snprintf(what, sizeof(what), "%s: uc_sigmask is the caller's mask", how);
    check(uc_int && uc_usr2 && !uc_term, what);
    snprintf(what, sizeof(what), "%s: the caller's mask is back", how);
    check(is_blocked(SIGINT) && is_blocked(SIGUSR2) && !is_blocked(SIGTERM),
          what);
}

static void test_sigsuspend(void)
{
    on_signal(SIGUSR2, suspend_handler, 0);
    set_mask(SIG_SETMASK, SIGINT, SIGUSR2);
    sigset_t tmp;
    sigemptyset(&tmp);
    sigaddset(&tmp, SIGTERM);

    /* Already pending: unblocked by the new mask, taken at once. */
    raise(SIGUSR2);
    usr2_seen = 0;
    int r = sigsuspend(&tmp);
    check_suspend("sigsuspend (pending)", r, errno);

    /* Sent while waiting, by another thread (it has SIGUSR2 blocked). */
    usr2_seen = 0;
    pthread_t th;
    pthread_create(&th, NULL, send_usr2, NULL);
    r = sigsuspend(&tmp);
    int e = errno;
    pthread_join(th, NULL);
    check_suspend("sigsuspend (waiting)", r, e);
    set_mask(SIG_SETMASK, 0, 0);
    signal(SIGUSR2, SIG_DFL);
}

/* ---- sigtimedwait and sigqueue ------------------------------------------- */

static void *queue_rtmin(void *arg)
{
    union sigval v = {.sival_int = 42};
    sigqueue(getpid(), SIGRTMIN, v);
    return NULL;
}

static void test_sigtimedwait(void)
{
    set_mask(SIG_BLOCK, SIGUSR1, SIGRTMIN);
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGUSR1);
    siginfo_t si;
    struct timespec one_s = {1, 0}, ten_ms = {0, 10 * 1000 * 1000}, zero = {0};

    raise(SIGUSR1);
    memset(&si, 0, sizeof(si));
    int r = sigtimedwait(&set, &si, &one_s);
    /* The kernel says SI_TKILL; glibc's sigtimedwait folds it to SI_USER. */
    check(r == SIGUSR1 && si.si_signo == SIGUSR1 && si.si_code == SI_USER &&
              si.si_pid == getpid(),
          "sigtimedwait dequeues a blocked pending SIGUSR1 (from raise)");
    sigset_t pend;
    sigpending(&pend);
    check(!sigismember(&pend, SIGUSR1), "it is no longer pending");

    r = sigtimedwait(&set, &si, &zero);
    check(r == -1 && errno == EAGAIN, "a zero timeout: EAGAIN at once");
    r = sigtimedwait(&set, &si, &ten_ms);
    check(r == -1 && errno == EAGAIN, "a 10 ms timeout: EAGAIN");
    struct timespec bad = {0, 1000000000L};
    r = sigtimedwait(&set, &si, &bad);
    check(r == -1 && errno == EINVAL, "tv_nsec out of range: EINVAL");

    /* Waiting (no timeout) for a signal another thread queues. */
    sigemptyset(&set);
    sigaddset(&set, SIGRTMIN);
    pthread_t th;
    pthread_create(&th, NULL, queue_rtmin, NULL);
    memset(&si, 0, sizeof(si));
    r = sigwaitinfo(&set, &si);
    pthread_join(th, NULL);
    check(r == SIGRTMIN && si.si_code == SI_QUEUE &&
              si.si_value.sival_int == 42 && si.si_pid == getpid(),
          "sigwaitinfo gets a value queued by another thread");
    set_mask(SIG_UNBLOCK, SIGUSR1, SIGRTMIN);
}

static volatile int q_value, q_code, q_pid_ok, q_signo;

static void queue_handler(int sig, siginfo_t *si, void *uc)
{
    q_signo = si->si_signo;
    q_value = si->si_value.sival_int;
    q_code = si->si_code;
    q_pid_ok = si->si_pid == getpid();
}

static int other_tid;
static int other_go[2];

/* A second thread that blocks SIGUSR1 (so only the main thread takes it)
 * and waits until told to end. */
static void *other_thread(void *arg)
{
    (void)arg;
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGUSR1);
    pthread_sigmask(SIG_BLOCK, &set, NULL);
    __atomic_store_n(&other_tid, (int)syscall(SYS_gettid), __ATOMIC_SEQ_CST);
    char c;
    (void)!read(other_go[0], &c, 1);
    return NULL;
}

/* rt_sigqueueinfo to another thread's tid signals its process, as kill
 * does (LTP rt_sigqueueinfo01). */
static void queue_to_thread_tid(void)
{
    pthread_t t;
    if (pipe(other_go) != 0 || pthread_create(&t, NULL, other_thread, NULL))
        return check(0, "a second thread");
    while (!__atomic_load_n(&other_tid, __ATOMIC_SEQ_CST))
        sched_yield();
    siginfo_t si;
    memset(&si, 0, sizeof(si));
    si.si_code = SI_QUEUE;
    si.si_pid = getpid();
    si.si_uid = getuid();
    si.si_value.sival_int = 4321;
    q_value = 0;
    int r = (int)syscall(SYS_rt_sigqueueinfo, other_tid, SIGUSR1, &si);
    check(r == 0 && q_value == 4321,
          "rt_sigqueueinfo to a thread's tid: its process gets it");
    (void)!write(other_go[1], "x", 1);
    pthread_join(t, NULL);
}

static void test_sigqueue(void)
{
    on_signal(SIGUSR1, queue_handler, 0);
    union sigval v = {.sival_int = 1234};
    int r = sigqueue(getpid(), SIGUSR1, v);
    check(r == 0 && q_signo == SIGUSR1 && q_value == 1234 &&
              q_code == SI_QUEUE && q_pid_ok,
          "sigqueue: the handler gets si_value 1234, SI_QUEUE, our pid");
    siginfo_t si;
    memset(&si, 0, sizeof(si));
    si.si_code = SI_USER; /* >= 0: only for oneself */
    r = (int)syscall(SYS_rt_sigqueueinfo, getpid(), SIGUSR1, &si);
    check(r == 0, "rt_sigqueueinfo with SI_USER to oneself is allowed");
    r = (int)syscall(SYS_rt_sigqueueinfo, 0x7fffffff, SIGUSR1, &si);
    check(r == -1 && errno == EPERM,
          "rt_sigqueueinfo with SI_USER to another pid: EPERM");
    si.si_code = SI_QUEUE;
    r = (int)syscall(SYS_rt_sigqueueinfo, 0x7fffffff, SIGUSR1, &si);
    check(r == -1 && errno == ESRCH, "rt_sigqueueinfo to no process: ESRCH");
    queue_to_thread_tid();
    signal(SIGUSR1, SIG_DFL);
}

/* ---- signalfd ------------------------------------------------------------ */

static void test_signalfd(void)
{
    set_mask(SIG_BLOCK, SIGUSR2, SIGUSR1);
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGUSR2);
    int fd = signalfd(-1, &set, SFD_NONBLOCK | SFD_CLOEXEC);
    check(fd >= 0, "signalfd creates an fd");
    struct signalfd_siginfo ssi;
    ssize_t n = read(fd, &ssi, sizeof(ssi));
    check(n == -1 && errno == EAGAIN, "nothing pending: EAGAIN (SFD_NONBLOCK)");
    n = read(fd, &ssi, 16);
    check(n == -1 && errno == EINVAL, "a buffer under 128 bytes: EINVAL");
    struct pollfd p = {.fd = fd, .events = POLLIN};
    check(poll(&p, 1, 0) == 0, "poll: not readable");
    raise(SIGUSR1); /* not in the mask */
    check(poll(&p, 1, 0) == 0, "a signal outside the mask: still not readable");
    raise(SIGUSR2);
    check(poll(&p, 1, 0) == 1 && (p.revents & POLLIN), "poll: readable");
    n = read(fd, &ssi, sizeof(ssi));
    check(n == sizeof(ssi) && ssi.ssi_signo == SIGUSR2 &&
              ssi.ssi_code == SI_TKILL && ssi.ssi_pid == (uint32_t)getpid(),
          "read: SIGUSR2, SI_TKILL, our pid");
    check(poll(&p, 1, 0) == 0, "poll after the read: not readable");

    /* The mask can change; a dup shares it. */
    sigaddset(&set, SIGUSR1);
    check(signalfd(fd, &set, 0) == fd, "signalfd(fd, mask) changes the mask");
    int fd2 = dup(fd);
    struct signalfd_siginfo two[2];
    raise(SIGUSR2);
    n = read(fd2, two, sizeof(two));
    check(n == 2 * (ssize_t)sizeof(ssi) && two[0].ssi_signo == SIGUSR1 &&
              two[1].ssi_signo == SIGUSR2,
          "read through a dup: SIGUSR1 then SIGUSR2");
    close(fd2);
    close(fd);

    /* A blocking read waits for a signal another thread sends. */
    sigemptyset(&set);
    sigaddset(&set, SIGUSR2);
    fd = signalfd(-1, &set, 0);
    pthread_t th;
    pthread_create(&th, NULL, send_usr2, NULL);
    n = read(fd, &ssi, sizeof(ssi));
    pthread_join(th, NULL);
    check(n == sizeof(ssi) && ssi.ssi_signo == SIGUSR2 &&
              ssi.ssi_code == SI_USER && ssi.ssi_pid == (uint32_t)getpid(),
          "a blocking read waits for kill() from another thread");
    close(fd);
    set_mask(SIG_UNBLOCK, SIGUSR2, SIGUSR1);
}

/* ---- the frame: siginfo and an edited ucontext --------------------------- */

static volatile int f_signo, f_code, f_pid_ok;

static void frame_handler(int sig, siginfo_t *si, void *uc)
{
    f_signo = si->si_signo;
    f_code = si->si_code;
    f_pid_ok = si->si_pid == getpid();
}

extern char sig_wait_fault[], sig_wait_after[];
static volatile long fault_addr = -1;
static volatile int fault_code;

static void segv_handler(int sig, siginfo_t *si, void *ucv)
{
    ucontext_t *uc = ucv;
    fault_addr = (long)si->si_addr;
    fault_code = si->si_code;
    /* Resume after the faulting store, with RAX set to 77. */
    if (uc->uc_mcontext.gregs[REG_RIP] == (greg_t)sig_wait_fault) {
        uc->uc_mcontext.gregs[REG_RIP] = (greg_t)sig_wait_after;
        uc->uc_mcontext.gregs[REG_RAX] = 77;
    }
}

__attribute__((noinline)) static long store_to_null(void)
{
    long v;
    __asm__ volatile("xorl %%eax, %%eax\n"
                     ".globl sig_wait_fault\n"
                     "sig_wait_fault: movq $1, (%1)\n"
                     ".globl sig_wait_after\n"
                     "sig_wait_after:\n"
                     : "=a"(v)
                     : "r"(0L)
                     : "memory");
    return v;
}

static void test_frame(void)
{
    on_signal(SIGUSR1, frame_handler, 0);
    raise(SIGUSR1);
    check(f_signo == SIGUSR1 && f_code == SI_TKILL && f_pid_ok,
          "raise: si_signo SIGUSR1, si_code SI_TKILL, si_pid our pid");
    signal(SIGUSR1, SIG_DFL);

    on_signal(SIGSEGV, segv_handler, 0);
    long v = store_to_null();
    check(v == 77, "SIGSEGV handler: edited RIP and RAX take effect");
    check(fault_addr == 0 && fault_code == SEGV_MAPERR,
          "SIGSEGV: si_addr 0, SEGV_MAPERR");
    signal(SIGSEGV, SIG_DFL);
}

int main(void)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    test_pause();
    test_sigsuspend();
    test_sigtimedwait();
    test_sigqueue();
    test_signalfd();
    test_frame();
    printf("%s\n", failures ? "FAILED" : "all passed");
    return failures ? 1 : 0;
}
