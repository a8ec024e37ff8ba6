/*
 * kvm_internal.h - shared between kvm.c and kvm_host.c only. Includes
 * <linux/kvm.h>; never include it above vmm/.
 */
#ifndef VMM_KVM_INTERNAL_H
#define VMM_KVM_INTERNAL_H

#include <linux/kvm.h>

struct vmm_host;
struct vmm_xstate_layout;

int kvm_host_fd(const struct vmm_host *host);
int kvm_host_run_size(const struct vmm_host *host);
/* Applies the fixed CPUID model to a vCPU. Returns 0 or -errno. */
int kvm_host_set_cpuid(const struct vmm_host *host, int vcpu_fd);
const struct vmm_xstate_layout *kvm_host_xstate(const struct vmm_host *host);

#endif
