/*
 * fdtable.c - the guest fd table: guest fd numbers -> host fds held by
 * hvrun, and the hvrun-wide count of guest references to each host fd.
 *
 * Invariants:
 *  - fds[0..cap) is the whole table; a slot is in use iff kind != FREE.
 *  - A host fd is one open file description: guest fds that share a
 *    description (dup, dup2, dup3, F_DUPFD, a fork's copy, pidfd_getfd)
 *    share one host fd. host_refs[h].refs counts the in-use slots of every
 *    guest process that hold h; the host fd is closed when the last one is
 *    released (close, dup2 onto it, close-on-exec, the process's end), so
 *    a dup or a fork costs hvrun no host fd (a guest with 20000 fds that
 *    forks would otherwise need 20000 more). Offset and status flags are
 *    the description's on Linux too, so sharing them is right.
 *  - Nothing outside this file closes a slot's host fd or puts another
 *    host fd into a slot: the count would go wrong.
 *  - Host fds are always O_CLOEXEC on the host (hvrun must not leak them
 *    into anything it runs); the guest's close-on-exec bit is per guest fd,
 *    `cloexec`.
 *  - Guests hold only host fds numbered below host_fd_ceiling, which is
 *    HOST_FD_RESERVE below hvrun's RLIMIT_NOFILE: a guest that fills its
 *    table gets EMFILE while hvrun still has fds for forks, execs and VMs.
 *  - New guest fds are numbered below max_fds (RLIMIT_NOFILE soft limit).
 *    cap may stay above a lowered max_fds: Linux keeps fds that are already
 *    open when the limit drops, it only refuses new ones.
 *  - epoll keys an entry by (open file, fd number). A host fd h shared by
 *    guest fds of different numbers could key only one of them, so the
 *    first guest fd number used with epoll_ctl on h owns h's key
 *    (epoll_num); another number sharing h is given a host fd of its own
 *    first (proxy_fd_epoll_key). Fork copies keep their numbers, so they
 *    share the key as the fork's copies share Linux's entries.
 *  - Each description has an id, host_refs[h].file_id, given when its
 *    first host fd is adopted, from one hvrun-wide count, and kept by a
 *    host fd of its own given to a guest fd (proxy_fd_epoll_key): kcmp's
 *    KCMP_FILE compares and orders descriptions by it. It follows the
 *    guests' own calls, never host fd numbers, so it is the same in every
 *    run. (A description a guest receives in SCM_RIGHTS comes as a fresh
 *    host fd, so it gets an id of its own.)
 */
#include "proxy.h"
#include "fdtable.h"
#include "kernel.h"
#include "fs.h"
#include "io.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/kcmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#define FDTABLE_INITIAL_CAP 64

/*
 * Host fds kept free for hvrun itself below its RLIMIT_NOFILE: a fork
 * needs a guest memory memfd and a VM (or a stub process and its pipes),
 * an exec opens the program and its interpreter, a poll an epoll fd.
 * Without a reserve a guest that opens fds until EMFILE (stress-ng
 * sockpair) leaves hvrun none, and every fork it then tries fails.
 */
#define HOST_FD_RESERVE 256

/* One host fd held by guest fds (indexed by the host fd number). */
struct host_fd_ref {
    uint32_t refs;  /* in-use guest slots holding it, all processes */
    int guest_num;  /* the guest fd number all of them have, or -1 */
    int epoll_num;  /* the guest fd number epoll entries key it by, or -1 */
    uint64_t file_id; /* the open file description's (see above); 0: free */
};

static struct host_fd_ref *host_refs;
static int host_refs_cap;
static int host_fd_ceiling; /* 0 until host_fd_limits_init */
static uint64_t file_ids;   /* descriptions given an id so far */

/* hvrun's soft RLIMIT_NOFILE goes to its hard limit (guests may want many
 * fds: the guest's own limit is enforced in the table), and the ceiling
 * of guest-held host fd numbers is HOST_FD_RESERVE below it. */
