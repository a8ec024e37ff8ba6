/*
 * test_shared.c - MAP_SHARED memory across vmm_as_clone: a VMA backed by a
 * shared host object (memfd or file) is mapped, not copied, into the clone,
 * so two address spaces over two physmems see the same pages; private VMAs
 * are still copied; split/remap keep the object and offset.
 */
#include <criterion/criterion.h>

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "aspace.h"

#define RESERVE_BYTES (1ULL << 30)
#define FIRST_GPA 0x10000ULL
#define PAGE VMM_PAGE_SIZE
#define BASE 0x400000ULL
#define RW (PROT_READ | PROT_WRITE)

static uint8_t *hva[2];
static struct vmm_physmem pm[2];
static struct vmm_aspace as[2];

static void setup(void)
{
    for (int i = 0; i < 2; i++) {
        hva[i] = mmap(NULL, RESERVE_BYTES, PROT_READ | PROT_WRITE,
                      MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
        cr_assert_neq(hva[i], MAP_FAILED);
        cr_assert_eq(vmm_phys_init(&pm[i], hva[i], RESERVE_BYTES, FIRST_GPA),
                     0);
        cr_assert_eq(vmm_as_init(&as[i], &pm[i]), 0);
    }
}

static void teardown(void)
{
    for (int i = 0; i < 2; i++) {
        vmm_as_destroy(&as[i]);
        vmm_phys_destroy(&pm[i]);
        munmap(hva[i], RESERVE_BYTES);
    }
}

TestSuite(shared, .init = setup, .fini = teardown);

static int peek(int i, gva_t gva)
{
    int v = -1;
    cr_assert_eq(vmm_as_copy_in(&as[i], &v, gva, sizeof(v)), 0);
    return v;
}

static void poke(int i, gva_t gva, int v)
{
    cr_assert_eq(vmm_as_copy_out(&as[i], gva, &v, sizeof(v)), 0);
}

Test(shared, anon_memfd_shared_after_clone)
{
    cr_assert_eq(vmm_as_map(&as[0], BASE, 4 * PAGE, RW, VMM_VMA_SHARED, NULL),
                 0);
    cr_assert_eq(vmm_as_share_anon(&as[0], BASE, 4 * PAGE), 0);
    const struct vmm_vma *v = vmm_as_find_vma(&as[0], BASE);
    cr_assert_not_null(v->shared);
    cr_assert(v->shared->anon);
    poke(0, BASE + 3 * PAGE, 41);
    cr_assert_eq(vmm_as_clone(&as[1], &as[0]), 0);
    /* The clone sees the parent's data... */
    cr_assert_eq(peek(1, BASE + 3 * PAGE), 41);
    /* ...and later writes in either direction. */
    poke(1, BASE + 3 * PAGE, 42);
    cr_assert_eq(peek(0, BASE + 3 * PAGE), 42);
    poke(0, BASE, 7);
    cr_assert_eq(peek(1, BASE), 7);
    cr_assert_eq(v->shared->refs, 2);
    /* Through the two physmems: distinct host addresses, same page. */
    const struct vmm_vma *d = vmm_as_find_vma(&as[1], BASE);
    cr_assert_neq(vmm_phys_hva(&pm[0], v->gpa), vmm_phys_hva(&pm[1], d->gpa));
}

Test(shared, private_still_copied)
{
    cr_assert_eq(vmm_as_map(&as[0], BASE, PAGE, RW, 0, NULL), 0);
    poke(0, BASE, 5);
    cr_assert_eq(vmm_as_clone(&as[1], &as[0]), 0);
    cr_assert_null(vmm_as_find_vma(&as[1], BASE)->shared);
    poke(1, BASE, 6);
    cr_assert_eq(peek(0, BASE), 5);
    cr_assert_eq(peek(1, BASE), 6);
}

Test(shared, split_keeps_offset_and_sharing)
{
    cr_assert_eq(vmm_as_map(&as[0], BASE, 4 * PAGE, RW, VMM_VMA_SHARED, NULL),
                 0);
    cr_assert_eq(vmm_as_share_anon(&as[0], BASE, 4 * PAGE), 0);
    poke(0, BASE + 2 * PAGE, 9);
    /* mprotect splits into three VMAs; munmap drops the first. */
    cr_assert_eq(vmm_as_protect(&as[0], BASE + PAGE, PAGE, PROT_READ), 0);
    cr_assert_eq(vmm_as_unmap(&as[0], BASE, PAGE), 0);
    const struct vmm_vma *t = vmm_as_find_vma(&as[0], BASE + 2 * PAGE);
    cr_assert_eq(t->start, BASE + 2 * PAGE);
    cr_assert_eq(t->shared_off, 2 * PAGE);
    cr_assert_eq(t->shared->refs, 2);
    cr_assert_eq(vmm_as_clone(&as[1], &as[0]), 0);
    cr_assert_eq(peek(1, BASE + 2 * PAGE), 9);
    poke(1, BASE + 3 * PAGE, 10);
    cr_assert_eq(peek(0, BASE + 3 * PAGE), 10);
    /* DONTNEED on the host mapping keeps the object's data. */
    uint8_t *h = vmm_phys_hva(&pm[0], t->gpa);
    cr_assert_eq(madvise(h, 2 * PAGE, MADV_DONTNEED), 0);
    cr_assert_eq(peek(0, BASE + 2 * PAGE), 9);
}

Test(shared, remap_grow_and_move)
{
    cr_assert_eq(vmm_as_map(&as[0], BASE, PAGE, RW, VMM_VMA_SHARED, NULL), 0);
    cr_assert_eq(vmm_as_share_anon(&as[0], BASE, PAGE), 0);
    poke(0, BASE, 3);
    /* Grow in place: the extension is more of the same memfd. */
    gva_t out = 0;
    cr_assert_eq(vmm_as_remap(&as[0], BASE, PAGE, 2 * PAGE, true, false, &out),
                 0);
    cr_assert_eq(out, BASE);
    const struct vmm_vma *x = vmm_as_find_vma(&as[0], BASE + PAGE);
    cr_assert_not_null(x->shared);
    cr_assert_eq(x->shared_off, PAGE);
    /* The memfd keeps its size (Linux's shmem object): past it is past
     * the end, until the object grows. */
    cr_assert_eq(vmm_as_update_eof(&as[0], BASE, 2 * PAGE), 0);
    cr_assert_eq(vmm_as_guest_fault(&as[0], BASE + PAGE, true), 0, "SIGBUS");
    cr_assert_eq(ftruncate(x->shared->fd, 3 * PAGE), 0);
    cr_assert_eq(vmm_as_guest_fault(&as[0], BASE + PAGE, true), 1);
    poke(0, BASE + PAGE, 4);
    /* Move (fixed) and grow: contents follow, the tail is the object. */
    out = BASE + 16 * PAGE;
    cr_assert_eq(vmm_as_remap(&as[0], BASE, PAGE, 3 * PAGE, true, true, &out),
                 0);
    cr_assert_eq(vmm_as_update_eof(&as[0], out, 3 * PAGE), 0);
    const struct vmm_vma *m = vmm_as_find_vma(&as[0], out);
    cr_assert_not_null(m->shared);
    cr_assert_eq(m->shared_off, 0);
    cr_assert_eq(peek(0, out), 3);
    /* Page 1 of the object still holds what BASE+PAGE had. */
    cr_assert_eq(peek(0, out + PAGE), 4);
    cr_assert_eq(vmm_as_clone(&as[1], &as[0]), 0);
    poke(1, out + 2 * PAGE, 8);
    cr_assert_eq(peek(0, out + 2 * PAGE), 8);
}

Test(shared, file_shared_after_clone)
{
    char path[] = "/tmp/test_shared.XXXXXX";
    int fd = mkstemp(path);
    cr_assert_geq(fd, 0);
    unlink(path);
    cr_assert_eq(ftruncate(fd, 3 * PAGE), 0);
    int one = 1;
    cr_assert_eq(pwrite(fd, &one, sizeof(one), PAGE), sizeof(one));
    cr_assert_eq(vmm_as_map(&as[0], BASE, 2 * PAGE, RW, VMM_VMA_SHARED, NULL),
                 0);
    cr_assert_eq(vmm_as_set_shared(&as[0], BASE, 2 * PAGE, fd, PAGE), 0);
    cr_assert(!vmm_as_find_vma(&as[0], BASE)->shared->anon);
    close(fd); /* the VMA keeps its own dup */
    cr_assert_eq(peek(0, BASE), 1);
    cr_assert_eq(vmm_as_clone(&as[1], &as[0]), 0);
    poke(1, BASE + PAGE, 77);
    cr_assert_eq(peek(0, BASE + PAGE), 77);
}

/* A file of `pages` pages, page i holding the int i + 1 at its start. */
static int numbered_file(int pages)
{
    char path[] = "/tmp/test_shared.XXXXXX";
    int fd = mkstemp(path);
    cr_assert_geq(fd, 0);
    unlink(path);
    for (int i = 0; i < pages; i++) {
        int n = i + 1;
        cr_assert_eq(pwrite(fd, &n, sizeof(n), (off_t)(i * PAGE)),
                     sizeof(n));
    }
    cr_assert_eq(ftruncate(fd, pages * PAGE), 0);
    return fd;
}

Test(shared, fork_flags_in_the_clone)
{
    cr_assert_eq(vmm_as_map(&as[0], BASE, 3 * PAGE, RW, 0, NULL), 0);
    poke(0, BASE, 1);
    poke(0, BASE + PAGE, 2);
    poke(0, BASE + 2 * PAGE, 3);
    cr_assert_eq(vmm_as_set_flags(&as[0], BASE, PAGE, VMM_VMA_DONTFORK, 0), 0);
    cr_assert_eq(vmm_as_set_flags(&as[0], BASE + PAGE, PAGE,
                                  VMM_VMA_WIPEONFORK | VMM_VMA_LOCKED, 0),
                 0);
    cr_assert_eq(as[0].nr_vmas, 3, "the flags split the VMA");
    cr_assert_eq(vmm_as_clone(&as[1], &as[0]), 0);
    cr_assert_null(vmm_as_find_vma(&as[1], BASE), "DONTFORK: not mapped");
    const struct vmm_vma *wiped = vmm_as_find_vma(&as[1], BASE + PAGE);
    cr_assert_not_null(wiped);
    cr_assert_eq(peek(1, BASE + PAGE), 0, "WIPEONFORK: zeros");
    cr_assert(wiped->flags & VMM_VMA_WIPEONFORK, "kept by the child");
    cr_assert(!(wiped->flags & VMM_VMA_LOCKED), "locks are not inherited");
    cr_assert_eq(peek(1, BASE + 2 * PAGE), 3);
    cr_assert_eq(peek(0, BASE + PAGE), 2, "the parent keeps its pages");
}

Test(shared, refill_reads_the_private_file_again)
{
    int fd = numbered_file(2);
    cr_assert_eq(vmm_as_map(&as[0], BASE, 2 * PAGE, RW, 0, NULL), 0);
    cr_assert_eq(vmm_as_keep_file(&as[0], BASE, 2 * PAGE, fd), 0);
    vmm_as_set_file(&as[0], BASE, 2 * PAGE, 0, 1, 2, "f");
    close(fd); /* the VMA keeps its own */
    poke(0, BASE + PAGE, 99);
    cr_assert_eq(vmm_as_refill(&as[0], BASE + PAGE, PAGE), 0);
    cr_assert_eq(peek(0, BASE + PAGE), 2);
    cr_assert_eq(vmm_as_protect(&as[0], BASE, PAGE, PROT_READ), 0);
    cr_assert_eq(vmm_as_refill(&as[0], BASE, PAGE), 0,
                 "a read-only backing is made writable for it");
    cr_assert_eq(peek(0, BASE), 1);
}

Test(shared, one_host_fd_per_file)
{
    int fd = numbered_file(1);
    cr_assert_eq(vmm_as_map(&as[0], BASE, PAGE, RW, 0, NULL), 0);
    cr_assert_eq(vmm_as_map(&as[0], BASE + 4 * PAGE, PAGE, RW, 0, NULL), 0);
    cr_assert_eq(vmm_as_keep_file(&as[0], BASE, PAGE, fd), 0);
    cr_assert_eq(vmm_as_keep_file(&as[0], BASE + 4 * PAGE, PAGE, fd), 0);
    cr_assert_eq(vmm_as_find_vma(&as[0], BASE)->file,
                 vmm_as_find_vma(&as[0], BASE + 4 * PAGE)->file);
    close(fd);
}

Test(shared, past_the_file_end)
{
    int fd = numbered_file(1);
    cr_assert_eq(vmm_as_map(&as[0], BASE, 3 * PAGE, RW, VMM_VMA_SHARED, NULL),
                 0);
    cr_assert_eq(vmm_as_set_shared(&as[0], BASE, 3 * PAGE, fd, 0), 0);
    vmm_as_set_file(&as[0], BASE, 3 * PAGE, 0, 1, 2, "f");
    cr_assert_eq(vmm_as_update_eof(&as[0], BASE, 3 * PAGE), 0);
    const struct vmm_vma *v = vmm_as_find_vma(&as[0], BASE);
    cr_assert_eq(vmm_vma_valid_end(v), BASE + PAGE);
    cr_assert_eq(vmm_pt_lookup(&as[0], BASE + PAGE) & VMM_PTE_P, 0);
    int x;
    cr_assert_eq(vmm_as_copy_in(&as[0], &x, BASE + PAGE, sizeof(x)), -EFAULT,
                 "never a host SIGBUS in hvrun");
    cr_assert_eq(vmm_as_guest_fault(&as[0], BASE + PAGE, false), 0, "SIGBUS");
    cr_assert_eq(vmm_as_guest_fault(&as[0], BASE, false), -1, "not past it");
    cr_assert_eq(ftruncate(fd, 2 * PAGE), 0);
    cr_assert_eq(vmm_as_guest_fault(&as[0], BASE + PAGE, true), 1, "grown");
    cr_assert_neq(vmm_pt_lookup(&as[0], BASE + PAGE) & VMM_PTE_P, 0);
    cr_assert_eq(peek(0, BASE + PAGE), 0);
    cr_assert_eq(vmm_as_guest_fault(&as[0], BASE + 2 * PAGE, false), 0);
    close(fd);
}

/* fd's four pages mapped at BASE as a library's text is: read and
 * execute, straight from the file (a direct VMA). */
static void direct_text(int fd)
{
    cr_assert_eq(vmm_as_map(&as[0], BASE, 4 * PAGE, PROT_READ | PROT_EXEC,
                            0, NULL),
                 0);
    cr_assert_eq(vmm_as_keep_file(&as[0], BASE, 4 * PAGE, fd), 0);
    vmm_as_set_file(&as[0], BASE, 4 * PAGE, 0, 1, 2, "f");
    cr_assert_eq(vmm_as_map_direct(&as[0], BASE, 4 * PAGE), 0);
}

/* Rewritten pages next to each other go to the run's page store as one
 * run and come back as one VMA (one mapping in hvrun's view and in the
 * stub), and a refill of one of them gives only that page its file's
 * bytes again. */
Test(shared, staged_neighbours_one_stored_vma)
{
    int fd = numbered_file(4);
    direct_text(fd);
    close(fd);
    cr_assert_eq(as[0].nr_vmas, 1);
    vmm_as_stage_begin(&as[0]);
    int a = 20, b = 30; /* written out of address order */
    cr_assert_eq(vmm_as_poke(&as[0], BASE + 2 * PAGE, &b, sizeof(b)), 0);
    cr_assert_eq(vmm_as_poke(&as[0], BASE + PAGE, &a, sizeof(a)), 0);
    cr_assert_eq(vmm_as_stage_end(&as[0]), 0);
    cr_assert_eq(as[0].nr_vmas, 3, "file page, two stored pages, file page");
    const struct vmm_vma *run = vmm_as_find_vma(&as[0], BASE + PAGE);
    cr_assert_eq(run->start, BASE + PAGE);
    cr_assert_eq(run->end, BASE + 3 * PAGE);
    cr_assert(run->flags & VMM_VMA_DIRECT);
    cr_assert_eq(peek(0, BASE), 1);
    cr_assert_eq(peek(0, BASE + PAGE), 20);
    cr_assert_eq(peek(0, BASE + 2 * PAGE), 30);
    cr_assert_eq(peek(0, BASE + 3 * PAGE), 4);
    cr_assert_eq(vmm_as_refill(&as[0], BASE + 2 * PAGE, PAGE), 0);
    cr_assert_eq(peek(0, BASE + PAGE), 20, "the other stored page stays");
    cr_assert_eq(peek(0, BASE + 2 * PAGE), 3, "the file's bytes again");
}

/* A text in pieces (a stored page between its file's) is mapped whole
 * from one run of the store that holds the same bytes: one VMA, the
 * same bytes at every page, the file's name and offsets kept; a range
 * that is not such pieces is refused and left as it was. */
Test(shared, pieces_joined_into_one_stored_vma)
{
    int fd = numbered_file(4);
    direct_text(fd);
    vmm_as_stage_begin(&as[0]);
    int a = 20;
    cr_assert_eq(vmm_as_poke(&as[0], BASE + PAGE, &a, sizeof(a)), 0);
    cr_assert_eq(vmm_as_stage_end(&as[0]), 0);
    cr_assert_eq(as[0].nr_vmas, 3);
    cr_assert_eq(vmm_as_join_stored(&as[0], BASE, BASE + 5 * PAGE, 0), -EINVAL,
                 "past the text");
    cr_assert_eq(as[0].nr_vmas, 3);
    /* The run: the four pages as the pieces show them. */
    uint64_t off;
    cr_assert_eq(vmm_page_store_reserve(4, &off), 0);
    for (int i = 0; i < 4; i++) {
        uint8_t page[PAGE];
        cr_assert_eq(pread(fd, page, PAGE, (off_t)i * PAGE), PAGE);
        if (i == 1)
            memcpy(page, &a, sizeof(a));
        cr_assert_eq(pwrite(vmm_page_store_fd(), page, PAGE,
                            (off_t)(off + (uint64_t)i * PAGE)),
                     PAGE);
    }
    close(fd);
    cr_assert_eq(vmm_as_join_stored(&as[0], BASE, BASE + 4 * PAGE, off), 0);
    cr_assert_eq(as[0].nr_vmas, 1);
    const struct vmm_vma *v = vmm_as_find_vma(&as[0], BASE);
    cr_assert_eq(v->end, BASE + 4 * PAGE);
    cr_assert(v->flags & VMM_VMA_DIRECT);
    cr_assert_eq(v->file_off, 0);
    cr_assert_str_eq(v->name, "f");
    uint64_t at;
    cr_assert(vmm_as_stored_at(&as[0], BASE + 3 * PAGE, &at));
    cr_assert_eq(at, off + 3 * PAGE);
    cr_assert_eq(peek(0, BASE), 1);
    cr_assert_eq(peek(0, BASE + PAGE), 20);
    cr_assert_eq(peek(0, BASE + 2 * PAGE), 3);
    cr_assert_eq(peek(0, BASE + 3 * PAGE), 4);
    cr_assert_eq(vmm_as_join_stored(&as[0], BASE, BASE + 4 * PAGE, off), 0,
                 "joined already: nothing to do");
    cr_assert_eq(as[0].nr_vmas, 1);
}
