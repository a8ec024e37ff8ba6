/*
 * test_pt_pages.c - page tables kept in hvrun's memory (vmm/pt_pages.c,
 * vmm_physmem.tables_private): the set itself, and an address space
 * whose tables are private giving the same translations and the same
 * memory in use as one whose tables are in guest memory.
 */
#include <criterion/criterion.h>

#include <stdint.h>
#include <string.h>
#include <sys/mman.h>

#include "aspace.h"
#include "pt_pages.h"

#define RESERVE (1ULL << 30)
#define FIRST_GPA 0x10000ULL
#define PAGE VMM_PAGE_SIZE
#define RW (PROT_READ | PROT_WRITE)

Test(pt_pages, add_find_and_grow)
{
    struct vmm_pt_pages *t = vmm_pt_pages_new();
    cr_assert_not_null(t);
    cr_assert_null(vmm_pt_pages_find(t, 0x1000));
    uint64_t *first = vmm_pt_pages_add(t, 0x1000);
    cr_assert_not_null(first);
    first[7] = 42;
    for (uint64_t g = 0x2000; g < 0x2000 + 5000 * PAGE; g += PAGE) {
        uint64_t *p = vmm_pt_pages_add(t, g);
        cr_assert_not_null(p);
        p[0] = g;
    }
    cr_assert_eq(vmm_pt_pages_find(t, 0x1000), first);
    cr_assert_eq(first[7], 42);
    for (uint64_t g = 0x2000; g < 0x2000 + 5000 * PAGE; g += PAGE)
        cr_assert_eq(vmm_pt_pages_find(t, g)[0], g);
    cr_assert_null(vmm_pt_pages_find(t, 0x2000 + 5000 * PAGE));
    vmm_pt_pages_free(t);
}

Test(pt_pages, pages_come_back_zeroed)
{
    struct vmm_pt_pages *t = vmm_pt_pages_new();
    for (uint64_t g = PAGE; g <= 64 * PAGE; g += PAGE)
        memset(vmm_pt_pages_add(t, g), 0xff, PAGE);
    vmm_pt_pages_free(t); /* into the pool */
    t = vmm_pt_pages_new();
    for (uint64_t g = PAGE; g <= 64 * PAGE; g += PAGE) {
        const uint64_t *p = vmm_pt_pages_add(t, g);
        for (size_t i = 0; i < PAGE / 8; i++)
            cr_assert_eq(p[i], 0);
    }
    /* the same address again (an allocator that gave it back) */
    memset(vmm_pt_pages_find(t, PAGE), 0xff, PAGE);
    cr_assert_eq(vmm_pt_pages_add(t, PAGE)[3], 0);
    vmm_pt_pages_free(t);
    vmm_pt_pages_free(NULL);
}

struct space {
    uint8_t *hva;
    struct vmm_physmem pm;
    struct vmm_aspace as;
};

static void space_init(struct space *s, bool private_tables)
{
    s->hva = mmap(NULL, RESERVE, RW,
                  MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    cr_assert_neq(s->hva, MAP_FAILED);
    cr_assert_eq(vmm_phys_init(&s->pm, s->hva, RESERVE, FIRST_GPA), 0);
    s->pm.tables_private = private_tables;
    cr_assert_eq(vmm_as_init(&s->as, &s->pm), 0);
}

static void space_fini(struct space *s)
{
    vmm_as_destroy(&s->as);
    vmm_phys_destroy(&s->pm);
    munmap(s->hva, RESERVE);
}

/* The same calls on both spaces, each with the same result. */
static void both_map(struct space *s, gva_t gva, uint64_t len, int prot)
{
    for (int i = 0; i < 2; i++)
        cr_assert_eq(vmm_as_map(&s[i].as, gva, len, prot, 0, NULL), 0);
}

static void both_protect(struct space *s, gva_t gva, uint64_t len, int prot)
{
    for (int i = 0; i < 2; i++)
        cr_assert_eq(vmm_as_protect(&s[i].as, gva, len, prot), 0);
}

static void both_unmap(struct space *s, gva_t gva, uint64_t len)
{
    for (int i = 0; i < 2; i++)
        cr_assert_eq(vmm_as_unmap(&s[i].as, gva, len), 0);
}

static void same_translations(struct space *s, gva_t lo, gva_t hi)
{
    for (gva_t g = lo; g < hi; g += PAGE)
        cr_assert_eq(vmm_pt_lookup(&s[0].as, g), vmm_pt_lookup(&s[1].as, g),
                     "%#llx", (unsigned long long)g);
    cr_assert_eq(s[0].pm.used_pages, s[1].pm.used_pages);
}

Test(pt_pages, private_tables_translate_as_guest_ones)
{
    struct space s[2];
    space_init(&s[0], false);
    space_init(&s[1], true);
    cr_assert_eq(s[0].as.pml4_gpa, s[1].as.pml4_gpa);
    const gva_t base = 0x40000000ULL; /* 1 GiB: 2 MiB entries fit */
    both_map(s, base, 8ULL << 20, RW);
    both_map(s, 0x400000, 5 * PAGE, PROT_READ | PROT_EXEC);
    both_map(s, 0x7ffff7000000ULL, 16 * PAGE, RW);
    same_translations(s, base, base + (8ULL << 20));
    /* a 2 MiB entry split by a change inside it, then part unmapped */
    both_protect(s, base + (2ULL << 20) + 3 * PAGE, 2 * PAGE, PROT_READ);
    both_unmap(s, base + (4ULL << 20) + 7 * PAGE, 9 * PAGE);
    same_translations(s, base, base + (8ULL << 20));
    same_translations(s, 0x400000, 0x400000 + 8 * PAGE);
    same_translations(s, 0x7ffff7000000ULL, 0x7ffff7000000ULL + 20 * PAGE);
    /* the private space never wrote its tables' guest pages */
    const uint64_t *pml4 = vmm_phys_hva(&s[1].pm, s[1].as.pml4_gpa);
    for (int i = 0; i < 512; i++)
        cr_assert_eq(pml4[i], 0);
    space_fini(&s[0]);
    space_fini(&s[1]);
}
