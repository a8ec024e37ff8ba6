/*
 * pt_pages.c - page-table pages kept in hvrun's own memory (pt_pages.h).
 *
 * A set is a hash table from a table's guest-physical address to its page
 * (open addressing, linear probing, at most half full); a run makes a few
 * dozen tables a process, a large address space a few thousand. Pages
 * given back go to a pool of at most PT_POOL_MAX (4 MiB), which the next
 * address space takes its tables from: their host pages stay faulted in.
 * Address spaces are made and torn down on the thread that runs guests,
 * so the pool has no lock.
 */
#include "pt_pages.h"

#include <stdlib.h>
#include <string.h>

#define PT_PAGE_BYTES 4096
#define PT_POOL_MAX 1024

struct pt_slot {
    uint64_t key; /* the table's gpa | 1 (a page-aligned gpa has bit 0
                     clear, so 0 is a free slot) */
    uint64_t *page;
};

struct vmm_pt_pages {
    struct pt_slot *slots;
    size_t cap, n; /* cap: a power of two */
};

/* Freed pages, linked through their first word. */
static void *pool;
static size_t pool_n;

static uint64_t *page_get(void)
{
    uint64_t *p = pool;
    if (p) {
        pool = *(void **)p;
        pool_n--;
    } else if (!(p = aligned_alloc(PT_PAGE_BYTES, PT_PAGE_BYTES))) {
        return NULL;
    }
    memset(p, 0, PT_PAGE_BYTES);
    return p;
}

static void page_put(uint64_t *p)
{
    if (pool_n >= PT_POOL_MAX) {
        free(p);
        return;
    }
    *(void **)p = pool;
    pool = p;
    pool_n++;
}

static size_t slot_of(uint64_t gpa, size_t cap)
{
    uint64_t h = (gpa >> 12) * 0x9e3779b97f4a7c15ULL;
    return (size_t)(h >> 32) & (cap - 1);
}

static struct pt_slot *probe(const struct pt_slot *slots, size_t cap,
                             uint64_t key)
{
    size_t i = slot_of(key, cap);
    while (slots[i].key && slots[i].key != key)
        i = (i + 1) & (cap - 1);
    return (struct pt_slot *)&slots[i];
}

static int grow(struct vmm_pt_pages *t)
{
    size_t cap = t->cap ? t->cap * 2 : 64;
    struct pt_slot *slots = calloc(cap, sizeof(*slots));
    if (!slots)
        return -1;
    for (size_t i = 0; i < t->cap; i++)
        if (t->slots[i].key)
            *probe(slots, cap, t->slots[i].key) = t->slots[i];
    free(t->slots);
    t->slots = slots;
    t->cap = cap;
    return 0;
}

struct vmm_pt_pages *vmm_pt_pages_new(void)
{
    return calloc(1, sizeof(struct vmm_pt_pages));
}

uint64_t *vmm_pt_pages_add(struct vmm_pt_pages *t, uint64_t gpa)
{
    if ((t->n + 1) * 2 > t->cap && grow(t) < 0)
        return NULL;
    struct pt_slot *s = probe(t->slots, t->cap, gpa | 1);
    if (s->key) /* the allocator gave the address again: the same table */
        return memset(s->page, 0, PT_PAGE_BYTES);
    uint64_t *page = page_get();
    if (!page)
        return NULL;
    *s = (struct pt_slot){gpa | 1, page};
    t->n++;
    return page;
}

uint64_t *vmm_pt_pages_find(const struct vmm_pt_pages *t, uint64_t gpa)
{
    if (t->n == 0)
        return NULL;
    const struct pt_slot *s = probe(t->slots, t->cap, gpa | 1);
    return s->key ? s->page : NULL;
}

void vmm_pt_pages_free(struct vmm_pt_pages *t)
{
    if (!t)
        return;
    for (size_t i = 0; i < t->cap; i++)
        if (t->slots[i].key)
            page_put(t->slots[i].page);
    free(t->slots);
    free(t);
}
