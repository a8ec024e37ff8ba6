/*
 * pause_signal_storm - stress-ng's syscall stressor's pause test: a child
 * waits in pause() with a SIGUSR1 handler that reads the clock; the parent
 * sends SIGUSR1 again and again (kill, waitpid WNOHANG, sched_yield) until
 * the child has exited. On Linux the child's handler runs, pause returns
 * EINTR and the child exits. Under hvrun with host time every clock read
 * in the vDSO is a real syscall, and each one handed the vCPU to the
 * parent: its next kill was pending before the handler's rt_sigreturn,
 * so the child took handler after handler and never got out of pause
 * (the stressor never stopped). The child's exit is what is checked.
 */
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "guest_check.h"

static volatile sig_atomic_t handled;

static void on_usr1(int sig)
{
    (void)sig;
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    handled = 1;
}

int main(void)
{
    struct sigaction sa = {.sa_handler = on_usr1};
    sigemptyset(&sa.sa_mask);
    CHECK(sigaction(SIGUSR1, &sa, NULL) == 0);
    for (int round = 0; round < 3; round++) {
        pid_t child = fork();
        CHECK(child >= 0);
        if (child == 0) {
            struct timespec ts;
            clock_gettime(CLOCK_MONOTONIC, &ts);
            pause();
            clock_gettime(CLOCK_MONOTONIC, &ts);
            _exit(handled ? 7 : 8);
        }
        int st = 0;
        for (;;) {
            CHECK(kill(child, SIGUSR1) == 0);
            pid_t r = waitpid(child, &st, WNOHANG);
            CHECK(r >= 0);
            if (r == child)
                break;
            sched_yield();
        }
        CHECK(WIFEXITED(st));
        printf("round %d: child exited %d\n", round, WEXITSTATUS(st));
    }
    return 0;
}
