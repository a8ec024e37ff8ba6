/*
 * spin_wait: threads that wait for each other by spinning on memory, with
 * no syscall in the loop. With one vCPU per process, only the time slice
 * (--preempt-ms) lets the other thread run: without it these hang.
 * A flag handed to a new thread, then a ping-pong of three rounds.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>

static atomic_int flag, turn;

static void *set_flag(void *arg)
{
    (void)arg;
    atomic_store(&flag, 1);
    return NULL;
}

static void *pong(void *arg)
{
    (void)arg;
    for (int round = 0; round < 3; round++) {
        while (atomic_load(&turn) != 1)
            ;
        atomic_store(&turn, 0);
    }
    return NULL;
}

int main(void)
{
    pthread_t t;
    pthread_create(&t, NULL, set_flag, NULL);
    while (!atomic_load(&flag))
        ;
    pthread_join(t, NULL);
    puts("flag seen");

    pthread_create(&t, NULL, pong, NULL);
    for (int round = 0; round < 3; round++) {
        atomic_store(&turn, 1);
        while (atomic_load(&turn) != 0)
            ;
        printf("round %d\n", round);
    }
    pthread_join(t, NULL);
    puts("done");
    return 0;
}
