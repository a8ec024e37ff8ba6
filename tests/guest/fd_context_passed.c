/*
 * fd_context_passed.c - a timerfd, a signalfd, a perf event fd and a pidfd
 * passed over SCM_RIGHTS to another process act there as where they were
 * made, as Linux's open file descriptions do. hvrun keeps each one's
 * context (the timer, the mask, the counter, the process) beside the guest
 * fd, and it did not travel: the receiver's timerfd_gettime was EINVAL,
 * its signalfd read the eventfd behind it, its perf fd read nothing, its
 * pidfd_send_signal was EBADF.
 * - timerfd: timerfd_gettime gives the sender's interval, a read gives 8
 *   bytes of at least one expiration, fdinfo has clockid and it_interval;
 * - signalfd: fdinfo has the sender's mask; a read returns the receiver's
 *   own pending SIGUSR1 as a signalfd_siginfo;
 * - perf (a task-clock software counter of the sender): a read gives 8
 *   bytes, ioctl ENABLE and RESET work;
 * - pidfd (of a third process, asleep): pidfd_send_signal kills it, and
 *   the pidfd polls readable once it is gone; fdinfo has its Pid.
 * Prints what holds, no value that differs by design.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/timerfd.h>
#include <sys/wait.h>
#include <unistd.h>

#include "guest_check.h"
#include "guest_scm.h"

/* Whether fdinfo of fd has a line starting with key. */
static int fdinfo_has(int fd, const char *key)
{
    char path[64], buf[4096];
    snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
    int f = open(path, O_RDONLY);
    if (f < 0)
        return 0;
    ssize_t n = read(f, buf, sizeof(buf) - 1);
    close(f);
    buf[n > 0 ? n : 0] = '\0';
    size_t k = strlen(key);
    for (char *line = buf; line && *line;) {
        if (strncmp(line, key, k) == 0)
            return 1;
        line = strchr(line, '\n');
        line = line ? line + 1 : NULL;
    }
    return 0;
}

static void timerfd_received(int fd)
{
    struct itimerspec its;
    long r = timerfd_gettime(fd, &its);
    printf("timerfd: gettime %s, interval %ld ms\n", result_text(r),
           r == 0 ? its.it_interval.tv_nsec / 1000000 : -1L);
    uint64_t count = 0;
    ssize_t n = read(fd, &count, sizeof(count));
    printf("timerfd: read %zd bytes, expirations >= 1: %d\n", n, count >= 1);
    printf("timerfd: fdinfo clockid %d, it_interval %d\n",
           fdinfo_has(fd, "clockid:"), fdinfo_has(fd, "it_interval:"));
}

static void signalfd_received(int fd)
{
    printf("signalfd: fdinfo sigmask %d\n", fdinfo_has(fd, "sigmask:"));
    sigset_t usr1;
    sigemptyset(&usr1);
    sigaddset(&usr1, SIGUSR1);
    CHECK(sigprocmask(SIG_BLOCK, &usr1, NULL) == 0);
    CHECK(raise(SIGUSR1) == 0);
    struct signalfd_siginfo si;
    ssize_t n = read(fd, &si, sizeof(si));
    printf("signalfd: read %zd bytes, signo %u\n", n,
           n == (ssize_t)sizeof(si) ? si.ssi_signo : 0);
}

static void perf_received(int fd)
{
    uint64_t v;
    ssize_t n = read(fd, &v, sizeof(v));
    printf("perf: read %zd bytes\n", n);
    printf("perf: ioctl ENABLE %s", result_text(ioctl(fd, PERF_EVENT_IOC_ENABLE, 0)));
    printf(", RESET %s\n", result_text(ioctl(fd, PERF_EVENT_IOC_RESET, 0)));
}

static void pidfd_received(int fd)
{
    printf("pidfd: fdinfo Pid %d\n", fdinfo_has(fd, "Pid:"));
    struct pollfd before = {.fd = fd, .events = POLLIN};
    printf("pidfd: readable while it lives: %d\n", poll(&before, 1, 0));
    long r = syscall(SYS_pidfd_send_signal, fd, SIGKILL, NULL, 0);
    printf("pidfd: send_signal %s\n", result_text(r));
    struct pollfd after = {.fd = fd, .events = POLLIN};
    printf("pidfd: readable once it is gone: %d\n", poll(&after, 1, 5000));
}

static void receiver(int sock)
{
    timerfd_received(recv_fd(sock));
    signalfd_received(recv_fd(sock));
    perf_received(recv_fd(sock));
    pidfd_received(recv_fd(sock));
}

int main(void)
{
    setvbuf(stdout, NULL, _IONBF, 0);
    pid_t sleeper = fork();
    CHECK(sleeper >= 0);
    if (sleeper == 0) {
        pause();
        _exit(0);
    }
    int sock;
    pid_t child = fork_receiver(receiver, &sock);

    int tfd = timerfd_create(CLOCK_MONOTONIC, 0);
    CHECK(tfd >= 0);
    struct itimerspec its = {.it_interval = {0, 10000000},
                             .it_value = {0, 10000000}};
    CHECK(timerfd_settime(tfd, 0, &its, NULL) == 0);
    send_fd(sock, tfd);

    sigset_t usr1;
    sigemptyset(&usr1);
    sigaddset(&usr1, SIGUSR1);
    int sfd = signalfd(-1, &usr1, 0);
    CHECK(sfd >= 0);
    send_fd(sock, sfd);

    struct perf_event_attr attr = {.type = PERF_TYPE_SOFTWARE,
                                   .size = sizeof(attr),
                                   .config = PERF_COUNT_SW_TASK_CLOCK,
                                   .exclude_kernel = 1,
                                   .exclude_hv = 1};
    int pfd = (int)syscall(SYS_perf_event_open, &attr, 0, -1, -1, 0);
    CHECK(pfd >= 0);
    send_fd(sock, pfd);

    int pidfd = (int)syscall(SYS_pidfd_open, sleeper, 0);
    CHECK(pidfd >= 0);
    send_fd(sock, pidfd);

    int status;
    CHECK(waitpid(child, &status, 0) == child);
    CHECK(waitpid(sleeper, &status, 0) == sleeper);
    printf("the sleeper: %s\n",
           WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL ? "killed"
                                                              : "not killed");
    return 0;
}
