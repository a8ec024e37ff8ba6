/*
 * vma_churn.c - a seeded random walk of mmap (placed by the kernel, and
 * MAP_FIXED over a page already mapped), munmap (whole regions and their
 * ends), mprotect (parts of regions) and mremap (grown, maybe moved, and
 * shrunk) over up to 1,500 live regions. The program keeps its own model
 * of every page (protection, and the tag it wrote there) and checks, every
 * few hundred steps: each readable page holds its tag (or zero where the
 * kernel gave a fresh page), /proc/self/maps shows each page with the
 * protection the model says, pages it unmapped fault, read-only pages
 * fault on a write. Nothing printed depends on an address, so the output
 * is the same natively and under hvrun (whose ptrace stub replays only
 * the changed ranges of the VMA list, and whose free-range search starts
 * from a hint: vmm/aspace.c).
 */
#define _GNU_SOURCE
#include <setjmp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "guest_check.h"

#define PAGE 4096UL
#define MAX_REGIONS 1500
#define MAX_PAGES 8
#define STEPS 6000
#define CHECK_EVERY 500
#define MAX_FREED 4096

struct region {
    char *at;
    size_t pages;
    int prot[MAX_PAGES];
    uint64_t tag[MAX_PAGES]; /* 0: a fresh page the kernel zeroed */
    /* A MAP_FIXED page went in: Linux may keep it a VMA of its own, and
     * mremap across two VMAs is EFAULT there, so it is left alone. */
    int fixed;
};

static struct region regions[MAX_REGIONS];
static size_t nr_regions;
static char *freed[MAX_FREED]; /* pages this program unmapped */
static size_t nr_freed;
static uint64_t rng = 0x9e3779b97f4a7c15ULL;
static uint64_t next_tag = 1;

static unsigned roll(unsigned n)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (unsigned)(rng % n);
}

static const int prots[] = {PROT_NONE, PROT_READ, PROT_READ | PROT_WRITE};

static void forget_page(char *p)
{
    if (nr_freed < MAX_FREED)
        freed[nr_freed++] = p;
    else
        freed[roll(MAX_FREED)] = p;
}

/* Writes a fresh tag into every page of r (made writable for it), then
 * gives each page its protection. */
static void fill(struct region *r)
{
    CHECK(mprotect(r->at, r->pages * PAGE, PROT_READ | PROT_WRITE) == 0);
    for (size_t i = 0; i < r->pages; i++) {
        r->tag[i] = next_tag++;
        memcpy(r->at + i * PAGE, &r->tag[i], sizeof(r->tag[i]));
    }
    for (size_t i = 0; i < r->pages; i++)
        CHECK(mprotect(r->at + i * PAGE, PAGE, r->prot[i]) == 0);
}

