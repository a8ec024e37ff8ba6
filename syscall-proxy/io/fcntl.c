/*
 * fcntl.c - the fd numbers and what hangs on an open file: dup, dup2,
 * dup3, close, close_range (Linux's fs/file.c), fcntl (fs/fcntl.c: its
 * lock, owner and lease commands handed to plock.c and fasync.c), flock
 * and the advice calls (fs/locks.c, mm/fadvise.c), and cachestat
 * (mm/filemap.c). Lock waits retry on the logical clock rather than wait
 * in the host.
 */
#include "proxy.h"
#include "fdtable.h"
#include "kernel.h"
#include "fs.h"
#include "io.h"
#include "internal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#define PAGE_BYTES 4096ULL
/* F_LINUX_SPECIFIC_BASE + 3 and + 4; older headers lack them. */
#define F_DUPFD_QUERY_CMD 1027
#define F_CREATED_QUERY_CMD 1028

/* ---- fd numbers ---------------------------------------------------------- */

static long sys_close(struct proxy_process *p, const uint64_t a[6])
{
    return proxy_fd_close(&p->fds, (int)a[0]);
}

/*
 * close_range(first, last, flags). CLOSE_RANGE_UNSHARE is accepted and has
 * nothing to do: the fd table is never shared (one process). Fds past the
 * table's end are not open, so the walk stops there even for last = ~0U.
 */
static long sys_close_range(struct proxy_process *p, const uint64_t a[6])
{
    unsigned int first = (unsigned int)a[0], last = (unsigned int)a[1];
    unsigned int flags = (unsigned int)a[2];
    if (flags & ~(CLOSE_RANGE_UNSHARE | CLOSE_RANGE_CLOEXEC))
        return -EINVAL;
    if (first > last)
        return -EINVAL;
    for (unsigned int fd = first; fd <= last && fd < (unsigned)p->fds.cap;
         fd++) {
        struct proxy_fd *f = proxy_fd_get(&p->fds, (int)fd);
        if (!f)
            continue;
        if (flags & CLOSE_RANGE_CLOEXEC)
            f->cloexec = true;
        else
            proxy_fd_close(&p->fds, (int)fd);
    }
    return 0;
}

/* dup() and F_DUPFD: the new guest fd never has close-on-exec unless asked
 * (F_DUPFD_CLOEXEC). It shares the old one's directory listing. */
static long dup_from(struct proxy_process *p, int guest_fd, int host_fd,
                     int min_fd, bool cloexec)
{
    int new_fd = proxy_fd_install(&p->fds, proxy_host_fd_ref(host_fd), cloexec,
                                  min_fd);
    if (new_fd >= 0)
        proxy_meta_fd_dup(p, guest_fd, new_fd);
    if (new_fd >= 0)
        proxy_fd_share_context(proxy_fd_get(&p->fds, new_fd),
                               proxy_fd_get(&p->fds, guest_fd));
    return new_fd;
}

static long sys_dup(struct proxy_process *p, const uint64_t a[6])
{
    int host_fd = guest_host_fd(p, a[0]);
    return host_fd < 0 ? host_fd : dup_from(p, (int)a[0], host_fd, 0, false);
}

/* dup2/dup3 after their own checks: newfd at or above RLIMIT_NOFILE is
 * -EBADF (checked before oldfd, as Linux does); newfd is replaced. */
static long dup_onto(struct proxy_process *p, uint64_t oldfd, uint64_t newfd,
                     bool cloexec)
{
    if ((unsigned int)newfd >= (unsigned int)p->fds.max_fds)
        return -EBADF;
    int host_fd = guest_host_fd(p, oldfd);
    if (host_fd < 0)
        return host_fd;
    int r = proxy_fd_install_at(&p->fds, (int)newfd, proxy_host_fd_ref(host_fd),
                                cloexec);
    if (r >= 0)
        proxy_meta_fd_dup(p, (int)oldfd, r);
    if (r >= 0)
        proxy_fd_share_context(proxy_fd_get(&p->fds, r),
                               proxy_fd_get(&p->fds, (int)oldfd));
    return r;
}

