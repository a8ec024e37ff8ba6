/*
 * io.c - I/O on guest fds: read/write families, seeking, ioctl, pipes,
 * in-kernel copies (fd numbers, fcntl and advice are in fcntl.c,
 * poll/select in poll.c).
 *
 * Data moves between the host fd and guest memory directly: guest buffers
 * become host iovecs (vmm_as_host_iov) and the host readv/writev fills or
 * drains them, with no bounce buffer. A buffer that is only partly mapped
 * gives a partial transfer up to the first bad page, -EFAULT when nothing
 * is mapped, as Linux does.
 *
 * One host thread runs every guest thread of the run, so a host call that
 * waits stops them all. Transfers on pipes, sockets and terminals, and
 * poll/select, therefore wait by parking the guest thread instead (see
 * "waiting without blocking the host" below; finite timeouts are logical
 * deadlines); lock waits retry on the logical clock. Calls that still wait
 * in the host: poll/select on no fd at all without a timeout, and lock
 * waits when no other guest thread is alive (the holder is outside).
 */
#include "proxy.h"
#include "fdtable.h"
#include "hooks.h"
#include "kernel.h"
#include "mm.h"
#include "fs.h"
#include "io.h"
#include "internal.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/fs.h>
#include <linux/nsfs.h>
#include <linux/random.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/sendfile.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/time.h>
#include <sys/uio.h>
#include <unistd.h>

/* Linux's MAX_RW_COUNT: one transfer moves at most INT_MAX rounded down to
 * a page; larger counts are silently clamped. */
#define RW_MAX_BYTES 0x7ffff000UL
/* Host iovecs for one guest buffer: one per VMA it spans. A buffer spread
 * over more VMAs than this gets a short (but valid) transfer. */
#define RW_BUF_IOV_MAX 64
/* Linux's UIO_MAXIOV: the most segments readv and friends accept, and the
 * most host iovecs hvrun hands to the host for them (host IOV_MAX). */
#define GUEST_IOV_MAX 1024

/* ---- waiting without blocking the host ----------------------------------- */

/*
 * A transfer Linux would make wait (a read of an empty pipe, a write to a
 * full one) must not wait in the host: the guest that would make it ready
 * could never run. So the fd is looked at first (poll, timeout 0); not
 * ready, the thread is parked on it (proxy_block_on_fd) and the whole
 * syscall runs again from the start once it is ready, which is why the
 * look comes before any side effect. With no other guest thread, the
 * scheduler then waits on that host fd: the blocking call Linux makes.
 *
 * Only fds whose transfers can wait are looked at: pipes and FIFOs,
 * sockets, character devices (a terminal with nothing typed waits for
 * an external event) and anonymous inodes such as eventfds (fd_is_anon),
 * without O_NONBLOCK. Regular files, directories and
 * block devices never wait for a process; an O_NONBLOCK fd answers EAGAIN
 * itself. Positioned transfers are left alone too: pipes, sockets and
 * terminals refuse them (ESPIPE) before waiting.
 *
 * Writes: a blocking write larger than the room in a pipe or socket
 * writes what fits and then waits for the rest, which can come only from
 * its reader. When that reader may be a guest (a socket; a pipe whose read
 * end a guest of the run holds), the write, once the fd polls writable, is
 * made with O_NONBLOCK set for that one host call (F_SETFL, restored at
 * once; no guest runs meanwhile); if only part went, the thread parks and
 * the call continues where it stopped (write_nowait), so it still returns
 * the whole count, as callers that write once (an unbuffered CPython
 * stream) need. A pipe read from outside the run (hvrun's own stdout)
 * and a terminal get the blocking host write as before, once writable:
 * only their outside reader can make room, and their open file
 * description is shared with host processes, which would see the
 * O_NONBLOCK for the length of the call. So does a pipe write of at most
 * PIPE_BUF bytes, which a pipe that polls writable has a free page for.
 */

/* A guest fd whose transfers could wait: a waiting type, in blocking
 * mode. status_flags are the host F_GETFL flags (restored after a call
 * made with O_NONBLOCK). */
struct wait_fd {
    int host_fd;
    mode_t type;
    uint64_t dev, ino; /* the file's identity */
    int status_flags;
};

/* The S_IFMT type of the file behind a guest fd slot, cached in the slot
 * exactly as fsmeta.c caches it (the file of an open fd cannot change); 0
 * when fstat fails. */
static mode_t fd_type(struct proxy_fd *f)
{
    return proxy_fd_identity(f) ? f->host_type : 0;
}

/* A device whose transfers never wait and that is no terminal: the
 * memory devices /dev/null, /dev/zero, /dev/full, /dev/random and
 * /dev/urandom (major 1; not /dev/kmsg, whose reads wait). A transfer on
 * one goes straight to the host, without a poll and an F_GETFL first:
 * `dd bs=1` to /dev/null made six host calls a byte beside its two. */
static bool fd_never_waits(struct proxy_fd *f)
{
    if (!S_ISCHR(fd_type(f)) || major(f->host_rdev) != 1)
        return false;
    unsigned int minor_nr = minor(f->host_rdev);
    return minor_nr == 3 || minor_nr == 5 || minor_nr == 7 ||
           minor_nr == 8 || minor_nr == 9;
}

/* Whether the slot's host file is a terminal, asked once: what a write
 * does to a terminal (tty.c) needs asking for no other file. */
static bool fd_is_tty(struct proxy_fd *f)
{
    if (!f->tty_known) {
        f->tty = S_ISCHR(fd_type(f)) && !fd_never_waits(f) &&
                 isatty(f->host_fd);
        f->tty_known = true;
    }
    return f->tty;
}

/* An anonymous inode whose transfers may wait (an eventfd read at counter
 * 0 or a write that would overflow it; timerfd, inotify): fstat works and
 * gives no S_IFMT type, and the host names it "anon_inode:...". An epoll
 * fd is one too, but its reads and writes fail at once (EINVAL). */
static bool fd_is_anon(struct proxy_fd *f)
{
    if (fd_type(f) != 0 || !f->meta_known)
        return false;
    char path[64], link[64];
    snprintf(path, sizeof(path), "/proc/self/fd/%d", f->host_fd);
    ssize_t len = readlink(path, link, sizeof(link) - 1);
    if (len < 0)
        return false;
    link[len] = '\0';
    return strncmp(link, "anon_inode:", 11) == 0 &&
           strcmp(link, "anon_inode:[eventpoll]") != 0;
}

/* Whether the host fd is the anonymous inode named `name`. */
static bool anon_kind_is(int host_fd, const char *name)
{
    char path[64], link[64];
    snprintf(path, sizeof(path), "/proc/self/fd/%d", host_fd);
    ssize_t len = readlink(path, link, sizeof(link) - 1);
    if (len < 0)
        return false;
    link[len] = '\0';
    return strcmp(link, name) == 0;
}

/* Fills *w and returns true when transfers on guest_fd could wait. */
static bool wait_fd_get(struct proxy_process *p, int guest_fd,
                        struct wait_fd *w)
{
    struct proxy_fd *f = proxy_fd_get(&p->fds, guest_fd);
    if (!f)
        return false;
    mode_t type = fd_type(f);
    if ((!S_ISFIFO(type) && !S_ISSOCK(type) && !S_ISCHR(type) &&
         !fd_is_anon(f)) ||
        fd_never_waits(f))
        return false;
    int fl = fcntl(f->host_fd, F_GETFL);
    if (fl < 0 || (fl & O_NONBLOCK))
        return false;
    *w = (struct wait_fd){.host_fd = f->host_fd,
                          .type = type,
                          .dev = f->host_dev,
                          .ino = f->host_ino,
                          .status_flags = fl};
    return true;
}

bool proxy_fifo_end_in_run(struct proxy_process *p, dev_t dev, ino_t ino,
                           bool writer)
{
    int nr_procs = p->world ? p->world->nr_procs : 1;
    int other_only = writer ? O_RDONLY : O_WRONLY;
    for (int i = 0; i < nr_procs; i++) {
        struct proxy_process *q = p->world ? p->world->procs[i] : p;
        for (int fd = 0; !q->zombie && fd < q->fds.cap; fd++) {
            struct proxy_fd *f = proxy_fd_get(&q->fds, fd);
            if (!f || !S_ISFIFO(fd_type(f)) || f->host_dev != dev ||
                f->host_ino != ino)
                continue;
            int fl = fcntl(f->host_fd, F_GETFL);
            if (fl >= 0 && (fl & O_ACCMODE) != other_only)
                return true;
        }
    }
    return false;
}

