/*
 * mm_sparse.c - huge sparse private anonymous mappings, as a sanitizer's
 * shadow (15 TiB of MAP_NORESERVE) or a sparse array uses them: far more
 * address space than memory, touched in a few places. hvrun backs such a
 * mapping as it is touched (vmm/aspace.h, lazy VMAs); what the program
 * sees must be Linux's: zeros where untouched, its writes where touched,
 * by its own accesses and by system calls (read/write into the mapping),
 * mincore, one /proc/self/maps line, a small VmRSS, fork copying what was
 * written, mprotect and a SIGSEGV inside, mremap moving the contents.
 * Prints facts, not addresses, so the runner compares them with native.
 */
#define _GNU_SOURCE
#include <setjmp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "guest_check.h"

#define TIB (1ULL << 40)
#define GIB (1ULL << 30)
#define PAGE 4096UL

static sigjmp_buf jump;

static void on_segv(int sig)
{
    (void)sig;
    siglongjmp(jump, 1);
}

/* The /proc/self/maps lines overlapping [lo, hi), and whether one of them
 * is exactly it. */
static int maps_lines(uintptr_t lo, uintptr_t hi, int *exact)
{
    FILE *f = fopen("/proc/self/maps", "r");
    CHECK(f != NULL);
    char line[512];
    int n = 0;
    *exact = 0;
    while (fgets(line, sizeof(line), f)) {
        unsigned long s, e;
        if (sscanf(line, "%lx-%lx", &s, &e) != 2)
            continue;
        if (s < hi && e > lo) {
            n++;
            *exact |= s == lo && e == hi;
        }
    }
    fclose(f);
    return n;
}

static long rss_kib(void)
{
    FILE *f = fopen("/proc/self/status", "r");
    CHECK(f != NULL);
    char line[256];
    long kib = -1;
    while (fgets(line, sizeof(line), f))
        if (sscanf(line, "VmRSS: %ld kB", &kib) == 1)
            break;
    fclose(f);
    return kib;
}

static int resident(void *page)
{
    unsigned char vec = 0xff;
    CHECK(mincore(page, PAGE, &vec) == 0);
    return vec & 1;
}

