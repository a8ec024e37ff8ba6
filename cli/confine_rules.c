/*
 * confine_rules.c - the rules of hvrun's own seccomp filter (cli/confine.c
 * says what the filter is for and how it is installed): which host calls
 * hvrun's code makes once a run is set up, with the arguments it makes them
 * with. Kept apart from the installing so that the build can compile the
 * same rules ahead of time (cli/filtergen.c) and hvrun loads the program
 * without running libseccomp's compiler at every start.
 */
#include "confine_rules.h"

#include <errno.h>
#include <linux/kcmp.h>
#include <linux/netlink.h>
#include <sched.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>

/*
 * Calls allowed whatever their arguments, grouped by who makes them. The
 * set is what hvrun's code can call once the run is set up: the libc
 * functions and raw syscall()s of vmm/, syscall-proxy/, detcore/ and cli/
 * (nm -u build/hvrun, grep 'syscall('), checked against strace -f of the
 * whole test suite after the filter's seccomp() call. Start-up-only calls
 * (execve, capget/capset, prlimit64, arch_prctl, the CPUID cache's
 * mkstemp/rename, --verify's dup2) are not in it; a plain fork and wait4
 * (a run under gdb's checkpoints) are allowed with the argument rules.
 */
static const int allowed_calls[] = {
    /* I/O on guest fds: syscall-proxy/io/io.c (read/write families, the
     * vectored ones with their offsets and flags, splice/tee/sendfile,
     * readahead, sync_file_range, copy_file_range), stdio of hvrun */
    SCMP_SYS(read), SCMP_SYS(write), SCMP_SYS(readv), SCMP_SYS(writev),
    SCMP_SYS(pread64), SCMP_SYS(pwrite64), SCMP_SYS(preadv),
    SCMP_SYS(pwritev), SCMP_SYS(preadv2), SCMP_SYS(pwritev2),
    SCMP_SYS(lseek), SCMP_SYS(sendfile), SCMP_SYS(splice), SCMP_SYS(tee),
    SCMP_SYS(copy_file_range), SCMP_SYS(readahead),
    SCMP_SYS(sync_file_range), SCMP_SYS(fadvise64),
    /* fds: fdtable.c (a guest dup is a host dup), pipes, fcntl, flock,
     * plock.c's OFD locks; dup3: record/replay puts a listener's stand-in
     * at the guest socket's host fd (net/outside_accept.c) */
    SCMP_SYS(close), SCMP_SYS(dup), SCMP_SYS(dup3), SCMP_SYS(pipe2),
    SCMP_SYS(fcntl), SCMP_SYS(flock),
    /* paths: fs.c, fsmeta.c (getdents, metadata), vfs.c, loader.c
     * (realpath: readlink, getcwd), preserve.c (--verify run 1 copies
     * aside), hermetic.c (the private /tmp, removed at the end: chmod,
     * renameat, rmdir) */
    SCMP_SYS(openat), SCMP_SYS(openat2) /* procguard.c */,
    SCMP_SYS(newfstatat), SCMP_SYS(statx),
    468 /* file_getattr */, 469 /* file_setattr */,
    SCMP_SYS(fstatfs), SCMP_SYS(statfs), SCMP_SYS(faccessat),
    SCMP_SYS(faccessat2), SCMP_SYS(getdents64), SCMP_SYS(getcwd),
    SCMP_SYS(fchdir), SCMP_SYS(readlink), SCMP_SYS(readlinkat),
    SCMP_SYS(mkdirat), SCMP_SYS(rmdir), SCMP_SYS(unlinkat),
    SCMP_SYS(linkat), SCMP_SYS(symlinkat), SCMP_SYS(renameat),
    SCMP_SYS(renameat2), SCMP_SYS(mknodat), SCMP_SYS(truncate),
    SCMP_SYS(ftruncate), SCMP_SYS(fallocate), SCMP_SYS(fsync),
    SCMP_SYS(fdatasync), SCMP_SYS(sync), SCMP_SYS(syncfs),
    SCMP_SYS(fchmod), SCMP_SYS(fchmodat),
    SCMP_SYS(fchown), SCMP_SYS(fchownat), SCMP_SYS(umask),
    SCMP_SYS(utimensat), SCMP_SYS(futimesat),
    SCMP_SYS(getxattr), SCMP_SYS(fgetxattr), SCMP_SYS(setxattr),
    SCMP_SYS(fsetxattr), SCMP_SYS(listxattr), SCMP_SYS(flistxattr),
    SCMP_SYS(removexattr), SCMP_SYS(fremovexattr),
    SCMP_SYS(inotify_init1), SCMP_SYS(inotify_add_watch),
    SCMP_SYS(inotify_rm_watch),
    /* all ioctls: KVM (vmm/), the guest's terminal and file ioctls
     * (io.c's table), isatty */
    SCMP_SYS(ioctl),
    /* memory: guest RAM and shared mappings (vmm/aspace.c: munmap, mremap,
     * madvise, mincore for fork, msync, memfd_create for shared
     * anonymous memory), malloc (brk); mmap and mprotect are below,
     * without PROT_EXEC */
    SCMP_SYS(munmap), SCMP_SYS(mremap), SCMP_SYS(madvise),
    SCMP_SYS(mincore), SCMP_SYS(msync), SCMP_SYS(brk),
    SCMP_SYS(memfd_create),
    /* waiting and time: world.c's host waits, io.c's poll, epoll.c,
     * eventfds of signalfd.c/timerfd.c, detcore/clock.c */
    SCMP_SYS(poll), SCMP_SYS(ppoll), SCMP_SYS(epoll_create1),
    SCMP_SYS(epoll_ctl), SCMP_SYS(epoll_wait), SCMP_SYS(eventfd2),
    SCMP_SYS(clock_nanosleep), SCMP_SYS(clock_gettime),
    SCMP_SYS(clock_getres), SCMP_SYS(time) /* scratch.c, if no vDSO */,
    /* signals: the time-slice timer (vmm/kvm.c, set up lazily),
     * pthread_sigmask (rt_sigaction is below) */
    SCMP_SYS(rt_sigprocmask), SCMP_SYS(rt_sigreturn),
    SCMP_SYS(timer_create), SCMP_SYS(timer_settime),
    SCMP_SYS(timer_delete) /* a ptrace stub's CPU-clock timer */,
    /* threads: vmm/kvm_pool.c's worker, glibc's locks (clone is below) */
    SCMP_SYS(futex), SCMP_SYS(set_robust_list), SCMP_SYS(rseq),
    SCMP_SYS(exit), SCMP_SYS(exit_group),
    /* the pool's worker gives itself back every CPU (the guest thread
     * stays pinned: vmm/kvm_host.c); sched_setaffinity is below */
    SCMP_SYS(sched_getaffinity),
    /* ids, host facts: detcore (getuid/getgid, uname, getrandom when not
     * virtualised), cred.c (getgroups), sys.c (getrusage, sysinfo; also glibc's
     * qsort), io.c (getpgrp) */
    SCMP_SYS(getpid), SCMP_SYS(gettid), SCMP_SYS(getuid), SCMP_SYS(geteuid),
    SCMP_SYS(getgid), SCMP_SYS(getegid), SCMP_SYS(getgroups),
    /* a guest's filesystem ids on the thread serving it (fscred.c) */
    SCMP_SYS(setfsuid), SCMP_SYS(setfsgid), SCMP_SYS(setgroups),
    SCMP_SYS(getpgrp), SCMP_SYS(getrusage), SCMP_SYS(sysinfo),
    SCMP_SYS(uname), SCMP_SYS(getrandom),
    /* sockets: net.c, peercred.c (socket and socketpair are below) */
    SCMP_SYS(bind), SCMP_SYS(listen), SCMP_SYS(accept4), SCMP_SYS(connect),
    SCMP_SYS(getsockname), SCMP_SYS(getpeername), SCMP_SYS(getsockopt),
    SCMP_SYS(setsockopt), SCMP_SYS(sendto), SCMP_SYS(recvfrom),
    SCMP_SYS(sendmsg), SCMP_SYS(recvmsg), SCMP_SYS(shutdown),
    /* a guest's mq_notify(SIGEV_THREAD): a private, at once unlinked host
     * queue whose notification the host kernel writes to the guest's
     * netlink socket (syscall-proxy/kernel/mqueue.c) */
    SCMP_SYS(mq_open), SCMP_SYS(mq_unlink), SCMP_SYS(mq_notify),
    SCMP_SYS(mq_timedsend),
};

