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
 * before), or when no fd of the run has the FIFO open and its other end
 * is open already: a reader there (a writer's open that does not wait
 * succeeds) or bytes waiting (a reader's). A writer outside that has not
 * written yet, while other guest threads are alive, is not seen (hvrun's
 * dropped capabilities keep other processes' /proc fds from it): such a
 * FIFO is the host's as before, and a replay diverges. Recording, hvrun opens the FIFO itself, and
 * the guest gets an end of a pipe of hvrun's: what the outside writer
 * sends is read at points of the run's own progress, each piece a `link`
 * event (D, its end E) at the run's event count, and written to the pipe;
 * what the guest writes for an outside reader is read from the pipe and
 * written to the FIFO. The open itself is an event (F: its result, the
 * FIFO's path), so a replay knows it without the host: it gives the guest
 * a pipe at once (the open does not wait for a writer), the recorded
 * bytes at the same counts, and drops what the guest writes.
 *
 * The guest's fd is a pipe both ways: S_IFIFO as the FIFO, but its inode
 * and /proc/self/fd link are the pipe's; an outside reader that goes
 * away does not give the guest EPIPE (its writes are dropped). A FIFO
 * both of whose ends are in the run is not relayed (it is the host's, as
 * before).
 */
#include "outside.h"
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

/*
 * Recording, other guest threads alive: whether a process outside has
 * the other end of the FIFO st open, which hvrun cannot ask /proc (its
 * capabilities are dropped). A writer's open without waiting succeeds
 * only with a reader there; bytes wait in a FIFO only while someone has
 * it open. So, with no fd of the run on it: a writer's open succeeds, or
 * a reader's finds bytes. The open fd, or -1. A reader's open that finds
 * none is the guest's own (*own: the host's FIFO, as fs.c would open it),
 * not closed: it may have let a writer outside that waited in its open
 * go on, which must find a reader.
 */
static int open_if_outside(struct proxy_world *w, int dirfd, const char *path,
                           int flags, const struct stat *st, int *own)
{
    if (run_has_open(w, st))
        return -1;
    bool reader = (flags & O_ACCMODE) == O_RDONLY;
    int fd = openat(dirfd, path,
                    (flags & O_ACCMODE) | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
    int queued = 0;
    if (fd >= 0 && reader && (ioctl(fd, FIONREAD, &queued) < 0 || !queued)) {
        int fl = fcntl(fd, F_GETFL);
        if (fl >= 0)
            (void)fcntl(fd, F_SETFL, fl & ~O_NONBLOCK);
        *own = fd;
        return -1;
    }
    return fd < 0 ? -1 : fd;
}

/* Replaying: the recorded open of key, if it is the next event. */
static bool recorded_fifo(struct proxy_outside *o, const char *key,
                          uint32_t *id, long *ret)
{
    struct proxy_link_event e;
    const void *data;
    size_t n;
    if (!o->tap->link_next(o->tap->ctx, &e, &data, &n) ||
        e.kind != PROXY_LINK_FIFO || n != strlen(key) || memcmp(data, key, n))
        return false;
    *id = e.link;
    *ret = (long)e.value;
    o->tap->link_taken(o->tap->ctx);
    return true;
}

/*
 * Recording: the FIFO opened by hvrun (or -errno: the open's failure) if
 * this open reaches a process outside (*outside): with nothing else of
 * the run alive, the host open waits for the other end, which only the
 * outside can bring; else see open_if_outside.
 */
static int open_fifo(struct proxy_process *p, int dirfd, const char *path,
                     int flags, bool *outside, int *own)
{
    struct stat st;
    int fd;
    *outside = false;
    *own = -1;
    if (fstatat(dirfd, path, &st, 0) < 0 || !S_ISFIFO(st.st_mode))
        return -1;
    if (proxy_others_alive(p)) {
        if ((fd = open_if_outside(p->world, dirfd, path, flags, &st, own)) < 0)
            return -1;
    } else {
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
                             long *ret, bool *own)
{
    *own = false;
    const struct proxy_file_tap *t = p->cfg->file_tap;
    bool recording = outside_recording(t), outside;
    if (!recording && !outside_replaying(t))
        return false;
    struct proxy_outside *o = outside_of(p);
    if (!o)
        return false;
    uint32_t id = o->next_id;
    int remote = -1, guest_own;
    if (recording) {
        remote = open_fifo(p, dirfd, path, flags, &outside, &guest_own);
        if (!outside && guest_own >= 0) {
            *ret = guest_own;
            *own = true;
            return true;
        }
        if (!outside)
            return false;
        *ret = remote < 0 ? remote : 0;
        outside_note(o, id, PROXY_LINK_FIFO, *ret, key, strlen(key));
    } else if (!recorded_fifo(o, key, &id, ret)) {
        return false;
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
