/*
 * slice_timer.c - the host timer that ends a guest's time slice, the same
 * for every backend: one POSIX timer on CLOCK_MONOTONIC delivering
 * VMM_SLICE_SIGNAL to the thread that runs the guests (SIGEV_THREAD_ID),
 * set up on first use. What the signal does (KVM's immediate_exit, a
 * PTRACE_INTERRUPT of the stub) is the backend's handler. The ptrace
 * backend times a slice on the stub's CPU clock instead (vmm_cpu_timer_*):
 * a timer there advances only while the guest runs, so it can stay armed
 * between runs.
 */
#include "backend_impl.h"

#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static timer_t slice_timer;
static bool slice_ready, slice_failed;
static bool handler_ready;

/* The handler, and the signal unblocked on this thread, once. */
static bool install_handler(void (*on_fire)(int))
{
    if (handler_ready)
        return true;
    struct sigaction sa;
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = on_fire; /* no SA_RESTART: the backend's wait gets EINTR */
    sigemptyset(&sa.sa_mask);
    /* A mask inherited from hvrun's parent must not hold the signal back. */
    sigset_t unblock;
    sigemptyset(&unblock);
    sigaddset(&unblock, VMM_SLICE_SIGNAL);
    if (sigaction(VMM_SLICE_SIGNAL, &sa, NULL) < 0 ||
        pthread_sigmask(SIG_UNBLOCK, &unblock, NULL) != 0)
        return false;
    handler_ready = true;
    return true;
}

/* A timer on CLOCK, its expiry VMM_SLICE_SIGNAL to this thread. */
static bool make_timer(clockid_t clock, timer_t *out)
{
    struct sigevent sev;
    memset(&sev, 0, sizeof(sev));
    sev.sigev_notify = SIGEV_THREAD_ID;
    sev.sigev_signo = VMM_SLICE_SIGNAL;
    sev._sigev_un._tid = (pid_t)syscall(SYS_gettid);
    return timer_create(clock, &sev, out) == 0;
}

bool vmm_slice_timer_setup(void (*on_fire)(int))
{
    if (slice_ready || slice_failed)
        return slice_ready;
    if (!install_handler(on_fire) || !make_timer(CLOCK_MONOTONIC, &slice_timer)) {
        slice_failed = true;
        return false;
    }
    slice_ready = true;
    return true;
}

bool vmm_cpu_timer_create(pid_t pid, void (*on_fire)(int), timer_t *out)
{
    /* clock_getcpuclockid's id for the process (MAKE_PROCESS_CPUCLOCK(pid,
     * CPUCLOCK_SCHED)), without its clock_getres. */
    clockid_t clock = (clockid_t)((~(unsigned)pid << 3) | 2);
    return pid > 0 && install_handler(on_fire) && make_timer(clock, out);
}

void vmm_cpu_timer_arm_at(timer_t timer, uint64_t cpu_ns)
{
    struct itimerspec its = {.it_value = {(time_t)(cpu_ns / 1000000000ULL),
                                          (long)(cpu_ns % 1000000000ULL)}};
    (void)timer_settime(timer, TIMER_ABSTIME, &its, NULL);
}

void vmm_cpu_timer_delete(timer_t timer)
{
    (void)timer_delete(timer);
}

void vmm_slice_timer_arm(uint64_t ns)
{
    struct itimerspec its = {.it_value = {(time_t)(ns / 1000000000ULL),
                                          (long)(ns % 1000000000ULL)}};
    (void)timer_settime(slice_timer, 0, &its, NULL);
}

void vmm_slice_timer_forget(void)
{
    slice_ready = slice_failed = false;
    handler_ready = false;
}