/* What the sanitizer runtimes make after set-up, only in sanitizer builds:
 * LeakSanitizer's exit-time check (clone of a tracer task without
 * CLONE_THREAD, ptrace of every thread, wait4, prctl PR_SET_PTRACER /
 * PR_SET_DUMPABLE / PR_SET_PDEATHSIG, getppid, signals to the tracer,
 * sched_yield and nanosleep while it waits; its thread list read with
 * the legacy open and getdents, measured with HVRUN_SECCOMP_LOG=1), ASan's
 * per-thread alternate signal stack (sigaltstack); its CPU count
 * (sched_getaffinity) is in the list above. */
static const int sanitizer_calls[] = {
    SCMP_SYS(ptrace), SCMP_SYS(clone), SCMP_SYS(wait4), SCMP_SYS(prctl),
    SCMP_SYS(kill), SCMP_SYS(tgkill), SCMP_SYS(tkill), SCMP_SYS(getppid),
    SCMP_SYS(sched_yield), SCMP_SYS(nanosleep), SCMP_SYS(sigaltstack),
    SCMP_SYS(open), SCMP_SYS(getdents),
};

static int allow(scmp_filter_ctx f, int nr, unsigned n,
                 const struct scmp_arg_cmp *cmp)
{
    return seccomp_rule_add_array(f, SCMP_ACT_ALLOW, nr, n, cmp);
}

