/*
 * test_guestmem.c - the checked copy path of vmm/aspace.c (copy_in/out,
 * strncpy_in, host_iov, poke, fill_zero): ranges across VMAs, protections,
 * overflow and the user-address limit.
 */
#include <criterion/criterion.h>

#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>

#include "aspace.h"

#include "aspace_fixture.h"

#define A 0x10000000ULL /* two adjacent VMAs: [A, A+P) and [A+P, A+3P) */

TestSuite(guestmem, .init = setup, .fini = teardown);

static void map_ok(gva_t gva, uint64_t len, int prot)
{
    cr_assert_eq(vmm_as_map(&as, gva, len, prot, 0, NULL), 0);
}

static uint8_t *host_of(gva_t gva)
{
    const struct vmm_vma *v = vmm_as_find_vma(&as, gva);
    cr_assert_not_null(v);
    return vmm_phys_hva(&pm, v->gpa + (gva - v->start));
}

/* Two adjacent VMAs whose backings are NOT physically adjacent, so a copy
 * that treats the range as one host span would be caught. */
static void map_two_adjacent(int prot1, int prot2)
{
    map_ok(A, PAGE, prot1);
    map_ok(0x20000000ULL, PAGE, RW); /* spacer in physical memory */
    map_ok(A + PAGE, 2 * PAGE, prot2);
    const struct vmm_vma *v1 = vmm_as_find_vma(&as, A);
    const struct vmm_vma *v2 = vmm_as_find_vma(&as, A + PAGE);
    cr_assert_neq(v1, v2);
    cr_assert_neq(v1->gpa + PAGE, v2->gpa, "test setup: backings adjacent");
}

Test(guestmem, copy_out_and_in_across_two_vmas)
{
    map_two_adjacent(RW, RW);
    uint8_t src[6000], back[6000];
    for (size_t i = 0; i < sizeof(src); i++)
        src[i] = (uint8_t)(i * 13 + 1);
    gva_t at = A + PAGE - 1000;
    cr_assert_eq(vmm_as_copy_out(&as, at, src, sizeof(src)), 0);
    /* The bytes landed in both backings at the right places. */
    cr_assert_eq(memcmp(host_of(at), src, 1000), 0);
    cr_assert_eq(memcmp(host_of(A + PAGE), src + 1000, sizeof(src) - 1000),
                 0);
    memset(back, 0, sizeof(back));
    cr_assert_eq(vmm_as_copy_in(&as, back, at, sizeof(back)), 0);
    cr_assert_eq(memcmp(back, src, sizeof(src)), 0);
}

Test(guestmem, copy_whole_vma_exactly)
{
    map_ok(A, PAGE, RW);
    uint8_t buf[PAGE];
    memset(buf, 0x42, sizeof(buf));
    cr_assert_eq(vmm_as_copy_out(&as, A, buf, PAGE), 0);
    cr_assert_eq(host_of(A)[PAGE - 1], 0x42);
    cr_assert_eq(vmm_as_copy_in(&as, buf, A, PAGE), 0);
}

Test(guestmem, unmapped_is_efault)
{
    uint8_t buf[16] = {0};
    cr_assert_eq(vmm_as_copy_in(&as, buf, A, 1), -EFAULT);
    cr_assert_eq(vmm_as_copy_out(&as, A, buf, 1), -EFAULT);
    cr_assert_eq(vmm_as_copy_in(&as, buf, 0, 8), -EFAULT, "NULL");
}

Test(guestmem, range_running_into_a_hole_is_efault)
{
    map_ok(A, PAGE, RW);
    uint8_t buf[32] = {0};
    cr_assert_eq(vmm_as_copy_in(&as, buf, A + PAGE - 16, 32), -EFAULT);
    cr_assert_eq(vmm_as_copy_out(&as, A + PAGE - 16, buf, 32), -EFAULT);
    /* Starting in the hole before a VMA, too. */
    cr_assert_eq(vmm_as_copy_in(&as, buf, A - 16, 32), -EFAULT);
}

Test(guestmem, copy_out_into_read_only_is_efault)
{
    map_ok(A, PAGE, PROT_READ);
    uint8_t buf[8] = {1, 2, 3, 4, 5, 6, 7, 8};
    cr_assert_eq(vmm_as_copy_out(&as, A, buf, sizeof(buf)), -EFAULT);
    cr_assert_eq(host_of(A)[0], 0, "nothing written");
    /* Reading it is fine. */
    cr_assert_eq(vmm_as_copy_in(&as, buf, A, sizeof(buf)), 0);
    cr_assert_eq(buf[0], 0);
}

Test(guestmem, copy_out_partly_read_only_is_efault)
{
    map_two_adjacent(RW, PROT_READ);
    uint8_t buf[64];
    memset(buf, 0x77, sizeof(buf));
    cr_assert_eq(vmm_as_copy_out(&as, A + PAGE - 32, buf, sizeof(buf)),
                 -EFAULT);
    cr_assert_eq(host_of(A + PAGE)[0], 0, "read-only page was written");
}

