/*
 * cred.c - credentials: the uids and gids (get/set*id, setfsuid,
 * setfsgid), the supplementary groups (getgroups, setgroups; hvrun's own
 * kept for a replay's user namespace) and the capabilities (capget,
 * capset). They live only in struct proxy_process, as kernel ids seen
 * through the caller's user namespace (namespace.c); nothing here changes
 * hvrun's own. The rules are Linux's kernel/sys.c and kernel/capability.c.
 */
#include "proxy.h"
#include "kernel.h"
#include "namespace.h"
#include "sys.h"

#include <errno.h>
#include <limits.h>
#include <linux/capability.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

_Static_assert(sizeof(uid_t) == 4 && sizeof(gid_t) == 4, "32-bit ids");

/* (uid_t)-1 in set*id calls: "leave this id alone". */
#define ID_UNCHANGED 0xffffffffu

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

/* ---- credentials --------------------------------------------------------- */

/* The ids are kept as kernel ids; the guest sees them through its user
 * namespace (kernel/namespace.c). */
static long sys_getuid(struct proxy_process *p, const uint64_t a[6])
{
    return proxy_ns_uid_seen(p, p->cred.ruid);
}

static long sys_geteuid(struct proxy_process *p, const uint64_t a[6])
{
    return proxy_ns_uid_seen(p, p->cred.euid);
}

static long sys_getgid(struct proxy_process *p, const uint64_t a[6])
{
    return proxy_ns_gid_seen(p, p->cred.rgid);
}

static long sys_getegid(struct proxy_process *p, const uint64_t a[6])
{
    return proxy_ns_gid_seen(p, p->cred.egid);
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
    return put_id_triple(p, a, proxy_ns_uid_seen(p, p->cred.ruid),
                         proxy_ns_uid_seen(p, p->cred.euid),
                         proxy_ns_uid_seen(p, p->cred.suid));
}

static long sys_getresgid(struct proxy_process *p, const uint64_t a[6])
{
    return put_id_triple(p, a, proxy_ns_gid_seen(p, p->cred.rgid),
                         proxy_ns_gid_seen(p, p->cred.egid),
                         proxy_ns_gid_seen(p, p->cred.sgid));
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
    return (struct id_triple){p->cred.ruid, p->cred.euid, p->cred.suid};
}

static void store_uids(struct proxy_process *p, const struct id_triple *t)
{
    p->cred.ruid = t->real;
    p->cred.euid = t->eff;
    p->cred.suid = t->saved;
}

static struct id_triple gids_of(const struct proxy_process *p)
{
    return (struct id_triple){p->cred.rgid, p->cred.egid, p->cred.sgid};
}

