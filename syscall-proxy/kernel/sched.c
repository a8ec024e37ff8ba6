/*
 * sched.c - scheduling on the one vCPU: CPU affinity, the sched_* policy
 * and parameter calls (what the guest set is reported back; hvrun
 * schedules the same whatever it is), getcpu, get/setpriority (the nice
 * value), ioprio_get/set and membarrier. Nothing here changes hvrun's own
 * scheduling.
 */
#include "proxy.h"
#include "config.h"
#include "kernel.h"
#include "namespace.h"
#include "sys.h"

#include <errno.h>
#include <linux/ioprio.h>
#include <linux/membarrier.h>
#include <sched.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>

/* The only CPU, and the size of the kernel's cpumask for one CPU. */
#define CPUMASK_BYTES 8

/* ---- scheduling: one CPU, SCHED_OTHER ------------------------------------ */

/*
 * find_process_by_pid for the sched_* calls: the caller for 0 (or its own
 * pid or tid), another process of its pid namespace by pid or a thread's
 * tid (a zombie too, as natively until the reap), or the run's virtual
 * init (*q NULL: root's, SCHED_OTHER, nice 0; what is set on it is
 * checked and dropped, as setpriority does). -ESRCH when none.
 */
static long sched_target(struct proxy_process *p, int pid,
                         struct proxy_process **q)
{
    *q = p;
    if (is_self(p, pid))
        return 0;
    struct proxy_process *t = pid > 0 ? proxy_ns_find(p, pid) : NULL;
    if (!t && pid > 0 && p->world)
        t = proxy_world_find_tid(p->world, proxy_ns_global_nr(p, pid));
    if (t && (!t->exited || t->zombie) && proxy_ns_pid_of(p, t) > 0) {
        *q = t;
        return 0;
    }
    if (pid == PROXY_INIT_PID && !p->cfg->as_init &&
        proxy_ns_pid_level(p) == 0) {
        *q = NULL;
        return 0;
    }
    return -ESRCH;
}

/* The target's kept scheduling state; for the virtual init, a default one
 * in scratch (SCHED_OTHER, priority 0, nice 0) that nothing keeps. */
static struct proxy_prctl_state *sched_state(struct proxy_process *q,
                                             struct proxy_prctl_state *scratch)
{
    if (q)
        return misc_state(q);
    memset(scratch, 0, sizeof(*scratch));
    return scratch;
}

/* check_same_owner: the caller's euid is the target's real or effective
 * uid (the virtual init is root's). */
static bool same_owner(const struct proxy_process *p,
                       const struct proxy_process *q)
{
    uid_t ruid = q ? q->cred.ruid : 0, euid = q ? q->cred.euid : 0;
    return q == p || p->cred.euid == ruid || p->cred.euid == euid;
}

/*
 * sched_getaffinity(pid, len, mask): the guest has one CPU, so the kernel
 * cpumask is one long with bit 0 set. len must be a whole number of longs
 * able to hold it. The return is the bytes written; glibc zeroes the rest.
 */
static long sys_sched_getaffinity(struct proxy_process *p, const uint64_t a[6])
{
    unsigned len = (unsigned)a[1];
    if (len < CPUMASK_BYTES || len % sizeof(long) != 0)
        return -EINVAL;
    struct proxy_process *q;
    long rc = sched_target(p, (int)a[0], &q);
    if (rc < 0)
        return rc;
    rc = put_u64(p, a[2], 1);
    return rc < 0 ? rc : CPUMASK_BYTES;
}

/* Reads at most the kernel cpumask's size (shorter means the rest is zero);
 * then the target (ESRCH), the owner or CAP_SYS_NICE over the target's
 * user namespace (EPERM); a mask without CPU 0 leaves nowhere to run:
 * -EINVAL. */
static long sys_sched_setaffinity(struct proxy_process *p, const uint64_t a[6])
{
    unsigned len = (unsigned)a[1];
    uint64_t mask = 0;
    size_t n = len < CPUMASK_BYTES ? len : CPUMASK_BYTES;
    if (n > 0 && proxy_copy_in(p, &mask, a[2], n) < 0)
        return -EFAULT;
    struct proxy_process *q;
    long rc = sched_target(p, (int)a[0], &q);
    if (rc < 0)
        return rc;
    if (!same_owner(p, q) &&
        !(q ? proxy_ns_capable_over(p, q) : privileged(p)))
        return -EPERM;
    return (mask & 1) ? 0 : -EINVAL;
}

