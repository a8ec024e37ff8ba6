/*
 * futex_pi.c - priority-inheritance futexes: FUTEX_LOCK_PI, LOCK_PI2,
 * TRYLOCK_PI, UNLOCK_PI and the requeue-PI pair (FUTEX_WAIT_REQUEUE_PI,
 * FUTEX_CMP_REQUEUE_PI), as Linux's kernel/futex/pi.c and requeue.c.
 *
 * The word protocol is Linux's: the owner's TID in the word, FUTEX_WAITERS
 * set by the first waiter (so the owner's unlock comes here), the lock
 * handed to the first waiter at the unlock (word = its TID | WAITERS),
 * FUTEX_OWNER_DIED when the owner dies (robust list walk, thread.c) and
 * its first waiter gets it with OWNER_DIED (exit_pi_state_list). Errors
 * in the kernel's order: EDEADLK for the owner itself, EPERM for an
 * unlock by another, ESRCH for a TID no live thread of the run has (the
 * WAITERS bit stays set, as Linux leaves it), EINVAL for a word that does
 * not match its waiters or a waiter of another kind.
 *
 * The kernel's pi_state is not kept as an object: each waiter records the
 * owner it waits on (futex_pi_owner), updated at each hand-off. Waiters
 * are served in arrival order: one vCPU runs one thread at a time, so
 * priority inheritance (boosting the owner) has nothing to change, and
 * every guest thread has the same priority for the rt_mutex order
 * (nice values and SCHED_FIFO priorities do not reorder PI waiters here;
 * Linux would). A requeued waiter keeps its place from its condition
 * wait.
 *
 * Signals: a PI lock wait restarts after a handler (Linux's
 * ERESTARTNOINTR: world.c's refresh), the absolute timeout unchanged; a
 * requeue-PI waiter already moved onto the PI futex returns EAGAIN.
 */
#include "futex.h"

#include <errno.h>
#include <linux/futex.h>
#include <string.h>
#include <time.h>

#include "det.h"
#include "proxy.h"
#include "kernel.h"

#ifndef FUTEX_LOCK_PI2
#define FUTEX_LOCK_PI2 13
#endif

/* ---- waiters -------------------------------------------------------------- */

static bool waits_on(const struct proxy_thread *t, const struct futex_key *key)
{
    return t->state == PROXY_THREAD_FUTEX_WAIT &&
           !memcmp(t->futex_key, key->k, sizeof(key->k));
}

/* The longest waiter on key among the run's processes (but dying), or
 * NULL; *owner is its process. */
static struct proxy_thread *top_waiter(struct proxy_process *p,
                                       const struct futex_key *key,
                                       const struct proxy_process *dying,
                                       struct proxy_process **owner)
{
    struct proxy_thread *first = NULL;
    struct proxy_world *w = p->world;
    int nprocs = w ? w->nr_procs : 1;
    for (int pi = 0; pi < nprocs; pi++) {
        struct proxy_process *q = w ? w->procs[pi] : p;
        if (q == dying || q->zombie)
            continue;
        for (int i = 0; i < q->nr_threads; i++) {
            struct proxy_thread *t = &q->threads[i];
            if (waits_on(t, key) && (!first || t->wait_seq < first->wait_seq)) {
                first = t;
                *owner = q;
            }
        }
    }
    return first;
}

/* A live thread of the run has this TID (Linux's find_task_by_vpid, and
 * not exited: an exited one is ESRCH too, handle_exit_race). */
static bool tid_alive(struct proxy_process *p, uint32_t tid)
{
    struct proxy_world *w = p->world;
    int nprocs = w ? w->nr_procs : 1;
    for (int pi = 0; pi < nprocs; pi++) {
        struct proxy_process *q = w ? w->procs[pi] : p;
        for (int i = 0; !q->zombie && !q->exited && i < q->nr_threads; i++)
            if ((uint32_t)q->threads[i].tid == tid &&
                q->threads[i].state != PROXY_THREAD_EXITED)
                return true;
    }
    return false;
}

/* The woken thread's syscall result; the current thread of its process
 * has its registers live on that process's vCPU. */
static void wake_with(struct proxy_process *q, struct proxy_thread *t,
                      long result)
{
    t->state = PROXY_THREAD_RUNNABLE;
    t->has_deadline = false;
    t->futex_requeued = false;
    if (t == &q->threads[q->cur])
        vmm_vm_regs(q->vm)->rax = (uint64_t)result;
    else
        t->regs.rax = (uint64_t)result;
}

