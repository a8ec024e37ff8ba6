/*
 * run_clock.c - the process's record of where its host time went
 * (run_clock.h).
 */
#include "run_clock.h"

#include <time.h>

struct vmm_run_clock vmm_run_clock;

uint64_t vmm_clock_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}
