/*
 * aio.c - Linux native AIO: io_setup, io_destroy, io_submit, io_getevents,
 * io_pgetevents and io_cancel.
 *
 * Every request completes synchronously inside io_submit, in submission
 * order, with the result the matching pread/pwrite/preadv/pwritev/fsync/
 * fdatasync on the host fd gives (res: bytes or -errno, res2 0); its
 * event waits in the context until io_getevents takes it. So completion
 * order and results do not depend on host timing (one order is what a
 * deterministic run needs; Linux may complete them in any order), and
 * io_cancel never finds a request in flight (EINVAL, as Linux answers for
 * a request that completed). IOCB_FLAG_RESFD adds 1 to the eventfd named.
 *
 * A context id is, as on Linux, the address of a mapping in the caller
 * (one zeroed page, made with the process's own mmap): libaio reads the
 * ring header there, and a magic of 0 makes it always ask the kernel.
 * Contexts are the process's: a fork child has none (Linux does not copy
 * them), and execve and exit destroy them.
 *
 * Limits: io_getevents returns at once with the events there are, even
 * when fewer than min_nr (no request is ever in flight, so waiting could
 * bring no more; Linux would wait out the timeout); IOCB_CMD_POLL is
 * EINVAL (as a kernel before 4.18); a transfer is clipped to 64 MiB. A
 * request on a stream (a pipe, a socket) moves what is there now at the
 * stream's position, as Linux's read_iter/write_iter ignore the offset
 * there: one that would have to wait completes with -EAGAIN, as Linux's
 * does with RWF_NOWAIT (without it Linux's would stay in flight).
 */
#include "proxy.h"
#include "fdtable.h"
#include "kernel.h"
#include "mm.h"
#include "io.h"
#include "vfs.h"

#include <errno.h>
#include <stddef.h>
#include <fcntl.h>
#include <linux/aio_abi.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#define AIO_MAX_NR 65536                      /* /proc/sys/fs/aio-max-nr */
#define AIO_XFER_MAX_BYTES (64 * 1024 * 1024) /* one request's bounce */
#define AIO_IOV_MAX 1024                      /* UIO_MAXIOV */

struct aio_ctx {
    gva_t id;                /* the ring page's address */
    unsigned max_events;     /* io_setup's nr_events */
    struct io_event *events; /* completed, not yet taken: a FIFO */
    unsigned head, count;
    struct aio_ctx *next;
};

struct proxy_aio {
    struct aio_ctx *ctxs;
};

/* One of the process's own mm calls (the guest's mmap/munmap, so the ring
 * page is a VMA like any other). */
static long mm_call(struct proxy_process *p, int nr, const uint64_t a[6])
{
    for (const struct proxy_syscall *s = proxy_mm_syscalls; s->nr >= 0; s++)
        if (s->nr == nr)
            return s->fn(p, a);
    return -ENOSYS;
}

static void ctx_free(struct aio_ctx *c)
{
    free(c->events);
    free(c);
}

void proxy_aio_release(struct proxy_process *p)
{
    if (!p->aio)
        return;
    for (struct aio_ctx *c = p->aio->ctxs, *n; c; c = n) {
        n = c->next;
        ctx_free(c);
    }
    free(p->aio);
    p->aio = NULL;
}

static struct aio_ctx **ctx_find(struct proxy_process *p, uint64_t id)
{
    if (!p->aio || id == 0)
        return NULL;
    for (struct aio_ctx **c = &p->aio->ctxs; *c; c = &(*c)->next)
        if ((*c)->id == id)
            return c;
    return NULL;
}

/* aio_nr: the events the run's live contexts asked for (io_setup's
 * nr_events, as Linux counts them), what /proc/sys/fs/aio-nr shows. */
