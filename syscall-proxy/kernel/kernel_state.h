/*
 * kernel_state.h - kernel/'s parts of struct proxy_process (proxy.h): its
 * signal state, its timers, its credentials and namespaces. A field of
 * one of them is added here, and only here. Part of the core proxy.h builds on,
 * so it includes nothing of syscall-proxy (tests/lint/include_graph.py counts a
 * part header,
 * *_state.h, with proxy.h).
 */
#ifndef PROXY_KERNEL_STATE_H
#define PROXY_KERNEL_STATE_H

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#define PROXY_NSIG 65 /* signals 1..64 */

struct proxy_ns;

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

/* A process's signals: dispositions, the running thread's mask and
 * alternate stack (a switch saves them into the outgoing proxy_thread and
 * loads the next one's), the pending set and its real-time queue
 * (kernel/signal.c). */
struct proxy_sig_state {
    struct proxy_sigaction sigactions[PROXY_NSIG];
    uint64_t sigmask;           /* bit (sig-1) blocked */
    stack_t altstack;           /* ss_sp holds a gva */
    struct proxy_pending_signal pending[PROXY_NSIG];
    uint64_t pending_mask;
    /* real-time signals queue: instances after the first, oldest first,
     * of the process's and of each thread's own pending set */
    struct proxy_pending_signal *rt_queue;
    int nr_rt_queue, cap_rt_queue;
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
    /* No slot from here on was used since the process began (fork) or
     * exec'd: the looks at every timer before each scheduling decision
     * stop here, so 1000 processes without POSIX timers cost 1000 steps,
     * not 32 000. */
    int posix_top;
    int next_id;
};

/* ---- credentials and namespaces (cred.c, namespace.c) ------------------- */

enum proxy_ns_type {
    PROXY_NS_USER,
    PROXY_NS_UTS,
    PROXY_NS_IPC,
    PROXY_NS_PID,
    PROXY_NS_MNT,
    PROXY_NS_NET,
    PROXY_NS_CGROUP,
    PROXY_NS_TIME,
    PROXY_NR_NS,
};

/* The deepest pid namespace (Linux's MAX_PID_NS_LEVEL). */
#define PROXY_PID_LEVELS 32

/* A process's credentials (kept as kernel ids: the run's initial user
 * namespace's, seen through its own; kernel/cred.c) and its namespaces
 * (kernel/namespace.c). */
struct proxy_cred_state {
    uid_t ruid, euid, suid;
    gid_t rgid, egid, sgid;
    /* The filesystem ids (setfsuid, setfsgid): the euid and egid again
     * after every set*id call and execve, /proc's 4th Uid and Gid. */
    uid_t fsuid;
    gid_t fsgid;
    /* The supplementary groups setgroups gave (cred.c), nr_groups of
     * them; -1: never set, getgroups reports hvrun's own. Owned. */
    uint32_t *groups;
    int nr_groups;
    /* Its namespaces (kernel/namespace.c); NULL: the run's initial one.
     * ns[PROXY_NS_PID] is the one its children are made in. ns_caps:
     * the full capabilities a new (or entered) user namespace gives its
     * creator, until execve or a set*uid call away from its root. */
    struct proxy_ns *ns[PROXY_NR_NS];
    bool ns_caps;
    /* Capabilities PR_SET_KEEPCAPS kept across a setuid away from root
     * (permitted), made effective again by capset; execve drops them. */
    bool caps_kept, caps_kept_effective;
    /* The sets a capset gave (capget, /proc/PID/status and capset's own
     * rules read them); until one, and again after execve or a uid change,
     * the sets follow the euid (caps_recorded false). */
    bool caps_recorded;
    uint64_t cap_eff, cap_perm, cap_inh;
    /* PR_CAP_AMBIENT's set, within cap_perm & cap_inh; it means nothing
     * unless caps_recorded (the sets that follow the ids have no
     * inheritable ones, so no ambient ones: proxy_cred_ambient) */
    uint64_t cap_amb;
    /* PR_CAPBSET_DROP's drops from the bounding set (inherited, kept by
     * execve): a bit per capability no longer in it */
    uint64_t cap_bset_dropped;
    /* The pid namespace it lives in (NULL: the run's) and its pid in it
     * and in each one above (vpids[0] is pid). */
    struct proxy_ns *pidns;
    int vpids[PROXY_PID_LEVELS + 1];
};

#endif
