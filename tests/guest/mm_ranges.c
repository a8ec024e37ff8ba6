/*
 * mm_ranges.c - address-taking memory calls on ranges outside user space
 * (the kernel half, the last user page, wrapping and huge lengths): each
 * result is printed as "name: ok" or "name: ERRNO", and the runner compares
 * the output with a native run, so every errno is Linux's. A call that
 * succeeds where Linux refuses would have mapped guest pages over the
 * guest kernel's entry stub, IDT or GDT.
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

#define PAGE 4096UL
#define TASK_SIZE 0x7ffffffff000UL
#define KERNEL_VA 0xffffffff80000000UL /* where hvrun's guest kernel lives */
#define NONCANON 0x800000000000UL      /* first non-canonical address */

static void report(const char *name, long ret)
{
    if (ret == -1)
        printf("%s: %s\n", name, strerrorname_np(errno));
    else
        printf("%s: ok\n", name);
}

#define T(name, call)                                                      \
    do {                                                                   \
        errno = 0;                                                         \
        report(name, (long)(call));                                        \
    } while (0)

static long sys6(long nr, uint64_t a, uint64_t b, uint64_t c, uint64_t d,
                 uint64_t e, uint64_t f)
{
    return syscall(nr, a, b, c, d, e, f);
}

static void check_mmap(void)
{
    const uint64_t RW = PROT_READ | PROT_WRITE, PA = MAP_PRIVATE | MAP_ANONYMOUS;
    T("mmap fixed kernel", sys6(SYS_mmap, KERNEL_VA, PAGE, RW, PA | MAP_FIXED, -1, 0));
    T("mmap fixed kernel+0x4000", sys6(SYS_mmap, KERNEL_VA + 0x4000, PAGE, RW, PA | MAP_FIXED, -1, 0));
    T("mmap fixed noncanon", sys6(SYS_mmap, NONCANON, PAGE, RW, PA | MAP_FIXED, -1, 0));
    T("mmap fixed task_size", sys6(SYS_mmap, TASK_SIZE, PAGE, RW, PA | MAP_FIXED, -1, 0));
    T("mmap fixed across task_size", sys6(SYS_mmap, TASK_SIZE - PAGE, 2 * PAGE, RW, PA | MAP_FIXED, -1, 0));
    T("mmap fixed wrapping", sys6(SYS_mmap, -PAGE, 2 * PAGE, RW, PA | MAP_FIXED, -1, 0));
    T("mmap noreplace kernel", sys6(SYS_mmap, KERNEL_VA, PAGE, RW, PA | MAP_FIXED_NOREPLACE, -1, 0));
    T("mmap noreplace wrapping", sys6(SYS_mmap, -PAGE, 2 * PAGE, RW, PA | MAP_FIXED_NOREPLACE, -1, 0));
    T("mmap fixed unaligned kernel", sys6(SYS_mmap, KERNEL_VA + 1, PAGE, RW, PA | MAP_FIXED, -1, 0));
    T("mmap len 0", sys6(SYS_mmap, 0, 0, RW, PA, -1, 0));
    T("mmap len -1", sys6(SYS_mmap, 0, -1UL, RW, PA, -1, 0));
    T("mmap len task_size+1", sys6(SYS_mmap, 0, TASK_SIZE + 1, RW, PA, -1, 0));
    T("mmap len 1<<63", sys6(SYS_mmap, 0, 1UL << 63, RW, PA | MAP_NORESERVE, -1, 0));
    /* A hint outside user space is only a hint: Linux picks elsewhere. */
    long at = sys6(SYS_mmap, KERNEL_VA, PAGE, RW, PA, -1, 0);
    T("mmap hint kernel", at);
    CHECK(at == -1 || (uint64_t)at < TASK_SIZE);
    if (at != -1)
        munmap((void *)at, PAGE);
    at = sys6(SYS_mmap, -PAGE, 2 * PAGE, RW, PA, -1, 0);
    T("mmap hint wrapping", at);
    CHECK(at == -1 || (uint64_t)at < TASK_SIZE);
    if (at != -1)
        munmap((void *)at, 2 * PAGE);
    at = sys6(SYS_mmap, TASK_SIZE - PAGE, 2 * PAGE, RW, PA, -1, 0);
    T("mmap hint across task_size", at);
    CHECK(at == -1 || (uint64_t)at + 2 * PAGE <= TASK_SIZE);
    if (at != -1)
        munmap((void *)at, 2 * PAGE);
}

