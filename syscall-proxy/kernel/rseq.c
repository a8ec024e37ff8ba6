/*
 * rseq.c - restartable sequences (rseq(2)), as Linux's kernel/rseq.c.
 *
 * A thread registers a struct rseq; the kernel keeps its cpu_id_start and
 * cpu_id current and, when the thread is preempted or takes a signal while
 * inside the critical section its rseq_cs names, moves it to the section's
 * abort handler. Under hvrun every guest thread runs on the one vCPU, so
 * the CPU number is always 0 (as getcpu says), written at registration.
 * "Preempted" is a switch to another thread of the process: when a thread
 * is loaded onto the vCPU again (thread.c), and before a signal's frame is
 * built (signal.c), its ip is checked against its rseq_cs, as Linux's
 * rseq_ip_fixup does; a host-timed cut after which the same thread goes
 * on is no preemption here (no other thread ran). The registration is
 * kept across fork and dropped at execve; a new thread starts with none.
 */
#include "proxy.h"
#include "kernel.h"
#include "internal.h"

#include <errno.h>
#include <linux/rseq.h>
#include <signal.h>
#include <stddef.h>
#include <string.h>
#include <sys/syscall.h>

#define ORIG_RSEQ_SIZE 32
/* The end of struct rseq's fields in Linux 6.1 (node_id, mm_cid). */
#define RSEQ_EXTENDED_SIZE 32

static struct proxy_thread *current_thread(struct proxy_process *p)
{
    return &p->threads[p->cur];
}

/* cpu_id_start, cpu_id: the one CPU; node_id, mm_cid too where there. */
static int write_cpu(struct proxy_process *p, const struct proxy_thread *t)
{
    uint32_t ids[2] = {0, 0};
    return proxy_copy_out(p, t->rseq + offsetof(struct rseq, cpu_id_start),
                          ids, sizeof(ids));
}

static long sys_rseq(struct proxy_process *p, const uint64_t a[6])
{
    gva_t area = a[0];
    uint32_t len = (uint32_t)a[1], sig = (uint32_t)a[3];
    int flags = (int)a[2];
    struct proxy_thread *t = current_thread(p);
    if (flags & RSEQ_FLAG_UNREGISTER) {
        if (flags & ~RSEQ_FLAG_UNREGISTER)
            return -EINVAL;
        if (t->rseq != area || !t->rseq)
            return -EINVAL;
        if (len != t->rseq_len)
            return -EINVAL;
        if (sig != t->rseq_sig)
            return -EPERM;
        uint32_t uninit[2] = {0, (uint32_t)RSEQ_CPU_ID_UNINITIALIZED};
        if (proxy_copy_out(p, area, uninit, sizeof(uninit)) < 0)
            return -EFAULT;
        t->rseq = 0;
        t->rseq_len = t->rseq_sig = 0;
        return 0;
    }
    if (flags)
        return -EINVAL;
    if (t->rseq) {
        if (t->rseq != area || len != t->rseq_len)
            return -EINVAL;
        return sig != t->rseq_sig ? -EPERM : -EBUSY;
    }
    if (len < ORIG_RSEQ_SIZE ||
        (len == ORIG_RSEQ_SIZE && (area & (ORIG_RSEQ_SIZE - 1))) ||
        (len != ORIG_RSEQ_SIZE &&
         ((area & (ORIG_RSEQ_SIZE - 1)) || len < RSEQ_EXTENDED_SIZE)))
        return -EINVAL;
    uint8_t probe[ORIG_RSEQ_SIZE];
    if (proxy_copy_in(p, probe, area, sizeof(probe)) < 0)
        return -EFAULT;
    t->rseq = area;
    t->rseq_len = len;
    t->rseq_sig = sig;
    return write_cpu(p, t) < 0 ? -EFAULT : 0;
}

/* Linux's rseq_ip_fixup: inside the critical section its rseq_cs names,
 * the thread goes to the abort handler (after checking the signature
 * before it; a bad one or an unreadable rseq_cs is a SIGSEGV); and the
 * rseq_cs pointer is cleared either way. */
void proxy_rseq_fixup(struct proxy_process *p)
{
    struct proxy_thread *t = current_thread(p);
    if (!t->rseq)
        return;
    uint64_t cs_ptr;
    gva_t at = t->rseq + offsetof(struct rseq, rseq_cs);
    if (proxy_copy_in(p, &cs_ptr, at, sizeof(cs_ptr)) < 0)
        goto bad;
    if (!cs_ptr)
        return;
    struct rseq_cs cs;
    if (proxy_copy_in(p, &cs, cs_ptr, sizeof(cs)) < 0 || cs.version != 0)
        goto bad;
    struct vmm_regs *r = vmm_vm_regs(p->vm);
    bool inside = r->rip >= cs.start_ip &&
                  r->rip - cs.start_ip < cs.post_commit_offset;
    if (inside) {
        uint32_t sig;
        if (cs.abort_ip < 4 || cs.start_ip + cs.post_commit_offset <
                                   cs.start_ip ||
            (cs.abort_ip >= cs.start_ip &&
             cs.abort_ip < cs.start_ip + cs.post_commit_offset) ||
            proxy_copy_in(p, &sig, cs.abort_ip - 4, 4) < 0 ||
            sig != t->rseq_sig)
            goto bad;
        r->rip = cs.abort_ip;
        vmm_vm_enter_user(p->vm);
    }
    uint64_t zero = 0;
    if (proxy_copy_out(p, at, &zero, sizeof(zero)) < 0)
        goto bad;
    return;
bad: {
    siginfo_t info;
    memset(&info, 0, sizeof(info));
    info.si_signo = SIGSEGV;
    info.si_code = SI_KERNEL;
    proxy_signal_force_thread(p, p->tid, &info);
}
}

const struct proxy_syscall proxy_rseq_syscalls[] = {
    {SYS_rseq, "rseq", sys_rseq},
    {-1, NULL, NULL},
};
