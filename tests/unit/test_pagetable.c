/*
 * test_pagetable.c - page tables and the VMA list of vmm/aspace.c: what
 * vmm_as_map/unmap/protect/remap/find_free leave in the PTEs and VMAs.
 */
#include <criterion/criterion.h>

#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>

#include "aspace.h"

#include "aspace_fixture.h"

#define BASE 0x400000ULL

TestSuite(pagetable, .init = setup, .fini = teardown);

static void map_ok(gva_t gva, uint64_t len, int prot)
{
    int rc = vmm_as_map(&as, gva, len, prot, 0, NULL);
    cr_assert_eq(rc, 0, "vmm_as_map(%#llx, %#llx) = %d",
                 (unsigned long long)gva, (unsigned long long)len, rc);
}

static const struct vmm_vma *vma_at(gva_t gva)
{
    const struct vmm_vma *v = vmm_as_find_vma(&as, gva);
    cr_assert_not_null(v, "no VMA at %#llx", (unsigned long long)gva);
    return v;
}

/* The backing gpa of gva per its VMA. */
static gpa_t backing(gva_t gva)
{
    const struct vmm_vma *v = vma_at(gva);
    return v->gpa + (gva - v->start);
}

static uint8_t *host_of(gva_t gva)
{
    return vmm_phys_hva(&pm, backing(gva));
}

static void check_pte(gva_t gva, int prot)
{
    uint64_t pte = vmm_pt_lookup(&as, gva);
    cr_assert(pte & VMM_PTE_P, "%#llx: not present",
              (unsigned long long)gva);
    cr_assert(pte & VMM_PTE_U, "%#llx: not user", (unsigned long long)gva);
    cr_assert_eq(!!(pte & VMM_PTE_W), !!(prot & PROT_WRITE),
                 "%#llx: W bit %d for prot %d", (unsigned long long)gva,
                 !!(pte & VMM_PTE_W), prot);
    cr_assert_eq(!!(pte & VMM_PTE_NX), !(prot & PROT_EXEC),
                 "%#llx: NX bit wrong for prot %d", (unsigned long long)gva,
                 prot);
    cr_assert_eq(pte & VMM_PTE_ADDR, backing(gva),
                 "%#llx: PTE address %#llx, VMA backing %#llx",
                 (unsigned long long)gva,
                 (unsigned long long)(pte & VMM_PTE_ADDR),
                 (unsigned long long)backing(gva));
}

static void check_not_present(gva_t gva)
{
    uint64_t pte = vmm_pt_lookup(&as, gva);
    cr_assert_eq(pte & VMM_PTE_P, 0, "%#llx: present (pte %#llx)",
                 (unsigned long long)gva, (unsigned long long)pte);
}

Test(pagetable, init_allocates_an_empty_pml4)
{
    cr_assert_eq(as.pml4_gpa % PAGE, 0);
    cr_assert_eq(as.nr_vmas, 0);
    cr_assert_eq(vmm_pt_lookup(&as, BASE), 0);
    const uint64_t *pml4 = vmm_phys_hva(&pm, as.pml4_gpa);
    for (int i = 0; i < 512; i++)
        cr_assert_eq(pml4[i], 0);
}

Test(pagetable, map_rw_sets_present_user_write_nx)
{
    map_ok(BASE, 3 * PAGE, RW);
    const struct vmm_vma *v = vma_at(BASE);
    cr_assert_eq(v->start, BASE);
    cr_assert_eq(v->end, BASE + 3 * PAGE);
    cr_assert_eq(v->prot, RW);
    cr_assert_eq(v->gpa % PAGE, 0);
    for (int i = 0; i < 3; i++)
        check_pte(BASE + i * PAGE, RW);
    /* The PTE address is the VMA's single contiguous extent. */
    cr_assert_eq(vmm_pt_lookup(&as, BASE + 2 * PAGE) & VMM_PTE_ADDR,
                 v->gpa + 2 * PAGE);
    check_not_present(BASE + 3 * PAGE);
    check_not_present(BASE - PAGE);
}

Test(pagetable, map_rounds_length_up_to_pages)
{
    map_ok(BASE, PAGE + 1, RW);
    cr_assert_eq(vma_at(BASE)->end, BASE + 2 * PAGE);
    check_pte(BASE + PAGE, RW);
}

