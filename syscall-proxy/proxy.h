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
#include "namespace.h"
#include "procfile.h"
#include "ptrace.h"

struct det_state;
struct proxy_cpuid_patched;

#define PROXY_NR_SYSCALLS 512
#define PROXY_RET_NORETURN (-100000L)
#define PROXY_RET_REGS_SET (-100001L)
/* The calling thread must wait (proxy_block_on_fd and friends set what
 * for); the syscall runs again from the start when the thread is woken. */
#define PROXY_RET_BLOCK (-100002L)
#define PROXY_PATH_MAX 4096
#define PROXY_NSIG 65 /* signals 1..64 */

/* ---- file descriptors ---------------------------------------------------- */

/*
 * The fd table maps guest fd numbers to host fds held by hvrun. Guest fds
 * of one open file description (dup, fork's copy) share one host fd,
 * counted across all guest processes (fdtable.c), so offset and status
 * flags are shared exactly as Linux shares them and a dup or fork costs no
 * host fd; the close-on-exec flag is per guest fd and kept here (host fds
 * are always O_CLOEXEC).
 */
enum proxy_fd_kind { PROXY_FD_FREE = 0, PROXY_FD_HOST };

struct proxy_dircache; /* a directory's sorted entries (fsmeta.c) */

struct proxy_fd {
    enum proxy_fd_kind kind;
    int host_fd;
    bool cloexec;
    /* The host file's identity, fstat'ed once on first need (fsmeta.c):
     * it cannot change while the host fd is open. */
    bool meta_known;
    mode_t host_type;           /* S_IFMT bits */
    uint64_t host_dev, host_ino;
    /* Directories read with metadata virtualised: the entries in name
     * order, shared by the guest fds dup'd from this one (refcounted). */
    struct proxy_dircache *dircache;
    /* Reads come from detcore's random stream (the host's /dev/urandom or
     * /dev/random, vfs.c); rand_checked once the device was looked at. */
    bool rand_checked;
    bool det_random;
    /* A signalfd (signalfd.c): the host fd is an eventfd kept readable
     * while a signal of the mask is pending; the context (the mask) is
     * shared by dups and fork children, as Linux shares the open file. */
    struct proxy_signalfd *signalfd;
    /* A timerfd (timerfd.c): the host fd is an eventfd, the timer is here;
     * shared by dups and fork children like the signalfd context. */
    struct proxy_timerfd *timerfd;
    /* A /proc mem or settings file of a guest (procfile.c): transfers go
     * there; shared by dups and fork children. */
    struct proxy_vfd *vfd;
    /* A POSIX message queue descriptor (kernel/mqueue.c): the host fd is
     * an eventfd kept ready as the queue is; shared by dups and fork
     * children. */
    struct proxy_mqd *mqd;
    /* A perf event (kernel/perf_event.c): the host fd is an empty epoll
     * instance, the counter is here; shared by dups and fork children. */
    struct proxy_perf *perf;
    /* F_SETOWN/F_SETOWN_EX's owner (io.c), the open file's as in Linux:
     * shared by dups and fork children (made when first shared or set). */
    struct proxy_fowner *owner;
    /* /proc/<pid>/task of another guest (vfs.c): the host fd is hvrun's
     * /proc/self/task and the listing is that guest's threads; 0 for the
     * caller's own. Kept by dups and fork children. */
    int listing_pid;
    /* A pidfd (kernel/pidfd.c): the run pid of the process it names (0:
     * not a pidfd); the host fd is an eventfd made readable at its exit.
     * Kept by dups and fork children. */
    int pidfd_pid;
    /* /proc/<N> of a guest process N opened as a directory (vfs.c): N's
     * run pid, which pidfd_send_signal takes as a pidfd's; 0 otherwise.
     * Kept by dups and fork children. */
    int procdir_pid;
    /* A memfd_secret file (mm/secretmem.c): the host fd is a memfd that
     * only mmap reaches. Kept by dups and fork children. */
    bool secretmem;
};

struct proxy_plock;

struct proxy_fdtable {
    struct proxy_fd *fds;
    int cap;        /* allocated slots */
    int max_fds;    /* RLIMIT_NOFILE soft limit */
    /* The process's POSIX record locks, one entry per locked file
     * (plock.c). Not copied by fork. */
    struct proxy_plock *plocks;
    size_t nr_plocks;
};

int proxy_fdtable_init(struct proxy_fdtable *t, int max_fds);
void proxy_fdtable_destroy(struct proxy_fdtable *t);
/* Installs host_fd at the lowest free guest fd >= min_fd. host_fd is a
 * fresh host fd or one proxy_host_fd_ref counted again; the table takes
 * that reference. Returns the guest fd, or -EMFILE (the reference is then
 * dropped: a fresh host fd closed; also when a fresh host fd's number is
 * in hvrun's reserve) / -ENOMEM. */
int proxy_fd_install(struct proxy_fdtable *t, int host_fd, bool cloexec,
                     int min_fd);
/* Installs host_fd at exactly guest_fd, closing what was there (dup2). */
int proxy_fd_install_at(struct proxy_fdtable *t, int guest_fd, int host_fd,
                        bool cloexec);
/* One more reference to host_fd, a host fd some guest slot holds, for
 * proxy_fd_install(_at) to take: a dup without a host dup. */
int proxy_host_fd_ref(int host_fd);
/* The host fd that keys guest_fd in epoll instances (epoll_ctl), given a
 * host fd of its own first if its host fd keys another guest fd number;
 * -EBADF, -EMFILE. */
int proxy_fd_epoll_key(struct proxy_fdtable *t, int guest_fd);
/* The host fd behind a guest fd, or -EBADF. */
int proxy_fd_host(const struct proxy_fdtable *t, int guest_fd);
/* The id of guest_fd's open file description (0: no such fd): equal for
 * the guest fds that share one, and ordered as the descriptions were made
 * (kcmp's KCMP_FILE). */
uint64_t proxy_fd_file_id(const struct proxy_fdtable *t, int guest_fd);
struct proxy_fd *proxy_fd_get(struct proxy_fdtable *t, int guest_fd);
int proxy_fd_close(struct proxy_fdtable *t, int guest_fd);
/* Drops one reference to a directory cache (NULL is fine); the fd table
 * calls it when a slot is closed or replaced. */
void proxy_dircache_put(struct proxy_dircache *c);
/* A dup (or a fork's copy) of from: to shares its signalfd or timerfd
 * context, as the open file is shared on Linux. */
void proxy_fd_share_context(struct proxy_fd *to, struct proxy_fd *from);
/* The fd owner context (io.c): shared from `from` to `to`, or dropped. */
void proxy_fowner_share(struct proxy_fd *to, struct proxy_fd *from);
void proxy_fowner_put(struct proxy_fowner *o);
/* fcntl's owner, signal, lease and dnotify commands (io/fasync.c). */
long proxy_fcntl_owner(struct proxy_process *p, int guest_fd, int cmd,
                       uint64_t arg);
/* O_ASYNC set (on) or cleared on guest_fd's open file (F_SETFL, FIOASYNC):
 * its owner is sent SIGIO (or F_SETSIG's signal) as its I/O moves. */
void proxy_fasync_set(struct proxy_process *p, int guest_fd, bool on);
/* host_fd, a guest fd of the open file o, was closed. */
void proxy_fasync_fd_closed(struct proxy_fowner *o, int host_fd);
/* After each system call: the dnotify events it caused are signalled, and
 * the O_ASYNC files whose I/O it moved. */
void proxy_fasync_after_syscall(struct proxy_process *p);
/* Before an open of (dirfd, path) with flags: a lease of the run on the
 * file it conflicts with is broken (its holder signalled). 0: open it;
 * -EWOULDBLOCK (O_NONBLOCK) or PROXY_RET_BLOCK (the open waits and runs
 * again). */
long proxy_lease_break(struct proxy_process *p, int dirfd, const char *path,
                       int flags);
/* Closes every close-on-exec fd (execve). */
void proxy_fd_close_on_exec(struct proxy_fdtable *t);

