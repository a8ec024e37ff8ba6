/*
 * clock_settime_eperm.c - setting the clock: hvrun refuses it as a
 * container without CAP_SYS_TIME does (EPERM, a root guest's included:
 * docs/DETERMINISM.md), after the checks Linux makes first (hvrun gave
 * ENOSYS). A root native run may set the host's clock, so the calls that
 * would succeed are made only when this process lacks CAP_SYS_TIME (run
 * it under setpriv --bounding-set=-sys_time natively to compare); a root
 * guest's virtual capabilities include it, so the suite compares the
 * error orders.
 */
#define _GNU_SOURCE
#include <linux/capability.h>
#include <stdio.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "guest_check.h"

static void show(const char *label, long rc)
{
    printf("%s: %s\n", label, result_text(rc));
}

int main(void)
{
    struct timespec ts = {1000000000, 0}, bad = {1000000000, 1000000000};
    struct timespec neg = {-1, 0};
    /* Linux's order: the clock, then the pointer, then the time. */
    show("clock_settime MONOTONIC",
         syscall(SYS_clock_settime, CLOCK_MONOTONIC, &ts));
    show("clock_settime BOOTTIME, bad pointer",
         syscall(SYS_clock_settime, CLOCK_BOOTTIME, (void *)8));
    show("clock_settime clock 99", syscall(SYS_clock_settime, 99, &ts));
    show("clock_settime REALTIME, bad pointer",
         syscall(SYS_clock_settime, CLOCK_REALTIME, (void *)8));
    show("clock_settime REALTIME, tv_nsec 1e9",
         syscall(SYS_clock_settime, CLOCK_REALTIME, &bad));
    show("clock_settime REALTIME, negative",
         syscall(SYS_clock_settime, CLOCK_REALTIME, &neg));
    struct timeval badtv = {1000000000, 1000000};
    show("settimeofday, bad pointer",
         syscall(SYS_settimeofday, (void *)8, NULL));
    show("settimeofday, tv_usec 1e6",
         syscall(SYS_settimeofday, &badtv, NULL));
    /* What succeeds with CAP_SYS_TIME: only tried without it. */
    struct __user_cap_header_struct h = {_LINUX_CAPABILITY_VERSION_3, 0};
    struct __user_cap_data_struct d[2];
    CHECK(syscall(SYS_capget, &h, d) == 0);
    if (d[0].effective & (1u << CAP_SYS_TIME)) {
        printf("has CAP_SYS_TIME: the settable calls are not tried\n");
        return 0;
    }
    struct timespec now;
    CHECK(clock_gettime(CLOCK_REALTIME, &now) == 0);
    show("clock_settime REALTIME", syscall(SYS_clock_settime, CLOCK_REALTIME, &now));
    struct timeval tv = {now.tv_sec, 0};
    show("settimeofday", syscall(SYS_settimeofday, &tv, NULL));
    show("settimeofday NULL NULL", syscall(SYS_settimeofday, NULL, NULL));
    return 0;
}
