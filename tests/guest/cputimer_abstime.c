/*
 * cputimer_abstime.c - a timer_create timer on CLOCK_PROCESS_CPUTIME_ID or
 * CLOCK_THREAD_CPUTIME_ID armed with TIMER_ABSTIME for 50 ms of CPU time
 * from now fires only when that clock has reached the value (hvrun took
 * the value as a reading of its elapsed clock, which runs ahead, so the
 * timer fired at once: LTP's timer_settime01), and timer_gettime says what
 * is left of it (a sleep first sets the two apart); clock_nanosleep with TIMER_ABSTIME on the process CPU
 * clock to a value already passed returns at once.
 */
#define _GNU_SOURCE
#include <signal.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>

#include "guest_check.h"

static volatile sig_atomic_t fired;

static void on_alarm(int sig) { fired = sig; }

static long long now_ns(clockid_t c)
{
    struct timespec ts;
    CHECK(clock_gettime(c, &ts) == 0);
    return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static void check_clock(clockid_t c, const char *name)
{
    timer_t t;
    struct sigevent ev = {.sigev_notify = SIGEV_SIGNAL, .sigev_signo = SIGALRM};
    CHECK(timer_create(c, &ev, &t) == 0);
    long long target = now_ns(c) + 50000000LL;
    struct itimerspec its = {{0, 0}, {target / 1000000000LL, target % 1000000000LL}};
    fired = 0;
    CHECK(timer_settime(t, TIMER_ABSTIME, &its, NULL) == 0);
    struct itimerspec left;
    CHECK(timer_gettime(t, &left) == 0);
    long long left_ns = left.it_value.tv_sec * 1000000000LL + left.it_value.tv_nsec;
    printf("%s: left after arming within (0, 50 ms]: %d\n", name,
           left_ns > 0 && left_ns <= 50000000LL);
    while (!fired)
        ; /* burn CPU time */
    printf("%s: fired at or after the value: %d\n", name, now_ns(c) >= target);
    CHECK(timer_delete(t) == 0);
}

int main(void)
{
    struct sigaction sa = {0};
    sa.sa_handler = on_alarm;
    CHECK(sigaction(SIGALRM, &sa, NULL) == 0);
    /* a sleep: the elapsed time moves on, the CPU clocks do not */
    struct timespec nap = {0, 100000000L};
    CHECK(nanosleep(&nap, NULL) == 0);
    check_clock(CLOCK_PROCESS_CPUTIME_ID, "process CPU clock");
    check_clock(CLOCK_THREAD_CPUTIME_ID, "thread CPU clock");
    struct timespec past = {0, 1};
    printf("clock_nanosleep to a passed CPU time: %d\n",
           clock_nanosleep(CLOCK_PROCESS_CPUTIME_ID, TIMER_ABSTIME, &past, NULL));
    return 0;
}
