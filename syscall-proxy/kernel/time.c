/*
 * time.c - the clock family: clock_gettime, clock_getres, gettimeofday,
 * time, nanosleep, clock_nanosleep.
 *
 * Every clock read and every sleep goes through detcore (det_clock_gettime,
 * det_clock_getres, det_sleep); this file never reads host time, so making
 * time logical is detcore's change alone.
 *
 * Guest structs: hvrun runs x86-64 guests on x86-64 Linux hosts only, so the
 * host's struct timespec/timeval/timezone are byte for byte the guest's; the
 * assertions below keep that assumption visible.
 */
#include "proxy.h"
#include "kernel.h"
#include "internal.h"

#include <errno.h>
#include <stdint.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <time.h>

#include "det.h"

_Static_assert(sizeof(struct timespec) == 16, "x86-64 struct timespec");
_Static_assert(sizeof(struct timeval) == 16, "x86-64 struct timeval");
_Static_assert(sizeof(struct timezone) == 8, "x86-64 struct timezone");

#define NS_PER_SEC 1000000000LL

/*
 * CPU-time clock ids (clock_getcpuclockid, pthread_getcpuclockid) are
 * negative: bits 0-1 say which (0 PROF, 1 VIRT, 2 SCHED, 3 an fd clock),
 * bit 2 says per-thread, and the rest is ~pid. See
 * include/linux/posix-timers.h.
 */
#define CPUCLOCK_WHICH_MASK 3
#define CPUCLOCK_FD 3
#define CPUCLOCK_PERTHREAD 4

static int cpuclock_pid(int clockid) { return ~(clockid >> 3); }

/*
 * Maps a guest clock id to the id detcore understands. Static clock ids pass
 * through (detcore rejects unknown ones). A CPU-time id naming this process
 * or thread (pid 0 means "self") becomes CLOCK_PROCESS_CPUTIME_ID or
 * CLOCK_THREAD_CPUTIME_ID; PROF, VIRT and SCHED read the same clock here.
 * Any other process, other thread or fd clock is -EINVAL, as Linux answers
 * for a task it cannot find.
 */
static int resolve_clock(const struct proxy_process *p, int clockid)
{
    if (clockid >= 0)
        return clockid;
    if ((clockid & CPUCLOCK_WHICH_MASK) == CPUCLOCK_FD)
        return -EINVAL;
    int pid = cpuclock_pid(clockid);
    if (clockid & CPUCLOCK_PERTHREAD)
        return pid == 0 || pid == p->tid ? CLOCK_THREAD_CPUTIME_ID : -EINVAL;
    return pid == 0 || pid == p->pid ? CLOCK_PROCESS_CPUTIME_ID : -EINVAL;
}

/* Linux's timespec64_valid: seconds non-negative, nanoseconds in range. */
static bool timespec_valid(const struct timespec *ts)
{
    return ts->tv_sec >= 0 && ts->tv_nsec >= 0 && ts->tv_nsec < NS_PER_SEC;
}

/* A valid timespec as nanoseconds, saturating at UINT64_MAX (a sleep of
 * centuries is "forever" either way). */
static uint64_t timespec_to_ns(const struct timespec *ts)
{
    uint64_t ns;
    if (__builtin_mul_overflow((uint64_t)ts->tv_sec, (uint64_t)NS_PER_SEC,
                               &ns) ||
        __builtin_add_overflow(ns, (uint64_t)ts->tv_nsec, &ns))
        return UINT64_MAX;
    return ns;
}

/* Nanoseconds from now until target; 0 when target has passed. Both are
 * valid timespecs, so the subtraction cannot overflow. */
static uint64_t ns_until(const struct timespec *now,
                         const struct timespec *target)
{
    struct timespec d = {target->tv_sec - now->tv_sec,
                         target->tv_nsec - now->tv_nsec};
    if (d.tv_nsec < 0) {
        d.tv_sec--;
        d.tv_nsec += NS_PER_SEC;
    }
    return d.tv_sec < 0 ? 0 : timespec_to_ns(&d);
}

/*
 * Reads a sleep request: -EFAULT before -EINVAL, the order Linux checks in.
 */
static int read_sleep_request(struct proxy_process *p, gva_t req_gva,
                              struct timespec *req)
{
    if (proxy_copy_in(p, req, req_gva, sizeof(*req)) < 0)
        return -EFAULT;
    return timespec_valid(req) ? 0 : -EINVAL;
}

/*
 * Linux writes the remaining time only when a sleep is interrupted by a
 * signal. Sleeps here always complete, so rem is zeroed as a courtesy and a
 * bad rem pointer is not an error (Linux would not have touched it).
 */
