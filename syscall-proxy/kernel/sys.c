/*
 * sys.c - the process's identity and the system's, and the small calls of
 * Linux's kernel/sys.c: getpid and friends, rlimits, uname, sysinfo,
 * getrusage and times, process groups and sessions, host and domain
 * names, personality; the thread-start calls glibc makes
 * (set_tid_address, set_robust_list), getrandom; syslog and vhangup
 * refused. Credentials are in cred.c, scheduling in sched.c, prctl and
 * arch_prctl in prctl.c, memory locking in mm/mlock.c.
 *
 * Model: the guest is one process on one CPU. Credentials, limits and
 * process-group ids live only in struct proxy_process; nothing here changes
 * hvrun's own credentials, limits or scheduling. "Privileged" means euid 0,
 * standing for the capabilities Linux checks (CAP_SETUID, CAP_SETGID,
 * CAP_SYS_RESOURCE, CAP_IPC_LOCK, CAP_SYS_NICE).
 *
 * Determinism: random bytes and time-valued fields come from detcore. The
 * host-backed reports (uname, sysinfo, getrusage counters, getgroups) each
 * sit in one helper so detcore can take them over in one place.
 *
 * Guest structs: hvrun runs x86-64 guests on x86-64 Linux hosts only, so
 * host struct layouts are the guest's; the assertions keep that visible.
 */
#include "proxy.h"
#include "config.h"
#include "hooks.h"
#include "kernel.h"
#include "namespace.h"
#include "sys.h"

#include <errno.h>
#include <limits.h>
#include <string.h>
#include <sys/personality.h>
#include <sys/random.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/sysinfo.h>
#include <sys/times.h>
#include <sys/utsname.h>
#include <time.h>

#include "det.h"

_Static_assert(sizeof(struct rlimit) == 16, "x86-64 struct rlimit");
_Static_assert(sizeof(struct rusage) == 144, "x86-64 struct rusage");
_Static_assert(sizeof(struct tms) == 32, "x86-64 struct tms");
_Static_assert(sizeof(struct sysinfo) == 112, "x86-64 struct sysinfo");
_Static_assert(sizeof(struct utsname) == 6 * 65, "x86-64 new_utsname");

#define NS_PER_SEC 1000000000ULL
/* The unit of clock_t in times() (USER_HZ), fixed at 100 on x86. */
#define USER_HZ 100
/* fs.nr_open's default: the most RLIMIT_NOFILE may be, even for root. */
#define NR_OPEN_DEFAULT (1024 * 1024)
/* sizeof(struct robust_list_head) on x86-64. */
#define ROBUST_LIST_HEAD_BYTES 24
/* MAX_RW_COUNT: Linux caps one read-like transfer at INT_MAX & PAGE_MASK. */
#define MAX_RW_COUNT (INT_MAX & VMM_PAGE_MASK)

/* A detcore clock in nanoseconds; 0 if detcore cannot read it. */
static uint64_t det_clock_ns(struct proxy_process *p, int clockid)
{
    struct timespec ts;
    if (det_clock_gettime(p->det, clockid, &ts) < 0)
        return 0;
    return (uint64_t)ts.tv_sec * NS_PER_SEC + (uint64_t)ts.tv_nsec;
}

static struct timeval ns_to_timeval(uint64_t ns)
{
    return (struct timeval){(time_t)(ns / NS_PER_SEC),
                            (suseconds_t)(ns % NS_PER_SEC / 1000)};
}

static clock_t ns_to_ticks(uint64_t ns)
{
    return (clock_t)(ns / (NS_PER_SEC / USER_HZ));
}

/* ---- process identity ---------------------------------------------------- */

/* pids as the caller's pid namespace has them (kernel/namespace.c);
 * the parent of a namespace's init is outside it: 0. Threads other than
 * the main one keep their tids of the run. */
static long sys_getpid(struct proxy_process *p, const uint64_t a[6])
{
    p->det->reads[DET_SRC_IDS]++;
    return proxy_ns_pid_of(p, p);
}

static long sys_getppid(struct proxy_process *p, const uint64_t a[6])
{
    return proxy_ns_pid_nr(p, p->ppid);
}

static long sys_gettid(struct proxy_process *p, const uint64_t a[6])
{
    return p->tid == p->pid ? proxy_ns_pid_of(p, p) : p->tid;
}

