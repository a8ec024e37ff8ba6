/*
 * det.h - detcore: the one door for every value that could differ between
 * runs (time, randomness, ids, metadata, ordering). syscall-proxy asks here
 * and never reads host time, host entropy or host ids itself.
 *
 * Issue 2 (the KVM foundation) wires the door; the determinism policy that
 * virtualises each source is filled in behind these same functions.
 */
#ifndef DET_H
#define DET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

struct det_config {
    uint64_t seed;
    int64_t epoch_ns;        /* CLOCK_REALTIME at the start of the run */
    bool virtualize_time;
    bool virtualize_random;
};

struct det_state {
    struct det_config cfg;
    uint64_t events;         /* syscalls and other events seen */
};

void det_init(struct det_state *d, const struct det_config *cfg);

/* Fills *ts for clockid; returns 0 or -EINVAL for an unknown clock. */
int det_clock_gettime(struct det_state *d, int clockid, struct timespec *ts);
int det_clock_getres(struct det_state *d, int clockid, struct timespec *ts);
/* Sleeping: advances (or waits for) time by ns. */
void det_sleep(struct det_state *d, uint64_t ns);
/* Fills buf with guest-visible random bytes (getrandom, AT_RANDOM...). */
void det_random_fill(struct det_state *d, void *buf, size_t len);
/* Counts one guest event (a syscall); the logical clock hangs off this. */
void det_event(struct det_state *d);

#endif