static unsigned long long run_aio_nr(const struct proxy_process *p)
{
    unsigned long long nr = 0;
    for (int i = 0; p->world && i < p->world->nr_procs; i++) {
        const struct proxy_aio *aio = p->world->procs[i]->aio;
        for (const struct aio_ctx *c = aio ? aio->ctxs : NULL; c; c = c->next)
            nr += c->max_events;
    }
    return nr;
}

int proxy_aio_gen_nr(struct proxy_process *p, struct vbuf *b)
{
    vb_printf(b, "%llu\n", run_aio_nr(p));
    return 0;
}

int proxy_aio_gen_max_nr(struct proxy_process *p, struct vbuf *b)
{
    (void)p;
    vb_printf(b, "%u\n", AIO_MAX_NR);
    return 0;
}

static long sys_io_setup(struct proxy_process *p, const uint64_t a[6])
{
    unsigned nr = (unsigned)a[0];
    uint64_t old;
    if (proxy_copy_in(p, &old, a[1], sizeof(old)) < 0)
        return -EFAULT;
    if (old != 0 || nr == 0)
        return -EINVAL;
    /* ioctx_alloc: a ring of twice nr slots (4 a CPU at least, in 32-bit
     * arithmetic as Linux's) past what a ring holds is EINVAL, before the
     * aio-max-nr limit's EAGAIN. */
    unsigned slots = (nr > 4 ? nr : 4) * 2;
    if (slots > 0x10000000U / sizeof(struct io_event))
        return -EINVAL;
    if (slots == 0 || nr > AIO_MAX_NR || run_aio_nr(p) + nr > AIO_MAX_NR)
        return -EAGAIN; /* the run's machine's aio-max-nr, all contexts */
    if (!p->aio && !(p->aio = calloc(1, sizeof(*p->aio))))
        return -ENOMEM;
    struct aio_ctx *c = calloc(1, sizeof(*c));
    if (c)
        c->events = calloc(nr, sizeof(*c->events));
    if (!c || !c->events) {
        free(c);
        return -ENOMEM;
    }
    const uint64_t mm[6] = {0, 4096, PROT_READ | PROT_WRITE,
                            MAP_PRIVATE | MAP_ANONYMOUS, (uint64_t)-1, 0};
    long addr = mm_call(p, SYS_mmap, mm);
    if (addr < 0) {
        ctx_free(c);
        return addr == -ENOMEM ? -EAGAIN : addr;
    }
    c->id = (gva_t)addr;
    c->max_events = nr;
    uint64_t id = c->id;
    if (proxy_copy_out(p, a[1], &id, sizeof(id)) < 0) {
        const uint64_t um[6] = {id, 4096, 0, 0, 0, 0};
        mm_call(p, SYS_munmap, um);
        ctx_free(c);
        return -EFAULT;
    }
    c->next = p->aio->ctxs;
    p->aio->ctxs = c;
    return 0;
}

static long sys_io_destroy(struct proxy_process *p, const uint64_t a[6])
{
    struct aio_ctx **cp = ctx_find(p, a[0]), *c;
    if (!cp)
        return -EINVAL;
    c = *cp;
    *cp = c->next;
    const uint64_t um[6] = {c->id, 4096, 0, 0, 0, 0};
    mm_call(p, SYS_munmap, um);
    ctx_free(c);
    return 0;
}

/* ---- running one request -------------------------------------------------- */

/* The guest iovec array of a vectored request, checked as import_iovec. */
static long read_iov(struct proxy_process *p, const struct iocb *cb,
                     struct iovec **out, int *n)
{
    if (cb->aio_nbytes > AIO_IOV_MAX)
        return -EINVAL;
    *n = (int)cb->aio_nbytes;
    *out = calloc((size_t)*n + 1, sizeof(**out)); /* freed by the caller */
    if (!*out)
        return -ENOMEM;
    if (*n && proxy_copy_in(p, *out, cb->aio_buf, (size_t)*n * sizeof(**out)) < 0)
        return -EFAULT;
    return 0;
}