/* ---- resource limits ----------------------------------------------------- */

/*
 * Applies a new limit (do_prlimit's checks, in its order). Limits are
 * recorded for the families that enforce them; RLIMIT_NOFILE's soft limit
 * is the fd table's ceiling, so it is pushed there at once.
 */
static long set_limit(struct proxy_process *p, unsigned resource,
                      const struct rlimit *lim)
{
    if (lim->rlim_cur > lim->rlim_max)
        return -EINVAL;
    if (resource == RLIMIT_NOFILE && lim->rlim_max > NR_OPEN_DEFAULT)
        return -EPERM;
    if (lim->rlim_max > p->rlimits[resource].rlim_max && !privileged(p))
        return -EPERM;
    p->rlimits[resource] = *lim;
    if (resource == RLIMIT_NOFILE)
        p->fds.max_fds = (int)lim->rlim_cur; /* <= NR_OPEN_DEFAULT */
    return 0;
}

static long sys_getrlimit(struct proxy_process *p, const uint64_t a[6])
{
    unsigned resource = (unsigned)a[0];
    if (resource >= RLIM_NLIMITS)
        return -EINVAL;
    const struct rlimit *lim = &p->rlimits[resource];
    return proxy_copy_out(p, a[1], lim, sizeof(*lim)) < 0 ? -EFAULT : 0;
}

static long sys_setrlimit(struct proxy_process *p, const uint64_t a[6])
{
    unsigned resource = (unsigned)a[0];
    struct rlimit lim;
    if (proxy_copy_in(p, &lim, a[1], sizeof(lim)) < 0)
        return -EFAULT;
    if (resource >= RLIM_NLIMITS)
        return -EINVAL;
    return set_limit(p, resource, &lim);
}

/*
 * prlimit64(pid, resource, new, old): old is the limit before new applies.
 * Like Linux, a bad old pointer is -EFAULT even though new was applied.
 */
static long sys_prlimit64(struct proxy_process *p, const uint64_t a[6])
{
    int pid = (int)a[0];
    unsigned resource = (unsigned)a[1];
    gva_t new_gva = a[2], old_gva = a[3];
    struct rlimit new_lim;
    if (new_gva && proxy_copy_in(p, &new_lim, new_gva, sizeof(new_lim)) < 0)
        return -EFAULT;
    if (!is_self(p, pid))
        return -ESRCH;
    if (resource >= RLIM_NLIMITS)
        return -EINVAL;
    const struct rlimit old_lim = p->rlimits[resource];
    if (new_gva) {
        long rc = set_limit(p, resource, &new_lim);
        if (rc < 0)
            return rc;
    }
    if (old_gva && proxy_copy_out(p, old_gva, &old_lim, sizeof(old_lim)) < 0)
        return -EFAULT;
    return 0;
}

/* ---- machine reports, through detcore ------------------------------------ */

/* The system identity: detcore's fixed machine (or the host's with
 * --no-virtualize-host); sethostname changes only the guest's view. */
static void uname_report(struct proxy_process *p, struct utsname *u)
{
    struct det_uname d;
    det_get_uname(p->det, &d);
    memset(u, 0, sizeof(*u));
    memcpy(u->sysname, d.sysname, sizeof(u->sysname));
    memcpy(u->nodename, d.nodename, sizeof(u->nodename));
    memcpy(u->release, d.release, sizeof(u->release));
    memcpy(u->version, d.version, sizeof(u->version));
    memcpy(u->machine, d.machine, sizeof(u->machine));
    memcpy(u->domainname, d.domainname, sizeof(u->domainname));
    if (proxy_ns_nodename(p)) { /* a UTS namespace of its own */
        snprintf(u->nodename, sizeof(u->nodename), "%s", proxy_ns_nodename(p));
        snprintf(u->domainname, sizeof(u->domainname), "%s",
                 proxy_ns_domainname(p));
    }
    /* A 32-bit persona sees a 32-bit machine, as Linux's override_architecture
     * gives (PER_LINUX32: "i686"). */
    if ((p->personality & PER_MASK) == PER_LINUX32 &&
        !strcmp(u->machine, "x86_64"))
        snprintf(u->machine, sizeof(u->machine), "i686");
}