/*
 * Scheduling policy and priority: what the guest sets is kept and reported
 * (sched_getscheduler, sched_getparam, sched_getattr), checked as Linux
 * checks it (__sched_setscheduler: the policy, the priority range of each,
 * real-time and deadline policies only with privilege, a deadline's
 * runtime <= deadline <= period); the run's one vCPU schedules the same
 * whatever they say. SCHED_RESET_ON_FORK gives a child the normal policy.
 */
#define SCHED_DEADLINE_POLICY 6
#define SCHED_RESET_ON_FORK_FLAG 0x40000000
#define SCHED_FLAG_RESET_ON_FORK_BIT 1ULL
#define SCHED_ATTR_SIZE_VER0 48u
#define SCHED_ATTR_SIZE 56u

struct sched_attr_v1 {
    uint32_t size, sched_policy;
    uint64_t sched_flags;
    int32_t sched_nice;
    uint32_t sched_priority;
    uint64_t sched_runtime, sched_deadline, sched_period;
    uint32_t sched_util_min, sched_util_max;
};

/* __sched_setscheduler for target q (sched_target's), in Linux's order:
 * the policy and its parameters (EINVAL), then, without CAP_SYS_NICE, the
 * real-time and deadline policies and clearing reset-on-fork, then the
 * owner (EPERM). */
static long sched_set(struct proxy_process *p, struct proxy_process *q,
                      int policy, int priority, bool reset_on_fork,
                      const struct sched_attr_v1 *dl)
{
    bool rt = policy == SCHED_FIFO || policy == SCHED_RR;
    if (policy != SCHED_OTHER && !rt && policy != SCHED_BATCH &&
        policy != SCHED_IDLE && policy != SCHED_DEADLINE_POLICY)
        return -EINVAL;
    if (rt ? priority < 1 || priority > 99 : priority != 0)
        return -EINVAL;
    if (policy == SCHED_DEADLINE_POLICY &&
        (!dl || dl->sched_runtime < 1024 ||
         dl->sched_deadline < dl->sched_runtime ||
         (dl->sched_period && dl->sched_period < dl->sched_deadline)))
        return -EINVAL;
    struct proxy_prctl_state scratch, *st = sched_state(q, &scratch);
    if ((rt || policy == SCHED_DEADLINE_POLICY) && !privileged(p))
        return -EPERM;
    if (st->sched_reset_on_fork && !reset_on_fork && !privileged(p))
        return -EPERM; /* only privilege clears it */
    if (!privileged(p) && !same_owner(p, q))
        return -EPERM;
    st->sched_policy = policy;
    st->sched_priority = priority;
    st->sched_reset_on_fork = reset_on_fork;
    st->sched_runtime = dl ? dl->sched_runtime : 0;
    st->sched_deadline = dl ? dl->sched_deadline : 0;
    st->sched_period = dl ? dl->sched_period : 0;
    return 0;
}

static long sched_param_in(struct proxy_process *p, gva_t gva, int *prio)
{
    struct sched_param sp;
    if (!gva)
        return -EINVAL;
    if (proxy_copy_in(p, &sp, gva, sizeof(sp)) < 0)
        return -EFAULT;
    *prio = sp.sched_priority;
    return 0;
}

static long sys_sched_setscheduler(struct proxy_process *p,
                                   const uint64_t a[6])
{
    int pid = (int)a[0], policy = (int)a[1], prio;
    if (pid < 0 || policy < 0)
        return -EINVAL;
    long rc = sched_param_in(p, a[2], &prio);
    if (rc < 0)
        return rc;
    struct proxy_process *q;
    if ((rc = sched_target(p, pid, &q)) < 0)
        return rc;
    bool reset = (policy & SCHED_RESET_ON_FORK_FLAG) != 0;
    policy &= ~SCHED_RESET_ON_FORK_FLAG;
    if (policy == SCHED_DEADLINE_POLICY)
        return -EINVAL; /* only through sched_setattr */
    return sched_set(p, q, policy, prio, reset, NULL);
}