static void check_munmap(void)
{
    T("munmap kernel", sys6(SYS_munmap, KERNEL_VA, PAGE, 0, 0, 0, 0));
    T("munmap noncanon", sys6(SYS_munmap, NONCANON, PAGE, 0, 0, 0, 0));
    T("munmap task_size", sys6(SYS_munmap, TASK_SIZE, PAGE, 0, 0, 0, 0));
    T("munmap across task_size", sys6(SYS_munmap, TASK_SIZE - PAGE, 2 * PAGE, 0, 0, 0, 0));
    T("munmap wrapping", sys6(SYS_munmap, 0x10000, -PAGE, 0, 0, 0, 0));
    T("munmap len -1", sys6(SYS_munmap, 0x10000, -1UL, 0, 0, 0, 0));
    T("munmap len 0", sys6(SYS_munmap, 0x10000, 0, 0, 0, 0, 0));
    T("munmap len 0 kernel", sys6(SYS_munmap, KERNEL_VA, 0, 0, 0, 0, 0));
    T("munmap unaligned", sys6(SYS_munmap, 0x10001, PAGE, 0, 0, 0, 0));
    T("munmap huge hole", sys6(SYS_munmap, 0x100000000000UL, 0x100000000000UL, 0, 0, 0, 0));
}

static void check_mprotect(void)
{
    T("mprotect kernel", sys6(SYS_mprotect, KERNEL_VA, PAGE, PROT_READ, 0, 0, 0));
    T("mprotect kernel len 0", sys6(SYS_mprotect, KERNEL_VA, 0, PROT_READ, 0, 0, 0));
    T("mprotect noncanon", sys6(SYS_mprotect, NONCANON, PAGE, PROT_READ, 0, 0, 0));
    T("mprotect across task_size", sys6(SYS_mprotect, TASK_SIZE - PAGE, 2 * PAGE, PROT_READ, 0, 0, 0));
    T("mprotect wrapping", sys6(SYS_mprotect, 0x10000, -PAGE, PROT_READ, 0, 0, 0));
    T("mprotect len -1", sys6(SYS_mprotect, 0x10000, -1UL, PROT_READ, 0, 0, 0));
    T("mprotect bad prot len 0", sys6(SYS_mprotect, 0x10000, 0, 0x100, 0, 0, 0));
    T("mprotect bad prot wrapping", sys6(SYS_mprotect, 0x10000, -PAGE, 0x100, 0, 0, 0));
    T("mprotect bad prot kernel", sys6(SYS_mprotect, KERNEL_VA, PAGE, 0x100, 0, 0, 0));
    T("mprotect huge hole", sys6(SYS_mprotect, 0x100000000000UL, 0x100000000000UL, PROT_READ, 0, 0, 0));
    T("pkey_mprotect kernel", sys6(SYS_pkey_mprotect, KERNEL_VA, PAGE, PROT_READ, -1UL, 0, 0));
    T("pkey_mprotect wrapping", sys6(SYS_pkey_mprotect, 0x10000, -PAGE, PROT_READ, -1UL, 0, 0));
    T("pkey_mprotect key 5 len 0", sys6(SYS_pkey_mprotect, 0x10000, 0, PROT_READ, 5, 0, 0));
    T("pkey_mprotect key 5 kernel", sys6(SYS_pkey_mprotect, KERNEL_VA, PAGE, PROT_READ, 5, 0, 0));
}

