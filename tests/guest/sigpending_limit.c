/*
 * sigpending_limit: RLIMIT_SIGPENDING as Linux applies it to queued
 * signals, at a limit of 0: a real-time signal sent with its siginfo
 * (tgkill, sigqueue) fails with EAGAIN; kill() of a real-time signal and
 * standard signals are still sent.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

static void show(const char *what, long r)
{
    printf("%-40s %s\n", what, r < 0 ? strerrorname_np(errno) : "ok");
}

int main(void)
{
    fflush(stdout);
    pid_t c = fork();
    if (c == 0) {
        sigset_t all;
        sigfillset(&all);
        sigprocmask(SIG_BLOCK, &all, NULL);
        /* Linux counts the user's queued signals machine-wide, so only
         * a limit of 0 gives the same answer on every host. */
        struct rlimit none = {0, 0};
        setrlimit(RLIMIT_SIGPENDING, &none);
        union sigval v = {.sival_int = 7};
        pid_t me = getpid();
        show("limit 0: sigqueue SIGRTMIN", sigqueue(me, SIGRTMIN, v));
        show("limit 0: tgkill SIGRTMIN+1", syscall(SYS_tgkill, me, me, SIGRTMIN + 1));
        show("limit 0: sigqueue SIGUSR1", sigqueue(me, SIGUSR1, v));
        show("limit 0: tgkill SIGUSR2", syscall(SYS_tgkill, me, me, SIGUSR2));
        show("limit 0: kill SIGRTMIN+2", kill(me, SIGRTMIN + 2));
        sigset_t pending;
        sigpending(&pending);
        printf("pending: RTMIN %d RTMIN+1 %d RTMIN+2 %d USR1 %d USR2 %d\n",
               sigismember(&pending, SIGRTMIN), sigismember(&pending, SIGRTMIN + 1),
               sigismember(&pending, SIGRTMIN + 2), sigismember(&pending, SIGUSR1),
               sigismember(&pending, SIGUSR2));

        fflush(stdout);
        _exit(0);
    }
    waitpid(c, NULL, 0);
    return 0;
}