static void host_fd_limits_init(void)
{
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) < 0) {
        host_fd_ceiling = 1024 - HOST_FD_RESERVE;
        return;
    }
    if (rl.rlim_cur < rl.rlim_max) {
        rl.rlim_cur = rl.rlim_max;
        if (setrlimit(RLIMIT_NOFILE, &rl) < 0)
            (void)getrlimit(RLIMIT_NOFILE, &rl);
    }
    rlim_t lim = rl.rlim_cur > INT32_MAX ? INT32_MAX : rl.rlim_cur;
    /* a tiny limit still leaves guests half of it */
    host_fd_ceiling = lim > 2 * HOST_FD_RESERVE ? (int)(lim - HOST_FD_RESERVE)
                                                : (int)(lim / 2);
}

static int host_refs_grow(int host_fd)
{
    if (host_fd < host_refs_cap)
        return 0;
    int cap = host_refs_cap ? host_refs_cap : 256;
    while (cap <= host_fd)
        cap *= 2;
    struct host_fd_ref *r = realloc(host_refs, (size_t)cap * sizeof(*r));
    if (!r)
        return -ENOMEM;
    for (int i = host_refs_cap; i < cap; i++)
        r[i] = (struct host_fd_ref){0, -1, -1, 0};
    host_refs = r;
    host_refs_cap = cap;
    return 0;
}

static struct host_fd_ref *host_ref(int host_fd)
{
    return host_fd >= 0 && host_fd < host_refs_cap ? &host_refs[host_fd]
                                                   : NULL;
}

int proxy_host_fd_ref(int host_fd)
{
    struct host_fd_ref *r = host_ref(host_fd);
    if (r && r->refs > 0)
        r->refs++;
    return host_fd;
}

/* Drops one guest reference; the last one closes the host fd (its close
 * result, 0 or -errno; 0 while others still hold it). */
static int host_fd_unref(int host_fd)
{
    struct host_fd_ref *r = host_ref(host_fd);
    if (r && r->refs > 1) {
        r->refs--;
        return 0;
    }
    if (r)
        *r = (struct host_fd_ref){0, -1, -1, 0};
    return close(host_fd) < 0 ? -errno : 0;
}

/*
 * A host fd becomes held by guest fd guest_num. A fresh one (no guest
 * holds it yet) is counted, or refused with -EMFILE when its number is in
 * hvrun's reserve (the kernel hands out the lowest free number, so every
 * number below it is taken) and closed; a shared one was counted by
 * proxy_host_fd_ref.
 */
static int host_fd_adopt(int host_fd, int guest_num)
{
    if (host_fd_ceiling == 0)
        host_fd_limits_init();
    struct host_fd_ref *r = host_ref(host_fd);
    if (r && r->refs > 0) {
        if (r->guest_num != guest_num)
            r->guest_num = -1;
        return 0;
    }
    int rc = host_fd >= host_fd_ceiling ? -EMFILE : host_refs_grow(host_fd);
    if (rc < 0) {
        close(host_fd);
        return rc;
    }
    host_refs[host_fd] = (struct host_fd_ref){1, guest_num, -1, ++file_ids};
    return 0;
}

/* Frees a slot (and its share of a directory cache, and the process's
 * record locks on the file) and returns the host fd it held, still open
 * and still counted. */
void proxy_fd_context_release(struct proxy_fd *f)
{
    proxy_signalfd_put(f->signalfd);
    proxy_timerfd_put(f->timerfd);
    proxy_perf_put(f->perf);
    proxy_procfile_put(f->vfd);
    proxy_mqd_put(f->mqd, NULL);
    proxy_eventfd_put(f->eventfd);
    proxy_lockdesc_put(f->lockdesc);
    proxy_fowner_put(f->owner);
    *f = (struct proxy_fd){.kind = PROXY_FD_FREE, .host_fd = -1};
}

