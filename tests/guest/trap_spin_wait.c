/*
 * trap_spin_wait.c - a spinner whose every iteration exits to hvrun
 * without being an event of its own (a CPUID hvrun answers, or, with
 * --no-virtualize-time under ptrace, a trapped RDTSC answered with the
 * host's TSC) must still be cut so that a thread waiting on a timeout gets
 * its turn. Thread A parks in ppoll with a 10 ms timeout; the main thread
 * spins on CPUID (or RDTSC with --rdtsc) until A has returned. Each exit
 * used to restart the host-timed slice's timer with the slice's last
 * millisecond, so a spinner trapping more often than that was never cut:
 * the run froze.
 */
#define _GNU_SOURCE
#include <cpuid.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <x86intrin.h>

#include "guest_check.h"

static atomic_int done;

static void *poller(void *arg)
{
    (void)arg;
    int p[2];
    CHECK(pipe(p) == 0);
    struct pollfd f = {p[0], POLLIN, 0};
    struct timespec ts = {0, 10 * 1000 * 1000};
    CHECK(ppoll(&f, 1, &ts, NULL) == 0);
    done = 1;
    return NULL;
}

int main(int argc, char **argv)
{
    int use_rdtsc = argc > 1 && strcmp(argv[1], "--rdtsc") == 0;
    pthread_t t;
    CHECK(pthread_create(&t, NULL, poller, NULL) == 0);
    unsigned long long spins = 0;
    unsigned a, b, c, d;
    while (!done) {
        if (use_rdtsc)
            (void)__rdtsc();
        else
            __cpuid(0, a, b, c, d);
        spins++;
    }
    CHECK(pthread_join(t, NULL) == 0);
    CHECK(spins > 0);
    printf("ppoll timed out while the other thread trapped\n");
    return 0;
}
