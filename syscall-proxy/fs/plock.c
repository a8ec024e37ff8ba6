/*
 * plock.c - classic POSIX record locks (fcntl F_SETLK, F_SETLKW, F_GETLK)
 * between guest processes.
 *
 * Every guest's host fds belong to the one hvrun process, and POSIX locks
 * are owned by a process, so passed through they would never conflict
 * between guests. Instead each guest process gets, per locked file, a
 * private host open file description (the "lock fd", a reopen of the file
 * through /proc/self/fd) and its POSIX locks become open-file-description
 * locks on it. OFD locks of one description merge and split like one
 * process's POSIX locks, and conflict with every other description's, so
 * the host enforces the POSIX rules between guests, and against OFD locks,
 * flock-independent as on Linux, and against processes outside the run.
 *
 * What Linux ties to the owner is kept here: closing any fd of the file
 * releases the process's locks on it (the lock fd is closed), fork does not
 * inherit them, exec keeps them, exit drops them. F_GETLK names the holder
 * by its virtual pid, found in the ranges each guest's table mirrors; a
 * holder outside the run (or an OFD lock) reads as pid -1. An F_SETLKW
 * that would close a cycle of waiting guests is EDEADLK, as Linux's
 * posix_locks_deadlock finds it (plock_deadlock). Locks on anything but a
 * regular file stay the host's (host_lock).
 */
#include "proxy.h"
#include "fdtable.h"
#include "kernel.h"
#include "fs.h"
#include "vfs.h"
#include "det.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

/* [start, end) in bytes; end PLOCK_EOF means "to the end, however far". */
#define PLOCK_EOF UINT64_MAX

struct proxy_plock_range {
    short type; /* F_RDLCK or F_WRLCK */
    uint64_t start, end;
    uint64_t seq; /* when Linux's lock was inserted (lock_seq) */
};

/* The run's locks in the order Linux inserts them into its global list
 * (locks_insert_global_locks: at the head), which /proc/locks shows. */
static uint64_t lock_seq;

struct proxy_plock {
    uint64_t dev, ino;
    int lock_fd;      /* host, O_CLOEXEC, owned */
    int access;       /* O_RDONLY, O_WRONLY or O_RDWR of lock_fd */
    struct proxy_plock_range *ranges;
    size_t nr, cap;
};

static void plock_drop(struct proxy_plock *l)
{
    close(l->lock_fd);
    free(l->ranges);
}

void proxy_plocks_destroy(struct proxy_fdtable *t)
{
    for (size_t i = 0; i < t->nr_plocks; i++)
        plock_drop(&t->plocks[i]);
    free(t->plocks);
    t->plocks = NULL;
    t->nr_plocks = 0;
}

bool proxy_plocks_held(const struct proxy_fdtable *t)
{
    for (size_t i = 0; i < t->nr_plocks; i++)
        if (t->plocks[i].nr > 0)
            return true;
    return false;
}

static struct proxy_plock *plock_find(const struct proxy_fdtable *t,
                                      uint64_t dev, uint64_t ino)
{
    for (size_t i = 0; i < t->nr_plocks; i++)
        if (t->plocks[i].dev == dev && t->plocks[i].ino == ino)
            return &t->plocks[i];
    return NULL;
}

/* Linux: closing any fd of a file releases the process's locks on it. */
void proxy_plocks_file_closed(struct proxy_fdtable *t, int host_fd)
{
    struct stat st;
    if (t->nr_plocks == 0 || fstat(host_fd, &st) < 0)
        return;
    struct proxy_plock *l = plock_find(t, st.st_dev, st.st_ino);
    if (!l)
        return;
    plock_drop(l);
    *l = t->plocks[--t->nr_plocks];
}

/* Opens the process's lock fd for the file behind host_fd: read-write
 * when the file allows, else with the guest fd's own access. */
