/*
 * poll.c - poll, ppoll, select and pselect6 over host fds (Linux's
 * fs/select.c). A wait parks the guest thread on a host epoll instance of
 * the fds (io.c's waiting state of the thread) instead of waiting in the
 * host; finite timeouts are deadlines on the logical clock. Only a wait on
 * no fd at all without a timeout waits in the host.
 */
#include "proxy.h"
#include "fdtable.h"
#include "kernel.h"
#include "fs.h"
#include "io.h"
#include "internal.h"

#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <unistd.h>

/* ---- poll and select ----------------------------------------------------- */

/*
 * A guest pollfd array and its host twin. Guest fds < 0 are ignored (host
 * fd -1). A guest fd >= 0 that is not open gets POLLNVAL without reaching
 * the host, and like Linux counts as ready, so the call does not wait.
 */
struct poll_set {
    struct pollfd *guest;
    struct pollfd *host;
    size_t n;
    int nr_invalid;
};

static void poll_set_free(struct poll_set *ps)
{
    free(ps->guest);
    free(ps->host);
}

static long poll_set_in(struct proxy_process *p, gva_t fds_gva, uint64_t nfds,
                        struct poll_set *ps)
{
    ps->guest = ps->host = NULL;
    ps->n = 0;
    ps->nr_invalid = 0;
    if (nfds > (uint64_t)p->fds.max_fds)
        return -EINVAL;
    size_t n = (size_t)nfds;
    ps->guest = calloc(n ? n : 1, sizeof(struct pollfd));
    ps->host = calloc(n ? n : 1, sizeof(struct pollfd));
    if (!ps->guest || !ps->host)
        return -ENOMEM;
    if (proxy_copy_in(p, ps->guest, fds_gva, n * sizeof(struct pollfd)) < 0)
        return -EFAULT;
    ps->n = n;
    for (size_t i = 0; i < n; i++) {
        int guest_fd = ps->guest[i].fd;
        int host_fd = guest_fd < 0 ? -1 : proxy_fd_host(&p->fds, guest_fd);
        if (guest_fd >= 0 && host_fd < 0) {
            ps->nr_invalid++;
            host_fd = -1;
        }
        ps->host[i] =
            (struct pollfd){.fd = host_fd, .events = ps->guest[i].events};
    }
    return 0;
}

/* Copies revents back (Linux writes them even after -EINTR) and returns
 * the number of ready entries. */
static long poll_set_out(struct proxy_process *p, gva_t fds_gva,
                         struct poll_set *ps, long host_ready)
{
    for (size_t i = 0; i < ps->n; i++) {
        bool invalid = ps->guest[i].fd >= 0 && ps->host[i].fd < 0;
        ps->guest[i].revents = invalid ? POLLNVAL : ps->host[i].revents;
    }
    if (proxy_copy_out(p, fds_gva, ps->guest, ps->n * sizeof(struct pollfd)) <
        0)
        return -EFAULT;
    return host_ready < 0 ? host_ready : host_ready + ps->nr_invalid;
}

/*
 * Parking on a whole set. proxy_block_on_fd takes one host fd, so a wait
 * on several parks on a host epoll instance holding them all: it polls
 * readable once any of them is ready, and the call then runs again and
 * looks at the set itself. The instance is kept with the thread
 * (proxy_thread_io) until the thread next waits in poll or select: it is not
 * parked on it then.
 */
static void set_wait_release(struct proxy_process *p)
{
    struct proxy_thread_io *t = thread_io(p);
    if (t && t->has_epoll) {
        close(t->epoll_fd);
        t->has_epoll = false;
    }
}

/* The poll events epoll takes (POLLERR and POLLHUP it always reports). */
#define EPOLL_POLL_BITS                                                        \
    (POLLIN | POLLPRI | POLLOUT | POLLRDNORM | POLLRDBAND | POLLWRNORM |       \
     POLLWRBAND | POLLMSG | POLLRDHUP)

/* Adds fds[i] to the instance; a host fd already in it (the guest named
 * it twice) gets the union of its entries' events. */
