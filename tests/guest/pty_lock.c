/*
 * pty_lock.c - TIOCGLCKTRMIOS (the termios bits locked against change,
 * stress-ng's pty stressor) on a pty's both ends reads a termios (all
 * zero: nothing locked on a new pty); on a pipe it is ENOTTY.
 * Prints one line per check; run natively and under hvrun, the output
 * must match.
 */
#define _GNU_SOURCE
#include <asm/termbits.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "guest_check.h"

static void show(const char *what, int fd)
{
    struct termios t;
    memset(&t, 0xff, sizeof(t));
    int rc = ioctl(fd, TIOCGLCKTRMIOS, &t);
    if (rc < 0) {
        printf("%s: %s\n", what, strerrorname_np(errno));
        return;
    }
    static const struct termios zero;
    printf("%s: 0, nothing locked %d\n", what,
           memcmp(&t, &zero, sizeof(t)) == 0);
}

int main(void)
{
    int m = posix_openpt(O_RDWR | O_NOCTTY);
    CHECK(m >= 0 && grantpt(m) == 0 && unlockpt(m) == 0);
    int s = open(ptsname(m), O_RDWR | O_NOCTTY);
    CHECK(s >= 0);
    show("master", m);
    show("follower", s);
    int pfd[2];
    CHECK(pipe(pfd) == 0);
    show("pipe", pfd[0]);
    return 0;
}
