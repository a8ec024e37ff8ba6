/*
 * timerfd.c - timerfd_create, timerfd_settime, timerfd_gettime on detcore's
 * clocks.
 *
 * A timerfd is a host eventfd (so read, poll, select and epoll work on it
 * through the usual host paths, and a read of its counter is the timerfd's
 * "expirations since the last read", reset by the read) plus a timer kept
 * here. Like timer.c's timers nothing runs in the background: the world
 * loop fires due timerfds before every scheduling decision (the expiry
 * count is added to the eventfd), and when no thread can run, logical time
 * moves to the earliest expiry of a timerfd that is not already readable.
 *
 * The object is shared by the guest fds that dup it and by fork, like the
 * open file it is on Linux (refcounted from struct proxy_fd), and listed in
 * the world so firing finds it. Writes to a timerfd are EINVAL, as Linux
 * says; TFD_IOC_SET_TICKS and TFD_TIMER_CANCEL_ON_SET's cancellation (the
 * logical clock is never set) are not implemented.
 */
#include "proxy.h"
#include "fdtable.h"
#include "kernel.h"
#include "internal.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/syscall.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include "det.h"

#define NS_PER_SEC 1000000000LL

struct proxy_timerfd {
    int refs;
    struct proxy_world *world;
    int efd;          /* hvrun's own reference to the eventfd */
    int clockid;
    bool armed;
    int64_t expiry_ns;   /* on clockid */
    int64_t interval_ns; /* 0: one shot */
    int settime_flags;   /* the last settime's ABSTIME|CANCEL_ON_SET */
};

struct kitimerspec {
    struct timespec interval, value;
};

/* ---- the world's list ------------------------------------------------------- */

static int list_add(struct proxy_world *w, struct proxy_timerfd *t)
{
    if (w->nr_timerfds == w->cap_timerfds) {
        int cap = w->cap_timerfds ? w->cap_timerfds * 2 : 8;
        void *v = realloc(w->timerfds, (size_t)cap * sizeof(*w->timerfds));
        if (!v)
            return -ENOMEM;
        w->timerfds = v;
        w->cap_timerfds = cap;
    }
    w->timerfds[w->nr_timerfds++] = t;
    return 0;
}

static void list_remove(struct proxy_world *w, struct proxy_timerfd *t)
{
    for (int i = 0; i < w->nr_timerfds; i++) {
        if (w->timerfds[i] != t)
            continue;
        memmove(&w->timerfds[i], &w->timerfds[i + 1],
                (size_t)(w->nr_timerfds - i - 1) * sizeof(*w->timerfds));
        w->nr_timerfds--;
        return;
    }
}

void proxy_timerfd_world_gone(struct proxy_world *w)
{
    for (int i = 0; i < w->nr_timerfds; i++)
        w->timerfds[i]->world = NULL;
    free(w->timerfds);
    w->timerfds = NULL;
    w->nr_timerfds = w->cap_timerfds = 0;
}

void proxy_timerfd_put(struct proxy_timerfd *t)
{
    if (!t || --t->refs > 0)
        return;
    if (t->world)
        list_remove(t->world, t);
    close(t->efd);
    free(t);
}

int proxy_timerfd_efd(const struct proxy_timerfd *t)
{
    return t->efd;
}

void proxy_timerfd_share(struct proxy_fd *to, const struct proxy_fd *from)
{
    if (!from->timerfd || to->timerfd == from->timerfd)
        return;
    proxy_timerfd_put(to->timerfd);
    from->timerfd->refs++;
    to->timerfd = from->timerfd;
}

/* ---- firing ------------------------------------------------------------------ */

static int64_t now_ns(const struct proxy_timerfd *t)
{
    struct proxy_world *w = t->world;
    return w->nr_procs ? det_clock_peek_ns(w->procs[0]->det, t->clockid) : 0;
}