static int plock_open(struct proxy_fdtable *t, int host_fd,
                      const struct stat *st, int guest_access,
                      struct proxy_plock **out)
{
    struct proxy_plock *l;
    char path[64];
    snprintf(path, sizeof(path), "/proc/self/fd/%d", host_fd);
    int access = O_RDWR;
    int fd = open(path, O_RDWR | O_CLOEXEC | O_NOCTTY);
    if (fd < 0) {
        access = guest_access;
        fd = open(path, access | O_CLOEXEC | O_NOCTTY);
    }
    if (fd < 0)
        return -errno;
    struct proxy_plock *more =
        realloc(t->plocks, (t->nr_plocks + 1) * sizeof(*more));
    if (!more) {
        close(fd);
        return -ENOMEM;
    }
    t->plocks = more;
    l = &t->plocks[t->nr_plocks++];
    *l = (struct proxy_plock){.dev = st->st_dev, .ino = st->st_ino,
                              .lock_fd = fd, .access = access};
    *out = l;
    return 0;
}

static int ranges_push(struct proxy_plock *l, short type, uint64_t start,
                       uint64_t end, uint64_t seq)
{
    if (l->nr == l->cap) {
        size_t cap = l->cap ? l->cap * 2 : 4;
        void *r = realloc(l->ranges, cap * sizeof(*l->ranges));
        if (!r)
            return -ENOMEM;
        l->ranges = r;
        l->cap = cap;
    }
    l->ranges[l->nr++] = (struct proxy_plock_range){type, start, end, seq};
    return 0;
}

static int range_by_start(const void *a, const void *b)
{
    const struct proxy_plock_range *x = a, *y = b;
    return x->start < y->start ? -1 : x->start > y->start;
}

/*
 * Mirrors a granted lock request on one owner's locks (a process's POSIX
 * locks, a description's OFD locks) as posix_lock_inode applies it:
 * [start, end) now has `type` (F_UNLCK: none). The first lock of the same
 * type (in offset order) that overlaps or touches the request absorbs it,
 * keeping its place in Linux's list; others of that type are folded in
 * and go. One of another type is cut: what remains on one side stays
 * that lock; when a part remains on both sides, the right one does and
 * the left one is a new lock, inserted after the request. F_GETLK reads
 * the mirror to name a holder, /proc/locks to list the locks; the host has
 * the authoritative ones, so running out of memory here costs only that.
 */
static void ranges_set(struct proxy_plock *l, short type, uint64_t start,
                       uint64_t end)
{
    if (l->nr > 1)
        qsort(l->ranges, l->nr, sizeof(*l->ranges), range_by_start);
    uint64_t absorbed_by = 0; /* the seq of the lock that took the request */
    struct proxy_plock_range right = {0}, left = {0};
    bool split = false; /* a lock cut in two: right and left remain */
    size_t kept = 0;
    for (size_t i = 0; i < l->nr; i++) {
        struct proxy_plock_range r = l->ranges[i];
        bool same = r.type == type;
        if (same ? r.start > end || r.end < start
                 : r.end <= start || r.start >= end) {
            l->ranges[kept++] = r;
            continue;
        }
        if (same) {
            if (!absorbed_by)
                absorbed_by = r.seq;
            start = r.start < start ? r.start : start;
            end = r.end > end ? r.end : end;
        } else if (r.start < start && r.end > end) {
            right = (struct proxy_plock_range){r.type, end, r.end, r.seq};
            left = (struct proxy_plock_range){r.type, r.start, start, 0};
            split = true;
        } else if (r.start < start) {
            l->ranges[kept++] = (struct proxy_plock_range){r.type, r.start,
                                                           start, r.seq};
        } else if (r.end > end) {
            l->ranges[kept++] = (struct proxy_plock_range){r.type, end, r.end,
                                                           r.seq};
        }
    }
    l->nr = kept;
    if (type != F_UNLCK)
        (void)ranges_push(l, type, start, end,
                          absorbed_by ? absorbed_by : ++lock_seq);
    if (split) {
        (void)ranges_push(l, right.type, right.start, right.end, right.seq);
        (void)ranges_push(l, left.type, left.start, left.end, ++lock_seq);
    }
}

