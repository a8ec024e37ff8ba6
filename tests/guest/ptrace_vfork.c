/*
 * ptrace_vfork.c - a tracer with PTRACE_O_TRACEVFORK (and
 * PTRACE_O_TRACEVFORKDONE) follows a tracee that calls vfork(): the tracee
 * stops at PTRACE_EVENT_VFORK while its child runs (Linux reports it before
 * the parent waits for the child), the new child, attached, stops with
 * SIGSTOP, and the parent stops again at PTRACE_EVENT_VFORK_DONE when the
 * child exits or execs. hvrun once kept the VFORK event until the child
 * released its parent and then overwrote it with VFORK_DONE: the tracer's
 * wait for the VFORK stop never returned. Every wait names its pid, so
 * the order of what is printed is the same natively in every run.
 */
#define _GNU_SOURCE
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/wait.h>
#include <unistd.h>

#include "guest_check.h"

enum child_does { CHILD_EXITS, CHILD_EXECS };

static const char *event_name(int status)
{
    switch (status >> 16) {
    case 0: return "";
    case PTRACE_EVENT_VFORK: return " PTRACE_EVENT_VFORK";
    case PTRACE_EVENT_VFORK_DONE: return " PTRACE_EVENT_VFORK_DONE";
    default: return " another event";
    }
}

/* Waits for pid and prints what it saw as who. */
static void wait_for(const char *who, pid_t pid)
{
    int st;
    pid_t r = waitpid(pid, &st, __WALL);
    CHECK(r == pid);
    if (WIFSTOPPED(st))
        printf("  %s stopped: %s%s\n", who, sigabbrev_np(WSTOPSIG(st)),
               event_name(st));
    else if (WIFEXITED(st))
        printf("  %s exited %d\n", who, WEXITSTATUS(st));
    else
        printf("  %s killed by %s\n", who, sigabbrev_np(WTERMSIG(st)));
}

static void resume(pid_t pid) { CHECK(ptrace(PTRACE_CONT, pid, 0, 0) == 0); }

static void tracee(enum child_does what)
{
    CHECK(ptrace(PTRACE_TRACEME, 0, 0, 0) == 0);
    raise(SIGSTOP);
    pid_t g = vfork();
    if (g == 0) {
        if (what == CHILD_EXECS)
            execl("/bin/true", "true", (char *)NULL);
        _exit(7);
    }
    int st;
    if (g < 0 || waitpid(g, &st, 0) != g)
        _exit(99);
    _exit(WIFEXITED(st) ? WEXITSTATUS(st) : 98);
}

static void round_of(enum child_does what, bool vfork_done)
{
    printf("vfork child %s, PTRACE_O_TRACEVFORKDONE %s:\n",
           what == CHILD_EXECS ? "execs /bin/true" : "exits 7",
           vfork_done ? "on" : "off");
    pid_t c = fork();
    CHECK(c >= 0);
    if (c == 0)
        tracee(what);
    wait_for("tracee", c);
    long opts = PTRACE_O_TRACEVFORK | (vfork_done ? PTRACE_O_TRACEVFORKDONE : 0);
    CHECK(ptrace(PTRACE_SETOPTIONS, c, 0, opts) == 0);
    resume(c);
    wait_for("tracee", c);
    unsigned long msg = 0;
    CHECK(ptrace(PTRACE_GETEVENTMSG, c, 0, &msg) == 0);
    pid_t g = (pid_t)msg;
    printf("  the event's message is the new child's pid: %s\n",
           g > 0 && g != c ? "yes" : "no");
    wait_for("vfork child", g);
    resume(g);
    resume(c);
    if (vfork_done) {
        wait_for("tracee", c);
        CHECK(ptrace(PTRACE_GETEVENTMSG, c, 0, &msg) == 0);
        printf("  VFORK_DONE's message is the child's pid: %s\n",
               (pid_t)msg == g ? "yes" : "no");
        resume(c);
    }
    if (what == CHILD_EXECS) {
        wait_for("vfork child", g); /* the traced exec's SIGTRAP */
        resume(g);
    }
    wait_for("vfork child", g);
    wait_for("tracee", c); /* its SIGCHLD, for the tracer first */
    resume(c);
    wait_for("tracee", c);
}

int main(void)
{
    setvbuf(stdout, NULL, _IONBF, 0);
    round_of(CHILD_EXITS, true);
    round_of(CHILD_EXECS, true);
    round_of(CHILD_EXITS, false);
    return 0;
}
