/*
 * namespace.c - unshare(2), setns(2) and clone's CLONE_NEW* flags, over
 * hvrun's process model, as an unprivileged container sees them
 * (namespace.h says what each kind does here).
 *
 * Modelled: user namespaces (uid/gid maps written once through
 * /proc/PID/uid_map, gid_map and setgroups with Linux's rules:
 * kernel/user_namespace.c map_write, new_idmap_permitted,
 * proc_setgroups_write; the creator's full capabilities in the new
 * namespace; ids seen through the map), UTS namespaces (their own host
 * and domain names), IPC namespaces (System V objects of their own: the
 * world holds one namespace's at a time, proxy_ns_ipc_enter swaps them),
 * pid namespaces (a pid per level over the virtual pids) and cgroup
 * namespaces (nothing to see: /proc/self/cgroup is "0::/" in every one).
 * Refused with EPERM, as a container whose seccomp profile forbids them:
 * mount namespaces (hvrun keeps no mount table; mount(2), umount2 and
 * pivot_root are EPERM too), network namespaces (guest sockets are host
 * sockets) and time namespaces (one logical clock). The refusal is of the
 * whole call: unshare/clone change nothing when any flag is refused.
 *
 * Each namespace made has an inode number (what /proc/PID/ns/X links
 * name) handed out in creation order from PROXY_NS_INUM_FIRST, so runs
 * repeat; the run's initial namespaces have Linux's fixed numbers.
 */
#include "proxy.h"
#include "fdtable.h"
#include "hooks.h"
#include "kernel.h"
#include "internal.h"
#include "namespace.h"

#include <ctype.h>
#include <errno.h>
#include <linux/capability.h>
#include <linux/nsfs.h>
#include <fcntl.h>
#include <linux/sched.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/syscall.h>

#include "det.h"

/* Linux's UID_GID_MAP_MAX_EXTENTS and the depth of user namespaces. */
#define MAP_MAX_EXTENTS 340
#define USERNS_MAX_LEVEL 32
/* The first inode number of a namespace the run makes (Linux hands out
 * dynamic proc inodes from 0xF0000000; this is a plausible one). */
#define PROXY_NS_INUM_FIRST 4026532160u
#define MAP_WRITE_MAX 4096 /* PAGE_SIZE: a longer write is EINVAL */

/* CLONE_NEW* of each type, its /proc/PID/ns name and its initial inode. */
static const struct ns_kind {
    uint64_t flag;
    const char *name;
    uint32_t init_inum;
} kinds[PROXY_NR_NS] = {
    [PROXY_NS_USER] = {CLONE_NEWUSER, "user", 4026531837u},
    [PROXY_NS_UTS] = {CLONE_NEWUTS, "uts", 4026531838u},
    [PROXY_NS_IPC] = {CLONE_NEWIPC, "ipc", 4026531839u},
    [PROXY_NS_PID] = {CLONE_NEWPID, "pid", 4026531836u},
    [PROXY_NS_MNT] = {CLONE_NEWNS, "mnt", 4026531832u},
    [PROXY_NS_NET] = {CLONE_NEWNET, "net", 4026531833u},
    [PROXY_NS_CGROUP] = {CLONE_NEWCGROUP, "cgroup", 4026531835u},
    [PROXY_NS_TIME] = {CLONE_NEWTIME, "time", 4026531834u},
};

#define NS_FLAGS_ALL                                                    \
    (CLONE_NEWUSER | CLONE_NEWUTS | CLONE_NEWIPC | CLONE_NEWPID |       \
     CLONE_NEWNS | CLONE_NEWNET | CLONE_NEWCGROUP | CLONE_NEWTIME)
/* The kinds refused with EPERM (the top comment says why). */
#define NS_FLAGS_REFUSED (CLONE_NEWNS | CLONE_NEWNET | CLONE_NEWTIME)

struct id_extent {
    uint32_t first, lower, count; /* lower: a kernel (initial) id */
};

struct id_map {
    int nr;
    struct id_extent e[MAP_MAX_EXTENTS];
};

/* An IPC namespace's System V objects while another namespace's are in
 * the world (proxy_ns_ipc_enter swaps them). */
struct ipc_stash {
    struct proxy_shm_seg **shm;
    int nr_shm, next_shmid;
    struct proxy_sem_set **sem;
    int nr_sem, next_semid;
    struct proxy_msg_queue **msg;
    int nr_msg, next_msgid;
};

struct proxy_ns {
    enum proxy_ns_type type;
    uint32_t inum;
    /* The user namespace that owns it (NULL: the initial one); for a
     * user namespace, its parent. */
    struct proxy_ns *owner;
    /* user: its creator's kernel euid/egid, depth, maps, setgroups */
    uint32_t owner_uid, owner_gid;
    int level;
    struct id_map uid_map, gid_map;
    bool setgroups_allowed;
    /* uts */
    char nodename[65], domainname[65];
    /* ipc, while not the world's current one */
    struct ipc_stash ipc;
    /* pid: its parent namespace (NULL: the run's), the last pid handed
     * out, its init's pid in the run (0: not yet), whether it died */
    struct proxy_ns *pid_parent;
    int last_pid, init_pid;
    bool init_gone;
};

/* ---- id maps ------------------------------------------------------------- */

/* An id of the namespace -> the kernel id (map_id_down), or -1. */
static int64_t map_down(const struct id_map *m, uint32_t id, uint32_t count)
{
    for (int i = 0; i < m->nr; i++) {
        const struct id_extent *e = &m->e[i];
        uint64_t last = (uint64_t)id + count - 1;
        if (id >= e->first && last <= (uint64_t)e->first + e->count - 1)
            return (int64_t)e->lower + (id - e->first);
    }
    return -1;
}

