/*
 * mseal.c - memory sealing (mseal, Linux 6.10): a sealed VMA keeps its
 * place, size and protection for the life of the address space. mseal
 * marks the VMAs (VMM_VMA_SEALED); the mm calls ask proxy_mm_sealed
 * before they change a range and fail with -EPERM, as Linux's
 * can_modify_mm and can_modify_mm_madv do (mm/mseal.c).
 */
#include "proxy.h"
#include "mm.h"

#include <errno.h>
#include <sys/mman.h>

#define SYS_MSEAL 462 /* x86-64; older headers lack SYS_mseal */

bool proxy_mm_sealed(const struct vmm_aspace *as, gva_t start, gva_t end)
{
    for (gva_t g = start; g < end;) {
        const struct vmm_vma *v = vmm_as_next_vma(as, g);
        if (!v || v->start >= end)
            return false;
        if (v->flags & VMM_VMA_SEALED)
            return true;
        g = v->end;
    }
    return false;
}

/* is_madv_discard: the advice that drops a mapping's contents (or keeps
 * them from a child), which a seal refuses on read-only memory. */
static bool advice_discards(int advice)
{
    switch (advice) {
    case MADV_FREE: case MADV_DONTNEED: case MADV_DONTNEED_LOCKED:
    case MADV_REMOVE: case MADV_DONTFORK: case MADV_WIPEONFORK:
        return true;
    default:
        return false;
    }
}

/* is_ro_anon: private memory with no file behind it, not writable (the
 * CPU model has no protection keys, so no key makes it unwritable). */
static bool read_only_anonymous(const struct vmm_vma *v)
{
    return !v->shared && !(v->flags & VMM_VMA_FILE) &&
           !(v->prot & PROT_WRITE);
}

bool proxy_mm_advice_sealed(const struct vmm_aspace *as, gva_t start,
                            gva_t end, int advice)
{
    if (!advice_discards(advice))
        return false;
    for (gva_t g = start; g < end;) {
        const struct vmm_vma *v = vmm_as_next_vma(as, g);
        if (!v || v->start >= end)
            return false;
        if ((v->flags & VMM_VMA_SEALED) && read_only_anonymous(v))
            return true;
        g = v->end;
    }
    return false;
}

/* check_mm_seal: the whole range must be mapped, so that a hole seals
 * nothing (-ENOMEM). */
static bool fully_mapped(const struct vmm_aspace *as, gva_t start, gva_t end)
{
    for (gva_t g = start; g < end;) {
        const struct vmm_vma *v = vmm_as_find_vma(as, g);
        if (!v)
            return false;
        g = v->end;
    }
    return true;
}

/* do_mseal's order: flags, alignment, a length that rounds up to wrap, a
 * wrapping range, an empty one (success), then a hole. */
static long sys_mseal(struct proxy_process *p, const uint64_t a[6])
{
    gva_t start = a[0];
    uint64_t len_in = a[1];
    if (a[2] != 0)
        return -EINVAL;
    if (start & ~VMM_PAGE_MASK)
        return -EINVAL;
    uint64_t len = VMM_PAGE_ALIGN_UP(len_in);
    if (len_in && !len)
        return -EINVAL;
    gva_t end = start + len;
    if (end < start)
        return -EINVAL;
    if (end == start)
        return 0;
    if (!fully_mapped(p->as, start, end))
        return -ENOMEM;
    for (gva_t g = start; g < end;) {
        const struct vmm_vma *v = vmm_as_find_vma(p->as, g);
        gva_t stop = v->end < end ? v->end : end;
        long rc = vmm_as_set_flags(p->as, g, stop - g, VMM_VMA_SEALED, 0);
        if (rc < 0)
            return rc;
        g = stop;
    }
    return 0;
}

const struct proxy_syscall proxy_mseal_syscalls[] = {
    {SYS_MSEAL, "mseal", sys_mseal},
    {-1, NULL, NULL},
};