/* POSIX record locks (plock.c). A guest fd of host_fd's file is being
 * closed: the process's locks on that file go. */
void proxy_plocks_file_closed(struct proxy_fdtable *t, int host_fd);
void proxy_plocks_destroy(struct proxy_fdtable *t);

/* ---- signals ------------------------------------------------------------- */

struct proxy_sigaction {
    uint64_t handler;  /* SIG_DFL=0, SIG_IGN=1, or a guest address */
    uint64_t flags;    /* SA_* */
    uint64_t restorer;
    uint64_t mask;     /* bit (sig-1) */
};

struct proxy_pending_signal {
    int signo;
    int tid;        /* queued for this thread alone (tgkill...); 0: any */
    siginfo_t info;
};

/* ---- timers (timer.c) ---------------------------------------------------- */

#define PROXY_NR_ITIMERS 3        /* ITIMER_REAL, ITIMER_VIRTUAL, ITIMER_PROF */
#define PROXY_MAX_POSIX_TIMERS 32 /* timer_create beyond this: EAGAIN */

/* One timer on a detcore clock: an itimer or a timer_create timer. */
struct proxy_timer {
    bool used;           /* the POSIX timer slot is taken (itimers: unused) */
    bool armed;
    int id;              /* timer_create's id, from 0 per process */
    int clockid;         /* the CLOCK_* id detcore reads */
    int notify;          /* SIGEV_SIGNAL or SIGEV_NONE */
    int signo;
    uint64_t sigval;     /* sigev_value, copied into si_value */
    int64_t expiry_ns;   /* on clockid */
    int64_t interval_ns; /* reload; 0 for a one-shot timer */
    int overrun;         /* expirations while its signal was pending */
    int overrun_last;    /* what the last delivered signal carried */
};

struct proxy_timers {
    struct proxy_timer itimer[PROXY_NR_ITIMERS];
    struct proxy_timer posix[PROXY_MAX_POSIX_TIMERS];
    int next_id;
};

/* ---- threads ------------------------------------------------------------- */

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
};

/* What a thread in PROXY_THREAD_WAIT_SIGNAL waits in (signal.c). */
enum proxy_sigwait_kind {
    PROXY_SIGWAIT_NONE,
    PROXY_SIGWAIT_SUSPEND,  /* pause, rt_sigsuspend: -EINTR is pre-set */
    PROXY_SIGWAIT_TIMED,    /* rt_sigtimedwait: re-runs, never restarted */
    PROXY_SIGWAIT_SIGNALFD, /* a signalfd read: re-runs like a read */
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

/* A blocking transfer parked part way (io/xfer_progress.c): the call, by
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
    bool tsc_sigsegv; /* PR_TSC_SIGSEGV (misc.c): a trapped RDTSC is a
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
    /* System V shared memory segments of the run (mm/sysvshm.c). */
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
    /* Address spaces made so far after the first process's: the last
     * proxy_process mm_id given (kcmp's KCMP_VM order). */
    uint64_t last_mm_id;
};

/* --linger: whether a guest process other than the first still holds the
 * run's stdout or stderr (world.c). */
bool proxy_world_output_held(struct proxy_world *w);
/* Ends the run with the first process's status, every other process
 * with it (procsys.c). */
void proxy_world_end(struct proxy_world *w);

/* ---- the process --------------------------------------------------------- */

/*
 * One event of an exchange of the run with a peer outside it: a stream
 * connection's connect, and each piece of data or the end that came in
 * from the peer (net/outside.c); a datagram socket's first exchange with
 * a peer, each datagram that came back and each error (net/outside_udp.c);
 * a listener's listen and each client from outside it accepted
 * (net/outside_accept.c);
 * at the run's event count when the guest could first see it.
 */
enum proxy_link_kind {
    PROXY_LINK_CONNECT = 'C', /* value: the connect's result; data: the
                                 peer's address */
    PROXY_LINK_DATA = 'D',    /* data: the bytes */
    PROXY_LINK_END = 'E',     /* value: 0 (the peer closed) or -errno */
    PROXY_LINK_DGRAM_OPEN = 'U', /* value: 0, or the -errno of reaching
                                    the peer; data: the peer's address */
    PROXY_LINK_DGRAM = 'G',   /* data: one datagram from the peer */
    PROXY_LINK_DGRAM_ERR = 'R', /* value: -errno the peer's host reported
                                   (ECONNREFUSED: nothing there) */
    PROXY_LINK_LISTEN = 'L',  /* a listen() of the run's, or a bind of a
                                 UDP socket (outside_accept.c): value: its
                                 result; data: the socket's name */
    PROXY_LINK_ACCEPT = 'A',  /* a client from outside connected to it:
                                 value: the listener's link number; data:
                                 u32 length of the client's address, the
                                 address, then the connection's own name */
    PROXY_LINK_DGRAM_IN = 'I', /* a datagram from a new peer outside to a
                                  UDP socket the run bound: value: that
                                  socket's link number (its bind, an L
                                  event); data: the peer's address; its
                                  datagrams are G events of this link */
    PROXY_LINK_FIFO = 'F',    /* a FIFO opened to a process outside the
                                 run (net/outside_fifo.c): value: the
                                 open's result; data: its path; then D
                                 and E events of what came */
    PROXY_LINK_AWAITED = 'W', /* a timed wait of the run's for an fd ended
                                 before its deadline: something came from
                                 outside (its events follow, same count);
                                 link: 0 */
};
struct proxy_link_event {
    uint32_t link;  /* the run's n-th connection or flow to outside */
    uint8_t kind;   /* enum proxy_link_kind */
    uint64_t pos;   /* the run's guest event count then */
    int64_t value;
};

/*
 * hvrun record / replay's view of the files a run reads (cli/tap.c): a
 * regular file the guest opens read-only is keyed by the absolute path it
 * was opened by.
 */
struct proxy_file_tap {
    /* Recording: such a file was opened as host_fd. */
    void (*opened)(void *ctx, const char *key, int host_fd);
    /* Replaying: an fd holding the recorded copy of key (the guest gets
     * it instead of the host's file), or -1: not recorded. */
    int (*recorded)(void *ctx, const char *key);
    /* Replaying: *st is the host's stat of something; if that is such a
     * copy, or key (may be NULL) names a recorded file, *st becomes the
     * recorded file's stat and true is returned. */
    bool (*recorded_stat)(void *ctx, const char *key, struct stat *st);
    /* Directory listings (the host's getdents64 records, all of them),
     * key = the directory's path. Recording: each listing read. */
    void (*listed)(void *ctx, const char *key, const void *raw, size_t len);
    /* Replaying: the next recorded listing of key in a malloc'd copy
     * (true), or false: none recorded, the host's is read. */
    bool (*recorded_listing)(void *ctx, const char *key, char **raw,
                             size_t *len);
    /* The stat of a path (nofollow: of a last symlink itself): recording,
     * its result (0 with *st, or -errno); replaying, the next recorded
     * result for that path (true), or false: none left, the host's. */
    void (*stat_result)(void *ctx, const char *key, bool nofollow, int err,
                        const struct stat *st);
    bool (*recorded_stat_result)(void *ctx, const char *key, bool nofollow,
                                 int *err, struct stat *st);
    /* Other questions about a path (kind PROXY_QUERY_*, arg the call's
     * argument): recording, the result and the bytes it gave; replaying,
     * the next recorded answer for (key, kind, arg), *len bytes of it
     * copied to data (cap at most), or false: the host's. */
    void (*query_result)(void *ctx, const char *key, int kind, int arg,
                         long result, const void *data, size_t len);
    bool (*recorded_query)(void *ctx, const char *key, int kind, int arg,
                           long *result, void *data, size_t cap,
                           size_t *len);
    /* Connections to outside the run (net/outside.c): recording, each
     * event of one as it happens; replaying, the next recorded event
     * (false: none left) and, once used, taken. */
    void (*link_noted)(void *ctx, const struct proxy_link_event *e,
                       const void *data, size_t len);
    bool (*link_next)(void *ctx, struct proxy_link_event *e,
                      const void **data, size_t *len);
    void (*link_taken)(void *ctx);
    void *ctx;
};
enum { PROXY_QUERY_READLINK = 1, PROXY_QUERY_ACCESS = 2 };