/* The virtual pid of another guest holding a lock of `type` over any of
 * [start, end) on the file, or -1. */
static int holder_pid(const struct proxy_process *self, uint64_t dev,
                      uint64_t ino, short type, uint64_t start, uint64_t end)
{
    const struct proxy_world *w = self->world;
    for (int i = 0; i < w->nr_procs; i++) {
        const struct proxy_process *q = w->procs[i];
        if (q == self || q->zombie)
            continue;
        const struct proxy_plock *l = plock_find(&q->fds, dev, ino);
        for (size_t k = 0; l && k < l->nr; k++) {
            const struct proxy_plock_range *r = &l->ranges[k];
            if (r->type == type && r->start < end && r->end > start)
                return q->pid;
        }
    }
    return -1;
}

/* flock.l_start/l_len as an absolute [start, end); -EINVAL / -EOVERFLOW as
 * Linux's flock_to_posix_lock. */
static int absolute_range(int host_fd, const struct flock *fl, uint64_t *start,
                          uint64_t *end)
{
    long long base = 0;
    if (fl->l_whence == SEEK_CUR) {
        off_t cur = lseek(host_fd, 0, SEEK_CUR);
        if (cur < 0)
            return -errno;
        base = cur;
    } else if (fl->l_whence == SEEK_END) {
        struct stat st;
        if (fstat(host_fd, &st) < 0)
            return -errno;
        base = st.st_size;
    } else if (fl->l_whence != SEEK_SET) {
        return -EINVAL;
    }
    long long s, len = fl->l_len;
    if (__builtin_add_overflow(base, (long long)fl->l_start, &s))
        return -EOVERFLOW;
    if (len < 0) {
        s += len;
        if (s < 0)
            return -EINVAL;
        *start = (uint64_t)s;
        *end = (uint64_t)(s - len);
        return 0;
    }
    if (s < 0)
        return -EINVAL;
    long long last;
    if (len > 0 && __builtin_add_overflow(s, len - 1, &last))
        return -EOVERFLOW;
    *start = (uint64_t)s;
    *end = len == 0 ? PLOCK_EOF : (uint64_t)s + (uint64_t)len;
    return 0;
}

static void range_to_flock(struct flock *fl, uint64_t start, uint64_t end)
{
    fl->l_whence = SEEK_SET;
    fl->l_start = (off_t)start;
    fl->l_len = end == PLOCK_EOF ? 0 : (off_t)(end - start);
    fl->l_pid = 0; /* the OFD commands require it */
}

/* ---- deadlock detection -------------------------------------------------- */

/* Linux's MAX_DEADLK_ITERATIONS: how far a chain of waiters is followed. */
#define PLOCK_DEADLOCK_HOPS 10

/* The guest process whose POSIX lock conflicts first with q's request
 * (the host's F_OFD_GETLK answer on q's lock fd: its lock list's order,
 * as posix_lock_inode meets the blocker), or NULL: none, or not a
 * guest's POSIX lock (an OFD lock, a process outside the run). */
static struct proxy_process *plock_blocker(struct proxy_process *q,
                                           const struct proxy_plock_wait *w)
{
    const struct proxy_plock *l = plock_find(&q->fds, w->dev, w->ino);
    if (!l)
        return NULL;
    struct flock probe = {.l_type = w->type};
    range_to_flock(&probe, w->start, w->end);
    if (fcntl(l->lock_fd, F_OFD_GETLK, &probe) < 0 || probe.l_type == F_UNLCK)
        return NULL;
    uint64_t cs = (uint64_t)probe.l_start;
    uint64_t ce = probe.l_len == 0 ? PLOCK_EOF : cs + (uint64_t)probe.l_len;
    int pid = holder_pid(q, w->dev, w->ino, probe.l_type, cs, ce);
    return pid < 0 ? NULL : proxy_world_find(q->world, pid);
}