Test(pagetable, map_read_only_has_no_w)
{
    map_ok(BASE, PAGE, PROT_READ);
    check_pte(BASE, PROT_READ);
    cr_assert_eq(vmm_pt_lookup(&as, BASE) & VMM_PTE_W, 0);
}

Test(pagetable, map_exec_has_no_nx)
{
    map_ok(BASE, PAGE, PROT_READ | PROT_EXEC);
    check_pte(BASE, PROT_READ | PROT_EXEC);
    cr_assert_eq(vmm_pt_lookup(&as, BASE) & VMM_PTE_NX, 0);
    map_ok(BASE + PAGE, PAGE, PROT_READ | PROT_WRITE | PROT_EXEC);
    check_pte(BASE + PAGE, PROT_READ | PROT_WRITE | PROT_EXEC);
}

Test(pagetable, map_prot_none_leaves_ptes_not_present)
{
    map_ok(BASE, 2 * PAGE, PROT_NONE);
    const struct vmm_vma *v = vma_at(BASE);
    cr_assert_eq(v->prot, PROT_NONE);
    check_not_present(BASE);
    check_not_present(BASE + PAGE);
}

Test(pagetable, map_high_user_addresses)
{
    gva_t top = VMM_USER_END - PAGE;
    map_ok(top, PAGE, RW);
    check_pte(top, RW);
    map_ok(VMM_USER_MIN, PAGE, PROT_READ);
    check_pte(VMM_USER_MIN, PROT_READ);
}

Test(pagetable, map_rejects_unaligned_and_empty)
{
    cr_assert_eq(vmm_as_map(&as, BASE + 1, PAGE, RW, 0, NULL), -EINVAL);
    cr_assert_eq(vmm_as_map(&as, BASE, 0, RW, 0, NULL), -EINVAL);
    cr_assert_eq(as.nr_vmas, 0);
}

Test(pagetable, map_keeps_name_and_flags)
{
    cr_assert_eq(vmm_as_map(&as, BASE, PAGE, RW, VMM_VMA_STACK, "[stack]"),
                 0);
    const struct vmm_vma *v = vma_at(BASE);
    cr_assert_str_eq(v->name, "[stack]");
    /* Private and writable: charged, as Linux's VM_ACCOUNT. */
    cr_assert_eq(v->flags, VMM_VMA_STACK | VMM_VMA_ACCOUNT);
}

Test(pagetable, map_refuses_past_user_space)
{
    cr_assert_eq(vmm_as_map(&as, VMM_USER_END, PAGE, RW, 0, NULL), -ENOMEM);
    cr_assert_eq(vmm_as_map(&as, VMM_USER_END - PAGE, 2 * PAGE, RW, 0, NULL),
                 -ENOMEM);
    cr_assert_eq(vmm_as_map(&as, 0xffffffff80000000ULL, PAGE, RW, 0, NULL),
                 -ENOMEM);
    cr_assert_eq(as.nr_vmas, 0);
}

Test(pagetable, remap_refuses_fixed_targets_past_user_space)
{
    map_ok(BASE, PAGE, RW);
    gva_t to = 0xffffffff80004000ULL; /* the guest kernel's entry page */
    cr_assert_eq(vmm_as_remap(&as, BASE, PAGE, PAGE, true, true, &to),
                 -EINVAL);
    to = VMM_USER_END - PAGE;
    cr_assert_eq(vmm_as_remap(&as, BASE, PAGE, 2 * PAGE, true, true, &to),
                 -EINVAL);
    cr_assert_not_null(vma_at(BASE), "the source stays");
}