/* A replay's recorded stat in *st when st is the host's stat of a
 * recorded file's copy (fs.c); else *st as it was. */
struct proxy_process;
void proxy_file_tap_restat(struct proxy_process *p, struct stat *st);
/* For opens outside open(2) (the ELF loader's): a replay's copy of
 * (dirfd, path) or -1; and, recording, the file opened as host_fd. */
int proxy_file_tap_replayed(struct proxy_process *p, int dirfd,
                            const char *path, int flags);
void proxy_file_tap_note(struct proxy_process *p, int dirfd, const char *path,
                         int flags, int host_fd);

struct proxy_config {
    bool fail_closed;    /* unsupported syscall aborts the run */
    /* --linger: once the first process exits, the run goes on while
     * another guest process holds the run's stdout or stderr (world.c) */
    bool linger;
    /* --as-init: the first process is pid 1 and the run's init (orphans'
     * parent; signals it has no handler for are not delivered from
     * inside the run), not the virtual shell's child. */
    bool as_init;
    int log_level;       /* 0 quiet, 1 warnings (default), 2 debug trace */
    FILE *log;           /* hvrun's diagnostics */
    /* A thread that runs this long (host wall time) without a syscall
     * while another can run is preempted (world.c); 0: never. */
    uint64_t preempt_ns;
    /* --cpuid-rewrite on a host whose CPUID does not trap: CPUID sites of
     * the guest's code become traps answered from the model
     * (cpuid_patch.c). */
    bool cpuid_rewrite;
    /* Where the guest's CPUID is the host's and nothing else fixes its
     * APIC ids (the ptrace backend without CPUID faulting): CPUID sites
     * become traps answered with the host's leaf but the model's APIC
     * ids (CPU 0's), so runs on different host CPUs read the same
     * (cpuid_patch.c). Ignored under cpuid_rewrite, which gives the whole
     * model. */
    bool cpuid_topology;
    /* RDPID sites become traps answered with the model's CPU number (0)
     * instead of the host CPU's TSC_AUX (cpuid_patch.c). */
    bool rdpid_rewrite;
    /* Virtual time on a host that cannot trap RDTSC (every kvm host so
     * far): the guest's RDTSC/RDTSCP sites become traps answered from the
     * logical clock (cpuid_patch.c); --no-rdtsc-rewrite turns it off. */
    bool rdtsc_rewrite;
    /* Virtual time, either backend: RDTSC sites of the usual compiled
     * form read the logical clock in the guest, through a stub, without
     * an exit (cpuid_patch.c); --no-rdtsc-rewrite turns it off. */
    bool rdtsc_inline;
    /* hvrun record / replay: the files read (NULL: neither). */
    const struct proxy_file_tap *file_tap;
    FILE *schedule_out; /* --schedule-out: every decided turn (world.c) */
    /* hvrun replay of a run a signal from outside stopped: the run stops
     * as by stop_signal once it has made stop_events events and its
     * detlog holds stop_detlog records (a host-timed cut logged after the
     * last event is in it: stopping at the count alone left it out), or
     * once it has gone past stop_events. */
    int stop_signal;
    uint64_t stop_events, stop_detlog;
};

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
/* Whether pid, as viewer names it, is the virtual init or the virtual
 * shell (neither a guest process: signals to them are accepted and
 * dropped; the init's /proc/1 is made by fs/vfs.c, the shell has no /proc
 * entry); if so, its process group and session. */
struct proxy_process;
bool proxy_virtual_process(const struct proxy_process *viewer, int pid,
                           int *pgid, int *sid);

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
    int cwd_fd;                 /* host O_PATH fd of the guest cwd */
    /* The guest fd the last /proc/self/fdinfo/N path named (fs.c's
     * rewrite to the host fd): dups share a host fd, so the host number
     * alone does not say whose close-on-exec bit fdinfo shows (vfs.c). */
    int fdinfo_guest_fd;
    mode_t umask;
    uid_t ruid, euid, suid;
    gid_t rgid, egid, sgid;
    /* The filesystem ids (setfsuid, setfsgid): the euid and egid again
     * after every set*id call and execve, /proc's 4th Uid and Gid. */
    uid_t fsuid;
    gid_t fsgid;
    struct rlimit rlimits[RLIM_NLIMITS];

    /* memory layout */
    gva_t brk_start, brk_end;   /* heap: [brk_start, brk_end) mapped */
    gva_t mmap_base;            /* top-down mmap starts below this */
    gva_t vvar_gva;             /* the vDSO's [vvar] page; 0: none */
    /* The vDSO's call count (vdso.c): how much of it detcore has, how much
     * of that the detlog has not, and whether the next run goes on with it
     * (the last stop was a host interruption). */
    uint64_t vdso_folded, vdso_unlogged;
    bool vdso_count_goes_on;
    gva_t stack_top;

    /* identity */
    int pid, tid, ppid, pgid, sid;
    dev_t ctty;                 /* controlling terminal's rdev; 0: none */
    gva_t clear_child_tid;
    gva_t robust_list;
    char exe_path[PROXY_PATH_MAX]; /* absolute host path of the program */
    uint64_t hwcap, hwcap2;     /* AT_HWCAP/AT_HWCAP2 of the CPU model */
    struct vmm_cpu_identity cpu; /* what its CPUID shows (/proc/cpuinfo) */
    struct proxy_cpuid_patched *cpuid_patched; /* rewritten sites, or NULL */
    char comm[16];
    /* vfs.c: the thread a /proc/.../task/TID/ name being opened picks
     * (its comm, stat, status), 0 for the process's own files */
    int proc_tid;
    /* Written /proc/self settings (procfile.c); "" is the initial value. */
    char kept[PROXY_NR_KEPT][PROXY_KEPT_VALUE_MAX];

    /* signals */
    struct proxy_sigaction sigactions[PROXY_NSIG];
    uint64_t sigmask;           /* bit (sig-1) blocked */
    stack_t altstack;           /* ss_sp holds a gva */
    struct proxy_pending_signal pending[PROXY_NSIG];
    uint64_t pending_mask;
    /* real-time signals queue: instances after the first, oldest first,
     * of the process's and of each thread's own pending set */
    struct proxy_pending_signal *rt_queue;
    int nr_rt_queue, cap_rt_queue;
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

    /* prctl flags and the nice value (misc.c) */
    struct proxy_prctl_state {
        int pdeathsig;
        int dumpable;
        bool no_new_privs;
        bool child_subreaper;
        bool thp_disabled;
        bool keepcaps;          /* PR_SET_KEEPCAPS; cleared by execve */
        /* sched_setscheduler/sched_setattr (misc.c): what the guest set,
         * reported back; hvrun's one vCPU schedules the same whatever */
        int sched_policy, sched_priority;
        bool sched_reset_on_fork;
        uint64_t sched_runtime, sched_deadline, sched_period;
        uint64_t timerslack_ns;
        int nice;
    } prctl;
    /* The supplementary groups setgroups gave (misc.c), nr_groups of
     * them; -1: never set, getgroups reports hvrun's own. Owned. */
    uint32_t *groups;
    int nr_groups;
    /* System V shared memory attached (mm/sysvshm.c). Owned. */
    struct proxy_shm_attach *shm_attach;
    int nr_shm_attach;
    /* SEM_UNDO adjustments, applied at exit (kernel/sysvsem.c). Owned. */
    struct proxy_sem_undo *sem_undo;
    int nr_sem_undo;
    /* Whether Linux would have made its sysvsem.undo_list (what kcmp's
     * KCMP_SYSVSEM compares): at a semop with SEM_UNDO, or a clone with
     * CLONE_SYSVSEM (a pthread_create); gone with exit_sem (exit,
     * unshare, setns; proxy_sem_exit). A fork child has none. */
    bool sem_undo_list;
    /* personality(2)'s value (misc.c): kept across fork and execve, as
     * setarch relies on; PER_LINUX32 makes uname's machine i686 */
    uint32_t personality;
    /* Its namespaces (kernel/namespace.c); NULL: the run's initial one.
     * ns[PROXY_NS_PID] is the one its children are made in. ns_caps:
     * the full capabilities a new (or entered) user namespace gives its
     * creator, until execve or a set*uid call away from its root. */
    struct proxy_ns *ns[PROXY_NR_NS];
    bool ns_caps;
    /* Capabilities PR_SET_KEEPCAPS kept across a setuid away from root
     * (permitted), made effective again by capset; execve drops them. */
    bool caps_kept, caps_kept_effective;
    /* The pid namespace it lives in (NULL: the run's) and its pid in it
     * and in each one above (vpids[0] is pid). */
    struct proxy_ns *pidns;
    int vpids[PROXY_PID_LEVELS + 1];
    /* set_mempolicy's mode and node mask (one node: 0 or 1), mm.c */
    int mempolicy_mode;
    uint64_t mempolicy_nodes;
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

    /* the initial stack's argv and envp strings, [start, end) (loader.c),
     * for /proc/self/{stat,cmdline,environ} (vfs.c) */
    gva_t start_stack;          /* where argc is */
    gva_t arg_start, arg_end, env_start, env_end;

    /* the private /tmp (hermetic.c): guest /tmp is this host directory;
     * empty when there is none. tmp_owned: hvrun made it and deletes it. */
    char tmp_host[PROXY_PATH_MAX];
    bool tmp_owned;
    char tmp_top[PROXY_PATH_MAX]; /* owned: the scratch dir holding it */
    int tmp_lock_fd;              /* owned: its lock (scratch.c) */

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
    } *totals;
    uint64_t nr_syscalls;
    uint64_t nr_unsupported;
    bool unsupported_seen[PROXY_NR_SYSCALLS];
};

