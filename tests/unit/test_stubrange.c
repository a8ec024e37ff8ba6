/*
 * test_stubrange.c - what the ptrace backend needs from the address space:
 * the stub's range is refused to guest mappings and passed by searches,
 * every VMA change bumps the generation, and a memfd-backed physmem keeps
 * gpa X at memfd offset X (mremap copies, free punches a hole).
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "aspace_fixture.h"

TestSuite(stubrange, .init = setup, .fini = teardown);

Test(stubrange, mapping_over_the_stub_range_is_enomem)
{
    cr_assert_eq(vmm_as_map(&as, VMM_STUB_RANGE_START, PAGE, RW, 0, NULL),
                 -ENOMEM);
    cr_assert_eq(vmm_as_map(&as, VMM_STUB_RANGE_START - PAGE, 2 * PAGE, RW,
                            0, NULL),
                 -ENOMEM);
    cr_assert_eq(vmm_as_map(&as, VMM_STUB_RANGE_END - PAGE, PAGE, RW, 0, NULL),
                 -ENOMEM);
    cr_assert_eq(vmm_as_map(&as, VMM_STUB_RANGE_END, PAGE, RW, 0, NULL), 0);
    cr_assert_eq(vmm_as_map(&as, VMM_STUB_RANGE_START - PAGE, PAGE, RW, 0,
                            NULL),
                 0);
    cr_assert(!vmm_as_range_free(&as, VMM_STUB_RANGE_START, PAGE));
}

Test(stubrange, find_free_passes_the_stub_range_by)
{
    gva_t at;
    uint64_t len = 4 * PAGE;
    cr_assert_eq(vmm_as_find_free(&as, len, VMM_STUB_RANGE_END + 2 * PAGE,
                                  &at),
                 0);
    cr_assert_eq(at, VMM_STUB_RANGE_START - len);
    cr_assert_eq(vmm_as_find_free(&as, PAGE, VMM_STUB_RANGE_END + 2 * PAGE,
                                  &at),
                 0);
    cr_assert_eq(at, VMM_STUB_RANGE_END + PAGE, "a page above it fits");
}

Test(stubrange, every_vma_change_bumps_the_generation)
{
    gva_t base = 0x400000;
    uint64_t g = as.generation;
    cr_assert_eq(vmm_as_map(&as, base, 4 * PAGE, RW, 0, NULL), 0);
    cr_assert_gt(as.generation, g);
    g = as.generation;
    cr_assert_eq(vmm_as_protect(&as, base + PAGE, PAGE, PROT_READ), 0);
    cr_assert_gt(as.generation, g);
    g = as.generation;
    cr_assert_eq(vmm_as_unmap(&as, base, PAGE), 0);
    cr_assert_gt(as.generation, g);
    g = as.generation;
    gva_t to = 0x800000;
    cr_assert_eq(vmm_as_remap(&as, base + 2 * PAGE, 2 * PAGE, 2 * PAGE, true,
                              true, &to),
                 0);
    cr_assert_gt(as.generation, g);
}

/* The same address space over a memfd, as the ptrace backend builds it. */
static void memfd_backed(int *fd)
{
    teardown();
    *fd = memfd_create("test-guest-memory", MFD_CLOEXEC);
    cr_assert_geq(*fd, 0);
    cr_assert_eq(ftruncate(*fd, (off_t)RESERVE_BYTES), 0);
    hva = mmap(NULL, RESERVE_BYTES, PROT_READ | PROT_WRITE,
               MAP_SHARED | MAP_NORESERVE, *fd, 0);
    cr_assert_neq(hva, MAP_FAILED);
    cr_assert_eq(vmm_phys_init(&pm, hva, RESERVE_BYTES, FIRST_GPA), 0);
    pm.memfd = *fd;
    cr_assert_eq(vmm_as_init(&as, &pm), 0);
}

Test(stubrange, memfd_keeps_gpa_as_offset_across_mremap_and_free)
{
    int fd;
    memfd_backed(&fd);
    gva_t base = 0x400000, to = 0x900000;
    char buf[8] = {0};
    cr_assert_eq(vmm_as_map(&as, base, 2 * PAGE, RW, 0, NULL), 0);
    cr_assert_eq(vmm_as_copy_out(&as, base + PAGE, "moved!", 7), 0);
    gpa_t old_gpa = vmm_as_find_vma(&as, base)->gpa;
    cr_assert_eq(vmm_as_remap(&as, base, 2 * PAGE, 2 * PAGE, true, true, &to),
                 0);
    const struct vmm_vma *v = vmm_as_find_vma(&as, to);
    cr_assert_eq(pread(fd, buf, 7, (off_t)(v->gpa + PAGE)), 7);
    cr_assert_str_eq(buf, "moved!", "the new gpa holds the data in the memfd");
    cr_assert_eq(pread(fd, buf, 7, (off_t)(old_gpa + PAGE)), 7);
    cr_assert_eq(buf[0], 0, "the freed extent was punched out");
    cr_assert_gt(vmm_phys_memfd_bytes(&pm), 0);
    close(fd); /* the mapping keeps it until teardown */
}

/* Whether this process has a page table entry for the page at host. */
static bool view_page_present(const void *host)
{
    int fd = open("/proc/self/pagemap", O_RDONLY);
    cr_assert_geq(fd, 0);
    uint64_t entry = 0;
    off_t at = (off_t)((uintptr_t)host / PAGE * sizeof(entry));
    cr_assert_eq(pread(fd, &entry, sizeof(entry), at), sizeof(entry));
    close(fd);
    return entry >> 63;
}

/* hvrun's first reads and writes of a page of a memfd-backed space (the
 * ptrace backend's) go through the memfd, not its view, which would take
 * a page fault of hvrun's there (a new page table too, on a shadowed
 * host); a page met often is taken through the view. Either way the
 * bytes are the same. */
Test(stubrange, first_touches_through_the_memfd)
{
    int fd;
    memfd_backed(&fd);
    pm.view_follows_guest = false;
    gva_t base = 0x400000;
    cr_assert_eq(vmm_as_map(&as, base, 2 * PAGE, RW, 0, NULL), 0);
    const struct vmm_vma *v = vmm_as_find_vma(&as, base);
    uint8_t *view = vmm_phys_hva(&pm, v->gpa);
    cr_assert_eq(vmm_as_copy_out(&as, base + 8, "path", 5), 0);
    char buf[8] = {0};
    cr_assert_eq(vmm_as_strncpy_in(&as, buf, base + 8, sizeof(buf)), 4);
    cr_assert_str_eq(buf, "path");
    cr_assert_eq(vmm_as_poke(&as, base + PAGE, "zz", 2), 0);
    cr_assert(!view_page_present(view), "no PTE of hvrun's for the page");
    cr_assert(!view_page_present(view + PAGE));
    cr_assert_eq(pread(fd, buf, 5, (off_t)v->gpa + 8), 5);
    cr_assert_str_eq(buf, "path", "the bytes are in the memfd");
    for (int i = 0; i < 8; i++)
        cr_assert_eq(vmm_as_copy_in(&as, buf, base + 8, 5), 0);
    cr_assert_str_eq(buf, "path");
    cr_assert(view_page_present(view), "a page met often: the view");
    memcpy(view + 16, "view", 5); /* and the view's bytes are the memfd's */
    cr_assert_eq(vmm_as_copy_in(&as, buf, base + 16, 5), 0);
    cr_assert_str_eq(buf, "view");
    close(fd);
}
