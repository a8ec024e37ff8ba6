/*
 * test_ptrace_maps.c - what a ptrace stub has mapped, as hvrun records it
 * (vmm/ptrace_maps.c): a set replaces what it covers, splitting entries
 * it cuts with their offsets moved along; a forget leaves only what it
 * does not touch; a lookup finds one entry covering a whole range.
 */
#include <criterion/criterion.h>

#include "ptrace_internal.h"

static struct pt_stub_map map(uint64_t start, uint64_t end, uint64_t key,
                              uint64_t off, int prot)
{
    return (struct pt_stub_map){start, end, key, off, prot};
}

static void expect(const struct pt_stub_maps *m, size_t i, uint64_t start,
                   uint64_t end, uint64_t off, int prot)
{
    cr_assert_lt(i, m->n);
    cr_expect_eq(m->e[i].start, start, "entry %zu start %#lx", i,
                 (unsigned long)m->e[i].start);
    cr_expect_eq(m->e[i].end, end, "entry %zu end %#lx", i,
                 (unsigned long)m->e[i].end);
    cr_expect_eq(m->e[i].off, off, "entry %zu off %#lx", i,
                 (unsigned long)m->e[i].off);
    cr_expect_eq(m->e[i].prot, prot);
}

Test(ptrace_maps, set_inside_splits_in_three)
{
    struct pt_stub_maps m = {0};
    struct pt_stub_map a = map(0x10000, 0x20000, 7, 0x100000, 3);
    pt_maps_set(&m, &a);
    struct pt_stub_map b = map(0x14000, 0x16000, 7, 0x104000, 1);
    pt_maps_set(&m, &b);
    cr_assert_eq(m.n, 3);
    expect(&m, 0, 0x10000, 0x14000, 0x100000, 3);
    expect(&m, 1, 0x14000, 0x16000, 0x104000, 1);
    expect(&m, 2, 0x16000, 0x20000, 0x106000, 3);
    pt_maps_free(&m);
}

Test(ptrace_maps, forget_across_entries_keeps_head_and_tail)
{
    struct pt_stub_maps m = {0};
    for (uint64_t k = 0; k < 4; k++) {
        struct pt_stub_map e =
            map(0x10000 * (k + 1), 0x10000 * (k + 2), k, 0, 3);
        pt_maps_set(&m, &e);
    }
    pt_maps_forget(&m, 0x18000, 0x38000);
    cr_assert_eq(m.n, 3);
    expect(&m, 0, 0x10000, 0x18000, 0, 3);
    expect(&m, 1, 0x38000, 0x40000, 0x8000, 3);
    cr_expect_eq(m.e[1].key, 2);
    expect(&m, 2, 0x40000, 0x50000, 0, 3);
    pt_maps_free(&m);
}

Test(ptrace_maps, covering_needs_one_entry)
{
    struct pt_stub_maps m = {0};
    struct pt_stub_map a = map(0x10000, 0x20000, 1, 0, 3);
    struct pt_stub_map b = map(0x20000, 0x30000, 1, 0x10000, 3);
    pt_maps_set(&m, &a);
    pt_maps_set(&m, &b);
    cr_expect_not_null(pt_maps_covering(&m, 0x12000, 0x20000));
    cr_expect_null(pt_maps_covering(&m, 0x1f000, 0x21000),
                   "two entries are not one mapping");
    cr_expect_null(pt_maps_covering(&m, 0x30000, 0x31000));
    pt_maps_forget(&m, 0x0, 0x100000);
    cr_expect_eq(m.n, 0);
    cr_expect_null(pt_maps_covering(&m, 0x12000, 0x13000));
    pt_maps_free(&m);
}

Test(ptrace_maps, many_entries_grow_the_list)
{
    struct pt_stub_maps m = {0};
    for (uint64_t k = 200; k-- > 0;) { /* from the top: inserts at 0 */
        struct pt_stub_map e = map(0x2000 * k, 0x2000 * k + 0x1000, k, 0, 1);
        pt_maps_set(&m, &e);
    }
    cr_assert_eq(m.n, 200);
    for (size_t i = 1; i < m.n; i++)
        cr_expect_lt(m.e[i - 1].end, m.e[i].start + 1);
    const struct pt_stub_map *e =
        pt_maps_covering(&m, 0x2000 * 77, 0x2000 * 77 + 0x1000);
    cr_assert_not_null(e);
    cr_expect_eq(e->key, 77);
    pt_maps_free(&m);
}
