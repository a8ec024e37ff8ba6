/*
 * lock_pingpong.c - two threads hand a turn back and forth through a mutex
 * and condition variable (as python's GIL does) while a forked child must
 * run to write one byte to a pipe. Each turn polls the pipe without
 * waiting. Natively the child runs at once. Under hvrun the two threads are
 * never both blocked, so the scheduler must still give the other process a
 * turn (every runnable thread within one round); it once picked the
 * process's other thread first, for good, and the child starved (a
 * multiprocessing.Pool under --no-virtualize-time hung that way).
 */
#define _GNU_SOURCE
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

#include "guest_check.h"

#define MAX_TURNS 20000

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t changed = PTHREAD_COND_INITIALIZER;
static int turn, turns, pipe_rd;
static atomic_bool child_wrote;

static void *player(void *arg)
{
    int me = (int)(long)arg;
    pthread_mutex_lock(&lock);
    while (!child_wrote && turns < MAX_TURNS) {
        while (turn != me && !child_wrote && turns < MAX_TURNS)
            pthread_cond_wait(&changed, &lock);
        struct pollfd pfd = {.fd = pipe_rd, .events = POLLIN};
        if (poll(&pfd, 1, 0) == 1)
            child_wrote = true;
        turns++;
        turn = !me;
        pthread_cond_broadcast(&changed);
    }
    pthread_mutex_unlock(&lock);
    return NULL;
}

int main(void)
{
    int fds[2];
    CHECK(pipe(fds) == 0);
    pipe_rd = fds[0];
    pid_t child = fork();
    CHECK(child >= 0);
    if (child == 0) {
        CHECK(write(fds[1], "x", 1) == 1);
        _exit(0);
    }
    close(fds[1]);
    pthread_t a, b;
    CHECK(pthread_create(&a, NULL, player, (void *)0L) == 0);
    CHECK(pthread_create(&b, NULL, player, (void *)1L) == 0);
    pthread_join(a, NULL);
    pthread_join(b, NULL);
    int st;
    CHECK(waitpid(child, &st, 0) == child && WIFEXITED(st));
    if (!child_wrote) {
        printf("the child starved: %d turns without it running\n", turns);
        return 1;
    }
    printf("the child ran while the threads took turns\n");
    return 0;
}
