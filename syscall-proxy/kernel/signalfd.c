/*
 * signalfd.c - signalfd and signalfd4: a guest fd that reads pending
 * signals as struct signalfd_siginfo records.
 *
 * The guest fd's host fd is an eventfd, so the fd exists on the host for
 * close, dup, fcntl and poll/select. Its counter is not the data: it is
 * kept non-zero exactly while a signal of the mask is pending in the
 * process (proxy_signalfd_sync, called by signal.c whenever the pending
 * set changes), which is what makes poll say readable. Reads never reach
 * the eventfd: io.c hands them to proxy_signalfd_xfer, which dequeues.
 *
 * The context (the mask) belongs to the open file: dups and fork children
 * share it and signalfd(fd, mask) changes it for all of them, as on Linux.
 * Limits: a fork child shares the eventfd with its parent, so each one's
 * sync also sets what poll says for the other; reads are always right.
 */
#include "proxy.h"
#include "fdtable.h"
#include "kernel.h"
#include "internal.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/signalfd.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#define UNBLOCKABLE ((1ULL << (SIGKILL - 1)) | (1ULL << (SIGSTOP - 1)))

_Static_assert(sizeof(struct signalfd_siginfo) == 128, "signalfd ABI");

struct proxy_signalfd {
    int refs;
    uint64_t mask; /* bit (sig-1); never SIGKILL or SIGSTOP */
};

void proxy_signalfd_put(struct proxy_signalfd *s)
{
    if (s && --s->refs == 0)
        free(s);
}

uint64_t proxy_signalfd_mask(const struct proxy_signalfd *s)
{
    return s->mask;
}

void proxy_signalfd_share(struct proxy_fd *to, const struct proxy_fd *from)
{
    if (!from->signalfd || to->signalfd == from->signalfd)
        return;
    proxy_signalfd_put(to->signalfd);
    from->signalfd->refs++;
    to->signalfd = from->signalfd;
}

bool proxy_signalfd_is(struct proxy_process *p, int guest_fd)
{
    struct proxy_fd *f = proxy_fd_get(&p->fds, guest_fd);
    return f && f->signalfd;
}

/* Sets the eventfd's counter to "readable" or "empty" without waiting:
 * it is read only when it polls readable, written only when empty. */
static void set_readable(int host_fd, bool want)
{
    struct pollfd pfd = {.fd = host_fd, .events = POLLIN};
    bool readable = poll(&pfd, 1, 0) > 0 && (pfd.revents & POLLIN);
    uint64_t v = 1;
    if (want && !readable)
        (void)!write(host_fd, &v, sizeof(v));
    else if (!want && readable)
        (void)!read(host_fd, &v, sizeof(v));
}

void proxy_signalfd_sync(struct proxy_process *p)
{
    for (int fd = 0; fd < p->fds.cap; fd++) {
        struct proxy_fd *f = &p->fds.fds[fd];
        if (f->kind != PROXY_FD_FREE && f->signalfd)
            set_readable(f->host_fd, proxy_signal_pending_for(p, p->tid) &
                                         f->signalfd->mask);
    }
}

/* ---- reading ------------------------------------------------------------- */

/* Linux's signalfd_copyinfo: which fields a record carries follows the
 * siginfo layout of (signo, code) (siginfo_layout()). */
static void fill_record(struct signalfd_siginfo *r, const siginfo_t *si)
{
    memset(r, 0, sizeof(*r));
    r->ssi_signo = (uint32_t)si->si_signo;
    r->ssi_errno = si->si_errno;
    r->ssi_code = si->si_code;
    int sig = si->si_signo, code = si->si_code;
    bool kernel = code > SI_USER && code < SI_KERNEL;
    if (code == SI_TIMER) {
        r->ssi_tid = (uint32_t)si->si_timerid;
        r->ssi_overrun = (uint32_t)si->si_overrun;
        r->ssi_ptr = (uint64_t)(uintptr_t)si->si_ptr;
        r->ssi_int = si->si_int;
    } else if (code == SI_SIGIO || (kernel && sig == SIGPOLL)) {
        r->ssi_band = (uint32_t)si->si_band;
        r->ssi_fd = si->si_fd;
    } else if (code < 0) { /* sigqueue, tkill, mq_notify, ... */
        r->ssi_pid = (uint32_t)si->si_pid;
        r->ssi_uid = si->si_uid;
        r->ssi_ptr = (uint64_t)(uintptr_t)si->si_ptr;
        r->ssi_int = si->si_int;
    } else if (kernel && sig == SIGCHLD) {
        r->ssi_pid = (uint32_t)si->si_pid;
        r->ssi_uid = si->si_uid;
        r->ssi_status = si->si_status;
        r->ssi_utime = (uint64_t)si->si_utime;
        r->ssi_stime = (uint64_t)si->si_stime;
    } else if (kernel && (sig == SIGILL || sig == SIGFPE || sig == SIGSEGV ||
                          sig == SIGBUS || sig == SIGTRAP)) {
        r->ssi_addr = (uint64_t)(uintptr_t)si->si_addr;
    } else if (kernel && sig == SIGSYS) {
        r->ssi_call_addr = (uint64_t)(uintptr_t)si->si_call_addr;
        r->ssi_syscall = si->si_syscall;
        r->ssi_arch = si->si_arch;
    } else { /* SI_USER, SI_KERNEL: kill() */
        r->ssi_pid = (uint32_t)si->si_pid;
        r->ssi_uid = si->si_uid;
    }
}