static int slot_release(struct proxy_fdtable *t, struct proxy_fd *slot)
{
    int host_fd = slot->host_fd;
    proxy_plocks_file_closed(t, host_fd);
    proxy_dircache_put(slot->dircache);
    proxy_signalfd_put(slot->signalfd);
    proxy_timerfd_put(slot->timerfd);
    proxy_perf_put(slot->perf);
    proxy_procfile_put(slot->vfd);
    proxy_mqd_put(slot->mqd, t);
    proxy_eventfd_put(slot->eventfd);
    proxy_lockdesc_put(slot->lockdesc);
    struct host_fd_ref *r = host_ref(host_fd);
    if (!r || r->refs <= 1) /* the number stays this file's while shared */
        proxy_fasync_fd_closed(slot->owner, host_fd);
    proxy_fowner_put(slot->owner);
    *slot = (struct proxy_fd){.kind = PROXY_FD_FREE, .host_fd = -1};
    return host_fd;
}

/* Makes slots [0, need) exist. Growth doubles, up to max_fds, so a guest
 * that opens many fds is not reallocating on every open. */
static int fdtable_grow(struct proxy_fdtable *t, int need)
{
    if (need <= t->cap)
        return 0;
    int new_cap = t->cap > 0 ? t->cap : FDTABLE_INITIAL_CAP;
    while (new_cap < need)
        new_cap = new_cap > t->max_fds / 2 ? need : new_cap * 2;
    if (new_cap > t->max_fds && need <= t->max_fds)
        new_cap = t->max_fds;
    struct proxy_fd *fds = realloc(t->fds, (size_t)new_cap * sizeof(*fds));
    if (!fds)
        return -ENOMEM;
    for (int i = t->cap; i < new_cap; i++)
        fds[i] = (struct proxy_fd){.kind = PROXY_FD_FREE, .host_fd = -1};
    t->fds = fds;
    t->cap = new_cap;
    return 0;
}

int proxy_fdtable_init(struct proxy_fdtable *t, int max_fds)
{
    t->fds = NULL;
    t->cap = 0;
    t->max_fds = max_fds;
    t->plocks = NULL;
    t->nr_plocks = 0;
    int initial = max_fds < FDTABLE_INITIAL_CAP ? max_fds : FDTABLE_INITIAL_CAP;
    return initial > 0 ? fdtable_grow(t, initial) : 0;
}

void proxy_fdtable_destroy(struct proxy_fdtable *t)
{
    for (int i = 0; i < t->cap; i++) {
        if (t->fds[i].kind != PROXY_FD_FREE)
            host_fd_unref(slot_release(t, &t->fds[i]));
    }
    proxy_plocks_destroy(t);
    free(t->fds);
    t->fds = NULL;
    t->cap = 0;
}

/* Lowest free guest fd >= min_fd below max_fds, growing the array when the
 * free slot is past its end; -EMFILE when every allowed number is taken. */
static int lowest_free(struct proxy_fdtable *t, int min_fd)
{
    int fd = min_fd < 0 ? 0 : min_fd;
    while (fd < t->cap && t->fds[fd].kind != PROXY_FD_FREE)
        fd++;
    if (fd >= t->max_fds)
        return -EMFILE;
    int r = fdtable_grow(t, fd + 1);
    return r < 0 ? r : fd;
}

int proxy_fd_install(struct proxy_fdtable *t, int host_fd, bool cloexec,
                     int min_fd)
{
    int fd = lowest_free(t, min_fd);
    int rc = fd < 0 ? fd : host_fd_adopt(host_fd, fd);
    if (fd < 0)
        host_fd_unref(host_fd);
    if (rc < 0)
        return rc;
    t->fds[fd].kind = PROXY_FD_HOST;
    t->fds[fd].host_fd = host_fd;
    t->fds[fd].cloexec = cloexec;
    return fd;
}

