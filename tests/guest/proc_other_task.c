/*
 * proc_other_task.c - /proc/<pid>/task of another process lists that
 * process's threads (LeakSanitizer's tracer, a CLONE_VM child, lists its
 * parent's so; ps -L and debuggers list a target's): a child with three
 * threads, listed by its parent, then gone once reaped. Prints counts and
 * whether each listed tid is a directory, not the ids.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "guest_check.h"

static void *idle(void *arg)
{
    (void)arg;
    for (;;)
        pause();
    return NULL;
}

/* Entries of path other than . and .., or -errno when it cannot be opened. */
static int count_tasks(const char *path, int *dirs)
{
    DIR *d = opendir(path);
    if (!d)
        return -errno;
    int n = 0;
    *dirs = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
            continue;
        n++;
        *dirs += e->d_type == DT_DIR;
    }
    closedir(d);
    return n;
}

int main(void)
{
    setvbuf(stdout, NULL, _IONBF, 0);
    int ready[2];
    CHECK(pipe(ready) == 0);
    pid_t c = fork();
    CHECK(c >= 0);
    if (c == 0) {
        pthread_t t;
        for (int i = 0; i < 2; i++)
            CHECK(pthread_create(&t, NULL, idle, NULL) == 0);
        CHECK(write(ready[1], "r", 1) == 1);
        idle(NULL);
    }
    char byte;
    CHECK(read(ready[0], &byte, 1) == 1);
    char path[64];
    snprintf(path, sizeof(path), "/proc/%d/task", (int)c);
    int dirs;
    int n = count_tasks(path, &dirs);
    printf("child's tasks: %d, directories: %d\n", n, dirs);
    int fd = open(path, O_RDONLY | O_DIRECTORY);
    printf("open O_DIRECTORY: %d\n", fd >= 0);
    printf("open for writing: %s\n",
           open(path, O_WRONLY) < 0 ? strerror(errno) : "opened");
    snprintf(path, sizeof(path), "/proc/%d/task", (int)getpid());
    printf("own tasks: %d\n", count_tasks(path, &dirs));
    CHECK(kill(c, SIGKILL) == 0);
    CHECK(waitpid(c, NULL, 0) == c);
    snprintf(path, sizeof(path), "/proc/%d/task", (int)c);
    int gone = count_tasks(path, &dirs);
    printf("after reaping: %s\n", gone < 0 ? strerror(-gone) : "listed");
    if (fd >= 0) {
        char buf[4096];
        long r = syscall(SYS_getdents64, fd, buf, sizeof(buf));
        printf("getdents on the kept fd: %s\n",
               r < 0 ? strerror(errno) : "entries");
        close(fd);
    }
    return 0;
}
