/*
 * ptrace_spawner.c - the process that starts the ptrace backend's stubs.
 *
 * hvrun confines itself with a seccomp filter once a run is set up
 * (cli/confine.c): no execve, no fork, so that a guest that subverted
 * hvrun still could not start a host program. A stub is a host program
 * exec'd for every guest process, so hvrun does not start it itself: a
 * child forked when the ptrace host opens, before any filter, does. hvrun
 * sends it a request (the guest-memory memfd, the CPUs to run on) over a
 * socketpair; it spawns the stub and sends back its pid, a pidfd (hvrun
 * kills stubs through it, so its filter needs no kill(2) of other pids)
 * and the stub's ready pipe. hvrun then seizes the stub: the stub is the
 * spawner's child, so hvrun's descendant, which Yama's ptrace_scope 1
 * allows.
 *
 * The spawner dies with hvrun (PR_SET_PDEATHSIG, and at its socket's
 * end), and its stubs with it (their own PR_SET_PDEATHSIG, and
 * PTRACE_O_EXITKILL for hvrun's). It ignores SIGCHLD: a stub is reaped by
 * hvrun, its tracer, and then released.
 */
#include "fdpass.h"
#include "ptrace_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/personality.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ptrace_abi.h"

struct spawn_request {
    cpu_set_t cpus;
};

struct spawn_reply {
    int err; /* 0 or -errno */
    pid_t pid;
};

/* The child's fds: the guest memfd, the ready pipe, the program; nothing
 * else, and /dev/null for stdio. Its own process group (a terminal's ^C is
 * hvrun's to handle), every signal at its default and none blocked. */
static int spawn_fds(const int fds[3], pid_t *pid)
{
    posix_spawn_file_actions_t fa;
    posix_spawnattr_t at;
    posix_spawn_file_actions_init(&fa);
    posix_spawnattr_init(&at);
    posix_spawn_file_actions_adddup2(&fa, fds[0], PT_STUB_MEMFD);
    posix_spawn_file_actions_adddup2(&fa, fds[1], PT_STUB_READY_FD);
    posix_spawn_file_actions_adddup2(&fa, fds[2], PT_STUB_EXEC_FD);
    posix_spawn_file_actions_addclosefrom_np(&fa, PT_STUB_EXEC_FD + 1);
    /* Not hvrun's stdio: nothing of the guest's may ever write there but
     * through hvrun. */
    posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
    posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
    sigset_t none, all;
    sigemptyset(&none);
    sigfillset(&all);
    sigdelset(&all, SIGKILL);
    sigdelset(&all, SIGSTOP);
    posix_spawnattr_setsigmask(&at, &none);
    posix_spawnattr_setsigdefault(&at, &all);
    posix_spawnattr_setpgroup(&at, 0);
    posix_spawnattr_setflags(&at, POSIX_SPAWN_SETSIGMASK |
                                      POSIX_SPAWN_SETSIGDEF |
                                      POSIX_SPAWN_SETPGROUP);
    char path[64];
    snprintf(path, sizeof(path), "/proc/self/fd/%d", PT_STUB_EXEC_FD);
    char *argv[] = {"hvrun-ptrace-stub", NULL}, *envp[] = {NULL};
    int rc = posix_spawn(pid, path, &fa, &at, argv, envp);
    posix_spawn_file_actions_destroy(&fa);
    posix_spawnattr_destroy(&at);
    return -rc;
}

/* The dup2s of the spawn must not clobber each other's sources: each
 * source is first copied above the stub's fixed numbers. */
static int spawn(int memfd, int ready_w, int exec_fd, pid_t *pid)
{
    int src[3] = {memfd, ready_w, exec_fd}, high[3] = {-1, -1, -1};
    int rc = 0;
    for (int i = 0; i < 3 && rc == 0; i++)
        if ((high[i] = fcntl(src[i], F_DUPFD_CLOEXEC, PT_STUB_EXEC_FD + 1)) <
            0)
            rc = -errno;
    if (rc == 0)
        rc = spawn_fds(high, pid);
    for (int i = 0; i < 3; i++)
        if (high[i] >= 0)
            close(high[i]);
    return rc;
}


/* ---- the spawner process -------------------------------------------------- */

/* Until the stub's ready byte can be read (not read: hvrun reads it), or
 * its pipe's end (it died: hvrun's read says so), or a long while. */
static void await_ready(int ready_r)
{
    struct pollfd pfd = {.fd = ready_r, .events = POLLIN};
    while (poll(&pfd, 1, 5000) < 0 && errno == EINTR)
        ;
}

/* One request: a stub spawned on the CPUs asked for, without address
 * randomisation (its exec stack and [vdso] must never land on its fixed
 * range, which a randomised stack now and then did). */
