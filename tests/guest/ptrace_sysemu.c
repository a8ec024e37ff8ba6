/*
 * ptrace_sysemu.c - PTRACE_SYSEMU and PTRACE_SYSEMU_SINGLESTEP (User-mode
 * Linux's and gVisor's ptrace platform's way of running a program): each
 * system call of the tracee stops at its entry and is not made; the tracer
 * gives its result in rax. Checked: the calls' numbers and arguments at
 * the stops, results set by the tracer (and -ENOSYS when it sets none),
 * a write that is emulated (nothing reaches stdout), exit_group skipped,
 * no syscall-exit-stop under SYSEMU but one when resumed with
 * PTRACE_SYSCALL, and under SYSEMU_SINGLESTEP a step stop per instruction
 * but none for the SYSCALL instruction itself. Prints facts: numbers,
 * offsets from a label, never addresses.
 */
#define _GNU_SOURCE
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <unistd.h>

#include "guest_check.h"

extern char step_start[], step_end[];

/* nop, nop, getpid, nop, then int3 (a signal stop, no system call). */
static void step_block(void)
{
    __asm__ volatile("step_start:\n\t"
                     "nop\n\tnop\n\t"
                     "mov $39, %%eax\n\t"
                     "syscall\n\t"
                     "nop\n\t"
                     "step_end:\n\t"
                     "int3\n\t"
                     :
                     :
                     : "rax", "rcx", "r11", "memory");
}

static long raw3(long nr, long a, long b, long c)
{
    long r;
    __asm__ volatile("syscall"
                     : "=a"(r)
                     : "a"(nr), "D"(a), "S"(b), "d"(c)
                     : "rcx", "r11", "memory");
    return r;
}

static void child(void)
{
    CHECK(ptrace(PTRACE_TRACEME, 0, 0, 0) == 0);
    raise(SIGSTOP); /* the tracer sees this stop, then SYSEMUs */
    static const char msg[] = "this write is emulated\n";
    long pid = raw3(SYS_getpid, 0, 0, 0);
    long wr = raw3(SYS_write, 1, (long)msg, sizeof(msg) - 1);
    long none = raw3(SYS_getppid, 0, 0, 0); /* the tracer sets no result */
    long gone = raw3(SYS_exit_group, 7, 0, 0); /* skipped: goes on */
    long traced = raw3(SYS_getuid, 0, 0, 0); /* resumed with PTRACE_SYSCALL */
    __asm__ volatile("int3"); /* back to plain running */
    printf("child: getpid %ld write %ld getppid %ld exit_group %ld getuid "
           "%ld\n",
           pid, wr, none, gone, traced == (long)getuid() ? 0 : traced);
    fflush(stdout);
    raise(SIGSTOP); /* the tracer SYSEMU_SINGLESTEPs step_block */
    step_block();
    printf("child: after the stepped block\n");
    fflush(stdout);
    _exit(0);
}

static int stop_of(pid_t c, int *sig)
{
    int st;
    CHECK(waitpid(c, &st, 0) == c);
    if (!WIFSTOPPED(st)) {
        *sig = 0;
        return WIFEXITED(st) ? WEXITSTATUS(st) : -WTERMSIG(st);
    }
    *sig = WSTOPSIG(st);
    return -1000;
}

