/*
 * ppoll_nofd_mask.c - ppoll and pselect on no fd wait for a signal or
 * their timeout under the call's own signal mask: a signal the caller
 * blocks but the call's mask lets through ends the wait with EINTR (after
 * its handler), whether it was pending before the call or comes during
 * it, and the caller's mask is back afterwards; a timeout gives 0 and the
 * caller's mask back too. hvrun put the caller's mask back at once, so the
 * signal stayed blocked and the call timed out (LTP's ppoll01).
 */
#define _GNU_SOURCE
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <sys/select.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "guest_check.h"

static volatile sig_atomic_t handled;

static void on_int(int sig) { (void)sig; handled++; }

/* A child that sends SIGINT to the parent after ms milliseconds. */
static pid_t send_later(long ms)
{
    pid_t parent = getpid(), pid = fork();
    CHECK(pid >= 0);
    if (pid == 0) {
        struct timespec ts = {0, ms * 1000000L};
        nanosleep(&ts, NULL);
        kill(parent, SIGINT);
        _exit(0);
    }
    return pid;
}

static int sigint_blocked(void)
{
    sigset_t cur;
    CHECK(sigprocmask(SIG_SETMASK, NULL, &cur) == 0);
    return sigismember(&cur, SIGINT);
}

static long raw_ppoll(long sec, const sigset_t *mask)
{
    struct timespec ts = {sec, 0};
    return syscall(SYS_ppoll, NULL, 0, sec >= 0 ? &ts : NULL, mask, 8);
}

static long raw_pselect(long sec, const sigset_t *mask)
{
    struct timespec ts = {sec, 0};
    struct {
        const sigset_t *set;
        size_t size;
    } sig = {mask, 8};
    return syscall(SYS_pselect6, 0, NULL, NULL, NULL, &ts, &sig);
}

static void show(const char *what, long rc)
{
    printf("%s: %s, handler ran %d, SIGINT blocked after %d\n", what,
           result_text(rc), (int)handled, sigint_blocked());
    handled = 0;
}

int main(void)
{
    struct sigaction sa = {0};
    sa.sa_handler = on_int;
    CHECK(sigaction(SIGINT, &sa, NULL) == 0);
    sigset_t none, only_int;
    sigemptyset(&none);
    sigemptyset(&only_int);
    sigaddset(&only_int, SIGINT);
    CHECK(sigprocmask(SIG_SETMASK, &only_int, NULL) == 0);

    pid_t c = send_later(50);
    show("ppoll, 5 s, signal during", raw_ppoll(5, &none));
    CHECK(waitpid(c, NULL, 0) == c);

    CHECK(kill(getpid(), SIGINT) == 0); /* pending, blocked */
    show("ppoll, 5 s, signal pending before", raw_ppoll(5, &none));

    show("ppoll, 1 s timeout, no signal", raw_ppoll(1, &none));

    c = send_later(50);
    show("ppoll, no timeout, signal during", raw_ppoll(-1, &none));
    CHECK(waitpid(c, NULL, 0) == c);

    c = send_later(50);
    show("pselect, 5 s, signal during", raw_pselect(5, &none));
    CHECK(waitpid(c, NULL, 0) == c);

    show("pselect, 1 s timeout, no signal", raw_pselect(1, &none));

    /* the call's mask blocks it: the timeout, the signal still pending */
    c = send_later(50);
    show("ppoll, 1 s, signal blocked by the call's mask", raw_ppoll(1, &only_int));
    CHECK(waitpid(c, NULL, 0) == c);
    sigset_t pend;
    CHECK(sigpending(&pend) == 0);
    printf("SIGINT still pending: %d\n", sigismember(&pend, SIGINT));
    CHECK(sigprocmask(SIG_SETMASK, &none, NULL) == 0);
    printf("handled once unblocked: %d\n", (int)handled);
    return 0;
}
