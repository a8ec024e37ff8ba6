/*
 * sysfuzz - a seeded syscall-argument fuzzer, run as a guest under
 * build/debug/hvrun (tests/fuzz/run-syscalls.sh, make fuzz-syscalls).
 *
 *   sysfuzz SEED [CHILDREN [CALLS [-v [FIRST]]]]
 *
 * Forks CHILDREN children one after another; each issues CALLS syscalls
 * drawn from a fixed allowlist, with arguments drawn from shapes: valid,
 * edge (a buffer that runs into a PROT_NONE page, a read-only page, the
 * program's text), bad (NULL, the guest kernel's half, non-canonical,
 * -1), and integers at their extremes. A child may crash, be killed by
 * its alarm, or block (the parent kills it after a deadline): those are
 * its own business. The parent exits 0 when every child was reaped; a
 * crash of hvrun, a sanitizer report, hvrun's exit 125 or a hang of the
 * whole run is a finding. -v writes each call to stderr first; FIRST
 * skips the children before that index (the others' calls stay the same:
 * each child's random stream depends on SEED and its index alone).
 *
 * Nothing may change the host: no unlink/rename/rmdir/mkdir/truncate/
 * chmod/chown/mount/chdir/ptrace/reboot/setuid, kill only the caller
 * itself, files created only under fixed names in the working directory
 * (a scratch directory), host files opened read-only and never given to a
 * call that changes a file (write, ftruncate, utimensat, fallocate take
 * only fds the child made: pipes, sockets, eventfds, memfds, scratch
 * files; times change only scratch files by name, since an fd number may
 * be reused). No sockaddr is random. Sizes of memory calls stay at most
 * 64 MiB.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define LOG_FD 1000
#define MAX_FDS 64
#define MAX_LEN (64ULL << 20)
#define KERNEL_GVA 0xffffffff80000000ULL

static uint64_t rng;
static bool verbose;

static uint64_t r64(void)
{
    rng ^= rng >> 12;
    rng ^= rng << 25;
    rng ^= rng >> 27;
    return rng * 0x2545F4914F6CDD1DULL;
}

static uint64_t pick(uint64_t n) { return n ? r64() % n : 0; }

/* ---- the child's resources ---------------------------------------------- */

static uint8_t *buf_rw;  /* 64 KiB, random contents */
static uint8_t *buf_ro;  /* one read-only page */
static uint8_t *edge;    /* a RW page followed by a PROT_NONE page */
static int fds[MAX_FDS], nfds;       /* every fd the child made */
static int wfds[MAX_FDS], nwfds;     /* those it may write or change */

static void add_fd(int fd, bool writable)
{
    if (fd < 0 || nfds >= MAX_FDS)
        return;
    fds[nfds++] = fd;
    if (writable && nwfds < MAX_FDS)
        wfds[nwfds++] = fd;
}

static const char *const scratch_names[] = {"fz0", "fz1", "fz2"};
static const char *const read_paths[] = {
    "/", ".", "/etc/passwd", "/etc", "/proc/self/status", "/proc/self/maps",
    "/proc/self/stat", "/proc/self/fd", "/dev/null", "/dev/zero",
    "/dev/urandom", "/nonexistent", "/proc/self/exe", "/bin/sh", "fz0",
    "fz1", "", "/proc/self/fd/0", "/sys/kernel/mm"};

static void make_resources(void)
{
    buf_rw = mmap(NULL, 65536, PROT_READ | PROT_WRITE,
                  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    buf_ro = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
                  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    edge = mmap(NULL, 8192, PROT_READ | PROT_WRITE,
                MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (buf_rw == MAP_FAILED || buf_ro == MAP_FAILED || edge == MAP_FAILED)
        _exit(100);
    for (size_t i = 0; i < 65536; i += 8) {
        uint64_t v = pick(4) ? r64() : pick(4096);
        memcpy(buf_rw + i, &v, 8);
    }
    memset(buf_ro, 0x41, 4096);
    buf_ro[4095] = 0;
    mprotect(buf_ro, 4096, PROT_READ);
    memset(edge, 'a', 4096); /* an unterminated string into the guard */
    mprotect(edge + 4096, 4096, PROT_NONE);
    int p[2];
    if (pipe2(p, O_NONBLOCK) == 0) {
        add_fd(p[0], false);
        add_fd(p[1], true);
    }
    if (pipe(p) == 0) {
        add_fd(p[0], false);
        add_fd(p[1], true);
    }
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, p) == 0) {
        add_fd(p[0], true);
        add_fd(p[1], true);
    }
    if (socketpair(AF_UNIX, SOCK_DGRAM, 0, p) == 0) {
        add_fd(p[0], true);
        add_fd(p[1], true);
    }
    add_fd(eventfd(1, EFD_NONBLOCK), true);
    add_fd((int)syscall(SYS_memfd_create, "sysfuzz", 0), true);
    add_fd(open(scratch_names[pick(3)], O_RDWR | O_CREAT, 0600), true);
    add_fd(open("/etc/passwd", O_RDONLY), false);
    add_fd(open(".", O_RDONLY | O_DIRECTORY), false);
    add_fd(open("/proc/self/status", O_RDONLY), false);
    add_fd((int)syscall(SYS_epoll_create1, 0), false);
    add_fd((int)syscall(SYS_timerfd_create, CLOCK_MONOTONIC, 0), false);
}

