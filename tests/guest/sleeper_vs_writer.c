/*
 * sleeper_vs_writer.c - a thread whose sleep's deadline passed runs while
 * a sibling keeps making syscalls. The writer writes one byte at a time
 * until the main thread, back from a 50 ms nanosleep, tells it to stop;
 * a sleeper left off the vCPU would have the writer write forever. A
 * watchdog (SIGALRM after 10 s, on the clock the run keeps) prints a
 * failure line instead of a hang. Under virtual time the sleeper wakes
 * after the same number of writes in every run (stderr says how many, for
 * --verify; stdout, compared with a native run, only the outcome).
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>

#include "guest_check.h"

static atomic_int stop;
static atomic_long writes;
static int sink;

static void on_watchdog(int sig)
{
    (void)sig;
    static const char msg[] = "FAIL: the sleeper did not run in 10 s\n";
    write(1, msg, sizeof(msg) - 1);
    _exit(1);
}

static void *writer(void *arg)
{
    (void)arg;
    while (!atomic_load(&stop)) {
        if (write(sink, "x", 1) != 1)
            break;
        atomic_fetch_add(&writes, 1);
    }
    return NULL;
}

int main(void)
{
    sink = open("/dev/null", O_WRONLY);
    CHECK(sink >= 0);
    signal(SIGALRM, on_watchdog);
    alarm(10);
    pthread_t t;
    CHECK(pthread_create(&t, NULL, writer, NULL) == 0);
    struct timespec ts = {0, 50000000};
    int r = nanosleep(&ts, NULL);
    long seen = atomic_load(&writes);
    atomic_store(&stop, 1);
    CHECK(pthread_join(t, NULL) == 0);
    alarm(0);
    printf("nanosleep %d: the sleeper woke while the writer was writing\n", r);
    printf("the writer stopped when told: %s\n",
           atomic_load(&writes) >= seen ? "yes" : "no");
    fprintf(stderr, "writes before the wake: %ld\n", seen);
    return 0;
}
