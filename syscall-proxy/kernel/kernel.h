/*
 * kernel.h - what kernel/ offers the other subsystems: the thread object
 * and the world of processes, signals, parking a thread (waits, sleeps,
 * retries), clocks, credentials and namespaces, System V IPC permissions,
 * seccomp and ptrace's forced memory access.
 */
#ifndef PROXY_KERNEL_KERNEL_H
#define PROXY_KERNEL_KERNEL_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/ipc.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/types.h>

#include "proxy.h"

struct iovec;
struct ipc_perm;
struct proxy_fd;
struct proxy_keys;
struct proxy_mqd;
struct proxy_mqueue;
struct proxy_msg_queue;
struct proxy_ns;
struct proxy_outside;
struct proxy_perf;
struct proxy_seccomp_filter;
struct proxy_sem_set;
struct proxy_shm_seg;
struct proxy_signalfd;
struct proxy_timerfd;
struct proxy_tty;

/* ---- ptrace between guests (kernel/ptrace.c) ----------------------------- */
/* Where a traced thread is stopped (PROXY_PT_NONE: it is not). */
enum proxy_pt_stop {
    PROXY_PT_NONE,
    PROXY_PT_SIGNAL,        /* signal-delivery-stop */
    PROXY_PT_SYSCALL_ENTER, /* syscall-enter-stop: the call re-runs after */
    PROXY_PT_SYSCALL_EXIT,
    PROXY_PT_EVENT,         /* PTRACE_EVENT_* */
    PROXY_PT_GROUP,         /* group-stop (seized: PTRACE_EVENT_STOP) */
};

/* How the tracer let it go on. */
enum proxy_pt_resume {
    PROXY_PT_CONT,
    PROXY_PT_SYSCALL,
    PROXY_PT_STEP,
    PROXY_PT_SYSEMU,      /* stop at each call's entry; the call is not made */
    PROXY_PT_SYSEMU_STEP, /* ... and single-step between them */
};

struct proxy_ptrace {
    int tracer;             /* the tracing process's run pid; 0: none */
    bool seized;
    uint32_t options;       /* PTRACE_O_* */
    enum proxy_pt_resume resume;
    enum proxy_pt_stop stop;
    int status;             /* the wait status its stop reports */
    bool reported;          /* a wait of the tracer took that status */
    siginfo_t info;         /* PTRACE_GETSIGINFO */
    uint64_t msg;           /* PTRACE_GETEVENTMSG */
    /* To come before it runs user code again: an event stop, the exit
     * stop of the call it is in, a signal the tracer gave it. */
    int event_pending;      /* PTRACE_EVENT_*, 0: none */
    uint64_t event_msg;
    bool in_syscall;        /* its call returned; the exit stop is next */
    bool entry_done;        /* the call it re-runs had its entry stop */
    bool rerun_tried;       /* ... and, woken from its wait, ran again once
                               before any signal was delivered */
    bool interrupted;       /* a syscall-exit-stop for a call a signal
                               interrupted (rax -ERESTART*): it re-runs */
    bool exit_event_done;   /* ... its PTRACE_EVENT_EXIT */
    /* A thread (not the group's leader) that exited while traced: a
     * zombie its tracer's wait reaps (WIFEXITED, status in `status`). */
    bool exit_unreaped;
    /* Its call's PTRACE_EVENT_SECCOMP was reported: the filters' run when
     * the call is made again allows SECCOMP_RET_TRACE (Linux's
     * recheck_after_trace). Until the call completes. */
    bool seccomp_done;
    int64_t orig_rax;       /* the call's number (-1: not in a call) */
    bool skip_call;         /* the tracer set orig_rax -1 at the entry */
    bool emulated;          /* the entry stop was PTRACE_SYSEMU's: the call
                               is skipped whatever orig_rax says */
    int64_t skip_result;
    int inject;             /* a signal to deliver now, 0: none */
    siginfo_t inject_info;
    bool step_tf;           /* TF is set for PTRACE_SINGLESTEP */
    /* Breakpoints the backend cannot arm (kvm_pvm has no guest debug
     * registers), kept by single-stepping: TF set while any is enabled,
     * each step checks them; the watched bytes as last seen. */
    bool dr_stepped, sw_tf;
    uint64_t dr_seen[4];
    uint64_t dr6_stepped;   /* the stepped breakpoints that fired */
    /* Stopped in place while it waited in a call (PTRACE_INTERRUPT, an
     * attach's SIGSTOP): the wait it goes back to (PROXY_THREAD_*). */
    bool in_place;
    int saved_state;
    /* A seized group-stop: PTRACE_LISTEN'd; a SIGCONT came during it. */
    bool listening, cont_notify;
    uint64_t dr[8];         /* the user area's debug registers */
};

/* Closes the host fds the run's file handle table holds (fs/handle.c). */
void proxy_handles_world_free(struct proxy_world *w);

/* ---- threads, futexes, sleeps (kernel/thread.c) -------------------------- */
/*
 * Guest threads of one process share its VM and take turns on its single
 * vCPU. The running thread's per-thread fields live in proxy_process (tid,
 * sigmask, altstack, clear_child_tid, robust_list) and on the vCPU
 * (registers, FS/GS base, XSAVE state); a switch saves them into the
 * outgoing proxy_thread and loads the incoming one. A thread switches only
 * when it blocks, yields, exits or ends its syscall quantum, so the order of
 * events is a function of the program alone.
 */
enum proxy_thread_state {
    PROXY_THREAD_RUNNABLE,
    PROXY_THREAD_FUTEX_WAIT,
    PROXY_THREAD_EXITED,
    PROXY_THREAD_WAIT_FD,       /* a host fd becoming ready (re-runs) */
    PROXY_THREAD_WAIT_CHILD,    /* a child changing state (re-runs) */
    PROXY_THREAD_WAIT_VFORK,    /* the vfork child to exec or exit */
    PROXY_THREAD_WAIT_SLEEP,    /* nanosleep: its deadline, or a signal */
    PROXY_THREAD_WAIT_RETRY,    /* try the call again at a deadline */
    PROXY_THREAD_WAIT_SIGNAL,   /* a signal (signal.c: pause, sigsuspend,
                                   sigtimedwait, signalfd reads) */
    PROXY_THREAD_PTRACE_STOP,   /* stopped for its tracer (ptrace.c) */
};

