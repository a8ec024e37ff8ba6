/*
 * sleep_bad_remainder.c - a sleep a signal handler interrupts writes the
 * time left to rem; when rem cannot be written (an unmapped page, a
 * read-only one) Linux ends the call with EFAULT instead of EINTR
 * (nanosleep_copyout). hvrun once ignored the failed write and said EINTR
 * (LTP's clock_nanosleep01). A sleep that runs out writes nothing, so a bad
 * rem there is no error.
 */
#define _GNU_SOURCE
#include <signal.h>
#include <stdio.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "guest_check.h"

static void on_alarm(int sig) { (void)sig; }

static void arm_timer_ms(long ms)
{
    struct itimerval it = {{0, 0}, {0, ms * 1000}};
    CHECK(setitimer(ITIMER_REAL, &it, NULL) == 0);
}

/* nanosleep or clock_nanosleep(CLOCK_REALTIME) of sec seconds, interrupted
 * after 20 ms, with rem at the given address. */
static long interrupted_sleep(int use_clock, long sec, void *rem)
{
    struct timespec req = {sec, 0};
    arm_timer_ms(20);
    long rc = use_clock ? syscall(SYS_clock_nanosleep, CLOCK_REALTIME, 0,
                                  &req, rem)
                        : syscall(SYS_nanosleep, &req, rem);
    arm_timer_ms(0);
    return rc;
}

int main(void)
{
    struct sigaction sa = {0};
    sa.sa_handler = on_alarm;
    CHECK(sigaction(SIGALRM, &sa, NULL) == 0);
    long page = sysconf(_SC_PAGESIZE);
    char *none = mmap(NULL, page, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS,
                      -1, 0);
    char *ro = mmap(NULL, page, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1,
                    0);
    CHECK(none != MAP_FAILED && ro != MAP_FAILED);

    for (int use_clock = 0; use_clock < 2; use_clock++) {
        const char *name = use_clock ? "clock_nanosleep" : "nanosleep";
        struct timespec rem = {-1, -1};
        long rc = interrupted_sleep(use_clock, 5, &rem);
        printf("%s, good rem: %s, rem under 5 s: %d\n", name,
               result_text(rc), rem.tv_sec >= 0 && rem.tv_sec < 5);
        rc = interrupted_sleep(use_clock, 5, none);
        printf("%s, PROT_NONE rem: %s\n", name, result_text(rc));
        rc = interrupted_sleep(use_clock, 5, ro);
        printf("%s, read-only rem: %s\n", name, result_text(rc));
        rc = interrupted_sleep(use_clock, 5, (void *)1);
        printf("%s, rem at address 1: %s\n", name, result_text(rc));
        /* runs out before the timer: nothing is written */
        struct timespec req = {0, 1000000};
        arm_timer_ms(500);
        rc = use_clock ? syscall(SYS_clock_nanosleep, CLOCK_REALTIME, 0,
                                 &req, none)
                       : syscall(SYS_nanosleep, &req, none);
        arm_timer_ms(0);
        printf("%s, completed with a bad rem: %s\n", name, result_text(rc));
    }
    return 0;
}