/* Expirations due at now (0: none); a periodic timer reloads past now. */
static uint64_t expirations(struct proxy_timerfd *t, int64_t now)
{
    if (!t->armed || t->expiry_ns > now)
        return 0;
    if (t->interval_ns <= 0) {
        t->armed = false;
        return 1;
    }
    uint64_t n = (uint64_t)((now - t->expiry_ns) / t->interval_ns) + 1;
    int64_t step, next;
    if (__builtin_mul_overflow((int64_t)n, t->interval_ns, &step) ||
        __builtin_add_overflow(t->expiry_ns, step, &next))
        next = INT64_MAX; /* past KTIME_MAX: never again */
    t->expiry_ns = next;
    return n;
}

void proxy_timerfd_fire_due(struct proxy_world *w)
{
    for (int i = 0; i < w->nr_timerfds; i++) {
        struct proxy_timerfd *t = w->timerfds[i];
        uint64_t n = expirations(t, now_ns(t));
        if (n)
            /* (void)!, not (void): glibc marks write warn_unused_result
             * under _FORTIFY_SOURCE (Debian's build flags), which a plain
             * cast does not silence; an eventfd write of a count cannot
             * fail short. */
            (void)!write(t->efd, &n, sizeof(n));
    }
}

static bool readable(int fd)
{
    struct pollfd pfd = {.fd = fd, .events = POLLIN};
    return poll(&pfd, 1, 0) > 0;
}

int64_t proxy_timerfd_earliest_ns(struct proxy_world *w)
{
    int64_t best = INT64_MAX;
    for (int i = 0; i < w->nr_timerfds; i++) {
        struct proxy_timerfd *t = w->timerfds[i];
        /* Firing one that is readable already wakes nobody new. */
        if (!t->armed || readable(t->efd))
            continue;
        int64_t now = now_ns(t);
        int64_t d = t->expiry_ns > now ? t->expiry_ns - now : 0;
        best = d < best ? d : best;
    }
    return best;
}

/* ---- syscalls ------------------------------------------------------------------ */

static bool clock_ok(int clockid)
{
    return clockid == CLOCK_REALTIME || clockid == CLOCK_MONOTONIC ||
           clockid == CLOCK_BOOTTIME || clockid == CLOCK_REALTIME_ALARM ||
           clockid == CLOCK_BOOTTIME_ALARM;
}

static long sys_timerfd_create(struct proxy_process *p, const uint64_t a[6])
{
    int clockid = (int)a[0], flags = (int)a[1];
    if (!clock_ok(clockid))
        return -EINVAL;
    if (flags & ~(TFD_CLOEXEC | TFD_NONBLOCK))
        return -EINVAL;
    struct proxy_timerfd *t = calloc(1, sizeof(*t));
    if (!t)
        return -ENOMEM;
    *t = (struct proxy_timerfd){.refs = 1, .world = p->world,
                                .clockid = clockid};
    /* One open description, the guest's: its O_NONBLOCK is the guest's,
     * and hvrun only reads it after poll says it is readable. */
    errno = 0;
    t->efd = eventfd(0, EFD_CLOEXEC |
                            ((flags & TFD_NONBLOCK) ? EFD_NONBLOCK : 0));
    int guest_host_fd = t->efd < 0 ? -1 : fcntl(t->efd, F_DUPFD_CLOEXEC, 0);
    if (t->efd < 0 || guest_host_fd < 0 || list_add(p->world, t) < 0) {
        long err = errno ? -errno : -ENOMEM;
        if (guest_host_fd >= 0)
            close(guest_host_fd);
        if (t->efd >= 0)
            close(t->efd);
        free(t);
        return err;
    }
    int fd = proxy_fd_install(&p->fds, guest_host_fd,
                              (flags & TFD_CLOEXEC) != 0, 0);
    if (fd < 0) {
        proxy_timerfd_put(t);
        return fd;
    }
    proxy_fd_get(&p->fds, fd)->timerfd = t;
    return fd;
}

static struct proxy_timerfd *timerfd_of(struct proxy_process *p, int guest_fd,
                                        long *err)
{
    struct proxy_fd *f = proxy_fd_get(&p->fds, guest_fd);
    *err = !f ? -EBADF : !f->timerfd ? -EINVAL : 0;
    return f ? f->timerfd : NULL;
}

