/*
 * cputime_sleep.c - the CPU-time clocks follow the thread's own running,
 * not the time that passes while it sleeps: across a 200 ms nanosleep,
 * CLOCK_THREAD_CPUTIME_ID and CLOCK_PROCESS_CPUTIME_ID move by far less
 * than the sleep (hvrun's once moved with the logical clock, by all of
 * it), and a thread blocked while another sleeps is not charged either.
 * getrusage and times agree with the process clock. Printed as verdicts,
 * so the natively measured times do not show.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <sys/resource.h>
#include <sys/times.h>
#include <time.h>
#include <unistd.h>

#include "guest_check.h"

static long long ns_of(clockid_t c)
{
    struct timespec ts;
    CHECK(clock_gettime(c, &ts) == 0);
    return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static void sleep_ms(long ms)
{
    struct timespec ts = {0, ms * 1000000L};
    CHECK(nanosleep(&ts, NULL) == 0);
}

static int pipefd[2];

static void *blocked_reader(void *arg)
{
    (void)arg;
    long long before = ns_of(CLOCK_THREAD_CPUTIME_ID);
    char c;
    CHECK(read(pipefd[0], &c, 1) == 1); /* the main thread sleeps first */
    long long spent = ns_of(CLOCK_THREAD_CPUTIME_ID) - before;
    printf("blocked thread charged under 50 ms: %d\n", spent < 50000000LL);
    return NULL;
}

int main(void)
{
    long long t0 = ns_of(CLOCK_THREAD_CPUTIME_ID);
    long long p0 = ns_of(CLOCK_PROCESS_CPUTIME_ID);
    long long m0 = ns_of(CLOCK_MONOTONIC);
    sleep_ms(200);
    long long t1 = ns_of(CLOCK_THREAD_CPUTIME_ID);
    long long p1 = ns_of(CLOCK_PROCESS_CPUTIME_ID);
    long long m1 = ns_of(CLOCK_MONOTONIC);
    printf("monotonic moved at least 200 ms: %d\n", m1 - m0 >= 200000000LL);
    printf("thread CPU moved under 50 ms: %d\n", t1 - t0 < 50000000LL);
    printf("process CPU moved under 50 ms: %d\n", p1 - p0 < 50000000LL);
    printf("thread CPU never goes back: %d\n", t1 >= t0);

    CHECK(pipe(pipefd) == 0);
    pthread_t th;
    CHECK(pthread_create(&th, NULL, blocked_reader, NULL) == 0);
    sleep_ms(200);
    CHECK(write(pipefd[1], "x", 1) == 1);
    CHECK(pthread_join(th, NULL) == 0);

    /* getrusage and times against the process clock read around them. */
    long long before = ns_of(CLOCK_PROCESS_CPUTIME_ID);
    struct rusage ru;
    CHECK(getrusage(RUSAGE_SELF, &ru) == 0);
    struct tms tm;
    CHECK(times(&tm) != (clock_t)-1);
    long long after = ns_of(CLOCK_PROCESS_CPUTIME_ID);
    long long ru_ns = (ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000000000LL +
                      (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1000LL;
    long long tick = 1000000000LL / sysconf(_SC_CLK_TCK);
    long long tm_ns = (long long)(tm.tms_utime + tm.tms_stime) * tick;
    /* rusage has microseconds (and Linux samples utime/stime), times
     * ticks: each is within its grain of the clock. */
    printf("getrusage agrees with the process clock: %d\n",
           ru_ns <= after + 1000 && ru_ns + 5 * tick >= before);
    printf("times agrees with the process clock: %d\n",
           tm_ns <= after && tm_ns + 5 * tick >= before);
    struct rusage rt;
    CHECK(getrusage(RUSAGE_THREAD, &rt) == 0);
    printf("RUSAGE_THREAD under 50 ms: %d\n",
           rt.ru_utime.tv_sec == 0 && rt.ru_utime.tv_usec < 50000 &&
               rt.ru_stime.tv_sec == 0 && rt.ru_stime.tv_usec < 50000);
    return 0;
}