static void serve_one(int sock, int exec_fd, int memfd,
                      const struct spawn_request *rq)
{
    struct spawn_reply rp = {0};
    int ready[2] = {-1, -1}, pidfd = -1;
    if (pipe2(ready, O_CLOEXEC) < 0)
        rp.err = -errno;
    if (rp.err == 0) {
        int old = personality(0xffffffff);
        if (old != -1)
            (void)personality((unsigned long)old | ADDR_NO_RANDOMIZE);
        rp.err = spawn(memfd, ready[1], exec_fd, &rp.pid);
        if (old != -1)
            (void)personality((unsigned long)old);
    }
    /* The stub runs on the guests' CPU; the spawner, the exec that makes
     * the stub and the stub's own start (its filter's load, its unmaps:
     * ~0.5 ms of a process on this host) on any of hvrun's: hvrun asks for
     * its next stub ahead (ptrace_host_prepare_stub), and whatever of it
     * ran on the guests' CPU ran before hvrun went on. So the stub gets
     * its CPU once it is ready (asleep in pause), and before hvrun hears of
     * it: before any call hvrun injects or any guest code runs in it. */
    if (ready[1] >= 0) /* the stub's only: its end is the pipe's end */
        close(ready[1]);
    ready[1] = -1;
    if (rp.err == 0)
        await_ready(ready[0]);
    if (rp.err == 0 &&
        sched_setaffinity(rp.pid, sizeof(rq->cpus), &rq->cpus) < 0) {
        rp.err = -errno;
        kill(rp.pid, SIGKILL);
    }
    if (rp.err == 0 && (pidfd = (int)syscall(SYS_pidfd_open, rp.pid, 0)) < 0) {
        rp.err = -errno;
        kill(rp.pid, SIGKILL);
    }
    if (ready[1] >= 0)
        close(ready[1]);
    int fds[2] = {ready[0], pidfd};
    (void)vmm_send_fds(sock, &rp, sizeof(rp), fds, rp.err == 0 ? 2 : 0);
    if (ready[0] >= 0)
        close(ready[0]);
    if (pidfd >= 0)
        close(pidfd);
}

/*
 * A retired stub moved off the guests' CPU before hvrun's reaper kills
 * it (ptrace_spawner_unpin): its death (the teardown of its address
 * space, ~0.1-1 ms) then runs on hvrun's other CPUs, not on the one
 * where the next guest runs (on all of them when there is no other).
 * The pidfd says the stub is still there (a stub hvrun's reaper has not
 * reaped keeps its pid, so the pid names no other process). Answers one
 * byte, whatever happened: hvrun kills it then, pinned or not.
 */
static void serve_unpin(int unpin_sock)
{
    pid_t pid;
    int pidfd;
    ssize_t n = vmm_recv_fds(unpin_sock, &pid, sizeof(pid), &pidfd, 1);
    if (n <= 0)
        _exit(0); /* hvrun closed its end, or is gone */
    cpu_set_t all, pinned;
    if (n == (ssize_t)sizeof(pid) && pidfd >= 0 &&
        syscall(SYS_pidfd_send_signal, pidfd, 0, NULL, 0) == 0 &&
        sched_getaffinity(0, sizeof(all), &all) == 0) {
        /* Not back on the guests' CPU either, when hvrun has another:
         * set free on every CPU, the dying stub was still woken there
         * (its last CPU) 60 times of 69 (perf, 50 `sh -c true`). */
        cpu_set_t others;
        if (sched_getaffinity(pid, sizeof(pinned), &pinned) == 0) {
            CPU_XOR(&others, &all, &pinned);
            CPU_AND(&others, &others, &all);
            if (CPU_COUNT(&others) > 0)
                all = others;
        }
        (void)sched_setaffinity(pid, sizeof(all), &all);
    }
    if (pidfd >= 0)
        close(pidfd);
    char done = 1;
    (void)vmm_send_fds(unpin_sock, &done, 1, NULL, 0);
}

/* Serves unpins (unpin_sock, -1: none) until a spawn request (or the
 * end of hvrun's socket) can be read on sock. */
static void await_spawn_request(int sock, int unpin_sock)
{
    struct pollfd pfd[2] = {{.fd = sock, .events = POLLIN},
                            {.fd = unpin_sock, .events = POLLIN}};
    for (;;) {
        int n = poll(pfd, unpin_sock >= 0 ? 2 : 1, -1);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            _exit(0);
        if (pfd[0].revents)
            return;
        serve_unpin(unpin_sock);
    }
}