/* A kernel id -> the namespace's id (map_id_up), or -1. */
static int64_t map_up(const struct id_map *m, uint32_t kid)
{
    for (int i = 0; i < m->nr; i++) {
        const struct id_extent *e = &m->e[i];
        uint64_t last = (uint64_t)e->lower + e->count - 1;
        if (kid >= e->lower && kid <= last)
            return (int64_t)e->first + (kid - e->lower);
    }
    return -1;
}

/* The initial namespace maps every id but -1 to itself. */
static int64_t ns_down(const struct proxy_ns *u, bool gid, uint32_t id)
{
    if (!u)
        return id == UINT32_MAX ? -1 : (int64_t)id;
    return map_down(gid ? &u->gid_map : &u->uid_map, id, 1);
}

static int64_t ns_up(const struct proxy_ns *u, bool gid, uint32_t kid)
{
    if (!u)
        return kid == UINT32_MAX ? -1 : (int64_t)kid;
    return map_up(gid ? &u->gid_map : &u->uid_map, kid);
}

static uint32_t munged(int64_t id)
{
    return id < 0 ? PROXY_OVERFLOW_ID : (uint32_t)id;
}

uint32_t proxy_ns_uid_seen(const struct proxy_process *p, uint32_t kuid)
{
    return munged(ns_up(p->cred.ns[PROXY_NS_USER], false, kuid));
}

uint32_t proxy_ns_gid_seen(const struct proxy_process *p, uint32_t kgid)
{
    return munged(ns_up(p->cred.ns[PROXY_NS_USER], true, kgid));
}

int64_t proxy_ns_uid_kernel(const struct proxy_process *p, uint32_t uid)
{
    return ns_down(p->cred.ns[PROXY_NS_USER], false, uid);
}

int64_t proxy_ns_gid_kernel(const struct proxy_process *p, uint32_t gid)
{
    return ns_down(p->cred.ns[PROXY_NS_USER], true, gid);
}

/* ---- capabilities -------------------------------------------------------- */

/* p's capabilities in its own user namespace: root's (the kernel id its
 * root maps to) or the creator's until it execs. */
static bool own_caps(const struct proxy_process *p)
{
    const struct proxy_ns *u = p->cred.ns[PROXY_NS_USER];
    if (p->cred.caps_kept_effective) /* PR_SET_KEEPCAPS, made effective */
        return true;
    if (!u)
        return p->cred.euid == 0;
    if (p->cred.ns_caps)
        return true;
    int64_t root = ns_down(u, false, 0);
    return root >= 0 && (uint32_t)root == p->cred.euid;
}

/* ns_capable(target): p's own namespace or one below it, where p has its
 * capabilities, or a namespace p's euid made from p's namespace. */
static bool capable_in(const struct proxy_process *p,
                       const struct proxy_ns *target)
{
    const struct proxy_ns *mine = p->cred.ns[PROXY_NS_USER];
    for (const struct proxy_ns *ns = target;; ns = ns->owner) {
        if (ns == mine)
            return own_caps(p);
        if (!ns)
            return false;
        if (ns->owner == mine && ns->owner_uid == p->cred.euid)
            return true;
    }
}

bool proxy_ns_capable(const struct proxy_process *p) { return own_caps(p); }

bool proxy_ns_capable_cap(const struct proxy_process *p, int cap)
{
    return own_caps(p) && !proxy_cap_dropped(p, cap);
}

bool proxy_cap_dropped(const struct proxy_process *p, int cap)
{
    return p->cred.caps_recorded && !(p->cred.cap_eff & (1ULL << cap));
}

bool proxy_ns_capable_over(const struct proxy_process *p,
                           const struct proxy_process *q)
{
    return capable_in(p, q->cred.ns[PROXY_NS_USER]);
}

bool proxy_ns_init_capable(const struct proxy_process *p)
{
    return capable_in(p, NULL);
}

bool proxy_ns_setgroups_allowed(const struct proxy_process *p)
{
    const struct proxy_ns *u = p->cred.ns[PROXY_NS_USER];
    return !u || (u->gid_map.nr > 0 && u->setgroups_allowed);
}

void proxy_ns_exec(struct proxy_process *p)
{
    p->cred.ns_caps = false;
    p->cred.caps_kept = p->cred.caps_kept_effective = false;
    p->cred.caps_recorded = false; /* execve's sets follow the ids again */
}

void proxy_ns_uids_changed(struct proxy_process *p)
{
    int64_t root = ns_down(p->cred.ns[PROXY_NS_USER], false, 0);
    if (root < 0 || (uint32_t)root != p->cred.euid)
        p->cred.ns_caps = false;
}

/* The user namespace that owns p's namespace of type t. */
static const struct proxy_ns *owner_of(const struct proxy_process *p, int t)
{
    return p->cred.ns[t] ? p->cred.ns[t]->owner : NULL;
}

/* ---- UTS and IPC --------------------------------------------------------- */

const char *proxy_ns_nodename(const struct proxy_process *p)
{
    return p->cred.ns[PROXY_NS_UTS] ? p->cred.ns[PROXY_NS_UTS]->nodename : NULL;
}

const char *proxy_ns_domainname(const struct proxy_process *p)
{
    return p->cred.ns[PROXY_NS_UTS] ? p->cred.ns[PROXY_NS_UTS]->domainname
                                    : NULL;
}

bool proxy_ns_uts_admin(const struct proxy_process *p)
{
    return capable_in(p, owner_of(p, PROXY_NS_UTS));
}

