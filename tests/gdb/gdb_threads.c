/*
 * gdb_threads.c - what tests/gdb/run.sh debugs: two threads that add to a
 * global under a lock, a call into a shared library, and a copy of
 * add_one's code through a pipe (hvrun copies it: a breakpoint gdb set
 * there must not show); output that must be the same with and without gdb.
 */
#include <pthread.h>
#include <stdio.h>
#include <unistd.h>

int gdb_lib_scale(int x);

int counter;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

__attribute__((noinline)) int add_one(int x)
{
    return x + 1;
}

static void *worker(void *arg)
{
    int id = (int)(long)arg;
    for (int i = 0; i < 3; i++) {
        pthread_mutex_lock(&lock);
        counter = add_one(counter);
        pthread_mutex_unlock(&lock);
    }
    printf("worker %d done\n", id);
    return NULL;
}

int main(void)
{
    pthread_t t[2];
    for (long i = 0; i < 2; i++)
        pthread_create(&t[i], NULL, worker, (void *)i);
    for (int i = 0; i < 2; i++)
        pthread_join(t[i], NULL);
    int scaled = gdb_lib_scale(counter);
    printf("counter %d scaled %d\n", counter, scaled);
    int fds[2];
    unsigned char code[16];
    unsigned sum = 0;
    if (pipe(fds) == 0 &&
        write(fds[1], (const void *)add_one, sizeof(code)) == sizeof(code) &&
        read(fds[0], code, sizeof(code)) == sizeof(code))
        for (unsigned i = 0; i < sizeof(code); i++)
            sum = sum * 31 + code[i];
    printf("add_one's code %08x\n", sum);
    return 0;
}
