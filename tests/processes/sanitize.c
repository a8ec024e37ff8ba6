/*
 * sanitize.c - what a sanitizer-built test finds, inside a run as natively
 * (tests/processes/run.sh builds it with -fsanitize=address, leak, thread
 * or undefined). ASan and LSan reserve terabytes of MAP_NORESERVE address
 * space; LeakSanitizer stops the world with a ptrace-ing CLONE_VM child
 * that lists /proc/<pid>/task. argv[1] picks the bug:
 *   overflow  heap-buffer-overflow       uaf     heap-use-after-free
 *   stack     stack-buffer-overflow      leak    two leaks, one kept
 *   threads   leaks made by 4 live threads, found while they wait
 *   race      a data race between two threads (ThreadSanitizer)
 *   ub        signed overflow and an out-of-bounds index (UBSan)
 */
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* LeakSanitizer's (ASan and LSan builds have it; the others do not). */
void __lsan_do_leak_check(void) __attribute__((weak));

static void *volatile kept;
static volatile int shared_counter;
static pthread_barrier_t barrier;

static void *volatile thread_blocks[4];

/* The block is reachable only from thread_blocks until main forgets it:
 * no register or live stack slot of the thread keeps it. */
static void __attribute__((noinline)) make_block(long i)
{
    thread_blocks[i] = malloc(8 * (size_t)(i + 1));
}

static void *leaky_thread(void *arg)
{
    make_block((long)arg);
    pthread_barrier_wait(&barrier); /* blocks made */
    pthread_barrier_wait(&barrier); /* checked */
    return NULL;
}

static void *racer(void *arg)
{
    (void)arg;
    for (int i = 0; i < 1000; i++)
        shared_counter++;
    return NULL;
}

static int index_of(int argc)
{
    return argc + 1;
}

int main(int argc, char **argv)
{
    const char *what = argc > 1 ? argv[1] : "";
    if (!strcmp(what, "overflow")) {
        char *p = malloc(10);
        p[argc + 8] = 1;
        free(p);
    } else if (!strcmp(what, "uaf")) {
        int *p = malloc(sizeof(int) * 4);
        free(p);
        printf("%d\n", p[argc]);
    } else if (!strcmp(what, "stack")) {
        char buf[16];
        memset(buf, 0, sizeof(buf));
        printf("%d\n", buf[argc + 14]);
    } else if (!strcmp(what, "leak")) {
        char *lost = malloc(100);
        strcpy(lost, "lost");
        lost = NULL;
        kept = malloc(50);
    } else if (!strcmp(what, "threads")) {
        pthread_t t[4];
        pthread_barrier_init(&barrier, NULL, 5);
        for (long i = 0; i < 4; i++)
            pthread_create(&t[i], NULL, leaky_thread, (void *)i);
        pthread_barrier_wait(&barrier);
        for (int i = 0; i < 4; i++)
            thread_blocks[i] = NULL; /* leaked now */
        if (__lsan_do_leak_check) /* the world stopped, 4 threads in it */
            __lsan_do_leak_check();
        pthread_barrier_wait(&barrier);
        for (int i = 0; i < 4; i++)
            pthread_join(t[i], NULL);
    } else if (!strcmp(what, "race")) {
        pthread_t t[2];
        for (int i = 0; i < 2; i++)
            pthread_create(&t[i], NULL, racer, NULL);
        for (int i = 0; i < 2; i++)
            pthread_join(t[i], NULL);
    } else if (!strcmp(what, "ub")) {
        int x = INT_MAX - 1 + argc;
        x += argc;
        int a[2] = {1, 2};
        volatile int past_end = a[index_of(argc)]; /* its value is garbage */
        (void)past_end;
        printf("%d\n", x);
    } else {
        fprintf(stderr, "usage: sanitize overflow|uaf|stack|leak|threads|race|ub\n");
        return 2;
    }
    printf("%s: ran to the end\n", what);
    return 0;
}
