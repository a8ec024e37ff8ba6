/*
 * timer.c - timers that deliver signals on detcore's clocks: alarm,
 * setitimer/getitimer and the POSIX timers (timer_create and friends).
 *
 * A timer is an expiry on one clock plus a reload interval (struct
 * proxy_timer in proxy.h). Nothing runs in the background: the world loop
 * calls proxy_timer_fire_due() before every scheduling decision, which
 * fires the timers whose expiry the clock has reached, and when no thread
 * can run, proxy_timer_advance() moves logical time to the earliest expiry,
 * as an expiring futex deadline does. So a program that waits for its alarm
 * gets it at once, at the same logical instant on every run.
 *
 * Clocks: ITIMER_REAL runs on CLOCK_MONOTONIC, as Linux's hrtimer does.
 * ITIMER_VIRTUAL and ITIMER_PROF run on the process CPU clock, which in
 * hvrun is elapsed logical time (one vCPU, always busy; clock.c): they
 * count a blocked process's waiting too, and can wake it, where Linux
 * would deliver nothing until the process burned CPU.
 *
 * Signals: every process has one pending set shared by its threads, so
 * SIGEV_THREAD_ID delivers to the process. A timer whose signal is still
 * pending does not queue another: the expiry counts as an overrun, which
 * the pending siginfo carries (si_overrun) and timer_getoverrun reports
 * once that signal was delivered. Linux drops timer signals the process
 * ignores; so does this file. Ownership: the timers live in proxy_process
 * and die with it; fork clears them in the child, execve deletes the
 * POSIX ones (proxy_timer_fork, proxy_timer_exec).
 */
#include "proxy.h"
#include "kernel.h"
#include "internal.h"

#include <errno.h>
#include <limits.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <time.h>

#include "det.h"

#define SIGBIT(s) (1ULL << ((s) - 1))
#define NS_PER_SEC 1000000000LL
#define NS_PER_USEC 1000LL

/* The kernel's sigevent notify values (SIGEV_THREAD_ID is Linux's own). */
#define KSIGEV_SIGNAL 0
#define KSIGEV_NONE 1
#define KSIGEV_THREAD 2
#define KSIGEV_THREAD_ID 4

/* CPU-time clock ids, as time.c decodes them (linux/posix-timers.h). */
#define CPUCLOCK_WHICH_MASK 3
#define CPUCLOCK_FD 3
#define CPUCLOCK_PERTHREAD 4

/* struct sigevent as the kernel reads it (64 bytes on x86-64). */
struct ksigevent {
    uint64_t value;
    int32_t signo;
    int32_t notify;
    int32_t tid; /* SIGEV_THREAD_ID */
    int32_t pad[11];
};

struct kitimerval {
    struct timeval interval, value;
};

struct kitimerspec {
    struct timespec interval, value;
};

_Static_assert(sizeof(struct ksigevent) == 64, "x86-64 struct sigevent");
_Static_assert(sizeof(struct kitimerval) == 32, "x86-64 itimerval");
_Static_assert(sizeof(struct kitimerspec) == 32, "x86-64 itimerspec");

static const int itimer_clock[PROXY_NR_ITIMERS] = {
    [ITIMER_REAL] = CLOCK_MONOTONIC,
    [ITIMER_VIRTUAL] = CLOCK_PROCESS_CPUTIME_ID,
    [ITIMER_PROF] = CLOCK_PROCESS_CPUTIME_ID,
};

static const int itimer_signal[PROXY_NR_ITIMERS] = {
    [ITIMER_REAL] = SIGALRM,
    [ITIMER_VIRTUAL] = SIGVTALRM,
    [ITIMER_PROF] = SIGPROF,
};

/* ---- time arithmetic ----------------------------------------------------- */

/* The guest reads the clock through a syscall: logged like a clock read. */
static int64_t guest_now_ns(struct proxy_process *p, int clockid)
{
    struct timespec ts;
    if (det_clock_gettime(p->det, clockid, &ts) < 0)
        return 0;
    return (int64_t)ts.tv_sec * NS_PER_SEC + ts.tv_nsec;
}