long proxy_ns_set_uts_name(struct proxy_process *p, bool host,
                           const char *name, size_t len)
{
    struct proxy_ns *u = p->cred.ns[PROXY_NS_UTS];
    if (len > 64)
        return -EINVAL;
    if (!u)
        return host ? det_set_hostname(p->det, name, len)
                    : det_set_domainname(p->det, name, len);
    char *dst = host ? u->nodename : u->domainname;
    memcpy(dst, name, len);
    dst[len] = '\0';
    return 0;
}

uint32_t proxy_ns_ipc_id(const struct proxy_process *p)
{
    return p->cred.ns[PROXY_NS_IPC] ? p->cred.ns[PROXY_NS_IPC]->inum : 0;
}

static void stash_save(struct proxy_world *w, struct ipc_stash *st)
{
    *st = (struct ipc_stash){w->shm, w->nr_shm, w->next_shmid,
                             w->sem, w->nr_sem, w->next_semid,
                             w->msg, w->nr_msg, w->next_msgid};
}

static void stash_load(struct proxy_world *w, struct ipc_stash *st)
{
    w->shm = st->shm;
    w->nr_shm = st->nr_shm;
    w->next_shmid = st->next_shmid;
    w->sem = st->sem;
    w->nr_sem = st->nr_sem;
    w->next_semid = st->next_semid;
    w->msg = st->msg;
    w->nr_msg = st->nr_msg;
    w->next_msgid = st->next_msgid;
    memset(st, 0, sizeof(*st));
}

/* The stand-in for the run's initial IPC namespace, made with the first
 * other one (so that a swap never needs memory). */
static struct ipc_stash *stash_of(struct proxy_world *w, struct proxy_ns *ns)
{
    return ns ? &ns->ipc : &w->ipc_root->ipc;
}

/* The world's System V objects become those of p's IPC namespace. */
void proxy_ns_ipc_enter(struct proxy_process *p)
{
    struct proxy_world *w = p->world;
    struct proxy_ns *want = p->cred.ns[PROXY_NS_IPC];
    if (!w || want == w->ipc_cur)
        return;
    stash_save(w, stash_of(w, w->ipc_cur));
    stash_load(w, stash_of(w, want));
    w->ipc_cur = want;
}

bool proxy_ns_ipc_owner_capable(const struct proxy_process *p)
{
    return capable_in(p, owner_of(p, PROXY_NS_IPC));
}

/* ---- making namespaces --------------------------------------------------- */

static struct proxy_ns *ns_new(struct proxy_world *w, enum proxy_ns_type t,
                               struct proxy_ns *owner)
{
    if (w->nr_ns == w->cap_ns) {
        int cap = w->cap_ns ? w->cap_ns * 2 : 8;
        struct proxy_ns **all = realloc(w->ns_all, (size_t)cap * sizeof(*all));
        if (!all)
            return NULL;
        w->ns_all = all;
        w->cap_ns = cap;
    }
    struct proxy_ns *ns = calloc(1, sizeof(*ns));
    if (!ns)
        return NULL;
    ns->type = t;
    ns->inum = PROXY_NS_INUM_FIRST + (uint32_t)w->nr_ns;
    ns->owner = owner;
    w->ns_all[w->nr_ns++] = ns;
    return ns;
}

/* The world's own objects are freed already (proxy_world_destroy); each
 * other IPC namespace's are loaded and freed the same way. */
static void free_stash(struct proxy_world *w, struct ipc_stash *st)
{
    stash_load(w, st);
    proxy_shm_world_free(w);
    proxy_sem_world_free(w);
    proxy_msg_world_free(w);
}

void proxy_ns_world_free(struct proxy_world *w)
{
    for (int i = 0; i < w->nr_ns; i++)
        if (w->ns_all[i]->type == PROXY_NS_IPC && w->ns_all[i] != w->ipc_cur)
            free_stash(w, &w->ns_all[i]->ipc);
    if (w->ipc_root && w->ipc_cur)
        free_stash(w, &w->ipc_root->ipc);
    free(w->ipc_root);
    w->ipc_root = NULL;
    w->ipc_cur = NULL;
    for (int i = 0; i < w->nr_ns; i++)
        free(w->ns_all[i]);
    free(w->ns_all);
    w->ns_all = NULL;
    w->nr_ns = w->cap_ns = 0;
}

/* create_user_ns's checks: depth, and the creator mapped in the parent. */
static long user_ns_check(const struct proxy_process *p)
{
    const struct proxy_ns *parent = p->cred.ns[PROXY_NS_USER];
    if (parent && parent->level >= USERNS_MAX_LEVEL)
        return -ENOSPC;
    if (ns_up(parent, false, p->cred.euid) < 0 ||
        ns_up(parent, true, p->cred.egid) < 0)
        return -EPERM;
    return 0;
}

static struct proxy_ns *user_ns_new(struct proxy_process *p)
{
    struct proxy_ns *parent = p->cred.ns[PROXY_NS_USER];
    struct proxy_ns *u = ns_new(p->world, PROXY_NS_USER, parent);
    if (!u)
        return NULL;
    u->owner_uid = p->cred.euid;
    u->owner_gid = p->cred.egid;
    u->level = parent ? parent->level + 1 : 1;
    u->setgroups_allowed = parent ? parent->setgroups_allowed : true;
    return u;
}

/* The namespaces other than user of flags, made for p (whose user
 * namespace is already the new one, if any) into out[]. */