/* What q waits for in F_SETLKW, if a thread of it still does. */
static const struct proxy_plock_wait *plock_waiting(const struct proxy_process *q)
{
    const struct proxy_plock_wait *w = &q->fds.plock_wait;
    for (int i = 0; w->tid && i < q->nr_threads; i++)
        if (q->threads[i].tid == w->tid)
            return q->threads[i].state != PROXY_THREAD_EXITED &&
                           q->threads[i].events == w->events
                       ? w
                       : NULL;
    return NULL;
}

/* posix_locks_deadlock: owner, the holder of what p asks for, waits
 * through a chain of waiting holders for p itself. */
static bool plock_deadlock(struct proxy_process *p,
                           struct proxy_process *owner)
{
    for (int hop = 0; owner && hop < PLOCK_DEADLOCK_HOPS; hop++) {
        if (owner == p)
            return true;
        const struct proxy_plock_wait *w = plock_waiting(owner);
        if (!w)
            return false;
        owner = plock_blocker(owner, w);
    }
    return false;
}

/* A lock on something that is not a regular file (a pipe, a device) is
 * left to the host as it is: reopening it per process could block (a
 * FIFO) or fail (a socket). Such locks do not conflict between guests. */
static long host_lock(struct proxy_process *p, int host_fd, int cmd,
                      struct flock *fl, bool *copy_out)
{
    if (cmd == F_SETLKW && proxy_others_alive(p)) {
        if (fcntl(host_fd, F_SETLK, fl) == 0)
            return 0;
        return errno == EAGAIN || errno == EACCES
                   ? proxy_thread_retry_after(p, PROXY_LOCK_RETRY_NS)
                   : -errno;
    }
    if (fcntl(host_fd, cmd, fl) < 0)
        return -errno;
    *copy_out = cmd == F_GETLK;
    return 0;
}

static bool may_lock(int access, short type)
{
    if (type == F_RDLCK)
        return access != O_WRONLY;
    if (type == F_WRLCK)
        return access != O_RDONLY;
    return true;
}

long proxy_plock_fcntl(struct proxy_process *p, int host_fd, int cmd,
                       struct flock *fl, bool *copy_out)
{
    *copy_out = false;
    if (fl->l_type != F_RDLCK && fl->l_type != F_WRLCK &&
        (fl->l_type != F_UNLCK || cmd == F_GETLK))
        return -EINVAL;
    int fl_flags = fcntl(host_fd, F_GETFL);
    struct stat st;
    if (fl_flags < 0 || fstat(host_fd, &st) < 0)
        return -errno;
    int guest_access = fl_flags & O_ACCMODE;
    if (cmd != F_GETLK && !may_lock(guest_access, fl->l_type))
        return -EBADF;
    if (!S_ISREG(st.st_mode))
        return host_lock(p, host_fd, cmd, fl, copy_out);
    uint64_t start = 0, end = 0;
    int rc = absolute_range(host_fd, fl, &start, &end);
    if (rc < 0)
        return rc;
    struct proxy_plock *l = plock_find(&p->fds, st.st_dev, st.st_ino);
    if (!l && fl->l_type == F_UNLCK)
        return 0; /* holds nothing on this file */
    if (!l && (rc = plock_open(&p->fds, host_fd, &st, guest_access, &l)) < 0)
        return rc;
    if (cmd != F_GETLK && !may_lock(l->access, fl->l_type))
        return -EBADF; /* the file could only be reopened read-only or
                        * write-only, by the first lock's fd */
    struct flock ofd = *fl;
    range_to_flock(&ofd, start, end);
    if (cmd == F_GETLK) {
        if (fcntl(l->lock_fd, F_OFD_GETLK, &ofd) < 0)
            return -errno;
        if (ofd.l_type == F_UNLCK) {
            fl->l_type = F_UNLCK;
        } else {
            uint64_t cs = (uint64_t)ofd.l_start;
            uint64_t ce = ofd.l_len == 0 ? PLOCK_EOF : cs + (uint64_t)ofd.l_len;
            *fl = ofd;
            fl->l_pid = holder_pid(p, st.st_dev, st.st_ino, ofd.l_type, cs, ce);
        }
        *copy_out = true;
        return 0;
    }
    bool wait = cmd == F_SETLKW;
    struct proxy_thread *self = &p->threads[p->cur];
    /* This call again after a retry: the wait it recorded (current: the
     * thread has made no other call since). */
    struct proxy_plock_wait was = p->fds.plock_wait;
    bool again = was.tid == self->tid && was.events == self->events &&
                 was.dev == (uint64_t)st.st_dev &&
                 was.ino == (uint64_t)st.st_ino && was.start == start &&
                 was.end == end && was.type == fl->l_type;
    if (was.tid == self->tid)
        p->fds.plock_wait.tid = 0; /* this call ends, or records it anew */
    /* Waiting in the host would stop every guest: while another guest can
     * run, the caller only tries, and retries later (io.c's lock rule). */
    int ofd_cmd = wait && !proxy_others_alive(p) ? F_OFD_SETLKW : F_OFD_SETLK;
    if (fcntl(l->lock_fd, ofd_cmd, &ofd) < 0) {
        int err = errno;
        if (!wait || (err != EAGAIN && err != EACCES))
            return -err;
        /* the thread's events count once this call is counted (world.c
         * counts a call after its handler) */
        struct proxy_plock_wait req = {self->tid, self->events + 1,
                                       st.st_dev, st.st_ino, start, end,
                                       fl->l_type, -1};
        struct proxy_process *blocker = plock_blocker(p, &req);
        req.blocker = blocker ? blocker->pid : -1;
        /* Linux looks for a cycle when the request first blocks and when
         * a waiter is woken because its blocker went: one still blocked
         * by the same holder is not woken, so does not look again (the
         * process whose blocker changed is the one that sees a cycle). */
        if (!(again && was.blocker == req.blocker) &&
            plock_deadlock(p, blocker))
            return -EDEADLK;
        p->fds.plock_wait = req;
        return proxy_thread_retry_after(p, PROXY_LOCK_RETRY_NS);
    }
    ranges_set(l, fl->l_type, start, end);
    return 0;
}

