/*
 * munmap_reuse_zero.c - memory unmapped and mapped again reads zero, and
 * is writable again, whatever the freed mapping was. hvrun drops a plain
 * private mapping's pages in place when it is unmapped
 * (vmm/aspace.c, vmm_phys_free_plain) and gives any other kind a fresh host
 * mapping; the guest physical pages are then handed to the next mapping.
 * Each round maps, writes, unmaps and maps many pages again (so that
 * later mappings reuse the freed pages), and checks every fresh page is
 * zero and takes a write: a plain mapping, a part unmapped from its
 * middle, one made read-only and back, one left read-only, one moved by
 * mremap, and one of 2 MiB.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "guest_check.h"

#define PAGE 4096UL
#define ROUND_PAGES 48

static char *map_rw(size_t len)
{
    char *p = mmap(NULL, len, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    CHECK(p != MAP_FAILED);
    return p;
}

/* Maps ROUND_PAGES single pages and one run of them: each must read zero
 * and take a write. */
static void fresh_pages_are_zero(const char *what)
{
    char *pages[ROUND_PAGES];
    for (int i = 0; i < ROUND_PAGES; i++) {
        pages[i] = map_rw(PAGE);
        for (size_t o = 0; o < PAGE; o++)
            CHECK(pages[i][o] == 0);
        memset(pages[i], 0x11, PAGE);
    }
    char *run = map_rw(ROUND_PAGES * PAGE);
    for (size_t o = 0; o < ROUND_PAGES * PAGE; o++)
        CHECK(run[o] == 0);
    memset(run, 0x22, ROUND_PAGES * PAGE);
    for (int i = 0; i < ROUND_PAGES; i++)
        CHECK(munmap(pages[i], PAGE) == 0);
    CHECK(munmap(run, ROUND_PAGES * PAGE) == 0);
    printf("%s: fresh pages zero and writable\n", what);
}

int main(void)
{
    size_t len = ROUND_PAGES * PAGE;

    char *p = map_rw(len);
    memset(p, 0x5a, len);
    CHECK(munmap(p, len) == 0);
    fresh_pages_are_zero("plain");

    p = map_rw(len);
    memset(p, 0x5b, len);
    CHECK(munmap(p + 8 * PAGE, 8 * PAGE) == 0);
    char *again = mmap(p + 8 * PAGE, 8 * PAGE, PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
    CHECK(again == p + 8 * PAGE);
    for (size_t o = 0; o < 8 * PAGE; o++)
        CHECK(again[o] == 0);
    CHECK(p[8 * PAGE - 1] == 0x5b && p[16 * PAGE] == 0x5b);
    CHECK(munmap(p, len) == 0);
    fresh_pages_are_zero("middle unmapped and mapped again");

    p = map_rw(len);
    memset(p, 0x5c, len);
    CHECK(mprotect(p, len, PROT_READ) == 0);
    CHECK(mprotect(p, len, PROT_READ | PROT_WRITE) == 0);
    p[0] = 1;
    CHECK(munmap(p, len) == 0);
    fresh_pages_are_zero("read-only and back");

    p = map_rw(len);
    memset(p, 0x5d, len);
    CHECK(mprotect(p, len, PROT_READ) == 0);
    CHECK(munmap(p, len) == 0);
    fresh_pages_are_zero("left read-only");

    p = map_rw(len);
    memset(p, 0x5e, len);
    char *moved = mremap(p, len, 2 * len, MREMAP_MAYMOVE);
    CHECK(moved != MAP_FAILED);
    CHECK(moved[0] == 0x5e && moved[len - 1] == 0x5e && moved[len] == 0);
    fresh_pages_are_zero("moved by mremap (old place)");
    CHECK(munmap(moved, 2 * len) == 0);
    fresh_pages_are_zero("moved by mremap (new place)");

    size_t big = 2UL << 20;
    p = map_rw(big);
    memset(p, 0x5f, big);
    CHECK(munmap(p, big) == 0);
    p = map_rw(big);
    for (size_t o = 0; o < big; o++)
        CHECK(p[o] == 0);
    CHECK(munmap(p, big) == 0);
    fresh_pages_are_zero("2 MiB");
    return 0;
}
