/*
 * backend_impl.h - what the backends (kvm*.c, ptrace*.c) share below
 * backend.h: the common head of a host and of a VM, and the ops table each
 * backend fills. vmm/backend.c dispatches every vmm_vm_* / vmm_host_* call
 * through it; the layers above see only backend.h and never learn which
 * backend runs.
 */
#ifndef VMM_BACKEND_IMPL_H
#define VMM_BACKEND_IMPL_H

#include <sched.h>
#include <signal.h>
#include <time.h>

#include "backend.h"
#include "cpu_x86_64.h"

struct vmm_backend_ops {
    const char *name;
    void (*host_close)(struct vmm_host *host);
    void (*host_set_vm_pool)(struct vmm_host *host, unsigned nr_ready);
    const int *(*host_run_syscalls)(size_t *n); /* NULL: none */
    void (*host_confined)(struct vmm_host *host); /* NULL: nothing to do */
    int (*host_fs_restricted)(struct vmm_host *host, char *why,
                              size_t why_len); /* NULL: nothing to do */
    int (*vm_create)(struct vmm_host *host, struct vmm_vm **out, char *why,
                     size_t why_len);
    void (*vm_destroy)(struct vmm_vm *vm);
    /* Makes a fresh VM that has never run use owner's memory instead of
     * its own (vmm_vm_create_sharing); its own stays for what is per VM
     * (kvm: the guest kernel area; ptrace: the stub's pages). */
    int (*vm_share)(struct vmm_vm *vm, struct vmm_vm *owner);
    /* A VM for parent's vfork child that runs on parent's vCPU until it
     * is destroyed (vmm_vm_create_vfork); NULL, or -EBUSY: none, the
     * caller makes a sharing VM instead. */
    int (*vm_borrow)(struct vmm_vm *parent, struct vmm_vm **out);
    uint64_t (*vm_vdso_calls)(const struct vmm_vm *vm);
    void (*vm_vdso_calls_reset)(struct vmm_vm *vm);
    uint64_t (*vm_vdso_calls_va)(const struct vmm_vm *vm);
    uint8_t *(*vm_vdso_page)(struct vmm_vm *vm);
    uint64_t (*vm_fs_base)(struct vmm_vm *vm);
    void (*vm_set_fs_base)(struct vmm_vm *vm, uint64_t base);
    uint64_t (*vm_gs_base)(struct vmm_vm *vm);
    void (*vm_set_gs_base)(struct vmm_vm *vm, uint64_t base);
    int (*vm_get_xstate)(struct vmm_vm *vm, void *buf, size_t len);
    int (*vm_set_xstate)(struct vmm_vm *vm, const void *buf, size_t len);
    int (*vm_reset_xstate)(struct vmm_vm *vm);
    void (*vm_syscall_return)(struct vmm_vm *vm, long result);
    void (*vm_enter_user)(struct vmm_vm *vm);
    /* NULL: no debug registers for the guest */
    int (*vm_set_debugregs)(struct vmm_vm *vm, const uint64_t addr[4],
                            uint64_t dr7);
    uint64_t (*vm_take_dr6)(struct vmm_vm *vm);
    int (*vm_run)(struct vmm_vm *vm, struct vmm_event *ev);
    int (*vm_run_slice)(struct vmm_vm *vm, struct vmm_event *ev,
                        uint64_t slice_ns);
    /* Checkpoints (vmm/snapshot.c); NULL: the backend cannot copy a VM
     * into a fork of hvrun. save_cpu: the CPU state hvrun's memory does
     * not hold (malloc'd, *len bytes; NULL: none can be saved); disown:
     * in a fork, forget what is the original's (a stub process; kvm: a
     * VM and vCPU), for every VM, a retired one too; respawn: in a fork,
     * a new vCPU/stub on pm (already the fork's own copy) with the saved
     * state. host_disown (before the VMs' disown)/host_adopt_helper: the
     * host's helpers likewise (ptrace: the stub spawner, whose socket a
     * process outside the fork gives, vmm_helper_start; kvm: the VM
     * pool's worker, and no helper). */
    void *(*vm_save_cpu)(struct vmm_vm *vm, size_t *len);
    void (*vm_disown)(struct vmm_vm *vm);
    int (*vm_respawn)(struct vmm_vm *vm, const void *cpu, size_t cpu_len,
                      char *why, size_t why_len);
    void (*host_disown)(struct vmm_host *host);
    void (*host_adopt_helper)(struct vmm_host *host, int helper_fd);
};

/* The head of every backend's host: what the guest's CPU is (vmm/host.c
 * fills it the same way for every backend). */
struct vmm_host {
    const struct vmm_backend_ops *ops;
    struct vmm_host_info info;
    struct vmm_cpuid_entry model[VMM_CPUID_MAX_ENTRIES];
    int nr_model;
    uint64_t hwcap, hwcap2;
    struct vmm_cpu_identity cpu; /* what the guest's CPUID shows */
    cpu_set_t cpus_allowed;      /* before vmm_host_pin_guest_thread */
    struct vmm_xstate_layout xstate;
    bool slice_on_guest_cpu; /* vmm_host_slice_on_guest_cpu */
    /* vmm_host_cpuid_answers: once probed, nr_answers entries or -errno. */
    bool answers_probed;
    int nr_answers;
    struct vmm_cpuid_entry answers[VMM_CPUID_MAX_ENTRIES];
};

