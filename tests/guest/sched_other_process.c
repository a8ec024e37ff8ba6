/*
 * sched_other_process.c - the sched_* calls on another process than the
 * caller: a child's policy and parameters set and read back, its affinity
 * read; as another euid, EPERM for the child's affinity and policy; pid 1
 * (the init) found: an invalid policy is EINVAL there, not ESRCH, and
 * another euid's change is EPERM. hvrun answered ESRCH for every pid but
 * the caller's (LTP sched_setscheduler01, sched_setaffinity01). Nothing
 * here changes pid 1. Run natively and under hvrun (as root, which drops
 * to uid 65534 for the EPERM cases), the output must match.
 */
#define _GNU_SOURCE
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "guest_check.h"

int main(void)
{
    pid_t child = fork();
    CHECK(child >= 0);
    if (child == 0) {
        pause();
        _exit(0);
    }
    struct sched_param sp = {0};
    cpu_set_t set;
    printf("getscheduler(child): %s\n", result_text(sched_getscheduler(child)));
    printf("setscheduler(child, BATCH): %s\n",
           result_text(sched_setscheduler(child, SCHED_BATCH, &sp)));
    printf("getscheduler(child): %s\n", result_text(sched_getscheduler(child)));
    printf("setparam(child, 0): %s\n", result_text(sched_setparam(child, &sp)));
    printf("getparam(child): %s, priority %d\n",
           result_text(sched_getparam(child, &sp)), sp.sched_priority);
    CPU_ZERO(&set);
    printf("getaffinity(child) ok: %d\n",
           sched_getaffinity(child, sizeof(set), &set) == 0);
    printf("setscheduler(1, 99): %s\n",
           result_text(sched_setscheduler(1, 99, &sp)));
    printf("setscheduler(1, bad param): %s\n",
           result_text(sched_setscheduler(1, SCHED_OTHER, (void *)-1)));
    if (geteuid() == 0) {
        CHECK(seteuid(65534) == 0);
        printf("as 65534: setaffinity(child): %s\n",
               result_text(sched_setaffinity(child, sizeof(set), &set)));
        printf("as 65534: setscheduler(child, OTHER): %s\n",
               result_text(sched_setscheduler(child, SCHED_OTHER, &sp)));
        printf("as 65534: setscheduler(1, OTHER): %s\n",
               result_text(sched_setscheduler(1, SCHED_OTHER, &sp)));
        printf("as 65534: setaffinity(1): %s\n",
               result_text(sched_setaffinity(1, sizeof(set), &set)));
        CHECK(seteuid(0) == 0);
    }
    CHECK(kill(child, SIGKILL) == 0);
    CHECK(waitpid(child, NULL, 0) == child);
    return 0;
}
