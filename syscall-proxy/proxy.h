/*
 * proxy.h - the Linux ABI layer: the guest process object and the syscall
 * table. Handlers act on a proxy_process through the backend interface
 * (vmm/backend.h) and ask detcore for anything that could differ between
 * runs. They never include <linux/kvm.h>.
 *
 * Handler contract: `long handler(struct proxy_process *p, const uint64_t
 * a[6])` returns the value for RAX: a result, or -errno in [-4095, -1].
 * Guest pointers are integers (gva_t) and are only dereferenced through
 * proxy_copy_in/out/strncpy_in (a bad pointer is -EFAULT, never a crash).
 * Two special returns: PROXY_RET_NORETURN (the thread ended: exit) and
 * PROXY_RET_REGS_SET (the handler wrote all registers: rt_sigreturn, execve).
 */
#ifndef PROXY_H
#define PROXY_H

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/types.h>

#include "backend.h"
#include "kernel_state.h"
#include "mm_state.h"
#include "fs_state.h"

struct det_state;
struct proxy_aio;
struct proxy_config;
struct proxy_cpuid_patched;
struct proxy_fd;
struct proxy_plock;
struct proxy_preserve;
struct proxy_sem_undo_list;
struct proxy_shm_attach;
struct proxy_thread;
struct proxy_world;

#define PROXY_NR_SYSCALLS 512
#define PROXY_RET_NORETURN (-100000L)
#define PROXY_RET_REGS_SET (-100001L)

/* The calling thread must wait (proxy_block_on_fd and friends set what
 * for); the syscall runs again from the start when the thread is woken. */
#define PROXY_RET_BLOCK (-100002L)

/* ---- file descriptors ---------------------------------------------------- */

struct proxy_fdtable {
    struct proxy_fd *fds;
    int cap;        /* allocated slots */
    int max_fds;    /* RLIMIT_NOFILE soft limit */
    /* The process's POSIX record locks, one entry per locked file
     * (plock.c). Not copied by fork. */
    struct proxy_plock *plocks;
    size_t nr_plocks;
    /* The F_SETLKW a thread of the process waits in, for deadlock
     * detection (plock.c): current while thread tid has made no call
     * since (its events count is still `events`); tid 0: none. */
    struct proxy_plock_wait {
        int tid;
        uint64_t events;
        uint64_t dev, ino, start, end;
        short type;
        int blocker; /* the pid holding what it waits for, or -1 */
    } plock_wait;
};

/* ---- /proc/<pid> files that act on a process (procfile.c) ---------------- */

/* Which kept file: an index into proxy_process.kept (COMM is p->comm). */
enum proxy_kept {
    PROXY_KEPT_OOM_SCORE_ADJ,
    PROXY_KEPT_OOM_ADJ,
    PROXY_KEPT_COREDUMP_FILTER,
    PROXY_KEPT_TIMERSLACK,
    PROXY_KEPT_LOGINUID,
    PROXY_KEPT_CLEAR_REFS,
    PROXY_KEPT_SESSIONID,
    PROXY_KEPT_OOM_SCORE,
    PROXY_KEPT_PERSONALITY,
    PROXY_KEPT_CGROUP,
    PROXY_KEPT_AUTOGROUP,
    PROXY_NR_KEPT,
    PROXY_KEPT_COMM = PROXY_NR_KEPT,
};
#define PROXY_KEPT_VALUE_MAX 24

/* ---- the process --------------------------------------------------------- */
/* The run's pid model, as a shell in a container would see it: a virtual
 * init (pid 1, never a guest process: the parent of orphans, which it
 * reaps at once), a virtual shell (PROXY_SHELL_PID, the leader of its
 * own process group and session) that started the first process, and
 * the first process, PROXY_FIRST_PID, whose getppid() is the shell's.
 * With --as-init the first process is pid 1 itself (ppid 0), the run's
 * init, as a container's entry point is. */
#define PROXY_INIT_PID 1
#define PROXY_FIRST_PID 2

/* The virtual shell's pid, and so its process group and session: a pid
 * the run never gives a process (world.c skips it), the last below
 * Linux's default pid_max. */
#define PROXY_SHELL_PID 32767
#define PROXY_OUTSIDE_PGID PROXY_SHELL_PID

struct proxy_process {
    struct proxy_world *world;
    bool zombie;                /* exited, not yet reaped by its parent */
    bool vfork_released;        /* a vfork child that exec'd: parent runs */
    bool stopped;               /* by SIGSTOP & co; not scheduled */
    bool did_exec;              /* since fork (setpgid's EACCES) */
    int stop_sig;
    bool report_stop, report_cont; /* not yet told to a wait(WUNTRACED...) */
    struct vmm_vm *vm;
    struct vmm_aspace *as;
    /* Which address space as is, as kcmp(KCMP_VM) tells them apart and
     * orders them: 0 for the first process's, then one more for each
     * space made (a fork's without CLONE_VM, an execve's) in the run's
     * order, never a host pointer; a CLONE_VM child keeps its parent's. */
    uint64_t mm_id;
    struct det_state *det;
    const struct proxy_config *cfg;