/* Creates a process in a fresh VM; stdio fds 0-2 are dups of hvrun's. */
int proxy_process_create(struct proxy_process **out, struct vmm_vm *vm,
                         struct det_state *det, const struct proxy_config *c);
void proxy_process_destroy(struct proxy_process *p);

/* ---- peer credentials (peercred.c) ------------------------------------------ */

struct ucred;
/* Host credentials of the peer of host socket host_fd (SO_PEERCRED, an
 * SCM_CREDENTIALS message) rewritten in guest terms, in place. */
void proxy_peercred_to_guest(struct proxy_process *p, int host_fd,
                             struct ucred *uc);

/* ---- RLIMIT_FSIZE (fs/fsize.c) --------------------------------------------- */

struct iovec;
/* A truncate or fallocate of host_fd's file to new_size: -EFBIG (and
 * SIGXFSZ to the caller) when it grows a regular file past the limit. */
long proxy_fsize_check_size(struct proxy_process *p, int host_fd,
                            uint64_t new_size);
/* A write of iov[0..*n) at pos (-1: the fd's position): cut at the limit
 * (iov and *n shortened), or -EFBIG (and SIGXFSZ) when it starts there. */
long proxy_fsize_clip_write(struct proxy_process *p, int host_fd, int64_t pos,
                            struct iovec *iov, int *n);

/* ---- network-device queries (netdev_ioctl.c) ------------------------------- */

/* SIOCGIFCONF and the read-only SIOCGIF* requests of a socket, answered
 * from the host's interfaces (ENOTTY on anything but a socket). */
bool proxy_netdev_ioctl_is(unsigned int req);
long proxy_netdev_ioctl(struct proxy_process *p, int host_fd, unsigned int req,
                        gva_t arg);

/* ---- the vDSO (vdso.c) ------------------------------------------------------- */

/* Maps [vvar] and [vdso] below mmap_base; *ehdr_out is AT_SYSINFO_EHDR. */
int proxy_vdso_map(struct proxy_process *p, gva_t *ehdr_out);
/* Before the guest runs: the logical clock into [vvar]. */
void proxy_vdso_enter(struct proxy_process *p);
/* After it stopped: the vDSO's clock reads into detcore; how many it
 * folded. host_interruption: the stop was the host's (a signal, a timer
 * that cut nothing), not a point of the guest's progress. */
uint64_t proxy_vdso_leave(struct proxy_process *p, bool host_interruption);
/* The vDSO's clock reads since the last fold (before leave folds them). */
uint64_t proxy_vdso_unfolded(struct proxy_process *p);
/* Whether the vDSO answered all the reads it may since the last exit, so
 * that its syscall now is the forced one (virtual time only). */
bool proxy_vdso_count_spent(struct proxy_process *p);

/* ---- --verify's journal of changed files (preserve.c) --------------------- */

struct proxy_preserve;
/* A journal in dir (which exists, mode 0700): journal.h's records and
 * copies go there. */
struct proxy_preserve *proxy_preserve_open(const char *dir);
void proxy_preserve_close(struct proxy_preserve *pr);
/* Before a call that may change the content or mode of (dirfd, path), or
 * with follow of what it points to: keeps the object's content before the
 * run, once per object. */
void proxy_preserve_before(struct proxy_process *p, int host_dirfd,
                           const char *host_path, bool follow);
/* The same for the file behind a host fd (fchmod, ftruncate). */
void proxy_preserve_fd(struct proxy_process *p, int host_fd);
/* Before unlink/rmdir of (dirfd, path): the name of an existing object
 * goes away. */
void proxy_preserve_name_gone(struct proxy_process *p, int host_dirfd,
                              const char *host_path);
/* After a call made the name (dirfd, path), or the file behind host_fd
 * (open O_CREAT). */
void proxy_preserve_created(struct proxy_process *p, int host_dirfd,
                            const char *host_path);
void proxy_preserve_created_fd(struct proxy_process *p, int host_fd);
/* A rename: _before (which also keeps a file it replaces), then, if the
 * host call succeeded, _renamed. */
struct proxy_preserve_rename {
    bool renamed, exchange, created_from, created_to;
    char from[PROXY_PATH_MAX], to[PROXY_PATH_MAX];
    struct stat from_st, to_st;
};
void proxy_preserve_rename_before(struct proxy_process *p, int from_dirfd,
                                  const char *from, int to_dirfd,
                                  const char *to, unsigned int flags,
                                  struct proxy_preserve_rename *r);
void proxy_preserve_renamed(struct proxy_process *p,
                            const struct proxy_preserve_rename *r);
/* The absolute host path of (dirfd, path), the directory part resolved
 * and the last component as named. 0 or -errno. */
int proxy_abs_path(int dirfd, const char *path, char *out, size_t len);

/* ---- hvrun's scratch directories in /tmp (scratch.c) ------------------------ */

/* mkdtemp(template) (rewritten in place), checked to be ours and 0700,
 * with a lock inside held through *lock_fd while the caller lives.
 * 0 or -errno. */
int proxy_scratch_make(char *template_path, int *lock_fd);
/* Removes the directory and all in it (nothing followed), drops the lock. */
void proxy_scratch_remove(const char *path, int lock_fd);
/* Removes the scratch directories of runs that are gone (SIGKILL);
 * returns how many. */
int proxy_scratch_sweep(void);
/* Removes everything inside the directory dirfd, following no symlink. */
void proxy_remove_contents(int dirfd);

/* ---- the checked copy path (thin wrappers over vmm_as_copy_*) ------------- */

int proxy_copy_in(struct proxy_process *p, void *dst, gva_t src, size_t len);
int proxy_copy_out(struct proxy_process *p, gva_t dst, const void *src,
                   size_t len);
/* Copies a path: returns its length, -EFAULT, -ENAMETOOLONG. */
long proxy_path_in(struct proxy_process *p, char *dst, gva_t src);

/* Resolves a guest (dirfd, path) pair to a host (dirfd, path) for *at calls:
 * AT_FDCWD means the guest cwd. Returns the host dirfd or -EBADF. */
int proxy_host_dirfd(struct proxy_process *p, int guest_dirfd);

/* CLOCK_THREAD_CPUTIME_ID (the current thread's cpu_ns) or
 * CLOCK_PROCESS_CPUTIME_ID (all its threads') as the guest reads it
 * (kernel/time.c): the host's with --no-virtualize-time. Other clocks: 0. */
