/*
 * task_files.c - /proc/self/task/TID/ and /proc/PID/task/TID/ describe the
 * thread: comm is its own name (PR_SET_NAME's; a write there renames the
 * thread only), stat's pid and comm fields and status's Name and Pid are
 * the thread's, Tgid the process's; /proc/thread-self is the calling
 * thread's; /proc/self/task lists the threads. Ids are printed as
 * relations, so the output matches a native run (tests/run-guest-tests.sh).
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "guest_check.h"

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static int stage; /* 1: the worker is named, 2: renamed, 3: done */
static pid_t worker_tid;
static char worker_saw[16], worker_self[64];

static void read_line(const char *path, char *out, size_t len)
{
    FILE *f = fopen(path, "r");
    out[0] = 0;
    if (!f) {
        snprintf(out, len, "(cannot open)");
        return;
    }
    if (!fgets(out, (int)len, f))
        out[0] = 0;
    out[strcspn(out, "\n")] = 0;
    fclose(f);
}

static void wait_stage(int s)
{
    pthread_mutex_lock(&mu);
    while (stage < s)
        pthread_cond_wait(&cv, &mu);
    pthread_mutex_unlock(&mu);
}

static void set_stage(int s)
{
    pthread_mutex_lock(&mu);
    stage = s;
    pthread_cond_broadcast(&cv);
    pthread_mutex_unlock(&mu);
}

static void *worker(void *arg)
{
    (void)arg;
    CHECK(prctl(PR_SET_NAME, "worker") == 0);
    worker_tid = (pid_t)syscall(SYS_gettid);
    read_line("/proc/thread-self/comm", worker_self, sizeof(worker_self));
    set_stage(1);
    wait_stage(2);
    CHECK(prctl(PR_GET_NAME, worker_saw) == 0);
    wait_stage(3);
    return NULL;
}

/* "Key:\tvalue" of a status file. */
static long status_field(const char *path, const char *key, char *text,
                         size_t len)
{
    FILE *f = fopen(path, "r");
    char line[256];
    long v = -1;
    CHECK(f != NULL);
    while (fgets(line, sizeof(line), f)) {
        size_t k = strlen(key);
        if (strncmp(line, key, k) == 0 && line[k] == ':') {
            line[strcspn(line, "\n")] = 0;
            if (text)
                snprintf(text, len, "%s", line + k + 2);
            v = strtol(line + k + 1, NULL, 10);
        }
    }
    fclose(f);
    return v;
}

int main(void)
{
    pthread_t t;
    char path[128], line[512], name[64];
    CHECK(prctl(PR_SET_NAME, "task_main") == 0);
    CHECK(pthread_create(&t, NULL, worker, NULL) == 0);
    wait_stage(1);
    pid_t pid = getpid(), tid = worker_tid;
    printf("worker reads /proc/thread-self/comm: %s\n", worker_self);

    snprintf(path, sizeof(path), "/proc/self/task/%d/comm", (int)tid);
    read_line(path, line, sizeof(line));
    printf("self/task/TID/comm: %s\n", line);
    snprintf(path, sizeof(path), "/proc/%d/task/%d/comm", (int)pid, (int)tid);
    read_line(path, line, sizeof(line));
    printf("PID/task/TID/comm: %s\n", line);
    snprintf(path, sizeof(path), "/proc/self/task/%d/comm", (int)pid);
    read_line(path, line, sizeof(line));
    printf("main thread's task comm: %s\n", line);
    read_line("/proc/self/comm", line, sizeof(line));
    printf("process comm: %s\n", line);

    snprintf(path, sizeof(path), "/proc/self/task/%d/status", (int)tid);
    long spid = status_field(path, "Pid", NULL, 0);
    long tgid = status_field(path, "Tgid", NULL, 0);
    status_field(path, "Name", name, sizeof(name));
    printf("status: Name %s, Pid is the tid %d, Tgid is the pid %d\n", name,
           spid == tid, tgid == pid);

    snprintf(path, sizeof(path), "/proc/self/task/%d/stat", (int)tid);
    read_line(path, line, sizeof(line));
    int stat_pid = -1;
    char stat_comm[32] = "";
    sscanf(line, "%d (%31[^)])", &stat_pid, stat_comm);
    printf("stat: pid field is the tid %d, comm %s\n", stat_pid == tid,
           stat_comm);

    /* Renaming through the thread's comm file renames that thread. */
    snprintf(path, sizeof(path), "/proc/self/task/%d/comm", (int)tid);
    FILE *f = fopen(path, "w");
    CHECK(f != NULL);
    fputs("renamed\n", f);
    CHECK(fclose(f) == 0);
    set_stage(2);
    read_line(path, line, sizeof(line));
    printf("after the write: task comm %s\n", line);
    read_line("/proc/self/comm", line, sizeof(line));
    printf("after the write: process comm %s\n", line);

    int n = 0, has_pid = 0, has_tid = 0;
    DIR *d = opendir("/proc/self/task");
    CHECK(d != NULL);
    struct dirent *e;
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.')
            continue;
        n++;
        has_pid |= atoi(e->d_name) == pid;
        has_tid |= atoi(e->d_name) == tid;
    }
    closedir(d);
    printf("task dir: %d entries, pid %d, tid %d\n", n, has_pid, has_tid);
    set_stage(3);
    CHECK(pthread_join(t, NULL) == 0);
    printf("worker's PR_GET_NAME after the write: %s\n", worker_saw);
    return 0;
}