/* Whether a guest of the run (the writer's process too: another of its
 * threads may read) holds an fd that can read the pipe or FIFO w. */
static bool pipe_read_end_in_run(struct proxy_process *p,
                                 const struct wait_fd *w)
{
    return proxy_fifo_end_in_run(p, w->dev, w->ino, false);
}

void proxy_fifo_writer_opened(struct proxy_process *p, dev_t dev, ino_t ino)
{
    int nr_procs = p->world ? p->world->nr_procs : 1;
    for (int i = 0; i < nr_procs; i++) {
        struct proxy_process *q = p->world ? p->world->procs[i] : p;
        for (int k = 0; !q->zombie && k < q->nr_threads; k++) {
            struct proxy_thread_io *io = &q->threads[k].io;
            if (io->fifo_parked && io->fifo_dev == dev && io->fifo_ino == ino)
                io->fifo_partner = true;
        }
    }
}

static bool sock_is_stream(int host_fd)
{
    int type;
    socklen_t len = sizeof(type);
    return getsockopt(host_fd, SOL_SOCKET, SO_TYPE, &type, &len) == 0 &&
           type == SOCK_STREAM;
}

/* A socket's SO_RCVTIMEO (POLLIN) or SO_SNDTIMEO (POLLOUT) in ns; 0 when
 * unset or host_fd is not a socket. */
uint64_t proxy_sock_timeout_ns(int host_fd, short events)
{
    struct timeval tv;
    socklen_t len = sizeof(tv);
    int opt = (events & POLLOUT) ? SO_SNDTIMEO : SO_RCVTIMEO;
    if (getsockopt(host_fd, SOL_SOCKET, opt, &tv, &len) < 0 || tv.tv_sec < 0)
        return 0;
    return (uint64_t)tv.tv_sec * 1000000000ULL + (uint64_t)tv.tv_usec * 1000ULL;
}

/*
 * A call Linux fails at once on an fd that is not ready must not park
 * (nothing would ever make that fd ready): the fd not open for the
 * direction (the wrong end of a pipe or FIFO, an O_RDONLY terminal: EBADF)
 * or without the operation (EINVAL), a socket that is not connected,
 * listening or shut down (ENOTCONN, EPIPE, EINVAL). The host says so
 * without moving a byte: a readv/writev of no segments checks the file's
 * mode and stops (do_iter_read/write); on a socket, a receive of 0 bytes
 * with MSG_PEEK|MSG_DONTWAIT, and on a stream socket a send of 0 bytes
 * with MSG_DONTWAIT, meet the protocol's state checks first (a datagram
 * socket would send an empty datagram: left to wait). Returns -EAGAIN when
 * the call may wait, else the error.
 */
static long fd_fails_at_once(const struct wait_fd *w, bool reading)
{
    ssize_t r;
    if (!S_ISSOCK(w->type))
        r = reading ? readv(w->host_fd, NULL, 0) : writev(w->host_fd, NULL, 0);
    else if (reading)
        r = recv(w->host_fd, NULL, 0, MSG_PEEK | MSG_DONTWAIT);
    else if (sock_is_stream(w->host_fd))
        r = send(w->host_fd, NULL, 0, MSG_DONTWAIT | MSG_NOSIGNAL);
    else
        return -EAGAIN;
    return r < 0 && errno != EAGAIN ? -errno : -EAGAIN;
}

/* Whether a write of len_bytes to w, which polls writable, must be made
 * with O_NONBLOCK (see above). */
static bool write_must_not_wait(struct proxy_process *p,
                                const struct wait_fd *w, size_t len_bytes)
{
    /* An eventfd can poll writable yet refuse a large value: the write
     * must not wait in the host either. */
    if (S_ISSOCK(w->type) || w->type == 0)
        return true;
    return S_ISFIFO(w->type) && len_bytes > PIPE_BUF &&
           pipe_read_end_in_run(p, w);
}

/* Anything in revents counts (POLLHUP, POLLERR: the call then says EOF or
 * the error); so does a failed look, leaving the answer to the call. */
static bool host_fd_ready(int host_fd, short events)
{
    struct pollfd pfd = {.fd = host_fd, .events = events};
    return poll(&pfd, 1, 0) != 0;
}

/* O_NONBLOCK on w's open file description for one host call; false (the
 * call then may wait) when the host refuses. */
static bool nowait_begin(const struct wait_fd *w)
{
    return fcntl(w->host_fd, F_SETFL, w->status_flags | O_NONBLOCK) == 0;
}

static void nowait_end(const struct wait_fd *w)
{
    (void)fcntl(w->host_fd, F_SETFL, w->status_flags);
}

/* ---- read / write -------------------------------------------------------- */

/* How a transfer addresses the file: at the fd's offset, at an explicit
 * offset (pread/preadv), or preadv2-style with RWF_* flags (offset -1 there
 * means the fd's offset). */
enum xfer_kind { XFER_AT_FD_POS, XFER_AT_OFFSET, XFER_V2 };

struct xfer {
    bool into_guest; /* read-like: host fd -> guest memory */
    enum xfer_kind kind;
    int64_t offset;
    int rwf; /* RWF_* for XFER_V2 */
    /* vmsplice into a pipe: wait for room, then move what fits and return
     * that (iter_to_pipe), where a write waits until all of it went */
    bool what_fits;
};

/* One host call for a prepared transfer. A single segment uses plain
 * read/write/pread/pwrite, which keep Linux's answers for zero-length
 * transfers (read(dir, buf, 0) is EISDIR, readv with no segment is 0). */
static long host_xfer(int host_fd, const struct xfer *x,
                      const struct iovec *iov, int n)
{
    long r;
    if (n <= 1 && x->kind != XFER_V2) {
        char none;
        void *buf = n ? iov[0].iov_base : &none;
        size_t len = n ? iov[0].iov_len : 0;
        if (x->kind == XFER_AT_FD_POS)
            r = x->into_guest ? read(host_fd, buf, len)
                              : write(host_fd, buf, len);
        else
            r = x->into_guest ? pread(host_fd, buf, len, x->offset)
                              : pwrite(host_fd, buf, len, x->offset);
        return proxy_host_result(r);
    }
    /* x86-64 passes the whole offset in pos_l; pos_h is ignored. */
    switch (x->kind) {
    case XFER_AT_FD_POS:
        r = x->into_guest ? readv(host_fd, iov, n) : writev(host_fd, iov, n);
        break;
    case XFER_AT_OFFSET:
        r = syscall(x->into_guest ? SYS_preadv : SYS_pwritev, host_fd, iov, n,
                    x->offset, 0L);
        break;
    default:
        r = syscall(x->into_guest ? SYS_preadv2 : SYS_pwritev2, host_fd, iov, n,
                    x->offset, 0L, x->rwf);
        break;
    }
    return proxy_host_result(r);
}

static int xfer_prot(const struct xfer *x)
{
    /* Reading from the file writes guest memory, and the reverse. */
    return x->into_guest ? PROT_WRITE : PROT_READ;
}

/* Whether a transfer uses the fd's offset (pipes and sockets take only
 * these) and may wait (RWF_NOWAIT says it must not). */
static bool xfer_may_wait(const struct xfer *x)
{
    if (x->kind == XFER_V2)
        return x->offset == -1 && !(x->rwf & RWF_NOWAIT);
    return x->kind == XFER_AT_FD_POS;
}

/* Drops the first skip_bytes of iov[0..n), moving the rest up; returns
 * the number of segments left. */
static int iov_skip(struct iovec *iov, int n, size_t skip_bytes)
{
    int i = 0;
    while (i < n && skip_bytes >= iov[i].iov_len)
        skip_bytes -= iov[i++].iov_len;
    if (i < n) {
        iov[i].iov_base = (char *)iov[i].iov_base + skip_bytes;
        iov[i].iov_len -= skip_bytes;
    }
    memmove(iov, iov + i, (size_t)(n - i) * sizeof(*iov));
    return n - i;
}

