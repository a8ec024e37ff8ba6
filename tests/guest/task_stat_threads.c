/*
 * task_stat_threads.c - a forked child starts 30 threads that sleep, then
 * reads each one's /proc/PID/task/TID/stat (as LTP's futex tests wait for
 * threads to sleep): every thread is listed and in state S. hvrun once
 * took a TID equal to its own host pid for "self" and showed the reader's
 * own state (R); in a container hvrun's pid is small and such a TID
 * common (tests/processes host-pid/*). Output as natively.
 */
#define _GNU_SOURCE
#include "guest_check.h"

#include <dirent.h>
#include <errno.h>
#include <stdbool.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define THREADS 30

static void *sleeper(void *arg)
{
    (void)arg;
    for (;;)
        pause();
    return NULL;
}

static int check_threads(void)
{
    pthread_t t[THREADS];
    for (int i = 0; i < THREADS; i++)
        CHECK(pthread_create(&t[i], NULL, sleeper, NULL) == 0);
    struct timespec pause_100ms = {0, 100000000};
    nanosleep(&pause_100ms, NULL);
    char name[256];
    snprintf(name, sizeof(name), "/proc/%d/task/", getpid());
    DIR *d = opendir(name);
    CHECK(d != NULL);
    struct dirent *de;
    int listed = 0, asleep = 0, own[THREADS + 1], nr_own = 0;
    while ((de = readdir(d))) {
        int tid = atoi(de->d_name);
        if (tid > 0 && nr_own <= THREADS)
            own[nr_own++] = tid;
        if (tid <= 0 || tid == getpid())
            continue;
        char path[512], comm[64] = "", state = '?';
        snprintf(path, sizeof(path), "/proc/%d/task/%d/stat", getpid(), tid);
        FILE *f = fopen(path, "r");
        listed++;
        if (f && fscanf(f, "%*d %63s %c", comm, &state) == 2 &&
            state == 'S' && strcmp(comm, "(task_stat_threa)") == 0)
            asleep++;
        else
            printf("a thread: state %c comm %s\n", state, comm);
        if (f)
            fclose(f);
    }
    closedir(d);
    /* Any other number under task/ names no thread of ours: ENOENT (under
     * hvrun in a pid namespace, hvrun's own threads have such tids). */
    int others = 0;
    for (int n = 1; n <= 400; n++) {
        bool mine = false;
        for (int k = 0; k < nr_own; k++)
            mine = mine || own[k] == n;
        snprintf(name, sizeof(name), "/proc/%d/task/%d", getpid(), n);
        if (!mine && (access(name, F_OK) == 0 || errno != ENOENT))
            others++;
    }
    printf("%d threads listed, %d asleep in their stat, %d other tids found\n",
           listed, asleep, others);
    fflush(stdout);
    return 0;
}

int main(void)
{
    pid_t c = fork();
    CHECK(c >= 0);
    if (c == 0)
        _exit(check_threads());
    int status;
    CHECK(waitpid(c, &status, 0) == c);
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    return 0;
}