/*
 * Memory figures of the virtual machine (--memory), no load, one process;
 * uptime is detcore's CLOCK_BOOTTIME. --no-virtualize-host gives the host's
 * memory and load figures (uptime stays logical with the clock).
 */
static void sysinfo_report(struct proxy_process *p, struct sysinfo *si)
{
    memset(si, 0, sizeof(*si));
    if (!p->det->cfg.virtualize_host && sysinfo(si) < 0)
        memset(si, 0, sizeof(*si));
    if (p->det->cfg.virtualize_host) {
        p->det->reads[DET_SRC_HOST]++;
        si->totalram = p->det->cfg.mem_total_bytes;
        si->freeram = det_mem_free_bytes(&p->det->cfg);
        si->procs = 1;
    }
    si->mem_unit = 1;
    si->uptime = (long)(det_clock_ns(p, CLOCK_BOOTTIME) / NS_PER_SEC);
    det_log_value(p->det, DET_SRC_HOST, si, sizeof(*si));
}

/*
 * Resource usage of RUSAGE_SELF or RUSAGE_THREAD. Max RSS is the guest
 * memory in use (the host's own counters with --no-virtualize-host); the
 * CPU time is detcore's CPU clock, all of it reported as user time: the
 * guest never runs in a kernel of its own. RUSAGE_CHILDREN is all zero
 * (children's usage is not accumulated).
 */
static void rusage_report(struct proxy_process *p, int who, struct rusage *ru)
{
    memset(ru, 0, sizeof(*ru));
    if (who == RUSAGE_CHILDREN)
        return;
    if (!p->det->cfg.virtualize_host) {
        struct rusage host;
        if (getrusage(who, &host) == 0) {
            ru->ru_maxrss = host.ru_maxrss;
            ru->ru_minflt = host.ru_minflt;
            ru->ru_majflt = host.ru_majflt;
            ru->ru_nvcsw = host.ru_nvcsw;
            ru->ru_nivcsw = host.ru_nivcsw;
        }
    } else {
        /* Guest memory in use, which only the program's own calls move. */
        ru->ru_maxrss = (long)(p->as->pm->used_pages * 4);
    }
    int clockid = who == RUSAGE_THREAD ? CLOCK_THREAD_CPUTIME_ID
                                       : CLOCK_PROCESS_CPUTIME_ID;
    ru->ru_utime = ns_to_timeval(proxy_cpu_clock_ns(p, clockid));
}

/*
 * times(): every field is a time, so all of it comes from detcore (the
 * process CPU clock as user time, no reaped children). Returns the clock_t
 * "since an arbitrary point in the past": detcore's CLOCK_MONOTONIC in ticks.
 */
static clock_t times_report(struct proxy_process *p, struct tms *t)
{
    memset(t, 0, sizeof(*t));
    t->tms_utime = ns_to_ticks(proxy_cpu_clock_ns(p, CLOCK_PROCESS_CPUTIME_ID));
    return ns_to_ticks(det_clock_ns(p, CLOCK_MONOTONIC));
}

/* ---- system reports ------------------------------------------------------ */

static long sys_uname(struct proxy_process *p, const uint64_t a[6])
{
    struct utsname u;
    uname_report(p, &u);
    return proxy_copy_out(p, a[0], &u, sizeof(u)) < 0 ? -EFAULT : 0;
}

static long sys_sysinfo(struct proxy_process *p, const uint64_t a[6])
{
    struct sysinfo si;
    sysinfo_report(p, &si);
    return proxy_copy_out(p, a[0], &si, sizeof(si)) < 0 ? -EFAULT : 0;
}

static long sys_getrusage(struct proxy_process *p, const uint64_t a[6])
{
    int who = (int)a[0];
    if (who != RUSAGE_SELF && who != RUSAGE_THREAD && who != RUSAGE_CHILDREN)
        return -EINVAL;
    struct rusage ru;
    rusage_report(p, who, &ru);
    return proxy_copy_out(p, a[1], &ru, sizeof(ru)) < 0 ? -EFAULT : 0;
}

/* times(buf): buf may be NULL; the return is in clock ticks. */
static long sys_times(struct proxy_process *p, const uint64_t a[6])
{
    struct tms t;
    clock_t now = times_report(p, &t);
    if (a[0] && proxy_copy_out(p, a[0], &t, sizeof(t)) < 0)
        return -EFAULT;
    return now;
}