/* Every PI waiter on key now waits on new_owner. */
static void retarget(struct proxy_process *p, const struct futex_key *key,
                     int new_owner)
{
    struct proxy_world *w = p->world;
    int nprocs = w ? w->nr_procs : 1;
    for (int pi = 0; pi < nprocs; pi++) {
        struct proxy_process *q = w ? w->procs[pi] : p;
        for (int i = 0; !q->zombie && i < q->nr_threads; i++)
            if (waits_on(&q->threads[i], key))
                q->threads[i].futex_pi_owner = new_owner;
    }
}

static void park(struct proxy_process *p, gva_t uaddr,
                 const struct futex_key *key, enum proxy_futex_kind kind)
{
    struct proxy_thread *t = &p->threads[p->cur];
    t->state = PROXY_THREAD_FUTEX_WAIT;
    t->futex_uaddr = uaddr;
    memcpy(t->futex_key, key->k, sizeof(key->k));
    t->futex_bitset = FUTEX_BITSET_MATCH_ANY;
    t->futex_kind = kind;
    t->futex_requeued = false;
    t->wait_seq = p->det->events;
    p->resched = true;
}

static int get_word(struct proxy_process *p, gva_t uaddr, uint32_t *v)
{
    return proxy_copy_in(p, v, uaddr, sizeof(*v)) < 0 ? -EFAULT : 0;
}

static int put_word(struct proxy_process *p, gva_t uaddr, uint32_t v)
{
    return proxy_copy_out(p, uaddr, &v, sizeof(v)) < 0 ? -EFAULT : 0;
}

/* ---- taking the lock ------------------------------------------------------- */

/*
 * Linux's futex_lock_pi_atomic for the thread tid: 1 when it took the
 * word, 0 when it must wait (*owner: the TID it waits on), or an errno.
 * set_waiters (a requeue that moves others too) sets FUTEX_WAITERS even
 * when the lock is taken.
 */
static int lock_pi_atomic(struct proxy_process *p, gva_t uaddr,
                          const struct futex_key *key, uint32_t tid,
                          bool set_waiters, int *owner)
{
    uint32_t uval;
    int rc = get_word(p, uaddr, &uval);
    if (rc < 0)
        return rc;
    uint32_t holder = uval & FUTEX_TID_MASK;
    if (holder == tid)
        return -EDEADLK;
    struct proxy_process *wq;
    struct proxy_thread *top = top_waiter(p, key, NULL, &wq);
    if (top) {
        /* attach_to_pi_state: a plain waiter, or a word that does not
         * name the owner the waiters wait on, is user space's mess */
        if (top->futex_kind != PROXY_FUTEX_PI ||
            holder != (uint32_t)top->futex_pi_owner)
            return -EINVAL;
        *owner = top->futex_pi_owner;
        return 0;
    }
    if (!holder) {
        /* Free (maybe with OWNER_DIED, which the taker keeps). */
        uint32_t nv = (uval & FUTEX_OWNER_DIED) | tid;
        if (set_waiters)
            nv |= FUTEX_WAITERS;
        rc = put_word(p, uaddr, nv);
        return rc < 0 ? rc : 1;
    }
    rc = put_word(p, uaddr, uval | FUTEX_WAITERS);
    if (rc < 0)
        return rc;
    if (!tid_alive(p, holder))
        return -ESRCH;
    *owner = (int)holder;
    return 0;
}

static int pi_timeout(struct proxy_process *p, const uint64_t a[6], int clk,
                      uint64_t *deadline)
{
    return a[3] ? futex_read_timeout(p, a[3], true, clk, deadline) : 0;
}

static long lock_pi(struct proxy_process *p, const uint64_t a[6], int clk,
                    bool trylock)
{
    struct proxy_thread *t = &p->threads[p->cur];
    uint64_t deadline = 0;
    int rc = trylock ? 0 : pi_timeout(p, a, clk, &deadline);
    if (rc < 0)
        return rc;
    struct futex_key key;
    futex_key_of(p, a[0], (int)a[1], &key);
    int owner = 0;
    rc = lock_pi_atomic(p, a[0], &key, (uint32_t)p->tid, false, &owner);
    if (rc != 0)
        return rc < 0 ? rc : 0;
    if (trylock)
        return -EAGAIN; /* rt_mutex_futex_trylock failed: EWOULDBLOCK */
    park(p, a[0], &key, PROXY_FUTEX_PI);
    t->futex_pi_owner = owner;
    t->has_deadline = a[3] != 0;
    t->deadline_ns = deadline;
    return 0; /* the hand-off's result, or -ETIMEDOUT at the deadline */
}

