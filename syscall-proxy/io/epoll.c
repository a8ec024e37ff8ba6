/*
 * epoll.c - epoll_create/epoll_create1, epoll_ctl, epoll_wait/epoll_pwait/
 * epoll_pwait2, and eventfd/eventfd2.
 *
 * An epoll instance is a host epoll fd in the guest fd table; the fds it
 * watches are the host fds behind the guest's, and the guest's 64-bit data
 * is stored in the host's entry, so the host hands it back verbatim. Linux
 * keys an entry by (open file, fd number). Guest fds of one description
 * share a host fd (fdtable.c), but the host fd an entry is made with is
 * the key of one guest fd number alone (proxy_fd_epoll_key gives a dup of
 * another number a host fd of its own when it is first used here), so
 * EEXIST, ENOENT and the automatic removal when the last fd of a watched
 * file is closed all come out as on Linux. struct epoll_event is packed on x86-64, the same
 * 12 bytes for guest and host.
 *
 * A wait never waits in the host: the host is first only asked (timeout
 * 0); with nothing ready the thread is parked on the epoll fd itself,
 * which polls readable once one of its entries is ready, and the call runs
 * again (io.c, "waiting without blocking the host"). A finite timeout is a
 * deadline on the logical clock, as for poll and select.
 *
 * An eventfd is a host eventfd. Its reads and writes are plain read and
 * write; io.c parks them like pipe transfers (an anonymous inode counts as
 * a file whose transfers may wait).
 *
 * What could differ between runs: the order in which the host saw its
 * entries become ready, which for fds only guests touch follows the
 * (deterministic) guest schedule but for sockets to outside the run
 * follows the host's timing; so the events of one wait are returned in
 * the order of their guest data (events_in_order). Which events a wait
 * gets when more are ready than it takes still follows the host's order.
 */
#include "proxy.h"
#include "fdtable.h"
#include "kernel.h"
#include "fs.h"
#include "io.h"
#include "internal.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

_Static_assert(sizeof(struct epoll_event) == 12, "epoll_event ABI (packed)");

/* Linux's EP_MAX_EVENTS: the largest maxevents a wait takes. */
#define EP_MAX_EVENTS ((int)(INT_MAX / sizeof(struct epoll_event)))
/* Events one wait asks the host for; more ready ones wait for the next
 * call (epoll returns "up to maxevents", rotating its ready list). */
#define EPOLL_BATCH_EVENTS 256
/* Linux's TASK_SIZE_MAX on x86-64: access_ok's end of user memory. */
#define GUEST_USER_END 0x00007ffffffff000ULL

/* ---- epoll_create -------------------------------------------------------- */

static long epoll_make(struct proxy_process *p, int flags)
{
    if (flags & ~EPOLL_CLOEXEC)
        return -EINVAL;
    int host_fd = epoll_create1(EPOLL_CLOEXEC);
    if (host_fd < 0)
        return -errno;
    return proxy_fd_install(&p->fds, host_fd, flags & EPOLL_CLOEXEC, 0);
}

/* The size is only checked (> 0), as Linux has ignored it since 2.6.8. */
static long sys_epoll_create(struct proxy_process *p, const uint64_t a[6])
{
    if ((int)a[0] <= 0)
        return -EINVAL;
    return epoll_make(p, 0);
}

static long sys_epoll_create1(struct proxy_process *p, const uint64_t a[6])
{
    return epoll_make(p, (int)a[0]);
}

/* ---- epoll_ctl ----------------------------------------------------------- */

/*
 * Linux copies the event (every op but DEL) before it looks at either fd;
 * the host then gives the remaining answers itself: EINVAL for epfd == fd
 * or an epfd that is not an epoll instance, EPERM for a file without poll
 * (a regular file, a directory), EEXIST, ENOENT, ELOOP.
 */
static long sys_epoll_ctl(struct proxy_process *p, const uint64_t a[6])
{
    int op = (int)a[1];
    struct epoll_event ev;
    memset(&ev, 0, sizeof(ev));
    if (op != EPOLL_CTL_DEL && proxy_copy_in(p, &ev, a[3], sizeof(ev)) < 0)
        return -EFAULT;
    int host_epfd = proxy_fd_host(&p->fds, (int)a[0]);
    if (host_epfd < 0)
        return host_epfd;
    int host_fd = proxy_fd_epoll_key(&p->fds, (int)a[2]);
    if (host_fd < 0)
        return host_fd;
    host_epfd = proxy_fd_host(&p->fds, (int)a[0]); /* epfd == fd: re-keyed */
    return proxy_host_result(epoll_ctl(host_epfd, op, host_fd, &ev));
}

/* ---- epoll_wait ---------------------------------------------------------- */