/* ---- thread start (glibc's first calls) ---------------------------------- */

static long sys_set_tid_address(struct proxy_process *p, const uint64_t a[6])
{
    p->clear_child_tid = a[0];
    return p->tid;
}

static long sys_set_robust_list(struct proxy_process *p, const uint64_t a[6])
{
    if (a[1] != ROBUST_LIST_HEAD_BYTES)
        return -EINVAL;
    p->robust_list = a[0];
    return 0;
}

/* get_robust_list(pid, head_ptr, len_ptr): the thread's list head (0 or
 * its own tid: the caller's), ESRCH for no such thread, EPERM without
 * read access to it (the virtual init's: root's, empty); len first, then
 * head. */
static long sys_get_robust_list(struct proxy_process *p, const uint64_t a[6])
{
    int pid = (int)a[0];
    gva_t head = p->robust_list;
    if (!is_self(p, pid)) {
        struct proxy_process *q =
            pid > 0 ? proxy_world_find_tid(p->world, proxy_ns_global_nr(p, pid))
                    : NULL;
        if (!q && pid > 0 && proxy_virtual_process(p, pid, NULL, NULL)) {
            if (!id_privileged(p))
                return -EPERM;
            head = 0;
        } else if (!q || q->zombie) {
            return -ESRCH;
        } else if (!proxy_ptrace_may_access(p, q)) {
            return -EPERM;
        } else {
            int g = proxy_ns_global_nr(p, pid);
            head = q->robust_list;
            for (int i = 0; i < q->nr_threads; i++)
                if (i != q->cur && q->threads[i].tid == g)
                    head = q->threads[i].robust_list;
        }
    }
    long rc = put_u64(p, a[2], ROBUST_LIST_HEAD_BYTES);
    if (rc == 0)
        rc = put_u64(p, a[1], head);
    return rc;
}

/* ---- getrandom ----------------------------------------------------------- */

/*
 * getrandom(buf, count, flags): bytes come from detcore, one page-aligned
 * chunk at a time, so a fault stops exactly at the first unwritable page and
 * the bytes before it count, as in Linux. detcore never blocks, so
 * GRND_NONBLOCK changes nothing.
 */
static long sys_getrandom(struct proxy_process *p, const uint64_t a[6])
{
    gva_t buf = a[0];
    size_t count = a[1];
    unsigned flags = (unsigned)a[2];
    if (flags & ~(unsigned)(GRND_NONBLOCK | GRND_RANDOM | GRND_INSECURE))
        return -EINVAL;
    if ((flags & GRND_RANDOM) && (flags & GRND_INSECURE))
        return -EINVAL;
    if (count > MAX_RW_COUNT)
        count = MAX_RW_COUNT;
    uint8_t chunk[VMM_PAGE_SIZE];
    size_t done = 0;
    while (done < count) {
        gva_t at = buf + done;
        size_t to_page_end = VMM_PAGE_SIZE - (at & (VMM_PAGE_SIZE - 1));
        size_t n = count - done < to_page_end ? count - done : to_page_end;
        det_random_fill(p->det, chunk, n);
        if (proxy_copy_out(p, at, chunk, n) < 0)
            break;
        done += n;
    }
    if (done == 0 && count > 0)
        return -EFAULT;
    return (long)done;
}

/* ---- process groups and sessions (one process) --------------------------- */

static long sys_getpgrp(struct proxy_process *p, const uint64_t a[6])
{
    return proxy_ns_pid_nr(p, p->pgid);
}

bool proxy_virtual_process(const struct proxy_process *viewer, int pid,
                           int *pgid, int *sid)
{
    int id = -1;
    if (pid == PROXY_SHELL_PID)
        id = PROXY_SHELL_PID;
    else if (pid == PROXY_INIT_PID && !viewer->cfg->as_init)
        id = PROXY_INIT_PID;
    if (id < 0 || proxy_ns_pid_level(viewer) > 0)
        return false;
    if (pgid)
        *pgid = id;
    if (sid)
        *sid = id;
    return true;
}

/* The guest process pid names in p's pid namespace (0: the caller), or
 * NULL. */
