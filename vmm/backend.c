/*
 * backend.c - the runtime choice of backend: every vmm_host_* / vmm_vm_*
 * call of backend.h goes through the ops table of the backend the host was
 * opened with (kvm*.c or ptrace*.c). What every backend shares (the CPU
 * model, the address space, the registers) lives in the common heads of
 * backend_impl.h and is answered here directly.
 */
#include "backend_impl.h"
#include "run_clock.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

static const char *const backend_names[] = {
    [VMM_BACKEND_KVM] = "kvm",
    [VMM_BACKEND_PTRACE] = "ptrace",
};

int vmm_backend_parse(const char *name, enum vmm_backend_kind *out)
{
    for (size_t i = 0; i < sizeof(backend_names) / sizeof(backend_names[0]);
         i++)
        if (strcmp(name, backend_names[i]) == 0) {
            *out = (enum vmm_backend_kind)i;
            return 0;
        }
    return -EINVAL;
}

const char *vmm_backend_name(enum vmm_backend_kind kind)
{
    return kind == VMM_BACKEND_PTRACE ? "ptrace" : "kvm";
}

int vmm_host_open_backend(enum vmm_backend_kind kind, struct vmm_host **out,
                          char *why, size_t why_len)
{
    return kind == VMM_BACKEND_PTRACE ? ptrace_host_open(out, why, why_len)
                                      : kvm_host_open(out, why, why_len);
}

int vmm_host_open(struct vmm_host **out, char *why, size_t why_len)
{
    return kvm_host_open(out, why, why_len);
}

const char *vmm_host_backend_name(const struct vmm_host *host)
{
    return host->ops->name;
}

const int *vmm_host_run_syscalls(const struct vmm_host *host, size_t *n)
{
    *n = 0;
    return host->ops->host_run_syscalls ? host->ops->host_run_syscalls(n)
                                        : NULL;
}

const int *vmm_backend_run_syscalls(enum vmm_backend_kind kind, size_t *n)
{
    const struct vmm_backend_ops *ops =
        kind == VMM_BACKEND_PTRACE ? &ptrace_backend_ops : &kvm_backend_ops;
    *n = 0;
    return ops->host_run_syscalls ? ops->host_run_syscalls(n) : NULL;
}

int vmm_host_fs_restricted(struct vmm_host *host, char *why, size_t why_len)
{
    return host->ops->host_fs_restricted
               ? host->ops->host_fs_restricted(host, why, why_len)
               : 0;
}

void vmm_host_confined(struct vmm_host *host)
{
    if (host->ops->host_confined)
        host->ops->host_confined(host);
}

void vmm_host_close(struct vmm_host *host)
{
    if (host)
        host->ops->host_close(host);
}

void vmm_host_set_vm_pool(struct vmm_host *host, unsigned nr_ready)
{
    host->ops->host_set_vm_pool(host, nr_ready);
}

void vmm_host_slice_on_guest_cpu(struct vmm_host *host, bool on)
{
    host->slice_on_guest_cpu = on;
}

void vmm_host_get_info(const struct vmm_host *host, struct vmm_host_info *i)
{
    *i = host->info;
}

void vmm_host_cpu_identity(const struct vmm_host *host,
                           struct vmm_cpu_identity *out)
{
    *out = host->cpu;
}

uint64_t vmm_host_hwcap(const struct vmm_host *host) { return host->hwcap; }
uint64_t vmm_host_hwcap2(const struct vmm_host *host) { return host->hwcap2; }

/* ---- VMs ------------------------------------------------------------------ */

int vmm_vm_create(struct vmm_host *host, struct vmm_vm **out, char *why,
                  size_t why_len)
{
    uint64_t t = vmm_clock_now();
    int rc = host->ops->vm_create(host, out, why, why_len);
    vmm_clock_add(VMM_CLOCK_VM_CREATE, t);
    return rc;
}

void vmm_vm_destroy(struct vmm_vm *vm)
{
    if (!vm)
        return;
    struct vmm_vm *owner = vm->memory_vm;
    if (!owner && vm->memory_users > 0) {
        vm->retired = true; /* its memory is still another VM's */
        return;
    }
    uint64_t t = vmm_clock_now();
    vm->ops->vm_destroy(vm);
    if (owner && --owner->memory_users == 0 && owner->retired)
        owner->ops->vm_destroy(owner);
    vmm_clock_add(VMM_CLOCK_VM_DESTROY, t);
}