/*
 * A blocking write to a reader that may be a guest (write_must_not_wait),
 * made with O_NONBLOCK so that it moves only what fits. As in Linux it
 * returns once all bytes_total are written (or on an error, with the
 * count so far if any): when only part went, the thread is parked until
 * the fd is writable with its progress kept (xfer_progress.c), and the
 * call, made again from the start, skips the bytes already written. A
 * signal or SO_SNDTIMEO that ends the wait makes the count so far the
 * result, as in Linux. Without a thread to keep the progress with, the
 * result is the short count.
 */
static long write_nowait(struct proxy_process *p, const struct wait_fd *w,
                         const struct xfer *x, struct iovec *iov, int n,
                         size_t bytes_total)
{
    size_t done = proxy_xfer_resume(p);
    if (done >= bytes_total)
        done = 0; /* the call changed under the parked one: start again */
    n = iov_skip(iov, n, done);
    bool nowait = nowait_begin(w);
    long r = host_xfer(w->host_fd, x, iov, n);
    if (nowait)
        nowait_end(w);
    if (r > 0)
        done += (size_t)r;
    if (r < 0 && r != -EAGAIN && done > 0) {
        (void)proxy_epipe_signal(p, r); /* Linux signals EPIPE after a part too */
        return (long)done;
    }
    if (r < 0 && r != -EAGAIN)
        return r;
    if (done == bytes_total || (!proxy_xfer_can_keep(p) && done > 0))
        return (long)done;
    return proxy_xfer_park(p, done, w->host_fd, POLLOUT,
                           proxy_sock_timeout_ns(w->host_fd, POLLOUT));
}

/*
 * host_xfer for guest_fd without waiting in the host (see "waiting without
 * blocking the host"): PROXY_RET_BLOCK when the fd is not ready, or when
 * a write parks part way (write_nowait). Zero-length transfers go
 * straight to the host: Linux returns 0 for them on pipes and sockets
 * without waiting.
 */
static long xfer_host_nowait(struct proxy_process *p, int guest_fd, int host_fd,
                             const struct xfer *x, struct iovec *iov, int n)
{
    size_t bytes = 0;
    for (int i = 0; i < n; i++)
        bytes += iov[i].iov_len;
    struct wait_fd w;
    if ((bytes == 0 && !x->into_guest) || !xfer_may_wait(x) ||
        !wait_fd_get(p, guest_fd, &w))
        return host_xfer(host_fd, x, iov, n);
    /* inotify waits for an event before it finds the buffer too small
     * (EINVAL), even for 0 bytes; eventfd and timerfd refuse transfers
     * under 8 bytes at once, and pipes and sockets read 0 bytes at once */
    bool waits_first = w.type == 0 && x->into_guest &&
                       anon_kind_is(host_fd, "anon_inode:inotify");
    if (!waits_first && (bytes == 0 || (w.type == 0 && bytes < sizeof(uint64_t))))
        return host_xfer(host_fd, x, iov, n);
    short events = x->into_guest ? POLLIN : POLLOUT;
    proxy_tty_settle(host_fd, events); /* a pty's data on its way (tty.c) */
    if (!host_fd_ready(host_fd, events)) {
        long err = fd_fails_at_once(&w, x->into_guest);
        if (err != -EAGAIN) {
            /* a write parked part way returns its part, as in Linux */
            uint64_t done = proxy_xfer_resume(p);
            return done > 0 && done < bytes ? (long)done : err;
        }
        /* a write parked part way keeps its part (and returns it when
         * SO_SNDTIMEO passes) */
        return proxy_xfer_park(p, proxy_xfer_resume(p), host_fd, events,
                               proxy_sock_timeout_ns(host_fd, events));
    }
    if (x->what_fits) {
        struct xfer once = *x;
        once.rwf |= RWF_NOWAIT;
        return host_xfer(host_fd, &once, iov, n);
    }
    /* Ready to read: the read returns what is there without waiting. A
     * write parked part way goes on as it began, whatever changed. */
    if (x->into_guest ||
        (!write_must_not_wait(p, &w, bytes) && !proxy_xfer_done_before(p)))
        return host_xfer(host_fd, x, iov, n);
    return write_nowait(p, &w, x, iov, n, bytes);
}

/* read, write, pread64, pwrite64: one guest buffer. */

/* A read of a bytecode cache whose header the run shows as its own
 * (fsmeta.c): where the bytes came from in the file. */
static void pyc_read_done(const struct proxy_fd *f, int host_fd,
                          const struct xfer *x, const struct iovec *iov, int n,
                          size_t got)
{
    int64_t start;
    if (x->kind == XFER_AT_OFFSET || (x->kind == XFER_V2 && x->offset != -1))
        start = x->offset;
    else if ((start = lseek(host_fd, 0, SEEK_CUR)) < 0)
        return;
    else
        start -= (int64_t)got;
    proxy_meta_pyc_read(f, start, iov, n, got);
}

/* Who serves a transfer: a signalfd's records, detcore's stream for
 * /dev/urandom and /dev/random reads (vfs.c), or the host fd. */
static long xfer_dispatch(struct proxy_process *p, int guest_fd, int host_fd,
                          const struct xfer *x, struct iovec *iov, int n)
{
    if (proxy_pidfd_is(p, guest_fd)) /* no read or write file operation */
        return -EINVAL;
    if (proxy_secretmem_is(p, guest_fd)) /* ...nor FMODE_PREAD/PWRITE */
        return x->kind == XFER_AT_OFFSET ||
                       (x->kind == XFER_V2 && x->offset != -1)
                   ? -ESPIPE
                   : -EINVAL;
    if (x->kind == XFER_AT_FD_POS && proxy_signalfd_is(p, guest_fd))
        return proxy_signalfd_xfer(p, guest_fd, x->into_guest, iov, n);
    struct proxy_fd *f = proxy_fd_get(&p->fds, guest_fd);
    if (f && f->vfd && x->kind != XFER_V2)
        return proxy_procfile_xfer(p, guest_fd, x->into_guest,
                                   x->kind == XFER_AT_OFFSET, x->offset, iov,
                                   n);
    if (f && f->vfd) /* preadv2/pwritev2: offset -1 is the fd's position */
        return proxy_procfile_xfer(p, guest_fd, x->into_guest, x->offset != -1,
                                   x->offset, iov, n);
    if (!x->into_guest && f && f->timerfd)
        return -EINVAL; /* a timerfd is read, never written */
    if (f && f->perf) /* preadv2 at offset -1 reads as read does */
        return proxy_perf_xfer(p, f->perf, x->into_guest,
                               x->kind == XFER_AT_OFFSET ||
                                   (x->kind == XFER_V2 && x->offset != -1),
                               iov, n);
    if (f && f->mqd)
        return proxy_mq_xfer(p, guest_fd, x->into_guest, iov, n);
    if (x->into_guest && proxy_vfs_fd_det_random(p, guest_fd))
        return proxy_vfs_random_read(p, iov, n);
    long jc = proxy_tty_job_control(p, host_fd, x->into_guest ? PROXY_TTY_READ
                                                              : PROXY_TTY_WRITE);
    if (jc)
        return jc; /* a background group's read or write of its terminal */
    if (!x->into_guest) { /* RLIMIT_FSIZE cuts it, or refuses it */
        bool at_offset = x->kind == XFER_AT_OFFSET ||
                         (x->kind == XFER_V2 && x->offset != -1);
        long fz = proxy_fsize_clip_write(p, host_fd, at_offset ? x->offset : -1,
                                         iov, &n);
        if (fz < 0)
            return fz;
    }
    long r = xfer_host_nowait(p, guest_fd, host_fd, x, iov, n);
    if (!x->into_guest && r > 0 && (!f || fd_is_tty(f))) /* ^C to a pty master */
        proxy_tty_wrote(p, host_fd, iov, n, (size_t)r);
    if (x->into_guest && r > 0) /* a pty's bytes in flight are counted */
        proxy_tty_read_done(host_fd, (size_t)r);
    if (x->into_guest && r > 0 && f && f->pyc_fix)
        pyc_read_done(f, host_fd, x, iov, n, (size_t)r);
    if (x->into_guest && r > 0 && f && f->inotify)
        proxy_inotify_read_done(iov, n, (size_t)r);
    return r;
}

