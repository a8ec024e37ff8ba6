/*
 * ptrace_ignored_restart - a signal the tracee ignores still stops it for
 * its tracer (Linux queues an ignored signal when the task is traced), but
 * once the tracer resumes it (with signal 0, or with that ignored signal)
 * the interrupted blocking call is restarted: no handler ran, so
 * ERESTARTSYS / ERESTART_RESTARTBLOCK become a restart and userspace sees
 * no EINTR. Checked on a pipe read and a nanosleep. A blocking pipe write
 * that had moved part of its bytes returns that count instead (the pipe's
 * size, F_GETPIPE_SZ: it was full), resumed with 0 or not.
 *
 * The tracee's read is blocked until the tracer writes, which it does only
 * after the stop; the nanosleep sees the signal during the sleep or before
 * it, and either way returns 0. Output is the same in every order.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <sys/ioctl.h>
#include <sys/ptrace.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "guest_check.h"

#define BIG (4 << 20)

static void tracee(int rfd, int wfd)
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
    static char big[BIG];
    ssize_t n = write(wfd, big, BIG);
    printf("tracee write returned %s\n",
           n == fcntl(wfd, F_GETPIPE_SZ) ? "the pipe's size" : "other");
    close(wfd);
    fflush(stdout);
    _exit(0);
}

/* The tracer's stops, printed once the tracee is gone (its own lines
 * would interleave with them by timing). */
static int stops[5];
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
    int fds[2], back[2];
    CHECK(pipe(fds) == 0 && pipe(back) == 0);
    setvbuf(stdout, NULL, _IONBF, 0);
    pid_t child = fork();
    CHECK(child >= 0);
    if (child == 0) {
        close(fds[1]);
        close(back[0]);
        tracee(fds[0], back[1]);
    }
    close(fds[0]);
    close(back[1]);
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
    /* Write round: once the pipe is full, the signal; then drain it. */
    int full = fcntl(back[0], F_GETPIPE_SZ);
    CHECK(full > 0);
    for (int queued = 0; queued < full;) {
        CHECK(ioctl(back[0], FIONREAD, &queued) == 0);
        usleep(1000);
    }
    stop_and_resume(child, 0);
    static char buf[65536];
    long total = 0;
    ssize_t n;
    while ((n = read(back[0], buf, sizeof(buf))) > 0)
        total += n;
    CHECK(waitpid(child, &st, 0) == child);
    CHECK(WIFEXITED(st));
    printf("tracer drained %s\n", total == full ? "the pipe's size" : "other");
    printf("tracee exit %d\n", WEXITSTATUS(st));
    for (int i = 0; i < nstops; i++)
        printf("tracer: stop %d, resumed with %d\n", stops[i], injects[i % 2]);
    return 0;
}
