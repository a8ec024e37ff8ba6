/*
 * many_mappings.c - thousands of separate mappings (alternating
 * protections, so they stay separate VMAs), then holes punched in them
 * (every third page, and one range across many VMAs and holes), MAP_FIXED
 * over some: each page is mapped or not, and holds what was written, as
 * natively. The ptrace stub mirrors the VMA list by replaying the ranges
 * that changed (vmm/ptrace.c sync_mappings); every hole must fault. Run
 * natively and under hvrun, the output must match.
 */
#define _GNU_SOURCE
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define PAGE 4096
#define N 3000

static sigjmp_buf fault_jmp;

static void on_segv(int sig)
{
    (void)sig;
    siglongjmp(fault_jmp, 1);
}

/* The access itself, not the VMA list's word: faults where nothing is. */
static int faults(volatile char *p)
{
    if (sigsetjmp(fault_jmp, 1))
        return 1;
    (void)*p;
    return 0;
}

static int mapped(char *p)
{
    unsigned char v;
    return mincore(p, PAGE, &v) == 0;
}

int main(void)
{
    char *base = mmap(NULL, (size_t)N * PAGE, PROT_NONE,
                      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (base == MAP_FAILED)
        return 1;
    for (int i = 0; i < N; i++) {
        char *p = mmap(base + (size_t)i * PAGE, PAGE, PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
        if (p == MAP_FAILED)
            return 1;
        p[0] = (char)(i % 251);
        if (i % 2)
            mprotect(p, PAGE, PROT_READ);
    }
    for (int i = 0; i < N; i += 3)
        munmap(base + (size_t)i * PAGE, PAGE);
    munmap(base + 1000 * PAGE, 100 * PAGE);
    for (int i = 2000; i < 2010; i++) {
        char *p = mmap(base + (size_t)i * PAGE, PAGE, PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
        if (p != MAP_FAILED)
            p[0] = 'F';
    }
    signal(SIGSEGV, on_segv);
    int nr_mapped = 0, wrong = 0;
    for (int i = 0; i < N; i++) {
        char *p = base + (size_t)i * PAGE;
        int want = (i >= 2000 && i < 2010) ||
                   (i % 3 != 0 && !(i >= 1000 && i < 1100));
        if (mapped(p) != want) {
            wrong++;
            continue;
        }
        if (!want) {
            wrong += !faults(p);
            continue;
        }
        nr_mapped++;
        char expect = i >= 2000 && i < 2010 ? 'F' : (char)(i % 251);
        if (p[0] != expect)
            wrong++;
    }
    printf("mapped %d, wrong %d\n", nr_mapped, wrong);
    return 0;
}