static long sys_sched_setparam(struct proxy_process *p, const uint64_t a[6])
{
    int pid = (int)a[0], prio;
    if (pid < 0)
        return -EINVAL;
    long rc = sched_param_in(p, a[1], &prio);
    if (rc < 0)
        return rc;
    struct proxy_process *q;
    if ((rc = sched_target(p, pid, &q)) < 0)
        return rc;
    struct proxy_prctl_state scratch, *st = sched_state(q, &scratch);
    if (st->sched_policy == SCHED_DEADLINE_POLICY)
        return prio == 0 ? 0 : -EINVAL;
    return sched_set(p, q, st->sched_policy, prio, st->sched_reset_on_fork,
                     NULL);
}

static long sys_sched_getscheduler(struct proxy_process *p, const uint64_t a[6])
{
    int pid = (int)a[0];
    if (pid < 0)
        return -EINVAL;
    struct proxy_process *q;
    long rc = sched_target(p, pid, &q);
    if (rc < 0)
        return rc;
    struct proxy_prctl_state scratch, *st = sched_state(q, &scratch);
    return st->sched_policy |
           (st->sched_reset_on_fork ? SCHED_RESET_ON_FORK_FLAG : 0);
}

static long sys_sched_getparam(struct proxy_process *p, const uint64_t a[6])
{
    int pid = (int)a[0];
    if (a[1] == 0 || pid < 0)
        return -EINVAL;
    struct proxy_process *q;
    long rc = sched_target(p, pid, &q);
    if (rc < 0)
        return rc;
    struct proxy_prctl_state scratch;
    const struct sched_param param = {
        .sched_priority = sched_state(q, &scratch)->sched_priority};
    return proxy_copy_out(p, a[1], &param, sizeof(param)) < 0 ? -EFAULT : 0;
}

static long sys_sched_setattr(struct proxy_process *p, const uint64_t a[6])
{
    int pid = (int)a[0];
    if (!a[1] || pid < 0 || a[2])
        return -EINVAL;
    struct sched_attr_v1 at;
    memset(&at, 0, sizeof(at));
    uint32_t size;
    if (proxy_copy_in(p, &size, a[1], sizeof(size)) < 0)
        return -EFAULT;
    if (size == 0)
        size = SCHED_ATTR_SIZE_VER0;
    if (size < SCHED_ATTR_SIZE_VER0 || size > 4096) {
        uint32_t ours = SCHED_ATTR_SIZE;
        return put_u32(p, a[1], ours) < 0 ? -EFAULT : -E2BIG;
    }
    if (proxy_copy_in(p, &at, a[1],
                      size < sizeof(at) ? size : sizeof(at)) < 0)
        return -EFAULT;
    struct proxy_process *q;
    long rc = sched_target(p, pid, &q);
    if (rc < 0)
        return rc;
    struct proxy_prctl_state scratch, *st = sched_state(q, &scratch);
    if (at.sched_flags & ~SCHED_FLAG_RESET_ON_FORK_BIT)
        return -EINVAL; /* the util clamps and the rest are not offered */
    int policy = (int)at.sched_policy;
    bool normal = policy == SCHED_OTHER || policy == SCHED_BATCH;
    if (normal) { /* sched_nice is the nice value, as setpriority's */
        int nice = at.sched_nice < -20 ? -20
                   : at.sched_nice > 19 ? 19
                                        : at.sched_nice;
        if (nice < st->nice && !privileged(p))
            return -EPERM;
        st->nice = nice;
    }
    return sched_set(p, q, policy, (int)at.sched_priority,
                     at.sched_flags & SCHED_FLAG_RESET_ON_FORK_BIT,
                     policy == SCHED_DEADLINE_POLICY ? &at : NULL);
}

