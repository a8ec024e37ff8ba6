/*
 * map_count.c - vm.max_map_count as Linux applies it, and the VMA list as
 * Linux shows it (issue 24; LTP's munmap04).
 *
 * A heap grown a page at a time and a run of adjacent anonymous mappings
 * are one line each in /proc/self/maps (Linux merges them). Then the
 * program maps PROT_NONE regions apart until mmap fails: ENOMEM, and at
 * that count a munmap or an mprotect of a region's middle page (a split)
 * is ENOMEM too, while calls that split nothing still work; after some
 * regions go, a split works again. The process goes on normally at the
 * limit (malloc, printf): under the ptrace backend its stub once held more
 * host mappings than the guest and the host refused first, ending the run
 * or dropping the guest's memory.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

static void report(const char *what, int rc)
{
    printf("%s: %d %s\n", what, rc, rc ? strerror(errno) : "");
}

/* Lines of /proc/self/maps naming `name` (all lines when NULL). */
static int maps_lines(const char *name)
{
    FILE *f = fopen("/proc/self/maps", "r");
    char line[512];
    int n = 0;
    while (f && fgets(line, sizeof(line), f))
        n += !name || strstr(line, name) != NULL;
    if (f)
        fclose(f);
    return n;
}

static void merged_views(long pg)
{
    for (int i = 0; i < 2000; i++)
        if (sbrk(pg) == (void *)-1)
            return;
    printf("[heap] lines after 2000 sbrk: %d\n", maps_lines("[heap]"));
    int before = maps_lines(NULL);
    char *run = mmap(NULL, 2000 * pg, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS,
                     -1, 0);
    munmap(run, 2000 * pg);
    for (int i = 0; i < 2000; i++)
        mmap(run + i * pg, pg, PROT_READ | PROT_WRITE,
             MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
    printf("lines added by 2000 adjacent mmaps: %d\n", maps_lines(NULL) - before);
    munmap(run, 2000 * pg);
}

int main(void)
{
    long pg = sysconf(_SC_PAGESIZE);
    merged_views(pg);
    char *base = (char *)0x200000000UL, *last = NULL;
    int n = 0;
    for (;; n++) {
        char *p = mmap(base + 4 * pg * (long)n, 3 * pg, PROT_NONE,
                       MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
        if (p == MAP_FAILED) {
            printf("mmap stops: %s\n", strerror(errno));
            break;
        }
        last = p;
    }
    printf("mapped over 60000: %s\n", n > 60000 ? "yes" : "no");
    report("munmap of a middle page", munmap(last + pg, pg));
    report("mprotect of a middle page", mprotect(last + pg, pg, PROT_READ));
    report("mprotect of a whole region", mprotect(last, 3 * pg, PROT_READ));
    report("munmap of a region's head", munmap(last, pg));
    report("munmap of a whole region", munmap(base, 3 * pg));
    char *small = malloc(64);
    printf("malloc at the limit: %s\n", small ? "ok" : "NULL");
    for (int i = 1; i <= 100; i++)
        munmap(base + 4 * pg * (long)i, 3 * pg);
    report("munmap of a middle page after 100 went", munmap(base + 4 * pg * 200 + pg, pg));
    char *big = malloc(1 << 20);
    printf("malloc 1 MiB after: %s\n", big ? "ok" : "NULL");
    if (big)
        memset(big, 1, 1 << 20);
    return 0;
}
