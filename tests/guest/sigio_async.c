/*
 * sigio_async.c - O_ASYNC (F_SETFL, FIOASYNC) on pipes and sockets: the
 * fd's owner is sent SIGIO, or F_SETSIG's signal with POLL_IN/POLL_OUT,
 * the band and the fd, when I/O on it becomes possible: data written to a
 * pipe or a socket, a connection to a listening socket, room made by a
 * read; by this process or by a child; nothing without an owner or once
 * O_ASYNC is cleared. The signals are blocked and collected with
 * sigtimedwait, so the output does not depend on when they arrive.
 * Prints counts and facts, not ids.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "guest_check.h"

#define RT_SIG (SIGRTMIN + 3)

static siginfo_t last;

static int collect(int sig)
{
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, sig);
    struct timespec zero = {0, 0};
    int n = 0;
    siginfo_t si;
    while (sigtimedwait(&set, &si, &zero) == sig) {
        n++;
        last = si;
    }
    return n;
}

static void async_on(int fd, int sig)
{
    CHECK(fcntl(fd, F_SETOWN, getpid()) == 0);
    if (sig)
        CHECK(fcntl(fd, F_SETSIG, sig) == 0);
    int fl = fcntl(fd, F_GETFL);
    CHECK(fcntl(fd, F_SETFL, fl | O_ASYNC) == 0);
}

static void pipe_cases(void)
{
    int p[2];
    CHECK(pipe(p) == 0);
    CHECK(write(p[1], "a", 1) == 1);
    printf("pipe without O_ASYNC: %d\n", collect(SIGIO));
    async_on(p[0], 0);
    printf("enabling signals nothing: %d\n", collect(SIGIO));
    CHECK(write(p[1], "b", 1) == 1);
    printf("pipe write, plain SIGIO: %d, code SI_KERNEL %d\n", collect(SIGIO),
           last.si_code == SI_KERNEL);
    CHECK(fcntl(p[0], F_SETSIG, RT_SIG) == 0);
    CHECK(write(p[1], "c", 1) == 1);
    CHECK(write(p[1], "d", 1) == 1);
    int n = collect(RT_SIG);
    printf("two writes, F_SETSIG: %d, POLL_IN %d, fd %d, band %#lx\n", n,
           last.si_code == POLL_IN, last.si_fd == p[0], (long)last.si_band);
    char buf[8];
    CHECK(read(p[0], buf, sizeof(buf)) == 4);
    printf("a read on the reader's end: %d\n", collect(RT_SIG));

    pid_t c = fork();
    CHECK(c >= 0);
    if (c == 0) {
        CHECK(write(p[1], "child", 5) == 5);
        _exit(0);
    }
    CHECK(waitpid(c, NULL, 0) == c);
    printf("a child's write: %d\n", collect(RT_SIG));
    CHECK(read(p[0], buf, sizeof(buf)) == 5);

    int fl = fcntl(p[0], F_GETFL);
    printf("F_GETFL shows O_ASYNC: %d\n", (fl & O_ASYNC) != 0);
    CHECK(fcntl(p[0], F_SETFL, fl & ~O_ASYNC) == 0);
    CHECK(write(p[1], "e", 1) == 1);
    printf("after clearing O_ASYNC: %d\n", collect(RT_SIG));
    CHECK(read(p[0], buf, sizeof(buf)) == 1);

    int on = 1;
    CHECK(ioctl(p[0], FIOASYNC, &on) == 0);
    CHECK(write(p[1], "f", 1) == 1);
    printf("FIOASYNC on, a write: %d\n", collect(RT_SIG));
    CHECK(read(p[0], buf, sizeof(buf)) == 1);

    /* the writer's end: told when a read makes room in a full pipe */
    async_on(p[1], RT_SIG);
    CHECK(fcntl(p[1], F_SETFL, fcntl(p[1], F_GETFL) | O_NONBLOCK) == 0);
    static char fill[1 << 16];
    while (write(p[1], fill, sizeof(fill)) > 0)
        ;
    collect(RT_SIG);
    CHECK(read(p[0], fill, sizeof(fill)) > 0);
    n = collect(RT_SIG);
    printf("room made in a full pipe: %d, POLL_OUT %d, fd %d\n", n > 0,
           last.si_code == POLL_OUT, last.si_fd == p[1]);
    close(p[0]);
    close(p[1]);

    int q[2];
    CHECK(pipe(q) == 0);
    int fl2 = fcntl(q[0], F_GETFL);
    CHECK(fcntl(q[0], F_SETFL, fl2 | O_ASYNC) == 0);
    CHECK(write(q[1], "g", 1) == 1);
    printf("O_ASYNC without an owner: %d\n", collect(SIGIO));
    close(q[0]);
    close(q[1]);
}

static void socket_cases(void)
{
    int sv[2];
    CHECK(socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == 0);
    async_on(sv[1], RT_SIG);
    CHECK(write(sv[0], "hello", 5) == 5);
    int n = collect(RT_SIG);
    printf("socketpair send: %d, POLL_IN %d, fd %d\n", n,
           last.si_code == POLL_IN, last.si_fd == sv[1]);
    close(sv[0]);
    n = collect(RT_SIG);
    printf("peer closed: %d\n", n > 0);
    close(sv[1]);

    int l = socket(AF_UNIX, SOCK_STREAM, 0);
    CHECK(l >= 0);
    struct sockaddr_un a = {.sun_family = AF_UNIX};
    snprintf(a.sun_path, sizeof(a.sun_path), "/tmp/sigio-%d", (int)getpid());
    unlink(a.sun_path);
    CHECK(bind(l, (struct sockaddr *)&a, sizeof(a)) == 0);
    CHECK(listen(l, 4) == 0);
    async_on(l, RT_SIG);
    int s = socket(AF_UNIX, SOCK_STREAM, 0);
    CHECK(connect(s, (struct sockaddr *)&a, sizeof(a)) == 0);
    n = collect(RT_SIG);
    printf("a connection to a listener: %d, POLL_IN %d\n", n > 0,
           last.si_code == POLL_IN);
    close(s);
    close(l);
    unlink(a.sun_path);
}

int main(void)
{
    setvbuf(stdout, NULL, _IONBF, 0);
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGIO);
    sigaddset(&set, RT_SIG);
    CHECK(sigprocmask(SIG_BLOCK, &set, NULL) == 0);
    pipe_cases();
    socket_cases();
    return 0;
}