static void store_gids(struct proxy_process *p, const struct id_triple *t)
{
    p->cred.rgid = t->real;
    p->cred.egid = t->eff;
    p->cred.sgid = t->saved;
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
        p->cred.caps_kept = p->prctl.keepcaps;
    if (root < 0 || now->eff != (uint32_t)root)
        p->cred.caps_kept_effective = false;
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

/* What a set*id or setfs*id call changed, for commit_creds's rule. */
struct cred_before {
    uint32_t euid, egid, fsuid, fsgid;
    uint64_t perm;
};

static struct cred_before cred_before(const struct proxy_process *p)
{
    uint64_t eff, perm, inh;
    proxy_cred_caps(p, &eff, &perm, &inh);
    return (struct cred_before){p->cred.euid, p->cred.egid, p->cred.fsuid,
                                p->cred.fsgid, perm};
}

/*
 * commit_creds (kernel/cred.c): new effective or filesystem ids, or
 * permitted capabilities the old set did not hold, make the process
 * non-dumpable (suid_dumpable, 0 on the run's machine: its /proc/PID
 * files become root's, a non-root tracer cannot attach, no core) and
 * clear its parent-death signal. execve makes it dumpable again when its
 * ids agree (proxy_cred_exec).
 */
static void creds_committed(struct proxy_process *p,
                            const struct cred_before *old)
{
    const struct cred_before now = cred_before(p);
    if (now.euid == old->euid && now.egid == old->egid &&
        now.fsuid == old->fsuid && now.fsgid == old->fsgid &&
        (now.perm & ~old->perm) == 0)
        return;
    p->prctl.dumpable = 0; /* SUID_DUMP_DISABLE */
    p->prctl.pdeathsig = 0;
}

/*
 * bprm_fill_uid and cap_bprm_creds_from_file: a set-user-ID file runs with
 * its owner as effective id, a set-group-ID one (group-executable) with
 * its group, unless its file system is mounted nosuid, the process set
 * no_new_privs, or a tracer without CAP_SYS_PTRACE (not root) traces it;
 * the saved and filesystem ids then follow the effective ones.
 */
static void exec_set_ids(struct proxy_process *p, const struct stat *file,
                         bool nosuid, bool traced_unprivileged)
{
    if (!file || nosuid || p->prctl.no_new_privs || traced_unprivileged)
        return;
    const struct cred_before before = cred_before(p);
    bool had_caps = before.perm != 0;
    struct id_triple old = uids_of(p);
    if (file->st_mode & S_ISUID)
        p->cred.euid = file->st_uid;
    if ((file->st_mode & (S_ISGID | S_IXGRP)) == (S_ISGID | S_IXGRP))
        p->cred.egid = file->st_gid;
    p->cred.suid = p->cred.euid;
    p->cred.sgid = p->cred.egid;
    if (p->cred.euid != before.euid || p->cred.egid != before.egid)
        p->prctl.pdeathsig = 0; /* commit_creds, as a set*id's */
    if (p->cred.euid != before.euid) {
        struct id_triple now = uids_of(p);
        p->cred.caps_recorded = false; /* they follow the new ids */
        keep_caps_across(p, had_caps, &old, &now);
        proxy_ns_uids_changed(p);
    }
}

/*
 * What execve does to the ids (before the capabilities are computed from
 * them again): a set-ID file's (exec_set_ids), then begin_new_exec's
 * dumpability: dumpable (SUID_DUMP_USER) when the effective ids are the
 * real ones, else suid_dumpable (0). file: the program's stat, or NULL.
 */
void proxy_cred_exec(struct proxy_process *p, const struct stat *file,
                     bool nosuid, bool traced_unprivileged)
{
    exec_set_ids(p, file, nosuid, traced_unprivileged);
    p->prctl.dumpable =
        p->cred.euid == p->cred.ruid && p->cred.egid == p->cred.rgid ? 1 : 0;
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
    if (n == 3 && res_ids_no_op(&t, gid ? p->cred.fsgid : p->cred.fsuid, ids))
        return 0;
    const struct cred_before before = cred_before(p);
    bool priv = id_privileged(p);
    rc = n == 1   ? rule_set_id(&t, ids[0], priv)
         : n == 2 ? rule_set_re_ids(&t, ids[0], ids[1], priv)
                  : rule_set_res_ids(&t, ids[0], ids[1], ids[2], priv);
    if (rc < 0)
        return rc;
    if (gid) {
        store_gids(p, &t);
        p->cred.fsgid = p->cred.egid;
    } else {
        store_uids(p, &t);
        p->cred.fsuid = p->cred.euid;
        p->cred.caps_recorded = false; /* they follow the new ids */
        keep_caps_across(p, priv || p->cred.caps_kept, &old, &t);
        proxy_ns_uids_changed(p);
    }
    creds_committed(p, &before);
    return 0;
}

/* The capabilities that act on files (Linux's CAP_FS_SET): the ones a
 * filesystem uid other than root's does without. */
#define CAP_FS_SET                                                            \
    ((1ULL << CAP_CHOWN) | (1ULL << CAP_MKNOD) | (1ULL << CAP_DAC_OVERRIDE) | \
     (1ULL << CAP_DAC_READ_SEARCH) | (1ULL << CAP_FOWNER) |                   \
     (1ULL << CAP_FSETID) | (1ULL << CAP_MAC_OVERRIDE) |                      \
     (1ULL << CAP_LINUX_IMMUTABLE))

/*
 * cap_task_fix_setuid's LSM_SETID_FS: an fsuid that leaves the user
 * namespace's root drops CAP_FS_SET from the effective set, one that
 * comes back to it raises those of them that are permitted. So root
 * checking files as another user (a file server's setfsuid) no longer
 * overrides their modes: hvrun's own checks (proxy_ns_capable_cap) see
 * the change as the host's do (fscred.c sets the host thread's fsuid).
 * The sets are recorded from then on, as a capset's.
 */
static void fs_caps_follow_fsuid(struct proxy_process *p, uint32_t old_fsuid)
{
    int64_t root = proxy_ns_uid_kernel(p, 0);
    if (root < 0)
        return; /* no root in its namespace: no id to leave or come back to */
    bool was_root = old_fsuid == (uint32_t)root;
    bool is_root = p->cred.fsuid == (uint32_t)root;
    if (was_root == is_root)
        return;
    uint64_t eff, perm, inh;
    proxy_cred_caps(p, &eff, &perm, &inh);
    p->cred.cap_amb = proxy_cred_ambient(p);
    p->cred.cap_eff = is_root ? eff | (perm & CAP_FS_SET) : eff & ~CAP_FS_SET;
    p->cred.cap_perm = perm;
    p->cred.cap_inh = inh;
    p->cred.caps_recorded = true;
}

/*
 * setfsuid/setfsgid: the old filesystem id as the caller's user namespace
 * sees it, always (there is no error return: (uid_t)-1, never a valid id,
 * is how a program asks). The id changes to one of the real, effective,
 * saved or current filesystem ids, or to any mapped one with CAP_SETUID
 * (CAP_SETGID); the effective capabilities follow a new fsuid
 * (fs_caps_follow_fsuid). Divergence: the id is the process's, where
 * Linux keeps it per thread (glibc does not broadcast setfsuid).
 */
static long set_fs_id(struct proxy_process *p, bool gid, uint32_t id)
{
    uint32_t *fs_id = gid ? &p->cred.fsgid : &p->cred.fsuid;
    long old_seen = gid ? proxy_ns_gid_seen(p, *fs_id)
                        : proxy_ns_uid_seen(p, *fs_id);
    uint32_t k = id;
    if (id == ID_UNCHANGED || kernel_ids(p, gid, &k, 1) < 0)
        return old_seen;
    const struct id_triple t = gid ? gids_of(p) : uids_of(p);
    const struct cred_before before = cred_before(p);
    if (id_in_triple(&t, k) || k == *fs_id || id_privileged(p)) {
        uint32_t old_id = *fs_id;
        *fs_id = k;
        if (!gid)
            fs_caps_follow_fsuid(p, old_id);
    }
    creds_committed(p, &before);
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
    int n = p->cred.nr_groups >= 0 ? p->cred.nr_groups : groups_report(NULL, 0);
    if (n <= 0 || size == 0)
        return n;
    if (size < n)
        return -EINVAL;
    gid_t *groups = calloc((size_t)n, sizeof(*groups));
    if (!groups)
        return -ENOMEM;
    if (p->cred.nr_groups >= 0)
        memcpy(groups, p->cred.groups, (size_t)n * sizeof(*groups));
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
        free(p->cred.groups);
        p->cred.groups = NULL;
        p->cred.nr_groups = 0;
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
    free(p->cred.groups);
    p->cred.groups = (uint32_t *)groups;
    p->cred.nr_groups = size;
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
    return p->cred.caps_kept ? (1ULL << (CAP_LAST_CAP + 1)) - 1 : 0;
}

#define CAP_ALL_BITS ((1ULL << (CAP_LAST_CAP + 1)) - 1)

/* PR_CAPBSET_READ and PR_CAPBSET_DROP (cap_prctl_drop: a valid number,
 * then CAP_SETPCAP in the effective set). */
long proxy_cred_capbset(struct proxy_process *p, bool drop, uint64_t cap)
{
    if (cap > CAP_LAST_CAP)
        return -EINVAL;
    if (!drop)
        return !(p->cred.cap_bset_dropped & (1ULL << cap));
    uint64_t eff, perm, inh;
    proxy_cred_caps(p, &eff, &perm, &inh);
    if (!(eff & (1ULL << CAP_SETPCAP)))
        return -EPERM;
    p->cred.cap_bset_dropped |= 1ULL << cap;
    return 0;
}

uint64_t proxy_cred_ambient(const struct proxy_process *p)
{
    return p->cred.caps_recorded ? p->cred.cap_amb : 0;
}

/* cap_task_prctl's PR_CAP_AMBIENT: a raised capability must be permitted
 * and inheritable; lowering one not raised, or raising one twice, is no
 * error. (execve keeps no inheritable set here, so no ambient one: the
 * sets after it follow the ids.) */
long proxy_cred_ambient_prctl(struct proxy_process *p, const uint64_t a[6],
                              bool no_raise)
{
    if (a[1] == PR_CAP_AMBIENT_CLEAR_ALL) {
        if (a[2] | a[3] | a[4])
            return -EINVAL;
        p->cred.cap_amb = 0;
        return 0;
    }
    if (a[2] > CAP_LAST_CAP || a[3] | a[4])
        return -EINVAL;
    uint64_t bit = 1ULL << a[2];
    switch (a[1]) {
    case PR_CAP_AMBIENT_IS_SET:
        return (proxy_cred_ambient(p) & bit) != 0;
    case PR_CAP_AMBIENT_LOWER:
        p->cred.cap_amb = proxy_cred_ambient(p) & ~bit;
        return 0;
    case PR_CAP_AMBIENT_RAISE: {
        uint64_t eff, perm, inh;
        proxy_cred_caps(p, &eff, &perm, &inh);
        if (!(perm & bit) || !(inh & bit) || no_raise)
            return -EPERM;
        p->cred.cap_amb = proxy_cred_ambient(p) | bit;
        return 0;
    }
    default:
        return -EINVAL;
    }
}

void proxy_cred_caps(const struct proxy_process *p, uint64_t *eff,
                     uint64_t *perm, uint64_t *inh)
{
    if (p->cred.caps_recorded) {
        *eff = p->cred.cap_eff;
        *perm = p->cred.cap_perm;
        *inh = p->cred.cap_inh;
        return;
    }
    *eff = caps_of(p);
    *perm = *eff | permitted_kept(p);
    *inh = 0;
}

/* The virtual init's sets, as its /proc/1/status shows them: root's
 * init, every capability permitted and effective, none inheritable
 * (-ESRCH: pid is not the virtual init, or the caller's pid namespace
 * has none; the virtual shell has no /proc entry and no sets either). */
static long virtual_init_caps(const struct proxy_process *p, int pid,
                              uint64_t *eff, uint64_t *perm, uint64_t *inh)
{
    int pgid;
    if (!proxy_virtual_process(p, pid, &pgid, NULL) || pgid != PROXY_INIT_PID)
        return -ESRCH;
    *eff = *perm = CAP_ALL_BITS;
    *inh = 0;
    return 0;
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
    uint64_t caps, perm, inh;
    if (q)
        proxy_cred_caps(q, &caps, &perm, &inh);
    else if (virtual_init_caps(p, pid, &caps, &perm, &inh) < 0)
        return -ESRCH;
    const struct cap_data d[2] = {
        {(uint32_t)caps, (uint32_t)perm, (uint32_t)inh},
        {(uint32_t)(caps >> 32), (uint32_t)(perm >> 32), (uint32_t)(inh >> 32)},
    };
    if (proxy_copy_out(p, data_gva, d, (size_t)words * sizeof(d[0])) < 0)
        return -EFAULT;
    return 0;
}

/*
 * capset as cap_capset checks it: the new inheritable set within the old
 * inheritable and permitted ones unless CAP_SETPCAP is effective, the
 * permitted within the old permitted, the effective within the new
 * permitted. The sets are kept (capget and /proc/PID/status show them,
 * and the next capset is checked against them); the capability checks of
 * other calls still follow the euid but for those that ask
 * proxy_ns_capable_cap (namespace creation: CAP_SYS_ADMIN)
 * (docs/DETERMINISM.md), so no guest capability ever reaches the host.
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
    uint64_t old_eff, old_perm, old_inh;
    proxy_cred_caps(p, &old_eff, &old_perm, &old_inh);
    bool setpcap = old_eff & (1ULL << CAP_SETPCAP);
    uint64_t bset = CAP_ALL_BITS & ~p->cred.cap_bset_dropped;
    if ((!setpcap && (inh & ~(old_inh | old_perm))) ||
        (inh & ~(old_inh | bset)) || (perm & ~old_perm) || (eff & ~perm))
        return -EPERM;
    if (p->cred.caps_kept) /* what keepcaps kept: effective again, or dropped */
        p->cred.caps_kept_effective = eff != 0;
    if (p->cred.caps_kept && perm == 0)
        p->cred.caps_kept = p->cred.caps_kept_effective = false;
    /* cap_capset: the ambient set shrinks with the two it lies in */
    p->cred.cap_amb = proxy_cred_ambient(p) & perm & inh;
    p->cred.caps_recorded = true;
    p->cred.cap_eff = eff;
    p->cred.cap_perm = perm;
    p->cred.cap_inh = inh;
    return 0;
}

const struct proxy_syscall proxy_cred_syscalls[] = {
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
    {-1, NULL, NULL},
};
