/*
 * physview.c - hvrun's view of a VM's guest-physical memory, mapped as far
 * as the memory in use reaches and grown in place.
 *
 * A VM's guest-physical space is 256 GiB (its reserve). A view of all of
 * it per VM filled the host's 128 TiB of user address space at ~510 guest
 * processes (LTP's futex_cmp_requeue01 forks 1000). So a view starts
 * smaller, where a PROT_NONE probe of the whole reserve found room (else
 * of half as much, ...: with the address space short a view shares a gap
 * with others), and grows right above itself with MAP_FIXED_NOREPLACE: no
 * pointer into it ever moves. The probe is mapped over, then its head and
 * tail let go, so no other thread's mapping can be taken meanwhile.
 */
#include "aspace.h"

#include <errno.h>
#include <stdint.h>
#include <sys/mman.h>

/* What a view of fd (-1: private anonymous memory) from offset off maps. */
static void *map_view_part(void *at, size_t len, int fd, uint64_t off,
                           int placement)
{
    int kind = fd < 0 ? MAP_PRIVATE | MAP_ANONYMOUS : MAP_SHARED;
    return mmap(at, len, PROT_READ | PROT_WRITE,
                kind | placement | MAP_NORESERVE, fd, (off_t)off);
}

int vmm_phys_view_place(int fd, uint64_t reserve, uint64_t first,
                        uint8_t **view_out)
{
    for (uint64_t room = reserve; room >= first; room /= 2) {
        size_t len = room + VMM_HUGE_SIZE;
        uint8_t *raw = mmap(NULL, len, PROT_NONE,
                            MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
        if (raw == MAP_FAILED)
            continue;
        /* 2 MiB-aligned: a 2 MiB-aligned extent is one host huge page. */
        uint8_t *at = (uint8_t *)(((uintptr_t)raw + VMM_HUGE_SIZE - 1) &
                                  ~(uintptr_t)(VMM_HUGE_SIZE - 1));
        if (map_view_part(at, first, fd, 0, MAP_FIXED) == MAP_FAILED) {
            int err = errno;
            munmap(raw, len);
            return -err;
        }
        if (at > raw)
            munmap(raw, (size_t)(at - raw));
        munmap(at + first, len - (size_t)(at - raw) - first);
        *view_out = at;
        return 0;
    }
    return -ENOMEM;
}

int vmm_phys_view_grow(struct vmm_physmem *pm, gpa_t top)
{
    uint64_t need = (top + VMM_HUGE_SIZE - 1) & ~(VMM_HUGE_SIZE - 1);
    if (need <= pm->view_bytes)
        return 0;
    /* Twice what it was, for fewer calls, else just what is needed. */
    uint64_t want = 2 * pm->view_bytes > need ? 2 * pm->view_bytes : need;
    if (want > pm->reserve_bytes)
        want = pm->reserve_bytes;
    if (need > want)
        return -ENOMEM;
    for (;;) {
        uint8_t *at = pm->hva_base + pm->view_bytes;
        size_t len = want - pm->view_bytes;
        void *got = map_view_part(at, len, pm->memfd, pm->view_bytes,
                                  MAP_FIXED_NOREPLACE);
        if (got == at)
            break;
        if (got != MAP_FAILED) /* a kernel that took it for a hint */
            munmap(got, len);
        if (want == need)
            return -ENOMEM; /* another mapping is in the way */
        want = need;
    }
    pm->view_bytes = want;
    return 0;
}
