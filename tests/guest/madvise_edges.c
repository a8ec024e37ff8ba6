/*
 * madvise_edges: found by the syscall fuzzer (tests/fuzz/sysfuzz.c).
 * madvise over a range spanning most of the address space walked it page
 * by page in hvrun (2^52 steps: the run hung); Linux walks the VMAs and
 * answers -ENOMEM for the holes. A length that rounds up to 0 is -EINVAL,
 * a wrapping range too; msync of a wrapping range is -ENOMEM, and
 * MS_INVALIDATE of locked memory -EBUSY. Prints
 * each answer so the runner compares it with Linux.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>

#include "guest_check.h"

static void report(const char *what, int r)
{
    printf("%s: %s\n", what, r ? strerror(errno) : "ok");
}

int main(void)
{
    char *b = mmap(NULL, 3 * 4096, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    CHECK(b != MAP_FAILED);
    b[0] = b[8192] = 3;
    CHECK(munmap(b + 4096, 4096) == 0);
    report("from 0 to nearly 2^64",
           madvise(0, 0xffffffffffffe39aUL, MADV_NORMAL));
    report("rounds up to 0", madvise(b, 0xfffffffffffff001UL, MADV_DONTNEED));
    report("wraps", madvise(b, 0xfffffffffff00000UL, MADV_DONTNEED));
    report("over a hole", madvise(b, 3 * 4096, MADV_DONTNEED));
    printf("zeroed around the hole: %d %d\n", b[0], b[8192]);
    report("to the top of user space",
           madvise(b, 0x800000000000UL - (unsigned long)b, MADV_NORMAL));
    report("msync, wraps", msync(b, 0xfffffffffff00000UL, MS_SYNC));
    CHECK(mlock(b, 4096) == 0);
    report("msync MS_INVALIDATE of locked memory",
           msync(b, 4096, MS_INVALIDATE));
    report("msync MS_SYNC of locked memory", msync(b, 4096, MS_SYNC));
    return 0;
}
