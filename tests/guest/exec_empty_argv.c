/*
 * exec_empty_argv.c - execve with an empty argv (NULL, or an array whose
 * first entry is NULL): since Linux 5.18 the new program gets argc 1 and
 * argv[0] "", so one that starts at argv[1] does not read envp (hvrun gave
 * argc 0; LTP's execve06). The environment comes through unchanged.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "guest_check.h"

/* Runs this program again with the given argv; the child prints what it
 * got. */
static void exec_with(const char *what, char **argv)
{
    fflush(stdout);
    pid_t pid = fork();
    CHECK(pid >= 0);
    if (pid == 0) {
        char *envp[] = {"EXEC_EMPTY_ARGV_CHILD=1", NULL};
        syscall(SYS_execve, "/proc/self/exe", argv, envp);
        printf("execve: %s\n", result_text(-1));
        _exit(1);
    }
    int status;
    CHECK(waitpid(pid, &status, 0) == pid);
    printf("%s: child exited %d\n", what,
           WIFEXITED(status) ? WEXITSTATUS(status) : -1);
}

int main(int argc, char **argv, char **envp)
{
    if (getenv("EXEC_EMPTY_ARGV_CHILD")) {
        printf("  argc %d, argv[0] \"%s\", argv[1] %s, envp[0] %s\n", argc,
               argc > 0 ? argv[0] : "-", argc > 0 && !argv[1] ? "NULL" : "?",
               envp[0]);
        return 0;
    }
    char *empty[] = {NULL};
    exec_with("argv NULL", NULL);
    exec_with("argv {NULL}", empty);
    char *one[] = {"name", NULL};
    exec_with("argv {\"name\"}", one);
    return 0;
}
