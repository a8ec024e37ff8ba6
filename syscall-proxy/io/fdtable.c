/*
 * fdtable.c - the guest fd table: guest fd numbers -> host fds owned by hvrun.
 *
 * Invariants:
 *  - fds[0..cap) is the whole table; a slot is in use iff kind != FREE.
 *  - Every in-use slot owns its host_fd exclusively: closing or replacing the
 *    slot closes that host fd, and two slots never hold the same host fd
 *    (a guest dup is a host dup, so the open file description is shared as
 *    on Linux, but each guest fd has its own host fd).
 *  - Host fds are always O_CLOEXEC on the host (hvrun must not leak them
 *    into anything it runs); the guest's close-on-exec bit is `cloexec`.
 *  - New guest fds are numbered below max_fds (RLIMIT_NOFILE soft limit).
 *    cap may stay above a lowered max_fds: Linux keeps fds that are already
 *    open when the limit drops, it only refuses new ones.
 */
#include "proxy.h"

#include <errno.h>
#include <stdlib.h>
#include <unistd.h>

#define FDTABLE_INITIAL_CAP 64

/* Frees a slot (and its share of a directory cache, and the process's
 * record locks on the file) and returns the host fd it held. */
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
            close(slot_release(t, &t->fds[i]));
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
    if (fd < 0) {
        close(host_fd);
        return fd;
    }
    t->fds[fd].kind = PROXY_FD_HOST;
    t->fds[fd].host_fd = host_fd;
    t->fds[fd].cloexec = cloexec;
    return fd;
}

/*
 * dup2/dup3 target. A number at or above max_fds is -EBADF, as Linux's dup2
 * says. On any failure host_fd is closed, like proxy_fd_install, so callers
 * never leak it. The old occupant is closed after the new one is in place;
 * its close error is dropped, as dup2 drops it.
 */
int proxy_fd_install_at(struct proxy_fdtable *t, int guest_fd, int host_fd,
                        bool cloexec)
{
    if (guest_fd < 0 || guest_fd >= t->max_fds) {
        close(host_fd);
        return -EBADF;
    }
    int r = fdtable_grow(t, guest_fd + 1);
    if (r < 0) {
        close(host_fd);
        return r;
    }
    struct proxy_fd *slot = &t->fds[guest_fd];
    int old_host_fd = slot->kind != PROXY_FD_FREE ? slot_release(t, slot) : -1;
    slot->kind = PROXY_FD_HOST;
    slot->host_fd = host_fd;
    slot->cloexec = cloexec;
    if (old_host_fd >= 0)
        close(old_host_fd);
    return guest_fd;
}

struct proxy_fd *proxy_fd_get(struct proxy_fdtable *t, int guest_fd)
{
    if (guest_fd < 0 || guest_fd >= t->cap)
        return NULL;
    struct proxy_fd *slot = &t->fds[guest_fd];
    return slot->kind == PROXY_FD_FREE ? NULL : slot;
}

int proxy_fd_host(const struct proxy_fdtable *t, int guest_fd)
{
    if (guest_fd < 0 || guest_fd >= t->cap)
        return -EBADF;
    const struct proxy_fd *slot = &t->fds[guest_fd];
    return slot->kind == PROXY_FD_FREE ? -EBADF : slot->host_fd;
}

/* The guest fd is gone whatever the host close says (Linux frees the number
 * before flushing), but a flush error such as EIO is still reported. */
int proxy_fd_close(struct proxy_fdtable *t, int guest_fd)
{
    struct proxy_fd *slot = proxy_fd_get(t, guest_fd);
    if (!slot)
        return -EBADF;
    int host_fd = slot_release(t, slot);
    return close(host_fd) < 0 ? -errno : 0;
}

void proxy_fd_share_context(struct proxy_fd *to, struct proxy_fd *from)
{
    proxy_fowner_share(to, from);
    proxy_signalfd_share(to, from);
    proxy_timerfd_share(to, from);
    proxy_perf_share(to, from);
    proxy_procfile_share(to, from);
    proxy_mqd_share(to, from);
    to->listing_pid = from->listing_pid;
    to->pidfd_pid = from->pidfd_pid;
    to->procdir_pid = from->procdir_pid;
    to->secretmem = from->secretmem;
}

void proxy_fd_close_on_exec(struct proxy_fdtable *t)
{
    for (int i = 0; i < t->cap; i++) {
        if (t->fds[i].kind != PROXY_FD_FREE && t->fds[i].cloexec)
            close(slot_release(t, &t->fds[i]));
    }
}
