/*
 * rdtsc_fast.c - a loop of RDTSC and RDTSCP reads as compiled code makes
 * them (`rdtsc; shl $32, %rdx; or %rdx, %rax`), the form hvrun answers in
 * the guest from the logical clock (a jump to a stub that reads [vvar]),
 * far more reads than the vDSO answers between two exits (4096), so the
 * stub's fallback to the trap is crossed too. Checks that the values never
 * go backwards, that RDTSCP gives its TSC_AUX, and that a forked child
 * reads a clock that goes forward too. With --virtual (hvrun
 * with virtual time, where the TSC is CLOCK_MONOTONIC in ns) it also
 * checks that each read lies strictly between the clock_gettime calls
 * around it, and with --print-tsc prints the values read (the same in
 * every run: tests/determinism, verify/rdtsc-fast). With --count N it
 * makes N reads (a benchmark: bench/rdtsc-loop).
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/wait.h>
#include <unistd.h>
#include <x86intrin.h>

#include "guest_check.h"

static unsigned long long mono_ns(void)
{
    struct timespec ts;
    CHECK(clock_gettime(CLOCK_MONOTONIC, &ts) == 0);
    return (unsigned long long)ts.tv_sec * 1000000000ULL +
           (unsigned long long)ts.tv_nsec;
}

/* Not inlined: one site each, whatever the loop around it. */
static __attribute__((noinline)) unsigned long long read_tsc(void)
{
    return __rdtsc();
}

static __attribute__((noinline)) unsigned long long read_tscp(unsigned *aux)
{
    return __rdtscp(aux);
}

int main(int argc, char **argv)
{
    int virt = 0, print = 0;
    long count = 20000;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--virtual"))
            virt = 1;
        else if (!strcmp(argv[i], "--print-tsc"))
            print = virt = 1;
        else if (!strcmp(argv[i], "--count") && i + 1 < argc)
            count = atol(argv[++i]);
    }
    unsigned long long first = read_tsc(), last = first, backwards = 0;
    for (long i = 0; i < count; i++) {
        unsigned long long now = __rdtsc();
        backwards += now < last;
        last = now;
    }
    CHECK(backwards == 0);
    printf("rdtsc loop: %ld reads, never backwards\n", count);

    unsigned aux = 12345, aux_seen = 0;
    unsigned long long p0 = read_tscp(&aux);
    aux_seen = aux;
    unsigned long long p1 = read_tscp(&aux);
    CHECK(p1 >= p0 && p0 >= last);
    CHECK(aux == aux_seen);
    printf("rdtscp: forward, aux the same twice\n");

    /* A forked child reads through its copy of the stubs, its own count. */
    fflush(stdout);
    pid_t c = fork();
    CHECK(c >= 0);
    if (c == 0) {
        unsigned long long a = read_tsc(), b = read_tsc();
        for (int i = 0; i < 5000; i++)
            b = read_tsc();
        CHECK(b > a);
        if (print)
            printf("child tsc %llu %llu\n", a, b);
        printf("child: forward\n");
        fflush(stdout);
        _exit(0);
    }
    int st;
    CHECK(waitpid(c, &st, 0) == c && WIFEXITED(st) && WEXITSTATUS(st) == 0);
    CHECK(read_tsc() > p1);

    /* Between the clock reads around it (virtual time: TSC = monotonic
     * ns, each read one event later than the one before). */
    if (virt) {
        for (int i = 0; i < 10000; i++) {
            unsigned long long before = mono_ns(), t = read_tsc(),
                               after = mono_ns();
            CHECK(before < t && t < after);
        }
        printf("rdtsc: between the clock_gettime calls around it\n");
    }
    if (print)
        printf("tsc first %llu last %llu rdtscp %llu %llu aux %u now %llu\n",
               first, last, p0, p1, aux, read_tsc());
    return 0;
}
