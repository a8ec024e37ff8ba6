/*
 * progress_spin: one thread spins on a flag that another sets after a
 * syscall (a 1 ms sleep, then a write). Natively the spin count depends on the host's timing; under
 * hvrun with --progress software the spinner is preempted after a fixed
 * amount of its own counted progress, so the count (printed with -v) is
 * the same in every run (tests/progress/run.sh).
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <fcntl.h>
#include <unistd.h>

static atomic_int flag;

static void *setter(void *arg)
{
    int fd = *(int *)arg;
    usleep(1000); /* the spinner spins meanwhile, whoever ran first */
    if (write(fd, "x", 1) != 1)
        return NULL;
    atomic_store_explicit(&flag, 1, memory_order_release);
    return NULL;
}

int main(int argc, char **argv)
{
    int verbose = argc > 1 && strcmp(argv[1], "-v") == 0;
    int fd = open("/dev/null", O_WRONLY);
    pthread_t t;
    if (pthread_create(&t, NULL, setter, &fd) != 0)
        return 1;
    unsigned long spins = 0;
    while (!atomic_load_explicit(&flag, memory_order_acquire))
        spins++;
    pthread_join(t, NULL);
    if (verbose)
        printf("flag seen after %lu spins\n", spins);
    else
        printf("flag seen\n");
    return 0;
}