/* The end of every read/write: a parked call stays parked; a write moves
 * the file's times and turns EPIPE into the guest's SIGPIPE. */
static long xfer_done(struct proxy_process *p, int guest_fd,
                      const struct xfer *x, long r)
{
    if (r == PROXY_RET_BLOCK)
        return r;
    if (!x->into_guest && r > 0)
        proxy_meta_note_fd(p, guest_fd, PROXY_META_CONTENT);
    return x->into_guest ? r : proxy_epipe_signal(p, r);
}

static long xfer_buf(struct proxy_process *p, uint64_t guest_fd, gva_t buf,
                     uint64_t count, const struct xfer *x)
{
    if (x->kind == XFER_AT_OFFSET && x->offset < 0)
        return -EINVAL; /* checked before the fd, as Linux does */
    int host_fd = guest_host_fd(p, guest_fd);
    if (host_fd < 0)
        return host_fd;
    size_t len = count > RW_MAX_BYTES ? RW_MAX_BYTES : count;
    struct iovec iov[RW_BUF_IOV_MAX];
    size_t covered;
    int n = vmm_as_host_iov(p->as, buf, len, xfer_prot(x), iov, RW_BUF_IOV_MAX,
                            &covered);
    /* Stopped at a page without a PTE: past a file's end that the file
     * has grown over, or lazy memory not backed yet. */
    if (covered < len && vmm_as_fault_in(p->as, buf + covered,
                                         len - covered, xfer_prot(x)))
        n = vmm_as_host_iov(p->as, buf, len, xfer_prot(x), iov,
                            RW_BUF_IOV_MAX, &covered);
    if (len > 0 && covered == 0)
        return -EFAULT;
    long r = xfer_dispatch(p, (int)guest_fd, host_fd, x, iov, n);
    return xfer_done(p, (int)guest_fd, x, r);
}

static long sys_read(struct proxy_process *p, const uint64_t a[6])
{
    struct xfer x = {.into_guest = true, .kind = XFER_AT_FD_POS};
    return xfer_buf(p, a[0], a[1], a[2], &x);
}

static long sys_write(struct proxy_process *p, const uint64_t a[6])
{
    struct xfer x = {.into_guest = false, .kind = XFER_AT_FD_POS};
    return xfer_buf(p, a[0], a[1], a[2], &x);
}

static long sys_pread64(struct proxy_process *p, const uint64_t a[6])
{
    struct xfer x = {
        .into_guest = true, .kind = XFER_AT_OFFSET, .offset = (int64_t)a[3]};
    return xfer_buf(p, a[0], a[1], a[2], &x);
}

static long sys_pwrite64(struct proxy_process *p, const uint64_t a[6])
{
    struct xfer x = {
        .into_guest = false, .kind = XFER_AT_OFFSET, .offset = (int64_t)a[3]};
    return xfer_buf(p, a[0], a[1], a[2], &x);
}

/* The guest's struct iovec (x86-64: pointer and size_t). */
struct guest_iovec {
    uint64_t base;
    uint64_t len;
};

/*
 * Reads the guest iovec array and checks it like Linux's import_iovec: more
 * than UIO_MAXIOV segments or a length that is negative as ssize_t is
 * -EINVAL. Returns the segment array (freed by the caller) via *out.
 */
static int guest_iovecs_in(struct proxy_process *p, gva_t vec, uint64_t cnt,
                           struct guest_iovec **out)
{
    *out = NULL;
    if (cnt > GUEST_IOV_MAX)
        return -EINVAL;
    if (cnt == 0)
        return 0;
    struct guest_iovec *giov = malloc(cnt * sizeof(*giov));
    if (!giov)
        return -ENOMEM;
    if (proxy_copy_in(p, giov, vec, cnt * sizeof(*giov)) < 0) {
        free(giov);
        return -EFAULT;
    }
    for (uint64_t i = 0; i < cnt; i++) {
        if ((int64_t)giov[i].len < 0) {
            free(giov);
            return -EINVAL;
        }
    }
    *out = giov;
    return (int)cnt;
}

/*
 * Host iovecs for the guest segments, in order, up to RW_MAX_BYTES in all.
 * Stops at the first segment not fully mapped (the transfer is partial
 * there); -EFAULT when nothing at all is mapped but something was asked.
 */
static int guest_segments_iov(struct proxy_process *p,
                              const struct guest_iovec *giov, int cnt, int prot,
                              struct iovec *iov)
{
    int n = 0;
    size_t left = RW_MAX_BYTES, total = 0;
    bool wanted = false;
    for (int i = 0; i < cnt && left > 0 && n < GUEST_IOV_MAX; i++) {
        size_t len = giov[i].len < left ? giov[i].len : left;
        if (len == 0)
            continue;
        wanted = true;
        size_t covered;
        n += vmm_as_host_iov(p->as, giov[i].base, len, prot, iov + n,
                             GUEST_IOV_MAX - n, &covered);
        total += covered;
        left -= covered;
        if (covered < len)
            break;
    }
    return wanted && total == 0 ? -EFAULT : n;
}

/* readv, writev and the positioned/flagged variants. */
static long xfer_vec(struct proxy_process *p, uint64_t guest_fd, gva_t vec,
                     uint64_t cnt, const struct xfer *x)
{
    if (x->kind == XFER_AT_OFFSET && x->offset < 0)
        return -EINVAL;
    if (x->kind == XFER_V2 && x->offset < -1)
        return -EINVAL;
    int host_fd = guest_host_fd(p, guest_fd);
    if (host_fd < 0)
        return host_fd;
    struct guest_iovec *giov;
    int nseg = guest_iovecs_in(p, vec, cnt, &giov);
    if (nseg < 0)
        return nseg;
    struct iovec *iov = malloc(GUEST_IOV_MAX * sizeof(*iov));
    if (!iov) {
        free(giov);
        return -ENOMEM;
    }
    long r = guest_segments_iov(p, giov, nseg, xfer_prot(x), iov);
    if (r >= 0)
        r = xfer_dispatch(p, (int)guest_fd, host_fd, x, iov, (int)r);
    free(iov);
    free(giov);
    return xfer_done(p, (int)guest_fd, x, r);
}

static long sys_readv(struct proxy_process *p, const uint64_t a[6])
{
    struct xfer x = {.into_guest = true, .kind = XFER_AT_FD_POS};
    return xfer_vec(p, a[0], a[1], a[2], &x);
}

static long sys_writev(struct proxy_process *p, const uint64_t a[6])
{
    struct xfer x = {.into_guest = false, .kind = XFER_AT_FD_POS};
    return xfer_vec(p, a[0], a[1], a[2], &x);
}

/* preadv(fd, vec, vlen, pos_l, pos_h): on x86-64 pos_l is the offset. */
static long sys_preadv(struct proxy_process *p, const uint64_t a[6])
{
    struct xfer x = {
        .into_guest = true, .kind = XFER_AT_OFFSET, .offset = (int64_t)a[3]};
    return xfer_vec(p, a[0], a[1], a[2], &x);
}

static long sys_pwritev(struct proxy_process *p, const uint64_t a[6])
{
    struct xfer x = {
        .into_guest = false, .kind = XFER_AT_OFFSET, .offset = (int64_t)a[3]};
    return xfer_vec(p, a[0], a[1], a[2], &x);
}

/* preadv2(fd, vec, vlen, pos_l, pos_h, flags); the host checks the flags. */
static long sys_preadv2(struct proxy_process *p, const uint64_t a[6])
{
    struct xfer x = {.into_guest = true,
                     .kind = XFER_V2,
                     .offset = (int64_t)a[3],
                     .rwf = (int)a[5]};
    return xfer_vec(p, a[0], a[1], a[2], &x);
}

static long sys_pwritev2(struct proxy_process *p, const uint64_t a[6])
{
    struct xfer x = {.into_guest = false,
                     .kind = XFER_V2,
                     .offset = (int64_t)a[3],
                     .rwf = (int)a[5]};
    return xfer_vec(p, a[0], a[1], a[2], &x);
}