/* What a thread in PROXY_THREAD_FUTEX_WAIT waits as (futex_pi.c). */
enum proxy_futex_kind {
    PROXY_FUTEX_PLAIN,      /* FUTEX_WAIT, FUTEX_WAIT_BITSET */
    PROXY_FUTEX_PI,         /* FUTEX_LOCK_PI, LOCK_PI2; a requeued one */
    PROXY_FUTEX_REQUEUE_PI, /* FUTEX_WAIT_REQUEUE_PI, not yet requeued */
    PROXY_FUTEX_WAITV,      /* futex_waitv: futex_waitv_keys, not futex_key */
};

/* What a thread in PROXY_THREAD_WAIT_SIGNAL waits in (signal.c). */
enum proxy_sigwait_kind {
    PROXY_SIGWAIT_NONE,
    PROXY_SIGWAIT_SUSPEND,  /* pause, rt_sigsuspend: -EINTR is pre-set */
    PROXY_SIGWAIT_TIMED,    /* rt_sigtimedwait: re-runs, never restarted */
    PROXY_SIGWAIT_SIGNALFD, /* a signalfd read: re-runs like a read */
    PROXY_SIGWAIT_POLL,     /* ppoll/pselect on no fd with a timeout: as
                             * SUSPEND, the deadline's result 0 */
};

/* io.c's waiting state of one thread, which must outlive a park. */
struct proxy_thread_io {
    /* the epoll instance a poll or select on several fds is parked on */
    bool has_epoll;
    int epoll_fd;
    /* a blocking FIFO open for reading parked until a writer comes: its
     * host fd (opened O_NONBLOCK, so the FIFO has this reader, as a
     * reader waiting in Linux's open counts) and whether a writer of the
     * run opened the FIFO since (fs.c) */
    bool fifo_parked;
    bool fifo_partner;
    int fifo_fd;
    dev_t fifo_dev;
    ino_t fifo_ino;
};

/* A blocking transfer parked part way (kernel/xfer_progress.c): the call, by
 * its syscall number and first three arguments, and the bytes it moved. */
struct proxy_xfer_progress {
    bool active;
    uint64_t nr;
    uint64_t args[3];
    uint64_t done_bytes;
};

struct proxy_thread {
    int tid;
    enum proxy_thread_state state;
    uint64_t events;            /* its syscalls and trapped TSC reads */
    uint64_t cpu_ns;            /* its CPU time: DET_EVENT_NS per event and
                                 * vDSO read, and the slices it computed;
                                 * never the time it spent blocked */
    uint64_t sched_slot;        /* the scheduler's word (--chaos priority) */
    bool spinning;              /* cut by a slice since its last syscall */
    /* --progress software: units left of its quantum (0: a new one),
     * kept across exits so its counter's trap falls at the same unit
     * whatever exits came between (world.c) */
    uint64_t progress_left;
    /* The call it last made, as it entered it (table.c): its number, six
     * arguments, sp and the pc it returns to; /proc/PID/syscall shows it
     * while the thread is blocked there (procfile.c). */
    struct proxy_thread_call {
        uint64_t nr, args[6], sp, pc;
    } call;
    struct vmm_regs regs;       /* saved while off the vCPU */
    uint64_t fs_base, gs_base;
    uint8_t *xstate;            /* saved XSAVE image */
    uint64_t sigmask;
    stack_t altstack;
    gva_t clear_child_tid, robust_list;
    /* futex wait */
    gva_t futex_uaddr;
    /* what the waiter waits on: (process, address) for a private futex;
     * (file dev, ino, offset) for one in MAP_SHARED memory, which threads
     * of every process mapping it share */
    uint64_t futex_key[3];
    uint32_t futex_bitset;
    /* futex_waitv: the keys waited on (owned, kept until the next call or
     * the thread's end); a wake returns the index of the one woken */
    uint64_t (*futex_waitv_keys)[3];
    int futex_nr_waitv;
    /* a PI waiter (futex_pi.c): what it waits as, the owner it waits on;
     * a requeue-PI waiter the PI futex it is to get, and whether it was
     * moved onto it already */
    enum proxy_futex_kind futex_kind;
    int futex_pi_owner;
    gva_t futex_uaddr2;
    uint64_t futex_key2[3];
    bool futex_requeued;
    uint64_t wait_seq;          /* FIFO order of waiters */
    bool has_deadline;
    uint64_t deadline_ns;       /* CLOCK_MONOTONIC */
    /* other waits */
    int wait_host_fd;
    short wait_events;
    /* WAIT_FD for POLLIN: ready only once more than this many bytes are
     * queued (FIONREAD), or at hang-up or error; -1: at any readiness. A
     * MSG_WAITALL|MSG_PEEK that peeked part waits so, for new data. */
    int wait_queued_above;
    int wait_vfork_pid;
    int wait_pid;               /* WAIT_CHILD: the wait's pid (a run's pid,
                                 * -1, 0 or minus a group) */
    int wait_options;           /* WAIT_CHILD: the wait's options */
    gva_t sleep_rem;            /* WAIT_SLEEP: where the remainder goes */
    /* Linux's restart_block for an interrupted sleep: the thread is left
     * on restart_syscall, which sleeps on to the same deadline when no
     * handler runs (a tracer's suppressed or ignored signal, a stop) */
    bool restart_sleep;
    uint64_t restart_deadline_ns;
    gva_t restart_rem;
    bool poll_deadline;         /* has_deadline belongs to a poll/select */
    bool poll_timed_out;        /* ...and it passed: the re-run returns 0 */
    struct proxy_thread_io io;
    /* a blocking write, send or MSG_WAITALL receive parked part way */
    struct proxy_xfer_progress xfer;
    bool restartable;           /* parked on a re-runnable syscall */
    /* It waited (blocked in a call) since it last had the vCPU: once
     * runnable, it wants its turn soon (world.c: other_wants_vcpu). */
    bool waited;
    bool eintr_on_handler;      /* ...one Linux never restarts (poll...) */
    /* signals sent to this thread alone (tgkill, tkill, raise): Linux's
     * private queue, taken before the process's shared one */
    uint64_t own_pending;
    siginfo_t *own_info;        /* PROXY_NSIG entries, allocated on use */
    /* signal waits (signal.c): sigwait_set wakes the thread even while
     * blocked (sigtimedwait, signalfd); sigwait_timed_out is set when its
     * deadline expires (the re-run returns EAGAIN) */
    enum proxy_sigwait_kind sigwait_kind;
    uint64_t sigwait_set;
    bool sigwait_timed_out;
    /* rt_sigsuspend's caller mask: the next handler frame saves it as
     * uc_sigmask (Linux's saved_sigmask), so sigreturn restores it */
    bool saved_sigmask_valid;
    uint64_t saved_sigmask;
    char comm[16];              /* PR_SET_NAME (the main thread's is the
                                   process's comm) */
    /* The guest's own seccomp filters (kernel/seccomp.c): a chain shared
     * by reference, newest first; strict mode. */
    struct proxy_seccomp_filter *seccomp;
    bool seccomp_strict;
    bool tsc_sigsegv; /* PR_TSC_SIGSEGV (prctl.c): a trapped RDTSC is a
                       * #GP; clone, fork and execve keep it */
    /* Syscall user dispatch (kernel/user_dispatch.c): calls returning
     * outside [dispatch_offset, +dispatch_len) consult the selector byte;
     * off in a new thread, a fork child and after execve. */
    bool dispatch_on;
    uint64_t dispatch_offset, dispatch_len;
    gva_t dispatch_selector;
    /* A semop waiting (kernel/sysvsem.c): on which set and semaphore,
     * for zero or for more, until when (0: no timeout). */
    bool sem_pending, sem_wait_zero;
    int sem_wait_id, sem_wait_num;
    uint64_t sem_deadline_ns;
    /* A msgsnd/msgrcv waiting on queue msg_wait_id (kernel/sysvmsg.c). */
    bool msg_pending;
    int msg_wait_id;
    /* Traced by another guest (kernel/ptrace.c). */
    struct proxy_ptrace pt;
    /* Its registered struct rseq (kernel/rseq.c), 0: none. */
    gva_t rseq;
    uint32_t rseq_len, rseq_sig;
    /* Its thread keyring's serial, 0: none (kernel/keys.c). */
    int32_t key_thread;
};

