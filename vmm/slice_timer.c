/*
 * slice_timer.c - the host timer that ends a guest's time slice, the same
 * for every backend: one POSIX timer on CLOCK_MONOTONIC delivering
 * VMM_SLICE_SIGNAL to the thread that runs the guests (SIGEV_THREAD_ID),
 * set up on first use. What the signal does (KVM's immediate_exit, a
 * PTRACE_INTERRUPT of the stub) is the backend's handler.
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

bool vmm_slice_timer_setup(void (*on_fire)(int))
{
    if (slice_ready || slice_failed)
        return slice_ready;
    struct sigaction sa;
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = on_fire; /* no SA_RESTART: the backend's wait gets EINTR */
    sigemptyset(&sa.sa_mask);
    struct sigevent sev;
    memset(&sev, 0, sizeof(sev));
    sev.sigev_notify = SIGEV_THREAD_ID;
    sev.sigev_signo = VMM_SLICE_SIGNAL;
    sev._sigev_un._tid = (pid_t)syscall(SYS_gettid);
    /* A mask inherited from hvrun's parent must not hold the signal back. */
    sigset_t unblock;
    sigemptyset(&unblock);
    sigaddset(&unblock, VMM_SLICE_SIGNAL);
    if (sigaction(VMM_SLICE_SIGNAL, &sa, NULL) < 0 ||
        pthread_sigmask(SIG_UNBLOCK, &unblock, NULL) != 0 ||
        timer_create(CLOCK_MONOTONIC, &sev, &slice_timer) < 0) {
        slice_failed = true;
        return false;
    }
    slice_ready = true;
    return true;
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
}
