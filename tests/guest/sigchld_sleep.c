/*
 * sigchld_sleep.c - a signal the process ignores interrupts no blocking
 * call. A child exiting while its parent sleeps, polls, reads or waits on
 * a futex sends SIGCHLD, whose default action is to ignore it: Linux drops
 * it at send time and the call goes on (nanosleep completes, poll times
 * out). SIGURG, SIGWINCH and SIGCONT (not stopped) at SIG_DFL, and any
 * signal at SIG_IGN, likewise. A handled SIGCHLD still interrupts; a
 * blocked one is pending for sigtimedwait; SIGCONT still resumes a stopped
 * child; pause() returns only for a handled signal.
 */
#define _GNU_SOURCE
#include <linux/futex.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/epoll.h>
#include <sys/select.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "guest_check.h"

#define SLEEP_NS 200000000L

static volatile sig_atomic_t handled;

static void on_signal(int sig) { handled = sig; }

/* A child that sends sig to its parent (0: only exits) at once. */
static pid_t child_sends(int sig)
{
    pid_t c = fork();
    CHECK(c >= 0);
    if (c == 0) {
        if (sig)
            kill(getppid(), sig);
        _exit(0);
    }
    return c;
}

static void reap(pid_t c)
{
    int st;
    CHECK(waitpid(c, &st, 0) == c);
}

static void report(const char *what, long r)
{
    if (r < 0)
        printf("%s: -1 %s\n", what, strerror(errno));
    else
        printf("%s: %ld (completed)\n", what, r);
}

static void sleeps(void)
{
    struct timespec ts = {0, SLEEP_NS};
    pid_t c = child_sends(0);
    report("nanosleep while a child exits", nanosleep(&ts, NULL));
    reap(c);
    c = child_sends(0);
    report("clock_nanosleep while a child exits",
           -clock_nanosleep(CLOCK_MONOTONIC, 0, &ts, NULL));
    reap(c);
    c = child_sends(0);
    report("poll while a child exits", poll(NULL, 0, 200));
    reap(c);
    c = child_sends(0);
    struct timeval tv = {0, 200000};
    report("select while a child exits", select(0, NULL, NULL, NULL, &tv));
    reap(c);
    int ep = epoll_create1(0);
    CHECK(ep >= 0);
    struct epoll_event ev;
    c = child_sends(0);
    report("epoll_wait while a child exits", epoll_wait(ep, &ev, 1, 200));
    reap(c);
    close(ep);
    uint32_t word = 0;
    c = child_sends(0);
    long r = syscall(SYS_futex, &word, FUTEX_WAIT_PRIVATE, 0, &ts, NULL, 0);
    printf("futex wait while a child exits: %s\n",
           r < 0 && errno == ETIMEDOUT ? "timed out" : strerror(errno));
    reap(c);
}

/* A read of a pipe nobody writes ends only at the interval timer's
 * handled SIGALRM (no SA_RESTART), not at the child's SIGCHLD. */
static void pipe_read(void)
{
    int fds[2];
    CHECK(pipe(fds) == 0);
    struct sigaction sa = {.sa_handler = on_signal};
    CHECK(sigaction(SIGALRM, &sa, NULL) == 0);
    handled = 0;
    struct itimerval it = {{0, 0}, {0, 300000}};
    CHECK(setitimer(ITIMER_REAL, &it, NULL) == 0);
    pid_t c = child_sends(0);
    char b;
    ssize_t n = read(fds[0], &b, 1);
    printf("read of an empty pipe: %zd %s, after %s\n", n,
           n < 0 ? strerror(errno) : "",
           handled == SIGALRM ? "SIGALRM" : "something else");
    reap(c);
    close(fds[0]);
    close(fds[1]);
}

/* pause() goes on past an ignored SIGCHLD, to the handled SIGALRM. */
static void pauses(void)
{
    handled = 0;
    struct itimerval it = {{0, 0}, {0, 300000}};
    CHECK(setitimer(ITIMER_REAL, &it, NULL) == 0);
    pid_t c = child_sends(0);
    int r = pause();
    printf("pause: %d %s, after %s\n", r, strerror(errno),
           handled == SIGALRM ? "SIGALRM" : "something else");
    reap(c);
}

