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
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <poll.h>
#include <sys/mman.h>
#include <sys/ptrace.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include <x86intrin.h>

#include "ptrace_abi.h"

extern const unsigned char pt_stub_elf_start[], pt_stub_elf_end[];

struct pt_host {
    struct vmm_host base;
    int stub_exec_fd; /* memfd holding the stub program */
    struct ptrace_spawner spawner; /* starts the stubs (ptrace_spawner.c) */
    /* The spawner from before --fs-policy's Landlock: kept (not used)
     * while the stubs it started live, for their PR_SET_PDEATHSIG. */
    struct ptrace_spawner unrestricted_spawner;
    struct ptrace_stub_filter filter; /* loaded by every stub */
    struct ptrace_reaper reaper; /* ends killed stubs (ptrace_reaper.c) */
    /* A stub asked for ahead (ptrace_host_prepare_stub); vm_pool: ready
     * VMs wanted (vmm_host_set_vm_pool), stubs_made: VMs made so far */
    bool prepared;
    int prepared_memfd;
    void *prepared_view;
    /* The prepared stub's memory went to a VM whose stub is taken later
     * (ptrace_host_take_prepared_memory): pending_vm, not this, owns it. */
    bool prepared_memory_taken;
    void *pending_vm;
    unsigned vm_pool, stubs_made;
};

static struct pt_host *pt_host_of(struct vmm_host *h)
{
    return (struct pt_host *)h;
}

void ptrace_host_set_vm_pool(struct vmm_host *host, unsigned nr_ready)
{
    pt_host_of(host)->vm_pool = nr_ready;
}

static int wait_ready(int fd, pid_t pid);

/* Seizes a stub the spawner started and waits for its ready byte; on
 * failure it is killed and reaped. */
static int seize_stub(pid_t pid, int *pidfd, int ready_r, char *why,
                      size_t why_len)
{
    int rc = 0;
    /* Seized at once: from here the stub dies with hvrun (EXITKILL); it
     * asked for SIGKILL at its parent's death itself before that. */
    if (ptrace(PTRACE_SEIZE, pid, NULL,
               (void *)(long)(PTRACE_O_EXITKILL | PTRACE_O_TRACESYSGOOD)) <
        0) {
        rc = -errno;
        snprintf(why, why_len, "ptrace stub: PTRACE_SEIZE: %s",
                 strerror(errno));
    }
    if (rc == 0 && (rc = wait_ready(ready_r, pid)) < 0)
        snprintf(why, why_len, "ptrace stub: %s while setting up",
                 rc == -EIO ? "it exited" : "it stopped (a fault)");
    close(ready_r);
    if (rc < 0) {
        (void)syscall(SYS_pidfd_send_signal, *pidfd, SIGKILL, NULL, 0);
        while (waitpid(pid, NULL, __WALL) < 0 && errno == EINTR)
            ;
        close(*pidfd);
        *pidfd = -1;
    }
    return rc;
}

bool ptrace_host_wants_prepared(struct vmm_host *host)
{
    struct pt_host *h = pt_host_of(host);
    return h->vm_pool > 0 && !h->prepared && ++h->stubs_made > 1;
}

/* The stub's seccomp filter where the stub loads it from as it starts
 * (ptrace_stub.S): a sock_fprog at the scratch page's start, pointing at
 * the program right after it, in the stub's addresses. */
static int write_stub_filter(const struct pt_host *h, int memfd)
{
    struct sock_fprog prog = {
        .len = h->filter.len,
        .filter = (struct sock_filter *)(PT_STUB_SCRATCH_VA +
                                         sizeof(struct sock_fprog)),
    };
    size_t len = h->filter.len * sizeof(*h->filter.insns);
    if (pwrite(memfd, &prog, sizeof(prog), PT_SCRATCH_GPA) !=
            (ssize_t)sizeof(prog) ||
        pwrite(memfd, h->filter.insns, len,
               PT_SCRATCH_GPA + sizeof(prog)) != (ssize_t)len)
        return -EIO;
    return 0;
}