static void sysemu_part(pid_t c)
{
    int sig;
    CHECK(ptrace(PTRACE_SETOPTIONS, c, 0, PTRACE_O_TRACESYSGOOD) == 0);
    CHECK(ptrace(PTRACE_SYSEMU, c, 0, 0) == 0);
    for (int n = 0;; n++) {
        stop_of(c, &sig);
        struct user_regs_struct r;
        CHECK(ptrace(PTRACE_GETREGS, c, 0, &r) == 0);
        if (sig == SIGTRAP) { /* the int3: run plainly from here */
            printf("stop %d: SIGTRAP (int3)\n", n);
            CHECK(ptrace(PTRACE_CONT, c, 0, 0) == 0);
            return;
        }
        CHECK(sig == (SIGTRAP | 0x80));
        long nr = (long)r.orig_rax;
        printf("stop %d: syscall %ld rax %lld arg0 %lld\n", n, nr,
               (long long)r.rax, nr == SYS_getpid ? 0 : (long long)r.rdi);
        long req = PTRACE_SYSEMU;
        if (nr == SYS_getpid)
            r.rax = 4242;
        else if (nr == SYS_write)
            r.rax = r.rdx; /* "written" */
        else if (nr == SYS_exit_group)
            r.rax = 99;
        else if (nr == SYS_getuid)
            req = PTRACE_SYSCALL; /* still skipped; an exit stop follows */
        if (nr != SYS_getppid && nr != SYS_getuid)
            CHECK(ptrace(PTRACE_SETREGS, c, 0, &r) == 0);
        if (nr == SYS_getuid) {
            r.rax = 0; /* shown back as getuid's result */
            CHECK(ptrace(PTRACE_SETREGS, c, 0, &r) == 0);
            CHECK(ptrace(req, c, 0, 0) == 0);
            stop_of(c, &sig);
            CHECK(ptrace(PTRACE_GETREGS, c, 0, &r) == 0);
            printf("stop %d: exit stop %d syscall %lld rax %lld\n", n,
                   sig == (SIGTRAP | 0x80), (long long)r.orig_rax,
                   (long long)r.rax);
            req = PTRACE_SYSEMU;
        }
        CHECK(ptrace(req, c, 0, 0) == 0);
    }
}

static void singlestep_part(pid_t c)
{
    int sig;
    CHECK(stop_of(c, &sig) == -1000 && sig == SIGSTOP);
    /* Step to the block: SYSEMU_SINGLESTEP from the SIGSTOP would step
     * through printf's and raise's code; PTRACE_CONT to the block's start
     * instead, by a breakpoint-free way: step plainly until rip is there. */
    struct user_regs_struct r;
    for (int guard = 0; guard < 2000000; guard++) {
        CHECK(ptrace(PTRACE_GETREGS, c, 0, &r) == 0);
        if (r.rip == (uintptr_t)step_start)
            break;
        CHECK(ptrace(PTRACE_SINGLESTEP, c, 0, 0) == 0);
        stop_of(c, &sig);
        CHECK(sig == SIGTRAP || sig == (SIGTRAP | 0x80));
    }
    CHECK(r.rip == (uintptr_t)step_start);
    for (int n = 0; n < 20; n++) {
        CHECK(ptrace(PTRACE_SYSEMU_SINGLESTEP, c, 0, 0) == 0);
        stop_of(c, &sig);
        CHECK(ptrace(PTRACE_GETREGS, c, 0, &r) == 0);
        long off = (long)(r.rip - (uintptr_t)step_start);
        if (sig == (SIGTRAP | 0x80)) {
            printf("step %d: syscall entry %lld at +%ld\n", n,
                   (long long)r.orig_rax, off);
            r.rax = 5151;
            CHECK(ptrace(PTRACE_SETREGS, c, 0, &r) == 0);
        } else {
            printf("step %d: %s at +%ld rax %lld\n", n,
                   sig == SIGTRAP ? "SIGTRAP" : strsignal(sig), off,
                   (long long)r.rax);
        }
        if (r.rip == (uintptr_t)step_end)
            break;
    }
    CHECK(ptrace(PTRACE_CONT, c, 0, 0) == 0); /* onto the int3 */
    stop_of(c, &sig);
    printf("then %s\n", sig == SIGTRAP ? "SIGTRAP (int3)" : strsignal(sig));
    CHECK(ptrace(PTRACE_CONT, c, 0, 0) == 0);
}

int main(void)
{
    setvbuf(stdout, NULL, _IONBF, 0);
    pid_t c = fork();
    CHECK(c >= 0);
    if (c == 0)
        child();
    int sig;
    CHECK(stop_of(c, &sig) == -1000 && sig == SIGSTOP);
    sysemu_part(c);
    singlestep_part(c);
    int st = stop_of(c, &sig);
    printf("child exit %d\n", st);
    return 0;
}
