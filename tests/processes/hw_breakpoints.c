/*
 * hw_breakpoints.c - a tracer's hardware watchpoint and breakpoint through
 * the user area's debug registers (PTRACE_POKEUSER DR0, DR1, DR7): a data
 * write and an instruction are each reported as SIGTRAP TRAP_HWBKPT with
 * DR6 saying which. Where the backend gives the guest no debug registers
 * the DR7 write is EIO: the program says so and stops (run.sh).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/ptrace.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <unistd.h>

static volatile int watched;

static void target(void)
{
    __asm__ volatile("nop");
}

int main(void)
{
    setvbuf(stdout, NULL, _IONBF, 0);
    pid_t pid = fork();
    if (pid == 0) {
        ptrace(PTRACE_TRACEME, 0, 0, 0);
        raise(SIGSTOP);
        watched = 1;
        watched = 2;
        target();
        _exit(7);
    }
    int st;
    waitpid(pid, &st, 0);
    long at = offsetof(struct user, u_debugreg);
    long dr7 = 1 | (1L << 16) | (3L << 18) | (1 << 2); /* DR0 write 4, DR1 exec */
    long rc = ptrace(PTRACE_POKEUSER, pid, at, (long)&watched);
    printf("DR0: %ld\n", rc);
    rc = ptrace(PTRACE_POKEUSER, pid, at + 8, (long)&target);
    printf("DR1: %ld\n", rc);
    errno = 0;
    rc = ptrace(PTRACE_POKEUSER, pid, at + 56, 1 | (2L << 16)); /* I/O */
    int err = errno;
    printf("DR7 with an I/O breakpoint: %ld, errno %d\n", rc, err);
    errno = 0;
    rc = ptrace(PTRACE_POKEUSER, pid, at + 56, dr7);
    err = errno;
    if (rc < 0) {
        printf("DR7: unavailable, errno %d\n", err);
        kill(pid, SIGKILL);
        waitpid(pid, &st, 0);
        return 0;
    }
    for (int i = 0; i < 4; i++) {
        ptrace(PTRACE_CONT, pid, 0, 0);
        waitpid(pid, &st, 0);
        if (!WIFSTOPPED(st)) {
            printf("exit %d\n", WEXITSTATUS(st));
            break;
        }
        siginfo_t si;
        ptrace(PTRACE_GETSIGINFO, pid, 0, &si);
        long dr6 = ptrace(PTRACE_PEEKUSER, pid, at + 48, 0);
        struct user_regs_struct r;
        ptrace(PTRACE_GETREGS, pid, 0, &r);
        printf("stop %d, si_code %d, DR6 %#lx, si_addr is rip %d, at target "
               "%d\n",
               WSTOPSIG(st), si.si_code, dr6 & 0xf,
               si.si_addr == (void *)r.rip, r.rip == (unsigned long)&target);
        if (r.rip == (unsigned long)&target) /* off, as gdb steps over it */
            ptrace(PTRACE_POKEUSER, pid, at + 56, 1 | (1L << 16) | (3L << 18));
    }
    return 0;
}