/* ---- the world of processes and its loop (kernel/world.c) ---------------- */
/*
 * Every guest process of a run, in creation order. One is on the (host)
 * CPU at a time; the next is chosen by detcore's rule: the first runnable
 * thread after the current one, processes in creation order.
 */
struct proxy_world {
    struct vmm_host *host;
    struct proxy_process **procs;
    int nr_procs, cap_procs;
    int cur;
    int next_pid;
    bool ended;
    int end_status;             /* the first process's wait status */
    struct proxy_timerfd **timerfds; /* every live timerfd (timerfd.c) */
    int nr_timerfds, cap_timerfds;
    struct proxy_perf **perfs;  /* every open perf event (perf_event.c) */
    int nr_perfs, cap_perfs;
    uint64_t perf_ids;          /* the last event id given */
    /* A pidfd was made in this run (pidfd.c): until then an exit looks
     * for none in every process's fd table. */
    bool pidfds_made;
    /* A process became a child subreaper in this run (prctl.c): until then
     * an exit does not walk up its ancestors for one. */
    bool subreapers_made;
    /* The OOM backstop (memlimit.c): hvrun's anonymous memory at the start
     * of the run, and when to measure next (host time). */
    bool oom_baseline_set;
    int64_t oom_baseline, oom_next_check_ns;
    int forced_tid; /* --schedule: the thread the next pick takes, or 0 */
    /* --linger: the first process has exited (its status is end_status's
     * to be); the run's stdout and stderr as (dev, ino), what holding
     * them means. */
    bool first_done;
    uint64_t out_id[2][2];
    /* System V shared memory segments of the run (kernel/sysvshm.c). */
    struct proxy_shm_seg **shm;
    int nr_shm, next_shmid;
    /* ... and semaphore sets (kernel/sysvsem.c). */
    struct proxy_sem_set **sem;
    int nr_sem, next_semid;
    /* ... and message queues (kernel/sysvmsg.c). */
    struct proxy_msg_queue **msg;
    int nr_msg, next_msgid;
    /* hvrun record / replay: the run's TCP, AF_UNIX stream and UDP
     * exchanges with peers outside it, relayed through hvrun
     * (net/outside.c, outside_udp.c); NULL: none yet. */
    struct proxy_outside *outside;
    /* Which host port stands for which of the run's ports (net/
     * inet_port.c); NULL: no bind to port 0 yet. */
    struct proxy_inet_ports *inet_ports;
    /* POSIX message queues by name (kernel/mqueue.c), their bytes charged
     * against RLIMIT_MSGQUEUE. */
    struct proxy_mqueue *mqueues;
    int nr_mqueues;
    size_t mq_bytes;
    /* Namespaces the run's processes made (kernel/namespace.c), in
     * creation order; they live as long as the run. */
    struct proxy_ns **ns_all;
    int nr_ns, cap_ns;
    /* Whose System V objects shm/sem/msg above are (NULL: the initial
     * IPC namespace's, kept in ipc_root while another's are here). */
    struct proxy_ns *ipc_cur, *ipc_root;
    /* The terminals that are some session's controlling tty (io/tty.c). */
    struct proxy_tty *ttys;
    int nr_ttys;
    /* The run's keys and keyrings (kernel/keys.c); NULL: none yet. */
    struct proxy_keys *keys;
    /* The file handles the run minted (fs/handle.c); NULL: none yet. */
    struct proxy_handles *handles;
    /* Address spaces made so far after the first process's: the last
     * proxy_process mm_id given (kcmp's KCMP_VM order). */
    uint64_t last_mm_id;
    /* The last proxy_fs_state fs_id given (KCMP_FS order). */
    uint64_t last_fs_id;
    /* The last SEM_UNDO list id given (kernel/sysvsem.c: KCMP_SYSVSEM
     * order). */
    uint64_t last_sem_undo_id;
};