static long make_others(struct proxy_process *p, uint64_t flags,
                        struct proxy_ns *out[PROXY_NR_NS])
{
    for (int t = 0; t < PROXY_NR_NS; t++) {
        if (t == PROXY_NS_USER || !(flags & kinds[t].flag))
            continue;
        out[t] =
            ns_new(p->world, (enum proxy_ns_type)t, p->cred.ns[PROXY_NS_USER]);
        if (!out[t])
            return -ENOMEM;
        if (t == PROXY_NS_PID) { /* below the one p lives in */
            struct proxy_ns *up = p->cred.ns[PROXY_NS_PID];
            if (up != p->cred.pidns) /* copy_pid_ns: one unshare until a fork */
                return -EINVAL;
            if ((up ? up->level : 0) >= PROXY_PID_LEVELS)
                return -ENOSPC;
            out[t]->pid_parent = up;
            out[t]->level = (up ? up->level : 0) + 1;
        }
        if (t == PROXY_NS_IPC && !p->world->ipc_root &&
            !(p->world->ipc_root = calloc(1, sizeof(struct proxy_ns))))
            return -ENOMEM;
        if (t == PROXY_NS_UTS) { /* a copy of the names it leaves */
            struct det_uname d;
            det_get_uname(p->det, &d);
            const char *node = proxy_ns_nodename(p);
            const char *dom = proxy_ns_domainname(p);
            snprintf(out[t]->nodename, 65, "%s", node ? node : d.nodename);
            snprintf(out[t]->domainname, 65, "%s", dom ? dom : d.domainname);
        }
    }
    return 0;
}

/*
 * The namespaces flags ask for, made and installed in p: the user
 * namespace first (the others belong to it), then the others, which need
 * CAP_SYS_ADMIN in it. Nothing changes on an error.
 */
static long ns_switch(struct proxy_process *p, uint64_t flags)
{
    if (flags & NS_FLAGS_REFUSED)
        return -EPERM;
    struct proxy_ns *saved_user = p->cred.ns[PROXY_NS_USER];
    bool saved_caps = p->cred.ns_caps;
    if (flags & CLONE_NEWUSER) {
        long rc = user_ns_check(p);
        if (rc < 0)
            return rc;
        struct proxy_ns *u = user_ns_new(p);
        if (!u)
            return -ENOMEM;
        p->cred.ns[PROXY_NS_USER] = u;
        p->cred.ns_caps = true;
        p->cred.caps_recorded = false; /* a new namespace's full set */
    }
    if ((flags & NS_FLAGS_ALL & ~CLONE_NEWUSER) &&
        !proxy_ns_capable_cap(p, CAP_SYS_ADMIN)) {
        p->cred.ns[PROXY_NS_USER] = saved_user;
        p->cred.ns_caps = saved_caps;
        return -EPERM;
    }
    struct proxy_ns *made[PROXY_NR_NS] = {0};
    long rc = make_others(p, flags, made);
    if (rc < 0) {
        p->cred.ns[PROXY_NS_USER] = saved_user;
        p->cred.ns_caps = saved_caps;
        return rc;
    }
    if (flags & CLONE_NEWIPC)
        proxy_sem_exit(p); /* the old namespace's SEM_UNDO applies now */
    for (int t = 0; t < PROXY_NR_NS; t++)
        if (made[t])
            p->cred.ns[t] = made[t];
    return 0;
}

/* ---- unshare ------------------------------------------------------------- */

#define UNSHARE_FLAGS                                                      \
    (CLONE_THREAD | CLONE_FS | CLONE_NEWNS | CLONE_SIGHAND | CLONE_VM |    \
     CLONE_FILES | CLONE_SYSVSEM | CLONE_NEWUTS | CLONE_NEWIPC |           \
     CLONE_NEWNET | CLONE_NEWUSER | CLONE_NEWPID | CLONE_NEWCGROUP |       \
     CLONE_NEWTIME)

static int live_threads(const struct proxy_process *p)
{
    int n = 0;
    for (int i = 0; i < p->nr_threads; i++)
        n += p->threads[i].state != PROXY_THREAD_EXITED;
    return n;
}

/* ksys_unshare: the implied flags, check_unshare_flags, then the
 * namespaces. CLONE_FS gives the process an fs_struct of its own when it
 * shared one (clone's CLONE_FS); CLONE_FILES has nothing to unshare here
 * (a process never shares its fd table with another). */
static long sys_unshare(struct proxy_process *p, const uint64_t a[6])
{
    uint64_t flags = a[0];
    if (flags & CLONE_NEWUSER)
        flags |= CLONE_THREAD | CLONE_FS;
    if (flags & CLONE_VM)
        flags |= CLONE_SIGHAND;
    if (flags & CLONE_SIGHAND)
        flags |= CLONE_THREAD;
    if (flags & CLONE_NEWNS)
        flags |= CLONE_FS;
    if (flags & ~(uint64_t)UNSHARE_FLAGS)
        return -EINVAL;
    if ((flags & (CLONE_THREAD | CLONE_SIGHAND | CLONE_VM)) &&
        live_threads(p) > 1)
        return -EINVAL;
    /* current_is_single_threaded: no other process on its memory either */
    if ((flags & CLONE_VM) && proxy_as_shared(p))
        return -EINVAL;
    if (flags & CLONE_FS)
        proxy_fs_unshare(p);
    if (flags & CLONE_SYSVSEM && !(flags & CLONE_NEWIPC))
        proxy_sem_exit(p);
    if (!(flags & NS_FLAGS_ALL))
        return 0;
    return ns_switch(p, flags & NS_FLAGS_ALL);
}

/* ---- clone --------------------------------------------------------------- */

static int pid_level(const struct proxy_process *p);