/* The result is an offset that may exceed 4095, so only a negative host
 * return is an error. A directory listed in name order seeks in that
 * listing (fsmeta.c). */
static long sys_lseek(struct proxy_process *p, const uint64_t a[6])
{
    int host_fd = guest_host_fd(p, a[0]);
    if (host_fd < 0)
        return host_fd;
    const struct proxy_fd *f = proxy_fd_get(&p->fds, (int)a[0]);
    if (f && (f->perf || f->secretmem))
        return -ESPIPE; /* perf's and secretmem's files have no llseek */
    long listed;
    if (proxy_meta_dir_seek(p, (int)a[0], (int64_t)a[1],
                            (int)(unsigned int)a[2], &listed))
        return listed;
    off_t r = lseek(host_fd, (off_t)a[1], (int)(unsigned int)a[2]);
    return r < 0 ? -errno : (long)r;
}

/* ---- ioctl --------------------------------------------------------------- */

/* struct termios2 is not in glibc's headers; these are <asm/ioctls.h>'s
 * _IOR/_IOW('T', 0x2A..0x2D, struct termios2) with its 44 bytes. */
#define IOCTL_TCGETS2 0x802C542AU
#define IOCTL_TCSETS2 0x402C542BU
#define IOCTL_TCSETSW2 0x402C542CU
#define IOCTL_TCSETSF2 0x402C542DU
/* The kernel's struct termios (not glibc's larger one), termios2, termio,
 * winsize. */
#define KTERMIOS_BYTES 36
#define KTERMIOS2_BYTES 44
#define KTERMIO_BYTES 18
#define WINSIZE_BYTES 8

enum ioctl_arg {
    IOCTL_NONE,  /* no argument */
    IOCTL_VALUE, /* the argument is an integer, passed as is */
    IOCTL_IN,    /* points to size bytes the call reads */
    IOCTL_OUT,   /* points to size bytes the call writes */
};

struct ioctl_desc {
    unsigned int req;
    enum ioctl_arg arg;
    unsigned int size_bytes;
};

/* The requests passed to the host fd, with how their argument moves. */
static const struct ioctl_desc ioctl_descs[] = {
    /* terminal attributes */
    {TCGETS, IOCTL_OUT, KTERMIOS_BYTES},
    {TCSETS, IOCTL_IN, KTERMIOS_BYTES},
    {TCSETSW, IOCTL_IN, KTERMIOS_BYTES},
    {TCSETSF, IOCTL_IN, KTERMIOS_BYTES},
    {IOCTL_TCGETS2, IOCTL_OUT, KTERMIOS2_BYTES},
    {IOCTL_TCSETS2, IOCTL_IN, KTERMIOS2_BYTES},
    {IOCTL_TCSETSW2, IOCTL_IN, KTERMIOS2_BYTES},
    {IOCTL_TCSETSF2, IOCTL_IN, KTERMIOS2_BYTES},
    {TCGETA, IOCTL_OUT, KTERMIO_BYTES},
    {TCSETA, IOCTL_IN, KTERMIO_BYTES},
    {TCSETAW, IOCTL_IN, KTERMIO_BYTES},
    {TCSETAF, IOCTL_IN, KTERMIO_BYTES},
    {TIOCGLCKTRMIOS, IOCTL_OUT, KTERMIOS_BYTES}, /* the locked bits */
    {TIOCGWINSZ, IOCTL_OUT, WINSIZE_BYTES},
    {TIOCSWINSZ, IOCTL_IN, WINSIZE_BYTES},
    /* terminal control */
    {TCFLSH, IOCTL_VALUE, 0},
    {TCXONC, IOCTL_VALUE, 0},
    {TCSBRK, IOCTL_VALUE, 0},
    {TCSBRKP, IOCTL_VALUE, 0},
    {TIOCSBRK, IOCTL_NONE, 0},
    {TIOCCBRK, IOCTL_NONE, 0},
    {TIOCEXCL, IOCTL_NONE, 0},
    {TIOCNXCL, IOCTL_NONE, 0},
    {TIOCGEXCL, IOCTL_OUT, sizeof(int)},
    {TIOCOUTQ, IOCTL_OUT, sizeof(int)},
    {TIOCGETD, IOCTL_OUT, sizeof(int)},
    {TIOCSETD, IOCTL_IN, sizeof(int)},
    {TIOCMGET, IOCTL_OUT, sizeof(int)},
    {TIOCMSET, IOCTL_IN, sizeof(int)},
    {TIOCMBIS, IOCTL_IN, sizeof(int)},
    {TIOCMBIC, IOCTL_IN, sizeof(int)},
    {TIOCPKT, IOCTL_IN, sizeof(int)},
    {TIOCGPKT, IOCTL_OUT, sizeof(int)},
    /* pseudo-terminal masters (posix_openpt, grantpt, unlockpt, ptsname) */
    {TIOCGPTN, IOCTL_OUT, sizeof(unsigned int)},
    {TIOCSPTLCK, IOCTL_IN, sizeof(int)},
    {TIOCGPTLCK, IOCTL_OUT, sizeof(int)},
    /* any fd */
    {FIONREAD, IOCTL_OUT, sizeof(int)},
    {SIOCATMARK, IOCTL_OUT, sizeof(int)}, /* a socket's: at the urgent mark */
    {FIONBIO, IOCTL_IN, sizeof(int)},
    {FIOASYNC, IOCTL_IN, sizeof(int)},
    /* regular files and directories */
    {FIOQSIZE, IOCTL_OUT, sizeof(int64_t)},
    {FIGETBSZ, IOCTL_OUT, sizeof(int)},
    /* lsattr/chattr: declared with a long, but the kernel moves an int */
    {FS_IOC_GETFLAGS, IOCTL_OUT, sizeof(int)},
    {FS_IOC_SETFLAGS, IOCTL_IN, sizeof(int)},
};

static const struct ioctl_desc *ioctl_desc_find(unsigned int req)
{
    for (size_t i = 0; i < sizeof(ioctl_descs) / sizeof(ioctl_descs[0]); i++) {
        if (ioctl_descs[i].req == req)
            return &ioctl_descs[i];
    }
    return NULL;
}

/* The requests Linux checks with tty_check_change (set_termios, TCFLSH,
 * TCXONC, TCSBRK and TCSBRKP): a background group's gets SIGTTOU. */
static bool ioctl_changes_tty(unsigned int req)
{
    switch (req) {
    case TCSETS: case TCSETSW: case TCSETSF:
    case IOCTL_TCSETS2: case IOCTL_TCSETSW2: case IOCTL_TCSETSF2:
    case TCSETA: case TCSETAW: case TCSETAF:
    case TCFLSH: case TCXONC: case TCSBRK: case TCSBRKP:
        return true;
    }
    return false;
}

/* Runs a described request: argument copied in, host ioctl, copied out. */
static long ioctl_described(struct proxy_process *p, int host_fd,
                            const struct ioctl_desc *d, uint64_t arg)
{
    uint64_t buf[8] = {0}; /* big enough for every size in the table */
    _Static_assert(sizeof(buf) >= KTERMIOS2_BYTES, "ioctl buffer too small");
    long r;
    switch (d->arg) {
    case IOCTL_NONE:
        return proxy_host_result(ioctl(host_fd, d->req, 0));
    case IOCTL_VALUE:
        return proxy_host_result(ioctl(host_fd, d->req, (unsigned long)arg));
    case IOCTL_IN:
        if (proxy_copy_in(p, buf, arg, d->size_bytes) < 0)
            return -EFAULT;
        return proxy_host_result(ioctl(host_fd, d->req, buf));
    case IOCTL_OUT:
        r = proxy_host_result(ioctl(host_fd, d->req, buf));
        if (r >= 0 && proxy_copy_out(p, arg, buf, d->size_bytes) < 0)
            r = -EFAULT;
        return r;
    }
    return -ENOTTY;
}

/* A pty's bytes in flight are counted (io/tty.c): a guest's FIONREAD
 * waits for them as a read does, and a flush or a termios change is
 * taken into the count. */
