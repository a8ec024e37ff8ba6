/*
 * test_physalloc.c - the guest-physical allocator of vmm/aspace.c:
 * contiguous page-aligned extents, first-fit reuse with coalescing, zeroed
 * memory, the reservation limit and the grow hook.
 */
#include <criterion/criterion.h>

#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>

#include "aspace.h"

#define RESERVE_BYTES (1ULL << 30)
#define FIRST_GPA 0x10000ULL
#define PAGE VMM_PAGE_SIZE

static uint8_t *hva;
static struct vmm_physmem pm;

static void setup(void)
{
    hva = mmap(NULL, RESERVE_BYTES, PROT_READ | PROT_WRITE,
               MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    cr_assert_neq(hva, MAP_FAILED, "mmap of the 1 GiB reservation failed");
    cr_assert_eq(vmm_phys_init(&pm, hva, RESERVE_BYTES, FIRST_GPA), 0);
}

static void teardown(void)
{
    vmm_phys_destroy(&pm);
    munmap(hva, RESERVE_BYTES);
}

TestSuite(physalloc, .init = setup, .fini = teardown);

static gpa_t alloc_ok(uint64_t npages)
{
    gpa_t g = 0;
    int rc = vmm_phys_alloc(&pm, npages, &g);
    cr_assert_eq(rc, 0, "vmm_phys_alloc(%llu) = %d",
                 (unsigned long long)npages, rc);
    return g;
}

static bool all_zero(gpa_t gpa, uint64_t bytes)
{
    const uint8_t *p = vmm_phys_hva(&pm, gpa);
    for (uint64_t i = 0; i < bytes; i++)
        if (p[i])
            return false;
    return true;
}

Test(physalloc, first_allocation_starts_at_first_gpa)
{
    gpa_t g = alloc_ok(1);
    cr_assert_eq(g, FIRST_GPA);
    cr_assert_eq(pm.used_pages, 1);
}

Test(physalloc, allocations_are_contiguous_and_page_aligned)
{
    gpa_t a = alloc_ok(3);
    gpa_t b = alloc_ok(5);
    gpa_t c = alloc_ok(1);
    cr_assert_eq(a % PAGE, 0);
    cr_assert_eq(b % PAGE, 0);
    cr_assert_eq(c % PAGE, 0);
    /* Fresh extents come from the bump pointer, back to back. */
    cr_assert_eq(b, a + 3 * PAGE);
    cr_assert_eq(c, b + 5 * PAGE);
    cr_assert_eq(pm.used_pages, 9);
    /* Every byte of an extent is usable host memory at hva_base + gpa. */
    cr_assert_eq(vmm_phys_hva(&pm, b), hva + b);
    memset(vmm_phys_hva(&pm, b), 0x5a, 5 * PAGE);
    cr_assert(all_zero(a, 3 * PAGE), "neighbour a was touched");
    cr_assert(all_zero(c, PAGE), "neighbour c was touched");
}

Test(physalloc, zero_pages_is_einval)
{
    gpa_t g = 0;
    cr_assert_eq(vmm_phys_alloc(&pm, 0, &g), -EINVAL);
}

Test(physalloc, fresh_memory_is_zero)
{
    gpa_t a = alloc_ok(4);
    cr_assert(all_zero(a, 4 * PAGE));
}

Test(physalloc, free_then_alloc_reuses_first_fit)
{
    gpa_t a = alloc_ok(4);
    gpa_t b = alloc_ok(4);
    vmm_phys_free(&pm, a, 4);
    cr_assert_eq(pm.used_pages, 4);
    /* Smaller requests are carved from the front of the free extent. */
    cr_assert_eq(alloc_ok(2), a);
    cr_assert_eq(alloc_ok(2), a + 2 * PAGE);
    /* The hole is used up: the next one comes after b. */
    cr_assert_eq(alloc_ok(1), b + 4 * PAGE);
    cr_assert_eq(pm.nr_free, 0);
}

Test(physalloc, too_small_hole_is_skipped)
{
    gpa_t a = alloc_ok(2);
    gpa_t b = alloc_ok(1);
    vmm_phys_free(&pm, a, 2);
    /* 3 pages do not fit the 2-page hole. */
    cr_assert_eq(alloc_ok(3), b + PAGE);
    cr_assert_eq(alloc_ok(2), a);
}

Test(physalloc, free_coalesces_neighbours)
{
    gpa_t a = alloc_ok(2);
    gpa_t b = alloc_ok(3);
    gpa_t c = alloc_ok(2);
    gpa_t guard = alloc_ok(1);
    (void)guard;
    vmm_phys_free(&pm, a, 2);
    vmm_phys_free(&pm, c, 2);
    cr_assert_eq(pm.nr_free, 2, "two separate holes expected");
    /* Freeing the middle joins all three into one 7-page extent. */
    vmm_phys_free(&pm, b, 3);
    cr_assert_eq(pm.nr_free, 1);
    cr_assert_eq(pm.free_list[0].gpa, a);
    cr_assert_eq(pm.free_list[0].pages, 7);
    /* ...which a 7-page allocation now gets in one piece. */
    cr_assert_eq(alloc_ok(7), a);
    cr_assert_eq(pm.nr_free, 0);
}

Test(physalloc, free_coalesces_with_previous_and_next_separately)
{
    gpa_t a = alloc_ok(1);
    gpa_t b = alloc_ok(1);
    gpa_t c = alloc_ok(1);
    gpa_t d = alloc_ok(1);
    alloc_ok(1); /* guard */
    vmm_phys_free(&pm, a, 1);
    vmm_phys_free(&pm, b, 1); /* merges into a's extent (previous) */
    cr_assert_eq(pm.nr_free, 1);
    vmm_phys_free(&pm, d, 1);
    vmm_phys_free(&pm, c, 1); /* joins both */
    cr_assert_eq(pm.nr_free, 1);
    cr_assert_eq(pm.free_list[0].gpa, a);
    cr_assert_eq(pm.free_list[0].pages, 4);
}

Test(physalloc, free_list_stays_sorted)
{
    gpa_t g[6];
    for (int i = 0; i < 6; i++)
        g[i] = alloc_ok(1);
    vmm_phys_free(&pm, g[4], 1);
    vmm_phys_free(&pm, g[0], 1);
    vmm_phys_free(&pm, g[2], 1);
    cr_assert_eq(pm.nr_free, 3);
    cr_assert_eq(pm.free_list[0].gpa, g[0]);
    cr_assert_eq(pm.free_list[1].gpa, g[2]);
    cr_assert_eq(pm.free_list[2].gpa, g[4]);
}

Test(physalloc, freed_memory_reads_back_zero)
{
    gpa_t a = alloc_ok(3);
    memset(vmm_phys_hva(&pm, a), 0xa5, 3 * PAGE);
    vmm_phys_free(&pm, a, 3);
    /* Zero right after the free... */
    cr_assert(all_zero(a, 3 * PAGE), "freed pages still hold data");
    /* ...and when handed out again. */
    cr_assert_eq(alloc_ok(3), a);
    cr_assert(all_zero(a, 3 * PAGE), "reallocated pages not zero");
}

Test(physalloc, enomem_past_the_reservation)
{
    uint64_t avail = (RESERVE_BYTES - FIRST_GPA) / PAGE;
    gpa_t g = 0;
    cr_assert_eq(vmm_phys_alloc(&pm, avail + 1, &g), -ENOMEM);
    cr_assert_eq(pm.used_pages, 0, "a failed allocation changed used_pages");
    gpa_t last = alloc_ok(avail - 1);
    cr_assert_eq(last, FIRST_GPA);
    gpa_t one = alloc_ok(1);
    cr_assert_eq(one + PAGE, RESERVE_BYTES, "last page ends the reservation");
    cr_assert_eq(vmm_phys_alloc(&pm, 1, &g), -ENOMEM);
    /* Once something is freed, it can be had again. */
    vmm_phys_free(&pm, one, 1);
    cr_assert_eq(alloc_ok(1), one);
}

Test(physalloc, huge_request_does_not_overflow)
{
    gpa_t g = 0;
    cr_assert_eq(vmm_phys_alloc(&pm, UINT64_MAX / PAGE + 2, &g), -ENOMEM);
    cr_assert_eq(vmm_phys_alloc(&pm, UINT64_MAX, &g), -ENOMEM);
    cr_assert_eq(pm.bump, FIRST_GPA);
}

/* ---- the grow hook (memslot registration) -------------------------------- */

static int grow_calls;
static gpa_t grow_last_top;
static int grow_result;

static int grow_hook(void *ctx, gpa_t new_top)
{
    struct vmm_physmem *p = ctx;
    grow_calls++;
    grow_last_top = new_top;
    if (grow_result < 0)
        return grow_result;
    /* Cover in 1 MiB steps, as a memslot backend would. */
    p->covered_top = (new_top + (1ULL << 20) - 1) & ~((1ULL << 20) - 1);
    return 0;
}

Test(physalloc, grow_hook_called_only_past_covered_top)
{
    pm.grow = grow_hook;
    pm.grow_ctx = &pm;
    grow_calls = 0;
    grow_result = 0;
    alloc_ok(1);
    cr_assert_eq(grow_calls, 1);
    cr_assert_eq(grow_last_top, FIRST_GPA + PAGE);
    alloc_ok(10); /* still under the 1 MiB covered */
    cr_assert_eq(grow_calls, 1);
    alloc_ok(256); /* crosses 1 MiB */
    cr_assert_eq(grow_calls, 2);
    cr_assert_eq(grow_last_top, FIRST_GPA + 267 * PAGE);
}

Test(physalloc, grow_hook_failure_is_returned_and_nothing_allocated)
{
    pm.grow = grow_hook;
    pm.grow_ctx = &pm;
    grow_calls = 0;
    grow_result = -ENOSPC;
    gpa_t g = 0;
    cr_assert_eq(vmm_phys_alloc(&pm, 1, &g), -ENOSPC);
    cr_assert_eq(pm.used_pages, 0);
    cr_assert_eq(pm.bump, FIRST_GPA);
}