    struct proxy_fdtable fds;
    /* the cwd, umask, private /tmp (fs/fs_state.h) */
    struct proxy_fs_state fs;
    /* ids, groups, capabilities, namespaces (kernel/kernel_state.h) */
    struct proxy_cred_state cred;
    struct rlimit rlimits[RLIM_NLIMITS];

    /* memory layout, the vDSO's count, the initial stack (mm/mm_state.h) */
    struct proxy_mm_state mm;

    /* identity */
    int pid, tid, ppid, pgid, sid;
    dev_t ctty;                 /* controlling terminal's rdev; 0: none */
    gva_t clear_child_tid;
    gva_t robust_list;
    char exe_path[PROXY_PATH_MAX]; /* absolute host path of the program */
    dev_t exe_dev;              /* the program's file: writing it is ETXTBSY */
    ino_t exe_ino;
    uint64_t hwcap, hwcap2;     /* AT_HWCAP/AT_HWCAP2 of the CPU model */
    struct vmm_cpu_identity cpu; /* what its CPUID shows (/proc/cpuinfo) */
    struct proxy_cpuid_patched *cpuid_patched; /* rewritten sites, or NULL */
    char comm[16];
    /* vfs.c: the thread a /proc/.../task/TID/ name being opened picks
     * (its comm, stat, status), 0 for the process's own files */
    int proc_tid;
    /* Written /proc/self settings (procfile.c); "" is the initial value. */
    char kept[PROXY_NR_KEPT][PROXY_KEPT_VALUE_MAX];
    /* Linux's signal->oom_score_adj_min: the lowest oom_score_adj a
     * writer without CAP_SYS_RESOURCE may set (procfile.c) */
    int oom_score_adj_min;

    /* signals (kernel/kernel_state.h) */
    struct proxy_sig_state sig;
    struct proxy_aio *aio; /* native AIO contexts (io/aio.c); NULL: none */
    /* alarm, itimers and timer_create timers (timer.c) */
    struct proxy_timers timers;

    /* threads: threads[cur] is on the vCPU */
    struct proxy_thread *threads;
    int nr_threads, cap_threads, cur;
    uint64_t gone_threads_cpu_ns; /* of the threads an execve ended */
    int next_tid;
    uint64_t next_wait_seq;
    uint64_t quantum_left;      /* syscalls before a forced turn */
    bool resched;               /* the current thread gave up the vCPU */
    /* Host ns the current thread ran in KVM_RUNs that ended without a
     * syscall (a host signal, a page fault hvrun resolved, a trapped
     * RDTSC): its slice goes on from there rather than start again, or
     * such exits would keep a spinner from ever being cut. */
    uint64_t slice_spent_ns;
    /* Events of the current slice that were not syscalls (vDSO clock
     * reads, trapped TSC reads): a slice with any does not end in a cut
     * (world.c). */
    uint64_t slice_events;
    /* --progress software: the units counted but not folded at the last
     * stop (world.c): a slice that counted more made progress. */
    uint64_t slice_units_seen;

    /* prctl flags and the nice value (prctl.c, sched.c) */
    struct proxy_prctl_state {
        int pdeathsig;
        int dumpable;
        bool no_new_privs;
        bool child_subreaper;
        bool thp_disabled;
        bool keepcaps;          /* PR_SET_KEEPCAPS; cleared by execve */
        unsigned int securebits; /* PR_SET_SECUREBITS but SECBIT_KEEP_CAPS */
        bool mce_process, mce_early; /* PR_MCE_KILL (PF_MCE_*) */
        /* membarrier's registrations (MEMBARRIER_CMD_REGISTER_* bits):
         * of the memory, so a fork keeps them and an execve drops them */
        unsigned membarrier_registered;
        /* sched_setscheduler/sched_setattr (sched.c): what the guest set,
         * reported back; hvrun's one vCPU schedules the same whatever */
        int sched_policy, sched_priority;
        bool sched_reset_on_fork;
        uint64_t sched_runtime, sched_deadline, sched_period;
        uint64_t timerslack_ns;
        /* what PR_SET_TIMERSLACK 0 restores: the parent's slack at fork
         * (0: the initial 50 us) */
        uint64_t timerslack_default_ns;
        int nice;
        /* ioprio_set's value, read back by ioprio_get (sched.c); 0 is
         * Linux's default, class NONE. Inherited by fork and clone, as
         * copy_io gives a child its parent's. */
        int ioprio;
    } prctl;
    /* System V shared memory attached (kernel/sysvshm.c). Owned. */
    struct proxy_shm_attach *shm_attach;
    int nr_shm_attach;
    /* Linux's sysvsem.undo_list (kernel/sysvsem.c): the SEM_UNDO
     * adjustments, applied when the last process holding the list lets
     * it go. Made at a semop with SEM_UNDO, or a clone with CLONE_SYSVSEM
     * (a pthread_create; a process made so shares it, counted); let go by
     * exit_sem (exit, unshare, setns; proxy_sem_exit). A fork child has
     * none. What kcmp's KCMP_SYSVSEM compares. NULL: none. */
    struct proxy_sem_undo_list *sem_undo;
    /* personality(2)'s value (sys.c): kept across fork and execve, as
     * setarch relies on; PER_LINUX32 makes uname's machine i686 */
    uint32_t personality;
    /* Its session and process keyrings' serials (0: none) and
     * KEYCTL_SET_REQKEY_KEYRING's default (kernel/keys.c). */
    int32_t key_session, key_process;
    int key_reqkey;