static void write_zero_remainder(struct proxy_process *p, gva_t rem_gva)
{
    const struct timespec zero = {0, 0};
    if (rem_gva)
        (void)proxy_copy_out(p, rem_gva, &zero, sizeof(zero));
}

/* ---- CPU time ------------------------------------------------------------ */

/*
 * A thread's CPU time is what it ran: each of its events and vDSO reads
 * (DET_EVENT_NS) and the slices it computed between calls. The logical
 * time that passes while it sleeps or waits is not: detcore's elapsed
 * clock, which CLOCK_*_CPUTIME_ID once read, moved on then too. Timers on
 * the CPU clocks (ITIMER_VIRTUAL, ITIMER_PROF, timer_create) still run on
 * the elapsed clock (timer.c).
 */
void proxy_cpu_charge(struct proxy_process *p, uint64_t ns)
{
    if (p->cur < p->nr_threads)
        p->threads[p->cur].cpu_ns += ns;
}

uint64_t proxy_cpu_clock_ns(struct proxy_process *p, int clockid)
{
    struct timespec ts;
    if (!p->det->cfg.virtualize_time || (clockid != CLOCK_THREAD_CPUTIME_ID &&
                                         clockid != CLOCK_PROCESS_CPUTIME_ID)) {
        if (det_clock_gettime(p->det, clockid, &ts) < 0)
            return 0;
        return (uint64_t)ts.tv_sec * NS_PER_SEC + (uint64_t)ts.tv_nsec;
    }
    uint64_t ns = proxy_cpu_clock_base(p, clockid);
    det_clock_cpu_read(p->det, ns);
    return ns;
}

uint64_t proxy_cpu_clock_base(const struct proxy_process *p, int clockid)
{
    if (clockid == CLOCK_THREAD_CPUTIME_ID)
        return p->cur < p->nr_threads ? p->threads[p->cur].cpu_ns : 0;
    uint64_t ns = p->gone_threads_cpu_ns;
    for (int i = 0; i < p->nr_threads; i++)
        ns += p->threads[i].cpu_ns;
    return ns;
}

/* ---- handlers ------------------------------------------------------------ */

static long sys_clock_gettime(struct proxy_process *p, const uint64_t a[6])
{
    int clockid = resolve_clock(p, (int)a[0]);
    if (clockid < 0)
        return clockid;
    struct timespec ts;
    if (p->det->cfg.virtualize_time && (clockid == CLOCK_THREAD_CPUTIME_ID ||
                                        clockid == CLOCK_PROCESS_CPUTIME_ID)) {
        uint64_t ns = proxy_cpu_clock_ns(p, clockid);
        ts.tv_sec = (time_t)(ns / NS_PER_SEC);
        ts.tv_nsec = (long)(ns % NS_PER_SEC);
    } else {
        int rc = det_clock_gettime(p->det, clockid, &ts);
        if (rc < 0)
            return rc;
    }
    return proxy_copy_out(p, a[1], &ts, sizeof(ts)) < 0 ? -EFAULT : 0;
}

/* A NULL res is allowed: the call then only checks that the clock exists. */
static long sys_clock_getres(struct proxy_process *p, const uint64_t a[6])
{
    int clockid = resolve_clock(p, (int)a[0]);
    if (clockid < 0)
        return clockid;
    struct timespec ts;
    int rc = det_clock_getres(p->det, clockid, &ts);
    if (rc < 0)
        return rc;
    if (a[1] && proxy_copy_out(p, a[1], &ts, sizeof(ts)) < 0)
        return -EFAULT;
    return 0;
}

/*
 * Both pointers may be NULL. The kernel's timezone (sys_tz) is zero unless
 * an administrator set it with settimeofday, so the guest sees UTC with no
 * DST correction, the same on every host.
 */
static long sys_gettimeofday(struct proxy_process *p, const uint64_t a[6])
{
    gva_t tv_gva = a[0], tz_gva = a[1];
    if (tv_gva) {
        struct timespec ts;
        int rc = det_clock_gettime(p->det, CLOCK_REALTIME, &ts);
        if (rc < 0)
            return rc;
        struct timeval tv = {ts.tv_sec, ts.tv_nsec / 1000};
        if (proxy_copy_out(p, tv_gva, &tv, sizeof(tv)) < 0)
            return -EFAULT;
    }
    if (tz_gva) {
        const struct timezone tz = {0, 0};
        if (proxy_copy_out(p, tz_gva, &tz, sizeof(tz)) < 0)
            return -EFAULT;
    }
    return 0;
}

/* Returns the seconds; also stores them at tloc unless tloc is NULL. */
static long sys_time(struct proxy_process *p, const uint64_t a[6])
{
    struct timespec ts;
    int rc = det_clock_gettime(p->det, CLOCK_REALTIME, &ts);
    if (rc < 0)
        return rc;
    int64_t secs = ts.tv_sec;
    if (a[0] && proxy_copy_out(p, a[0], &secs, sizeof(secs)) < 0)
        return -EFAULT;
    return secs;
}

