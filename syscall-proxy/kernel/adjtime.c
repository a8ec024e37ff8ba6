/*
 * adjtime.c - adjtimex and clock_adjtime: the kernel clock's NTP state, as
 * a read-only query of the virtual clock; clock_settime and settimeofday,
 * refused as without CAP_SYS_TIME.
 *
 * The run's clock is detcore's and no NTP daemon disciplines it, so a
 * query answers what Linux answers with no NTP (kernel/time/ntp.c at
 * boot): TIME_ERROR (STA_UNSYNC is set), offset and frequency 0, maxerror
 * and esterror at NTP_PHASE_LIMIT (16 s), constant 2, precision 1,
 * tolerance 500 ppm, tick 10000 us (USER_HZ 100), no PPS, TAI offset 0,
 * the time the virtual CLOCK_REALTIME. Every other field comes back as the
 * caller passed it, as Linux copies the whole struct in and out.
 *
 * Any mode that would change the clock is EPERM: no guest has
 * CAP_SYS_TIME (an unprivileged container's answer), so the host's clock
 * is never touched. Linux's order: EFAULT for the struct, then (for
 * clock_adjtime) EINVAL for a clock that does not exist and EOPNOTSUPP
 * for one that cannot be adjusted (only CLOCK_REALTIME can), then
 * ADJ_ADJTIME without ADJ_OFFSET_SINGLESHOT is EINVAL, then EPERM; the
 * read-only forms (modes 0, ADJ_OFFSET_SS_READ) need no privilege.
 *
 * clock_settime and settimeofday are EPERM for the same reason, a root
 * guest's included (docs/DETERMINISM.md, "Setting the clock"), after the
 * checks Linux makes before the capability: for clock_settime EINVAL for
 * a clock that cannot be set (all but CLOCK_REALTIME and the CPU clocks,
 * which Linux refuses with EPERM themselves), then EFAULT, then EINVAL
 * for a time settimeofday would not take; for settimeofday EFAULT, then
 * EINVAL for a bad timeval, then EPERM even with both arguments NULL.
 */
#include "proxy.h"
#include "kernel.h"

#include <errno.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/timex.h>
#include <time.h>

#include "det.h"

#define NTP_PHASE_LIMIT_US 16000000L   /* (MAXPHASE / NSEC_PER_USEC) << 5 */
#define NTP_TOLERANCE 32768000L        /* MAXFREQ_SCALED / PPM_SCALE */
#define NTP_TICK_US 10000L             /* USEC_PER_SEC / USER_HZ */
#define CLOCKFD_ID 3                   /* a dynamic (fd) clock's low bits */
#define KERNEL_CLOCK_IDS 12            /* CLOCK_REALTIME .. CLOCK_TAI */
#define SGI_CYCLE_ID 10                /* removed: no such clock */
#ifndef ADJ_ADJTIME
#define ADJ_ADJTIME 0x8000             /* linux/timex.h */
#endif
#ifndef ADJ_OFFSET_READONLY
#define ADJ_OFFSET_READONLY 0x2000
#endif

static long validate_modes(const struct timex *tx)
{
    if (tx->modes & ADJ_ADJTIME) {
        if ((tx->modes & ADJ_OFFSET_SINGLESHOT) != ADJ_OFFSET_SINGLESHOT)
            return -EINVAL;
        return (tx->modes & ADJ_OFFSET_READONLY) ? 0 : -EPERM;
    }
    return tx->modes ? -EPERM : 0;
}

static long query(struct proxy_process *p, struct timex *tx)
{
    long rc = validate_modes(tx);
    if (rc < 0)
        return rc;
    struct timespec now;
    det_clock_gettime(p->det, CLOCK_REALTIME, &now);
    tx->offset = 0; /* time_adjust for ADJ_OFFSET_SS_READ: 0 as well */
    tx->freq = 0;
    tx->maxerror = NTP_PHASE_LIMIT_US;
    tx->esterror = NTP_PHASE_LIMIT_US;
    tx->status = STA_UNSYNC;
    tx->constant = 2;
    tx->precision = 1;
    tx->tolerance = NTP_TOLERANCE;
    tx->tick = NTP_TICK_US;
    tx->tai = 0;
    tx->ppsfreq = tx->jitter = tx->stabil = 0;
    tx->shift = 0;
    tx->jitcnt = tx->calcnt = tx->errcnt = tx->stbcnt = 0;
    tx->time.tv_sec = now.tv_sec;
    tx->time.tv_usec = now.tv_nsec / 1000;
    return TIME_ERROR;
}

