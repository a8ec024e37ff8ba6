/*
 * test_lazy.c - lazily backed VMAs (vmm/aspace.c, VMM_VMA_LAZY): a mapping
 * far larger than the guest-physical reservation, backed 2 MiB stretch by
 * stretch as it is touched, through a guest fault or the copy path; and
 * what protect, unmap, fork and mremap do with such a mapping.
 */
#include <criterion/criterion.h>

#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>

#include "aspace.h"

#include "aspace_fixture.h"

#define BIG (1ULL << 40) /* 1 TiB: a thousand times the reservation */
#define AT 0x100000000000ULL
#define HUGE VMM_HUGE_SIZE

TestSuite(lazy, .init = setup, .fini = teardown);

static void map_lazy(gva_t gva, uint64_t len, int prot)
{
    cr_assert_eq(vmm_as_map(&as, gva, len, prot, VMM_VMA_LAZY, NULL), 0);
}

static bool is_lazy(gva_t gva)
{
    const struct vmm_vma *v = vmm_as_find_vma(&as, gva);
    cr_assert_not_null(v);
    return v->flags & VMM_VMA_LAZY;
}

Test(lazy, map_takes_no_memory_and_no_ptes)
{
    uint64_t used = pm.used_pages;
    map_lazy(AT, BIG, RW);
    cr_assert(is_lazy(AT));
    /* only page-table pages, none for a lazy VMA */
    cr_assert_eq(pm.used_pages, used);
    cr_assert_eq(vmm_pt_lookup(&as, AT + 12345 * PAGE), 0);
    /* an eager mapping that size cannot be had */
    cr_assert_eq(vmm_as_map(&as, AT + 2 * BIG, BIG, RW, 0, NULL), -ENOMEM);
}

Test(lazy, guest_fault_backs_one_stretch)
{
    map_lazy(AT, BIG, RW);
    gva_t g = AT + 5 * HUGE + 3 * PAGE;
    cr_assert_eq(vmm_as_guest_fault(&as, g, true), 1);
    const struct vmm_vma *v = vmm_as_find_vma(&as, g);
    cr_assert(!(v->flags & VMM_VMA_LAZY));
    cr_assert_eq(v->start, AT + 5 * HUGE);
    cr_assert_eq(v->end, AT + 6 * HUGE);
    cr_assert(vmm_pt_lookup(&as, g) & VMM_PTE_P);
    cr_assert(is_lazy(AT));
    cr_assert(is_lazy(AT + 6 * HUGE));
    cr_assert_eq(as.nr_vmas, 3);
    uint8_t byte = 0xaa;
    cr_assert_eq(vmm_as_copy_in(&as, &byte, g, 1), 0);
    cr_assert_eq(byte, 0, "a fresh stretch reads zeros");
}

Test(lazy, neighbouring_stretches_join)
{
    map_lazy(AT, BIG, RW);
    for (int i = 0; i < 4; i++)
        cr_assert_eq(vmm_as_guest_fault(&as, AT + (uint64_t)i * HUGE, false),
                     1);
    const struct vmm_vma *v = vmm_as_find_vma(&as, AT);
    cr_assert_eq(v->start, AT);
    cr_assert_eq(v->end, AT + 4 * HUGE, "one VMA, as Linux shows it");
    cr_assert_eq(as.nr_vmas, 2);
}

Test(lazy, protection_is_kept)
{
    map_lazy(AT, BIG, PROT_NONE);
    cr_assert_eq(vmm_as_guest_fault(&as, AT, false), -1, "SIGSEGV");
    cr_assert_eq(vmm_as_protect(&as, AT + HUGE, HUGE, PROT_READ), 0);
    cr_assert(is_lazy(AT + HUGE), "mprotect backs nothing");
    cr_assert_eq(vmm_as_guest_fault(&as, AT + HUGE, true), -1, "write");
    cr_assert_eq(vmm_as_guest_fault(&as, AT + HUGE, false), 1, "read");
    uint64_t pte = vmm_pt_lookup(&as, AT + HUGE);
    cr_assert(pte & VMM_PTE_P);
    cr_assert(!(pte & VMM_PTE_W));
}

