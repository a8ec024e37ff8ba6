/*
 * proc_self_link.c - /proc/self and /proc/thread-self as links, and names
 * ending in "/" under them:
 * - readlink("/proc/self") is the caller's pid, of /proc/thread-self
 *   "<pid>/task/<tid>" (in a thread too; hvrun read hvrun's own host
 *   pid), also as "self" under a /proc directory fd;
 * - "/proc/self/" and "/proc/thread-self/" are the directory, for lstat
 *   and readlink too (hvrun dropped the "/": the link, its host pid);
 * - "/proc/self/exe/" and another process's "/proc/PID/exe/" follow the
 *   link to a file: ENOTDIR (hvrun: the link);
 * - a thread's task directory (/proc/PID/task/TID, of a thread of its own
 *   or of a child) opens as a directory, with its fd and ns, and a glob
 *   of /proc/self/task/<*>/ finds it (hvrun: ENOENT).
 * Prints no pid: it compares the links with getpid() and gettid().
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <fcntl.h>
#include <glob.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "guest_check.h"

/* readlink of (dir, path): "want" when it reads want, else its result. */
static const char *reads(int dir, const char *path, const char *want)
{
    static char got[256];
    ssize_t n = readlinkat(dir, path, got, sizeof(got) - 1);
    if (n < 0)
        return result_text(n);
    got[n] = '\0';
    return strcmp(got, want) == 0 ? "the caller's" : got;
}

/* lstat and readlink of path: what each gives, by kind or errno. */
static void names(const char *path)
{
    struct stat st;
    int rc = lstat(path, &st);
    const char *kind = rc < 0               ? result_text(rc)
                       : S_ISDIR(st.st_mode) ? "a directory"
                       : S_ISLNK(st.st_mode) ? "a link"
                                             : "another file";
    char buf[256];
    ssize_t n = readlink(path, buf, sizeof(buf));
    printf("%s: lstat %s, readlink %s\n", path, kind,
           n > 0 ? "reads" : result_text(n));
}

/* path (printf'd with a and b) opened as a directory: whether it lists
 * want among its entries, or the error. */
static void task_dir(const char *fmt, int a, int b, const char *want)
{
    char path[128];
    snprintf(path, sizeof(path), fmt, a, b);
    int fd = open(path, O_RDONLY | O_DIRECTORY);
    if (fd < 0) {
        printf("%s: %s\n", fmt, result_text(fd));
        return;
    }
    DIR *d = fdopendir(fd);
    CHECK(d != NULL);
    bool found = false;
    for (struct dirent *e; (e = readdir(d));)
        found |= strcmp(e->d_name, want) == 0;
    closedir(d);
    printf("%s: a directory listing %s: %d\n", fmt, want, found);
}

/* The task directories of a thread, by every name (hvrun: ENOENT, the
 * host has no directory for a guest tid). */
static void task_dirs(pid_t child)
{
    int pid = getpid(), tid = gettid();
    task_dir("/proc/self/task/%.0d%d", 0, tid, "fd");
    task_dir("/proc/self/task/%.0d%d/", 0, tid, "fd");
    task_dir("/proc/%d/task/%d", pid, tid, "status");
    task_dir("/proc/%d/task/%d/fd", pid, tid, "0");
    task_dir("/proc/%d/task/%d/ns", pid, tid, "pid");
    task_dir("/proc/%d/task/%d", child, child, "comm");
    glob_t g;
    int rc = glob("/proc/self/task/*/", 0, NULL, &g);
    printf("glob /proc/self/task/*/: %s, %zu\n", rc == 0 ? "0" : "no match",
           rc == 0 ? g.gl_pathc : 0);
    if (rc == 0)
        globfree(&g);
}

/* In a thread other than the main one: its own task directory. */
static void *thread_reads(void *arg)
{
    (void)arg;
    task_dir("/proc/self/task/%.0d%d", 0, gettid(), "comm");
    char thread[64];
    snprintf(thread, sizeof(thread), "%d/task/%d", (int)getpid(),
             (int)gettid());
    printf("readlink /proc/thread-self in a thread: %s\n",
           reads(AT_FDCWD, "/proc/thread-self", thread));
    return NULL;
}

int main(void)
{
    char self[32], thread[64];
    snprintf(self, sizeof(self), "%d", (int)getpid());
    snprintf(thread, sizeof(thread), "%d/task/%d", (int)getpid(),
             (int)gettid());
    printf("readlink /proc/self: %s\n", reads(AT_FDCWD, "/proc/self", self));
    printf("readlink /proc/thread-self: %s\n",
           reads(AT_FDCWD, "/proc/thread-self", thread));
    int proc = open("/proc", O_RDONLY | O_DIRECTORY);
    CHECK(proc >= 0);
    printf("readlink self under a /proc fd: %s\n", reads(proc, "self", self));
    close(proc);

    pthread_t t;
    CHECK(pthread_create(&t, NULL, thread_reads, NULL) == 0);
    CHECK(pthread_join(t, NULL) == 0);

    int ready[2];
    CHECK(pipe(ready) == 0);
    fflush(stdout);
    pid_t child = fork();
    CHECK(child >= 0);
    if (child == 0) {
        CHECK(write(ready[1], "", 1) == 1);
        pause();
        _exit(0);
    }
    char c;
    CHECK(read(ready[0], &c, 1) == 1);
    task_dirs(child);
    CHECK(kill(child, SIGKILL) == 0);
    int status;
    CHECK(waitpid(child, &status, 0) == child);

    names("/proc/self");
    names("/proc/self/");
    names("/proc/thread-self/");
    names("/proc/self/exe/");
    names("/proc/self/exe/x");
    names("/proc/self/cwd/");

    pid_t parent = getpid();
    fflush(stdout);
    pid_t pid = fork();
    CHECK(pid >= 0);
    if (pid == 0) {
        char path[64];
        snprintf(path, sizeof(path), "/proc/%d/exe/", (int)parent);
        struct stat st;
        int rc = lstat(path, &st);
        printf("the parent's /proc/PID/exe/: lstat %s\n", result_text(rc));
        rc = stat(path, &st);
        printf("the parent's /proc/PID/exe/: stat %s\n", result_text(rc));
        fflush(stdout);
        _exit(0);
    }
    int st;
    CHECK(waitpid(pid, &st, 0) == pid && WIFEXITED(st) &&
          WEXITSTATUS(st) == 0);
    return 0;
}
