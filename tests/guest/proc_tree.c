/*
 * proc_tree: a small process tree. Four children write "child N" to one
 * shared pipe and exit N; the parent reads every line (sorted before
 * printing, so the output does not depend on scheduling), reaps them with
 * waitpid and prints each status; raises SIGUSR1 on itself (the handler
 * prints "usr1"); forks a child that execs /bin/echo; forks a child that
 * pause()s and kills it with SIGTERM. Prints the same natively and under
 * hvrun; exits 0 when every check held, 1 otherwise.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#define NCHILD 4

static volatile sig_atomic_t got_usr1;
static int failed;

static void on_usr1(int sig)
{
    (void)sig;
    static const char msg[] = "usr1\n";
    /* write(2), not stdio: async-signal-safe; stdout is flushed before. */
    if (write(1, msg, sizeof msg - 1) < 0)
        _exit(3);
    got_usr1 = 1;
}

static void check(int ok, const char *what)
{
    if (!ok) {
        printf("FAIL: %s (errno %d %s)\n", what, errno, strerror(errno));
        failed = 1;
    }
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static pid_t fork_flushed(void)
{
    fflush(stdout);
    return fork();
}

static void print_status(const char *who, int st)
{
    if (WIFEXITED(st))
        printf("%s: exited %d\n", who, WEXITSTATUS(st));
    else if (WIFSIGNALED(st))
        printf("%s: signaled %d\n", who, WTERMSIG(st));
    else
        printf("%s: status 0x%x\n", who, st);
}

static void pipe_children(void)
{
    int fd[2];
    pid_t pids[NCHILD];
    check(pipe(fd) == 0, "pipe");
    for (int i = 0; i < NCHILD; i++) {
        pid_t p = fork_flushed();
        if (p == 0) {
            char line[32];
            int n = snprintf(line, sizeof line, "child %d\n", i + 1);
            close(fd[0]);
            /* One write(2) per line: atomic (< PIPE_BUF). */
            _exit(write(fd[1], line, (size_t)n) == n ? i + 1 : 100);
        }
        check(p > 0, "fork (pipe child)");
        pids[i] = p;
    }
    close(fd[1]);

    char buf[512];
    size_t len = 0;
    for (;;) {
        ssize_t r = read(fd[0], buf + len, sizeof buf - 1 - len);
        if (r < 0 && errno == EINTR)
            continue;
        check(r >= 0, "read from the pipe");
        if (r <= 0)
            break;
        len += (size_t)r;
        if (len == sizeof buf - 1)
            break;
    }
    close(fd[0]);
    buf[len] = '\0';

    char *lines[16];
    int n = 0;
    for (char *s = strtok(buf, "\n"); s && n < 16; s = strtok(NULL, "\n"))
        lines[n++] = s;
    qsort(lines, (size_t)n, sizeof lines[0], cmp_str);
    printf("read %d lines\n", n);
    for (int i = 0; i < n; i++)
        printf("%s\n", lines[i]);
    check(n == NCHILD, "read one line per child");

    for (int i = 0; i < NCHILD; i++) {
        int st = 0;
        pid_t w = waitpid(pids[i], &st, 0);
        check(w == pids[i], "waitpid (pipe child)");
        char who[32];
        snprintf(who, sizeof who, "child %d", i + 1);
        print_status(who, st);
        check(WIFEXITED(st) && WEXITSTATUS(st) == i + 1, "child exit status");
    }
    errno = 0;
    check(waitpid(-1, NULL, WNOHANG) == -1 && errno == ECHILD,
          "no children left (ECHILD)");
}

static void self_signal(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_usr1;
    sigemptyset(&sa.sa_mask);
    check(sigaction(SIGUSR1, &sa, NULL) == 0, "sigaction SIGUSR1");
    fflush(stdout);
    check(raise(SIGUSR1) == 0, "raise SIGUSR1");
    check(got_usr1 == 1, "SIGUSR1 handler ran");
    signal(SIGUSR1, SIG_DFL);
}

static void exec_child(void)
{
    pid_t p = fork_flushed();
    if (p == 0) {
        execl("/bin/echo", "echo", "from exec", (char *)NULL);
        _exit(127);
    }
    check(p > 0, "fork (exec child)");
    int st = 0;
    check(waitpid(p, &st, 0) == p, "waitpid (exec child)");
    print_status("exec child", st);
    check(WIFEXITED(st) && WEXITSTATUS(st) == 0, "exec child exit 0");
}

static void killed_child(void)
{
    pid_t p = fork_flushed();
    if (p == 0) {
        for (;;)
            pause();
    }
    check(p > 0, "fork (pause child)");
    check(kill(p, SIGTERM) == 0, "kill SIGTERM");
    int st = 0;
    check(waitpid(p, &st, 0) == p, "waitpid (pause child)");
    printf("pause child: WIFSIGNALED %d WTERMSIG %d\n", WIFSIGNALED(st) ? 1 : 0,
           WIFSIGNALED(st) ? WTERMSIG(st) : -1);
    check(WIFSIGNALED(st) && WTERMSIG(st) == SIGTERM, "pause child killed by 15");
}

int main(void)
{
    pipe_children();
    self_signal();
    exec_child();
    killed_child();
    printf("%s\n", failed ? "proc_tree: FAILED" : "proc_tree: ok");
    return failed;
}