/* Copies len bytes to the host iovecs from byte offset at_bytes on. */
static void iov_put(const struct iovec *iov, int n, size_t at_bytes,
                    const void *src, size_t len)
{
    const uint8_t *s = src;
    for (int i = 0; i < n && len > 0; i++) {
        if (at_bytes >= iov[i].iov_len) {
            at_bytes -= iov[i].iov_len;
            continue;
        }
        size_t k = iov[i].iov_len - at_bytes;
        if (k > len)
            k = len;
        memcpy((uint8_t *)iov[i].iov_base + at_bytes, s, k);
        s += k;
        len -= k;
        at_bytes = 0;
    }
}

long proxy_signalfd_xfer(struct proxy_process *p, int guest_fd,
                         bool into_guest, const struct iovec *iov, int n)
{
    struct proxy_fd *f = proxy_fd_get(&p->fds, guest_fd);
    if (!f || !f->signalfd)
        return -EBADF;
    if (!into_guest)
        return -EINVAL; /* signalfd has no write */
    size_t room = 0;
    for (int i = 0; i < n; i++)
        room += iov[i].iov_len;
    const size_t rec = sizeof(struct signalfd_siginfo);
    if (room < rec)
        return -EINVAL;
    size_t done = 0;
    siginfo_t si;
    while (room - done >= rec &&
           proxy_signal_dequeue(p, f->signalfd->mask, &si) > 0) {
        struct signalfd_siginfo r;
        fill_record(&r, &si);
        iov_put(iov, n, done, &r, rec);
        done += rec;
    }
    struct proxy_thread *t = &p->threads[p->cur];
    t->sigwait_kind = PROXY_SIGWAIT_NONE;
    if (done > 0)
        return (long)done;
    int fl = fcntl(f->host_fd, F_GETFL);
    if (fl >= 0 && (fl & O_NONBLOCK))
        return -EAGAIN;
    /* Woken by a signal of the mask (even a blocked one) the read runs
     * again; by a handler, it is interrupted or restarted (SA_RESTART). */
    t->state = PROXY_THREAD_WAIT_SIGNAL;
    t->sigwait_kind = PROXY_SIGWAIT_SIGNALFD;
    t->sigwait_set = f->signalfd->mask;
    t->sigwait_timed_out = false;
    t->has_deadline = false;
    p->resched = true;
    return PROXY_RET_BLOCK;
}

/* ---- creating ------------------------------------------------------------ */

/* signalfd4(fd, mask, sizemask, flags): fd -1 makes a new signalfd; an
 * existing signalfd gets the new mask (its flags stay). */
static long sys_signalfd4(struct proxy_process *p, const uint64_t a[6])
{
    int flags = (int)a[3];
    uint64_t mask;
    if (flags & ~(SFD_CLOEXEC | SFD_NONBLOCK))
        return -EINVAL;
    if (a[2] != 8)
        return -EINVAL;
    if (proxy_copy_in(p, &mask, a[1], 8) < 0)
        return -EFAULT;
    mask &= ~UNBLOCKABLE;
    if ((int)a[0] != -1) {
        struct proxy_fd *f = proxy_fd_get(&p->fds, (int)a[0]);
        if (!f)
            return -EBADF;
        if (!f->signalfd)
            return -EINVAL;
        f->signalfd->mask = mask;
        proxy_signalfd_sync(p);
        return (int)a[0];
    }
    struct proxy_signalfd *s = calloc(1, sizeof(*s));
    if (!s)
        return -ENOMEM;
    int host_fd = eventfd(0, EFD_CLOEXEC |
                                 ((flags & SFD_NONBLOCK) ? EFD_NONBLOCK : 0));
    if (host_fd < 0) {
        long err = -errno;
        free(s);
        return err;
    }
    int guest_fd = proxy_fd_install(&p->fds, host_fd,
                                    (flags & SFD_CLOEXEC) != 0, 0);
    if (guest_fd < 0) {
        free(s);
        return guest_fd;
    }
    s->refs = 1;
    s->mask = mask;
    proxy_fd_get(&p->fds, guest_fd)->signalfd = s;
    proxy_signalfd_sync(p);
    return guest_fd;
}

static long sys_signalfd(struct proxy_process *p, const uint64_t a[6])
{
    const uint64_t b[6] = {a[0], a[1], a[2], 0, 0, 0};
    return sys_signalfd4(p, b);
}

const struct proxy_syscall proxy_signalfd_syscalls[] = {
    {SYS_signalfd, "signalfd", sys_signalfd},
    {SYS_signalfd4, "signalfd4", sys_signalfd4},
    {-1, NULL, NULL},
};