static int64_t add_sat(int64_t a, int64_t b)
{
    int64_t r;
    return __builtin_add_overflow(a, b, &r) ? INT64_MAX : r;
}

/* Seconds and nanoseconds, both valid, as ns saturating at INT64_MAX
 * (Linux's KTIME_MAX: such a timer never expires). */
static int64_t parts_to_ns(int64_t sec, int64_t nsec)
{
    int64_t ns;
    if (__builtin_mul_overflow(sec, NS_PER_SEC, &ns))
        return INT64_MAX;
    return add_sat(ns, nsec);
}

static bool timeval_ok(const struct timeval *tv)
{
    return tv->tv_sec >= 0 && tv->tv_usec >= 0 && tv->tv_usec < 1000000;
}

static bool timespec_ok(const struct timespec *ts)
{
    return ts->tv_sec >= 0 && ts->tv_nsec >= 0 && ts->tv_nsec < NS_PER_SEC;
}

static struct timespec ns_to_timespec(int64_t ns)
{
    return (struct timespec){ns / NS_PER_SEC, ns % NS_PER_SEC};
}

/* Linux converts to a timeval by truncating to microseconds. */
static struct timeval ns_to_timeval(int64_t ns)
{
    return (struct timeval){ns / NS_PER_SEC, (ns % NS_PER_SEC) / NS_PER_USEC};
}

/* ---- arming -------------------------------------------------------------- */

/* A zero value disarms; Linux keeps the interval even then (getitimer and
 * timer_gettime report it). */
static void arm(struct proxy_timer *t, int64_t value_ns, int64_t expiry_ns,
                int64_t interval_ns)
{
    t->armed = value_ns != 0;
    t->expiry_ns = t->armed ? expiry_ns : 0;
    t->interval_ns = interval_ns;
    t->overrun = t->overrun_last = 0;
}

/*
 * Time left until an armed timer expires. One that is due but not yet
 * fired (it fires before the next scheduling decision) reports min_ns:
 * Linux says 1 us for an itimer, 1 ns for a POSIX timer, "it is about to".
 */
static int64_t remaining_ns(const struct proxy_timer *t, int64_t now_ns,
                            int64_t min_ns)
{
    if (!t->armed)
        return 0;
    return t->expiry_ns > now_ns ? t->expiry_ns - now_ns : min_ns;
}

/* ---- firing -------------------------------------------------------------- */

/* Linux discards a signal that is ignored and not blocked (sig_ignored). */
static bool signal_ignored(const struct proxy_process *p, int signo)
{
    if (p->sig.sigmask & SIGBIT(signo))
        return false;
    uint64_t h = p->sig.sigactions[signo].handler;
    if (h == (uint64_t)(uintptr_t)SIG_IGN)
        return true;
    return h == (uint64_t)(uintptr_t)SIG_DFL &&
           (signo == SIGCHLD || signo == SIGCONT || signo == SIGURG ||
            signo == SIGWINCH);
}

/* The signal pending for signo came from POSIX timer t. */
static bool own_signal_pending(const struct proxy_process *p,
                               const struct proxy_timer *t)
{
    const siginfo_t *si = &p->sig.pending[t->signo].info;
    return (p->sig.pending_mask & SIGBIT(t->signo)) &&
           si->si_code == SI_TIMER && si->si_timerid == t->id;
}

static int add_overrun(int a, int64_t b)
{
    int64_t r = (int64_t)a + b;
    return r > INT_MAX ? INT_MAX : (int)r; /* DELAYTIMER_MAX */
}

