/*
 * page_store.c - the run's store of rewritten code pages.
 *
 * The RDTSC/CPUID rewriter (syscall-proxy/mm/cpuid_patch.c) writes a few
 * bytes into a handful of a library's text pages in every process that
 * maps it. Each such page used to become a private copy of the process's
 * own: read from the file, written into guest memory, its view page
 * mapped anew and faulted in by hvrun, about 30 us a page on a host whose
 * page tables are shadowed, six or seven pages a process. But every
 * process of a run lays a library out at the same address with the same
 * stubs, so the rewritten pages come out the same bytes: they are kept
 * here once, in a memfd, found again by their contents, and a process's
 * text maps them read-only (vmm_as_stage_end) as it maps the file's own
 * pages. A page is never changed once stored, so every mapping of it
 * stays what it was; the store only grows, up to PAGE_STORE_MAX.
 *
 * Used from the thread that runs guests only, like the file objects of
 * aspace.c.
 */
#include "aspace.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

/* 64 MiB: far more than the rewritten pages of any run seen (tens). */
#define PAGE_STORE_MAX (16384u)

struct stored_page {
    uint64_t hash, off;
    uint8_t *bytes; /* a copy, to tell pages of the same hash apart */
};

static int store_fd = -1;
static uint64_t store_end;
static struct stored_page *slots; /* open addressing, cap a power of 2 */
static size_t nr_slots, cap_slots;

/* Four lanes over interleaved words, folded at the end: one lane's chain
 * of multiplies took ~1 us a page, a process's rewritten pages ~50 us
 * (perf: vmm_page_store_put, 1.3% of hvrun's guest thread in 50 `sh -c
 * true`); the lanes run side by side. */
static uint64_t page_hash(const uint8_t *page)
{
    uint64_t h[4] = {0x9e3779b97f4a7c15ULL, 0xc2b2ae3d27d4eb4fULL,
                     0x165667b19e3779f9ULL, 0x27d4eb2f165667c5ULL};
    for (size_t i = 0; i < VMM_PAGE_SIZE; i += 32)
        for (size_t k = 0; k < 4; k++) {
            uint64_t w;
            memcpy(&w, page + i + 8 * k, 8);
            h[k] = (h[k] ^ w) * 0x100000001b3ULL;
            h[k] ^= h[k] >> 29;
        }
    uint64_t x = h[0];
    for (size_t k = 1; k < 4; k++) {
        x = (x ^ h[k]) * 0x100000001b3ULL;
        x ^= x >> 29;
    }
    return x | 1; /* 0: an empty slot */
}

static struct stored_page *probe(struct stored_page *tab, size_t cap,
                                 uint64_t hash, const uint8_t *page)
{
    size_t i = (size_t)(hash >> 7) & (cap - 1);
    while (tab[i].hash &&
           (tab[i].hash != hash ||
            (page && memcmp(tab[i].bytes, page, VMM_PAGE_SIZE) != 0)))
        i = (i + 1) & (cap - 1);
    return &tab[i];
}

static int grow(void)
{
    size_t cap = cap_slots ? cap_slots * 2 : 64;
    struct stored_page *tab = calloc(cap, sizeof(*tab));
    if (!tab)
        return -ENOMEM;
    for (size_t i = 0; i < cap_slots; i++)
        if (slots[i].hash)
            *probe(tab, cap, slots[i].hash, NULL) = slots[i];
    free(slots);
    slots = tab;
    cap_slots = cap;
    return 0;
}

static int append(const uint8_t *page, uint64_t *off)
{
    if (store_fd < 0 &&
        (store_fd = memfd_create("hvrun-code-pages", MFD_CLOEXEC)) < 0)
        return -errno;
    for (size_t done = 0; done < VMM_PAGE_SIZE;) {
        ssize_t n = pwrite(store_fd, page + done, VMM_PAGE_SIZE - done,
                           (off_t)(store_end + done));
        if (n < 0 && errno != EINTR)
            return -errno;
        if (n > 0)
            done += (size_t)n;
    }
    *off = store_end;
    store_end += VMM_PAGE_SIZE;
    return 0;
}

int vmm_page_store_reserve(size_t n, uint64_t *off)
{
    if (n == 0 || store_end / VMM_PAGE_SIZE + n > PAGE_STORE_MAX)
        return -ENOSPC;
    if (store_fd < 0 &&
        (store_fd = memfd_create("hvrun-code-pages", MFD_CLOEXEC)) < 0)
        return -errno;
    *off = store_end;
    store_end += n * VMM_PAGE_SIZE;
    return 0;
}

int vmm_page_store_put(const uint8_t *page, uint64_t *off)
{
    if ((nr_slots + 1) * 2 > cap_slots) {
        int rc = grow();
        if (rc < 0)
            return rc;
    }
    uint64_t hash = page_hash(page);
    struct stored_page *s = probe(slots, cap_slots, hash, page);
    if (s->hash) {
        *off = s->off;
        return 0;
    }
    if (nr_slots >= PAGE_STORE_MAX)
        return -ENOSPC;
    uint8_t *copy = malloc(VMM_PAGE_SIZE);
    if (!copy)
        return -ENOMEM;
    int rc = append(page, off);
    if (rc < 0) {
        free(copy);
        return rc;
    }
    memcpy(copy, page, VMM_PAGE_SIZE);
    *s = (struct stored_page){hash, *off, copy};
    nr_slots++;
    return 0;
}

int vmm_page_store_fd(void)
{
    return store_fd;
}