Test(lazy, copy_path_backs_through_fault_in)
{
    map_lazy(AT, BIG, RW);
    const char msg[] = "across two stretches";
    gva_t g = AT + 7 * HUGE - 4;
    cr_assert_eq(vmm_as_copy_out(&as, g, msg, sizeof(msg)), -EFAULT);
    cr_assert(vmm_as_fault_in(&as, g, sizeof(msg), PROT_WRITE));
    cr_assert_eq(vmm_as_copy_out(&as, g, msg, sizeof(msg)), 0);
    char back[sizeof(msg)];
    cr_assert_eq(vmm_as_copy_in(&as, back, g, sizeof(back)), 0);
    cr_assert_str_eq(back, msg);
    /* nothing to back where the protection refuses the access */
    map_lazy(AT + 2 * BIG, BIG, PROT_READ);
    cr_assert(!vmm_as_fault_in(&as, AT + 2 * BIG, 8, PROT_WRITE));
    cr_assert(is_lazy(AT + 2 * BIG));
}

Test(lazy, unmap_returns_backing)
{
    uint64_t used = pm.used_pages;
    map_lazy(AT, BIG, RW);
    cr_assert_eq(vmm_as_guest_fault(&as, AT + HUGE, true), 1);
    cr_assert_gt(pm.used_pages, used);
    cr_assert_eq(vmm_as_unmap(&as, AT, BIG), 0);
    cr_assert_eq(as.nr_vmas, 0);
    /* page-table pages stay (never reused); the stretch is free again */
    cr_assert_lt(pm.used_pages, used + HUGE / PAGE);
}

Test(lazy, fork_copies_backed_stretches_only)
{
    map_lazy(AT, BIG, RW);
    cr_assert_eq(vmm_as_guest_fault(&as, AT + 9 * HUGE, true), 1);
    uint32_t word = 0x5eed;
    cr_assert_eq(vmm_as_copy_out(&as, AT + 9 * HUGE + 64, &word, 4), 0);
    struct vmm_aspace child;
    cr_assert_eq(vmm_as_init(&child, &pm), 0);
    cr_assert_eq(vmm_as_clone(&child, &as), 0);
    cr_assert_eq(child.nr_vmas, as.nr_vmas);
    uint32_t got = 0;
    cr_assert_eq(vmm_as_copy_in(&child, &got, AT + 9 * HUGE + 64, 4), 0);
    cr_assert_eq(got, word);
    const struct vmm_vma *c = vmm_as_find_vma(&child, AT);
    cr_assert(c->flags & VMM_VMA_LAZY);
    vmm_as_destroy(&child);
}

Test(lazy, remap_moves_contents)
{
    map_lazy(AT, BIG, RW);
    cr_assert_eq(vmm_as_guest_fault(&as, AT + 3 * HUGE, true), 1);
    uint64_t word = 0x1122334455667788ULL;
    cr_assert_eq(vmm_as_copy_out(&as, AT + 3 * HUGE + 8, &word, 8), 0);
    gva_t to = AT + 4 * BIG;
    cr_assert_eq(vmm_as_remap(&as, AT, BIG, 2 * BIG, true, true, &to), 0);
    cr_assert_eq(to, AT + 4 * BIG);
    cr_assert_null(vmm_as_find_vma(&as, AT));
    uint64_t got = 0;
    cr_assert_eq(vmm_as_copy_in(&as, &got, to + 3 * HUGE + 8, 8), 0);
    cr_assert_eq(got, word);
    cr_assert(is_lazy(to));
    cr_assert(is_lazy(to + BIG + HUGE));
}

Test(lazy, shared_memory_is_never_lazy)
{
    cr_assert_eq(vmm_as_map(&as, AT, 4 * PAGE, RW,
                            VMM_VMA_LAZY | VMM_VMA_SHARED, NULL),
                 0);
    cr_assert(!is_lazy(AT));
}
