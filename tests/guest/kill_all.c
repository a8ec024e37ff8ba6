/*
 * kill_all: kill(-1, sig) reaches every process the caller may signal
 * except init (pid 1) and the caller itself; with nobody left it is
 * -ESRCH. Under hvrun the first guest process is pid 1; natively the test
 * runs as pid 1 of a new pid namespace (root only: without it the native
 * run checks nothing and prints the same line, so only hvrun is tested).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

#include "guest_check.h"

static volatile sig_atomic_t hits;

static void on_usr1(int sig) { (void)sig; hits++; }

static void catch_usr1(void)
{
    struct sigaction sa = {.sa_handler = on_usr1};
    sigemptyset(&sa.sa_mask);
    CHECK(sigaction(SIGUSR1, &sa, NULL) == 0);
}

/* Waits (at most 10 s) for one SIGUSR1, then exits 0 if it came. */
static void bystander(int ready_fd)
{
    sigset_t block, old;
    sigemptyset(&block);
    sigaddset(&block, SIGUSR1);
    CHECK(sigprocmask(SIG_BLOCK, &block, &old) == 0);
    catch_usr1();
    CHECK(write(ready_fd, "r", 1) == 1);
    alarm(10);
    while (!hits)
        sigsuspend(&old);
    _exit(0);
}

/* Signals everyone; must not be hit itself. */
static void sender(void)
{
    catch_usr1();
    CHECK(kill(-1, 0) == 0);
    CHECK(kill(-1, SIGUSR1) == 0);
    CHECK(hits == 0);
    _exit(0);
}

static int wait_status(pid_t pid)
{
    int st;
    CHECK(waitpid(pid, &st, 0) == pid);
    return st;
}

static int as_init(void)
{
    CHECK(getpid() == 1);
    catch_usr1();
    int fds[2];
    CHECK(pipe(fds) == 0);
    pid_t b = fork();
    CHECK(b >= 0);
    if (b == 0)
        bystander(fds[1]);
    char c;
    CHECK(read(fds[0], &c, 1) == 1);
    pid_t a = fork();
    CHECK(a >= 0);
    if (a == 0)
        sender();
    CHECK(wait_status(a) == 0);
    CHECK(wait_status(b) == 0);
    CHECK(hits == 0);
    /* Only init and the caller (the same process) are left. */
    CHECK(kill(-1, 0) == -1 && errno == ESRCH);
    return 0;
}

int main(void)
{
    if (getpid() == 1) {
        as_init();
    } else if (unshare(CLONE_NEWPID) == 0) {
        fflush(stdout);
        pid_t init = fork();
        CHECK(init >= 0);
        if (init == 0)
            _exit(as_init());
        int st = wait_status(init);
        if (st != 0)
            return 1;
    }
    printf("kill_all ok\n");
    return 0;
}