static struct kitimerspec current_of(const struct proxy_timerfd *t)
{
    struct kitimerspec cur;
    memset(&cur, 0, sizeof(cur));
    if (t->armed) {
        int64_t now = now_ns(t);
        int64_t left = t->expiry_ns > now ? t->expiry_ns - now : 1;
        cur.value = (struct timespec){left / NS_PER_SEC, left % NS_PER_SEC};
    }
    cur.interval = (struct timespec){t->interval_ns / NS_PER_SEC,
                                     t->interval_ns % NS_PER_SEC};
    return cur;
}

int proxy_timerfd_fdinfo(const struct proxy_timerfd *t, uint64_t ticks,
                         char *out, size_t cap)
{
    struct kitimerspec cur = current_of(t);
    return snprintf(out, cap,
                    "clockid: %d\nticks: %llu\nsettime flags: 0%o\n"
                    "it_value: (%llu, %llu)\nit_interval: (%llu, %llu)\n",
                    t->clockid, (unsigned long long)ticks,
                    (unsigned)t->settime_flags,
                    (unsigned long long)cur.value.tv_sec,
                    (unsigned long long)cur.value.tv_nsec,
                    (unsigned long long)cur.interval.tv_sec,
                    (unsigned long long)cur.interval.tv_nsec);
}

static bool timespec_ok(const struct timespec *ts)
{
    return ts->tv_sec >= 0 && ts->tv_nsec >= 0 && ts->tv_nsec < NS_PER_SEC;
}

static long sys_timerfd_settime(struct proxy_process *p, const uint64_t a[6])
{
    long err;
    struct proxy_timerfd *t = timerfd_of(p, (int)a[0], &err);
    int flags = (int)a[1];
    if (!t)
        return err;
    if (flags & ~(TFD_TIMER_ABSTIME | TFD_TIMER_CANCEL_ON_SET))
        return -EINVAL;
    struct kitimerspec its;
    if (proxy_copy_in(p, &its, a[2], sizeof(its)) < 0)
        return -EFAULT;
    if (!timespec_ok(&its.value) || !timespec_ok(&its.interval))
        return -EINVAL;
    struct kitimerspec old = current_of(t);
    if (a[3] && proxy_copy_out(p, a[3], &old, sizeof(old)) < 0)
        return -EFAULT;
    /* Setting the timer resets the expirations not yet read (one read
     * takes an eventfd's whole count). */
    uint64_t drain;
    if (readable(t->efd))
        (void)!read(t->efd, &drain, sizeof(drain));
    /* Any tv_sec is valid: ns saturate (Linux's KTIME_MAX, never fires). */
    int64_t value = det_timespec_ns(&its.value), expiry = 0;
    t->interval_ns = det_timespec_ns(&its.interval);
    t->armed = value != 0;
    if (t->armed && !(flags & TFD_TIMER_ABSTIME) &&
        __builtin_add_overflow(now_ns(t), value, &expiry))
        expiry = INT64_MAX;
    else if (t->armed && (flags & TFD_TIMER_ABSTIME))
        expiry = value;
    t->expiry_ns = expiry;
    t->settime_flags = flags;
    return 0;
}

static long sys_timerfd_gettime(struct proxy_process *p, const uint64_t a[6])
{
    long err;
    struct proxy_timerfd *t = timerfd_of(p, (int)a[0], &err);
    if (!t)
        return err;
    struct kitimerspec cur = current_of(t);
    return proxy_copy_out(p, a[1], &cur, sizeof(cur)) < 0 ? -EFAULT : 0;
}

const struct proxy_syscall proxy_timerfd_syscalls[] = {
    {SYS_timerfd_create, "timerfd_create", sys_timerfd_create},
    {SYS_timerfd_settime, "timerfd_settime", sys_timerfd_settime},
    {SYS_timerfd_gettime, "timerfd_gettime", sys_timerfd_gettime},
    {-1, NULL, NULL},
};