static void do_create(void)
{
    if (nr_regions == MAX_REGIONS)
        return;
    struct region *r = &regions[nr_regions];
    r->pages = 1 + roll(4);
    r->fixed = 0;
    r->at = mmap(NULL, r->pages * PAGE, PROT_READ | PROT_WRITE,
                 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    CHECK(r->at != MAP_FAILED);
    for (size_t i = 0; i < r->pages; i++)
        r->prot[i] = prots[roll(3)];
    fill(r);
    nr_regions++;
}

static void drop_region(size_t k)
{
    for (size_t i = 0; i < regions[k].pages; i++)
        forget_page(regions[k].at + i * PAGE);
    regions[k] = regions[--nr_regions];
}

static void do_unmap(void)
{
    if (!nr_regions)
        return;
    size_t k = roll((unsigned)nr_regions);
    struct region *r = &regions[k];
    unsigned how = roll(3);
    if (how == 0 || r->pages == 1) {
        CHECK(munmap(r->at, r->pages * PAGE) == 0);
        drop_region(k);
    } else if (how == 1) { /* the first page */
        CHECK(munmap(r->at, PAGE) == 0);
        forget_page(r->at);
        r->at += PAGE;
        r->pages--;
        memmove(r->prot, r->prot + 1, r->pages * sizeof(r->prot[0]));
        memmove(r->tag, r->tag + 1, r->pages * sizeof(r->tag[0]));
    } else { /* the last page */
        r->pages--;
        CHECK(munmap(r->at + r->pages * PAGE, PAGE) == 0);
        forget_page(r->at + r->pages * PAGE);
    }
}

static void do_protect(void)
{
    if (!nr_regions)
        return;
    struct region *r = &regions[roll((unsigned)nr_regions)];
    size_t first = roll((unsigned)r->pages);
    size_t n = 1 + roll((unsigned)(r->pages - first));
    int prot = prots[roll(3)];
    CHECK(mprotect(r->at + first * PAGE, n * PAGE, prot) == 0);
    for (size_t i = first; i < first + n; i++)
        r->prot[i] = prot;
}

static void do_fixed(void)
{
    if (!nr_regions)
        return;
    struct region *r = &regions[roll((unsigned)nr_regions)];
    size_t i = roll((unsigned)r->pages);
    int prot = prots[1 + roll(2)];
    CHECK(mmap(r->at + i * PAGE, PAGE, prot,
               MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0) ==
          r->at + i * PAGE);
    r->prot[i] = prot;
    r->tag[i] = 0;
    r->fixed = 1;
}

/* mremap of a region whose pages share one protection (so it is part of
 * one VMA, as mremap needs): grown by up to two pages (moved when the
 * pages after it are taken), or shrunk by one. */
static void do_remap(void)
{
    if (!nr_regions)
        return;
    size_t k = roll((unsigned)nr_regions);
    struct region *r = &regions[k];
    if (r->fixed)
        return;
    for (size_t i = 1; i < r->pages; i++)
        if (r->prot[i] != r->prot[0])
            return;
    size_t to = r->pages + 1 + roll(2);
    if (roll(3) == 0 && r->pages > 1)
        to = r->pages - 1;
    if (to > MAX_PAGES)
        return;
    char *old = r->at;
    char *at = mremap(old, r->pages * PAGE, to * PAGE, MREMAP_MAYMOVE);
    CHECK(at != MAP_FAILED);
    if (at != old)
        for (size_t i = 0; i < r->pages; i++)
            forget_page(old + i * PAGE);
    else if (to < r->pages)
        forget_page(old + to * PAGE);
    for (size_t i = r->pages; i < to; i++) {
        r->prot[i] = r->prot[0];
        r->tag[i] = 0;
    }
    r->at = at;
    r->pages = to;
}

static sigjmp_buf fault_jmp;

static void on_segv(int sig)
{
    (void)sig;
    siglongjmp(fault_jmp, 1);
}

static int faults(volatile char *p, int write)
{
    if (sigsetjmp(fault_jmp, 1))
        return 1;
    if (write)
        *p = *p;
    else
        (void)*p;
    return 0;
}

/* /proc/self/maps as sorted (start, end, perms) entries. */
struct maps_entry {
    uintptr_t start, end;
    char perms[5];
};
/* Static: a heap that grew by mmap could take a page this program
 * expects to stay unmapped. */
#define MAX_MAPS 16384
static struct maps_entry maps[MAX_MAPS];
static size_t nr_maps;

static void read_maps(void)
{
    FILE *f = fopen("/proc/self/maps", "r");
    CHECK(f != NULL);
    char line[512];
    nr_maps = 0;
    while (fgets(line, sizeof(line), f)) {
        struct maps_entry e;
        if (sscanf(line, "%lx-%lx %4s", &e.start, &e.end, e.perms) != 3)
            continue;
        CHECK(nr_maps < MAX_MAPS);
        maps[nr_maps++] = e;
    }
    fclose(f);
    for (size_t i = 1; i < nr_maps; i++)
        CHECK(maps[i - 1].end <= maps[i].start);
}

static const struct maps_entry *maps_at(const char *p)
{
    size_t lo = 0, hi = nr_maps;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (maps[mid].end <= (uintptr_t)p)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < nr_maps && maps[lo].start <= (uintptr_t)p ? &maps[lo] : NULL;
}

static int in_model(const char *p)
{
    for (size_t k = 0; k < nr_regions; k++)
        if (p >= regions[k].at && p < regions[k].at + regions[k].pages * PAGE)
            return 1;
    return 0;
}

static void check_all(int round)
{
    read_maps();
    size_t pages = 0, tagged = 0, probed = 0;
    for (size_t k = 0; k < nr_regions; k++) {
        const struct region *r = &regions[k];
        for (size_t i = 0; i < r->pages; i++) {
            char *p = r->at + i * PAGE;
            const struct maps_entry *e = maps_at(p);
            CHECK(e != NULL);
            CHECK((e->perms[0] == 'r') == !!(r->prot[i] & PROT_READ));
            CHECK((e->perms[1] == 'w') == !!(r->prot[i] & PROT_WRITE));
            CHECK(e->perms[2] == '-' && e->perms[3] == 'p');
            pages++;
            if (r->prot[i] & PROT_READ) {
                uint64_t got;
                memcpy(&got, p, sizeof(got));
                CHECK(got == r->tag[i]);
                tagged += r->tag[i] != 0;
                if (!(r->prot[i] & PROT_WRITE) && roll(8) == 0) {
                    CHECK(faults(p, 1));
                    probed++;
                }
            } else if (roll(8) == 0) {
                CHECK(faults(p, 0));
                probed++;
            }
        }
    }
    /* A page unmapped and not mapped again since: gone everywhere. */
    size_t gone = 0;
    for (size_t n = 0; n < 64 && nr_freed; n++) {
        char *p = freed[roll((unsigned)nr_freed)];
        if (in_model(p))
            continue;
        CHECK(maps_at(p) == NULL);
        CHECK(faults(p, 0));
        gone++;
    }
    /* How many freed pages were reused depends on placement: not shown. */
    (void)gone;
    printf("round %d: %zu regions, %zu pages (%zu tagged), %zu fault "
           "probes\n",
           round, nr_regions, pages, tagged, probed);
}

int main(void)
{
    struct sigaction sa = {.sa_handler = on_segv, .sa_flags = SA_NODEFER};
    CHECK(sigaction(SIGSEGV, &sa, NULL) == 0);
    CHECK(sigaction(SIGBUS, &sa, NULL) == 0);
    /* Start with many regions, then churn. */
    for (int i = 0; i < 1000; i++)
        do_create();
    check_all(0);
    for (int step = 1; step <= STEPS; step++) {
        switch (roll(10)) {
        case 0: case 1: case 2: do_create(); break;
        case 3: case 4: do_unmap(); break;
        case 5: case 6: do_protect(); break;
        case 7: do_fixed(); break;
        default: do_remap(); break;
        }
        if (step % CHECK_EVERY == 0)
            check_all(step / CHECK_EVERY);
    }
    puts("done");
    return 0;
}
