/* gdb_ckpt_socket.c - a child writes lines into a stream socket pair and
 * datagrams into a datagram pair faster than its parent reads them, so
 * both hold data at most events: a checkpoint taken then must bring back
 * pairs holding the same bytes and datagrams (gdb/checkpoint-socket), and
 * the parent's output is the same. */
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <sys/syscall.h>
#include <unistd.h>

#define LINES 60

int main(void)
{
    int s[2], d[2];
    if (socketpair(AF_UNIX, SOCK_STREAM, 0, s) < 0 ||
        socketpair(AF_UNIX, SOCK_DGRAM, 0, d) < 0)
        return 1;
    pid_t child = fork();
    if (child == 0) {
        close(s[0]);
        close(d[0]);
        for (int i = 0; i < LINES; i++) {
            char line[32];
            int n = snprintf(line, sizeof(line), "line %d\n", i);
            if (write(s[1], line, (size_t)n) != n)
                return 2;
            n = snprintf(line, sizeof(line), "dgram %d", i);
            if (send(d[1], line, (size_t)n, 0) != n)
                return 3;
        }
        shutdown(s[1], SHUT_WR);
        return 0;
    }
    close(s[1]);
    close(d[1]);
    char buf[24];
    ssize_t n;
    unsigned long sum = 0, total = 0;
    int dgrams = 0;
    while ((n = read(s[0], buf, sizeof(buf))) > 0) {
        for (ssize_t i = 0; i < n; i++)
            sum = sum * 31 + (unsigned char)buf[i];
        total += (unsigned long)n;
        printf("read %zd, %lu so far\n", n, total);
        if (dgrams < LINES && (n = recv(d[0], buf, sizeof(buf) - 1, 0)) >= 0) {
            buf[n] = '\0';
            printf("got '%s'\n", buf);
            dgrams++;
        }
        fflush(stdout);
        (void)syscall(SYS_getppid); /* an event; glibc's getppid() is none */
    }
    for (; dgrams < LINES; dgrams++) {
        n = recv(d[0], buf, sizeof(buf) - 1, 0);
        if (n < 0)
            return 4;
        buf[n] = '\0';
        printf("got '%s'\n", buf);
    }
    waitpid(child, NULL, 0);
    printf("total %lu, sum %lu\n", total, sum);
    return 0;
}
