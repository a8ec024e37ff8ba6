/*
 * kvm_pool.c - a pool of idle VMs built, and retired VMs torn down, by one
 * host worker thread, so that fork and execve find a VM ready instead of
 * paying KVM_CREATE_VM..KVM_SET_XSAVE (~0.7 ms here) and the teardown
 * (~0.4 ms) on the guest's critical path.
 *
 * A pooled VM is always a fresh one that has never run guest code: reusing
 * a VM that ran another image would need KVM's cached shadow page tables of
 * the old address space dropped safely, which hvrun cannot observe on
 * kvm_pvm. Fresh VMs are identical, so which one a process gets is not
 * visible to the guest and the pool adds no nondeterminism.
 *
 * The worker starts with the second VM a run asks for (the first fork or
 * exec): a run of one process never pays for VMs it would not use.
 * Bookkeeping shared with the main thread (VMA lists, shared-memory
 * references) is released by the caller before a VM is queued; the worker
 * only closes file descriptors and unmaps memory.
 *
 * A fork of hvrun (a checkpoint) has no worker: kvm_pool_disown gives it
 * a new pool, whose worker starts there as here. A NULL pool (none could
 * be made) holds nothing: every VM is built and torn down by its caller.
 */
#include "backend_impl.h"
#include "kvm_internal.h"

#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdlib.h>

#define POOL_MAX_READY 4

struct kvm_pool {
    pthread_mutex_t lock;
    pthread_cond_t wake;
    pthread_t worker;
    struct vmm_host *host;
    bool started, stopping, broken;
    unsigned want;     /* ready VMs to keep once started */
    unsigned requests; /* VMs asked for so far */
    struct vmm_vm *ready[POOL_MAX_READY];
    unsigned nr_ready;
    struct vmm_vm **dead; /* retired VMs awaiting teardown */
    size_t nr_dead, cap_dead;
};

struct kvm_pool *kvm_pool_new(struct vmm_host *host)
{
    struct kvm_pool *p = calloc(1, sizeof(*p));
    if (!p)
        return NULL;
    p->host = host;
    pthread_mutex_init(&p->lock, NULL);
    pthread_cond_init(&p->wake, NULL);
    return p;
}

void kvm_pool_set_size(struct kvm_pool *p, unsigned nr_ready)
{
    if (!p)
        return;
    pthread_mutex_lock(&p->lock);
    p->want = nr_ready < POOL_MAX_READY ? nr_ready : POOL_MAX_READY;
    pthread_mutex_unlock(&p->lock);
}

/* Teardown first (it frees memory), then refill; sleeps when both are done. */
static void *pool_worker(void *arg)
{
    struct kvm_pool *p = arg;
    vmm_host_unpin_thread(p->host);
    pthread_mutex_lock(&p->lock);
    while (!p->stopping) {
        if (p->nr_dead > 0) {
            struct vmm_vm *vm = p->dead[--p->nr_dead];
            pthread_mutex_unlock(&p->lock);
            kvm_vm_teardown(vm);
            pthread_mutex_lock(&p->lock);
            continue;
        }
        if (p->nr_ready < p->want && !p->broken) {
            pthread_mutex_unlock(&p->lock);
            struct vmm_vm *vm = NULL;
            int rc = kvm_vm_build(p->host, &vm, NULL, 0);
            pthread_mutex_lock(&p->lock);
            /* A failure is left for the caller's own build to report. */
            if (rc < 0) {
                p->broken = true;
            } else if (p->stopping || p->nr_ready >= POOL_MAX_READY) {
                pthread_mutex_unlock(&p->lock);
                kvm_vm_teardown(vm);
                pthread_mutex_lock(&p->lock);
            } else {
                p->ready[p->nr_ready++] = vm;
            }
            continue;
        }
        pthread_cond_wait(&p->wake, &p->lock);
    }
    pthread_mutex_unlock(&p->lock);
    return NULL;
}

