/*
 * confine.c - hvrun confines itself.
 *
 * Everything a guest does reaches the host as calls hvrun makes on its
 * behalf, so limiting hvrun's own calls limits what a guest that subverted
 * hvrun could do. Two steps, and an optional third:
 *
 * - Capabilities (confine_drop_capabilities, at the start of `hvrun run`):
 *   as root, hvrun keeps only what serving a root guest's file and network
 *   operations with root's own access needs, and a guest's that dropped
 *   root with that guest's (CONFINE_KEPT_CAPS below), and
 *   drops the rest from every set, the bounding set included, so nothing
 *   can get them back. PR_SET_NO_NEW_PRIVS too.
 *
 * - A seccomp filter (confine_install_seccomp, built with libseccomp):
 *   installed when the run is set up (KVM device open, first VM built,
 *   program loaded), before the first guest instruction. It allows the host
 *   calls hvrun's code makes while serving guests, measured over the whole
 *   test suite (both builds), and traps anything else: the SIGSYS handler
 *   writes one line naming the call and exits 125. Arguments are checked
 *   where that is cheap: no executable host memory (hvrun never maps code
 *   after start-up), clone only for threads (hvrun never forks after
 *   set-up; --verify forks before it), signals only to hvrun itself, the
 *   SIGSYS handler cannot be replaced, sockets only of the families net.c
 *   serves. ioctl is allowed whatever the request: hvrun's own KVM ioctls
 *   and the guest's terminal and file ioctls, which syscall-proxy/io/io.c
 *   already limits to its own table, go through it.
 *
 * Deliberately absent (hvrun never makes them; a guest must not get them
 * through hvrun): execve/execveat, fork/vfork, ptrace (except in sanitizer
 * builds, below), process_vm_readv/writev, mount and friends, chroot,
 * pivot_root, setns, unshare, kexec_*, reboot, init/finit/delete_module,
 * bpf, perf_event_open, keyctl/add_key/request_key, userfaultfd, io_uring,
 * open_by_handle_at, the set*id family (but setfsuid, setfsgid and
 * setgroups: fscred.c), capset, personality, iopl/ioperm,
 * clock_settime/settimeofday/adjtimex, sethostname, swapon, acct, syslog.
 *
 * Sanitizer builds (build/debug, ASan + LSan): LeakSanitizer checks for
 * leaks at exit by stopping every thread from a helper task it clones
 * (without CLONE_THREAD) that ptraces them, so that build also allows
 * ptrace, any clone, wait4, prctl and signals to any pid. The release
 * build's filter has none of these. The tracer runs with every signal
 * blocked, so a call of its that the filter traps kills it without the
 * diagnostic, and LSan then waits for it forever: a debug hvrun that hangs
 * at exit spinning in sched_yield is that (HVRUN_SECCOMP_LOG=1 names the
 * call; LSAN_OPTIONS=detect_leaks=0 or --no-seccomp avoids it).
 *
 * --fs-policy (confine_fs_policy, off by default): Landlock rules, the host
 * read-only, writable only what the run needs to write.
 *
 * Test hook: HVRUN_SECCOMP_SELFTEST=1 (or mount, execve, ptrace, fork,
 * mprotect-exec, socket-packet, kill-other, sigaction-sigsys) makes hvrun
 * make that denied call right after the filter is installed
 * (tests/confine/seccomp.sh checks the one-line diagnostic and exit 125).
 * Without the filter (--no-seccomp) the variable is ignored. Collecting a new code path's calls:
 * HVRUN_SECCOMP_LOG=1 lets every call through and the kernel logs those
 * outside the list (dmesg, "audit: type=1326 ... syscall=N").
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/audit.h>
#include <linux/capability.h>
#include <linux/landlock.h>
#include <linux/netlink.h>
#include <linux/sched.h>
#include <sched.h>
#include <seccomp.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "cli.h"
#include "confine.h"
#include "proxy.h"

#if defined(__SANITIZE_ADDRESS__)
#define CONFINE_SANITIZER 1
#else
#define CONFINE_SANITIZER 0
#endif

/* ---- capabilities ---------------------------------------------------------- */

