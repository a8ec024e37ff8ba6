/*
 * mm_32bit.c - MAP_32BIT (x86-64): without a hint the mapping lands in
 * Linux's legacy window [0x40000000, 0x80000000), bottom-up (the second
 * right above the first); a free hint is taken when it ends below the
 * window's top. hvrun's layout is Linux's without randomisation, so the
 * program runs itself again with ADDR_NO_RANDOMIZE (Linux randomises the
 * window's start for every call). Prints the facts, not the addresses,
 * so the runner compares them with a native run.
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <sys/mman.h>
#include <sys/personality.h>
#include <unistd.h>

#include "guest_check.h"

#define PAGE 4096UL

static uintptr_t map32(void *hint, size_t len)
{
    void *p = mmap(hint, len, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_32BIT, -1, 0);
    CHECK(p != MAP_FAILED);
    return (uintptr_t)p;
}

int main(int argc, char **argv)
{
    (void)argc;
    int persona = personality(0xffffffff);
    CHECK(persona != -1);
    if (!(persona & ADDR_NO_RANDOMIZE)) {
        CHECK(personality((unsigned long)persona | ADDR_NO_RANDOMIZE) != -1);
        execv("/proc/self/exe", argv);
        CHECK(!"execv");
    }
    uintptr_t a = map32(NULL, PAGE), b = map32(NULL, 3 * PAGE);
    printf("first in the window: %d\n", a >= 0x40000000 && a < 0x80000000);
    printf("second in the window: %d\n",
           b >= 0x40000000 && b + 3 * PAGE <= 0x80000000);
    printf("bottom-up: %d\n", b > a);
    *(volatile char *)a = 1;
    *(volatile char *)b = 2;
    CHECK(munmap((void *)a, PAGE) == 0);
    uintptr_t c = map32(NULL, PAGE);
    printf("the freed lowest slot again: %d\n", c == a);
    uintptr_t hint = 0x7000000000UL;
    uintptr_t d = map32((void *)hint, PAGE);
    printf("a free hint above 2 GiB is refused: %d\n", d != hint);
    printf("the window instead: %d\n", d >= 0x40000000 && d < 0x80000000);
    uintptr_t e = map32((void *)0x10000000UL, PAGE);
    printf("a free hint below 1 GiB is taken: %d\n", e == 0x10000000UL);
    void *big = mmap(NULL, 1UL << 31, PROT_NONE,
                     MAP_PRIVATE | MAP_ANONYMOUS | MAP_32BIT | MAP_NORESERVE,
                     -1, 0);
    printf("2 GiB does not fit: %d\n", big == MAP_FAILED);
    return 0;
}