/* Socket families net.c serves (family_supported); netlink only for the
 * protocols net.c and peercred.c open. */
static int allow_sockets(scmp_filter_ctx f)
{
    static const int families[] = {AF_UNIX, AF_INET, AF_INET6};
    int rc = 0;
    for (size_t i = 0; i < sizeof(families) / sizeof(families[0]); i++) {
        struct scmp_arg_cmp c = SCMP_A0(SCMP_CMP_EQ, (scmp_datum_t)families[i]);
        rc |= allow(f, SCMP_SYS(socket), 1, &c);
        rc |= allow(f, SCMP_SYS(socketpair), 1, &c);
    }
    static const int netlink_protocols[] = {NETLINK_ROUTE, NETLINK_SOCK_DIAG};
    for (size_t i = 0; i < 2; i++) {
        struct scmp_arg_cmp c[2] = {
            SCMP_A0(SCMP_CMP_EQ, AF_NETLINK),
            SCMP_A2(SCMP_CMP_EQ, (scmp_datum_t)netlink_protocols[i])};
        rc |= allow(f, SCMP_SYS(socket), 2, c);
        rc |= allow(f, SCMP_SYS(socketpair), 2, c);
    }
    return rc;
}

/* quotactl and quotactl_fd (syscall-proxy/fs/quota.c) for queries and
 * syncs only: the subcommand (the cmd argument but its type byte) is one
 * that reads quota state, never one that changes it. */
static int allow_quota_queries(scmp_filter_ctx f)
{
    static const unsigned int queries[] = {
        0x800001 /* Q_SYNC */,       0x800004 /* Q_GETFMT */,
        0x800005 /* Q_GETINFO */,    0x800007 /* Q_GETQUOTA */,
        0x5803 /* Q_XGETQUOTA */,    0x5805 /* Q_XGETQSTAT */,
        0x5807 /* Q_XQUOTASYNC */,   0x5808 /* Q_XGETQSTATV */,
    };
    int rc = 0;
    for (size_t i = 0; i < sizeof(queries) / sizeof(queries[0]); i++) {
        scmp_datum_t sub = (scmp_datum_t)queries[i] << 8;
        struct scmp_arg_cmp c0 = SCMP_A0(SCMP_CMP_MASKED_EQ, 0xffffff00, sub);
        struct scmp_arg_cmp c1 = SCMP_A1(SCMP_CMP_MASKED_EQ, 0xffffff00, sub);
        rc |= allow(f, SCMP_SYS(quotactl), 1, &c0);
        rc |= allow(f, SCMP_SYS(quotactl_fd), 1, &c1);
    }
    return rc;
}

/* Rules that look at arguments: no executable host memory, threads only,
 * signals only to hvrun, SIGSYS's handler stays. */