uint64_t proxy_cpu_clock_ns(struct proxy_process *p, int clockid);
/* The same without counting a read (the vDSO's page, mm/vdso.c). */
uint64_t proxy_cpu_clock_base(const struct proxy_process *p, int clockid);
/* The current thread ran for ns more (an event, vDSO reads, a slice). */
void proxy_cpu_charge(struct proxy_process *p, uint64_t ns);

/* ---- the syscall table --------------------------------------------------- */

typedef long (*proxy_handler_fn)(struct proxy_process *p, const uint64_t a[6]);

struct proxy_syscall {
    int nr;
    const char *name;
    proxy_handler_fn fn;
};

/* Each family file exports its table, ending with {-1, NULL, NULL}. */
extern const struct proxy_syscall proxy_fs_syscalls[];
extern const struct proxy_syscall proxy_io_syscalls[];
extern const struct proxy_syscall proxy_mm_syscalls[];
extern const struct proxy_syscall proxy_process_syscalls[];
extern const struct proxy_syscall proxy_signal_syscalls[];
extern const struct proxy_syscall proxy_time_syscalls[];
extern const struct proxy_syscall proxy_misc_syscalls[];
extern const struct proxy_syscall proxy_seccomp_syscalls[];
extern const struct proxy_syscall proxy_sysvshm_syscalls[];
extern const struct proxy_syscall proxy_sysvsem_syscalls[];
extern const struct proxy_syscall proxy_sysvmsg_syscalls[];
extern const struct proxy_syscall proxy_process_vm_syscalls[];
extern const struct proxy_syscall proxy_adjtime_syscalls[];
extern const struct proxy_syscall proxy_ldt_syscalls[];
extern const struct proxy_syscall proxy_secretmem_syscalls[];
extern const struct proxy_syscall proxy_openat2_syscalls[];
extern const struct proxy_syscall proxy_acct_syscalls[];
extern const struct proxy_syscall proxy_quota_syscalls[];
/* sysfs(2) from the host's /proc/filesystems list (fs/filesystems.c). */
extern const struct proxy_syscall proxy_filesystems_syscalls[];
extern const struct proxy_syscall proxy_keys_syscalls[];
/* The key retention service (kernel/keys.c): a fork child's references
 * to its parent's keyrings (c is the child, a copy of the parent), a new
 * thread's, an exiting thread's, execve's and exit's drops; the run's keys
 * freed; line i of /proc/keys (empty for a key the viewer may not view)
 * and of /proc/key-users, 0 past the last. */
void proxy_keys_fork(struct proxy_process *c);
void proxy_keys_clone_thread(struct proxy_process *p, struct proxy_thread *t);
void proxy_keys_thread_exit(struct proxy_process *p, struct proxy_thread *t);
void proxy_keys_exec(struct proxy_process *p);
void proxy_keys_exit(struct proxy_process *p);
void proxy_keys_world_free(struct proxy_world *w);
int proxy_keys_proc_line(struct proxy_process *viewer, int i, char *line,
                         size_t cap);
int proxy_keys_users_line(struct proxy_process *viewer, int i, char *line,
                          size_t cap);
extern const struct proxy_syscall proxy_ptrace_syscalls[];
/* kcmp(2) over the process model's objects (kernel/kcmp.c). */
extern const struct proxy_syscall proxy_kcmp_syscalls[];
/* Linux native AIO (io/aio.c): the process's contexts freed (exit,
 * execve). */
extern const struct proxy_syscall proxy_aio_syscalls[];
void proxy_aio_release(struct proxy_process *p);
/* Process file descriptors (kernel/pidfd.c): pidfd_open,
 * pidfd_send_signal, pidfd_getfd. */
extern const struct proxy_syscall proxy_pidfd_syscalls[];
bool proxy_pidfd_is(struct proxy_process *p, int guest_fd);
/* dead exited: every pidfd naming it polls readable from now on. */
void proxy_pidfd_exited(struct proxy_process *dead);
/* waitid(P_PIDFD): the pid the caller sees of the process pidfd guest_fd
 * names (-EBADF: not a pidfd; -ECHILD: reaped), and whether the pidfd is
 * O_NONBLOCK. */
long proxy_pidfd_target(struct proxy_process *p, int guest_fd, int *vpid,
                        bool *nonblock);
/* Restartable sequences (kernel/rseq.c): the current thread, back on the
 * vCPU after another ran or about to take a signal, leaves a critical
 * section it was in for the section's abort handler. */
extern const struct proxy_syscall proxy_rseq_syscalls[];
void proxy_rseq_fixup(struct proxy_process *p);
/* POSIX message queues (kernel/mqueue.c): a descriptor's reference
 * dropped (closer: the fd table of the process closing it, for
 * mq_notify's owner), shared by a dup or fork, read as its status line
 * (iov: host iovecs); the run's names freed. */
struct proxy_mqd;
extern const struct proxy_syscall proxy_mqueue_syscalls[];
void proxy_mqd_put(struct proxy_mqd *d, const struct proxy_fdtable *closer);
void proxy_mqd_share(struct proxy_fd *to, const struct proxy_fd *from);
long proxy_mq_xfer(struct proxy_process *p, int guest_fd, bool into_guest,
                   const struct iovec *iov, int n);
void proxy_mq_world_free(struct proxy_world *w);
/* unshare, setns (kernel/namespace.c) */
extern const struct proxy_syscall proxy_ns_syscalls[];
/* System V message queues (kernel/sysvmsg.c): queue i as a
 * /proc/sysvipc/msg line, its ids as viewer's user namespace sees them
 * (0 past the last); the run's queues freed. */
int proxy_msg_proc_line(const struct proxy_process *viewer, int i,
                        char *line, size_t cap);
void proxy_msg_world_free(struct proxy_world *w);
/* System V semaphores (kernel/sysvsem.c): a process's SEM_UNDO applied at
 * its exit; set i as a /proc/sysvipc/sem line (0 past the last); the
 * run's sets freed. */
void proxy_sem_exit(struct proxy_process *p);
int proxy_sem_proc_line(const struct proxy_process *viewer, int i,
                        char *line, size_t cap);
void proxy_sem_world_free(struct proxy_world *w);

/* System V shared memory (mm/sysvshm.c): a fork child's attachments
 * counted, a process's all detached (exit, execve), the run's segments
 * freed. */
void proxy_shm_fork(struct proxy_process *parent, struct proxy_process *child);
void proxy_shm_detach_all(struct proxy_process *p);
/* p leaves an address space another process (to) still runs on: its
 * attachments stay in that memory, so they become to's. */
void proxy_shm_hand_over(struct proxy_process *p, struct proxy_process *to);
void proxy_shm_world_free(struct proxy_world *w);
/* Segment i of the run as a /proc/sysvipc/shm line into line; 0 past
 * the last. */
int proxy_shm_proc_line(const struct proxy_process *viewer, int i,
                        char *line, size_t cap);

/* ---- memfd_secret files (mm/secretmem.c) --------------------------------- */
/* Whether guest_fd is a memfd_secret file: it has no read or write. */
bool proxy_secretmem_is(struct proxy_process *p, int guest_fd);
#define PROXY_SECRETMEM_NAME "/secretmem (deleted)"
/* Whether host_fd is the host fd of one of p's memfd_secret files. */
bool proxy_secretmem_host_fd(const struct proxy_process *p, int host_fd);
/* A stat of host_fd: a secret file's link count is 1, as on Linux. */
void proxy_secretmem_fix_stat(const struct proxy_process *p, int host_fd,
                              struct stat *st);
/* A new mapping of a secret file is named as Linux names it in maps. */
void proxy_secretmem_name_mapping(struct proxy_process *p, int host_fd,
                                  gva_t gva, uint64_t len, uint64_t off);
/* Whether gva lies in secret memory of q: reads and writes of it made for
 * another process (or through get_user_pages) find no page. */
bool proxy_secretmem_page(const struct proxy_process *q, gva_t gva);
/* mmap of guest_fd: 0 not secret, 1 secret (*vflags marked locked and
 * secret), or -EINVAL for a private mapping. */