/* One expiry (plus `missed` more that passed unseen) of POSIX timer t. */
static void notify_posix(struct proxy_process *p, struct proxy_timer *t,
                         int64_t missed)
{
    if (t->notify == KSIGEV_NONE || signal_ignored(p, t->signo))
        return;
    if (own_signal_pending(p, t)) {
        t->overrun = add_overrun(t->overrun, 1 + missed);
        p->sig.pending[t->signo].info.si_overrun = t->overrun;
        return;
    }
    /* Our previous signal is gone (delivered or taken), with the overrun
     * count it carried: that is what timer_getoverrun reports now. */
    t->overrun_last = t->overrun;
    t->overrun = add_overrun(0, missed);
    siginfo_t info;
    memset(&info, 0, sizeof(info));
    info.si_signo = t->signo;
    info.si_code = SI_TIMER;
    info.si_timerid = t->id;
    info.si_overrun = t->overrun;
    info.si_value.sival_ptr = (void *)(uintptr_t)t->sigval;
    proxy_signal_raise(p, t->signo, &info);
}

/* itimers send SIGALRM/SIGVTALRM/SIGPROF as the kernel (SI_KERNEL). */
static void notify_itimer(struct proxy_process *p, int which)
{
    int signo = itimer_signal[which];
    if (signal_ignored(p, signo))
        return;
    siginfo_t info;
    memset(&info, 0, sizeof(info));
    info.si_signo = signo;
    info.si_code = SI_KERNEL;
    proxy_signal_raise(p, signo, &info);
}

/*
 * If t is due at now_ns: disarms a one-shot timer or reloads a periodic one
 * past now, and returns how many expiries beyond the first passed (they
 * count as overruns). -1: not due.
 */
static int64_t expire(struct proxy_timer *t, int64_t now_ns)
{
    if (!t->armed || t->expiry_ns > now_ns)
        return -1;
    if (t->interval_ns <= 0) {
        t->armed = false;
        return 0;
    }
    int64_t missed = (now_ns - t->expiry_ns) / t->interval_ns;
    int64_t step;
    if (__builtin_mul_overflow(missed + 1, t->interval_ns, &step))
        step = INT64_MAX;
    t->expiry_ns = add_sat(t->expiry_ns, step);
    return missed;
}

/*
 * RLIMIT_CPU, as Linux's check_process_timers: at the hard limit of the
 * process's CPU time SIGKILL; at the soft one SIGXCPU, and the soft limit
 * moves on by a second so the next comes a second later. The CPU time is
 * what clock_gettime(CLOCK_PROCESS_CPUTIME_ID) reads (time.c).
 */
#define NS_PER_SEC_U 1000000000ULL

static uint64_t cpu_limit_ns(rlim_t seconds)
{
    uint64_t ns;
    return __builtin_mul_overflow((uint64_t)seconds, NS_PER_SEC_U, &ns)
               ? UINT64_MAX
               : ns;
}

static void check_cpu_rlimit(struct proxy_process *p)
{
    struct rlimit *r = &p->rlimits[RLIMIT_CPU];
    if (r->rlim_cur == RLIM_INFINITY)
        return;
    uint64_t cpu = proxy_cpu_clock_base(p, CLOCK_PROCESS_CPUTIME_ID);
    siginfo_t info;
    memset(&info, 0, sizeof(info));
    info.si_code = SI_KERNEL;
    if (r->rlim_max != RLIM_INFINITY && cpu >= cpu_limit_ns(r->rlim_max)) {
        info.si_signo = SIGKILL;
        proxy_signal_raise(p, SIGKILL, &info);
        return;
    }
    if (cpu >= cpu_limit_ns(r->rlim_cur)) {
        r->rlim_cur++;
        info.si_signo = SIGXCPU;
        if (!signal_ignored(p, SIGXCPU))
            proxy_signal_raise(p, SIGXCPU, &info);
    }
}

/* The CPU time p may still use before RLIMIT_CPU acts, if it can use any
 * (a thread of it runnable: a process whose threads all wait uses none,
 * and time must not run on for it), else INT64_MAX. */
