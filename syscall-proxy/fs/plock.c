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
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

/* [start, end) in bytes; end PLOCK_EOF means "to the end, however far". */
#define PLOCK_EOF UINT64_MAX

struct proxy_plock_range {
    short type; /* F_RDLCK or F_WRLCK */
    uint64_t start, end;
};

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
                       uint64_t end)
{
    if (l->nr == l->cap) {
        size_t cap = l->cap ? l->cap * 2 : 4;
        void *r = realloc(l->ranges, cap * sizeof(*l->ranges));
        if (!r)
            return -ENOMEM;
        l->ranges = r;
        l->cap = cap;
    }
    l->ranges[l->nr++] = (struct proxy_plock_range){type, start, end};
    return 0;
}

/*
 * Mirrors a granted F_SETLK: [start, end) now has `type` (F_UNLCK removes
 * it). Only F_GETLK reads the mirror, to name a holder; the host has the
 * authoritative locks, so running out of memory here costs only that name.
 */
static void ranges_set(struct proxy_plock *l, short type, uint64_t start,
                       uint64_t end)
{
    size_t n = l->nr;
    for (size_t i = 0; i < n;) {
        struct proxy_plock_range r = l->ranges[i];
        if (r.end <= start || r.start >= end) {
            i++;
            continue;
        }
        l->ranges[i] = l->ranges[--n];
        l->nr = n;
        if (r.start < start)
            (void)ranges_push(l, r.type, r.start, start);
        if (r.end > end)
            (void)ranges_push(l, r.type, end, r.end);
    }
    if (type != F_UNLCK)
        (void)ranges_push(l, type, start, end);
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

/* ---- /proc/locks --------------------------------------------------------- */

static int range_by_start(const void *a, const void *b)
{
    const struct proxy_plock_range *x = a, *y = b;
    return x->start < y->start ? -1 : x->start > y->start;
}

/*
 * One file's POSIX locks of one owner as Linux holds them: its ranges in
 * order, a range adjacent to one of the same type merged into it (the
 * mirror keeps them apart; posix_lock_inode joins them). *n in and out.
 */
static void ranges_as_linux(const struct proxy_plock *l,
                            struct proxy_plock_range *out, size_t *n)
{
    memcpy(out, l->ranges, l->nr * sizeof(*out));
    qsort(out, l->nr, sizeof(*out), range_by_start);
    size_t k = 0;
    for (size_t i = 0; i < l->nr; i++) {
        if (k > 0 && out[k - 1].type == out[i].type &&
            out[k - 1].end == out[i].start)
            out[k - 1].end = out[i].end;
        else
            out[k++] = out[i];
    }
    *n = k;
}

/* The file's device and inode as stat shows them to the guest. */
static void guest_file_id(struct proxy_process *p, const struct proxy_plock *l,
                          uint64_t *dev, uint64_t *ino)
{
    *dev = l->dev;
    *ino = l->ino;
    if (!p->det->cfg.virtualize_metadata)
        return;
    *ino = det_ino(p->det, l->dev, l->ino);
    *dev = det_dev(p->det, l->dev);
}

/*
 * /proc/locks (fs/locks.c's locks_show, Linux 6.12) of the run: the POSIX
 * locks of its guests, from the mirror, the owner's pid as the reader
 * sees it (a lock whose owner it cannot see is not listed), the file's
 * device and inode as the guest's stat shows them. Ordered by owner in
 * the run's order, then by file and offset: Linux lists the newest lock
 * first, an order the mirror does not keep. The host's locks (of
 * processes outside the run) are not the run's machine; flock and OFD
 * locks, which hvrun passes to the host, are not listed.
 */
int proxy_plock_gen_locks(struct proxy_process *p, struct vbuf *b)
{
    const struct proxy_world *w = p->world;
    long long id = 0;
    for (int i = 0; w && i < w->nr_procs; i++) {
        const struct proxy_process *q = w->procs[i];
        int pid = q->zombie ? 0 : proxy_ns_pid_of(p, q);
        for (size_t f = 0; pid > 0 && f < q->fds.nr_plocks; f++) {
            const struct proxy_plock *l = &q->fds.plocks[f];
            if (l->nr == 0)
                continue;
            struct proxy_plock_range *r = malloc(l->nr * sizeof(*r));
            if (!r)
                return -ENOMEM;
            size_t n;
            ranges_as_linux(l, r, &n);
            uint64_t dev, ino;
            guest_file_id(p, l, &dev, &ino);
            for (size_t k = 0; k < n; k++) {
                vb_printf(b, "%lld: POSIX  ADVISORY  %s %d %02x:%02x:%llu ",
                          ++id, r[k].type == F_WRLCK ? "WRITE" : "READ", pid,
                          major(dev), minor(dev), (unsigned long long)ino);
                if (r[k].end == PLOCK_EOF)
                    vb_printf(b, "%llu EOF\n", (unsigned long long)r[k].start);
                else
                    vb_printf(b, "%llu %llu\n", (unsigned long long)r[k].start,
                              (unsigned long long)r[k].end - 1);
            }
            free(r);
        }
    }
    return 0;
}
