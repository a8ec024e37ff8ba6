/* thread_signals: pthread_kill reaches the thread it names (tgkill goes to
 * that thread's own queue, not to whichever thread runs next), and two
 * threads sent the same signal each get one. */
#define _GNU_SOURCE
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <unistd.h>

static __thread int mine;
static volatile int hits[3];
static pthread_barrier_t ready;

static void on_usr1(int sig)
{
    (void)sig;
    hits[mine]++;
}

static void *worker(void *arg)
{
    mine = (int)(long)arg;
    pthread_barrier_wait(&ready);
    for (int i = 0; i < 2000 && !hits[mine]; i++)
        usleep(1000);
    return NULL;
}

int main(void)
{
    signal(SIGUSR1, on_usr1);
    pthread_barrier_init(&ready, NULL, 3);
    pthread_t t1, t2;
    pthread_create(&t1, NULL, worker, (void *)1L);
    pthread_create(&t2, NULL, worker, (void *)2L);
    pthread_barrier_wait(&ready);
    pthread_kill(t2, SIGUSR1);
    pthread_kill(t1, SIGUSR1);
    pthread_join(t1, NULL);
    pthread_join(t2, NULL);
    printf("main %d, thread 1 %d, thread 2 %d\n", hits[0], hits[1], hits[2]);
    return hits[0] == 0 && hits[1] == 1 && hits[2] == 1 ? 0 : 1;
}