/*
 * dup2/dup3 target. A number at or above max_fds is -EBADF, as Linux's dup2
 * says. On any failure the reference to host_fd is dropped, like
 * proxy_fd_install, so callers never leak it. The old occupant is released
 * after the new one is in place (so dup2 onto a dup of the same file never
 * closes it); its close error is dropped, as dup2 drops it.
 */
int proxy_fd_install_at(struct proxy_fdtable *t, int guest_fd, int host_fd,
                        bool cloexec)
{
    if (guest_fd < 0 || guest_fd >= t->max_fds) {
        host_fd_unref(host_fd);
        return -EBADF;
    }
    int r = fdtable_grow(t, guest_fd + 1);
    if (r < 0) {
        host_fd_unref(host_fd);
        return r;
    }
    if ((r = host_fd_adopt(host_fd, guest_fd)) < 0)
        return r;
    struct proxy_fd *slot = &t->fds[guest_fd];
    int old_host_fd = slot->kind != PROXY_FD_FREE ? slot_release(t, slot) : -1;
    slot->kind = PROXY_FD_HOST;
    slot->host_fd = host_fd;
    slot->cloexec = cloexec;
    if (old_host_fd >= 0)
        host_fd_unref(old_host_fd);
    return guest_fd;
}

struct proxy_fd *proxy_fd_get(struct proxy_fdtable *t, int guest_fd)
{
    if (guest_fd < 0 || guest_fd >= t->cap)
        return NULL;
    struct proxy_fd *slot = &t->fds[guest_fd];
    return slot->kind == PROXY_FD_FREE ? NULL : slot;
}

bool proxy_fd_identity(struct proxy_fd *f)
{
    if (f->meta_known)
        return true;
    struct stat st;
    if (fstat(f->host_fd, &st) < 0)
        return false;
    f->host_type = st.st_mode & S_IFMT;
    f->host_dev = st.st_dev;
    f->host_ino = st.st_ino;
    f->host_rdev = st.st_rdev;
    f->meta_known = true;
    return true;
}

uint64_t proxy_fd_file_id(const struct proxy_fdtable *t, int guest_fd)
{
    int host_fd = proxy_fd_host(t, guest_fd);
    const struct host_fd_ref *r = host_ref(host_fd);
    return r ? r->file_id : 0;
}

int proxy_fd_host(const struct proxy_fdtable *t, int guest_fd)
{
    if (guest_fd < 0 || guest_fd >= t->cap)
        return -EBADF;
    const struct proxy_fd *slot = &t->fds[guest_fd];
    return slot->kind == PROXY_FD_FREE ? -EBADF : slot->host_fd;
}

/* The guest fd is gone whatever the host close says (Linux frees the number
 * before flushing), but a flush error such as EIO is still reported. A
 * description other guest fds still hold is not flushed, as on Linux. */
int proxy_fd_close(struct proxy_fdtable *t, int guest_fd)
{
    struct proxy_fd *slot = proxy_fd_get(t, guest_fd);
    if (!slot)
        return -EBADF;
    return host_fd_unref(slot_release(t, slot));
}

/* Gives a slot a host fd of its own on the same description (a host dup),
 * dropping its share of the old one. */
static int slot_unshare(struct proxy_fd *slot, int guest_fd)
{
    int own = fcntl(slot->host_fd, F_DUPFD_CLOEXEC, 0);
    if (own < 0)
        return -errno;
    const struct host_fd_ref *old = host_ref(slot->host_fd);
    uint64_t file_id = old ? old->file_id : 0;
    int rc = host_fd_adopt(own, guest_fd);
    if (rc < 0)
        return rc;
    host_refs[own].file_id = file_id; /* the same description */
    struct host_fd_ref *r = host_ref(slot->host_fd);
    if (!r || r->refs <= 1) /* the old number closes now */
        proxy_fasync_fd_closed(slot->owner, slot->host_fd);
    host_fd_unref(slot->host_fd);
    slot->host_fd = own;
    return 0;
}