/* dup2(fd, fd) is a validity check that returns fd. */
static long sys_dup2(struct proxy_process *p, const uint64_t a[6])
{
    if ((unsigned int)a[0] == (unsigned int)a[1]) {
        int host_fd = guest_host_fd(p, a[0]);
        return host_fd < 0 ? host_fd : (long)(unsigned int)a[1];
    }
    return dup_onto(p, a[0], a[1], false);
}

/* dup3 takes only O_CLOEXEC and refuses equal fds. */
static long sys_dup3(struct proxy_process *p, const uint64_t a[6])
{
    int flags = (int)a[2];
    if (flags & ~O_CLOEXEC)
        return -EINVAL;
    if ((unsigned int)a[0] == (unsigned int)a[1])
        return -EINVAL;
    return dup_onto(p, a[0], a[1], (flags & O_CLOEXEC) != 0);
}

/* ---- fcntl --------------------------------------------------------------- */

_Static_assert(sizeof(struct flock) == 32, "struct flock is not x86-64's");

/*
 * Record locks. Classic POSIX locks (F_GETLK, F_SETLK, F_SETLKW) are owned
 * per guest process: plock.c. Open-file-description locks and flock() are
 * owned by the open file description, which is the host's too, so the host
 * does them.
 *
 * A lock that must wait (F_SETLKW, F_OFD_SETLKW, flock without LOCK_NB)
 * may wait for another guest, which cannot run while the host blocks. So
 * while any other guest thread is alive the lock is only tried; when it is
 * held, the thread tries again after 1 ms of logical time (or when a
 * signal comes). With no other guest alive the holder is outside the run
 * and the host call waits as usual.
 */
static bool lock_contended(int err)
{
    return err == EAGAIN || err == EACCES || err == EWOULDBLOCK;
}

static long fcntl_lock(struct proxy_process *p, int guest_fd, int host_fd,
                       int cmd, gva_t arg)
{
    struct flock fl;
    if (proxy_copy_in(p, &fl, arg, sizeof(fl)) < 0)
        return -EFAULT;
    if (cmd == F_GETLK || cmd == F_SETLK || cmd == F_SETLKW) {
        bool copy_out;
        long rc = proxy_plock_fcntl(p, host_fd, cmd, &fl, &copy_out);
        if (rc == 0 && copy_out && proxy_copy_out(p, arg, &fl, sizeof(fl)) < 0)
            return -EFAULT;
        return rc;
    }
    if (cmd == F_OFD_SETLKW && proxy_others_alive(p)) {
        if (fcntl(host_fd, F_OFD_SETLK, &fl) == 0) {
            proxy_plock_noted_ofd(p, guest_fd, &fl);
            return 0;
        }
        return lock_contended(errno)
                   ? proxy_thread_retry_after(p, PROXY_LOCK_RETRY_NS)
                   : -errno;
    }
    if (fcntl(host_fd, cmd, &fl) < 0)
        return -errno;
    if (cmd != F_OFD_GETLK) /* F_OFD_SETLK(W) granted: /proc/locks says so */
        proxy_plock_noted_ofd(p, guest_fd, &fl);
    if (cmd == F_OFD_GETLK && proxy_copy_out(p, arg, &fl, sizeof(fl)) < 0)
        return -EFAULT;
    return 0;
}

/* F_DUPFD: the lowest free fd >= arg; arg >= RLIMIT_NOFILE is -EINVAL. */
static long fcntl_dupfd(struct proxy_process *p, int guest_fd, int host_fd,
                        uint64_t arg, bool cloexec)
{
    unsigned int min_fd = (unsigned int)arg;
    if (min_fd >= (unsigned int)p->fds.max_fds)
        return -EINVAL;
    return dup_from(p, guest_fd, host_fd, (int)min_fd, cloexec);
}

/* Write-lifetime hints take a pointer to a u64. */
static long fcntl_rw_hint(struct proxy_process *p, int host_fd, int cmd,
                          gva_t arg)
{
    uint64_t hint;
    if (cmd == F_SET_RW_HINT && proxy_copy_in(p, &hint, arg, sizeof(hint)) < 0)
        return -EFAULT;
    if (fcntl(host_fd, cmd, &hint) < 0)
        return -errno;
    if (cmd == F_GET_RW_HINT && proxy_copy_out(p, arg, &hint, sizeof(hint)) < 0)
        return -EFAULT;
    return 0;
}

