/*
 * mem_limit.c - the memory a guest is told it has is the memory it gets.
 *
 *   mem_limit        sysinfo's totalram equals /proc/meminfo's MemTotal
 *                    (natively too; the guest runner compares the output)
 *   mem_limit MIB    under `hvrun run --memory MIBM`: both say MIB MiB;
 *                    malloc+touch in 8 MiB steps gets NULL (ENOMEM) before
 *                    MIB MiB and after half of it; a child touching
 *                    MAP_NORESERVE memory (not charged, as under Linux's
 *                    heuristic overcommit) up to 4 x MIB is OOM-killed
 *                    (SIGKILL). Prints one line: "MIB MiB: ENOMEM, OOM kill".
 */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/sysinfo.h>
#include <sys/wait.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "guest_check.h"

#define MIB (1ULL << 20)
#define STEP (8 * MIB)

static unsigned long long meminfo_total_kb(void)
{
    FILE *f = fopen("/proc/meminfo", "r");
    CHECK(f);
    unsigned long long kb = 0;
    char line[256];
    while (fgets(line, sizeof(line), f))
        if (sscanf(line, "MemTotal: %llu kB", &kb) == 1)
            break;
    fclose(f);
    return kb;
}

static unsigned long long sysinfo_total(void)
{
    struct sysinfo si;
    CHECK(sysinfo(&si) == 0);
    return (unsigned long long)si.totalram * si.mem_unit;
}

/* mallocs and touches STEP at a time until NULL; frees it all. */
static unsigned long long malloc_until_enomem(unsigned long long cap)
{
    void *blocks[4096];
    size_t n = 0;
    unsigned long long got = 0;
    while (got < cap && n < sizeof(blocks) / sizeof(blocks[0])) {
        char *b = malloc(STEP);
        if (!b) {
            CHECK(errno == ENOMEM);
            break;
        }
        memset(b, 1, STEP);
        blocks[n++] = b;
        got += STEP;
    }
    while (n > 0)
        free(blocks[--n]);
    return got;
}

/* Touches MAP_NORESERVE memory up to cap, a syscall between steps. */
static void touch_noreserve(unsigned long long cap)
{
    for (unsigned long long done = 0; done < cap; done += 2 * STEP) {
        char *b = mmap(NULL, 2 * STEP, PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
        CHECK(b != MAP_FAILED);
        memset(b, 1, 2 * STEP);
        (void)syscall(SYS_getppid);
    }
}

int main(int argc, char **argv)
{
    unsigned long long total = sysinfo_total();
    CHECK(meminfo_total_kb() * 1024 == total);
    if (argc < 2)
        return 0;
    unsigned long long want = strtoull(argv[1], NULL, 10) * MIB;
    CHECK(total == want);

    unsigned long long got = malloc_until_enomem(2 * want);
    CHECK(got < want && got > want / 2);

    pid_t c = fork();
    CHECK(c >= 0);
    if (c == 0) {
        touch_noreserve(4 * want);
        _exit(0);
    }
    int st;
    CHECK(waitpid(c, &st, 0) == c);
    CHECK(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL);
    printf("%llu MiB: ENOMEM, OOM kill\n", want / MIB);
    return 0;
}