Test(pagetable, committed_bytes_follow_linux_accounting)
{
    /* Private writable: charged; read-only, NORESERVE, shared, special:
     * not. */
    map_ok(BASE, 4 * PAGE, RW);
    cr_assert_eq(vmm_as_map(&as, BASE + 8 * PAGE, 2 * PAGE, PROT_READ, 0, NULL), 0);
    cr_assert_eq(vmm_as_map(&as, BASE + 16 * PAGE, 2 * PAGE, RW,
                            VMM_VMA_NORESERVE, NULL), 0);
    cr_assert_eq(vmm_as_map(&as, BASE + 24 * PAGE, PAGE, PROT_READ,
                            VMM_VMA_SPECIAL, NULL), 0);
    cr_assert_eq(as.account_bytes, 4 * PAGE);
    /* Splitting and unmapping part keep the sum exact. */
    cr_assert_eq(vmm_as_unmap(&as, BASE + PAGE, PAGE), 0);
    cr_assert_eq(as.account_bytes, 3 * PAGE);
    /* Write added to the read-only mapping charges it (mprotect_fixup);
     * taking it away again keeps the charge; NORESERVE never is. */
    cr_assert_eq(vmm_as_protect_charge(&as, BASE + 8 * PAGE, 2 * PAGE, RW),
                 2 * PAGE);
    cr_assert_eq(vmm_as_protect(&as, BASE + 8 * PAGE, PAGE, RW), 0);
    cr_assert_eq(as.account_bytes, 4 * PAGE);
    cr_assert_eq(vmm_as_protect(&as, BASE + 8 * PAGE, PAGE, PROT_READ), 0);
    cr_assert_eq(as.account_bytes, 4 * PAGE);
    cr_assert_eq(vmm_as_protect_charge(&as, BASE + 16 * PAGE, 2 * PAGE, RW), 0);
    cr_assert_eq(vmm_as_charged_in(&as, BASE, 10 * PAGE), 4 * PAGE);
    cr_assert_eq(vmm_as_unmap(&as, BASE, 32 * PAGE), 0);
    cr_assert_eq(as.account_bytes, 0);
}

Test(pagetable, map_fixed_replaces_the_middle)
{
    map_ok(BASE, 4 * PAGE, RW);
    gpa_t g = vma_at(BASE)->gpa;
    memset(vmm_phys_hva(&pm, g), 0x11, 4 * PAGE);
    map_ok(BASE + PAGE, PAGE, PROT_READ);
    cr_assert_eq(as.nr_vmas, 3);
    /* The new page is fresh zeroed memory, read-only. */
    cr_assert_eq(host_of(BASE + PAGE)[0], 0);
    check_pte(BASE + PAGE, PROT_READ);
    /* The old neighbours keep their data and their part of the extent. */
    cr_assert_eq(backing(BASE), g);
    cr_assert_eq(backing(BASE + 2 * PAGE), g + 2 * PAGE);
    cr_assert_eq(host_of(BASE)[0], 0x11);
    cr_assert_eq(host_of(BASE + 3 * PAGE)[PAGE - 1], 0x11);
}

Test(pagetable, vmas_stay_sorted)
{
    map_ok(BASE + 10 * PAGE, PAGE, RW);
    map_ok(BASE, PAGE, RW);
    map_ok(BASE + 5 * PAGE, PAGE, RW);
    cr_assert_eq(as.nr_vmas, 3);
    for (size_t i = 1; i < as.nr_vmas; i++)
        cr_assert_leq(as.vmas[i - 1]->end, as.vmas[i]->start);
}

Test(pagetable, munmap_middle_splits_with_gpa_offsets)
{
    map_ok(BASE, 4 * PAGE, RW);
    gpa_t g = vma_at(BASE)->gpa;
    cr_assert_eq(vmm_as_unmap(&as, BASE + PAGE, PAGE), 0);
    cr_assert_eq(as.nr_vmas, 2);
    cr_assert_eq(as.vmas[0]->start, BASE);
    cr_assert_eq(as.vmas[0]->end, BASE + PAGE);
    cr_assert_eq(as.vmas[0]->gpa, g);
    cr_assert_eq(as.vmas[1]->start, BASE + 2 * PAGE);
    cr_assert_eq(as.vmas[1]->end, BASE + 4 * PAGE);
    cr_assert_eq(as.vmas[1]->gpa, g + 2 * PAGE,
                 "tail VMA must keep gpa(gva) = gpa + (gva - start)");
    cr_assert_null(vmm_as_find_vma(&as, BASE + PAGE));
    check_not_present(BASE + PAGE);
    check_pte(BASE, RW);
    check_pte(BASE + 2 * PAGE, RW);
    check_pte(BASE + 3 * PAGE, RW);
    cr_assert(as.tlb_flushes_asked > 0, "unmap must request a TLB flush");
}

Test(pagetable, munmap_returns_backing_to_the_allocator)
{
    map_ok(BASE, 4 * PAGE, RW);
    uint64_t used = pm.used_pages;
    cr_assert_eq(vmm_as_unmap(&as, BASE, 4 * PAGE), 0);
    cr_assert_eq(pm.used_pages, used - 4);
    cr_assert_eq(as.nr_vmas, 0);
}

