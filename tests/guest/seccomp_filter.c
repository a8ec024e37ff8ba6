/*
 * seccomp_filter.c - a program that sandboxes itself with libseccomp: the
 * filter's ERRNO, TRAP and KILL_PROCESS actions, an argument comparison,
 * inheritance by a child, /proc/self/status and PR_GET_SECCOMP, strict
 * mode, and a malformed program refused. Run natively and under hvrun,
 * the output must match (tests/run-guest-tests.sh).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <seccomp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <ucontext.h>
#include <unistd.h>

static volatile int trapped_nr = -1, trapped_code = -1, trapped_arch_ok;

static void on_sigsys(int sig, siginfo_t *si, void *ctx)
{
    (void)sig;
    trapped_nr = si->si_syscall;
    trapped_code = si->si_code;
    trapped_arch_ok = si->si_arch == SCMP_ARCH_X86_64;
    ucontext_t *uc = ctx;
    uc->uc_mcontext.gregs[REG_RAX] = 42; /* what the call returns */
}

static const char *err(long rc)
{
    return rc < 0 ? strerrorname_np(errno) : "ok";
}

static void status_line(void)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    while (f && fgets(line, sizeof(line), f))
        if (!strncmp(line, "Seccomp:", 8) || !strncmp(line, "NoNewPrivs:", 11))
            fputs(line, stdout);
    if (f)
        fclose(f);
}

static int child_status(pid_t pid)
{
    int st;
    waitpid(pid, &st, 0);
    return WIFSIGNALED(st) ? 1000 + WTERMSIG(st) : WEXITSTATUS(st);
}

static void strict_child(void)
{
    pid_t pid = fork();
    if (pid == 0) {
        prctl(PR_SET_SECCOMP, SECCOMP_MODE_STRICT);
        static const char msg[] = "strict: write allowed\n";
        syscall(SYS_write, 1, msg, sizeof(msg) - 1);
        syscall(SYS_getpid); /* not allowed: SIGKILL */
        syscall(SYS_exit, 0);
    }
    printf("strict: child status %d\n", child_status(pid));
}

static void bad_program(void)
{
    struct sock_filter bad[] = {{0xffff, 0, 0, 0}};
    struct sock_fprog prog = {.len = 1, .filter = bad};
    printf("bad program: %s\n",
           err(syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog)));
    struct sock_filter noret[] = {BPF_STMT(BPF_LD | BPF_W | BPF_ABS, 0)};
    prog.filter = noret;
    printf("no return: %s\n",
           err(syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog)));
    struct sock_filter unaligned[] = {
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, 2),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW)};
    prog.len = 2;
    prog.filter = unaligned;
    printf("unaligned load: %s\n",
           err(syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog)));
}

int main(void)
{
    setvbuf(stdout, NULL, _IONBF, 0);
    strict_child();
    bad_program();
    printf("before: PR_GET_SECCOMP %d\n", prctl(PR_GET_SECCOMP));
    struct sigaction sa = {.sa_sigaction = on_sigsys, .sa_flags = SA_SIGINFO};
    sigaction(SIGSYS, &sa, NULL);

    scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ALLOW);
    seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(uname), 0);
    seccomp_rule_add(ctx, SCMP_ACT_ERRNO(ENOSPC), SCMP_SYS(dup2), 1,
                     SCMP_A1(SCMP_CMP_EQ, 100));
    seccomp_rule_add(ctx, SCMP_ACT_TRAP, SCMP_SYS(getppid), 0);
    seccomp_rule_add(ctx, SCMP_ACT_KILL_PROCESS, SCMP_SYS(getcwd), 0);
    int rc = seccomp_load(ctx);
    seccomp_release(ctx);
    printf("load: %d\n", rc);
    printf("after: PR_GET_SECCOMP %d\n", prctl(PR_GET_SECCOMP));
    status_line();

    struct utsname u;
    printf("uname: %s\n", err(uname(&u)));
    printf("dup2 to 100: %s\n", err(dup2(1, 100)));
    printf("dup2 to 101: %s\n", err(dup2(1, 101)));
    close(101);
    long ppid = syscall(SYS_getppid);
    printf("getppid: %ld, trapped nr %d code %d arch %d\n", ppid, trapped_nr,
           trapped_code, trapped_arch_ok);
    printf("getpid allowed: %d\n", getpid() > 0);

    pid_t pid = fork();
    if (pid == 0) {
        printf("child: uname %s\n", err(uname(&u)));
        char buf[64];
        syscall(SYS_getcwd, buf, sizeof(buf)); /* KILL_PROCESS */
        printf("child: not killed\n");
        _exit(0);
    }
    printf("child status %d\n", child_status(pid));
    return 0;
}
