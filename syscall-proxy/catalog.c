/*
 * catalog.c - how hvrun handles each syscall, for `hvrun syscalls` and
 * docs/SYSCALLS.md (a test keeps the two equal). The handler tables are
 * the truth about WHICH calls exist; this file only says HOW each family
 * handles them, with the exceptions named.
 */
#include "proxy.h"
#include "kernel.h"
#include "mm.h"
#include "fs.h"
#include "io.h"
#include "net.h"

#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>

struct family_kind {
    const struct proxy_syscall *table;
    const char *family;
    const char *kind;
};

static const struct family_kind families[] = {
    {proxy_fs_syscalls, "fs", "passthrough"},
    {proxy_namei_syscalls, "fs", "passthrough"},
    {proxy_attr_syscalls, "fs", "passthrough"},
    {proxy_io_syscalls, "io", "passthrough"},
    {proxy_poll_syscalls, "io", "passthrough"},
    {proxy_fcntl_syscalls, "io", "passthrough"},
    {proxy_net_syscalls, "net", "passthrough"},
    {proxy_msg_syscalls, "net", "passthrough"},
    {proxy_mm_syscalls, "mm", "emulated"},
    {proxy_process_syscalls, "process", "emulated"},
    {proxy_signal_syscalls, "signal", "emulated"},
    {proxy_thread_syscalls, "thread", "emulated"},
    {proxy_time_syscalls, "time", "virtualised"},
    {proxy_sys_syscalls, "misc", "emulated"},
    {proxy_cred_syscalls, "misc", "emulated"},
    {proxy_sched_syscalls, "misc", "emulated"},
    {proxy_prctl_syscalls, "misc", "emulated"},
    {proxy_mlock_syscalls, "misc", "emulated"},
    {proxy_procsys_syscalls, "process", "emulated"},
    {proxy_timer_syscalls, "timer", "virtualised"},
    {proxy_signalfd_syscalls, "signal", "emulated"},
    {proxy_timerfd_syscalls, "timer", "virtualised"},
    {proxy_epoll_syscalls, "epoll", "passthrough"},
    {proxy_seccomp_syscalls, "seccomp", "emulated"},
    {proxy_sysvshm_syscalls, "ipc", "emulated"},
    {proxy_sysvsem_syscalls, "ipc", "emulated"},
    {proxy_sysvmsg_syscalls, "ipc", "emulated"},
    {proxy_process_vm_syscalls, "mm", "emulated"},
    {proxy_mqueue_syscalls, "ipc", "emulated"},
    {proxy_adjtime_syscalls, "time", "virtualised"},
    {proxy_ldt_syscalls, "mm", "emulated"},
    {proxy_secretmem_syscalls, "mm", "emulated"},
    {proxy_mseal_syscalls, "mm", "emulated"},
    {proxy_openat2_syscalls, "fs", "passthrough"},
    {proxy_mount_api_syscalls, "namespace", "emulated"},
    {proxy_acct_syscalls, "process", "emulated"},
    {proxy_quota_syscalls, "fs", "passthrough"},
    {proxy_filesystems_syscalls, "fs", "emulated"},
    {proxy_ustat_syscalls, "fs", "virtualised"},
    {proxy_file_attr_syscalls, "fs", "passthrough"},
    {proxy_handle_syscalls, "fs", "emulated"},
    {proxy_lsm_syscalls, "security", "emulated"},
    {proxy_keys_syscalls, "keys", "emulated"},
    {proxy_ptrace_syscalls, "ptrace", "emulated"},
    {proxy_rseq_syscalls, "rseq", "emulated"},
    {proxy_pidfd_syscalls, "process", "emulated"},
    {proxy_kcmp_syscalls, "process", "emulated"},
    {proxy_aio_syscalls, "io", "emulated"},
    {proxy_ns_syscalls, "namespace", "emulated"},
    {proxy_perf_syscalls, "perf", "virtualised"},
};