Test(pagetable, munmap_over_holes_is_fine)
{
    map_ok(BASE, PAGE, RW);
    map_ok(BASE + 3 * PAGE, PAGE, RW);
    cr_assert_eq(vmm_as_unmap(&as, BASE - 10 * PAGE, 20 * PAGE), 0);
    cr_assert_eq(as.nr_vmas, 0);
    cr_assert_eq(vmm_as_unmap(&as, BASE, PAGE), 0, "unmapping nothing");
}

Test(pagetable, munmap_file_vma_split_keeps_file_offset)
{
    map_ok(BASE, 4 * PAGE, PROT_READ);
    vmm_as_set_file(&as, BASE, 4 * PAGE, 0x3000, 8, 1234, "/lib/x.so");
    cr_assert_eq(vmm_as_unmap(&as, BASE + PAGE, PAGE), 0);
    const struct vmm_vma *tail = vma_at(BASE + 2 * PAGE);
    cr_assert_eq(tail->file_off, 0x3000 + 2 * PAGE);
    cr_assert_eq(tail->ino, 1234);
    cr_assert_str_eq(tail->name, "/lib/x.so");
    cr_assert_str_eq(vma_at(BASE)->name, "/lib/x.so");
    cr_assert_neq(tail->name, vma_at(BASE)->name, "name must be copied");
}

Test(pagetable, mprotect_sub_range_splits_into_three)
{
    map_ok(BASE, 4 * PAGE, RW);
    gpa_t g = vma_at(BASE)->gpa;
    as.tlb_flushes_asked = 0;
    cr_assert_eq(vmm_as_protect(&as, BASE + PAGE, 2 * PAGE, PROT_READ), 0);
    cr_assert_eq(as.nr_vmas, 3);
    cr_assert_eq(as.vmas[0]->end, BASE + PAGE);
    cr_assert_eq(as.vmas[0]->prot, RW);
    cr_assert_eq(as.vmas[1]->start, BASE + PAGE);
    cr_assert_eq(as.vmas[1]->end, BASE + 3 * PAGE);
    cr_assert_eq(as.vmas[1]->prot, PROT_READ);
    cr_assert_eq(as.vmas[1]->gpa, g + PAGE);
    cr_assert_eq(as.vmas[2]->start, BASE + 3 * PAGE);
    cr_assert_eq(as.vmas[2]->prot, RW);
    cr_assert_eq(as.vmas[2]->gpa, g + 3 * PAGE);
    check_pte(BASE, RW);
    check_pte(BASE + PAGE, PROT_READ);
    check_pte(BASE + 2 * PAGE, PROT_READ);
    check_pte(BASE + 3 * PAGE, RW);
    cr_assert(as.tlb_flushes_asked > 0,
              "dropping PROT_WRITE must request a TLB flush");
}

Test(pagetable, mprotect_to_none_clears_present_and_flushes)
{
    map_ok(BASE, 2 * PAGE, RW);
    as.tlb_flushes_asked = 0;
    cr_assert_eq(vmm_as_protect(&as, BASE, 2 * PAGE, PROT_NONE), 0);
    check_not_present(BASE);
    check_not_present(BASE + PAGE);
    cr_assert(as.tlb_flushes_asked > 0);
    /* And back: present again, same backing. */
    gpa_t g = vma_at(BASE)->gpa;
    cr_assert_eq(vmm_as_protect(&as, BASE, 2 * PAGE, PROT_READ | PROT_EXEC),
                 0);
    check_pte(BASE, PROT_READ | PROT_EXEC);
    cr_assert_eq(vmm_pt_lookup(&as, BASE) & VMM_PTE_ADDR, g);
}

Test(pagetable, mprotect_dropping_exec_flushes)
{
    map_ok(BASE, PAGE, PROT_READ | PROT_EXEC);
    as.tlb_flushes_asked = 0;
    cr_assert_eq(vmm_as_protect(&as, BASE, PAGE, PROT_READ), 0);
    cr_assert(as.tlb_flushes_asked > 0, "gaining NX must request a TLB flush");
    check_pte(BASE, PROT_READ);
}

