/*
 * waitall_peek_signal - a MSG_WAITALL | MSG_PEEK receive on a stream
 * socket that holds less than it asks for, ended by a signal whose handler
 * has no SA_RESTART: Linux returns the bytes peeked so far (they stay
 * queued), not EINTR. A second guest process lives meanwhile (a child in
 * pause), so hvrun parks the receive rather than wait in the host.
 */
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#include "guest_check.h"

static void on_alarm(int sig)
{
    (void)sig;
}

int main(void)
{
    int sv[2];
    CHECK(socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == 0);
    struct sigaction sa = {.sa_handler = on_alarm};
    sigemptyset(&sa.sa_mask);
    CHECK(sigaction(SIGALRM, &sa, NULL) == 0);
    CHECK(write(sv[1], "0123456789", 10) == 10);
    pid_t child = fork();
    CHECK(child >= 0);
    if (child == 0) {
        pause();
        _exit(0);
    }
    struct itimerval it = {{0, 0}, {0, 100000}};
    CHECK(setitimer(ITIMER_REAL, &it, NULL) == 0);
    char buf[100];
    memset(buf, 0, sizeof(buf));
    ssize_t n = recv(sv[0], buf, sizeof(buf), MSG_WAITALL | MSG_PEEK);
    printf("peek with MSG_WAITALL: %zd '%s' errno %d\n", n, n > 0 ? buf : "",
           n < 0 ? errno : 0);
    n = recv(sv[0], buf, sizeof(buf), MSG_DONTWAIT);
    printf("then received %zd\n", n);
    CHECK(kill(child, SIGKILL) == 0);
    CHECK(waitpid(child, NULL, 0) == child);
    return 0;
}
