/*
 * waitall_peek_signal - MSG_WAITALL | MSG_PEEK on a stream socket that
 * holds less than it asks for, while a second guest process lives (a
 * child in pause, so hvrun parks the receive rather than wait in the
 * host):
 *  - on loopback TCP the peek waits for the rest (tcp_recvmsg), and a
 *    signal whose handler has no SA_RESTART ends it with the bytes peeked
 *    so far (they stay queued), not EINTR;
 *  - on an AF_UNIX stream socket the peek returns what is queued at once
 *    (unix_stream_read_generic stops at the end of the queue);
 *  - in both, the peeked bytes are then received.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdbool.h>
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

/* A connected loopback TCP pair: sv[0] accepted, sv[1] the client. */
static void tcp_pair(int sv[2])
{
    int l = socket(AF_INET, SOCK_STREAM, 0);
    CHECK(l >= 0);
    struct sockaddr_in a = {.sin_family = AF_INET,
                            .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t len = sizeof(a);
    CHECK(bind(l, (struct sockaddr *)&a, sizeof(a)) == 0);
    CHECK(listen(l, 1) == 0);
    CHECK(getsockname(l, (struct sockaddr *)&a, &len) == 0);
    sv[1] = socket(AF_INET, SOCK_STREAM, 0);
    CHECK(sv[1] >= 0);
    CHECK(connect(sv[1], (struct sockaddr *)&a, sizeof(a)) == 0);
    sv[0] = accept(l, NULL, NULL);
    CHECK(sv[0] >= 0);
    close(l);
}

static void peek_case(const char *what, int sv[2], bool timed)
{
    CHECK(write(sv[1], "0123456789", 10) == 10);
    pid_t child = fork();
    CHECK(child >= 0);
    if (child == 0) {
        pause();
        _exit(0);
    }
    if (timed) {
        struct itimerval it = {{0, 0}, {0, 100000}};
        CHECK(setitimer(ITIMER_REAL, &it, NULL) == 0);
    }
    char buf[100];
    memset(buf, 0, sizeof(buf));
    ssize_t n = recv(sv[0], buf, sizeof(buf), MSG_WAITALL | MSG_PEEK);
    printf("%s: peek with MSG_WAITALL: %zd '%s' errno %d\n", what, n,
           n > 0 ? buf : "", n < 0 ? errno : 0);
    n = recv(sv[0], buf, sizeof(buf), MSG_DONTWAIT);
    printf("%s: then received %zd\n", what, n);
    CHECK(kill(child, SIGKILL) == 0);
    CHECK(waitpid(child, NULL, 0) == child);
    close(sv[0]);
    close(sv[1]);
}

int main(void)
{
    struct sigaction sa = {.sa_handler = on_alarm};
    sigemptyset(&sa.sa_mask);
    CHECK(sigaction(SIGALRM, &sa, NULL) == 0);
    int sv[2];
    tcp_pair(sv);
    peek_case("tcp", sv, true);
    CHECK(socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == 0);
    peek_case("unix", sv, false);
    return 0;
}