static void check_mremap(void)
{
    char *m = mmap(NULL, 4 * PAGE, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    CHECK(m != MAP_FAILED);
    uint64_t mv = MREMAP_MAYMOVE | MREMAP_FIXED;
    T("mremap fixed kernel", sys6(SYS_mremap, (uint64_t)m, PAGE, PAGE, mv, KERNEL_VA, 0));
    T("mremap fixed kernel+0x4000", sys6(SYS_mremap, (uint64_t)m, PAGE, PAGE, mv, KERNEL_VA + 0x4000, 0));
    T("mremap fixed idt", sys6(SYS_mremap, (uint64_t)m, PAGE, PAGE, mv, KERNEL_VA + 0x2000, 0));
    T("mremap fixed noncanon", sys6(SYS_mremap, (uint64_t)m, PAGE, PAGE, mv, NONCANON, 0));
    T("mremap fixed task_size", sys6(SYS_mremap, (uint64_t)m, PAGE, PAGE, mv, TASK_SIZE, 0));
    T("mremap fixed across task_size", sys6(SYS_mremap, (uint64_t)m, PAGE, 2 * PAGE, mv, TASK_SIZE - PAGE, 0));
    T("mremap fixed wrapping", sys6(SYS_mremap, (uint64_t)m, PAGE, 2 * PAGE, mv, -PAGE, 0));
    T("mremap fixed unaligned", sys6(SYS_mremap, (uint64_t)m, PAGE, PAGE, mv, KERNEL_VA + 8, 0));
    T("mremap from kernel", sys6(SYS_mremap, KERNEL_VA, PAGE, PAGE, MREMAP_MAYMOVE, 0, 0));
    T("mremap from kernel fixed", sys6(SYS_mremap, KERNEL_VA, PAGE, PAGE, mv, (uint64_t)m + 2 * PAGE, 0));
    T("mremap from noncanon", sys6(SYS_mremap, NONCANON, PAGE, 2 * PAGE, MREMAP_MAYMOVE, 0, 0));
    T("mremap new_len -1", sys6(SYS_mremap, (uint64_t)m, PAGE, -1UL, MREMAP_MAYMOVE, 0, 0));
    T("mremap new_len huge", sys6(SYS_mremap, (uint64_t)m, PAGE, 1UL << 62, MREMAP_MAYMOVE, 0, 0));
    T("mremap new_len task_size+", sys6(SYS_mremap, (uint64_t)m, PAGE, TASK_SIZE + PAGE, MREMAP_MAYMOVE, 0, 0));
    T("mremap old_len huge", sys6(SYS_mremap, (uint64_t)m, 1UL << 62, PAGE, MREMAP_MAYMOVE, 0, 0));
    T("mremap old_len -1", sys6(SYS_mremap, (uint64_t)m, -1UL, PAGE, 0, 0, 0));
    T("mremap shrink ok", sys6(SYS_mremap, (uint64_t)m, 4 * PAGE, 3 * PAGE, 0, 0, 0));
    /* The guest kernel must still work: a syscall after all of these. */
    CHECK(getpid() > 0);
    munmap(m, 4 * PAGE);
}

static void check_madvise_msync_mincore(void)
{
    static unsigned char vec[4]; /* not on the stack: its place moves */
    T("madvise kernel", sys6(SYS_madvise, KERNEL_VA, PAGE, MADV_DONTNEED, 0, 0, 0));
    T("madvise kernel willneed", sys6(SYS_madvise, KERNEL_VA, PAGE, MADV_WILLNEED, 0, 0, 0));
    T("madvise noncanon huge", sys6(SYS_madvise, NONCANON, 1UL << 46, MADV_NORMAL, 0, 0, 0));
    T("madvise wrapping", sys6(SYS_madvise, 0x10000, -PAGE, MADV_NORMAL, 0, 0, 0));
    T("madvise len -1", sys6(SYS_madvise, 0x10000, -1UL, MADV_NORMAL, 0, 0, 0));
    T("madvise huge hole", sys6(SYS_madvise, 0x100000000000UL, 0x100000000000UL, MADV_DONTNEED, 0, 0, 0));
    T("madvise bad advice kernel", sys6(SYS_madvise, KERNEL_VA, PAGE, 1000, 0, 0, 0));
    T("madvise len 0 kernel", sys6(SYS_madvise, KERNEL_VA, 0, MADV_NORMAL, 0, 0, 0));
    T("msync kernel", sys6(SYS_msync, KERNEL_VA, PAGE, MS_SYNC, 0, 0, 0));
    T("msync wrapping", sys6(SYS_msync, 0x10000, -PAGE, MS_SYNC, 0, 0, 0));
    T("msync len -1", sys6(SYS_msync, 0x10000, -1UL, MS_ASYNC, 0, 0, 0));
    T("msync huge hole", sys6(SYS_msync, 0x100000000000UL, 0x100000000000UL, MS_ASYNC, 0, 0, 0));
    T("msync len 0 kernel", sys6(SYS_msync, KERNEL_VA, 0, MS_SYNC, 0, 0, 0));
    T("mincore kernel", sys6(SYS_mincore, KERNEL_VA, PAGE, (uint64_t)vec, 0, 0, 0));
    T("mincore across task_size", sys6(SYS_mincore, TASK_SIZE - PAGE, 2 * PAGE, (uint64_t)vec, 0, 0, 0));
    T("mincore wrapping", sys6(SYS_mincore, 0x10000, -PAGE, (uint64_t)vec, 0, 0, 0));
    /* Linux checks that vec can hold a byte per page before the walk: a
     * big range is ENOMEM for its hole only while vec + pages stays below
     * TASK_SIZE. */
    T("mincore huge hole", sys6(SYS_mincore, 0x100000000000UL, 1UL << 30, (uint64_t)vec, 0, 0, 0));
    T("mincore vec kernel", sys6(SYS_mincore, (uint64_t)vec & ~(PAGE - 1), PAGE, KERNEL_VA, 0, 0, 0));
    T("mincore vec too short", sys6(SYS_mincore, 0x100000000000UL, 1UL << 46, TASK_SIZE - 16, 0, 0, 0));
    T("mincore len 0 kernel", sys6(SYS_mincore, KERNEL_VA, 0, (uint64_t)vec, 0, 0, 0));
}

static void check_mlock(void)
{
    T("mlock kernel", sys6(SYS_mlock, KERNEL_VA, PAGE, 0, 0, 0, 0));
    T("mlock wrapping", sys6(SYS_mlock, 0x10000, -PAGE, 0, 0, 0, 0));
    T("mlock huge hole", sys6(SYS_mlock, 0x100000000000UL, 0x10000000UL, 0, 0, 0, 0));
    T("munlock kernel", sys6(SYS_munlock, KERNEL_VA, PAGE, 0, 0, 0, 0));
    T("munlock wrapping", sys6(SYS_munlock, 0x10000, -PAGE, 0, 0, 0, 0));
    T("mlock2 kernel", sys6(SYS_mlock2, KERNEL_VA, PAGE, 0, 0, 0, 0));
}

static void check_mbind(void)
{
    T("mbind kernel", sys6(SYS_mbind, KERNEL_VA, PAGE, 0, 0, 0, 0));
    T("mbind wrapping", sys6(SYS_mbind, 0x10000, -PAGE, 0, 0, 0, 0));
    T("mbind huge hole", sys6(SYS_mbind, 0x100000000000UL, 1UL << 40, 0, 0, 0, 0));
    T("mbind len 0 kernel", sys6(SYS_mbind, KERNEL_VA, 0, 0, 0, 0, 0));
    T("mbind task_size", sys6(SYS_mbind, TASK_SIZE, PAGE, 0, 0, 0, 0));
    T("mbind bad flags kernel", sys6(SYS_mbind, KERNEL_VA, PAGE, 0, 0, 0, 0x100));
}

static void check_brk(void)
{
    uint64_t cur = (uint64_t)sys6(SYS_brk, 0, 0, 0, 0, 0, 0);
    CHECK((uint64_t)sys6(SYS_brk, KERNEL_VA, 0, 0, 0, 0, 0) == cur);
    CHECK((uint64_t)sys6(SYS_brk, -1UL, 0, 0, 0, 0, 0) == cur);
    CHECK((uint64_t)sys6(SYS_brk, -PAGE, 0, 0, 0, 0, 0) == cur);
    CHECK((uint64_t)sys6(SYS_brk, TASK_SIZE + 1, 0, 0, 0, 0, 0) == cur);
    CHECK((uint64_t)sys6(SYS_brk, NONCANON, 0, 0, 0, 0, 0) == cur);
    /* The program's memory is still there after the refused brks. */
    static volatile int still_here = 42;
    CHECK(still_here == 42);
    printf("brk: refused, unchanged\n");
}

int main(void)
{
    setvbuf(stdout, NULL, _IONBF, 0);
    check_mmap();
    check_munmap();
    check_mprotect();
    check_mremap();
    check_madvise_msync_mincore();
    check_mlock();
    check_mbind();
    check_brk();
    return 0;
}
