/*
 * prio_targets: getpriority and setpriority on processes other than the
 * caller (kernel/sys.c; LTP setpriority02): a child by pid, a process
 * group, the errors for a missing pid or group (ESRCH) and an unknown
 * `which` (EINVAL); after dropping to uid 65534, another user's process
 * (the sibling, and pid 1) is EPERM before any nice check, raising its
 * own priority EACCES (RLIMIT_NICE 0), lowering it allowed. Nothing here
 * changes a process outside the test (no PRIO_USER, no change of pid 1
 * as root). Printed and compared with a native run.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "guest_check.h"

static const char *get_text(int which, int who)
{
    errno = 0;
    int v = getpriority(which, who);
    static char buf[32];
    if (v == -1 && errno)
        return strerrorname_np(errno);
    snprintf(buf, sizeof(buf), "%d", v);
    return buf;
}

static void as_nobody(pid_t sibling)
{
    fflush(stdout);
    pid_t pid = fork();
    CHECK(pid >= 0);
    if (pid == 0) {
        if (geteuid() == 0 && setresuid(65534, 65534, 65534) != 0)
            _exit(1);
        printf("nobody: sibling +10: %s\n",
               result_text(setpriority(PRIO_PROCESS, sibling, 10)));
        printf("nobody: sibling -1: %s\n",
               result_text(setpriority(PRIO_PROCESS, sibling, -1)));
        printf("nobody: pid 1 +5: %s\n",
               result_text(setpriority(PRIO_PROCESS, 1, 5)));
        printf("nobody: own group of the sibling: %s\n",
               result_text(setpriority(PRIO_PGRP, sibling, 5)));
        printf("nobody: self -1: %s\n",
               result_text(setpriority(PRIO_PROCESS, 0, -1)));
        printf("nobody: self 3: %s",
               result_text(setpriority(PRIO_PROCESS, 0, 3)));
        printf(", now %s\n", get_text(PRIO_PROCESS, 0));
        fflush(stdout);
        _exit(0);
    }
    int st;
    CHECK(waitpid(pid, &st, 0) == pid);
}

int main(void)
{
    int hold[2];
    CHECK(pipe(hold) == 0);
    fflush(stdout);
    pid_t child = fork();
    CHECK(child >= 0);
    if (child == 0) {
        char c;
        close(hold[1]);
        (void)!read(hold[0], &c, 1);
        _exit(0);
    }
    CHECK(setpgid(child, child) == 0);
    /* Natively the test starts at its caller's nice (`nice make test`),
     * under hvrun at 0 (docs/DETERMINISM.md): root starts both at 0. */
    if (geteuid() == 0) {
        CHECK(setpriority(PRIO_PROCESS, 0, 0) == 0);
        CHECK(setpriority(PRIO_PROCESS, child, 0) == 0);
    }
    printf("self: %s\n", get_text(PRIO_PROCESS, 0));
    printf("child +5: %s", result_text(setpriority(PRIO_PROCESS, child, 5)));
    printf(", child now %s", get_text(PRIO_PROCESS, child));
    printf(", self still %s\n", get_text(PRIO_PROCESS, 0));
    printf("group +7: %s", result_text(setpriority(PRIO_PGRP, child, 7)));
    printf(", group now %s", get_text(PRIO_PGRP, child));
    printf(", child now %s\n", get_text(PRIO_PROCESS, child));
    printf("pid -1: get %s, set %s\n", get_text(PRIO_PROCESS, -1),
           result_text(setpriority(PRIO_PROCESS, -1, 1)));
    printf("group -1: get %s, set %s\n", get_text(PRIO_PGRP, -1),
           result_text(setpriority(PRIO_PGRP, -1, 1)));
    printf("which 5: get %s, set %s\n", get_text(5, 0),
           result_text(setpriority(5, 0, 1)));
    as_nobody(child);
    printf("child after: %s\n", get_text(PRIO_PROCESS, child));
    close(hold[1]);
    int st;
    CHECK(waitpid(child, &st, 0) == child);
    printf("reaped child: %s\n", get_text(PRIO_PROCESS, child));
    return 0;
}
