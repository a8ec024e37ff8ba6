/*
 * test_page_store.c - the run's store of rewritten code pages
 * (vmm/page_store.c): a page is stored once whatever the number of
 * processes that put it, a page that differs by one byte is another,
 * and what the store's fd holds at a page's offset is that page.
 */
#include <criterion/criterion.h>

#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include "aspace.h"

#define PAGE VMM_PAGE_SIZE

static void fill(uint8_t *page, unsigned seed)
{
    for (size_t i = 0; i < PAGE; i++)
        page[i] = (uint8_t)(seed * 31 + i * 7);
}

static void stored_bytes_are(uint64_t off, const uint8_t *want)
{
    uint8_t got[PAGE];
    cr_assert_geq(vmm_page_store_fd(), 0);
    cr_assert_eq(pread(vmm_page_store_fd(), got, PAGE, (off_t)off), PAGE);
    cr_assert_eq(memcmp(got, want, PAGE), 0);
}

Test(page_store, same_bytes_one_page)
{
    static uint8_t a[PAGE], b[PAGE];
    fill(a, 1);
    memcpy(b, a, PAGE);
    uint64_t off_a, off_b;
    cr_assert_eq(vmm_page_store_put(a, &off_a), 0);
    cr_assert_eq(vmm_page_store_put(b, &off_b), 0);
    cr_assert_eq(off_a, off_b);
    cr_assert_eq(off_a % PAGE, 0);
    stored_bytes_are(off_a, a);
}

Test(page_store, one_byte_apart_two_pages)
{
    static uint8_t a[PAGE], b[PAGE];
    fill(a, 2);
    memcpy(b, a, PAGE);
    b[PAGE - 1] ^= 0x5a;
    uint64_t off_a, off_b;
    cr_assert_eq(vmm_page_store_put(a, &off_a), 0);
    cr_assert_eq(vmm_page_store_put(b, &off_b), 0);
    cr_assert_neq(off_a, off_b);
    stored_bytes_are(off_a, a);
    stored_bytes_are(off_b, b);
}

Test(page_store, many_pages_found_again)
{
    static uint8_t page[PAGE];
    uint64_t offs[300];
    for (unsigned i = 0; i < 300; i++) { /* the table grows past 64 */
        fill(page, 100 + i);
        cr_assert_eq(vmm_page_store_put(page, &offs[i]), 0);
    }
    for (unsigned i = 0; i < 300; i++) {
        uint64_t again;
        fill(page, 100 + i);
        cr_assert_eq(vmm_page_store_put(page, &again), 0);
        cr_assert_eq(again, offs[i]);
        stored_bytes_are(offs[i], page);
    }
}