static int64_t cpu_rlimit_in_ns(const struct proxy_process *p)
{
    const struct rlimit *r = &p->rlimits[RLIMIT_CPU];
    if (r->rlim_cur == RLIM_INFINITY || p->stopped)
        return INT64_MAX;
    bool runs = false;
    for (int i = 0; i < p->nr_threads && !runs; i++)
        runs = p->threads[i].state == PROXY_THREAD_RUNNABLE;
    if (!runs)
        return INT64_MAX;
    uint64_t cpu = proxy_cpu_clock_base(p, CLOCK_PROCESS_CPUTIME_ID);
    uint64_t limit = cpu_limit_ns(r->rlim_cur);
    if (r->rlim_max != RLIM_INFINITY && cpu_limit_ns(r->rlim_max) < limit)
        limit = cpu_limit_ns(r->rlim_max);
    if (cpu >= limit)
        return 0;
    return limit - cpu > (uint64_t)INT64_MAX ? INT64_MAX
                                             : (int64_t)(limit - cpu);
}

static void fire_process(struct proxy_process *p)
{
    check_cpu_rlimit(p);
    struct proxy_timers *ts = &p->timers;
    for (int w = 0; w < PROXY_NR_ITIMERS; w++) {
        struct proxy_timer *t = &ts->itimer[w];
        if (t->armed &&
            expire(t, det_clock_peek_ns(p->det, itimer_clock[w])) >= 0)
            notify_itimer(p, w);
    }
    for (int i = 0; i < ts->posix_top; i++) {
        struct proxy_timer *t = &ts->posix[i];
        if (!t->used || !t->armed)
            continue;
        int64_t missed = expire(t, det_clock_peek_ns(p->det, t->clockid));
        if (missed >= 0)
            notify_posix(p, t, missed);
    }
}

void proxy_timer_fire_due(struct proxy_world *w)
{
    for (int i = 0; i < w->nr_procs; i++) {
        struct proxy_process *p = w->procs[i];
        if (!p->zombie && !p->exited)
            fire_process(p);
    }
    proxy_timerfd_fire_due(w);
}

/*
 * Whether firing t could wake a thread: only a signal that is not already
 * pending (firing then adds nothing) and not ignored. This keeps time from
 * running forever for a periodic timer nobody can see.
 */
static bool could_wake(const struct proxy_process *p,
                       const struct proxy_timer *t, int signo)
{
    return t->armed && !(p->sig.pending_mask & SIGBIT(signo)) &&
           !signal_ignored(p, signo);
}

/* The ns until the earliest timer of p that could wake a thread. */
static int64_t earliest_wake_ns(struct proxy_process *p)
{
    int64_t best = INT64_MAX;
    for (int w = 0; w < PROXY_NR_ITIMERS; w++) {
        const struct proxy_timer *t = &p->timers.itimer[w];
        if (could_wake(p, t, itimer_signal[w])) {
            int64_t now = det_clock_peek_ns(p->det, itimer_clock[w]);
            int64_t d = t->expiry_ns > now ? t->expiry_ns - now : 0;
            best = d < best ? d : best;
        }
    }
    for (int i = 0; i < p->timers.posix_top; i++) {
        const struct proxy_timer *t = &p->timers.posix[i];
        if (t->used && t->notify != KSIGEV_NONE && could_wake(p, t, t->signo)) {
            int64_t now = det_clock_peek_ns(p->det, t->clockid);
            int64_t d = t->expiry_ns > now ? t->expiry_ns - now : 0;
            best = d < best ? d : best;
        }
    }
    int64_t cpu = cpu_rlimit_in_ns(p);
    return cpu < best ? cpu : best;
}

