/*
 * ptrace_ignored_restart - a signal the tracee ignores still stops it for
 * its tracer (Linux queues an ignored signal when the task is traced), but
 * once the tracer resumes it (with signal 0, or with that ignored signal)
 * the interrupted blocking call is restarted: no handler ran, so
 * ERESTARTSYS / ERESTART_RESTARTBLOCK become a restart and userspace sees
 * no EINTR. Checked on a pipe read and a nanosleep.
 *
 * The tracee's read is blocked until the tracer writes, which it does only
 * after the stop; the nanosleep sees the signal during the sleep or before
 * it, and either way returns 0. Output is the same in every order.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <sys/ptrace.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "guest_check.h"

static void tracee(int rfd)
{
    signal(SIGUSR1, SIG_IGN);
    CHECK(ptrace(PTRACE_TRACEME, 0, 0, 0) == 0);
    raise(SIGSTOP);
    for (int round = 0; round < 2; round++) {
        char c = 0;
        ssize_t n = read(rfd, &c, 1);
        printf("tracee read %zd %c errno %d\n", n, n == 1 ? c : '-',
               n < 0 ? errno : 0);
    }
    for (int round = 0; round < 2; round++) {
        struct timespec ts = {0, 100 * 1000 * 1000}, rem = {0, 0};
        int r = nanosleep(&ts, &rem);
        printf("tracee nanosleep %d errno %d\n", r, r < 0 ? errno : 0);
    }
    fflush(stdout);
    _exit(0);
}

/* The tracer's stops, printed once the tracee is gone (its own lines
 * would interleave with them by timing). */
static int stops[4];
static int nstops;

/* Send SIGUSR1, see the tracee stop with it, resume with `inject`. */
static void stop_and_resume(pid_t child, int inject)
{
    int st;
    CHECK(kill(child, SIGUSR1) == 0);
    CHECK(waitpid(child, &st, 0) == child);
    CHECK(WIFSTOPPED(st));
    stops[nstops++] = WSTOPSIG(st);
    CHECK(ptrace(PTRACE_CONT, child, 0, inject) == 0);
}

int main(void)
{
    int fds[2];
    CHECK(pipe(fds) == 0);
    setvbuf(stdout, NULL, _IONBF, 0);
    pid_t child = fork();
    CHECK(child >= 0);
    if (child == 0) {
        close(fds[1]);
        tracee(fds[0]);
    }
    close(fds[0]);
    int st;
    CHECK(waitpid(child, &st, 0) == child);
    CHECK(WIFSTOPPED(st) && WSTOPSIG(st) == SIGSTOP);
    CHECK(ptrace(PTRACE_CONT, child, 0, 0) == 0);
    /* Read rounds: the tracee is blocked (or about to be) in read. */
    int injects[2] = {0, SIGUSR1};
    for (int round = 0; round < 2; round++) {
        usleep(20000);
        stop_and_resume(child, injects[round]);
        CHECK(write(fds[1], round ? "b" : "a", 1) == 1);
    }
    /* Sleep rounds: the signal lands during the 100 ms sleep or before. */
    for (int round = 0; round < 2; round++) {
        usleep(20000);
        stop_and_resume(child, injects[round]);
    }
    CHECK(waitpid(child, &st, 0) == child);
    CHECK(WIFEXITED(st));
    printf("tracee exit %d\n", WEXITSTATUS(st));
    for (int i = 0; i < nstops; i++)
        printf("tracer: stop %d, resumed with %d\n", stops[i], injects[i % 2]);
    return 0;
}
