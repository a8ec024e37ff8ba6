/*
 * ptrace_reaper.c - a ptrace stub's end off the guest's path.
 *
 * A stub killed at its guest process's end still has to die (its
 * address space torn down, on the guest's CPU) before it can be reaped,
 * and its guest memory (a memfd and hvrun's view of it) freed: measured
 * 1.5 ms a process, about a fifth of a `sh -c true` spawn, all of it
 * waiting on work hvrun does not need done before it goes on. A worker
 * thread asks the spawner to move the stub off the guests' CPU (so that
 * its death's work runs beside the next guest, not before it: hvrun's
 * seccomp filter lets hvrun set no other process's CPUs), kills it (it
 * sits in a ptrace stop until then: nothing of the guest runs), waits
 * for the death, then closes the pidfd and the memfd and unmaps the view.
 * Any thread of the tracer's thread group may reap a tracee, so the
 * worker can. Without the worker the stub is killed and reaped at once.
 *
 * The worker starts at the first stub retired once hvrun has confined
 * itself (vmm_host_confined) (cli/confine.c: its seccomp filter is TSYNC, and --fs-policy's
 * Landlock wants a single thread when it is applied); it blocks every
 * signal but SIGSYS (host signals stay with the main thread, whose waits
 * they must interrupt). Without a worker the same is done in line.
 */
#include "ptrace_internal.h"

#include "ptrace_abi.h"

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

static void reap_now(const struct ptrace_retired *r, int unpin_sock)
{
    if (r->kill && r->pid > 0) {
        if (unpin_sock >= 0)
            (void)ptrace_spawner_unpin(unpin_sock, r->pid, r->pidfd);
        (void)syscall(SYS_pidfd_send_signal, r->pidfd, SIGKILL, NULL, 0);
    }
    if (r->pid > 0)
        while (waitpid(r->pid, NULL, __WALL) < 0 && errno == EINTR)
            ;
    if (r->pidfd >= 0)
        close(r->pidfd);
    if (r->memfd >= 0)
        close(r->memfd);
    if (r->view)
        munmap(r->view, r->view_len);
}

/*
 * The first touch of a page of hvrun's view costs the guests' thread
 * 25-190 us on a host like this one (kvm_pvm: the outer hypervisor builds
 * its shadow entry for the page), though the page was populated when the
 * view was made; once another thread of hvrun has touched it, ~9 us. A
 * new VM's call-count and scratch pages are touched by hvrun at the VM's
 * first run (the count reset, the signal state, the first batch): ~3% of
 * the guests' thread in a run of 50 `sh -c true` (docs/PERFORMANCE.md).
 * So the worker touches them while the prepared stub starts, writing
 * back what is there (the stub may be reading its filter in the scratch
 * page: an atomic or of 0 changes no byte it reads).
 */
static void warm_view(uint8_t *view)
{
    const size_t pages[] = {PT_CALLS_GPA, PT_SCRATCH_GPA};
    for (size_t i = 0; i < sizeof(pages) / sizeof(pages[0]); i++)
        (void)__atomic_fetch_or((uint64_t *)(void *)(view + pages[i]), 0,
                                __ATOMIC_RELAXED);
}

static void *reaper_main(void *arg)
{
    struct ptrace_reaper *rp = arg;
    if (CPU_COUNT(&rp->home) > 0)
        (void)sched_setaffinity(0, sizeof(rp->home), &rp->home);
    pthread_mutex_lock(&rp->lock);
    for (;;) {
        while (rp->n == 0 && !rp->warm && !rp->stopping)
            pthread_cond_wait(&rp->more, &rp->lock);
        if (rp->warm) { /* first: a VM may be about to take it */
            uint8_t *view = rp->warming = rp->warm;
            rp->warm = NULL;
            pthread_mutex_unlock(&rp->lock);
            warm_view(view);
            pthread_mutex_lock(&rp->lock);
            rp->warming = NULL;
            pthread_cond_broadcast(&rp->warmed);
            continue;
        }
        if (rp->n == 0)
            break;
        struct ptrace_retired r = rp->queue[--rp->n];
        int unpin_sock = rp->unpin_sock;
        pthread_mutex_unlock(&rp->lock);
        reap_now(&r, unpin_sock);
        pthread_mutex_lock(&rp->lock);
    }
    pthread_mutex_unlock(&rp->lock);
    return NULL;
}