bool proxy_timer_advance(struct proxy_world *w, uint64_t futex_deadline_ns)
{
    struct proxy_process *best_p = NULL;
    int64_t best = INT64_MAX;
    for (int i = 0; i < w->nr_procs; i++) {
        struct proxy_process *p = w->procs[i];
        if (p->zombie || p->exited)
            continue;
        int64_t d = earliest_wake_ns(p);
        if (d < best) {
            best = d;
            best_p = p;
        }
    }
    int64_t tfd = proxy_timerfd_earliest_ns(w);
    if (tfd < best && w->nr_procs > 0) {
        best = tfd;
        best_p = w->procs[0]; /* one detcore for the run */
    }
    if (!best_p)
        return false;
    if (futex_deadline_ns != UINT64_MAX) {
        int64_t mono = det_clock_peek_ns(best_p->det, CLOCK_MONOTONIC);
        int64_t futex_in = (int64_t)futex_deadline_ns > mono
                               ? (int64_t)futex_deadline_ns - mono
                               : 0;
        if (futex_in < best)
            return false; /* the futex deadline comes first */
    }
    if (best > 0)
        det_sleep(best_p->det, (uint64_t)best);
    return true;
}

int64_t proxy_timer_earliest_ns(struct proxy_world *w)
{
    int64_t best = proxy_timerfd_earliest_ns(w);
    for (int i = 0; i < w->nr_procs; i++) {
        struct proxy_process *p = w->procs[i];
        if (p->zombie || p->exited)
            continue;
        int64_t d = earliest_wake_ns(p);
        best = d < best ? d : best;
    }
    return best;
}

bool proxy_timer_could_fire(struct proxy_world *w)
{
    for (int i = 0; i < w->nr_procs; i++) {
        struct proxy_process *p = w->procs[i];
        if (!p->zombie && !p->exited && earliest_wake_ns(p) != INT64_MAX)
            return true;
    }
    return proxy_timerfd_earliest_ns(w) != INT64_MAX;
}

void proxy_timer_fork(struct proxy_process *child)
{
    memset(&child->timers, 0, sizeof(child->timers));
}

void proxy_timer_exec(struct proxy_process *p)
{
    memset(p->timers.posix, 0, sizeof(p->timers.posix));
    p->timers.posix_top = 0;
}

/* ---- alarm and itimers --------------------------------------------------- */

/* Sets itimer `which` from value/interval (ns), reporting the old setting. */
static void itimer_set(struct proxy_process *p, int which, int64_t value_ns,
                       int64_t interval_ns, int64_t *old_value_ns,
                       int64_t *old_interval_ns)
{
    struct proxy_timer *t = &p->timers.itimer[which];
    int64_t now = guest_now_ns(p, itimer_clock[which]);
    *old_value_ns = remaining_ns(t, now, NS_PER_USEC);
    *old_interval_ns = t->interval_ns;
    arm(t, value_ns, add_sat(now, value_ns), interval_ns);
}

/*
 * alarm(seconds): ITIMER_REAL without interval. Returns the seconds left of
 * the previous alarm rounded as kernel/time/itimer.c alarm_setitimer()
 * does: to the nearest second, but never 0 while any time remained.
 */
static long sys_alarm(struct proxy_process *p, const uint64_t a[6])
{
    unsigned int seconds = (unsigned int)a[0];
    int64_t old_ns, old_interval_ns;
    itimer_set(p, ITIMER_REAL, (int64_t)seconds * NS_PER_SEC, 0, &old_ns,
               &old_interval_ns);
    int64_t sec = old_ns / NS_PER_SEC, nsec = old_ns % NS_PER_SEC;
    if ((sec == 0 && nsec) || nsec >= NS_PER_SEC / 2)
        sec++;
    return (long)sec;
}

static struct kitimerval itimerval_of(int64_t value_ns, int64_t interval_ns)
{
    return (struct kitimerval){ns_to_timeval(interval_ns),
                               ns_to_timeval(value_ns)};
}

/*
 * setitimer(which, new, old). Linux's order: the new value is read and
 * checked (-EFAULT, -EINVAL) before `which`; a NULL new value disarms (an
 * old ABI corner the kernel still accepts). old is written after the change.
 */