/*
 * A sleep is a wait in the scheduler: other guests run meanwhile, logical
 * time reaches the deadline when nothing else can run, and a signal
 * handler interrupts it with EINTR and the remainder, as on Linux; one
 * that runs no handler (a tracer's signal-delivery-stop resumed with 0 or
 * an ignored signal) leaves it on restart_syscall, sleeping on to the same
 * deadline (thread.c, ERESTART_RESTARTBLOCK).
 */
static long sleep_for(struct proxy_process *p, uint64_t ns, gva_t rem)
{
    if (ns == 0 || !p->world || !p->threads) {
        det_sleep(p->det, ns);
        write_zero_remainder(p, rem);
        return 0;
    }
    struct timespec now;
    det_clock_gettime(p->det, CLOCK_MONOTONIC, &now);
    return proxy_thread_sleep(p, timespec_to_ns(&now) + ns, rem);
}

static long sys_nanosleep(struct proxy_process *p, const uint64_t a[6])
{
    struct timespec req;
    int rc = read_sleep_request(p, a[0], &req);
    if (rc < 0)
        return rc;
    return sleep_for(p, timespec_to_ns(&req), a[1]);
}

/*
 * Which clocks Linux can sleep on. The raw and coarse clocks and
 * CLOCK_THREAD_CPUTIME_ID have no nsleep in the kernel (-EOPNOTSUPP); a
 * per-thread CPU clock id made by pthread_getcpuclockid is refused by the
 * CPU-timer code instead (-EINVAL). Sleeping on the process CPU clock is
 * allowed: with every guest thread blocked Linux would wait for CPU time
 * nobody burns, so hvrun sleeps the span instead of hanging the run.
 */
static int check_sleep_clock(int guest_clockid, int clockid)
{
    if (guest_clockid < 0 && (guest_clockid & CPUCLOCK_PERTHREAD))
        return -EINVAL;
    switch (clockid) {
    case CLOCK_MONOTONIC_RAW:
    case CLOCK_REALTIME_COARSE:
    case CLOCK_MONOTONIC_COARSE:
    case CLOCK_THREAD_CPUTIME_ID:
        return -EOPNOTSUPP;
    default:
        return 0;
    }
}

/*
 * clock_nanosleep(clockid, flags, req, rem). TIMER_ABSTIME measures req
 * against that clock's current detcore reading; other flag bits are ignored
 * as Linux ignores them. Errors come back as -errno like any raw syscall
 * (only the glibc wrapper returns the error number positive).
 */
static long sys_clock_nanosleep(struct proxy_process *p, const uint64_t a[6])
{
    int guest_clockid = (int)a[0], flags = (int)a[1];
    int clockid = resolve_clock(p, guest_clockid);
    if (clockid < 0)
        return clockid;
    struct timespec res;
    int rc = det_clock_getres(p->det, clockid, &res); /* does it exist? */
    if (rc < 0)
        return rc;
    rc = check_sleep_clock(guest_clockid, clockid);
    if (rc < 0)
        return rc;
    struct timespec req;
    rc = read_sleep_request(p, a[2], &req);
    if (rc < 0)
        return rc;
    if (flags & TIMER_ABSTIME) {
        /* measured against the reading clock_gettime gives (a CPU clock
         * is the thread's own progress, not detcore's elapsed clock) */
        uint64_t now_ns = proxy_cpu_clock_ns(p, clockid);
        struct timespec now = {(time_t)(now_ns / NS_PER_SEC),
                               (long)(now_ns % NS_PER_SEC)};
        /* An absolute sleep reports no remainder when interrupted. */
        return sleep_for(p, ns_until(&now, &req), 0);
    }
    return sleep_for(p, timespec_to_ns(&req), a[3]);
}

/* restart_syscall(): what a sleep a signal interrupted left to do. */
static long sys_restart_syscall(struct proxy_process *p, const uint64_t a[6])
{
    (void)a;
    return proxy_thread_restart_syscall(p);
}

const struct proxy_syscall proxy_time_syscalls[] = {
    {SYS_restart_syscall, "restart_syscall", sys_restart_syscall},
    {SYS_clock_gettime, "clock_gettime", sys_clock_gettime},
    {SYS_clock_getres, "clock_getres", sys_clock_getres},
    {SYS_gettimeofday, "gettimeofday", sys_gettimeofday},
    {SYS_time, "time", sys_time},
    {SYS_nanosleep, "nanosleep", sys_nanosleep},
    {SYS_clock_nanosleep, "clock_nanosleep", sys_clock_nanosleep},
    {-1, NULL, NULL},
};
