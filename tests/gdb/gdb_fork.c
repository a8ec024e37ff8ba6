/* gdb_fork.c - a fork whose child calls child_work, then an exec of this
 * program again ("again"), which calls after_exec: what gdb's fork and
 * exec events (tests/gdb/run.sh: gdb/fork, gdb/exec) must follow. */
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

int child_value = 5;

__attribute__((noinline)) int child_work(int x)
{
    return x * 3;
}

__attribute__((noinline)) int after_exec(int x)
{
    return x + 100;
}

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "again") == 0) {
        printf("after exec %d\n", after_exec(1));
        return 0;
    }
    pid_t pid = fork();
    if (pid == 0) {
        printf("child %d\n", child_work(child_value));
        return 0;
    }
    int status;
    waitpid(pid, &status, 0);
    printf("parent saw %d\n", WEXITSTATUS(status));
    fflush(stdout);
    execl(argv[0], argv[0], "again", (char *)NULL);
    return 1;
}