int vmm_vm_create_sharing(struct vmm_host *host, struct vmm_vm *parent,
                          struct vmm_vm **out, char *why, size_t why_len)
{
    struct vmm_vm *owner = vmm_vm_memory_owner(parent);
    uint64_t t = vmm_clock_now();
    int rc = host->ops->vm_create(host, out, why, why_len);
    vmm_clock_add(VMM_CLOCK_VM_CREATE, t);
    if (rc < 0)
        return rc;
    if ((rc = host->ops->vm_share(*out, owner)) < 0) {
        if (why && why_len)
            snprintf(why, why_len, "sharing the parent's memory: %s",
                     strerror(-rc));
        host->ops->vm_destroy(*out);
        return rc;
    }
    (*out)->memory_vm = owner;
    owner->memory_users++;
    return 0;
}

int vmm_vm_create_vfork(struct vmm_host *host, struct vmm_vm *parent,
                        struct vmm_vm **out, char *why, size_t why_len)
{
    if (!host->ops->vm_borrow || host->ops->vm_borrow(parent, out) < 0)
        return vmm_vm_create_sharing(host, parent, out, why, why_len);
    struct vmm_vm *owner = vmm_vm_memory_owner(parent);
    (*out)->memory_vm = owner;
    owner->memory_users++;
    return 0;
}

struct vmm_aspace *vmm_vm_aspace(struct vmm_vm *vm)
{
    return &vmm_vm_memory_owner(vm)->as;
}
struct vmm_regs *vmm_vm_regs(struct vmm_vm *vm) { return &vm->regs; }
struct vmm_host *vmm_vm_host(struct vmm_vm *vm) { return vm->host; }

void vmm_vm_get_stats(const struct vmm_vm *vm, struct vmm_stats *st)
{
    *st = vm->stats;
}

uint64_t vmm_vm_vdso_calls(const struct vmm_vm *vm)
{
    return vm->ops->vm_vdso_calls(vm);
}

void vmm_vm_vdso_calls_reset(struct vmm_vm *vm)
{
    vm->ops->vm_vdso_calls_reset(vm);
}

uint64_t vmm_vm_vdso_calls_va(const struct vmm_vm *vm)
{
    return vm->ops->vm_vdso_calls_va(vm);
}

uint8_t *vmm_vm_vdso_page(struct vmm_vm *vm)
{
    return vm->ops->vm_vdso_page(vm);
}

uint64_t vmm_vm_fs_base(struct vmm_vm *vm) { return vm->ops->vm_fs_base(vm); }

void vmm_vm_set_fs_base(struct vmm_vm *vm, uint64_t base)
{
    vm->ops->vm_set_fs_base(vm, base);
}

uint64_t vmm_vm_gs_base(struct vmm_vm *vm) { return vm->ops->vm_gs_base(vm); }

void vmm_vm_set_gs_base(struct vmm_vm *vm, uint64_t base)
{
    vm->ops->vm_set_gs_base(vm, base);
}

uint64_t vmm_vm_xcr0(const struct vmm_vm *vm) { return vm->host->xstate.xcr0; }

uint32_t vmm_vm_xsave_bytes(const struct vmm_vm *vm)
{
    return vm->host->xstate.bytes;
}

int vmm_vm_get_xstate(struct vmm_vm *vm, void *buf, size_t len)
{
    return vm->ops->vm_get_xstate(vm, buf, len);
}

int vmm_vm_set_xstate(struct vmm_vm *vm, const void *buf, size_t len)
{
    return vm->ops->vm_set_xstate(vm, buf, len);
}

int vmm_vm_reset_xstate(struct vmm_vm *vm)
{
    return vm->ops->vm_reset_xstate(vm);
}

int vmm_vm_set_debugregs(struct vmm_vm *vm, const uint64_t addr[4],
                         uint64_t dr7)
{
    return vm->ops->vm_set_debugregs ? vm->ops->vm_set_debugregs(vm, addr, dr7)
                                     : -EOPNOTSUPP;
}

uint64_t vmm_vm_take_dr6(struct vmm_vm *vm)
{
    return vm->ops->vm_take_dr6 ? vm->ops->vm_take_dr6(vm) : VMM_DR6_RESET;
}

void vmm_vm_syscall_return(struct vmm_vm *vm, long result)
{
    vm->ops->vm_syscall_return(vm, result);
}

void vmm_vm_enter_user(struct vmm_vm *vm) { vm->ops->vm_enter_user(vm); }

int vmm_vm_run(struct vmm_vm *vm, struct vmm_event *ev)
{
    uint64_t t = vmm_clock_now();
    int rc = vm->ops->vm_run(vm, ev);
    vmm_clock_add(VMM_CLOCK_GUEST, t);
    return rc;
}

int vmm_vm_run_slice(struct vmm_vm *vm, struct vmm_event *ev,
                     uint64_t slice_ns)
{
    uint64_t t = vmm_clock_now();
    int rc = vm->ops->vm_run_slice(vm, ev, slice_ns);
    vmm_clock_add(VMM_CLOCK_GUEST, t);
    return rc;
}
