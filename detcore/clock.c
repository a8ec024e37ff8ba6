/*
 * clock.c - the logical clock. Time is a function of the guest's own
 * events: every syscall advances it by DET_EVENT_NS and a sleep advances it
 * by its length, so no clock ever reads the host. The clocks:
 *
 *   REALTIME, REALTIME_COARSE, TAI   epoch + elapsed   (TAI = REALTIME)
 *   MONOTONIC, MONOTONIC_RAW,
 *   BOOTTIME (and the _ALARM ones)   DET_BOOT_OFFSET_NS + elapsed
 *   *_COARSE                          rounded down to DET_COARSE_NS
 *   PROCESS_/THREAD_CPUTIME_ID       elapsed here (timers on them); what
 *                                    the guest reads is each thread's own
 *                                    running time (kernel/time.c)
 *
 * With --no-virtualize-time every read is the host's clock and sleeps
 * really sleep.
 */
#include "det.h"

#include <errno.h>

static bool clock_known(int clockid)
{
    switch (clockid) {
    case CLOCK_REALTIME: case CLOCK_MONOTONIC: case CLOCK_PROCESS_CPUTIME_ID:
    case CLOCK_THREAD_CPUTIME_ID: case CLOCK_MONOTONIC_RAW:
    case CLOCK_REALTIME_COARSE: case CLOCK_MONOTONIC_COARSE:
    case CLOCK_BOOTTIME: case CLOCK_REALTIME_ALARM: case CLOCK_BOOTTIME_ALARM:
    case CLOCK_TAI:
        return true;
    default:
        return false;
    }
}

static bool coarse(int clockid)
{
    return clockid == CLOCK_REALTIME_COARSE ||
           clockid == CLOCK_MONOTONIC_COARSE;
}

static int64_t logical_ns(const struct det_state *d, int clockid)
{
    int64_t t;
    switch (clockid) {
    case CLOCK_REALTIME: case CLOCK_REALTIME_COARSE: case CLOCK_TAI:
    case CLOCK_REALTIME_ALARM:
        t = d->cfg.epoch_ns + d->now_ns;
        break;
    case CLOCK_PROCESS_CPUTIME_ID: case CLOCK_THREAD_CPUTIME_ID:
        t = d->now_ns;
        break;
    default:
        t = DET_BOOT_OFFSET_NS + d->now_ns;
    }
    return coarse(clockid) ? t - t % DET_COARSE_NS : t;
}

static void to_timespec(int64_t ns, struct timespec *ts)
{
    ts->tv_sec = (time_t)(ns / 1000000000LL);
    ts->tv_nsec = (long)(ns % 1000000000LL);
}

int det_clock_gettime(struct det_state *d, int clockid, struct timespec *ts)
{
    if (!clock_known(clockid))
        return -EINVAL;
    if (!d->cfg.virtualize_time) {
        if (!det_tap_get(d, DET_SRC_TIME, ts, sizeof(*ts))) {
            if (clock_gettime(clockid, ts) < 0)
                return -errno;
            det_tap_put(d, DET_SRC_TIME, ts, sizeof(*ts));
        }
    } else {
        d->reads[DET_SRC_TIME]++;
        to_timespec(logical_ns(d, clockid), ts);
    }
    det_log_value(d, DET_SRC_TIME, ts, sizeof(*ts));
    return 0;
}

void det_clock_page(const struct det_state *d, struct det_clock_page *out)
{
    *out = (struct det_clock_page){.virtual_time = d->cfg.virtualize_time,
                                   .now_ns = d->now_ns,
                                   .epoch_ns = d->cfg.epoch_ns,
                                   .boot_ns = DET_BOOT_OFFSET_NS,
                                   .event_ns = DET_EVENT_NS,
                                   .coarse_ns = DET_COARSE_NS};
}

void det_clock_fold(struct det_state *d, uint64_t calls)
{
    if (!d->cfg.virtualize_time)
        return;
    d->now_ns += (int64_t)calls * DET_EVENT_NS;
    d->events += calls;
    d->reads[DET_SRC_TIME] += calls;
}

void det_clock_log_folded(struct det_state *d, uint64_t calls)
{
    if (d->cfg.virtualize_time && calls)
        det_log_value(d, DET_SRC_TIME, &calls, sizeof(calls));
}

void det_clock_computed(struct det_state *d, uint64_t ns)
{
    if (d->cfg.virtualize_time)
        d->now_ns += (int64_t)ns;
}

uint64_t det_clock_tsc(struct det_state *d)
{
    d->events++;
    d->now_ns += DET_EVENT_NS;
    d->reads[DET_SRC_TIME]++;
    uint64_t tsc = (uint64_t)(DET_BOOT_OFFSET_NS + d->now_ns);
    det_log_value(d, DET_SRC_TIME, &tsc, sizeof(tsc));
    return tsc;
}

int det_clock_getres(struct det_state *d, int clockid, struct timespec *ts)
{
    if (!clock_known(clockid))
        return -EINVAL;
    if (!d->cfg.virtualize_time)
        return clock_getres(clockid, ts) < 0 ? -errno : 0;
    to_timespec(coarse(clockid) ? DET_COARSE_NS : 1, ts);
    return 0;
}

void det_sleep(struct det_state *d, uint64_t ns)
{
    if (d->cfg.virtualize_time) {
        d->now_ns += (int64_t)ns;
        return;
    }
    struct timespec ts;
    to_timespec((int64_t)ns, &ts);
    while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
        ;
}

int64_t det_timespec_ns(const struct timespec *ts)
{
    int64_t ns, sum;
    if (__builtin_mul_overflow((int64_t)ts->tv_sec, 1000000000LL, &ns))
        return ts->tv_sec < 0 ? INT64_MIN : INT64_MAX;
    if (__builtin_add_overflow(ns, (int64_t)ts->tv_nsec, &sum))
        return ts->tv_nsec < 0 ? INT64_MIN : INT64_MAX;
    return sum;
}

int64_t det_realtime_ns(struct det_state *d)
{
    struct timespec ts;
    det_clock_gettime(d, CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

void det_clock_cpu_read(struct det_state *d, uint64_t ns)
{
    d->reads[DET_SRC_TIME]++;
    det_log_value(d, DET_SRC_TIME, &ns, sizeof(ns));
}

int64_t det_cputime_ns(struct det_state *d)
{
    struct timespec ts;
    det_clock_gettime(d, CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

int64_t det_clock_peek_ns(struct det_state *d, int clockid)
{
    if (d->cfg.virtualize_time)
        return logical_ns(d, clockid);
    /* The host's time: hvrun record keeps each look hvrun's timers and
     * its scheduler take (a replay's timers fire where the recorded
     * run's did); not an event of the detlog. */
    int64_t ns;
    if (det_tap_get(d, DET_SRC_TIME, &ns, sizeof(ns)))
        return ns;
    struct timespec ts;
    if (clock_gettime(clockid, &ts) < 0)
        return 0;
    ns = (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
    det_tap_put(d, DET_SRC_TIME, &ns, sizeof(ns));
    return ns;
}
