/*
 * zombie_kill.c - a child that exited is a zombie until reaped, and
 * signals to it succeed (and are dropped), as Linux does: kill(pid, 0),
 * kill(pid, SIGTERM), kill of its group and sigqueue return 0; once it is
 * reaped, kill is ESRCH.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static const char *res(int rc)
{
    return rc == 0 ? "0" : strerrorname_np(errno);
}

int main(void)
{
    pid_t pid = fork();
    if (pid == 0) {
        setpgid(0, 0);
        _exit(3);
    }
    siginfo_t si;
    /* Wait for it to die, leaving it a zombie. */
    if (waitid(P_PID, (id_t)pid, &si, WEXITED | WNOWAIT) != 0) {
        perror("waitid");
        return 1;
    }
    printf("zombie: kill 0 %s, kill TERM %s, kill group %s",
           res(kill(pid, 0)), res(kill(pid, SIGTERM)),
           res(kill(-pid, SIGTERM)));
    union sigval v = {.sival_int = 7};
    printf(", sigqueue %s\n", res(sigqueue(pid, SIGUSR1, v)));
    int st;
    if (waitpid(pid, &st, 0) != pid) {
        perror("waitpid");
        return 1;
    }
    printf("reaped: status %d, kill 0 %s\n", WEXITSTATUS(st),
           res(kill(pid, 0)));
    return 0;
}
