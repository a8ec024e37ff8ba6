/*
 * fasync.c - an open file's owner and the signals it is sent: F_SETOWN,
 * F_SETOWN_EX, F_SETSIG, directory notification (F_NOTIFY, dnotify) and
 * leases (F_SETLEASE, F_GETLEASE). All of it is kept by hvrun per open
 * file description (struct proxy_fowner, shared by dups and fork
 * children as Linux's f_owner is), never given to the host: the host's
 * owner would be hvrun, and a host lease would make hvrun's own open of
 * the file wait in the host kernel, which stops every guest.
 *
 *  - dnotify: each registration is a watch on the directory in one inotify
 *    instance of hvrun's. The events come from the file operations hvrun
 *    makes for the guests, in their order; they are read after every
 *    system call while a registration exists (proxy_fasync_after_syscall)
 *    and each matching registration's owner gets its signal then, as
 *    Linux sends it from inside the call that changed the directory.
 *    Changes made by processes outside the run arrive when the host
 *    reports them: host-timed.
 *  - leases: a table of the run's leases. An open of a leased file by the
 *    run that conflicts (any open against a write lease, a write or O_TRUNC
 *    open against a read lease) starts the break: the holder is signalled
 *    once, the opener waits on the logical clock until the lease is given
 *    up or downgraded, or lease-break-time (45 s, Linux's default) passes
 *    and it is taken away; O_NONBLOCK opens get EWOULDBLOCK. Opens by
 *    processes outside the run do not break a lease, nor are they counted
 *    when one is taken.
 */
#include "proxy.h"
#include "fdtable.h"
#include "kernel.h"
#include "io.h"
#include "internal.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "det.h"

/* Linux's /proc/sys/fs/lease-break-time default, in ns. */
#define LEASE_BREAK_NS (45ULL * 1000000000ULL)

struct proxy_fowner {
    int refs;
    int type;   /* F_OWNER_TID, F_OWNER_PID, F_OWNER_PGRP */
    int pid;    /* the run's (global) number, 0 for none */
    int signum; /* F_SETSIG: 0 is SIGIO without details */
    struct proxy_world *world; /* where its owner lives (registered) */
    uint64_t dev, ino;         /* the watched directory, the leased file */
    /* dnotify: the DN_* mask (DN_MULTISHOT included), 0 for none; the fd
     * F_NOTIFY named (si_fd); hvrun's watch and a dup of the directory. */
    uint32_t dn_mask;
    int dn_fd, dn_wd, dn_dir;
    /* lease: F_RDLCK or F_WRLCK, F_UNLCK for none; the fd it was taken on;
     * during a break, the type it goes to and the logical deadline. */
    int lease, lease_fd;
    bool breaking;
    int breaking_to;
    int64_t break_deadline;
    /* O_ASYNC (F_SETFL, FIOASYNC): the host fd it was set through (one of
     * the guest's, borrowed: -1 once that fd is closed), the guest fd
     * (si_fd), which way the file goes, and what was last seen of it. */
    bool async, async_reads, async_writes, async_socket;
    bool async_no_queue; /* not a socket, and FIONREAD said ENOTTY once */
    int async_host_fd, async_fd;
    int async_queued;    /* FIONREAD, -1 where it has none */
    short async_revents; /* poll's answer */
};

/* The open files with a dnotify registration or a lease. */
static struct proxy_fowner **active;
static size_t nr_active, cap_active;
static uint64_t active_changes; /* owners added to or dropped from active */
static int notify_fd = -1; /* hvrun's inotify instance for dnotify */
static size_t nr_dnotify, nr_async;

static bool is_active(const struct proxy_fowner *o)
{
    return o->dn_mask || o->lease != F_UNLCK || o->async;
}

