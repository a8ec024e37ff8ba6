/*
 * progress_hostdata: computes as much as a host file's figure says (the
 * free memory of NUMA node 0, which libnuma parses at start-up, QEMU too)
 * and prints the logical time that took. Under --progress software logical
 * time follows the counted computation, so any host figure that leaks into
 * the guest shows in the time printed: it must be the same in every run
 * (tests/progress/run.sh). The figure itself is not printed: only the
 * counted progress can show it here.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

/* A real syscall, not the vDSO: the counted units fold into time there. */
static long long now_ns(void)
{
    struct timespec ts;
    if (syscall(SYS_clock_gettime, CLOCK_MONOTONIC, &ts) != 0)
        return -1;
    return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static unsigned long long node_mem_free_kb(void)
{
    FILE *f = fopen("/sys/devices/system/node/node0/meminfo", "r");
    char line[256];
    unsigned long long kb = 0;
    while (f && fgets(line, sizeof(line), f))
        if (sscanf(line, "Node 0 MemFree: %llu kB", &kb) == 1)
            break;
    if (f)
        fclose(f);
    return kb;
}

int main(void)
{
    long long t0 = now_ns();
    unsigned long long kb = node_mem_free_kb();
    /* A loop as long as the figure says: one counted back edge a turn. */
    volatile unsigned long long sink = 0;
    for (unsigned long long i = 0; i < kb % 100003; i++)
        sink += i;
    long long t1 = now_ns();
    printf("%s, computed for %lld ns\n", kb ? "node 0 meminfo read" : "no node 0 meminfo",
           t1 - t0);
    return 0;
}
