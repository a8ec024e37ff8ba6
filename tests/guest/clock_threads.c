/*
 * clock_threads.c - two threads that read the clock through the vDSO in a
 * loop and make a syscall now and then. Without arguments each makes
 * 300,000 reads and the program prints "done"; with "forever" they go on,
 * each printing a line every 500,000 reads, until a signal ends them
 * (tests/record/run.sh stops a recording of it with SIGINT: the signal
 * falls while a thread has clock reads the vDSO counted since its last
 * exit, and the replay has to stop at the recorded point all the same).
 */
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static int forever;

static void *spin(void *name)
{
    struct timespec ts;
    for (unsigned long i = 1; forever || i <= 300000; i++) {
        clock_gettime(CLOCK_MONOTONIC, &ts);
        if (i % 1000 == 0)
            getppid();
        if (forever && i % 500000 == 0) {
            printf("%s %lu\n", (const char *)name, i);
            fflush(stdout);
        }
    }
    return NULL;
}

int main(int argc, char **argv)
{
    forever = argc > 1 && strcmp(argv[1], "forever") == 0;
    pthread_t worker;
    if (pthread_create(&worker, NULL, spin, "worker") != 0)
        return 1;
    spin("main");
    pthread_join(worker, NULL);
    puts("done");
    return 0;
}