static long ioctl_tty_counted(struct proxy_process *p, int host_fd,
                              const struct ioctl_desc *d, uint64_t arg)
{
    unsigned int lflag_before;
    long r;
    switch (d->req) {
    case FIONREAD:
        proxy_tty_settle(host_fd, POLLIN);
        return ioctl_described(p, host_fd, d, arg);
    case TCFLSH: case TCSETSF: case IOCTL_TCSETSF2: case TCSETAF: case TIOCPKT:
        r = ioctl_described(p, host_fd, d, arg);
        if (r == 0)
            proxy_tty_flushed(host_fd);
        return r;
    case TCSETS: case TCSETSW: case IOCTL_TCSETS2: case IOCTL_TCSETSW2:
    case TCSETA: case TCSETAW:
        if (!proxy_tty_termios_setting(host_fd, &lflag_before))
            return ioctl_described(p, host_fd, d, arg);
        r = ioctl_described(p, host_fd, d, arg);
        if (r == 0)
            proxy_tty_termios_set(host_fd, lflag_before);
        return r;
    }
    return ioctl_described(p, host_fd, d, arg);
}

/* TIOCGPTPEER opens the pty slave and returns a new fd: it gets the host
 * O_CLOEXEC/O_NOCTTY like every open, and the guest's bit in the table. */
static long ioctl_pty_peer(struct proxy_process *p, int host_fd, uint64_t arg)
{
    int flags = (int)arg;
    int peer = ioctl(host_fd, TIOCGPTPEER, flags | O_CLOEXEC | O_NOCTTY);
    if (peer < 0)
        return -errno;
    proxy_tty_opened(p, peer, flags);
    return proxy_fd_install(&p->fds, peer, (flags & O_CLOEXEC) != 0, 0);
}

/* Reflink clones name their source by fd, which must become a host fd. */
static long ioctl_clone(struct proxy_process *p, int host_fd, unsigned int req,
                        uint64_t arg)
{
    if (req == FICLONE) {
        int src = guest_host_fd(p, arg);
        return src < 0 ? src : proxy_host_result(ioctl(host_fd, FICLONE, src));
    }
    struct file_clone_range range;
    if (proxy_copy_in(p, &range, arg, sizeof(range)) < 0)
        return -EFAULT;
    int src = guest_host_fd(p, (uint64_t)range.src_fd);
    if (src < 0)
        return src;
    range.src_fd = src;
    return proxy_host_result(ioctl(host_fd, FICLONERANGE, &range));
}

/* The request number is an unsigned int in Linux; upper bits are dropped.
 * Anything not known here is -ENOTTY, Linux's answer for files. */
/* RNDGETENTCNT on /dev/random or /dev/urandom (char 1:8, 1:9): the pool's
 * entropy count, which Linux 5.18 on reports as 256 once it is ready; a
 * run sees it always ready (its randomness is the seeded stream). */
static long ioctl_entropy_count(struct proxy_process *p, int host_fd,
                                gva_t arg)
{
    struct stat st;
    if (fstat(host_fd, &st) < 0 || !S_ISCHR(st.st_mode) ||
        major(st.st_rdev) != 1 || (minor(st.st_rdev) != 8 &&
                                   minor(st.st_rdev) != 9))
        return -ENOTTY;
    int count = 256;
    return proxy_copy_out(p, arg, &count, sizeof(count)) < 0 ? -EFAULT : 0;
}

static long sys_ioctl(struct proxy_process *p, const uint64_t a[6])
{
    struct proxy_fd *f = proxy_fd_get(&p->fds, (int)a[0]);
    if (!f)
        return -EBADF;
    unsigned int req = (unsigned int)a[1];
    uint64_t arg = a[2];
    switch (req) {
    case FIOCLEX:
    case FIONCLEX:
        /* The guest's close-on-exec bit; host fds keep theirs. */
        f->cloexec = req == FIOCLEX;
        return 0;
    case TIOCGPTPEER:
        return ioctl_pty_peer(p, f->host_fd, arg);
    case FICLONE:
    case FICLONERANGE:
        return ioctl_clone(p, f->host_fd, req, arg);
    case RNDGETENTCNT:
        return ioctl_entropy_count(p, f->host_fd, arg);
    case FIOASYNC: {
        int on;
        if (proxy_copy_in(p, &on, arg, sizeof(on)) < 0)
            return -EFAULT;
        long r = proxy_host_result(ioctl(f->host_fd, FIOASYNC, &on));
        if (r == 0)
            proxy_fasync_set(p, (int)a[0], on != 0);
        return r;
    }
    }
    if (f->maps_pid > 0 && req == PROXY_PROCMAP_QUERY) /* Linux 6.11 */
        return proxy_procmap_query(p, f->maps_pid, arg);
    if (f->vfd && _IOC_TYPE(req) == NSIO) /* a namespace fd's (nsfs) */
        return proxy_procfile_ns_ioctl(p, f, req, a[2]);
    if (f->pidfd_pid > 0 && _IOC_TYPE(req) == 0xFF) /* PIDFS_IOCTL_MAGIC */
        return proxy_pidfd_ioctl(p, (int)a[0], req, arg);
    if (f->perf) {
        long r = proxy_perf_ioctl(p, f->perf, req, arg);
        if (r != 1)
            return r;
    }
    if (proxy_hooks.netdev_ioctl_is(req)) /* ifreq/ifconf pointers (net/) */
        return proxy_hooks.netdev_ioctl(p, f->host_fd, req, arg);
    if (proxy_tty_ioctl_is(req)) /* sessions are virtual (tty.c) */
        return proxy_tty_ioctl(p, f->host_fd, req, arg);
    const struct ioctl_desc *d = ioctl_desc_find(req);
    if (!d) {
        proxy_log(p, 2, "ioctl: request 0x%x on fd %d not supported: ENOTTY",
                  req, (int)a[0]);
        return -ENOTTY;
    }
    if (ioctl_changes_tty(req)) {
        long jc = proxy_tty_job_control(p, f->host_fd, PROXY_TTY_CHANGE);
        if (jc)
            return jc; /* a background group's change: SIGTTOU */
    }
    return ioctl_tty_counted(p, f->host_fd, d, arg);
}

/* ---- pipes and in-kernel copies ------------------------------------------ */

/*
 * The host checks the flags (O_CLOEXEC, O_NONBLOCK, O_DIRECT,
 * O_NOTIFICATION_PIPE; anything else EINVAL). Linux writes the fds out
 * before making them visible, so on -EFAULT none exists: both are undone.
 */
static long do_pipe2(struct proxy_process *p, gva_t fds_gva, int flags)
{
    int host_fds[2];
    if (pipe2(host_fds, flags | O_CLOEXEC) < 0)
        return -errno;
    bool cloexec = (flags & O_CLOEXEC) != 0;
    int rfd = proxy_fd_install(&p->fds, host_fds[0], cloexec, 0);
    if (rfd < 0) {
        close(host_fds[1]);
        return rfd;
    }
    int wfd = proxy_fd_install(&p->fds, host_fds[1], cloexec, 0);
    if (wfd < 0) {
        proxy_fd_close(&p->fds, rfd);
        return wfd;
    }
    int guest_fds[2] = {rfd, wfd};
    if (proxy_copy_out(p, fds_gva, guest_fds, sizeof(guest_fds)) < 0) {
        proxy_fd_close(&p->fds, rfd);
        proxy_fd_close(&p->fds, wfd);
        return -EFAULT;
    }
    return 0;
}

static long sys_pipe(struct proxy_process *p, const uint64_t a[6])
{
    return do_pipe2(p, a[0], 0);
}

static long sys_pipe2(struct proxy_process *p, const uint64_t a[6])
{
    return do_pipe2(p, a[0], (int)a[1]);
}

/* An optional loff_t in/out argument (sendfile, splice, copy_file_range). */
struct guest_offset {
    gva_t gva; /* 0: none, the fd's own offset is used */
    loff_t value;
};

static int guest_offset_in(struct proxy_process *p, gva_t gva,
                           struct guest_offset *o)
{
    o->gva = gva;
    o->value = 0;
    if (gva != 0 && proxy_copy_in(p, &o->value, gva, sizeof(o->value)) < 0)
        return -EFAULT;
    return 0;
}

static loff_t *guest_offset_ptr(struct guest_offset *o)
{
    return o->gva ? &o->value : NULL;
}

