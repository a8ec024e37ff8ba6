/*
 * kill_tid.c - a thread's id where a pid goes, as on Linux: kill(2) with a
 * non-leader thread's tid signals that thread's process (it was ESRCH
 * under hvrun), /proc/<tid>/ is reachable (status names the process as
 * Tgid, the thread as Pid), and both are
 * gone (ESRCH, ENOENT) once the thread has exited. Prints facts, not ids.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "guest_check.h"

static volatile pid_t worker_tid;
static volatile sig_atomic_t got_usr1;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cond = PTHREAD_COND_INITIALIZER;
static int done;

static void on_usr1(int sig)
{
    (void)sig;
    got_usr1 = 1;
}

static void *worker(void *arg)
{
    (void)arg;
    pthread_mutex_lock(&lock);
    worker_tid = (pid_t)syscall(SYS_gettid);
    pthread_cond_broadcast(&cond);
    while (!done)
        pthread_cond_wait(&cond, &lock);
    pthread_mutex_unlock(&lock);
    return NULL;
}

/* The number after "key:" in /proc/<id>/status, or -1. */
static long status_field(pid_t id, const char *key)
{
    char path[64], buf[4096];
    snprintf(path, sizeof(path), "/proc/%d/status", (int)id);
    int fd = open(path, O_RDONLY);
    if (fd < 0)
        return -1;
    ssize_t n = read(fd, buf, sizeof(buf) - 1);
    close(fd);
    buf[n > 0 ? n : 0] = '\0';
    char *at = strstr(buf, key);
    return at ? strtol(at + strlen(key), NULL, 10) : -1;
}

int main(void)
{
    setvbuf(stdout, NULL, _IONBF, 0);
    CHECK(signal(SIGUSR1, on_usr1) != SIG_ERR);
    /* Blocked in the worker (it inherits the mask) and, below, in the
     * main thread: the process's signal stays pending until the main
     * thread unblocks it, whichever tid named the process. */
    sigset_t usr1;
    sigemptyset(&usr1);
    sigaddset(&usr1, SIGUSR1);
    CHECK(sigprocmask(SIG_BLOCK, &usr1, NULL) == 0);
    pthread_t t;
    CHECK(pthread_create(&t, NULL, worker, NULL) == 0);
    pthread_mutex_lock(&lock);
    while (!worker_tid)
        pthread_cond_wait(&cond, &lock);
    pthread_mutex_unlock(&lock);
    pid_t tid = worker_tid;

    printf("tid is not the pid: %d\n", tid != getpid());
    printf("kill(tid, 0): %d\n", kill(tid, 0));
    printf("/proc/tid Tgid is the pid: %d\n",
           status_field(tid, "Tgid:") == getpid());
    printf("/proc/tid Pid is the tid: %d\n", status_field(tid, "Pid:") == tid);
    char path[64];
    snprintf(path, sizeof(path), "/proc/%d/comm", (int)tid);
    printf("access /proc/tid/comm: %d\n", access(path, R_OK));

    printf("kill(tid, SIGUSR1): %d\n", kill(tid, SIGUSR1));
    sigset_t pending;
    CHECK(sigpending(&pending) == 0);
    printf("pending for the process: %d\n", sigismember(&pending, SIGUSR1));
    CHECK(sigprocmask(SIG_UNBLOCK, &usr1, NULL) == 0);
    printf("handled: %d\n", (int)got_usr1);

    pthread_mutex_lock(&lock);
    done = 1;
    pthread_cond_broadcast(&cond);
    pthread_mutex_unlock(&lock);
    CHECK(pthread_join(t, NULL) == 0);
    /* Natively the kernel clears the tid (which ends the join) before it
     * reaps the thread: for a moment kill(tid, 0) may still find it (a
     * clean clone's native reference did). Until it is gone, at most 1 s;
     * under hvrun it is at once. */
    for (int i = 0; i < 1000 && kill(tid, 0) == 0; i++)
        usleep(1000);
    errno = 0;
    int r = kill(tid, 0);
    printf("after exit kill(tid, 0): %d %s\n", r, r ? strerror(errno) : "");
    errno = 0;
    r = access(path, F_OK);
    printf("after exit /proc/tid/comm: %d %s\n", r, r ? strerror(errno) : "");
    return 0;
}