Test(pagetable, mprotect_over_a_hole_is_enomem_and_changes_nothing)
{
    map_ok(BASE, 2 * PAGE, RW);
    map_ok(BASE + 3 * PAGE, 2 * PAGE, RW);
    cr_assert_eq(vmm_as_protect(&as, BASE, 5 * PAGE, PROT_READ), -ENOMEM);
    cr_assert_eq(as.nr_vmas, 2);
    cr_assert_eq(as.vmas[0]->prot, RW);
    cr_assert_eq(as.vmas[1]->prot, RW);
    check_pte(BASE, RW);
    check_pte(BASE + 4 * PAGE, RW);
    /* Entirely unmapped, too. */
    cr_assert_eq(vmm_as_protect(&as, BASE + 2 * PAGE, PAGE, PROT_READ),
                 -ENOMEM);
}

Test(pagetable, mprotect_across_adjacent_vmas)
{
    map_ok(BASE, PAGE, RW);
    map_ok(BASE + PAGE, PAGE, PROT_READ);
    cr_assert_eq(vmm_as_protect(&as, BASE, 2 * PAGE, PROT_READ | PROT_EXEC),
                 0);
    check_pte(BASE, PROT_READ | PROT_EXEC);
    check_pte(BASE + PAGE, PROT_READ | PROT_EXEC);
}

Test(pagetable, find_free_is_top_down)
{
    gva_t below = 0x7ffff7fff000ULL, at = 0;
    cr_assert_eq(vmm_as_find_free(&as, 2 * PAGE, below, &at), 0);
    cr_assert_eq(at, below - 2 * PAGE);
    /* Length is rounded up to pages. */
    cr_assert_eq(vmm_as_find_free(&as, 1, below, &at), 0);
    cr_assert_eq(at, below - PAGE);
}

Test(pagetable, find_free_skips_vmas_and_small_gaps)
{
    gva_t below = 0x7ffff7fff000ULL, at = 0;
    /* A VMA right at the top, a one-page gap, another VMA. */
    map_ok(below - 2 * PAGE, 2 * PAGE, RW);
    map_ok(below - 5 * PAGE, 2 * PAGE, RW);
    cr_assert_eq(vmm_as_find_free(&as, PAGE, below, &at), 0);
    cr_assert_eq(at, below - 3 * PAGE, "the one-page gap fits one page");
    cr_assert_eq(vmm_as_find_free(&as, 2 * PAGE, below, &at), 0);
    cr_assert_eq(at, below - 7 * PAGE, "two pages go below the second VMA");
    cr_assert(vmm_as_range_free(&as, at, 2 * PAGE));
}

Test(pagetable, find_free_ignores_vmas_above_below)
{
    /* Not the mmap base itself: the stub's range (aspace.h) starts a page
     * above it, and no VMA may reach into it. */
    gva_t below = 0x7ffff0000000ULL, at = 0;
    map_ok(below, 4 * PAGE, RW); /* above the limit: irrelevant */
    cr_assert_eq(vmm_as_find_free(&as, PAGE, below, &at), 0);
    cr_assert_eq(at, below - PAGE);
    /* A VMA straddling `below` pushes the result under it. */
    map_ok(below - PAGE, 2 * PAGE, RW);
    cr_assert_eq(vmm_as_find_free(&as, PAGE, below, &at), 0);
    cr_assert_eq(at, below - 2 * PAGE);
}

Test(pagetable, find_free_enomem_when_full)
{
    gva_t at = 0;
    gva_t below = VMM_USER_MIN + 4 * PAGE;
    cr_assert_eq(vmm_as_find_free(&as, 4 * PAGE, below, &at), 0);
    cr_assert_eq(at, VMM_USER_MIN);
    cr_assert_eq(vmm_as_find_free(&as, 5 * PAGE, below, &at), -ENOMEM);
    map_ok(VMM_USER_MIN + PAGE, PAGE, RW);
    cr_assert_eq(vmm_as_find_free(&as, 2 * PAGE, below, &at), 0);
    cr_assert_eq(at, VMM_USER_MIN + 2 * PAGE);
    cr_assert_eq(vmm_as_find_free(&as, 3 * PAGE, below, &at), -ENOMEM);
}

