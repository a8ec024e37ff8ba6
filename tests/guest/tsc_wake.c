/*
 * tsc_wake.c - RDTSC under hvrun. Thread A parks in ppoll on two pipes
 * with a 10 ms timeout; thread B spins reading the TSC (no syscall, no
 * clock read) until A has returned, as a TSC delay loop does. kvm_pvm
 * cannot trap RDTSC: hvrun rewrites it into a trap answered from the
 * logical clock, each read advances logical time, and A, whose deadline
 * such a read passed, gets the vCPU at that read. Natively the same in
 * 10 ms. With --print-tsc it prints the values read (tests/determinism:
 * verify/tsc, identical in every run).
 */
#define _GNU_SOURCE
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <x86intrin.h>

#include "guest_check.h"

static atomic_int done;
static int p1[2], p2[2];

static void *poller(void *arg)
{
    (void)arg;
    struct pollfd f[2] = {{p1[0], POLLIN, 0}, {p2[0], POLLIN, 0}};
    struct timespec ts = {0, 10 * 1000 * 1000};
    CHECK(ppoll(f, 2, &ts, NULL) == 0);
    done = 1;
    return NULL;
}

int main(int argc, char **argv)
{
    CHECK(pipe(p1) == 0 && pipe(p2) == 0);
    unsigned aux = 99;
    unsigned long long t0 = __rdtsc(), t1 = __rdtscp(&aux), t2 = __rdtsc();
    CHECK(t1 > t0 && t2 > t1);
    pthread_t t;
    CHECK(pthread_create(&t, NULL, poller, NULL) == 0);
    unsigned long long reads = 0, last = t2;
    while (!done) {
        unsigned long long now = __rdtsc();
        CHECK(now >= last);
        last = now;
        reads++;
    }
    CHECK(pthread_join(t, NULL) == 0);
    CHECK(reads > 0);
    printf("ppoll timed out while the other thread read the TSC\n");
    if (argc > 1 && strcmp(argv[1], "--print-tsc") == 0)
        printf("tsc %llu %llu %llu aux %u, %llu reads, last %llu\n", t0, t1,
               t2, aux, reads, last);
    return 0;
}