/* ---- flock and OFD locks ------------------------------------------------- */

/*
 * flock and OFD locks belong to an open file description, which the host
 * holds for the guest: the host takes them as they are (io/fcntl.c). What
 * /proc/locks says of them is noted here, once the host granted them, in
 * a context of the description's guest fds (dups, fork children's copies
 * and SCM_RIGHTS copies share it, fs/fdpass.c): its flock lock (the pid of
 * the process that took it) and its OFD ranges, gone with the last of
 * them, as the host's locks go with the description.
 */
struct proxy_lockdesc {
    unsigned refs;
    struct proxy_lockdesc *next, *prev; /* all of the run's (lockdescs) */
    uint64_t dev, ino;                  /* the host file's */
    short flock_type;                   /* F_RDLCK, F_WRLCK; F_UNLCK: none */
    int flock_pid;                      /* the taker's run pid */
    uint64_t flock_seq;
    struct proxy_plock ofd;             /* its ranges (lock_fd unused) */
};

static struct proxy_lockdesc *lockdescs;

void proxy_lockdesc_put(struct proxy_lockdesc *d)
{
    if (!d || --d->refs > 0)
        return;
    if (d->prev)
        d->prev->next = d->next;
    else
        lockdescs = d->next;
    if (d->next)
        d->next->prev = d->prev;
    free(d->ofd.ranges);
    free(d);
}

void proxy_lockdesc_share(struct proxy_fd *to, const struct proxy_fd *from)
{
    if (!from->lockdesc || to->lockdesc == from->lockdesc)
        return;
    proxy_lockdesc_put(to->lockdesc);
    from->lockdesc->refs++;
    to->lockdesc = from->lockdesc;
}

/* The context of guest_fd's description, made on its first lock and
 * given to every guest fd of the description (a dup made before the
 * lock holds it as well). NULL: out of memory. */
