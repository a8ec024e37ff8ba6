/*
 * rdtsc_deltas.c - RDTSC and RDTSCP read a clock that only goes forward.
 * With an argument it also prints the differences from the first read:
 * under hvrun with virtual time they are the logical clock's (the same in
 * every run and under both backends: kvm rewrites the instructions into
 * traps, ptrace's stubs make them fault), which tests/parity/run.sh
 * compares; natively they are whatever the host's TSC gives.
 */
#include <stdio.h>
#include <x86intrin.h>

#include "guest_check.h"

#define READS 8

int main(int argc, char **argv)
{
    unsigned long long t[READS];
    unsigned aux;
    (void)argv;
    for (int i = 0; i < READS; i++)
        t[i] = (i & 1) ? __rdtscp(&aux) : __rdtsc();
    for (int i = 1; i < READS; i++)
        CHECK(t[i] > t[i - 1]);
    if (argc > 1)
        for (int i = 1; i < READS; i++)
            printf("delta %d: %llu\n", i, t[i] - t[0]);
    puts("rdtsc: increasing");
    return 0;
}
