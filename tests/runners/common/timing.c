/*
 * timing.c - a time-dependent assertion for the sample projects of
 * tests/runners: a 1 ms sleep must take under 1.2 ms. Natively the
 * host's wake-up latency decides (a late wake-up on a loaded or virtualised
 * host fails it now and then); under hvrun the clock is logical, the sleep
 * takes 1 ms plus the cost of a few events, every run.
 */
#include <stdio.h>
#include <time.h>

int main(void)
{
    struct timespec a, b, d = {0, 1000000};
    clock_gettime(CLOCK_MONOTONIC, &a);
    nanosleep(&d, NULL);
    clock_gettime(CLOCK_MONOTONIC, &b);
    long us = (b.tv_sec - a.tv_sec) * 1000000L + (b.tv_nsec - a.tv_nsec) / 1000;
    printf("timing: a 1 ms sleep took %s\n", us < 1200 ? "under 1.2 ms" : "longer");
    return us < 1200 ? 0 : 1;
}