static long sys_sched_getattr(struct proxy_process *p, const uint64_t a[6])
{
    int pid = (int)a[0];
    uint32_t usize = (uint32_t)a[2];
    if (!a[1] || pid < 0 || a[3] || usize < SCHED_ATTR_SIZE_VER0 ||
        usize > 4096)
        return -EINVAL;
    struct proxy_process *q;
    long rc = sched_target(p, pid, &q);
    if (rc < 0)
        return rc;
    struct proxy_prctl_state scratch, *st = sched_state(q, &scratch);
    struct sched_attr_v1 at = {
        .size = usize < SCHED_ATTR_SIZE ? usize : SCHED_ATTR_SIZE,
        .sched_policy = (uint32_t)st->sched_policy,
        .sched_flags = st->sched_reset_on_fork ? SCHED_FLAG_RESET_ON_FORK_BIT
                                               : 0,
        .sched_nice = st->sched_policy == SCHED_OTHER ||
                              st->sched_policy == SCHED_BATCH
                          ? st->nice
                          : 0,
        .sched_priority = (uint32_t)st->sched_priority,
        .sched_runtime = st->sched_runtime,
        .sched_deadline = st->sched_deadline,
        .sched_period = st->sched_period,
        .sched_util_max = 1024};
    return proxy_copy_out(p, a[1], &at, at.size) < 0 ? -EFAULT : 0;
}

/* SCHED_RR's time slice, as Linux's default (RR_TIMESLICE, 100 ms); the
 * others get 0 (hvrun's slices are its own, not CFS's). */
static long sys_sched_rr_get_interval(struct proxy_process *p,
                                      const uint64_t a[6])
{
    int pid = (int)a[0];
    if (pid < 0)
        return -EINVAL;
    struct proxy_process *q;
    long rc = sched_target(p, pid, &q);
    if (rc < 0)
        return rc;
    struct proxy_prctl_state scratch;
    struct timespec ts = {0, 0};
    if (sched_state(q, &scratch)->sched_policy == SCHED_RR)
        ts.tv_nsec = 100000000L;
    return proxy_copy_out(p, a[1], &ts, sizeof(ts)) < 0 ? -EFAULT : 0;
}

/* Real-time policies have priorities 1..99; the others only 0. */
static long sys_sched_get_priority_max(struct proxy_process *p,
                                       const uint64_t a[6])
{
    switch ((int)a[0]) {
    case SCHED_FIFO:
    case SCHED_RR:
        return 99;
    case SCHED_OTHER:
    case SCHED_BATCH:
    case SCHED_IDLE:
    case SCHED_DEADLINE:
        return 0;
    default:
        return -EINVAL;
    }
}

static long sys_sched_get_priority_min(struct proxy_process *p,
                                       const uint64_t a[6])
{
    long max = sys_sched_get_priority_max(p, a);
    return max > 0 ? 1 : max;
}

/* getcpu(cpu, node, unused): Linux writes both before reporting a fault. */
static long sys_getcpu(struct proxy_process *p, const uint64_t a[6])
{
    long rc = 0;
    if (a[0] && put_u32(p, a[0], 0) < 0)
        rc = -EFAULT;
    if (a[1] && put_u32(p, a[1], 0) < 0)
        rc = -EFAULT;
    return rc;
}

/*
 * Priority targets: PRIO_PROCESS names a pid, PRIO_PGRP a group, PRIO_USER
 * a real uid; 0 means the caller's own. Returns 0 when the target is this
 * process, -ESRCH when nothing matches, -EINVAL for an unknown `which`.
 */
static long prio_target(const struct proxy_process *p, int which, int who)
{
    switch (which) {
    case PRIO_PROCESS:
        return is_self(p, who) ? 0 : -ESRCH;
    case PRIO_PGRP:
        return who == 0 || who == p->pgid ? 0 : -ESRCH;
    case PRIO_USER:
        return who == 0 || (uid_t)who == p->cred.ruid ? 0 : -ESRCH;
    default:
        return -EINVAL;
    }
}

/*
 * get/setpriority's targets (kernel/sys.c): PRIO_PROCESS one process (by
 * pid or a thread's tid; 0 the caller), PRIO_PGRP every process of a
 * group (0 the caller's), PRIO_USER every process whose real uid is who
 * (0 the caller's real uid), all as the caller's pid namespace numbers
 * them; zombies count, as natively until the reap. The run's virtual
 * init (pid 1, root's, nice 0) is one too where it exists: a setpriority
 * that may change it succeeds and changes nothing. nice is per process
 * (Linux: per thread).
 */
