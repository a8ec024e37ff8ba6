/*
 * ioprio_kept: ioprio_set's value is read back by ioprio_get (LTP
 * ioprio_set01): the default (class NONE), best-effort levels 0-7, idle,
 * the real-time class as root, class NONE again; a forked child starts
 * with its parent's value and its own change stays its own; refused
 * values (an unknown class, NONE with a level) change nothing. Printed
 * and compared with a native run.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/ioprio.h>
#include <stdio.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "guest_check.h"

static long get(void)
{
    return syscall(SYS_ioprio_get, IOPRIO_WHO_PROCESS, 0);
}

static void set(const char *what, int class, int level)
{
    long rc = syscall(SYS_ioprio_set, IOPRIO_WHO_PROCESS, 0,
                      IOPRIO_PRIO_VALUE(class, level));
    long now = get();
    printf("%s: set %s, now class %ld level %ld\n", what, result_text(rc),
           IOPRIO_PRIO_CLASS(now), (now & 7));
}

int main(void)
{
    long now = get();
    printf("default: class %ld level %ld\n", IOPRIO_PRIO_CLASS(now),
           (now & 7));
    for (int level = 0; level < 8; level++)
        set("best-effort", IOPRIO_CLASS_BE, level);
    set("idle", IOPRIO_CLASS_IDLE, 0);
    set("real-time", IOPRIO_CLASS_RT, 3);
    set("unknown class", 5, 0);
    set("none with a level", IOPRIO_CLASS_NONE, 2);
    set("best-effort again", IOPRIO_CLASS_BE, 6);
    fflush(stdout);
    pid_t pid = fork();
    CHECK(pid >= 0);
    if (pid == 0) {
        now = get();
        printf("child inherits: class %ld level %ld\n",
               IOPRIO_PRIO_CLASS(now), (now & 7));
        set("child", IOPRIO_CLASS_IDLE, 0);
        fflush(stdout);
        _exit(0);
    }
    int st;
    CHECK(waitpid(pid, &st, 0) == pid);
    now = get();
    printf("parent after child: class %ld level %ld\n",
           IOPRIO_PRIO_CLASS(now), (now & 7));
    set("none", IOPRIO_CLASS_NONE, 0);
    return 0;
}
