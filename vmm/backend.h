/*
 * backend.h - the one interface between the execution backends (KVM now,
 * ptrace later) and the layers above (syscall-proxy, detcore, cli).
 * Nothing above vmm/ includes <linux/kvm.h>; this header is all they see.
 */
#ifndef VMM_BACKEND_H
#define VMM_BACKEND_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "aspace.h"

/* General registers of one guest thread, as user mode sees them. */
struct vmm_regs {
    uint64_t rax, rbx, rcx, rdx, rsi, rdi, rsp, rbp;
    uint64_t r8, r9, r10, r11, r12, r13, r14, r15;
    uint64_t rip, rflags;
};

enum vmm_event_kind {
    VMM_EVENT_SYSCALL,     /* regs hold the syscall; rip is in the stub */
    VMM_EVENT_EXCEPTION,   /* user-mode exception; regs are at the fault */
    VMM_EVENT_INTERRUPTED, /* KVM_RUN returned EINTR (a host signal) */
    VMM_EVENT_FAILED,      /* the VM cannot continue; `what` says why */
};

struct vmm_event {
    enum vmm_event_kind kind;
    /* INTERRUPTED: the time slice of vmm_vm_run_slice ran out, and whether
     * the vCPU stopped in user code (not in the guest kernel's stubs), where
     * another thread may take it over. */
    bool slice_over, in_user_code;
    unsigned vector;     /* EXCEPTION: x86 vector number */
    uint64_t error_code; /* EXCEPTION: CPU error code (0 if none) */
    uint64_t fault_addr; /* EXCEPTION #PF: CR2 */
    char what[160];      /* FAILED: a description */
};

/* What the host offers; printed by `hvrun doctor`. */
struct vmm_host_info {
    char hypervisor[32];     /* kvm_pvm, kvm_intel, kvm_amd, unknown */
    int api_version;
    bool pmu;                /* a guest PMU for instruction counting */
    bool rdtsc_trappable;    /* CR4.TSD makes user RDTSC fault */
    bool cpuid_control;      /* measured: a probe VM's CPUID showed the
                                model (see struct vmm_cpu_identity) */
    bool cpuid_answered;     /* measured: the probe VM's CPUID showed the
                                model's name and signature, so the
                                hypervisor answers CPUID and the APIC ids
                                are the vCPU's (the model's), even where
                                the feature bits are the host's (Intel
                                kvm_pvm); false where CPUID runs on the
                                host CPU (AMD kvm_pvm, ptrace) */
    bool sync_regs;
    bool immediate_exit;
    int nr_memslots;
    const char *model_missing; /* baseline feature the host lacks, or NULL */
};

struct vmm_host;
struct vmm_vm;

/*
 * The CPU the guest's CPUID instruction really describes, as a probe VM
 * saw it when the host was opened: the fixed model where the backend
 * controls CPUID, the host's own CPU where it cannot (kvm_pvm without CPUID
 * faulting). /proc/cpuinfo and AT_HWCAP are made from it, so what a guest
 * reads never contradicts what it executes.
 */
struct vmm_cpu_identity {
    char vendor[13], brand[49];
    unsigned family, model, stepping, max_leaf;
    uint32_t leaf1_ecx, leaf1_edx, leaf7_ebx, leaf7_ecx, leaf7_edx;
    uint32_t ext1_ecx, ext1_edx; /* leaf 0x80000001 */
};

/* The execution mechanisms: one policy above, either of these below. */
enum vmm_backend_kind {
    VMM_BACKEND_KVM,    /* one KVM VM per guest process (the default) */
    VMM_BACKEND_PTRACE, /* one PTRACE_SYSEMU-traced stub process each */
};
/* "kvm" or "ptrace" to a kind; -EINVAL for another name. */
int vmm_backend_parse(const char *name, enum vmm_backend_kind *out);
const char *vmm_backend_name(enum vmm_backend_kind kind);

/*
 * Opens the backend (kvm: /dev/kvm) and checks the capabilities hvrun
 * needs. On failure returns -errno and writes a one-line reason (naming
 * the device or capability).
 */
int vmm_host_open_backend(enum vmm_backend_kind kind, struct vmm_host **out,
                          char *why, size_t why_len);
/* The same for kvm. */
int vmm_host_open(struct vmm_host **out, char *why, size_t why_len);
/* The backend a host runs ("kvm", "ptrace"). */
const char *vmm_host_backend_name(const struct vmm_host *host);
/* The host syscalls this backend makes while guests run beyond what every
 * run needs (hvrun's seccomp list, cli/confine.c allows them): numbers,
 * *n of them. */
