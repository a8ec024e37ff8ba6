/*
 * vfork_chain_turn.c - a chain of vforks (each child vforks again, as
 * stress-ng's vforkmany does) must not keep the CPU from a sleeper whose
 * time is up: the main process sleeps 100 us, then kills the chain. Under
 * hvrun the next thread was looked for after the current one, where each
 * new vfork child is, so the sleeper ran only once the chain stopped
 * growing (stress-ng's vforkmany hung, 13 000 processes deep, its SIGALRM
 * pending). The chain stops by itself at CHAIN_LIMIT processes; it must
 * not get there.
 * Run natively and under hvrun, the output must match.
 */
#define _GNU_SOURCE
#include <signal.h>
#include <stdio.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "guest_check.h"

#define CHAIN_LIMIT 4000

static volatile int *deepest;

static void chain(void)
{
    for (int depth = 1;; depth++) {
        *deepest = depth;
        if (depth == CHAIN_LIMIT)
            for (;;)
                pause();
        pid_t pid = vfork();
        if (pid < 0)
            _exit(2);
        if (pid > 0) /* the child is gone: killed with the whole chain */
            _exit(0);
    }
}

int main(void)
{
    deepest = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
                   MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    CHECK(deepest != MAP_FAILED);
    pid_t top = fork();
    CHECK(top >= 0);
    if (top == 0) {
        CHECK(setpgid(0, 0) == 0);
        chain();
    }
    setpgid(top, top); /* before the sleep: the kill must reach every one */
    struct timespec nap = {0, 100 * 1000};
    CHECK(nanosleep(&nap, NULL) == 0);
    CHECK(kill(-top, SIGKILL) == 0);
    int st;
    CHECK(waitpid(top, &st, 0) == top);
    printf("chain's first process: %s\n",
           WIFSIGNALED(st) ? "killed" : "exited");
    printf("woken before the chain stopped growing: %s\n",
           *deepest < CHAIN_LIMIT ? "yes" : "no");
    return 0;
}
