/*
 * vfork_chain_signal: a parent waits in waitpid while its child builds a
 * chain of vforks (each link vforks the next, as stress-ng's vforkmany
 * does); the parent's 200 us interval timer's SIGALRM handler sets a flag
 * in shared memory that ends the chain, which then unwinds. Natively the
 * timer stops the chain a few links deep. hvrun once never gave the
 * parent the vCPU while the chain grew: after a vfork the round-robin
 * picks the next runnable thread after the current one, always the new
 * link, and the parent, blocked in wait4 with SIGALRM pending, was not
 * runnable yet (kvm, stress-ng vforkmany: 5 000 links deep after 60 s).
 * A cap of 3 000 links makes that a "no" rather than a hang.
 */
#define _GNU_SOURCE
#include "guest_check.h"

#include <signal.h>
#include <sys/mman.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#define MAX_LINKS 3000

struct chain {
    volatile sig_atomic_t stop;
    volatile int links, capped;
};

static struct chain *shared;

static void on_alarm(int sig)
{
    (void)sig;
    shared->stop = 1;
}

/* Runs in each link (a vfork child shares its parent's memory and stack
 * until it exits, so it only loops, vforks and exits). */
static void build_chain(void)
{
    for (;;) {
        if (shared->stop)
            _exit(0);
        if (++shared->links >= MAX_LINKS) {
            shared->capped = 1;
            _exit(0);
        }
        pid_t pid = vfork();
        if (pid != 0)
            _exit(pid < 0 ? 2 : 0); /* the next link has exited */
    }
}

int main(void)
{
    shared = mmap(NULL, sizeof(*shared), PROT_READ | PROT_WRITE,
                  MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    CHECK(shared != MAP_FAILED);
    struct sigaction sa = {.sa_handler = on_alarm, .sa_flags = SA_RESTART};
    CHECK(sigaction(SIGALRM, &sa, NULL) == 0);
    pid_t child = fork();
    CHECK(child >= 0);
    if (child == 0) {
        signal(SIGALRM, SIG_DFL);
        build_chain();
    }
    struct itimerval it = {{0, 200}, {0, 200}};
    CHECK(setitimer(ITIMER_REAL, &it, NULL) == 0);
    int status;
    CHECK(waitpid(child, &status, 0) == child);
    struct itimerval off = {{0, 0}, {0, 0}};
    setitimer(ITIMER_REAL, &off, NULL);
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    printf("the timer stopped the chain before %d links: %s\n", MAX_LINKS,
           shared->capped ? "no" : "yes");
    return shared->capped;
}