static struct proxy_lockdesc *lockdesc_of(struct proxy_process *p,
                                          int guest_fd)
{
    struct proxy_fd *f = proxy_fd_get(&p->fds, guest_fd);
    struct stat st;
    if (!f || f->lockdesc)
        return f ? f->lockdesc : NULL;
    if (fstat(f->host_fd, &st) < 0)
        return NULL;
    struct proxy_lockdesc *d = calloc(1, sizeof(*d));
    if (!d)
        return NULL;
    *d = (struct proxy_lockdesc){
        .dev = st.st_dev,
        .ino = st.st_ino,
        .next = lockdescs,
        .flock_type = F_UNLCK,
        .ofd = {.dev = st.st_dev, .ino = st.st_ino, .lock_fd = -1}};
    if (lockdescs)
        lockdescs->prev = d;
    lockdescs = d;
    uint64_t desc = proxy_fd_file_id(&p->fds, guest_fd);
    const struct proxy_world *w = p->world;
    for (int i = 0; w && i < w->nr_procs; i++) {
        struct proxy_fdtable *t = &w->procs[i]->fds;
        for (int fd = 0; fd < t->cap; fd++) {
            if (t->fds[fd].kind != PROXY_FD_FREE && !t->fds[fd].lockdesc &&
                proxy_fd_file_id(t, fd) == desc) {
                t->fds[fd].lockdesc = d;
                d->refs++;
            }
        }
    }
    if (!f->lockdesc) { /* not in the world's tables (no world) */
        f->lockdesc = d;
        d->refs++;
    }
    return d;
}

void proxy_plock_noted_flock(struct proxy_process *p, int guest_fd, int op)
{
    short type = (op & LOCK_EX)   ? F_WRLCK
                 : (op & LOCK_SH) ? F_RDLCK
                 : (op & LOCK_UN) ? F_UNLCK
                                  : -1;
    if (type < 0)
        return;
    struct proxy_fd *f = proxy_fd_get(&p->fds, guest_fd);
    struct proxy_lockdesc *d = f && (type != F_UNLCK || f->lockdesc)
                                   ? lockdesc_of(p, guest_fd)
                                   : NULL;
    if (!d || d->flock_type == type)
        return; /* flock_lock_inode: the same type again changes nothing */
    /* a new type is a new lock (the old one deleted, the new inserted) */
    d->flock_type = type;
    d->flock_pid = p->pid;
    d->flock_seq = type != F_UNLCK ? ++lock_seq : 0;
}

void proxy_plock_noted_ofd(struct proxy_process *p, int guest_fd,
                           const struct flock *fl)
{
    struct proxy_fd *f = proxy_fd_get(&p->fds, guest_fd);
    uint64_t start, end;
    if (!f || (fl->l_type == F_UNLCK && !f->lockdesc) ||
        absolute_range(f->host_fd, fl, &start, &end) < 0)
        return;
    struct proxy_lockdesc *d = lockdesc_of(p, guest_fd);
    if (d)
        ranges_set(&d->ofd, fl->l_type, start, end);
}

/* ---- /proc/locks --------------------------------------------------------- */

/* One line of /proc/locks. */
struct lock_line {
    uint64_t seq;
    const char *kind; /* "POSIX ", "OFDLCK", "FLOCK " */
    short type;
    int pid;
    uint64_t dev, ino, start, end;
};

struct lock_lines {
    struct lock_line *v;
    size_t n, cap;
    bool failed;
};

static void line_add(struct lock_lines *ls, struct lock_line l)
{
    if (ls->n == ls->cap) {
        size_t cap = ls->cap ? ls->cap * 2 : 16;
        struct lock_line *v = realloc(ls->v, cap * sizeof(*v));
        if (!v) {
            ls->failed = true;
            return;
        }
        ls->v = v;
        ls->cap = cap;
    }
    ls->v[ls->n++] = l;
}

static int newest_first(const void *a, const void *b)
{
    const struct lock_line *x = a, *y = b;
    return x->seq > y->seq ? -1 : x->seq < y->seq;
}