static long sys_setitimer(struct proxy_process *p, const uint64_t a[6])
{
    int which = (int)a[0];
    struct kitimerval nv;
    memset(&nv, 0, sizeof(nv));
    if (a[1]) {
        if (proxy_copy_in(p, &nv, a[1], sizeof(nv)) < 0)
            return -EFAULT;
        if (!timeval_ok(&nv.value) || !timeval_ok(&nv.interval))
            return -EINVAL;
    }
    if (which < 0 || which >= PROXY_NR_ITIMERS)
        return -EINVAL;
    int64_t old_ns, old_interval_ns;
    itimer_set(p, which,
               parts_to_ns(nv.value.tv_sec, nv.value.tv_usec * NS_PER_USEC),
               parts_to_ns(nv.interval.tv_sec,
                           nv.interval.tv_usec * NS_PER_USEC),
               &old_ns, &old_interval_ns);
    if (!a[2])
        return 0;
    struct kitimerval ov = itimerval_of(old_ns, old_interval_ns);
    return proxy_copy_out(p, a[2], &ov, sizeof(ov)) < 0 ? -EFAULT : 0;
}

static long sys_getitimer(struct proxy_process *p, const uint64_t a[6])
{
    int which = (int)a[0];
    if (which < 0 || which >= PROXY_NR_ITIMERS)
        return -EINVAL;
    const struct proxy_timer *t = &p->timers.itimer[which];
    int64_t now = guest_now_ns(p, itimer_clock[which]);
    struct kitimerval v =
        itimerval_of(remaining_ns(t, now, NS_PER_USEC), t->interval_ns);
    return proxy_copy_out(p, a[1], &v, sizeof(v)) < 0 ? -EFAULT : 0;
}

/* ---- POSIX timers -------------------------------------------------------- */

/*
 * The detcore clock for a timer_create clock id, or -errno as Linux
 * answers: the raw and coarse clocks have no timers (-EOPNOTSUPP), the
 * alarm clocks need an RTC wake-up device the VM does not have (Linux
 * checks that first: -EOPNOTSUPP), CPU clocks of this process or thread
 * (pid 0 is "self") work, any other id is -EINVAL.
 */
static int timer_clock(const struct proxy_process *p, int clockid)
{
    if (clockid < 0) {
        if ((clockid & CPUCLOCK_WHICH_MASK) == CPUCLOCK_FD)
            return -EINVAL;
        int pid = ~(clockid >> 3);
        if (clockid & CPUCLOCK_PERTHREAD)
            return pid == 0 || pid == p->tid ? CLOCK_THREAD_CPUTIME_ID
                                             : -EINVAL;
        return pid == 0 || pid == p->pid ? CLOCK_PROCESS_CPUTIME_ID : -EINVAL;
    }
    switch (clockid) {
    case CLOCK_REALTIME: case CLOCK_MONOTONIC: case CLOCK_BOOTTIME:
    case CLOCK_TAI: case CLOCK_PROCESS_CPUTIME_ID:
    case CLOCK_THREAD_CPUTIME_ID:
        return clockid;
    case CLOCK_MONOTONIC_RAW: case CLOCK_REALTIME_COARSE:
    case CLOCK_MONOTONIC_COARSE: case CLOCK_REALTIME_ALARM:
    case CLOCK_BOOTTIME_ALARM:
        return -EOPNOTSUPP;
    default:
        return -EINVAL;
    }
}

static bool is_live_thread(const struct proxy_process *p, int tid)
{
    for (int i = 0; i < p->nr_threads; i++)
        if (p->threads[i].tid == tid &&
            p->threads[i].state != PROXY_THREAD_EXITED)
            return true;
    return false;
}

/* Linux's good_sigevent(): fills t's notification or returns -EINVAL. */
static int take_sigevent(const struct proxy_process *p,
                         const struct ksigevent *ev, struct proxy_timer *t)
{
    switch (ev->notify) {
    case KSIGEV_SIGNAL | KSIGEV_THREAD_ID:
        /* The thread must be ours; the signal then goes to the process,
         * whose threads share one pending set in hvrun. */
        if (!is_live_thread(p, ev->tid))
            return -EINVAL;
        __attribute__((fallthrough));
    case KSIGEV_SIGNAL:
    case KSIGEV_THREAD:
        if (ev->signo < 1 || ev->signo > 64)
            return -EINVAL;
        t->notify = KSIGEV_SIGNAL;
        break;
    case KSIGEV_NONE:
        t->notify = KSIGEV_NONE;
        break;
    default:
        return -EINVAL;
    }
    t->signo = ev->signo;
    t->sigval = ev->value;
    return 0;
}