/* ---- threads, futexes, sleeps (kernel/thread.c) -------------------------- */
/* How long a lock wait sleeps, in logical time, between two tries. */
#define PROXY_LOCK_RETRY_NS 1000000ULL

/* ---- ptrace between guests (kernel/ptrace.c) ----------------------------- */
/* Writes guest memory of q as FOLL_FORCE does: through read-only private
 * mappings (a breakpoint into text; PROT_NONE too), never a shared or
 * special mapping q may not write; page by page; 0 or -EFAULT. */
int proxy_mem_write_forced(struct proxy_process *q, uint64_t addr,
                           const void *src, size_t len);

/* Reads guest memory of q as FOLL_FORCE does (PROT_NONE too, a special
 * mapping only where q may read it); 0 or -EFAULT. */
int proxy_mem_read_forced(struct proxy_process *q, uint64_t addr, void *dst,
                          size_t len);

extern const struct proxy_syscall proxy_ptrace_syscalls[];

/* ---- identity, limits, system reports, sessions (kernel/sys.c) ----------- */
/* Whether pid, as viewer names it, is the virtual init or the virtual
 * shell (neither a guest process: signals to them are accepted and
 * dropped; the init's /proc/1 is made by fs/procfs.c, the shell has no /proc
 * entry); if so, its process group and session. */
bool proxy_virtual_process(const struct proxy_process *viewer, int pid,
                           int *pgid, int *sid);

/* Whether process group pgrp is orphaned (sys.c): Linux then drops the
 * stop signals SIGTSTP, SIGTTIN and SIGTTOU of its default action, and
 * a terminal's job control answers EIO. */
bool proxy_pgrp_orphaned(struct proxy_world *w, int pgrp);

extern const struct proxy_syscall proxy_sys_syscalls[];

/* ---- signals (kernel/signal.c) ------------------------------------------- */
extern const struct proxy_syscall proxy_signal_syscalls[];

/* The pending signals thread tid may take: process-directed ones and
 * those sent to it (tgkill), as Linux's shared and private queues. */
uint64_t proxy_signal_pending_for(const struct proxy_process *p, int tid);

/* Queues a signal for one thread of the process (tgkill, tkill, raise).
 * 0, or -EAGAIN: a real-time signal sent otherwise than by kill() when
 * the process's RLIMIT_SIGPENDING is reached (Linux's sigqueue_alloc
 * failing for a signal that may not lose its siginfo). */
int proxy_signal_raise_thread(struct proxy_process *p, int tid, int signo,
                              const siginfo_t *info);

/* Queues a signal for the process; its result as above. */
int proxy_signal_raise(struct proxy_process *p, int signo,
                       const siginfo_t *info);

/* Removes the lowest pending signal in set (blocked or not) and copies its
 * siginfo to *info; returns its number, or 0 when none is pending. */
int proxy_signal_dequeue(struct proxy_process *p, uint64_t set,
                         siginfo_t *info);

/* Whether the current thread would take a pending signal now (unblocked
 * by its mask, a temporary one of ppoll/pselect included, not ignored). */
bool proxy_signal_would_take(struct proxy_process *p);

/* pause(): parks the current thread until a signal it takes is pending
 * (the scheduler runs the others meanwhile); the call then ends with
 * -EINTR after the handler. */
long proxy_signal_suspend(struct proxy_process *p);
/* The same for at most ns of logical time, whose end returns 0 (a
 * ppoll/pselect on no fd): the call's temporary mask stays until then. */
long proxy_signal_suspend_for(struct proxy_process *p, uint64_t ns);

/* ---- clocks (kernel/time.c) ---------------------------------------------- */
extern const struct proxy_syscall proxy_time_syscalls[];

/* CLOCK_THREAD_CPUTIME_ID (the current thread's cpu_ns) or
 * CLOCK_PROCESS_CPUTIME_ID (all its threads') as the guest reads it
 * (kernel/time.c): the host's with --no-virtualize-time. Other clocks: 0. */
uint64_t proxy_cpu_clock_ns(struct proxy_process *p, int clockid);

/* The same without counting a read (the vDSO's page, mm/vdso.c). */
uint64_t proxy_cpu_clock_base(const struct proxy_process *p, int clockid);

/* The current thread ran for ns more (an event, vDSO reads, a slice). */
void proxy_cpu_charge(struct proxy_process *p, uint64_t ns);

/* ---- credentials (kernel/cred.c) ----------------------------------------- */
extern const struct proxy_syscall proxy_cred_syscalls[];

/* hvrun's supplementary groups kept as they are now, for getgroups and
 * /proc/PID/status to report when a user namespace (a non-root replay's,
 * cli/isolate.c) would show them as the overflow gid (kernel/cred.c). */
void proxy_keep_host_groups(void);

/* Those (or, not kept, the live ones): getgroups' contract, -errno. */
int proxy_host_groups(gid_t *out, int max);

/* ---- scheduling (kernel/sched.c) ----------------------------------------- */
extern const struct proxy_syscall proxy_sched_syscalls[];