struct exception_note {
    int nr;
    const char *kind; /* NULL: the family's */
    const char *note;
};

#define VDSO_NOTE "glibc calls it through hvrun's vDSO: answered in the " \
                  "guest from the logical clock, no exit"

static const struct exception_note notes[] = {
    {SYS_clock_gettime, NULL, VDSO_NOTE},
    {SYS_gettimeofday, NULL, VDSO_NOTE},
    {SYS_time, NULL, VDSO_NOTE},
    {SYS_clock_getres, NULL, VDSO_NOTE},
    {SYS_getcpu, NULL, "CPU 0, node 0 (one CPU); through the vDSO without "
                       "an exit"},
    {SYS_setsockopt, NULL, "SO_RCVTIMEO/SO_SNDTIMEO become logical-clock "
                           "deadlines of the socket's waits"},
    {SYS_getsockopt, NULL, "SO_PEERCRED of a peer in the run names the guest"},
    {SYS_bind, NULL, "port 0 (AF_INET/6) takes detcore's next port, 32768 on"},
    {SYS_inotify_add_watch, NULL, "watched through an O_PATH fd's link; "
                                  "rename cookies are the run's own"},
    {SYS_umask, "emulated", "the guest umask is applied by hvrun"},
    {SYS_getcwd, "emulated", "the guest cwd is an O_PATH fd held by hvrun; "
                             "private /tmp mapped back"},
    {SYS_chdir, "emulated", "replaces the guest cwd fd"},
    {SYS_fchdir, "emulated", "replaces the guest cwd fd"},
    {SYS_chroot, "emulated", "refused with EPERM after the path's checks"},
    {SYS_seccomp, "emulated", "the guest's classic-BPF filters run by hvrun "
                              "before each call (all actions but "
                              "USER_NOTIF: no listener, EINVAL)"},
    {SYS_io_uring_setup, NULL, "ENOSYS: io_uring would run guest I/O in "
                               "the host kernel, past hvrun; callers fall "
                               "back to read/write"},
    {SYS_io_uring_enter, NULL, "ENOSYS (no io_uring_setup)"},
    {SYS_io_uring_register, NULL, "ENOSYS (no io_uring_setup)"},
    {SYS_perf_event_open, NULL, "software events counted in logical "
                                "terms (task/cpu-clock, context switches, "
                                "page faults); hardware, tracepoint and "
                                "other PMUs ENOENT, as a host without a "
                                "PMU; no ring buffer (mmap ENODEV)"},
    {SYS_process_vm_readv, NULL, "the run's processes only (ESRCH "
                                 "else), through each one's checked "
                                 "copy path; stops at the first page "
                                 "refused"},
    {SYS_process_vm_writev, NULL, "as process_vm_readv"},
    {SYS_mq_open, NULL, "the run's own names (nothing on the host); the "
                        "descriptor an eventfd kept ready as the queue is"},
    {SYS_mq_timedsend, NULL, "a wait re-tried every 1 ms of logical time"},
    {SYS_mq_timedreceive, NULL, "a wait re-tried every 1 ms of logical "
                                "time"},
    {SYS_mq_notify, NULL, "SIGEV_SIGNAL, SIGEV_NONE and SIGEV_THREAD "
                          "(its netlink cookie written by the host kernel "
                          "through a private host queue of hvrun's)"},
    {SYS_adjtimex, NULL, "a query answers the NTP-less state of the "
                         "virtual clock (TIME_ERROR, STA_UNSYNC); a change "
                         "EPERM (no CAP_SYS_TIME)"},
    {SYS_clock_adjtime, NULL, "as adjtimex for CLOCK_REALTIME; other "
                              "clocks EOPNOTSUPP or EINVAL"},
    {SYS_modify_ldt, NULL, "reads: no LDT, the default 128 zero bytes; "
                           "a valid write ENOSYS (no backend loads a "
                           "guest LDT)"},
    {SYS_acct, NULL, "EPERM: no guest has CAP_SYS_PACCT"},
    {SYS_kcmp, NULL, "the process model's objects: open file descriptions "
                     "by the fd table's ids, address spaces, fs "
                     "(shared by CLONE_FS), SEM_UNDO lists (shared by "
                     "CLONE_SYSVSEM), fd tables and signal handlers per "
                     "process; ordered by ids of the run's own, never "
                     "host pointers; KCMP_EPOLL_TFD by the entries the "
                     "host's epoll instance has under the fd table's "
                     "keys"},
    {SYS_quotactl, NULL, "queries asked of the host's filesystem; a "
                         "change EPERM after its device checks"},
    {SYS_quotactl_fd, NULL, "as quotactl"},
    {SYS_sysfs, NULL, "answered from the host's /proc/filesystems (what "
                      "the guest reads there), read once by hvrun"},
    {SYS_add_key, NULL, "the run's own keys (never the host's keyrings): "
                        "user, logon and keyring types, serials from a "
                        "counter per run, Linux's default permissions "
                        "and quotas"},
    {SYS_request_key, NULL, "searches the caller's thread, process and "
                            "session keyrings; no upcall (ENOKEY when "
                            "not found, as with no /sbin/request-key)"},
    {SYS_keyctl, NULL, "the keyctl(2) operations on the run's keys; "
                       "INSTANTIATE/NEGATE/REJECT EPERM (no upcall), "
                       "persistent keyrings, RESTRICT_KEYRING, DH, PKEY "
                       "and WATCH_KEY EOPNOTSUPP"},
    {SYS_memfd_create, "passthrough", "a host memfd under the guest's name; "
                                      "MFD_HUGETLB is EINVAL"},
    {SYS_name_to_handle_at, NULL, "handles hvrun mints: the canonical "
                                  "inode number and a serial of the run "
                                  "(DETERMINISM.md)"},
    {SYS_open_by_handle_at, NULL, "only handles the run minted, reopened "
                                  "through hvrun's O_PATH fd of the file"},
    {SYS_close, "emulated", "guest fd table; the host fd is closed"},
    {SYS_close_range, "emulated", "guest fd table"},
    {SYS_dup, "emulated", "guest fd table over a host dup"},
    {SYS_dup2, "emulated", "guest fd table over a host dup"},
    {SYS_dup3, "emulated", "guest fd table over a host dup"},
    {SYS_open, NULL, "private /tmp; /proc and /sys machine files "
                     "synthesised; /dev/urandom from detcore; /dev/tty "
                     "is the session's terminal"},
    {SYS_openat, NULL, "private /tmp; /proc and /sys machine files "
                       "synthesised; /dev/urandom from detcore; /dev/tty "
                       "is the session's terminal"},
    {SYS_openat2, NULL, "as openat; open_how checked as Linux's "
                        "build_open_flags; the resolve flags applied by the "
                        "host's openat2 walk; RESOLVE_CACHED always a full "
                        "lookup"},
    {SYS_memfd_secret, NULL, "a host memfd only mmap (MAP_SHARED, locked) "
                             "reaches; process_vm_*, /proc/PID/mem and "
                             "ptrace find no page there"},
    {SYS_stat, "virtualised", "canonical ino/dev/times (detcore)"},
    {SYS_lstat, "virtualised", "canonical ino/dev/times (detcore)"},
    {SYS_fstat, "virtualised", "canonical ino/dev/times (detcore)"},
    {SYS_newfstatat, "virtualised", "canonical ino/dev/times (detcore)"},
    {SYS_statx, "virtualised", "canonical ino/dev/times (detcore)"},
    {SYS_statfs, "virtualised", "free counts canonical"},
    {136 /* ustat */, NULL, "statfs's canonical counts of the device's file "
                            "system (docs/DETERMINISM.md)"},
    {461 /* lsm_list_modules */, NULL, "one security module, capability "
                                       "(kernel/lsm.c); the host's are "
                                       "never shown"},
    {459 /* lsm_get_self_attr */, NULL, "EOPNOTSUPP after Linux's checks: "
                                        "the capability module keeps no "
                                        "attributes"},
    {460 /* lsm_set_self_attr */, NULL, "as lsm_get_self_attr"},
    {468 /* file_getattr */, NULL, "the host's own call after hvrun's path "
                                   "walk: ENOSYS on a host before Linux 6.17"},
    {469 /* file_setattr */, NULL, "as file_getattr"},
    {451 /* cachestat */, "emulated", "every page of a regular file in the "
                                       "range is cached, none dirty or "
                                       "evicted (the host's cache varies)"},
    {452 /* fchmodat2 */, NULL, "the host's fchmodat on the file the flags "
                                "name (any host kernel)"},
    {SYS_fstatfs, "virtualised", "free counts canonical"},
    {SYS_getdents64, "virtualised", "sorted by name, canonical d_ino"},
    {SYS_getdents, "virtualised", "sorted by name, canonical d_ino"},
    {SYS_read, NULL, "/dev/urandom fds read detcore's stream"},
    {SYS_connect, NULL, "nscd/userdb sockets refused (hermetic NSS)"},
    {SYS_sethostname, "virtualised", "seen only inside the run"},
    {SYS_setdomainname, "virtualised", "seen only inside the run"},
    {SYS_readlink, NULL, "/proc/self/exe answers the guest program"},
    {SYS_readlinkat, NULL, "/proc/self/exe answers the guest program"},
    {SYS_ioctl, NULL, "terminal and file requests; others ENOTTY; "
                      "controlling terminal, session and foreground group "
                      "(TIOCSCTTY, TIOCNOTTY, TIOCGSID, TIOCGPGRP, "
                      "TIOCSPGRP) per virtual session (io/tty.c); a "
                      "socket's SIOCGIFCONF and read-only SIOCGIF* "
                      "queries answer from the host's interfaces, as "
                      "NETLINK_ROUTE does, and SIOCSIF* changes are "
                      "EPERM (net/netdev_ioctl.c); PROCMAP_QUERY on "
                      "/proc/PID/maps (fs/procmap_query.c)"},
    {SYS_fcntl, NULL, "POSIX record locks owned per guest process (an OFD "
                      "lock on a per-process reopen); owners, F_SETSIG, "
                      "O_ASYNC's SIGIO, dnotify and leases kept by hvrun "
                      "(io/fasync.c; opens from outside the run break no "
                      "lease); F_CREATED_QUERY and F_DUPFD_QUERY from the "
                      "guest fd table"},
    {SYS_write, NULL, "EPIPE raises SIGPIPE in the guest; RLIMIT_FSIZE cuts "
                      "a regular file's write (EFBIG, SIGXFSZ at the limit; "
                      "truncate and fallocate too: fs/fsize.c)"},
    {SYS_mmap, NULL, "file MAP_PRIVATE copies the range (its untouched "
                     "pages do not see later writes to the file); "
                     "MAP_SHARED maps the host file (or a memfd for "
                     "anonymous memory) over the backing pages, shared "
                     "across fork; a page past the file's end is SIGBUS; "
                     "MAP_32BIT bottom-up in [0x40000000, 0x80000000)"},
    {SYS_remap_file_pages, NULL, "as Linux 4.0+ emulates it: a new mmap "
                                 "(MAP_SHARED, MAP_FIXED) of the VMA's "
                                 "file at pgoff; the VMAs a range spans "
                                 "must map one file (by dev/ino); shared "
                                 "anonymous memory EINVAL"},
    {SYS_madvise, NULL, "DONTNEED: private pages as mapped (zeros or the "
                        "file's), shared kept; fork advice per VMA; "
                        "MADV_FREE keeps the contents"},
    {SYS_mlock, NULL, "nothing is swapped: the lock is the VMA's flag "
                      "(madvise refuses to drop it)"},
    {SYS_copy_file_range, NULL, "across filesystems hvrun copies (as Linux "
                                "5.3-5.18), never EXDEV"},
    {SYS_shmget, NULL, "the run's own IPC namespace (its /proc/sysvipc): "
                       "a memfd per segment, ids from 0"},
    {SYS_semop, NULL, "all or none; a wait re-tries every 1 ms of logical "
                      "time (EAGAIN, EIDRM, EINTR as Linux)"},
    {SYS_shmat, NULL, "MAP_SHARED of the segment's memfd; fork, execve "
                      "and exit keep the attach count"},
    {SYS_setgroups, NULL, "the guest's list, inherited; hvrun's own groups "
                          "stay"},
    {SYS_setfsuid, NULL, "the process's (Linux: the thread's); set*id and "
                         "execve reset it to the euid; /proc's 4th Uid; "
                         "leaving root drops the file capabilities from "
                         "the effective set, coming back raises them"},
    {SYS_setfsgid, NULL, "the process's (Linux: the thread's); set*id and "
                         "execve reset it to the egid; /proc's 4th Gid"},
    {SYS_set_mempolicy, NULL, "one node: the mode and mask are kept for "
                              "get_mempolicy"},
    {SYS_mbind, NULL, "one node: a range's mode and mask are kept for "
                      "get_mempolicy(MPOL_F_ADDR) until it is unmapped or "
                      "mapped anew"},
    {SYS_brk, NULL, "heap after the program's last segment"},
    {SYS_rt_sigreturn, NULL, "restores the XSAVE image from the frame"},
    {SYS_rt_sigtimedwait, NULL, "timeouts on the logical clock"},
    {SYS_rt_sigqueueinfo, NULL, "signals coalesce: no real-time queue"},
    {SYS_signalfd4, NULL, "readiness through a host eventfd"},
    {SYS_epoll_wait, NULL, "parks on the host epoll fd; a finite timeout "
                           "is a logical deadline"},
    {SYS_epoll_pwait, NULL, "parks on the host epoll fd; a finite timeout "
                            "is a logical deadline"},
    {SYS_epoll_pwait2, NULL, "parks on the host epoll fd; a finite timeout "
                             "is a logical deadline"},
    {SYS_kill, NULL, "any guest process or group; virtual pids; EPERM "
                     "where the uids do not match, without CAP_KILL"},
    {SYS_fork, NULL, "a new VM with a copy of the touched memory"},
    {SYS_vfork, NULL, "a new VM on the parent's memory (shared, not "
                      "copied); the parent waits for exec/exit"},
    {SYS_execve, NULL, "a fresh VM; a failed exec leaves the caller intact"},
    {SYS_wait4, NULL, "zombies reaped; the caller waits in the scheduler"},
    {SYS_exit, NULL, "ends the thread; the last thread ends the process"},
    {SYS_clone, NULL, "threads share the VM; CLONE_VM without "
                      "CLONE_THREAD: a new VM on the same memory; without "
                      "CLONE_VM: as fork"},
    {SYS_clone3, NULL, "ENOSYS on purpose: libc falls back to clone"},
    {SYS_futex, NULL, "wait queues in hvrun; PI futexes with Linux's word "
                       "protocol, waiters in arrival order (one vCPU: "
                       "no priority to inherit)"},
    {SYS_sched_yield, NULL, "hands the vCPU to the next runnable thread"},
    {SYS_uname, "virtualised", "fixed machine identity from detcore"},
    {SYS_sysinfo, "virtualised", "fixed memory, logical uptime"},
    {SYS_getrusage, "virtualised", "times from detcore clocks"},
    {SYS_times, "virtualised", "times from detcore clocks"},
    {SYS_getrandom, "virtualised", "bytes from detcore"},
    {SYS_getgroups, "passthrough", "the host's supplementary groups"},
    {SYS_sched_getaffinity, NULL, "one CPU"},
    {SYS_getpid, NULL, "virtual pid 2 (1 with --as-init)"},
    {SYS_gettid, NULL, "virtual tids, numbered with the pids"},
    {SYS_syslog, NULL, "refused with EPERM"},
    {SYS_vhangup, NULL, "refused with EPERM"},
    {SYS_alarm, NULL, "fires on the logical clock"},
    {SYS_setitimer, NULL, "logical clock; VIRTUAL/PROF count elapsed time"},
    {SYS_timer_create, NULL, "logical clocks; SIGEV_THREAD_ID signals the "
                             "process"},
    {SYS_unshare, NULL, "user (uid/gid maps), UTS, IPC, pid and cgroup "
                        "namespaces of the run's model (also clone's "
                        "CLONE_NEW*); mount, net and time: EPERM, as an "
                        "unprivileged container"},
    {SYS_mount, NULL, "EPERM: no mount table of the guest's (the host's "
                      "mounts, unchangeable), as a container without "
                      "CAP_SYS_ADMIN"},
    {SYS_umount2, NULL, "EPERM (unknown flags EINVAL), as mount"},
    {SYS_pivot_root, NULL, "EPERM, as mount"},
    {430, NULL, "EPERM, as mount (may_mount)"},
    {431, NULL, "argument checks; no fd is an fs_context (EINVAL)"},
    {432, NULL, "EPERM, as mount (may_mount)"},
    {433, NULL, "EPERM, as mount (may_mount)"},
    {429, NULL, "EPERM, as mount (may_mount)"},
    {428, NULL, "an O_PATH open; OPEN_TREE_CLONE EPERM, as mount"},
    {442, NULL, "EPERM after its argument checks, as mount"},
    {SYS_setns, NULL, "fds of /proc/PID/ns/* of the run's namespaces; a "
                      "refused kind (mnt, net, time) only to the one it is "
                      "in"},
};