long proxy_ns_clone_check(struct proxy_process *p, uint64_t flags)
{
    if ((flags & (CLONE_NEWNS | CLONE_FS)) == (CLONE_NEWNS | CLONE_FS) ||
        (flags & (CLONE_NEWUSER | CLONE_FS)) == (CLONE_NEWUSER | CLONE_FS))
        return -EINVAL;
    if ((flags & (CLONE_THREAD | CLONE_PARENT)) &&
        (flags & (CLONE_NEWUSER | CLONE_NEWPID)))
        return -EINVAL;
    /* a thread of its own namespaces is not modelled (Linux allows the
     * other kinds there) */
    if ((flags & CLONE_THREAD) && (flags & NS_FLAGS_ALL))
        return -EINVAL;
    if (!(flags & NS_FLAGS_ALL))
        return 0;
    if (flags & NS_FLAGS_REFUSED)
        return -EPERM;
    if (flags & CLONE_NEWUSER) {
        long rc = user_ns_check(p);
        if (rc < 0)
            return rc;
    } else if (!proxy_ns_capable_cap(p, CAP_SYS_ADMIN)) {
        return -EPERM;
    }
    if ((flags & (CLONE_NEWIPC | CLONE_SYSVSEM)) ==
        (CLONE_NEWIPC | CLONE_SYSVSEM))
        return -EINVAL;
    /* copy_pid_ns: the children's namespace must be the caller's own */
    if ((flags & CLONE_NEWPID) && p->cred.ns[PROXY_NS_PID] != p->cred.pidns)
        return -EINVAL;
    if ((flags & CLONE_NEWPID) && pid_level(p) >= PROXY_PID_LEVELS)
        return -ENOSPC;
    return 0;
}

/* The child, a copy of p, gets the namespaces; p keeps its own. */
long proxy_ns_clone_apply(struct proxy_process *p, struct proxy_process *c,
                          uint64_t flags)
{
    (void)p;
    if (!(flags & NS_FLAGS_ALL))
        return 0;
    return ns_switch(c, flags & NS_FLAGS_ALL);
}

/* ---- pid namespaces ------------------------------------------------------ */

/*
 * A process lives in one pid namespace (p->pidns, NULL: the run's) and
 * has a pid in it and in each one above: vpids[level], vpids[0] being
 * its pid in the run (p->pid, the key everything inside hvrun uses).
 * What a guest sees of another process goes through these: q is visible
 * to p when q's namespace is p's or below it.
 */
static int pid_level(const struct proxy_process *p)
{
    return p->cred.pidns ? p->cred.pidns->level : 0;
}

int proxy_ns_pid_level(const struct proxy_process *p) { return pid_level(p); }

static const struct proxy_ns *pidns_at(const struct proxy_process *q, int level)
{
    const struct proxy_ns *ns = q->cred.pidns;
    while (ns && ns->level > level)
        ns = ns->pid_parent;
    return ns;
}

int proxy_ns_pid_of(const struct proxy_process *viewer,
                    const struct proxy_process *q)
{
    int level = pid_level(viewer);
    if (level == 0)
        return q->pid;
    if (pid_level(q) < level || pidns_at(q, level) != viewer->cred.pidns)
        return 0;
    return q->cred.vpids[level];
}

struct proxy_process *proxy_ns_find(struct proxy_process *viewer, int vpid)
{
    struct proxy_world *w = viewer->world;
    if (!w || pid_level(viewer) == 0)
        return w ? proxy_world_find(w, vpid) : NULL;
    if (vpid <= 0)
        return NULL;
    for (int i = 0; i < w->nr_procs; i++)
        if (proxy_ns_pid_of(viewer, w->procs[i]) == vpid)
            return w->procs[i];
    return NULL;
}

int proxy_ns_pid_nr(const struct proxy_process *viewer, int global)
{
    if (pid_level(viewer) == 0 || global <= 0 || !viewer->world)
        return global;
    const struct proxy_process *q = proxy_world_find(viewer->world, global);
    return q ? proxy_ns_pid_of(viewer, q) : 0;
}

int proxy_ns_global_nr(struct proxy_process *viewer, int vpid)
{
    if (pid_level(viewer) == 0 || vpid <= 0)
        return vpid;
    const struct proxy_process *q = proxy_ns_find(viewer, vpid);
    return q ? q->pid : -1;
}

/* A new process c (pid c->pid in the run) in its parent's namespace for
 * children: a pid there and in every namespace above. */
long proxy_ns_fork_pids(struct proxy_process *parent, struct proxy_process *c)
{
    struct proxy_ns *ns = parent->cred.ns[PROXY_NS_PID];
    if (ns && ns->init_gone)
        return -ENOMEM; /* its init died: alloc_pid fails */
    c->cred.pidns = ns;
    c->cred.vpids[0] = c->pid;
    for (struct proxy_ns *n = ns; n; n = n->pid_parent) {
        c->cred.vpids[n->level] = ++n->last_pid;
        if (n->last_pid == 1)
            n->init_pid = c->pid;
    }
    return 0;
}

int proxy_ns_reaper(const struct proxy_process *p)
{
    return p->cred.pidns ? p->cred.pidns->init_pid : 0;
}

bool proxy_ns_is_ns_init(const struct proxy_process *p)
{
    return p->cred.pidns && p->cred.pidns->init_pid == p->pid;
}

void proxy_ns_init_gone(struct proxy_process *p)
{
    if (proxy_ns_is_ns_init(p))
        p->cred.pidns->init_gone = true;
}

bool proxy_ns_pidns_visible(const struct proxy_process *p,
                            const struct proxy_ns *ns)
{
    for (; ns; ns = ns->pid_parent)
        if (ns == p->cred.pidns)
            return true;
    return pid_level(p) == 0;
}

