/*
 * mremap_edges: found by the syscall fuzzer (tests/fuzz/sysfuzz.c).
 * Moving a page out of the middle of a mapping must move that page only:
 * hvrun moved the host pages from the mapping's start instead, so a
 * later write to the first page failed inside KVM (hvrun exited 125).
 * An old range that wraps around the address space is -EFAULT; it made
 * hvrun read a NULL VMA. A MREMAP_FIXED target outside user space is
 * -EINVAL: hvrun moved the page over the guest kernel's GDT (the vCPU
 * then triple-faulted: exit 125).
 * Prints each errno so the runner compares it with Linux.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "guest_check.h"

#define PAGE 4096

static void move_from_the_middle(void)
{
    unsigned char *b = mmap(NULL, 16 * PAGE, PROT_READ | PROT_WRITE,
                            MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    CHECK(b != MAP_FAILED);
    for (int i = 0; i < 16; i++)
        memset(b + i * PAGE, i + 1, PAGE);
    /* One page (length not page aligned) grows to ~37 MiB elsewhere. */
    unsigned char *n = mremap(b + 3 * PAGE, 0x837, 0x252a029, MREMAP_MAYMOVE);
    CHECK(n != MAP_FAILED && n != b + 3 * PAGE);
    CHECK(n[0] == 4 && n[PAGE - 1] == 4 && n[PAGE] == 0 && n[0x252a000] == 0);
    for (int i = 0; i < 16; i++) {
        if (i == 3)
            continue;
        CHECK(b[i * PAGE] == i + 1 && b[i * PAGE + PAGE - 1] == i + 1);
        b[i * PAGE] = 0xee;
    }
    unsigned char vec;
    CHECK(mincore(b + 3 * PAGE, PAGE, &vec) == -1 && errno == ENOMEM);
    /* Two pages straddling a VMA boundary (split by an mprotect). */
    CHECK(mprotect(b + 8 * PAGE, PAGE, PROT_READ) == 0);
    CHECK(mprotect(b + 8 * PAGE, PAGE, PROT_READ | PROT_WRITE) == 0);
    unsigned char *m = mremap(b + 7 * PAGE, 2 * PAGE, 3 * PAGE,
                              MREMAP_MAYMOVE);
    CHECK(m != MAP_FAILED);
    CHECK(m[0] == 0xee && m[PAGE] == 0xee && m[PAGE + 1] == 9);
    CHECK(b[6 * PAGE + 1] == 7 && b[9 * PAGE + 1] == 10);
    b[0] = b[6 * PAGE] = b[9 * PAGE] = 1;
}

static void report(const char *what, long r)
{
    printf("%s: %s\n", what, r == -1 ? strerror(errno) : "ok");
}

static void wrapping(void)
{
    report("wrap, fixed to non-canonical",
           syscall(SYS_mremap, 0xfffffffffffff000ULL, 0xffffffffffffe233ULL,
                   0x103eULL, 3, 0xabfc35a27ce02000ULL));
    report("wrap, may move",
           syscall(SYS_mremap, 0xfffffffffffff000ULL, 0xffffffffffffe233ULL,
                   0x103eULL, MREMAP_MAYMOVE, 0));
    report("wrap from user space",
           syscall(SYS_mremap, 0x7ffff0000000ULL, UINT64_MAX - 0x7ffff0000000ULL,
                   PAGE, MREMAP_MAYMOVE, 0));
}

/* The target in the guest kernel's half (its GDT page under hvrun). */
static void fixed_into_the_kernel(void)
{
    char *b = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    CHECK(b != MAP_FAILED);
    report("fixed to the kernel half",
           syscall(SYS_mremap, b, 0x1000, 0x3fffdd9,
                   MREMAP_MAYMOVE | MREMAP_FIXED, 0xffffffff80001000ULL));
    report("fixed past user space",
           syscall(SYS_mremap, b, 0x1000, 0x2000,
                   MREMAP_MAYMOVE | MREMAP_FIXED, 0x7ffffffff000ULL));
    report("fixed, unaligned",
           syscall(SYS_mremap, b, 0x1000, 0x2000,
                   MREMAP_MAYMOVE | MREMAP_FIXED, 0x10000001ULL));
    b[0] = 1;
}

int main(void)
{
    move_from_the_middle();
    fixed_into_the_kernel();
    wrapping();
    printf("mremap_edges ok\n");
    return 0;
}
