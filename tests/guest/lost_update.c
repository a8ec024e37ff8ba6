/*
 * lost_update: two threads add 1 to a shared counter 200 times each: a
 * syscall, a read, now and then (4 times in 200) another syscall, then the
 * write back. With --racy there is no lock, and a thread preempted between
 * its read and its write loses the other's updates: the classic flaky
 * test. Without it a mutex makes it correct.
 * Exits 0 and prints the total when it is 400, 1 when updates were lost.
 * The syscalls are raw getppid calls: glibc's getppid() is answered in
 * the guest under hvrun, no syscall and so no switch point.
 *
 * Under hvrun's default schedule the two threads take turns of 100
 * syscalls, which never end inside a window, so --racy passes every time;
 * `hvrun analyze` finds a --chaos seed that makes it fail.
 */
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

static int racy;
static long counter;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

static void *adder(void *arg)
{
    (void)arg;
    for (int i = 0; i < 200; i++) {
        if (!racy)
            pthread_mutex_lock(&lock);
        (void)syscall(SYS_getppid);
        long v = counter;
        if (i % 50 == 25)
            (void)syscall(SYS_getppid); /* now and then one inside */
        counter = v + 1;
        if (!racy)
            pthread_mutex_unlock(&lock);
    }
    return NULL;
}

int main(int argc, char **argv)
{
    racy = argc > 1 && !strcmp(argv[1], "--racy");
    pthread_t a, b;
    pthread_create(&a, NULL, adder, NULL);
    pthread_create(&b, NULL, adder, NULL);
    pthread_join(a, NULL);
    pthread_join(b, NULL);
    printf("total %ld of 400\n", counter);
    return counter == 400 ? 0 : 1;
}
