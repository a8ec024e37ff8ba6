/* progress_copy: short loops whose bodies hvrun runs from a copy in their
 * trampoline (syscall-proxy/mm/progress_copy.c) behave as in the text:
 *   - a fault in a later turn of such a loop gives a SIGSEGV whose frame
 *     names the loop's own load (not an address in hvrun's trampolines);
 *   - a loop's code rewritten after mprotect (self-modifying code) runs
 *     as rewritten in every turn, not only in the first;
 *   - a tracer's breakpoint (PTRACE_POKETEXT of int3) in a branch of the
 *     body taken only in the 500th turn stops the tracee there.
 * Each loop is written in asm so that its body is the short, straight
 * (or forward-branching) kind that is copied. Compared with native. */
#define _GNU_SOURCE
#include <errno.h>
#include <setjmp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/ptrace.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <ucontext.h>
#include <unistd.h>

extern const char walk_load[], smc_add[], bp_here[];

/* Sums longs from p until a load faults. */
static __attribute__((noinline)) long walk(const long *p)
{
    long sum = 0;
    __asm__ volatile("1:\n"
                     ".globl walk_load\n"
                     "walk_load:\n"
                     "add (%1), %0\n"
                     "add $8, %1\n"
                     "jmp 1b\n"
                     : "+r"(sum), "+r"(p)
                     :
                     : "memory", "cc");
    return sum;
}

/* n turns of `add $1, %rax` (its immediate at smc_add + 3). */
static __attribute__((noinline)) long smc_loop(long n)
{
    long sum = 0;
    __asm__ volatile("1:\n"
                     ".globl smc_add\n"
                     "smc_add:\n"
                     "addq $1, %0\n"
                     "subq $1, %1\n"
                     "jnz 1b\n"
                     : "+r"(sum), "+r"(n)
                     :
                     : "cc");
    return sum;
}

/* n turns summing the turn numbers; the turn numbered 500 runs the nop at
 * bp_here. */
static __attribute__((noinline)) long bp_loop(long n)
{
    long sum = 0;
    __asm__ volatile("1:\n"
                     "cmpq $500, %1\n"
                     "jne 2f\n"
                     ".globl bp_here\n"
                     "bp_here:\n"
                     "nop\n"
                     "2:\n"
                     "addq %1, %0\n"
                     "subq $1, %1\n"
                     "jnz 1b\n"
                     : "+r"(sum), "+c"(n)
                     :
                     : "cc");
    return sum;
}

static sigjmp_buf back;
static uintptr_t fault_rip;

static void on_segv(int sig, siginfo_t *si, void *uc_v)
{
    (void)sig;
    (void)si;
    ucontext_t *uc = uc_v;
    fault_rip = (uintptr_t)uc->uc_mcontext.gregs[REG_RIP];
    siglongjmp(back, 1);
}

static void fault_in_loop(void)
{
    long page = sysconf(_SC_PAGESIZE);
    long *mem = mmap(NULL, 2 * page, PROT_READ | PROT_WRITE,
                     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (mem == MAP_FAILED || mprotect((char *)mem + page, page, PROT_NONE)) {
        perror("mmap");
        exit(1);
    }
    for (long i = 0; i < page / 8; i++)
        mem[i] = i;
    struct sigaction sa;
    memset(&sa, 0, sizeof(sa));
    sa.sa_sigaction = on_segv;
    sa.sa_flags = SA_SIGINFO;
    sigaction(SIGSEGV, &sa, NULL);
    if (sigsetjmp(back, 1) == 0) {
        walk(mem);
        printf("walk: no fault\n");
    } else {
        printf("walk: SIGSEGV after %ld longs, rip at the loop's load: %s\n",
               page / 8, fault_rip == (uintptr_t)walk_load ? "yes" : "no");
    }
    signal(SIGSEGV, SIG_DFL);
}

static void rewritten_loop(void)
{
    printf("smc: before %ld\n", smc_loop(1000));
    long page = sysconf(_SC_PAGESIZE);
    uintptr_t at = (uintptr_t)smc_add & ~(uintptr_t)(page - 1);
    if (mprotect((void *)at, 2 * page, PROT_READ | PROT_WRITE | PROT_EXEC)) {
        perror("mprotect");
        exit(1);
    }
    ((volatile uint8_t *)smc_add)[3] = 2;
    mprotect((void *)at, 2 * page, PROT_READ | PROT_EXEC);
    printf("smc: after the immediate became 2: %ld\n", smc_loop(1000));
}

static void breakpoint_in_loop(void)
{
    printf("bp: untraced %ld\n", bp_loop(1000));
    fflush(stdout);
    pid_t child = fork();
    if (child == 0) {
        ptrace(PTRACE_TRACEME, 0, 0, 0);
        raise(SIGSTOP);
        printf("bp: traced %ld\n", bp_loop(1000));
        _exit(0);
    }
    int st;
    waitpid(child, &st, 0);
    uintptr_t word_at = (uintptr_t)bp_here;
    errno = 0;
    long word = ptrace(PTRACE_PEEKTEXT, child, (void *)word_at, 0);
    long with_int3 = (word & ~0xffL) | 0xcc;
    ptrace(PTRACE_POKETEXT, child, (void *)word_at, (void *)with_int3);
    ptrace(PTRACE_CONT, child, 0, 0);
    waitpid(child, &st, 0);
    if (WIFSTOPPED(st) && WSTOPSIG(st) == SIGTRAP) {
        struct user_regs_struct r;
        ptrace(PTRACE_GETREGS, child, 0, &r);
        printf("bp: stopped at the breakpoint: %s, turn %llu\n",
               r.rip == word_at + 1 ? "yes" : "no", r.rcx);
        r.rip = word_at;
        ptrace(PTRACE_SETREGS, child, 0, &r);
        ptrace(PTRACE_POKETEXT, child, (void *)word_at, (void *)word);
        ptrace(PTRACE_CONT, child, 0, 0);
        waitpid(child, &st, 0);
    } else {
        printf("bp: no breakpoint stop (status %#x)\n", st);
        if (WIFSTOPPED(st)) {
            ptrace(PTRACE_CONT, child, 0, 0);
            waitpid(child, &st, 0);
        }
    }
    fflush(stdout);
    printf("bp: child exited %d\n", WIFEXITED(st) ? WEXITSTATUS(st) : -1);
}

int main(void)
{
    setvbuf(stdout, NULL, _IONBF, 0);
    fault_in_loop();
    rewritten_loop();
    breakpoint_in_loop();
    return 0;
}