static struct proxy_timer *free_slot(struct proxy_process *p)
{
    for (int i = 0; i < PROXY_MAX_POSIX_TIMERS; i++)
        if (!p->timers.posix[i].used)
            return &p->timers.posix[i];
    return NULL;
}

static bool id_taken(const struct proxy_process *p, int id)
{
    for (int i = 0; i < PROXY_MAX_POSIX_TIMERS; i++)
        if (p->timers.posix[i].used && p->timers.posix[i].id == id)
            return true;
    return false;
}

/* Ids count up from 0 per process and are not reused until they wrap, as
 * Linux hands them out (signal_struct's next_posix_timer_id). */
static int next_id(struct proxy_process *p)
{
    int id;
    do {
        id = p->timers.next_id;
        p->timers.next_id = id == INT_MAX ? 0 : id + 1;
    } while (id_taken(p, id));
    return id;
}

/* timer_t is an int to the kernel: the register's upper half is ignored. */
static struct proxy_timer *find_timer(struct proxy_process *p, uint64_t arg)
{
    int id = (int)arg;
    for (int i = 0; i < PROXY_MAX_POSIX_TIMERS; i++) {
        struct proxy_timer *t = &p->timers.posix[i];
        if (t->used && t->id == id)
            return t;
    }
    return NULL;
}

/*
 * timer_create(clockid, sevp, timerid). A NULL sevp means SIGEV_SIGNAL with
 * SIGALRM and the timer id as value. Linux's order: sevp is copied
 * (-EFAULT), then the clock checked, then the sigevent; a timer id that
 * cannot be written deletes the new timer (-EFAULT).
 */
static long sys_timer_create(struct proxy_process *p, const uint64_t a[6])
{
    struct ksigevent ev;
    if (a[1] && proxy_copy_in(p, &ev, a[1], sizeof(ev)) < 0)
        return -EFAULT;
    int clockid = timer_clock(p, (int)a[0]);
    if (clockid < 0)
        return clockid;
    struct proxy_timer *t = free_slot(p);
    if (!t)
        return -EAGAIN;
    struct proxy_timer nt;
    memset(&nt, 0, sizeof(nt));
    nt.used = true;
    nt.clockid = clockid;
    nt.id = next_id(p);
    if (!a[1])
        ev = (struct ksigevent){.value = (uint64_t)nt.id, .signo = SIGALRM,
                                .notify = KSIGEV_SIGNAL};
    int rc = take_sigevent(p, &ev, &nt);
    if (rc < 0)
        return rc;
    int32_t id = nt.id;
    if (proxy_copy_out(p, a[2], &id, sizeof(id)) < 0)
        return -EFAULT;
    *t = nt;
    int slot = (int)(t - p->timers.posix);
    if (slot >= p->timers.posix_top)
        p->timers.posix_top = slot + 1;
    return 0;
}

/* Linux's common_timer_get(): a due signalling timer says 1 ns left; a
 * periodic SIGEV_NONE timer is forwarded past now first. */
static struct kitimerspec timer_get(struct proxy_process *p,
                                    struct proxy_timer *t)
{
    int64_t now = guest_now_ns(p, t->clockid);
    if (t->notify == KSIGEV_NONE)
        (void)expire(t, now);
    struct kitimerspec v = {ns_to_timespec(t->interval_ns),
                            ns_to_timespec(remaining_ns(t, now, 1))};
    return v;
}

/*
 * An absolute expiry as the clock the timer runs on reads it. The CPU
 * clocks' timers run on detcore's elapsed clock (time.c), while the
 * guest's value is a reading of the CPU clock it sees, which lags behind:
 * what is left of the CPU time goes onto the elapsed clock's reading (a
 * value already passed fires at once).
 */
