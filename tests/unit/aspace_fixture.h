/*
 * aspace_fixture.h - one guest address space over a 1 GiB host
 * reservation, set up and torn down around each test of a suite that
 * includes it (test_pagetable.c, test_guestmem.c).
 */
#ifndef TEST_ASPACE_FIXTURE_H
#define TEST_ASPACE_FIXTURE_H

#include <criterion/criterion.h>
#include <sys/mman.h>

#include "aspace.h"

#define RESERVE_BYTES (1ULL << 30)
#define FIRST_GPA 0x10000ULL
#define PAGE VMM_PAGE_SIZE
#define RW (PROT_READ | PROT_WRITE)

static uint8_t *hva;
static struct vmm_physmem pm;
static struct vmm_aspace as;

static void setup(void)
{
    hva = mmap(NULL, RESERVE_BYTES, PROT_READ | PROT_WRITE,
               MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    cr_assert_neq(hva, MAP_FAILED);
    cr_assert_eq(vmm_phys_init(&pm, hva, RESERVE_BYTES, FIRST_GPA), 0);
    cr_assert_eq(vmm_as_init(&as, &pm), 0);
}

static void teardown(void)
{
    vmm_as_destroy(&as);
    vmm_phys_destroy(&pm);
    munmap(hva, RESERVE_BYTES);
}

#endif