    /* ending */
    /* A tracee whose tracer is not its parent: the tracer (a run pid) is
     * told of its exit first, its parent after (ptrace.c). */
    int ptrace_exit_tracer;
    /* The debug registers loaded on vm's vCPU (DR0-DR3, DR7) and for
     * which VM (ptrace.c: a tracer's hardware breakpoints). */
    uint64_t dr_loaded[5];
    struct vmm_vm *dr_loaded_vm;
    bool exited;
    int exit_status;            /* wait status encoding: code<<8 or signo */



    /* counters; totals are shared by the whole process tree and collect
     * the exits of VMs that are gone (exited or exec'd processes) */
    struct proxy_totals {
        uint64_t syscalls, unsupported, exits, syscall_exits,
            exception_exits;
        struct proxy_preserve *preserve; /* --verify's journal (preserve.c) */
        uint64_t preemptions; /* threads cut off by the time slice */
        /* --cpuid-rewrite: sites rewritten, traps answered, host time
         * spent finding and rewriting sites */
        uint64_t cpuid_sites, cpuid_traps, cpuid_patch_ns;
        uint64_t tsc_sites, tsc_traps;
        uint64_t tsc_inline_sites; /* RDTSC sites read in the guest */
        uint64_t cpuid_inline_sites; /* CPUID sites answered in the guest */
        uint64_t idcall_sites; /* identity calls answered in the guest */
        /* --progress software: back edges rewritten, traps at a spent
         * counter, units counted (progress.c) */
        uint64_t progress_sites, progress_traps, progress_units;
        /* processes and threads made after the first (a run with none
         * has one schedule whatever --chaos draws) */
        uint64_t tasks_made;
    } *totals;
    uint64_t nr_syscalls;
    uint64_t nr_unsupported;
    bool unsupported_seen[PROXY_NR_SYSCALLS];
};

/* Creates a process in a fresh VM; stdio fds 0-2 are dups of hvrun's. */
int proxy_process_create(struct proxy_process **out, struct vmm_vm *vm,
                         struct det_state *det, const struct proxy_config *c);
void proxy_process_destroy(struct proxy_process *p);

/* ---- the checked copy path (thin wrappers over vmm_as_copy_*) ------------- */
int proxy_copy_in(struct proxy_process *p, void *dst, gva_t src, size_t len);
/* An extensible struct's bytes [known, size) at src must be zero (Linux's
 * copy_struct_from_user): 0, -E2BIG at a nonzero byte, -EFAULT. */
int proxy_copy_in_tail_zero(struct proxy_process *p, gva_t src, size_t known,
                            size_t size);
/* Whether gva lies in code hvrun placed beside the guest's for its
 * rewritten sites (a [hvrun-progress] trampoline, a [hvrun-tsc] stub):
 * no line, symbol or unwind info of the program's covers it. */
bool proxy_code_is_hvruns(const struct proxy_process *p, gva_t gva);
int proxy_copy_out(struct proxy_process *p, gva_t dst, const void *src,
                   size_t len);

/* Copies a path: returns its length, -EFAULT, -ENAMETOOLONG. */
long proxy_path_in(struct proxy_process *p, char *dst, gva_t src);

/* Resolves a guest (dirfd, path) pair to a host (dirfd, path) for *at calls:
 * AT_FDCWD means the guest cwd. Returns the host dirfd or -EBADF. */
int proxy_host_dirfd(struct proxy_process *p, int guest_dirfd);

/* ---- the syscall table --------------------------------------------------- */
typedef long (*proxy_handler_fn)(struct proxy_process *p, const uint64_t a[6]);

struct proxy_syscall {
    int nr;
    const char *name;
    proxy_handler_fn fn;
};

extern const struct proxy_syscall proxy_process_syscalls[];

extern const char *const proxy_syscall_names[PROXY_NR_SYSCALLS];
const char *proxy_syscall_name(uint64_t nr);

/* True when the table has a handler for nr (docs and tests use it). */
bool proxy_syscall_supported(uint64_t nr);

/* Prints docs/SYSCALLS.md: every syscall and how hvrun handles it. */
void proxy_catalog_print_markdown(FILE *out);

/* Runs one syscall from the registers; returns the RAX value or a special
 * PROXY_RET_*. Unknown numbers log once and return -ENOSYS (or end the run
 * under fail_closed). */
long proxy_dispatch(struct proxy_process *p);

/* ---- logging ------------------------------------------------------------- */
void proxy_log(const struct proxy_process *p, int level, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

#endif
