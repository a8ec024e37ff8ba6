/*
 * outside_fifo.c - FIFOs whose other end is a process outside the run,
 * under hvrun record and replay (the bytes move as outside.c moves a
 * connection's).
 *
 * What an outside writer puts in a FIFO, and when, is input from outside
 * the deterministic model; a replay has no such writer (its open would
 * wait for ever). So a blocking open of a FIFO for reading or writing is
 * taken to reach outside when no other guest thread is alive (then only
 * a process outside can be the other end: the host open waits for it, as
 * before), or when the host says the other end is open and no end of it
 * is in the run (no fd of the run's, no reader of the run waiting in its
 * open, no writer of the run that opened it while this reader waited): a
 * writer's open that does not wait succeeds (a reader is there), or a
 * reader's end sees a writer or bytes (tee(2) of it, which takes nothing:
 * a writer outside that opened and has not written yet is seen too).
 * Otherwise the open is fs.c's, which waits for an end in the run by
 * re-trying, and each try asks here again: an outside end that comes
 * while it waits is seen at that try. Recording, hvrun opens the FIFO
 * itself, and
 * the guest gets an end of a pipe of hvrun's: what the outside writer
 * sends is read at points of the run's own progress, each piece a `link`
 * event (D, its end E) at the run's event count, and written to the pipe;
 * what the guest writes for an outside reader is read from the pipe and
 * written to the FIFO. The open itself is an event (F: its result, the
 * FIFO's path, at the try's event count), so a replay knows it without
 * the host: it gives the guest a pipe at once (the open does not wait for
 * a writer), the recorded bytes at the same counts, and drops what the
 * guest writes; the tries before it wait as the recording's did (without
 * the host's FIFO when it is gone; with it, they are fs.c's tries again).
 *
 * The guest's fd is a pipe both ways: S_IFIFO as the FIFO, but its inode
 * and /proc/self/fd link are the pipe's; an outside reader that goes
 * away does not give the guest EPIPE (its writes are dropped). A FIFO
 * both of whose ends are in the run is not relayed (it is the host's, as
 * before).
 */
#include "proxy.h"
#include "fdtable.h"
#include "config.h"
#include "kernel.h"
#include "net.h"
#include "outside_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "det.h"

/* Whether an fd of the run is the FIFO st (then its other end may be in
 * the run). */
static bool run_has_open(struct proxy_world *w, const struct stat *st)
{
    for (int i = 0; i < w->nr_procs; i++) {
        const struct proxy_fdtable *t = &w->procs[i]->fds;
        for (int k = 0; k < t->cap; k++) {
            struct stat fs;
            if (t->fds[k].kind == PROXY_FD_HOST &&
                fstat(t->fds[k].host_fd, &fs) == 0 &&
                fs.st_dev == st->st_dev && fs.st_ino == st->st_ino)
                return true;
        }
    }
    return false;
}

static bool parked_on(const struct proxy_thread_io *io, const struct stat *st)
{
    return io->fifo_parked && io->fifo_dev == st->st_dev &&
           io->fifo_ino == st->st_ino;
}

/* Whether a thread of the run other than self waits in an open of the
 * FIFO st for reading (fs.c: it holds a host reader end meanwhile, as a
 * reader waiting in Linux's open counts, so a writer's open succeeds). */
static bool run_parks(struct proxy_world *w, const struct proxy_thread *self,
                      const struct stat *st)
{
    for (int i = 0; i < w->nr_procs; i++) {
        const struct proxy_process *q = w->procs[i];
        for (int k = 0; !q->zombie && k < q->nr_threads; k++)
            if (&q->threads[k] != self && parked_on(&q->threads[k].io, st))
                return true;
    }
    return false;
}

/*
 * Whether the FIFO fd (a reader's end, O_NONBLOCK) has a writer or bytes
 * waiting, as the host says: tee(2) copies what waits into a scratch pipe
 * without taking it; with nothing waiting it returns 0 when the FIFO has
 * no writer and EAGAIN when it has one (a writer that opened and has not
 * written yet).
 */
static bool writer_or_bytes(int fd)
{
    int pp[2];
    if (pipe2(pp, O_CLOEXEC | O_NONBLOCK) < 0) {
        int queued = 0;
        return ioctl(fd, FIONREAD, &queued) == 0 && queued > 0;
    }
    ssize_t n = tee(fd, pp[1], 1, SPLICE_F_NONBLOCK);
    bool there = n > 0 || (n < 0 && errno == EAGAIN);
    close(pp[0]);
    close(pp[1]);
    return there;
}

/*
 * Recording, other guest threads alive: whether a process outside has
 * the other end of the FIFO st open, as the host says, with no end of it
 * in the run (an fd of the run's, a reader of the run waiting in its
 * open, or a writer of the run that opened it while this thread waited):
 * a writer's open without waiting succeeds only with a reader there; a
 * reader's end sees a writer or bytes (writer_or_bytes). The open fd, or
 * -1: the open is fs.c's (it waits for an end in the run, re-tried, and
 * each try asks here again). A reader's end that finds none is left
 * parked for fs.c's wait (it may have let a writer outside that waited
 * in its open go on, which must find a reader).
 */
