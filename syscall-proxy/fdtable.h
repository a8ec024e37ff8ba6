/*
 * fdtable.h - the fd table, part of every guest process's core: guest fd
 * numbers mapped to host fds held by hvrun. fdtable.c implements it;
 * every subsystem installs and looks up fds through it.
 */
#ifndef PROXY_FDTABLE_H
#define PROXY_FDTABLE_H

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/types.h>

#include "proxy.h"

struct proxy_dircache;
struct proxy_eventfd;
struct proxy_fowner;
struct proxy_lockdesc;
struct proxy_mqd;
struct proxy_ns;
struct proxy_perf;
struct proxy_signalfd;
struct proxy_timerfd;
struct proxy_vfd;

/* A plain eventfd's run id (io/epoll.c): shared as the description is,
 * freed with its last reference; the id fdinfo shows (fs/vfs.c). */
void proxy_eventfd_share(struct proxy_fd *to, const struct proxy_fd *from);
void proxy_eventfd_put(struct proxy_eventfd *e);
int proxy_eventfd_id(const struct proxy_eventfd *e);

/* ---- file descriptors ---------------------------------------------------- */
/*
 * The fd table maps guest fd numbers to host fds held by hvrun. Guest fds
 * of one open file description (dup, fork's copy) share one host fd,
 * counted across all guest processes (fdtable.c), so offset and status
 * flags are shared exactly as Linux shares them and a dup or fork costs no
 * host fd; the close-on-exec flag is per guest fd and kept here (host fds
 * are always O_CLOEXEC).
 */
enum proxy_fd_kind { PROXY_FD_FREE = 0, PROXY_FD_HOST };

struct proxy_fd {
    enum proxy_fd_kind kind;
    int host_fd;
    bool cloexec;
    /* The host file's identity, fstat'ed once on first need (fsmeta.c):
     * it cannot change while the host fd is open. */
    bool meta_known;
    mode_t host_type;           /* S_IFMT bits */
    uint64_t host_dev, host_ino;
    uint64_t host_rdev;         /* a device's number */
    /* Whether the host file is a terminal, asked once (io.c): tty_known. */
    bool tty_known, tty;
    /* Directories read with metadata virtualised: the entries in name
     * order, shared by the guest fds dup'd from this one (refcounted). */
    struct proxy_dircache *dircache;
    /* Reads come from detcore's random stream (the host's /dev/urandom or
     * /dev/random, vfs.c); rand_checked once the device was looked at. */
    bool rand_checked;
    bool det_random;
    /* A signalfd (signalfd.c): the host fd is an eventfd kept readable
     * while a signal of the mask is pending; the context (the mask) is
     * shared by dups and fork children, as Linux shares the open file. */
    struct proxy_signalfd *signalfd;
    /* A timerfd (timerfd.c): the host fd is an eventfd, the timer is here;
     * shared by dups and fork children like the signalfd context. */
    struct proxy_timerfd *timerfd;
    /* A /proc mem or settings file of a guest (procfile.c): transfers go
     * there; shared by dups and fork children. */
    struct proxy_vfd *vfd;
    /* A POSIX message queue descriptor (kernel/mqueue.c): the host fd is
     * an eventfd kept ready as the queue is; shared by dups and fork
     * children. */
    struct proxy_mqd *mqd;
    /* A plain eventfd (io/epoll.c): the id its fdinfo shows, the run's
     * own; shared by dups, fork children and SCM_RIGHTS copies. */
    struct proxy_eventfd *eventfd;
    /* The flock and OFD locks of its open file description (fs/plock.c),
     * for /proc/locks: shared by dups, fork children and SCM_RIGHTS
     * copies, NULL until the description's first such lock. */
    struct proxy_lockdesc *lockdesc;
    /* A perf event (kernel/perf_event.c): the host fd is an empty epoll
     * instance, the counter is here; shared by dups and fork children. */
    struct proxy_perf *perf;
    /* F_SETOWN/F_SETOWN_EX's owner (io.c), the open file's as in Linux:
     * shared by dups and fork children (made when first shared or set). */
    struct proxy_fowner *owner;
    /* /proc/<pid>/task of another guest (vfs.c): the host fd is hvrun's
     * /proc/self/task and the listing is that guest's threads; 0 for the
     * caller's own. Kept by dups and fork children. */
    int listing_pid;
    /* A pidfd (kernel/pidfd.c): the run pid of the process it names (0:
     * not a pidfd); the host fd is an eventfd made readable at its exit.
     * Kept by dups and fork children. */
    int pidfd_pid;
    /* The pid namespace that process lives in (NULL: the run's) and,
     * once it exited, its wait status (pidfd_exit_known): what
     * PIDFD_GET_INFO reports after the reap. Kept by dups and fork
     * children. */
    const struct proxy_ns *pidfd_pidns;
    bool pidfd_exit_known;
    int pidfd_exit_status;
    /* /proc/<N> of a guest process N opened as a directory (vfs.c): N's
     * run pid, which pidfd_send_signal takes as a pidfd's; 0 otherwise.
     * Kept by dups and fork children. */
    int procdir_pid;
    /* A memfd_secret file (mm/secretmem.c): the host fd is a memfd that
     * only mmap reaches. Kept by dups and fork children. */
    bool secretmem;
    /* The open that made this description created the file (fcntl's
     * F_CREATED_QUERY). Kept by dups and fork children. */
    bool created;
    /* /proc/N/maps of guest process N (its run pid; 0: not one): the
     * PROCMAP_QUERY ioctl asks N's mappings. Kept by dups and fork
     * children. */
    int maps_pid;
    /* An O_PATH|O_NOFOLLOW fd of guest N's /proc/N/exe link itself (fs.c):
     * N's run pid (0: not one). The host fd is hvrun's own exe link, so
     * readlinkat(fd, "") and readlink of /proc/self/fd/<fd> are answered
     * from N. Kept by dups and fork children. */
    int exe_link_pid;
    /* A CPython bytecode cache opened read-only whose header's source
     * mtime is its source's host mtime (fsmeta.c): reads show
     * pyc_mtime_seen there instead, the source's mtime as the guest sees
     * it. Kept by dups and fork children. */
    bool pyc_fix;
    uint32_t pyc_mtime_host, pyc_mtime_seen;
    /* An inotify instance (fs.c): reads show the run's rename cookies.
     * Kept by dups and fork children. */
    bool inotify;
};