static int activate(struct proxy_fowner *o, struct proxy_world *w)
{
    o->world = w;
    for (size_t i = 0; i < nr_active; i++)
        if (active[i] == o)
            return 0;
    if (nr_active == cap_active) {
        size_t cap = cap_active ? cap_active * 2 : 8;
        void *n = realloc(active, cap * sizeof(*active));
        if (!n)
            return -ENOMEM;
        active = n;
        cap_active = cap;
    }
    active[nr_active++] = o;
    active_changes++;
    return 0;
}

static void deactivate_if_idle(struct proxy_fowner *o)
{
    if (is_active(o))
        return;
    for (size_t i = 0; i < nr_active; i++)
        if (active[i] == o) {
            active[i] = active[--nr_active];
            active_changes++;
            return;
        }
}

/* ---- owners ---------------------------------------------------------------- */

static void dnotify_drop(struct proxy_fowner *o);
static void async_after_syscall(void);

void proxy_fowner_put(struct proxy_fowner *o)
{
    if (!o || --o->refs > 0)
        return;
    dnotify_drop(o);
    o->lease = F_UNLCK;
    if (o->async)
        nr_async--;
    o->async = false;
    deactivate_if_idle(o);
    free(o);
}

static struct proxy_fowner *fowner_of(struct proxy_fd *f)
{
    if (!f->owner && (f->owner = calloc(1, sizeof(*f->owner)))) {
        f->owner->refs = 1;
        f->owner->type = F_OWNER_TID; /* a fresh f_owner, as Linux shows it */
        f->owner->lease = F_UNLCK;
        f->owner->dn_wd = f->owner->dn_dir = -1;
        f->owner->async_host_fd = -1;
    }
    return f->owner;
}

void proxy_fowner_share(struct proxy_fd *to, struct proxy_fd *from)
{
    struct proxy_fowner *o = fowner_of(from);
    if (!o || to->owner == o)
        return;
    proxy_fowner_put(to->owner);
    o->refs++;
    to->owner = o;
}

/* Whether pid names a thread, process or process group of the run now
 * (Linux's find_vpid: any struct pid still in use). */
static bool run_pid_exists(struct proxy_process *p, int pid)
{
    for (int i = 0; p->world && i < p->world->nr_procs; i++) {
        struct proxy_process *q = p->world->procs[i];
        if (q->zombie)
            continue;
        if (q->pid == pid || q->pgid == pid || q->sid == pid)
            return true;
        for (int k = 0; k < q->nr_threads; k++)
            if (q->threads[k].state != PROXY_THREAD_EXITED &&
                (k == q->cur ? q->tid : q->threads[k].tid) == pid)
                return true;
    }
    return pid == p->pid || pid == p->pgid || pid == p->tid;
}

/* f_setown/f_setown_ex: vpid in the caller's pid namespace; ESRCH for
 * one that does not exist. */
static long fowner_set(struct proxy_process *p, struct proxy_fd *f, int type,
                       int vpid)
{
    int pid = vpid ? proxy_ns_global_nr(p, vpid) : 0;
    if (vpid && (pid <= 0 || !run_pid_exists(p, pid)))
        return -ESRCH;
    struct proxy_fowner *o = fowner_of(f);
    if (!o)
        return -ENOMEM;
    o->type = type;
    o->pid = pid;
    return 0;
}

/* ---- sending ------------------------------------------------------------------ */

/* band_table of fs/fcntl.c, by POLL_* reason. */
static long band_of(int reason)
{
    static const long bands[] = {
        POLLIN | POLLRDNORM,                 /* POLL_IN */
        POLLOUT | POLLWRNORM | POLLWRBAND,   /* POLL_OUT */
        POLLIN | POLLRDNORM | POLLMSG,       /* POLL_MSG */
        POLLERR,                             /* POLL_ERR */
        POLLPRI | POLLRDBAND,                /* POLL_PRI */
        POLLHUP | POLLERR,                   /* POLL_HUP */
    };
    int i = reason - POLL_IN;
    return i >= 0 && i < 6 ? bands[i] : ~0L;
}

