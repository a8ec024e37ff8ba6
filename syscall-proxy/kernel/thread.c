/*
 * thread.c - guest threads on the process's single vCPU: clone of a
 * thread, thread exit, futexes and the switch between threads.
 *
 * Invariants: threads[cur] is the thread on the vCPU; its per-thread fields
 * are live in proxy_process and the vCPU, every other thread's are saved in
 * its proxy_thread. A thread leaves the vCPU only at a syscall (block,
 * yield, exit, or the end of its quantum); which thread runs next is
 * world.c's choice, so the interleaving is decided by the program, never
 * by the host.
 *
 * Not here: preemption of a thread that spins without syscalls (it keeps
 * the vCPU: kvm_pvm has no PMU to count instructions); PI futexes are
 * futex_pi.c's.
 */
#include "proxy.h"
#include "kernel.h"
#include "internal.h"
#include "namespace.h"
#include "ptrace.h"
#include "futex.h"
#include "det_sched.h"

#include <errno.h>
#include <linux/futex.h>
#include <linux/sched.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>

#include "cpu_x86_64.h"
#include "det.h"

/* Without a world (a lone process in unit tests) thread tids follow the
 * pid; in a run they come from the run's one id counter. */
#define FIRST_THREAD_TID_OFFSET 1
#define SYSCALL_INSN_BYTES 2

static struct proxy_thread *current(struct proxy_process *p)
{
    return &p->threads[p->cur];
}

int proxy_thread_init(struct proxy_process *p)
{
    p->cap_threads = 4;
    p->threads = calloc((size_t)p->cap_threads, sizeof(*p->threads));
    if (!p->threads)
        return -ENOMEM;
    p->nr_threads = 1;
    p->cur = 0;
    p->threads[0].tid = p->tid;
    p->threads[0].state = PROXY_THREAD_RUNNABLE;
    p->next_tid = p->pid + FIRST_THREAD_TID_OFFSET;
    p->quantum_left = DET_SCHED_QUANTUM;
    return 0;
}

/* ---- switching ----------------------------------------------------------- */

static int save_current(struct proxy_process *p)
{
    struct proxy_thread *t = current(p);
    t->regs = *vmm_vm_regs(p->vm);
    t->fs_base = vmm_vm_fs_base(p->vm);
    t->gs_base = vmm_vm_gs_base(p->vm);
    t->tid = p->tid;
    t->sigmask = p->sig.sigmask;
    t->altstack = p->sig.altstack;
    t->clear_child_tid = p->clear_child_tid;
    t->robust_list = p->robust_list;
    if (t->state == PROXY_THREAD_EXITED)
        return 0;
    if (!t->xstate && !(t->xstate = malloc(VMM_XSAVE_MAX_BYTES)))
        return -ENOMEM;
    return vmm_vm_get_xstate(p->vm, t->xstate, VMM_XSAVE_MAX_BYTES);
}

static void load_thread(struct proxy_process *p, int idx)
{
    struct proxy_thread *t = &p->threads[idx];
    p->cur = idx;
    *vmm_vm_regs(p->vm) = t->regs;
    vmm_vm_set_fs_base(p->vm, t->fs_base);
    vmm_vm_set_gs_base(p->vm, t->gs_base);
    if (t->xstate)
        vmm_vm_set_xstate(p->vm, t->xstate, VMM_XSAVE_MAX_BYTES);
    vmm_vm_enter_user(p->vm);
    p->tid = t->tid;
    p->sig.sigmask = t->sigmask;
    p->sig.altstack = t->altstack;
    p->clear_child_tid = t->clear_child_tid;
    p->robust_list = t->robust_list;
    p->quantum_left = DET_SCHED_QUANTUM;
    det_log_value(p->det, DET_SRC_SCHED, &t->tid, sizeof(t->tid));
    proxy_rseq_fixup(p); /* another thread ran: it was preempted */
}