static const struct exception_note *note_of(int nr)
{
    for (size_t i = 0; i < sizeof(notes) / sizeof(notes[0]); i++)
        if (notes[i].nr == nr)
            return &notes[i];
    return NULL;
}

static const struct family_kind *family_of(int nr)
{
    const struct family_kind *found = NULL;
    /* Later families win, as in table.c's merge. */
    for (size_t f = 0; f < sizeof(families) / sizeof(families[0]); f++)
        for (const struct proxy_syscall *s = families[f].table; s->nr >= 0;
             s++)
            if (s->nr == nr)
                found = &families[f];
    return found;
}

void proxy_catalog_print_markdown(FILE *out)
{
    fprintf(out,
            "# Syscalls\n\n"
            "Generated by `hvrun syscalls`; `make test` checks that this "
            "file matches it.\n\n"
            "- **emulated**: hvrun implements the call on its own model of "
            "the process (memory, signals, threads, fd table).\n"
            "- **passthrough**: carried out on the host, on host fds and "
            "paths hvrun holds for the guest.\n"
            "- **virtualised**: the answer comes from detcore, the one door "
            "for values that could differ between runs.\n"
            "- **unsupported**: returns ENOSYS and logs one line naming the "
            "call (`--fail-closed` ends the run instead).\n\n"
            "| nr | syscall | family | status | notes |\n"
            "|---:|---|---|---|---|\n");
    for (int nr = 0; nr < PROXY_NR_SYSCALLS; nr++) {
        if (!proxy_syscall_names[nr])
            continue;
        const struct family_kind *fam = family_of(nr);
        const struct exception_note *n = note_of(nr);
        const char *kind = !fam ? "unsupported"
                           : (n && n->kind) ? n->kind
                                            : fam->kind;
        fprintf(out, "| %d | %s | %s | %s | %s |\n", nr,
                proxy_syscall_names[nr], fam ? fam->family : "-", kind,
                n ? n->note : "");
    }
}
