/*
 * progress_alarm: a timer that fires while the program computes, making a
 * syscall (a write) only every 100,000 loop iterations: alarm(1), or with
 * "itimer" setitimer(ITIMER_REAL), or with "timerfd" a timerfd read (non
 * blocking) at each of those points. Natively the timer fires after 1 s.
 * Under hvrun with virtual time, logical time moves with the syscalls
 * alone (1 us each), and the timer waited ~100x as long, unless the
 * thread's progress is counted (--progress software: each loop iteration
 * a unit of logical time). With -v the iteration count is printed too,
 * which tests/progress/run.sh checks is the same in every run; a third
 * argument sets the itimer's and timerfd's interval in ms (default 1000).
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <sys/timerfd.h>
#include <fcntl.h>
#include <unistd.h>

static volatile sig_atomic_t fired;

static void on_alarm(int sig)
{
    (void)sig;
    fired = 1;
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "alarm";
    int verbose = argc > 2 && strcmp(argv[2], "-v") == 0;
    int devnull = open("/dev/null", O_WRONLY);
    long ms = argc > 3 ? atol(argv[3]) : 1000;
    int tfd = -1;
    signal(SIGALRM, on_alarm);
    if (strcmp(mode, "itimer") == 0) {
        struct itimerval it = {{0, 0}, {ms / 1000, ms % 1000 * 1000}};
        setitimer(ITIMER_REAL, &it, NULL);
    } else if (strcmp(mode, "timerfd") == 0) {
        tfd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK);
        struct itimerspec its = {{0, 0}, {ms / 1000, ms % 1000 * 1000000}};
        timerfd_settime(tfd, 0, &its, NULL);
    } else {
        alarm(1);
    }
    unsigned long i = 0, x = 1;
    while (!fired) {
        x = x * 6364136223846793005UL + i;
        if (++i % 100000 == 0) {
            if (write(devnull, &x, sizeof(x)) < 0)
                return 1;
            unsigned long long n;
            if (tfd >= 0 && read(tfd, &n, sizeof(n)) == sizeof(n))
                fired = 1;
        }
    }
    if (verbose)
        printf("%s fired after %lu iterations\n", mode, i);
    else
        printf("%s fired\n", mode);
    return 0;
}
