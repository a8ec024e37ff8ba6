/*
 * rlimit_cpu_signals.c - RLIMIT_CPU: a process that spins past its soft
 * limit of CPU time gets SIGXCPU (and the soft limit moves on by a
 * second, as getrlimit then shows), and at the hard limit SIGKILL. Here
 * soft 1 s, hard 2 s: one SIGXCPU, then the kill. hvrun sent neither, so
 * the child spun until its alarm (LTP's setrlimit06).
 */
#define _GNU_SOURCE
#include <signal.h>
#include <stdio.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "guest_check.h"

struct seen {
    int sigxcpu;
    long soft_after;
};

static struct seen *seen;

static void on_xcpu(int sig)
{
    (void)sig;
    struct rlimit r;
    seen->sigxcpu++;
    if (getrlimit(RLIMIT_CPU, &r) == 0)
        seen->soft_after = (long)r.rlim_cur;
}

int main(void)
{
    seen = mmap(NULL, sizeof(*seen), PROT_READ | PROT_WRITE,
                MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    CHECK(seen != MAP_FAILED);
    pid_t pid = fork();
    CHECK(pid >= 0);
    if (pid == 0) {
        struct sigaction sa = {0};
        sa.sa_handler = on_xcpu;
        CHECK(sigaction(SIGXCPU, &sa, NULL) == 0);
        struct rlimit r = {1, 2};
        CHECK(setrlimit(RLIMIT_CPU, &r) == 0);
        alarm(20);
        for (;;)
            ;
    }
    int status;
    CHECK(waitpid(pid, &status, 0) == pid);
    printf("child killed by %s\n",
           WIFSIGNALED(status) ? sigabbrev_np(WTERMSIG(status)) : "nothing");
    printf("SIGXCPU handled %d time(s), soft limit then %ld s\n",
           seen->sigxcpu, seen->soft_after);
    return 0;
}
