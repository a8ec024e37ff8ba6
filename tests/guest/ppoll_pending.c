/*
 * ppoll_pending.c - a signal already pending when ppoll or pselect's
 * temporary mask unblocks it ends the call at once with EINTR, after its
 * handler ran under that mask, and the caller's mask (still blocking it)
 * is back afterwards. hvrun used to wait out the timeout and lose the
 * handler. Compared with a native run.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/select.h>
#include <unistd.h>

#include "guest_check.h"

static volatile sig_atomic_t handled;

static void on_usr1(int sig)
{
    (void)sig;
    handled++;
}

int main(void)
{
    CHECK(signal(SIGUSR1, on_usr1) != SIG_ERR);
    sigset_t block, empty, now;
    sigemptyset(&block);
    sigaddset(&block, SIGUSR1);
    sigemptyset(&empty);
    CHECK(sigprocmask(SIG_BLOCK, &block, NULL) == 0);
    for (int how = 0; how < 2; how++) {
        handled = 0;
        CHECK(raise(SIGUSR1) == 0);
        struct timespec ts = {2, 0};
        int r = how == 0 ? ppoll(NULL, 0, &ts, &empty)
                         : pselect(0, NULL, NULL, NULL, &ts, &empty);
        int err = errno;
        CHECK(sigprocmask(SIG_BLOCK, NULL, &now) == 0);
        printf("%s: %d %s, handler %d, still blocked %d\n",
               how == 0 ? "ppoll" : "pselect", r, r < 0 ? strerror(err) : "",
               (int)handled, sigismember(&now, SIGUSR1));
    }
    return 0;
}
