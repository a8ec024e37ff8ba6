/*
 * wake_clock.c - a thread that only reads the clock (a timed spin-wait,
 * as QEMU's TCG loop or a JVM does) lets a sleeping thread run when its
 * deadline passes, deterministically: every GK_VDSO_MAX_CALLS clock reads
 * hvrun's vDSO makes a real exit, and there the scheduler looks at the
 * other threads. Run under `--preempt-ms 0` (no host-timed slice) it must
 * still end, and it verifies. Natively the same output.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <time.h>

#include "guest_check.h"

static atomic_int done;

static void *sleeper(void *arg)
{
    (void)arg;
    /* 20 ms: long enough that the main thread reads the clock first even
     * on a loaded host (at 2 ms, natively as under hvrun, it sometimes
     * did not get the CPU before the sleeper woke). */
    struct timespec ts = {0, 20000000};
    CHECK(nanosleep(&ts, NULL) == 0);
    atomic_store(&done, 1);
    return NULL;
}

int main(void)
{
    pthread_t t;
    CHECK(pthread_create(&t, NULL, sleeper, NULL) == 0);
    struct timespec now;
    long reads = 0;
    while (!atomic_load(&done)) {
        CHECK(clock_gettime(CLOCK_MONOTONIC, &now) == 0);
        reads++;
    }
    CHECK(pthread_join(t, NULL) == 0);
    printf("the sleeper woke while the main thread read the clock (%s)\n",
           reads > 0 ? "it did" : "it never did");
    return 0;
}
