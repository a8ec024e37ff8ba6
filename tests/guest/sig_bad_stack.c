/*
 * sig_bad_stack.c - a synchronous signal whose handler frame cannot be
 * written (a bad rsp, an unmapped sigaltstack) becomes
 * Linux's force_sigsegv: a SIGSEGV (si_code SI_KERNEL) whose own handler
 * runs when its frame can be written, and otherwise (or when the failed
 * signal was SIGSEGV itself, or SIGSEGV is blocked or ignored) the process
 * dies of SIGSEGV. A frame that would overflow the alternate stack (one
 * too small for it, or handlers nesting on it until it is full) is refused
 * the same way, never written below the stack. Each case runs in a child;
 * one line per result, compared with a native run (tests/run-guest-tests.sh).
 */
#define _GNU_SOURCE
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "guest_check.h"

static void say(const char *s) { (void)!write(1, s, strlen(s)); }

static void on_segv(int sig, siginfo_t *si, void *uc)
{
    char buf[96];
    int n = snprintf(buf, sizeof(buf), "segv handler: sig %d code %d addr %p\n",
                     sig, si->si_code, si->si_addr);
    (void)uc;
    (void)!write(1, buf, (size_t)n);
    _exit(7);
}

static void on_other(int sig)
{
    (void)sig;
    say("first handler ran\n");
    _exit(8);
}

/* SIGUSR2's handler: raises itself again on the alternate stack
 * (SA_NODEFER) until a frame no longer fits there. */
static void on_nested(int sig)
{
    raise(sig);
}

static void handle(int sig, void (*fn)(int), int flags)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = fn;
    sa.sa_flags = flags;
    CHECK(sigaction(sig, &sa, NULL) == 0);
}

static void handle_segv(int flags)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof(sa));
    sa.sa_sigaction = on_segv;
    sa.sa_flags = SA_SIGINFO | flags;
    CHECK(sigaction(SIGSEGV, &sa, NULL) == 0);
}

static void altstack_at(void *sp, size_t size)
{
    stack_t ss = {.ss_sp = sp, .ss_size = size, .ss_flags = 0};
    CHECK(sigaltstack(&ss, NULL) == 0);
}