/* Writes the updated offset back; a fault there turns r into -EFAULT. */
static long guest_offset_out(struct proxy_process *p,
                             const struct guest_offset *o, long r)
{
    if (o->gva != 0 &&
        proxy_copy_out(p, o->gva, &o->value, sizeof(o->value)) < 0)
        return -EFAULT;
    return r;
}

/*
 * The calls that move data between two fds (sendfile, splice, tee) wait as
 * read and write do: a source that could wait must poll readable and a
 * destination that could wait writable, else the thread is parked on the
 * first that is not. A ready source gives what it has without waiting; the
 * destination gets O_NONBLOCK for the host call where a write would (see
 * above), and EAGAIN there, with nothing moved, parks the thread on it.
 * copy_file_range takes regular files only, which never wait.
 */
struct copy_wait {
    struct wait_fd in, out;
    bool in_waits, out_waits;
    bool out_nowait; /* O_NONBLOCK set on out for the call */
};

/* Before the host call of len_bytes from in to out (guest fds): 0 to go
 * on (copy_wait_end follows the call), or PROXY_RET_BLOCK. splice_flags:
 * SPLICE_F_NONBLOCK means the pipe sides do not wait (the other side
 * still may, as in Linux). */
static long copy_wait_begin(struct proxy_process *p, int in_guest_fd,
                            int out_guest_fd, size_t len_bytes,
                            unsigned int splice_flags, struct copy_wait *cw)
{
    memset(cw, 0, sizeof(*cw));
    if (len_bytes == 0)
        return 0; /* 0 at once, as Linux */
    bool pipes_nowait = (splice_flags & SPLICE_F_NONBLOCK) != 0;
    cw->in_waits = wait_fd_get(p, in_guest_fd, &cw->in) &&
                   !(pipes_nowait && S_ISFIFO(cw->in.type));
    cw->out_waits = wait_fd_get(p, out_guest_fd, &cw->out) &&
                    !(pipes_nowait && S_ISFIFO(cw->out.type));
    bool in_unready = cw->in_waits && !host_fd_ready(cw->in.host_fd, POLLIN);
    bool out_unready =
        cw->out_waits && !host_fd_ready(cw->out.host_fd, POLLOUT);
    if (in_unready || out_unready) {
        /* Linux checks both ends before it waits on either. */
        long err = cw->in_waits ? fd_fails_at_once(&cw->in, true) : -EAGAIN;
        if (err == -EAGAIN && cw->out_waits)
            err = fd_fails_at_once(&cw->out, false);
        if (err != -EAGAIN)
            return err;
        return in_unready ? proxy_block_on_fd(p, cw->in.host_fd, POLLIN)
                          : proxy_block_on_fd(p, cw->out.host_fd, POLLOUT);
    }
    cw->out_nowait = cw->out_waits &&
                     write_must_not_wait(p, &cw->out, len_bytes) &&
                     nowait_begin(&cw->out);
    return 0;
}

/* Restores out's flags. EAGAIN from the destination (it no longer polls
 * writable) parks the thread; any other EAGAIN (a pipe side the guest
 * made non-blocking) is the guest's. */
static long copy_wait_end(struct proxy_process *p, const struct copy_wait *cw,
                          long r)
{
    if (!cw->out_nowait)
        return r;
    nowait_end(&cw->out);
    if (r == -EAGAIN && !host_fd_ready(cw->out.host_fd, POLLOUT))
        return proxy_block_on_fd(p, cw->out.host_fd, POLLOUT);
    return r;
}

/* Linux writes the offset back whatever the result. */
static long sys_sendfile(struct proxy_process *p, const uint64_t a[6])
{
    int in_fd = guest_host_fd(p, a[1]);
    if (in_fd < 0)
        return in_fd;
    int out_fd = guest_host_fd(p, a[0]);
    if (out_fd < 0)
        return out_fd;
    struct guest_offset off;
    if (guest_offset_in(p, a[2], &off) < 0)
        return -EFAULT;
    struct copy_wait cw;
    long r = copy_wait_begin(p, (int)a[1], (int)a[0], (size_t)a[3], 0, &cw);
    if (r != 0)
        return r;
    r = proxy_host_result(
        sendfile(out_fd, in_fd, guest_offset_ptr(&off), (size_t)a[3]));
    r = copy_wait_end(p, &cw, r);
    if (r == PROXY_RET_BLOCK)
        return r;
    if (r > 0)
        proxy_meta_note_fd(p, (int)a[0], PROXY_META_CONTENT);
    return proxy_epipe_signal(p, guest_offset_out(p, &off, r));
}

/*
 * copy_file_range between two filesystems: Linux 5.3 to 5.18 copied
 * through the page cache, later kernels say EXDEV. hvrun copies (up to
 * 1 MiB a call, a short transfer as Linux's), so that whether it works
 * does not depend on where the host put the files (a replay's served copy
 * or overlaid tree, a captured stdout).
 */
#define CROSS_FS_COPY_MAX (1L << 20)
static long copy_across(int in_fd, loff_t *off_in, int out_fd,
                        loff_t *off_out, size_t len)
{
    char buf[65536];
    size_t want = len < (size_t)CROSS_FS_COPY_MAX ? len : CROSS_FS_COPY_MAX;
    long done = 0;
    while ((size_t)done < want) {
        size_t chunk = want - (size_t)done < sizeof(buf)
                           ? want - (size_t)done
                           : sizeof(buf);
        ssize_t n = off_in ? pread(in_fd, buf, chunk, *off_in)
                           : read(in_fd, buf, chunk);
        if (n <= 0) {
            if (n < 0 && done == 0)
                return -errno;
            break;
        }
        ssize_t w = off_out ? pwrite(out_fd, buf, (size_t)n, *off_out)
                            : write(out_fd, buf, (size_t)n);
        if (w < 0 && done == 0)
            return -errno;
        if (w < 0)
            w = 0;
        if (off_in)
            *off_in += w;
        else if (w < n) /* give back what was read and not written */
            (void)lseek(in_fd, (off_t)(w - n), SEEK_CUR);
        if (off_out)
            *off_out += w;
        done += w;
        if (w < n)
            break;
    }
    return done;
}

/* copy_file_range writes the offsets back only after a transfer. */
static long sys_copy_file_range(struct proxy_process *p, const uint64_t a[6])
{
    int in_fd = guest_host_fd(p, a[0]);
    if (in_fd < 0)
        return in_fd;
    int out_fd = guest_host_fd(p, a[2]);
    if (out_fd < 0)
        return out_fd;
    struct guest_offset off_in, off_out;
    if (guest_offset_in(p, a[1], &off_in) < 0 ||
        guest_offset_in(p, a[3], &off_out) < 0)
        return -EFAULT;
    long r = proxy_host_result(copy_file_range(
        in_fd, guest_offset_ptr(&off_in), out_fd, guest_offset_ptr(&off_out),
        (size_t)a[4], (unsigned int)a[5]));
    if (r == -EXDEV)
        r = copy_across(in_fd, guest_offset_ptr(&off_in), out_fd,
                        guest_offset_ptr(&off_out), (size_t)a[4]);
    if (r > 0) {
        proxy_meta_note_fd(p, (int)a[2], PROXY_META_CONTENT);
        r = guest_offset_out(p, &off_in, r);
        r = guest_offset_out(p, &off_out, r);
    }
    return r;
}

/* Before a splice out of an empty pipe waits for data: Linux checks the
 * destination first (do_splice_from: a file that takes no splice, an
 * O_APPEND one: EINVAL at once), so the host is asked without waiting;
 * whatever it answers but EAGAIN is the call's answer (data that came
 * meanwhile moved, or 0 with no writer left). -EAGAIN: wait as usual. */
static long splice_probe(int in_fd, struct guest_offset *off_in, int out_fd,
                         struct guest_offset *off_out, size_t len,
                         unsigned int flags)
{
    struct stat st;
    if (len == 0 || fstat(in_fd, &st) < 0)
        return -EAGAIN;
    /* An anonymous inode (eventfd, epoll, signalfd, timerfd, pidfd: the
     * host objects behind hvrun's too) has no splice_read: EINVAL at once,
     * however empty it is. */
    bool anon = (st.st_mode & S_IFMT) == 0;
    if (!anon && (!S_ISFIFO(st.st_mode) || host_fd_ready(in_fd, POLLIN)))
        return -EAGAIN;
    return proxy_host_result(splice(in_fd, guest_offset_ptr(off_in), out_fd,
                                    guest_offset_ptr(off_out), len,
                                    flags | SPLICE_F_NONBLOCK));
}