int proxy_secretmem_mmap(struct proxy_process *p, int guest_fd, int map_type,
                         int *vflags);
/* ftruncate: -EINVAL once a secret file has a size, else 0. */
long proxy_secretmem_truncate(struct proxy_process *p, int guest_fd,
                              int host_fd);

/* ---- the guest's seccomp filters (kernel/seccomp.c) ---------------------- */
struct proxy_seccomp_filter;
void proxy_seccomp_ref(struct proxy_seccomp_filter *f);
void proxy_seccomp_unref(struct proxy_seccomp_filter *f);
/* Runs the calling thread's filters on the call about to be dispatched:
 * true when it is not to be made, with *ret its result (an errno, the
 * result a trap leaves, or PROXY_RET_NORETURN when it killed). */
bool proxy_seccomp_blocks(struct proxy_process *p, uint64_t nr,
                          const uint64_t args[6], uint64_t ip, long *ret);
/* Syscall user dispatch (kernel/user_dispatch.c): true when the call
 * returning to ret_ip is not made, *ret then its result (the number, a
 * SIGSYS forced) or PROXY_RET_NORETURN (the process was ended). */
bool proxy_user_dispatch_blocks(struct proxy_process *p, uint64_t nr,
                                uint64_t ret_ip, long *ret);
/* prctl(PR_SET_SYSCALL_USER_DISPATCH, mode, offset, len, selector). */
long proxy_user_dispatch_prctl(struct proxy_process *p, const uint64_t a[6]);
/* prctl(PR_GET_SECCOMP / PR_SET_SECCOMP, ...). */
long proxy_seccomp_prctl(struct proxy_process *p, const uint64_t a[6]);
/* How many filters thread t runs under. */
int proxy_seccomp_filters(const struct proxy_thread *t);
/* Robust futex lists (set_robust_list) of a dying thread / every thread
 * of a dying process: owners marked dead, a waiter woken (thread.c). */
void proxy_robust_list_exit(struct proxy_process *p, gva_t head, int tid);
void proxy_robust_lists_exit(struct proxy_process *p);
/* Whether another live process runs on p's address space (clone with
 * CLONE_VM and without CLONE_THREAD: vfork, posix_spawn). */
bool proxy_as_shared(const struct proxy_process *p);
/* Such a process (the first in creation order), or NULL. */
struct proxy_process *proxy_as_other_user(const struct proxy_process *p);
/* Linux's mm_release for p leaving an address space that another process
 * still uses (its exit, or its execve with p->as still the old one):
 * each thread's CLONE_CHILD_CLEARTID word zeroed and its futex woken. */
void proxy_mm_release(struct proxy_process *p);
/* Ends the calling thread as exit(2) would (thread.c). */
long proxy_thread_exit_current(struct proxy_process *p);
extern const struct proxy_syscall proxy_thread_syscalls[];
extern const struct proxy_syscall proxy_net_syscalls[];
/* epoll instances and eventfds over host ones (epoll.c) */
extern const struct proxy_syscall proxy_epoll_syscalls[];

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

/* Runs the process until it exits. Returns the wait-status encoding of its
 * end, or -1 when hvrun itself failed (the reason is already printed). */
int proxy_run(struct proxy_process *p, struct vmm_host *host);

/* ---- signals (signal.c) -------------------------------------------------- */

/* Turns a guest CPU exception into a signal and delivers it. */
void proxy_signal_fault(struct proxy_process *p, const struct vmm_event *ev);
/* The pending signals thread tid may take: process-directed ones and
 * those sent to it (tgkill), as Linux's shared and private queues. */
uint64_t proxy_signal_pending_for(const struct proxy_process *p, int tid);
/* Queues a signal for one thread of the process (tgkill, tkill, raise). */
void proxy_signal_raise_thread(struct proxy_process *p, int tid, int signo,
                               const siginfo_t *info);
/* Queues a signal for the process. */
void proxy_signal_raise(struct proxy_process *p, int signo,
                        const siginfo_t *info);
/* Delivers one pending unblocked signal if any (after a syscall). */
void proxy_signal_deliver_pending(struct proxy_process *p);
/* Delivers sig to the current thread now, mask or not (a signal a tracer
 * let through: ptrace.c). */
void proxy_signal_deliver_now(struct proxy_process *p, int sig,
                              const siginfo_t *info);
/* Queues a synchronous signal for thread tid as Linux's force_sig does:
 * blocked or ignored, its action becomes the default and it is
 * unblocked. */
void proxy_signal_force_thread(struct proxy_process *p, int tid,
                               const siginfo_t *info);
/* Ends the process by signal (default action terminate/core). */
void proxy_process_kill(struct proxy_process *p, int signo);
/* Removes the lowest pending signal in set (blocked or not) and copies its
 * siginfo to *info; returns its number, or 0 when none is pending. */
int proxy_signal_dequeue(struct proxy_process *p, uint64_t set,
                         siginfo_t *info);
/* The calling thread's name (PR_SET_NAME): the process's comm for the
 * main thread, the thread's own for the others (misc.c). */
char *proxy_thread_comm(struct proxy_process *p);
/* The name of q's thread tid (0 or q's pid: the process's comm). */
char *proxy_thread_comm_of(struct proxy_process *q, int tid);

/* Whether the current thread would take a pending signal now (unblocked
 * by its mask, a temporary one of ppoll/pselect included, not ignored). */
bool proxy_signal_would_take(struct proxy_process *p);
/* pause(): parks the current thread until a signal it takes is pending
 * (the scheduler runs the others meanwhile); the call then ends with
 * -EINTR after the handler. */
long proxy_signal_suspend(struct proxy_process *p);
/* Whether a pending signal interrupts thread t's blocking call (a sleep,
 * a wait for an fd, a child or a futex): one it takes and acts on, not
 * blocked, not ignored; for a traced process any unblocked one (its
 * tracer sees it first). */
bool proxy_signal_interrupts(const struct proxy_process *p,
                             const struct proxy_thread *t);
/* Whether thread t, in PROXY_THREAD_WAIT_SIGNAL, may run: a signal it
 * would take (not ignored) or one of its sigwait_set is pending, or its
 * deadline passed. */
bool proxy_signal_wait_ready(struct proxy_process *p,
                             const struct proxy_thread *t);

/* ---- signalfd (signalfd.c) ----------------------------------------------- */

struct iovec;
extern const struct proxy_syscall proxy_signalfd_syscalls[];
/* Whether guest_fd is a signalfd of p. */
bool proxy_signalfd_is(struct proxy_process *p, int guest_fd);
/* read/readv (into_guest) of a signalfd into host iovecs over guest
 * memory: struct signalfd_siginfo records of dequeued signals, -EINVAL for
 * less than one record or a write, -EAGAIN (O_NONBLOCK) or
 * PROXY_RET_BLOCK when none is pending. */
long proxy_signalfd_xfer(struct proxy_process *p, int guest_fd,
                         bool into_guest, const struct iovec *iov, int n);
/* Makes the signalfds of p poll readable exactly while a signal of their
 * mask is pending; signal.c calls it when p's pending set changes. */
void proxy_signalfd_sync(struct proxy_process *p);
/* The fd table's hooks: a dup (or fork's copy) shares from's context;
 * put drops one reference (NULL is fine). */
void proxy_signalfd_share(struct proxy_fd *to, const struct proxy_fd *from);
void proxy_signalfd_put(struct proxy_signalfd *s);

/* ---- perf events (kernel/perf_event.c) ------------------------------------ */

struct proxy_perf;
extern const struct proxy_syscall proxy_perf_syscalls[];
void proxy_perf_share(struct proxy_fd *to, const struct proxy_fd *from);
void proxy_perf_put(struct proxy_perf *e);
void proxy_perf_world_gone(struct proxy_world *w);
/* What the counters count, pushed by the world loop: one event (syscall,
 * trapped TSC read) of thread tid, its switch off the vCPU, its page
 * fault, its creation of child_tid, its execve. */
