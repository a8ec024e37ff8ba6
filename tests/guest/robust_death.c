/*
 * robust_death.c - what the death of a thread or process does for others,
 * as Linux does it: a robust mutex its owner held when it died is handed
 * on with EOWNERDEAD (to a later locker and to one already waiting; a
 * thread, and a process over shared memory), and a child that asked for
 * PR_SET_PDEATHSIG gets its signal when its parent dies. Run natively
 * and under hvrun, the output must match (tests/run-guest-tests.sh).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

static pthread_mutex_t *robust_mutex(void *where, bool shared)
{
    pthread_mutexattr_t a;
    pthread_mutexattr_init(&a);
    pthread_mutexattr_setrobust(&a, PTHREAD_MUTEX_ROBUST);
    if (shared)
        pthread_mutexattr_setpshared(&a, PTHREAD_PROCESS_SHARED);
    pthread_mutex_t *m = where;
    pthread_mutex_init(m, &a);
    pthread_mutexattr_destroy(&a);
    return m;
}

static const char *lock_result(pthread_mutex_t *m)
{
    int rc = pthread_mutex_lock(m);
    if (rc == EOWNERDEAD) {
        pthread_mutex_consistent(m);
        pthread_mutex_unlock(m);
        return "EOWNERDEAD";
    }
    if (rc == 0)
        pthread_mutex_unlock(m);
    return rc == 0 ? "0" : strerrorname_np(rc);
}

static pthread_mutex_t thread_mutex;
static volatile int locked;

static void *hold_and_die(void *arg)
{
    pthread_mutex_lock(&thread_mutex);
    locked = 1;
    if (arg)
        usleep(20000); /* the main thread is waiting by then */
    return NULL;       /* exits holding it */
}

static void threads(void)
{
    robust_mutex(&thread_mutex, false);
    pthread_t t;
    pthread_create(&t, NULL, hold_and_die, NULL);
    pthread_join(t, NULL);
    printf("thread died holding it: later lock %s", lock_result(&thread_mutex));
    printf(", again %s\n", lock_result(&thread_mutex));
    locked = 0;
    pthread_create(&t, NULL, hold_and_die, (void *)1);
    while (!locked)
        sched_yield();
    printf("thread died holding it: waiting lock %s\n",
           lock_result(&thread_mutex));
    pthread_join(t, NULL);
}

static void processes(void)
{
    void *mem = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
                     MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    pthread_mutex_t *m = robust_mutex(mem, true);
    pid_t pid = fork();
    if (pid == 0) {
        pthread_mutex_lock(m);
        _exit(0);
    }
    waitpid(pid, NULL, 0);
    printf("process died holding it: lock %s\n", lock_result(m));
}

static void on_term(int sig)
{
    char msg[32];
    int n = snprintf(msg, sizeof(msg), "signal %d\n", sig);
    if (write(1, msg, (size_t)n) < 0)
        _exit(3);
    _exit(0);
}

static void death_signal(void)
{
    int ready[2];
    if (pipe(ready) < 0)
        return;
    pid_t a = fork();
    if (a == 0) {
        pid_t b = fork();
        if (b == 0) {
            signal(SIGTERM, on_term);
            prctl(PR_SET_PDEATHSIG, SIGTERM);
            int sig = 0;
            prctl(PR_GET_PDEATHSIG, &sig);
            printf("grandchild: pdeathsig %d, ", sig);
            fflush(stdout);
            if (write(ready[1], "r", 1) < 0)
                _exit(4);
            for (;;)
                pause();
        }
        char c;
        if (read(ready[0], &c, 1) < 0)
            _exit(5);
        _exit(0); /* the grandchild's parent dies */
    }
    waitpid(a, NULL, 0);
    close(ready[1]);
    char c;
    /* The grandchild's end of the pipe closes when it exits. */
    while (read(ready[0], &c, 1) > 0)
        ;
    close(ready[0]);
}

int main(void)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    threads();
    processes();
    death_signal();
    return 0;
}