/* Copies n host events to the guest. As Linux, a fault after the first
 * event ends the list there; a fault on the first is -EFAULT (the events
 * taken from the host are then lost, as Linux loses its copy too). */
static long events_out(struct proxy_process *p, gva_t events_gva,
                       const struct epoll_event *ev, int n)
{
    size_t one = sizeof(*ev);
    if (proxy_copy_out(p, events_gva, ev, (size_t)n * one) == 0)
        return n;
    int done = 0;
    while (done < n && proxy_copy_out(p, events_gva + (gva_t)done * one,
                                      &ev[done], one) == 0)
        done++;
    return done > 0 ? done : -EFAULT;
}

/* The events one wait took from the host, in the order of their guest
 * data (then their mask): the host lists them in the order they became
 * ready, which for a socket to outside the run follows the host's timing
 * (two peers' FINs a moment apart), not the guest's schedule, and a
 * replay, whose relays bring the same events at the same points, would
 * list them otherwise. Only within one wait's batch: which events a
 * wait takes when more are ready than it asks for stays epoll's
 * rotation. */
static void events_in_order(struct epoll_event *ev, int n)
{
    for (int i = 1; i < n; i++) {
        struct epoll_event e = ev[i];
        int j = i;
        while (j > 0 && (ev[j - 1].data.u64 > e.data.u64 ||
                         (ev[j - 1].data.u64 == e.data.u64 &&
                          ev[j - 1].events > e.events))) {
            ev[j] = ev[j - 1];
            j--;
        }
        ev[j] = e;
    }
}

/*
 * The wait shared by the three calls; timeout_ms < 0 waits without end.
 * Checks in Linux's order (do_epoll_wait): maxevents, the buffer's range
 * (access_ok: only that it lies in user memory; a fault shows on copy),
 * then the epoll fd.
 */
static long epoll_wait_run(struct proxy_process *p, int guest_epfd,
                           gva_t events_gva, int maxevents, int timeout_ms)
{
    if (maxevents <= 0 || maxevents > EP_MAX_EVENTS)
        return -EINVAL;
    uint64_t end;
    if (__builtin_add_overflow(events_gva,
                               (uint64_t)maxevents * sizeof(struct epoll_event),
                               &end) ||
        end > GUEST_USER_END)
        return -EFAULT;
    int host_epfd = proxy_fd_host(&p->fds, guest_epfd);
    if (host_epfd < 0)
        return host_epfd;
    proxy_tty_settle_epoll(host_epfd); /* a pty's data on its way (tty.c) */
    struct epoll_event ev[EPOLL_BATCH_EVENTS];
    int n = maxevents < EPOLL_BATCH_EVENTS ? maxevents : EPOLL_BATCH_EVENTS;
    long r = proxy_host_result(epoll_wait(host_epfd, ev, n, 0));
    if (r == 0 && timeout_ms != 0 && p->threads)
        p->threads[p->cur].eintr_on_handler = true; /* never restarted */
    if (r == 0 && timeout_ms < 0)
        return proxy_block_on_fd(p, host_epfd, POLLIN);
    if (timeout_ms > 0) {
        /* A finite timeout is a deadline on the logical clock kept across
         * re-runs (as poll's): park until an event or the deadline. */
        uint64_t left;
        bool before = proxy_thread_poll_deadline(
            p, (uint64_t)timeout_ms * 1000000ULL, &left);
        if (r == 0 && before)
            return proxy_block_on_fd(p, host_epfd, POLLIN);
        proxy_thread_poll_done(p);
    }
    if (r > 1)
        events_in_order(ev, (int)r);
    return r > 0 ? events_out(p, events_gva, ev, (int)r) : r;
}

static long sys_epoll_wait(struct proxy_process *p, const uint64_t a[6])
{
    return epoll_wait_run(p, (int)a[0], a[1], (int)a[2], (int)a[3]);
}

static long sys_epoll_pwait(struct proxy_process *p, const uint64_t a[6])
{
    long r = proxy_call_mask_apply(p, a[4], a[5]);
    if (r < 0)
        return r;
    return proxy_call_mask_end(
        p, epoll_wait_run(p, (int)a[0], a[1], (int)a[2], (int)a[3]));
}

/* A timespec timeout becomes milliseconds rounded up (never shorter than
 * asked), at most INT_MAX. */
static int timespec_to_ms(const struct timespec *ts)
{
    uint64_t ms = (uint64_t)ts->tv_sec * 1000 +
                  ((uint64_t)ts->tv_nsec + 999999) / 1000000;
    if ((uint64_t)ts->tv_sec > INT_MAX / 1000 || ms > INT_MAX)
        return INT_MAX;
    return (int)ms;
}