static int64_t abs_expiry_ns(struct proxy_process *p, int clockid,
                             int64_t value_ns)
{
    if (!p->det->cfg.virtualize_time || (clockid != CLOCK_PROCESS_CPUTIME_ID &&
                                         clockid != CLOCK_THREAD_CPUTIME_ID))
        return value_ns;
    int64_t cpu_now = (int64_t)proxy_cpu_clock_base(p, clockid);
    int64_t left = value_ns > cpu_now ? value_ns - cpu_now : 0;
    return add_sat(guest_now_ns(p, clockid), left);
}

/*
 * timer_settime(id, flags, new, old): TIMER_ABSTIME takes new's value as a
 * reading of the timer's clock (one already passed fires at once); a zero
 * value disarms. Linux's order: NULL new is -EINVAL, then -EFAULT, then
 * invalid timespecs, then an unknown id.
 */
static long sys_timer_settime(struct proxy_process *p, const uint64_t a[6])
{
    if (!a[2])
        return -EINVAL;
    struct kitimerspec nv;
    if (proxy_copy_in(p, &nv, a[2], sizeof(nv)) < 0)
        return -EFAULT;
    if (!timespec_ok(&nv.value) || !timespec_ok(&nv.interval))
        return -EINVAL;
    struct proxy_timer *t = find_timer(p, a[0]);
    if (!t)
        return -EINVAL;
    struct kitimerspec ov = timer_get(p, t);
    int64_t value_ns = parts_to_ns(nv.value.tv_sec, nv.value.tv_nsec);
    int64_t interval_ns = parts_to_ns(nv.interval.tv_sec, nv.interval.tv_nsec);
    int64_t expiry_ns = value_ns;
    if (value_ns && !((int)a[1] & TIMER_ABSTIME))
        expiry_ns = add_sat(guest_now_ns(p, t->clockid), value_ns);
    else if (value_ns)
        expiry_ns = abs_expiry_ns(p, t->clockid, value_ns);
    arm(t, value_ns, expiry_ns, interval_ns);
    if (a[3] && proxy_copy_out(p, a[3], &ov, sizeof(ov)) < 0)
        return -EFAULT;
    return 0;
}

static long sys_timer_gettime(struct proxy_process *p, const uint64_t a[6])
{
    struct proxy_timer *t = find_timer(p, a[0]);
    if (!t)
        return -EINVAL;
    struct kitimerspec v = timer_get(p, t);
    return proxy_copy_out(p, a[1], &v, sizeof(v)) < 0 ? -EFAULT : 0;
}

/* The overruns of the last delivered signal; while the next one is still
 * pending that is still the previous count (Linux: it_overrun_last). */
static long sys_timer_getoverrun(struct proxy_process *p, const uint64_t a[6])
{
    struct proxy_timer *t = find_timer(p, a[0]);
    if (!t)
        return -EINVAL;
    return own_signal_pending(p, t) ? t->overrun_last : t->overrun;
}

/* A signal of the timer that is still pending stays pending. */
static long sys_timer_delete(struct proxy_process *p, const uint64_t a[6])
{
    struct proxy_timer *t = find_timer(p, a[0]);
    if (!t)
        return -EINVAL;
    memset(t, 0, sizeof(*t));
    return 0;
}

const struct proxy_syscall proxy_timer_syscalls[] = {
    {SYS_alarm, "alarm", sys_alarm},
    {SYS_setitimer, "setitimer", sys_setitimer},
    {SYS_getitimer, "getitimer", sys_getitimer},
    {SYS_timer_create, "timer_create", sys_timer_create},
    {SYS_timer_settime, "timer_settime", sys_timer_settime},
    {SYS_timer_gettime, "timer_gettime", sys_timer_gettime},
    {SYS_timer_getoverrun, "timer_getoverrun", sys_timer_getoverrun},
    {SYS_timer_delete, "timer_delete", sys_timer_delete},
    {-1, NULL, NULL},
};