static bool host_is_pipe(int fd)
{
    struct stat st;
    return fstat(fd, &st) == 0 && S_ISFIFO(st.st_mode);
}

/*
 * What splice refuses before it looks at either end's contents, in
 * Linux's order (__do_splice, do_splice): an offset given for a pipe
 * (ESPIPE), a source not open for reading or a destination not open for
 * writing (EBADF), neither end a pipe (EINVAL). Checked before hvrun
 * waits for either end: an empty source or a full destination would
 * otherwise park a call that fails at once natively (LTP splice07).
 */
static long splice_refused(struct proxy_process *p, const uint64_t a[6],
                           int in_fd, int out_fd)
{
    /* A perf event's host object is a pipe's read end (perf_event.c):
     * to the guest it is an O_RDWR file that cannot be spliced. */
    const struct proxy_fd *gin = proxy_fd_get(&p->fds, (int)a[0]);
    const struct proxy_fd *gout = proxy_fd_get(&p->fds, (int)a[2]);
    bool in_perf = gin && gin->perf, out_perf = gout && gout->perf;
    bool in_pipe = !in_perf && host_is_pipe(in_fd);
    bool out_pipe = !out_perf && host_is_pipe(out_fd);
    if ((in_pipe && a[1]) || (out_pipe && a[3]))
        return -ESPIPE;
    int in_fl = in_perf ? O_RDWR : fcntl(in_fd, F_GETFL);
    int out_fl = out_perf ? O_RDWR : fcntl(out_fd, F_GETFL);
    if (in_fl < 0 || out_fl < 0 || (in_fl & O_ACCMODE) == O_WRONLY ||
        (out_fl & O_ACCMODE) == O_RDONLY)
        return -EBADF;
    return (in_pipe || out_pipe) && !in_perf && !out_perf ? 0 : -EINVAL;
}

/* splice writes a given offset back whatever the result. */
static long sys_splice(struct proxy_process *p, const uint64_t a[6])
{
    int in_fd = guest_host_fd(p, a[0]);
    if (in_fd < 0)
        return in_fd;
    int out_fd = guest_host_fd(p, a[2]);
    if (out_fd < 0)
        return out_fd;
    struct guest_offset off_in, off_out;
    if (guest_offset_in(p, a[1], &off_in) < 0 ||
        guest_offset_in(p, a[3], &off_out) < 0)
        return -EFAULT;
    long r = a[4] ? splice_refused(p, a, in_fd, out_fd) : 0;
    if (r < 0)
        return r;
    struct copy_wait cw = {0};
    r = splice_probe(in_fd, &off_in, out_fd, &off_out, (size_t)a[4],
                     (unsigned int)a[5]);
    if (r == -EAGAIN) {
        r = copy_wait_begin(p, (int)a[0], (int)a[2], (size_t)a[4],
                            (unsigned int)a[5], &cw);
        if (r != 0)
            return r;
        r = proxy_host_result(splice(in_fd, guest_offset_ptr(&off_in), out_fd,
                                     guest_offset_ptr(&off_out), (size_t)a[4],
                                     (unsigned int)a[5]));
        r = copy_wait_end(p, &cw, r);
    }
    if (r == PROXY_RET_BLOCK)
        return r;
    if (r > 0)
        proxy_meta_note_fd(p, (int)a[2], PROXY_META_CONTENT);
    r = guest_offset_out(p, &off_in, r);
    r = guest_offset_out(p, &off_out, r);
    return proxy_epipe_signal(p, r);
}

static long sys_tee(struct proxy_process *p, const uint64_t a[6])
{
    int in_fd = guest_host_fd(p, a[0]);
    if (in_fd < 0)
        return in_fd;
    int out_fd = guest_host_fd(p, a[1]);
    if (out_fd < 0)
        return out_fd;
    struct copy_wait cw;
    long r = copy_wait_begin(p, (int)a[0], (int)a[1], (size_t)a[2],
                             (unsigned int)a[3], &cw);
    if (r != 0)
        return r;
    r = proxy_host_result(tee(in_fd, out_fd, (size_t)a[2], (unsigned int)a[3]));
    r = copy_wait_end(p, &cw, r);
    return r == PROXY_RET_BLOCK ? r : proxy_epipe_signal(p, r);
}

/*
 * vmsplice: the caller's memory into a pipe, or a pipe into it, as the
 * fd's open mode says (vmsplice_type: writable goes into the pipe). hvrun
 * moves the bytes as writev/readv do, so a pipe's buffers hold copies,
 * never the caller's pages (SPLICE_F_GIFT gifts nothing): no reader can
 * tell. SPLICE_F_NONBLOCK is RWF_NOWAIT on the host pipe; without it the
 * call waits as the fd's readv would, or, into the pipe, until the pipe
 * has room, and then moves what fits (a writev would wait until all of
 * it went: a 128 KiB vmsplice into a 64 KiB pipe by its only reader
 * waited for ever, LTP vmsplice01). Linux's order: the flags, the
 * fd, the iovecs (an empty transfer is 0 whatever the fd), the pipe.
 */
#define VMSPLICE_FLAGS \
    (SPLICE_F_MOVE | SPLICE_F_NONBLOCK | SPLICE_F_MORE | SPLICE_F_GIFT)

static long sys_vmsplice(struct proxy_process *p, const uint64_t a[6])
{
    if ((unsigned int)a[3] & ~(unsigned int)VMSPLICE_FLAGS)
        return -EINVAL;
    int host_fd = guest_host_fd(p, a[0]);
    int fl = host_fd < 0 ? -1 : fcntl(host_fd, F_GETFL);
    if (fl < 0 || (fl & O_PATH))
        return -EBADF;
    struct guest_iovec *giov;
    int nseg = guest_iovecs_in(p, a[1], a[2], &giov);
    if (nseg < 0)
        return nseg;
    uint64_t total = 0;
    for (int i = 0; i < nseg; i++)
        total += giov[i].len;
    free(giov);
    if (total == 0)
        return 0;
    struct stat st;
    if (fstat(host_fd, &st) < 0 || !S_ISFIFO(st.st_mode))
        return -EBADF; /* get_pipe_info: not a pipe */
    struct xfer x = {.into_guest = (fl & O_ACCMODE) == O_RDONLY,
                     .kind = XFER_V2,
                     .offset = -1,
                     .rwf = (a[3] & SPLICE_F_NONBLOCK) ? RWF_NOWAIT : 0,
                     .what_fits = (fl & O_ACCMODE) != O_RDONLY};
    return xfer_vec(p, a[0], a[1], a[2], &x);
}

/* ---- table --------------------------------------------------------------- */

const struct proxy_syscall proxy_io_syscalls[] = {
    {SYS_read, "read", sys_read},
    {SYS_write, "write", sys_write},
    {SYS_pread64, "pread64", sys_pread64},
    {SYS_pwrite64, "pwrite64", sys_pwrite64},
    {SYS_readv, "readv", sys_readv},
    {SYS_writev, "writev", sys_writev},
    {SYS_preadv, "preadv", sys_preadv},
    {SYS_pwritev, "pwritev", sys_pwritev},
    {SYS_preadv2, "preadv2", sys_preadv2},
    {SYS_pwritev2, "pwritev2", sys_pwritev2},
    {SYS_lseek, "lseek", sys_lseek},
    {SYS_ioctl, "ioctl", sys_ioctl},
    {SYS_pipe, "pipe", sys_pipe},
    {SYS_pipe2, "pipe2", sys_pipe2},
    {SYS_sendfile, "sendfile", sys_sendfile},
    {SYS_copy_file_range, "copy_file_range", sys_copy_file_range},
    {SYS_splice, "splice", sys_splice},
    {SYS_tee, "tee", sys_tee},
    {SYS_vmsplice, "vmsplice", sys_vmsplice},
    {-1, NULL, NULL},
};