static long sys_epoll_pwait2(struct proxy_process *p, const uint64_t a[6])
{
    int timeout_ms = -1;
    if (a[3] != 0) {
        struct timespec ts;
        if (proxy_copy_in(p, &ts, a[3], sizeof(ts)) < 0)
            return -EFAULT;
        if (ts.tv_sec < 0 || ts.tv_nsec < 0 || ts.tv_nsec >= 1000000000L)
            return -EINVAL;
        timeout_ms = timespec_to_ms(&ts);
    }
    long r = proxy_call_mask_apply(p, a[4], a[5]);
    if (r < 0)
        return r;
    return proxy_call_mask_end(
        p, epoll_wait_run(p, (int)a[0], a[1], (int)a[2], timeout_ms));
}

/* ---- eventfd ------------------------------------------------------------- */

/*
 * An eventfd's id (fdinfo's eventfd-id): Linux numbers eventfds with an
 * IDA, the lowest id no live eventfd has, machine-wide. The host's id
 * counts every eventfd of the host (hvrun's own timerfd and signalfd
 * stand-ins, other programs'): a leak that differs between runs. A guest
 * eventfd gets the run's own: the lowest that no live eventfd of the run
 * has, live while a guest fd (or an SCM_RIGHTS message in flight) holds
 * its description.
 */
struct proxy_eventfd {
    unsigned refs;
    int id;
};

#define EVENTFD_IDS_MAX 65536
static uint8_t eventfd_id_used[EVENTFD_IDS_MAX / 8];

static struct proxy_eventfd *eventfd_id_new(void)
{
    for (int id = 0; id < EVENTFD_IDS_MAX; id++) {
        if (eventfd_id_used[id / 8] & (1u << (id % 8)))
            continue;
        struct proxy_eventfd *e = malloc(sizeof(*e));
        if (!e)
            return NULL;
        eventfd_id_used[id / 8] |= (uint8_t)(1u << (id % 8));
        *e = (struct proxy_eventfd){1, id};
        return e;
    }
    return NULL; /* fdinfo then shows the host's id */
}

void proxy_eventfd_put(struct proxy_eventfd *e)
{
    if (!e || --e->refs > 0)
        return;
    eventfd_id_used[e->id / 8] &= (uint8_t)~(1u << (e->id % 8));
    free(e);
}

void proxy_eventfd_share(struct proxy_fd *to, const struct proxy_fd *from)
{
    if (!from->eventfd || to->eventfd == from->eventfd)
        return;
    proxy_eventfd_put(to->eventfd);
    from->eventfd->refs++;
    to->eventfd = from->eventfd;
}

int proxy_eventfd_id(const struct proxy_eventfd *e)
{
    return e->id;
}

/* The host eventfd is made with the guest's flags but always close-on-exec
 * (the guest's close-on-exec is kept in the fd table); O_NONBLOCK and
 * EFD_SEMAPHORE live in the host's open file, where F_GETFL and reads see
 * them. */
static long eventfd_make(struct proxy_process *p, unsigned int initval,
                         int flags)
{
    if (flags & ~(EFD_CLOEXEC | EFD_NONBLOCK | EFD_SEMAPHORE))
        return -EINVAL;
    int host_fd = eventfd(initval, flags | EFD_CLOEXEC);
    if (host_fd < 0)
        return -errno;
    long fd = proxy_fd_install(&p->fds, host_fd, flags & EFD_CLOEXEC, 0);
    if (fd >= 0)
        proxy_fd_get(&p->fds, (int)fd)->eventfd = eventfd_id_new();
    return fd;
}

static long sys_eventfd(struct proxy_process *p, const uint64_t a[6])
{
    return eventfd_make(p, (unsigned int)a[0], 0);
}

static long sys_eventfd2(struct proxy_process *p, const uint64_t a[6])
{
    return eventfd_make(p, (unsigned int)a[0], (int)a[1]);
}

const struct proxy_syscall proxy_epoll_syscalls[] = {
    {SYS_epoll_create, "epoll_create", sys_epoll_create},
    {SYS_epoll_create1, "epoll_create1", sys_epoll_create1},
    {SYS_epoll_ctl, "epoll_ctl", sys_epoll_ctl},
    {SYS_epoll_wait, "epoll_wait", sys_epoll_wait},
    {SYS_epoll_pwait, "epoll_pwait", sys_epoll_pwait},
    {SYS_epoll_pwait2, "epoll_pwait2", sys_epoll_pwait2},
    {SYS_eventfd, "eventfd", sys_eventfd},
    {SYS_eventfd2, "eventfd2", sys_eventfd2},
    {-1, NULL, NULL},
};