/* ---- prctl (kernel/prctl.c) ---------------------------------------------- */
extern const struct proxy_syscall proxy_prctl_syscalls[];

/* The name of q's thread tid (0 or q's pid: the process's comm). */
char *proxy_thread_comm_of(struct proxy_process *q, int tid);

/* ---- the guest's seccomp filters (kernel/seccomp.c) ---------------------- */
extern const struct proxy_syscall proxy_seccomp_syscalls[];

void proxy_seccomp_unref(struct proxy_seccomp_filter *f);

/* Runs the calling thread's filters on the call about to be dispatched:
 * true when it is not to be made, with *ret its result (an errno, the
 * result a trap leaves, or PROXY_RET_NORETURN when it killed). */
bool proxy_seccomp_blocks(struct proxy_process *p, uint64_t nr,
                          const uint64_t args[6], uint64_t ip, long *ret);

/* How many filters thread t runs under. */
int proxy_seccomp_filters(const struct proxy_thread *t);

/* ---- System V semaphores (kernel/sysvsem.c) ------------------------------ */
extern const struct proxy_syscall proxy_sysvsem_syscalls[];

/* A process that is destroyed without an exit (a failed fork) lets its
 * SEM_UNDO list go, applying nothing (kernel/sysvsem.c). */
void proxy_sem_undo_drop(struct proxy_process *p);
int proxy_sem_proc_line(const struct proxy_process *viewer, int i,
                        char *line, size_t cap);

/* ---- System V message queues (kernel/sysvmsg.c) -------------------------- */
extern const struct proxy_syscall proxy_sysvmsg_syscalls[];

/* System V message queues (kernel/sysvmsg.c): queue i as a
 * /proc/sysvipc/msg line, its ids as viewer's user namespace sees them
 * (0 past the last); the run's queues freed. */
int proxy_msg_proc_line(const struct proxy_process *viewer, int i,
                        char *line, size_t cap);

/* ---- adjtimex, clock_adjtime (kernel/adjtime.c) -------------------------- */
extern const struct proxy_syscall proxy_adjtime_syscalls[];

/* ---- acct (kernel/acct.c) ------------------------------------------------ */
extern const struct proxy_syscall proxy_acct_syscalls[];

/* ---- the key retention service (kernel/keys.c) --------------------------- */
extern const struct proxy_syscall proxy_keys_syscalls[];

/* Line i of /proc/keys (empty for a key the viewer may not view) and of
 * /proc/key-users, 0 past the last (fs/procfs.c reads them). */
int proxy_keys_proc_line(struct proxy_process *viewer, int i, char *line,
                         size_t cap);
int proxy_keys_users_line(struct proxy_process *viewer, int i, char *line,
                          size_t cap);

/* ---- kcmp (kernel/kcmp.c) ------------------------------------------------ */
/* kcmp(2) over the process model's objects (kernel/kcmp.c). */
extern const struct proxy_syscall proxy_kcmp_syscalls[];
/* lsm_list_modules, lsm_get_self_attr, lsm_set_self_attr (kernel/lsm.c). */
extern const struct proxy_syscall proxy_lsm_syscalls[];

/* ---- CLONE_FS (kernel/procsys.c) ----------------------------------------- */
/* p changed its cwd or umask: every other live process sharing its
 * fs_struct (clone's CLONE_FS) gets the same. */
void proxy_fs_share_sync(struct proxy_process *p);
/* unshare(CLONE_FS): p's own fs_struct from now on, if another live
 * process shared it. */
void proxy_fs_unshare(struct proxy_process *p);

/* ---- pidfds (kernel/pidfd.c) --------------------------------------------- */
/* Process file descriptors (kernel/pidfd.c): pidfd_open,
 * pidfd_send_signal, pidfd_getfd. */
extern const struct proxy_syscall proxy_pidfd_syscalls[];
bool proxy_pidfd_is(struct proxy_process *p, int guest_fd);
/* A new pidfd of q in p (O_CLOEXEC; PIDFD_NONBLOCK): the guest fd or
 * -errno (pidfd_open, clone's CLONE_PIDFD). */
int proxy_pidfd_install(struct proxy_process *p, struct proxy_process *q,
                        bool nonblock);
/* ioctl on a pidfd: PIDFD_GET_INFO, else ENOTTY; 1 when guest_fd is no
 * pidfd. */
long proxy_pidfd_ioctl(struct proxy_process *p, int guest_fd,
                       unsigned int req, gva_t arg);
/* The capability sets capget shows (cred.c): what capset kept, else the
 * euid's (all for root, none otherwise; PR_SET_KEEPCAPS's kept ones). */
void proxy_cred_caps(const struct proxy_process *p, uint64_t *eff,
                     uint64_t *perm, uint64_t *inh);

/* The nsfs ioctls on an fd of namespace ns of type (namespace.c): a
 * value, or -errno; for NS_GET_USERNS/NS_GET_PARENT *rel_type >= 0 names
 * the namespace (*rel) the caller opens an fd of. */
long proxy_ns_ioctl(struct proxy_process *p, int type, struct proxy_ns *ns,
                    unsigned int req, gva_t arg, struct proxy_ns **rel,
                    int *rel_type);
/* "type:[inum]", a namespace fd's link (namespace.c). */
int proxy_ns_link_of(int type, const struct proxy_ns *ns, char *out,
                     size_t cap);

/* PR_CAPBSET_READ (drop false) and PR_CAPBSET_DROP (cred.c). */
long proxy_cred_capbset(struct proxy_process *p, bool drop, uint64_t cap);
/* The ambient set (/proc/PID/status's CapAmb), and prctl(PR_CAP_AMBIENT,
 * op, cap, arg4, arg5) on it (cred.c); no_raise: SECBIT_NO_CAP_AMBIENT_RAISE. */