Test(pagetable, range_free)
{
    map_ok(BASE, PAGE, RW);
    cr_assert_not(vmm_as_range_free(&as, BASE, PAGE));
    cr_assert_not(vmm_as_range_free(&as, BASE - PAGE, 2 * PAGE));
    cr_assert(vmm_as_range_free(&as, BASE + PAGE, PAGE));
    cr_assert(vmm_as_range_free(&as, BASE - PAGE, PAGE));
    cr_assert_not(vmm_as_range_free(&as, VMM_USER_END - PAGE, 2 * PAGE));
    cr_assert_not(vmm_as_range_free(&as, 0, PAGE), "below VMM_USER_MIN");
}

static void fill_pattern(gva_t gva, uint64_t len, uint8_t seed)
{
    for (uint64_t off = 0; off < len; off += PAGE) {
        uint8_t *h = host_of(gva + off);
        for (uint64_t i = 0; i < PAGE; i++)
            h[i] = (uint8_t)(seed + (off + i) * 7);
    }
}

static void check_pattern(gva_t gva, uint64_t len, uint8_t seed)
{
    for (uint64_t off = 0; off < len; off += PAGE) {
        const uint8_t *h = host_of(gva + off);
        for (uint64_t i = 0; i < PAGE; i++)
            cr_assert_eq(h[i], (uint8_t)(seed + (off + i) * 7),
                         "content lost at %#llx+%#llx",
                         (unsigned long long)gva,
                         (unsigned long long)(off + i));
    }
}

static void check_zero(gva_t gva, uint64_t len)
{
    for (uint64_t off = 0; off < len; off += PAGE) {
        const uint8_t *h = host_of(gva + off);
        for (uint64_t i = 0; i < PAGE; i++)
            cr_assert_eq(h[i], 0);
    }
}

Test(pagetable, remap_grows_in_place)
{
    map_ok(BASE, 2 * PAGE, RW);
    fill_pattern(BASE, 2 * PAGE, 3);
    gva_t out = 0;
    cr_assert_eq(vmm_as_remap(&as, BASE, 2 * PAGE, 5 * PAGE, false, false,
                              &out),
                 0);
    cr_assert_eq(out, BASE);
    check_pattern(BASE, 2 * PAGE, 3);
    check_zero(BASE + 2 * PAGE, 3 * PAGE);
    for (int i = 0; i < 5; i++)
        check_pte(BASE + i * PAGE, RW);
    cr_assert(vmm_as_find_vma(&as, BASE + 4 * PAGE) != NULL);
    cr_assert_null(vmm_as_find_vma(&as, BASE + 5 * PAGE));
}

Test(pagetable, remap_blocked_without_maymove_is_enomem)
{
    map_ok(BASE, 2 * PAGE, RW);
    map_ok(BASE + 2 * PAGE, PAGE, PROT_READ);
    gva_t out = 0;
    cr_assert_eq(vmm_as_remap(&as, BASE, 2 * PAGE, 4 * PAGE, false, false,
                              &out),
                 -ENOMEM);
    cr_assert_eq(as.nr_vmas, 2);
    cr_assert_eq(vma_at(BASE)->end, BASE + 2 * PAGE);
}

Test(pagetable, remap_moves_and_preserves_contents)
{
    map_ok(BASE, 2 * PAGE, RW);
    map_ok(BASE + 2 * PAGE, PAGE, PROT_READ); /* blocker */
    fill_pattern(BASE, 2 * PAGE, 9);
    fill_pattern(BASE + 2 * PAGE, PAGE, 77);
    gva_t out = 0;
    cr_assert_eq(vmm_as_remap(&as, BASE, 2 * PAGE, 4 * PAGE, true, false,
                              &out),
                 0);
    cr_assert_neq(out, BASE);
    cr_assert_eq(out % PAGE, 0);
    /* The new place has the old bytes, then zeroes. */
    check_pattern(out, 2 * PAGE, 9);
    check_zero(out + 2 * PAGE, 2 * PAGE);
    for (int i = 0; i < 4; i++)
        check_pte(out + i * PAGE, RW);
    /* The old place is gone; the blocker is untouched. */
    cr_assert_null(vmm_as_find_vma(&as, BASE));
    cr_assert_null(vmm_as_find_vma(&as, BASE + PAGE));
    check_not_present(BASE);
    check_pattern(BASE + 2 * PAGE, PAGE, 77);
    check_pte(BASE + 2 * PAGE, PROT_READ);
}