/*
 * The head of every backend's VM. pm and as are the VM's own memory; a VM
 * made by vmm_vm_create_sharing runs on memory_vm's instead (never a
 * sharer itself: a sharer of a sharer shares with the owner). The owner
 * counts its sharers; destroyed while it has some, it is only marked
 * retired and freed with the last of them, so the memory outlives the
 * process that made it.
 */
struct vmm_vm {
    const struct vmm_backend_ops *ops;
    struct vmm_host *host;
    struct vmm_physmem pm;
    struct vmm_aspace as;
    struct vmm_regs regs;
    struct vmm_stats stats;
    struct vmm_vm *memory_vm; /* NULL: runs on its own pm/as */
    unsigned memory_users;    /* VMs whose memory_vm this is */
    bool retired;             /* destroyed, kept for memory_users */
    struct vmm_vm_snapshot *snapshot; /* a checkpoint's copy being made */
};

/* The VM whose pm/as vm's guest runs on. */
static inline struct vmm_vm *vmm_vm_memory_owner(struct vmm_vm *vm)
{
    return vm->memory_vm ? vm->memory_vm : vm;
}
static inline const struct vmm_vm *
vmm_vm_memory_owner_c(const struct vmm_vm *vm)
{
    return vm->memory_vm ? vm->memory_vm : vm;
}

/* ---- vmm/host.c: the parts of opening a host every backend shares ---- */

/* Builds the fixed model from the host CPU's CPUID and sets the xstate
 * layout for xcr0 (a subset of the host's XCR0). Returns 0, or -ENOTSUP
 * with info.model_missing and why set. */
int vmm_host_build_model(struct vmm_host *h, uint64_t xcr0, char *why,
                         size_t why_len);
/* The host's own XCR0. */
uint64_t vmm_host_native_xcr0(void);
/* Runs the CPUID probe through h's own backend (cached per boot under
 * cache_tag), and sets cpu, cpuid_control and, where CPUID is the host's,
 * hwcap/hwcap2 and the pinning of the calling thread. */
int vmm_host_probe_guest_cpuid(struct vmm_host *h, const char *cache_tag,
                               char *why, size_t why_len);
/* Pins the calling thread to the lowest CPU it may use (see host.c). */
void vmm_host_pin_guest_thread(struct vmm_host *h);
/* Gives the calling thread every CPU hvrun may use again. */
void vmm_host_unpin_thread(const struct vmm_host *h);
/* The per-boot cache files (host.c): path of cache `name`, and reading and
 * writing a table of CPUID entries there. */
int vmm_host_cache_file(const char *name, char *out, size_t len);
int vmm_host_cache_read(const char *path, struct vmm_cpuid_entry **out,
                        int *n);
void vmm_host_cache_write(const char *path, const struct vmm_cpuid_entry *e,
                          int n);

/* The backends' open functions (kvm_host.c, ptrace_host.c). */
/* Each backend's table (kvm.c, ptrace.c). */
extern const struct vmm_backend_ops kvm_backend_ops;
extern const struct vmm_backend_ops ptrace_backend_ops;

int kvm_host_open(struct vmm_host **out, char *why, size_t why_len);
int ptrace_host_open(struct vmm_host **out, char *why, size_t why_len);
/* A new stub spawner, this process its parent, for a fork of hvrun that
 * cannot start one (its seccomp filter forbids exec): its socket
 * (vmm_helper_start). */
int ptrace_helper_start(int *sock, int *pid, char *why, size_t why_len);
/* kvm needs no helper (a restored copy makes VMs through /dev/kvm): a
 * stand-in fd (/dev/null) and the caller's own pid, which is no child of
 * its to reap (vmm_helper_start's callers expect both). */
int kvm_helper_start(int *fd, int *pid, char *why, size_t why_len);

/* The time-slice timer every backend arms around a run (slice_timer.c):
 * set up once with the backend's handler; arm(0) disarms. */
#define VMM_SLICE_SIGNAL SIGVTALRM
bool vmm_slice_timer_setup(void (*on_fire)(int));
void vmm_slice_timer_arm(uint64_t ns);
/* A timer on process pid's CPU clock with the same signal and handler;
 * armed at an absolute CPU time of that process (0: disarmed). */
bool vmm_cpu_timer_create(pid_t pid, void (*on_fire)(int), timer_t *out);
void vmm_cpu_timer_arm_at(timer_t timer, uint64_t cpu_ns);
void vmm_cpu_timer_delete(timer_t timer);
/* In a fork: the timer was the original's (timers are not inherited). */
void vmm_slice_timer_forget(void);

/* The event a backend's run returns when it cannot go on: FAILED, with
 * why in ev->what (both backends, vmm/host.c). */
__attribute__((format(printf, 2, 3))) void
vmm_event_fail(struct vmm_event *ev, const char *fmt, ...);

#endif
