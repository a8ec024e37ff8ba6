/*
 * race_print: three threads each write their letter 30 times into a pipe,
 * one write() each, unsynchronised: what the pipe holds is the
 * interleaving. Natively it varies from run to run; under hvrun it is
 * fixed; under `hvrun run --chaos --seed N` it is fixed for each N and
 * differs between seeds.
 *
 * By default prints the letters sorted (the same everywhere, so the guest
 * suite can compare with a native run); --interleaving prints them in the
 * order they were written.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int pipefd[2];

static void *writer(void *arg)
{
    const char *letter = arg;
    for (int i = 0; i < 30; i++)
        if (write(pipefd[1], letter, 1) != 1)
            return NULL;
    return NULL;
}

static int by_char(const void *a, const void *b)
{
    return *(const char *)a - *(const char *)b;
}

int main(int argc, char **argv)
{
    int show = argc > 1 && !strcmp(argv[1], "--interleaving");
    if (pipe(pipefd) < 0)
        return 2;
    static char letters[3][2] = {"A", "B", "C"};
    pthread_t t[3];
    for (int i = 0; i < 3; i++)
        pthread_create(&t[i], NULL, writer, letters[i]);
    for (int i = 0; i < 3; i++)
        pthread_join(t[i], NULL);
    char buf[91] = {0};
    size_t got = 0;
    while (got < 90) {
        ssize_t n = read(pipefd[0], buf + got, 90 - got);
        if (n <= 0)
            return 1;
        got += (size_t)n;
    }
    if (!show)
        qsort(buf, 90, 1, by_char);
    printf("%s\n", buf);
    return 0;
}