/* A perf fd's status flags: Linux opens its file O_RDWR; the host pipe
 * end behind it (perf_event.c) keeps the rest (O_NONBLOCK, O_ASYNC). */
static long perf_status_flags(int host_fd)
{
    int fl = fcntl(host_fd, F_GETFL);
    return fl < 0 ? -errno : (fl & ~O_ACCMODE) | O_RDWR;
}

static long sys_fcntl(struct proxy_process *p, const uint64_t a[6])
{
    struct proxy_fd *f = proxy_fd_get(&p->fds, (int)a[0]);
    if (!f)
        return -EBADF;
    int host_fd = f->host_fd;
    int cmd = (int)a[1];
    uint64_t arg = a[2];
    switch (cmd) {
    case F_DUPFD:
    case F_DUPFD_CLOEXEC:
        return fcntl_dupfd(p, (int)a[0], host_fd, arg, cmd == F_DUPFD_CLOEXEC);
    case F_GETFD:
        return f->cloexec ? FD_CLOEXEC : 0;
    case F_SETFD:
        f->cloexec = (arg & FD_CLOEXEC) != 0;
        return 0;
    case F_GETLK:
    case F_SETLK:
    case F_SETLKW:
    case F_OFD_GETLK:
    case F_OFD_SETLK:
    case F_OFD_SETLKW:
        return fcntl_lock(p, (int)a[0], host_fd, cmd, arg);
    case F_GETOWN:
    case F_SETOWN:
    case F_GETOWN_EX:
    case F_SETOWN_EX:
    case F_GETSIG:
    case F_SETSIG:
    case F_SETLEASE:
    case F_GETLEASE:
    case F_NOTIFY:
        return proxy_fcntl_owner(p, (int)a[0], cmd, arg); /* fasync.c */
    case F_GET_RW_HINT:
    case F_SET_RW_HINT:
        return fcntl_rw_hint(p, host_fd, cmd, arg);
    case F_SETFL: {
        long r = proxy_host_result(fcntl(host_fd, cmd, (int)arg));
        if (r == 0) /* O_ASYNC: SIGIO is hvrun's to send (fasync.c) */
            proxy_fasync_set(p, (int)a[0], (arg & O_ASYNC) != 0);
        return r;
    }
    case F_GETFL:
    case F_GETPIPE_SZ:
    case F_SETPIPE_SZ:
        if (proxy_fd_get(&p->fds, (int)a[0])->perf) /* its host fd: a pipe */
            return cmd == F_GETFL ? perf_status_flags(host_fd) : -EBADF;
        return proxy_host_result(fcntl(host_fd, cmd, (int)arg));
    case F_ADD_SEALS:
    case F_GET_SEALS:
        /* Plain integer argument (or none); the host does the work. */
        return proxy_host_result(fcntl(host_fd, cmd, (int)arg));
    case F_DUPFD_QUERY_CMD: { /* Linux 6.10: is arg the same description? */
        uint64_t other = proxy_fd_file_id(&p->fds, (int)arg);
        if (!other)
            return -EBADF;
        return other == proxy_fd_file_id(&p->fds, (int)a[0]);
    }
    case F_CREATED_QUERY_CMD: /* Linux 6.12 */
        return f->created;
    default:
        return -EINVAL;
    }
}

/* ---- locks and advice ---------------------------------------------------- */

/* BSD locks are held by hvrun's open file descriptions, which the guest's
 * dups share, so they behave as on Linux within the guest. */
static long sys_flock(struct proxy_process *p, const uint64_t a[6])
{
    int host_fd = guest_host_fd(p, a[0]);
    if (host_fd < 0)
        return host_fd;
    int op = (int)a[1];
    if (!(op & LOCK_NB) && (op & (LOCK_SH | LOCK_EX)) &&
        proxy_others_alive(p)) {
        if (flock(host_fd, op | LOCK_NB) == 0) {
            proxy_plock_noted_flock(p, (int)a[0], op);
            return 0;
        }
        return lock_contended(errno)
                   ? proxy_thread_retry_after(p, PROXY_LOCK_RETRY_NS)
                   : -errno;
    }
    if (flock(host_fd, op) < 0)
        return -errno;
    proxy_plock_noted_flock(p, (int)a[0], op); /* /proc/locks says so */
    return 0;
}

