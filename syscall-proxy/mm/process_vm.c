/*
 * process_vm.c - process_vm_readv and process_vm_writev between the
 * run's guest processes (the caller itself included), as Linux's
 * mm/process_vm_access.c.
 *
 * Both sides go through the checked copy path of their own process's
 * address space (proxy_copy_in/out of the caller and of the target), never
 * hvrun's memory: a remote page the target may not read (readv) or write
 * (writev) ends the transfer there, as get_user_pages without FOLL_FORCE.
 * Bytes move in pieces that cross no page of either side, so a fault stops
 * at a page boundary and the count of bytes moved before it is exact.
 *
 * Linux's order of checks: flags (EINVAL), the local iovec (more than
 * IOV_MAX: EINVAL; unreadable: EFAULT; a negative length: EINVAL; an
 * address past user space: EFAULT; the total capped at MAX_RW_COUNT), an
 * empty local side is 0; then the remote iovec (the same, without the
 * address check) and an empty remote side is 0; only then the pid (ESRCH:
 * no live process of the run has that pid or tid) and the permission
 * (EPERM: PTRACE_MODE_ATTACH, proxy_ptrace_may_access: another process
 * whose ids are not all the caller's real ones, or not dumpable, unless
 * the caller is root). The result is the bytes moved, or
 * EFAULT when none moved.
 *
 * process_madvise gives another process (a pidfd's) the advice that only
 * reclaims or prefetches (MADV_COLD, MADV_PAGEOUT, MADV_WILLNEED,
 * MADV_COLLAPSE), as madvise(2) of that process would (mm.c): flags, the
 * iovec, the pidfd (EBADF, ESRCH), the advice (EINVAL), access to its
 * memory (EPERM, as above), CAP_SYS_NICE (EPERM); then the ranges in
 * order, the result being the bytes of those advised before the first
 * that failed, or that one's error.
 */
#include "proxy.h"
#include "kernel.h"
#include "mm.h"

#include <errno.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/uio.h>

#define PVM_IOV_MAX 1024                     /* UIO_MAXIOV */
#define PVM_MAX_RW_COUNT 0x7ffff000UL        /* INT_MAX & PAGE_MASK */
#define PVM_USER_END 0x7ffffffff000ULL       /* TASK_SIZE_MAX */
#define PVM_PAGE 4096UL

struct pvm_iovecs {
    struct iovec *v;
    unsigned long n;
    size_t total;
};

static long read_iovecs(struct proxy_process *p, gva_t uvec, unsigned long n,
                        bool check_range, struct pvm_iovecs *out)
{
    out->v = NULL;
    out->n = n;
    out->total = 0;
    if (n > PVM_IOV_MAX)
        return -EINVAL;
    if (n == 0)
        return 0;
    out->v = calloc(n, sizeof(*out->v));
    if (!out->v)
        return -ENOMEM;
    if (proxy_copy_in(p, out->v, uvec, n * sizeof(*out->v)) < 0)
        return -EFAULT;
    for (unsigned long i = 0; i < n; i++)
        if ((ssize_t)out->v[i].iov_len < 0)
            return -EINVAL;
    for (unsigned long i = 0; i < n; i++) {
        uint64_t base = (uint64_t)(uintptr_t)out->v[i].iov_base;
        size_t len = out->v[i].iov_len;
        if (check_range && (base > PVM_USER_END || len > PVM_USER_END - base))
            return -EFAULT;
        if (len > PVM_MAX_RW_COUNT - out->total)
            out->v[i].iov_len = len = PVM_MAX_RW_COUNT - out->total;
        out->total += len;
    }
    return 0;
}

/* The live guest process one of whose threads has this id, or NULL. */
static struct proxy_process *find_target(struct proxy_process *p, int pid)
{
    struct proxy_world *w = p->world;
    int nprocs = w ? w->nr_procs : 1;
    for (int i = 0; pid > 0 && i < nprocs; i++) {
        struct proxy_process *q = w ? w->procs[i] : p;
        if (q->zombie || q->exited)
            continue;
        if (proxy_ns_pid_of(p, q) == pid) /* its pid in p's pid namespace */
            return q;
        for (int k = 0; k < q->nr_threads; k++)
            if (q->threads[k].tid == pid &&
                q->threads[k].state != PROXY_THREAD_EXITED)
                return q;
    }
    return NULL;
}

static size_t to_page_end(uint64_t addr)
{
    return PVM_PAGE - (addr & (PVM_PAGE - 1));
}

/* Moves bytes between p's local and q's remote segments in order; the
 * count moved before the first page either side refuses. */