static uint64_t monotonic_ns(struct proxy_process *p)
{
    struct timespec ts;
    det_clock_gettime(p->det, CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

int proxy_thread_switch(struct proxy_process *p, int idx)
{
    if (idx == p->cur)
        return 0;
    int rc = save_current(p);
    if (rc < 0)
        return rc;
    load_thread(p, idx);
    return 0;
}

uint64_t proxy_thread_earliest_deadline(struct proxy_process *p, int *idx)
{
    uint64_t best = UINT64_MAX;
    for (int i = 0; i < p->nr_threads; i++) {
        struct proxy_thread *t = &p->threads[i];
        if ((t->state == PROXY_THREAD_FUTEX_WAIT ||
             t->state == PROXY_THREAD_WAIT_SLEEP ||
             t->state == PROXY_THREAD_WAIT_RETRY ||
             (t->state == PROXY_THREAD_WAIT_FD && t->poll_deadline) ||
             t->state == PROXY_THREAD_WAIT_SIGNAL) &&
            t->has_deadline && t->deadline_ns < best) {
            best = t->deadline_ns;
            *idx = i;
        }
    }
    return best;
}

bool proxy_thread_deadline_passed(struct proxy_process *p, int idx)
{
    const struct proxy_thread *t = &p->threads[idx];
    bool timed = t->state == PROXY_THREAD_FUTEX_WAIT ||
                 t->state == PROXY_THREAD_WAIT_SLEEP ||
                 t->state == PROXY_THREAD_WAIT_RETRY ||
                 (t->state == PROXY_THREAD_WAIT_FD && t->poll_deadline) ||
                 t->state == PROXY_THREAD_WAIT_SIGNAL;
    return timed && t->has_deadline && t->deadline_ns <= monotonic_ns(p);
}

/* Logical time advances to the deadline; a futex wait returns -ETIMEDOUT,
 * a signal wait (sigtimedwait) re-runs and sees sigwait_timed_out. */
void proxy_thread_expire(struct proxy_process *p, int idx)
{
    struct proxy_thread *t = &p->threads[idx];
    uint64_t now = monotonic_ns(p);
    if (t->deadline_ns > now)
        det_sleep(p->det, t->deadline_ns - now);
    t->has_deadline = false;
    if (t->state == PROXY_THREAD_WAIT_RETRY) {
        t->state = PROXY_THREAD_RUNNABLE; /* RAX still holds the number */
        return;
    }
    if (t->state == PROXY_THREAD_WAIT_FD) {
        t->poll_timed_out = true; /* the call runs again and says so */
        t->state = PROXY_THREAD_RUNNABLE;
        return;
    }
    if (t->state == PROXY_THREAD_WAIT_SIGNAL &&
        t->sigwait_kind == PROXY_SIGWAIT_POLL) {
        /* a ppoll/pselect on no fd timed out: 0, and the caller's mask
         * back in place of the call's (io/poll.c left it) */
        t->state = PROXY_THREAD_RUNNABLE;
        t->sigwait_kind = PROXY_SIGWAIT_NONE;
        if (idx == p->cur)
            vmm_vm_regs(p->vm)->rax = 0;
        else
            t->regs.rax = 0;
        if (t->saved_sigmask_valid) {
            if (idx == p->cur)
                p->sig.sigmask = t->saved_sigmask;
            else
                t->sigmask = t->saved_sigmask;
            t->saved_sigmask_valid = false;
        }
        return;
    }
    if (t->state == PROXY_THREAD_WAIT_SIGNAL) {
        t->sigwait_timed_out = true;
        t->state = PROXY_THREAD_RUNNABLE;
        return;
    }
    uint64_t result = t->state == PROXY_THREAD_WAIT_SLEEP
                          ? 0
                          : (uint64_t)-ETIMEDOUT;
    t->state = PROXY_THREAD_RUNNABLE;
    /* The current thread's registers are live on the vCPU. */
    if (idx == p->cur)
        vmm_vm_regs(p->vm)->rax = result;
    else
        t->regs.rax = result;
}

bool proxy_thread_poll_deadline(struct proxy_process *p, uint64_t timeout_ns,
                                uint64_t *left_ns)
{
    struct proxy_thread *t = current(p);
    if (t->poll_timed_out) {
        *left_ns = 0;
        return false;
    }
    uint64_t now = monotonic_ns(p);
    if (!t->poll_deadline) {
        t->poll_deadline = true;
        t->has_deadline = true;
        t->deadline_ns = now + timeout_ns;
    }
    *left_ns = t->deadline_ns > now ? t->deadline_ns - now : 0;
    return *left_ns > 0;
}

void proxy_thread_poll_done(struct proxy_process *p)
{
    struct proxy_thread *t = current(p);
    if (t->poll_deadline)
        t->has_deadline = false;
    t->poll_deadline = t->poll_timed_out = false;
}

long proxy_thread_sleep(struct proxy_process *p, uint64_t deadline_ns,
                        gva_t rem)
{
    struct proxy_thread *t = current(p);
    t->state = PROXY_THREAD_WAIT_SLEEP;
    t->has_deadline = true;
    t->deadline_ns = deadline_ns;
    t->sleep_rem = rem;
    p->resched = true;
    return 0; /* the result when the deadline passes */
}

long proxy_thread_retry_after(struct proxy_process *p, uint64_t ns)
{
    struct proxy_thread *t = current(p);
    t->state = PROXY_THREAD_WAIT_RETRY;
    t->has_deadline = true;
    t->deadline_ns = monotonic_ns(p) + ns;
    return PROXY_RET_BLOCK;
}

long proxy_thread_sleep_for(struct proxy_process *p, uint64_t ns, gva_t rem)
{
    return proxy_thread_sleep(p, monotonic_ns(p) + ns, rem);
}

void proxy_thread_interrupt_sleep(struct proxy_process *p, int idx)
{
    struct proxy_thread *t = &p->threads[idx];
    uint64_t now = monotonic_ns(p);
    uint64_t left = t->deadline_ns > now ? t->deadline_ns - now : 0;
    t->has_deadline = false;
    t->state = PROXY_THREAD_RUNNABLE;
    struct vmm_regs *r = idx == p->cur ? vmm_vm_regs(p->vm) : &t->regs;
    if (t->sleep_rem) {
        struct timespec ts = {(time_t)(left / 1000000000ULL),
                              (long)(left % 1000000000ULL)};
        /* nanosleep_copyout: a remainder it cannot write ends the sleep
         * with EFAULT, not restarted whatever the signal's disposition */
        if (vmm_as_copy_out(p->as, t->sleep_rem, &ts, sizeof(ts)) < 0) {
            r->rax = (uint64_t)-EFAULT;
            return;
        }
    }
    /* -ERESTART_RESTARTBLOCK: a handler makes it EINTR (signal.c's
     * delivery, eintr_on_handler); without one the thread re-enters at
     * restart_syscall, which sleeps on to the same deadline. */
    r->rax = SYS_restart_syscall;
    r->rip -= SYSCALL_INSN_BYTES;
    t->restartable = true;
    t->eintr_on_handler = true;
    t->restart_sleep = true;
    t->restart_deadline_ns = t->deadline_ns;
    t->restart_rem = t->sleep_rem;
}

/* restart_syscall: the interrupted sleep's restart block, or EINTR with
 * none (Linux's do_no_restart_syscall). */
long proxy_thread_restart_syscall(struct proxy_process *p)
{
    struct proxy_thread *t = current(p);
    if (!t->restart_sleep)
        return -EINTR;
    t->restart_sleep = false;
    return proxy_thread_sleep(p, t->restart_deadline_ns, t->restart_rem);
}

/* ---- futexes ------------------------------------------------------------- */

/*
 * A futex word is named by its key: a private futex (FUTEX_PRIVATE_FLAG,
 * or memory that is not MAP_SHARED) by the address space and address, as
 * Linux keys it by mm (so the processes of clone(CLONE_VM) without
 * CLONE_THREAD, which share one, meet on it); one in
 * MAP_SHARED memory by the file behind it and the offset, so waiters and
 * wakers in different processes (POSIX semaphores, process-shared
 * mutexes) meet, as on Linux.
 */
void futex_key_of(struct proxy_process *p, gva_t uaddr, int op,
                  struct futex_key *key)
{
    struct vmm_vma *v = (op & FUTEX_PRIVATE_FLAG)
                            ? NULL
                            : vmm_as_find_vma(p->as, uaddr);
    struct stat st;
    if (v && v->shared && fstat(v->shared->fd, &st) == 0) {
        key->k[0] = st.st_dev;
        key->k[1] = st.st_ino;
        key->k[2] = v->shared_off + (uaddr - v->start);
        key->shared = true;
        return;
    }
    key->k[0] = (uint64_t)(uintptr_t)p->as;
    key->k[1] = uaddr;
    key->k[2] = 0;
    key->shared = false;
}

/* The index of key among a futex_waitv waiter's keys, or -1. */
static int waitv_index(const struct proxy_thread *t, const struct futex_key *key)
{
    for (int i = 0; i < t->futex_nr_waitv; i++)
        if (!memcmp(t->futex_waitv_keys[i], key->k, sizeof(key->k)))
            return i;
    return -1;
}

static bool key_matches(const struct proxy_thread *t,
                        const struct futex_key *key)
{
    if (t->state != PROXY_THREAD_FUTEX_WAIT)
        return false;
    if (t->futex_kind == PROXY_FUTEX_WAITV)
        return waitv_index(t, key) >= 0;
    return !memcmp(t->futex_key, key->k, sizeof(key->k));
}

/* The longest waiter on key (FIFO, as Linux's hash queues), or NULL. */
static struct proxy_thread *first_waiter(struct proxy_process *p,
                                         const struct futex_key *key,
                                         uint32_t bitset,
                                         struct proxy_process **owner)
{
    struct proxy_thread *first = NULL;
    struct proxy_world *w = p->world;
    int nprocs = w ? w->nr_procs : 1;
    for (int pi = 0; pi < nprocs; pi++) {
        struct proxy_process *q = w ? w->procs[pi] : p;
        /* a private key: the processes on p's address space only */
        if (!key->shared && q->as != p->as)
            continue;
        for (int i = 0; !q->zombie && i < q->nr_threads; i++) {
            struct proxy_thread *t = &q->threads[i];
            if (key_matches(t, key) && (t->futex_bitset & bitset) &&
                (!first || t->wait_seq < first->wait_seq)) {
                first = t;
                *owner = q;
            }
        }
    }
    return first;
}

static int futex_wake(struct proxy_process *p, const struct futex_key *key,
                      int n, uint32_t bitset)
{
    int woken = 0;
    while (woken < n) {
        struct proxy_process *owner = p;
        struct proxy_thread *first = first_waiter(p, key, bitset, &owner);
        if (!first)
            break;
        if (first->futex_kind != PROXY_FUTEX_PLAIN &&
            first->futex_kind != PROXY_FUTEX_WAITV)
            return -EINVAL; /* a PI waiter is not woken so (Linux) */
        first->state = PROXY_THREAD_RUNNABLE;
        /* futex_waitv returns the index of the futex that woke it */
        first->regs.rax = first->futex_kind == PROXY_FUTEX_WAITV
                              ? (uint64_t)waitv_index(first, key)
                              : 0;
        woken++;
    }
    return woken;
}

static int futex_requeue(struct proxy_process *p, const struct futex_key *from,
                         const struct futex_key *to, int n)
{
    int moved = 0;
    while (moved < n) {
        struct proxy_process *owner = p;
        struct proxy_thread *t =
            first_waiter(p, from, FUTEX_BITSET_MATCH_ANY, &owner);
        if (!t)
            break;
        if (t->futex_kind == PROXY_FUTEX_WAITV)
            memcpy(t->futex_waitv_keys[waitv_index(t, from)], to->k,
                   sizeof(to->k));
        else if (t->futex_kind != PROXY_FUTEX_PLAIN)
            return -EINVAL;
        else
            memcpy(t->futex_key, to->k, sizeof(to->k));
        moved++;
    }
    return moved;
}

static int futex_wake_addr(struct proxy_process *p, gva_t uaddr, int op,
                           int n, uint32_t bitset)
{
    struct futex_key key;
    futex_key_of(p, uaddr, op, &key);
    return futex_wake(p, &key, n, bitset);
}

int futex_read_timeout(struct proxy_process *p, gva_t uts, bool absolute,
                       int clk, uint64_t *deadline)
{
    struct timespec ts;
    int rc = proxy_copy_in(p, &ts, uts, sizeof(ts));
    if (rc < 0)
        return rc;
    if (ts.tv_sec < 0 || ts.tv_nsec < 0 || ts.tv_nsec >= 1000000000L)
        return -EINVAL;
    uint64_t ns = (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
    uint64_t now = monotonic_ns(p);
    if (absolute && clk == CLOCK_REALTIME) {
        struct timespec rt;
        det_clock_gettime(p->det, CLOCK_REALTIME, &rt);
        uint64_t rt_ns =
            (uint64_t)rt.tv_sec * 1000000000ULL + (uint64_t)rt.tv_nsec;
        ns = ns > rt_ns ? ns - rt_ns : 0;
        absolute = false;
    }
    *deadline = absolute ? ns : now + ns;
    return 0;
}

/* Blocks the current thread; the result (0 when woken, -ETIMEDOUT) is
 * written into its saved RAX by the waker. */
/*
 * Linux keys a shared (not FUTEX_PRIVATE_FLAG) futex by its page, which
 * get_futex_key looks up (get_user_pages_fast) for a wait, a wake and a
 * requeue alike: no page there to read (unmapped, PROT_NONE, past the end
 * of its file) is EFAULT, and so is an anonymous page the process may not
 * write, which can never change (a wait there would last forever).
 */
static bool shared_key_refused(struct proxy_process *p, gva_t uaddr, int op)
{
    if (op & FUTEX_PRIVATE_FLAG)
        return false;
    const struct vmm_vma *v = vmm_as_find_vma(p->as, uaddr);
    if (!v || v->prot == PROT_NONE || (v->eof_at && uaddr >= v->eof_at))
        return true;
    return !(v->prot & PROT_WRITE) && !(v->flags & VMM_VMA_FILE) &&
           !v->shared;
}

/* A wake: its key first (EFAULT as above), then the waiters. */
static long futex_wake_checked(struct proxy_process *p, gva_t uaddr, int op,
                               int n, uint32_t bitset)
{
    if (shared_key_refused(p, uaddr, op))
        return -EFAULT;
    return futex_wake_addr(p, uaddr, op, n, bitset);
}

static long futex_wait(struct proxy_process *p, const uint64_t a[6],
                       uint32_t bitset, bool absolute)
{
    uint32_t cur;
    int rc = proxy_copy_in(p, &cur, a[0], sizeof(cur));
    if (rc < 0)
        return rc;
    if (shared_key_refused(p, a[0], (int)a[1]))
        return -EFAULT;
    if (cur != (uint32_t)a[2])
        return -EAGAIN;
    struct proxy_thread *t = current(p);
    t->has_deadline = false;
    if (a[3]) {
        int clk = ((int)a[1] & FUTEX_CLOCK_REALTIME) ? CLOCK_REALTIME
                                                     : CLOCK_MONOTONIC;
        rc = futex_read_timeout(p, a[3], absolute, clk, &t->deadline_ns);
        if (rc < 0)
            return rc;
        t->has_deadline = true;
    }
    struct futex_key key;
    futex_key_of(p, a[0], (int)a[1], &key);
    t->state = PROXY_THREAD_FUTEX_WAIT;
    t->futex_uaddr = a[0];
    memcpy(t->futex_key, key.k, sizeof(key.k));
    t->futex_bitset = bitset;
    t->futex_kind = PROXY_FUTEX_PLAIN;
    /* One order for every process: the run's event count. */
    t->wait_seq = p->det->events;
    p->resched = true;
    return 0;
}

/* FUTEX_WAKE_OP: oldval = *uaddr2; *uaddr2 = op(oldval); wake uaddr; if
 * cmp(oldval) also wake uaddr2. */
static long futex_wake_op(struct proxy_process *p, const uint64_t a[6])
{
    uint32_t val3 = (uint32_t)a[5], old;
    uint32_t oparg = (val3 >> 12) & 0xfff, cmparg = val3 & 0xfff;
    int op = (val3 >> 28) & 0x7, cmp = (val3 >> 24) & 0xf;
    if ((val3 >> 31) & 1)
        oparg = oparg < 32 ? 1u << oparg : 0;
    if (op > FUTEX_OP_XOR || cmp > FUTEX_OP_CMP_GE)
        return -ENOSYS;
    if (shared_key_refused(p, a[0], (int)a[1]) ||
        shared_key_refused(p, a[4], (int)a[1]))
        return -EFAULT;
    int rc = proxy_copy_in(p, &old, a[4], sizeof(old));
    if (rc < 0)
        return rc;
    uint32_t next = op == FUTEX_OP_SET    ? oparg
                    : op == FUTEX_OP_ADD  ? old + oparg
                    : op == FUTEX_OP_OR   ? old | oparg
                    : op == FUTEX_OP_ANDN ? old & ~oparg
                                          : old ^ oparg;
    rc = proxy_copy_out(p, a[4], &next, sizeof(next));
    if (rc < 0)
        return rc;
    int woken = futex_wake_addr(p, a[0], (int)a[1], (int)a[2],
                                FUTEX_BITSET_MATCH_ANY);
    if (woken < 0)
        return woken;
    int o = (int)old, c = (int)cmparg;
    bool hit = cmp == FUTEX_OP_CMP_EQ   ? o == c
               : cmp == FUTEX_OP_CMP_NE ? o != c
               : cmp == FUTEX_OP_CMP_LT ? o < c
               : cmp == FUTEX_OP_CMP_LE ? o <= c
               : cmp == FUTEX_OP_CMP_GT ? o > c
                                        : o >= c;
    if (hit) {
        int more = futex_wake_addr(p, a[4], (int)a[1], (int)a[3],
                                   FUTEX_BITSET_MATCH_ANY);
        if (more < 0)
            return more;
        woken += more;
    }
    return woken;
}

static long futex_cmp_requeue(struct proxy_process *p, const uint64_t a[6],
                              bool cmp)
{
    /* futex_requeue's first check: the counts are ints (nr_requeue is
     * the timeout argument's low 32 bits) and neither may be negative */
    if ((int)a[2] < 0 || (int)a[3] < 0)
        return -EINVAL;
    /* Both keys, then the compare (futex_requeue's order). */
    if (shared_key_refused(p, a[0], (int)a[1]) ||
        shared_key_refused(p, a[4], (int)a[1]))
        return -EFAULT;
    if (cmp) {
        uint32_t cur;
        int rc = proxy_copy_in(p, &cur, a[0], sizeof(cur));
        if (rc < 0)
            return rc;
        if (cur != (uint32_t)a[5])
            return -EAGAIN;
    }
    struct futex_key from, to;
    futex_key_of(p, a[0], (int)a[1], &from);
    futex_key_of(p, a[4], (int)a[1], &to);
    int woken = futex_wake(p, &from, (int)a[2], FUTEX_BITSET_MATCH_ANY);
    if (woken < 0)
        return woken;
    int moved = futex_requeue(p, &from, &to, (int)a[3]);
    return moved < 0 ? moved : woken + moved;
}

static long sys_futex(struct proxy_process *p, const uint64_t a[6])
{
    int cmd = (int)a[1] & FUTEX_CMD_MASK;
    if (a[0] & 3)
        return -EINVAL;
    switch (cmd) {
    case FUTEX_WAIT:
        return futex_wait(p, a, FUTEX_BITSET_MATCH_ANY, false);
    case FUTEX_WAIT_BITSET:
        if ((uint32_t)a[5] == 0)
            return -EINVAL;
        return futex_wait(p, a, (uint32_t)a[5], true);
    case FUTEX_WAKE:
        return futex_wake_checked(p, a[0], (int)a[1], (int)a[2],
                                  FUTEX_BITSET_MATCH_ANY);
    case FUTEX_WAKE_BITSET:
        if ((uint32_t)a[5] == 0)
            return -EINVAL;
        return futex_wake_checked(p, a[0], (int)a[1], (int)a[2],
                                  (uint32_t)a[5]);
    case FUTEX_REQUEUE:
        return futex_cmp_requeue(p, a, false);
    case FUTEX_CMP_REQUEUE:
        return futex_cmp_requeue(p, a, true);
    case FUTEX_WAKE_OP:
        return futex_wake_op(p, a);
    default:
        return futex_pi_op(p, a, cmd);
    }
}

/* ---- futex_waitv ----------------------------------------------------------- */

#define FUTEX_WAITV_MAX 128
#define FUTEX2_SIZE_U32 0x02
#define FUTEX2_SIZE_MASK 0x03
#define FUTEX2_PRIVATE FUTEX_PRIVATE_FLAG

struct k_futex_waitv {
    uint64_t val, uaddr;
    uint32_t flags, reserved;
};

/* Each waiter's word, as futex_parse_waitv checks it: only 32-bit
 * futexes, no unknown flag or reserved bits, an aligned address. */
static long waitv_parse(const struct k_futex_waitv *v, unsigned int nr)
{
    for (unsigned int i = 0; i < nr; i++)
        if ((v[i].flags & ~(uint32_t)(FUTEX2_SIZE_MASK | FUTEX2_PRIVATE)) ||
            v[i].reserved ||
            (v[i].flags & FUTEX2_SIZE_MASK) != FUTEX2_SIZE_U32 ||
            (v[i].uaddr & 3))
            return -EINVAL;
    return 0;
}

/* futex_wait_multiple_setup: every word must hold its value (else
 * EAGAIN), and each key is taken as FUTEX_WAIT takes one. */
static long waitv_keys(struct proxy_process *p, const struct k_futex_waitv *v,
                       unsigned int nr, uint64_t (*keys)[3])
{
    for (unsigned int i = 0; i < nr; i++) {
        uint32_t cur;
        int op = (v[i].flags & FUTEX2_PRIVATE) ? FUTEX_PRIVATE_FLAG : 0;
        if (proxy_copy_in(p, &cur, v[i].uaddr, sizeof(cur)) < 0 ||
            shared_key_refused(p, v[i].uaddr, op))
            return -EFAULT;
        if (cur != (uint32_t)v[i].val)
            return -EAGAIN;
        struct futex_key key;
        futex_key_of(p, v[i].uaddr, op, &key);
        memcpy(keys[i], key.k, sizeof(key.k));
    }
    return 0;
}

/*
 * futex_waitv(waiters, nr, flags, timeout, clockid): waits on up to 128
 * futexes at once; a FUTEX_WAKE of any returns its index. The timeout is
 * absolute on CLOCK_MONOTONIC or CLOCK_REALTIME. Linux's order: flags,
 * the count, the clock and timeout, the waiters' flags, their values.
 */
static long sys_futex_waitv(struct proxy_process *p, const uint64_t a[6])
{
    unsigned int nr = (unsigned int)a[1];
    int clockid = (int)a[4];
    if (a[2] != 0 || !a[0] || nr == 0 || nr > FUTEX_WAITV_MAX)
        return -EINVAL;
    uint64_t deadline = 0;
    if (a[3]) {
        if (clockid != CLOCK_REALTIME && clockid != CLOCK_MONOTONIC)
            return -EINVAL;
        long rc = futex_read_timeout(p, a[3], true, clockid, &deadline);
        if (rc < 0)
            return rc;
    }
    struct k_futex_waitv *v = calloc(nr, sizeof(*v));
    uint64_t(*keys)[3] = calloc(nr, sizeof(*keys));
    long rc = v && keys ? 0 : -ENOMEM;
    if (rc == 0 && proxy_copy_in(p, v, a[0], nr * sizeof(*v)) < 0)
        rc = -EFAULT;
    if (rc == 0)
        rc = waitv_parse(v, nr);
    if (rc == 0)
        rc = waitv_keys(p, v, nr, keys);
    free(v);
    if (rc < 0) {
        free(keys);
        return rc;
    }
    struct proxy_thread *t = current(p);
    free(t->futex_waitv_keys);
    t->futex_waitv_keys = keys;
    t->futex_nr_waitv = (int)nr;
    t->has_deadline = a[3] != 0;
    t->deadline_ns = deadline;
    t->state = PROXY_THREAD_FUTEX_WAIT;
    memset(t->futex_key, 0, sizeof(t->futex_key)); /* matches no key */
    t->futex_bitset = FUTEX_BITSET_MATCH_ANY;
    t->futex_kind = PROXY_FUTEX_WAITV;
    t->wait_seq = p->det->events;
    p->resched = true;
    return 0;
}

/* ---- clone and exit ------------------------------------------------------ */

static struct proxy_thread *new_thread_slot(struct proxy_process *p)
{
    if (p->nr_threads == p->cap_threads) {
        int cap = p->cap_threads * 2;
        void *n = realloc(p->threads, (size_t)cap * sizeof(*p->threads));
        if (!n)
            return NULL;
        p->threads = n;
        p->cap_threads = cap;
    }
    struct proxy_thread *t = &p->threads[p->nr_threads];
    memset(t, 0, sizeof(*t));
    return t;
}

#define THREAD_FLAGS (CLONE_VM | CLONE_THREAD | CLONE_SIGHAND)

static long clone_thread(struct proxy_process *p, uint64_t flags,
                         gva_t stack, gva_t ptid, gva_t ctid, uint64_t tls)
{
    if ((flags & THREAD_FLAGS) != THREAD_FLAGS)
        return -EINVAL;
    struct proxy_thread *t = new_thread_slot(p);
    if (!t || !(t->xstate = malloc(VMM_XSAVE_MAX_BYTES)))
        return -ENOMEM;
    int rc = vmm_vm_get_xstate(p->vm, t->xstate, VMM_XSAVE_MAX_BYTES);
    if (rc < 0) {
        free(t->xstate);
        return rc;
    }
    int tid = p->world ? proxy_world_next_id(p->world) : p->next_tid++;
    if (p->totals)
        p->totals->tasks_made++;
    /* The child returns 0 from the same syscall, on its own stack. */
    const struct vmm_regs *r = vmm_vm_regs(p->vm);
    t->regs = *r;
    t->regs.rax = 0;
    t->regs.rip = r->rcx;
    t->regs.rflags = r->r11;
    if (stack)
        t->regs.rsp = stack;
    /* Its name and seccomp filters are its creator's, as Linux's clone
     * copies them. */
    memcpy(t->comm, proxy_thread_comm(p), sizeof(t->comm));
    t->seccomp = current(p)->seccomp;
    proxy_seccomp_ref(t->seccomp);
    t->seccomp_strict = current(p)->seccomp_strict;
    t->tsc_sigsegv = current(p)->tsc_sigsegv;
    t->tid = tid;
    t->state = PROXY_THREAD_RUNNABLE;
    t->waited = true; /* a new thread wants its first turn soon */
    t->fs_base = (flags & CLONE_SETTLS) ? tls : vmm_vm_fs_base(p->vm);
    t->gs_base = vmm_vm_gs_base(p->vm);
    t->sigmask = p->sig.sigmask;
    t->altstack.ss_flags = SS_DISABLE; /* not inherited with CLONE_VM */
    if (flags & CLONE_CHILD_CLEARTID)
        t->clear_child_tid = ctid;
    int32_t tid32 = tid;
    if ((flags & CLONE_PARENT_SETTID) &&
        proxy_copy_out(p, ptid, &tid32, 4) < 0)
        rc = -EFAULT;
    if (rc == 0 && (flags & CLONE_CHILD_SETTID) &&
        proxy_copy_out(p, ctid, &tid32, 4) < 0)
        rc = -EFAULT;
    if (rc < 0) {
        free(t->xstate);
        return rc;
    }
    proxy_keys_clone_thread(p, t); /* a thread keyring if its creator has */
    proxy_perf_on_clone(p->world, current(p)->tid, tid);
    p->nr_threads++;
    if (flags & CLONE_SYSVSEM) /* copy_semundo: one list, made if none */
        proxy_sem_undo_share(p, NULL);
    proxy_ptrace_on_clone(p, p, &p->threads[p->nr_threads - 1], flags);
    return tid;
}

static long sys_clone(struct proxy_process *p, const uint64_t a[6])
{
    /* x86-64 argument order: flags, stack, parent_tid, child_tid, tls. */
    if (!(a[0] & CLONE_THREAD))
        return proxy_fork(p, a[0], a[1], a[2], a[3], a[4]);
    long ns_rc = proxy_ns_clone_check(p, a[0]); /* CLONE_NEW* */
    if (ns_rc < 0)
        return ns_rc;
    if (a[0] & CLONE_PIDFD) /* a thread's pidfd: Linux 6.9's PIDFD_THREAD */
        return -EINVAL;
    return clone_thread(p, a[0], a[1], a[2], a[3], a[4]);
}

/* clone3 is left to glibc's fallback: it retries with clone on ENOSYS. */
static long sys_clone3(struct proxy_process *p, const uint64_t a[6])
{
    return -ENOSYS;
}

static long sys_exit(struct proxy_process *p, const uint64_t a[6]);

long proxy_thread_exit_current(struct proxy_process *p)
{
    const uint64_t a[6] = {0};
    return sys_exit(p, a);
}

/*
 * A robust futex whose owner died (Linux's handle_futex_death): the word
 * that names tid as its owner gets FUTEX_OWNER_DIED (keeping
 * FUTEX_WAITERS) and one waiter is woken, so its lock returns
 * EOWNERDEAD; a pending operation's word that is still 0 wakes one. A
 * PI futex's waiter is given the lock afterwards (futex_pi_owner_exit).
 */
static void owner_died(struct proxy_process *p, gva_t uaddr, int tid,
                       bool pending, bool pi)
{
    uint32_t v;
    if ((uaddr & 3) || proxy_copy_in(p, &v, uaddr, 4) < 0)
        return;
    if (pending && !pi && v == 0) {
        futex_wake_addr(p, uaddr, 0, 1, FUTEX_BITSET_MATCH_ANY);
        return;
    }
    if ((v & FUTEX_TID_MASK) != (uint32_t)tid)
        return;
    uint32_t nv = (v & FUTEX_WAITERS) | FUTEX_OWNER_DIED;
    if (proxy_copy_out(p, uaddr, &nv, 4) == 0 && !pi && (v & FUTEX_WAITERS))
        futex_wake_addr(p, uaddr, 0, 1, FUTEX_BITSET_MATCH_ANY);
}

#define ROBUST_LIST_LIMIT 2048 /* Linux's: a list longer is cut there */

/* Linux's exit_robust_list. Bit 0 of a list pointer marks a PI futex. */
static void walk_robust_list(struct proxy_process *p, gva_t head, int tid)
{
    struct {
        uint64_t next;
        int64_t futex_offset;
        uint64_t pending;
    } h;
    if (!head || proxy_copy_in(p, &h, head, sizeof(h)) < 0)
        return;
    uint64_t entry = h.next & ~1ULL, pending = h.pending & ~1ULL;
    /* Added as Linux adds them (unsigned longs: a sum that wraps names no
     * memory, and the futex is then skipped), never as signed values. */
    uint64_t offset = (uint64_t)h.futex_offset;
    bool pi = h.next & 1;
    for (int n = 0; entry != head && n < ROBUST_LIST_LIMIT; n++) {
        uint64_t next;
        if (proxy_copy_in(p, &next, entry, sizeof(next)) < 0)
            return;
        if (entry != pending)
            owner_died(p, (gva_t)(entry + offset), tid, false, pi);
        entry = next & ~1ULL;
        pi = next & 1;
    }
    if (pending)
        owner_died(p, (gva_t)(pending + offset), tid, true, h.pending & 1);
}

void proxy_robust_list_exit(struct proxy_process *p, gva_t head, int tid)
{
    walk_robust_list(p, head, tid);
    futex_pi_owner_exit(p, tid, NULL);
}

struct proxy_process *proxy_as_other_user(const struct proxy_process *p)
{
    const struct proxy_world *w = p->world;
    for (int i = 0; p->as && w && i < w->nr_procs; i++)
        if (w->procs[i] != p && !w->procs[i]->zombie &&
            w->procs[i]->as == p->as)
            return w->procs[i];
    return NULL;
}

bool proxy_as_shared(const struct proxy_process *p)
{
    return proxy_as_other_user(p) != NULL;
}

/* CLONE_CHILD_CLEARTID of a thread leaving the address space: 0 written
 * and one waiter woken, as pthread_join and posix_spawn's waiters expect. */
static void clear_child_tid(struct proxy_process *p, gva_t ctid)
{
    uint32_t zero = 0;
    if (ctid && proxy_copy_out(p, ctid, &zero, 4) == 0)
        futex_wake_addr(p, ctid, FUTEX_PRIVATE_FLAG, 1,
                        FUTEX_BITSET_MATCH_ANY);
}

void proxy_mm_release(struct proxy_process *p)
{
    if (!proxy_as_shared(p))
        return; /* the memory goes with p: nobody can see the words */
    for (int i = 0; i < p->nr_threads; i++) {
        struct proxy_thread *t = &p->threads[i];
        if (t->state == PROXY_THREAD_EXITED)
            continue;
        clear_child_tid(p, i == p->cur ? p->clear_child_tid
                                       : t->clear_child_tid);
        t->clear_child_tid = 0;
    }
    p->clear_child_tid = 0;
}

void proxy_robust_lists_exit(struct proxy_process *p)
{
    for (int i = 0; i < p->nr_threads; i++) {
        struct proxy_thread *t = &p->threads[i];
        if (t->state == PROXY_THREAD_EXITED)
            continue;
        int tid = i == p->cur ? p->tid : t->tid;
        walk_robust_list(p, i == p->cur ? p->robust_list : t->robust_list,
                         tid);
        futex_pi_owner_exit(p, tid, p);
    }
}

static long sys_exit(struct proxy_process *p, const uint64_t a[6])
{
    struct proxy_thread *t = current(p);
    int live = 0;
    for (int i = 0; i < p->nr_threads; i++)
        live += p->threads[i].state != PROXY_THREAD_EXITED;
    if (live <= 1) {
        p->exited = true;
        p->exit_status = (int)((a[0] & 0xff) << 8);
        return PROXY_RET_NORETURN;
    }
    /* Signals sent to this thread alone die with it, as in Linux. */
    t->own_pending = 0;
    proxy_robust_list_exit(p, p->robust_list, p->tid);
    /* CLONE_CHILD_CLEARTID: pthread_join waits on this word. */
    clear_child_tid(p, p->clear_child_tid);
    proxy_ptrace_thread_exit(p, (int)(a[0] & 0xff));
    proxy_keys_thread_exit(p, t);
    t->state = PROXY_THREAD_EXITED;
    free(t->xstate);
    t->xstate = NULL;
    free(t->futex_waitv_keys);
    t->futex_waitv_keys = NULL;
    t->futex_nr_waitv = 0;
    p->resched = true;
    return 0;
}

static long sys_sched_yield(struct proxy_process *p, const uint64_t a[6])
{
    p->resched = true;
    return 0;
}

const struct proxy_syscall proxy_thread_syscalls[] = {
    {SYS_futex, "futex", sys_futex},
    {SYS_futex_waitv, "futex_waitv", sys_futex_waitv},
    {SYS_clone, "clone", sys_clone},
    {SYS_clone3, "clone3", sys_clone3},
    {SYS_exit, "exit", sys_exit},
    {SYS_sched_yield, "sched_yield", sys_sched_yield},
    {-1, NULL, NULL},
};

/* A thread's waiting state of io.c and fs.c (struct proxy_thread_io):
 * the host fds a park holds. */
void proxy_fifo_unpark(struct proxy_thread *t)
{
    if (t->io.fifo_parked)
        close(t->io.fifo_fd);
    t->io.fifo_parked = t->io.fifo_partner = false;
}

void proxy_thread_io_release(struct proxy_thread *t)
{
    if (t->io.has_epoll)
        close(t->io.epoll_fd);
    proxy_fifo_unpark(t);
    t->io = (struct proxy_thread_io){0};
}
