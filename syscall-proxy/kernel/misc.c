/*
 * misc.c - the identity, credential, limit, scheduling and process-control
 * calls that belong to no bigger family: getpid and friends, set*id,
 * rlimits, uname/sysinfo/getrusage/times, arch_prctl, the thread-start
 * calls glibc makes (set_tid_address, set_robust_list), getrandom,
 * CPU affinity, prctl, process groups and sessions, capabilities,
 * priorities and memory locking.
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
#include "internal.h"
#include "namespace.h"

#include <asm/prctl.h>
#include <errno.h>
#include <limits.h>
#include <linux/capability.h>
#include <linux/ioprio.h>
#include <linux/membarrier.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/personality.h>
#include <sys/prctl.h>
#include <sys/random.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/sysinfo.h>
#include <sys/times.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "det.h"

_Static_assert(sizeof(struct rlimit) == 16, "x86-64 struct rlimit");
_Static_assert(sizeof(struct rusage) == 144, "x86-64 struct rusage");
_Static_assert(sizeof(struct tms) == 32, "x86-64 struct tms");
_Static_assert(sizeof(struct sysinfo) == 112, "x86-64 struct sysinfo");
_Static_assert(sizeof(struct utsname) == 6 * 65, "x86-64 new_utsname");
_Static_assert(sizeof(uid_t) == 4 && sizeof(gid_t) == 4, "32-bit ids");

#define NS_PER_SEC 1000000000ULL
/* The unit of clock_t in times() (USER_HZ), fixed at 100 on x86. */
#define USER_HZ 100
/* (uid_t)-1 in set*id calls: "leave this id alone". */
#define ID_UNCHANGED 0xffffffffu
/* fs.nr_open's default: the most RLIMIT_NOFILE may be, even for root. */
#define NR_OPEN_DEFAULT (1024 * 1024)
/* Linux's default timer slack for a normal task. */
#define TIMERSLACK_DEFAULT_NS 50000
/* sizeof(struct robust_list_head) on x86-64. */
#define ROBUST_LIST_HEAD_BYTES 24
/* The only CPU, and the size of the kernel's cpumask for one CPU. */
#define CPUMASK_BYTES 8
/* MAX_RW_COUNT: Linux caps one read-like transfer at INT_MAX & PAGE_MASK. */
#define MAX_RW_COUNT (INT_MAX & VMM_PAGE_MASK)

/* prctl flags and the nice value live in the process (fork copies them;
 * Linux clears pdeathsig in the child). */
static struct proxy_prctl_state *misc_state(struct proxy_process *p)
{
    return &p->prctl;
}

/* ---- small helpers ------------------------------------------------------- */

/* capable(): the run's initial user namespace (host-wide limits, nice,
 * memory locking). The set*id calls need their capability only in the
 * caller's own user namespace (id_privileged). */
static bool privileged(const struct proxy_process *p)
{
    return proxy_ns_init_capable(p);
}

static bool id_privileged(const struct proxy_process *p)
{
    return proxy_ns_capable(p);
}

/* A pid argument naming this process: 0 ("self"), its pid or its tid. */
static bool is_self(const struct proxy_process *p, int pid)
{
    return pid == 0 || pid == p->pid || pid == p->tid ||
           pid == proxy_ns_pid_of(p, p);
}

static long put_u32(struct proxy_process *p, gva_t dst, uint32_t v)
{
    return proxy_copy_out(p, dst, &v, sizeof(v)) < 0 ? -EFAULT : 0;
}

static long put_int(struct proxy_process *p, gva_t dst, int v)
{
    return proxy_copy_out(p, dst, &v, sizeof(v)) < 0 ? -EFAULT : 0;
}

static long put_u64(struct proxy_process *p, gva_t dst, uint64_t v)
{
    return proxy_copy_out(p, dst, &v, sizeof(v)) < 0 ? -EFAULT : 0;
}

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

/* hvrun's supplementary groups as they were before a replay's user
 * namespace (cli/isolate.c), in which those not mapped (all but its own
 * gid) read as the overflow gid; -1 if not kept. */
#define KEPT_GROUPS_MAX 1024
static gid_t kept_groups[KEPT_GROUPS_MAX];
static int nr_kept_groups = -1;

void proxy_keep_host_groups(void)
{
    int n = getgroups(KEPT_GROUPS_MAX, kept_groups);
    nr_kept_groups = n < 0 ? -1 : n;
}

int proxy_host_groups(gid_t *out, int max)
{
    if (nr_kept_groups < 0) {
        int n = getgroups(max, out);
        return n < 0 ? -errno : n;
    }
    if (max == 0)
        return nr_kept_groups;
    if (max < nr_kept_groups)
        return -EINVAL;
    memcpy(out, kept_groups, (size_t)nr_kept_groups * sizeof(*out));
    return nr_kept_groups;
}

/*
 * Supplementary groups: hvrun's own for now. Fills at most max entries of
 * out (NULL when max is 0) and returns the count, or -errno.
 */