const int *vmm_host_run_syscalls(const struct vmm_host *host, size_t *n);
/* The same for a backend not opened (the build compiles hvrun's filter
 * for each backend ahead of time: cli/filtergen.c). */
const int *vmm_backend_run_syscalls(enum vmm_backend_kind kind, size_t *n);
/* hvrun has just restricted its own file access (--fs-policy's Landlock)
 * and is still single-threaded with fork allowed: a backend whose helper
 * processes must share that domain starts them again now (Landlock lets
 * a restricted tracer trace only processes of its own domain or below).
 * 0 or -errno, with why filled in. */
int vmm_host_fs_restricted(struct vmm_host *host, char *why, size_t why_len);
/* hvrun has confined itself (or was told not to): from here the backend
 * may start helper threads (a thread started before would escape
 * --fs-policy's Landlock, which wants hvrun single-threaded). */
void vmm_host_confined(struct vmm_host *host);
void vmm_host_close(struct vmm_host *host);
void vmm_host_get_info(const struct vmm_host *host, struct vmm_host_info *i);
void vmm_host_cpu_identity(const struct vmm_host *host,
                           struct vmm_cpu_identity *out);
/* AT_HWCAP (leaf 1 EDX) and AT_HWCAP2 of that CPU. */
uint64_t vmm_host_hwcap(const struct vmm_host *host);
uint64_t vmm_host_hwcap2(const struct vmm_host *host);

/*
 * The fixed model itself, whatever the guest's CPUID instruction shows on
 * this host: for `hvrun run --cpuid-rewrite`, which turns the guest's CPUID
 * instructions into traps and answers them here. regs: eax, ebx, ecx, edx
 * as a vCPU of the model would return them (KVM's rules for absent leaves).
 */
void vmm_host_cpuid_model(const struct vmm_host *host, uint32_t leaf,
                          uint32_t subleaf, uint32_t regs[4]);
/*
 * What a VM of this host answers for each leaf and subleaf its CPUID
 * entries name, measured by running CPUID in a probe VM once per boot
 * (cached): *out gets the entries (VMM_CPUID_INDEXED where the subleaf
 * selects the answer). Returns their number, or -errno. Only for a host
 * whose guest CPUID is the vCPU's (vmm_host_info.cpuid_control or
 * cpuid_answered, and a backend that runs guests in VMs): for the stubs
 * that answer a rewritten CPUID in the guest without an exit.
 */
struct vmm_cpuid_entry; /* cpu_x86_64.h */
int vmm_host_cpuid_answers(struct vmm_host *host,
                           const struct vmm_cpuid_entry **out);
/* Overwrites the fields of a host's CPUID(leaf) that name the CPU it ran
 * on (APIC ids: leaf 1 EBX[31:24], leaves 0xb and 0x1f EDX, AMD's
 * 0x8000001e) with the model's, CPU 0's: for a trapped CPUID answered
 * with the host's leaf (proxy_config.cpuid_topology). */
void vmm_cpu_model_apic_ids(uint32_t leaf, uint32_t regs[4]);
/* The model's identity and AT_HWCAP/AT_HWCAP2, for /proc/cpuinfo and the
 * auxv of a run whose CPUID is the model by rewriting. */
void vmm_host_model_identity(const struct vmm_host *host,
                             struct vmm_cpu_identity *out, uint64_t *hwcap,
                             uint64_t *hwcap2);
/* hvrun's own pid, read once (and again in a child after fork): asked
 * at every mapping sync and path lookup, where getpid was a host call
 * each time (glibc keeps no cache). */
pid_t vmm_host_self_pid(void);
/* hvrun's cache directory ($XDG_CACHE_HOME/hvrun, else ~/.cache/hvrun),
 * created if missing; -1 when there is none or HVRUN_NO_CACHE is set. */
int vmm_host_cache_dir(char *out, size_t len);

/*
 * Keeps up to nr_ready fresh VMs built in the background (a host thread),
 * and tears retired VMs down there, once a run asks for its second VM.
 * 0 (the default) builds and destroys every VM on the caller's thread.
 */
void vmm_host_set_vm_pool(struct vmm_host *host, unsigned nr_ready);