#define CAP_BIT(c) (1ULL << (c))

/*
 * What a root guest's operations need on the host, served with root's own
 * access: reading, writing, creating, chown/chmod and deleting any file
 * (CHOWN, DAC_OVERRIDE, DAC_READ_SEARCH, FOWNER, FSETID), ports below 1024
 * and raw sockets as root has them (NET_BIND_SERVICE, NET_RAW), and
 * resource limits as root has them (SYS_RESOURCE: a pipe past
 * pipe-max-size, the filesystem's reserved blocks), and SETUID/SETGID for
 * one use: the thread serving a guest that dropped root takes its
 * filesystem ids (setfsuid, setfsgid, setgroups; the seccomp filter allows
 * no other set*id call), so that the host checks its file access as its
 * own (syscall-proxy/kernel/fscred.c). Dropped, among others:
 * SYS_ADMIN (mount, namespaces, most of /proc/sys), SYS_MODULE, SYS_RAWIO,
 * SYS_BOOT, SYS_PTRACE, SYS_TIME, SYS_NICE, NET_ADMIN (a root guest's
 * netlink route socket could otherwise change the host's routes and
 * interfaces), MKNOD (device nodes: a guest gets EPERM for a char or block
 * device, FIFOs and sockets still work), LINUX_IMMUTABLE (chattr +i/+a
 * on a host file would outlive the run), SETPCAP/SETFCAP,
 * KILL, IPC_LOCK, IPC_OWNER, LEASE, MAC_*, AUDIT_*, SYSLOG, WAKE_ALARM,
 * BLOCK_SUSPEND, BPF, PERFMON, CHECKPOINT_RESTORE. The guest's own view
 * of its capabilities is virtual (syscall-proxy/kernel/cred.c) and unchanged.
 */
#define CONFINE_KEPT_CAPS                                                   \
    (CAP_BIT(CAP_CHOWN) | CAP_BIT(CAP_DAC_OVERRIDE) |                      \
     CAP_BIT(CAP_DAC_READ_SEARCH) | CAP_BIT(CAP_FOWNER) |                  \
     CAP_BIT(CAP_FSETID) | CAP_BIT(CAP_NET_BIND_SERVICE) |                 \
     CAP_BIT(CAP_NET_RAW) | CAP_BIT(CAP_SYS_RESOURCE) |                  \
     CAP_BIT(CAP_SETUID) | CAP_BIT(CAP_SETGID))

static int cap_get(struct __user_cap_data_struct d[2])
{
    struct __user_cap_header_struct h = {_LINUX_CAPABILITY_VERSION_3, 0};
    return (int)syscall(SYS_capget, &h, d);
}

static int cap_set(struct __user_cap_data_struct d[2])
{
    struct __user_cap_header_struct h = {_LINUX_CAPABILITY_VERSION_3, 0};
    return (int)syscall(SYS_capset, &h, d);
}

static uint64_t cap_word(const struct __user_cap_data_struct d[2],
                         size_t field)
{
    const uint32_t *lo = (const uint32_t *)&d[0], *hi = (const uint32_t *)&d[1];
    return (uint64_t)lo[field] | (uint64_t)hi[field] << 32;
}

static void cap_word_set(struct __user_cap_data_struct d[2], size_t field,
                         uint64_t v)
{
    uint32_t *lo = (uint32_t *)&d[0], *hi = (uint32_t *)&d[1];
    lo[field] = (uint32_t)v;
    hi[field] = (uint32_t)(v >> 32);
}

/* Field order of struct __user_cap_data_struct. */
enum { CAPF_EFFECTIVE, CAPF_PERMITTED, CAPF_INHERITABLE };

/* Drops every capability outside keep from the bounding set; needs
 * CAP_SETPCAP, so it runs before capset takes that away. */
