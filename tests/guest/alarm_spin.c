/*
 * alarm_spin: a program that computes, with no syscall, until a timer's
 * signal sets a flag (as `openssl speed` does). Logical time moves only
 * with syscalls, so hvrun lets time jump to the timer when the thread has
 * run a time slice without one; natively the loop simply takes 50 ms.
 */
#include <signal.h>
#include <stdio.h>
#include <sys/time.h>
#include <time.h>

static volatile sig_atomic_t done;

static void on_alarm(int sig)
{
    (void)sig;
    done = 1;
}

int main(void)
{
    signal(SIGALRM, on_alarm);
    struct timespec a, b;
    clock_gettime(CLOCK_MONOTONIC, &a);
    struct itimerval it = {{0, 0}, {0, 50000}};
    setitimer(ITIMER_REAL, &it, NULL);
    unsigned long spins = 0;
    while (!done)
        spins++;
    clock_gettime(CLOCK_MONOTONIC, &b);
    long ms = (long)((b.tv_sec - a.tv_sec) * 1000 +
                     (b.tv_nsec - a.tv_nsec) / 1000000);
    printf("the alarm ended the loop: %s; at least 50 ms passed: %s\n",
           spins > 0 ? "yes" : "no", ms >= 50 ? "yes" : "no");
    return 0;
}