static _Noreturn void spawner_main(int sock, int unpin_sock, int exec_fd,
                                   pid_t hvrun)
{
    (void)prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != hvrun)
        _exit(0);
    /* Its own process group: a terminal's ^C or ^Z is hvrun's to handle. */
    (void)setpgid(0, 0);
    signal(SIGCHLD, SIG_IGN);
    signal(SIGPIPE, SIG_IGN);
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
    /* Nothing of hvrun's but its sockets and the stub program. */
    int keep[3] = {sock, unpin_sock, exec_fd};
    int null = open("/dev/null", O_RDWR);
    for (int fd = 0; fd < 3 && null >= 0; fd++)
        if (fd != sock && fd != unpin_sock && fd != exec_fd)
            dup2(null, fd);
    int from = 3;
    for (;;) { /* close every fd from `from` up to the next kept one */
        int next = -1;
        for (int i = 0; i < 3; i++)
            if (keep[i] >= from && (next < 0 || keep[i] < next))
                next = keep[i];
        if (next < 0) {
            close_range((unsigned)from, ~0U, 0);
            break;
        }
        if (next > from)
            close_range((unsigned)from, (unsigned)next - 1, 0);
        from = next + 1;
    }
    for (;;) {
        await_spawn_request(sock, unpin_sock);
        struct spawn_request rq;
        int memfd;
        ssize_t n = vmm_recv_fds(sock, &rq, sizeof(rq), &memfd, 1);
        if (n <= 0)
            _exit(0); /* hvrun closed its end, or is gone */
        if (n == (ssize_t)sizeof(rq) && memfd >= 0) {
            serve_one(sock, exec_fd, memfd, &rq);
        } else {
            struct spawn_reply rp = {.err = -EINVAL};
            (void)vmm_send_fds(sock, &rp, sizeof(rp), NULL, 0);
        }
        if (memfd >= 0)
            close(memfd);
    }
}

int ptrace_spawner_start(struct ptrace_spawner *s, int exec_fd, char *why,
                         size_t why_len)
{
    int sv[2], uv[2];
    s->sock = s->unpin_sock = -1;
    s->pid = -1;
    if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0) {
        snprintf(why, why_len, "ptrace: the stub spawner's socket: %s",
                 strerror(errno));
        return -errno;
    }
    /* The reaper's own socket (ptrace_spawner_unpin): not the spawns',
     * whose replies the main thread reads. Without it stubs die pinned. */
    if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, uv) < 0)
        uv[0] = uv[1] = -1;
    pid_t hvrun = getpid();
    pid_t pid = fork();
    if (pid < 0) {
        int err = errno;
        close(sv[0]);
        close(sv[1]);
        if (uv[0] >= 0) {
            close(uv[0]);
            close(uv[1]);
        }
        snprintf(why, why_len, "ptrace: forking the stub spawner: %s",
                 strerror(err));
        return -err;
    }
    if (pid == 0) {
        close(sv[0]);
        if (uv[0] >= 0)
            close(uv[0]);
        spawner_main(sv[1], uv[1], exec_fd, hvrun);
    }
    close(sv[1]);
    if (uv[1] >= 0)
        close(uv[1]);
    s->sock = sv[0];
    s->unpin_sock = uv[0];
    s->pid = pid;
    return 0;
}

void ptrace_spawner_close(struct ptrace_spawner *s)
{
    if (s->sock >= 0)
        close(s->sock); /* its read ends: it exits */
    if (s->unpin_sock >= 0)
        close(s->unpin_sock);
    s->sock = s->unpin_sock = -1;
}

int ptrace_spawner_unpin(int unpin_sock, pid_t pid, int pidfd)
{
    char done;
    if (unpin_sock < 0 || vmm_send_fds(unpin_sock, &pid, sizeof(pid), &pidfd,
                                       1) < 0)
        return -EPIPE;
    return vmm_recv_fds(unpin_sock, &done, 1, NULL, 0) == 1 ? 0 : -EPIPE;
}

int ptrace_spawner_request(struct ptrace_spawner *s, int memfd)
{
    struct spawn_request rq;
    if (sched_getaffinity(0, sizeof(rq.cpus), &rq.cpus) < 0)
        return -errno;
    if (vmm_send_fds(s->sock, &rq, sizeof(rq), &memfd, 1) < 0)
        return -errno;
    return 0;
}

int ptrace_spawner_spawn(struct ptrace_spawner *s, int memfd, pid_t *pid,
                         int *pidfd, int *ready_r)
{
    int rc = ptrace_spawner_request(s, memfd);
    return rc < 0 ? rc : ptrace_spawner_reply(s, pid, pidfd, ready_r);
}

int ptrace_spawner_reply(struct ptrace_spawner *s, pid_t *pid, int *pidfd,
                         int *ready_r)
{
    struct spawn_reply rp;
    int fds[2];
    ssize_t n = vmm_recv_fds(s->sock, &rp, sizeof(rp), fds, 2);
    if (n != (ssize_t)sizeof(rp) || (rp.err == 0 && (fds[0] < 0 ||
                                                     fds[1] < 0))) {
        for (int i = 0; i < 2; i++)
            if (n > 0 && fds[i] >= 0)
                close(fds[i]);
        return n < 0 ? -errno : -EPIPE; /* the spawner is gone */
    }
    if (rp.err < 0)
        return rp.err;
    *pid = rp.pid;
    *ready_r = fds[0];
    *pidfd = fds[1];
    return 0;
}

void ptrace_spawner_stop(struct ptrace_spawner *s)
{
    ptrace_spawner_close(s);
    if (s->pid > 0) {
        int st;
        while (waitpid(s->pid, &st, 0) < 0 && errno == EINTR)
            ;
    }
    s->pid = -1;
}