void ptrace_host_prepare_stub(struct vmm_host *host, int memfd, void *view)
{
    struct pt_host *h = pt_host_of(host);
    if (write_stub_filter(h, memfd) < 0 ||
        ptrace_spawner_request(&h->spawner, memfd) < 0) {
        close(memfd);
        munmap(view, PT_VIEW_FIRST);
        return;
    }
    h->prepared = true;
    h->prepared_memfd = memfd;
    h->prepared_view = view;
    ptrace_reaper_warm(&h->reaper, view);
}

bool ptrace_host_take_prepared_memory(struct vmm_host *host, int *memfd,
                                      void **view)
{
    struct pt_host *h = pt_host_of(host);
    if (!h->prepared || h->prepared_memory_taken)
        return false;
    h->prepared_memory_taken = true;
    ptrace_reaper_unwarm(&h->reaper, h->prepared_view);
    *memfd = h->prepared_memfd;
    *view = h->prepared_view;
    return true;
}

int ptrace_host_take_prepared_stub(struct vmm_host *host, pid_t *pid,
                                   int *pidfd)
{
    struct pt_host *h = pt_host_of(host);
    if (!h->prepared || !h->prepared_memory_taken)
        return -ENOENT;
    h->prepared = h->prepared_memory_taken = false;
    int ready_r = -1;
    char why[160];
    if (ptrace_spawner_reply(&h->spawner, pid, pidfd, &ready_r) < 0 ||
        seize_stub(*pid, pidfd, ready_r, why, sizeof(why)) < 0)
        return -EIO; /* the caller spawns one itself, and says why */
    return 0;
}

static void drop_prepared(struct pt_host *h);

void ptrace_host_drop_prepared(struct vmm_host *host)
{
    drop_prepared(pt_host_of(host));
}

void ptrace_host_set_pending_vm(struct vmm_host *host, void *vm)
{
    pt_host_of(host)->pending_vm = vm;
}

void *ptrace_host_pending_vm(struct vmm_host *host)
{
    return pt_host_of(host)->pending_vm;
}

/* A prepared stub no one will take (the host closes, or its spawner is
 * replaced, or its pending VM goes unused): read, killed, its memory
 * freed unless a VM has it. */
static void drop_prepared(struct pt_host *h)
{
    if (!h->prepared)
        return;
    h->prepared = false;
    pid_t pid;
    int pidfd = -1, ready_r = -1;
    if (ptrace_spawner_reply(&h->spawner, &pid, &pidfd, &ready_r) == 0) {
        close(ready_r);
        (void)syscall(SYS_pidfd_send_signal, pidfd, SIGKILL, NULL, 0);
        close(pidfd); /* not hvrun's child: the spawner's, which reaps */
    }
    if (!h->prepared_memory_taken) {
        ptrace_reaper_unwarm(&h->reaper, h->prepared_view);
        close(h->prepared_memfd);
        munmap(h->prepared_view, PT_VIEW_FIRST);
    }
    h->prepared_memory_taken = false;
}

void ptrace_host_confined(struct vmm_host *host)
{
    struct pt_host *h = pt_host_of(host);
    pthread_mutex_lock(&h->reaper.lock);
    h->reaper.allowed = true;
    pthread_mutex_unlock(&h->reaper.lock);
}

/* Stubs started from outside hvrun's Landlock domain cannot be seized by
 * hvrun once it is in one (EPERM), so later stubs come from a spawner
 * forked now, inside the domain. */
int ptrace_host_fs_restricted(struct vmm_host *host, char *why,
                              size_t why_len)
{
    struct pt_host *h = pt_host_of(host);
    drop_prepared(h); /* the old spawner's: hvrun could not seize it */
    struct ptrace_spawner fresh;
    int rc = ptrace_spawner_start(&fresh, h->stub_exec_fd, why, why_len);
    if (rc < 0)
        return rc;
    h->unrestricted_spawner = h->spawner;
    h->spawner = fresh;
    ptrace_reaper_set_unpin(&h->reaper, fresh.unpin_sock);
    return 0;
}