static void epoll_add_entry(int epoll_fd, const struct pollfd *fds, size_t i)
{
    struct epoll_event ev = {.events =
                                 (uint16_t)fds[i].events & EPOLL_POLL_BITS};
    if (epoll_ctl(epoll_fd, EPOLL_CTL_ADD, fds[i].fd, &ev) == 0 ||
        errno != EEXIST)
        return; /* EPERM: a file without poll, always ready: none here */
    for (size_t k = 0; k < i; k++) {
        if (fds[k].fd == fds[i].fd)
            ev.events |= (uint16_t)fds[k].events & EPOLL_POLL_BITS;
    }
    (void)epoll_ctl(epoll_fd, EPOLL_CTL_MOD, fds[i].fd, &ev);
}

/* Parks the thread until one of the host fds (fd < 0: skipped) is ready
 * for its events; n_valid of them are >= 0, at least one. Without an
 * epoll instance it parks on the first. */
static long park_on_set(struct proxy_process *p, const struct pollfd *fds,
                        size_t n, size_t n_valid)
{
    size_t first = 0;
    while (fds[first].fd < 0)
        first++;
    struct proxy_thread_io *tio = n_valid > 1 ? thread_io(p) : NULL;
    int epoll_fd = tio ? epoll_create1(EPOLL_CLOEXEC) : -1;
    if (epoll_fd < 0)
        return proxy_block_on_fd(p, fds[first].fd, fds[first].events);
    for (size_t i = first; i < n; i++) {
        if (fds[i].fd >= 0)
            epoll_add_entry(epoll_fd, fds, i);
    }
    tio->epoll_fd = epoll_fd;
    tio->has_epoll = true;
    return proxy_block_on_fd(p, epoll_fd, POLLIN);
}

/*
 * The wait for poll, ppoll and select. A host call that waits would stop
 * every guest thread, so the host first only looks (timeout 0); that is
 * the answer when something is ready, an entry is invalid (POLLNVAL, ready
 * already) or the timeout is zero. Otherwise, with no timeout, the thread
 * is parked until an fd of the set is ready, and the call runs again.
 *
 * A finite timeout is a deadline on the logical clock: the parked thread
 * also wakes when it passes (the scheduler expires it when nothing else
 * can run) and the call then reports the timeout. An endless wait on no
 * fd at all is pause(): parked until a signal.
 */
static long poll_wait(struct proxy_process *p, struct pollfd *fds, size_t n,
                      struct timespec *ts, bool ready_already)
{
    set_wait_release(p);
    /* A signal that a temporary mask (ppoll, pselect) unblocks and that
     * is already pending ends the call before it looks, as on Linux. */
    if (proxy_signal_would_take(p)) {
        proxy_thread_poll_done(p);
        return -EINTR;
    }
    struct timespec zero = {0, 0};
    proxy_tty_settle_set(fds, n); /* a pty's data on its way (io/tty.c) */
    long r = proxy_host_result(syscall(SYS_ppoll, fds, n, &zero, NULL, 0));
    bool timed = ts && (ts->tv_sec != 0 || ts->tv_nsec != 0);
    uint64_t left = 0;
    /* A finite timeout is a deadline on the logical clock, kept across the
     * re-runs of this call; ts reports the time left, as ppoll/select do. */
    bool before_deadline =
        timed && proxy_thread_poll_deadline(
                     p, (uint64_t)ts->tv_sec * 1000000000ULL +
                            (uint64_t)ts->tv_nsec,
                     &left);
    if (r != 0 || ready_already || (ts && !before_deadline)) {
        if (timed) {
            ts->tv_sec = (time_t)(left / 1000000000ULL);
            ts->tv_nsec = (long)(left % 1000000000ULL);
            proxy_thread_poll_done(p);
        }
        return r;
    }
    size_t n_valid = 0;
    for (size_t i = 0; i < n; i++)
        n_valid += fds[i].fd >= 0;
    if (n_valid == 0) {
        if (!ts) /* an endless wait on nothing: only a signal ends it,
                  * and the other guests run meanwhile (as pause) */
            return proxy_signal_suspend(p);
        /* a timed wait on nothing: pause until a signal or the deadline
         * (whose result is 0) */
        proxy_thread_poll_done(p);
        return proxy_signal_suspend_for(p, left);
    }
    /* poll and select end with EINTR when a handler runs, SA_RESTART or
     * not (ERESTART_RESTARTBLOCK / ERESTARTNOHAND). */
    if (p->threads)
        p->threads[p->cur].eintr_on_handler = true;
    return park_on_set(p, fds, n, n_valid);
}