uint64_t proxy_cred_ambient(const struct proxy_process *p);
/* execve's ids and dumpability (cred.c): file is the program's stat
 * (NULL: unknown), nosuid its mount's flag, traced_unprivileged whether a
 * tracer without CAP_SYS_PTRACE traces the caller. */
struct stat;
void proxy_cred_exec(struct proxy_process *p, const struct stat *file,
                     bool nosuid, bool traced_unprivileged);
long proxy_cred_ambient_prctl(struct proxy_process *p, const uint64_t a[6],
                              bool no_raise);

/* ptrace_may_access (kernel/ptrace.c): p may read or attach to q (itself,
 * as root, or with all of q's ids its real ones and q dumpable). */
bool proxy_ptrace_may_access(const struct proxy_process *p,
                             const struct proxy_process *q);

/* The process a pidfd names: 0, -EBADF (no pidfd) or -ESRCH (reaped). */
long proxy_pidfd_process(struct proxy_process *p, int guest_fd,
                         struct proxy_process **out);

/* ---- restartable sequences (kernel/rseq.c) ------------------------------- */
/* Restartable sequences (kernel/rseq.c): the current thread, back on the
 * vCPU after another ran or about to take a signal, leaves a critical
 * section it was in for the section's abort handler. */
extern const struct proxy_syscall proxy_rseq_syscalls[];

/* ---- POSIX message queues (kernel/mqueue.c) ------------------------------ */
/* POSIX message queues (kernel/mqueue.c): a descriptor's reference
 * dropped (closer: the fd table of the process closing it, for
 * mq_notify's owner), shared by a dup or fork, read as its status line
 * (iov: host iovecs); the run's names freed. */
extern const struct proxy_syscall proxy_mqueue_syscalls[];
void proxy_mqd_put(struct proxy_mqd *d, const struct proxy_fdtable *closer);
void proxy_mqd_share(struct proxy_fd *to, const struct proxy_fd *from);
/* hvrun's own fd of d's eventfd (the guest's fd is a dup of it), and
 * whether d's queue has a SIGEV_THREAD registration (a host queue of
 * hvrun's stands for it): what a checkpoint makes again or refuses. */
int proxy_mqd_efd(const struct proxy_mqd *d);
bool proxy_mqd_host_notify(const struct proxy_mqd *d);
long proxy_mq_xfer(struct proxy_process *p, int guest_fd, bool into_guest,
                   const struct iovec *iov, int n);

/* ---- namespaces (kernel/namespace.c) ------------------------------------- */
/* unshare, setns (kernel/namespace.c) */
extern const struct proxy_syscall proxy_ns_syscalls[];

/* Kernel id -> the id p sees (munged); guest id -> kernel id, or -1 when
 * p's user namespace does not map it. */
uint32_t proxy_ns_uid_seen(const struct proxy_process *p, uint32_t kuid);
uint32_t proxy_ns_gid_seen(const struct proxy_process *p, uint32_t kgid);

/* Whether p has its capabilities in its own user namespace (all of them
 * for its root, or for the creator of the namespace until it execs), and
 * in the run's initial one (what capable() checks: host-wide limits). */
bool proxy_ns_capable(const struct proxy_process *p);
/* proxy_ns_capable, and cap in its effective set: a capset (LTP's
 * TST_CAP_DROP, libcap's cap_set_proc) that cleared cap from the effective
 * set takes that one capability away where a check uses this. */
bool proxy_ns_capable_cap(const struct proxy_process *p, int cap);
/* Whether capset took cap out of p's effective set (the recorded sets;
 * until a capset they follow the euid, and nothing is dropped). */
bool proxy_cap_dropped(const struct proxy_process *p, int cap);
bool proxy_ns_init_capable(const struct proxy_process *p);

/* The UTS namespace's names when p has one of its own (NULL: detcore's
 * names, the run's initial namespace). */
const char *proxy_ns_nodename(const struct proxy_process *p);
const char *proxy_ns_domainname(const struct proxy_process *p);

/* The world holds one IPC namespace's System V objects at a time: this
 * makes them p's (table.c before each call, and the exit paths). */
void proxy_ns_ipc_enter(struct proxy_process *p);

/* /proc/PID/{uid_map,gid_map,setgroups} of process of: the content a
 * read shows p, and a write by p (Linux's map_write and
 * proc_setgroups_write rules). which: 0 uid_map, 1 gid_map, 2 setgroups. */
enum { PROXY_NSFILE_UID_MAP, PROXY_NSFILE_GID_MAP, PROXY_NSFILE_SETGROUPS };
int proxy_ns_file_content(const struct proxy_process *p,
                          const struct proxy_process *of, int which,
                          char *out, size_t cap);
long proxy_ns_file_write(struct proxy_process *p, struct proxy_process *of,
                         int which, const char *buf, size_t len);

/* /proc/PID/ns/NAME: the type it names (-1: none); its link text
 * "user:[4026531837]" for process of. */
int proxy_ns_type_of_name(const char *name);
int proxy_ns_link(const struct proxy_process *of, int type, char *out,
                  size_t cap);

/* The inode number of a namespace of that type (NULL: the initial). */
uint32_t proxy_ns_inum(int type, const struct proxy_ns *ns);

/* The namespace a /proc/PID/ns fd holds (procfile.c keeps it). */
struct proxy_ns *proxy_ns_of(const struct proxy_process *of, int type);

/* What viewer sees as q's pid (0: q is outside its pid namespace); a
 * pid number of the run (a pgid, a sid) as viewer sees it; the process
 * viewer calls vpid (NULL: none); viewer's vpid as a pid of the run (-1:
 * none). In the run's own pid namespace all four are the identity. */
int proxy_ns_pid_of(const struct proxy_process *viewer,
                    const struct proxy_process *q);
int proxy_ns_pid_nr(const struct proxy_process *viewer, int global);
struct proxy_process *proxy_ns_find(struct proxy_process *viewer, int vpid);
int proxy_ns_global_nr(struct proxy_process *viewer, int vpid);