/* The thread tid of the run and its process, or NULL. */
static struct proxy_process *process_of_tid(struct proxy_world *w, int tid)
{
    for (int i = 0; i < w->nr_procs; i++) {
        struct proxy_process *q = w->procs[i];
        for (int k = 0; !q->zombie && k < q->nr_threads; k++)
            if (q->threads[k].state != PROXY_THREAD_EXITED &&
                (k == q->cur ? q->tid : q->threads[k].tid) == tid)
                return q;
    }
    return NULL;
}

/* send_sigio: the owner gets F_SETSIG's signal with the POLL_* reason,
 * the band and the fd, or a plain SIGIO. */
static void send_sigio(const struct proxy_fowner *o, int fd, int reason)
{
    struct proxy_world *w = o->world;
    if (!w || !o->pid)
        return;
    siginfo_t si;
    memset(&si, 0, sizeof(si));
    int sig = o->signum ? o->signum : SIGIO;
    si.si_signo = sig;
    if (o->signum) {
        si.si_code = reason;
        si.si_band = band_of(reason);
        si.si_fd = fd;
    } else {
        si.si_code = SI_KERNEL;
    }
    if (o->type == F_OWNER_TID) {
        struct proxy_process *q = process_of_tid(w, o->pid);
        if (q)
            proxy_signal_raise_thread(q, o->pid, sig, &si);
        return;
    }
    for (int i = 0; i < w->nr_procs; i++) {
        struct proxy_process *q = w->procs[i];
        if (!q->zombie && (o->type == F_OWNER_PGRP ? q->pgid == o->pid
                                                   : q->pid == o->pid))
            proxy_signal_raise(q, sig, &si);
    }
}

/* dnotify and leases make the caller's process the owner (__f_setown with
 * PIDTYPE_TGID), whatever F_SETOWN said before. */
static void own_by_caller(struct proxy_process *p, struct proxy_fowner *o)
{
    o->type = F_OWNER_PID;
    o->pid = p->pid;
}

/* The file behind f (which must be of type want, else wrong) and its
 * open file's owner record; 0 or -errno. */
static long file_and_owner(struct proxy_fd *f, mode_t want, long wrong,
                           struct stat *st, struct proxy_fowner **o)
{
    if (fstat(f->host_fd, st) < 0)
        return -EBADF;
    if ((st->st_mode & S_IFMT) != want)
        return wrong;
    *o = fowner_of(f);
    return *o ? 0 : -ENOMEM;
}

static bool same_file(int host_fd, uint64_t *dev, uint64_t *ino)
{
    struct stat st;
    if (fstat(host_fd, &st) < 0)
        return false;
    *dev = st.st_dev;
    *ino = st.st_ino;
    return true;
}

/* ---- dnotify ------------------------------------------------------------------ */

static uint32_t inotify_mask_of(uint32_t dn)
{
    uint32_t m = 0;
    if (dn & DN_ACCESS)
        m |= IN_ACCESS;
    if (dn & DN_MODIFY)
        m |= IN_MODIFY;
    if (dn & DN_CREATE)
        m |= IN_CREATE | IN_MOVED_TO;
    if (dn & DN_DELETE)
        m |= IN_DELETE | IN_MOVED_FROM;
    if (dn & DN_RENAME) /* a rename within the directory: both halves */
        m |= IN_MOVED_FROM | IN_MOVED_TO;
    if (dn & DN_ATTRIB)
        m |= IN_ATTRIB;
    return m;
}

/* Gives the watch on o's directory the union of every registration's
 * events there (one inotify watch per inode), or removes it. */