static long poll_run(struct proxy_process *p, gva_t fds_gva, uint64_t nfds,
                     struct timespec *ts)
{
    struct poll_set ps;
    long r = poll_set_in(p, fds_gva, nfds, &ps);
    if (r == 0) {
        r = poll_wait(p, ps.host, ps.n, ts, ps.nr_invalid > 0);
        if (r != PROXY_RET_BLOCK)
            r = poll_set_out(p, fds_gva, &ps, r);
    }
    poll_set_free(&ps);
    return r;
}

/* A negative timeout waits forever. */
static long sys_poll(struct proxy_process *p, const uint64_t a[6])
{
    int timeout_ms = (int)a[2];
    struct timespec ts = {timeout_ms / 1000, (timeout_ms % 1000) * 1000000L};
    return poll_run(p, a[0], a[1], timeout_ms < 0 ? NULL : &ts);
}

static bool timespec_valid(const struct timespec *ts)
{
    return ts->tv_sec >= 0 && ts->tv_nsec >= 0 && ts->tv_nsec < 1000000000L;
}

/*
 * The ppoll/pselect6 signal mask replaces the caller's while the call waits,
 * as sigsuspend's does: a signal it unblocks ends the wait with EINTR, and
 * the handler's frame saves (so rt_sigreturn restores) the caller's own
 * mask. When the call returns without a handler the caller's mask is put
 * back here. Returns 0 or -errno (size must be 8, the mask readable).
 */
#define UNBLOCKABLE_SIGNALS ((1ULL << (SIGKILL - 1)) | (1ULL << (SIGSTOP - 1)))

long proxy_call_mask_apply(struct proxy_process *p, gva_t mask_gva,
                           uint64_t size)
{
    uint64_t mask;
    if (mask_gva == 0)
        return 0;
    if (size != sizeof(mask))
        return -EINVAL;
    if (proxy_copy_in(p, &mask, mask_gva, sizeof(mask)) < 0)
        return -EFAULT;
    struct proxy_thread *t = p->threads ? &p->threads[p->cur] : NULL;
    if (!t)
        return 0;
    if (!t->saved_sigmask_valid) {
        t->saved_sigmask = p->sig.sigmask;
        t->saved_sigmask_valid = true;
    }
    p->sig.sigmask = mask & ~UNBLOCKABLE_SIGNALS;
    return 0;
}

/* The call is over (not parked): the caller's mask comes back. */
long proxy_call_mask_end(struct proxy_process *p, long r)
{
    struct proxy_thread *t = p->threads ? &p->threads[p->cur] : NULL;
    /* Interrupted by a signal the temporary mask lets through: it is
     * delivered under that mask and its frame saves the caller's, as after
     * rt_sigsuspend (signal.c); restored there if no handler runs. */
    if (r == -EINTR && t && t->saved_sigmask_valid &&
        proxy_signal_would_take(p))
        return r;
    /* Waiting for a signal under it (a pause on no fd): the signal's
     * delivery or the deadline puts the caller's back (thread.c). */
    if (t && t->state == PROXY_THREAD_WAIT_SIGNAL)
        return r;
    if (r != PROXY_RET_BLOCK && t && t->saved_sigmask_valid) {
        p->sig.sigmask = t->saved_sigmask;
        t->saved_sigmask_valid = false;
    }
    return r;
}

/* Linux writes the time left back unless the timeout was zero, and ignores
 * a fault doing so (the call has already happened). */
static void timespec_left_out(struct proxy_process *p, gva_t gva,
                              const struct timespec *given,
                              const struct timespec *left)
{
    if (gva != 0 && (given->tv_sec != 0 || given->tv_nsec != 0))
        (void)proxy_copy_out(p, gva, left, sizeof(*left));
}

