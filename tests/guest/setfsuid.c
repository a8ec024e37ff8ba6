/*
 * setfsuid.c - the filesystem uid and gid (setfsuid, setfsgid), as root:
 *  - (uid_t)-1 asks without changing; every call returns the old id;
 *  - root sets any id; getresuid does not show it, /proc/self/status's
 *    4th Uid (Gid) field does;
 *  - setresuid that changes nothing keeps it (Linux 6.2's no-op check);
 *    one naming the effective id, or any seteuid/setuid, resets it to
 *    the euid;
 *  - without CAP_SETUID it may only become the real, effective, saved or
 *    current filesystem id;
 *  - a fork child inherits it, execve resets it to the euid;
 *  - a POSIX message queue (a file of the mqueue filesystem) is checked
 *    by it: root with another fsuid is refused a 0600 queue of root's and
 *    may not unlink it from the sticky /dev/mqueue.
 * Prints one line per check; run natively and under hvrun, the output
 * must match. Not root: prints SKIP and exits 0.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <mqueue.h>
#include <stdio.h>
#include <string.h>
#include <sys/fsuid.h>
#include <sys/wait.h>
#include <unistd.h>

#include "guest_check.h"

#define QUEUE_NAME "/hvrun-setfsuid-test"

/* The Uid: or Gid: line of /proc/self/status, tabs as spaces. */
static void print_status_ids(const char *which)
{
    FILE *f = fopen("/proc/self/status", "r");
    CHECK(f != NULL);
    char line[256];
    size_t n = strlen(which);
    while (fgets(line, sizeof(line), f)) {
        if (strncmp(line, which, n) != 0)
            continue;
        for (char *c = line; *c; c++)
            if (*c == '\t')
                *c = ' ';
        printf("status %s", line);
    }
    fclose(f);
}

static void print_resuid(const char *when)
{
    uid_t r, e, s;
    CHECK(getresuid(&r, &e, &s) == 0);
    printf("%s: resuid %u %u %u fsuid %d\n", when, r, e, s, setfsuid(-1));
}

static void fsuid_as_root(void)
{
    printf("query: %d\n", setfsuid(-1));
    printf("set 1000 returns: %d\n", setfsuid(1000));
    printf("set 1000 again returns: %d\n", setfsuid(1000));
    print_resuid("after setfsuid 1000");
    print_status_ids("Uid:");
    CHECK(setresuid(-1, -1, -1) == 0);
    print_resuid("after setresuid -1 -1 -1");
    CHECK(setresuid(-1, 0, -1) == 0);
    print_resuid("after setresuid -1 0 -1");
    CHECK(setfsuid(1000) == 0);
    CHECK(setuid(0) == 0);
    print_resuid("after setuid 0");
}

/* euid 1000 with real and saved 0: no CAP_SETUID. */
static void fsuid_unprivileged(void)
{
    CHECK(seteuid(1000) == 0);
    print_resuid("after seteuid 1000");
    printf("set 2000 returns: %d\n", setfsuid(2000));
    printf("then: %d\n", setfsuid(-1));
    printf("set 0 (the real uid) returns: %d\n", setfsuid(0));
    printf("then: %d\n", setfsuid(-1));
    print_status_ids("Uid:");
    CHECK(seteuid(0) == 0);
    print_resuid("after seteuid 0");
}

static void fsgid_as_root(void)
{
    printf("gid query: %d\n", setfsgid(-1));
    printf("set gid 1001 returns: %d\n", setfsgid(1001));
    gid_t r, e, s;
    CHECK(getresgid(&r, &e, &s) == 0);
    printf("resgid %u %u %u fsgid %d\n", r, e, s, setfsgid(-1));
    print_status_ids("Gid:");
    CHECK(setresgid(-1, -1, -1) == 0);
    printf("after setresgid -1 -1 -1: fsgid %d\n", setfsgid(-1));
    CHECK(setegid(1002) == 0);
    printf("after setegid 1002: fsgid %d\n", setfsgid(-1));
    CHECK(setgid(0) == 0);
    printf("after setgid 0: fsgid %d\n", setfsgid(-1));
    print_status_ids("Gid:");
}

static void fsuid_inherited(const char *self)
{
    CHECK(setfsuid(1000) == 0);
    pid_t pid = fork();
    CHECK(pid >= 0);
    if (pid == 0) {
        printf("fork child: fsuid %d\n", setfsuid(-1));
        fflush(stdout);
        _exit(0);
    }
    int st;
    CHECK(waitpid(pid, &st, 0) == pid && WIFEXITED(st) &&
          WEXITSTATUS(st) == 0);
    fflush(stdout);
    pid = fork();
    CHECK(pid >= 0);
    if (pid == 0) {
        execl(self, self, "--after-exec", (char *)NULL);
        _exit(127);
    }
    CHECK(waitpid(pid, &st, 0) == pid && WIFEXITED(st) &&
          WEXITSTATUS(st) == 0);
    CHECK(setfsuid(0) == 1000);
}

static void mqueue_checked_by_fsuid(void)
{
    mq_unlink(QUEUE_NAME);
    struct mq_attr attr = {.mq_maxmsg = 1, .mq_msgsize = 8};
    mqd_t q = mq_open(QUEUE_NAME, O_CREAT | O_EXCL | O_RDWR, 0600, &attr);
    CHECK(q != (mqd_t)-1);
    mq_close(q);
    CHECK(setfsuid(1000) == 0);
    q = mq_open(QUEUE_NAME, O_RDONLY);
    printf("mq_open of root's 0600 queue, fsuid 1000: %s\n",
           result_text(q == (mqd_t)-1 ? -1 : 0));
    if (q != (mqd_t)-1)
        mq_close(q);
    printf("mq_unlink, fsuid 1000: %s\n", result_text(mq_unlink(QUEUE_NAME)));
    CHECK(setfsuid(0) == 1000);
    q = mq_open(QUEUE_NAME, O_RDONLY);
    printf("mq_open, fsuid 0: %s\n", result_text(q == (mqd_t)-1 ? -1 : 0));
    if (q != (mqd_t)-1)
        mq_close(q);
    printf("mq_unlink, fsuid 0: %s\n", result_text(mq_unlink(QUEUE_NAME)));
}

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "--after-exec") == 0) {
        print_resuid("after execve");
        print_status_ids("Uid:");
        return 0;
    }
    if (geteuid() != 0) {
        printf("SKIP setfsuid: needs root (CAP_SETUID)\n");
        return 0;
    }
    setvbuf(stdout, NULL, _IOLBF, 0);
    fsuid_as_root();
    fsuid_unprivileged();
    fsgid_as_root();
    fsuid_inherited(argv[0]);
    mqueue_checked_by_fsuid();
    return 0;
}