struct prio_scan {
    int which, who;
    uid_t uid;              /* PRIO_USER's kernel uid */
    int pgid;               /* PRIO_PGRP's run pgid */
    struct proxy_process *one; /* PRIO_PROCESS's process */
};

static long prio_scan_init(struct proxy_process *p, int which, int who,
                           struct prio_scan *sc)
{
    *sc = (struct prio_scan){.which = which, .who = who, .pgid = -1};
    switch (which) {
    case PRIO_PROCESS:
        if (who == 0 || is_self(p, who))
            sc->one = p;
        else if (who > 0 && !(sc->one = proxy_ns_find(p, who)))
            sc->one = proxy_world_find_tid(p->world,
                                           proxy_ns_global_nr(p, who));
        return 0;
    case PRIO_PGRP:
        sc->pgid = who == 0 ? p->pgid
                   : who > 0 ? proxy_ns_global_nr(p, who)
                             : -1;
        return 0;
    case PRIO_USER: {
        int64_t k = who == 0 ? (int64_t)p->cred.ruid
                             : proxy_ns_uid_kernel(p, (uint32_t)who);
        sc->uid = k < 0 ? (uid_t)-1 : (uid_t)k;
        return 0;
    }
    default:
        return -EINVAL;
    }
}

static bool prio_matches(struct proxy_process *p, const struct prio_scan *sc,
                         struct proxy_process *q)
{
    if (q->exited && !q->zombie)
        return false;
    if (proxy_ns_pid_of(p, q) <= 0)
        return false; /* outside the caller's pid namespace */
    switch (sc->which) {
    case PRIO_PROCESS:
        return q == sc->one;
    case PRIO_PGRP:
        return sc->pgid > 0 && q->pgid == sc->pgid;
    default:
        return sc->uid != (uid_t)-1 && q->cred.ruid == sc->uid;
    }
}

/* Whether the run's virtual init (no guest process) is a target. */
static bool prio_init_matches(const struct proxy_process *p,
                              const struct prio_scan *sc)
{
    if (p->cfg->as_init || proxy_ns_pid_level(p) != 0)
        return false;
    return (sc->which == PRIO_PROCESS && sc->who == PROXY_INIT_PID) ||
           (sc->which == PRIO_PGRP && sc->who == PROXY_INIT_PID) ||
           (sc->which == PRIO_USER && sc->uid == 0);
}

/* The raw syscall returns 20 - nice (1..40) so that no answer looks like an
 * error; glibc turns it back into the nice value. Several targets: the
 * highest priority (the lowest nice). */
static long sys_getpriority(struct proxy_process *p, const uint64_t a[6])
{
    struct prio_scan sc;
    long rc = prio_scan_init(p, (int)a[0], (int)a[1], &sc);
    if (rc < 0)
        return rc;
    long best = prio_init_matches(p, &sc) ? 20 : -ESRCH;
    for (int i = 0; p->world && i < p->world->nr_procs; i++) {
        struct proxy_process *q = p->world->procs[i];
        if (prio_matches(p, &sc, q) && 20 - misc_state(q)->nice > best)
            best = 20 - misc_state(q)->nice;
    }
    if (!p->world && prio_matches(p, &sc, p))
        best = 20 - misc_state(p)->nice;
    return best;
}

/*
 * set_one_prio for each target, in Linux's order: EPERM unless the
 * caller's euid is the target's real or effective uid or it has
 * CAP_SYS_NICE over it; then lowering nice (raising priority) needs
 * CAP_SYS_NICE or the target's RLIMIT_NICE of at least 20 - nice
 * (EACCES). The last refusal is the answer, ESRCH when nothing matched;
 * a target that was changed makes a success only over ESRCH. nice is
 * clamped to [-20, 19]; host scheduling never changes.
 */
/* 0 when p may set the nice value of a target with these ids, nice and
 * RLIMIT_NICE to nice (over: CAP_SYS_NICE over its user namespace), else
 * -EPERM or -EACCES. */