static void rewatch(const struct proxy_fowner *o)
{
    uint32_t mask = 0;
    for (size_t i = 0; i < nr_active; i++)
        if (active[i]->dn_mask && active[i]->dev == o->dev &&
            active[i]->ino == o->ino)
            mask |= inotify_mask_of(active[i]->dn_mask);
    if (mask) {
        char link[64];
        snprintf(link, sizeof(link), "/proc/self/fd/%d", o->dn_dir);
        (void)inotify_add_watch(notify_fd, link, mask);
    } else if (o->dn_wd >= 0) {
        (void)inotify_rm_watch(notify_fd, o->dn_wd);
    }
}

static void dnotify_drop(struct proxy_fowner *o)
{
    if (!o->dn_mask)
        return;
    o->dn_mask = 0;
    nr_dnotify--;
    rewatch(o);
    close(o->dn_dir);
    o->dn_dir = o->dn_wd = -1;
    deactivate_if_idle(o);
}

/* F_NOTIFY on the directory fd guest_fd (fcntl_dirnotify): masks of one
 * open file add up; 0 removes its registration. */
static long set_dnotify(struct proxy_process *p, struct proxy_fd *f,
                        int guest_fd, uint32_t arg)
{
    struct stat st;
    struct proxy_fowner *o;
    long r = file_and_owner(f, S_IFDIR, -ENOTDIR, &st, &o);
    if (r < 0)
        return r;
    if ((arg & ~DN_MULTISHOT) == 0) {
        dnotify_drop(o);
        return 0;
    }
    if (notify_fd < 0 &&
        (notify_fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC)) < 0)
        return -errno;
    if (!o->dn_mask) {
        if ((o->dn_dir = fcntl(f->host_fd, F_DUPFD_CLOEXEC, 3)) < 0)
            return -errno;
        char link[64];
        snprintf(link, sizeof(link), "/proc/self/fd/%d", o->dn_dir);
        o->dn_wd = inotify_add_watch(notify_fd, link,
                                     inotify_mask_of(arg) | IN_MASK_ADD);
        if (o->dn_wd < 0) {
            int err = errno;
            close(o->dn_dir);
            o->dn_dir = -1;
            return -err;
        }
        nr_dnotify++;
    }
    o->dev = st.st_dev;
    o->ino = st.st_ino;
    o->dn_mask |= arg;
    o->dn_fd = guest_fd;
    own_by_caller(p, o);
    int rc = activate(o, p->world);
    if (rc == 0)
        rewatch(o);
    return rc;
}

/* The DN_* kind of an inotify event (0: none dnotify sees). */
static uint32_t dn_event_of(uint32_t in_mask)
{
    if (in_mask & IN_ACCESS)
        return DN_ACCESS;
    if (in_mask & IN_MODIFY)
        return DN_MODIFY;
    if (in_mask & IN_ATTRIB)
        return DN_ATTRIB;
    if (in_mask & (IN_CREATE | IN_MOVED_TO))
        return DN_CREATE;
    if (in_mask & (IN_DELETE | IN_MOVED_FROM))
        return DN_DELETE;
    return 0;
}

/* dnotify_handle_event: each registration on the event's directory that
 * asked for one of its kinds is signalled; one without DN_MULTISHOT is
 * gone after that. */
static void dnotify_event(int wd, uint32_t dn)
{
    for (size_t i = 0; i < nr_active; i++) {
        struct proxy_fowner *o = active[i];
        if (!o->dn_mask || o->dn_wd != wd || !(o->dn_mask & dn))
            continue;
        send_sigio(o, o->dn_fd, POLL_MSG);
        if (!(o->dn_mask & DN_MULTISHOT)) {
            dnotify_drop(o);
            i--; /* dnotify_drop may have moved another into slot i */
        }
    }
}

/* Whether the IN_MOVED_FROM event from is a rename within its directory:
 * its IN_MOVED_TO (the same cookie, queued with it) is in rest, n bytes of
 * the events after it, on the same watch. */
