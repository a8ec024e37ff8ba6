/*
 * poll_nothing: found by the syscall fuzzer (tests/fuzz/sysfuzz.c).
 * select(0, ..., NULL), poll(NULL, 0, -1) and poll on only negative fds
 * wait, like pause, for a signal: a handler makes them -EINTR, a default
 * action ends the process. hvrun made a host ppoll that blocked the whole
 * run (every guest, the timers with them) forever.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/select.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#include "guest_check.h"

static void on_alarm(int sig) { (void)sig; }

static void alarm_soon(void)
{
    struct itimerval it = {.it_value = {0, 20000}};
    CHECK(setitimer(ITIMER_REAL, &it, NULL) == 0);
}

int main(void)
{
    struct sigaction sa = {.sa_handler = on_alarm};
    sigemptyset(&sa.sa_mask);
    CHECK(sigaction(SIGALRM, &sa, NULL) == 0);
    alarm_soon();
    CHECK(select(0, NULL, NULL, NULL, NULL) == -1 && errno == EINTR);
    alarm_soon();
    CHECK(poll(NULL, 0, -1) == -1 && errno == EINTR);
    struct pollfd none = {.fd = -1, .events = POLLIN};
    alarm_soon();
    CHECK(poll(&none, 1, -1) == -1 && errno == EINTR);
    sigset_t empty;
    sigemptyset(&empty);
    alarm_soon();
    CHECK(ppoll(NULL, 0, NULL, &empty) == -1 && errno == EINTR);
    pid_t c = fork();
    CHECK(c >= 0);
    if (c == 0) {
        signal(SIGALRM, SIG_DFL);
        alarm_soon();
        select(0, NULL, NULL, NULL, NULL);
        _exit(0);
    }
    int st;
    CHECK(waitpid(c, &st, 0) == c);
    CHECK(WIFSIGNALED(st) && WTERMSIG(st) == SIGALRM);
    printf("poll_nothing ok\n");
    return 0;
}
