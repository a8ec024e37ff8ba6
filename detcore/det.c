/*
 * det.c - detcore's door. For now the clock and randomness read the host
 * (the determinism layer replaces the bodies, not the callers).
 */
#include "det.h"

#include <errno.h>
#include <string.h>
#include <sys/random.h>

void det_init(struct det_state *d, const struct det_config *cfg)
{
    memset(d, 0, sizeof(*d));
    d->cfg = *cfg;
}

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

int det_clock_gettime(struct det_state *d, int clockid, struct timespec *ts)
{
    (void)d;
    if (!clock_known(clockid))
        return -EINVAL;
    return clock_gettime(clockid, ts) < 0 ? -errno : 0;
}

int det_clock_getres(struct det_state *d, int clockid, struct timespec *ts)
{
    (void)d;
    if (!clock_known(clockid))
        return -EINVAL;
    return clock_getres(clockid, ts) < 0 ? -errno : 0;
}

void det_sleep(struct det_state *d, uint64_t ns)
{
    (void)d;
    struct timespec ts = {(time_t)(ns / 1000000000ULL),
                          (long)(ns % 1000000000ULL)};
    while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
        ;
}

void det_random_fill(struct det_state *d, void *buf, size_t len)
{
    (void)d;
    uint8_t *p = buf;
    while (len > 0) {
        ssize_t n = getrandom(p, len, 0);
        if (n <= 0)
            continue;
        p += n;
        len -= (size_t)n;
    }
}

void det_event(struct det_state *d) { d->events++; }