static long may_set_prio(const struct proxy_process *p, uid_t ruid,
                         uid_t euid, bool over, int cur, rlim_t nice_rlim,
                         int nice)
{
    if (ruid != p->cred.euid && euid != p->cred.euid && !over)
        return -EPERM;
    if (nice < cur && !privileged(p) && (rlim_t)(20 - nice) > nice_rlim)
        return -EACCES;
    return 0;
}

/* One target: a refusal replaces the answer, a change turns ESRCH into
 * success (set_one_prio). */
static long set_one_prio(struct proxy_process *p, struct proxy_process *q,
                         int nice, long error)
{
    struct proxy_prctl_state *st = misc_state(q);
    long r = may_set_prio(p, q->cred.ruid, q->cred.euid,
                          q == p || proxy_ns_capable_over(p, q), st->nice,
                          q->rlimits[RLIMIT_NICE].rlim_cur, nice);
    if (r < 0)
        return r;
    st->nice = nice;
    return error == -ESRCH ? 0 : error;
}

static long sys_setpriority(struct proxy_process *p, const uint64_t a[6])
{
    struct prio_scan sc;
    long rc = prio_scan_init(p, (int)a[0], (int)a[1], &sc);
    if (rc < 0)
        return rc;
    int nice = (int)a[2];
    nice = nice < -20 ? -20 : nice > 19 ? 19 : nice;
    long error = -ESRCH;
    if (prio_init_matches(p, &sc)) { /* root's, RLIMIT_NICE 0 */
        long r = may_set_prio(p, 0, 0, privileged(p), 0, 0, nice);
        error = r < 0 ? r : 0;
    }
    for (int i = 0; p->world && i < p->world->nr_procs; i++)
        if (prio_matches(p, &sc, p->world->procs[i]))
            error = set_one_prio(p, p->world->procs[i], nice, error);
    if (!p->world && prio_matches(p, &sc, p))
        error = set_one_prio(p, p, nice, error);
    return error;
}

/* ---- I/O priority -------------------------------------------------------- */

/* ioprio targets mirror priority targets, with the IOPRIO_WHO_* numbering. */
static long ioprio_target(const struct proxy_process *p, int which, int who)
{
    switch (which) {
    case IOPRIO_WHO_PROCESS:
        return prio_target(p, PRIO_PROCESS, who);
    case IOPRIO_WHO_PGRP:
        return prio_target(p, PRIO_PGRP, who);
    case IOPRIO_WHO_USER:
        return prio_target(p, PRIO_USER, who);
    default:
        return -EINVAL;
    }
}

/*
 * Linux's ioprio_check_cap (6.5 and later): the low 3 data bits are the
 * level, the bits above are hints that any class may carry. The real-time
 * class needs privilege; class NONE takes no level.
 */
#define IOPRIO_LEVEL_BITS 0x7u

static long ioprio_check(const struct proxy_process *p, unsigned ioprio)
{
    switch (IOPRIO_PRIO_CLASS(ioprio)) {
    case IOPRIO_CLASS_RT:
        return privileged(p) ? 0 : -EPERM;
    case IOPRIO_CLASS_BE:
    case IOPRIO_CLASS_IDLE:
        return 0;
    case IOPRIO_CLASS_NONE:
        return ioprio & IOPRIO_LEVEL_BITS ? -EINVAL : 0;
    default:
        return -EINVAL;
    }
}

/* The guest has no disk of its own to schedule, so the priority changes
 * nothing, but it is kept as Linux keeps it in the task's io_context:
 * ioprio_get reads back what ioprio_set gave (the default is class NONE,
 * 0), and a child starts with its parent's. Per process (Linux: per
 * thread), like the nice value here. */
static long sys_ioprio_get(struct proxy_process *p, const uint64_t a[6])
{
    long rc = ioprio_target(p, (int)a[0], (int)a[1]);
    return rc < 0 ? rc : (long)misc_state(p)->ioprio;
}