/* The file's device and inode as stat shows them to the guest. */
static void guest_file_id(struct proxy_process *p, uint64_t host_dev,
                          uint64_t host_ino, uint64_t *dev, uint64_t *ino)
{
    *dev = host_dev;
    *ino = host_ino;
    if (!p->det->cfg.virtualize_metadata)
        return;
    *ino = det_ino(p->det, host_dev, host_ino);
    *dev = det_dev(p->det, host_dev);
}

static void ranges_lines(struct proxy_process *p, const struct proxy_plock *l,
                         const char *kind, int pid, struct lock_lines *ls)
{
    uint64_t dev, ino;
    guest_file_id(p, l->dev, l->ino, &dev, &ino);
    for (size_t k = 0; k < l->nr; k++)
        line_add(ls, (struct lock_line){l->ranges[k].seq, kind,
                                        l->ranges[k].type, pid, dev, ino,
                                        l->ranges[k].start, l->ranges[k].end});
}

/* The POSIX locks of the run's processes that the reader sees. */
static void posix_lines(struct proxy_process *p, struct lock_lines *ls)
{
    const struct proxy_world *w = p->world;
    for (int i = 0; w && i < w->nr_procs; i++) {
        const struct proxy_process *q = w->procs[i];
        int pid = q->zombie ? 0 : proxy_ns_pid_of(p, q);
        for (size_t f = 0; pid > 0 && f < q->fds.nr_plocks; f++)
            ranges_lines(p, &q->fds.plocks[f], "POSIX ", pid, ls);
    }
}

/* The flock and OFD locks of the run's open file descriptions: an OFD
 * lock's pid is -1; a flock lock's its taker's, and a lock whose taker
 * the reader cannot see (reaped, another pid namespace) is not listed
 * (locks_translate_pid gives 0). */
static void description_lines(struct proxy_process *p, struct lock_lines *ls)
{
    for (const struct proxy_lockdesc *d = lockdescs; d; d = d->next) {
        struct proxy_process *q = d->flock_type != F_UNLCK && p->world
                                      ? proxy_world_find(p->world, d->flock_pid)
                                      : NULL;
        int pid = q ? proxy_ns_pid_of(p, q) : 0;
        if (pid > 0) {
            struct lock_line l = {d->flock_seq, "FLOCK ", d->flock_type, pid,
                                  0, 0, 0, PLOCK_EOF};
            guest_file_id(p, d->dev, d->ino, &l.dev, &l.ino);
            line_add(ls, l);
        }
        ranges_lines(p, &d->ofd, "OFDLCK", -1, ls);
    }
}

/*
 * /proc/locks (fs/locks.c's locks_show, Linux 6.12) of the run: the POSIX
 * locks of its guests, from the mirror, the owner's pid as the reader
 * sees it (a lock whose owner it cannot see is not listed), and the flock
 * and OFD locks of their open file descriptions; the file's device and
 * inode as the guest's stat shows them. Newest first, as Linux inserts
 * each lock at the head of its global list (one CPU's list: the run has
 * one). The host's locks (of processes outside the run) are not the run's
 * machine. Waiters ("->" lines) are not listed.
 */
int proxy_plock_gen_locks(struct proxy_process *p, struct vbuf *b)
{
    struct lock_lines ls = {0};
    posix_lines(p, &ls);
    description_lines(p, &ls);
    if (ls.failed) {
        free(ls.v);
        return -ENOMEM;
    }
    if (ls.n > 1)
        qsort(ls.v, ls.n, sizeof(*ls.v), newest_first);
    for (size_t k = 0; k < ls.n; k++) {
        const struct lock_line *l = &ls.v[k];
        vb_printf(b, "%zu: %s ADVISORY  %s %d %02x:%02x:%llu ", k + 1, l->kind,
                  l->type == F_WRLCK ? "WRITE" : "READ", l->pid, major(l->dev),
                  minor(l->dev), (unsigned long long)l->ino);
        if (l->end == PLOCK_EOF)
            vb_printf(b, "%llu EOF\n", (unsigned long long)l->start);
        else
            vb_printf(b, "%llu %llu\n", (unsigned long long)l->start,
                      (unsigned long long)l->end - 1);
    }
    free(ls.v);
    return 0;
}