static long sys_ppoll(struct proxy_process *p, const uint64_t a[6])
{
    struct timespec ts, given = {0, 0};
    if (a[2] != 0) {
        if (proxy_copy_in(p, &ts, a[2], sizeof(ts)) < 0)
            return -EFAULT;
        if (!timespec_valid(&ts))
            return -EINVAL;
        given = ts;
    }
    long r = proxy_call_mask_apply(p, a[3], a[4]);
    if (r < 0)
        return r;
    r = poll_run(p, a[0], a[1], a[2] ? &ts : NULL);
    timespec_left_out(p, a[2], &given, &ts);
    return proxy_call_mask_end(p, r);
}

/* select's view of poll bits, as Linux's POLLIN_SET/POLLOUT_SET/POLLEX_SET. */
#define SELECT_IN_BITS (POLLRDNORM | POLLRDBAND | POLLIN | POLLHUP | POLLERR)
#define SELECT_OUT_BITS (POLLWRBAND | POLLWRNORM | POLLOUT | POLLERR)
#define SELECT_EX_BITS (POLLPRI)
#define FDSET_WORD_BITS 64

/* The three guest fd_set bitmaps (read, write, except) of a select call. */
struct select_sets {
    gva_t gva[3];
    uint64_t *bits[3]; /* NULL where the guest passed NULL */
    size_t words;
};

static const short select_poll_bits[3] = {SELECT_IN_BITS, SELECT_OUT_BITS,
                                          SELECT_EX_BITS};

static void select_sets_free(struct select_sets *s)
{
    for (int k = 0; k < 3; k++)
        free(s->bits[k]);
}

static long select_sets_in(struct proxy_process *p, int nfds,
                           struct select_sets *s)
{
    s->words = ((size_t)nfds + FDSET_WORD_BITS - 1) / FDSET_WORD_BITS;
    for (int k = 0; k < 3; k++) {
        s->bits[k] = NULL;
        if (s->gva[k] == 0)
            continue;
        s->bits[k] = calloc(s->words ? s->words : 1, sizeof(uint64_t));
        if (!s->bits[k])
            return -ENOMEM;
        if (proxy_copy_in(p, s->bits[k], s->gva[k],
                          s->words * sizeof(uint64_t)) < 0)
            return -EFAULT;
    }
    return 0;
}

static bool fdset_has(const uint64_t *bits, int fd)
{
    return bits && (bits[fd / FDSET_WORD_BITS] >> (fd % FDSET_WORD_BITS)) & 1;
}

/* One pollfd per guest fd named in any set; a named fd that is not open
 * makes the whole call -EBADF. guest_fds[i] remembers whose entry i is. */
static long select_to_poll(struct proxy_process *p, int nfds,
                           const struct select_sets *s, struct pollfd *pfds,
                           int *guest_fds, size_t *n_out)
{
    size_t n = 0;
    for (int fd = 0; fd < nfds; fd++) {
        short events = 0;
        for (int k = 0; k < 3; k++) {
            if (fdset_has(s->bits[k], fd))
                events |= select_poll_bits[k];
        }
        if (!events)
            continue;
        int host_fd = proxy_fd_host(&p->fds, fd);
        if (host_fd < 0)
            return -EBADF;
        pfds[n] = (struct pollfd){.fd = host_fd, .events = events};
        guest_fds[n++] = fd;
    }
    *n_out = n;
    return 0;
}

/* Rebuilds the sets from revents; each bit set counts once, as in Linux. */
static long poll_to_select(const struct pollfd *pfds, const int *guest_fds,
                           size_t n, struct select_sets *s)
{
    long ready = 0;
    for (int k = 0; k < 3; k++) {
        if (s->bits[k])
            memset(s->bits[k], 0, s->words * sizeof(uint64_t));
    }
    for (size_t i = 0; i < n; i++) {
        int fd = guest_fds[i];
        for (int k = 0; k < 3; k++) {
            if (!s->bits[k] ||
                !(pfds[i].events & select_poll_bits[k] & pfds[i].revents))
                continue;
            s->bits[k][fd / FDSET_WORD_BITS] |= 1ULL << (fd % FDSET_WORD_BITS);
            ready++;
        }
    }
    return ready;
}

/*
 * select on top of the host ppoll (host fds may exceed FD_SETSIZE, so host
 * select cannot take them). Linux clamps nfds to its fd table's allocated
 * size and ignores bits beyond it; that size depends on the parent's table
 * (fork copies it), so here the table is taken to span RLIMIT_NOFILE (or
 * more, if fds above a lowered limit are open): a bit for any fd below that
 * which is not open is -EBADF. The sets are written back only on success.
 */