struct ptrace_reaper *ptrace_host_reaper(struct vmm_host *host)
{
    return &pt_host_of(host)->reaper;
}

void ptrace_host_close(struct vmm_host *host)
{
    struct pt_host *h = pt_host_of(host);
    drop_prepared(h);
    ptrace_reaper_stop(&h->reaper); /* unpins through the spawner */
    /* Both spawners told to go first, then waited for: their exits
     * overlap. */
    ptrace_spawner_close(&h->spawner);
    ptrace_spawner_close(&h->unrestricted_spawner);
    ptrace_spawner_stop(&h->spawner);
    ptrace_spawner_stop(&h->unrestricted_spawner);
    if (h->stub_exec_fd >= 0)
        close(h->stub_exec_fd);
    ptrace_stub_filter_free(&h->filter);
    free(h);
}

/* Tracing the stubs, reaping them, killing them by pidfd (asking the
 * spawner for one is sendmsg/recvmsg, in every run's list): no fork, no
 * execve, no kill(2) of a pid. */
static const int run_syscalls[] = {
    SYS_ptrace, SYS_wait4, SYS_waitid, SYS_pidfd_send_signal,
};

const int *ptrace_host_run_syscalls(size_t *n)
{
    *n = sizeof(run_syscalls) / sizeof(run_syscalls[0]);
    return run_syscalls;
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

int ptrace_host_spawn_stub(struct vmm_host *host, int memfd, pid_t *pid,
                           int *pidfd, char *why, size_t why_len)
{
    struct pt_host *h = pt_host_of(host);
    int ready_r = -1;
    /* A prepared request outstanding would take this one's reply. */
    drop_prepared(h);
    int rc = write_stub_filter(h, memfd);
    if (rc == 0)
        rc = ptrace_spawner_spawn(&h->spawner, memfd, pid, pidfd, &ready_r);
    if (rc < 0) {
        snprintf(why, why_len, "ptrace stub: spawn: %s", strerror(-rc));
        return rc;
    }
    return seize_stub(*pid, pidfd, ready_r, why, why_len);
}

/* A child that asked PR_TSC_SIGSEGV and reads the TSC: killed by SIGSEGV
 * where the host honours CR4.TSD. A kernel that is itself a kvm-pvm guest
 * takes the prctl but RDTSC still reads there, so the stubs' RDTSCs would
 * read the host TSC unseen. The answer is kept per boot. */
static bool probe_tsc_prctl(void)
{
    pid_t pid = fork();
    if (pid == 0) {
        signal(SIGSEGV, SIG_DFL); /* a sanitizer's handler would report */
        (void)prctl(PR_SET_DUMPABLE, 0, 0, 0, 0); /* no core file */
        if (prctl(PR_SET_TSC, PR_TSC_SIGSEGV, 0, 0, 0) == 0)
            (void)__rdtsc();
        _exit(0);
    }
    int status = 0;
    if (pid < 0)
        return false;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
        ;
    return WIFSIGNALED(status) && WTERMSIG(status) == SIGSEGV;
}

static bool tsc_prctl_traps(void)
{
    char path[512], got = 0;
    if (vmm_host_cache_file("ptrace-tsc-trap", path, sizeof(path)) < 0)
        return probe_tsc_prctl();
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd >= 0) {
        ssize_t n = read(fd, &got, 1);
        close(fd);
        if (n == 1 && (got == '0' || got == '1'))
            return got == '1';
    }
    bool traps = probe_tsc_prctl();
    char tmp[560];
    snprintf(tmp, sizeof(tmp), "%s.%d", path, (int)getpid());
    fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd >= 0) {
        got = traps ? '1' : '0';
        bool ok = write(fd, &got, 1) == 1;
        close(fd);
        if (!ok || rename(tmp, path) < 0)
            unlink(tmp);
    }
    return traps;
}