/* ---- argument shapes ----------------------------------------------------- */

static uint64_t bad_ptr(void)
{
    static const uint64_t bad[] = {0, 1, 4095, KERNEL_GVA, KERNEL_GVA + 0x4000,
                                   KERNEL_GVA + 0x1000, 0x800000000000ULL,
                                   0x7ffffffff000ULL, UINT64_MAX,
                                   UINT64_MAX - 4095, 0xffff800000000000ULL};
    return bad[pick(sizeof(bad) / sizeof(bad[0]))];
}

/* Memory the call may read or write: valid, edge or bad. */
static uint64_t ptr_arg(void)
{
    switch (pick(10)) {
    case 0: case 1: case 2:
        return (uint64_t)(uintptr_t)(buf_rw + pick(65536 - 512));
    case 3:
        return (uint64_t)(uintptr_t)(buf_rw + pick(64) * 1024);
    case 4:
        return (uint64_t)(uintptr_t)(buf_ro + pick(4096));
    case 5:
        return (uint64_t)(uintptr_t)(edge + 4096 - pick(256));
    case 6:
        return (uint64_t)(uintptr_t)&make_resources; /* text: r-x */
    default:
        return bad_ptr();
    }
}

static uint64_t int_arg(void)
{
    static const uint64_t edges[] = {
        0, 1, 2, 3, 4096, 65536, INT_MAX, (uint64_t)(int64_t)INT_MIN,
        (uint64_t)INT64_MAX, (uint64_t)INT64_MIN, UINT64_MAX, UINT32_MAX,
        0x80000000ULL, (uint64_t)-4096, 999999999, 1000000000};
    switch (pick(4)) {
    case 0: return edges[pick(sizeof(edges) / sizeof(edges[0]))];
    case 1: return pick(64);
    case 2: return (uint64_t)-(int64_t)pick(64);
    default: return r64();
    }
}

static uint64_t len_arg(void)
{
    switch (pick(5)) {
    case 0: return pick(64);
    case 1: return pick(8192);
    case 2: return pick(MAX_LEN);
    case 3: return (uint64_t)-(int64_t)pick(8192);
    default: return 4096 * pick(16);
    }
}

static uint64_t fd_of(const int *pool, int n)
{
    switch (pick(8)) {
    case 0: return (uint64_t)-1;
    case 1: return 100000 + pick(10);
    case 2: return (uint64_t)(int64_t)INT_MIN;
    case 3: return pick(3);
    default: return n ? (uint64_t)pool[pick((uint64_t)n)] : 0;
    }
}

static uint64_t fd_arg(void) { return fd_of(fds, nfds); }
/* An fd a call may write to or change: only the child's own. */
static uint64_t wfd_arg(void)
{
    uint64_t fd = fd_of(wfds, nwfds);
    return fd < 3 ? (uint64_t)-1 : fd;
}

/* A path for calls that only look. */
static uint64_t rpath_arg(void)
{
    if (pick(4) == 0)
        return pick(2) ? bad_ptr() : (uint64_t)(uintptr_t)edge;
    return (uint64_t)(uintptr_t)
        read_paths[pick(sizeof(read_paths) / sizeof(read_paths[0]))];
}

/* A path for calls that may create or change: scratch names or faults. */
static uint64_t wpath_arg(void)
{
    if (pick(4) == 0)
        return bad_ptr();
    return (uint64_t)(uintptr_t)scratch_names[pick(3)];
}

static uint64_t addr_arg(void)
{
    switch (pick(6)) {
    case 0: return 0;
    case 1: return (uint64_t)(uintptr_t)buf_rw + 4096 * pick(16);
    case 2: return (uint64_t)(uintptr_t)edge + 4096 * pick(2);
    case 3: return 0x10000000ULL + 4096 * pick(4096);
    case 4: return bad_ptr();
    default: return int_arg() & ~4095ULL;
    }
}

/* A timespec/timeval/itimerspec-sized struct in buf_rw with edge values. */
static uint64_t time_arg(void)
{
    if (pick(4) == 0)
        return ptr_arg();
    int64_t *t = (int64_t *)(void *)(buf_rw + 8 * pick(1024));
    static const int64_t secs[] = {0, 1, -1, INT64_MAX, INT64_MIN, 2, 1 << 30};
    static const int64_t nsecs[] = {0, 1, 999999999, 1000000000, -1,
                                    INT64_MAX, 0x3fffffff, 0x3ffffffe};
    for (int i = 0; i < 4; i += 2) {
        t[i] = pick(2) ? secs[pick(7)] : (int64_t)pick(3);
        t[i + 1] = pick(2) ? nsecs[pick(8)] : (int64_t)pick(1000);
    }
    return (uint64_t)(uintptr_t)t;
}

/* ---- the allowlist --------------------------------------------------------- */

struct call {
    long nr;
    const char *name;
    void (*args)(uint64_t a[6]);
};

