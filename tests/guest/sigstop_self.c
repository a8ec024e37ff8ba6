/*
 * sigstop_self.c - kill(getpid(), SIGSTOP) stops the caller at once: the
 * parent sees the stop before the child's next call (its write), the write
 * comes only after SIGCONT; kill of a zombie is 0 until it is reaped.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#define CHECK(c)                                                               \
    do {                                                                       \
        if (!(c)) {                                                            \
            printf("FAIL line %d: %s (errno %d)\n", __LINE__, #c, errno);      \
            exit(1);                                                           \
        }                                                                      \
    } while (0)

int main(void)
{
    int fds[2], go[2];
    CHECK(pipe(fds) == 0 && pipe(go) == 0);
    pid_t pid = fork();
    CHECK(pid >= 0);
    if (pid == 0) {
        close(fds[0]);
        close(go[1]);
        kill(getpid(), SIGSTOP);
        CHECK(write(fds[1], "c", 1) == 1);
        char g;
        CHECK(read(go[0], &g, 1) == 1); /* exits once the parent saw it go on */
        _exit(4);
    }
    close(fds[1]);
    close(go[0]);
    int st;
    CHECK(waitpid(pid, &st, WUNTRACED) == pid);
    printf("stopped %d sig %d\n", WIFSTOPPED(st), WSTOPSIG(st));
    CHECK(fcntl(fds[0], F_SETFL, O_NONBLOCK) == 0);
    char c;
    errno = 0;
    printf("nothing written while stopped: %d\n",
           read(fds[0], &c, 1) == -1 && errno == EAGAIN);
    CHECK(kill(pid, SIGCONT) == 0);
    CHECK(waitpid(pid, &st, WCONTINUED) == pid);
    printf("continued %d\n", WIFCONTINUED(st));
    CHECK(fcntl(fds[0], F_SETFL, 0) == 0);
    printf("read after continue: %zd\n", read(fds[0], &c, 1));
    CHECK(write(go[1], "g", 1) == 1);
    /* a zombie: kill says 0 until the wait reaps it */
    siginfo_t si;
    CHECK(waitid(P_PID, pid, &si, WEXITED | WNOWAIT) == 0);
    printf("kill of the zombie: %d\n", kill(pid, 0));
    CHECK(waitpid(pid, &st, 0) == pid);
    int rc = kill(pid, 0);
    int err = errno;
    printf("exit %d; kill after reaping: %d errno %d\n", WEXITSTATUS(st), rc,
           err);
    return 0;
}