Test(guestmem, copy_in_from_prot_none_is_efault)
{
    map_ok(A, PAGE, PROT_NONE);
    uint8_t buf[8];
    cr_assert_eq(vmm_as_copy_in(&as, buf, A, sizeof(buf)), -EFAULT);
}

Test(guestmem, copy_in_from_exec_only_reads)
{
    /* x86 cannot map exec-only: the CPU can read it, so the proxy may. */
    map_ok(A, PAGE, PROT_EXEC);
    uint8_t buf[8];
    cr_assert_eq(vmm_as_copy_in(&as, buf, A, sizeof(buf)), 0);
}

Test(guestmem, wrapping_range_is_efault)
{
    map_ok(A, PAGE, RW);
    uint8_t buf[64];
    cr_assert_eq(vmm_as_copy_in(&as, buf, UINT64_MAX - 10, 64), -EFAULT);
    cr_assert_eq(vmm_as_copy_out(&as, UINT64_MAX - 10, buf, 64), -EFAULT);
    /* A length that wraps from a mapped start. */
    cr_assert_eq(vmm_as_copy_in(&as, buf, A, SIZE_MAX), -EFAULT);
}

Test(guestmem, range_past_user_end_is_efault)
{
    gva_t last = VMM_USER_END - PAGE;
    map_ok(last, PAGE, RW);
    uint8_t buf[PAGE + 1];
    memset(buf, 3, sizeof(buf));
    cr_assert_eq(vmm_as_copy_out(&as, last, buf, PAGE), 0);
    cr_assert_eq(vmm_as_copy_in(&as, buf, last, PAGE), 0);
    cr_assert_eq(vmm_as_copy_in(&as, buf, last, PAGE + 1), -EFAULT);
    cr_assert_eq(vmm_as_copy_out(&as, last, buf, PAGE + 1), -EFAULT);
    cr_assert_eq(vmm_as_copy_in(&as, buf, VMM_USER_END, 1), -EFAULT);
    /* A kernel-half address, even if page tables map it. */
    cr_assert_eq(vmm_as_copy_in(&as, buf, 0xffffffff80000000ULL, 8),
                 -EFAULT);
}

/* ---- strncpy_in ------------------------------------------------------------ */

Test(guestmem, strncpy_in_returns_length)
{
    map_ok(A, PAGE, PROT_READ);
    memcpy(host_of(A), "hello", 6);
    char dst[64];
    memset(dst, 'x', sizeof(dst));
    cr_assert_eq(vmm_as_strncpy_in(&as, dst, A, sizeof(dst)), 5);
    cr_assert_str_eq(dst, "hello");
    /* Exactly fits: 5 chars + NUL in max 6. */
    cr_assert_eq(vmm_as_strncpy_in(&as, dst, A, 6), 5);
    cr_assert_str_eq(dst, "hello");
    /* Empty string. */
    cr_assert_eq(vmm_as_strncpy_in(&as, dst, A + 100, sizeof(dst)), 0);
    cr_assert_str_eq(dst, "");
}

Test(guestmem, strncpy_in_too_long)
{
    map_ok(A, PAGE, PROT_READ);
    memcpy(host_of(A), "hello", 6);
    char dst[8];
    cr_assert_eq(vmm_as_strncpy_in(&as, dst, A, 5), -ENAMETOOLONG);
    cr_assert_eq(vmm_as_strncpy_in(&as, dst, A, 1), -ENAMETOOLONG);
}

Test(guestmem, strncpy_in_across_two_vmas)
{
    map_two_adjacent(PROT_READ, PROT_READ);
    memcpy(host_of(A + PAGE - 3), "abc", 3);
    memcpy(host_of(A + PAGE), "defg", 5);
    char dst[32];
    cr_assert_eq(vmm_as_strncpy_in(&as, dst, A + PAGE - 3, sizeof(dst)), 7);
    cr_assert_str_eq(dst, "abcdefg");
}

Test(guestmem, strncpy_in_efault_at_a_boundary)
{
    map_ok(A, PAGE, PROT_READ);
    /* No NUL before the end of the mapping. */
    memset(host_of(A + PAGE - 4), 'z', 4);
    char dst[64];
    cr_assert_eq(vmm_as_strncpy_in(&as, dst, A + PAGE - 4, sizeof(dst)),
                 -EFAULT);
    /* ...unless max is reached first. */
    cr_assert_eq(vmm_as_strncpy_in(&as, dst, A + PAGE - 4, 4),
                 -ENAMETOOLONG);
    /* Unmapped or unreadable start. */
    cr_assert_eq(vmm_as_strncpy_in(&as, dst, A - 8, sizeof(dst)), -EFAULT);
    map_ok(A + 4 * PAGE, PAGE, PROT_NONE);
    cr_assert_eq(vmm_as_strncpy_in(&as, dst, A + 4 * PAGE, sizeof(dst)),
                 -EFAULT);
}

