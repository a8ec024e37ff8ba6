/*
 * vdso_abi.h - what hvrun and the guest's vDSO (guestkernel/vdso.c) share:
 *
 *  - [vvar], the page just below the vDSO image: the logical clock as of
 *    the last exit. Read-only to the guest, as Linux maps it (no write or
 *    exec permission can be added: mprotect says EACCES); hvrun writes it
 *    before each run. Each process has its own (fork copies it).
 *  - the call count: the one thing the vDSO writes, a word at the address
 *    [vvar]'s calls_va gives, a page the backend provides outside every
 *    VMA: under kvm one of the guest kernel area (GK_VDSO_CALLS_GPA,
 *    user-writable, mapped by every VM at GK_VDSO_CALLS_VA), under ptrace
 *    one of the stub's reserved range (vmm/ptrace_abi.h). Every process
 *    has its own, so the page is never shared; it is not a VMA (no
 *    munmap/mprotect/mremap reaches it, /proc/PID/maps does not show it).
 *
 * The clock rule is detcore's (detcore/clock.c): every guest event
 * advances logical time by DET_EVENT_NS; a vDSO call is an event like the
 * syscall it replaces, so call n since the last exit sees
 * now_ns + n * event_ns. At the next exit hvrun folds the count into
 * detcore and rewrites both before the guest runs again.
 *
 * The count is guest-writable, so hvrun trusts it only as far as a real
 * count can go: the vDSO answers at most GK_VDSO_MAX_CALLS calls between
 * two exits (the next one makes the syscall), and a count above that is a
 * scribble, folded as 0. A guest that writes the count can thus move the
 * run's logical clock by no more than GK_VDSO_MAX_CALLS real clock reads
 * would (4 ms of logical time per exit), never backwards; what it writes
 * changes what its own vDSO answers until the next exit, nothing else.
 */
#ifndef GK_VDSO_ABI_H
#define GK_VDSO_ABI_H

#include <stdint.h>

#include "gk_abi.h"

#define GK_VDSO_MAGIC 0x6876727576766172ULL /* "hvruvvar" */

/* The call count: one uint64_t at the start of its page (kvm's place). */
#define GK_VDSO_CALLS_VA (GK_KERNEL_VA + GK_VDSO_CALLS_GPA)
#define GK_VDSO_MAX_CALLS 4096ULL

struct gk_vvar {
    uint64_t magic;
    uint64_t virtual_time; /* 0: every call goes to the kernel (host time) */
    int64_t now_ns;        /* logical time elapsed at the last exit */
    int64_t epoch_ns;      /* CLOCK_REALTIME = epoch_ns + elapsed */
    int64_t boot_ns;       /* CLOCK_MONOTONIC = boot_ns + elapsed */
    int64_t event_ns;      /* what one event adds */
    int64_t coarse_ns;     /* resolution of the _COARSE clocks */
    uint64_t calls_va;     /* where the call count is: the backend's page */
    /* The CPU clocks of the thread on the vCPU: base + calls * event_ns
     * (each read is an event of that thread). */
    int64_t thread_cpu_ns, process_cpu_ns;
    /* The identity calls' answers for the thread about to run (getpid,
     * getppid, getuid, geteuid, getgid, getegid, in GK_VVAR_ID_* order),
     * each GK_VVAR_ID_VALID | the value, or 0 where the call must be made
     * (a seccomp filter, a guest tracer, syscall user dispatch): read by
     * the stubs hvrun puts at glibc's wrappers (cpuid_patch.c, "identity
     * calls"; --gdb keeps them), never by the vDSO. */
    uint64_t ids[6];
    /* The running thread's signal state in the call count's page
     * (struct gk_sigstate at calls_va + GK_SIGSTATE_OFF), or 0 where
     * rt_sigprocmask and rt_sigaction must be made (as for ids): read by
     * the stubs at glibc's wrappers of those two calls. */
    uint64_t sig_va;
};
/*
 * The signal state of the thread about to run (and set_tid_address's and
 * rseq's), in the call count's page
 * (guest-writable: the one other thing the guest writes there). hvrun
 * writes it before each run and takes `blocked` back at each exit (bits
 * of SIGKILL and SIGSTOP cleared: a write of the guest's own can block no
 * more than rt_sigprocmask could); the stubs answer rt_sigprocmask from
 * it unless the new mask unblocks a pending signal (then the call is
 * made and hvrun delivers), and rt_sigaction from `acts` (hvrun takes
 * the actions marked in acts_set back at the exit). Bit (sig-1) of a mask
 * is signal sig.
 */
struct gk_sigstate {
    uint64_t blocked; /* the thread's mask; the stubs write it */
    uint64_t pending; /* pending for the thread: its own and its process's */
    uint64_t pending_any; /* pending for the process or any of its threads */
    uint64_t acts_set; /* the stubs' mark of an action they set in acts */
    /* set_tid_address's: the address the stub took, its mark, and the
     * thread's id it answers */
    uint64_t tid_address, tid_address_set, tid;
    /* rseq's registration: the area and signature the stub took, and the
     * thread's registration: 0 none (the stub may register), 1 taken by
     * the stub, 2 one already (the call is made) */
    uint64_t rseq_area, rseq_sig, rseq_state;
    uint64_t spare[2];
    struct {
        uint64_t handler, flags, restorer, mask; /* rt_sigaction's layout */
    } acts[64]; /* signal sig's at sig - 1 */
};
#define GK_SIGSTATE_OFF 0x100
/* what the stubs' code names (offsetof in struct gk_sigstate) */
#define GK_SIGSTATE_PENDING_ANY 0x10
#define GK_SIGSTATE_ACTS_SET 0x18
#define GK_SIGSTATE_TID_ADDRESS 0x20
#define GK_SIGSTATE_TID_ADDRESS_SET 0x28
#define GK_SIGSTATE_TID 0x30
#define GK_SIGSTATE_RSEQ_AREA 0x38
#define GK_SIGSTATE_RSEQ_SIG 0x40
#define GK_SIGSTATE_RSEQ_STATE 0x48
#define GK_SIGSTATE_ACTS 0x60

/*
 * The vCPU's own CPUID answers, in [vvar] at GK_VVAR_CPUID_OFF (under a
 * backend whose CPUID exits to the hypervisor, which answers it from the
 * VM's entries): what the stubs at rewritten CPUID sites read instead of
 * running CPUID (cpuid_patch.c, "CPUID answered from the VM's table").
 * Entries up to one whose flags are GK_CPUID_END; a leaf and subleaf not
 * there runs the CPUID itself.
 */
struct gk_cpuid_answer {
    uint32_t leaf, subleaf;
    uint32_t flags; /* GK_CPUID_INDEXED: the subleaf must match too */
    uint32_t pad;
    uint32_t eax, ebx, ecx, edx;
};
#define GK_VVAR_CPUID_OFF 0x400
#define GK_VVAR_CPUID_MAX 64 /* and the end entry: up to 0xc20 */
#define GK_CPUID_INDEXED 1u
#define GK_CPUID_END 2u
/* what the stubs' code names (offsetof in struct gk_cpuid_answer) */
#define GK_CPUID_ANSWER_SIZE 32
#define GK_CPUID_FLAGS 8
#define GK_CPUID_EAX 16

#define GK_VVAR_ID_VALID (1ULL << 32)
enum { GK_VVAR_ID_PID, GK_VVAR_ID_PPID, GK_VVAR_ID_UID, GK_VVAR_ID_EUID,
       GK_VVAR_ID_GID, GK_VVAR_ID_EGID };

#endif
