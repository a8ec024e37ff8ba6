/*
 * dontneed_text_tsc.c - MADV_DONTNEED on a page of the program's own text
 * that reads the TSC. Linux drops the private copy and the next touch
 * reads the file again. Under virtual time hvrun rewrites RDTSC in each
 * fresh copy of code, and the refilled page is one: its host backing was
 * read-only again (the guest may not write text), and hvrun's own write of
 * the rewrite faulted hvrun itself (exit 139 under both backends). Run
 * with virtual time kept (VIRTUAL_TIME_PROGRAMS); prints no clock value.
 */
#include "guest_check.h"

#include <stdint.h>
#include <sys/mman.h>
#include <x86intrin.h>

__attribute__((noinline)) static uint64_t read_tsc(void)
{
    return __rdtsc();
}

int main(void)
{
    uint64_t before = read_tsc();
    uintptr_t page = (uintptr_t)read_tsc & ~(uintptr_t)4095;
    CHECK(madvise((void *)page, 4096, MADV_DONTNEED) == 0);
    uint64_t after = read_tsc();
    CHECK(after > before);
    /* Twice: the refilled copy is rewritten again, and stays readable. */
    CHECK(madvise((void *)page, 4096, MADV_DONTNEED) == 0);
    CHECK(read_tsc() > after);
    printf("text dropped and read again, the TSC still moves\n");
    return 0;
}