static bool renamed_within(const char *rest, ssize_t n,
                           const struct inotify_event *from)
{
    for (ssize_t at = 0; at + (ssize_t)sizeof(struct inotify_event) <= n;) {
        const struct inotify_event *e =
            (const struct inotify_event *)(const void *)(rest + at);
        if ((e->mask & IN_MOVED_TO) && e->cookie == from->cookie)
            return e->wd == from->wd;
        at += (ssize_t)(sizeof(*e) + e->len);
    }
    return false;
}

void proxy_fasync_after_syscall(struct proxy_process *p)
{
    (void)p;
    if (nr_async)
        async_after_syscall();
    if (!nr_dnotify)
        return;
    char buf[4096] __attribute__((aligned(__alignof__(struct inotify_event))));
    for (;;) {
        ssize_t n = read(notify_fd, buf, sizeof(buf));
        if (n <= 0)
            return;
        for (ssize_t at = 0; at < n;) {
            const struct inotify_event *e =
                (const struct inotify_event *)(void *)(buf + at);
            at += (ssize_t)(sizeof(*e) + e->len);
            if (e->mask & IN_IGNORED) /* the directory is gone */
                continue;
            /* fsnotify_move: FS_DN_RENAME on the old directory first (only
             * for a rename within one directory: its MOVED_TO, with the
             * same cookie, comes on the same watch), then its
             * FS_MOVED_FROM, then the new one's FS_MOVED_TO: each
             * signalled on its own. */
            if ((e->mask & IN_MOVED_FROM) && renamed_within(buf + at, n - at, e))
                dnotify_event(e->wd, DN_RENAME);
            uint32_t dn = dn_event_of(e->mask);
            if (dn)
                dnotify_event(e->wd, dn);
        }
    }
}

/* ---- O_ASYNC ------------------------------------------------------------------ */

/* What the host says of the file now: poll's events and the bytes queued.
 * A file that is not a socket keeps its type, and with it whether it has
 * a FIONREAD (a socket's answer changes with its state: a listener's is
 * EINVAL); asked once, not after each call (a fuzzer's O_ASYNC files in
 * /proc and /sys have none). */
#define ASYNC_EVENTS (POLLIN | POLLOUT | POLLPRI | POLLRDHUP)

/* The queue's part of async_look, poll's answer given. */
static void async_look_queue(struct proxy_fowner *o, short revents)
{
    int host_fd = o->async_host_fd;
    o->async_revents = revents;
    o->async_queued = -1;
    if (o->async_no_queue)
        return;
    if (ioctl(host_fd, FIONREAD, &o->async_queued) < 0) {
        o->async_no_queue = errno == ENOTTY && !o->async_socket;
        o->async_queued = -1;
    }
}

static void async_look(struct proxy_fowner *o)
{
    struct pollfd pf = {o->async_host_fd, ASYNC_EVENTS, 0};
    async_look_queue(o, poll(&pf, 1, 0) == 1 ? pf.revents : 0);
}

void proxy_fasync_set(struct proxy_process *p, int guest_fd, bool on)
{
    struct proxy_fd *f = proxy_fd_get(&p->fds, guest_fd);
    struct proxy_fowner *o = f ? fowner_of(f) : NULL;
    if (!o || (!on && !o->async))
        return;
    if (!on) {
        o->async = false;
        nr_async--;
        deactivate_if_idle(o);
        return;
    }
    if (!o->async)
        nr_async++;
    o->async = true;
    o->async_host_fd = f->host_fd;
    o->async_fd = guest_fd;
    int acc = fcntl(f->host_fd, F_GETFL) & O_ACCMODE;
    o->async_reads = acc != O_WRONLY;
    o->async_writes = acc != O_RDONLY;
    struct stat st;
    o->async_socket = fstat(f->host_fd, &st) == 0 && S_ISSOCK(st.st_mode);
    o->async_no_queue = false;
    async_look(o);
    (void)activate(o, p->world);
}