/*
 * Whether vmm_vm_run_slice's slice counts the guest's own CPU time where
 * the backend can (ptrace: the stub's CPU clock), rather than host wall
 * time: a host that keeps the guest waiting then does not end its slice.
 * For a run whose slices only bound how long one thread keeps the vCPU
 * (virtual time); with host time a slice reaches a host deadline.
 */
void vmm_host_slice_on_guest_cpu(struct vmm_host *host, bool on);

/* Creates a VM with one vCPU in 64-bit user mode, the guest kernel mapped
 * and an empty user address space. Returns 0 or -errno (why filled in). */
int vmm_vm_create(struct vmm_host *host, struct vmm_vm **out, char *why,
                  size_t why_len);
/*
 * Destroys a VM. Its memory goes too unless other VMs run on it
 * (vmm_vm_create_sharing): then it stays until the last of them goes.
 */
void vmm_vm_destroy(struct vmm_vm *vm);

/*
 * A VM for a process made by clone with CLONE_VM and without CLONE_THREAD
 * (vfork, posix_spawn, clone(CLONE_VM)): its own vCPU and registers, but
 * running on parent's memory, the one address space (VMA list, page
 * tables, guest-physical pages) both then use: every write, mmap, munmap,
 * mprotect or brk by either is the other's too. vmm_vm_aspace of both is
 * the same object. Returns 0 or -errno (why filled in).
 */
int vmm_vm_create_sharing(struct vmm_host *host, struct vmm_vm *parent,
                          struct vmm_vm **out, char *why, size_t why_len);

/*
 * As vmm_vm_create_sharing, for a vfork child (CLONE_VFORK) whose parent
 * has no other thread: the parent's VM waits until the child's VM is
 * destroyed (its exec or its exit), so a backend may run the child on
 * the parent's own vCPU meanwhile (ptrace: the parent's stub, with the
 * parent's FPU state and debug registers put back at the end) instead of
 * making one. Falls back to vmm_vm_create_sharing where it cannot. The
 * parent's VM must not run while the child's exists.
 */
int vmm_vm_create_vfork(struct vmm_host *host, struct vmm_vm *parent,
                        struct vmm_vm **out, char *why, size_t why_len);

struct vmm_aspace *vmm_vm_aspace(struct vmm_vm *vm);
/* The host vm was made on. */
struct vmm_host *vmm_vm_host(struct vmm_vm *vm);
/* The current thread's registers; edits take effect at the next run. */
struct vmm_regs *vmm_vm_regs(struct vmm_vm *vm);
/* The guest vDSO's call count (guestkernel/vdso_abi.h): a word of this
 * VM's own that the guest's user code may write, at the guest address
 * vmm_vm_vdso_calls_va (kvm: in the guest kernel area; ptrace: in the
 * stub's reserved range), which hvrun writes into [vvar]. */
uint64_t vmm_vm_vdso_calls(const struct vmm_vm *vm);
uint64_t vmm_vm_vdso_calls_va(const struct vmm_vm *vm);
void vmm_vm_vdso_calls_reset(struct vmm_vm *vm);
/* hvrun's address of that whole page (the count's word first; the rest
 * holds the thread's signal state, vdso_abi.h's gk_sigstate). */
uint8_t *vmm_vm_vdso_page(struct vmm_vm *vm);
uint64_t vmm_vm_fs_base(struct vmm_vm *vm);
void vmm_vm_set_fs_base(struct vmm_vm *vm, uint64_t base);
uint64_t vmm_vm_gs_base(struct vmm_vm *vm);
void vmm_vm_set_gs_base(struct vmm_vm *vm, uint64_t base);

/* The guest's XCR0 and the size of its XSAVE image (standard format). */
uint64_t vmm_vm_xcr0(const struct vmm_vm *vm);
uint32_t vmm_vm_xsave_bytes(const struct vmm_vm *vm);

/*
 * Extended (FPU/SSE/AVX) state in the XSAVE standard format, for signal
 * frames. len must be at least vmm_vm_xsave_bytes(). Returns 0 or -errno.
 */
int vmm_vm_get_xstate(struct vmm_vm *vm, void *buf, size_t len);
int vmm_vm_set_xstate(struct vmm_vm *vm, const void *buf, size_t len);
/* Resets FPU state to the power-on default (execve). */
int vmm_vm_reset_xstate(struct vmm_vm *vm);

/*
 * Hardware breakpoints and watchpoints (a guest tracer's DR0-DR3 and DR7):
 * set for the VM's next run; 0, or -EOPNOTSUPP where the backend cannot
 * give the guest debug registers. vmm_vm_take_dr6: DR6 as the last debug
 * exception left it (which breakpoint fired, BS), then reset.
 */
