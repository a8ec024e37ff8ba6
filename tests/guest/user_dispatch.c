/*
 * user_dispatch - prctl(PR_SET_SYSCALL_USER_DISPATCH): the argument checks,
 * a blocked call becoming SIGSYS (si_code, number, arch, address, rax
 * rolled back to the number, the handler's rax the call's result), calls
 * from the allowed range and under ALLOW running, a fork child starting
 * with it off, an invalid selector value ending
 * the process by SIGSYS, an unreadable selector by SIGSEGV.
 */
#define _GNU_SOURCE
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <ucontext.h>
#include <unistd.h>

#include "guest_check.h"

#ifndef PR_SET_SYSCALL_USER_DISPATCH
#define PR_SET_SYSCALL_USER_DISPATCH 59
#endif
#define DISPATCH_OFF 0
#define DISPATCH_ON 1
#define SEL_ALLOW 0
#define SEL_BLOCK 1

static volatile char selector = SEL_ALLOW;
static volatile int seen_code, seen_nr, seen_arch;
static volatile uint64_t seen_addr, seen_rax;

/* A raw getppid whose return address is the label after the syscall. */
extern char raw_call_ret[];
static long raw_getppid(void)
{
    long ret;
    __asm__ volatile("syscall\n\t"
                     ".globl raw_call_ret\n"
                     "raw_call_ret:"
                     : "=a"(ret)
                     : "a"(SYS_getppid)
                     : "rcx", "r11", "memory");
    return ret;
}

/* The handler makes no syscall until the selector is ALLOW again: its
 * return (rt_sigreturn from libc's restorer) is itself outside the range. */
static void on_sigsys(int sig, siginfo_t *si, void *uc_)
{
    ucontext_t *uc = uc_;
    (void)sig;
    selector = SEL_ALLOW;
    seen_code = si->si_code;
    seen_nr = si->si_syscall;
    seen_arch = (int)si->si_arch;
    seen_addr = (uint64_t)(uintptr_t)si->si_call_addr;
    seen_rax = (uint64_t)uc->uc_mcontext.gregs[REG_RAX];
    uc->uc_mcontext.gregs[REG_RAX] = 4242; /* the emulated call's result */
}

static long set_dispatch(long mode, uint64_t off, uint64_t len,
                         const volatile char *sel)
{
    return prctl(PR_SET_SYSCALL_USER_DISPATCH, mode, off, len, sel);
}

static void show(const char *what, long r)
{
    printf("%s: %ld errno %d\n", what, r, r < 0 ? errno : 0);
}

static void check_arguments(void)
{
    show("off with a range", set_dispatch(DISPATCH_OFF, 1, 0, NULL));
    show("mode 7", set_dispatch(7, 0, 0, NULL));
    show("wrapping range",
         set_dispatch(DISPATCH_ON, UINT64_MAX - 4, 16, &selector));
    show("kernel selector",
         set_dispatch(DISPATCH_ON, 0, 0, (char *)0xffff800000000000ULL));
    show("off", set_dispatch(DISPATCH_OFF, 0, 0, NULL));
}

static void check_blocked_call(void)
{
    CHECK(set_dispatch(DISPATCH_ON, 0, 0, &selector) == 0);
    selector = SEL_BLOCK;
    long r = raw_getppid();
    printf("blocked getppid: %ld code %d nr %d arch %#x at_ret %d rax %llu\n",
           r, seen_code, seen_nr, (unsigned)seen_arch,
           seen_addr == (uint64_t)(uintptr_t)raw_call_ret,
           (unsigned long long)seen_rax);
    /* ALLOW: the same call runs. */
    r = raw_getppid();
    printf("allowed getppid is the parent: %d\n", r == getppid());
    CHECK(set_dispatch(DISPATCH_OFF, 0, 0, NULL) == 0);
}

static void check_allowed_range(void)
{
    /* The range holds the call's return address: it runs even under
     * BLOCK, with no signal. */
    seen_code = 0;
    CHECK(set_dispatch(DISPATCH_ON, (uint64_t)(uintptr_t)raw_call_ret - 2, 8,
                       &selector) == 0);
    selector = SEL_BLOCK;
    long r = raw_getppid();
    selector = SEL_ALLOW;
    printf("in-range getppid ran: %d signal %d\n", r == getppid(), seen_code);
    CHECK(set_dispatch(DISPATCH_OFF, 0, 0, NULL) == 0);
}

/* Runs fn in a child and prints how it ended. */
static void in_child(const char *what, void (*fn)(void))
{
    fflush(stdout);
    pid_t pid = fork();
    CHECK(pid >= 0);
    if (pid == 0) {
        fn();
        _exit(0);
    }
    int st;
    CHECK(waitpid(pid, &st, 0) == pid);
    if (WIFEXITED(st))
        printf("%s: exit %d\n", what, WEXITSTATUS(st));
    else
        printf("%s: signal %d\n", what, WTERMSIG(st));
}

static void bad_selector_value(void)
{
    CHECK(set_dispatch(DISPATCH_ON, 0, 0, &selector) == 0);
    selector = 2;
    raw_getppid();
    selector = SEL_ALLOW;
    _exit(3); /* not reached: the call ends the process */
}

static void unreadable_selector(void)
{
    char *page = mmap(NULL, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS,
                      -1, 0);
    CHECK(page != MAP_FAILED);
    CHECK(set_dispatch(DISPATCH_ON, 0, 0, page) == 0);
    raw_getppid();
    _exit(3);
}

/* The child's dispatch is off though the parent's is on: its calls run
 * whatever its copy of the selector says. */
static void child_of_dispatching_parent(void)
{
    selector = SEL_BLOCK;
    long r = raw_getppid();
    _exit(r > 0 && seen_code == 0 ? 0 : 4);
}

static void check_fork_clears(void)
{
    CHECK(set_dispatch(DISPATCH_ON, 0, 0, &selector) == 0);
    seen_code = 0;
    in_child("fork child under a blocking selector", child_of_dispatching_parent);
    CHECK(set_dispatch(DISPATCH_OFF, 0, 0, NULL) == 0);
}

int main(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof(sa));
    sa.sa_sigaction = on_sigsys;
    sa.sa_flags = SA_SIGINFO;
    CHECK(sigaction(SIGSYS, &sa, NULL) == 0);
    setvbuf(stdout, NULL, _IOLBF, 0);
    check_arguments();
    check_blocked_call();
    check_allowed_range();
    check_fork_clears();
    in_child("invalid selector value", bad_selector_value);
    in_child("unreadable selector", unreadable_selector);
    return 0;
}