int proxy_fd_epoll_key(struct proxy_fdtable *t, int guest_fd)
{
    struct proxy_fd *slot = proxy_fd_get(t, guest_fd);
    if (!slot)
        return -EBADF;
    struct host_fd_ref *r = host_ref(slot->host_fd);
    if (!r || r->epoll_num == guest_fd)
        return slot->host_fd;
    if (r->epoll_num < 0 && (r->refs <= 1 || r->guest_num == guest_fd)) {
        r->epoll_num = guest_fd;
        return slot->host_fd;
    }
    int rc = slot_unshare(slot, guest_fd);
    if (rc < 0)
        return rc;
    host_refs[slot->host_fd].epoll_num = guest_fd;
    return slot->host_fd;
}

/* Whether host epoll instance host_epfd has an entry keyed by host fd h
 * and h's file: the host's own kcmp (ptrace access to itself always
 * holds); 1 yes, 0 no, or -errno: -EINVAL for a host_epfd that is not an
 * epoll instance, -EOPNOTSUPP for a host without kcmp. */
static int host_epoll_has(int host_epfd, int h)
{
    struct kcmp_epoll_slot slot = {(uint32_t)host_epfd, (uint32_t)h, 0};
    pid_t self = vmm_host_self_pid();
    long rc = syscall(SYS_kcmp, self, self, KCMP_EPOLL_TFD, h, &slot);
    if (rc >= 0)
        return rc == 0;
    if (errno == ENOENT)
        return 0;
    return errno == ENOSYS ? -EOPNOTSUPP : -errno;
}

int proxy_fd_epoll_target(int host_epfd, int guest_num, unsigned int toff,
                          uint64_t *file_id)
{
    /* the entries keyed by guest_num, in the order of their descriptions'
     * ids (Linux's rbtree orders them by file pointer) */
    uint64_t prev = 0;
    for (unsigned int seen = 0;; seen++) {
        int best = -1;
        for (int h = 0; h < host_refs_cap; h++) {
            const struct host_fd_ref *r = &host_refs[h];
            if (r->refs == 0 || r->epoll_num != guest_num ||
                r->file_id <= prev ||
                (best >= 0 && r->file_id >= host_refs[best].file_id))
                continue;
            int has = host_epoll_has(host_epfd, h);
            if (has < 0)
                return has;
            if (has)
                best = h;
        }
        if (best < 0)
            return -ENOENT;
        prev = host_refs[best].file_id;
        if (seen == toff) {
            *file_id = prev;
            return 0;
        }
    }
}

void proxy_fd_share_context(struct proxy_fd *to, struct proxy_fd *from)
{
    proxy_fowner_share(to, from);
    proxy_signalfd_share(to, from);
    proxy_timerfd_share(to, from);
    proxy_perf_share(to, from);
    proxy_procfile_share(to, from);
    proxy_mqd_share(to, from);
    proxy_eventfd_share(to, from);
    proxy_lockdesc_share(to, from);
    to->listing_pid = from->listing_pid;
    to->pidfd_pid = from->pidfd_pid;
    to->pidfd_pidns = from->pidfd_pidns;
    to->pidfd_exit_known = from->pidfd_exit_known;
    to->pidfd_exit_status = from->pidfd_exit_status;
    to->procdir_pid = from->procdir_pid;
    to->secretmem = from->secretmem;
    to->created = from->created;
    to->maps_pid = from->maps_pid;
    to->exe_link_pid = from->exe_link_pid;
    to->pyc_fix = from->pyc_fix;
    to->pyc_mtime_host = from->pyc_mtime_host;
    to->pyc_mtime_seen = from->pyc_mtime_seen;
    to->inotify = from->inotify;
}

void proxy_fd_close_on_exec(struct proxy_fdtable *t)
{
    for (int i = 0; i < t->cap; i++) {
        if (t->fds[i].kind != PROXY_FD_FREE && t->fds[i].cloexec)
            host_fd_unref(slot_release(t, &t->fds[i]));
    }
}