static int drop_bounding(uint64_t keep, char *why, size_t len)
{
    for (int cap = 0; cap < 64; cap++) {
        int in = prctl(PR_CAPBSET_READ, cap, 0, 0, 0);
        if (in < 0)
            break; /* past the kernel's last capability */
        if (in == 0 || (keep & CAP_BIT(cap)))
            continue;
        if (prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) < 0) {
            snprintf(why, len, "dropping capability %d from the bounding "
                     "set: %s", cap, strerror(errno));
            return -1;
        }
    }
    return 0;
}

int confine_drop_capabilities(char *why, size_t len)
{
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0) {
        snprintf(why, len, "PR_SET_NO_NEW_PRIVS: %s", strerror(errno));
        return -1;
    }
    struct __user_cap_data_struct d[2];
    if (cap_get(d) < 0) {
        snprintf(why, len, "capget: %s", strerror(errno));
        return -1;
    }
    uint64_t permitted = cap_word(d, CAPF_PERMITTED);
    /* Without an effective CAP_SETPCAP the bounding set stays; what capset
     * drops below cannot come back anyway (no execve, NO_NEW_PRIVS). */
    if (cap_word(d, CAPF_EFFECTIVE) & CAP_BIT(CAP_SETPCAP) &&
        drop_bounding(CONFINE_KEPT_CAPS, why, len) < 0)
        return -1;
    (void)prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0);
    if (!permitted && !cap_word(d, CAPF_INHERITABLE))
        return 0;
    cap_word_set(d, CAPF_EFFECTIVE,
                 cap_word(d, CAPF_EFFECTIVE) & CONFINE_KEPT_CAPS);
    cap_word_set(d, CAPF_PERMITTED, permitted & CONFINE_KEPT_CAPS);
    cap_word_set(d, CAPF_INHERITABLE, 0);
    if (cap_set(d) < 0) {
        snprintf(why, len, "capset: %s", strerror(errno));
        return -1;
    }
    return 0;
}

/* ---- --fs-policy: Landlock ------------------------------------------------- */

#ifndef LANDLOCK_ACCESS_FS_REFER
#define LANDLOCK_ACCESS_FS_REFER (1ULL << 13)
#endif
#ifndef LANDLOCK_ACCESS_FS_TRUNCATE
#define LANDLOCK_ACCESS_FS_TRUNCATE (1ULL << 14)
#endif

/* The rights this kernel's Landlock ABI can restrict: ABI 1 the first 13,
 * 2 adds REFER (rename/link across directories), 3 TRUNCATE. Later rights
 * (device ioctls, network, scopes) stay unrestricted: terminal ioctls and
 * sockets are the guest's. */
static uint64_t landlock_handled(int abi)
{
    uint64_t fs = (1ULL << 13) - 1;
    if (abi >= 2)
        fs |= LANDLOCK_ACCESS_FS_REFER;
    if (abi >= 3)
        fs |= LANDLOCK_ACCESS_FS_TRUNCATE;
    return fs;
}

static int landlock_allow(int ruleset, const char *path, uint64_t access)
{
    int fd = open(path, O_PATH | O_CLOEXEC);
    if (fd < 0)
        return -1;
    struct landlock_path_beneath_attr pb = {.allowed_access = access,
                                            .parent_fd = fd};
    int rc = (int)syscall(SYS_landlock_add_rule, ruleset,
                          LANDLOCK_RULE_PATH_BENEATH, &pb, 0);
    int saved = errno;
    close(fd);
    errno = saved;
    return rc;
}

/* Landlock binds only the calling thread (and those it starts later). */
static int thread_count(void)
{
    FILE *f = fopen("/proc/self/status", "re");
    char line[128];
    int n = -1;
    while (f && fgets(line, sizeof(line), f))
        if (sscanf(line, "Threads: %d", &n) == 1)
            break;
    if (f)
        fclose(f);
    return n;
}

