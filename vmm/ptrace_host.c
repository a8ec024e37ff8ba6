/*
 * ptrace_host.c - the ptrace backend's host: the stub program (embedded in
 * hvrun, kept in a memfd to exec), spawning and seizing stubs, and what
 * this mechanism controls on the host (for `hvrun doctor`).
 *
 * What the guest's CPU is: the host's own, as the CPUID probe run in a
 * stub shows (no CPUID faulting where ARCH_SET_CPUID is ENODEV): hvrun
 * describes that CPU (/proc/cpuinfo, AT_HWCAP) and pins the thread that
 * runs guests, whose stubs inherit its CPU (vmm_host_probe_guest_cpuid).
 * The XSAVE state is the host kernel's (its XCR0); RDTSC/RDTSCP fault in
 * every stub (PR_SET_TSC), so they are trappable.
 */
#include "backend_impl.h"
#include "ptrace_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <poll.h>
#include <sys/mman.h>
#include <sys/personality.h>
#include <sys/ptrace.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ptrace_abi.h"

extern const unsigned char pt_stub_elf_start[], pt_stub_elf_end[];

struct pt_host {
    struct vmm_host base;
    int stub_exec_fd; /* memfd holding the stub program */
    struct ptrace_stub_filter filter; /* loaded by every stub */
};

static struct pt_host *pt_host_of(struct vmm_host *h)
{
    return (struct pt_host *)h;
}

void ptrace_host_set_vm_pool(struct vmm_host *host, unsigned nr_ready)
{
    (void)host; /* a stub costs one spawn: no pool (yet) */
    (void)nr_ready;
}

void ptrace_host_close(struct vmm_host *host)
{
    struct pt_host *h = pt_host_of(host);
    if (h->stub_exec_fd >= 0)
        close(h->stub_exec_fd);
    ptrace_stub_filter_free(&h->filter);
    free(h);
}

const struct ptrace_stub_filter *ptrace_host_stub_filter(
    const struct vmm_host *host)
{
    return &((const struct pt_host *)host)->filter;
}

static int stub_program_fd(void)
{
    int fd = memfd_create("hvrun-ptrace-stub", MFD_CLOEXEC);
    if (fd < 0)
        return -errno;
    size_t len = (size_t)(pt_stub_elf_end - pt_stub_elf_start);
    if (write(fd, pt_stub_elf_start, len) != (ssize_t)len) {
        close(fd);
        return -EIO;
    }
    return fd;
}

/* The child's fds: the guest memfd, the ready pipe, the program; nothing
 * else of hvrun's. Its own process group (a terminal's ^C is hvrun's to
 * handle), every signal at its default and none blocked. */
static int spawn_fds(struct pt_host *h, const int fds[3], pid_t *pid);

/* The dup2s of the spawn must not clobber each other's sources: each
 * source is first copied above the stub's fixed numbers. */
static int spawn(struct pt_host *h, int memfd, int ready_w, pid_t *pid)
{
    int src[3] = {memfd, ready_w, h->stub_exec_fd}, high[3] = {-1, -1, -1};
    int rc = 0;
    for (int i = 0; i < 3 && rc == 0; i++)
        if ((high[i] = fcntl(src[i], F_DUPFD_CLOEXEC, PT_STUB_EXEC_FD + 1)) <
            0)
            rc = -errno;
    if (rc == 0)
        rc = spawn_fds(h, high, pid);
    for (int i = 0; i < 3; i++)
        if (high[i] >= 0)
            close(high[i]);
    return rc;
}

