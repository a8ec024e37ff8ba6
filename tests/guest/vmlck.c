/*
 * vmlck: /proc/self/status's VmLck counts mlock'ed memory: mlock,
 * mlock2(MLOCK_ONFAULT) (counted once when locked again), munlock,
 * mlockall(MCL_FUTURE) for a new mapping, munlockall.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

static long vmlck_kb(void)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    long kb = -1;
    while (f && fgets(line, sizeof(line), f))
        if (sscanf(line, "VmLck: %ld", &kb) == 1)
            break;
    if (f)
        fclose(f);
    return kb;
}

int main(void)
{
    long base = vmlck_kb();
    char *m = mmap(NULL, 8 * 4096, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    printf("at start: %ld kB more\n", vmlck_kb() - base);
    mlock(m, 2 * 4096);
    printf("mlock 2 pages: %ld kB more\n", vmlck_kb() - base);
    mlock2(m + 4 * 4096, 4096, MLOCK_ONFAULT);
    printf("mlock2 ONFAULT 1 page: %ld kB more\n", vmlck_kb() - base);
    mlock(m + 4 * 4096, 4096);
    printf("mlock of it again: %ld kB more\n", vmlck_kb() - base);
    munlock(m, 8 * 4096);
    printf("munlock all 8: %ld kB more\n", vmlck_kb() - base);
    if (mlockall(MCL_CURRENT | MCL_FUTURE) == 0) {
        long all = vmlck_kb();
        char *n = mmap(NULL, 3 * 4096, PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        printf("a new mapping under MCL_FUTURE: %ld kB more\n", vmlck_kb() - all);
        munlockall();
        printf("munlockall: %ld kB\n", vmlck_kb());
        munmap(n, 3 * 4096);
    }
    return 0;
}