/* A transfer through one host bounce buffer: the guest ranges in (write)
 * or out (read) around the host call. */
static long bounce_xfer(struct proxy_process *p, int host_fd, bool read_op,
                        const struct iovec *iov, int n, int64_t off,
                        int rw_flags)
{
    size_t total = 0;
    for (int i = 0; i < n; i++) {
        if (iov[i].iov_len > (size_t)AIO_XFER_MAX_BYTES - total)
            return -EINVAL; /* past what one request may move here */
        total += iov[i].iov_len;
    }
    void *buf;
    if (posix_memalign(&buf, 4096, total ? total : 1)) /* O_DIRECT-aligned */
        return -ENOMEM;
    long r = 0;
    size_t at = 0;
    for (int i = 0; !read_op && i < n && r == 0; at += iov[i++].iov_len)
        if (proxy_copy_in(p, (char *)buf + at, (gva_t)(uintptr_t)iov[i].iov_base,
                          iov[i].iov_len) < 0)
            r = -EFAULT;
    if (r == 0) {
        struct iovec host = {buf, total}; /* RWF_* as the host takes them */
        if (lseek(host_fd, 0, SEEK_CUR) < 0 && errno == ESPIPE) {
            off = -1; /* a stream: its own position, never a wait */
            rw_flags |= RWF_NOWAIT;
        }
        r = read_op ? preadv2(host_fd, &host, 1, off, rw_flags)
                    : pwritev2(host_fd, &host, 1, off, rw_flags);
        r = r < 0 ? -errno : r;
    }
    at = 0;
    for (int i = 0; read_op && r > 0 && i < n && at < (size_t)r; i++) {
        size_t len = iov[i].iov_len;
        if (len > (size_t)r - at)
            len = (size_t)r - at;
        if (proxy_copy_out(p, (gva_t)(uintptr_t)iov[i].iov_base,
                           (char *)buf + at, len) < 0)
            r = at ? (long)at : -EFAULT;
        at += len;
    }
    free(buf);
    return r;
}

static bool vectored(const struct iocb *cb)
{
    return cb->aio_lio_opcode == IOCB_CMD_PREADV ||
           cb->aio_lio_opcode == IOCB_CMD_PWRITEV;
}

static bool reads(const struct iocb *cb)
{
    return cb->aio_lio_opcode == IOCB_CMD_PREAD ||
           cb->aio_lio_opcode == IOCB_CMD_PREADV;
}

/* The event's res: what the request did (iov: its buffers). */
static long run_request(struct proxy_process *p, int host_fd,
                        const struct iocb *cb, const struct iovec *iov, int n)
{
    switch (cb->aio_lio_opcode) {
    case IOCB_CMD_FSYNC:
        return fsync(host_fd) < 0 ? -errno : 0;
    case IOCB_CMD_FDSYNC:
        return fdatasync(host_fd) < 0 ? -errno : 0;
    }
    return bounce_xfer(p, host_fd, reads(cb), iov, n, cb->aio_offset,
                       (int)cb->aio_rw_flags);
}

/* aio_prep_rw/aio_read/aio_write/aio_fsync's checks of the file. */
static long check_file(const struct iocb *cb, int host_fd)
{
    int fl = fcntl(host_fd, F_GETFL);
    if (fl < 0)
        return -EBADF;
    int acc = fl & O_ACCMODE;
    switch (cb->aio_lio_opcode) {
    case IOCB_CMD_FSYNC:
    case IOCB_CMD_FDSYNC:
        return cb->aio_buf || cb->aio_offset || cb->aio_nbytes ||
                       cb->aio_rw_flags
                   ? -EINVAL
                   : 0;
    case IOCB_CMD_PREAD:
    case IOCB_CMD_PREADV:
        return acc == O_WRONLY ? -EBADF : 0;
    case IOCB_CMD_PWRITE:
    case IOCB_CMD_PWRITEV:
        return acc == O_RDONLY ? -EBADF : 0;
    }
    return -EINVAL; /* IOCB_CMD_POLL, IOCB_CMD_NOOP, anything else */
}

