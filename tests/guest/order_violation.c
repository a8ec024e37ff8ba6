/*
 * order_violation: main starts a worker, then initialises the table the
 * worker uses; the worker does some set-up of its own first (syscalls) and
 * assumes the table is ready by then: a use-before-init race. Exits 0 and
 * prints "table ready" when the worker found it initialised, 1 when it
 * did not.
 *
 * With --racy the worker does 120 calls of set-up before looking: under
 * hvrun's default schedule main, displaced when the worker started, has
 * its turn after 100 of them, so it passes; `hvrun analyze` finds the
 * --chaos seeds where the worker looks first. Without --racy main
 * initialises the table before starting the worker (always correct).
 */
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

static int table[4];
static int *volatile ready_table;
static int worker_saw;

static void *worker(void *arg)
{
    (void)arg;
    for (int i = 0; i < 120; i++)
        (void)syscall(SYS_getppid); /* its own set-up */
    int *t = ready_table;
    worker_saw = t && t[3] == 42;
    return NULL;
}

int main(int argc, char **argv)
{
    int racy = argc > 1 && !strcmp(argv[1], "--racy");
    pthread_t w;
    if (!racy) {
        table[3] = 42;
        ready_table = table;
    }
    pthread_create(&w, NULL, worker, NULL);
    if (racy) {
        table[3] = 42;
        ready_table = table;
    }
    pthread_join(w, NULL);
    printf(worker_saw ? "table ready\n" : "table used before init\n");
    return worker_saw ? 0 : 1;
}
