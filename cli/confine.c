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
 * - A seccomp filter (confine_install_seccomp; its rules are in
 *   confine_rules.c, compiled by libseccomp when hvrun is built,
 *   cli/filtergen.c, and at run time only for inputs the build did not
 *   foresee):
 *   installed when the run is set up (KVM device open, first VM built,
 *   program loaded), before the first guest instruction. It allows the host
 *   calls hvrun's code makes while serving guests, measured over the whole
 *   test suite (both builds), and traps anything else: the SIGSYS handler
 *   writes one line naming the call and exits 125. Arguments are checked
 *   where that is cheap: no executable host memory (hvrun never maps code
 *   after start-up), clone only for threads and for a plain fork (a run
 *   under gdb copies itself for checkpoints; the copy cannot exec either;
 *   --verify forks before set-up), signals only to hvrun itself (kcmp
 *   too, of hvrun with itself, KCMP_EPOLL_TFD and KCMP_FILE only), the
 *   SIGSYS handler cannot be replaced, sockets only of the families net.c
 *   serves. ioctl is allowed whatever the request: hvrun's own KVM ioctls
 *   and the guest's terminal and file ioctls, which syscall-proxy/io/io.c
 *   already limits to its own table, go through it.
 *
 * Deliberately absent (hvrun never makes them; a guest must not get them
 * through hvrun): execve/execveat, vfork, ptrace (except in sanitizer
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
#include <linux/seccomp.h>
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
#include "confine_rules.h"
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
 * CAP_SETPCAP, so it runs before capset takes that away. Dropping one
 * already dropped succeeds, so there is no PR_CAPBSET_READ first (41
 * prctls fewer, ~2 us each on a kvm_pvm host); EINVAL is the end of the
 * kernel's capabilities (every kept one lies below any kernel's last). */
static int drop_bounding(uint64_t keep, char *why, size_t len)
{
    for (int cap = 0; cap < 64; cap++) {
        if (keep & CAP_BIT(cap))
            continue;
        if (prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) < 0) {
            if (errno == EINVAL)
                break; /* past the kernel's last capability */
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

/*
 * The program the build compiled for these inputs (cli/filtergen.c), with
 * this process's pid put into its kill/tgkill rules; NULL when none fits
 * (another backend's calls, HVRUN_SECCOMP_LOG's deny action, a build
 * without them), and the caller compiles with libseccomp as before.
 * Compiling cost ~7% of a /bin/true run's CPU (docs/PERFORMANCE.md).
 */
static struct sock_filter *prebuilt_program(uint32_t deny, const int *extra,
                                            size_t n_extra,
                                            unsigned short *len)
{
    if (!confine_prebuilt_filters || deny != SCMP_ACT_TRAP)
        return NULL;
    for (const struct confine_prebuilt *const *p = confine_prebuilt_filters;
         *p; p++) {
        const struct confine_prebuilt *b = *p;
        if (b->sanitizer != CONFINE_SANITIZER || b->n_extra != n_extra ||
            (n_extra && memcmp(b->extra, extra, n_extra * sizeof(int))))
            continue;
        struct sock_filter *prog = malloc(b->len * sizeof(*prog));
        if (!prog)
            return NULL;
        memcpy(prog, b->insns, b->len * sizeof(*prog));
        for (size_t i = 0; i < b->n_pid_slots; i++)
            prog[b->pid_slots[i]].k = (uint32_t)getpid();
        *len = b->len;
        return prog;
    }
    return NULL;
}

/* What seccomp_load does with the attributes build_filter sets: no new
 * privileges, then the filter on every thread (TSYNC). */
static int load_program(struct sock_filter *prog, unsigned short len)
{
    struct sock_fprog fprog = {.len = len, .filter = prog};
    if (prctl(PR_SET_NO_NEW_PRIVS, 1L, 0L, 0L, 0L) < 0)
        return -errno;
    long rc = syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER,
                      SECCOMP_FILTER_FLAG_TSYNC, &fprog);
    if (rc < 0)
        return -errno;
    return rc > 0 ? -ESRCH : 0; /* rc: a thread that could not take it */
}

/* Compiles the rules with libseccomp and loads them. */
static int compile_and_load(uint32_t deny, const int *extra, size_t n_extra)
{
    scmp_filter_ctx f = confine_rules_filter(deny, extra, n_extra,
                                             (long)getpid(), CONFINE_SANITIZER);
    if (!f)
        return -EINVAL;
    int rc = seccomp_load(f);
    seccomp_release(f);
    return rc == 0 ? 0 : rc < 0 ? rc : -EINVAL;
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
    unsigned short prog_len = 0;
    struct sock_filter *prog =
        prebuilt_program(deny, extra, n_extra, &prog_len);
    int rc = prog ? load_program(prog, prog_len)
                  : compile_and_load(deny, extra, n_extra);
    free(prog);
    if (rc != 0) {
        snprintf(why, len, "seccomp: loading the filter: %s", strerror(-rc));
        return -1;
    }
    installed = true;
    seccomp_selftest();
    return 0;
}
