/*
 * pid_model.c - the first process is a shell's child, not init (issue 27).
 *
 * Run as `pid_model` it checks what a program started by a shell sees,
 * with no number that differs between native and hvrun printed:
 *  - getppid() is not 1 (LTP's harness takes a parent of 1 as "my main
 *    process died") and names a live process whose group and session can
 *    be read;
 *  - an orphan is reparented to another live process and, once it exits,
 *    is reaped without anyone of ours waiting for it;
 *  - a default-action signal kills a child, and a child of ours that
 *    ignores nothing is killed by SIGTERM like any process.
 * Run as `pid_model --term-self` the program sends itself SIGTERM at its
 * default disposition: the run's exit status is 143 (killed), as under a
 * shell natively; as init it would survive.
 */
#define _GNU_SOURCE
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "guest_check.h"

static void nap_ms(int ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

static void parent_checks(void)
{
    pid_t ppid = getppid();
    printf("ppid is 1: %s\n", ppid == 1 ? "yes" : "no");
    printf("parent alive: %s\n", kill(ppid, 0) == 0 ? "yes" : "no");
    printf("parent's group readable: %s\n", getpgid(ppid) > 0 ? "yes" : "no");
    printf("parent's session readable: %s\n", getsid(ppid) > 0 ? "yes" : "no");
    printf("own group is parent's: %s\n",
           getpgid(0) == getpgid(ppid) ? "yes" : "no");
}

/* A child forks a grandchild and exits; the grandchild reports through a
 * pipe that it was reparented, then exits itself; nobody here waits for
 * it, so its reaper must. */
static void orphan_checks(void)
{
    int fds[2];
    CHECK(pipe(fds) == 0);
    pid_t child = fork();
    CHECK(child >= 0);
    if (child == 0) {
        pid_t me = getpid();
        pid_t grandchild = fork();
        if (grandchild < 0)
            _exit(2);
        if (grandchild == 0) {
            while (getppid() == me)
                nap_ms(1);
            pid_t reaper = getppid();
            char msg[64];
            int n = snprintf(msg, sizeof(msg), "%d %d %d\n", (int)getpid(),
                             reaper > 0 && reaper != me,
                             kill(reaper, 0) == 0);
            if (write(fds[1], msg, (size_t)n) != n)
                _exit(3);
            _exit(0);
        }
        _exit(0);
    }
    close(fds[1]);
    int status;
    CHECK(waitpid(child, &status, 0) == child && WIFEXITED(status) &&
          WEXITSTATUS(status) == 0);
    char buf[64] = {0};
    CHECK(read(fds[0], buf, sizeof(buf) - 1) > 0);
    int gc, moved, alive;
    CHECK(sscanf(buf, "%d %d %d", &gc, &moved, &alive) == 3);
    printf("orphan reparented: %s, new parent alive: %s\n",
           moved ? "yes" : "no", alive ? "yes" : "no");
    CHECK(waitpid(gc, &status, WNOHANG) == -1 && errno == ECHILD);
    /* Reaped by someone else: kill finds no process (a zombie would
     * still take signal 0). */
    bool gone = false;
    for (int i = 0; i < 5000 && !gone; i++) {
        gone = kill(gc, 0) == -1 && errno == ESRCH;
        if (!gone)
            nap_ms(1);
    }
    printf("orphan reaped: %s\n", gone ? "yes" : "no");
}

static void sigterm_child_check(void)
{
    pid_t child = fork();
    CHECK(child >= 0);
    if (child == 0) {
        kill(getpid(), SIGTERM);
        _exit(0);
    }
    int status;
    CHECK(waitpid(child, &status, 0) == child);
    printf("child's own SIGTERM kills it: %s\n",
           WIFSIGNALED(status) && WTERMSIG(status) == SIGTERM ? "yes" : "no");
}

int main(int argc, char **argv)
{
    setvbuf(stdout, NULL, _IONBF, 0);
    if (argc > 1 && !strcmp(argv[1], "--term-self")) {
        kill(getpid(), SIGTERM);
        printf("survived SIGTERM\n");
        return 0;
    }
    parent_checks();
    orphan_checks();
    sigterm_child_check();
    return 0;
}
