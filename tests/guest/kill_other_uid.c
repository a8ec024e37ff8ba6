/*
 * kill_other_uid.c - kill's permission check between processes
 * (check_kill_permission): a sender without CAP_KILL may signal a process
 * only when its real or effective uid is the target's real or saved uid;
 * else kill, kill of its group and tgkill are EPERM (kill(-1) skips such
 * processes and succeeds); SIGCONT within the session is always allowed.
 * LTP's kill05. As root: two children drop to uids 65534 and 65533.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

static const char *res(int rc)
{
    return rc == 0 ? "0" : strerrorname_np(errno);
}

int main(void)
{
    if (geteuid() != 0) {
        printf("not root: nothing to check\n");
        return 0;
    }
    int ready[2], go[2];
    if (pipe(ready) < 0 || pipe(go) < 0)
        return 1;
    pid_t target = fork();
    if (target == 0) {
        setpgid(0, 0);
        if (setreuid(65534, 65534) < 0)
            _exit(2);
        close(go[1]);
        char c = 'r';
        write(ready[1], &c, 1);
        read(go[0], &c, 1); /* until the sender is done */
        _exit(0);
    }
    char c;
    read(ready[0], &c, 1);
    pid_t sender = fork();
    if (sender == 0) {
        if (setreuid(65533, 65533) < 0)
            _exit(2);
        printf("other uid: kill 0 %s", res(kill(target, 0)));
        printf(", kill TERM %s", res(kill(target, SIGTERM)));
        printf(", kill group %s", res(kill(-target, SIGTERM)));
        printf(", tgkill %s",
               res((int)syscall(SYS_tgkill, target, target, SIGTERM)));
        printf(", kill -1 %s", res(kill(-1, 0)));
        printf(", SIGCONT same session %s\n", res(kill(target, SIGCONT)));
        fflush(stdout);
        _exit(0);
    }
    int st;
    waitpid(sender, &st, 0);
    printf("root: kill 0 %s\n", res(kill(target, 0)));
    close(go[1]);
    waitpid(target, &st, 0);
    printf("target exited %d (not killed: %d)\n", WEXITSTATUS(st),
           !WIFSIGNALED(st));
    return 0;
}