static long answer(struct proxy_process *p, gva_t utx, int clockid,
                   bool with_clock)
{
    struct timex tx;
    if (proxy_copy_in(p, &tx, utx, sizeof(tx)) < 0)
        return -EFAULT;
    if (with_clock) {
        if (clockid < 0) /* CPU clocks cannot be adjusted; fd clocks are
                          * PTP devices the run has none of */
            return (clockid & 7) == CLOCKFD_ID ? -EINVAL : -EOPNOTSUPP;
        if (clockid >= KERNEL_CLOCK_IDS || clockid == SGI_CYCLE_ID)
            return -EINVAL;
        if (clockid != CLOCK_REALTIME)
            return -EOPNOTSUPP;
    }
    long rc = query(p, &tx);
    if (rc >= 0 && proxy_copy_out(p, utx, &tx, sizeof(tx)) < 0)
        return -EFAULT;
    return rc;
}

static long sys_adjtimex(struct proxy_process *p, const uint64_t a[6])
{
    return answer(p, a[0], CLOCK_REALTIME, false);
}

static long sys_clock_adjtime(struct proxy_process *p, const uint64_t a[6])
{
    return answer(p, a[1], (int)a[0], true);
}

/* Linux's timespec64_valid_settod: not negative, tv_nsec below a second,
 * and below KTIME_SEC_MAX less 30 years of uptime. */
#define SETTOD_SEC_MAX (9223372036LL - 30LL * 31536000LL)

static bool valid_settod(const struct timespec *ts)
{
    return ts->tv_sec >= 0 && ts->tv_sec < SETTOD_SEC_MAX &&
           ts->tv_nsec >= 0 && ts->tv_nsec < 1000000000L;
}

/* A CPU clock id (negative): its low bits name the kind, 3 is an fd
 * clock, above CPUCLOCK_SCHED (2) none. */
#define CPUCLOCK_KINDS 3

static long sys_clock_settime(struct proxy_process *p, const uint64_t a[6])
{
    int clockid = (int)a[0];
    bool cpu = clockid < 0 && (clockid & 7) < CPUCLOCK_KINDS;
    if (clockid != CLOCK_REALTIME && !cpu)
        return -EINVAL; /* no clock_set: MONOTONIC, BOOTTIME, TAI... */
    struct timespec ts;
    if (proxy_copy_in(p, &ts, a[1], sizeof(ts)) < 0)
        return -EFAULT;
    if (!cpu && !valid_settod(&ts))
        return -EINVAL;
    return -EPERM;
}

static long sys_settimeofday(struct proxy_process *p, const uint64_t a[6])
{
    struct timeval tv;
    struct timezone tz;
    if (a[0] && proxy_copy_in(p, &tv, a[0], sizeof(tv)) < 0)
        return -EFAULT;
    if (a[1] && proxy_copy_in(p, &tz, a[1], sizeof(tz)) < 0)
        return -EFAULT;
    if (a[0]) {
        if (tv.tv_usec < 0 || tv.tv_usec >= 1000000)
            return -EINVAL;
        struct timespec ts = {tv.tv_sec, tv.tv_usec * 1000};
        if (!valid_settod(&ts))
            return -EINVAL;
    }
    return -EPERM;
}

const struct proxy_syscall proxy_adjtime_syscalls[] = {
    {SYS_clock_settime, "clock_settime", sys_clock_settime},
    {SYS_settimeofday, "settimeofday", sys_settimeofday},
    {SYS_adjtimex, "adjtimex", sys_adjtimex},
    {SYS_clock_adjtime, "clock_adjtime", sys_clock_adjtime},
    {-1, NULL, NULL},
};