static long sys_ioprio_set(struct proxy_process *p, const uint64_t a[6])
{
    long rc = ioprio_check(p, (unsigned)a[2]);
    if (rc == 0)
        rc = ioprio_target(p, (int)a[0], (int)a[1]);
    if (rc == 0)
        misc_state(p)->ioprio = (int)(unsigned)a[2];
    return rc;
}

/* ---- membarrier ---------------------------------------------------------- */

/*
 * All guest threads share one vCPU and run one at a time, and every switch
 * between them passes through a VM exit, which serialises. So every barrier
 * is already done when the call arrives; what is kept is which private
 * expedited barriers the process registered for, since one it did not is
 * EPERM. The rseq commands (MEMBARRIER_CMD_PRIVATE_EXPEDITED_RSEQ) are
 * absent: every thread's critical section already ends at each switch
 * (rseq.c).
 */
#define MEMBARRIER_SUPPORTED                                                   \
    (MEMBARRIER_CMD_GLOBAL | MEMBARRIER_CMD_GLOBAL_EXPEDITED |                 \
     MEMBARRIER_CMD_REGISTER_GLOBAL_EXPEDITED |                                \
     MEMBARRIER_CMD_PRIVATE_EXPEDITED |                                        \
     MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED |                               \
     MEMBARRIER_CMD_PRIVATE_EXPEDITED_SYNC_CORE |                              \
     MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED_SYNC_CORE)

static long sys_membarrier(struct proxy_process *p, const uint64_t a[6])
{
    int cmd = (int)a[0];
    unsigned flags = (unsigned)a[1];
    unsigned *registered = &misc_state(p)->membarrier_registered;
    if (flags != 0)
        return -EINVAL; /* MEMBARRIER_CMD_FLAG_CPU is for the rseq commands */
    switch (cmd) {
    case MEMBARRIER_CMD_QUERY:
        return MEMBARRIER_SUPPORTED;
    case MEMBARRIER_CMD_GLOBAL:
    case MEMBARRIER_CMD_GLOBAL_EXPEDITED:
        return 0;
    case MEMBARRIER_CMD_REGISTER_GLOBAL_EXPEDITED:
    case MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED:
    case MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED_SYNC_CORE:
        *registered |= (unsigned)cmd;
        return 0;
    case MEMBARRIER_CMD_PRIVATE_EXPEDITED:
        return *registered & MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED
                   ? 0
                   : -EPERM;
    case MEMBARRIER_CMD_PRIVATE_EXPEDITED_SYNC_CORE:
        return *registered & MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED_SYNC_CORE
                   ? 0
                   : -EPERM;
    default:
        return -EINVAL;
    }
}

const struct proxy_syscall proxy_sched_syscalls[] = {
    {SYS_sched_getaffinity, "sched_getaffinity", sys_sched_getaffinity},
    {SYS_sched_setaffinity, "sched_setaffinity", sys_sched_setaffinity},
    {SYS_sched_getscheduler, "sched_getscheduler", sys_sched_getscheduler},
    {SYS_sched_setscheduler, "sched_setscheduler", sys_sched_setscheduler},
    {SYS_sched_setparam, "sched_setparam", sys_sched_setparam},
    {SYS_sched_getattr, "sched_getattr", sys_sched_getattr},
    {SYS_sched_setattr, "sched_setattr", sys_sched_setattr},
    {SYS_sched_rr_get_interval, "sched_rr_get_interval",
     sys_sched_rr_get_interval},
    {SYS_sched_getparam, "sched_getparam", sys_sched_getparam},
    {SYS_sched_get_priority_max, "sched_get_priority_max",
     sys_sched_get_priority_max},
    {SYS_sched_get_priority_min, "sched_get_priority_min",
     sys_sched_get_priority_min},
    {SYS_getcpu, "getcpu", sys_getcpu},
    {SYS_getpriority, "getpriority", sys_getpriority},
    {SYS_setpriority, "setpriority", sys_setpriority},
    {SYS_ioprio_get, "ioprio_get", sys_ioprio_get},
    {SYS_ioprio_set, "ioprio_set", sys_ioprio_set},
    {SYS_membarrier, "membarrier", sys_membarrier},
    {-1, NULL, NULL},
};