static int allow_with_arguments(scmp_filter_ctx f, long self_pid,
                                bool sanitizer)
{
    int rc = 0;
    struct scmp_arg_cmp no_exec = SCMP_A2(SCMP_CMP_MASKED_EQ, PROT_EXEC, 0);
    rc |= allow(f, SCMP_SYS(mmap), 1, &no_exec);
    rc |= allow(f, SCMP_SYS(mprotect), 1, &no_exec);
    struct scmp_arg_cmp keep_sigsys = SCMP_A0(SCMP_CMP_NE, SIGSYS);
    rc |= allow(f, SCMP_SYS(rt_sigaction), 1, &keep_sigsys);
    /* fscred.c: a changed fsuid leaves a process not dumpable (a ptrace
     * stub reopens hvrun's fds through /proc/<hvrun>/fd) and clears its
     * parent-death signal (--verify's run dies with its parent): both put
     * back, the signal as it was */
    struct scmp_arg_cmp dumpable = SCMP_A0(SCMP_CMP_EQ, PR_SET_DUMPABLE);
    struct scmp_arg_cmp dumpable_on = SCMP_A1(SCMP_CMP_EQ, 1);
    rc |= seccomp_rule_add(f, SCMP_ACT_ALLOW, SCMP_SYS(prctl), 2, dumpable,
                           dumpable_on);
    struct scmp_arg_cmp pdeath_get = SCMP_A0(SCMP_CMP_EQ, PR_GET_PDEATHSIG);
    struct scmp_arg_cmp pdeath_set = SCMP_A0(SCMP_CMP_EQ, PR_SET_PDEATHSIG);
    rc |= allow(f, SCMP_SYS(prctl), 1, &pdeath_get);
    rc |= allow(f, SCMP_SYS(prctl), 1, &pdeath_set);
    /* glibc's pthread_create tries clone3 first and falls back to clone
     * on ENOSYS; clone3's flags are in memory the filter cannot read. */
    rc |= seccomp_rule_add(f, SCMP_ACT_ERRNO(ENOSYS), SCMP_SYS(clone3), 0);
    rc |= allow_sockets(f);
    rc |= allow_quota_queries(f);
    /* kcmp of hvrun with itself, KCMP_EPOLL_TFD: which entries a
     * host epoll instance has (fdtable.c, a guest's KCMP_EPOLL_TFD). */
    struct scmp_arg_cmp kcmp_self[3] = {
        SCMP_A0(SCMP_CMP_EQ, (scmp_datum_t)self_pid),
        SCMP_A1(SCMP_CMP_EQ, (scmp_datum_t)self_pid),
        SCMP_A2(SCMP_CMP_EQ, KCMP_EPOLL_TFD),
    };
    rc |= allow(f, SCMP_SYS(kcmp), 3, kcmp_self);
    /* and KCMP_FILE: whether a description a guest received in
     * SCM_RIGHTS is one a guest sent with hvrun's notes (fs/fdpass.c) */
    kcmp_self[2] = SCMP_A2(SCMP_CMP_EQ, KCMP_FILE);
    rc |= allow(f, SCMP_SYS(kcmp), 3, kcmp_self);
    /* pid 0: the calling thread only, never another process. */
    struct scmp_arg_cmp this_thread = SCMP_A0(SCMP_CMP_EQ, 0);
    rc |= allow(f, SCMP_SYS(sched_setaffinity), 1, &this_thread);
    if (sanitizer) {
        for (size_t i = 0; i < sizeof(sanitizer_calls) / sizeof(int); i++)
            rc |= allow(f, sanitizer_calls[i], 0, NULL);
        return rc;
    }
    struct scmp_arg_cmp thread =
        SCMP_A0(SCMP_CMP_MASKED_EQ, CLONE_THREAD, CLONE_THREAD);
    rc |= allow(f, SCMP_SYS(clone), 1, &thread);
    /* fork: a run under gdb copies itself for checkpoints
     * (cli/gdbserver_checkpoint.c). A clone that shares nothing and makes
     * no namespace; exec stays forbidden, so the copy can run nothing but
     * hvrun's own code, under this same filter. */
    const scmp_datum_t shared =
        CLONE_VM | CLONE_FS | CLONE_FILES | CLONE_SIGHAND | CLONE_THREAD |
        CLONE_VFORK | CLONE_PTRACE | CLONE_NEWNS | CLONE_NEWUSER |
        CLONE_NEWPID | CLONE_NEWNET | CLONE_NEWIPC | CLONE_NEWUTS |
        CLONE_NEWCGROUP;
    struct scmp_arg_cmp fork_only = SCMP_A0(SCMP_CMP_MASKED_EQ, shared, 0);
    rc |= allow(f, SCMP_SYS(clone), 1, &fork_only);
    rc |= allow(f, SCMP_SYS(wait4), 0, NULL); /* and reaps them */
    struct scmp_arg_cmp self = SCMP_A0(SCMP_CMP_EQ, (scmp_datum_t)self_pid);
    rc |= allow(f, SCMP_SYS(kill), 1, &self);  /* abort(), raise() */
    rc |= allow(f, SCMP_SYS(tgkill), 1, &self);
    return rc;
}

scmp_filter_ctx confine_rules_filter(uint32_t deny, const int *extra,
                                     size_t n_extra, long self_pid,
                                     bool sanitizer)
{
    scmp_filter_ctx f = seccomp_init(deny);
    if (!f)
        return NULL;
    int rc = 0;
    rc |= seccomp_attr_set(f, SCMP_FLTATR_ACT_BADARCH, deny);
    rc |= seccomp_attr_set(f, SCMP_FLTATR_CTL_TSYNC, 1);
    rc |= seccomp_attr_set(f, SCMP_FLTATR_CTL_NNP, 1);
    /* A binary tree over the syscall numbers instead of a linear scan. */
    (void)seccomp_attr_set(f, SCMP_FLTATR_CTL_OPTIMIZE, 2);
    for (size_t i = 0; i < sizeof(allowed_calls) / sizeof(int); i++)
        rc |= allow(f, allowed_calls[i], 0, NULL);
    for (size_t i = 0; i < n_extra; i++)
        rc |= allow(f, extra[i], 0, NULL);
    rc |= allow_with_arguments(f, self_pid, sanitizer);
    if (rc != 0) {
        seccomp_release(f);
        return NULL;
    }
    return f;
}
