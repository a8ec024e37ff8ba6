/*
 * test_vmalog.c - what makes a mapping change cheap with many VMAs keeps
 * the VMA list's meaning: vmm_as_find_free with its hint places exactly
 * where the whole top-down walk does, the change log covers every change
 * a mirror (the ptrace stub) must replay, and the two-sided VMA array
 * stays sorted. Seeded random map/unmap/mprotect/mremap over a window.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "aspace_fixture.h"

TestSuite(vmalog, .init = setup, .fini = teardown);

#define WIN_PAGES 512
#define WIN_BASE 0x10000000ULL
#define WIN_TOP (WIN_BASE + WIN_PAGES * PAGE)

/* The original vmm_as_find_free: every gap from `below` down. */
static int reference_find_free(uint64_t len, gva_t below, gva_t *out)
{
    gva_t top = below;
    size_t i = 0;
    while (i < as.nr_vmas && as.vmas[i]->end <= below)
        i++;
    for (;;) {
        gva_t gap_start = i > 0 ? as.vmas[i - 1]->end : VMM_USER_MIN;
        if (i < as.nr_vmas && as.vmas[i]->start < top)
            top = as.vmas[i]->start;
        if (top >= gap_start + len && vmm_in_stub_range(top - len, len))
            top = VMM_STUB_RANGE_START > gap_start ? VMM_STUB_RANGE_START
                                                   : gap_start;
        if (top >= gap_start + len && top - len >= VMM_USER_MIN) {
            *out = top - len;
            return 0;
        }
        if (i == 0)
            return -ENOMEM;
        i--;
        top = as.vmas[i]->start;
    }
}

/* What a mirror shows of one page: its VMA's protection and backing. */
struct page_view {
    bool mapped;
    int prot;
    gpa_t gpa;
};

static struct page_view view_of(gva_t page)
{
    struct vmm_vma *v = vmm_as_find_vma(&as, page);
    if (!v)
        return (struct page_view){0};
    return (struct page_view){true, v->prot, v->gpa + (page - v->start)};
}

static struct page_view mirror[WIN_PAGES];

static void replay_changes(uint64_t *seen)
{
    struct vmm_dirty_range ch[VMM_DIRTY_LOG];
    size_t n = vmm_as_changes_since(&as, *seen, ch);
    *seen = as.generation;
    for (size_t k = 0; k < n; k++)
        for (size_t p = 0; p < WIN_PAGES; p++) {
            gva_t g = WIN_BASE + p * PAGE;
            if (g >= ch[k].lo && g < ch[k].hi)
                mirror[p] = view_of(g);
        }
}

static void check_mirror_and_order(void)
{
    for (size_t p = 0; p < WIN_PAGES; p++) {
        struct page_view want = view_of(WIN_BASE + p * PAGE);
        cr_assert(mirror[p].mapped == want.mapped &&
                      mirror[p].prot == want.prot &&
                      (!want.mapped || mirror[p].gpa == want.gpa),
                  "page %zu: the mirror missed a change", p);
    }
    for (size_t i = 1; i < as.nr_vmas; i++)
        cr_assert_leq(as.vmas[i - 1]->end, as.vmas[i]->start);
}

static void random_change(unsigned *seed)
{
    unsigned r = (unsigned)rand_r(seed);
    gva_t at = WIN_BASE + (r % WIN_PAGES) * PAGE;
    uint64_t len = (1 + (unsigned)rand_r(seed) % 8) * PAGE;
    if (at + len > WIN_TOP)
        len = WIN_TOP - at;
    int prot = (r >> 12) & 1 ? RW : PROT_READ;
    switch ((r >> 8) % 5) {
    case 0: { /* mmap without a hint, top-down from the window's top */
        gva_t want, got;
        int rc_ref = reference_find_free(len, WIN_TOP, &want);
        int rc = vmm_as_find_free(&as, len, WIN_TOP, &got);
        cr_assert_eq(rc, rc_ref);
        if (rc == 0) {
            cr_assert_eq(got, want, "placed at %#lx, the walk says %#lx",
                         (unsigned long)got, (unsigned long)want);
            if (got >= WIN_BASE)
                cr_assert_eq(vmm_as_map(&as, got, len, prot, 0, NULL), 0);
        }
        break;
    }
    case 1:
        cr_assert_eq(vmm_as_map(&as, at, len, prot, 0, NULL), 0);
        break;
    case 2:
    case 3:
        cr_assert_eq(vmm_as_unmap(&as, at, len), 0);
        break;
    default:
        if (vmm_as_range_mapped(&as, at, len))
            cr_assert_eq(vmm_as_protect(&as, at, len, prot), 0);
        else if (vmm_as_range_mapped(&as, at, PAGE)) {
            gva_t to = 0;
            (void)vmm_as_remap(&as, at, PAGE, 2 * PAGE, false, false, &to);
        }
        break;
    }
}

Test(vmalog, hint_log_and_array_agree_with_the_plain_list)
{
    for (unsigned seed0 = 1; seed0 <= 4; seed0++) {
        unsigned seed = seed0;
        uint64_t seen = as.generation;
        for (int step = 0; step < 3000; step++) {
            random_change(&seed);
            /* The mirror sometimes falls behind: the log's merged
             * entries must still cover what it missed. */
            if (rand_r(&seed) % 4 != 0 || step % 97 == 0) {
                replay_changes(&seen);
                check_mirror_and_order();
            }
        }
        replay_changes(&seen);
        check_mirror_and_order();
        cr_assert_eq(vmm_as_unmap(&as, WIN_BASE, WIN_PAGES * PAGE), 0);
        replay_changes(&seen);
        check_mirror_and_order();
    }
}

Test(vmalog, a_mirror_far_behind_is_covered_by_merged_ranges)
{
    uint64_t seen = as.generation;
    for (int k = 0; k < 4 * VMM_DIRTY_LOG; k++)
        cr_assert_eq(vmm_as_map(&as, WIN_BASE + (size_t)(k * 3 % WIN_PAGES) *
                                               PAGE,
                                PAGE, k & 1 ? RW : PROT_READ, 0, NULL),
                     0);
    cr_assert_leq(as.nr_dirty, VMM_DIRTY_LOG);
    replay_changes(&seen);
    check_mirror_and_order();
}
