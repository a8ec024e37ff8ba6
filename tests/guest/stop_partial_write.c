/*
 * stop_partial_write - a stop signal ends a blocking transfer that has
 * moved part of its bytes: the child writes 4 MiB into a pipe nobody
 * reads; once the pipe is full (64 KiB moved) the parent stops it with
 * SIGSTOP (then SIGTSTP for the second round) and continues it. On Linux
 * the stop makes signal_pending() true in pipe_write's wait, which ends
 * the call with the count it moved; the task stops on its way out and,
 * continued, finds write returned the pipe's size (a partial count is
 * never restarted). The parent then drains the pipe: what it reads is
 * what the child's write returned. The same for a stream socket's send.
 * The pipe's size is asked (F_GETPIPE_SZ), not assumed: a user over
 * pipe-user-pages-soft gets 8 KiB pipes without CAP_SYS_RESOURCE.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "guest_check.h"

#define BIG (4 << 20)

/* What the call returned goes back to the parent by `report`; a socket's
 * count depends on its buffers, so only its kind is printed. */
static void writer(int fd, int use_send, int report)
{
    char *buf = calloc(1, BIG);
    CHECK(buf);
    ssize_t n = use_send ? send(fd, buf, BIG, 0) : write(fd, buf, BIG);
    if (use_send)
        printf("child: send returned %s\n",
               n == BIG ? "all" : n > 0 ? "a part" : "an error");
    else
        printf("child: write returned %s\n",
               n == fcntl(fd, F_GETPIPE_SZ) ? "the pipe's size" : "other");
    CHECK(write(report, &n, sizeof(n)) == sizeof(n));
    _exit(0);
}

/* Until the reader's end holds `want` bytes (the writer's call moved
 * them and waits for room). */
static void wait_filled(int rfd, int want)
{
    for (;;) {
        int queued = 0;
        CHECK(ioctl(rfd, FIONREAD, &queued) == 0);
        if (queued >= want)
            return;
        struct timespec ts = {0, 1000000};
        nanosleep(&ts, NULL);
    }
}

static void stop_and_continue(pid_t child, int stopsig)
{
    int st;
    CHECK(kill(child, stopsig) == 0);
    CHECK(waitpid(child, &st, WUNTRACED) == child);
    CHECK(WIFSTOPPED(st));
    printf("parent: child stopped by %d\n", WSTOPSIG(st));
    /* Not waited for as continued: it may be gone by then. */
    CHECK(kill(child, SIGCONT) == 0);
}

static long drain(int rfd)
{
    static char buf[65536];
    long total = 0;
    ssize_t n;
    while ((n = read(rfd, buf, sizeof(buf))) > 0)
        total += n;
    CHECK(n == 0);
    return total;
}

static void round_of(int stopsig, int use_socket)
{
    int fds[2];
    if (use_socket) {
        CHECK(socketpair(AF_UNIX, SOCK_STREAM, 0, fds) == 0);
    } else {
        CHECK(pipe(fds) == 0);
    }
    /* The pipe full; the socket's buffer made small so the send parks
     * soon. */
    int fill = use_socket ? 0 : fcntl(fds[0], F_GETPIPE_SZ);
    CHECK(fill >= 0);
    if (use_socket) {
        int sz = 4096;
        CHECK(setsockopt(fds[1], SOL_SOCKET, SO_SNDBUF, &sz, sizeof(sz)) == 0);
        fill = 1; /* some bytes moved; the count is printed, not assumed */
    }
    int report[2];
    CHECK(pipe(report) == 0);
    pid_t child = fork();
    CHECK(child >= 0);
    if (child == 0) {
        close(fds[0]);
        writer(fds[1], use_socket, report[1]);
    }
    close(fds[1]);
    close(report[1]);
    wait_filled(fds[0], fill);
    stop_and_continue(child, stopsig);
    long total = drain(fds[0]);
    int st;
    CHECK(waitpid(child, &st, 0) == child && WIFEXITED(st));
    ssize_t returned = -1;
    CHECK(read(report[0], &returned, sizeof(returned)) == sizeof(returned));
    printf("parent: drained what it returned: %s\n",
           total == returned ? "yes" : "no");
    close(fds[0]);
    close(report[0]);
}

int main(void)
{
    setvbuf(stdout, NULL, _IONBF, 0);
    round_of(SIGSTOP, 0);
    round_of(SIGTSTP, 0);
    round_of(SIGSTOP, 1);
    return 0;
}
