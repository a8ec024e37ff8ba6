/*
 * pid_time_edges: argument edges Linux answers with an errno, where a
 * naive implementation negates a pid or multiplies seconds into ns (the
 * debug build's UBSan stops hvrun at such a signed overflow):
 * kill/wait4 with pid INT_MIN (-ESRCH), waitid(P_PGID, 0) (the caller's
 * group), utimes/futimesat with tv_usec out of range (-EINVAL, before the
 * path is looked at), utimensat with tv_nsec out of range (-EINVAL) and
 * with tv_sec at its extremes, timerfd_settime with the largest tv_sec.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/timerfd.h>
#include <sys/wait.h>
#include <unistd.h>

#include "guest_check.h"

static void pids(void)
{
    errno = 0;
    CHECK(kill(INT_MIN, 0) == -1 && errno == ESRCH);
    CHECK(kill(INT_MIN, SIGTERM) == -1 && errno == ESRCH);
    CHECK(kill(INT_MIN + 1, 0) == -1 && errno == ESRCH);
    int st;
    CHECK(syscall(SYS_wait4, INT_MIN, &st, 0, NULL) == -1 && errno == ESRCH);
    CHECK(syscall(SYS_wait4, INT_MIN, &st, 0x40000, NULL) == -1 &&
          errno == EINVAL); /* a bad option is checked first */
    CHECK(syscall(SYS_wait4, INT_MIN + 1, &st, WNOHANG, NULL) == -1 &&
          errno == ECHILD);
    siginfo_t si;
    CHECK(waitid(P_PGID, 0, &si, WEXITED | WNOHANG) == -1 && errno == ECHILD);
    CHECK(syscall(SYS_waitid, P_PGID, INT_MIN, &si, WEXITED | WNOHANG,
                  NULL) == -1 && errno == EINVAL);
    pid_t c = fork();
    CHECK(c >= 0);
    if (c == 0)
        _exit(3);
    memset(&si, 0, sizeof(si));
    CHECK(waitid(P_PGID, 0, &si, WEXITED) == 0);
    CHECK(si.si_pid == c && si.si_status == 3);
}

static void times(void)
{
    int fd = open("f", O_CREAT | O_WRONLY, 0644);
    CHECK(fd >= 0);
    struct timeval tv[2] = {{1, LONG_MAX}, {1, 0}};
    /* The raw calls: glibc's utimes may convert to utimensat itself. */
    CHECK(syscall(SYS_utimes, "f", tv) == -1 && errno == EINVAL);
    CHECK(syscall(SYS_utimes, "no-such-file", tv) == -1 && errno == EINVAL);
    tv[0].tv_usec = -1;
    CHECK(syscall(SYS_utimes, "f", tv) == -1 && errno == EINVAL);
    tv[0].tv_usec = 1000000;
    CHECK(syscall(SYS_futimesat, AT_FDCWD, "f", tv) == -1 && errno == EINVAL);
    tv[0].tv_usec = 999999;
    CHECK(syscall(SYS_utimes, "f", tv) == 0);
    struct timespec ts[2] = {{1, LONG_MAX}, {1, 0}};
    CHECK(utimensat(AT_FDCWD, "f", ts, 0) == -1 && errno == EINVAL);
    ts[0].tv_nsec = LONG_MIN;
    CHECK(futimens(fd, ts) == -1 && errno == EINVAL);
    /* Any tv_sec is accepted (the filesystem clamps what it stores). */
    ts[0] = (struct timespec){INT64_MAX, 999999999};
    ts[1] = (struct timespec){INT64_MIN, 0};
    CHECK(utimensat(AT_FDCWD, "f", ts, 0) == 0);
    struct stat st;
    CHECK(stat("f", &st) == 0);
    ts[0] = (struct timespec){INT64_MAX, 0};
    ts[1] = (struct timespec){INT64_MAX, 0};
    CHECK(futimens(fd, ts) == 0);
    CHECK(fstat(fd, &st) == 0);
    close(fd);
}

static void timers(void)
{
    int fd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK);
    CHECK(fd >= 0);
    struct itimerspec its = {{INT64_MAX, 999999999}, {INT64_MAX, 999999999}};
    CHECK(timerfd_settime(fd, 0, &its, NULL) == 0);
    uint64_t n;
    CHECK(read(fd, &n, sizeof(n)) == -1 && errno == EAGAIN);
    CHECK(timerfd_settime(fd, TFD_TIMER_ABSTIME, &its, NULL) == 0);
    CHECK(read(fd, &n, sizeof(n)) == -1 && errno == EAGAIN);
    /* Expired long ago, period of ~292 years: one expiration, then none. */
    its = (struct itimerspec){{INT64_MAX, 0}, {0, 1}};
    CHECK(timerfd_settime(fd, TFD_TIMER_ABSTIME, &its, NULL) == 0);
    CHECK(read(fd, &n, sizeof(n)) == sizeof(n) && n == 1);
    CHECK(read(fd, &n, sizeof(n)) == -1 && errno == EAGAIN);
    close(fd);
}

int main(void)
{
    pids();
    times();
    timers();
    printf("pid_time_edges ok\n");
    return 0;
}
