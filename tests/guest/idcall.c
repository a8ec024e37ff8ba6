/*
 * idcall.c - glibc's getpid, getppid, get[e]uid and get[e]gid, which hvrun
 * answers in the guest (mm/cpuid_patch.c, "identity calls": the wrapper's
 * `mov $nr, %eax; syscall` becomes a jmp to a stub reading [vvar]), agree
 * with the kernel's answer (syscall(2), which no stub takes) wherever the
 * answer changes or must be seen:
 * - in the process, a fork child, a vfork child (same memory as its
 *   parent) and a thread;
 * - after setresuid/setresgid (as root) and after the parent exits (the
 *   orphan's getppid);
 * - under a seccomp filter that refuses getpid (the filter sees the call);
 * - under a tracer's PTRACE_SYSCALL (each call is a stop);
 * - after the process unmaps [vvar], where the answers were.
 * Prints relations only (pids differ from native).
 */
#define _GNU_SOURCE
#include "guest_check.h"
#include "guest_maps.h"

#include <linux/filter.h>
#include <linux/seccomp.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <unistd.h>

/* The wrappers' answers against the kernel's: 1 when all six agree. */
static int ids_agree(void)
{
    return getpid() == syscall(SYS_getpid) &&
           getppid() == syscall(SYS_getppid) &&
           getuid() == (uid_t)syscall(SYS_getuid) &&
           geteuid() == (uid_t)syscall(SYS_geteuid) &&
           getgid() == (gid_t)syscall(SYS_getgid) &&
           getegid() == (gid_t)syscall(SYS_getegid);
}

static int wait_ok(pid_t pid)
{
    int st;
    return waitpid(pid, &st, 0) == pid && WIFEXITED(st) &&
           WEXITSTATUS(st) == 0;
}

static void *thread_main(void *arg)
{
    (void)arg;
    return (void *)(long)ids_agree();
}

static volatile int vfork_agree, vfork_pid_is_own;

static void fork_and_vfork(void)
{
    pid_t parent = getpid();
    pid_t pid = fork();
    CHECK(pid >= 0);
    if (pid == 0)
        _exit(ids_agree() && getppid() == parent && getpid() != parent ? 0
                                                                         : 1);
    printf("fork child: %s\n", wait_ok(pid) ? "agree" : "DIFFER");
    pid = vfork();
    CHECK(pid >= 0);
    if (pid == 0) {
        vfork_agree = ids_agree();
        vfork_pid_is_own = getpid() != parent && getppid() == parent;
        _exit(0);
    }
    CHECK(wait_ok(pid));
    printf("vfork child: %s, own pid %s; parent after it: %s\n",
           vfork_agree ? "agree" : "DIFFER", vfork_pid_is_own ? "yes" : "no",
           ids_agree() && getpid() == parent ? "agree" : "DIFFER");
}

static void thread_and_setuid(void)
{
    pthread_t t;
    void *agree;
    CHECK(pthread_create(&t, NULL, thread_main, NULL) == 0);
    CHECK(pthread_join(t, &agree) == 0);
    printf("thread: %s\n", agree ? "agree" : "DIFFER");
    if (geteuid() != 0)
        return;
    pid_t pid = fork();
    CHECK(pid >= 0);
    if (pid == 0) {
        CHECK(setresgid(65534, 65533, 65534) == 0);
        CHECK(setresuid(65534, 65533, 65534) == 0);
        _exit(ids_agree() && getuid() == 65534 && geteuid() == 65533 &&
                      getgid() == 65534 && getegid() == 65533
                  ? 0
                  : 1);
    }
    printf("after setresuid: %s\n", wait_ok(pid) ? "agree" : "DIFFER");
}

static void orphan(void)
{
    int fds[2];
    CHECK(pipe(fds) == 0);
    pid_t pid = fork();
    CHECK(pid >= 0);
    if (pid == 0) {
        pid_t middle = getpid();
        pid_t g = fork();
        CHECK(g >= 0);
        if (g == 0) {
            while (getppid() == middle) /* the wrapper's answer changes */
                usleep(1000);
            char c = ids_agree() ? 'y' : 'n';
            CHECK(write(fds[1], &c, 1) == 1);
            _exit(0);
        }
        _exit(0);
    }
    CHECK(wait_ok(pid));
    close(fds[1]);
    char c = 0;
    CHECK(read(fds[0], &c, 1) == 1);
    close(fds[0]);
    printf("orphan after its parent exits: %s\n",
           c == 'y' ? "agree" : "DIFFER");
}

static void under_seccomp(void)
{
    pid_t pid = fork();
    CHECK(pid >= 0);
    if (pid == 0) {
        struct sock_filter prog[] = {
            BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
                     offsetof(struct seccomp_data, nr)),
            BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_getpid, 0, 1),
            BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | 77),
            BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
        };
        struct sock_fprog fp = {sizeof(prog) / sizeof(prog[0]), prog};
        CHECK(prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == 0);
        CHECK(prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &fp) == 0);
        _exit(getpid() == -77 && getppid() > 0 ? 0 : 1);
    }
    printf("getpid refused by a seccomp filter: %s\n",
           wait_ok(pid) ? "refused" : "ANSWERED");
}

/* A tracee calling getpid three times: its tracer sees three entries. */
static void under_ptrace(void)
{
    pid_t pid = fork();
    CHECK(pid >= 0);
    if (pid == 0) {
        CHECK(ptrace(PTRACE_TRACEME, 0, 0, 0) == 0);
        raise(SIGSTOP);
        for (int i = 0; i < 3; i++)
            (void)getpid();
        _exit(0);
    }
    int st, entries = 0;
    bool entry = true;
    CHECK(waitpid(pid, &st, 0) == pid && WIFSTOPPED(st));
    CHECK(ptrace(PTRACE_SETOPTIONS, pid, 0, PTRACE_O_TRACESYSGOOD) == 0);
    for (;;) {
        CHECK(ptrace(PTRACE_SYSCALL, pid, 0, 0) == 0);
        CHECK(waitpid(pid, &st, 0) == pid);
        if (WIFEXITED(st))
            break;
        if (!WIFSTOPPED(st) || WSTOPSIG(st) != (SIGTRAP | 0x80))
            continue;
        struct user_regs_struct r;
        CHECK(ptrace(PTRACE_GETREGS, pid, 0, &r) == 0);
        if (entry && r.orig_rax == SYS_getpid)
            entries++;
        entry = !entry;
    }
    printf("a tracer's syscall stops at getpid: %d\n", entries);
}

/* A child that unmaps [vvar] (as a checkpointing tool may): its calls
 * still answer, where a stub reading the page would fault. */
static void without_vvar(void)
{
    pid_t pid = fork();
    CHECK(pid >= 0);
    if (pid == 0) {
        CHECK(unmap_named("[vvar]") == 0);
        _exit(ids_agree() ? 0 : 1);
    }
    printf("after unmapping [vvar]: %s\n", wait_ok(pid) ? "agree" : "DIFFER");
}

int main(void)
{
    setvbuf(stdout, NULL, _IONBF, 0);
    printf("process: %s\n", ids_agree() ? "agree" : "DIFFER");
    fork_and_vfork();
    thread_and_setuid();
    orphan();
    under_seccomp();
    under_ptrace();
    without_vvar();
    return 0;
}
