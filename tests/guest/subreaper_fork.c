/*
 * subreaper_fork.c - PR_SET_CHILD_SUBREAPER is not inherited: a fork
 * child reads 0 with PR_GET_CHILD_SUBREAPER (Linux gives each new process
 * a signal_struct of its own), while its orphaned child still goes to the
 * subreaper above it. hvrun copied the flag to the child (LTP prctl03).
 * Run natively and under hvrun, the output must match.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "guest_check.h"

int main(void)
{
    int v = -1;
    pid_t self = getpid();
    CHECK(prctl(PR_SET_CHILD_SUBREAPER, 1) == 0);
    int fds[2];
    CHECK(pipe(fds) == 0);
    pid_t child = fork();
    CHECK(child >= 0);
    if (child == 0) {
        CHECK(prctl(PR_GET_CHILD_SUBREAPER, &v) == 0);
        printf("child: subreaper %d\n", v);
        fflush(stdout);
        pid_t grandchild = fork();
        CHECK(grandchild >= 0);
        if (grandchild == 0) {
            char c;
            CHECK(read(fds[0], &c, 1) == 1); /* until its parent is gone */
            printf("grandchild: parent is the subreaper %d\n",
                   getppid() == self);
            fflush(stdout);
            _exit(0);
        }
        _exit(0);
    }
    CHECK(waitpid(child, NULL, 0) == child);
    CHECK(write(fds[1], "x", 1) == 1);
    pid_t orphan = wait(NULL);
    printf("subreaper reaped the orphan: %d\n", orphan > 0);
    CHECK(prctl(PR_GET_CHILD_SUBREAPER, &v) == 0);
    printf("parent: subreaper %d\n", v);
    return 0;
}