bool proxy_ns_pid_below(const struct proxy_process *init,
                        const struct proxy_process *q)
{
    int level = pid_level(init);
    return q != init && level > 0 && pid_level(q) >= level &&
           pidns_at(q, level) == init->cred.pidns;
}

/* ---- setns --------------------------------------------------------------- */

/* userns_install and the others' *_install checks. */
static long ns_enter(struct proxy_process *p, int t, struct proxy_ns *ns)
{
    if (t == PROXY_NS_USER) {
        if (ns == p->cred.ns[PROXY_NS_USER] || live_threads(p) > 1)
            return -EINVAL;
        if (!capable_in(p, ns))
            return -EPERM;
        p->cred.ns[PROXY_NS_USER] = ns;
        p->cred.ns_caps = true;
        p->cred.caps_recorded = false; /* a new namespace's full set */
        return 0;
    }
    if (!capable_in(p, ns ? ns->owner : NULL) ||
        !capable_in(p, p->cred.ns[PROXY_NS_USER]))
        return -EPERM;
    if (t == PROXY_NS_IPC && ns != p->cred.ns[PROXY_NS_IPC])
        proxy_sem_exit(p);
    if (t == PROXY_NS_PID) { /* children's: its own or one below it */
        const struct proxy_ns *n = ns;
        while (n && n != p->cred.pidns)
            n = n->pid_parent;
        if (n != p->cred.pidns)
            return -EINVAL;
    }
    p->cred.ns[t] = ns;
    return 0;
}

static long sys_setns(struct proxy_process *p, const uint64_t a[6])
{
    int fd = (int)a[0];
    uint64_t nstype = a[1];
    struct proxy_fd *f = proxy_fd_get(&p->fds, fd);
    if (!f || f->kind == PROXY_FD_FREE)
        return -EBADF;
    int t;
    struct proxy_ns *ns;
    if (!proxy_hooks.procfile_ns(f, &t, &ns))
        return -EINVAL; /* not a namespace (nor a pidfd) */
    if (nstype && nstype != kinds[t].flag)
        return -EINVAL;
    if (NS_FLAGS_REFUSED & kinds[t].flag) /* only the one it is in */
        return ns == p->cred.ns[t] && own_caps(p) ? 0 : -EPERM;
    return ns_enter(p, t, ns);
}

/* ---- /proc/PID/ns -------------------------------------------------------- */

int proxy_ns_type_of_name(const char *name)
{
    for (int t = 0; t < PROXY_NR_NS; t++)
        if (strcmp(name, kinds[t].name) == 0)
            return t;
    if (strcmp(name, "pid_for_children") == 0)
        return PROXY_NS_PID;
    if (strcmp(name, "time_for_children") == 0)
        return PROXY_NS_TIME;
    return -1;
}

/* "pid" is the namespace it lives in, ns[PROXY_NS_PID] its children's
 * (pid_for_children); the latter is what proxy_ns_of gives for "pid"
 * only when asked by that name. */
static const struct proxy_ns *ns_named(const struct proxy_process *of,
                                       int type, bool for_children)
{
    return type == PROXY_NS_PID && !for_children ? of->cred.pidns
                                                 : of->cred.ns[type];
}

struct proxy_ns *proxy_ns_of(const struct proxy_process *of, int type)
{
    return type == PROXY_NS_PID ? of->cred.pidns : of->cred.ns[type];
}

uint32_t proxy_ns_inum(int type, const struct proxy_ns *ns)
{
    return ns ? ns->inum : kinds[type].init_inum;
}

int proxy_ns_link(const struct proxy_process *of, int type, char *out,
                  size_t cap)
{
    return proxy_ns_link_named(of, kinds[type].name, out, cap);
}

int proxy_ns_link_named(const struct proxy_process *of, const char *name,
                        char *out, size_t cap)
{
    int type = proxy_ns_type_of_name(name);
    if (type < 0)
        return -1;
    const struct proxy_ns *ns =
        ns_named(of, type, strstr(name, "_for_children") != NULL);
    return snprintf(out, cap, "%s:[%u]", kinds[type].name,
                    ns ? ns->inum : kinds[type].init_inum);
}

/* ---- nsfs ioctls ---------------------------------------------------------- */

/* Whether namespace x (NULL: the run's initial one) is mine or below it,
 * following up (the user namespaces' parents, or the pid ones'). */
static bool ns_within(const struct proxy_ns *x, const struct proxy_ns *mine,
                      bool pid)
{
    for (;;) {
        if (x == mine)
            return true;
        if (!x)
            return false;
        x = pid ? x->pid_parent : x->owner;
    }
}

/*
 * The nsfs ioctls on an fd of namespace ns of type (nsfs.c's ns_ioctl):
 * NS_GET_NSTYPE its CLONE_NEW* flag; NS_GET_OWNER_UID (user namespaces:
 * EINVAL for others) its creator's uid as the caller sees it, written to
 * arg; NS_GET_USERNS its owning user namespace and NS_GET_PARENT (user and
 * pid namespaces: EINVAL for others) its parent, given back in *rel and
 * *rel_type for the caller to open, EPERM when that one is outside the
 * caller's own namespace (the initial user namespace has no owner).
 * -ENOTTY for another request.
 */