static void a_rw(uint64_t a[6]) { a[0] = fd_arg(); a[1] = ptr_arg(); a[2] = len_arg(); }
static void a_w(uint64_t a[6]) { a[0] = wfd_arg(); a[1] = ptr_arg(); a[2] = len_arg(); }
static void a_prw(uint64_t a[6]) { a_rw(a); a[3] = int_arg(); }
static void a_pw(uint64_t a[6]) { a_w(a); a[3] = int_arg(); }
static void a_iov(uint64_t a[6]) { a[0] = fd_arg(); a[1] = ptr_arg(); a[2] = pick(3) ? pick(8) : int_arg(); a[3] = int_arg(); a[4] = int_arg(); }
static void a_wiov(uint64_t a[6]) { a_iov(a); a[0] = wfd_arg(); }
static void a_fd(uint64_t a[6]) { a[0] = fd_arg(); }
static void a_fd_ptr(uint64_t a[6]) { a[0] = fd_arg(); a[1] = ptr_arg(); }
static void a_path_ptr(uint64_t a[6]) { a[0] = rpath_arg(); a[1] = ptr_arg(); a[2] = len_arg(); }
static void a_at_path(uint64_t a[6])
{
    a[0] = pick(2) ? (uint64_t)AT_FDCWD : fd_arg();
    a[1] = rpath_arg(); a[2] = ptr_arg(); a[3] = int_arg(); a[4] = ptr_arg();
}
static void a_statx(uint64_t a[6])
{
    a_at_path(a); a[2] = pick(2) ? 0 : int_arg(); a[3] = int_arg(); a[4] = ptr_arg();
}
static void a_poll(uint64_t a[6]) { a[0] = ptr_arg(); a[1] = pick(8); a[2] = pick(3); }
static void a_ppoll(uint64_t a[6]) { a[0] = ptr_arg(); a[1] = pick(8); a[2] = time_arg(); a[3] = ptr_arg(); a[4] = 8; }
static void a_select(uint64_t a[6]) { a[0] = pick(2) ? pick(64) : int_arg(); a[1] = ptr_arg(); a[2] = ptr_arg(); a[3] = ptr_arg(); a[4] = time_arg(); a[5] = ptr_arg(); }
static void a_lseek(uint64_t a[6]) { a[0] = fd_arg(); a[1] = int_arg(); a[2] = pick(6); }
static void a_mmap(uint64_t a[6])
{
    static const uint64_t flags[] = {
        MAP_PRIVATE | MAP_ANONYMOUS, MAP_SHARED | MAP_ANONYMOUS,
        MAP_PRIVATE, MAP_SHARED, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED,
        MAP_PRIVATE | MAP_FIXED_NOREPLACE | MAP_ANONYMOUS,
        MAP_PRIVATE | MAP_ANONYMOUS | MAP_GROWSDOWN, MAP_SHARED_VALIDATE,
        MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_STACK, 0xfff};
    a[0] = addr_arg(); a[1] = len_arg() & (MAX_LEN - 1);
    a[2] = pick(4) ? pick(8) : int_arg();
    a[3] = flags[pick(sizeof(flags) / sizeof(flags[0]))];
    a[4] = pick(2) ? (uint64_t)-1 : wfd_arg();
    a[5] = pick(2) ? 0 : int_arg();
}
static void a_mprotect(uint64_t a[6]) { a[0] = addr_arg(); a[1] = len_arg(); a[2] = pick(4) ? pick(8) : int_arg(); }
static void a_munmap(uint64_t a[6]) { a[0] = addr_arg(); a[1] = len_arg(); }
static void a_mremap(uint64_t a[6])
{
    a[0] = addr_arg(); a[1] = len_arg(); a[2] = len_arg() & (MAX_LEN - 1);
    a[3] = pick(8); a[4] = addr_arg();
}
static void a_madvise(uint64_t a[6])
{
    static const uint64_t adv[] = {MADV_NORMAL, MADV_RANDOM, MADV_SEQUENTIAL,
                                   MADV_WILLNEED, MADV_DONTNEED, MADV_FREE,
                                   MADV_DONTFORK, MADV_DOFORK, MADV_HUGEPAGE,
                                   MADV_NOHUGEPAGE, MADV_DONTDUMP, MADV_COLD,
                                   MADV_PAGEOUT, 12345, (uint64_t)-1};
    a[0] = addr_arg(); a[1] = len_arg(); a[2] = adv[pick(15)];
}
static void a_mincore(uint64_t a[6]) { a[0] = addr_arg(); a[1] = len_arg(); a[2] = ptr_arg(); }
static void a_msync(uint64_t a[6]) { a[0] = addr_arg(); a[1] = len_arg(); a[2] = pick(8); }
static void a_brk(uint64_t a[6])
{
    uint64_t cur = (uint64_t)syscall(SYS_brk, 0);
    a[0] = pick(3) ? cur + (pick(2) ? pick(1 << 24) : -pick(1 << 24)) : bad_ptr();
}
static void a_sigaction(uint64_t a[6])
{
    a[0] = pick(4) ? 1 + pick(64) : int_arg();
    a[0] = a[0] == SIGKILL ? SIGUSR1 : a[0];
    a[1] = ptr_arg(); a[2] = ptr_arg(); a[3] = pick(4) ? 8 : int_arg();
}
static void a_sigprocmask(uint64_t a[6]) { a[0] = pick(4); a[1] = ptr_arg(); a[2] = ptr_arg(); a[3] = pick(4) ? 8 : int_arg(); }
static void a_sigpending(uint64_t a[6]) { a[0] = ptr_arg(); a[1] = pick(4) ? 8 : int_arg(); }
static void a_sigtimedwait(uint64_t a[6]) { a[0] = ptr_arg(); a[1] = ptr_arg(); a[2] = time_arg(); a[3] = 8; }
static void a_sigaltstack(uint64_t a[6]) { a[0] = ptr_arg(); a[1] = ptr_arg(); }
static void a_ioctl(uint64_t a[6])
{
    static const uint64_t req[] = {0x541B /* FIONREAD */, 0x5421 /* FIONBIO */,
                                   0x5401 /* TCGETS */, 0x5413 /* TIOCGWINSZ */,
                                   0x5451 /* FIOCLEX */, 0x5450 /* FIONCLEX */,
                                   0x540F /* TIOCGPGRP */, 0xdeadbeef, 0};
    a[0] = fd_arg(); a[1] = req[pick(9)]; a[2] = ptr_arg();
}
static void a_pipe2(uint64_t a[6]) { a[0] = ptr_arg(); a[1] = pick(3) ? pick(2) * O_CLOEXEC : int_arg(); }
static void a_dup2(uint64_t a[6]) { a[0] = fd_arg(); a[1] = pick(2) ? 3 + pick(60) : int_arg(); a[2] = pick(3) ? 0 : int_arg(); }
static void a_fcntl(uint64_t a[6])
{
    static const uint64_t cmd[] = {F_DUPFD, F_GETFD, F_SETFD, F_GETFL,
                                   F_SETFL, F_GETLK, F_SETLK, F_OFD_GETLK,
                                   F_OFD_SETLK, F_GETOWN, F_GETSIG,
                                   F_GETPIPE_SZ, F_SETPIPE_SZ,
                                   F_DUPFD_CLOEXEC, F_GET_SEALS, 9999};
    a[0] = fd_arg(); a[1] = cmd[pick(16)];
    a[2] = pick(2) ? ptr_arg() : int_arg();
}
static void a_int2(uint64_t a[6]) { a[0] = int_arg(); a[1] = int_arg(); a[2] = ptr_arg(); }
static void a_ptr2(uint64_t a[6]) { a[0] = ptr_arg(); a[1] = ptr_arg(); a[2] = int_arg(); }
static void a_clock(uint64_t a[6]) { a[0] = pick(4) ? pick(12) : int_arg(); a[1] = ptr_arg(); }
static void a_nanosleep(uint64_t a[6]) { a[0] = time_arg(); a[1] = ptr_arg(); }
static void a_clock_nanosleep(uint64_t a[6]) { a[0] = pick(4) ? pick(12) : int_arg(); a[1] = pick(2); a[2] = time_arg(); a[3] = ptr_arg(); }
static void a_getrandom(uint64_t a[6]) { a[0] = ptr_arg(); a[1] = len_arg(); a[2] = pick(8); }
static void a_wait4(uint64_t a[6]) { a[0] = int_arg(); a[1] = ptr_arg(); a[2] = pick(2) ? WNOHANG : int_arg(); a[3] = ptr_arg(); }
static void a_waitid(uint64_t a[6]) { a[0] = pick(5); a[1] = int_arg(); a[2] = ptr_arg(); a[3] = pick(2) ? WNOHANG | WEXITED : int_arg(); a[4] = ptr_arg(); }
static void a_kill_self(uint64_t a[6])
{
    a[0] = (uint64_t)getpid(); a[1] = pick(4) ? pick(65) : int_arg();
    if (a[1] == SIGSTOP || a[1] == SIGTSTP || a[1] == SIGTTIN || a[1] == SIGTTOU)
        a[1] = 0; /* a stopped child is only slow */
}
static void a_kill_bad(uint64_t a[6]) { a[0] = (uint64_t)(int64_t)INT_MIN; a[1] = pick(65); }
static int safe_sig(void)
{
    int sig = (int)pick(65);
    /* a stopped child is only slow */
    return sig == SIGSTOP || sig == SIGTSTP || sig == SIGTTIN || sig == SIGTTOU
               ? 0
               : sig;
}
static void a_tgkill(uint64_t a[6]) { a[0] = (uint64_t)getpid(); a[1] = (uint64_t)gettid(); a[2] = (uint64_t)safe_sig(); }
static void a_sigqueue(uint64_t a[6]) { a[0] = (uint64_t)getpid(); a[1] = pick(65); a[2] = ptr_arg(); if (a[1] == SIGSTOP) a[1] = 0; }
static void a_futex(uint64_t a[6])
{
    a[0] = ptr_arg(); a[1] = pick(14) | (pick(2) ? 128 : 0); a[2] = int_arg();
    a[3] = time_arg(); a[4] = ptr_arg(); a[5] = int_arg();
}
static void a_robust(uint64_t a[6]) { a[0] = ptr_arg(); a[1] = pick(2) ? 24 : int_arg(); }
static void a_get_robust(uint64_t a[6]) { a[0] = pick(2) ? 0 : int_arg(); a[1] = ptr_arg(); a[2] = ptr_arg(); }
static void a_prctl(uint64_t a[6])
{
    static const uint64_t opt[] = {PR_SET_NAME, PR_GET_NAME, PR_SET_PDEATHSIG,
                                   PR_GET_PDEATHSIG, PR_GET_DUMPABLE,
                                   PR_SET_DUMPABLE, PR_GET_TIMERSLACK,
                                   PR_GET_NO_NEW_PRIVS, PR_GET_CHILD_SUBREAPER,
                                   PR_SET_CHILD_SUBREAPER, PR_GET_TID_ADDRESS,
                                   100000};
    a[0] = opt[pick(12)]; a[1] = pick(2) ? ptr_arg() : int_arg();
    if (a[0] == PR_SET_DUMPABLE)
        a[1] = pick(3);
}
static void a_arch_prctl(uint64_t a[6])
{
    static const uint64_t code[] = {0x1001, 0x1002, 0x1003, 0x1004, 0x1011,
                                    0x1012, 0x9999};
    a[0] = code[pick(7)]; a[1] = pick(2) ? ptr_arg() : int_arg();
}
static void a_prlimit(uint64_t a[6]) { a[0] = pick(4) ? 0 : (uint64_t)getpid(); a[1] = pick(4) ? pick(17) : int_arg(); a[2] = pick(2) ? 0 : ptr_arg(); a[3] = ptr_arg(); }
static void a_getrlimit(uint64_t a[6]) { a[0] = pick(4) ? pick(17) : int_arg(); a[1] = ptr_arg(); }
static void a_prio(uint64_t a[6]) { a[0] = pick(4); a[1] = 0; a[2] = int_arg(); }
static void a_sched_aff(uint64_t a[6]) { a[0] = 0; a[1] = pick(2) ? 128 : len_arg(); a[2] = ptr_arg(); }
static void a_open(uint64_t a[6])
{
    static const uint64_t ro[] = {O_RDONLY, O_RDONLY | O_CLOEXEC,
                                  O_RDONLY | O_DIRECTORY, O_PATH,
                                  O_RDONLY | O_NONBLOCK, O_RDONLY | O_NOFOLLOW};
    a[0] = pick(2) ? (uint64_t)AT_FDCWD : fd_arg();
    if (pick(3) == 0) { /* creating: only in the scratch cwd */
        a[0] = (uint64_t)AT_FDCWD;
        a[1] = wpath_arg();
        a[2] = O_RDWR | O_CREAT | (pick(2) ? O_APPEND : 0);
    } else {
        a[1] = rpath_arg();
        a[2] = ro[pick(6)];
    }
    a[3] = 0600;
}
/* Times change only scratch files by name: an fd number the child made
 * may have been closed and reused for a host file. */
