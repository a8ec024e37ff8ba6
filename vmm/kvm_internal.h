/*
 * kvm_internal.h - shared between kvm.c, kvm_host.c and kvm_pool.c only.
 * Includes <linux/kvm.h>; never include it above vmm/.
 */
#ifndef VMM_KVM_INTERNAL_H
#define VMM_KVM_INTERNAL_H

#include <linux/kvm.h>
#include <stdbool.h>
#include <stddef.h>

struct vmm_host;
struct vmm_vm;
struct vmm_xstate_layout;
struct kvm_pool;
struct vmm_backend_ops;

int kvm_host_fd(const struct vmm_host *host);
int kvm_host_run_size(const struct vmm_host *host);
/* Applies the fixed CPUID model to a vCPU. Returns 0 or -errno. */
int kvm_host_set_cpuid(const struct vmm_host *host, int vcpu_fd);
const struct vmm_xstate_layout *kvm_host_xstate(const struct vmm_host *host);
struct kvm_pool *kvm_host_pool(const struct vmm_host *host);
void kvm_host_close(struct vmm_host *host);
void kvm_host_set_vm_pool(struct vmm_host *host, unsigned nr_ready);
/* Checkpoints (vmm/snapshot.c): in a fork of hvrun, the original's VMs
 * let go of and a new pool (kvm_host_disown); a restored copy's helper,
 * which kvm needs none of (kvm_host_adopt_helper). */
void kvm_host_disown(struct vmm_host *host);
void kvm_host_adopt_helper(struct vmm_host *host, int helper_fd);
/* The backend's ops table (kvm.c). */
extern const struct vmm_backend_ops kvm_backend_ops;

/* A fresh VM, built from scratch (kvm.c). */
int kvm_vm_build(struct vmm_host *host, struct vmm_vm **out, char *why,
                 size_t why_len);
/* Closes a VM's fds and unmaps its memory; thread-safe (kvm.c). */
void kvm_vm_teardown(struct vmm_vm *vm);

/* The idle-VM pool (kvm_pool.c). */
struct kvm_pool *kvm_pool_new(struct vmm_host *host);
void kvm_pool_set_size(struct kvm_pool *p, unsigned nr_ready);
/* A ready VM, or NULL (the caller builds one). Starts the worker at the
 * second request. */
struct vmm_vm *kvm_pool_take(struct kvm_pool *p);
/* Queues a retired VM for teardown on the worker; false when the worker
 * is not running (the caller tears it down itself). */
bool kvm_pool_retire(struct kvm_pool *p, struct vmm_vm *vm);
/* Stops the worker and tears down every VM it still holds. */
void kvm_pool_free(struct kvm_pool *p);
/* In a fork of hvrun (kvm_host_disown, after the VMs' fds became
 * placeholders): the pool that takes p's place, its worker not started;
 * NULL (out of memory) is a pool that holds nothing: every call above
 * takes it. */
struct kvm_pool *kvm_pool_disown(struct kvm_pool *p);

#endif
