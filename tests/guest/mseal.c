/*
 * mseal: mseal(2) (Linux 6.10) seals VMAs; every call that would unmap,
 * move, remap over or reprotect a sealed one is EPERM, and so is
 * discarding advice on sealed read-only anonymous memory (mm/mseal.c).
 * mseal's own errors come in do_mseal's order; smaps shows "sl"; a forked
 * child keeps the seal. Prints each result so the runner compares it
 * with Linux.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "guest_check.h"

#define PAGE 4096UL
#define NR_MSEAL 462

static long seal(void *addr, size_t len, unsigned long flags)
{
    return syscall(NR_MSEAL, addr, len, flags);
}

static void show(const char *what, long rc)
{
    printf("%s: %s\n", what, rc < 0 ? strerror(errno) : "ok");
}

static void *map(size_t pages, int prot)
{
    void *m = mmap(NULL, pages * PAGE, prot, MAP_PRIVATE | MAP_ANONYMOUS,
                   -1, 0);
    CHECK(m != MAP_FAILED);
    return m;
}

/* do_mseal's errors (LTP's mseal02), a hole in the range seals nothing. */
static void seal_errors(void)
{
    char *m = map(4, PROT_READ | PROT_WRITE);
    CHECK(munmap(m + 2 * PAGE, PAGE) == 0);
    show("flags", seal(m, PAGE, 1));
    show("unaligned", seal(m + 1, PAGE, 0));
    show("length wraps", seal(m, UINT64_MAX - PAGE + 2, 0));
    show("range wraps", seal(m, UINT64_MAX - 2 * PAGE, 0));
    show("empty", seal(m, 0, 0));
    show("hole at start", seal(m + 2 * PAGE, 2 * PAGE, 0));
    show("hole inside", seal(m + PAGE, 2 * PAGE, 0));
    show("hole at end", seal(m, 4 * PAGE, 0));
    show("unmap after refused seals", munmap(m, 4 * PAGE));
}

/* VmFlags of the smaps entry at addr: whether it says "sl". */
static int smaps_sealed(void *addr)
{
    FILE *f = fopen("/proc/self/smaps", "r");
    CHECK(f != NULL);
    char line[512], want[32];
    snprintf(want, sizeof(want), "%lx-", (unsigned long)addr);
    int in = 0, sealed = -1;
    while (fgets(line, sizeof(line), f)) {
        if (strchr(line, '-') && strchr(line, ' ') > strchr(line, '-') &&
            line[0] != 'V')
            in = strncmp(line, want, strlen(want)) == 0;
        if (in && strncmp(line, "VmFlags:", 8) == 0)
            sealed = strstr(line, " sl") != NULL;
    }
    fclose(f);
    return sealed;
}

static void sealed_calls(int prot)
{
    char *m = map(8, prot), *s = m + 2 * PAGE;
    show("seal", seal(s, PAGE, 0));
    show("seal again", seal(s, PAGE, 0));
    printf("smaps sl: %d %d\n", smaps_sealed(m), smaps_sealed(s));
    char *o = map(2, PROT_READ);
    show("mprotect", mprotect(s, PAGE, PROT_NONE));
    show("pkey_mprotect", syscall(SYS_pkey_mprotect, s, PAGE, PROT_NONE, -1));
    show("munmap", munmap(m, 8 * PAGE));
    show("mremap grow", (long)mremap(s, PAGE, 2 * PAGE, MREMAP_MAYMOVE));
    show("mremap shrink", (long)mremap(s, 2 * PAGE, PAGE, 0));
    show("mremap move", (long)mremap(s, PAGE, PAGE,
                                     MREMAP_MAYMOVE | MREMAP_FIXED, o));
    show("mremap over", (long)mremap(o, PAGE, PAGE,
                                     MREMAP_MAYMOVE | MREMAP_FIXED, s));
    show("mmap fixed", (long)mmap(s, PAGE, PROT_READ,
                                  MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED,
                                  -1, 0));
    static const struct { int advice; const char *name; } advice[] = {
        {MADV_DONTNEED, "DONTNEED"}, {MADV_FREE, "FREE"},
        {MADV_DONTFORK, "DONTFORK"}, {MADV_WIPEONFORK, "WIPEONFORK"},
        {MADV_REMOVE, "REMOVE"}, {MADV_WILLNEED, "WILLNEED"},
        {MADV_KEEPONFORK, "KEEPONFORK"},
    };
    for (size_t i = 0; i < sizeof(advice) / sizeof(advice[0]); i++) {
        char what[64];
        snprintf(what, sizeof(what), "madvise %s", advice[i].name);
        show(what, madvise(s, PAGE, advice[i].advice));
    }
    /* The unsealed rest stays free to change. */
    show("mprotect beside", mprotect(m, 2 * PAGE, PROT_READ));
    show("munmap beside", munmap(m + 4 * PAGE, 4 * PAGE));
    pid_t pid = fork();
    CHECK(pid >= 0);
    if (pid == 0) {
        show("child munmap", munmap(s, PAGE));
        printf("child smaps sl: %d\n", smaps_sealed(s));
        fflush(stdout);
        _exit(0);
    }
    int st;
    CHECK(waitpid(pid, &st, 0) == pid && WIFEXITED(st));
}

int main(void)
{
    setvbuf(stdout, NULL, _IONBF, 0);
    seal_errors();
    printf("-- read-write\n");
    sealed_calls(PROT_READ | PROT_WRITE);
    printf("-- read-only\n");
    sealed_calls(PROT_READ);
    return 0;
}
