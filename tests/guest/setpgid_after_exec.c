/*
 * setpgid_after_exec.c - a parent may move its child to another process
 * group only until the child execs (EACCES after), and never a child in
 * another session (EPERM, checked first); LTP's setpgid03. hvrun never
 * marked a child as exec'd, so the move succeeded or gave EPERM. With an
 * argument the program is the exec'd child: it waits for its parent.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static const char *res(int rc)
{
    return rc == 0 ? "0" : strerrorname_np(errno);
}

/* A child that, after `how` (0: nothing, 1: exec, 2: setsid and exec),
 * waits on the pipe until its parent is done. */
static pid_t child(int how, int ready[2], int go[2], const char *self)
{
    pid_t pid = fork();
    if (pid == 0) {
        if (how == 2)
            setsid();
        dup2(ready[1], 10);
        dup2(go[0], 11);
        /* only 10 and 11: the parent's close of go[1] is the child's EOF */
        close(ready[0]);
        close(ready[1]);
        close(go[0]);
        close(go[1]);
        if (how == 0) {
            char c = 'r';
            if (write(10, &c, 1) != 1 || read(11, &c, 1) < 0)
                _exit(1);
            _exit(0);
        }
        execl(self, self, "child", (char *)NULL);
        _exit(127);
    }
    char c;
    if (read(ready[0], &c, 1) != 1)
        return -1;
    return pid;
}

int main(int argc, char **argv)
{
    if (argc > 1) { /* the exec'd child */
        char c = 'r';
        if (write(10, &c, 1) != 1 || read(11, &c, 1) < 0)
            return 1;
        return 0;
    }
    const char *names[] = {"not exec'd", "exec'd", "exec'd, own session"};
    for (int how = 0; how < 3; how++) {
        int ready[2], go[2];
        if (pipe(ready) < 0 || pipe(go) < 0)
            return 1;
        pid_t pid = child(how, ready, go, argv[0]);
        printf("%s: setpgid(child, child) %s", names[how],
               res(setpgid(pid, pid)));
        printf(", setpgid(child, own group) %s\n",
               res(setpgid(pid, getpgrp())));
        close(go[1]);
        int st;
        waitpid(pid, &st, 0);
        close(ready[0]);
        close(ready[1]);
        close(go[0]);
    }
    return 0;
}
