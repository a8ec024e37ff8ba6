/*
 * futex_restart.c - a FUTEX_WAIT interrupted by a signal handler: with
 * SA_RESTART an untimed wait starts again (Linux's ERESTARTSYS) and ends
 * at the wake; without SA_RESTART it is EINTR; a timed wait is EINTR
 * either way (ERESTART_RESTARTBLOCK is not restarted once a handler ran).
 * Run natively and under hvrun, the output must match
 * (tests/run-guest-tests.sh).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/futex.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static volatile int handled;
static int word;
static pid_t main_tid;

static void on_usr1(int sig)
{
    (void)sig;
    handled++;
}

static void *interrupt_then_wake(void *arg)
{
    (void)arg;
    usleep(10000);
    syscall(SYS_tgkill, getpid(), main_tid, SIGUSR1);
    usleep(10000);
    __atomic_store_n(&word, 1, __ATOMIC_SEQ_CST);
    syscall(SYS_futex, &word, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
    return NULL;
}

static void one(const char *name, int flags, bool timed)
{
    struct sigaction sa = {.sa_handler = on_usr1, .sa_flags = flags};
    sigaction(SIGUSR1, &sa, NULL);
    handled = 0;
    word = 0;
    pthread_t t;
    pthread_create(&t, NULL, interrupt_then_wake, NULL);
    struct timespec ts = {.tv_sec = 5};
    long rc = syscall(SYS_futex, &word, FUTEX_WAIT_PRIVATE, 0,
                      timed ? &ts : NULL, NULL, 0);
    int e = errno;
    pthread_join(t, NULL);
    printf("%s: %s, handler ran %d\n", name,
           rc == 0 ? "woken" : strerrorname_np(e), handled);
}

int main(void)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    main_tid = (pid_t)syscall(SYS_gettid);
    one("untimed, SA_RESTART", SA_RESTART, false);
    one("untimed, no SA_RESTART", 0, false);
    one("timed, SA_RESTART", SA_RESTART, true);
    return 0;
}
