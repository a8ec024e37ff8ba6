/* gdb_deadlock.c - two threads take two locks in opposite orders, each
 * holding one when both have met: a deadlock hvrun detects. Under --gdb,
 * gdb gets the run stopped there first (thread apply all bt). */
#include <pthread.h>
#include <stdio.h>

static pthread_mutex_t a = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t b = PTHREAD_MUTEX_INITIALIZER;
static pthread_barrier_t met;

static void *take_b_then_a(void *arg)
{
    (void)arg;
    pthread_mutex_lock(&b);
    pthread_barrier_wait(&met);
    pthread_mutex_lock(&a);
    return NULL;
}

int main(void)
{
    pthread_t t;
    pthread_barrier_init(&met, NULL, 2);
    pthread_create(&t, NULL, take_b_then_a, NULL);
    pthread_mutex_lock(&a);
    pthread_barrier_wait(&met);
    pthread_mutex_lock(&b);
    printf("not reached\n");
    return 0;
}