static struct proxy_process *process_of(struct proxy_process *p, int pid)
{
    if (pid == 0 || pid == proxy_ns_pid_of(p, p))
        return p;
    if (pid < 0 || !p->world)
        return NULL;
    struct proxy_process *q = proxy_ns_find(p, pid);
    return q && !q->zombie ? q : NULL;
}

static long sys_getpgid(struct proxy_process *p, const uint64_t a[6])
{
    struct proxy_process *q = process_of(p, (int)a[0]);
    int pgid;
    if (!q && proxy_virtual_process(p, (int)a[0], &pgid, NULL))
        return pgid;
    return q ? proxy_ns_pid_nr(p, q->pgid) : -ESRCH;
}

static long sys_getsid(struct proxy_process *p, const uint64_t a[6])
{
    struct proxy_process *q = process_of(p, (int)a[0]);
    int sid;
    if (!q && proxy_virtual_process(p, (int)a[0], NULL, &sid))
        return sid;
    return q ? proxy_ns_pid_nr(p, q->sid) : -ESRCH;
}

/* Whether a process group pgid exists in session sid. */
static bool group_in_session(struct proxy_process *p, int pgid, int sid)
{
    for (int i = 0; p->world && i < p->world->nr_procs; i++) {
        struct proxy_process *q = p->world->procs[i];
        if (!q->zombie && q->pgid == pgid && q->sid == sid)
            return true;
    }
    return p->pgid == pgid && p->sid == sid;
}

/* The virtual shell and the virtual init are each in a group and session
 * of their own; so is the parent of an --as-init first process (ppid 0),
 * taken to be the shell. */
static void parent_ids(struct proxy_world *w, const struct proxy_process *q,
                       int *pgid, int *sid)
{
    struct proxy_process *par = q->ppid ? proxy_world_find(w, q->ppid) : NULL;
    *pgid = par ? par->pgid : PROXY_OUTSIDE_PGID;
    *sid = par ? par->sid : PROXY_OUTSIDE_PGID;
    if (!par && q->ppid == PROXY_INIT_PID)
        *pgid = *sid = PROXY_INIT_PID;
}

/* will_become_orphaned_pgrp: no live member has a parent in another
 * group of the same session (which could bring the group back to the
 * foreground); the first process's parent is the virtual shell. */
bool proxy_pgrp_orphaned(struct proxy_world *w, int pgrp)
{
    /* The virtual shell's own group: its parent (a login shell, a
     * terminal's) is taken to be in the session, as for a shell's job. */
    if (pgrp == PROXY_OUTSIDE_PGID || !w)
        return false;
    for (int i = 0; i < w->nr_procs; i++) {
        struct proxy_process *q = w->procs[i];
        if (q->zombie || q->pgid != pgrp)
            continue;
        int ppgid, psid;
        parent_ids(w, q, &ppgid, &psid);
        if (ppgid != pgrp && psid == q->sid)
            return false;
    }
    return true;
}

/*
 * setpgid(pid, pgid): 0 means the caller for pid and pid for pgid. The
 * target is the caller or a child of it that has not exec'd (EACCES) in
 * the caller's session; a session leader may not move; joining a group
 * needs that group in the same session (EPERM), as in Linux.
 */
static long sys_setpgid(struct proxy_process *p, const uint64_t a[6])
{
    if ((int)a[1] < 0)
        return -EINVAL;
    struct proxy_process *t = process_of(p, (int)a[0]);
    if (!t || (t != p && t->ppid != p->pid))
        return -ESRCH;
    /* ksys_setpgid's order: a child in another session (EPERM) before
     * one that has exec'd (EACCES), then a session leader, then the
     * group (its pid namespace's number, in the caller's session). */
    if (t != p && t->sid != p->sid)
        return -EPERM;
    if (t != p && t->did_exec)
        return -EACCES;
    if (t->sid == t->pid)
        return -EPERM;
    int pgid = (int)a[1] ? proxy_ns_global_nr(p, (int)a[1]) : t->pid;
    if (pgid < 0)
        return -EPERM;
    if (pgid != t->pid && !group_in_session(p, pgid, p->sid))
        return -EPERM;
    t->pgid = pgid;
    return 0;
}

/* setsid fails when a process group with the caller's pid exists, which is
 * always so for a group leader (and so for a session leader). */
