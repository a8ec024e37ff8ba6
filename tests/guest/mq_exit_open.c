/*
 * mq_exit_open.c - POSIX message queue descriptors still open when
 * processes exit, exec and the run ends: an unlinked queue held by the
 * first process (and a dup of it) at exit, the same queue inherited by a
 * fork child that exits holding it, a named queue's descriptor closed by
 * exec (mq descriptors are always close-on-exec). hvrun once freed an
 * unlinked queue's accounting through the world after the run had ended
 * (SIGSEGV at exit). Run natively and under hvrun, the output must match.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <mqueue.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define QNAME "/hvrun-guest-test-mq-exit"
#define QNAME_EXEC "/hvrun-guest-test-mq-exec"

/* The exec'd image: the inherited queue descriptor must be gone. */
static int after_exec(int qfd)
{
    int fl = fcntl(qfd, F_GETFD);
    printf("after exec: F_GETFD %d %s\n", fl, fl < 0 ? strerror(errno) : "");
    mq_unlink(QNAME_EXEC);
    return 0;
}

static void exec_with_queue(void)
{
    mqd_t q = mq_open(QNAME_EXEC, O_CREAT | O_RDWR, 0600, NULL);
    if (q == (mqd_t)-1) {
        perror("mq_open exec");
        exit(1);
    }
    printf("exec queue cloexec: %d\n", (fcntl(q, F_GETFD) & FD_CLOEXEC) != 0);
    char num[16];
    snprintf(num, sizeof(num), "%d", (int)q);
    fflush(stdout);
    execl("/proc/self/exe", "mq_exit_open", "after-exec", num, (char *)NULL);
    perror("execl");
    exit(1);
}

int main(int argc, char **argv)
{
    if (argc == 3 && !strcmp(argv[1], "after-exec"))
        return after_exec(atoi(argv[2]));
    if (argc == 2 && !strcmp(argv[1], "exec")) {
        exec_with_queue();
        return 1;
    }
    mqd_t q = mq_open(QNAME, O_CREAT | O_RDWR, 0600, NULL);
    if (q == (mqd_t)-1) {
        perror("mq_open");
        return 1;
    }
    printf("unlink: %d\n", mq_unlink(QNAME));
    printf("send: %d\n", mq_send(q, "hi", 2, 1));
    int dupfd = dup(q);
    printf("dup: %s\n", dupfd >= 0 ? "ok" : strerror(errno));
    fflush(stdout);
    pid_t c = fork();
    if (c == 0) {
        char buf[8192];
        unsigned prio = 0;
        ssize_t n = mq_receive(q, buf, sizeof(buf), &prio);
        printf("child received %zd prio %u\n", n, prio);
        fflush(stdout);
        _exit(0); /* the inherited descriptor stays open */
    }
    int st;
    waitpid(c, &st, 0);
    printf("child status %d\n", WEXITSTATUS(st));
    struct mq_attr a;
    printf("getattr after child: %d curmsgs %ld\n", mq_getattr(q, &a),
           a.mq_curmsgs);
    /* A second child that exec's with a queue open. */
    fflush(stdout);
    pid_t e = fork();
    if (e == 0) {
        execl("/proc/self/exe", "mq_exit_open", "exec", (char *)NULL);
        _exit(127);
    }
    waitpid(e, &st, 0);
    printf("exec child status %d\n", WEXITSTATUS(st));
    /* A third child left a zombie, holding the queue, at the run's end
     * (waitid WNOWAIT: it has exited, it is not reaped). */
    fflush(stdout);
    pid_t z = fork();
    if (z == 0)
        _exit(3);
    siginfo_t si;
    printf("zombie: %d\n", waitid(P_PID, (id_t)z, &si, WEXITED | WNOWAIT));
    printf("exiting with the queue open\n");
    return 0; /* q and dupfd still open */
}