Test(guestmem, strncpy_in_at_user_end)
{
    gva_t last = VMM_USER_END - PAGE;
    map_ok(last, PAGE, PROT_READ);
    memset(host_of(last), 'q', PAGE);
    char dst[64];
    cr_assert_eq(vmm_as_strncpy_in(&as, dst, VMM_USER_END - 8, sizeof(dst)),
                 -EFAULT);
    cr_assert_eq(vmm_as_strncpy_in(&as, dst, UINT64_MAX - 2, sizeof(dst)),
                 -EFAULT);
}

/* ---- host_iov ------------------------------------------------------------ */

Test(guestmem, host_iov_one_vma)
{
    map_ok(A, 2 * PAGE, RW);
    struct iovec iov[4];
    size_t covered = 99;
    int n = vmm_as_host_iov(&as, A + 100, 200, PROT_WRITE, iov, 4, &covered);
    cr_assert_eq(n, 1);
    cr_assert_eq(covered, 200);
    cr_assert_eq(iov[0].iov_base, host_of(A + 100));
    cr_assert_eq(iov[0].iov_len, 200);
}

Test(guestmem, host_iov_two_vmas)
{
    map_two_adjacent(RW, RW);
    struct iovec iov[4];
    size_t covered = 0;
    int n = vmm_as_host_iov(&as, A + 100, 2 * PAGE, PROT_READ, iov, 4,
                            &covered);
    cr_assert_eq(n, 2);
    cr_assert_eq(covered, 2 * PAGE);
    cr_assert_eq(iov[0].iov_base, host_of(A + 100));
    cr_assert_eq(iov[0].iov_len, PAGE - 100);
    cr_assert_eq(iov[1].iov_base, host_of(A + PAGE));
    cr_assert_eq(iov[1].iov_len, PAGE + 100);
}

Test(guestmem, host_iov_stops_at_missing_protection)
{
    map_two_adjacent(RW, PROT_READ);
    struct iovec iov[4];
    size_t covered = 0;
    int n = vmm_as_host_iov(&as, A + 100, 2 * PAGE, PROT_WRITE, iov, 4,
                            &covered);
    cr_assert_eq(n, 1);
    cr_assert_eq(covered, PAGE - 100, "covers only the writable VMA");
    cr_assert_eq(iov[0].iov_len, PAGE - 100);
}

Test(guestmem, host_iov_stops_at_a_hole)
{
    map_ok(A, PAGE, RW);
    struct iovec iov[4];
    size_t covered = 0;
    int n = vmm_as_host_iov(&as, A + PAGE - 10, 100, PROT_READ, iov, 4,
                            &covered);
    cr_assert_eq(n, 1);
    cr_assert_eq(covered, 10);
    n = vmm_as_host_iov(&as, A + 5 * PAGE, 100, PROT_READ, iov, 4, &covered);
    cr_assert_eq(n, 0);
    cr_assert_eq(covered, 0);
}

Test(guestmem, host_iov_respects_max_iov)
{
    map_two_adjacent(RW, RW);
    struct iovec iov[1];
    size_t covered = 0;
    int n = vmm_as_host_iov(&as, A, 3 * PAGE, PROT_READ, iov, 1, &covered);
    cr_assert_eq(n, 1);
    cr_assert_eq(covered, PAGE);
}

Test(guestmem, host_iov_clamps_at_user_end)
{
    gva_t last = VMM_USER_END - PAGE;
    map_ok(last, PAGE, RW);
    struct iovec iov[4];
    size_t covered = 0;
    int n = vmm_as_host_iov(&as, last, 10 * PAGE, PROT_READ, iov, 4,
                            &covered);
    cr_assert_eq(n, 1);
    cr_assert_eq(covered, PAGE);
    n = vmm_as_host_iov(&as, last, SIZE_MAX, PROT_READ, iov, 4, &covered);
    cr_assert_eq(n, 1);
    cr_assert_eq(covered, PAGE);
}

/* ---- loader writes: poke and fill_zero ----------------------------------- */

Test(guestmem, poke_ignores_prot_write_but_not_holes)
{
    map_ok(A, PAGE, PROT_READ | PROT_EXEC);
    const char code[] = "\x90\x90\xc3";
    cr_assert_eq(vmm_as_poke(&as, A + 8, code, 3), 0);
    cr_assert_eq(memcmp(host_of(A + 8), code, 3), 0);
    cr_assert_eq(vmm_as_poke(&as, A + PAGE - 1, code, 3), -EFAULT);
}

Test(guestmem, fill_zero_clears_across_vmas)
{
    map_two_adjacent(PROT_READ, RW);
    memset(host_of(A), 0xee, PAGE);
    memset(host_of(A + PAGE), 0xee, 2 * PAGE);
    cr_assert_eq(vmm_as_fill_zero(&as, A + 10, PAGE + 10), 0);
    cr_assert_eq(host_of(A)[9], 0xee);
    cr_assert_eq(host_of(A)[10], 0);
    cr_assert_eq(host_of(A + PAGE)[19], 0);
    cr_assert_eq(host_of(A + PAGE)[20], 0xee);
    cr_assert_eq(vmm_as_fill_zero(&as, A + 3 * PAGE - 4, 8), -EFAULT);
}
