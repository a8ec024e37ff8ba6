/* gdb_ckpt_event.c - a child writes lines into a pipe and adds to an
 * eventfd faster than its parent, waiting in epoll_wait on both, takes
 * them: a checkpoint taken then must bring back the eventfd's count and
 * the epoll instance's entries (gdb/checkpoint-event), and the parent's
 * output is the same. */
#include <stdint.h>
#include <stdio.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/wait.h>
#include <sys/syscall.h>
#include <unistd.h>

#define LINES 60

int main(void)
{
    int p[2];
    int ev = eventfd(0, 0);
    int ep = epoll_create1(0);
    if (pipe(p) < 0 || ev < 0 || ep < 0)
        return 1;
    pid_t child = fork();
    if (child == 0) {
        close(p[0]);
        for (int i = 0; i < LINES; i++) {
            char line[32];
            int n = snprintf(line, sizeof(line), "line %d\n", i);
            uint64_t one = (uint64_t)i + 1;
            if (write(p[1], line, (size_t)n) != n ||
                write(ev, &one, sizeof(one)) != sizeof(one))
                return 2;
        }
        return 0;
    }
    close(p[1]);
    struct epoll_event a = {.events = EPOLLIN, .data.u32 = 1};
    struct epoll_event b = {.events = EPOLLIN, .data.u32 = 2};
    if (epoll_ctl(ep, EPOLL_CTL_ADD, p[0], &a) < 0 ||
        epoll_ctl(ep, EPOLL_CTL_ADD, ev, &b) < 0)
        return 3;
    unsigned long total = 0, counted = 0;
    for (int open = 1; open;) {
        struct epoll_event got[4];
        int n = epoll_wait(ep, got, 4, -1);
        for (int i = 0; i < n; i++) {
            if (got[i].data.u32 == 1) {
                char buf[24];
                ssize_t r = read(p[0], buf, sizeof(buf));
                if (r <= 0) {
                    open = 0;
                    epoll_ctl(ep, EPOLL_CTL_DEL, p[0], NULL);
                    continue;
                }
                total += (unsigned long)r;
                printf("read %zd, %lu so far\n", r, total);
            } else {
                uint64_t c;
                if (read(ev, &c, sizeof(c)) == sizeof(c))
                    counted += c;
                printf("counted %lu\n", counted);
            }
        }
        fflush(stdout);
        (void)syscall(SYS_getppid); /* an event; glibc's getppid() is none */
    }
    waitpid(child, NULL, 0);
    uint64_t c = 0;
    struct epoll_event last;
    if (epoll_wait(ep, &last, 1, 0) == 1 && read(ev, &c, sizeof(c)) == sizeof(c))
        counted += c;
    printf("total %lu, counted %lu\n", total, counted);
    return 0;
}