static int open_if_outside(struct proxy_process *p, int dirfd,
                           const char *path, int flags, const struct stat *st)
{
    struct proxy_thread *t = &p->threads[p->cur];
    bool reader = (flags & O_ACCMODE) == O_RDONLY;
    bool parked = reader && parked_on(&t->io, st);
    if (run_has_open(p->world, st) || run_parks(p->world, t, st) ||
        (parked && t->io.fifo_partner))
        return -1;
    if (!reader)
        return openat(dirfd, path, O_WRONLY | O_NONBLOCK | O_CLOEXEC |
                                       O_NOCTTY);
    int fd = parked ? t->io.fifo_fd
                    : openat(dirfd, path,
                             O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
    if (fd < 0)
        return -1;
    if (writer_or_bytes(fd)) {
        t->io.fifo_parked = false; /* the end is hvrun's relay's now */
        return fd;
    }
    if (!parked) {
        proxy_fifo_unpark(t);
        t->io.fifo_parked = true;
        t->io.fifo_partner = false;
        t->io.fifo_fd = fd;
        t->io.fifo_dev = st->st_dev;
        t->io.fifo_ino = st->st_ino;
    }
    return -1;
}

/*
 * Replaying: the recorded open of key, if it is the next event: at this
 * point of the run (true), or later (*later): the recording's open found
 * the other end outside only on a later try, so this try waited.
 */
static bool recorded_fifo(struct proxy_outside *o, const char *key,
                          uint32_t *id, long *ret, bool *later)
{
    struct proxy_link_event e;
    const void *data;
    size_t n;
    *later = false;
    if (!o->tap->link_next(o->tap->ctx, &e, &data, &n) ||
        e.kind != PROXY_LINK_FIFO || n != strlen(key) || memcmp(data, key, n))
        return false;
    if (e.pos > o->det->events) {
        *later = true;
        return false;
    }
    *id = e.link;
    *ret = (long)e.value;
    o->tap->link_taken(o->tap->ctx);
    return true;
}

/*
 * Recording: the FIFO opened by hvrun (or -errno: the open's failure) if
 * this open reaches a process outside (*outside): with nothing else of
 * the run alive, the host open waits for the other end, which only the
 * outside can bring (a reader end this thread had parked goes); else see
 * open_if_outside.
 */
static int open_fifo(struct proxy_process *p, int dirfd, const char *path,
                     int flags, bool *outside)
{
    struct stat st;
    int fd;
    *outside = false;
    if (fstatat(dirfd, path, &st, 0) < 0 || !S_ISFIFO(st.st_mode))
        return -1;
    if (proxy_others_alive(p)) {
        if ((fd = open_if_outside(p, dirfd, path, flags, &st)) < 0)
            return -1;
    } else {
        proxy_fifo_unpark(&p->threads[p->cur]);
        while ((fd = openat(dirfd, path,
                            (flags & O_ACCMODE) | O_CLOEXEC | O_NOCTTY)) < 0 &&
               errno == EINTR && !proxy_stop_signal)
            ;
        if (fd < 0)
            fd = -errno;
    }
    *outside = true;
    if (fd < 0)
        return fd;
    int fl = fcntl(fd, F_GETFL); /* hvrun's reads do not wait */
    if (fl >= 0)
        (void)fcntl(fd, F_SETFL, (flags & O_ACCMODE) == O_RDONLY
                                     ? fl | O_NONBLOCK
                                     : fl & ~O_NONBLOCK);
    return fd;
}

/* The guest's end of a new pipe (the other, hvrun's, in *relay:
 * non-blocking). */
static int guest_pipe(bool reader, int *relay)
{
    int pp[2];
    if (pipe2(pp, O_CLOEXEC) < 0)
        return -errno;
    int mine = reader ? pp[1] : pp[0], theirs = reader ? pp[0] : pp[1];
    int fl = fcntl(mine, F_GETFL);
    if (fl >= 0)
        (void)fcntl(mine, F_SETFL, fl | O_NONBLOCK);
    *relay = mine;
    return theirs;
}

bool proxy_outside_fifo_maybe(struct proxy_process *p, int dirfd,
                              const char *path)
{
    const struct proxy_file_tap *t = p->cfg->file_tap;
    struct stat st;
    struct proxy_link_event e;
    const void *data;
    size_t n;
    if (outside_recording(t))
        return fstatat(dirfd, path, &st, 0) == 0 && S_ISFIFO(st.st_mode);
    return outside_replaying(t) &&
           t->link_next(t->ctx, &e, &data, &n) && e.kind == PROXY_LINK_FIFO;
}

bool proxy_outside_fifo_open(struct proxy_process *p, const char *key,
                             int dirfd, const char *path, int flags,
                             long *ret)
{
    const struct proxy_file_tap *t = p->cfg->file_tap;
    bool recording = outside_recording(t), outside, later;
    if (!recording && !outside_replaying(t))
        return false;
    struct proxy_outside *o = outside_of(p);
    if (!o)
        return false;
    uint32_t id = o->next_id;
    int remote = -1;
    struct stat st;
    if (recording) {
        remote = open_fifo(p, dirfd, path, flags, &outside);
        if (!outside)
            return false;
        *ret = remote < 0 ? remote : 0;
        outside_note(o, id, PROXY_LINK_FIFO, *ret, key, strlen(key));
    } else if (!recorded_fifo(o, key, &id, ret, &later)) {
        /* The FIFO is gone from the host (the outside's): the try waits,
         * as the recording's did (fs.c's wait); else fs.c's try, as the
         * recording's. */
        if (!later || (fstatat(dirfd, path, &st, 0) == 0 &&
                       S_ISFIFO(st.st_mode)))
            return false;
        *ret = proxy_thread_retry_after(p, PROXY_LOCK_RETRY_NS);
        return true;
    } else {
        proxy_fifo_unpark(&p->threads[p->cur]); /* fs.c's wait, if any */
    }
    o->next_id = id + 1;
    if (*ret < 0)
        return true;
    bool reader = (flags & O_ACCMODE) == O_RDONLY;
    int relay = -1;
    int guest = guest_pipe(reader, &relay);
    if (guest < 0) {
        if (remote >= 0)
            close(remote);
        *ret = guest;
        return true;
    }
    outside_link_fifo(o, id, reader, remote, relay);
    *ret = guest;
    return true;
}