void proxy_perf_on_event(struct proxy_world *w, int tid);
void proxy_perf_on_switch(struct proxy_world *w, int tid);
void proxy_perf_on_fault(struct proxy_world *w, int tid);
void proxy_perf_on_clone(struct proxy_world *w, int parent_tid, int child_tid);
void proxy_perf_on_exec(struct proxy_world *w, int tid);
/* read/readv of a perf fd (positional: pread and the like). */
long proxy_perf_xfer(struct proxy_process *p, struct proxy_perf *e,
                     bool into_guest, bool positional, const struct iovec *iov,
                     int n);
/* A perf ioctl; 1 when req is not one (the generic ones go on). */
long proxy_perf_ioctl(struct proxy_process *p, struct proxy_perf *e,
                      unsigned int req, uint64_t arg);

/* ---- timerfd (timerfd.c) -------------------------------------------------- */

extern const struct proxy_syscall proxy_timerfd_syscalls[];
void proxy_timerfd_share(struct proxy_fd *to, const struct proxy_fd *from);
void proxy_timerfd_put(struct proxy_timerfd *t);
/* The world ends: timerfds still open are no longer listed in it. */
void proxy_timerfd_world_gone(struct proxy_world *w);
/* Adds the expirations due on the logical clock to each timerfd. */
void proxy_timerfd_fire_due(struct proxy_world *w);
/* ns until the earliest expiry that could wake a reader; INT64_MAX: none. */
int64_t proxy_timerfd_earliest_ns(struct proxy_world *w);

/* ---- the world of processes (world.c, procsys.c) ------------------------ */

int proxy_world_init(struct proxy_world *w, struct vmm_host *host,
                     struct proxy_process *first);
void proxy_world_destroy(struct proxy_world *w);
/* Runs every process until the first one exits; returns its wait status,
 * or -1 when hvrun failed. */
int proxy_world_run(struct proxy_world *w);
struct proxy_process *proxy_world_find(struct proxy_world *w, int pid);
/* The process one of whose live threads has tid id (its leader's pid
 * included), or NULL: Linux's find_task_by_vpid, whose answer kill(2) and
 * /proc/<id>/ use for a thread that is not its process's leader. */
struct proxy_process *proxy_world_find_tid(struct proxy_world *w, int id);
/* The next pid or tid of the run: one counter for processes and threads,
 * as Linux's pid allocator, so no thread's id is another task's. */
int proxy_world_next_id(struct proxy_world *w);

/* ---- controlling terminals (io/tty.c) ------------------------------------ */

/* Whether process group pgrp is orphaned (misc.c): Linux then drops the
 * stop signals SIGTSTP, SIGTTIN and SIGTTOU of its default action, and
 * a terminal's job control answers EIO. */
bool proxy_pgrp_orphaned(struct proxy_world *w, int pgrp);

/* hvrun's own controlling terminal, if any, becomes the virtual shell's
 * session's and the first process's; freed with the world. */
void proxy_tty_world_init(struct proxy_world *w, struct proxy_process *first);
void proxy_tty_world_free(struct proxy_world *w);
/* TIOCSCTTY, TIOCNOTTY, TIOCGSID, TIOCGPGRP, TIOCSPGRP: answered from the
 * model, never the host's session (proxy_tty_ioctl, on the fd's host fd). */
bool proxy_tty_ioctl_is(unsigned int req);
long proxy_tty_ioctl(struct proxy_process *p, int host_fd, unsigned int req,
                     uint64_t arg);
/* Job control before a read, a write or a change of a terminal (host_fd)
 * by a process of a background group of its session: 0 to go on, -EIO,
 * or PROXY_RET_BLOCK after SIGTTIN/SIGTTOU to the caller's group. */
enum proxy_tty_access { PROXY_TTY_READ, PROXY_TTY_WRITE, PROXY_TTY_CHANGE };
long proxy_tty_job_control(struct proxy_process *p, int host_fd,
                           enum proxy_tty_access how);
/* p wrote bytes (of iov[0..n)) to host_fd: to a pty master whose slave
 * has a foreground group, its VINTR/VQUIT/VSUSP characters (ISIG) send
 * SIGINT/SIGQUIT/SIGTSTP to that group. */
struct iovec;
void proxy_tty_wrote(struct proxy_process *p, int host_fd,
                     const struct iovec *iov, int n, size_t bytes);
/* An open (flags as the guest gave them) of host_fd succeeded: a session
 * leader without a ctty may have gained it. */
void proxy_tty_opened(struct proxy_process *p, int host_fd, int flags);
/* Before a look at host_fd (any fd) for events: if it is a pty end whose
 * pty was written since its last such look, waits for the host's tty work
 * to deliver what is on its way (a few ms at most). */
void proxy_tty_settle(int host_fd, short events);
/* The same for each fd of a poll set. */
struct pollfd;
void proxy_tty_settle_set(const struct pollfd *fds, size_t n);
/* The same for each fd a host epoll instance watches. */
void proxy_tty_settle_epoll(int host_epfd);
/* Whether (dirfd, path) is /dev/tty; then *fd_or_err is a host fd of the
 * caller's ctty reopened with flags, or -ENXIO/-errno. */
bool proxy_tty_open_current(struct proxy_process *p, int dirfd,
                            const char *path, int flags, int *fd_or_err);
/* setsid drops the caller's ctty; a session leader's exit hangs its
 * session's terminal up (SIGHUP to the foreground group). */
void proxy_tty_setsid(struct proxy_process *p);
void proxy_tty_exit(struct proxy_process *p);
/* /proc/PID/stat's tty_nr and tpgid (-1: none) of p as p sees them. */
unsigned int proxy_tty_nr(const struct proxy_process *p);
int proxy_tty_fg_pgrp(struct proxy_process *p);

/* ---- file mappings (mm/mm.c) --------------------------------------------- */

/* A guest changed the size of the host file behind host_fd (truncate,
 * ftruncate, O_TRUNC): the file mappings of every guest over it end where
 * it ends now. */
void proxy_mm_file_resized(struct proxy_process *p, int host_fd);
/* mm.c's deferred fill of a read-only file mapping (ld.so's reservation
 * of a library): done before any syscall but mmap and any guest run;
 * forgotten with its process. */
void proxy_mm_fill_deferred(void);
void proxy_mm_forget_deferred(const struct proxy_process *p);
/* preadv of fd into guest memory (iov from vmm_as_host_iov); a regular
 * file into memfd-backed memory goes through the memfd (mm.c). */
ssize_t proxy_mm_read_file_into(const struct vmm_aspace *as, int fd,
                                bool regular, const struct iovec *iov, int n,
                                uint64_t off);

/* ---- the guest memory limit (memlimit.c) --------------------------------- */

/* Committed guest memory of the whole run (every live process's charged
 * VMAs, vmm_as account_bytes). */
uint64_t proxy_mem_committed(const struct proxy_world *w);
/* Whether bytes more may be committed: -ENOMEM past --memory. */
int proxy_mem_charge(struct proxy_process *p, uint64_t bytes);
/* The OOM backstop, called by the world loop after each event: at most
 * every few ms of host time, measures hvrun's resident anonymous memory
 * and SIGKILLs the biggest guest when it is past the limit. */
void proxy_mem_check_oom(struct proxy_world *w);
/* Set from a host signal handler (SIGINT/SIGTERM/SIGHUP to hvrun): the run
 * ends at the next event, every guest is dropped and cleaned up. */
extern volatile sig_atomic_t proxy_stop_signal;
/* The detlog's records when the run stopped so (the guest's teardown
 * logs more after). */
extern uint64_t proxy_stop_detlog;
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
/* Blocking transfers parked part way (io/xfer_progress.c). For the call
 * being served: the bytes it moved before it parked, if it is that call
 * run again, else 0 (done_before looks; resume also forgets the record,
 * to be kept again by a park); forget drops it. can_keep: whether the
 * process has a thread to keep it with (else a transfer returns short). */
uint64_t proxy_xfer_done_before(struct proxy_process *p);
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
/* A signal ends thread t's parked transfer that had moved bytes: the
 * count becomes its result (RAX, past the SYSCALL instruction), as Linux
 * returns it instead of EINTR or a restart; the record is used up. False
 * if t is not parked in such a call. end_on_stop: every thread of p, as a
 * stop signal stops the process. */
