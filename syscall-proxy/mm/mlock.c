/*
 * mlock.c - memory locking (mlock, mlock2, munlock, mlockall,
 * munlockall): guest memory is always resident, so locking only marks the
 * VMAs (what /proc/PID/status and smaps report) and checks RLIMIT_MEMLOCK
 * as Linux does.
 */
#include "proxy.h"
#include "kernel.h"
#include "mm.h"

#include <errno.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>

/* capable(CAP_IPC_LOCK): the run's initial user namespace. */
static bool privileged(const struct proxy_process *p)
{
    return proxy_ns_init_capable(p);
}

/* ---- memory locking: guest memory is always resident --------------------- */

static uint64_t mapped_bytes(const struct vmm_aspace *as)
{
    uint64_t total = 0;
    for (size_t i = 0; i < as->nr_vmas; i++)
        total += as->vmas[i]->end - as->vmas[i]->start;
    return total;
}

/* Linux's can_do_mlock: a non-zero RLIMIT_MEMLOCK or CAP_IPC_LOCK. */
static bool may_lock(const struct proxy_process *p)
{
    return p->rlimits[RLIMIT_MEMLOCK].rlim_cur != 0 || privileged(p);
}

/*
 * apply_vma_lock_flags: the VMAs from start on are (un)locked one after
 * the other up to a hole, which is -ENOMEM (a hole at start changes
 * nothing). Special mappings never get the flag (mlock_fixup skips
 * VM_SPECIAL).
 */
static long set_locked(struct vmm_aspace *as, gva_t start, gva_t end,
                       bool lock)
{
    for (gva_t g = start; g < end;) {
        struct vmm_vma *v = vmm_as_find_vma(as, g);
        if (!v)
            return -ENOMEM;
        gva_t stop = v->end < end ? v->end : end;
        if (!(v->flags & VMM_VMA_SPECIAL)) {
            long rc = vmm_as_set_flags(as, g, stop - g,
                                       lock ? VMM_VMA_LOCKED : 0,
                                       lock ? 0 : VMM_VMA_LOCKED);
            if (rc < 0)
                return rc;
        }
        g = stop;
    }
    return 0;
}

/*
 * The page-rounded range of an (addr, len) lock request, checked as
 * mlock/munlock check it: a wrapping range is -EINVAL, a hole -ENOMEM.
 * Guest pages are never swapped by hvrun; the lock is the VMAs' flag
 * (madvise refuses to drop locked pages). When `lock`, what would then be
 * locked must fit RLIMIT_MEMLOCK, as Linux counts it (locked_vm).
 */
static long check_lock_range(struct proxy_process *p, gva_t addr, uint64_t len,
                             bool lock)
{
    gva_t start = addr & VMM_PAGE_MASK;
    uint64_t span;
    if (__builtin_add_overflow(len, addr - start, &span) ||
        __builtin_add_overflow(span, VMM_PAGE_SIZE - 1, &span))
        return -EINVAL;
    span &= VMM_PAGE_MASK;
    gva_t end;
    if (__builtin_add_overflow(start, span, &end))
        return -EINVAL;
    if (end == start)
        return 0;
    if (lock && !may_lock(p))
        return -EPERM;
    if (lock && !privileged(p)) {
        /* do_mlock: what is locked already counts, except the part of
         * this range that is. */
        uint64_t limit = p->rlimits[RLIMIT_MEMLOCK].rlim_cur;
        uint64_t locked = span + vmm_as_locked_in(p->as, 0, UINT64_MAX);
        if (locked > limit)
            locked -= vmm_as_locked_in(p->as, start, span);
        if (locked > limit)
            return -ENOMEM;
    }
    return set_locked(p->as, start, end, lock);
}

static long sys_mlock(struct proxy_process *p, const uint64_t a[6])
{
    return check_lock_range(p, a[0], a[1], true);
}

static long sys_mlock2(struct proxy_process *p, const uint64_t a[6])
{
    if (a[2] & ~(uint64_t)MLOCK_ONFAULT)
        return -EINVAL;
    return check_lock_range(p, a[0], a[1], true);
}

static long sys_munlock(struct proxy_process *p, const uint64_t a[6])
{
    return check_lock_range(p, a[0], a[1], false);
}

/* apply_mlockall_flags: MCL_FUTURE locks what is mapped later; every VMA
 * is locked (MCL_CURRENT) or unlocked, unless only MCL_FUTURE is asked. */
static long apply_mlockall(struct vmm_aspace *as, uint64_t flags)
{
    as->lock_future = flags & MCL_FUTURE;
    if ((flags & ~(uint64_t)MCL_ONFAULT) == MCL_FUTURE)
        return 0;
    for (size_t i = 0; i < as->nr_vmas; i++)
        if (!(as->vmas[i]->flags & VMM_VMA_SPECIAL)) {
            if (flags & MCL_CURRENT)
                as->vmas[i]->flags |= VMM_VMA_LOCKED;
            else
                as->vmas[i]->flags &= ~VMM_VMA_LOCKED;
        }
    return 0;
}

/* mlockall: flags must include MCL_CURRENT or MCL_FUTURE; MCL_CURRENT must
 * fit everything mapped into RLIMIT_MEMLOCK unless privileged. */
static long sys_mlockall(struct proxy_process *p, const uint64_t a[6])
{
    uint64_t flags = a[0];
    if (flags == 0 || flags == MCL_ONFAULT ||
        (flags & ~(uint64_t)(MCL_CURRENT | MCL_FUTURE | MCL_ONFAULT)))
        return -EINVAL;
    if (!may_lock(p))
        return -EPERM;
    if ((flags & MCL_CURRENT) && !privileged(p) &&
        mapped_bytes(p->as) > p->rlimits[RLIMIT_MEMLOCK].rlim_cur)
        return -ENOMEM;
    return apply_mlockall(p->as, flags);
}

static long sys_munlockall(struct proxy_process *p, const uint64_t a[6])
{
    return apply_mlockall(p->as, 0);
}

const struct proxy_syscall proxy_mlock_syscalls[] = {
    {SYS_mlock, "mlock", sys_mlock},
    {SYS_mlock2, "mlock2", sys_mlock2},
    {SYS_munlock, "munlock", sys_munlock},
    {SYS_mlockall, "mlockall", sys_mlockall},
    {SYS_munlockall, "munlockall", sys_munlockall},
    {-1, NULL, NULL},
};
