/*
 * pidns.c - pid namespaces over the virtual pids, compared with a native
 * run (as root): after unshare(CLONE_NEWPID) the caller keeps its pid and
 * its first child is pid 1 (parent 0), the next ones 2, 3...; a second
 * unshare before that child is EINVAL; wait, kill and getpgid take and
 * give the namespace's pids; an orphan goes to the namespace's init; once
 * the init is gone the namespace takes no new process (ENOMEM);
 * clone(CLONE_NEWPID) makes the child pid 1; unprivileged, only with a
 * new user namespace.
 */
#define _GNU_SOURCE
#include <grp.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "guest_check.h"

static int wait_status(pid_t pid)
{
    int status;
    CHECK(waitpid(pid, &status, 0) == pid);
    return status;
}

/* pid 1 of the new namespace. */
static void ns_init(void)
{
    printf("init: pid %d ppid %d pgid-of-self %d\n", (int)getpid(),
           (int)getppid(), (int)(getpgid(0) == getpgid(1)));
    printf("kill 1: %d, kill 99: %d\n", kill(1, 0) < 0 ? errno : 0,
           kill(99, 0) < 0 ? errno : 0);
    int said[2]; /* the child's line first, as the parent's need not be */
    CHECK(pipe(said) == 0);
    pid_t c = fork();
    CHECK(c >= 0);
    if (c == 0) {
        printf("second: pid %d ppid %d\n", (int)getpid(), (int)getppid());
        fflush(stdout);
        CHECK(write(said[1], "x", 1) == 1);
        _exit(7);
    }
    char x;
    CHECK(read(said[0], &x, 1) == 1);
    close(said[0]);
    close(said[1]);
    printf("fork gave %d\n", (int)c);
    printf("kill child: %d\n", kill(c, 0) < 0 ? errno : 0);
    printf("waited: %d\n", WEXITSTATUS(wait_status(c)));
    /* an orphan: its parent (pid 3) exits, it goes to pid 1 */
    int go[2];
    CHECK(pipe(go) == 0);
    pid_t mid = fork();
    CHECK(mid >= 0);
    if (mid == 0) {
        pid_t o = fork();
        CHECK(o >= 0);
        if (o == 0) {
            char x;
            close(go[1]);
            CHECK(read(go[0], &x, 1) == 0); /* the pipe closes */
            while (getppid() != 1)
                usleep(1000);
            printf("orphan: pid %d ppid %d\n", (int)getpid(), (int)getppid());
            _exit(0);
        }
        _exit(0);
    }
    close(go[0]);
    printf("mid: %d %d\n", (int)mid, WEXITSTATUS(wait_status(mid)));
    close(go[1]);
    int status;
    pid_t w = wait(&status);
    printf("reaped orphan: %d %d\n", (int)w, status);
    _exit(3);
}

static void unsharer(void)
{
    pid_t before = getpid();
    CHECK(unshare(CLONE_NEWPID) == 0);
    printf("unsharer keeps its pid: %d\n", getpid() == before);
    printf("second unshare: %d\n",
           unshare(CLONE_NEWPID) < 0 ? errno : 0);
    printf("clone newpid then: %ld\n",
           syscall(SYS_clone, CLONE_NEWPID | SIGCHLD, 0, 0, 0, 0) < 0
               ? (long)errno
               : -1L);
    pid_t c = fork();
    CHECK(c >= 0);
    if (c == 0)
        ns_init();
    printf("init exit: %d\n", WEXITSTATUS(wait_status(c)));
    pid_t again = fork();
    if (again == 0)
        _exit(0);
    printf("fork after init: %d\n", again < 0 ? errno : 0);
    _exit(0);
}

static int cloned(void *arg)
{
    (void)arg;
    printf("cloned: pid %d ppid %d\n", (int)getpid(), (int)getppid());
    return 0;
}

static void unprivileged(void)
{
    CHECK(setgroups(0, NULL) == 0);
    CHECK(setresgid(65534, 65534, 65534) == 0);
    CHECK(setresuid(65534, 65534, 65534) == 0);
    printf("unprivileged pid ns: %d\n",
           unshare(CLONE_NEWPID) < 0 ? errno : 0);
    printf("with user ns: %d\n",
           unshare(CLONE_NEWUSER | CLONE_NEWPID) < 0 ? errno : 0);
    pid_t c = fork();
    CHECK(c >= 0);
    if (c == 0) {
        printf("user+pid child: %d\n", (int)getpid());
        _exit(0);
    }
    CHECK(wait_status(c) == 0);
    _exit(0);
}

int main(void)
{
    setvbuf(stdout, NULL, _IONBF, 0);
    pid_t c = fork();
    CHECK(c >= 0);
    if (c == 0)
        unsharer();
    CHECK(wait_status(c) == 0);
    static char stack[65536];
    c = clone(cloned, stack + sizeof(stack), CLONE_NEWPID | SIGCHLD, NULL);
    CHECK(c > 0);
    CHECK(wait_status(c) == 0);
    c = fork();
    CHECK(c >= 0);
    if (c == 0)
        unprivileged();
    CHECK(wait_status(c) == 0);
    printf("done\n");
    return 0;
}
