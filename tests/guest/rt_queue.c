/*
 * rt_queue: real-time signals queue every instance, in order, with their
 * values: sent to the process (sigqueue) and to one thread
 * (rt_tgsigqueueinfo, the thread's private queue, which sigwaitinfo
 * drains first). Ignoring a signal discards its queued instances, the
 * thread's included.
 */
#define _GNU_SOURCE
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

static void queue_to_thread(int sig, int value)
{
    siginfo_t si;
    memset(&si, 0, sizeof(si));
    si.si_signo = sig;
    si.si_code = SI_QUEUE;
    si.si_pid = getpid();
    si.si_uid = getuid();
    si.si_value.sival_int = value;
    syscall(SYS_rt_tgsigqueueinfo, getpid(), gettid(), sig, &si);
}

static int pending(int sig)
{
    sigset_t p;
    sigpending(&p);
    return sigismember(&p, sig);
}

int main(void)
{
    sigset_t s;
    sigemptyset(&s);
    sigaddset(&s, SIGRTMIN);
    sigaddset(&s, SIGRTMIN + 1);
    sigprocmask(SIG_BLOCK, &s, NULL);

    for (int i = 0; i < 3; i++)
        sigqueue(getpid(), SIGRTMIN, (union sigval){.sival_int = i});
    for (int i = 10; i < 13; i++)
        queue_to_thread(SIGRTMIN, i);
    /* The thread's own instances come first, then the process's. */
    for (int i = 0; i < 6; i++) {
        siginfo_t si;
        int sig = sigwaitinfo(&s, &si);
        printf("got %s %d\n", sig == SIGRTMIN ? "SIGRTMIN" : "?",
               si.si_value.sival_int);
    }
    struct timespec zero = {0, 0};
    siginfo_t si;
    printf("more: %d\n", sigtimedwait(&s, &si, &zero));

    for (int i = 0; i < 3; i++)
        queue_to_thread(SIGRTMIN + 1, i);
    printf("pending before SIG_IGN: %d\n", pending(SIGRTMIN + 1));
    signal(SIGRTMIN + 1, SIG_IGN);
    signal(SIGRTMIN + 1, SIG_DFL);
    printf("pending after SIG_IGN: %d\n", pending(SIGRTMIN + 1));
    printf("more: %d\n", sigtimedwait(&s, &si, &zero));
    return 0;
}