/* Other signals ignored by default, and any signal at SIG_IGN. */
static void other_ignored(void)
{
    struct timespec ts = {0, SLEEP_NS};
    static const int sigs[] = {SIGURG, SIGWINCH, SIGCONT};
    for (unsigned i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++) {
        pid_t c = child_sends(sigs[i]);
        char what[64];
        snprintf(what, sizeof(what), "nanosleep while %s arrives (SIG_DFL)",
                 sigabbrev_np(sigs[i]));
        report(what, nanosleep(&ts, NULL));
        reap(c);
    }
    signal(SIGUSR1, SIG_IGN);
    pid_t c = child_sends(SIGUSR1);
    report("nanosleep while SIGUSR1 arrives (SIG_IGN)", nanosleep(&ts, NULL));
    reap(c);
    signal(SIGUSR1, SIG_DFL);
    signal(SIGCHLD, SIG_IGN); /* children reaped by the kernel */
    c = child_sends(0);
    report("nanosleep while a child exits (SIGCHLD SIG_IGN)",
           nanosleep(&ts, NULL));
    errno = 0;
    int r = (int)wait(NULL);
    printf("wait after SIG_IGN: %d %s\n", r, strerror(errno));
    signal(SIGCHLD, SIG_DFL);
}

/* A handled SIGCHLD interrupts; a blocked one waits for sigtimedwait. */
static void handled_and_blocked(void)
{
    struct sigaction sa = {.sa_handler = on_signal};
    CHECK(sigaction(SIGCHLD, &sa, NULL) == 0);
    handled = 0;
    struct timespec ts = {5, 0};
    /* The child waits a little before it exits, so that the parent is in
     * its sleep when SIGCHLD comes: natively, on a loaded machine, a
     * child that exits at once can be run first, its SIGCHLD handled
     * before the sleep begins, and the sleep then completes. */
    pid_t c = fork();
    CHECK(c >= 0);
    if (c == 0) {
        struct timespec pause_ts = {0, 200000000};
        nanosleep(&pause_ts, NULL);
        _exit(0);
    }
    int r = nanosleep(&ts, NULL);
    printf("nanosleep with a SIGCHLD handler: %d %s, handler %s\n", r,
           r < 0 ? strerror(errno) : "", handled == SIGCHLD ? "ran" : "not run");
    reap(c);
    signal(SIGCHLD, SIG_DFL);
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGCHLD);
    CHECK(sigprocmask(SIG_BLOCK, &set, NULL) == 0);
    c = child_sends(0);
    siginfo_t si;
    struct timespec limit = {5, 0};
    int sig = sigtimedwait(&set, &si, &limit);
    printf("sigtimedwait for a blocked default SIGCHLD: %s, code %s\n",
           sig == SIGCHLD ? "SIGCHLD" : strerror(errno),
           si.si_code == CLD_EXITED ? "CLD_EXITED" : "other");
    reap(c);
    CHECK(sigprocmask(SIG_UNBLOCK, &set, NULL) == 0);
}

/* SIGCONT at its default action still resumes a stopped child. */
static void continue_resumes(void)
{
    pid_t c = fork();
    CHECK(c >= 0);
    if (c == 0) {
        for (;;)
            pause();
    }
    int st;
    CHECK(kill(c, SIGSTOP) == 0);
    CHECK(waitpid(c, &st, WUNTRACED) == c);
    printf("child %s\n", WIFSTOPPED(st) ? "stopped" : "not stopped");
    CHECK(kill(c, SIGCONT) == 0);
    CHECK(waitpid(c, &st, WCONTINUED) == c);
    printf("child %s\n", WIFCONTINUED(st) ? "continued" : "not continued");
    CHECK(kill(c, SIGTERM) == 0);
    CHECK(waitpid(c, &st, 0) == c);
    printf("child killed by %s\n", sigabbrev_np(WTERMSIG(st)));
}

int main(void)
{
    setvbuf(stdout, NULL, _IONBF, 0);
    sleeps();
    pipe_read();
    pauses();
    other_ignored();
    handled_and_blocked();
    continue_resumes();
    return 0;
}
