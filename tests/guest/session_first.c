/*
 * session_first.c - the run's first process is a shell's child: not a
 * process group or session leader, so setsid succeeds (once), and the
 * ids after it are consistent (getpgrp, getsid, a child's); setpgid of a
 * session leader is EPERM. Output is relations, not ids, so it matches
 * a native run under `sh -c` (tests/run-guest-tests.sh).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "guest_check.h"

static const char *rc_name(long rc)
{
    return rc < 0 ? strerrorname_np(errno) : "ok";
}

int main(void)
{
    pid_t me = getpid();
    printf("group leader: %d\n", getpgrp() == me);
    printf("session leader: %d\n", getsid(0) == me);
    printf("pgid is parent's: %d\n", getpgid(0) == getpgid(getppid()) ||
                                         getppid() == 0);
    fflush(stdout);
    pid_t c = fork();
    CHECK(c >= 0);
    if (c == 0) {
        printf("child in parent's group: %d\n", getpgrp() == getpgid(getppid()));
        printf("child in parent's session: %d\n", getsid(0) == getsid(getppid()));
        fflush(stdout);
        _exit(0);
    }
    CHECK(waitpid(c, NULL, 0) == c);
    pid_t s = setsid();
    printf("setsid: %s, returns pid: %d\n", rc_name(s), s == me);
    printf("now group leader: %d, session leader: %d\n", getpgrp() == me,
           getsid(0) == me);
    printf("setsid again: %s\n", rc_name(setsid()));
    printf("setpgid of a session leader: %s\n", rc_name(setpgid(0, 0)));
    fflush(stdout);
    c = fork();
    CHECK(c >= 0);
    if (c == 0) {
        printf("child's group and session are the parent: %d %d\n",
               getpgrp() == getppid(), getsid(0) == getppid());
        printf("child setpgid: %s\n", rc_name(setpgid(0, 0)));
        printf("child leads its group: %d\n", getpgrp() == getpid());
        printf("child setsid: %s\n", rc_name(setsid()));
        fflush(stdout);
        _exit(0);
    }
    CHECK(waitpid(c, NULL, 0) == c);
    return 0;
}