long proxy_ns_ioctl(struct proxy_process *p, int type, struct proxy_ns *ns,
                    unsigned int req, gva_t arg, struct proxy_ns **rel,
                    int *rel_type)
{
    *rel_type = -1;
    const struct proxy_ns *my_user = p->cred.ns[PROXY_NS_USER];
    switch (req) {
    case NS_GET_NSTYPE:
        return (long)kinds[type].flag;
    case NS_GET_OWNER_UID: {
        if (type != PROXY_NS_USER)
            return -EINVAL;
        uint32_t uid = proxy_ns_uid_seen(p, ns ? ns->owner_uid : 0);
        return proxy_copy_out(p, arg, &uid, sizeof(uid)) < 0 ? -EFAULT : 0;
    }
    case NS_GET_PARENT:
        if (type == PROXY_NS_PID) {
            if (!ns || !ns_within(ns->pid_parent, p->cred.pidns, true))
                return -EPERM;
            *rel = ns->pid_parent;
            *rel_type = PROXY_NS_PID;
            return 0;
        }
        if (type != PROXY_NS_USER)
            return -EINVAL;
        __attribute__((fallthrough)); /* a user namespace's parent: its owner */
    case NS_GET_USERNS:
        if ((type == PROXY_NS_USER && !ns) ||
            !ns_within(ns ? ns->owner : NULL, my_user, false))
            return -EPERM;
        *rel = ns ? ns->owner : NULL;
        *rel_type = PROXY_NS_USER;
        return 0;
    default:
        return -ENOTTY;
    }
}

int proxy_ns_link_of(int type, const struct proxy_ns *ns, char *out,
                     size_t cap)
{
    return snprintf(out, cap, "%s:[%u]", kinds[type].name,
                    proxy_ns_inum(type, ns));
}

/* ---- /proc/PID/uid_map, gid_map, setgroups ------------------------------- */

/* The initial namespace's one extent. */
static const struct id_map *map_of(const struct proxy_ns *u, bool gid)
{
    static struct id_map identity = {1, {{0, 0, UINT32_MAX}}};
    return !u ? &identity : gid ? &u->gid_map : &u->uid_map;
}

/* uid_m_show: the lower ids in the reader's terms (its parent's when it
 * reads its own namespace's map). */
static int map_content(const struct proxy_process *p,
                       const struct proxy_ns *u, bool gid, char *out,
                       size_t cap)
{
    const struct proxy_ns *lower_ns = p->cred.ns[PROXY_NS_USER];
    if (lower_ns == u && lower_ns)
        lower_ns = lower_ns->owner;
    const struct id_map *m = map_of(u, gid);
    size_t len = 0;
    out[0] = '\0';
    for (int i = 0; i < m->nr && len < cap; i++) {
        uint32_t lower = munged(ns_up(lower_ns, gid, m->e[i].lower));
        int n = snprintf(out + len, cap - len, "%10u %10u %10u\n",
                         m->e[i].first, lower, m->e[i].count);
        if (n < 0)
            break;
        len += (size_t)n;
    }
    return len < cap ? (int)len : (int)cap - 1;
}

int proxy_ns_file_content(const struct proxy_process *p,
                          const struct proxy_process *of, int which,
                          char *out, size_t cap)
{
    const struct proxy_ns *u = of->cred.ns[PROXY_NS_USER];
    if (which == PROXY_NSFILE_SETGROUPS)
        return snprintf(out, cap, "%s\n",
                        !u || u->setgroups_allowed ? "allow" : "deny");
    return map_content(p, u, which == PROXY_NSFILE_GID_MAP, out, cap);
}

/* simple_strtoul in base 10 at *s (no digits: 0, *s unchanged). */
static uint32_t strtou32(char **s)
{
    unsigned long long v = 0;
    char *c = *s;
    for (; *c >= '0' && *c <= '9'; c++)
        v = v * 10 + (unsigned)(*c - '0');
    *s = c;
    return (uint32_t)v;
}

static char *skip_spaces(char *s)
{
    while (isspace((unsigned char)*s))
        s++;
    return s;
}

static bool overlaps(const struct id_map *m, const struct id_extent *x)
{
    for (int i = 0; i < m->nr; i++) {
        const struct id_extent *e = &m->e[i];
        uint64_t x_up = (uint64_t)x->first + x->count - 1,
                 e_up = (uint64_t)e->first + e->count - 1;
        uint64_t xl_up = (uint64_t)x->lower + x->count - 1,
                 el_up = (uint64_t)e->lower + e->count - 1;
        if ((x->first <= e_up && x_up >= e->first) ||
            (x->lower <= el_up && xl_up >= e->lower))
            return true;
    }
    return false;
}

/* One line "first lower count": 0, or -EINVAL (map_write's parse). */
static long parse_extent(char *pos, struct id_extent *x)
{
    pos = skip_spaces(pos);
    x->first = strtou32(&pos);
    if (!isspace((unsigned char)*pos))
        return -EINVAL;
    pos = skip_spaces(pos);
    x->lower = strtou32(&pos);
    if (!isspace((unsigned char)*pos))
        return -EINVAL;
    pos = skip_spaces(pos);
    x->count = strtou32(&pos);
    if (*pos && !isspace((unsigned char)*pos))
        return -EINVAL;
    if (*skip_spaces(pos) != '\0')
        return -EINVAL;
    if (x->first == UINT32_MAX || x->lower == UINT32_MAX)
        return -EINVAL;
    if ((uint32_t)(x->first + x->count) <= x->first ||
        (uint32_t)(x->lower + x->count) <= x->lower)
        return -EINVAL;
    return 0;
}

