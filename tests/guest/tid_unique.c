/*
 * tid_unique.c - thread ids come from the one id space processes' do, as
 * on Linux: a thread's id is no process's and no other thread's, a child
 * forked after threads has an id after theirs, and tgkill/gettid agree.
 * (hvrun once numbered threads per process from the pid up, so a forked
 * child's first thread could have its own pid, or its parent's child's:
 * strace -f of a threaded program then deadlocked.) Each thread writes a
 * line with write(2) (tests/processes runs strace -f on it). Prints facts,
 * not ids. With the argument group-exit: two threads wait in pause() and
 * the main thread exits the group with status 3 (strace -f reports each
 * thread's exit).
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "guest_check.h"

#define NR 3

static pid_t tids[NR];

static void *run(void *arg)
{
    long i = (long)arg;
    tids[i] = gettid();
    CHECK(write(1, "thread\n", 7) == 7);
    return NULL;
}

static int threads_distinct(pid_t pid)
{
    for (int i = 0; i < NR; i++) {
        if (tids[i] == pid || tids[i] <= 0)
            return 0;
        for (int j = 0; j < i; j++)
            if (tids[i] == tids[j])
                return 0;
    }
    return 1;
}

static void *wait_forever(void *arg)
{
    (void)arg;
    CHECK(write(1, "waiting\n", 8) == 8);
    for (;;)
        pause();
    return NULL;
}

static int group_exit(void)
{
    pthread_t t[2];
    for (int i = 0; i < 2; i++)
        CHECK(pthread_create(&t[i], NULL, wait_forever, NULL) == 0);
    usleep(100000);
    exit(3);
}

int main(int argc, char **argv)
{
    setvbuf(stdout, NULL, _IONBF, 0);
    if (argc > 1 && !strcmp(argv[1], "group-exit"))
        return group_exit();
    pid_t pid = getpid();
    printf("main thread's tid is the pid: %d\n", gettid() == pid);
    pthread_t t[NR];
    for (long i = 0; i < NR; i++)
        CHECK(pthread_create(&t[i], NULL, run, (void *)i) == 0);
    for (int i = 0; i < NR; i++)
        CHECK(pthread_join(t[i], NULL) == 0);
    printf("thread ids distinct, none the pid: %d\n", threads_distinct(pid));
    int ends[2];
    CHECK(pipe(ends) == 0);
    pid_t c = fork();
    CHECK(c >= 0);
    if (c == 0) {
        pid_t mine = getpid();
        CHECK(write(ends[1], &mine, sizeof(mine)) == sizeof(mine));
        _exit(0);
    }
    pid_t seen;
    CHECK(read(ends[0], &seen, sizeof(seen)) == sizeof(seen));
    CHECK(waitpid(c, NULL, 0) == c);
    int clash = 0;
    for (int i = 0; i < NR; i++)
        clash |= tids[i] == c;
    printf("child's pid is no thread's id: %d\n", !clash && seen == c);
    printf("tgkill of the main thread by its tid: %d\n",
           syscall(SYS_tgkill, pid, gettid(), 0) == 0);
    printf("tgkill of an exited thread's id: %d\n",
           syscall(SYS_tgkill, pid, tids[0], 0) == -1);
    return 0;
}