int main(void)
{
    setvbuf(stdout, NULL, _IONBF, 0);
    uint64_t len = 15 * TIB;
    uint8_t *p = mmap(NULL, len, PROT_READ | PROT_WRITE,
                      MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    printf("15 TiB MAP_NORESERVE mapped: %d\n", p != MAP_FAILED);
    CHECK(p != MAP_FAILED);
    int exact;
    printf("maps lines: %d, exact: ", maps_lines((uintptr_t)p,
                                                 (uintptr_t)p + len, &exact));
    printf("%d\n", exact);
    printf("untouched reads zero: %d\n", p[len / 2] == 0 && p[7 * TIB] == 0);
    printf("untouched page resident: %d\n", resident(p + 9 * TIB));

    /* writes in far apart places, one across a 2 MiB boundary */
    uint64_t offs[] = {0, 3 * GIB + 17, 5 * TIB, (6 * TIB) - 3, len - 1};
    for (size_t i = 0; i < sizeof(offs) / sizeof(offs[0]); i++)
        p[offs[i]] = (uint8_t)(i + 1);
    memcpy(p + (2ULL << 21) - 4, "straddles", 10);
    int ok = 1;
    for (size_t i = 0; i < sizeof(offs) / sizeof(offs[0]); i++)
        ok &= p[offs[i]] == (uint8_t)(i + 1);
    printf("writes read back: %d\n", ok && !strcmp((char *)p + (2ULL << 21) - 4,
                                                   "straddles"));
    printf("touched page resident: %d\n",
           resident(p + ((5 * TIB) & ~(PAGE - 1))));
    printf("neighbour of a touched page reads zero: %d\n",
           p[5 * TIB + 1] == 0 && p[5 * TIB - 1] == 0);
    printf("still one maps line: %d\n",
           maps_lines((uintptr_t)p, (uintptr_t)p + len, &exact) == 1 && exact);
    long rss = rss_kib();
    printf("VmRSS under 200 MiB: %d\n", rss > 0 && rss < 200 * 1024);

    /* system calls into and out of untouched parts */
    int fds[2];
    CHECK(pipe(fds) == 0);
    CHECK(write(fds[1], "via a pipe", 11) == 11);
    uint8_t *dst = p + 11 * TIB + 12345;
    printf("read() into an untouched part: %zd\n", read(fds[0], dst, 11));
    printf("the bytes: %s\n", (char *)dst);
    printf("write() from an untouched part: %zd\n",
           write(fds[1], p + 12 * TIB, 4096));
    static char back[4096];
    memset(back, 'x', sizeof(back));
    CHECK(read(fds[0], back, sizeof(back)) == 4096);
    printf("its bytes are zeros: %d\n", back[0] == 0 && back[4095] == 0);

    /* fork: the child sees the writes, its own stay its own */
    pid_t c = fork();
    CHECK(c >= 0);
    if (c == 0) {
        int seen = p[5 * TIB] == 3 && !strcmp((char *)dst, "via a pipe");
        p[5 * TIB] = 99;
        p[13 * TIB] = 7;
        _exit(seen ? 0 : 1);
    }
    int st;
    CHECK(waitpid(c, &st, 0) == c);
    printf("child saw the writes: %d\n", WIFEXITED(st) && !WEXITSTATUS(st));
    printf("child's writes stayed its own: %d\n",
           p[5 * TIB] == 3 && p[13 * TIB] == 0);

    /* mprotect a part of it away: a fault there, two more maps lines */
    uint8_t *hole = p + 4 * TIB;
    CHECK(mprotect(hole, 1ULL << 21, PROT_NONE) == 0);
    signal(SIGSEGV, on_segv);
    int faulted = 0;
    if (sigsetjmp(jump, 1) == 0)
        (void)*(volatile uint8_t *)(hole + 100);
    else
        faulted = 1;
    signal(SIGSEGV, SIG_DFL);
    printf("PROT_NONE part faults: %d\n", faulted);
    printf("maps lines after mprotect: %d\n",
           maps_lines((uintptr_t)p, (uintptr_t)p + len, &exact));
    CHECK(mprotect(hole, 1ULL << 21, PROT_READ | PROT_WRITE) == 0);

    /* mremap the first TiB elsewhere, grown: the contents move with it */
    CHECK(munmap(p + TIB, len - TIB) == 0);
    uint8_t *q = mremap(p, TIB, 2 * TIB, MREMAP_MAYMOVE);
    printf("mremap 1 TiB to 2 TiB: %d\n", q != MAP_FAILED);
    CHECK(q != MAP_FAILED);
    printf("contents moved: %d\n",
           q[0] == 1 && q[3 * GIB + 17] == 2 &&
               !strcmp((char *)q + (2ULL << 21) - 4, "straddles"));
    printf("grown part reads zero: %d\n", q[TIB + 5] == 0);
    q[2 * TIB - 1] = 5;
    printf("grown part writable: %d\n", q[2 * TIB - 1] == 5);
    CHECK(munmap(q, 2 * TIB) == 0);

    /* a plain (accounted) mapping of 5 GiB, written at both ends (the
     * guest machine has 8 GiB: --memory) */
    uint8_t *r = mmap(NULL, 5 * GIB, PROT_READ | PROT_WRITE,
                      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    printf("5 GiB mapped: %d\n", r != MAP_FAILED);
    if (r != MAP_FAILED) {
        r[0] = 1;
        r[5 * GIB - 1] = 2;
        printf("both ends: %d\n", r[0] == 1 && r[5 * GIB - 1] == 2);
        CHECK(munmap(r, 5 * GIB) == 0);
    }
    return 0;
}