/* io_submit_one's checks, in Linux's order; 0 when the request may run. */
static long check_request(struct proxy_process *p, const struct iocb *cb,
                          int *host_fd)
{
    if (cb->aio_reserved2)
        return -EINVAL;
    if (cb->aio_flags & ~(unsigned)(IOCB_FLAG_RESFD | IOCB_FLAG_IOPRIO))
        return -EINVAL;
    if ((int64_t)cb->aio_nbytes < 0 || (int64_t)cb->aio_offset < 0 ||
        (int64_t)cb->aio_buf < 0)
        return -EINVAL;
    *host_fd = proxy_fd_host(&p->fds, (int)cb->aio_fildes);
    if (*host_fd < 0)
        return -EBADF;
    if ((cb->aio_flags & IOCB_FLAG_RESFD) &&
        proxy_fd_host(&p->fds, (int)cb->aio_resfd) < 0)
        return -EBADF;
    return check_file(cb, *host_fd);
}

/*
 * eventfd_signal(efd, 1), as far as a write can do it: only when the
 * eventfd can take one more, since on a blocking eventfd whose count is
 * ULLONG_MAX - 1 the write would block hvrun itself (it did: the run
 * hung). Linux's signal would saturate the count at ULLONG_MAX, which the
 * eventfd then reports as POLLERR; a write cannot reach that, so the count
 * stays at ULLONG_MAX - 1 (the kernel's own signal would need host AIO,
 * which hvrun's seccomp allowlist does not offer).
 */
static void signal_eventfd(int efd)
{
    struct pollfd pf = {.fd = efd, .events = POLLOUT};
    uint64_t one = 1;
    if (poll(&pf, 1, 0) == 1 && (pf.revents & POLLOUT))
        (void)!write(efd, &one, sizeof(one));
}

static void complete(struct proxy_process *p, struct aio_ctx *c,
                     const struct iocb *cb, gva_t cb_gva, long res)
{
    struct io_event *e = &c->events[(c->head + c->count++) % c->max_events];
    *e = (struct io_event){.data = cb->aio_data, .obj = cb_gva, .res = res};
    if (cb->aio_flags & IOCB_FLAG_RESFD)
        signal_eventfd(proxy_fd_host(&p->fds, (int)cb->aio_resfd));
}

/* One iocb: -errno refuses it (io_submit stops there), 0 ran it. */
static long submit_one(struct proxy_process *p, struct aio_ctx *c,
                       gva_t cb_gva)
{
    struct iocb cb;
    int host_fd;
    if (proxy_copy_in(p, &cb, cb_gva, sizeof(cb)) < 0)
        return -EFAULT;
    long r = check_request(p, &cb, &host_fd);
    if (r < 0)
        return r;
    if (c->count == c->max_events) /* the ring is full */
        return -EAGAIN;
    struct iovec one = {(void *)(uintptr_t)cb.aio_buf, cb.aio_nbytes};
    struct iovec *iov = &one;
    int n = 1;
    if (vectored(&cb)) {
        r = read_iov(p, &cb, &iov, &n); /* a bad array refuses the iocb */
        if (r < 0) {
            free(iov);
            return r;
        }
    }
    complete(p, c, &cb, cb_gva, run_request(p, host_fd, &cb, iov, n));
    if (iov != &one)
        free(iov);
    return 0;
}

static long sys_io_submit(struct proxy_process *p, const uint64_t a[6])
{
    long nr = (long)a[1];
    struct aio_ctx **cp = ctx_find(p, a[0]);
    if (!cp)
        return -EINVAL;
    if (nr < 0)
        return -EINVAL;
    long done = 0;
    for (; done < nr; done++) {
        uint64_t cb_gva;
        long r = proxy_copy_in(p, &cb_gva, a[2] + (gva_t)done * 8, 8) < 0
                     ? -EFAULT
                     : submit_one(p, *cp, cb_gva);
        if (r < 0)
            return done ? done : r;
    }
    return done;
}

