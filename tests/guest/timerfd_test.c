/*
 * timerfd_test: a periodic timerfd read blocking, then polled; its
 * settings read back; writes refused (EINVAL); a non-blocking read of an
 * unarmed one is EAGAIN; a bad clock EINVAL; fork shares the timer.
 */
#include <errno.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/timerfd.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "guest_check.h"

static long ms_between(const struct timespec *a, const struct timespec *b)
{
    return (long)((b->tv_sec - a->tv_sec) * 1000 +
                  (b->tv_nsec - a->tv_nsec) / 1000000);
}

int main(void)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    int fd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC);
    CHECK(fd >= 0);
    /* 100 ms, then every 50 ms */
    struct itimerspec its = {{0, 50000000}, {0, 100000000}};
    CHECK(timerfd_settime(fd, 0, &its, NULL) == 0);
    struct timespec a, b;
    clock_gettime(CLOCK_MONOTONIC, &a);
    uint64_t n = 0;
    CHECK(read(fd, &n, 8) == 8);
    clock_gettime(CLOCK_MONOTONIC, &b);
    long waited = ms_between(&a, &b);
    /* Never early; late by as much as a loaded host makes it (the native
     * reference run, descheduled between the read and the clock read,
     * took over 300 ms beside a busy suite and two builds). */
    /* At least one: a reference run woken more than 50 ms late (a loaded
     * host) reads the interval's next expiration too. */
    printf("first read: %s expiration, waited about 100 ms: %s\n",
           n >= 1 ? "at least one" : "no",
           waited >= 99 && waited < 2000 ? "yes" : "no");
    struct pollfd p = {fd, POLLIN, 0};
    CHECK(poll(&p, 1, 1000) == 1);
    CHECK(read(fd, &n, 8) == 8);
    printf("poll then read: %s expiration\n", n >= 1 ? "at least one" : "no");
    struct itimerspec cur;
    CHECK(timerfd_gettime(fd, &cur) == 0);
    printf("interval %ld ms, next within it: %s\n",
           cur.it_interval.tv_nsec / 1000000,
           cur.it_value.tv_sec == 0 && cur.it_value.tv_nsec <= 50000000
               ? "yes" : "no");
    errno = 0;
    CHECK(write(fd, &n, 8) == -1 && errno == EINVAL);
    errno = 0;
    CHECK(read(fd, &n, 4) == -1 && errno == EINVAL);
    printf("write and short read: EINVAL\n");

    /* fork shares the timer: the child reads an expiration too */
    pid_t pid = fork();
    CHECK(pid >= 0);
    if (pid == 0) {
        CHECK(read(fd, &n, 8) == 8 && n >= 1);
        _exit(0);
    }
    int st;
    CHECK(waitpid(pid, &st, 0) == pid && WIFEXITED(st) && WEXITSTATUS(st) == 0);
    printf("child read from the shared timer\n");

    struct itimerspec off = {{0, 0}, {0, 0}};
    CHECK(timerfd_settime(fd, 0, &off, NULL) == 0);
    CHECK(timerfd_gettime(fd, &cur) == 0);
    printf("disarmed: %s\n",
           cur.it_value.tv_sec == 0 && cur.it_value.tv_nsec == 0 ? "yes" : "no");
    int nb = timerfd_create(CLOCK_REALTIME, TFD_NONBLOCK);
    CHECK(nb >= 0);
    errno = 0;
    CHECK(read(nb, &n, 8) == -1 && errno == EAGAIN);
    errno = 0;
    CHECK(timerfd_create(42, 0) == -1 && errno == EINVAL);
    errno = 0;
    CHECK(timerfd_settime(0, 0, &its, NULL) == -1 && errno == EINVAL);
    printf("EAGAIN and EINVAL as Linux\n");
    return 0;
}
