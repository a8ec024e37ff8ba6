/* gdb_ckpt_fork.c - two processes writing to one stdout (a pipe in
 * gdb/checkpoint-fork): a checkpoint taken while both live must bring
 * both back, and the pipe as the same file. */
#include <stdio.h>
#include <sys/wait.h>
#include <sys/syscall.h>
#include <unistd.h>

int main(void)
{
    pid_t child = fork();
    for (int i = 0; i < 100; i++) {
        printf("%s %d\n", child ? "parent" : "child", i);
        fflush(stdout);
        (void)syscall(SYS_getppid); /* an event; glibc's getppid() is none */
    }
    if (child > 0)
        waitpid(child, NULL, 0);
    return 0;
}
