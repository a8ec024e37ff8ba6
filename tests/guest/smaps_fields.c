/*
 * smaps_fields: /proc/self/smaps for mappings the test makes (LTP
 * mlock05): a populated private anonymous mapping's Size, Rss and
 * Anonymous, its Locked and the "lo" VmFlag after mlock and again after
 * munlock, a shared anonymous one's Private_Dirty (one process maps it),
 * and that every mapping
 * of /proc/self/maps has its entry. Printed and compared with a native
 * run (only the test's own mappings' figures, which a run of the same
 * program fills in the same on both).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "guest_check.h"

#define LEN (1UL << 20)

/* Prints the fields named in want[] of the mapping at addr. */
static void show(const char *what, void *addr)
{
    FILE *f = fopen("/proc/self/smaps", "r");
    CHECK(f);
    char line[512];
    bool in = false;
    static const char *const want[] = {"Size:", "Rss:", "Anonymous:",
                                       "Private_Dirty:", "Locked:"};
    printf("%s:", what);
    while (fgets(line, sizeof(line), f)) {
        unsigned long start, end;
        if (sscanf(line, "%lx-%lx ", &start, &end) == 2) {
            in = start == (unsigned long)addr;
            continue;
        }
        if (!in)
            continue;
        for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
            unsigned long kb;
            size_t n = strlen(want[i]);
            if (strncmp(line, want[i], n) == 0 &&
                sscanf(line + n, "%lu", &kb) == 1)
                printf(" %s %lu", want[i], kb);
        }
        if (strncmp(line, "VmFlags:", 8) == 0)
            printf(" lo %d", strstr(line, " lo") != NULL);
    }
    printf("\n");
    fclose(f);
}

static int count_lines(const char *path, const char *prefix)
{
    FILE *f = fopen(path, "r");
    CHECK(f);
    char line[512];
    int n = 0;
    while (fgets(line, sizeof(line), f))
        n += prefix ? strncmp(line, prefix, strlen(prefix)) == 0 : 1;
    fclose(f);
    return n;
}

int main(void)
{
    /* inside a PROT_NONE reservation, so no neighbour merges with it */
    char *r = mmap(NULL, 3 * LEN, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS,
                   -1, 0);
    CHECK(r != MAP_FAILED);
    void *a = mmap(r + LEN, LEN, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE | MAP_FIXED,
                   -1, 0);
    CHECK(a != MAP_FAILED);
    memset(a, 1, LEN);
    show("populated", a);
    CHECK(mlock(a, LEN) == 0);
    show("mlock'd", a);
    CHECK(munlock(a, LEN) == 0);
    show("munlock'd", a);
    void *s = mmap(r + 2 * LEN, 4 * 4096, PROT_READ | PROT_WRITE,
                   MAP_SHARED | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
    CHECK(s != MAP_FAILED);
    memset(s, 1, 4 * 4096);
    show("shared", s);
    int maps = count_lines("/proc/self/maps", NULL);
    int entries = count_lines("/proc/self/smaps", "VmFlags:");
    printf("an smaps entry per maps line: %d\n", maps == entries);
    return 0;
}