/* The directory that holds path ("/tmp" for "/tmp/hvrun-tmp.X"). */
static void parent_of(const char *path, char *out, size_t len)
{
    snprintf(out, len, "%s", path);
    char *slash = strrchr(out, '/');
    if (slash == out)
        slash[1] = '\0';
    else if (slash)
        *slash = '\0';
}

int confine_fs_policy(const char *const writable[], size_t n,
                      const char *removable_dir, char *why, size_t len)
{
    int abi = (int)syscall(SYS_landlock_create_ruleset, NULL, 0,
                           LANDLOCK_CREATE_RULESET_VERSION);
    if (abi < 1) {
        snprintf(why, len, "--fs-policy: this kernel has no Landlock (%s)",
                 strerror(errno));
        return -1;
    }
    if (thread_count() != 1) {
        snprintf(why, len, "--fs-policy: hvrun already runs threads");
        return -1;
    }
    /* EXECUTE is left to the kernel's own rules: hvrun's seccomp filter
     * refuses execve, and the ptrace backend's spawner, forked inside this
     * domain (vmm_host_fs_restricted), must exec its stub from a memfd,
     * which no Landlock rule can name. */
    uint64_t handled = landlock_handled(abi) & ~LANDLOCK_ACCESS_FS_EXECUTE;
    uint64_t read_only = LANDLOCK_ACCESS_FS_READ_FILE |
                         LANDLOCK_ACCESS_FS_READ_DIR;
    uint64_t writable_access = handled;
    struct landlock_ruleset_attr attr = {.handled_access_fs = handled};
    int rs = (int)syscall(SYS_landlock_create_ruleset, &attr, sizeof(attr), 0);
    if (rs < 0) {
        snprintf(why, len, "--fs-policy: landlock_create_ruleset: %s",
                 strerror(errno));
        return -1;
    }
    int rc = 0;
    const char *failed = "/";
    if (landlock_allow(rs, "/", read_only) < 0)
        rc = -1;
    for (size_t i = 0; rc == 0 && i <= n; i++) {
        const char *dir = i < n ? writable[i] : "/dev";
        if (dir && dir[0] && landlock_allow(rs, dir, writable_access) < 0) {
            failed = dir;
            rc = -1;
        }
    }
    /* hvrun removes its private /tmp at the end: REMOVE_DIR in its parent
     * (every empty directory under the host's /tmp, then). */
    char parent[4096];
    if (rc == 0 && removable_dir) {
        parent_of(removable_dir, parent, sizeof(parent));
        if (landlock_allow(rs, parent, LANDLOCK_ACCESS_FS_REMOVE_DIR) < 0) {
            failed = parent;
            rc = -1;
        }
    }
    if (rc < 0)
        snprintf(why, len, "--fs-policy: %s: %s", failed, strerror(errno));
    else if (syscall(SYS_landlock_restrict_self, rs, 0) < 0) {
        snprintf(why, len, "--fs-policy: landlock_restrict_self: %s",
                 strerror(errno));
        rc = -1;
    }
    close(rs);
    return rc;
}

/* ---- the SIGSYS diagnostic ------------------------------------------------- */

/* Async-signal-safe: digits by hand, names from syscall-proxy/names.c's
 * static table, one write, _exit. */
static size_t put_str(char *buf, size_t at, size_t cap, const char *s)
{
    while (*s && at < cap)
        buf[at++] = *s++;
    return at;
}

static size_t put_num(char *buf, size_t at, size_t cap, unsigned long v,
                      unsigned base)
{
    char digits[24];
    size_t n = 0;
    do {
        digits[n++] = "0123456789abcdef"[v % base];
        v /= base;
    } while (v && n < sizeof(digits));
    while (n && at < cap)
        buf[at++] = digits[--n];
    return at;
}

