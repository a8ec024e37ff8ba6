/*
 * timer_slots.c - POSIX timers in the last of a process's slots fire, in
 * the process, in a fork child and after an execve.
 *
 * hvrun looks at every process's timers before each scheduling decision
 * and, when every thread waits, for the earliest one to move time to. Those
 * looks stop at the highest slot the process used since its fork or exec
 * (syscall-proxy/kernel/timer.c, posix_top): with 1000 processes, 32 slots
 * each were most of hvrun's own time. Here the only live timer is the
 * 32nd one made (the 31 before it deleted), and the process waits for it
 * in sigsuspend with nothing else to run: time must move to it. A fork
 * child starts with no timers and its first one fires; after an execve
 * (which deletes every timer) the same.
 *
 * Run natively and under hvrun, the output must match.
 */
#define _GNU_SOURCE
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "guest_check.h"

#define NR_TIMERS 32 /* hvrun's slots per process; Linux allows more */

static volatile sig_atomic_t fired_value = -1;

static void on_timer(int sig, siginfo_t *si, void *uc)
{
    (void)sig;
    (void)uc;
    fired_value = si->si_value.sival_int;
}

static timer_t make_timer(int value)
{
    struct sigevent ev;
    memset(&ev, 0, sizeof(ev));
    ev.sigev_notify = SIGEV_SIGNAL;
    ev.sigev_signo = SIGUSR1;
    ev.sigev_value.sival_int = value;
    timer_t t;
    CHECK(timer_create(CLOCK_MONOTONIC, &ev, &t) == 0);
    return t;
}

/* Arms t for 10 ms and waits for its signal with SIGUSR1 unblocked only
 * in sigsuspend: nothing else runs meanwhile. */
static int wait_for(timer_t t)
{
    struct itimerspec its = {.it_value = {.tv_nsec = 10 * 1000 * 1000}};
    fired_value = -1;
    CHECK(timer_settime(t, 0, &its, NULL) == 0);
    sigset_t none;
    sigemptyset(&none);
    while (fired_value < 0)
        sigsuspend(&none);
    return fired_value;
}

static void setup_signal(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof(sa));
    sa.sa_sigaction = on_timer;
    sa.sa_flags = SA_SIGINFO;
    CHECK(sigaction(SIGUSR1, &sa, NULL) == 0);
    sigset_t usr1;
    sigemptyset(&usr1);
    sigaddset(&usr1, SIGUSR1);
    CHECK(sigprocmask(SIG_BLOCK, &usr1, NULL) == 0);
}

int main(int argc, char **argv)
{
    setvbuf(stdout, NULL, _IONBF, 0);
    setup_signal();
    if (argc > 1 && strcmp(argv[1], "exec") == 0) {
        timer_t t = make_timer(7);
        printf("after execve: first timer fired with value %d\n", wait_for(t));
        return 0;
    }
    timer_t timers[NR_TIMERS];
    for (int i = 0; i < NR_TIMERS; i++)
        timers[i] = make_timer(i);
    for (int i = 0; i < NR_TIMERS - 1; i++)
        CHECK(timer_delete(timers[i]) == 0);
    printf("last of %d timers fired with value %d\n", NR_TIMERS,
           wait_for(timers[NR_TIMERS - 1]));

    pid_t pid = fork();
    CHECK(pid >= 0);
    if (pid == 0) {
        struct itimerspec cur;
        int inherited = timer_gettime(timers[NR_TIMERS - 1], &cur) == 0;
        timer_t t = make_timer(5);
        printf("fork child: parent's timer %s, its first timer fired with "
               "value %d\n",
               inherited ? "inherited" : "gone", wait_for(t));
        _exit(0);
    }
    int st;
    CHECK(waitpid(pid, &st, 0) == pid && WIFEXITED(st) &&
          WEXITSTATUS(st) == 0);

    pid = fork();
    CHECK(pid >= 0);
    if (pid == 0) {
        /* the exec'd image makes one timer after the 32 slots were used */
        for (int i = 0; i < NR_TIMERS; i++)
            make_timer(i);
        execl("/proc/self/exe", argv[0], "exec", (char *)NULL);
        _exit(3);
    }
    CHECK(waitpid(pid, &st, 0) == pid && WIFEXITED(st) &&
          WEXITSTATUS(st) == 0);
    return 0;
}