/* How deep p's pid namespace is (0: the run's). */
int proxy_ns_pid_level(const struct proxy_process *p);

/* /proc/PID/ns/NAME's link by its name (pid_for_children and the
 * others), -1 for no such name. */
int proxy_ns_link_named(const struct proxy_process *of, const char *name,
                        char *out, size_t cap);

/* ---- syscall user dispatch (kernel/user_dispatch.c) ---------------------- */
/* Syscall user dispatch (kernel/user_dispatch.c): true when the call
 * returning to ret_ip is not made, *ret then its result (the number, a
 * SIGSYS forced) or PROXY_RET_NORETURN (the process was ended). */
bool proxy_user_dispatch_blocks(struct proxy_process *p, uint64_t nr,
                                uint64_t ret_ip, long *ret);

/* ---- threads, futexes, sleeps (kernel/thread.c) -------------------------- */
extern const struct proxy_syscall proxy_thread_syscalls[];

/* For poll/select/epoll with a finite timeout (re-run after a wake): the
 * logical deadline of this wait, set on the first run. Returns false once
 * it has passed (the call then reports a timeout). *left_ns: time left. */
bool proxy_thread_poll_deadline(struct proxy_process *p, uint64_t timeout_ns,
                                uint64_t *left_ns);

/* The wait is over (ready, timed out or interrupted). */
void proxy_thread_poll_done(struct proxy_process *p);

/* For a call that can only be retried (a held lock, a FIFO without a
 * reader): the thread waits ns of logical time (or a signal) and the call
 * runs again. Returns PROXY_RET_BLOCK. */
long proxy_thread_retry_after(struct proxy_process *p, uint64_t ns);

/* proxy_thread_sleep for ns from now. */
long proxy_thread_sleep_for(struct proxy_process *p, uint64_t ns, gva_t rem);

/* Closes what a thread's io.c state holds (the thread is going). */
void proxy_thread_io_release(struct proxy_thread *t);

/* A parked FIFO open given up (the call returned EINTR): its fd closed. */
void proxy_fifo_unpark(struct proxy_thread *t);

/* ---- the run (kernel/run.c) ---------------------------------------------- */
/* Runs the process until it exits. Returns the wait-status encoding of its
 * end, or -1 when hvrun itself failed (the reason is already printed). */
int proxy_run(struct proxy_process *p, struct vmm_host *host);

/* ---- perf events (kernel/perf_event.c) ----------------------------------- */
extern const struct proxy_syscall proxy_perf_syscalls[];
void proxy_perf_share(struct proxy_fd *to, const struct proxy_fd *from);
void proxy_perf_put(struct proxy_perf *e);

/* read/readv of a perf fd (positional: pread and the like). */
long proxy_perf_xfer(struct proxy_process *p, struct proxy_perf *e,
                     bool into_guest, bool positional, const struct iovec *iov,
                     int n);

/* A perf ioctl; 1 when req is not one (the generic ones go on). */
long proxy_perf_ioctl(struct proxy_process *p, struct proxy_perf *e,
                      unsigned int req, uint64_t arg);

/* ---- the world of processes and its loop (kernel/world.c) ---------------- */
struct proxy_process *proxy_world_find(struct proxy_world *w, int pid);

/* The process one of whose live threads has tid id (its leader's pid
 * included), or NULL: Linux's find_task_by_vpid, whose answer kill(2) and
 * /proc/<id>/ use for a thread that is not its process's leader. */
struct proxy_process *proxy_world_find_tid(struct proxy_world *w, int id);

/* Set from a host signal handler (SIGINT/SIGTERM/SIGHUP to hvrun): the run
 * ends at the next event, every guest is dropped and cleaned up. */
extern volatile sig_atomic_t proxy_stop_signal;

/* The detlog's records when the run stopped so (the guest's teardown
 * logs more after), and its settled events then (proxy_world_settled). */
extern uint64_t proxy_stop_detlog, proxy_stop_events;

/* The run's events less the clock reads folded at host interruptions and
 * not yet logged: the count at the last point of the guests' own progress,
 * the same in every run at the same detlog record. */
uint64_t proxy_world_settled_events(const struct proxy_world *w);

/* Parks the current thread until host_fd is ready for events (POLLIN,
 * POLLOUT); returns PROXY_RET_BLOCK for the handler to return. */
long proxy_block_on_fd(struct proxy_process *p, int host_fd, short events);

/* The same with a timeout on the logical clock (0: none), kept across the
 * call's re-runs: once it has passed, -EAGAIN instead of parking. */
long proxy_block_on_fd_for(struct proxy_process *p, int host_fd,
                           short events, uint64_t timeout_ns);

/* proxy_block_on_fd_for(POLLIN), but woken only when more than
 * queued_above bytes are there to read (or at hang-up or error). */
long proxy_block_on_fd_more(struct proxy_process *p, int host_fd,
                            int queued_above, uint64_t timeout_ns);

/* Whether a blocking host call now could stall another guest thread. */
bool proxy_others_runnable(const struct proxy_process *p);

/* Whether any other guest thread of the run is still alive. */
bool proxy_others_alive(const struct proxy_process *p);

/* ---- processes: fork, exec, exit, wait, job control (kernel/procsys.c) --- */
extern const struct proxy_syscall proxy_procsys_syscalls[];

/* ---- alarm, itimers, POSIX timers (kernel/timer.c) ----------------------- */
extern const struct proxy_syscall proxy_timer_syscalls[];

/* ---- file access with the guest's ids (kernel/fscred.c) ------------------ */
/* A guest's file access checked with its own ids (kernel/fscred.c): the
 * thread takes p's fsuid, fsgid and groups while p's handler runs, where
 * hvrun may change ids; hvrun's own files inside a handler are written
 * between suspend and resume. */
void proxy_fscred_enter(const struct proxy_process *p);
void proxy_fscred_leave(void);
/* hvrun's own ids on the thread now (a guest's stay after leave until a
 * guest with others is served, or this). */