/* ---- giving it back --------------------------------------------------------- */

/* The word at uaddr (in q) goes to waiter t: its TID | WAITERS, plus
 * extra (OWNER_DIED after a death). */
static int hand_off(struct proxy_process *q, gva_t uaddr,
                    const struct futex_key *key, struct proxy_process *wq,
                    struct proxy_thread *t, uint32_t extra)
{
    int rc = put_word(q, uaddr, (uint32_t)t->tid | FUTEX_WAITERS | extra);
    if (rc < 0)
        return rc;
    wake_with(wq, t, 0);
    retarget(q, key, t->tid);
    return 0;
}

static long unlock_pi(struct proxy_process *p, const uint64_t a[6])
{
    uint32_t uval;
    int rc = get_word(p, a[0], &uval);
    if (rc < 0)
        return rc;
    if ((uval & FUTEX_TID_MASK) != (uint32_t)p->tid)
        return -EPERM;
    struct futex_key key;
    futex_key_of(p, a[0], (int)a[1], &key);
    struct proxy_process *wq;
    struct proxy_thread *top = top_waiter(p, &key, NULL, &wq);
    if (top) {
        if (top->futex_kind != PROXY_FUTEX_PI)
            return -EINVAL;
        return hand_off(p, a[0], &key, wq, top, 0);
    }
    /* No waiter: neither WAITERS nor OWNER_DIED is kept. */
    return put_word(p, a[0], 0);
}

/* A waiter (not in dying) on a PI futex that tid owned, or NULL. */
static struct proxy_thread *orphaned_waiter(struct proxy_process *p, int tid,
                                            const struct proxy_process *dying,
                                            struct proxy_process **owner)
{
    struct proxy_world *w = p->world;
    int nprocs = w ? w->nr_procs : 1;
    for (int pi = 0; pi < nprocs; pi++) {
        struct proxy_process *q = w ? w->procs[pi] : p;
        for (int i = 0; q != dying && !q->zombie && i < q->nr_threads; i++) {
            struct proxy_thread *t = &q->threads[i];
            if (t->state == PROXY_THREAD_FUTEX_WAIT &&
                t->futex_kind == PROXY_FUTEX_PI && t->futex_pi_owner == tid) {
                *owner = q;
                return t;
            }
        }
    }
    return NULL;
}

void futex_pi_owner_exit(struct proxy_process *p, int tid,
                         const struct proxy_process *dying)
{
    struct proxy_process *q;
    struct proxy_thread *t;
    while ((t = orphaned_waiter(p, tid, dying, &q))) {
        struct futex_key key = {.shared = false};
        memcpy(key.k, t->futex_key, sizeof(key.k));
        struct proxy_process *wq = q;
        struct proxy_thread *top = top_waiter(q, &key, dying, &wq);
        if (!top)
            top = t;
        /* fixup_pi_state_owner: the new owner's TID | WAITERS |
         * OWNER_DIED (the pi_state has no owner now). A word that
         * cannot be written ends the wait with EFAULT. */
        if (hand_off(wq, top->futex_uaddr, &key, wq, top,
                     FUTEX_OWNER_DIED) < 0)
            wake_with(wq, top, -EFAULT);
    }
}

/* ---- requeue-PI ------------------------------------------------------------- */

static long wait_requeue_pi(struct proxy_process *p, const uint64_t a[6],
                            int clk)
{
    uint64_t deadline = 0;
    int rc = pi_timeout(p, a, clk, &deadline);
    if (rc < 0)
        return rc;
    if (a[0] == a[4])
        return -EINVAL;
    struct futex_key key, key2;
    futex_key_of(p, a[4], (int)a[1], &key2);
    uint32_t uval;
    rc = get_word(p, a[0], &uval);
    if (rc < 0)
        return rc;
    if (uval != (uint32_t)a[2])
        return -EAGAIN;
    futex_key_of(p, a[0], (int)a[1], &key);
    if (!memcmp(key.k, key2.k, sizeof(key.k)))
        return -EINVAL;
    struct proxy_thread *t = &p->threads[p->cur];
    park(p, a[0], &key, PROXY_FUTEX_REQUEUE_PI);
    t->futex_uaddr2 = a[4];
    memcpy(t->futex_key2, key2.k, sizeof(key2.k));
    t->has_deadline = a[3] != 0;
    t->deadline_ns = deadline;
    return 0;
}