/* The raw syscall: glibc's posix_fadvise returns the error instead of -1. */
static long sys_fadvise64(struct proxy_process *p, const uint64_t a[6])
{
    int host_fd = guest_host_fd(p, a[0]);
    if (host_fd < 0)
        return host_fd;
    return proxy_host_result(
        syscall(SYS_fadvise64, host_fd, (off_t)a[1], (off_t)a[2], (int)a[3]));
}

static long sys_readahead(struct proxy_process *p, const uint64_t a[6])
{
    int host_fd = guest_host_fd(p, a[0]);
    if (host_fd < 0)
        return host_fd;
    return proxy_host_result(readahead(host_fd, (off_t)a[1], (size_t)a[2]));
}

static long sys_sync_file_range(struct proxy_process *p, const uint64_t a[6])
{
    int host_fd = guest_host_fd(p, a[0]);
    if (host_fd < 0)
        return host_fd;
    return proxy_host_result(
        sync_file_range(host_fd, (off_t)a[1], (off_t)a[2], (unsigned int)a[3]));
}

/* ---- cachestat ------------------------------------------------------------ */

#define SYS_CACHESTAT 451 /* Linux 6.5, x86-64; older headers lack it */

struct k_cachestat_range {
    uint64_t off, len;
};

struct k_cachestat {
    uint64_t nr_cache, nr_dirty, nr_writeback, nr_evicted,
        nr_recently_evicted;
};

/*
 * cachestat(fd, range, stat, flags): how much of a file's range is in the
 * page cache. The host's page cache follows its memory pressure and its
 * other users, so hvrun answers as mincore does for memory (mm.c): every
 * page of a regular file within the range (a len of 0: to the end) is
 * cached, none dirty, under writeback or evicted; other files have no
 * pages. Linux's order: the fd (EBADF, an O_PATH one too), the range
 * (EFAULT), the flags (EINVAL), then the result (EFAULT). Not modelled:
 * Linux 6.10's EPERM for a caller who may not write the file.
 */
static long sys_cachestat(struct proxy_process *p, const uint64_t a[6])
{
    int host_fd = guest_host_fd(p, a[0]);
    if (host_fd < 0)
        return host_fd;
    int fl = fcntl(host_fd, F_GETFL);
    if (fl < 0 || (fl & O_PATH))
        return -EBADF;
    struct k_cachestat_range r;
    if (proxy_copy_in(p, &r, a[1], sizeof(r)) < 0)
        return -EFAULT;
    if ((unsigned int)a[3] != 0)
        return -EINVAL;
    struct stat st;
    if (fstat(host_fd, &st) < 0)
        return -errno;
    struct k_cachestat cs = {0};
    uint64_t pages = S_ISREG(st.st_mode) && st.st_size > 0
                         ? ((uint64_t)st.st_size + PAGE_BYTES - 1) / PAGE_BYTES
                         : 0;
    uint64_t first = r.off / PAGE_BYTES;
    uint64_t last = r.len == 0 ? UINT64_MAX : (r.off + r.len - 1) / PAGE_BYTES;
    if (pages > 0 && first < pages && last >= first)
        cs.nr_cache = (last < pages - 1 ? last : pages - 1) - first + 1;
    return proxy_copy_out(p, a[2], &cs, sizeof(cs)) < 0 ? -EFAULT : 0;
}

const struct proxy_syscall proxy_fcntl_syscalls[] = {
    {SYS_close, "close", sys_close},
    {SYS_close_range, "close_range", sys_close_range},
    {SYS_dup, "dup", sys_dup},
    {SYS_dup2, "dup2", sys_dup2},
    {SYS_dup3, "dup3", sys_dup3},
    {SYS_fcntl, "fcntl", sys_fcntl},
    {SYS_flock, "flock", sys_flock},
    {SYS_fadvise64, "fadvise64", sys_fadvise64},
    {SYS_readahead, "readahead", sys_readahead},
    {SYS_sync_file_range, "sync_file_range", sys_sync_file_range},
    {SYS_CACHESTAT, "cachestat", sys_cachestat},
    {-1, NULL, NULL},
};
