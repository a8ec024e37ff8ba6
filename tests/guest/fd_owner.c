/*
 * fd_owner.c - F_SETOWN/F_GETOWN, F_SETOWN_EX/F_GETOWN_EX and
 * F_SETSIG/F_GETSIG as Linux keeps them: per open file (a dup and a fork
 * child see the owner set through another fd), a negative F_SETOWN is a
 * process group, a pid that does not exist is ESRCH, a bad owner type or
 * signal EINVAL, an owner that died reads 0. Owners are printed as
 * relations (self, parent, child), so the output matches a native run
 * (tests/run-guest-tests.sh).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "guest_check.h"

static const char *rc(long r)
{
    static char buf[32];
    if (r < 0)
        return strerrorname_np(errno);
    snprintf(buf, sizeof(buf), "%ld", r);
    return buf;
}

static const char *who(long pid)
{
    static char buf[32];
    if (pid == 0)
        return "none";
    if (pid == getpid())
        return "self";
    if (pid == -getpgrp())
        return "-own group";
    if (pid == getpgrp())
        return "own group";
    snprintf(buf, sizeof(buf), "%s", pid < 0 ? "another group" : "another");
    return buf;
}

static void show_ex(const char *what, int fd)
{
    struct f_owner_ex ex = {-1, -1};
    long r = fcntl(fd, F_GETOWN_EX, &ex);
    printf("%s: F_GETOWN_EX %s type %d pid %s\n", what, rc(r), ex.type,
           who(ex.pid));
}

int main(void)
{
    int p[2];
    CHECK(pipe(p) == 0);
    int fd = p[0];
    printf("fresh: F_GETOWN %s\n", who(fcntl(fd, F_GETOWN)));
    show_ex("fresh", fd);
    printf("F_GETSIG fresh: %s\n", rc(fcntl(fd, F_GETSIG)));

    printf("F_SETOWN self: %s\n", rc(fcntl(fd, F_SETOWN, getpid())));
    printf("F_GETOWN: %s\n", who(fcntl(fd, F_GETOWN)));
    show_ex("after F_SETOWN", fd);
    int d = dup(fd);
    printf("dup's F_GETOWN: %s\n", who(fcntl(d, F_GETOWN)));

    printf("F_SETOWN -group: %s\n", rc(fcntl(fd, F_SETOWN, -getpgrp())));
    printf("F_GETOWN: %s\n", who(fcntl(d, F_GETOWN)));
    show_ex("group owner", d);
    printf("F_SETOWN missing pid: %s\n", rc(fcntl(fd, F_SETOWN, 999999)));
    printf("F_SETOWN INT_MIN: %s\n", rc(fcntl(fd, F_SETOWN, INT_MIN)));
    printf("F_SETOWN 0: %s\n", rc(fcntl(fd, F_SETOWN, 0)));
    show_ex("owner 0", fd);

    struct f_owner_ex ex = {F_OWNER_TID, (pid_t)syscall(SYS_gettid)};
    printf("F_SETOWN_EX tid: %s\n", rc(fcntl(fd, F_SETOWN_EX, &ex)));
    show_ex("tid owner", d);
    ex.type = 7;
    printf("F_SETOWN_EX type 7: %s\n", rc(fcntl(fd, F_SETOWN_EX, &ex)));
    ex = (struct f_owner_ex){F_OWNER_PID, 999999};
    printf("F_SETOWN_EX missing pid: %s\n", rc(fcntl(fd, F_SETOWN_EX, &ex)));
    printf("F_SETOWN_EX bad pointer: %s\n",
           rc(fcntl(fd, F_SETOWN_EX, (void *)8)));
    printf("F_GETOWN_EX bad pointer: %s\n",
           rc(fcntl(fd, F_GETOWN_EX, (void *)8)));

    printf("F_SETSIG SIGUSR1: %s\n", rc(fcntl(fd, F_SETSIG, SIGUSR1)));
    printf("dup's F_GETSIG: %s\n", rc(fcntl(d, F_GETSIG)));
    printf("F_SETSIG 65: %s\n", rc(fcntl(fd, F_SETSIG, 65)));

    /* A fork child shares the open file: it sees the owner, and sets
     * itself; once it is gone the owner reads 0. */
    printf("F_SETOWN self: %s\n", rc(fcntl(fd, F_SETOWN, getpid())));
    fflush(stdout);
    pid_t c = fork();
    CHECK(c >= 0);
    if (c == 0) {
        printf("child sees owner: %s\n",
               fcntl(fd, F_GETOWN) == getppid() ? "parent" : "other");
        printf("child F_SETOWN self: %s\n", rc(fcntl(fd, F_SETOWN, getpid())));
        printf("child F_GETSIG: %s\n", rc(fcntl(fd, F_GETSIG)));
        fflush(stdout);
        _exit(0);
    }
    CHECK(waitpid(c, NULL, 0) == c);
    printf("owner after the child left: %s\n", who(fcntl(fd, F_GETOWN)));
    printf("F_SETLEASE on a pipe: %s\n", rc(fcntl(fd, F_SETLEASE, F_RDLCK)));
    return 0;
}