void proxy_fasync_fd_closed(struct proxy_fowner *o, int host_fd)
{
    if (o && o->async && o->async_host_fd == host_fd)
        o->async_host_fd = -1; /* its number may name another file now */
}

/*
 * kill_fasync where the file's I/O moved: a reader is told of data that
 * arrived (the queue grew, or poll turned readable where no queue is
 * counted: a listening socket's connection), a pipe's writer of room a
 * read made; writability regained; a hang-up (a socket's POLL_HUP; a
 * pipe's last writer gone tells its readers POLL_IN, its last reader gone
 * its writers POLL_OUT, as pipe_release does).
 */
static void async_event(struct proxy_fowner *o, short revents)
{
    const short hup = POLLHUP | POLLRDHUP | POLLERR;
    short was = o->async_revents;
    int before = o->async_queued;
    async_look_queue(o, revents);
    short now = o->async_revents;
    int queued = o->async_queued;
    bool counted = queued >= 0 && before >= 0;
    bool hung_up = (now & hup) && !(was & hup);
    if (o->async_reads &&
        ((counted && queued > before) ||
         (!counted && (now & POLLIN) && !(was & POLLIN))))
        send_sigio(o, o->async_fd, POLL_IN);
    else if (o->async_reads && hung_up && !o->async_socket)
        send_sigio(o, o->async_fd, POLL_IN);
    if (hung_up && o->async_socket)
        send_sigio(o, o->async_fd, POLL_HUP);
    if (o->async_writes && !o->async_socket &&
        ((counted && queued < before) || hung_up))
        send_sigio(o, o->async_fd, POLL_OUT);
    else if (o->async_writes && (now & POLLOUT) && !(was & POLLOUT))
        send_sigio(o, o->async_fd, POLL_OUT);
    if ((now & POLLPRI) && !(was & POLLPRI))
        send_sigio(o, o->async_fd, POLL_PRI);
}

/* One poll for every O_ASYNC file (a fuzzer sets it on hundreds), then
 * each one's queue and signals. */
#define ASYNC_POLL_BATCH 256

static void async_after_syscall(void)
{
    struct pollfd pf[ASYNC_POLL_BATCH];
    struct proxy_fowner *of[ASYNC_POLL_BATCH];
    size_t i = 0;
    while (i < nr_active) {
        nfds_t n = 0;
        for (; i < nr_active && n < ASYNC_POLL_BATCH; i++) {
            struct proxy_fowner *o = active[i];
            if (!o->async || o->async_host_fd < 0)
                continue;
            pf[n] = (struct pollfd){o->async_host_fd, ASYNC_EVENTS, 0};
            of[n++] = o;
        }
        if (n > 0 && poll(pf, n, 0) < 0)
            for (nfds_t k = 0; k < n; k++)
                pf[k].revents = 0;
        /* A SIGIO sent may end a process, and its files with it: once
         * the list changed, the rest is looked at after the next call. */
        uint64_t changes = active_changes;
        for (nfds_t k = 0; k < n; k++) {
            if (active_changes != changes)
                return;
            async_event(of[k], pf[k].revents);
        }
    }
}

/* ---- leases ---------------------------------------------------------------- */

/* check_conflicting_open over the run: a read lease wants no writer of the
 * file; a write lease no other open of it than this open file's own. */
static bool lease_conflicts_with_opens(struct proxy_process *p,
                                       const struct proxy_fowner *o, int type)
{
    for (int i = 0; p->world && i < p->world->nr_procs; i++) {
        struct proxy_process *q = p->world->procs[i];
        if (q->zombie)
            continue;
        for (int fd = 0; fd < q->fds.cap; fd++) {
            const struct proxy_fd *g = &q->fds.fds[fd];
            uint64_t dev, ino;
            if (g->kind == PROXY_FD_FREE ||
                !same_file(g->host_fd, &dev, &ino) || dev != o->dev ||
                ino != o->ino)
                continue;
            int acc = fcntl(g->host_fd, F_GETFL) & O_ACCMODE;
            bool writer = acc == O_WRONLY || acc == O_RDWR;
            if (type == F_RDLCK ? writer : g->owner != o)
                return true;
        }
    }
    return false;
}