static void good_altstack(void)
{
    size_t size = 1 << 16;
    void *m = mmap(NULL, size, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    CHECK(m != MAP_FAILED);
    altstack_at(m, size);
}

/* MINSIGSTKSZ, which sigaltstack takes but a frame with this CPU's
 * xsave state (AT_MINSIGSTKSZ) does not fit in. */
static void small_altstack(void)
{
    void *m = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    CHECK(m != MAP_FAILED);
    memset(m, 0x5a, 4096);
    altstack_at((char *)m + 2048, 2048); /* the guard: its page's head */
}

static void unmapped_altstack(void)
{
    size_t size = 1 << 16;
    void *m = mmap(NULL, size, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    CHECK(m != MAP_FAILED);
    altstack_at(m, size);
}

/* ud2 (SIGILL), int3 (SIGTRAP) or a store to NULL (SIGSEGV), with rsp
 * pointing at an unmapped page when bad_rsp. */
static void raise_fault(int sig, int bad_rsp)
{
    uintptr_t sp = bad_rsp ? 0x1000 : 0;
    if (sig == SIGILL) {
        if (sp)
            __asm__ volatile("mov %0, %%rsp\n\tud2" ::"r"(sp));
        __asm__ volatile("ud2");
    } else if (sig == SIGUSR1 || sig == SIGUSR2) {
        raise(sig);
    } else if (sig == SIGTRAP) {
        if (sp)
            __asm__ volatile("mov %0, %%rsp\n\tint3" ::"r"(sp));
        __asm__ volatile("int3");
    } else {
        if (sp)
            __asm__ volatile("mov %0, %%rsp\n\tmovl $1, 0" ::"r"(sp));
        __asm__ volatile("movl $1, 0");
    }
}

static void report(const char *name, int status)
{
    if (WIFSIGNALED(status))
        printf("%s: killed by signal %d\n", name, WTERMSIG(status));
    else
        printf("%s: exit %d\n", name, WEXITSTATUS(status));
    fflush(stdout);
}

enum segv_setup { SEGV_ONSTACK, SEGV_PLAIN, SEGV_BLOCKED, SEGV_IGNORED,
                  SEGV_DEFAULT };

struct scenario {
    const char *name;
    int sig;        /* the synchronous signal raised */
    int bad_rsp;    /* its rsp unusable */
    int first_onstack; /* its handler on the (unmapped) altstack */
    int altstack;   /* 0 none, 1 usable, 2 unmapped, 3 too small */
    enum segv_setup segv;
};

static const struct scenario scenarios[] = {
    {"ill bad rsp, segv on altstack", SIGILL, 1, 0, 1, SEGV_ONSTACK},
    {"trap bad rsp, segv on altstack", SIGTRAP, 1, 0, 1, SEGV_ONSTACK},
    {"ill bad rsp, segv on bad rsp", SIGILL, 1, 0, 0, SEGV_PLAIN},
    {"ill on unmapped altstack", SIGILL, 0, 1, 2, SEGV_ONSTACK},
    {"ill on unmapped altstack, segv plain", SIGILL, 0, 1, 2, SEGV_PLAIN},
    {"ill bad rsp, segv blocked", SIGILL, 1, 0, 1, SEGV_BLOCKED},
    {"ill bad rsp, segv ignored", SIGILL, 1, 0, 1, SEGV_IGNORED},
    {"ill bad rsp, segv default", SIGILL, 1, 0, 1, SEGV_DEFAULT},
    {"segv bad rsp, segv on bad rsp", SIGSEGV, 1, 0, 0, SEGV_PLAIN},
    {"segv bad rsp, segv on altstack", SIGSEGV, 1, 0, 1, SEGV_ONSTACK},
    {"segv on unmapped altstack", SIGSEGV, 0, 0, 2, SEGV_ONSTACK},
    {"usr1 on too small altstack", SIGUSR1, 0, 1, 3, SEGV_DEFAULT},
    {"usr1 on too small altstack, segv plain", SIGUSR1, 0, 1, 3, SEGV_PLAIN},
    {"nested handlers overflow altstack", SIGUSR2, 0, 1, 1, SEGV_DEFAULT},
    {"nested handlers overflow, segv plain", SIGUSR2, 0, 1, 1, SEGV_PLAIN},
};

static void run_child(const struct scenario *s)
{
    if (s->altstack == 1)
        good_altstack();
    else if (s->altstack == 2)
        unmapped_altstack();
    else if (s->altstack == 3)
        small_altstack();
    if (s->sig == SIGUSR2)
        handle(s->sig, on_nested, SA_ONSTACK | SA_NODEFER);
    else if (s->sig != SIGSEGV)
        handle(s->sig, on_other, s->first_onstack ? SA_ONSTACK : 0);
    switch (s->segv) {
    case SEGV_ONSTACK: handle_segv(SA_ONSTACK); break;
    case SEGV_PLAIN: handle_segv(0); break;
    case SEGV_BLOCKED: {
        handle_segv(SA_ONSTACK);
        sigset_t set;
        sigemptyset(&set);
        sigaddset(&set, SIGSEGV);
        CHECK(sigprocmask(SIG_BLOCK, &set, NULL) == 0);
        break;
    }
    case SEGV_IGNORED: handle(SIGSEGV, SIG_IGN, 0); break;
    case SEGV_DEFAULT: break;
    }
    raise_fault(s->sig, s->bad_rsp);
    _exit(9);
}

int main(void)
{
    for (size_t i = 0; i < sizeof(scenarios) / sizeof(scenarios[0]); i++) {
        fflush(stdout);
        pid_t pid = fork();
        CHECK(pid >= 0);
        if (pid == 0)
            run_child(&scenarios[i]);
        int status;
        CHECK(waitpid(pid, &status, 0) == pid);
        report(scenarios[i].name, status);
    }
    return 0;
}