static long sys_setsid(struct proxy_process *p, const uint64_t a[6])
{
    if (p->pgid == p->pid || p->sid == p->pid ||
        group_in_session(p, p->pid, p->sid))
        return -EPERM;
    for (int i = 0; p->world && i < p->world->nr_procs; i++)
        if (p->world->procs[i]->pgid == p->pid)
            return -EPERM;
    p->sid = p->pgid = p->pid;
    proxy_hooks.tty_setsid(p);
    return proxy_ns_pid_of(p, p);
}

/* ---- host names ---------------------------------------------------------- */

/*
 * sethostname/setdomainname: as in a UTS namespace of its own, the new name
 * is seen only inside the run; the host's name never changes.
 */
static long set_uts_name(struct proxy_process *p, const uint64_t a[6],
                         bool host)
{
    if (!proxy_ns_uts_admin(p))
        return -EPERM;
    if (a[1] > 64)
        return -EINVAL;
    char name[65];
    int rc = proxy_copy_in(p, name, a[0], (size_t)a[1]);
    if (rc < 0)
        return rc;
    return proxy_ns_set_uts_name(p, host, name, (size_t)a[1]);
}

static long sys_sethostname(struct proxy_process *p, const uint64_t a[6])
{
    return set_uts_name(p, a, true);
}

static long sys_setdomainname(struct proxy_process *p, const uint64_t a[6])
{
    return set_uts_name(p, a, false);
}

/* ---- personality --------------------------------------------------------- */

/*
 * Only the PER_LINUX execution domain exists here. 0xffffffff queries;
 * flag bits (ADDR_NO_RANDOMIZE and the rest) are accepted and not kept:
 * hvrun's layout does not randomise anyway. Other domains (PER_LINUX32...)
 * would change uname and more, so they are refused rather than ignored.
 */
/* personality(2): the old value; 0xffffffff only asks. Linux takes any
 * value (the flags, and the exec domain, which on x86-64 is Linux's for
 * every persona). */
static long sys_personality(struct proxy_process *p, const uint64_t a[6])
{
    uint32_t old = p->personality;
    if ((uint32_t)a[0] != 0xffffffffu)
        p->personality = (uint32_t)a[0];
    return (long)old;
}

/* ---- refused ------------------------------------------------------------- */

/* The kernel log is not the guest's to read: -EPERM, as Linux answers
 * without CAP_SYSLOG under dmesg_restrict. */
static long sys_syslog(struct proxy_process *p, const uint64_t a[6])
{
    return -EPERM;
}

/* Hanging up the terminal would hang up hvrun's: refused as without
 * CAP_SYS_TTY_CONFIG. */
static long sys_vhangup(struct proxy_process *p, const uint64_t a[6])
{
    return -EPERM;
}

const struct proxy_syscall proxy_sys_syscalls[] = {
    {SYS_getpid, "getpid", sys_getpid},
    {SYS_getppid, "getppid", sys_getppid},
    {SYS_gettid, "gettid", sys_gettid},
    {SYS_getrlimit, "getrlimit", sys_getrlimit},
    {SYS_setrlimit, "setrlimit", sys_setrlimit},
    {SYS_prlimit64, "prlimit64", sys_prlimit64},
    {SYS_uname, "uname", sys_uname},
    {SYS_sethostname, "sethostname", sys_sethostname},
    {SYS_setdomainname, "setdomainname", sys_setdomainname},
    {SYS_sysinfo, "sysinfo", sys_sysinfo},
    {SYS_getrusage, "getrusage", sys_getrusage},
    {SYS_times, "times", sys_times},
    {SYS_set_tid_address, "set_tid_address", sys_set_tid_address},
    {SYS_set_robust_list, "set_robust_list", sys_set_robust_list},
    {SYS_get_robust_list, "get_robust_list", sys_get_robust_list},
    {SYS_getrandom, "getrandom", sys_getrandom},
    {SYS_getpgrp, "getpgrp", sys_getpgrp},
    {SYS_getpgid, "getpgid", sys_getpgid},
    {SYS_getsid, "getsid", sys_getsid},
    {SYS_setpgid, "setpgid", sys_setpgid},
    {SYS_setsid, "setsid", sys_setsid},
    {SYS_personality, "personality", sys_personality},
    {SYS_syslog, "syslog", sys_syslog},
    {SYS_vhangup, "vhangup", sys_vhangup},
    {-1, NULL, NULL},
};