/* Called with the lock held. Host signals stay with the main thread, whose
 * KVM_RUN they must interrupt. */
static void start_worker(struct kvm_pool *p)
{
    if (p->started || p->want == 0 || p->broken)
        return;
    p->cap_dead = 16;
    p->dead = calloc(p->cap_dead, sizeof(*p->dead));
    if (!p->dead) {
        p->broken = true;
        return;
    }
    sigset_t all, old;
    sigfillset(&all);
    /* A blocked SIGSYS would hide a seccomp violation's diagnostic
     * (cli/confine.c): the kernel would kill hvrun without a word. */
    sigdelset(&all, SIGSYS);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    int rc = pthread_create(&p->worker, NULL, pool_worker, p);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (rc != 0) {
        p->broken = true;
        return;
    }
    p->started = true;
}

struct vmm_vm *kvm_pool_take(struct kvm_pool *p)
{
    struct vmm_vm *vm = NULL;
    if (!p)
        return NULL;
    pthread_mutex_lock(&p->lock);
    if (++p->requests >= 2)
        start_worker(p);
    if (p->nr_ready > 0)
        vm = p->ready[--p->nr_ready];
    pthread_cond_signal(&p->wake);
    pthread_mutex_unlock(&p->lock);
    return vm;
}

bool kvm_pool_retire(struct kvm_pool *p, struct vmm_vm *vm)
{
    bool queued = false;
    if (!p)
        return false;
    pthread_mutex_lock(&p->lock);
    if (p->started && !p->stopping) {
        if (p->nr_dead == p->cap_dead) {
            size_t cap = p->cap_dead * 2;
            struct vmm_vm **d = realloc(p->dead, cap * sizeof(*d));
            if (d) {
                p->dead = d;
                p->cap_dead = cap;
            }
        }
        if (p->nr_dead < p->cap_dead) {
            p->dead[p->nr_dead++] = vm;
            queued = true;
            pthread_cond_signal(&p->wake);
        }
    }
    pthread_mutex_unlock(&p->lock);
    return queued;
}

void kvm_pool_free(struct kvm_pool *p)
{
    if (!p)
        return;
    pthread_mutex_lock(&p->lock);
    p->stopping = true;
    pthread_cond_signal(&p->wake);
    pthread_mutex_unlock(&p->lock);
    if (p->started)
        pthread_join(p->worker, NULL);
    for (unsigned i = 0; i < p->nr_ready; i++)
        kvm_vm_teardown(p->ready[i]);
    for (size_t i = 0; i < p->nr_dead; i++)
        kvm_vm_teardown(p->dead[i]);
    free(p->dead);
    pthread_cond_destroy(&p->wake);
    pthread_mutex_destroy(&p->lock);
    free(p);
}

/*
 * The worker is not in a fork, and its lock may have been held at the
 * fork, the lists half changed: p is left as it is. When the lock was
 * free (the worker asleep, the usual case) the VMs p holds are torn down
 * (their fds and kvm_run mappings are placeholders by now: only their
 * memory is let go of, a retired process's among them); else they stay,
 * unused (copy-on-write pages of the original's). Either way a VM the
 * worker was building or tearing down at the fork is left to the
 * placeholders.
 */
struct kvm_pool *kvm_pool_disown(struct kvm_pool *p)
{
    if (!p)
        return NULL;
    struct kvm_pool *fresh = kvm_pool_new(p->host);
    if (fresh)
        fresh->want = p->want; /* (a word: read without the lock) */
    if (pthread_mutex_trylock(&p->lock) != 0)
        return fresh;
    for (unsigned i = 0; i < p->nr_ready; i++)
        kvm_vm_teardown(p->ready[i]);
    for (size_t i = 0; i < p->nr_dead; i++)
        kvm_vm_teardown(p->dead[i]);
    p->nr_ready = 0;
    p->nr_dead = 0;
    pthread_mutex_unlock(&p->lock);
    return fresh;
}