static int groups_report(gid_t *out, int max)
{
    return proxy_host_groups(out, max);
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

/* ---- credentials --------------------------------------------------------- */

/* The ids are kept as kernel ids; the guest sees them through its user
 * namespace (kernel/namespace.c). */
static long sys_getuid(struct proxy_process *p, const uint64_t a[6])
{
    return proxy_ns_uid_seen(p, p->ruid);
}

static long sys_geteuid(struct proxy_process *p, const uint64_t a[6])
{
    return proxy_ns_uid_seen(p, p->euid);
}

static long sys_getgid(struct proxy_process *p, const uint64_t a[6])
{
    return proxy_ns_gid_seen(p, p->rgid);
}

static long sys_getegid(struct proxy_process *p, const uint64_t a[6])
{
    return proxy_ns_gid_seen(p, p->egid);
}

/* Linux writes the three ids in order and stops at the first bad pointer. */
static long put_id_triple(struct proxy_process *p, const uint64_t a[6],
                          uint32_t real, uint32_t eff, uint32_t saved)
{
    long rc = put_u32(p, a[0], real);
    if (rc == 0)
        rc = put_u32(p, a[1], eff);
    if (rc == 0)
        rc = put_u32(p, a[2], saved);
    return rc;
}

static long sys_getresuid(struct proxy_process *p, const uint64_t a[6])
{
    return put_id_triple(p, a, proxy_ns_uid_seen(p, p->ruid),
                         proxy_ns_uid_seen(p, p->euid),
                         proxy_ns_uid_seen(p, p->suid));
}

static long sys_getresgid(struct proxy_process *p, const uint64_t a[6])
{
    return put_id_triple(p, a, proxy_ns_gid_seen(p, p->rgid),
                         proxy_ns_gid_seen(p, p->egid),
                         proxy_ns_gid_seen(p, p->sgid));
}

/*
 * The set*id arguments as kernel ids (make_kuid): -1 stays "leave it
 * alone"; an id the caller's user namespace does not map is -EINVAL.
 * Returns 0 with ids[0..n) rewritten, or -EINVAL.
 */
static long kernel_ids(const struct proxy_process *p, bool gid, uint32_t *ids,
                       int n)
{
    for (int i = 0; i < n; i++) {
        if (ids[i] == ID_UNCHANGED)
            continue;
        int64_t k = gid ? proxy_ns_gid_kernel(p, ids[i])
                        : proxy_ns_uid_kernel(p, ids[i]);
        if (k < 0)
            return -EINVAL;
        ids[i] = (uint32_t)k;
    }
    return 0;
}

/*
 * The user and group set*id rules are the same (kernel/sys.c); they run on
 * a copy of the three ids, which the caller stores back on success.
 */
struct id_triple {
    uint32_t real, eff, saved;
};

static struct id_triple uids_of(const struct proxy_process *p)
{
    return (struct id_triple){p->ruid, p->euid, p->suid};
}

static void store_uids(struct proxy_process *p, const struct id_triple *t)
{
    p->ruid = t->real;
    p->euid = t->eff;
    p->suid = t->saved;
}

static struct id_triple gids_of(const struct proxy_process *p)
{
    return (struct id_triple){p->rgid, p->egid, p->sgid};
}

static void store_gids(struct proxy_process *p, const struct id_triple *t)
{
    p->rgid = t->real;
    p->egid = t->eff;
    p->sgid = t->saved;
}

static bool id_in_triple(const struct id_triple *t, uint32_t id)
{
    return id == t->real || id == t->eff || id == t->saved;
}

/*
 * setuid/setgid: privileged sets all three ids; otherwise only the
 * effective id may change, and only to the real or saved id. -1 is not a
 * valid id here (-EINVAL), unlike in the calls below where it means "keep".
 */
static long rule_set_id(struct id_triple *t, uint32_t id, bool priv)
{
    if (id == ID_UNCHANGED)
        return -EINVAL;
    if (priv) {
        t->real = t->eff = t->saved = id;
        return 0;
    }
    if (id != t->real && id != t->saved)
        return -EPERM;
    t->eff = id;
    return 0;
}

/*
 * setreuid/setregid: unprivileged, the real id may become the real or
 * effective id, and the effective id any of the three. The saved id then
 * follows the new effective id when the real id was set, or when the
 * effective id was set to something other than the old real id.
 */
static long rule_set_re_ids(struct id_triple *t, uint32_t real, uint32_t eff,
                            bool priv)
{
    const struct id_triple old = *t;
    if (!priv && real != ID_UNCHANGED && real != old.real && real != old.eff)
        return -EPERM;
    if (!priv && eff != ID_UNCHANGED && !id_in_triple(&old, eff))
        return -EPERM;
    if (real != ID_UNCHANGED)
        t->real = real;
    if (eff != ID_UNCHANGED)
        t->eff = eff;
    if (real != ID_UNCHANGED || (eff != ID_UNCHANGED && eff != old.real))
        t->saved = t->eff;
    return 0;
}

/* setresuid/setresgid: unprivileged, each new id must be one of the three
 * current ids. */
static long rule_set_res_ids(struct id_triple *t, uint32_t real, uint32_t eff,
                             uint32_t saved, bool priv)
{
    if (!priv && ((real != ID_UNCHANGED && !id_in_triple(t, real)) ||
                  (eff != ID_UNCHANGED && !id_in_triple(t, eff)) ||
                  (saved != ID_UNCHANGED && !id_in_triple(t, saved))))
        return -EPERM;
    if (real != ID_UNCHANGED)
        t->real = real;
    if (eff != ID_UNCHANGED)
        t->eff = eff;
    if (saved != ID_UNCHANGED)
        t->saved = saved;
    return 0;
}

/*
 * cap_emulate_setxuid with PR_SET_KEEPCAPS: a process that had its
 * capabilities as root and leaves every root id keeps them permitted
 * (not effective) until execve; capset can make them effective again
 * (setpriv --reuid does). Without keepcaps they follow the euid.
 */
static void keep_caps_across(struct proxy_process *p, bool had_caps,
                             const struct id_triple *old,
                             const struct id_triple *now)
{
    int64_t root = proxy_ns_uid_kernel(p, 0);
    bool had = root >= 0 && id_in_triple(old, (uint32_t)root);
    bool has = root >= 0 && id_in_triple(now, (uint32_t)root);
    if (had && !has && had_caps)
        p->caps_kept = p->prctl.keepcaps;
    if (root < 0 || now->eff != (uint32_t)root)
        p->caps_kept_effective = false;
}

/*
 * setresuid/setresgid that would change nothing return at once (Linux
 * 6.2's no-op check), so they leave a setfsuid's id alone; an effective
 * id equal to the old one changes the filesystem id back when they
 * differ.
 */
static bool res_ids_no_op(const struct id_triple *t, uint32_t fs_id,
                          const uint32_t ids[3])
{
    return (ids[0] == ID_UNCHANGED || ids[0] == t->real) &&
           (ids[1] == ID_UNCHANGED || (ids[1] == t->eff && ids[1] == fs_id)) &&
           (ids[2] == ID_UNCHANGED || ids[2] == t->saved);
}

/* One set*id call: its n arguments as kernel ids, the rule on a copy of
 * the three ids, stored back on success; the filesystem id then follows
 * the effective one, whether or not it changed (kernel/sys.c). */
static long set_ids(struct proxy_process *p, bool gid, const uint64_t a[6],
                    int n)
{
    uint32_t ids[3] = {(uint32_t)a[0], (uint32_t)a[1], (uint32_t)a[2]};
    long rc = kernel_ids(p, gid, ids, n);
    if (rc < 0)
        return rc;
    struct id_triple t = gid ? gids_of(p) : uids_of(p);
    const struct id_triple old = t;
    if (n == 3 && res_ids_no_op(&t, gid ? p->fsgid : p->fsuid, ids))
        return 0;
    bool priv = id_privileged(p);
    rc = n == 1   ? rule_set_id(&t, ids[0], priv)
         : n == 2 ? rule_set_re_ids(&t, ids[0], ids[1], priv)
                  : rule_set_res_ids(&t, ids[0], ids[1], ids[2], priv);
    if (rc < 0)
        return rc;
    if (gid) {
        store_gids(p, &t);
        p->fsgid = p->egid;
    } else {
        store_uids(p, &t);
        p->fsuid = p->euid;
        keep_caps_across(p, priv || p->caps_kept, &old, &t);
        proxy_ns_uids_changed(p);
    }
    return 0;
}

/*
 * setfsuid/setfsgid: the old filesystem id as the caller's user namespace
 * sees it, always (there is no error return: (uid_t)-1, never a valid id,
 * is how a program asks). The id changes to one of the real, effective,
 * saved or current filesystem ids, or to any mapped one with CAP_SETUID
 * (CAP_SETGID). Divergences: the id is the process's, where Linux keeps
 * it per thread (glibc does not broadcast setfsuid); capabilities follow
 * the euid in this model, so the filesystem capabilities Linux drops
 * while the fsuid is not 0 stay (the host checks files as hvrun anyway).
 */
static long set_fs_id(struct proxy_process *p, bool gid, uint32_t id)
{
    uint32_t *fs_id = gid ? &p->fsgid : &p->fsuid;
    long old_seen = gid ? proxy_ns_gid_seen(p, *fs_id)
                        : proxy_ns_uid_seen(p, *fs_id);
    uint32_t k = id;
    if (id == ID_UNCHANGED || kernel_ids(p, gid, &k, 1) < 0)
        return old_seen;
    const struct id_triple t = gid ? gids_of(p) : uids_of(p);
    if (id_in_triple(&t, k) || k == *fs_id || id_privileged(p))
        *fs_id = k;
    return old_seen;
}

static long sys_setfsuid(struct proxy_process *p, const uint64_t a[6])
{
    return set_fs_id(p, false, (uint32_t)a[0]);
}

static long sys_setfsgid(struct proxy_process *p, const uint64_t a[6])
{
    return set_fs_id(p, true, (uint32_t)a[0]);
}

static long sys_setuid(struct proxy_process *p, const uint64_t a[6])
{
    return set_ids(p, false, a, 1);
}

static long sys_setgid(struct proxy_process *p, const uint64_t a[6])
{
    return set_ids(p, true, a, 1);
}

static long sys_setreuid(struct proxy_process *p, const uint64_t a[6])
{
    return set_ids(p, false, a, 2);
}

static long sys_setregid(struct proxy_process *p, const uint64_t a[6])
{
    return set_ids(p, true, a, 2);
}

static long sys_setresuid(struct proxy_process *p, const uint64_t a[6])
{
    return set_ids(p, false, a, 3);
}

static long sys_setresgid(struct proxy_process *p, const uint64_t a[6])
{
    return set_ids(p, true, a, 3);
}

/*
 * getgroups(size, list): size 0 asks for the count only; a list too small
 * for every group is -EINVAL, not a truncated answer.
 */
static long sys_getgroups(struct proxy_process *p, const uint64_t a[6])
{
    int size = (int)a[0];
    if (size < 0)
        return -EINVAL;
    /* The list setgroups gave, else hvrun's own (kernel ids either way). */
    int n = p->nr_groups >= 0 ? p->nr_groups : groups_report(NULL, 0);
    if (n <= 0 || size == 0)
        return n;
    if (size < n)
        return -EINVAL;
    gid_t *groups = calloc((size_t)n, sizeof(*groups));
    if (!groups)
        return -ENOMEM;
    if (p->nr_groups >= 0)
        memcpy(groups, p->groups, (size_t)n * sizeof(*groups));
    else
        n = groups_report(groups, n);
    for (int i = 0; i < n; i++) /* as the caller's user namespace sees them */
        groups[i] = proxy_ns_gid_seen(p, groups[i]);
    if (n > 0 && proxy_copy_out(p, a[1], groups, (size_t)n * sizeof(gid_t)))
        n = -EFAULT;
    free(groups);
    return n;
}

/*
 * setgroups needs CAP_SETGID in the caller's user namespace, and there
 * a gid map with setgroups allowed (may_setgroups). A privileged guest's
 * list is the process's from then on (getgroups reports it sorted, as
 * Linux keeps it; children inherit it); hvrun's real groups never change,
 * so the host's access checks stay hvrun's.
 */
static int by_gid(const void *a, const void *b)
{
    gid_t x = *(const gid_t *)a, y = *(const gid_t *)b;
    return x < y ? -1 : x > y;
}

static long sys_setgroups(struct proxy_process *p, const uint64_t a[6])
{
    int size = (int)a[0];
    if (!id_privileged(p) || !proxy_ns_setgroups_allowed(p))
        return -EPERM;
    if ((unsigned)size > NGROUPS_MAX)
        return -EINVAL;
    if (size == 0) {
        free(p->groups);
        p->groups = NULL;
        p->nr_groups = 0;
        return 0;
    }
    gid_t *groups = calloc((size_t)size, sizeof(*groups));
    if (!groups)
        return -ENOMEM;
    if (proxy_copy_in(p, groups, a[1], (size_t)size * sizeof(gid_t))) {
        free(groups);
        return -EFAULT;
    }
    if (kernel_ids(p, true, (uint32_t *)groups, size) < 0) {
        free(groups);
        return -EINVAL;
    }
    qsort(groups, (size_t)size, sizeof(*groups), by_gid);
    free(p->groups);
    p->groups = (uint32_t *)groups;
    p->nr_groups = size;
    return 0;
}

/*
 * capget/capset headers carry a version that says how many 32-bit words
 * each capability set has: v1 one, v2 and v3 two. An unknown version is
 * -EINVAL after writing the preferred version back into the header; libcap
 * probes that way, passing a NULL data pointer.
 */
struct cap_header {
    uint32_t version;
    int32_t pid;
};

struct cap_data {
    uint32_t effective, permitted, inheritable;
};

static long cap_header_words(struct proxy_process *p, gva_t hdr_gva, int *words)
{
    uint32_t version;
    if (proxy_copy_in(p, &version, hdr_gva, sizeof(version)) < 0)
        return -EFAULT;
    switch (version) {
    case _LINUX_CAPABILITY_VERSION_1:
        *words = 1;
        return 0;
    case _LINUX_CAPABILITY_VERSION_2:
    case _LINUX_CAPABILITY_VERSION_3:
        *words = 2;
        return 0;
    default:
        if (put_u32(p, hdr_gva, _LINUX_CAPABILITY_VERSION_3) < 0)
            return -EFAULT;
        return -EINVAL;
    }
}

static long cap_header_pid(struct proxy_process *p, gva_t hdr_gva, int *pid)
{
    gva_t pid_gva = hdr_gva + offsetof(struct cap_header, pid);
    return proxy_copy_in(p, pid, pid_gva, sizeof(*pid)) < 0 ? -EFAULT : 0;
}

/* The capabilities of the guest: all of them for euid 0, none otherwise,
 * as Linux gives a root process without file capabilities. */
static uint64_t caps_of(const struct proxy_process *p)
{
    /* in its own user namespace: a new one gives its creator all */
    return id_privileged(p) ? (1ULL << (CAP_LAST_CAP + 1)) - 1 : 0;
}

/* The permitted set PR_SET_KEEPCAPS kept across a setuid from root. */
static uint64_t permitted_kept(const struct proxy_process *p)
{
    return p->caps_kept ? (1ULL << (CAP_LAST_CAP + 1)) - 1 : 0;
}

static long sys_capget(struct proxy_process *p, const uint64_t a[6])
{
    gva_t hdr_gva = a[0], data_gva = a[1];
    int words, pid;
    long rc = cap_header_words(p, hdr_gva, &words);
    if (data_gva == 0 || rc < 0)
        return data_gva == 0 && rc == -EINVAL ? 0 : rc;
    rc = cap_header_pid(p, hdr_gva, &pid);
    if (rc < 0)
        return rc;
    if (pid < 0)
        return -EINVAL;
    /* another guest's sets are readable too (stress-ng asks pid 1's) */
    const struct proxy_process *q = is_self(p, pid) ? p : proxy_ns_find(p, pid);
    if (!q)
        return -ESRCH;
    uint64_t caps = caps_of(q), perm = caps | permitted_kept(q);
    const struct cap_data d[2] = {
        {(uint32_t)caps, (uint32_t)perm, 0},
        {(uint32_t)(caps >> 32), (uint32_t)(perm >> 32), 0},
    };
    if (proxy_copy_out(p, data_gva, d, (size_t)words * sizeof(d[0])) < 0)
        return -EFAULT;
    return 0;
}

/*
 * capset may only drop: permitted and inheritable within what the process
 * has, effective within the new permitted. A valid drop is accepted but not
 * recorded, since capabilities follow euid in this model and no guest
 * capability ever reaches the host.
 */
static long sys_capset(struct proxy_process *p, const uint64_t a[6])
{
    int words, pid;
    long rc = cap_header_words(p, a[0], &words);
    if (rc == 0)
        rc = cap_header_pid(p, a[0], &pid);
    if (rc < 0)
        return rc;
    if (pid != 0 && pid != p->pid)
        return -EPERM;
    struct cap_data d[2] = {{0, 0, 0}, {0, 0, 0}};
    if (proxy_copy_in(p, d, a[1], (size_t)words * sizeof(d[0])) < 0)
        return -EFAULT;
    uint64_t eff = d[0].effective | (uint64_t)d[1].effective << 32;
    uint64_t perm = d[0].permitted | (uint64_t)d[1].permitted << 32;
    uint64_t inh = d[0].inheritable | (uint64_t)d[1].inheritable << 32;
    uint64_t have = caps_of(p) | permitted_kept(p);
    if ((perm & ~have) || (inh & ~have) || (eff & ~perm))
        return -EPERM;
    if (p->caps_kept) /* what keepcaps kept: effective again, or dropped */
        p->caps_kept_effective = eff != 0;
    if (p->caps_kept && perm == 0)
        p->caps_kept = p->caps_kept_effective = false;
    return 0;
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

/* ---- arch_prctl ---------------------------------------------------------- */

/*
 * FS/GS bases must be below TASK_SIZE_MAX (VMM_USER_END), which also rules
 * out non-canonical addresses: Linux answers -EPERM for both.
 */
static long sys_arch_prctl(struct proxy_process *p, const uint64_t a[6])
{
    int code = (int)a[0];
    uint64_t arg = a[1];
    switch (code) {
    case ARCH_SET_FS:
        if (arg >= VMM_USER_END)
            return -EPERM;
        vmm_vm_set_fs_base(p->vm, arg);
        return 0;
    case ARCH_SET_GS:
        if (arg >= VMM_USER_END)
            return -EPERM;
        vmm_vm_set_gs_base(p->vm, arg);
        return 0;
    case ARCH_GET_FS:
        return put_u64(p, arg, vmm_vm_fs_base(p->vm));
    case ARCH_GET_GS:
        return put_u64(p, arg, vmm_vm_gs_base(p->vm));
    case ARCH_GET_CPUID:
        return 1; /* CPUID executes normally (it never faults) */
    case ARCH_SET_CPUID:
        return -ENODEV; /* no CPUID faulting: Linux's answer without it */
    default:
        /* XCOMP (AMX permissions) and vDSO mapping: not offered. */
        return -EINVAL;
    }
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

/* get_robust_list(pid, head_ptr, len_ptr): len first, then head. */
static long sys_get_robust_list(struct proxy_process *p, const uint64_t a[6])
{
    if (!is_self(p, (int)a[0]))
        return -ESRCH;
    long rc = put_u64(p, a[2], ROBUST_LIST_HEAD_BYTES);
    if (rc == 0)
        rc = put_u64(p, a[1], p->robust_list);
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

/* ---- scheduling: one CPU, SCHED_OTHER ------------------------------------ */

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
    if (!is_self(p, (int)a[0]))
        return -ESRCH;
    long rc = put_u64(p, a[2], 1);
    return rc < 0 ? rc : CPUMASK_BYTES;
}

/* Reads at most the kernel cpumask's size (shorter means the rest is zero);
 * a mask without CPU 0 leaves nowhere to run: -EINVAL. */
static long sys_sched_setaffinity(struct proxy_process *p, const uint64_t a[6])
{
    unsigned len = (unsigned)a[1];
    uint64_t mask = 0;
    size_t n = len < CPUMASK_BYTES ? len : CPUMASK_BYTES;
    if (n > 0 && proxy_copy_in(p, &mask, a[2], n) < 0)
        return -EFAULT;
    if (!is_self(p, (int)a[0]))
        return -ESRCH;
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

static long sched_set(struct proxy_process *p, int policy, int priority,
                      bool reset_on_fork, const struct sched_attr_v1 *dl)
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
    struct proxy_prctl_state *st = misc_state(p);
    if ((rt || policy == SCHED_DEADLINE_POLICY) && !privileged(p))
        return -EPERM;
    if (st->sched_reset_on_fork && !reset_on_fork && !privileged(p))
        return -EPERM; /* only privilege clears it */
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
    if (!is_self(p, pid))
        return -ESRCH;
    bool reset = (policy & SCHED_RESET_ON_FORK_FLAG) != 0;
    policy &= ~SCHED_RESET_ON_FORK_FLAG;
    if (policy == SCHED_DEADLINE_POLICY)
        return -EINVAL; /* only through sched_setattr */
    return sched_set(p, policy, prio, reset, NULL);
}

static long sys_sched_setparam(struct proxy_process *p, const uint64_t a[6])
{
    int pid = (int)a[0], prio;
    if (pid < 0)
        return -EINVAL;
    long rc = sched_param_in(p, a[1], &prio);
    if (rc < 0)
        return rc;
    if (!is_self(p, pid))
        return -ESRCH;
    struct proxy_prctl_state *st = misc_state(p);
    if (st->sched_policy == SCHED_DEADLINE_POLICY)
        return prio == 0 ? 0 : -EINVAL;
    return sched_set(p, st->sched_policy, prio, st->sched_reset_on_fork,
                     NULL);
}

static long sys_sched_getscheduler(struct proxy_process *p, const uint64_t a[6])
{
    int pid = (int)a[0];
    if (pid < 0)
        return -EINVAL;
    if (!is_self(p, pid))
        return -ESRCH;
    struct proxy_prctl_state *st = misc_state(p);
    return st->sched_policy |
           (st->sched_reset_on_fork ? SCHED_RESET_ON_FORK_FLAG : 0);
}

static long sys_sched_getparam(struct proxy_process *p, const uint64_t a[6])
{
    int pid = (int)a[0];
    if (a[1] == 0 || pid < 0)
        return -EINVAL;
    if (!is_self(p, pid))
        return -ESRCH;
    const struct sched_param param = {
        .sched_priority = misc_state(p)->sched_priority};
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
    if (!is_self(p, pid))
        return -ESRCH;
    if (at.sched_flags & ~SCHED_FLAG_RESET_ON_FORK_BIT)
        return -EINVAL; /* the util clamps and the rest are not offered */
    int policy = (int)at.sched_policy;
    bool normal = policy == SCHED_OTHER || policy == SCHED_BATCH;
    if (normal) { /* sched_nice is the nice value, as setpriority's */
        int nice = at.sched_nice < -20 ? -20
                   : at.sched_nice > 19 ? 19
                                        : at.sched_nice;
        if (nice < misc_state(p)->nice && !privileged(p))
            return -EPERM;
        misc_state(p)->nice = nice;
    }
    return sched_set(p, policy, (int)at.sched_priority,
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
    if (!is_self(p, pid))
        return -ESRCH;
    struct proxy_prctl_state *st = misc_state(p);
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
    if (!is_self(p, pid))
        return -ESRCH;
    struct timespec ts = {0, 0};
    if (misc_state(p)->sched_policy == SCHED_RR)
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
        return who == 0 || (uid_t)who == p->ruid ? 0 : -ESRCH;
    default:
        return -EINVAL;
    }
}

/* The raw syscall returns 20 - nice (1..40) so that no answer looks like an
 * error; glibc turns it back into the nice value. */
static long sys_getpriority(struct proxy_process *p, const uint64_t a[6])
{
    long rc = prio_target(p, (int)a[0], (int)a[1]);
    return rc < 0 ? rc : 20 - misc_state(p)->nice;
}

/*
 * setpriority clamps nice to [-20, 19]. Lowering it (raising priority)
 * needs CAP_SYS_NICE or an RLIMIT_NICE of at least 20 - nice, else -EACCES.
 * The value is recorded for getpriority; host scheduling never changes.
 */
static long sys_setpriority(struct proxy_process *p, const uint64_t a[6])
{
    long rc = prio_target(p, (int)a[0], (int)a[1]);
    if (rc < 0)
        return rc;
    int nice = (int)a[2];
    nice = nice < -20 ? -20 : nice > 19 ? 19 : nice;
    struct proxy_prctl_state *st = misc_state(p);
    if (nice < st->nice && !privileged(p) &&
        (rlim_t)(20 - nice) > p->rlimits[RLIMIT_NICE].rlim_cur)
        return -EACCES;
    st->nice = nice;
    return 0;
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

/* The guest has no disk of its own to schedule: every process keeps the
 * default priority (class NONE, 0), and a valid ioprio_set changes nothing. */
static long sys_ioprio_get(struct proxy_process *p, const uint64_t a[6])
{
    long rc = ioprio_target(p, (int)a[0], (int)a[1]);
    return rc < 0 ? rc : (long)IOPRIO_PRIO_VALUE(IOPRIO_CLASS_NONE, 0);
}

static long sys_ioprio_set(struct proxy_process *p, const uint64_t a[6])
{
    long rc = ioprio_check(p, (unsigned)a[2]);
    return rc < 0 ? rc : ioprio_target(p, (int)a[0], (int)a[1]);
}

/* ---- prctl --------------------------------------------------------------- */

/*
 * PR_SET_NAME takes at most 15 bytes up to a NUL; a longer name is cut, not
 * refused. Byte by byte so a name ending right before an unmapped page does
 * not fault, just as strncpy_from_user stops at the NUL.
 */
/* The calling thread's name: the process's comm for the main thread (what
 * /proc/PID/comm shows), the thread's own for the others. */
char *proxy_thread_comm(struct proxy_process *p)
{
    return p->tid == p->pid ? p->comm : p->threads[p->cur].comm;
}

char *proxy_thread_comm_of(struct proxy_process *q, int tid)
{
    for (int k = 0; tid && tid != q->pid && k < q->nr_threads; k++)
        if ((k == q->cur ? q->tid : q->threads[k].tid) == tid)
            return q->threads[k].comm;
    return q->comm;
}

static long prctl_set_name(struct proxy_process *p, gva_t name_gva)
{
    char name[sizeof(p->comm)];
    memset(name, 0, sizeof(name));
    for (size_t i = 0; i < sizeof(name) - 1; i++) {
        if (proxy_copy_in(p, &name[i], name_gva + i, 1) < 0)
            return -EFAULT;
        if (name[i] == '\0')
            break;
    }
    memcpy(proxy_thread_comm(p), name, sizeof(name));
    return 0;
}

/* PR_GET_NAME writes all 16 bytes, NUL padding included. */
static long prctl_get_name(struct proxy_process *p, gva_t name_gva)
{
    if (proxy_copy_out(p, name_gva, proxy_thread_comm(p), sizeof(p->comm)) < 0)
        return -EFAULT;
    return 0;
}

/* Whether hvrun sees this run's RDTSC/RDTSCP: a backend that traps them
 * (CR4.TSD's #GP; the ptrace stub's own PR_SET_TSC) or the sites it
 * rewrites (kvm_pvm, where only those in code it rewrote trap). */
static bool tsc_trappable(const struct proxy_process *p)
{
    struct vmm_host_info info;
    if (p->cfg->rdtsc_rewrite)
        return true;
    if (!p->world || !p->world->host)
        return false;
    vmm_host_get_info(p->world->host, &info);
    return info.rdtsc_trappable;
}

/* PR_SET_TSC/PR_GET_TSC (arch/x86 set_tsc_mode): where no RDTSC can be
 * made to fault, EINVAL, as a Linux without the option says. */
static long prctl_tsc(struct proxy_process *p, int option, uint64_t arg2)
{
    if (!tsc_trappable(p) || !p->threads)
        return -EINVAL;
    struct proxy_thread *t = &p->threads[p->cur]; /* per thread (TIF_NOTSC) */
    if (option == PR_GET_TSC)
        return put_int(p, arg2, t->tsc_sigsegv ? PR_TSC_SIGSEGV
                                               : PR_TSC_ENABLE);
    if (arg2 != PR_TSC_ENABLE && arg2 != PR_TSC_SIGSEGV)
        return -EINVAL;
    t->tsc_sigsegv = arg2 == PR_TSC_SIGSEGV;
    if (t->tsc_sigsegv)
        proxy_hooks.cpuid_tsc_faulting(p); /* no more reads without a trap */
    return 0;
}

/* The options that only read or write misc_state. */
static long prctl_flags(struct proxy_process *p, int option,
                        const uint64_t a[6])
{
    struct proxy_prctl_state *st = misc_state(p);
    uint64_t arg2 = a[1];
    bool extra_args = a[2] || a[3] || a[4];
    switch (option) {
    case PR_SET_PDEATHSIG:
        if (arg2 > PROXY_NSIG - 1)
            return -EINVAL;
        st->pdeathsig = (int)arg2;
        return 0;
    case PR_GET_PDEATHSIG:
        return put_int(p, arg2, st->pdeathsig);
    case PR_SET_DUMPABLE:
        if (arg2 > 1) /* SUID_DUMP_DISABLE or SUID_DUMP_USER only */
            return -EINVAL;
        st->dumpable = (int)arg2;
        return 0;
    case PR_GET_DUMPABLE:
        return st->dumpable;
    case PR_SET_NO_NEW_PRIVS: /* one way: it can never be cleared */
        if (arg2 != 1 || extra_args)
            return -EINVAL;
        st->no_new_privs = true;
        return 0;
    case PR_GET_NO_NEW_PRIVS:
        return arg2 || extra_args ? -EINVAL : st->no_new_privs;
    case PR_SET_CHILD_SUBREAPER:
        st->child_subreaper = arg2 != 0;
        return 0;
    case PR_GET_CHILD_SUBREAPER:
        return put_int(p, arg2, st->child_subreaper);
    case PR_SET_TIMERSLACK: /* 0 restores the default */
        st->timerslack_ns = arg2 ? arg2 : TIMERSLACK_DEFAULT_NS;
        return 0;
    case PR_GET_TIMERSLACK:
        return (long)st->timerslack_ns;
    case PR_SET_THP_DISABLE:
        if (extra_args)
            return -EINVAL;
        st->thp_disabled = arg2 != 0;
        return 0;
    case PR_GET_THP_DISABLE:
        return arg2 || extra_args ? -EINVAL : st->thp_disabled;
    case PR_SET_KEEPCAPS:
        if (arg2 > 1)
            return -EINVAL;
        st->keepcaps = arg2 != 0;
        return 0;
    case PR_GET_KEEPCAPS:
        return st->keepcaps;
    default:
        return -EINVAL;
    }
}

static long sys_prctl(struct proxy_process *p, const uint64_t a[6])
{
    int option = (int)a[0];
    switch (option) {
    case PR_SET_NAME:
        return prctl_set_name(p, a[1]);
    case PR_GET_NAME:
        return prctl_get_name(p, a[1]);
    case PR_CAPBSET_READ:
        /* The bounding set is full for every process, root or not. */
        return a[1] <= CAP_LAST_CAP ? 1 : -EINVAL;
    case PR_GET_SECCOMP:
    case PR_SET_SECCOMP:
        return proxy_seccomp_prctl(p, a); /* seccomp.c */
    case PR_SET_SYSCALL_USER_DISPATCH:
        return proxy_user_dispatch_prctl(p, a); /* user_dispatch.c */
    case PR_SET_VMA:
        /* Naming anonymous memory: Linux without CONFIG_ANON_VMA_NAME says
         * -EINVAL, and glibc (thread stack names) ignores the failure. */
        return -EINVAL;
    case PR_SET_TSC:
    case PR_GET_TSC:
        return prctl_tsc(p, option, a[1]);
    case PR_SET_MM:
        /* Rewriting the mm layout (CAP_SYS_RESOURCE) is refused: the
         * address space belongs to hvrun's loader and mm family. */
        return -EPERM;
    default:
        return prctl_flags(p, option, a);
    }
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
    /* the group as a pid of the run (its pid namespace's numbers) */
    int pgid = (int)a[1] ? proxy_ns_global_nr(p, (int)a[1]) : t->pid;
    if (pgid < 0)
        return -EPERM;
    if (t != p && t->did_exec)
        return -EACCES;
    if (t->sid == t->pid || (t != p && t->sid != p->sid))
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

/* ---- membarrier ---------------------------------------------------------- */

/*
 * All guest threads share one vCPU and run one at a time, and every switch
 * between them passes through a VM exit, which serialises. So every barrier
 * is already done when the call arrives. Registration is not tracked: a
 * private expedited barrier without one succeeds instead of -EPERM. The
 * rseq commands (MEMBARRIER_CMD_PRIVATE_EXPEDITED_RSEQ) are absent: every
 * thread's critical section already ends at each switch (rseq.c).
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
    if (flags != 0)
        return -EINVAL; /* MEMBARRIER_CMD_FLAG_CPU is for the rseq commands */
    if (cmd == MEMBARRIER_CMD_QUERY)
        return MEMBARRIER_SUPPORTED;
    bool one_command = cmd > 0 && (cmd & (cmd - 1)) == 0;
    return one_command && (cmd & MEMBARRIER_SUPPORTED) ? 0 : -EINVAL;
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

const struct proxy_syscall proxy_misc_syscalls[] = {
    {SYS_getpid, "getpid", sys_getpid},
    {SYS_getppid, "getppid", sys_getppid},
    {SYS_gettid, "gettid", sys_gettid},
    {SYS_getuid, "getuid", sys_getuid},
    {SYS_geteuid, "geteuid", sys_geteuid},
    {SYS_getgid, "getgid", sys_getgid},
    {SYS_getegid, "getegid", sys_getegid},
    {SYS_getresuid, "getresuid", sys_getresuid},
    {SYS_getresgid, "getresgid", sys_getresgid},
    {SYS_setuid, "setuid", sys_setuid},
    {SYS_setgid, "setgid", sys_setgid},
    {SYS_setreuid, "setreuid", sys_setreuid},
    {SYS_setregid, "setregid", sys_setregid},
    {SYS_setresuid, "setresuid", sys_setresuid},
    {SYS_setresgid, "setresgid", sys_setresgid},
    {SYS_setfsuid, "setfsuid", sys_setfsuid},
    {SYS_setfsgid, "setfsgid", sys_setfsgid},
    {SYS_getgroups, "getgroups", sys_getgroups},
    {SYS_setgroups, "setgroups", sys_setgroups},
    {SYS_capget, "capget", sys_capget},
    {SYS_capset, "capset", sys_capset},
    {SYS_getrlimit, "getrlimit", sys_getrlimit},
    {SYS_setrlimit, "setrlimit", sys_setrlimit},
    {SYS_prlimit64, "prlimit64", sys_prlimit64},
    {SYS_uname, "uname", sys_uname},
    {SYS_sethostname, "sethostname", sys_sethostname},
    {SYS_setdomainname, "setdomainname", sys_setdomainname},
    {SYS_sysinfo, "sysinfo", sys_sysinfo},
    {SYS_getrusage, "getrusage", sys_getrusage},
    {SYS_times, "times", sys_times},
    {SYS_arch_prctl, "arch_prctl", sys_arch_prctl},
    {SYS_set_tid_address, "set_tid_address", sys_set_tid_address},
    {SYS_set_robust_list, "set_robust_list", sys_set_robust_list},
    {SYS_get_robust_list, "get_robust_list", sys_get_robust_list},
    {SYS_getrandom, "getrandom", sys_getrandom},
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
    {SYS_prctl, "prctl", sys_prctl},
    {SYS_getpgrp, "getpgrp", sys_getpgrp},
    {SYS_getpgid, "getpgid", sys_getpgid},
    {SYS_getsid, "getsid", sys_getsid},
    {SYS_setpgid, "setpgid", sys_setpgid},
    {SYS_setsid, "setsid", sys_setsid},
    {SYS_personality, "personality", sys_personality},
    {SYS_membarrier, "membarrier", sys_membarrier},
    {SYS_mlock, "mlock", sys_mlock},
    {SYS_mlock2, "mlock2", sys_mlock2},
    {SYS_munlock, "munlock", sys_munlock},
    {SYS_mlockall, "mlockall", sys_mlockall},
    {SYS_munlockall, "munlockall", sys_munlockall},
    {SYS_syslog, "syslog", sys_syslog},
    {SYS_vhangup, "vhangup", sys_vhangup},
    {-1, NULL, NULL},
};