Test(pagetable, remap_fixed_moves_to_the_given_address)
{
    map_ok(BASE, 2 * PAGE, PROT_READ);
    fill_pattern(BASE, 2 * PAGE, 21);
    gva_t out = BASE + 100 * PAGE;
    map_ok(out + PAGE, PAGE, RW); /* replaced by the fixed move */
    cr_assert_eq(vmm_as_remap(&as, BASE, 2 * PAGE, 3 * PAGE, true, true,
                              &out),
                 0);
    cr_assert_eq(out, BASE + 100 * PAGE);
    check_pattern(out, 2 * PAGE, 21);
    check_zero(out + 2 * PAGE, PAGE);
    check_pte(out, PROT_READ);
    cr_assert_eq(vma_at(out)->prot, PROT_READ);
    cr_assert_null(vmm_as_find_vma(&as, BASE));
}

Test(pagetable, remap_fixed_overlapping_is_einval)
{
    map_ok(BASE, 4 * PAGE, RW);
    gva_t out = BASE + 2 * PAGE;
    cr_assert_eq(vmm_as_remap(&as, BASE, 4 * PAGE, 4 * PAGE, true, true,
                              &out),
                 -EINVAL);
    cr_assert_eq(vma_at(BASE)->end, BASE + 4 * PAGE);
}

Test(pagetable, remap_shrinks_in_place)
{
    map_ok(BASE, 4 * PAGE, RW);
    fill_pattern(BASE, 4 * PAGE, 5);
    uint64_t used = pm.used_pages;
    gva_t out = 0;
    cr_assert_eq(vmm_as_remap(&as, BASE, 4 * PAGE, PAGE, false, false,
                              &out),
                 0);
    cr_assert_eq(out, BASE);
    cr_assert_eq(vma_at(BASE)->end, BASE + PAGE);
    check_pattern(BASE, PAGE, 5);
    check_pte(BASE, RW);
    for (int i = 1; i < 4; i++)
        check_not_present(BASE + i * PAGE);
    cr_assert_null(vmm_as_find_vma(&as, BASE + PAGE));
    cr_assert_eq(pm.used_pages, used - 3);
}

Test(pagetable, remap_of_unmapped_is_efault)
{
    gva_t out = 0;
    cr_assert_eq(vmm_as_remap(&as, BASE, PAGE, 2 * PAGE, true, false, &out),
                 -EFAULT);
    cr_assert_eq(vmm_as_remap(&as, BASE + 1, PAGE, 2 * PAGE, true, false,
                              &out),
                 -EINVAL);
}

Test(pagetable, pt_map_raw_pages)
{
    gpa_t g = 0;
    cr_assert_eq(vmm_phys_alloc(&pm, 2, &g), 0);
    gva_t kva = 0xffffffff80000000ULL;
    cr_assert_eq(vmm_pt_map(&as, kva, g, 2, VMM_PTE_P | VMM_PTE_W), 0);
    cr_assert_eq(vmm_pt_lookup(&as, kva), g | VMM_PTE_P | VMM_PTE_W);
    cr_assert_eq(vmm_pt_lookup(&as, kva + PAGE),
                 (g + PAGE) | VMM_PTE_P | VMM_PTE_W);
    cr_assert_eq(vmm_pt_lookup(&as, kva + 2 * PAGE), 0);
    /* No VMA for the raw kernel mapping. */
    cr_assert_null(vmm_as_find_vma(&as, kva));
}

/* ---- 2 MiB entries -------------------------------------------------------- */

#define HUGE VMM_HUGE_SIZE
#define HBASE 0x40000000ULL /* 2 MiB-aligned */

/* The page-directory entry over gva, read through the tables. */
static uint64_t pde_of(gva_t gva)
{
    gpa_t table = as.pml4_gpa;
    for (int level = 3; level > 1; level--) {
        uint64_t e = ((uint64_t *)vmm_phys_hva(&pm, table))[(gva >> (12 + 9 * level)) & 511];
        if (!(e & VMM_PTE_P))
            return 0;
        table = e & VMM_PTE_ADDR;
    }
    return ((uint64_t *)vmm_phys_hva(&pm, table))[(gva >> 21) & 511];
}

static bool is_huge(gva_t gva) { return (pde_of(gva) & VMM_PTE_PS) != 0; }

