/*
 * ptrace_seccomp.c - SECCOMP_RET_TRACE and PTRACE_EVENT_SECCOMP (what
 * strace --seccomp-bpf builds on): a traced child's filter returns
 * RET_TRACE|data for getppid; its tracer, with PTRACE_O_TRACESECCOMP, gets
 * the event stop (GETEVENTMSG and PTRACE_GET_SYSCALL_INFO's seccomp op
 * carry the data), can let the call run, change it to another call, or
 * skip it with a result of its own; under PTRACE_SYSCALL the stops come
 * entry, seccomp, exit, as Linux orders them; without the option the call
 * fails with ENOSYS. Prints what the tracer saw, compared with native.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <unistd.h>

#include "guest_check.h"

#define DATA 0x42

static void install_filter(void)
{
    struct sock_filter code[] = {
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_getppid, 0, 1),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_TRACE | DATA),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
    };
    struct sock_fprog prog = {sizeof(code) / sizeof(code[0]), code};
    CHECK(prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == 0);
    CHECK(prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) == 0);
}

/* The child: three getppid calls, their results through the exit status
 * bits and stdout (one line each). */
static void child(void)
{
    CHECK(ptrace(PTRACE_TRACEME, 0, 0, 0) == 0);
    raise(SIGSTOP);
    install_filter();
    for (int i = 0; i < 3; i++) {
        long r = syscall(SYS_getppid);
        printf("child call %d: %s\n", i,
               r == -1 ? strerror(errno) : r == getpid() ? "getpid's result"
                       : r == 77 ? "77, the tracer's" : "getppid's result");
        fflush(stdout);
    }
    _exit(0);
}

static int wait_stop(pid_t c)
{
    int st;
    CHECK(waitpid(c, &st, 0) == c);
    return st;
}

static const char *stop_name(int st)
{
    if (WIFEXITED(st))
        return "exited";
    if (st >> 8 == (SIGTRAP | (PTRACE_EVENT_SECCOMP << 8)))
        return "seccomp";
    if (WSTOPSIG(st) == (SIGTRAP | 0x80))
        return "syscall";
    return "other";
}

static void seccomp_info(pid_t c)
{
    struct __ptrace_syscall_info si;
    memset(&si, 0, sizeof(si));
    long n = ptrace(PTRACE_GET_SYSCALL_INFO, c, sizeof(si), &si);
    unsigned long msg = 0;
    CHECK(ptrace(PTRACE_GETEVENTMSG, c, 0, &msg) == 0);
    printf("  info: size %ld, op %d, getppid %d, ret_data %#x, msg %#lx\n", n,
           si.op, si.seccomp.nr == SYS_getppid, si.seccomp.ret_data, msg);
}

static void run(int options)
{
    fflush(stdout);
    pid_t c = fork();
    CHECK(c >= 0);
    if (c == 0)
        child();
    int st = wait_stop(c);
    CHECK(WIFSTOPPED(st) && WSTOPSIG(st) == SIGSTOP);
    CHECK(ptrace(PTRACE_SETOPTIONS, c, 0, options) == 0);
    printf("options %s:\n", options & PTRACE_O_TRACESECCOMP
                                ? "TRACESECCOMP" : "none");
    /* call 0: PTRACE_SYSCALL all along, let it run */
    CHECK(ptrace(PTRACE_SYSCALL, c, 0, 0) == 0);
    int call = 0;
    for (;;) {
        st = wait_stop(c);
        if (WIFEXITED(st)) {
            printf("  exited %d\n", WEXITSTATUS(st));
            return;
        }
        struct user_regs_struct r;
        CHECK(ptrace(PTRACE_GETREGS, c, 0, &r) == 0);
        const char *kind = stop_name(st);
        int req = PTRACE_CONT;
        if (!strcmp(kind, "seccomp")) {
            printf("  call %d: seccomp stop\n", call);
            seccomp_info(c);
            if (call == 1) { /* becomes getpid */
                r.orig_rax = SYS_getpid;
                CHECK(ptrace(PTRACE_SETREGS, c, 0, &r) == 0);
            } else if (call == 2) { /* skipped, 77 */
                r.orig_rax = -1;
                r.rax = 77;
                CHECK(ptrace(PTRACE_SETREGS, c, 0, &r) == 0);
            }
            req = call == 0 ? PTRACE_SYSCALL : PTRACE_CONT;
            call++;
        } else if (!strcmp(kind, "syscall") &&
                   (long)r.orig_rax == SYS_getppid) {
            printf("  call %d: syscall stop (%s)\n", call,
                   (long)r.rax == -ENOSYS ? "entry" : "exit");
            req = PTRACE_SYSCALL;
            if ((long)r.rax != -ENOSYS && call == 0)
                req = PTRACE_CONT;
        } else if (!strcmp(kind, "syscall")) {
            req = call == 0 ? PTRACE_SYSCALL : PTRACE_CONT;
        } else {
            printf("  stop %#x\n", st);
        }
        CHECK(ptrace(req, c, 0, 0) == 0);
    }
}

int main(void)
{
    setvbuf(stdout, NULL, _IONBF, 0);
    run(PTRACE_O_TRACESYSGOOD | PTRACE_O_TRACESECCOMP);
    run(PTRACE_O_TRACESYSGOOD);
    return 0;
}