void proxy_fscred_own(void);
const struct proxy_process *proxy_fscred_suspend(void);
void proxy_fscred_resume(const struct proxy_process *was);

/* access(2)'s check with the real ids: true when the thread took them
 * (then ask with AT_EACCESS, and end it). */
bool proxy_fscred_real_begin(const struct proxy_process *p);
void proxy_fscred_real_end(void);

/* ---- System V IPC objects' permissions (kernel/sysvipc.c) ---------------- */
/* A new object's permissions: the caller's ids, the mode bits of flags. */
void proxy_ipc_perm_init(struct ipc_perm *perm, const struct proxy_process *p,
                         int32_t key, int flags);

/* ipcperms: want (4 read, 2 write) in the owner's, group's or others'
 * bits; root passes. */
bool proxy_ipc_permitted(const struct proxy_process *p,
                         const struct ipc_perm *perm, int want);

/* What a *get of an existing object with flags asks for. */
int proxy_ipc_wanted(int flags);

/* IPC_SET and IPC_RMID: the owner, creator or root. */
bool proxy_ipc_owner(const struct proxy_process *p,
                     const struct ipc_perm *perm);

/* IPC_SET's change: owner ids (the caller's user namespace's, -EINVAL
 * when it does not map them) and the mode's permission bits; 0 or
 * -EINVAL. */
long proxy_ipc_perm_set(const struct proxy_process *p, struct ipc_perm *perm,
                        const struct ipc_perm *to);

/* IPC_STAT's ids as the caller's user namespace sees them. */
void proxy_ipc_perm_seen(const struct proxy_process *p, struct ipc_perm *perm);

/* Seconds of the run's CLOCK_REALTIME (the objects' times). */
int64_t proxy_ipc_now_s(struct proxy_process *p);

/* ---- signalfd (kernel/signalfd.c) ---------------------------------------- */
extern const struct proxy_syscall proxy_signalfd_syscalls[];

/* Whether guest_fd is a signalfd of p. */
bool proxy_signalfd_is(struct proxy_process *p, int guest_fd);

/* read/readv (into_guest) of a signalfd into host iovecs over guest
 * memory: struct signalfd_siginfo records of dequeued signals, -EINVAL for
 * less than one record or a write, -EAGAIN (O_NONBLOCK) or
 * PROXY_RET_BLOCK when none is pending. */
long proxy_signalfd_xfer(struct proxy_process *p, int guest_fd,
                         bool into_guest, const struct iovec *iov, int n);

/* The fd table's hooks: a dup (or fork's copy) shares from's context;
 * put drops one reference (NULL is fine). */
void proxy_signalfd_share(struct proxy_fd *to, const struct proxy_fd *from);
void proxy_signalfd_put(struct proxy_signalfd *s);
/* Its mask, bit sig-1 (fdinfo's sigmask). */
uint64_t proxy_signalfd_mask(const struct proxy_signalfd *s);

/* ---- timerfd (kernel/timerfd.c) ------------------------------------------ */
extern const struct proxy_syscall proxy_timerfd_syscalls[];

void proxy_timerfd_share(struct proxy_fd *to, const struct proxy_fd *from);
void proxy_timerfd_put(struct proxy_timerfd *t);
/* hvrun's own fd of t's eventfd (the guest's fd is a dup of it), where
 * expirations are added: a checkpoint makes both again as one. */
int proxy_timerfd_efd(const struct proxy_timerfd *t);
/* fdinfo's lines of a timerfd (timerfd_show) into out (snprintf's
 * result), ticks its unread expirations (the eventfd's count). */
int proxy_timerfd_fdinfo(const struct proxy_timerfd *t, uint64_t ticks,
                         char *out, size_t cap);

/* ---- transfers parked part way (kernel/xfer_progress.c) ------------------ */
uint64_t proxy_xfer_resume(struct proxy_process *p);
void proxy_xfer_forget(struct proxy_process *p);

/* Keeps `done` bytes (if any) as the progress of the call being served. */
void proxy_xfer_keep(struct proxy_process *p, uint64_t done);
bool proxy_xfer_can_keep(const struct proxy_process *p);

/* Parks the call after `done` bytes (kept for its re-run), as
 * proxy_block_on_fd_for; once the timeout has passed, the result is
 * `done` (as in Linux), or -EAGAIN when nothing moved. */
long proxy_xfer_park(struct proxy_process *p, uint64_t done, int host_fd,
                     short events, uint64_t timeout_ns);

/* The same for a peek that saw `done` bytes: woken by more data only. */
long proxy_xfer_park_peek(struct proxy_process *p, uint64_t done, int host_fd,
                          uint64_t timeout_ns);

/* Blocking transfers parked part way (kernel/xfer_progress.c). For the call
 * being served: the bytes it moved before it parked, if it is that call
 * run again, else 0 (done_before looks; resume also forgets the record,
 * to be kept again by a park); forget drops it. can_keep: whether the
 * process has a thread to keep it with (else a transfer returns short). */
uint64_t proxy_xfer_done_before(struct proxy_process *p);

/* ---- System V shared memory (kernel/sysvshm.c) --------------------------- */
extern const struct proxy_syscall proxy_sysvshm_syscalls[];

/* Segment i of the run as a /proc/sysvipc/shm line into line; 0 past
 * the last. */
int proxy_shm_proc_line(const struct proxy_process *viewer, int i,
                        char *line, size_t cap);
/* gdb checkpoints (cli/gdbserver_checkpoint.c): whether a segment of the
 * run is attached anywhere (its mapping would be shared: refused), and
 * every segment's memory made a copy of its own (a new memfd, the same
 * file to the guests): the checkpoint's, then each restore's. 0 or
 * -errno. */
bool proxy_shm_attached(const struct proxy_world *w);
int proxy_shm_copy_segments(struct proxy_world *w);

#endif