Test(pagetable, big_mapping_backing_shares_the_2m_phase)
{
    /* The allocator's bump is not 2 MiB-aligned to begin with. */
    map_ok(BASE, PAGE, RW);
    map_ok(HBASE + 3 * PAGE, 3 * HUGE, RW);
    cr_assert_eq(backing(HBASE + 3 * PAGE) % HUGE, 3 * PAGE);
    /* A small one is not aligned (no waste). */
    map_ok(BASE + 16 * PAGE, 2 * PAGE, RW);
}

Test(pagetable, aligned_stretches_get_2m_entries)
{
    map_ok(HBASE - PAGE, 2 * HUGE + 2 * PAGE, RW);
    cr_assert(is_huge(HBASE));
    cr_assert(is_huge(HBASE + HUGE));
    cr_assert_not(is_huge(HBASE - PAGE), "the edge pages are 4 KiB");
    for (gva_t g = HBASE - PAGE; g < HBASE + 2 * HUGE + PAGE; g += 97 * PAGE)
        check_pte(g, RW);
    check_pte(HBASE + 2 * HUGE, RW);
}

Test(pagetable, protect_inside_a_2m_page_splits_it)
{
    map_ok(HBASE, 2 * HUGE, RW);
    gva_t mid = HBASE + 5 * PAGE;
    cr_assert_eq(vmm_as_protect(&as, mid, PAGE, PROT_READ), 0);
    cr_assert_not(is_huge(HBASE));
    cr_assert(is_huge(HBASE + HUGE), "the other 2 MiB page stays whole");
    check_pte(mid, PROT_READ);
    check_pte(mid - PAGE, RW);
    check_pte(mid + PAGE, RW);
    check_pte(HBASE + HUGE - PAGE, RW);
    /* The whole range back to one protection: still correct entries. */
    cr_assert_eq(vmm_as_protect(&as, HBASE, 2 * HUGE, PROT_READ), 0);
    for (gva_t g = HBASE; g < HBASE + 2 * HUGE; g += 61 * PAGE)
        check_pte(g, PROT_READ);
    cr_assert(as.tlb_flushes_asked > 0);
}

Test(pagetable, unmap_inside_a_2m_page_keeps_its_neighbours)
{
    map_ok(HBASE, 2 * HUGE, RW);
    uint8_t *h = host_of(HBASE + 9 * PAGE);
    h[0] = 0x5a;
    cr_assert_eq(vmm_as_unmap(&as, HBASE + 8 * PAGE, PAGE), 0);
    cr_assert_eq(vmm_pt_lookup(&as, HBASE + 8 * PAGE), 0);
    check_pte(HBASE + 7 * PAGE, RW);
    check_pte(HBASE + 9 * PAGE, RW);
    cr_assert_eq(*host_of(HBASE + 9 * PAGE), 0x5a, "data kept");
    /* A whole 2 MiB page goes at once. */
    cr_assert_eq(vmm_as_unmap(&as, HBASE + HUGE, HUGE), 0);
    cr_assert_eq(pde_of(HBASE + HUGE), 0);
    cr_assert_eq(vmm_pt_lookup(&as, HBASE + HUGE + 77 * PAGE), 0);
}

Test(pagetable, prot_none_clears_2m_entries)
{
    map_ok(HBASE, 2 * HUGE, RW);
    cr_assert_eq(vmm_as_protect(&as, HBASE, HUGE + PAGE, PROT_NONE), 0);
    cr_assert_eq(pde_of(HBASE), 0);
    cr_assert_eq(vmm_pt_lookup(&as, HBASE + HUGE), 0);
    check_pte(HBASE + HUGE + PAGE, RW);
}

Test(pagetable, freed_big_extent_is_reused_at_the_right_phase)
{
    map_ok(HBASE, 3 * HUGE, RW);
    gpa_t first = backing(HBASE);
    cr_assert_eq(vmm_as_unmap(&as, HBASE, 3 * HUGE), 0);
    map_ok(HBASE + 5 * PAGE, 2 * HUGE, RW);
    gpa_t again = backing(HBASE + 5 * PAGE);
    cr_assert_eq(again % HUGE, 5 * PAGE);
    cr_assert_lt(again, first + 3 * HUGE, "taken from the freed extent");
}