static void a_utimensat(uint64_t a[6])
{
    a[0] = (uint64_t)AT_FDCWD;
    a[1] = wpath_arg();
    if (pick(4) == 0) { /* futimens on no valid fd */
        a[0] = pick(2) ? (uint64_t)-1 : 100000;
        a[1] = 0;
    }
    a[2] = time_arg(); a[3] = pick(3) ? 0 : int_arg();
}
static void a_futimesat(uint64_t a[6]) { a[0] = (uint64_t)AT_FDCWD; a[1] = wpath_arg(); a[2] = time_arg(); }
static void a_utimes(uint64_t a[6]) { a[0] = wpath_arg(); a[1] = time_arg(); }
static void a_ftruncate(uint64_t a[6]) { a[0] = wfd_arg(); a[1] = pick(2) ? pick(1 << 20) : int_arg(); }
static void a_fallocate(uint64_t a[6]) { a[0] = wfd_arg(); a[1] = pick(4) ? 0 : pick(128); a[2] = pick(2) ? pick(1 << 20) : int_arg(); a[3] = pick(2) ? pick(1 << 20) : int_arg(); }
static void a_getdents(uint64_t a[6]) { a[0] = fd_arg(); a[1] = ptr_arg(); a[2] = len_arg(); }
static void a_readlink(uint64_t a[6]) { a[0] = rpath_arg(); a[1] = ptr_arg(); a[2] = len_arg(); }
static void a_access(uint64_t a[6]) { a[0] = pick(2) ? (uint64_t)AT_FDCWD : fd_arg(); a[1] = rpath_arg(); a[2] = pick(8); a[3] = pick(3) ? 0 : int_arg(); }
static void a_eventfd(uint64_t a[6]) { a[0] = int_arg(); a[1] = pick(3) ? EFD_NONBLOCK : int_arg(); }
static void a_epoll_ctl(uint64_t a[6]) { a[0] = fd_arg(); a[1] = pick(4); a[2] = fd_arg(); a[3] = ptr_arg(); }
static void a_epoll_wait(uint64_t a[6]) { a[0] = fd_arg(); a[1] = ptr_arg(); a[2] = pick(2) ? pick(16) : int_arg(); a[3] = pick(2) ? 0 : pick(20); }
static void a_timerfd_settime(uint64_t a[6]) { a[0] = fd_arg(); a[1] = pick(4); a[2] = time_arg(); a[3] = ptr_arg(); }
static void a_timerfd_gettime(uint64_t a[6]) { a[0] = fd_arg(); a[1] = ptr_arg(); }
static void a_timer_create(uint64_t a[6]) { a[0] = pick(4) ? pick(12) : int_arg(); a[1] = pick(2) ? 0 : ptr_arg(); a[2] = ptr_arg(); }
static void a_timer_settime(uint64_t a[6]) { a[0] = pick(4); a[1] = pick(2); a[2] = time_arg(); a[3] = ptr_arg(); }
static void a_setitimer(uint64_t a[6]) { a[0] = pick(4); a[1] = time_arg(); a[2] = ptr_arg(); }
static void a_alarm(uint64_t a[6]) { a[0] = pick(2) ? pick(5) : int_arg(); }
static void a_signalfd(uint64_t a[6]) { a[0] = pick(2) ? (uint64_t)-1 : fd_arg(); a[1] = ptr_arg(); a[2] = pick(2) ? 8 : int_arg(); a[3] = pick(4); }
static void a_socketpair(uint64_t a[6]) { a[0] = AF_UNIX; a[1] = pick(2) ? SOCK_STREAM : int_arg(); a[2] = 0; a[3] = ptr_arg(); }
/* A msghdr with no address (a random sockaddr could reach a host socket). */
static void a_sendmsg(uint64_t a[6])
{
    struct msghdr *m = (struct msghdr *)(void *)(buf_rw + 60000);
    struct iovec *iov = (struct iovec *)(void *)(buf_rw + 61000);
    memset(m, 0, sizeof(*m));
    m->msg_name = pick(2) ? NULL : (void *)(uintptr_t)bad_ptr();
    m->msg_namelen = pick(2) ? 0 : (socklen_t)int_arg();
    for (int i = 0; i < 4; i++)
        iov[i] = (struct iovec){(void *)(uintptr_t)ptr_arg(), len_arg()};
    m->msg_iov = pick(4) ? iov : (struct iovec *)(uintptr_t)ptr_arg();
    m->msg_iovlen = pick(4) ? pick(5) : int_arg();
    m->msg_control = pick(2) ? NULL : (void *)(uintptr_t)ptr_arg();
    m->msg_controllen = pick(2) ? 0 : len_arg();
    a[0] = wfd_arg(); a[1] = pick(8) ? (uint64_t)(uintptr_t)m : bad_ptr();
    a[2] = MSG_DONTWAIT | (pick(2) ? 0 : MSG_NOSIGNAL);
}
static void a_recvmsg(uint64_t a[6]) { a[0] = fd_arg(); a[1] = ptr_arg(); a[2] = pick(2) ? MSG_DONTWAIT : int_arg(); }
static void a_sendto(uint64_t a[6]) { a[0] = wfd_arg(); a[1] = ptr_arg(); a[2] = len_arg(); a[3] = MSG_DONTWAIT; a[4] = pick(2) ? 0 : bad_ptr(); a[5] = pick(2) ? 0 : int_arg(); }
static void a_recvfrom(uint64_t a[6]) { a[0] = fd_arg(); a[1] = ptr_arg(); a[2] = len_arg(); a[3] = MSG_DONTWAIT | (pick(2) ? MSG_PEEK : 0); a[4] = ptr_arg(); a[5] = ptr_arg(); }
static void a_sockopt(uint64_t a[6]) { a[0] = fd_arg(); a[1] = pick(2) ? SOL_SOCKET : int_arg(); a[2] = pick(2) ? pick(64) : int_arg(); a[3] = ptr_arg(); a[4] = pick(2) ? (uint64_t)(uintptr_t)(buf_rw + 64) : ptr_arg(); }
static void a_setsockopt(uint64_t a[6]) { a_sockopt(a); a[0] = wfd_arg(); a[4] = pick(2) ? 4 : int_arg(); }
static void a_sockname(uint64_t a[6]) { a[0] = fd_arg(); a[1] = ptr_arg(); a[2] = pick(2) ? (uint64_t)(uintptr_t)(buf_rw + 128) : ptr_arg(); }
static void a_shutdown(uint64_t a[6]) { a[0] = wfd_arg(); a[1] = pick(4); }
static void a_memfd(uint64_t a[6]) { a[0] = pick(2) ? (uint64_t)(uintptr_t)"fz" : ptr_arg(); a[1] = pick(3) ? pick(8) : int_arg(); }
static void a_close(uint64_t a[6]) { a[0] = pick(4) ? fd_arg() : int_arg(); }
static void a_none(uint64_t a[6]) { (void)a; }
static void a_uname(uint64_t a[6]) { a[0] = ptr_arg(); }
static void a_getcwd(uint64_t a[6]) { a[0] = ptr_arg(); a[1] = len_arg(); }
static void a_getgroups(uint64_t a[6]) { a[0] = pick(2) ? pick(64) : int_arg(); a[1] = ptr_arg(); }
static void a_pid_read(uint64_t a[6]) { a[0] = pick(2) ? 0 : int_arg(); a[1] = ptr_arg(); }
static void a_setpgid(uint64_t a[6]) { a[0] = pick(2) ? 0 : (uint64_t)getpid(); a[1] = pick(2) ? 0 : (uint64_t)getpid(); }
static void a_umask(uint64_t a[6]) { a[0] = 022; }
static void a_personality(uint64_t a[6]) { a[0] = 0xffffffff; }
static void a_copy_range(uint64_t a[6]) { a[0] = fd_arg(); a[1] = ptr_arg(); a[2] = wfd_arg(); a[3] = ptr_arg(); a[4] = len_arg(); a[5] = 0; }
static void a_splice(uint64_t a[6]) { a[0] = fd_arg(); a[1] = pick(2) ? 0 : ptr_arg(); a[2] = wfd_arg(); a[3] = pick(2) ? 0 : ptr_arg(); a[4] = len_arg(); a[5] = SPLICE_F_NONBLOCK; }
static void a_flock(uint64_t a[6]) { a[0] = wfd_arg(); a[1] = pick(16) | 4 /* LOCK_NB */; }
static void a_fsync(uint64_t a[6]) { a[0] = wfd_arg(); }
static void a_sendfile(uint64_t a[6]) { a[0] = wfd_arg(); a[1] = fd_arg(); a[2] = pick(2) ? 0 : ptr_arg(); a[3] = len_arg(); }
static void a_mlock(uint64_t a[6]) { a[0] = addr_arg(); a[1] = len_arg() & 0xfffff; }
static void a_rseq(uint64_t a[6]) { a[0] = ptr_arg(); a[1] = pick(2) ? 32 : int_arg(); a[2] = pick(2); a[3] = int_arg(); }
static void a_sched_param(uint64_t a[6]) { a[0] = pick(2) ? 0 : int_arg(); a[1] = ptr_arg(); }
static void a_capget(uint64_t a[6]) { a[0] = ptr_arg(); a[1] = ptr_arg(); }
static void a_sysinfo(uint64_t a[6]) { a[0] = ptr_arg(); }
static void a_getcpu(uint64_t a[6]) { a[0] = ptr_arg(); a[1] = ptr_arg(); a[2] = 0; }
static void a_tid_addr(uint64_t a[6]) { a[0] = ptr_arg(); }
static void a_tkill(uint64_t a[6]) { a[0] = (uint64_t)gettid(); a[1] = pick(65); if (a[1] == SIGSTOP || a[1] == SIGTSTP) a[1] = 0; }
static void a_inotify_add(uint64_t a[6]) { a[0] = fd_arg(); a[1] = rpath_arg(); a[2] = int_arg(); }