int ptrace_host_open(struct vmm_host **out, char *why, size_t why_len)
{
    struct pt_host *h = calloc(1, sizeof(*h));
    if (!h)
        return -ENOMEM;
    h->base.ops = &ptrace_backend_ops;
    h->spawner.sock = h->spawner.unpin_sock = h->spawner.pid = -1;
    h->unrestricted_spawner.sock = h->unrestricted_spawner.unpin_sock = -1;
    h->unrestricted_spawner.pid = -1;
    ptrace_reaper_init(&h->reaper);
    struct vmm_host_info *info = &h->base.info;
    snprintf(info->hypervisor, sizeof(info->hypervisor), "none (ptrace)");
    /* PR_SET_TSC in the stub, where the host honours it. */
    info->rdtsc_trappable = tsc_prctl_traps();
    h->stub_exec_fd = stub_program_fd();
    int rc = h->stub_exec_fd;
    if (rc < 0) {
        snprintf(why, why_len, "ptrace: the stub program: %s", strerror(-rc));
        h->stub_exec_fd = -1;
        ptrace_host_close(&h->base);
        return rc;
    }
    if ((rc = ptrace_stub_filter_build(&h->filter, why, why_len)) < 0 ||
        (rc = ptrace_spawner_start(&h->spawner, h->stub_exec_fd, why,
                                   why_len)) < 0) {
        ptrace_host_close(&h->base);
        return rc;
    }
    ptrace_reaper_set_unpin(&h->reaper, h->spawner.unpin_sock);
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
    /* Every run makes a first VM: its stub is spawned now, beside the
     * rest of the set-up (the confinement, the program's load), rather
     * than while the first vm_create waits (~1-3 ms). A host closed
     * without one (doctor) kills it unused. */
    ptrace_vm_prepare_first(&h->base);
    *out = &h->base;
    return 0;
}

/* ---- checkpoints (vmm/snapshot.c) ---------------------------------------- */

void ptrace_host_disown(struct vmm_host *host)
{
    struct pt_host *h = pt_host_of(host);
    if (h->prepared) { /* the original reads its reply */
        if (!h->prepared_memory_taken) {
            close(h->prepared_memfd);
            munmap(h->prepared_view, PT_VIEW_FIRST);
        }
        h->prepared = h->prepared_memory_taken = false;
    }
    h->pending_vm = NULL; /* its VM forgets its stub (vm_disown) */
    /* Not stopped: the spawners are the original's children, and their
     * sockets the original's too (a request here would take its reply). */
    ptrace_spawner_close(&h->spawner);
    ptrace_spawner_close(&h->unrestricted_spawner);
    h->spawner.pid = h->unrestricted_spawner.pid = -1;
    /* The worker thread is not in the fork; its lock may have been held.
     * Its stubs die pinned (no spawner socket of its own). */
    bool allowed = h->reaper.allowed;
    ptrace_reaper_init(&h->reaper);
    h->reaper.allowed = allowed;
}

void ptrace_host_adopt_helper(struct vmm_host *host, int helper_fd)
{
    struct pt_host *h = pt_host_of(host);
    h->spawner.sock = helper_fd;
    h->spawner.unpin_sock = -1;
    h->spawner.pid = -1; /* another process's child: not waited for */
}

int ptrace_helper_start(int *sock, int *pid, char *why, size_t why_len)
{
    int exec_fd = stub_program_fd();
    if (exec_fd < 0) {
        snprintf(why, why_len, "ptrace: the stub program's memfd: %s",
                 strerror(-exec_fd));
        return exec_fd;
    }
    struct ptrace_spawner s;
    int rc = ptrace_spawner_start(&s, exec_fd, why, why_len);
    close(exec_fd);
    if (rc == 0) {
        *sock = s.sock;
        *pid = s.pid;
    }
    return rc;
}
