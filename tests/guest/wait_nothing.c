/*
 * wait_nothing.c - poll, ppoll, select and pselect on no fd with no
 * timeout wait for a signal, as pause does; under hvrun the other guest
 * processes run meanwhile (the wait used to block the host thread, so
 * the child below never ran and the run froze). Each call ends with EINTR
 * when the child's SIGUSR1 handler has run. Compared with a native run.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/select.h>
#include <sys/wait.h>
#include <unistd.h>

#include "guest_check.h"

static volatile sig_atomic_t got;

static void on_usr1(int sig)
{
    (void)sig;
    got++;
}

static long wait_on_nothing(int how)
{
    switch (how) {
    case 0:
        return poll(NULL, 0, -1);
    case 1:
        return ppoll(NULL, 0, NULL, NULL);
    case 2:
        return select(0, NULL, NULL, NULL, NULL);
    default:
        return pselect(0, NULL, NULL, NULL, NULL, NULL);
    }
}

int main(void)
{
    static const char *const names[] = {"poll", "ppoll", "select", "pselect"};
    struct sigaction sa;
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = on_usr1;
    sa.sa_flags = SA_RESTART; /* these calls end with EINTR all the same */
    CHECK(sigaction(SIGUSR1, &sa, NULL) == 0);
    for (int how = 0; how < 4; how++) {
        got = 0;
        pid_t parent = getpid();
        pid_t child = fork();
        CHECK(child >= 0);
        if (child == 0) {
            /* the parent is waiting by then (natively: 50 ms is plenty);
             * the signal ends its wait */
            usleep(50000);
            CHECK(kill(parent, SIGUSR1) == 0);
            _exit(0);
        }
        long r = got ? -2 : wait_on_nothing(how);
        int err = errno;
        int status;
        CHECK(waitpid(child, &status, 0) == child && status == 0);
        if (r == -2) /* the signal came before the call: nothing to see */
            printf("%s: signal first\n", names[how]);
        else
            printf("%s: %ld %s, handler ran %d\n", names[how], r,
                   r < 0 ? strerror(err) : "", (int)got);
    }
    return 0;
}