static void lease_end(struct proxy_fowner *o)
{
    o->lease = F_UNLCK;
    o->breaking = false;
    deactivate_if_idle(o);
}

static long set_lease(struct proxy_process *p, struct proxy_fd *f,
                      int guest_fd, int type)
{
    if (type != F_RDLCK && type != F_WRLCK && type != F_UNLCK)
        return -EINVAL;
    struct stat st;
    struct proxy_fowner *o;
    long r = file_and_owner(f, S_IFREG, -EINVAL, &st, &o);
    if (r < 0)
        return r;
    if (type == F_UNLCK) {
        if (o->lease != F_UNLCK)
            lease_end(o);
        return 0;
    }
    /* generic_setlease: the owner of the file, or CAP_LEASE */
    if (p->cred.euid != st.st_uid && !proxy_ns_init_capable(p))
        return -EACCES;
    int acc = fcntl(f->host_fd, F_GETFL) & O_ACCMODE;
    if (type == F_RDLCK && acc != O_RDONLY)
        return -EAGAIN;
    o->dev = st.st_dev;
    o->ino = st.st_ino;
    if (lease_conflicts_with_opens(p, o, type))
        return -EAGAIN;
    /* another open file's lease on it: only read leases share a file */
    for (size_t i = 0; i < nr_active; i++) {
        const struct proxy_fowner *x = active[i];
        if (x != o && x->lease != F_UNLCK && x->dev == o->dev &&
            x->ino == o->ino && (type == F_WRLCK || x->lease == F_WRLCK))
            return -EAGAIN;
    }
    o->lease = type;
    o->lease_fd = guest_fd;
    if (o->breaking && o->breaking_to == F_RDLCK && type == F_RDLCK)
        o->breaking = false; /* the downgrade the breaker waited for */
    own_by_caller(p, o);
    return activate(o, p->world);
}

static long get_lease(struct proxy_fd *f)
{
    const struct proxy_fowner *o = f->owner;
    if (!o || o->lease == F_UNLCK)
        return F_UNLCK;
    return o->breaking ? o->breaking_to : o->lease;
}

static int64_t monotonic_ns(struct proxy_process *p)
{
    struct timespec ts;
    det_clock_gettime(p->det, CLOCK_MONOTONIC, &ts);
    return det_timespec_ns(&ts);
}

/* Whether lease holder o stands in the way of an open with flags. */
static bool lease_conflicts(const struct proxy_fowner *o, uint64_t dev,
                            uint64_t ino, bool writes)
{
    return o->lease != F_UNLCK && o->dev == dev && o->ino == ino &&
           (o->lease == F_WRLCK || writes);
}

/* One conflicting lease at now: its break starts (the holder signalled
 * once, the type it goes to set), or, past its deadline, it is taken
 * away or downgraded (time_out_leases). True while it still conflicts;
 * *deadline the earliest deadline of those that do. */
static bool lease_breaks(struct proxy_fowner *o, bool writes, int64_t now,
                         int64_t *deadline)
{
    if (!o->breaking) {
        o->breaking = true;
        o->breaking_to = writes ? F_UNLCK : F_RDLCK;
        o->break_deadline = now + (int64_t)LEASE_BREAK_NS;
        send_sigio(o, o->lease_fd, POLL_MSG);
    } else if (writes) {
        o->breaking_to = F_UNLCK;
    }
    if (now >= o->break_deadline) {
        if (o->breaking_to == F_UNLCK) {
            lease_end(o);
            return false;
        }
        o->lease = F_RDLCK;
        o->breaking = false;
        return writes;
    }
    if (o->break_deadline < *deadline)
        *deadline = o->break_deadline;
    return true;
}

