/*
 * displaced_turn.c - a thread that woke another and so lost the vCPU gets
 * it back after a short, fixed number of the other's events.
 *
 * Thread A writes a pipe that the main thread B waits to read: B, woken,
 * gets the vCPU at once and A is left runnable, waiting for its turn (as
 * QEMU's main loop is when it wakes the vCPU thread). B then computes in
 * steps of about half a millisecond with a syscall after each, until A has
 * run.
 * Under hvrun A's turn comes after DET_SCHED_QUANTUM_CONTENDED of B's
 * syscalls, not after 10000 of them (the full quantum, seconds) nor at a
 * host-timed cut (a different step in every run). Natively A runs on its
 * own CPU at once.
 *
 * Exits 1 if B made more than 1000 steps before A ran. --print-seen prints
 * the step A saw (the same in every run under hvrun).
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

static int pipefd[2];
static atomic_long steps;
static atomic_long seen = -1;

static void *waker(void *arg)
{
    (void)arg;
    usleep(10000); /* B is in its read by then */
    if (write(pipefd[1], "x", 1) != 1)
        return NULL;
    atomic_store(&seen, atomic_load(&steps));
    return NULL;
}

/* About half a millisecond of arithmetic, the same on every run. */
static unsigned long compute(unsigned long x)
{
    for (int i = 0; i < 400000; i++)
        x = x * 6364136223846793005UL + 1442695040888963407UL;
    return x;
}

int main(int argc, char **argv)
{
    bool print_seen = argc > 1 && !strcmp(argv[1], "--print-seen");
    if (pipe(pipefd) < 0) {
        perror("pipe");
        return 2;
    }
    pthread_t t;
    if (pthread_create(&t, NULL, waker, NULL) != 0) {
        fprintf(stderr, "pthread_create failed\n");
        return 2;
    }
    char c;
    if (read(pipefd[0], &c, 1) != 1) {
        perror("read");
        return 2;
    }
    volatile unsigned long sink = 1;
    while (atomic_load(&seen) < 0 && atomic_load(&steps) < 20000) {
        sink = compute(sink);
        (void)syscall(SYS_getppid);
        atomic_fetch_add(&steps, 1);
    }
    pthread_join(t, NULL);
    long s = atomic_load(&seen);
    if (print_seen)
        printf("the waker ran after %ld steps\n", s);
    if (s < 0 || s > 1000) {
        fprintf(stderr, "the waker waited %ld steps for its turn\n", s);
        return 1;
    }
    printf("the waker had its turn\n");
    return 0;
}