static bool start_reaper(struct ptrace_reaper *rp)
{
    if (rp->started || rp->broken || !rp->allowed)
        return rp->started;
    sigset_t all, old;
    sigfillset(&all);
    sigdelset(&all, SIGSYS); /* a seccomp violation must still be told */
    pthread_sigmask(SIG_SETMASK, &all, &old);
    int rc = pthread_create(&rp->worker, NULL, reaper_main, rp);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    rp->started = rc == 0;
    rp->broken = rc != 0;
    return rp->started;
}

void ptrace_reaper_init(struct ptrace_reaper *rp)
{
    *rp = (struct ptrace_reaper){.unpin_sock = -1};
    if (sched_getaffinity(0, sizeof(rp->home), &rp->home) < 0)
        CPU_ZERO(&rp->home);
    pthread_mutex_init(&rp->lock, NULL);
    pthread_cond_init(&rp->more, NULL);
    pthread_cond_init(&rp->warmed, NULL);
}

void ptrace_reaper_warm(struct ptrace_reaper *rp, uint8_t *view)
{
    pthread_mutex_lock(&rp->lock);
    if (start_reaper(rp) && !rp->stopping) {
        rp->warm = view; /* one prepared VM at a time */
        pthread_cond_signal(&rp->more);
    }
    pthread_mutex_unlock(&rp->lock);
}

void ptrace_reaper_unwarm(struct ptrace_reaper *rp, const uint8_t *view)
{
    pthread_mutex_lock(&rp->lock);
    if (rp->warm == view)
        rp->warm = NULL;
    while (rp->warming == view)
        pthread_cond_wait(&rp->warmed, &rp->lock);
    pthread_mutex_unlock(&rp->lock);
}

void ptrace_reaper_set_unpin(struct ptrace_reaper *rp, int unpin_sock)
{
    pthread_mutex_lock(&rp->lock);
    rp->unpin_sock = unpin_sock;
    pthread_mutex_unlock(&rp->lock);
}

void ptrace_reaper_retire(struct ptrace_reaper *rp,
                          const struct ptrace_retired *r)
{
    pthread_mutex_lock(&rp->lock);
    bool queued = false;
    if (start_reaper(rp)) {
        if (rp->n == rp->cap) {
            size_t cap = rp->cap ? rp->cap * 2 : 16;
            struct ptrace_retired *q = realloc(rp->queue, cap * sizeof(*q));
            if (q) {
                rp->queue = q;
                rp->cap = cap;
            }
        }
        if (rp->n < rp->cap) {
            rp->queue[rp->n++] = *r;
            pthread_cond_signal(&rp->more);
            queued = true;
        }
    }
    pthread_mutex_unlock(&rp->lock);
    if (!queued)
        reap_now(r, -1); /* killed now: nothing else would */
}

void ptrace_reaper_stop(struct ptrace_reaper *rp)
{
    pthread_mutex_lock(&rp->lock);
    rp->stopping = true;
    pthread_cond_signal(&rp->more);
    bool started = rp->started;
    pthread_mutex_unlock(&rp->lock);
    if (started)
        pthread_join(rp->worker, NULL);
    while (rp->n > 0) /* left by a worker that never started */
        reap_now(&rp->queue[--rp->n], -1);
    free(rp->queue);
    pthread_mutex_destroy(&rp->lock);
    pthread_cond_destroy(&rp->more);
    pthread_cond_destroy(&rp->warmed);
}