static int spawn_fds(struct pt_host *h, const int fds[3], pid_t *pid)
{
    (void)h;
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

/* Waits for the stub's ready byte. A stub that faults before (a failed
 * exec is a SIGSEGV) stops for its tracer instead of writing: that is
 * looked for between polls. */
static int wait_ready(int fd, pid_t pid)
{
    for (;;) {
        struct pollfd pfd = {.fd = fd, .events = POLLIN};
        int n = poll(&pfd, 1, 20);
        if (n < 0 && errno != EINTR)
            return -errno;
        if (n > 0) {
            char byte;
            ssize_t got = read(fd, &byte, 1);
            return got == 1 ? 0 : -EIO;
        }
        int st;
        pid_t w = waitpid(pid, &st, WNOHANG | __WALL);
        if (w == pid)
            return WIFSTOPPED(st) ? -EFAULT : -EIO;
    }
}

/* The stub is exec'd without address randomisation, so that its exec
 * stack (at the top of user space) and [vdso] (below the mmap base) never
 * land on its fixed range, which a randomised stack now and then did. */
static int spawn_fixed_layout(struct pt_host *h, int memfd, int ready_w,
                              pid_t *pid)
{
    int old = personality(0xffffffff);
    if (old != -1)
        (void)personality((unsigned long)old | ADDR_NO_RANDOMIZE);
    int rc = spawn(h, memfd, ready_w, pid);
    if (old != -1)
        (void)personality((unsigned long)old);
    return rc;
}

int ptrace_host_spawn_stub(struct vmm_host *host, int memfd, pid_t *pid,
                           char *why, size_t why_len)
{
    struct pt_host *h = pt_host_of(host);
    int ready[2];
    if (pipe2(ready, O_CLOEXEC) < 0) {
        snprintf(why, why_len, "ptrace stub: pipe: %s", strerror(errno));
        return -errno;
    }
    int rc = spawn_fixed_layout(h, memfd, ready[1], pid);
    close(ready[1]);
    if (rc < 0) {
        close(ready[0]);
        snprintf(why, why_len, "ptrace stub: spawn: %s", strerror(-rc));
        return rc;
    }
    /* Seized at once: from here the stub dies with hvrun (EXITKILL); it
     * asked for SIGKILL at its parent's death itself before that. */
    if (ptrace(PTRACE_SEIZE, *pid, NULL,
               (void *)(long)(PTRACE_O_EXITKILL | PTRACE_O_TRACESYSGOOD)) <
        0) {
        rc = -errno;
        snprintf(why, why_len, "ptrace stub: PTRACE_SEIZE: %s",
                 strerror(errno));
    }
    if (rc == 0 && (rc = wait_ready(ready[0], *pid)) < 0)
        snprintf(why, why_len, "ptrace stub: %s while setting up",
                 rc == -EIO ? "it exited" : "it stopped (a fault)");
    close(ready[0]);
    if (rc < 0) {
        kill(*pid, SIGKILL);
        while (waitpid(*pid, NULL, __WALL) < 0 && errno == EINTR)
            ;
    }
    return rc;
}

int ptrace_host_open(struct vmm_host **out, char *why, size_t why_len)
{
    struct pt_host *h = calloc(1, sizeof(*h));
    if (!h)
        return -ENOMEM;
    h->base.ops = &ptrace_backend_ops;
    struct vmm_host_info *info = &h->base.info;
    snprintf(info->hypervisor, sizeof(info->hypervisor), "none (ptrace)");
    info->rdtsc_trappable = true; /* PR_SET_TSC in the stub; checked there */
    h->stub_exec_fd = stub_program_fd();
    int rc = h->stub_exec_fd;
    if (rc < 0) {
        snprintf(why, why_len, "ptrace: the stub program: %s", strerror(-rc));
        h->stub_exec_fd = -1;
        ptrace_host_close(&h->base);
        return rc;
    }
    if ((rc = ptrace_stub_filter_build(&h->filter, why, why_len)) < 0) {
        ptrace_host_close(&h->base);
        return rc;
    }
    char msg[256];
    /* The guest's XSAVE state is the host kernel's: its XCR0, as far as
     * the layouts hvrun knows go (components 0-9; AMX's need a permission
     * the stub never asks for). */
    uint64_t xcr0 = vmm_host_native_xcr0() &
                    ((1ULL << VMM_XSTATE_MAX_COMPONENTS) - 1);
    if ((rc = vmm_host_build_model(&h->base, xcr0, msg,
                                   sizeof(msg))) < 0 ||
        (rc = vmm_host_probe_guest_cpuid(&h->base, "ptrace-guest-cpuid", msg,
                                         sizeof(msg))) < 0) {
        snprintf(why, why_len, "ptrace: %s", msg);
        ptrace_host_close(&h->base);
        return rc;
    }
    /* A stub shares the CPU of the thread that runs guests: a stop
     * answered on the same CPU costs ~19 us here, ~60 us across CPUs
     * (cross-CPU wake-ups in a nested VM). The probe pinned already when
     * CPUID is the host's. */
    if (h->base.info.cpuid_control)
        vmm_host_pin_guest_thread(&h->base);
    *out = &h->base;
    return 0;
}