static long parse_map(char *kbuf, struct id_map *m)
{
    for (char *pos = kbuf, *next; pos; pos = next) {
        next = strchr(pos, '\n');
        if (next) {
            *next++ = '\0';
            if (*next == '\0')
                next = NULL;
        }
        struct id_extent x;
        if (parse_extent(pos, &x) < 0 || overlaps(m, &x))
            return -EINVAL;
        if (m->nr + 1 == MAP_MAX_EXTENTS && next)
            return -EINVAL;
        m->e[m->nr++] = x;
    }
    return m->nr ? 0 : -EINVAL;
}

/* new_idmap_permitted: one id, the writer's own (and for gids only once
 * setgroups is denied), or CAP_SETUID/CAP_SETGID over the parent. */
static bool map_permitted(const struct proxy_process *p,
                          const struct proxy_ns *u, bool gid,
                          const struct id_map *m)
{
    if (m->nr == 1 && m->e[0].count == 1 && u->owner_uid == p->cred.euid) {
        int64_t k = ns_down(u->owner, gid, m->e[0].lower);
        if (!gid && k >= 0 && (uint32_t)k == p->cred.euid)
            return true;
        if (gid && !u->setgroups_allowed && k >= 0 &&
            (uint32_t)k == p->cred.egid)
            return true;
    }
    return capable_in(p, u->owner);
}

static long map_write(struct proxy_process *p, struct proxy_ns *u, bool gid,
                      char *kbuf)
{
    struct id_map *map = gid ? &u->gid_map : &u->uid_map;
    if (map->nr != 0 || !capable_in(p, u))
        return -EPERM;
    struct id_map *m = calloc(1, sizeof(*m));
    if (!m)
        return -ENOMEM;
    long rc = parse_map(kbuf, m);
    if (rc == 0 && !map_permitted(p, u, gid, m))
        rc = -EPERM;
    /* The lower ids, given in the parent's terms, become kernel ids. */
    for (int i = 0; rc == 0 && i < m->nr; i++) {
        int64_t k = u->owner ? map_down(map_of(u->owner, gid), m->e[i].lower,
                                        m->e[i].count)
                             : (int64_t)m->e[i].lower;
        if (k < 0)
            rc = -EPERM;
        else
            m->e[i].lower = (uint32_t)k;
    }
    if (rc == 0)
        *map = *m;
    free(m);
    return rc;
}

/* proc_setgroups_write: "allow" or "deny"; deny is for good, and only
 * before the gid map. */
static long setgroups_write(struct proxy_process *p, struct proxy_ns *u,
                            const char *buf, size_t len)
{
    char kbuf[8];
    if (len >= sizeof(kbuf))
        return -EINVAL;
    memcpy(kbuf, buf, len);
    kbuf[len] = '\0';
    bool allow;
    char *pos = kbuf;
    if (strncmp(pos, "allow", 5) == 0) {
        allow = true;
        pos += 5;
    } else if (strncmp(pos, "deny", 4) == 0) {
        allow = false;
        pos += 4;
    } else {
        return -EINVAL;
    }
    if (*skip_spaces(pos) != '\0')
        return -EINVAL;
    if (!capable_in(p, u))
        return -EPERM;
    /* deny only before the gid map (the initial one has its map) */
    if (allow ? u && !u->setgroups_allowed : !u || u->gid_map.nr != 0)
        return -EPERM;
    if (!u)
        return (long)len;
    u->setgroups_allowed = allow;
    return (long)len;
}

long proxy_ns_file_write(struct proxy_process *p, struct proxy_process *of,
                         int which, const char *buf, size_t len)
{
    struct proxy_ns *u = of->cred.ns[PROXY_NS_USER];
    if (which == PROXY_NSFILE_SETGROUPS)
        return setgroups_write(p, u, buf, len);
    if (len >= MAP_WRITE_MAX)
        return -EINVAL;
    /* Only the namespace itself or its parent may write (and never the
     * initial namespace's maps). */
    if (!u || (p->cred.ns[PROXY_NS_USER] != u &&
               p->cred.ns[PROXY_NS_USER] != u->owner))
        return -EPERM;
    char *kbuf = malloc(len + 1);
    if (!kbuf)
        return -ENOMEM;
    memcpy(kbuf, buf, len);
    kbuf[len] = '\0';
    long rc = map_write(p, u, which == PROXY_NSFILE_GID_MAP, kbuf);
    free(kbuf);
    return rc < 0 ? rc : (long)len;
}

/* ---- mount, umount2, pivot_root ------------------------------------------ */

/*
 * There is no mount table of the guest's (and so no mount namespace): the
 * guest sees the host's mounts and may change none, as a container
 * without CAP_SYS_ADMIN over its mount namespace (may_mount: EPERM).
 * umount2 checks its flags first (EINVAL), as ksys_umount does.
 */
static long sys_mount(struct proxy_process *p, const uint64_t a[6])
{
    (void)p;
    (void)a;
    return -EPERM;
}

#define UMOUNT_FLAGS (MNT_FORCE | MNT_DETACH | MNT_EXPIRE | UMOUNT_NOFOLLOW)

static long sys_umount2(struct proxy_process *p, const uint64_t a[6])
{
    (void)p;
    return (a[1] & ~(uint64_t)UMOUNT_FLAGS) ? -EINVAL : -EPERM;
}

static long sys_pivot_root(struct proxy_process *p, const uint64_t a[6])
{
    (void)p;
    (void)a;
    return -EPERM;
}

const struct proxy_syscall proxy_ns_syscalls[] = {
    {SYS_unshare, "unshare", sys_unshare},
    {SYS_setns, "setns", sys_setns},
    {SYS_mount, "mount", sys_mount},
    {SYS_umount2, "umount2", sys_umount2},
    {SYS_pivot_root, "pivot_root", sys_pivot_root},
    {-1, NULL, NULL},
};
