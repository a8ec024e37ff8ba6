/*
 * pty_epoll.c - epoll_wait on a pty end right after its other end was
 * written: the bytes are there (natively the wait waits the moment the
 * host's tty work takes). hvrun's wait runs on the logical clock, which
 * does not wait for host work: it once timed out at about 1 in 5 such
 * waits (the host's line discipline had not yet moved the bytes). Both
 * directions, a raw slave and a canonical one (a whole line), and a
 * timeout of 0 after a wait of another fd.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <termios.h>
#include <unistd.h>

#include "guest_check.h"

#define ROUNDS 20

static void open_pty(int *m, int *s, int raw)
{
    *m = posix_openpt(O_RDWR | O_NOCTTY);
    CHECK(*m >= 0 && grantpt(*m) == 0 && unlockpt(*m) == 0);
    *s = open(ptsname(*m), O_RDWR | O_NOCTTY);
    CHECK(*s >= 0);
    struct termios t;
    CHECK(tcgetattr(*s, &t) == 0);
    if (raw)
        cfmakeraw(&t);
    else
        t.c_lflag &= ~(tcflag_t)ECHO;
    CHECK(tcsetattr(*s, TCSANOW, &t) == 0);
}

/* Writes msg to `to`, waits for `from` readable, reads it all. */
static int round_trip(int to, int from, const char *msg, int timeout)
{
    int ep = epoll_create1(0);
    CHECK(ep >= 0);
    struct epoll_event ev = {.events = EPOLLIN};
    CHECK(epoll_ctl(ep, EPOLL_CTL_ADD, from, &ev) == 0);
    CHECK(write(to, msg, strlen(msg)) == (ssize_t)strlen(msg));
    struct epoll_event out;
    int n = epoll_wait(ep, &out, 1, timeout);
    char buf[64];
    ssize_t r = n == 1 ? read(from, buf, sizeof(buf)) : -1;
    close(ep);
    return n == 1 && r == (ssize_t)strlen(msg);
}

int main(void)
{
    const char *names[] = {"raw master->slave", "raw slave->master",
                           "canonical line master->slave"};
    for (int kind = 0; kind < 3; kind++) {
        int ok = 0;
        for (int i = 0; i < ROUNDS; i++) {
            int m, s;
            open_pty(&m, &s, kind < 2);
            if (kind == 1)
                ok += round_trip(s, m, "abc", 1000);
            else
                ok += round_trip(m, s, kind ? "line\n" : "abc", 1000);
            close(s);
            close(m);
        }
        printf("%s: %d of %d ready with every byte\n", names[kind], ok,
               ROUNDS);
    }
    return 0;
}