static void on_sigsys(int sig, siginfo_t *si, void *ctx)
{
    (void)sig;
    (void)ctx;
    char line[256];
    size_t cap = sizeof(line) - 1, at = 0;
    int nr = si->si_syscall;
    const char *name = NULL;
    if (si->si_arch == AUDIT_ARCH_X86_64 && nr >= 0 && nr < PROXY_NR_SYSCALLS)
        name = proxy_syscall_names[nr];
    at = put_str(line, at, cap, "hvrun: seccomp: host syscall ");
    at = put_str(line, at, cap, name ? name : "?");
    at = put_str(line, at, cap, " (");
    at = put_num(line, at, cap, (unsigned long)(unsigned)nr, 10);
    if (si->si_arch != AUDIT_ARCH_X86_64) {
        at = put_str(line, at, cap, ", arch 0x");
        at = put_num(line, at, cap, (unsigned long)(unsigned)si->si_arch, 16);
    }
    at = put_str(line, at, cap,
                 ") is not in hvrun's allowlist; stopping (a bug in hvrun, or "
                 "a guest escaping it; --no-seccomp runs without the filter)");
    line[at++] = '\n';
    ssize_t w = write(2, line, at);
    (void)w;
    _exit(CLI_EXIT_FAILURE);
}

static int install_sigsys_handler(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof(sa));
    sa.sa_sigaction = on_sigsys;
    sa.sa_flags = SA_SIGINFO;
    sigfillset(&sa.sa_mask);
    if (sigaction(SIGSYS, &sa, NULL) < 0)
        return -1;
    /* A blocked SIGSYS would make the kernel kill hvrun without a word. */
    sigset_t sys;
    sigemptyset(&sys);
    sigaddset(&sys, SIGSYS);
    return pthread_sigmask(SIG_UNBLOCK, &sys, NULL) == 0 ? 0 : -1;
}

/* ---- the allowlist ----------------------------------------------------------- */

/*
 * Calls allowed whatever their arguments, grouped by who makes them. The
 * set is what hvrun's code can call once the run is set up: the libc
 * functions and raw syscall()s of vmm/, syscall-proxy/, detcore/ and cli/
 * (nm -u build/hvrun, grep 'syscall('), checked against strace -f of the
 * whole test suite after the filter's seccomp() call. Start-up-only calls
 * (execve, capget/capset, prlimit64, arch_prctl, the CPUID cache's
 * mkstemp/rename, --verify's fork/wait4/dup2) are not in it.
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
bool confine_allow_fork;

static int allow_with_arguments(scmp_filter_ctx f)
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
    /* pid 0: the calling thread only, never another process. */
    struct scmp_arg_cmp this_thread = SCMP_A0(SCMP_CMP_EQ, 0);
    rc |= allow(f, SCMP_SYS(sched_setaffinity), 1, &this_thread);
    if (CONFINE_SANITIZER) {
        for (size_t i = 0; i < sizeof(sanitizer_calls) / sizeof(int); i++)
            rc |= allow(f, sanitizer_calls[i], 0, NULL);
        return rc;
    }
    struct scmp_arg_cmp thread =
        SCMP_A0(SCMP_CMP_MASKED_EQ, CLONE_THREAD, CLONE_THREAD);
    rc |= allow(f, SCMP_SYS(clone), 1, &thread);
    if (confine_allow_fork) { /* a copy of hvrun: no exec, no namespaces */
        const scmp_datum_t shared =
            CLONE_VM | CLONE_FS | CLONE_FILES | CLONE_SIGHAND | CLONE_THREAD |
            CLONE_VFORK | CLONE_PTRACE | CLONE_NEWNS | CLONE_NEWUSER |
            CLONE_NEWPID | CLONE_NEWNET | CLONE_NEWIPC | CLONE_NEWUTS |
            CLONE_NEWCGROUP;
        struct scmp_arg_cmp fork_only = SCMP_A0(SCMP_CMP_MASKED_EQ, shared, 0);
        rc |= allow(f, SCMP_SYS(clone), 1, &fork_only);
    }
    struct scmp_arg_cmp self = SCMP_A0(SCMP_CMP_EQ, (scmp_datum_t)getpid());
    rc |= allow(f, SCMP_SYS(kill), 1, &self);  /* abort(), raise() */
    rc |= allow(f, SCMP_SYS(tgkill), 1, &self);
    return rc;
}