int proxy_fdtable_init(struct proxy_fdtable *t, int max_fds);
void proxy_fdtable_destroy(struct proxy_fdtable *t);

/* Installs host_fd at the lowest free guest fd >= min_fd. host_fd is a
 * fresh host fd or one proxy_host_fd_ref counted again; the table takes
 * that reference. Returns the guest fd, or -EMFILE (the reference is then
 * dropped: a fresh host fd closed; also when a fresh host fd's number is
 * in hvrun's reserve) / -ENOMEM. */
int proxy_fd_install(struct proxy_fdtable *t, int host_fd, bool cloexec,
                     int min_fd);

/* Installs host_fd at exactly guest_fd, closing what was there (dup2). */
int proxy_fd_install_at(struct proxy_fdtable *t, int guest_fd, int host_fd,
                        bool cloexec);

/* One more reference to host_fd, a host fd some guest slot holds, for
 * proxy_fd_install(_at) to take: a dup without a host dup. */
int proxy_host_fd_ref(int host_fd);

/* The host fd that keys guest_fd in epoll instances (epoll_ctl), given a
 * host fd of its own first if its host fd keys another guest fd number;
 * -EBADF, -EMFILE. */
int proxy_fd_epoll_key(struct proxy_fdtable *t, int guest_fd);

/* kcmp's KCMP_EPOLL_TFD: the description id of the toff-th entry (from
 * 0, in description order) of host epoll instance host_epfd that is keyed
 * by guest fd number guest_num; -ENOENT if there is none, -EINVAL when
 * host_epfd is not an epoll instance, -EOPNOTSUPP without the host's kcmp. */
int proxy_fd_epoll_target(int host_epfd, int guest_num, unsigned int toff,
                          uint64_t *file_id);

/* The host fd behind a guest fd, or -EBADF. */
int proxy_fd_host(const struct proxy_fdtable *t, int guest_fd);

/* The id of guest_fd's open file description (0: no such fd): equal for
 * the guest fds that share one, and ordered as the descriptions were made
 * (kcmp's KCMP_FILE). */
uint64_t proxy_fd_file_id(const struct proxy_fdtable *t, int guest_fd);
struct proxy_fd *proxy_fd_get(struct proxy_fdtable *t, int guest_fd);
/* The slot's host file identity (meta_known, host_type, host_dev,
 * host_ino, host_rdev), fstat'ed on first need; false when fstat fails. */
bool proxy_fd_identity(struct proxy_fd *f);
int proxy_fd_close(struct proxy_fdtable *t, int guest_fd);

/* A dup (or a fork's copy) of from: to shares its signalfd or timerfd
 * context, as the open file is shared on Linux. */
void proxy_fd_share_context(struct proxy_fd *to, struct proxy_fd *from);
/* The context references f holds (what proxy_fd_share_context took)
 * dropped, f left free: for a proxy_fd kept outside a table (fdpass.c's
 * notes). */
void proxy_fd_context_release(struct proxy_fd *f);

/* Closes every close-on-exec fd (execve). */
void proxy_fd_close_on_exec(struct proxy_fdtable *t);

#endif