#define C(n, f) {SYS_##n, #n, f}
static const struct call calls[] = {
    C(read, a_rw), C(write, a_w), C(pread64, a_prw), C(pwrite64, a_pw),
    C(readv, a_iov), C(writev, a_wiov), C(preadv, a_iov), C(pwritev, a_wiov),
    C(preadv2, a_iov), C(close, a_close), C(fstat, a_fd_ptr),
    C(stat, a_path_ptr), C(lstat, a_path_ptr), C(newfstatat, a_at_path),
    C(statx, a_statx), C(poll, a_poll), C(ppoll, a_ppoll),
    C(select, a_select), C(pselect6, a_select), C(lseek, a_lseek),
    C(mmap, a_mmap), C(mprotect, a_mprotect), C(munmap, a_munmap),
    C(mremap, a_mremap), C(madvise, a_madvise), C(mincore, a_mincore),
    C(msync, a_msync), C(brk, a_brk), C(rt_sigaction, a_sigaction),
    C(rt_sigprocmask, a_sigprocmask), C(rt_sigpending, a_sigpending),
    C(rt_sigtimedwait, a_sigtimedwait), C(sigaltstack, a_sigaltstack),
    C(ioctl, a_ioctl), C(pipe, a_uname), C(pipe2, a_pipe2), C(dup, a_fd),
    C(dup2, a_dup2), C(dup3, a_dup2), C(fcntl, a_fcntl),
    C(getpid, a_none), C(getppid, a_none), C(gettid, a_none),
    C(getuid, a_none), C(geteuid, a_none), C(getgid, a_none),
    C(getegid, a_none), C(getpgrp, a_none), C(getsid, a_pid_read),
    C(getpgid, a_pid_read), C(setpgid, a_setpgid), C(setsid, a_none),
    C(getresuid, a_ptr2), C(getresgid, a_ptr2), C(getgroups, a_getgroups),
    C(getcwd, a_getcwd), C(uname, a_uname), C(sysinfo, a_sysinfo),
    C(getrusage, a_int2), C(times, a_uname), C(clock_gettime, a_clock),
    C(clock_getres, a_clock), C(gettimeofday, a_ptr2), C(time, a_uname),
    C(nanosleep, a_nanosleep), C(clock_nanosleep, a_clock_nanosleep),
    C(getrandom, a_getrandom), C(sched_yield, a_none),
    C(sched_getaffinity, a_sched_aff), C(sched_setaffinity, a_sched_aff),
    C(sched_getparam, a_sched_param), C(sched_getscheduler, a_pid_read),
    C(getpriority, a_prio), C(setpriority, a_prio), C(prlimit64, a_prlimit),
    C(getrlimit, a_getrlimit), C(setrlimit, a_getrlimit),
    C(wait4, a_wait4), C(waitid, a_waitid), C(kill, a_kill_self),
    C(kill, a_kill_bad), C(tgkill, a_tgkill), C(tkill, a_tkill),
    C(rt_sigqueueinfo, a_sigqueue), C(futex, a_futex),
    C(set_robust_list, a_robust), C(get_robust_list, a_get_robust),
    C(set_tid_address, a_tid_addr), C(prctl, a_prctl),
    C(arch_prctl, a_arch_prctl), C(openat, a_open),
    C(utimensat, a_utimensat), C(futimesat, a_futimesat),
    C(utimes, a_utimes), C(ftruncate, a_ftruncate),
    C(fallocate, a_fallocate), C(getdents64, a_getdents),
    C(getdents, a_getdents), C(readlink, a_readlink),
    C(readlinkat, a_at_path), C(access, a_readlink),
    C(faccessat, a_access), C(faccessat2, a_access),
    C(eventfd2, a_eventfd), C(epoll_create1, a_pipe2),
    C(epoll_ctl, a_epoll_ctl), C(epoll_wait, a_epoll_wait),
    C(epoll_pwait, a_epoll_wait), C(timerfd_create, a_eventfd),
    C(timerfd_settime, a_timerfd_settime),
    C(timerfd_gettime, a_timerfd_gettime), C(timer_create, a_timer_create),
    C(timer_settime, a_timer_settime), C(timer_gettime, a_timerfd_gettime),
    C(timer_delete, a_fd), C(getitimer, a_timerfd_gettime),
    C(setitimer, a_setitimer), C(alarm, a_alarm), C(signalfd4, a_signalfd),
    C(socketpair, a_socketpair), C(sendmsg, a_sendmsg),
    C(recvmsg, a_recvmsg), C(sendto, a_sendto), C(recvfrom, a_recvfrom),
    C(getsockopt, a_sockopt), C(setsockopt, a_setsockopt),
    C(getsockname, a_sockname), C(getpeername, a_sockname),
    C(shutdown, a_shutdown), C(memfd_create, a_memfd), C(umask, a_umask),
    C(personality, a_personality), C(copy_file_range, a_copy_range),
    C(splice, a_splice), C(tee, a_splice), C(flock, a_flock),
    C(fsync, a_fsync), C(fdatasync, a_fsync), C(sendfile, a_sendfile),
    C(mlock, a_mlock), C(munlock, a_mlock), C(rseq, a_rseq),
    C(capget, a_capget), C(getcpu, a_getcpu), C(inotify_init1, a_eventfd),
    C(inotify_add_watch, a_inotify_add), C(inotify_rm_watch, a_int2),
    C(sched_getattr, a_sched_aff),
};
#define NCALLS (sizeof(calls) / sizeof(calls[0]))

