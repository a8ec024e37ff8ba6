/* gdb_ckpt_pipe.c - a child writes lines into a pipe faster than its
 * parent reads them, so the pipe holds bytes at most events: a
 * checkpoint taken then must bring back a pipe holding the same bytes
 * (gdb/checkpoint-pipe), and the parent's output is the same. */
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <sys/syscall.h>
#include <unistd.h>

int main(void)
{
    int p[2];
    if (pipe(p) < 0)
        return 1;
    pid_t child = fork();
    if (child == 0) {
        close(p[0]);
        for (int i = 0; i < 120; i++) {
            char line[32];
            int n = snprintf(line, sizeof(line), "line %d\n", i);
            if (write(p[1], line, (size_t)n) != n)
                return 2;
        }
        return 0;
    }
    close(p[1]);
    char buf[24];
    ssize_t n;
    unsigned long sum = 0, total = 0;
    while ((n = read(p[0], buf, sizeof(buf))) > 0) {
        for (ssize_t i = 0; i < n; i++)
            sum = sum * 31 + (unsigned char)buf[i];
        total += (unsigned long)n;
        printf("read %zd, %lu so far\n", n, total);
        fflush(stdout);
        (void)syscall(SYS_getppid); /* an event; glibc's getppid() is none */
    }
    waitpid(child, NULL, 0);
    printf("total %lu, sum %lu\n", total, sum);
    return 0;
}
