/*
 * pidfd.c - process file descriptors as Linux gives them (stress-ng's
 * pidfd stressor): pidfd_open of a child (close-on-exec, EINVAL for bad
 * flags or pid, ESRCH for no process), pidfd_send_signal (signal 0, a
 * signal the child sees with the sender's pid, SIGKILL, bad flags, a
 * non-pidfd), pidfd_getfd (the child's pipe end, EBADF for a closed fd,
 * EINVAL for flags), poll (readable once the child exited), read (EINVAL),
 * waitid(P_PIDFD) (the child's status; EAGAIN on a PIDFD_NONBLOCK pidfd
 * of a running child), and ESRCH after the reap.
 * Prints one line per check; run natively and under hvrun, the output
 * must match.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "guest_check.h"

#ifndef PIDFD_NONBLOCK
#define PIDFD_NONBLOCK O_NONBLOCK
#endif

static long pidfd_open(pid_t pid, unsigned flags)
{
    return syscall(SYS_pidfd_open, pid, flags);
}

static long pidfd_send_signal(int fd, int sig, siginfo_t *info, unsigned fl)
{
    return syscall(SYS_pidfd_send_signal, fd, sig, info, fl);
}

static long pidfd_getfd(int fd, int target, unsigned flags)
{
    return syscall(SYS_pidfd_getfd, fd, target, flags);
}

static int readable(int fd)
{
    struct pollfd pfd = {.fd = fd, .events = POLLIN};
    return poll(&pfd, 1, 0) == 1 && (pfd.revents & POLLIN);
}

static volatile sig_atomic_t usr1_from;

static void on_usr1(int sig, siginfo_t *si, void *uc)
{
    (void)sig, (void)uc;
    usr1_from = si->si_pid;
}

/* The child: tells the parent it is ready, reports who sent SIGUSR1 on its
 * pipe, then waits to be killed. */
static void child(int ready_w, int report_w)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof(sa));
    sa.sa_sigaction = on_usr1;
    sa.sa_flags = SA_SIGINFO;
    sigaction(SIGUSR1, &sa, NULL);
    CHECK(write(ready_w, "r", 1) == 1);
    while (!usr1_from)
        pause();
    int same = usr1_from == getppid();
    CHECK(write(report_w, &same, sizeof(same)) == sizeof(same));
    for (;;)
        pause();
}

static void bad_args(pid_t pid)
{
    printf("open bad flags: %s\n", result_text(pidfd_open(pid, 1)));
    printf("open pid 0: %s\n", result_text(pidfd_open(0, 0)));
    printf("open pid -1: %s\n", result_text(pidfd_open(-1, 0)));
    printf("open no such pid: %s\n", result_text(pidfd_open(999999, 0)));
    printf("send_signal non-pidfd: %s\n", result_text(pidfd_send_signal(0, 0, NULL, 0)));
    printf("send_signal closed fd: %s\n", result_text(pidfd_send_signal(900, 0, NULL, 0)));
}

int main(void)
{
    int ready[2], report[2];
    CHECK(pipe(ready) == 0 && pipe(report) == 0);
    pid_t pid = fork();
    CHECK(pid >= 0);
    if (pid == 0)
        child(ready[1], report[1]);
    char c;
    CHECK(read(ready[0], &c, 1) == 1);
    bad_args(pid);
    int fd = (int)pidfd_open(pid, 0);
    CHECK(fd >= 0);
    printf("pidfd cloexec: %d\n", (fcntl(fd, F_GETFD) & FD_CLOEXEC) != 0);
    printf("readable while running: %d\n", readable(fd));
    printf("read: %s\n", result_text(read(fd, &c, 1)));
    printf("signal 0: %s\n", result_text(pidfd_send_signal(fd, 0, NULL, 0)));
    printf("bad signal: %s\n", result_text(pidfd_send_signal(fd, 100, NULL, 0)));
    printf("bad flags: %s\n", result_text(pidfd_send_signal(fd, 0, NULL, 1 << 8)));
    int nb = (int)pidfd_open(pid, PIDFD_NONBLOCK);
    siginfo_t si;
    memset(&si, 0, sizeof(si));
    printf("waitid nonblock running: %s\n",
           result_text(waitid(P_PIDFD, nb, &si, WEXITED)));
    int dupfd = (int)pidfd_getfd(fd, report[1], 0);
    printf("getfd: %s\n", dupfd >= 0 ? "a new fd" : result_text(dupfd));
    printf("getfd cloexec: %d\n", (fcntl(dupfd, F_GETFD) & FD_CLOEXEC) != 0);
    printf("getfd bad flags: %s\n", result_text(pidfd_getfd(fd, report[1], 1)));
    printf("getfd closed fd: %s\n", result_text(pidfd_getfd(fd, 900, 0)));
    printf("SIGUSR1: %s\n", result_text(pidfd_send_signal(fd, SIGUSR1, NULL, 0)));
    int same = 0;
    CHECK(read(report[0], &same, sizeof(same)) == sizeof(same));
    printf("child saw the sender's pid: %d\n", same);
    printf("SIGKILL: %s\n", result_text(pidfd_send_signal(fd, SIGKILL, NULL, 0)));
    struct pollfd pfd = {.fd = fd, .events = POLLIN};
    int polled = poll(&pfd, 1, 5000);
    printf("poll after kill: %d revents %#x\n", polled, pfd.revents);
    printf("getfd of zombie: %s\n", result_text(pidfd_getfd(fd, 0, 0)));
    printf("signal 0 to zombie: %s\n", result_text(pidfd_send_signal(fd, 0, NULL, 0)));
    memset(&si, 0, sizeof(si));
    printf("waitid P_PIDFD: %s", result_text(waitid(P_PIDFD, fd, &si, WEXITED)));
    printf(" code %s status %d pid ok %d\n",
           si.si_code == CLD_KILLED ? "CLD_KILLED" : "other", si.si_status,
           si.si_pid == pid);
    printf("signal after reap: %s\n", result_text(pidfd_send_signal(fd, 0, NULL, 0)));
    printf("waitid after reap: %s\n", result_text(waitid(P_PIDFD, fd, &si, WEXITED)));
    printf("waitid non-pidfd: %s\n", result_text(waitid(P_PIDFD, 0, &si, WEXITED)));
    printf("readable after reap: %d\n", readable(fd));
    printf("getfd after reap: %s\n", result_text(pidfd_getfd(fd, 0, 0)));
    int self = (int)pidfd_open(getpid(), 0);
    printf("self getfd of stdout: %s\n",
           pidfd_getfd(self, 1, 0) >= 0 ? "a new fd" : strerrorname_np(errno));
    return 0;
}