/* ---- children and the parent --------------------------------------------- */

static void child(uint64_t seed, int index, int ncalls)
{
    rng = (seed * 0x9E3779B97F4A7C15ULL) ^ ((uint64_t)index << 32) ^ 0x5bd1e995;
    if (!rng)
        rng = 1;
    if (verbose)
        dup2(2, LOG_FD);
    int null = open("/dev/null", O_RDWR);
    for (int fd = 0; fd < 3; fd++)
        dup2(null, fd);
    if (null > 2)
        close(null);
    alarm(2);
    make_resources();
    for (int i = 0; i < ncalls; i++) {
        const struct call *c = &calls[pick(NCALLS)];
        uint64_t a[6] = {0};
        if (verbose) /* the arguments are made in guest memory too */
            dprintf(LOG_FD, "child %d call %d: %s ...\n", index, i, c->name);
        c->args(a);
        if (verbose)
            dprintf(LOG_FD, "child %d call %d: %s(%#llx, %#llx, %#llx, %#llx, %#llx, %#llx)\n",
                    index, i, c->name, (unsigned long long)a[0],
                    (unsigned long long)a[1], (unsigned long long)a[2],
                    (unsigned long long)a[3], (unsigned long long)a[4],
                    (unsigned long long)a[5]);
        syscall(c->nr, a[0], a[1], a[2], a[3], a[4], a[5]);
    }
    _exit(0);
}