bool proxy_xfer_end_parked(struct proxy_process *p, struct proxy_thread *t);
void proxy_xfer_end_on_stop(struct proxy_process *p);
/* A socket's SO_RCVTIMEO (events POLLIN) or SO_SNDTIMEO (POLLOUT) in ns;
 * 0 when unset or host_fd is not a socket (net.c). */
uint64_t proxy_sock_timeout_ns(int host_fd, short events);
/* Whether a blocking host call now could stall another guest thread. */
bool proxy_others_runnable(const struct proxy_process *p);
extern const struct proxy_syscall proxy_procsys_syscalls[];
/* fork, vfork and clone without CLONE_THREAD: a new process in a new VM,
 * with a copy of the caller's memory, or (CLONE_VM) on the same memory. */
long proxy_fork(struct proxy_process *p, uint64_t flags, gva_t stack,
                gva_t ptid, gva_t ctid, uint64_t tls);
/* Destroys a VM, adding its exit counts to p's tree totals. */
void proxy_vm_retire(struct proxy_process *p, struct vmm_vm *vm);
/* Ends process p (exit_status already set): fds closed, VM freed, zombie
 * for its parent, children to the nearest subreaper or their pid
 * namespace's init (the virtual init, pid 1, in the run's own); the run
 * ends with the first. */
void proxy_world_exit(struct proxy_process *p);
/* Job control: a stop signal's default action, and SIGCONT. Both tell the
 * parent (SIGCHLD unless SA_NOCLDSTOP) and a waiting wait(). */
void proxy_process_stop(struct proxy_process *p, int sig);
void proxy_process_continue(struct proxy_process *p);
/* Whether a wait4/waitid of p for pid (as wait_target gives it) with
 * these options would end now: a child or tracee matching pid has an
 * event it reports, or there is none to wait for (ECHILD). */
bool proxy_wait_would_end(struct proxy_process *p, int pid, int options);
/* A zombie's exit told to its parent (SIGCHLD), or the zombie reaped when
 * the parent does not wait (ptrace.c: after its tracer was told). */
void proxy_process_notify_parent(struct proxy_process *c);

/* ---- timers (timer.c) ---------------------------------------------------- */

extern const struct proxy_syscall proxy_timer_syscalls[];
/* Fires every due timer of every live process: raises its signal (or
 * counts an overrun) and reloads periodic ones. The world loop calls it
 * before each scheduling decision. */
void proxy_timer_fire_due(struct proxy_world *w);
/* Nothing can run: if a timer that would raise a signal expires no later
 * than futex_deadline_ns (CLOCK_MONOTONIC; UINT64_MAX for none), advances
 * logical time to the earliest such expiry and returns true (the next
 * proxy_timer_fire_due fires it); otherwise false and time is unchanged. */
bool proxy_timer_advance(struct proxy_world *w, uint64_t futex_deadline_ns);
/* Whether some timer (alarm, itimer, POSIX timer, timerfd) is armed and
 * could wake a thread when it fires. */
bool proxy_timer_could_fire(struct proxy_world *w);
/* Logical ns until the earliest timer (itimer, POSIX timer, timerfd) that
 * could wake a guest fires; INT64_MAX for none. */
int64_t proxy_timer_earliest_ns(struct proxy_world *w);
/* A fork child inherits no timer (man 2 fork); call on the new process. */
void proxy_timer_fork(struct proxy_process *child);
/* execve deletes the POSIX timers and keeps alarm and the itimers. */
void proxy_timer_exec(struct proxy_process *p);

/* ---- threads (thread.c) -------------------------------------------------- */

/* Registers the initial thread (after the image is loaded). */
int proxy_thread_init(struct proxy_process *p);
/* Closes what a thread's io.c state holds (the thread is going). */
void proxy_thread_io_release(struct proxy_thread *t);
/* A parked FIFO open given up (the call returned EINTR): its fd closed. */
void proxy_fifo_unpark(struct proxy_thread *t);
/* Whether a guest of the run holds an fd on FIFO (dev, ino) that can
 * write it (writer) or read it (!writer). */
bool proxy_fifo_end_in_run(struct proxy_process *p, dev_t dev, ino_t ino,
                           bool writer);
/* A writer opened FIFO (dev, ino): the readers parked in open go on. */
void proxy_fifo_writer_opened(struct proxy_process *p, dev_t dev, ino_t ino);
/* Puts thread idx of p on p's vCPU (saving the current one). */
int proxy_thread_switch(struct proxy_process *p, int idx);
/* The earliest futex deadline of p's threads, or UINT64_MAX. */
uint64_t proxy_thread_earliest_deadline(struct proxy_process *p, int *idx);
/* Parks the current thread until logical CLOCK_MONOTONIC reaches
 * deadline_ns (nanosleep). It returns 0 then, or -EINTR with the time left
 * written to rem when a signal handler interrupts it. */
long proxy_thread_sleep(struct proxy_process *p, uint64_t deadline_ns,
                        gva_t rem);
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
/* How long a lock wait sleeps, in logical time, between two tries. */
#define PROXY_LOCK_RETRY_NS 1000000ULL
/* F_GETLK/F_SETLK/F_SETLKW on guest process p (plock.c); *copy_out says
 * that fl was updated for the guest. */
struct flock;
long proxy_plock_fcntl(struct proxy_process *p, int host_fd, int cmd,
                       struct flock *fl, bool *copy_out);
/* Whether any other guest thread of the run is still alive. */
bool proxy_others_alive(const struct proxy_process *p);
/* proxy_thread_sleep for ns from now. */
long proxy_thread_sleep_for(struct proxy_process *p, uint64_t ns, gva_t rem);
/* A sleeping thread woken by a signal: -EINTR and the remainder. */
void proxy_thread_interrupt_sleep(struct proxy_process *p, int idx);
long proxy_thread_restart_syscall(struct proxy_process *p);
/* Expires thread idx's futex timeout (it returns -ETIMEDOUT). */
/* Whether thread idx waits with a deadline that logical time has passed
 * (while other threads ran): it is then expired like the earliest one. */
bool proxy_thread_deadline_passed(struct proxy_process *p, int idx);
void proxy_thread_expire(struct proxy_process *p, int idx);

/* ---- loader (loader.c) --------------------------------------------------- */

/*
 * Loads the program at host path `path` (and its PT_INTERP) into p, builds
 * the initial stack and sets the registers. On failure returns -errno and
 * writes a one-line reason naming the file into why; p is unchanged only up
 * to the point of no return (the caller discards p on failure). guest_path:
 * the name the guest gave execve, for AT_EXECFN (NULL: path).
 */
int proxy_exec_load(struct proxy_process *p, const char *path,
                    const char *guest_path, char *const argv[],
                    char *const envp[], char *why, size_t why_len);

/* ---- logging ------------------------------------------------------------- */

/* hvrun's supplementary groups kept as they are now, for getgroups and
 * /proc/PID/status to report when a user namespace (a non-root replay's,
 * cli/isolate.c) would show them as the overflow gid (kernel/misc.c). */
void proxy_keep_host_groups(void);
/* Those (or, not kept, the live ones): getgroups' contract, -errno. */
int proxy_host_groups(gid_t *out, int max);

/* A guest's file access checked with its own ids (kernel/fscred.c): the
 * thread takes p's fsuid, fsgid and groups while p's handler runs, where
 * hvrun may change ids; hvrun's own files inside a handler are written
 * between suspend and resume. */
void proxy_fscred_enter(const struct proxy_process *p);
void proxy_fscred_leave(void);
const struct proxy_process *proxy_fscred_suspend(void);
void proxy_fscred_resume(const struct proxy_process *was);
/* access(2)'s check with the real ids: true when the thread took them
 * (then ask with AT_EACCESS, and end it). */
bool proxy_fscred_real_begin(const struct proxy_process *p);
void proxy_fscred_real_end(void);

void proxy_log(const struct proxy_process *p, int level, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

#endif