static long select_run(struct proxy_process *p, int nfds, struct select_sets *s,
                       struct timespec *ts)
{
    if (nfds < 0)
        return -EINVAL;
    int table_fds = p->fds.cap > p->fds.max_fds ? p->fds.cap : p->fds.max_fds;
    if (nfds > table_fds)
        nfds = table_fds;
    long r = select_sets_in(p, nfds, s);
    struct pollfd *pfds = calloc(nfds ? (size_t)nfds : 1, sizeof(*pfds));
    int *guest_fds = calloc(nfds ? (size_t)nfds : 1, sizeof(*guest_fds));
    size_t n = 0;
    if (r == 0 && (!pfds || !guest_fds))
        r = -ENOMEM;
    if (r == 0)
        r = select_to_poll(p, nfds, s, pfds, guest_fds, &n);
    if (r == 0)
        r = poll_wait(p, pfds, n, ts, false);
    if (r >= 0)
        r = poll_to_select(pfds, guest_fds, n, s);
    for (int k = 0; k < 3 && r >= 0; k++) {
        if (s->bits[k] && proxy_copy_out(p, s->gva[k], s->bits[k],
                                         s->words * sizeof(uint64_t)) < 0)
            r = -EFAULT;
    }
    free(pfds);
    free(guest_fds);
    select_sets_free(s);
    return r;
}

/* select's struct timeval: microseconds past a second carry over, as in
 * Linux; a negative part (or an overflowing sum) is -EINVAL. */
static long timeval_to_timespec(const struct timeval *tv, struct timespec *ts)
{
    if (tv->tv_sec < 0 || tv->tv_usec < 0)
        return -EINVAL;
    if (__builtin_add_overflow(tv->tv_sec, tv->tv_usec / 1000000, &ts->tv_sec))
        return -EINVAL;
    ts->tv_nsec = (tv->tv_usec % 1000000) * 1000;
    return 0;
}

static long sys_select(struct proxy_process *p, const uint64_t a[6])
{
    struct select_sets s = {.gva = {a[1], a[2], a[3]}};
    struct timespec ts, given = {0, 0};
    if (a[4] != 0) {
        struct timeval tv;
        if (proxy_copy_in(p, &tv, a[4], sizeof(tv)) < 0)
            return -EFAULT;
        if (timeval_to_timespec(&tv, &ts) < 0)
            return -EINVAL;
        given = ts;
    }
    long r = select_run(p, (int)a[0], &s, a[4] ? &ts : NULL);
    if (a[4] != 0 && (given.tv_sec != 0 || given.tv_nsec != 0)) {
        struct timeval left = {ts.tv_sec, ts.tv_nsec / 1000};
        (void)proxy_copy_out(p, a[4], &left, sizeof(left));
    }
    return r;
}

/* pselect6's sixth argument points to {const sigset_t *ss; size_t len}. */
static long sys_pselect6(struct proxy_process *p, const uint64_t a[6])
{
    struct select_sets s = {.gva = {a[1], a[2], a[3]}};
    struct timespec ts, given = {0, 0};
    if (a[4] != 0) {
        if (proxy_copy_in(p, &ts, a[4], sizeof(ts)) < 0)
            return -EFAULT;
        if (!timespec_valid(&ts))
            return -EINVAL;
        given = ts;
    }
    if (a[5] != 0) {
        uint64_t sig[2];
        if (proxy_copy_in(p, sig, a[5], sizeof(sig)) < 0)
            return -EFAULT;
        long r = proxy_call_mask_apply(p, sig[0], sig[1]);
        if (r < 0)
            return r;
    }
    long r = select_run(p, (int)a[0], &s, a[4] ? &ts : NULL);
    timespec_left_out(p, a[4], &given, &ts);
    return proxy_call_mask_end(p, r);
}

const struct proxy_syscall proxy_poll_syscalls[] = {
    {SYS_poll, "poll", sys_poll},
    {SYS_ppoll, "ppoll", sys_ppoll},
    {SYS_select, "select", sys_select},
    {SYS_pselect6, "pselect6", sys_pselect6},
    {-1, NULL, NULL},
};