long proxy_lease_break(struct proxy_process *p, int dirfd, const char *path,
                       int flags)
{
    struct stat st;
    if (!nr_active || fstatat(dirfd, path, &st,
                              (flags & O_NOFOLLOW) ? AT_SYMLINK_NOFOLLOW : 0))
        return 0;
    bool writes = (flags & O_ACCMODE) != O_RDONLY || (flags & O_TRUNC);
    int64_t now = monotonic_ns(p), deadline = INT64_MAX;
    bool waits = false;
    /* __break_lease: every conflicting lease is broken at once. lease_end
     * may take a lease out of the table: walk a copy. */
    size_t n = nr_active;
    struct proxy_fowner **holders = malloc((n ? n : 1) * sizeof(*holders));
    if (!holders)
        return -ENOMEM;
    memcpy(holders, active, n * sizeof(*holders));
    for (size_t i = 0; i < n; i++)
        if (lease_conflicts(holders[i], st.st_dev, st.st_ino, writes))
            waits |= lease_breaks(holders[i], writes, now, &deadline);
    free(holders);
    if (!waits)
        return 0;
    if (flags & O_NONBLOCK)
        return -EWOULDBLOCK;
    if (deadline == INT64_MAX) /* downgraded, still in a writer's way */
        deadline = now + (int64_t)LEASE_BREAK_NS;
    uint64_t left = (uint64_t)(deadline - now);
    return proxy_thread_retry_after(
        p, left < PROXY_LOCK_RETRY_NS ? left : PROXY_LOCK_RETRY_NS);
}

/* ---- fcntl ------------------------------------------------------------------- */

long proxy_fcntl_owner(struct proxy_process *p, int guest_fd, int cmd,
                       uint64_t arg)
{
    struct proxy_fd *f = proxy_fd_get(&p->fds, guest_fd);
    if (!f)
        return -EBADF;
    struct f_owner_ex ex;
    const struct proxy_fowner none = {.type = F_OWNER_TID, .lease = F_UNLCK};
    const struct proxy_fowner *o = f->owner ? f->owner : &none;
    /* A getter names an owner only while it exists (pid_task). */
    int owner_pid = o->pid && run_pid_exists(p, o->pid) ? o->pid : 0;
    int who = (int)arg;
    switch (cmd) {
    case F_SETOWN:
        if (who == INT_MIN)
            return -EINVAL;
        return fowner_set(p, f, who < 0 ? F_OWNER_PGRP : F_OWNER_PID,
                          who < 0 ? -who : who);
    case F_GETOWN: {
        int nr = proxy_ns_pid_nr(p, owner_pid);
        return o->type == F_OWNER_PGRP ? -nr : nr;
    }
    case F_SETOWN_EX:
        if (proxy_copy_in(p, &ex, arg, sizeof(ex)) < 0)
            return -EFAULT;
        if (ex.type != F_OWNER_TID && ex.type != F_OWNER_PID &&
            ex.type != F_OWNER_PGRP)
            return -EINVAL;
        return fowner_set(p, f, ex.type, ex.pid);
    case F_GETOWN_EX:
        ex.type = o->type;
        ex.pid = proxy_ns_pid_nr(p, owner_pid);
        return proxy_copy_out(p, arg, &ex, sizeof(ex)) < 0 ? -EFAULT : 0;
    case F_SETSIG:
        if (arg > 64) /* valid_signal */
            return -EINVAL;
        if (!fowner_of(f))
            return -ENOMEM;
        f->owner->signum = (int)arg;
        return 0;
    case F_GETSIG:
        return o->signum;
    case F_SETLEASE:
        return set_lease(p, f, guest_fd, who);
    case F_GETLEASE:
        return get_lease(f);
    case F_NOTIFY:
        return set_dnotify(p, f, guest_fd, (uint32_t)arg);
    default:
        return -EINVAL;
    }
}
