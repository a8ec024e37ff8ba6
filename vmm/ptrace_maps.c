/*
 * ptrace_maps.c - what a ptrace stub has mapped, as far as hvrun knows it
 * for sure: sorted, non-overlapping ranges, each one backing (the guest
 * memfd or a file, at an offset) and one protection, recorded as the
 * mapping calls are queued. sync_range (ptrace.c) asks it whether a VMA's
 * part is mapped from the same backing already: then a protection change
 * is an mprotect and no change is nothing, where a fresh mmap would drop
 * every page the stub had faulted in there (its PTEs zapped, each page
 * faulted again: ~20-25 us a page on a host whose page tables are
 * shadowed, a RELRO mprotect of ld.so's the common case).
 *
 * Whatever hvrun cannot vouch for (a range of a failed call, a shared
 * object, a lazy reservation, a file's tail made inaccessible) is simply
 * not in the list: it is mapped afresh next time, as before.
 */
#include "ptrace_internal.h"

#include <stdlib.h>
#include <string.h>

/* Room for one more entry (a set can split one in three). */
static bool maps_room(struct pt_stub_maps *m, size_t more)
{
    if (m->n + more <= m->cap)
        return true;
    size_t cap = m->cap ? m->cap * 2 : 32;
    while (cap < m->n + more)
        cap *= 2;
    struct pt_stub_map *e = realloc(m->e, cap * sizeof(*e));
    if (!e)
        return false;
    m->e = e;
    m->cap = cap;
    return true;
}

/* Index of the first entry with end > at. */
static size_t first_after(const struct pt_stub_maps *m, uint64_t at)
{
    size_t lo = 0, hi = m->n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (m->e[mid].end <= at)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

void pt_maps_forget(struct pt_stub_maps *m, uint64_t lo, uint64_t hi)
{
    if (lo >= hi || m->n == 0)
        return; /* (an empty list may have no array: no memmove of it) */
    size_t i = first_after(m, lo);
    if (i < m->n && m->e[i].start < lo && m->e[i].end > hi) {
        /* one entry around the whole range: split in two */
        if (!maps_room(m, 1)) {
            m->n = 0; /* forget everything rather than too little */
            return;
        }
        memmove(&m->e[i + 1], &m->e[i], (m->n - i) * sizeof(m->e[0]));
        m->n++;
        m->e[i].end = lo;
        m->e[i + 1].off += hi - m->e[i + 1].start;
        m->e[i + 1].start = hi;
        return;
    }
    if (i < m->n && m->e[i].start < lo) { /* keep its head */
        m->e[i].end = lo;
        i++;
    }
    size_t j = i;
    while (j < m->n && m->e[j].end <= hi)
        j++;
    if (j < m->n && m->e[j].start < hi) { /* keep its tail */
        m->e[j].off += hi - m->e[j].start;
        m->e[j].start = hi;
    }
    memmove(&m->e[i], &m->e[j], (m->n - j) * sizeof(m->e[0]));
    m->n -= j - i;
}

void pt_maps_set(struct pt_stub_maps *m, const struct pt_stub_map *map)
{
    pt_maps_forget(m, map->start, map->end);
    if (map->start >= map->end || !maps_room(m, 1))
        return;
    size_t i = first_after(m, map->start);
    if (i < m->n)
        memmove(&m->e[i + 1], &m->e[i], (m->n - i) * sizeof(m->e[0]));
    m->e[i] = *map;
    m->n++;
}

const struct pt_stub_map *pt_maps_covering(const struct pt_stub_maps *m,
                                           uint64_t lo, uint64_t hi)
{
    size_t i = first_after(m, lo);
    if (i < m->n && m->e[i].start <= lo && m->e[i].end >= hi)
        return &m->e[i];
    return NULL;
}

void pt_maps_clear(struct pt_stub_maps *m) { m->n = 0; }

void pt_maps_free(struct pt_stub_maps *m)
{
    free(m->e);
    *m = (struct pt_stub_maps){0};
}