/* Waits for c, at most 30 s (of the run's clock), then kills it. */
static int reap(pid_t c)
{
    struct timespec tick = {0, 10 * 1000 * 1000};
    for (int waited = 0;; waited++) {
        int st;
        pid_t r = waitpid(c, &st, WNOHANG);
        if (r == c)
            return st;
        if (r < 0)
            return -1;
        if (waited == 3000)
            kill(c, SIGKILL);
        nanosleep(&tick, NULL);
    }
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: sysfuzz SEED [CHILDREN [CALLS [-v]]]\n");
        return 2;
    }
    uint64_t seed = strtoull(argv[1], NULL, 0);
    int nchildren = argc > 2 ? atoi(argv[2]) : 50;
    int ncalls = argc > 3 ? atoi(argv[3]) : 40;
    verbose = argc > 4 && strcmp(argv[4], "-v") == 0;
    int only = argc > 5 ? atoi(argv[5]) : -1;
    /* Children create files by name in the cwd: only in a scratch one. */
    if (access(".sysfuzz-scratch", F_OK) != 0) {
        fprintf(stderr, "sysfuzz: run me in a scratch directory holding "
                        ".sysfuzz-scratch (tests/fuzz/run-syscalls.sh)\n");
        return 2;
    }
    int exited = 0, signalled = 0, killed = 0;
    for (int i = 0; i < nchildren; i++) {
        if (only >= 0 && i < only)
            continue;
        fflush(stdout);
        pid_t c = fork();
        if (c < 0) {
            perror("sysfuzz: fork");
            return 3;
        }
        if (c == 0)
            child(seed, i, ncalls);
        int st = reap(c);
        if (st < 0) {
            perror("sysfuzz: waitpid");
            return 3;
        }
        if (WIFEXITED(st))
            exited++;
        else if (WTERMSIG(st) == SIGKILL)
            killed++;
        else
            signalled++;
    }
    printf("sysfuzz seed %llu: %d children: %d exited, %d died of a signal, "
           "%d killed\n", (unsigned long long)seed, nchildren, exited,
           signalled, killed);
    return 0;
}
