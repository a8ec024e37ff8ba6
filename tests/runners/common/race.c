/*
 * race.c - a deliberately nondeterministic test for the sample projects
 * of tests/runners: two threads, started together, each add 1 to a shared
 * counter 2 000 000 times without a lock, and the test asserts the total.
 * Natively the increments of two cores overlap and updates are lost, so
 * it fails most runs (and passes some); under hvrun one thread runs at a
 * time and none is cut inside the loop, so it passes every run.
 */
#include <pthread.h>
#include <stdio.h>

#define TURNS 2000000L

static volatile long counter;
static pthread_barrier_t start;

static void *add(void *arg)
{
    (void)arg;
    pthread_barrier_wait(&start);
    for (long i = 0; i < TURNS; i++)
        counter = counter + 1;
    return NULL;
}

int main(void)
{
    pthread_t a, b;
    pthread_barrier_init(&start, NULL, 2);
    pthread_create(&a, NULL, add, NULL);
    pthread_create(&b, NULL, add, NULL);
    pthread_join(a, NULL);
    pthread_join(b, NULL);
    printf("race: counter %ld of %ld\n", counter, 2 * TURNS);
    return counter == 2 * TURNS ? 0 : 1;
}
