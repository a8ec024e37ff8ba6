/*
 * vdso.c - hvrun's vDSO: clock_gettime, gettimeofday, time, clock_getres
 * and getcpu answered in the guest, from the logical clock in the [vvar]
 * page (vdso_abi.h), without an exit. Built as a tiny shared object and
 * mapped into every guest image (AT_SYSINFO_EHDR), where glibc finds it by
 * the usual names and version (LINUX_2.6). It reads [vvar] and writes only
 * its call count (vdso_abi.h).
 *
 * Freestanding: no libc, no TLS, no relocations. A clock the page does not
 * cover, or host time (--no-virtualize-time), goes to the real syscall.
 */
#include <stddef.h>
#include <stdint.h>

#include "vdso_abi.h"

struct k_timespec {
    int64_t tv_sec;
    int64_t tv_nsec;
};
struct k_timeval {
    int64_t tv_sec;
    int64_t tv_usec;
};
struct k_timezone {
    int tz_minuteswest;
    int tz_dsttime;
};

#define NSEC 1000000000LL

/* Linux clock ids (uapi/linux/time.h). */
enum {
    K_REALTIME = 0, K_MONOTONIC = 1, K_PROCESS_CPUTIME = 2,
    K_THREAD_CPUTIME = 3, K_MONOTONIC_RAW = 4, K_REALTIME_COARSE = 5,
    K_MONOTONIC_COARSE = 6, K_BOOTTIME = 7, K_REALTIME_ALARM = 8,
    K_BOOTTIME_ALARM = 9, K_TAI = 11,
};

/* The page below the image: the image starts at the ELF header. */
extern const char __ehdr_start[] __attribute__((visibility("hidden")));

static volatile struct gk_vvar *vvar(void)
{
    return (volatile struct gk_vvar *)((uintptr_t)__ehdr_start - 4096);
}

static long sys2(long nr, long a, long b)
{
    long ret;
    __asm__ volatile("syscall"
                     : "=a"(ret)
                     : "a"(nr), "D"(a), "S"(b)
                     : "rcx", "r11", "memory");
    return ret;
}

/* One event: the elapsed logical time it sees, or -1 for the kernel (host
 * time, or GK_VDSO_MAX_CALLS answered since the last exit). */
static int64_t event_elapsed(void)
{
    volatile struct gk_vvar *v = vvar();
    if (v->magic != GK_VDSO_MAGIC || !v->virtual_time)
        return -1;
    volatile uint64_t *calls = (volatile uint64_t *)(uintptr_t)v->calls_va;
    uint64_t n = *calls + 1;
    if (n > GK_VDSO_MAX_CALLS)
        return -1;
    *calls = n;
    return v->now_ns + (int64_t)n * v->event_ns;
}

/* detcore's logical_ns for one clock, or -1 when the clock is not one of
 * these (the kernel answers, EINVAL included). The CPU clocks are the
 * running thread's own time, which the proxy keeps per thread: its base
 * at the last exit plus this run's reads (elapsed - now_ns). */
static int64_t clock_ns(int clk, int64_t elapsed)
{
    volatile struct gk_vvar *v = vvar();
    int64_t t;
    switch (clk) {
    case K_REALTIME: case K_REALTIME_COARSE: case K_TAI:
    case K_REALTIME_ALARM:
        t = v->epoch_ns + elapsed;
        break;
    case K_THREAD_CPUTIME:
        t = v->thread_cpu_ns + (elapsed - v->now_ns);
        break;
    case K_PROCESS_CPUTIME:
        t = v->process_cpu_ns + (elapsed - v->now_ns);
        break;
    case K_MONOTONIC: case K_MONOTONIC_RAW: case K_MONOTONIC_COARSE:
    case K_BOOTTIME: case K_BOOTTIME_ALARM:
        t = v->boot_ns + elapsed;
        break;
    default:
        return -1;
    }
    if (clk == K_REALTIME_COARSE || clk == K_MONOTONIC_COARSE)
        t -= t % v->coarse_ns;
    return t;
}

static int known(int clk)
{
    return clock_ns(clk, 0) >= 0;
}

int __vdso_clock_gettime(int clk, struct k_timespec *ts)
{
    int64_t e;
    if (!known(clk) || (e = event_elapsed()) < 0)
        return (int)sys2(228, clk, (long)ts);
    int64_t t = clock_ns(clk, e);
    ts->tv_sec = t / NSEC;
    ts->tv_nsec = t % NSEC;
    return 0;
}

int __vdso_gettimeofday(struct k_timeval *tv, struct k_timezone *tz)
{
    int64_t e = event_elapsed();
    if (e < 0)
        return (int)sys2(96, (long)tv, (long)tz);
    if (tv) {
        int64_t t = clock_ns(K_REALTIME, e);
        tv->tv_sec = t / NSEC;
        tv->tv_usec = (t % NSEC) / 1000;
    }
    if (tz) {
        tz->tz_minuteswest = 0;
        tz->tz_dsttime = 0;
    }
    return 0;
}

long __vdso_time(long *t)
{
    int64_t e = event_elapsed();
    if (e < 0)
        return sys2(201, (long)t, 0);
    long s = (long)(clock_ns(K_REALTIME, e) / NSEC);
    if (t)
        *t = s;
    return s;
}

int __vdso_clock_getres(int clk, struct k_timespec *res)
{
    if (!known(clk) || event_elapsed() < 0)
        return (int)sys2(229, clk, (long)res);
    if (res) {
        int coarse = clk == K_REALTIME_COARSE || clk == K_MONOTONIC_COARSE;
        res->tv_sec = 0;
        res->tv_nsec = coarse ? vvar()->coarse_ns : 1;
    }
    return 0;
}

/* One CPU (the machine model): cpu 0, node 0. */
long __vdso_getcpu(unsigned *cpu, unsigned *node, void *unused)
{
    (void)unused;
    if (event_elapsed() < 0)
        return sys2(309, (long)cpu, (long)node);
    if (cpu)
        *cpu = 0;
    if (node)
        *node = 0;
    return 0;
}

/* The unprefixed names Linux's vDSO also exports. */
int clock_gettime(int, struct k_timespec *)
    __attribute__((weak, alias("__vdso_clock_gettime")));
int gettimeofday(struct k_timeval *, struct k_timezone *)
    __attribute__((weak, alias("__vdso_gettimeofday")));
long time(long *) __attribute__((weak, alias("__vdso_time")));
int clock_getres(int, struct k_timespec *)
    __attribute__((weak, alias("__vdso_clock_getres")));
long getcpu(unsigned *, unsigned *, void *)
    __attribute__((weak, alias("__vdso_getcpu")));