static int build_filter(scmp_filter_ctx f, uint32_t deny, const int *extra,
                        size_t n_extra)
{
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
    rc |= allow_with_arguments(f);
    return rc;
}

/*
 * HVRUN_SECCOMP_SELFTEST=NAME: one call the filter must deny, made right
 * after it is installed; each is harmless if it were let through (a bad
 * path, an existence check, a zero length, invalid flags, a query).
 */
static long selftest_call(const char *name)
{
    if (!strcmp(name, "1") || !strcmp(name, "mount"))
        return syscall(SYS_mount, NULL, NULL, NULL, 0UL, NULL);
    if (!strcmp(name, "execve"))
        return syscall(SYS_execve, "/nonexistent/hvrun-selftest", NULL, NULL);
    if (!strcmp(name, "ptrace"))
        return syscall(SYS_ptrace, 2L /* PTRACE_PEEKDATA */, 1L, 0L, 0L);
    if (!strcmp(name, "fork")) /* CLONE_SIGHAND without CLONE_VM: EINVAL */
        return syscall(SYS_clone, (long)(CLONE_SIGHAND | SIGCHLD), 0L, 0L,
                       0L, 0L);
    if (!strcmp(name, "mprotect-exec"))
        return syscall(SYS_mprotect, 0L, 0L, (long)(PROT_READ | PROT_EXEC));
    if (!strcmp(name, "socket-packet")) {
        long fd = syscall(SYS_socket, 17L /* AF_PACKET */, (long)SOCK_RAW, 0L);
        if (fd >= 0)
            close((int)fd);
        return fd;
    }
    if (!strcmp(name, "kill-other"))
        return syscall(SYS_kill, 1L, 0L);
    if (!strcmp(name, "sigaction-sigsys")) {
        struct sigaction old;
        return sigaction(SIGSYS, NULL, &old);
    }
    return -ENOSYS - 4096; /* not a name: no call made */
}

static void seccomp_selftest(void)
{
    const char *v = getenv("HVRUN_SECCOMP_SELFTEST");
    if (!v || !*v)
        return;
    long r = selftest_call(v);
    if (r == -ENOSYS - 4096)
        cli_error("HVRUN_SECCOMP_SELFTEST=%s: unknown; mount, execve, "
                  "ptrace, fork, mprotect-exec, socket-packet, kill-other, "
                  "sigaction-sigsys", v);
    else
        cli_error("seccomp self-test: %s was not blocked (returned %ld)", v,
                  r);
}

int confine_install_seccomp(const int *extra, size_t n_extra, char *why,
                            size_t len)
{
    static bool installed;
    if (installed)
        return 0;
    if (install_sigsys_handler() < 0) {
        snprintf(why, len, "seccomp: SIGSYS handler: %s", strerror(errno));
        return -1;
    }
    /* HVRUN_SECCOMP_LOG=1: a call outside the list is allowed and logged
     * by the kernel (dmesg: audit type=1326 ... syscall=N), to collect
     * what a new code path needs. */
    const char *log = getenv("HVRUN_SECCOMP_LOG");
    uint32_t deny = log && !strcmp(log, "1") ? SCMP_ACT_LOG : SCMP_ACT_TRAP;
    scmp_filter_ctx f = seccomp_init(deny);
    if (!f) {
        snprintf(why, len, "seccomp: cannot create a filter");
        return -1;
    }
    int rc = build_filter(f, deny, extra, n_extra);
    if (rc == 0)
        rc = seccomp_load(f);
    seccomp_release(f);
    if (rc != 0) {
        snprintf(why, len, "seccomp: loading the filter: %s",
                 strerror(rc < 0 ? -rc : EINVAL));
        return -1;
    }
    installed = true;
    seccomp_selftest();
    return 0;
}