int vmm_vm_set_debugregs(struct vmm_vm *vm, const uint64_t addr[4],
                         uint64_t dr7);
uint64_t vmm_vm_take_dr6(struct vmm_vm *vm);

/* Completes a syscall: RAX=result, resume at RCX with RFLAGS=R11, user
 * mode. Must follow every VMM_EVENT_SYSCALL that resumes the thread. */
void vmm_vm_syscall_return(struct vmm_vm *vm, long result);
/* Resumes in user mode at the registers in vmm_vm_regs (after an exception
 * or to start a new image); RFLAGS sanitised. */
void vmm_vm_enter_user(struct vmm_vm *vm);

/* Runs the vCPU until the next event. Returns 0, or -errno on an ioctl
 * failure (ev->what says which). */
int vmm_vm_run(struct vmm_vm *vm, struct vmm_event *ev);
/* The same, but the run also ends (VMM_EVENT_INTERRUPTED, slice_over) once
 * the guest has run slice_ns of host wall time (or of its own CPU time:
 * vmm_host_slice_on_guest_cpu) without an exit; 0 means no limit. A host
 * timer signal interrupts the run: the cut point is not deterministic. */
int vmm_vm_run_slice(struct vmm_vm *vm, struct vmm_event *ev,
                     uint64_t slice_ns);

/* Counters for --summary and the benchmarks. */
struct vmm_stats {
    uint64_t exits;         /* KVM_RUN returns */
    uint64_t syscall_exits;
    uint64_t exception_exits;
    uint64_t tlb_flushes;
};
void vmm_vm_get_stats(const struct vmm_vm *vm, struct vmm_stats *st);

/* A new memfd (named name) of size bytes holding from's extents with data
 * at the same offsets, the rest holes: read from view where from is
 * mapped there (no second copy through the kernel), else through a
 * buffer. The fd, or -errno. */
int vmm_memfd_copy(int from, const uint8_t *view, uint64_t size,
                   const char *name);

/*
 * Checkpoints: a copy of a run made by fork (vmm/snapshot.c; reverse
 * execution under gdb). A fork of hvrun shares what the backend holds
 * outside hvrun's memory (ptrace: the guests' memory memfds, the stubs),
 * so, for the VMs of every guest process (vms[0, n)):
 *  - vmm_vms_snapshot_take, before the fork: each memory that is a memfd
 *    (ptrace) copied into a memfd of its own (kvm's private memory is the
 *    fork's own copy already), the CPU state hvrun's memory lacks saved;
 *    0, or -EOPNOTSUPP/-errno with why (memory shared with a host object,
 *    a vCPU whose state the backend does not give);
 *  - vmm_vms_snapshot_settle, after it, in both processes: the original
 *    drops the copy (in_fork false); the fork takes it as the memory and
 *    forgets the stubs or VMs (after vmm_host_snapshot_disown); it never
 *    runs them;
 *  - vmm_vms_snapshot_restore, in a fork of that fork (after
 *    vmm_host_snapshot_adopt with a helper of vmm_helper_start's): a copy
 *    of the memory of its own again and new vCPUs with the saved state
 *    (ptrace: new stubs; kvm: new VMs made through /dev/kvm over the same
 *    host addresses); the VMs then run on from where the take was.
 * vmm_helper_start: the helper process a restored copy needs (ptrace: a
 * stub spawner, the caller its parent), started by a process that may
 * fork and exec; its fd, to pass to the copy, and its pid (the caller
 * reaps it once the copy has ended). kvm needs none: /dev/null and the
 * caller's own pid stand for it (a wait for it finds no child). 0 or
 * -errno with why.
 */
int vmm_vms_snapshot_take(struct vmm_vm *const *vms, size_t n, char *why,
                          size_t why_len);
int vmm_vms_snapshot_settle(struct vmm_vm *const *vms, size_t n, bool in_fork);
void vmm_host_snapshot_disown(struct vmm_host *host);
void vmm_host_snapshot_adopt(struct vmm_host *host, int helper_fd);
int vmm_vms_snapshot_restore(struct vmm_vm *const *vms, size_t n, char *why,
                             size_t why_len);
int vmm_helper_start(enum vmm_backend_kind kind, int *fd, int *pid,
                     char *why, size_t why_len);

#endif
