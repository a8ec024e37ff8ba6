/*
 * sched_policy.c - scheduling policies as Linux reports them without
 * privilege: SCHED_BATCH and SCHED_IDLE set and read back, the priority
 * rules (EINVAL outside each policy's range), SCHED_RESET_ON_FORK (a
 * child starts with nice 0), sched_getattr/sched_setattr (nice through
 * the attribute). Real-time and deadline policies are left out: natively
 * they depend on the host's real-time budget (a container may refuse
 * them to root). Run natively and under hvrun, the output must match
 * (tests/run-guest-tests.sh).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

struct attr {
    uint32_t size, sched_policy;
    uint64_t sched_flags;
    int32_t sched_nice;
    uint32_t sched_priority;
    uint64_t sched_runtime, sched_deadline, sched_period;
    uint32_t sched_util_min, sched_util_max;
};

static const char *err(long rc)
{
    return rc < 0 ? strerrorname_np(errno) : "ok";
}

int main(void)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    struct sched_param sp = {.sched_priority = 0};
    printf("start: policy %d\n", sched_getscheduler(0));
    sp.sched_priority = 100;
    printf("FIFO 100: %s", err(sched_setscheduler(0, SCHED_FIFO, &sp)));
    sp.sched_priority = 1;
    printf(", OTHER 1: %s", err(sched_setscheduler(0, SCHED_OTHER, &sp)));
    printf(", no param: %s", err(syscall(SYS_sched_setscheduler, 0,
                                          SCHED_OTHER, NULL)));
    printf(", policy 99: %s\n", err(sched_setscheduler(0, 99, &sp)));
    sp.sched_priority = 0;
    setpriority(PRIO_PROCESS, 0, 7);
    printf("BATCH|RESET_ON_FORK: %s",
           err(sched_setscheduler(0, SCHED_BATCH | SCHED_RESET_ON_FORK, &sp)));
    printf(", policy %#x\n", sched_getscheduler(0));
    pid_t pid = fork();
    if (pid == 0) {
        printf("child: policy %d, nice %d\n", sched_getscheduler(0),
               getpriority(PRIO_PROCESS, 0));
        _exit(0);
    }
    waitpid(pid, NULL, 0);
    struct attr at = {.size = sizeof(at)};
    long rc = syscall(SYS_sched_getattr, 0, &at, sizeof(at), 0);
    printf("getattr: %s, size %u, policy %u, flags %llu, nice %d\n", err(rc),
           at.size, at.sched_policy, (unsigned long long)at.sched_flags,
           at.sched_nice);
    printf("getattr small: %s\n",
           err(syscall(SYS_sched_getattr, 0, &at, 20, 0)));
    memset(&at, 0, sizeof(at));
    at.size = sizeof(at);
    at.sched_policy = SCHED_OTHER;
    at.sched_nice = 12;
    at.sched_flags = 1; /* keep RESET_ON_FORK: only privilege clears it */
    printf("setattr OTHER nice 12: %s",
           err(syscall(SYS_sched_setattr, 0, &at, 0)));
    printf(", nice %d, policy %#x\n", getpriority(PRIO_PROCESS, 0),
           sched_getscheduler(0));
    printf("IDLE|RESET_ON_FORK: %s",
           err(sched_setscheduler(0, SCHED_IDLE | SCHED_RESET_ON_FORK, &sp)));
    printf(", policy %#x", sched_getscheduler(0));
    sched_getparam(0, &sp);
    printf(", prio %d\n", sp.sched_priority);
    return 0;
}