static size_t transfer(struct proxy_process *p, const struct pvm_iovecs *l,
                       struct proxy_process *q, const struct pvm_iovecs *r,
                       bool write)
{
    unsigned char buf[PVM_PAGE];
    size_t moved = 0, loff = 0, roff = 0;
    unsigned long li = 0, ri = 0;
    while (li < l->n && ri < r->n) {
        if (loff == l->v[li].iov_len) {
            li++, loff = 0;
            continue;
        }
        if (roff == r->v[ri].iov_len) {
            ri++, roff = 0;
            continue;
        }
        uint64_t la = (uint64_t)(uintptr_t)l->v[li].iov_base + loff;
        uint64_t ra = (uint64_t)(uintptr_t)r->v[ri].iov_base + roff;
        size_t n = l->v[li].iov_len - loff;
        if (n > r->v[ri].iov_len - roff)
            n = r->v[ri].iov_len - roff;
        if (n > to_page_end(la))
            n = to_page_end(la);
        if (n > to_page_end(ra))
            n = to_page_end(ra);
        if (proxy_secretmem_page(q, ra))
            break; /* get_user_pages finds no secret page */
        int rc = write ? proxy_copy_in(p, buf, la, n)
                       : proxy_copy_in(q, buf, ra, n);
        if (rc == 0)
            rc = write ? proxy_copy_out(q, ra, buf, n)
                       : proxy_copy_out(p, la, buf, n);
        if (rc < 0)
            break;
        moved += n;
        loff += n;
        roff += n;
    }
    return moved;
}

static long process_vm_rw(struct proxy_process *p, const uint64_t a[6],
                          bool write)
{
    if (a[5] != 0)
        return -EINVAL;
    struct pvm_iovecs l, r = {0};
    long rc = read_iovecs(p, a[1], a[2], true, &l);
    if (rc < 0 || l.total == 0)
        goto out;
    rc = read_iovecs(p, a[3], a[4], false, &r);
    if (rc < 0 || r.total == 0)
        goto out;
    struct proxy_process *q = find_target(p, (int)a[0]);
    if (!q) {
        rc = -ESRCH;
        goto out;
    }
    if (!proxy_ptrace_may_access(p, q)) {
        rc = -EPERM;
        goto out;
    }
    size_t moved = transfer(p, &l, q, &r, write);
    rc = moved ? (long)moved : -EFAULT;
out:
    free(l.v);
    free(r.v);
    return rc;
}

static long sys_process_vm_readv(struct proxy_process *p, const uint64_t a[6])
{
    return process_vm_rw(p, a, false);
}

static long sys_process_vm_writev(struct proxy_process *p, const uint64_t a[6])
{
    return process_vm_rw(p, a, true);
}

#ifndef MADV_COLLAPSE
#define MADV_COLLAPSE 25
#endif

static bool advice_remote(int advice)
{
    return advice == MADV_COLD || advice == MADV_PAGEOUT ||
           advice == MADV_WILLNEED || advice == MADV_COLLAPSE;
}

static long sys_process_madvise(struct proxy_process *p, const uint64_t a[6])
{
    if (a[4] != 0)
        return -EINVAL;
    struct pvm_iovecs v;
    long rc = read_iovecs(p, a[1], a[2], true, &v);
    struct proxy_process *q = NULL;
    if (rc == 0)
        rc = proxy_pidfd_process(p, (int)a[0], &q);
    if (rc == 0 && (q->zombie || q->exited))
        rc = -ESRCH; /* no mm left */
    if (rc == 0 && !advice_remote((int)a[3]))
        rc = -EINVAL;
    if (rc == 0 && (!proxy_ptrace_may_access(p, q) || !proxy_ns_capable(p)))
        rc = -EPERM;
    size_t advised = 0;
    for (unsigned long i = 0; rc == 0 && i < v.n; i++) {
        uint64_t base = (uint64_t)(uintptr_t)v.v[i].iov_base;
        rc = proxy_madvise(q, base, v.v[i].iov_len, (int)a[3]);
        if (rc == 0)
            advised += v.v[i].iov_len;
    }
    free(v.v);
    return advised ? (long)advised : rc;
}

const struct proxy_syscall proxy_process_vm_syscalls[] = {
    {SYS_process_madvise, "process_madvise", sys_process_madvise},
    {SYS_process_vm_readv, "process_vm_readv", sys_process_vm_readv},
    {SYS_process_vm_writev, "process_vm_writev", sys_process_vm_writev},
    {-1, NULL, NULL},
};