/* io_pgetevents' signal mask as set_user_sigmask checks it: a NULL
 * struct or mask pointer is none; the struct and the mask must be
 * readable (EFAULT), the size sizeof(sigset_t) (EINVAL). The mask would
 * apply only while waiting, and there is never a wait (see the top). */
static long check_usig(struct proxy_process *p, gva_t usig_gva)
{
    struct {
        uint64_t sigmask;
        uint64_t sigsetsize;
    } usig;
    if (!usig_gva)
        return 0;
    if (proxy_copy_in(p, &usig, usig_gva, sizeof(usig)) < 0)
        return -EFAULT;
    if (!usig.sigmask)
        return 0;
    if (usig.sigsetsize != 8) /* the kernel's sigset_t */
        return -EINVAL;
    uint64_t mask;
    return proxy_copy_in(p, &mask, usig.sigmask, sizeof(mask)) < 0 ? -EFAULT
                                                                   : 0;
}

/* Takes up to nr completed events (min_nr is met or can never be), in
 * Linux's order: the timeout is read (EFAULT), io_pgetevents' mask
 * checked (usig_gva), then the context and counts (EINVAL). */
static long take_events(struct proxy_process *p, const uint64_t a[6],
                        gva_t usig_gva)
{
    long min_nr = (long)a[1], nr = (long)a[2];
    struct timespec ts;
    if (a[4] && proxy_copy_in(p, &ts, a[4], sizeof(ts)) < 0)
        return -EFAULT;
    long rc = check_usig(p, usig_gva);
    if (rc < 0)
        return rc;
    struct aio_ctx **cp = ctx_find(p, a[0]);
    if (!cp || min_nr < 0 || nr < 0 || min_nr > nr)
        return -EINVAL;
    struct aio_ctx *c = *cp;
    if (a[4] && (ts.tv_sec < 0 || ts.tv_nsec < 0 || ts.tv_nsec >= 1000000000L))
        return -EINVAL;
    long got = 0;
    for (; got < nr && c->count; got++) {
        if (proxy_copy_out(p, a[3] + (gva_t)got * sizeof(struct io_event),
                           &c->events[c->head], sizeof(struct io_event)) < 0)
            return got ? got : -EFAULT;
        c->head = (c->head + 1) % c->max_events;
        c->count--;
    }
    return got;
}

static long sys_io_getevents(struct proxy_process *p, const uint64_t a[6])
{
    return take_events(p, a, 0);
}

static long sys_io_pgetevents(struct proxy_process *p, const uint64_t a[6])
{
    return take_events(p, a, a[5]);
}

/* Linux's order: the iocb's aio_key is read (EFAULT) and must be
 * KIOCB_KEY (0), then the context is looked up; every request here has
 * completed inside io_submit, so none is found to cancel (EINVAL). */
static long sys_io_cancel(struct proxy_process *p, const uint64_t a[6])
{
    uint32_t key;
    if (proxy_copy_in(p, &key, a[1] + offsetof(struct iocb, aio_key),
                      sizeof(key)) < 0)
        return -EFAULT;
    if (key != 0 || !ctx_find(p, a[0]))
        return -EINVAL;
    return -EINVAL;
}

const struct proxy_syscall proxy_aio_syscalls[] = {
    {SYS_io_setup, "io_setup", sys_io_setup},
    {SYS_io_destroy, "io_destroy", sys_io_destroy},
    {SYS_io_submit, "io_submit", sys_io_submit},
    {SYS_io_getevents, "io_getevents", sys_io_getevents},
    {SYS_io_pgetevents, "io_pgetevents", sys_io_pgetevents},
    {SYS_io_cancel, "io_cancel", sys_io_cancel},
    {-1, NULL, NULL},
};