/* A requeue-PI waiter goes on waiting for the PI futex, on owner. */
static void requeue_onto(struct proxy_thread *t, int owner)
{
    memcpy(t->futex_key, t->futex_key2, sizeof(t->futex_key));
    t->futex_uaddr = t->futex_uaddr2;
    t->futex_kind = PROXY_FUTEX_PI;
    t->futex_pi_owner = owner;
    t->futex_requeued = true;
}

static bool requeue_pi_waiter_for(const struct proxy_thread *t,
                                  const struct futex_key *key2)
{
    return t->futex_kind == PROXY_FUTEX_REQUEUE_PI &&
           !memcmp(t->futex_key2, key2->k, sizeof(key2->k));
}

/* futex(uaddr, FUTEX_CMP_REQUEUE_PI, 1, nr_requeue, uaddr2, cmpval): the
 * first waiter takes the PI futex if it is free (and is woken) or waits
 * on it; up to nr_requeue more are moved onto it. */
static long cmp_requeue_pi(struct proxy_process *p, const uint64_t a[6])
{
    int nr_wake = (int)a[2], nr_requeue = (int)a[3];
    if (nr_wake < 0 || nr_requeue < 0)
        return -EINVAL;
    if (a[0] == a[4] || nr_wake != 1)
        return -EINVAL;
    struct futex_key key, key2;
    futex_key_of(p, a[0], (int)a[1], &key);
    futex_key_of(p, a[4], (int)a[1], &key2);
    if (!memcmp(key.k, key2.k, sizeof(key.k)))
        return -EINVAL;
    uint32_t uval;
    int rc = get_word(p, a[0], &uval);
    if (rc < 0)
        return rc;
    if (uval != (uint32_t)a[5])
        return -EAGAIN;
    struct proxy_process *wq;
    struct proxy_thread *top = top_waiter(p, &key, NULL, &wq);
    if (!top)
        return 0;
    if (!requeue_pi_waiter_for(top, &key2))
        return -EINVAL;
    int owner = 0;
    rc = lock_pi_atomic(p, a[4], &key2, (uint32_t)top->tid, nr_requeue > 0,
                        &owner);
    if (rc < 0)
        return rc;
    if (rc == 1) {
        wake_with(wq, top, 0); /* it owns the PI futex */
        owner = top->tid;
    } else {
        requeue_onto(top, owner);
    }
    int moved = 1;
    while (moved - nr_wake < nr_requeue) {
        struct proxy_thread *t = top_waiter(p, &key, NULL, &wq);
        if (!t)
            break;
        if (!requeue_pi_waiter_for(t, &key2))
            return -EINVAL;
        requeue_onto(t, owner);
        moved++;
    }
    return moved;
}

/* ---- the operations ------------------------------------------------------- */

long futex_pi_op(struct proxy_process *p, const uint64_t a[6], int cmd)
{
    bool realtime = (int)a[1] & FUTEX_CLOCK_REALTIME;
    if (realtime && cmd != FUTEX_WAIT_REQUEUE_PI && cmd != FUTEX_LOCK_PI2)
        return -ENOSYS;
    int clk = realtime ? CLOCK_REALTIME : CLOCK_MONOTONIC;
    switch (cmd) {
    case FUTEX_LOCK_PI:
        return lock_pi(p, a, CLOCK_REALTIME, false);
    case FUTEX_LOCK_PI2:
        return lock_pi(p, a, clk, false);
    case FUTEX_TRYLOCK_PI:
        return lock_pi(p, a, clk, true);
    case FUTEX_UNLOCK_PI:
        return unlock_pi(p, a);
    case FUTEX_WAIT_REQUEUE_PI:
        return wait_requeue_pi(p, a, clk);
    case FUTEX_CMP_REQUEUE_PI:
        return cmp_requeue_pi(p, a);
    default:
        return -ENOSYS;
    }
}
